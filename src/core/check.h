/* check.h — internal check-or-return macros, contracts and overflow-safe arithmetic.
 *
 * Layer: core (internal). Depends on kiln.h only.
 * KILN_CHECK returns a status when a condition a caller could cause is false. It prints
 * nothing, in any build: a failure that can say more than its status says it through the
 * caller's diag (core/diag.h), the library's one diagnostics channel. To find where a fuzz
 * input or test is refused, break on the return in a debugger or bisect with the status.
 * Constructors use these with one `fail:` label for cleanup.
 */
#ifndef KILN_CORE_CHECK_H
#define KILN_CORE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Return `status` from the enclosing function unless `cond` holds. */
#define KILN_CHECK(cond, status)                                                                 \
    do {                                                                                         \
        if (!(cond)) return (status);                                                            \
    } while (0)

/* Evaluate a kiln_status expression and return it from the enclosing function if it failed. */
#define KILN_TRY(expr)                                                                           \
    do {                                                                                         \
        kiln_status kiln_try_status_ = (expr);                                                   \
        if (kiln_try_status_ != KILN_OK) return kiln_try_status_;                                \
    } while (0)

/* Set `st` and jump to the function's `fail:` label unless `cond` holds. */
#define KILN_CHECK_GOTO(cond, st, status)                                                        \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            (st) = (status);                                                                     \
            goto fail;                                                                           \
        }                                                                                        \
    } while (0)

#define KILN_TRY_GOTO(st, expr)                                                                  \
    do {                                                                                         \
        (st) = (expr);                                                                           \
        if ((st) != KILN_OK) goto fail;                                                          \
    } while (0)

/* SQLite's "believed facts": true in every correct run, but kept as a defensive branch in
   release builds instead of being compiled out. */
#ifdef KILN_DEBUG
#include <assert.h>
#define KILN_ALWAYS(x) (assert(x), 1)
#define KILN_NEVER(x) (assert(!(x)), 0)
#else
#define KILN_ALWAYS(x) (!!(x))
#define KILN_NEVER(x) (!!(x))
#endif

/* Contracts: a function's preconditions that its callers guarantee (a microkernel's tile within
   its MR x NR, non-NULL panels, the alignment it loads with). In KILN_DEBUG builds — Debug, and
   every sanitizer build, which keep NDEBUG when RelWithDebInfo — a broken contract prints
   "kiln: FILE:LINE: contract violated: COND" and aborts: it is a bug in kiln, never a condition a
   caller could recover from. Release builds compile the check away entirely (the condition is
   not evaluated), so hot loops pay nothing. Unlike assert, NDEBUG does not turn it off. */
#ifdef KILN_DEBUG
_Noreturn void kiln_contract_fail(const char *file, int line, const char *cond);
#define KILN_CONTRACT(cond) ((cond) ? (void)0 : kiln_contract_fail(__FILE__, __LINE__, #cond))
#else
#define KILN_CONTRACT(cond) ((void)0)
#endif

/* Overflow-safe size arithmetic: return false (and leave *out unspecified) on overflow. */
static inline bool kiln_add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool kiln_mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool kiln_add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool kiln_mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool kiln_mul_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* True when [offset, offset + size) lies inside [0, limit). */
static inline bool kiln_range_ok(uint64_t offset, uint64_t size, uint64_t limit)
{
    uint64_t end;
    return kiln_add_u64(offset, size, &end) && end <= limit;
}

/* x rounded up to a multiple of a, a power of two; the caller keeps x + a - 1 in range. The u64
   form is for file offsets and plan sizes, which are uint64_t on every host. */
static inline size_t kiln_align_up(size_t x, size_t a) { return (x + (a - 1)) & ~(a - 1); }
static inline uint64_t kiln_align_up_u64(uint64_t x, uint64_t a) { return (x + (a - 1)) & ~(a - 1); }

/* Integer helpers of the sizing and blocking code (kernels and backends): one definition each.
   kiln_ceil_div_i64 and kiln_round_up_i64 are for a >= 0 (x >= 0) and b > 0 (m > 0): counts and
   extents, never a signed offset (kiln_floor_div / kiln_ceil_div below round those). */
static inline int64_t kiln_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t kiln_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t kiln_ceil_div_i64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t kiln_round_up_i64(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* floor(a / b) and ceil(a / b) for b > 0 and any sign of a: window offsets that a pad makes
   negative (conv_geom.h, the cpu backend's im2col). */
static inline int64_t kiln_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static inline int64_t kiln_ceil_div(int64_t a, int64_t b) { return -kiln_floor_div(-a, b); }

#endif /* KILN_CORE_CHECK_H */
