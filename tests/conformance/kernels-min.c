/* kernels-min.c — a test-only kernel table that has exactly what a new ISA must bring: a vector
 * layer (the activation, binary and scale-shift rows) and a GEMM microkernel. Every other kit
 * slot, softmax and layer norm are left out, so template/kernel-table.h fills them with the
 * generic table's functions; the conformance runner built with it (kiln_conformance_min, target
 * "test-min") proves the fallback runs the whole tier 1 + 2 suite.
 *
 * Layer: tests (a table of backends/cpu/kernels, compiled into that test binary only, with its
 * own copy of backends/cpu/targets.c that lists the target: KILN_CPU_TEST_TARGETS). The "ISA"
 * functions are the generic ones under wrappers, which count their calls so the runner can
 * check the table's own slots really ran (kiln_cpu_kernels_test_min_calls).
 */
#include <stdatomic.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"

/* Calls of this table's own functions; read by the runner after the cases (never reset). */
static atomic_ulong own_calls;

unsigned long kiln_cpu_kernels_test_min_calls(void);
unsigned long kiln_cpu_kernels_test_min_calls(void) { return atomic_load(&own_calls); }

static void min_gemm(size_t kc, const float *a, const float *b, float *c, size_t ldc, size_t m, size_t n,
                     const kiln_cpu_gemm_tile *tile)
{
    atomic_fetch_add_explicit(&own_calls, 1, memory_order_relaxed);
    kiln_cpu_f32_gemm_ukernel_6x16__generic(kc, a, b, c, ldc, m, n, tile);
}

static void min_act(const kiln_cpu_act *act, const float *x, float *y, size_t n)
{
    atomic_fetch_add_explicit(&own_calls, 1, memory_order_relaxed);
    kiln_cpu_f32_vact__generic(act, x, y, n);
}

static void min_binary(uint32_t kind, const float *a, int64_t sa, const float *b, int64_t sb, float *y, size_t n)
{
    atomic_fetch_add_explicit(&own_calls, 1, memory_order_relaxed);
    kiln_cpu_f32_vbinary__generic(kind, a, sa, b, sb, y, n);
}

static void min_scale_shift(const float *x, float scale, float shift, float *y, size_t n)
{
    atomic_fetch_add_explicit(&own_calls, 1, memory_order_relaxed);
    kiln_cpu_f32_vscaleshift__generic(x, scale, shift, y, n);
}

#define KILN_CPU_TABLE_NAME kiln_cpu_kernels_test_min
#define KILN_CPU_TABLE_ISA "test-min"
#define KILN_CPU_TABLE_MR KILN_CPU_GENERIC_MR
#define KILN_CPU_TABLE_NR KILN_CPU_GENERIC_NR
#define KILN_CPU_TABLE_GEMM min_gemm
#define KILN_CPU_TABLE_KIT .act = min_act, .binary = min_binary, .scale_shift = min_scale_shift
#include "backends/cpu/kernels/template/kernel-table.h"
