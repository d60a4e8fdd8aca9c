/* unary.c — portable kernels of the unary family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_unary[] = {
    {0},
};
