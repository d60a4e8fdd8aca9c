/* shape.c — portable kernels of the shape family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_shape[] = {
    {0},
};
