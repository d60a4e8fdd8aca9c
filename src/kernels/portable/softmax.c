/* softmax.c — portable kernels of the softmax family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_softmax[] = {
    {0},
};
