/* linalg.c — portable kernels of the linalg family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_linalg[] = {
    {0},
};
