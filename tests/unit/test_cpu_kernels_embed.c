/* test_cpu_kernels_embed.c — EMBED steps (kiln.Embed on the cpu backend,
 * kernels/generic/x-embed-generic.c) on every table this CPU can run, against the portable
 * kiln.Embed kernel (src/kernels/portable/kiln_linear_embed.c), the oracle the step replaces.
 *
 * Layer: tests (harness: test_cpu_kernels_support.h). Tables of Q8_0 and Q4_0 rows (random
 * quants, small finite f16 scales) and of F32 rows; ids i32 and i64 including the first and the
 * last row, repeated ids, one id (decode) and many (prefill). Both decode a row with the same
 * function, so the outputs must be the same bits. An id past either end must fail the step with
 * KILN_ERROR_INVALID_VALUE, as it fails the portable op; validation must refuse a wrong row
 * size, a table too small, an id dtype that is no integer and a dtype without a decoder.
 */
#include "kernels/portable/elementwise_half.h"
#include "kernels/portable/kernel.h"
#include "test_cpu_kernels_support.h"

/* rows x row_size random bytes; for block types each block's f16 scale in [-0.05, 0.05). */
static uint8_t *random_rows(kiln_dtype dtype, int64_t rows, int64_t d, size_t *row_size)
{
    if (kiln_dtype_row_size(dtype, d, row_size) != KILN_OK) abort();
    size_t bytes = *row_size * (size_t)rows;
    uint8_t *w = malloc(bytes + 1);
    if (dtype == KILN_DTYPE_F32) {
        for (size_t i = 0; i < bytes / 4; i++) {
            float f = frand();
            memcpy(w + 4 * i, &f, 4);
        }
        return w;
    }
    uint32_t block_elements, block_bytes;
    if (kiln_dtype_block(dtype, &block_elements, &block_bytes) != KILN_OK) abort();
    for (size_t i = 0; i < bytes; i++) w[i] = (uint8_t)(frand() * 128 + 128);
    for (size_t b = 0; b < bytes / block_bytes; b++) {
        uint16_t h = kiln_ew_f32_to_f16(frand() * 0.05f);
        memcpy(w + b * block_bytes, &h, 2);
    }
    return w;
}

/* The portable kiln.Embed on the same bytes and ids; its status. */
static kiln_status portable_embed(kiln_dtype dtype, const uint8_t *w, int64_t v, int64_t d, const tbuf *ids, float *y)
{
    const kiln_kernel *kernel = kiln_portable_kernel_find(KILN_DOMAIN_KILN, "Embed", 1);
    kiln_node node = {.op = "Embed", .domain = KILN_DOMAIN_KILN, .name = "Embed", .opset = 1, .n_inputs = 2,
                      .n_outputs = 1};
    kiln_tensor tw = {.dtype = dtype, .rank = 2, .shape = {v, d}, .data = (void *)w};
    kiln_tensor ty = {0};
    const kiln_tensor *in[2] = {&tw, &ids->t};
    kiln_tensor *out[1] = {&ty};
    size_t scratch = 0;
    if (!kernel || kernel->infer(&node, in, out, &scratch) != KILN_OK) {
        fail("portable kiln.Embed refused V=%lld D=%lld", (long long)v, (long long)d);
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    ty.data = y;
    kiln_kernel_ctx ctx = {0};
    ctx.n_threads = 1;
    return kernel->run(&node, in, out, &ctx);
}

/* ids[i] = pick(i) as id_dtype. */
static tbuf *make_ids(kiln_dtype id_dtype, int64_t count, const int64_t *list)
{
    tbuf *ids = tb_new(id_dtype, 1, (const int64_t[]){count});
    for (int64_t i = 0; i < count; i++) {
        if (id_dtype == KILN_DTYPE_I32) ((int32_t *)ids->t.data)[i] = (int32_t)list[i];
        else ((int64_t *)ids->t.data)[i] = list[i];
    }
    return ids;
}

static void embed_case(kiln_dtype dtype, kiln_dtype id_dtype, int64_t v, int64_t d, int64_t count)
{
    size_t row_size;
    uint8_t *w = random_rows(dtype, v, d, &row_size);
    int64_t *list = malloc((size_t)count * sizeof *list);
    for (int64_t i = 0; i < count; i++) list[i] = i == 0 ? v - 1 : i == 1 ? 0 : (int64_t)(frand() * 0.5f * v + 0.5f * v) % v;
    if (count > 3) list[3] = list[2]; /* a repeated id */
    tbuf *ids = make_ids(id_dtype, count, list);
    tbuf *W = tb_new(KILN_DTYPE_U8, 2, (const int64_t[]){v, (int64_t)row_size});
    tbuf *Y = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){count, d});
    memcpy(W->t.data, w, W->bytes);
    float *want = malloc((size_t)(count * d) * sizeof *want);
    char what[128];
    snprintf(what, sizeof what, "embed %s ids %s V=%lld D=%lld count=%lld", kiln_dtype_name(dtype),
             kiln_dtype_name(id_dtype), (long long)v, (long long)d, (long long)count);
    checks++;
    if (portable_embed(dtype, w, v, d, ids, want) != KILN_OK) fail("%s: the portable kiln.Embed failed", what);
    kiln_cpu_embed_params p = {.V = v, .D = d, .count = count, .row_size = (int64_t)row_size, .dtype = dtype,
                               .id_dtype = id_dtype};
    for (size_t t = 0; t < n_tables; t++) {
        if (!tables[t].runnable) continue;
        tbuf *in[2] = {W, ids}, *out[1] = {Y};
        if (!run_step(&tables[t], KILN_CPU_OP_EMBED, &p, in, 2, out, 1, what)) continue;
        checks++;
        if (memcmp(tb_data(Y), want, Y->bytes) != 0) fail("%s [%s]: rows differ from the portable op's", what, tables[t].k->isa);
        /* Ids past either end: the step fails as the portable op does. */
        const int64_t outside[2] = {-1, v};
        for (int o = 0; o < 2; o++) {
            tbuf *bad = make_ids(id_dtype, 1, &outside[o]);
            kiln_cpu_embed_params p1 = p;
            p1.count = 1;
            const kiln_tensor *tin[2] = {&W->t, &bad->t};
            kiln_tensor *tout[1] = {&Y->t};
            kiln_cpu_exec exec = {.n_threads = 1};
            float *scratch_want = malloc((size_t)d * sizeof *scratch_want);
            checks += 2;
            kiln_status got = tables[t].k->ops[KILN_CPU_OP_EMBED](&p1, tin, tout, &exec);
            if (got != KILN_ERROR_INVALID_VALUE)
                fail("%s [%s]: id %lld gave status %d, want KILN_ERROR_INVALID_VALUE", what, tables[t].k->isa,
                     (long long)outside[o], got);
            if (portable_embed(dtype, w, v, d, bad, scratch_want) != got)
                fail("%s [%s]: id %lld: the portable op's status differs", what, tables[t].k->isa,
                     (long long)outside[o]);
            free(scratch_want);
            tb_free(bad);
        }
    }
    free(w), free(list), free(want);
    tb_free(ids), tb_free(W), tb_free(Y);
}

/* Params the validator must refuse against these tensors. */
static void refusals(void)
{
    int64_t v = 5, d = 64, count = 3;
    size_t row_size;
    kiln_dtype_row_size(KILN_DTYPE_Q8_0, d, &row_size);
    tbuf *W = tb_new(KILN_DTYPE_U8, 2, (const int64_t[]){v, (int64_t)row_size});
    tbuf *ids = tb_new(KILN_DTYPE_I32, 1, (const int64_t[]){count});
    tbuf *Y = tb_new(KILN_DTYPE_F32, 2, (const int64_t[]){count, d});
    const kiln_tensor *in[2] = {&W->t, &ids->t};
    kiln_tensor *out[1] = {&Y->t};
    size_t in_sizes[2] = {W->bytes, ids->bytes}, out_sizes[1] = {Y->bytes};
    const kiln_cpu_embed_params good = {.V = v, .D = d, .count = count, .row_size = (int64_t)row_size,
                                        .dtype = KILN_DTYPE_Q8_0, .id_dtype = KILN_DTYPE_I32};
    kiln_cpu_embed_params bad[7];
    for (int i = 0; i < 7; i++) bad[i] = good;
    bad[0].row_size -= 1;                /* not the type's row */
    bad[1].dtype = KILN_DTYPE_Q4_K;      /* no decoder here */
    bad[2].V = v + 1;                    /* more rows than W holds */
    bad[3].id_dtype = KILN_DTYPE_F32;    /* ids are integers */
    bad[4].id_dtype = KILN_DTYPE_I64;    /* the ids tensor is i32 */
    bad[5].count = count + 1;            /* more ids than there are (and Y) */
    bad[6].dtype = KILN_DTYPE_Q4_0;      /* Q4_0 rows are 18 bytes a block, not 34 */
    checks++;
    if (kiln_cpu_step_validate(KILN_CPU_OP_EMBED, &good, in, 2, in_sizes, out, 1, out_sizes, 6, 16) != KILN_OK)
        fail("embed: validation refused a valid step");
    for (int i = 0; i < 7; i++) {
        checks++;
        if (kiln_cpu_step_validate(KILN_CPU_OP_EMBED, &bad[i], in, 2, in_sizes, out, 1, out_sizes, 6, 16) == KILN_OK)
            fail("embed: validation accepted bad params %d", i);
    }
    tb_free(W), tb_free(ids), tb_free(Y);
}

int main(void)
{
    tables_init();
    static const kiln_dtype types[] = {KILN_DTYPE_Q8_0, KILN_DTYPE_Q4_0, KILN_DTYPE_F32};
    static const kiln_dtype id_types[] = {KILN_DTYPE_I32, KILN_DTYPE_I64};
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < 2; i++) {
            embed_case(types[t], id_types[i], 2, 32, 2);       /* both rows */
            embed_case(types[t], id_types[i], 1000, 288, 1);   /* decode: the last row */
            embed_case(types[t], id_types[i], 1000, 288, 70);  /* prefill */
            embed_case(types[t], id_types[i], 37, 4096, 5);    /* long rows */
        }
    refusals();
    return kernel_tests_report("test_cpu_kernels_embed");
}
