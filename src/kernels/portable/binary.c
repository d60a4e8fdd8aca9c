/* binary.c — portable kernels of the binary family (see families.h). Layer: kernels/portable. */
#include "kernels/portable/families.h"

const kiln_kernel kiln_kernels_binary[] = {
    {0},
};
