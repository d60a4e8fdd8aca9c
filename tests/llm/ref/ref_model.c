/* ref_model.c — loading and running the reference llama / qwen2 (see ref_model.h). */
#include "ref_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format/gguf/gguf_reader.h"
#include "core/alloc.h"
#include "ref_dequant.h"

/* ---- loading ----------------------------------------------------------------------------- */

typedef struct loader {
    const kiln_gguf *gguf;
    const kiln_allocator *a;
    char arch[32];
    char *message;
    size_t message_size;
} loader;

static kiln_status get_int(loader *ld, const char *suffix, bool required, int64_t fallback, int64_t *out)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", ld->arch, suffix);
    if (!kiln_gguf_find_key(ld->gguf, key) && !required) {
        *out = fallback;
        return KILN_OK;
    }
    kiln_status s = kiln_gguf_get_int(ld->gguf, key, out, ld->message, ld->message_size);
    if (s == KILN_OK && (*out < 1 || *out > (int64_t)1 << 31)) {
        snprintf(ld->message, ld->message_size, "%s = %lld is out of range", key, (long long)*out);
        return KILN_ERROR_MODEL;
    }
    return s == KILN_ERROR_NOT_FOUND ? KILN_ERROR_MODEL : s;
}

static kiln_status get_float(loader *ld, const char *suffix, float fallback, float *out)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", ld->arch, suffix);
    if (!kiln_gguf_find_key(ld->gguf, key)) {
        *out = fallback;
        return KILN_OK;
    }
    return kiln_gguf_get_f32(ld->gguf, key, out, ld->message, ld->message_size);
}

/* The tensor `name`, dequantized to f32, checked to have ggml dims (cols, rows) (rows 1: a
 * vector). Absent and optional: *out = NULL. */
static kiln_status load_tensor(loader *ld, const char *name, int64_t cols, int64_t rows, bool optional, float **out)
{
    const kiln_gguf_tensor *t = kiln_gguf_find_tensor(ld->gguf, name);
    *out = NULL;
    if (!t) {
        if (optional) return KILN_OK;
        snprintf(ld->message, ld->message_size, "tensor %s is missing", name);
        return KILN_ERROR_MODEL;
    }
    uint64_t want_rows = t->n_dims >= 2 ? t->dims[1] : 1;
    if (t->dims[0] != (uint64_t)cols || want_rows != (uint64_t)rows || t->n_elements != (uint64_t)(cols * rows)) {
        snprintf(ld->message, ld->message_size, "tensor %s has dims (%llu, %llu), expected (%lld, %lld)", name,
                 (unsigned long long)t->dims[0], (unsigned long long)want_rows, (long long)cols, (long long)rows);
        return KILN_ERROR_MODEL;
    }
    int64_t block_elems, block_bytes;
    if (!t->data || ref_block_layout(t->ggml_type, &block_elems, &block_bytes) != KILN_OK) {
        const char *type = kiln_ggml_type_name(t->ggml_type);
        snprintf(ld->message, ld->message_size, "tensor %s has type %s, which the reference cannot read", name,
                 type ? type : "?");
        return KILN_ERROR_NOT_SUPPORTED;
    }
    int64_t row_bytes = cols / block_elems * block_bytes;
    if (cols % block_elems != 0 || (uint64_t)(row_bytes * rows) > t->data_size) {
        snprintf(ld->message, ld->message_size, "tensor %s: rows of %lld are not whole blocks of its type", name,
                 (long long)cols);
        return KILN_ERROR_MODEL;
    }
    float *w = kiln_alloc(ld->a, (size_t)(cols * rows) * sizeof(float), 64);
    if (!w) return KILN_ERROR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < rows; r++) ref_dequantize_row(t->ggml_type, t->data + r * row_bytes, w + r * cols, cols);
    *out = w;
    return KILN_OK;
}

static kiln_status load_config(loader *ld, ref_config *c)
{
    const char *arch;
    size_t arch_size;
    kiln_status s = kiln_gguf_get_string(ld->gguf, "general.architecture", &arch, &arch_size, ld->message,
                                         ld->message_size);
    if (s != KILN_OK) return s == KILN_ERROR_NOT_FOUND ? KILN_ERROR_MODEL : s;
    if (!(arch_size == 5 && memcmp(arch, "llama", 5) == 0) && !(arch_size == 5 && memcmp(arch, "qwen2", 5) == 0)) {
        snprintf(ld->message, ld->message_size, "architecture \"%.*s\" is neither llama nor qwen2",
                 (int)(arch_size < 24 ? arch_size : 24), arch);
        return KILN_ERROR_MODEL;
    }
    memcpy(ld->arch, arch, arch_size);
    ld->arch[arch_size] = '\0';
    c->neox = strcmp(ld->arch, "qwen2") == 0;
    float base;
    if ((s = get_int(ld, "embedding_length", true, 0, &c->dim)) != KILN_OK ||
        (s = get_int(ld, "block_count", true, 0, &c->n_layers)) != KILN_OK ||
        (s = get_int(ld, "feed_forward_length", true, 0, &c->ffn)) != KILN_OK ||
        (s = get_int(ld, "attention.head_count", true, 0, &c->n_heads)) != KILN_OK ||
        (s = get_int(ld, "attention.head_count_kv", false, c->n_heads, &c->n_kv_heads)) != KILN_OK ||
        (s = get_int(ld, "context_length", true, 0, &c->context)) != KILN_OK ||
        (s = get_float(ld, "rope.freq_base", 10000.0f, &base)) != KILN_OK ||
        (s = get_float(ld, "attention.layer_norm_rms_epsilon", 1e-5f, &c->eps)) != KILN_OK)
        return s;
    c->rope_base = base;
    if (c->dim % c->n_heads != 0 || c->n_heads % c->n_kv_heads != 0) {
        snprintf(ld->message, ld->message_size, "%s: dim %lld, heads %lld, kv heads %lld do not divide", ld->arch,
                 (long long)c->dim, (long long)c->n_heads, (long long)c->n_kv_heads);
        return KILN_ERROR_MODEL;
    }
    c->head_dim = c->dim / c->n_heads;
    if ((s = get_int(ld, "rope.dimension_count", false, c->head_dim, &c->rope_dim)) != KILN_OK) return s;
    if (c->rope_dim % 2 != 0 || c->rope_dim > c->head_dim) {
        snprintf(ld->message, ld->message_size, "%s.rope.dimension_count %lld: not even or above head_dim %lld",
                 ld->arch, (long long)c->rope_dim, (long long)c->head_dim);
        return KILN_ERROR_MODEL;
    }
    const kiln_gguf_tensor *embd = kiln_gguf_find_tensor(ld->gguf, "token_embd.weight");
    if (!embd || embd->n_dims != 2) {
        snprintf(ld->message, ld->message_size, "tensor token_embd.weight is missing or not a matrix");
        return KILN_ERROR_MODEL;
    }
    c->vocab = (int64_t)embd->dims[1];
    c->tied = kiln_gguf_find_tensor(ld->gguf, "output.weight") == NULL;
    return KILN_OK;
}

static kiln_status load_layer(loader *ld, const ref_config *c, int64_t i, ref_layer *l)
{
    int64_t qd = c->n_heads * c->head_dim, kvd = c->n_kv_heads * c->head_dim;
    struct { const char *name; int64_t cols, rows; bool optional; float **out; } want[] = {
        {"attn_norm.weight", c->dim, 1, false, &l->attn_norm},
        {"attn_q.weight", c->dim, qd, false, &l->wq},
        {"attn_k.weight", c->dim, kvd, false, &l->wk},
        {"attn_v.weight", c->dim, kvd, false, &l->wv},
        {"attn_output.weight", qd, c->dim, false, &l->wo},
        {"attn_q.bias", qd, 1, true, &l->bq},
        {"attn_k.bias", kvd, 1, true, &l->bk},
        {"attn_v.bias", kvd, 1, true, &l->bv},
        {"ffn_norm.weight", c->dim, 1, false, &l->ffn_norm},
        {"ffn_gate.weight", c->dim, c->ffn, false, &l->w_gate},
        {"ffn_up.weight", c->dim, c->ffn, false, &l->w_up},
        {"ffn_down.weight", c->ffn, c->dim, false, &l->w_down},
    };
    for (size_t j = 0; j < sizeof want / sizeof want[0]; j++) {
        char name[96];
        snprintf(name, sizeof name, "blk.%lld.%s", (long long)i, want[j].name);
        kiln_status s = load_tensor(ld, name, want[j].cols, want[j].rows, want[j].optional, want[j].out);
        if (s != KILN_OK) return s;
    }
    return KILN_OK;
}

static void free_layer(const kiln_allocator *a, ref_layer *l)
{
    float *all[] = {l->attn_norm, l->wq, l->wk, l->wv, l->wo, l->bq, l->bk, l->bv,
                    l->ffn_norm, l->w_gate, l->w_up, l->w_down};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) kiln_free(a, all[j]);
}

void ref_model_deinit(ref_model *m)
{
    if (!m) return;
    if (m->layers)
        for (int64_t i = 0; i < m->config.n_layers; i++) free_layer(m->allocator, &m->layers[i]);
    kiln_free(m->allocator, m->layers);
    if (m->output != m->token_embd) kiln_free(m->allocator, m->output);
    kiln_free(m->allocator, m->token_embd);
    kiln_free(m->allocator, m->output_norm);
    memset(m, 0, sizeof *m);
}

kiln_status ref_model_load(const kiln_gguf *gguf, const kiln_allocator *allocator, ref_model *out,
                           char *message, size_t message_size)
{
    char scratch[8];
    loader ld = {gguf, allocator ? allocator : kiln_allocator_default(), "", message ? message : scratch,
                 message ? message_size : sizeof scratch};
    ref_model m;
    memset(&m, 0, sizeof m);
    m.allocator = ld.a;
    if (!gguf || !out) return KILN_ERROR_INVALID_ARGUMENT;
    ld.message[0] = '\0';
    kiln_status s = load_config(&ld, &m.config);
    if (s != KILN_OK) return s;
    const ref_config *c = &m.config;
    m.layers = kiln_alloc_zero(ld.a, (size_t)c->n_layers * sizeof *m.layers, 64);
    if (!m.layers) return KILN_ERROR_OUT_OF_MEMORY;
    if ((s = load_tensor(&ld, "token_embd.weight", c->dim, c->vocab, false, &m.token_embd)) != KILN_OK ||
        (s = load_tensor(&ld, "output_norm.weight", c->dim, 1, false, &m.output_norm)) != KILN_OK)
        goto fail;
    for (int64_t i = 0; i < c->n_layers; i++)
        if ((s = load_layer(&ld, c, i, &m.layers[i])) != KILN_OK) goto fail;
    if (c->tied) {
        m.output = m.token_embd;
    } else if ((s = load_tensor(&ld, "output.weight", c->dim, c->vocab, false, &m.output)) != KILN_OK) {
        goto fail;
    }
    *out = m;
    return KILN_OK;
fail:
    if (s == KILN_ERROR_OUT_OF_MEMORY) snprintf(ld.message, ld.message_size, "out of memory loading the weights");
    ref_model_deinit(&m);
    return s;
}

/* ---- running ----------------------------------------------------------------------------- */

kiln_status ref_state_init(ref_state *st, const ref_model *m, int64_t capacity)
{
    const ref_config *c = &m->config;
    if (!st || capacity < 1) return KILN_ERROR_INVALID_ARGUMENT;
    memset(st, 0, sizeof *st);
    st->allocator = m->allocator;
    st->capacity = capacity;
    int64_t kvd = c->n_kv_heads * c->head_dim, qd = c->n_heads * c->head_dim;
    size_t cache = (size_t)(c->n_layers * capacity * kvd) * sizeof(float);
    struct { float **p; size_t size; } parts[] = {
        {&st->key_cache, cache}, {&st->value_cache, cache},
        {&st->x, (size_t)c->dim * 4}, {&st->xb, (size_t)(c->dim > qd ? c->dim : qd) * 4},
        {&st->q, (size_t)qd * 4}, {&st->k, (size_t)kvd * 4}, {&st->v, (size_t)kvd * 4},
        {&st->att, (size_t)qd * 4}, {&st->h1, (size_t)c->ffn * 4}, {&st->h3, (size_t)c->ffn * 4},
    };
    for (size_t j = 0; j < sizeof parts / sizeof parts[0]; j++) {
        *parts[j].p = kiln_alloc_zero(st->allocator, parts[j].size, 64);
        if (!*parts[j].p) {
            ref_state_deinit(st);
            return KILN_ERROR_OUT_OF_MEMORY;
        }
    }
    st->scores = kiln_alloc(st->allocator, (size_t)capacity * sizeof(double), 64);
    st->acc = kiln_alloc(st->allocator, (size_t)c->head_dim * sizeof(double), 64);
    if (!st->scores || !st->acc) {
        ref_state_deinit(st);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    return KILN_OK;
}

void ref_state_deinit(ref_state *st)
{
    if (!st) return;
    float *all[] = {st->key_cache, st->value_cache, st->x, st->xb, st->q, st->k, st->v, st->att, st->h1, st->h3};
    for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) kiln_free(st->allocator, all[j]);
    kiln_free(st->allocator, st->scores);
    kiln_free(st->allocator, st->acc);
    memset(st, 0, sizeof *st);
}

static void rmsnorm(float *out, const float *x, const float *w, int64_t n, float eps)
{
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
    double inv = 1.0 / sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; i++) out[i] = (float)(x[i] * inv) * w[i];
}

/* out (rows) = W (rows, cols) x (cols) [+ bias], each sum in double. */
static void matvec(float *out, const float *w, const float *x, const float *bias, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *row = w + r * cols;
        double sum = bias ? bias[r] : 0.0;
        for (int64_t i = 0; i < cols; i++) sum += (double)row[i] * x[i];
        out[r] = (float)sum;
    }
}

static void rope(float *v, int64_t n_heads, const ref_config *c, int64_t pos)
{
    int64_t half = c->rope_dim / 2;
    for (int64_t h = 0; h < n_heads; h++) {
        float *head = v + h * c->head_dim;
        for (int64_t i = 0; i < half; i++) {
            double theta = (double)pos * pow(c->rope_base, -2.0 * (double)i / (double)c->rope_dim);
            double cs = cos(theta), sn = sin(theta);
            int64_t i0 = c->neox ? i : 2 * i, i1 = c->neox ? i + half : 2 * i + 1;
            double a = head[i0], b = head[i1];
            head[i0] = (float)(a * cs - b * sn);
            head[i1] = (float)(a * sn + b * cs);
        }
    }
}

static void attention(const ref_config *c, ref_state *st, int64_t layer, int64_t pos)
{
    int64_t kvd = c->n_kv_heads * c->head_dim, group = c->n_heads / c->n_kv_heads;
    const float *keys = st->key_cache + layer * st->capacity * kvd;
    const float *values = st->value_cache + layer * st->capacity * kvd;
    double scale = 1.0 / sqrt((double)c->head_dim);
    for (int64_t h = 0; h < c->n_heads; h++) {
        const float *q = st->q + h * c->head_dim;
        int64_t g = h / group;
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= pos; j++) {
            const float *k = keys + j * kvd + g * c->head_dim;
            double dot = 0;
            for (int64_t i = 0; i < c->head_dim; i++) dot += (double)q[i] * k[i];
            st->scores[j] = dot * scale;
            if (st->scores[j] > max) max = st->scores[j];
        }
        double *out = st->acc;
        memset(out, 0, (size_t)c->head_dim * sizeof *out);
        for (int64_t j = 0; j <= pos; j++) {
            double p = exp(st->scores[j] - max);
            sum += p;
            const float *v = values + j * kvd + g * c->head_dim;
            for (int64_t i = 0; i < c->head_dim; i++) out[i] += p * v[i];
        }
        for (int64_t i = 0; i < c->head_dim; i++) st->att[h * c->head_dim + i] = (float)(out[i] / sum);
    }
}

kiln_status ref_forward(const ref_model *m, ref_state *st, int64_t token, int64_t pos, float *logits)
{
    const ref_config *c = &m->config;
    if (token < 0 || token >= c->vocab || pos < 0 || pos >= st->capacity) return KILN_ERROR_INVALID_VALUE;
    int64_t qd = c->n_heads * c->head_dim, kvd = c->n_kv_heads * c->head_dim;
    memcpy(st->x, m->token_embd + token * c->dim, (size_t)c->dim * sizeof(float));
    for (int64_t l = 0; l < c->n_layers; l++) {
        const ref_layer *w = &m->layers[l];
        rmsnorm(st->xb, st->x, w->attn_norm, c->dim, c->eps);
        matvec(st->q, w->wq, st->xb, w->bq, qd, c->dim);
        matvec(st->k, w->wk, st->xb, w->bk, kvd, c->dim);
        matvec(st->v, w->wv, st->xb, w->bv, kvd, c->dim);
        rope(st->q, c->n_heads, c, pos);
        rope(st->k, c->n_kv_heads, c, pos);
        size_t row = (size_t)((l * st->capacity + pos) * kvd);
        memcpy(st->key_cache + row, st->k, (size_t)kvd * sizeof(float));
        memcpy(st->value_cache + row, st->v, (size_t)kvd * sizeof(float));
        attention(c, st, l, pos);
        matvec(st->xb, w->wo, st->att, NULL, c->dim, qd);
        for (int64_t i = 0; i < c->dim; i++) st->x[i] += st->xb[i];
        rmsnorm(st->xb, st->x, w->ffn_norm, c->dim, c->eps);
        matvec(st->h1, w->w_gate, st->xb, NULL, c->ffn, c->dim);
        matvec(st->h3, w->w_up, st->xb, NULL, c->ffn, c->dim);
        for (int64_t i = 0; i < c->ffn; i++) {
            double g = st->h1[i];
            st->h1[i] = (float)(g / (1.0 + exp(-g)) * st->h3[i]);
        }
        matvec(st->xb, w->w_down, st->h1, NULL, c->dim, c->ffn);
        for (int64_t i = 0; i < c->dim; i++) st->x[i] += st->xb[i];
    }
    rmsnorm(st->xb, st->x, m->output_norm, c->dim, c->eps);
    matvec(logits, m->output, st->xb, NULL, c->vocab, c->dim);
    return KILN_OK;
}
