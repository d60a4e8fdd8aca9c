/* conv.c — portable kernels of the conv family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_conv[] = {
    {0},
};
