/* activation.c — portable kernels of the activation family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_activation[] = {
    {0},
};
