/* test_kiln_op_linear_embed.c — kiln.Linear and kiln.Embed (src/kernels/portable/kiln_linear_embed.c)
 * for every weight dtype against dequantize-then-compute references.
 *
 * Weights are random rows of each type (random quants and finite random f16 scales for the
 * block types); the reference decodes each row with kiln_dequantize_row (test_kiln_quant_rows
 * checks it against hand-packed blocks) and multiplies in double. Linear runs with and without
 * a bias, on rank 1 and rank 3 X, K a multiple of the 256-element chunk and not, on one thread
 * and split over three (which must give the same bits). Embed: i32 and i64 indices of rank 1
 * and 2, an index out of range. Then bad inputs: ranks, shapes, dtypes.
 * Exit status: 0 when everything passed.
 */
#include "kernels/portable/elementwise_half.h"
#include "kernels/portable/quant/quant_rows.h"
#include "kiln_op_support.h"

static const kiln_dtype weight_types[] = {KILN_DTYPE_F32,  KILN_DTYPE_F16,  KILN_DTYPE_BF16, KILN_DTYPE_Q8_0,
                                          KILN_DTYPE_Q4_0, KILN_DTYPE_Q4_K, KILN_DTYPE_Q6_K};

/* Random rows x cols of dtype (malloc'ed), each block's f16 scale fields finite and small. */
static uint8_t *random_weight(kiln_dtype dtype, int64_t rows, int64_t cols, size_t *row_size)
{
    REQUIRE(kiln_dtype_row_size(dtype, cols, row_size) == KILN_OK);
    size_t bytes = *row_size * (size_t)rows;
    uint8_t *w = malloc(bytes + 1);
    REQUIRE(w != NULL);
    uint32_t block_elements, block_bytes;
    REQUIRE(kiln_dtype_block(dtype, &block_elements, &block_bytes) == KILN_OK);
    if (!kiln_dtype_is_quantized(dtype)) {
        for (int64_t i = 0; i < rows * cols; i++) {
            float v = op_rand();
            if (dtype == KILN_DTYPE_F32) memcpy(w + 4 * i, &v, 4);
            else {
                uint16_t h = dtype == KILN_DTYPE_F16 ? kiln_ew_f32_to_f16(v) : kiln_ew_f32_to_bf16(v);
                memcpy(w + 2 * i, &h, 2);
            }
        }
        return w;
    }
    for (size_t i = 0; i < bytes; i++) w[i] = (uint8_t)(op_rand() * 128 + 128);
    /* offsets of the f16 scales in a block */
    int scale_at[2] = {0, -1};
    if (dtype == KILN_DTYPE_Q4_K) scale_at[1] = 2;
    if (dtype == KILN_DTYPE_Q6_K) scale_at[0] = 208;
    for (size_t b = 0; b < bytes / block_bytes; b++)
        for (int s = 0; s < 2; s++) {
            if (scale_at[s] < 0) continue;
            uint16_t h = kiln_ew_f32_to_f16(op_rand() * 0.05f);
            memcpy(w + b * block_bytes + (size_t)scale_at[s], &h, 2);
        }
    return w;
}

static double *decoded(kiln_dtype dtype, const uint8_t *w, int64_t rows, int64_t cols, size_t row_size)
{
    float *row = malloc((size_t)cols * sizeof *row + 1);
    double *out = malloc((size_t)(rows * cols) * sizeof *out + 1);
    for (int64_t r = 0; r < rows; r++) {
        REQUIRE(kiln_dequantize_row(dtype, w + (size_t)r * row_size, row, cols) == KILN_OK);
        for (int64_t i = 0; i < cols; i++) out[r * cols + i] = row[i];
    }
    free(row);
    return out;
}

static void linear_case(kiln_dtype dtype, uint32_t x_rank, const int64_t *x_shape, int64_t n, bool bias)
{
    int64_t k = x_shape[x_rank - 1], m = 1;
    for (uint32_t d = 0; d + 1 < x_rank; d++) m *= x_shape[d];
    size_t row_size;
    uint8_t *w = random_weight(dtype, n, k, &row_size);
    double *wd = decoded(dtype, w, n, k, row_size);
    float *x = malloc((size_t)(m * k) * sizeof *x), *b = malloc((size_t)n * sizeof *b);
    double *want = malloc((size_t)(m * n) * sizeof *want), *mag = malloc((size_t)(m * n) * sizeof *mag);
    op_fill(x, m * k);
    op_fill(b, n);
    for (int64_t r = 0; r < m; r++)
        for (int64_t j = 0; j < n; j++) {
            double acc = bias ? b[j] : 0.0, abs_sum = fabs(acc);
            for (int64_t i = 0; i < k; i++) {
                acc += (double)x[r * k + i] * wd[j * k + i];
                abs_sum += fabs((double)x[r * k + i] * wd[j * k + i]);
            }
            want[r * n + j] = acc;
            mag[r * n + j] = abs_sum;
        }
    char what[96];
    snprintf(what, sizeof what, "Linear %s K %lld N %lld rows %lld%s", kiln_dtype_name(dtype), (long long)k,
             (long long)n, (long long)m, bias ? " bias" : "");
    kiln_tensor tx = op_tensor(KILN_DTYPE_F32, x_rank, x_shape, x);
    kiln_tensor tw = op_tensor(dtype, 2, (const int64_t[]){n, k}, w);
    kiln_tensor tb = op_tensor(KILN_DTYPE_F32, 1, &n, b);
    float *first = NULL;
    for (int threads = 1; threads <= 3; threads += 2) {
        op_case c;
        op_case_init(&c, "Linear", bias ? 3 : 2);
        c.n_threads = threads;
        c.in[0] = &tx;
        c.in[1] = &tw;
        if (bias) c.in[2] = &tb;
        EXPECT_STATUS(op_run(&c), KILN_OK);
        EXPECT(c.out.dtype == KILN_DTYPE_F32 && c.out.rank == x_rank && c.out.shape[x_rank - 1] == n);
        const float *y = c.out.data;
        int bad = 0;
        for (int64_t i = 0; i < m * n; i++) {
            unit_checks++;
            if (!(fabs(y[i] - want[i]) <= 1e-5 * mag[i] + 1e-30)) {
                if (bad++ < 3) fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)i, y[i], want[i]);
                unit_failures++;
            }
        }
        if (!first) {
            first = c.out.data;
            c.out.data = NULL;
        } else {
            EXPECT(memcmp(first, c.out.data, (size_t)(m * n) * sizeof(float)) == 0); /* same bits split over tasks */
            if (m * n * k >= 2 * 65536) EXPECT(op_most_tasks >= 2); /* really split (grain 65536 units) */
        }
        op_case_free(&c);
    }
    free(first), free(w), free(wd), free(x), free(b), free(want), free(mag);
}

static void linear(void)
{
    unit_section("kiln.Linear");
    for (size_t t = 0; t < sizeof weight_types / sizeof weight_types[0]; t++) {
        kiln_dtype dt = weight_types[t];
        linear_case(dt, 3, (const int64_t[]){2, 3, 512}, 48, true);  /* 147456 work units: split over tasks */
        linear_case(dt, 1, (const int64_t[]){768}, 5, false);        /* decode: one row */
        if (dt != KILN_DTYPE_Q4_K && dt != KILN_DTYPE_Q6_K) linear_case(dt, 2, (const int64_t[]){3, 96}, 7, true);
        if (!kiln_dtype_is_quantized(dt)) linear_case(dt, 2, (const int64_t[]){4, 301}, 3, true); /* partial chunk */
    }
}

static void embed_case(kiln_dtype dtype, kiln_dtype index_dtype, uint32_t rank, const int64_t *shape)
{
    int64_t vocab = 11, dim = kiln_dtype_is_quantized(dtype) ? 256 : 40, n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= shape[d];
    size_t row_size;
    uint8_t *w = random_weight(dtype, vocab, dim, &row_size);
    double *wd = decoded(dtype, w, vocab, dim, row_size);
    int32_t i32[16];
    int64_t i64[16];
    for (int64_t i = 0; i < n; i++) i32[i] = (int32_t)(i64[i] = (i * 7 + 3) % vocab);
    i32[0] = (int32_t)(i64[0] = vocab - 1);
    double *want = malloc((size_t)(n * dim) * sizeof *want);
    for (int64_t i = 0; i < n; i++) memcpy(want + i * dim, wd + i64[i] * dim, (size_t)dim * sizeof *want);

    op_case c;
    op_case_init(&c, "Embed", 2);
    kiln_tensor tw = op_tensor(dtype, 2, (const int64_t[]){vocab, dim}, w);
    kiln_tensor ti = op_tensor(index_dtype, rank, shape, index_dtype == KILN_DTYPE_I64 ? (void *)i64 : (void *)i32);
    c.in[0] = &tw;
    c.in[1] = &ti;
    EXPECT_STATUS(op_run(&c), KILN_OK);
    EXPECT(c.out.rank == rank + 1 && c.out.shape[rank] == dim && c.out.shape[0] == shape[0]);
    char what[64];
    snprintf(what, sizeof what, "Embed %s", kiln_dtype_name(dtype));
    expect_close(what, c.out.data, want, n * dim, 0);
    op_case_free(&c);

    /* an index out of [0, V) is refused at run time */
    int64_t bad_ids[2] = {vocab, -1};
    for (int i = 0; i < 2; i++) {
        i32[1] = (int32_t)(i64[1] = bad_ids[i]);
        op_case_init(&c, "Embed", 2);
        c.in[0] = &tw;
        c.in[1] = &ti;
        EXPECT_STATUS(op_run(&c), KILN_ERROR_INVALID_VALUE);
        op_case_free(&c);
    }
    free(w), free(wd), free(want);
}

static void embed(void)
{
    unit_section("kiln.Embed");
    for (size_t t = 0; t < sizeof weight_types / sizeof weight_types[0]; t++) {
        embed_case(weight_types[t], KILN_DTYPE_I32, 1, (const int64_t[]){5});
        embed_case(weight_types[t], KILN_DTYPE_I64, 2, (const int64_t[]){2, 3});
    }
}

static void bad_inputs(void)
{
    unit_section("bad inputs");
    static float f[1024];
    static uint8_t q[4096];
    int32_t ids[4] = {0};
    kiln_tensor x = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 256}, f);
    kiln_tensor x_f16 = op_tensor(KILN_DTYPE_F16, 2, (const int64_t[]){2, 256}, f);
    kiln_tensor scalar = op_tensor(KILN_DTYPE_F32, 0, NULL, f);
    kiln_tensor w = op_tensor(KILN_DTYPE_Q4_K, 2, (const int64_t[]){3, 256}, q);
    kiln_tensor w_k = op_tensor(KILN_DTYPE_Q8_0, 2, (const int64_t[]){3, 128}, q);       /* K 128 != 256 */
    kiln_tensor w_3d = op_tensor(KILN_DTYPE_F32, 3, (const int64_t[]){1, 3, 256}, f);
    kiln_tensor w_i32 = op_tensor(KILN_DTYPE_I32, 2, (const int64_t[]){3, 256}, f);
    kiln_tensor w_part = op_tensor(KILN_DTYPE_Q4_K, 2, (const int64_t[]){3, 100}, q);   /* not whole blocks */
    kiln_tensor b = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){3}, f);
    kiln_tensor b_4 = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){4}, f);
    kiln_tensor b_f16 = op_tensor(KILN_DTYPE_F16, 1, (const int64_t[]){3}, f);
    kiln_tensor x_100 = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 100}, f);
    struct { const kiln_tensor *x, *w, *b; kiln_status want; const char *says; } lin[] = {
        {&x, &w, &b, KILN_OK, ""},
        {&x, &w_k, NULL, KILN_ERROR_SHAPE_MISMATCH, "W has shape [3, 128], expected [N, 256]"},
        {&x, &w_3d, NULL, KILN_ERROR_SHAPE_MISMATCH, "W has shape [1, 3, 256], expected [rows, cols]"},
        {&x, &w_i32, NULL, KILN_ERROR_DTYPE_MISMATCH, "W is i32, expected f32, f16"},
        {&x_100, &w_part, NULL, KILN_ERROR_SHAPE_MISMATCH, "W (q4_k) has rows of 100 elements, not whole blocks"},
        {&x, &w, &b_4, KILN_ERROR_SHAPE_MISMATCH, "B has shape [4], expected [3]"},
        {&x, &w, &b_f16, KILN_ERROR_DTYPE_MISMATCH, "B is f16, expected f32"},
        {&x_f16, &w, NULL, KILN_ERROR_DTYPE_MISMATCH, "X is f16, expected f32"},
        {&scalar, &w, NULL, KILN_ERROR_SHAPE_MISMATCH, "X is a scalar"},
    };
    for (size_t i = 0; i < sizeof lin / sizeof lin[0]; i++) {
        op_case c;
        op_case_init(&c, "Linear", lin[i].b ? 3 : 2);
        c.in[0] = lin[i].x;
        c.in[1] = lin[i].w;
        c.in[2] = lin[i].b;
        op_expect_refusal(&c, lin[i].want, lin[i].says);
    }
    kiln_tensor i32 = op_tensor(KILN_DTYPE_I32, 1, (const int64_t[]){4}, ids);
    kiln_tensor i_f32 = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){4}, f);
    kiln_tensor w_1d = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){256}, f);
    kiln_tensor i_8d = op_tensor(KILN_DTYPE_I32, KILN_MAX_RANK, (const int64_t[KILN_MAX_RANK]){1, 1, 1, 1, 1, 1, 1, 1}, ids);
    struct { const kiln_tensor *w, *i; kiln_status want; const char *says; } emb[] = {
        {&w, &i32, KILN_OK, ""},
        {&w, &i_f32, KILN_ERROR_DTYPE_MISMATCH, "I is f32, expected i32 or i64"},
        {&w_1d, &i32, KILN_ERROR_SHAPE_MISMATCH, "W has shape [256], expected [rows, cols]"},
        {&w_i32, &i32, KILN_ERROR_DTYPE_MISMATCH, "W is i32"},
        {&w_part, &i32, KILN_ERROR_SHAPE_MISMATCH, "not whole blocks"},
        {&w, &i_8d, KILN_ERROR_SHAPE_MISMATCH, "I has rank 8"}, /* Y would be rank KILN_MAX_RANK + 1 */
    };
    for (size_t i = 0; i < sizeof emb / sizeof emb[0]; i++) {
        op_case c;
        op_case_init(&c, "Embed", 2);
        c.in[0] = emb[i].w;
        c.in[1] = emb[i].i;
        op_expect_refusal(&c, emb[i].want, emb[i].says);
    }
}

int main(void)
{
    linear();
    embed();
    bad_inputs();
    return unit_finish("test_kiln_op_linear_embed");
}
