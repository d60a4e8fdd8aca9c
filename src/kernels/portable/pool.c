/* pool.c — portable kernels of the pool family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_pool[] = {
    {0},
};
