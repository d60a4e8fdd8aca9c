/* diag.c — see diag.h. Layer: core. */
#include "core/diag.h"

#include <stdio.h>
#include <string.h>

#include "core/text_escape.h"

void kiln_diag_clear(kiln_diag *d)
{
    if (d->text) d->text[0] = '\0';
}

bool kiln_diag_has_text(const kiln_diag *d) { return d->text && d->text[0]; }

const char *kiln_diag_text(const kiln_diag *d) { return d->text ? d->text : ""; }

kiln_status kiln_diag_vfail(kiln_diag *d, kiln_status status, const char *fmt, va_list ap)
{
    if (d->text && !d->text[0]) vsnprintf(d->text, d->size, fmt, ap);
    return status;
}

kiln_status kiln_diag_fail(kiln_diag *d, kiln_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail(d, status, fmt, ap);
    va_end(ap);
    return status;
}

kiln_status kiln_diag_vfail_escaping(kiln_diag *d, kiln_status status, const char *fmt, va_list ap)
{
    if (!d->text || d->text[0]) return status;
    /* Formatted first, escaped as a whole: every model string (names, op types, domains)
       reaches the message printable without each call site escaping it. */
    char raw[2048];
    vsnprintf(raw, sizeof raw, fmt, ap);
    kiln_text_escape(d->text, d->size, raw, (size_t)-1);
    return status;
}

kiln_status kiln_diag_fail_escaping(kiln_diag *d, kiln_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail_escaping(d, status, fmt, ap);
    va_end(ap);
    return status;
}

kiln_status kiln_reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
{
    kiln_diag d = kiln_diag_over(message, size);
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail(&d, status, fmt, ap);
    va_end(ap);
    return status;
}

void kiln_diag_copy(kiln_diag *to, const kiln_diag *from)
{
    if (!to->text || to->text[0] || !from->text || !from->size) return;
    size_t n = strnlen(from->text, from->size);
    if (n == 0) return;
    if (n >= to->size) n = to->size - 1;
    memmove(to->text, from->text, n);
    to->text[n] = '\0';
}
