/* gemm-blocking.h — the blocking constants of the f32 GEMM family, in one place.
 *
 * Layer: backends/cpu/kernels (internal), for the driver (f32-gemm-driver.c), its parallel
 * split (f32-gemm-parallel.c) and Strassen (f32-gemm-strassen.c), which must agree on them:
 * the split's cost model counts the driver's NC blocks, Strassen reuses its B strip, and the
 * K-block cap bounds both the driver's K blocks and the Strassen half K. The convolutions that
 * run on the GEMM microkernel (f32-conv2d-driver.c's im2col, f32-conv2d-pixel-rows.c,
 * f32-conv2d-winograd.c) cut their work by the same task grain and packing cost. The integer
 * helpers they use (kiln_min_i64, kiln_round_up_i64, kiln_ceil_div_i64) are core's
 * (core/check.h).
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_GEMM_BLOCKING_H
#define KILN_BACKENDS_CPU_KERNELS_GEMM_BLOCKING_H

#include <stddef.h>
#include <stdint.h>

#include "core/check.h"

/* Workspace buffers (packed blocks of A and B) start on a cache line. */
#define KILN_GEMM_WS_ALIGN ((size_t)64)
/* Columns of one B block when B is packed at run time: the buffer B is packed into is
   kc x NC, and A is packed again for each such block (the parallel split counts those). */
#define KILN_GEMM_NC_MAX ((int64_t)1024)
/* Longest K block (kiln_cpu_gemm_kc): 1024 is reached by the 12x32 and 6x16 tiles, and a
   Strassen half K must fit one block. The shortest is 64. */
#define KILN_GEMM_KC_MAX ((int64_t)1024)
#define KILN_GEMM_KC_MIN ((int64_t)64)
/* Bytes of the kc x js strip of B that a strip of the A block meets, one MR panel of A at a
   time: 256 KiB stay in L2 beside the A block (at most half of L2) for all its panels, and the
   C tiles of one strip share a handful of pages, so they stay in the TLB. */
#define KILN_GEMM_B_STRIP_BYTES ((int64_t)256 << 10)
/* Rows of a packed A that one B micro-panel meets stay within this many bytes (L2). */
#define KILN_GEMM_PACKED_A_BLOCK_BYTES ((size_t)128 << 10)
/* Multiply-adds a task must have before waking a worker pays (a few microseconds of work at
   the microkernel's tens of multiply-adds a nanosecond): the classical and the Strassen GEMM
   and the convolutions built on the microkernel (im2col, pixels as rows, Winograd) alike. */
#define KILN_GEMM_TASK_GRAIN ((int64_t)1 << 18)
/* One element packed or gathered into a panel (packing A or B, im2col) costs about as much as
   this many multiply-adds: a strided load and a store against a fraction of a cycle per FMA in
   the microkernel. The cost models that choose a cut (the GEMM split, the im2col and
   pixel-rows convolutions) weigh packing against padded tiles with it. */
#define KILN_GEMM_PACK_COST 16.0

/* x rounded up to a multiple of KILN_GEMM_WS_ALIGN. */
static inline size_t kiln_gemm_ws_align(size_t x) { return kiln_align_up(x, KILN_GEMM_WS_ALIGN); }

#endif
