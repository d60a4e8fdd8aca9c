/* compare_npy.c — `kiln_compare_npy ACTUAL.npy EXPECTED.npy`: does an output kiln wrote match the
 * framework's reference output?
 *
 * Test support for the real-model tests (tests/models/run_models.sh); not part of the library.
 * Same dtype and shape are required; then elementwise
 *     |a - e| <= 1e-3 * |e| + 1e-5 * max|e|
 * (relative error, plus an absolute floor scaled to the tensor so that values that are nearly
 * zero next to large ones are not held to a relative bound their rounding cannot meet). NaN
 * matches NaN and an infinity matches itself. Prints one line with the max abs and rel error and
 * the worst element either way; exits 0 on match, 1 on mismatch, 2 on a usage or read error.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "core/alloc.h"
#include "io/npy.h"

#define RTOL 1e-3
#define ATOL_SCALE 1e-5

static void format_shape(const kiln_tensor *t, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < t->rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

static bool same_layout(const kiln_tensor *a, const kiln_tensor *e)
{
    if (a->dtype != e->dtype || a->rank != e->rank) return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != e->shape[d]) return false;
    return true;
}

/* Errors over the whole tensor; `worst` is the element furthest over (or nearest to) its bound. */
typedef struct error_summary {
    double max_abs, max_rel, max_expected;
    double worst_ratio;      /* |a - e| / bound at the worst element; > 1 means mismatch */
    int64_t worst, n_bad;
    bool special_mismatch;   /* a NaN or infinity that does not match */
} error_summary;

static bool special_values_match(double a, double e)
{
    if (isnan(e)) return isnan(a);
    return a == e; /* e is infinite */
}

static error_summary summarise(const kiln_tensor *a, const kiln_tensor *e, int64_t numel)
{
    error_summary s = {0};
    for (int64_t i = 0; i < numel; i++) {
        double y = kiln_test_element(e, i);
        if (isfinite(y) && fabs(y) > s.max_expected) s.max_expected = fabs(y);
    }
    double atol = ATOL_SCALE * s.max_expected;
    for (int64_t i = 0; i < numel; i++) {
        double x = kiln_test_element(a, i), y = kiln_test_element(e, i);
        if (!isfinite(y)) {
            if (!special_values_match(x, y)) {
                s.special_mismatch = true;
                s.n_bad++;
                if (s.worst_ratio != INFINITY) s.worst = i;
                s.worst_ratio = INFINITY;
            }
            continue;
        }
        double err = fabs(x - y);
        if (!isfinite(err)) err = INFINITY; /* kiln produced NaN or inf where a number was due */
        double bound = RTOL * fabs(y) + atol;
        double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
        if (!(err <= bound)) s.n_bad++;
        if (err > s.max_abs) s.max_abs = err;
        if (y != 0 && err / fabs(y) > s.max_rel) s.max_rel = err / fabs(y);
        if (ratio > s.worst_ratio) {
            s.worst_ratio = ratio;
            s.worst = i;
        }
    }
    return s;
}

static int compare(const kiln_tensor *a, const kiln_tensor *e)
{
    if (!same_layout(a, e)) {
        char sa[128], se[128];
        format_shape(a, sa, sizeof sa);
        format_shape(e, se, sizeof se);
        printf("MISMATCH layout: actual %s %s, expected %s %s\n", kiln_dtype_name(a->dtype), sa,
               kiln_dtype_name(e->dtype), se);
        return 1;
    }
    int64_t numel = kiln_tensor_numel(e);
    error_summary s = summarise(a, e, numel);
    bool ok = s.n_bad == 0;
    printf("%s max_abs_err=%.3g max_rel_err=%.3g max|expected|=%.4g worst=%.3g of tolerance", ok ? "MATCH" : "MISMATCH",
           s.max_abs, s.max_rel, s.max_expected, s.worst_ratio);
    if (numel > 0)
        printf(" at element %lld (actual %.9g, expected %.9g)", (long long)s.worst, kiln_test_element(a, s.worst),
               kiln_test_element(e, s.worst));
    if (!ok) printf("; %lld of %lld elements out of tolerance%s", (long long)s.n_bad, (long long)numel,
                    s.special_mismatch ? " (NaN/inf mismatch)" : "");
    printf("\n");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: kiln_compare_npy ACTUAL.npy EXPECTED.npy\n"
                        "passes when |a-e| <= %g*|e| + %g*max|e| elementwise\n", RTOL, ATOL_SCALE);
        return 2;
    }
    const kiln_allocator *alloc = kiln_allocator_default();
    kiln_tensor t[2];
    for (int k = 0; k < 2; k++) {
        char why[KILN_NPY_MESSAGE_SIZE];
        kiln_status st = kiln_npy_read(argv[1 + k], alloc, &t[k], why, sizeof why);
        if (st != KILN_OK) {
            fprintf(stderr, "kiln_compare_npy: cannot read '%s': %s\n", argv[1 + k], why);
            if (k == 1) kiln_free(alloc, t[0].data);
            return 2;
        }
    }
    int rc = compare(&t[0], &t[1]);
    kiln_free(alloc, t[0].data);
    kiln_free(alloc, t[1].data);
    return rc;
}
