/* reject.h — returning a failure status with its one-line message, for validators that check
 * many things in order and report the first problem (compile specs, backend specs).
 *
 * Layer: core. The message is written only when message is non-NULL, size > 0 and message is
 * still empty, so the first (most specific) writer wins, as everywhere in kiln.
 */
#ifndef KILN_CORE_REJECT_H
#define KILN_CORE_REJECT_H

#include <stddef.h>

#include "kiln/kiln.h"

kiln_status kiln_reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
