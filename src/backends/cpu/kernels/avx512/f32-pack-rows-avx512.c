/* f32-pack-rows-avx512.c — TEMPLATE INSTANCE of x86/f32-pack-rows-sse.h for avx512: the code is in the template.
 * Layer: backends/cpu/kernels/avx512, compiled with the avx512 flags only. */
#include "backends/cpu/kernels/avx512/kernels-avx512.h"
#include "backends/cpu/kernels/avx512/vec-avx512.h"
#include "backends/cpu/kernels/x86/f32-pack-rows-sse.h"
