/* norm.c — portable kernels of the norm family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_norm[] = {
    {0},
};
