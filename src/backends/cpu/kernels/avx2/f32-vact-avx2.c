/* f32-vact-avx2.c — TEMPLATE INSTANCE of template/f32-vact.h for avx2: the code is in the template.
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. */
#include <string.h>

#include "backends/cpu/kernels/avx2/kernels-avx2.h"
#include "backends/cpu/kernels/avx2/vec-avx2.h"
#include "backends/cpu/kernels/template/f32-vmath.h"
#include "backends/cpu/kernels/template/f32-vact-vec.h"
#include "backends/cpu/kernels/template/f32-vact.h"
