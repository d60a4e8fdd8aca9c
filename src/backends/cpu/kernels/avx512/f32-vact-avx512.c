/* f32-vact-avx512.c — TEMPLATE INSTANCE of template/f32-vact.h for avx512: the code is in the template.
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags only. */
#include <string.h>

#include "backends/cpu/kernels/avx512/kernels-avx512.h"
#include "backends/cpu/kernels/avx512/vec-avx512.h"
#include "backends/cpu/kernels/template/f32-vmath.h"
#include "backends/cpu/kernels/template/f32-vact-vec.h"
#include "backends/cpu/kernels/template/f32-vact.h"
