/* data.c — portable kernels of the data family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_data[] = {
    {0},
};
