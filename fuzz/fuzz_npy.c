/* fuzz_npy.c — libFuzzer target for the .npy reader (tools/io/npy.h).
 *
 * Layer: fuzz. Arbitrary bytes go to kiln_npy_read_memory. A file that reads must give a tensor
 * whose dtype is known, whose shape is valid and whose data holds exactly numel * dtype size
 * readable bytes (all read here, so ASan sees a short buffer); a failed read must leave *out
 * zeroed and say why in one printable line (the message channel quotes header bytes, which are
 * the fuzzer's). The allocator is counted so a leak on any error path is a finding.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/npy.h"
#include "kiln/kiln.h"

/* The reader allocates at most the data it was given; the budget only guards that promise. */
#define NPY_BUDGET ((size_t)64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tensor(const kiln_tensor *t)
{
    int64_t numel = kiln_tensor_numel(t);
    size_t elem = kiln_dtype_size(t->dtype);
    if (numel < 0 || elem == 0 || t->rank > KILN_MAX_RANK || !t->data) {
        fprintf(stderr, "fuzz: npy read gave an invalid tensor (dtype %d rank %u)\n", (int)t->dtype, t->rank);
        abort();
    }
    const volatile uint8_t *p = t->data;
    uint8_t sum = 0;
    for (size_t i = 0; i < (size_t)numel * elem; i++) sum ^= p[i];
    (void)sum;
}

static void check_zeroed(const kiln_tensor *t)
{
    static const kiln_tensor zero;
    if (memcmp(t, &zero, sizeof zero) == 0) return;
    fprintf(stderr, "fuzz: failed npy read left *out set\n");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_budget budget;
    kiln_allocator a = fuzz_budget_allocator(&budget, NPY_BUDGET);
    kiln_tensor t;
    char message[KILN_NPY_MESSAGE_SIZE];
    kiln_status st = kiln_npy_read_memory(data, size, &a, &t, message, sizeof message);
    fuzz_check_status(st, "kiln_npy_read_memory");
    if (st == KILN_OK) {
        check_tensor(&t);
        a.free(a.ctx, t.data);
    } else {
        check_zeroed(&t);
        fuzz_check_message(message, sizeof message, "npy read");
    }
    fuzz_budget_check_clean(&budget, "kiln_npy_read_memory");
    return 0;
}
