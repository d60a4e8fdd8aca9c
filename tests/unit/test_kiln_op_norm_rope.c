/* test_kiln_op_norm_rope.c — kiln.RMSNorm and kiln.RoPE (src/kernels/portable/kiln_rmsnorm_rope.c)
 * against references computed here in double from the definitions in docs/llm.md "kiln ops".
 *
 * RMSNorm: rank 1, 2 and 3 inputs, default and explicit epsilon. RoPE: normal (adjacent pairs)
 * and neox (halves) pairing, rope_dim < head_dim (the tail copied), base and freq_scale, i32 and
 * i64 positions, several heads. Then bad inputs: wrong ranks, shapes, dtypes and attributes.
 * Exit status: 0 when everything passed.
 */
#include "kiln_op_support.h"

static void rmsnorm_case(uint32_t rank, const int64_t *shape, float epsilon, bool set_epsilon)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= shape[d];
    int64_t dim = shape[rank - 1];
    float *x = malloc((size_t)n * sizeof *x), *w = malloc((size_t)dim * sizeof *w);
    double *want = malloc((size_t)n * sizeof *want);
    op_fill(x, n);
    op_fill(w, dim);
    double eps = set_epsilon ? epsilon : 1e-5f;
    for (int64_t r = 0; r < n / dim; r++) {
        double ss = 0.0;
        for (int64_t i = 0; i < dim; i++) ss += (double)x[r * dim + i] * x[r * dim + i];
        double inv = 1.0 / sqrt(ss / dim + eps);
        for (int64_t i = 0; i < dim; i++) want[r * dim + i] = x[r * dim + i] * inv * w[i];
    }
    op_case c;
    op_case_init(&c, "RMSNorm", 2);
    if (set_epsilon) op_attr_float(&c, "epsilon", epsilon);
    kiln_tensor tx = op_tensor(KILN_DTYPE_F32, rank, shape, x), tw = op_tensor(KILN_DTYPE_F32, 1, &dim, w);
    c.in[0] = &tx;
    c.in[1] = &tw;
    EXPECT_STATUS(op_run(&c), KILN_OK);
    EXPECT(c.out.dtype == KILN_DTYPE_F32 && c.out.rank == rank && c.out.shape[rank - 1] == dim);
    expect_close("RMSNorm", c.out.data, want, n, 1e-6);
    op_case_free(&c);
    free(x);
    free(w);
    free(want);
}

static void rmsnorm(void)
{
    unit_section("kiln.RMSNorm");
    rmsnorm_case(1, (const int64_t[]){64}, 0, false);
    rmsnorm_case(2, (const int64_t[]){5, 48}, 1e-6f, true);
    rmsnorm_case(3, (const int64_t[]){2, 3, 17}, 0.5f, true); /* a large epsilon shows it is used */
    /* all-zero row: 1/sqrt(epsilon) times 0 is 0, not NaN */
    float x[4] = {0}, w[4] = {1, 2, 3, 4};
    double want[4] = {0};
    op_case c;
    op_case_init(&c, "RMSNorm", 2);
    kiln_tensor tx = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){4}, x), tw = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){4}, w);
    c.in[0] = &tx;
    c.in[1] = &tw;
    EXPECT_STATUS(op_run(&c), KILN_OK);
    expect_close("RMSNorm zeros", c.out.data, want, 4, 0);
    op_case_free(&c);
}

typedef struct rope_spec {
    int64_t t, heads, head_dim, rope_dim; /* rope_dim 0: attribute left out (head_dim) */
    double base, freq_scale;              /* 0: attribute left out (10000, 1) */
    int neox;                             /* -1: attribute left out (0) */
    kiln_dtype pos_dtype;
} rope_spec;

static void rope_case(const char *what, const rope_spec *s)
{
    int64_t width = s->heads * s->head_dim, n = s->t * width;
    int64_t rope_dim = s->rope_dim ? s->rope_dim : s->head_dim;
    double base = s->base ? s->base : 10000.0, freq_scale = s->freq_scale ? s->freq_scale : 1.0;
    float *x = malloc((size_t)n * sizeof *x);
    double *want = malloc((size_t)n * sizeof *want);
    int32_t pos32[16];
    int64_t pos64[16];
    op_fill(x, n);
    for (int64_t t = 0; t < s->t; t++) pos32[t] = (int32_t)(pos64[t] = 3 * t + (t % 2 ? 100 : 0));
    for (int64_t t = 0; t < s->t; t++)
        for (int64_t h = 0; h < s->heads; h++) {
            const float *xh = x + t * width + h * s->head_dim;
            double *wh = want + t * width + h * s->head_dim;
            for (int64_t i = 0; i < s->head_dim; i++) wh[i] = xh[i];
            for (int64_t i = 0; i < rope_dim / 2; i++) {
                double theta = (double)pos64[t] * freq_scale * pow(base, -2.0 * i / rope_dim);
                int64_t a = s->neox == 1 ? i : 2 * i, b = s->neox == 1 ? i + rope_dim / 2 : 2 * i + 1;
                wh[a] = xh[a] * cos(theta) - xh[b] * sin(theta);
                wh[b] = xh[a] * sin(theta) + xh[b] * cos(theta);
            }
        }
    op_case c;
    op_case_init(&c, "RoPE", 2);
    op_attr_int(&c, "head_dim", s->head_dim);
    if (s->rope_dim) op_attr_int(&c, "rope_dim", s->rope_dim);
    if (s->base) op_attr_float(&c, "base", (float)s->base);
    if (s->freq_scale) op_attr_float(&c, "freq_scale", (float)s->freq_scale);
    if (s->neox >= 0) op_attr_int(&c, "neox", s->neox);
    kiln_tensor tx = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->t, width}, x);
    kiln_tensor tp = op_tensor(s->pos_dtype, 1, &s->t, s->pos_dtype == KILN_DTYPE_I64 ? (void *)pos64 : (void *)pos32);
    c.in[0] = &tx;
    c.in[1] = &tp;
    EXPECT_STATUS(op_run(&c), KILN_OK);
    EXPECT(c.out.rank == 2 && c.out.shape[0] == s->t && c.out.shape[1] == width);
    /* cos/sin of angles up to ~150 rad in f32: about 1e-5 of error */
    expect_close(what, c.out.data, want, n, 2e-5);
    op_case_free(&c);
    free(x);
    free(want);
}

static void rope(void)
{
    unit_section("kiln.RoPE");
    rope_case("RoPE normal", &(rope_spec){.t = 5, .heads = 3, .head_dim = 8, .neox = -1, .pos_dtype = KILN_DTYPE_I32});
    rope_case("RoPE neox", &(rope_spec){.t = 5, .heads = 2, .head_dim = 16, .neox = 1, .pos_dtype = KILN_DTYPE_I32});
    rope_case("RoPE normal rope_dim < head_dim",
              &(rope_spec){.t = 4, .heads = 2, .head_dim = 12, .rope_dim = 6, .neox = 0, .pos_dtype = KILN_DTYPE_I32});
    rope_case("RoPE neox rope_dim < head_dim", &(rope_spec){.t = 4, .heads = 2, .head_dim = 16, .rope_dim = 8, .neox = 1,
                                                            .base = 500000, .pos_dtype = KILN_DTYPE_I64});
    rope_case("RoPE freq_scale", &(rope_spec){.t = 6, .heads = 1, .head_dim = 4, .freq_scale = 0.25, .base = 100, .neox = -1,
                                               .pos_dtype = KILN_DTYPE_I32});
    /* position 0 is the identity */
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int32_t p[1] = {0};
    double want[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    op_case c;
    op_case_init(&c, "RoPE", 2);
    op_attr_int(&c, "head_dim", 4);
    kiln_tensor tx = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){1, 8}, x), tp = op_tensor(KILN_DTYPE_I32, 1, (const int64_t[]){1}, p);
    c.in[0] = &tx;
    c.in[1] = &tp;
    EXPECT_STATUS(op_run(&c), KILN_OK);
    expect_close("RoPE position 0", c.out.data, want, 8, 0);
    op_case_free(&c);
}

static void bad_inputs(void)
{
    unit_section("bad inputs");
    float f[64] = {0};
    int32_t i32[8] = {0};
    double f64[8] = {0};
    op_case c;
    kiln_tensor x2 = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 8}, f);
    kiln_tensor w8 = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){8}, f);
    kiln_tensor w7 = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){7}, f);
    kiln_tensor w_2d = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){1, 8}, f);
    kiln_tensor w_f64 = op_tensor(KILN_DTYPE_F64, 1, (const int64_t[]){8}, f64);
    kiln_tensor scalar = op_tensor(KILN_DTYPE_F32, 0, NULL, f);
    kiln_tensor p2 = op_tensor(KILN_DTYPE_I32, 1, (const int64_t[]){2}, i32);
    kiln_tensor p3 = op_tensor(KILN_DTYPE_I32, 1, (const int64_t[]){3}, i32);
    kiln_tensor p_f32 = op_tensor(KILN_DTYPE_F32, 1, (const int64_t[]){2}, f);
    kiln_tensor p_2d = op_tensor(KILN_DTYPE_I32, 2, (const int64_t[]){2, 1}, i32);
    kiln_tensor x3 = op_tensor(KILN_DTYPE_F32, 3, (const int64_t[]){1, 2, 8}, f);

    struct { const kiln_tensor *a, *b; kiln_status want; const char *says; } norm[] = {
        {&x2, &w7, KILN_ERROR_SHAPE_MISMATCH, "W has shape [7], expected [8]"},
        {&x2, &w_2d, KILN_ERROR_SHAPE_MISMATCH, "W has shape [1, 8], expected rank 1"},
        {&x2, &w_f64, KILN_ERROR_DTYPE_MISMATCH, "W is f64, expected f32"},
        {&scalar, &w8, KILN_ERROR_SHAPE_MISMATCH, "X is a scalar"},
        {&p2, &w8, KILN_ERROR_DTYPE_MISMATCH, "X is i32"},
    };
    for (size_t i = 0; i < sizeof norm / sizeof norm[0]; i++) {
        op_case_init(&c, "RMSNorm", 2);
        c.in[0] = norm[i].a;
        c.in[1] = norm[i].b;
        op_expect_refusal(&c, norm[i].want, norm[i].says);
    }
    op_case_init(&c, "RMSNorm", 2);
    op_attr_float(&c, "epsilon", -1.0f);
    c.in[0] = &x2;
    c.in[1] = &w8;
    op_expect_refusal(&c, KILN_ERROR_INVALID_ARGUMENT, "epsilon is -1");
    op_case_init(&c, "RMSNorm", 1);
    c.in[0] = &x2;
    op_expect_refusal(&c, KILN_ERROR_INVALID_ARGUMENT, "expected inputs X, W");

    struct { const kiln_tensor *x, *p; int64_t head_dim, rope_dim, neox; kiln_status want; const char *says; } rope[] = {
        {&x2, &p2, 4, 0, 0, KILN_OK, ""},
        {&x2, &p3, 4, 0, 0, KILN_ERROR_SHAPE_MISMATCH, "P has shape [3], expected [2]"}, /* a position per row */
        {&x2, &p_f32, 4, 0, 0, KILN_ERROR_DTYPE_MISMATCH, "P is f32, expected i32 or i64"},
        {&x2, &p_2d, 4, 0, 0, KILN_ERROR_SHAPE_MISMATCH, "P has shape [2, 1], expected [2]"},
        {&x3, &p2, 4, 0, 0, KILN_ERROR_SHAPE_MISMATCH, "X has shape [1, 2, 8], expected rank 2"},
        {&x2, &p2, 3, 2, 0, KILN_ERROR_SHAPE_MISMATCH, "not heads of head_dim 3"}, /* 8 % 3 */
        {&x2, &p2, 0, 0, 0, KILN_ERROR_INVALID_ARGUMENT, "head_dim must be given"},
        {&x2, &p2, 4, 3, 0, KILN_ERROR_INVALID_ARGUMENT, "rope_dim is 3"},       /* odd */
        {&x2, &p2, 4, 6, 0, KILN_ERROR_INVALID_ARGUMENT, "rope_dim is 6"},       /* > head_dim */
        {&x2, &p2, 4, 0, 2, KILN_ERROR_INVALID_ARGUMENT, "neox is 2, expected 0 or 1"},
        {&w_f64, &p2, 4, 0, 0, KILN_ERROR_DTYPE_MISMATCH, "X is f64"},
    };
    for (size_t i = 0; i < sizeof rope / sizeof rope[0]; i++) {
        op_case_init(&c, "RoPE", 2);
        if (rope[i].head_dim) op_attr_int(&c, "head_dim", rope[i].head_dim);
        if (rope[i].rope_dim) op_attr_int(&c, "rope_dim", rope[i].rope_dim);
        op_attr_int(&c, "neox", rope[i].neox);
        c.in[0] = rope[i].x;
        c.in[1] = rope[i].p;
        op_expect_refusal(&c, rope[i].want, rope[i].says);
    }
    op_case_init(&c, "RoPE", 2);
    op_attr_int(&c, "head_dim", 4);
    op_attr_float(&c, "base", 0.0f);
    c.in[0] = &x2;
    c.in[1] = &p2;
    op_expect_refusal(&c, KILN_ERROR_INVALID_ARGUMENT, "base 0 and freq_scale 1");
}

int main(void)
{
    rmsnorm();
    rope();
    bad_inputs();
    return unit_finish("test_kiln_op_norm_rope");
}
