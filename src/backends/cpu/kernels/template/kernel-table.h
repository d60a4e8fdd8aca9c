/* kernel-table.h — TEMPLATE: the kit and the kernel table of an ISA (kiln_cpu_kernels,
 * cpu_kernels.h): defines `static const kiln_cpu_kit kit` from the ISA's functions (named by
 * KILN_CPU_KIT_FN, see kit-decls.h), the static step functions that pass it to the shared
 * drivers, and `const kiln_cpu_kernels KILN_CPU_TABLE_NAME`. Include last in kernels-<isa>.c,
 * after its kernels-<isa>.h and after defining
 *   KILN_CPU_KIT_FN(name)     the ISA's function names, as in its header (kit-decls.h): the
 *                             ISA has every kit slot and the softmax and layer norm steps; or,
 *                             leaving KILN_CPU_KIT_FN undefined (a partial table, e.g. a new ISA
 *                             that has only its vector layer and GEMM microkernel so far):
 *   KILN_CPU_TABLE_KIT        (optional) designated initialisers of the kit slots it has, e.g.
 *                             `.act = ..., .binary = ...`; every slot it leaves out is the
 *                             generic table's function (generic/kernels-generic.h, which the
 *                             table file then includes), and so are softmax and layer norm
 *                             unless it defines KILN_CPU_TABLE_SOFTMAX / _LAYERNORM
 *   KILN_CPU_TABLE_NAME       the table's symbol (kiln_cpu_kernels_<isa>, declared in cpu_kernels.h)
 *   KILN_CPU_TABLE_ISA        its name string ("generic", "avx2", "avx512")
 *   KILN_CPU_TABLE_MR, _NR    its GEMM register tile, the kit's mr and nr
 *   KILN_CPU_TABLE_GEMM       its GEMM microkernel
 *   KILN_CPU_TABLE_GEMM_BF16  (optional) its bf16-pair microkernel: the table then runs the
 *                             steps whose weights are packed as bf16 (precision bf16); with it
 *   KILN_CPU_TABLE_BF16_PAIRS its rounding of f32 rows to bf16 pairs, and
 *   KILN_CPU_TABLE_BF16_ROW   of one row's adjacent floats to bf16 pairs
 *   KILN_CPU_TABLE_PROCESS_SETUP, _THREAD_SETUP  (optional) the table's set-up hooks
 *                             (kiln_cpu_kernels.process_setup, thread_setup); NULL without
 *
 * Layer: backends/cpu/kernels (template; instantiated once per ISA directory, never compiled
 * alone). Every table has this one layout: GEMM, CONV2D, POOL2D, UNARY, BINARY and
 * CHANNEL_AFFINE run the shared drivers (kernel_kit.h) on the kit; SOFTMAX and LAYERNORM are
 * whole steps of the ISA; COPY, TRANSPOSE and EMBED are the generic steps in every table (memory-bound
 * or rare: no ISA variant). Keeping the layout here means a table differs from another only by
 * its kit and these macros, and a slot a new ISA leaves out is the generic one, never NULL.
 */
#if !defined(KILN_CPU_TABLE_NAME) || !defined(KILN_CPU_TABLE_ISA) || !defined(KILN_CPU_TABLE_MR) ||             \
    !defined(KILN_CPU_TABLE_NR) || !defined(KILN_CPU_TABLE_GEMM)
#error "kernel-table.h: define KILN_CPU_TABLE_NAME, _ISA, _MR, _NR and _GEMM first"
#endif

#ifdef KILN_CPU_KIT_FN
#define KILN_CPU_TABLE_FN KILN_CPU_KIT_FN
#else
/* A partial table: the generic functions first, then the table's own slots, which override
   them (C11 6.7.9: a later initialiser of a member replaces an earlier one). This is the one
   place a left-out slot gets its fallback, at compile time: the kit the drivers see is always
   complete, and a step costs no lookup. */
#ifndef KILN_BACKENDS_CPU_KERNELS_GENERIC_KERNELS_GENERIC_H
#error "kernel-table.h: a partial table (no KILN_CPU_KIT_FN) includes generic/kernels-generic.h first"
#endif
#define KILN_CPU_TABLE_FN(name) kiln_cpu_##name##__generic
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

static const kiln_cpu_kit kit = {
    KILN_CPU_KIT_SLOTS(KILN_CPU_TABLE_FN),
#if !defined(KILN_CPU_KIT_FN) && defined(KILN_CPU_TABLE_KIT)
    KILN_CPU_TABLE_KIT,
#endif
    .mr = KILN_CPU_TABLE_MR,
    .nr = KILN_CPU_TABLE_NR,
    .gemm = KILN_CPU_TABLE_GEMM,
#ifdef KILN_CPU_TABLE_GEMM_BF16
    .gemm_bf16 = KILN_CPU_TABLE_GEMM_BF16,
    .bf16_pairs = KILN_CPU_TABLE_BF16_PAIRS,
    .bf16_row = KILN_CPU_TABLE_BF16_ROW,
#endif
};

#ifndef KILN_CPU_KIT_FN
#pragma GCC diagnostic pop
#endif
#ifndef KILN_CPU_TABLE_SOFTMAX
#define KILN_CPU_TABLE_SOFTMAX KILN_CPU_TABLE_FN(f32_softmax)
#endif
#ifndef KILN_CPU_TABLE_LAYERNORM
#define KILN_CPU_TABLE_LAYERNORM KILN_CPU_TABLE_FN(f32_layernorm)
#endif

/* A step of the table: the shared driver run on this file's kit. */
#define KIT_STEP(name, driver)                                                                   \
    static kiln_status name(const void *params, const kiln_tensor *const *in, kiln_tensor *const *out, \
                            kiln_cpu_exec *exec)                                                 \
    {                                                                                            \
        return driver(&kit, params, in, out, exec);                                              \
    }
KIT_STEP(gemm_step, kiln_cpu_gemm_step)
KIT_STEP(conv2d_step, kiln_cpu_conv2d_step)
KIT_STEP(unary_step, kiln_cpu_unary_step)
KIT_STEP(binary_step, kiln_cpu_binary_step)
KIT_STEP(affine_step, kiln_cpu_affine_step)
KIT_STEP(pool2d_step, kiln_cpu_pool2d_step)
KIT_STEP(qlinear_step, kiln_cpu_qlinear_step)
#undef KIT_STEP

const kiln_cpu_kernels KILN_CPU_TABLE_NAME = {
    .isa = KILN_CPU_TABLE_ISA,
    .gemm_mr = KILN_CPU_TABLE_MR,
    .gemm_nr = KILN_CPU_TABLE_NR,
#ifdef KILN_CPU_TABLE_GEMM_BF16
    .bf16 = 1,
#endif
#ifdef KILN_CPU_TABLE_PROCESS_SETUP
    .process_setup = KILN_CPU_TABLE_PROCESS_SETUP,
#endif
#ifdef KILN_CPU_TABLE_THREAD_SETUP
    .thread_setup = KILN_CPU_TABLE_THREAD_SETUP,
#endif
    .ops = {
        [KILN_CPU_OP_GEMM] = gemm_step,
        [KILN_CPU_OP_CONV2D] = conv2d_step,
        [KILN_CPU_OP_POOL2D] = pool2d_step,
        [KILN_CPU_OP_UNARY] = unary_step,
        [KILN_CPU_OP_BINARY] = binary_step,
        [KILN_CPU_OP_SOFTMAX] = KILN_CPU_TABLE_SOFTMAX,
        [KILN_CPU_OP_LAYERNORM] = KILN_CPU_TABLE_LAYERNORM,
        [KILN_CPU_OP_CHANNEL_AFFINE] = affine_step,
        [KILN_CPU_OP_COPY] = kiln_cpu_x_copy__generic,
        [KILN_CPU_OP_TRANSPOSE] = kiln_cpu_x_transpose__generic,
        [KILN_CPU_OP_CONCAT] = kiln_cpu_x_concat__generic,
        [KILN_CPU_OP_SLICE] = kiln_cpu_x_slice__generic,
        [KILN_CPU_OP_PAD] = kiln_cpu_f32_pad__generic,
        [KILN_CPU_OP_WHERE] = kiln_cpu_f32_where__generic,
        [KILN_CPU_OP_QLINEAR] = qlinear_step,
        [KILN_CPU_OP_EMBED] = kiln_cpu_x_embed__generic,
    },
};
