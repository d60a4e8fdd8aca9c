/* reduce.c — portable kernels of the reduce family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_reduce[] = {
    {0},
};
