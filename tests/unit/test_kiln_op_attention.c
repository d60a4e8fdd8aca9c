/* test_kiln_op_attention.c — kiln.Attention (src/kernels/portable/kiln_attention.c) against a
 * reference computed here in double from the definition in docs/llm.md "kiln ops".
 *
 * Grouped heads (H = 4 over KVH = 2, and H = KVH), cache rows plus new rows under a causal mask
 * with some cache slots masked out (holding NaN, which a masked key must never touch), finite
 * additive mask values, a row whose mask is all -inf (zeros), no cache at all (C = 0), the
 * default and an explicit scale. Then bad inputs: H % KVH, shapes, dtypes, missing attributes.
 * Exit status: 0 when everything passed.
 */
#include "kiln_op_support.h"

typedef struct attn_spec {
    int64_t t, c, heads, kv_heads, head_dim;
    float scale;            /* 0: attribute left out (1/sqrt(head_dim)) */
} attn_spec;

/* mask[t][j]: cache slot j visible unless j % 3 == 2 (those hold NaN); new row j visible when
   j <= t (causal), with a finite bias on odd j; row `all_masked` sees nothing. */
static void build_mask(const attn_spec *s, float *mask, int64_t all_masked)
{
    int64_t keys = s->c + s->t;
    for (int64_t t = 0; t < s->t; t++)
        for (int64_t j = 0; j < keys; j++) {
            bool visible = j < s->c ? j % 3 != 2 : j - s->c <= t;
            float bias = j % 2 ? -0.75f : 0.0f;
            mask[t * keys + j] = t == all_masked || !visible ? -INFINITY : bias;
        }
}

static void reference(const attn_spec *s, const float *q, const float *k, const float *v, const float *kc,
                      const float *vc, const float *mask, double *y)
{
    int64_t width = s->heads * s->head_dim, kvw = s->kv_heads * s->head_dim, keys = s->c + s->t;
    double scale = s->scale ? s->scale : 1.0 / sqrt((double)s->head_dim);
    double *p = malloc((size_t)(keys ? keys : 1) * sizeof *p);
    for (int64_t t = 0; t < s->t; t++)
        for (int64_t h = 0; h < s->heads; h++) {
            int64_t g = h / (s->heads / s->kv_heads);
            double max = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < keys; j++) {
                double m = mask[t * keys + j];
                if (isinf(m) && m < 0) {
                    p[j] = -INFINITY;
                    continue;
                }
                const float *key = (j < s->c ? kc + j * kvw : k + (j - s->c) * kvw) + g * s->head_dim;
                double d = 0.0;
                for (int64_t i = 0; i < s->head_dim; i++) d += (double)q[t * width + h * s->head_dim + i] * key[i];
                p[j] = scale * d + m;
                if (p[j] > max) max = p[j];
            }
            for (int64_t j = 0; j < keys; j++) sum += p[j] == -INFINITY ? 0.0 : exp(p[j] - max);
            for (int64_t i = 0; i < s->head_dim; i++) {
                double acc = 0.0;
                for (int64_t j = 0; j < keys; j++) {
                    if (p[j] == -INFINITY) continue;
                    const float *val = (j < s->c ? vc + j * kvw : v + (j - s->c) * kvw) + g * s->head_dim;
                    acc += exp(p[j] - max) / sum * val[i];
                }
                y[t * width + h * s->head_dim + i] = max == -INFINITY ? 0.0 : acc;
            }
        }
    free(p);
}

static void attention_case(const char *what, const attn_spec *s, int64_t all_masked)
{
    int64_t width = s->heads * s->head_dim, kvw = s->kv_heads * s->head_dim, keys = s->c + s->t;
    float *q = malloc((size_t)(s->t * width) * sizeof *q), *k = malloc((size_t)(s->t * kvw) * sizeof *k);
    float *v = malloc((size_t)(s->t * kvw) * sizeof *v), *mask = malloc((size_t)(s->t * keys) * sizeof *mask);
    float *kc = malloc((size_t)(s->c * kvw + 1) * sizeof *kc), *vc = malloc((size_t)(s->c * kvw + 1) * sizeof *vc);
    double *want = malloc((size_t)(s->t * width) * sizeof *want);
    op_fill(q, s->t * width);
    op_fill(k, s->t * kvw);
    op_fill(v, s->t * kvw);
    op_fill(kc, s->c * kvw);
    op_fill(vc, s->c * kvw);
    for (int64_t j = 2; j < s->c; j += 3) /* masked cache slots: garbage a masked key must not read */
        for (int64_t i = 0; i < kvw; i++) kc[j * kvw + i] = vc[j * kvw + i] = NAN;
    build_mask(s, mask, all_masked);
    reference(s, q, k, v, kc, vc, mask, want);

    op_case c;
    op_case_init(&c, "Attention", 6);
    op_attr_int(&c, "num_heads", s->heads);
    op_attr_int(&c, "num_kv_heads", s->kv_heads);
    if (s->scale) op_attr_float(&c, "scale", s->scale);
    kiln_tensor tq = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->t, width}, q);
    kiln_tensor tk = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->t, kvw}, k);
    kiln_tensor tv = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->t, kvw}, v);
    kiln_tensor tkc = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->c, kvw}, kc);
    kiln_tensor tvc = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->c, kvw}, vc);
    kiln_tensor tm = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){s->t, keys}, mask);
    const kiln_tensor *ins[6] = {&tq, &tk, &tv, &tkc, &tvc, &tm};
    memcpy(c.in, ins, sizeof ins);
    EXPECT_STATUS(op_run(&c), KILN_OK);
    EXPECT(c.out.rank == 2 && c.out.shape[0] == s->t && c.out.shape[1] == width);
    expect_close(what, c.out.data, want, s->t * width, 2e-6);
    if (all_masked >= 0)
        for (int64_t i = 0; i < width; i++) EXPECT(((float *)c.out.data)[all_masked * width + i] == 0.0f);
    op_case_free(&c);
    free(q), free(k), free(v), free(kc), free(vc), free(mask), free(want);
}

static void attention(void)
{
    unit_section("kiln.Attention");
    attention_case("GQA 4 over 2, cache 5, 4 new rows", &(attn_spec){.t = 4, .c = 5, .heads = 4, .kv_heads = 2, .head_dim = 8}, -1);
    attention_case("GQA with an all-masked row", &(attn_spec){.t = 3, .c = 4, .heads = 4, .kv_heads = 2, .head_dim = 4}, 1);
    attention_case("MHA, explicit scale", &(attn_spec){.t = 3, .c = 2, .heads = 2, .kv_heads = 2, .head_dim = 6, .scale = 0.9f}, -1);
    attention_case("no cache (C = 0)", &(attn_spec){.t = 5, .c = 0, .heads = 4, .kv_heads = 1, .head_dim = 4}, -1);
    attention_case("decode: one row over the cache", &(attn_spec){.t = 1, .c = 9, .heads = 4, .kv_heads = 2, .head_dim = 16}, -1);
}

static void bad_inputs(void)
{
    unit_section("bad inputs");
    static float f[256];
    static double f64[64];
    /* good: T 2, C 3, H 4, KVH 2, hd 2 -> Q [2, 8], K/V [2, 4], caches [3, 4], mask [2, 5] */
    kiln_tensor q = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 8}, f);
    kiln_tensor kv = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 4}, f);
    kiln_tensor cache = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){3, 4}, f);
    kiln_tensor mask = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 5}, f);
    kiln_tensor kv_wide = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 6}, f);
    kiln_tensor kv_rows = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){3, 4}, f);
    kiln_tensor cache_other = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){4, 4}, f);
    kiln_tensor mask_short = op_tensor(KILN_DTYPE_F32, 2, (const int64_t[]){2, 2}, f);
    kiln_tensor kv_f64 = op_tensor(KILN_DTYPE_F64, 2, (const int64_t[]){2, 4}, f64);
    kiln_tensor q_3d = op_tensor(KILN_DTYPE_F32, 3, (const int64_t[]){1, 2, 8}, f);
    struct { int slot; const kiln_tensor *t; int64_t heads, kv_heads; kiln_status want; const char *says; } cases[] = {
        {0, &q, 4, 2, KILN_OK, ""},
        {1, &kv_wide, 4, 2, KILN_ERROR_SHAPE_MISMATCH, "K has shape [2, 6], expected [2, 4]"},
        {2, &kv_rows, 4, 2, KILN_ERROR_SHAPE_MISMATCH, "V has shape [3, 4], expected [2, 4]"},
        {4, &cache_other, 4, 2, KILN_ERROR_SHAPE_MISMATCH, "VCache has shape [4, 4], expected [3, 4]"},
        {5, &mask_short, 4, 2, KILN_ERROR_SHAPE_MISMATCH, "Mask has shape [2, 2], expected [2, 5]"}, /* [T, C + T] */
        {1, &kv_f64, 4, 2, KILN_ERROR_DTYPE_MISMATCH, "K is f64, expected f32"},
        {0, &q_3d, 4, 2, KILN_ERROR_SHAPE_MISMATCH, "Q has shape [1, 2, 8], expected rank 2"},
        {0, &q, 4, 3, KILN_ERROR_INVALID_ARGUMENT, "num_heads 4 is not a multiple of num_kv_heads 3"},
        {0, &q, 3, 1, KILN_ERROR_SHAPE_MISMATCH, "Q has shape [2, 8], not 3 heads"},
        {0, &q, 0, 2, KILN_ERROR_INVALID_ARGUMENT, "num_heads and num_kv_heads must be given"},
        {0, &q, 4, 0, KILN_ERROR_INVALID_ARGUMENT, "num_heads and num_kv_heads must be given"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op_case c;
        op_case_init(&c, "Attention", 6);
        if (cases[i].heads) op_attr_int(&c, "num_heads", cases[i].heads);
        if (cases[i].kv_heads) op_attr_int(&c, "num_kv_heads", cases[i].kv_heads);
        const kiln_tensor *ins[6] = {&q, &kv, &kv, &cache, &cache, &mask};
        ins[cases[i].slot] = cases[i].t;
        memcpy(c.in, ins, sizeof ins);
        op_expect_refusal(&c, cases[i].want, cases[i].says);
    }
    op_case c;
    op_case_init(&c, "Attention", 5);
    op_attr_int(&c, "num_heads", 4);
    op_attr_int(&c, "num_kv_heads", 2);
    const kiln_tensor *five[5] = {&q, &kv, &kv, &cache, &cache};
    memcpy(c.in, five, sizeof five);
    op_expect_refusal(&c, KILN_ERROR_INVALID_ARGUMENT, "expected inputs Q, K, V, KCache, VCache, Mask");
}

int main(void)
{
    attention();
    bad_inputs();
    return unit_finish("test_kiln_op_attention");
}
