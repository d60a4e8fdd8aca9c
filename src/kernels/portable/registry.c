/* registry.c — the table of portable kernels, one array per op family file.
 * Layer: kernels/portable. The tables are const data; nothing here is mutable.
 * Lookup picks, among the entries for an op, the one with the highest min_opset that is not
 * above the model's opset, so a family file can give an op one entry per semantic version. */
#include <string.h>

#include "kernels/portable/families.h"

static const kiln_kernel *const families[] = {
    kiln_kernels_unary, kiln_kernels_binary, kiln_kernels_activation, kiln_kernels_linalg,
    kiln_kernels_conv,  kiln_kernels_pool,   kiln_kernels_norm,       kiln_kernels_softmax,
    kiln_kernels_reduce, kiln_kernels_shape, kiln_kernels_data,
};

const kiln_kernel *kiln_portable_kernel_find(const char *op, int opset)
{
    const kiln_kernel *best = NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        for (const kiln_kernel *k = families[f]; k->op; k++) {
            if (strcmp(k->op, op) != 0 || k->min_opset > opset) continue;
            if (!best || k->min_opset > best->min_opset) best = k;
        }
    }
    return best;
}

void kiln_portable_kernel_foreach(void (*fn)(const kiln_kernel *kernel, void *user), void *user)
{
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const kiln_kernel *k = families[f]; k->op; k++) fn(k, user);
}
