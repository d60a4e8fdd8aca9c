/* kernel-table.h — TEMPLATE: the kit and the kernel table of an ISA (kiln_cpu_kernels,
 * cpu_kernels.h): defines `static const kiln_cpu_kit kit` from the ISA's functions (named by
 * KILN_CPU_KIT_FN, see kit-decls.h), the static step functions that pass it to the shared
 * drivers, and `const kiln_cpu_kernels KILN_CPU_TABLE_NAME`. Include last in kernels-<isa>.c,
 * after its kernels-<isa>.h and after defining
 *   KILN_CPU_KIT_FN(name)     the ISA's function names, as in its header (kit-decls.h)
 *   KILN_CPU_TABLE_NAME       the table's symbol (kiln_cpu_kernels_<isa>, declared in cpu_kernels.h)
 *   KILN_CPU_TABLE_ISA        its name string ("generic", "avx2", "avx512")
 *   KILN_CPU_TABLE_MR, _NR    its GEMM register tile, the kit's mr and nr
 *   KILN_CPU_TABLE_GEMM       its GEMM microkernel
 *   KILN_CPU_TABLE_GEMM_BF16  (optional) its bf16-pair microkernel: the table then runs the
 *                             steps whose weights are packed as bf16 (precision bf16); with it
 *   KILN_CPU_TABLE_BF16_PAIRS its rounding of f32 rows to bf16 pairs, and
 *   KILN_CPU_TABLE_BF16_ROW   of one row's adjacent floats to bf16 pairs
 *
 * Layer: backends/cpu/kernels (template; instantiated once per ISA directory, never compiled
 * alone). Every table has this one layout: GEMM, CONV2D, POOL2D, UNARY, BINARY and
 * CHANNEL_AFFINE run the shared drivers (kernel_kit.h) on the kit; SOFTMAX and LAYERNORM are
 * whole steps of the ISA; COPY and TRANSPOSE are the generic steps in every table (memory-bound
 * or rare: no ISA variant). Keeping the layout here means a table differs from another only by
 * its kit and these macros, and a new ISA cannot leave a slot empty by mistake.
 */
#if !defined(KILN_CPU_TABLE_NAME) || !defined(KILN_CPU_TABLE_ISA) || !defined(KILN_CPU_TABLE_MR) ||             \
    !defined(KILN_CPU_TABLE_NR) || !defined(KILN_CPU_TABLE_GEMM) || !defined(KILN_CPU_KIT_FN)
#error "kernel-table.h: define KILN_CPU_KIT_FN, KILN_CPU_TABLE_NAME, _ISA, _MR, _NR and _GEMM first"
#endif

static const kiln_cpu_kit kit = {
    .mr = KILN_CPU_TABLE_MR,
    .nr = KILN_CPU_TABLE_NR,
    .gemm = KILN_CPU_TABLE_GEMM,
    .act = KILN_CPU_KIT_FN(f32_vact),
    .binary = KILN_CPU_KIT_FN(f32_vbinary),
    .scale_shift = KILN_CPU_KIT_FN(f32_vscaleshift),
    .dwconv = KILN_CPU_KIT_FN(f32_dwconv2d),
    .maxpool = KILN_CPU_KIT_FN(f32_maxpool2d),
    .im2col = KILN_CPU_KIT_FN(f32_im2col),
    .pack_rows = KILN_CPU_KIT_FN(f32_pack_rows),
    .pack_rows_sum = KILN_CPU_KIT_FN(f32_pack_rows_sum),
    .wino_in = KILN_CPU_KIT_FN(f32_wino_in),
    .wino_out = KILN_CPU_KIT_FN(f32_wino_out),
#ifdef KILN_CPU_TABLE_GEMM_BF16
    .gemm_bf16 = KILN_CPU_TABLE_GEMM_BF16,
    .bf16_pairs = KILN_CPU_TABLE_BF16_PAIRS,
    .bf16_row = KILN_CPU_TABLE_BF16_ROW,
#endif
};

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
#undef KIT_STEP

const kiln_cpu_kernels KILN_CPU_TABLE_NAME = {
    .isa = KILN_CPU_TABLE_ISA,
    .gemm_mr = KILN_CPU_TABLE_MR,
    .gemm_nr = KILN_CPU_TABLE_NR,
#ifdef KILN_CPU_TABLE_GEMM_BF16
    .bf16 = 1,
#endif
    .ops = {
        [KILN_CPU_OP_GEMM] = gemm_step,
        [KILN_CPU_OP_CONV2D] = conv2d_step,
        [KILN_CPU_OP_POOL2D] = pool2d_step,
        [KILN_CPU_OP_UNARY] = unary_step,
        [KILN_CPU_OP_BINARY] = binary_step,
        [KILN_CPU_OP_SOFTMAX] = KILN_CPU_KIT_FN(f32_softmax),
        [KILN_CPU_OP_LAYERNORM] = KILN_CPU_KIT_FN(f32_layernorm),
        [KILN_CPU_OP_CHANNEL_AFFINE] = affine_step,
        [KILN_CPU_OP_COPY] = kiln_cpu_x_copy__generic,
        [KILN_CPU_OP_TRANSPOSE] = kiln_cpu_x_transpose__generic,
    },
};
