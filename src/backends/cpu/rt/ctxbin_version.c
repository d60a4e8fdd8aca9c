/* ctxbin_version.c — what a version 1 or 2 context binary may hold (docs/format.md, part 2, the
 * version table).
 *
 * Layer: backends/cpu/rt (internal to the reader, see ctxbin_reader.h). Version 2 is version 1
 * plus new values in existing fields (the layout did not change), so the reader keeps reading
 * version 1 files with the version 2 checks. A version 1 writer could not produce any of the
 * version 2 values, though: a version 1 file that holds one is not a file kiln wrote, and is
 * refused as KILN_ERROR_FORMAT rather than read with meanings its writer never gave it.
 * Version 3 is version 2 plus the op values CONCAT, SLICE, PAD, WHERE, QLINEAR and EMBED, tap-list
 * convolutions and bool tensors, refused the same way in older files.
 */
#include <string.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/cpu_features.h"

const char *kiln_ctxbin_v2_header_feature(const kiln_ctx_header *h)
{
    if (h->precision != KILN_CTX_PRECISION_F32) return "precision bf16";
    if (h->spec_flags & KILN_CTX_SPEC_NO_STRASSEN) return "the no-strassen compile-spec flag";
    return NULL;
}

const char *kiln_ctxbin_v2_record_feature(const kiln_ctx_record *r)
{
    return (r->features & KILN_CPU_BIT(AVX512BF16)) ? "a record needing AVX512-BF16" : NULL;
}

const char *kiln_ctxbin_v2_tensor_feature(const kiln_ctx_tensor *t)
{
    return t->dtype == KILN_DTYPE_BF16 ? "a bf16 tensor" : NULL;
}

const char *kiln_ctxbin_v3_step_feature(const kiln_ctx_step *s)
{
    switch (s->op) {
    case KILN_CPU_OP_QLINEAR: return "a QLINEAR step (kiln.Linear over ggml blocks)";
    case KILN_CPU_OP_EMBED: return "an EMBED step (kiln.Embed)";
    case KILN_CPU_OP_CONCAT: return "a CONCAT step";
    case KILN_CPU_OP_SLICE: return "a SLICE step";
    case KILN_CPU_OP_PAD: return "a PAD step";
    case KILN_CPU_OP_WHERE: return "a WHERE step";
    case KILN_CPU_OP_CONV2D: {
        kiln_cpu_conv_params p;
        memcpy(&p, s->params, sizeof p);
        return p.taps ? "a tap-list convolution" : NULL;
    }
    default: return NULL;
    }
}

const char *kiln_ctxbin_v3_tensor_feature(const kiln_ctx_tensor *t)
{
    return t->dtype == KILN_DTYPE_BOOL ? "a bool tensor" : NULL;
}

const char *kiln_ctxbin_v2_step_feature(const kiln_ctx_step *s)
{
    switch (s->op) {
    case KILN_CPU_OP_GEMM: {
        kiln_cpu_gemm_params p;
        memcpy(&p, s->params, sizeof p);
        if (p.b_packed == KILN_CPU_PACKED_BF16) return "a GEMM with bf16-packed B";
        if (p.b_packed == KILN_CPU_PACKED_STRASSEN) return "a GEMM with Strassen-packed B";
        /* Version 1 gave every product of a batch rows of its own, at least one product's
           extent apart; version 2 also writes bands of columns of shared rows (attention's heads
           merged in place). Raw parameters: overflow-checked, the step check comes later. */
        int64_t extent;
        if (p.batch > 1 && !__builtin_sub_overflow(p.M, 1, &extent) && !__builtin_mul_overflow(extent, p.ldy, &extent) &&
            !__builtin_add_overflow(extent, p.N, &extent) && p.y_batch_stride < extent)
            return "a batched GEMM writing bands of columns";
        return NULL;
    }
    case KILN_CPU_OP_CONV2D: {
        kiln_cpu_conv_params p;
        memcpy(&p, s->params, sizeof p);
        if (p.winograd) return "a Winograd convolution";
        if (p.pixel_rows) return "a pixel-rows convolution";
        if (p.has_residual) return "a convolution with a residual input";
        if (p.bf16) return "a bf16 convolution";
        return NULL;
    }
    case KILN_CPU_OP_LAYERNORM: {
        kiln_cpu_layernorm_params p;
        memcpy(&p, s->params, sizeof p);
        if (p.rms) return "an RMS normalisation";
        if (p.has_residual) return "a LayerNormalization with a residual input";
        return NULL;
    }
    default: return NULL; /* the other ops' parameters are as version 1 wrote them */
    }
}
