/* f32-pack-rows-avx2.c — TEMPLATE INSTANCE of x86/f32-pack-rows-sse.h for avx2: the code is in the template.
 * Layer: backends/cpu/kernels/avx2, compiled with the avx2 flags only. */
#include "backends/cpu/kernels/avx2/kernels-avx2.h"
#include "backends/cpu/kernels/avx2/vec-avx2.h"
#include "backends/cpu/kernels/x86/f32-pack-rows-sse.h"
