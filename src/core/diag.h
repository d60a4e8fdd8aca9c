/* diag.h — the one diagnostics channel of kiln: a one-line message into a buffer the caller owns.
 *
 * Layer: core (internal). Depends on kiln.h and the C library.
 * Every failure that can say more than its status says it here: the public *_with_message calls,
 * the compiler (kiln_ir_fail and the compile-spec and backend checks), a backend's init and the
 * runtime's loads. The caller places the buffer and passes the kiln_diag down; nothing is
 * global, nothing is printed, and kiln_module_last_error is a copy of a load's diag.
 *
 * Rules, the same everywhere:
 *   - a kiln_diag over NULL or size 0 is a sink: writes go nowhere and cost only the check;
 *   - the first failure wins: a write to a diag that already holds text is dropped, so the most
 *     specific message (the innermost one) is the one the caller sees;
 *   - text is truncated to size - 1 bytes and always NUL-terminated;
 *   - strings from models and files (names, op types, paths) are escaped (text_escape.h): either
 *     each by the caller (kiln_diag_fail) or the whole line at once (kiln_diag_fail_escaping).
 */
#ifndef KILN_CORE_DIAG_H
#define KILN_CORE_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"

typedef struct kiln_diag {
    char *text;     /* (size) the caller's buffer, or NULL */
    size_t size;
} kiln_diag;

/* A diag over the caller's buffer; NULL or 0 gives a sink. */
static inline kiln_diag kiln_diag_over(char *text, size_t size)
{
    kiln_diag d = {size ? text : NULL, text ? size : 0};
    return d;
}

/* Empties the text (an entry point does this first, so success leaves ""). */
void kiln_diag_clear(kiln_diag *d);
/* True when the diag holds a message (a sink never does). */
bool kiln_diag_has_text(const kiln_diag *d);
/* The text, or "" for a sink. */
const char *kiln_diag_text(const kiln_diag *d);

/* printf the line (its untrusted parts escaped by the caller) unless the diag already holds one;
 * returns status, so a failure path reads `return kiln_diag_fail(d, KILN_ERROR_..., ...)`. */
kiln_status kiln_diag_fail(kiln_diag *d, kiln_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
kiln_status kiln_diag_vfail(kiln_diag *d, kiln_status status, const char *fmt, va_list ap);
/* As kiln_diag_fail, but the formatted line is escaped as a whole, so callers pass model
 * strings as they are (and must not escape them first). */
kiln_status kiln_diag_fail_escaping(kiln_diag *d, kiln_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
kiln_status kiln_diag_vfail_escaping(kiln_diag *d, kiln_status status, const char *fmt, va_list ap);
/* kiln_diag_fail on kiln_diag_over(message, size): for validators that receive the caller's
 * buffer as a pointer and size across an interface (a compile-time backend's validate_spec,
 * compiler_backend.h) and check many things in order, reporting the first. */
kiln_status kiln_reject(kiln_status status, char *message, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* When `from` holds a message and `to` none yet: copies it (truncated to `to`). A message
   another layer wrote into a buffer of its own (a backend's init) crosses this way; the copy
   stops at from->size bytes even when the writer left the buffer unterminated. */
void kiln_diag_copy(kiln_diag *to, const kiln_diag *from);

#endif /* KILN_CORE_DIAG_H */
