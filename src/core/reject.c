/* reject.c — see reject.h. Layer: core. */
#include "core/reject.h"

#include <stdarg.h>
#include <stdio.h>

kiln_status kiln_reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
{
    if (message && size && !message[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message, size, fmt, ap);
        va_end(ap);
    }
    return status;
}
