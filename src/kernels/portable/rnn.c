/* rnn.c — portable kernels of the recurrent family: RNN, GRU, LSTM.
 *
 * Layer: kernels/portable. Depends on kernel.h, the row helpers and rnn_activation.h.
 * The three ops share everything but the cell: the inputs X (seq, batch, input) — (batch, seq,
 * input) with layout 1 —, W (dirs, G * hidden, input), R (dirs, G * hidden, hidden), B (dirs,
 * 2 * G * hidden), sequence_lens (batch), initial_h (dirs, batch, hidden) — (batch, dirs,
 * hidden) with layout 1 — and, for LSTM, initial_c of the same shape and the peepholes P
 * (dirs, 3 * hidden); G is 1, 3 (z r h) or 4 (i o f c) gates. Outputs: Y (seq, dirs, batch,
 * hidden) — (batch, seq, dirs, hidden) with layout 1 —, Y_h and for LSTM Y_c shaped like
 * initial_h.
 *
 * Each batch row runs its own sequence_lens[b] steps (forward, or from the last valid step
 * back for the reverse direction); Y is zero past them and Y_h holds the state after them.
 * Everything is computed in double from dense copies in scratch, a reference rather than a
 * fast kernel: the gate products are small dot-product loops.
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/families.h"
#include "kernels/portable/reduce_row.h"
#include "kernels/portable/rnn_activation.h"

typedef enum rnn_cell { CELL_RNN, CELL_GRU, CELL_LSTM } rnn_cell;

static const size_t cell_gates[] = {1, 3, 4};
static const size_t cell_n_activations[] = {1, 2, 3};
static const kiln_rnn_fn cell_defaults[][3] = {
    {KILN_RNN_TANH}, {KILN_RNN_SIGMOID, KILN_RNN_TANH}, {KILN_RNN_SIGMOID, KILN_RNN_TANH, KILN_RNN_TANH}};

/* Input slots. */
enum { IN_X, IN_W, IN_R, IN_B, IN_SEQ_LENS, IN_H0, IN_C0, IN_P };

/* The sizes of one node, and the gate functions of each direction. */
typedef struct rnn_dims {
    rnn_cell cell;
    int64_t seq, batch, input, hidden, dirs, gates;
    bool layout_batch_first;
    bool reverse_only;                                /* direction "reverse" */
    double clip;                                      /* 0: none */
    bool linear_before_reset, input_forget;
    kiln_rnn_activation acts[KILN_RNN_ACTIVATIONS_MAX]; /* (dirs, n per cell) */
} rnn_dims;

static const kiln_tensor *input_of(const kiln_node *node, const kiln_tensor *const *in, size_t i)
{
    return i < node->n_inputs ? in[i] : NULL;
}

static kiln_status shape_is(const kiln_tensor *t, uint32_t rank, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t want[3] = {d0, d1, d2};
    if (t->rank != rank) return KILN_ERROR_SHAPE_MISMATCH;
    for (uint32_t i = 0; i < rank; i++)
        if (t->shape[i] != want[i]) return KILN_ERROR_SHAPE_MISMATCH;
    return KILN_OK;
}

static kiln_status dims_read(const kiln_node *node, const kiln_tensor *const *in, rnn_cell cell, rnn_dims *d)
{
    memset(d, 0, sizeof *d);
    d->cell = cell;
    d->gates = (int64_t)cell_gates[cell];
    const kiln_tensor *x = input_of(node, in, IN_X), *w = input_of(node, in, IN_W), *r = input_of(node, in, IN_R);
    if (!x || !w || !r) return KILN_ERROR_INVALID_ARGUMENT;
    if (!kiln_reduce_row_is_float(x->dtype) || w->dtype != x->dtype || r->dtype != x->dtype)
        return KILN_ERROR_DTYPE_MISMATCH;
    if (x->rank != 3 || w->rank != 3 || r->rank != 3) return KILN_ERROR_SHAPE_MISMATCH;
    int64_t layout = kiln_node_attr_int(node, "layout", 0);
    if (layout != 0 && layout != 1) return KILN_ERROR_INVALID_ARGUMENT;
    d->layout_batch_first = layout == 1;
    d->seq = x->shape[d->layout_batch_first ? 1 : 0];
    d->batch = x->shape[d->layout_batch_first ? 0 : 1];
    d->input = x->shape[2];
    d->hidden = kiln_node_attr_int(node, "hidden_size", r->shape[2]);
    const char *direction = kiln_node_attr_string(node, "direction", "forward");
    if (strcmp(direction, "forward") == 0) d->dirs = 1;
    else if (strcmp(direction, "reverse") == 0) d->dirs = 1, d->reverse_only = true;
    else if (strcmp(direction, "bidirectional") == 0) d->dirs = 2;
    else return KILN_ERROR_INVALID_ARGUMENT;
    d->clip = kiln_node_attr_float(node, "clip", 0.0f);
    if (d->clip < 0) return KILN_ERROR_INVALID_ARGUMENT;
    d->linear_before_reset = kiln_node_attr_int(node, "linear_before_reset", 0) != 0;
    d->input_forget = kiln_node_attr_int(node, "input_forget", 0) != 0;
    int64_t gh = d->gates * d->hidden;
    KILN_TRY(shape_is(w, 3, d->dirs, gh, d->input));
    KILN_TRY(shape_is(r, 3, d->dirs, gh, d->hidden));
    const kiln_tensor *b = input_of(node, in, IN_B), *lens = input_of(node, in, IN_SEQ_LENS);
    if (b) {
        if (b->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
        KILN_TRY(shape_is(b, 2, d->dirs, 2 * gh, 0));
    }
    if (lens) {
        if (lens->dtype != KILN_DTYPE_I32 && lens->dtype != KILN_DTYPE_I64) return KILN_ERROR_DTYPE_MISMATCH;
        KILN_TRY(shape_is(lens, 1, d->batch, 0, 0));
    }
    size_t n_states = cell == CELL_LSTM ? 2 : 1;
    for (size_t s = 0; s < n_states; s++) {
        const kiln_tensor *h0 = input_of(node, in, IN_H0 + s);
        if (!h0) continue;
        if (h0->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
        if (d->layout_batch_first) KILN_TRY(shape_is(h0, 3, d->batch, d->dirs, d->hidden));
        else KILN_TRY(shape_is(h0, 3, d->dirs, d->batch, d->hidden));
    }
    const kiln_tensor *p = cell == CELL_LSTM ? input_of(node, in, IN_P) : NULL;
    if (p) {
        if (p->dtype != x->dtype) return KILN_ERROR_DTYPE_MISMATCH;
        KILN_TRY(shape_is(p, 2, d->dirs, 3 * d->hidden, 0));
    }
    return kiln_rnn_activations_read(node, cell_defaults[cell], cell_n_activations[cell], (size_t)d->dirs, d->acts);
}

/* The scratch layout, in doubles: the dense copies, then the per-step state and gates. */
typedef struct rnn_scratch {
    double *x;     /* (seq, batch, input), always sequence-first */
    double *w;     /* (dirs, G * hidden, input) */
    double *r;     /* (dirs, G * hidden, hidden) */
    double *b;     /* (dirs, 2 * G * hidden), zeros when absent */
    double *p;     /* (dirs, 3 * hidden), zeros when absent */
    double *h, *c; /* (hidden) the state of one batch row */
    double *gx;    /* (G * hidden) X_t W^T + Wb */
    double *gh;    /* (G * hidden) H_{t-1} R^T + Rb */
    double *tmp;   /* (hidden) */
} rnn_scratch;

static size_t scratch_doubles(const rnn_dims *d, rnn_scratch *s, double *base)
{
    int64_t gh = d->gates * d->hidden;
    int64_t sizes[] = {d->seq * d->batch * d->input, d->dirs * gh * d->input, d->dirs * gh * d->hidden,
                       d->dirs * 2 * gh, d->dirs * 3 * d->hidden, d->hidden, d->hidden, gh, gh, d->hidden};
    double **slots[] = {&s->x, &s->w, &s->r, &s->b, &s->p, &s->h, &s->c, &s->gx, &s->gh, &s->tmp};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (base) *slots[i] = base + total;
        total += (size_t)sizes[i];
    }
    return total;
}

static kiln_status rnn_infer_cell(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size, rnn_cell cell)
{
    rnn_dims d;
    KILN_TRY(dims_read(node, in, cell, &d));
    kiln_dtype dt = in[IN_X]->dtype;
    if (node->n_outputs > 0 && out[0]) {
        int64_t y_seq_first[4] = {d.seq, d.dirs, d.batch, d.hidden}, y_batch_first[4] = {d.batch, d.seq, d.dirs, d.hidden};
        kiln_tensor_set_shape(out[0], dt, 4, d.layout_batch_first ? y_batch_first : y_seq_first);
    }
    int64_t state_seq_first[3] = {d.dirs, d.batch, d.hidden}, state_batch_first[3] = {d.batch, d.dirs, d.hidden};
    for (size_t j = 1; j < node->n_outputs && j < (cell == CELL_LSTM ? 3u : 2u); j++)
        if (out[j]) kiln_tensor_set_shape(out[j], dt, 3, d.layout_batch_first ? state_batch_first : state_seq_first);
    *scratch_size = scratch_doubles(&d, &(rnn_scratch){0}, NULL) * sizeof(double);
    return KILN_OK;
}

/* Loads t (or zeros when absent) densely into dst[n]. */
static void load_or_zero(const kiln_tensor *t, int64_t n, double *dst)
{
    if (t) kiln_reduce_row_load_f64(t, 0, 1, n, dst);
    else memset(dst, 0, (size_t)n * sizeof *dst);
}

/* Offset of the state (dir, b) in initial_h, Y_h and the like. */
static int64_t state_offset(const rnn_dims *d, int64_t dir, int64_t b)
{
    return (d->layout_batch_first ? b * d->dirs + dir : dir * d->batch + b) * d->hidden;
}

static double clipped(const rnn_dims *d, double v)
{
    if (d->clip > 0) v = v < -d->clip ? -d->clip : v > d->clip ? d->clip : v;
    return v;
}

/* out[G * hidden] = m (G * hidden, k) v[k] + bias. */
static void matvec(const double *m, const double *v, const double *bias, int64_t rows, int64_t k, double *out)
{
    for (int64_t i = 0; i < rows; i++) {
        double acc = bias[i];
        for (int64_t j = 0; j < k; j++) acc += m[i * k + j] * v[j];
        out[i] = acc;
    }
}

/* One step of the cell for one batch row: s->h (and s->c) from s->gx and the previous state.
   acts are the direction's gate functions. */
static void cell_step(const rnn_dims *d, rnn_scratch *s, const double *r, const double *rb, const double *p,
                      const kiln_rnn_activation *acts)
{
    int64_t hs = d->hidden;
    matvec(r, s->h, rb, d->gates * hs, hs, s->gh);
    switch (d->cell) {
    case CELL_RNN:
        for (int64_t j = 0; j < hs; j++) s->h[j] = kiln_rnn_activation_apply(&acts[0], clipped(d, s->gx[j] + s->gh[j]));
        return;
    case CELL_GRU: {
        /* Gates z, r, h. With linear_before_reset the reset multiplies (H R_h^T + Rb_h), which
           s->gh already holds; otherwise it multiplies H before R_h. */
        const double *rh = r + 2 * hs * hs;
        for (int64_t j = 0; j < hs; j++)
            s->tmp[j] = kiln_rnn_activation_apply(&acts[0], clipped(d, s->gx[hs + j] + s->gh[hs + j])); /* r */
        if (!d->linear_before_reset) {
            double *reset_h = s->c; /* free for GRU */
            for (int64_t j = 0; j < hs; j++) reset_h[j] = s->tmp[j] * s->h[j];
            matvec(rh, reset_h, rb + 2 * hs, hs, hs, s->gh + 2 * hs);
        } else {
            for (int64_t j = 0; j < hs; j++) s->gh[2 * hs + j] *= s->tmp[j];
        }
        for (int64_t j = 0; j < hs; j++) {
            double z = kiln_rnn_activation_apply(&acts[0], clipped(d, s->gx[j] + s->gh[j]));
            double cand = kiln_rnn_activation_apply(&acts[1], clipped(d, s->gx[2 * hs + j] + s->gh[2 * hs + j]));
            s->h[j] = (1.0 - z) * cand + z * s->h[j];
        }
        return;
    }
    case CELL_LSTM:
        /* Gates i, o, f, c; peepholes i, o, f. */
        for (int64_t j = 0; j < hs; j++) {
            double c_prev = s->c[j];
            double gi = kiln_rnn_activation_apply(&acts[0], clipped(d, s->gx[j] + s->gh[j] + p[j] * c_prev));
            double gf = kiln_rnn_activation_apply(
                &acts[0], clipped(d, s->gx[2 * hs + j] + s->gh[2 * hs + j] + p[2 * hs + j] * c_prev));
            if (d->input_forget) gf = 1.0 - gi;
            double gc = kiln_rnn_activation_apply(&acts[1], clipped(d, s->gx[3 * hs + j] + s->gh[3 * hs + j]));
            double c = gf * c_prev + gi * gc;
            double go = kiln_rnn_activation_apply(&acts[0], clipped(d, s->gx[hs + j] + s->gh[hs + j] + p[hs + j] * c));
            s->c[j] = c;
            s->h[j] = go * kiln_rnn_activation_apply(&acts[2], c);
        }
        return;
    }
}

static kiln_status rnn_run_cell(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx, rnn_cell cell)
{
    rnn_dims d;
    KILN_TRY(dims_read(node, in, cell, &d));
    rnn_scratch s;
    scratch_doubles(&d, &s, ctx->scratch);
    int64_t gh = d.gates * d.hidden, n_acts = (int64_t)cell_n_activations[cell];
    for (int64_t t = 0; t < d.seq; t++)
        for (int64_t b = 0; b < d.batch; b++) {
            int64_t src = (d.layout_batch_first ? b * d.seq + t : t * d.batch + b) * d.input;
            kiln_reduce_row_load_f64(in[IN_X], src, 1, d.input, s.x + (t * d.batch + b) * d.input);
        }
    load_or_zero(in[IN_W], d.dirs * gh * d.input, s.w);
    load_or_zero(in[IN_R], d.dirs * gh * d.hidden, s.r);
    load_or_zero(input_of(node, in, IN_B), d.dirs * 2 * gh, s.b);
    load_or_zero(cell == CELL_LSTM ? input_of(node, in, IN_P) : NULL, d.dirs * 3 * d.hidden, s.p);
    const kiln_tensor *lens = input_of(node, in, IN_SEQ_LENS);
    const kiln_tensor *h0 = input_of(node, in, IN_H0), *c0 = cell == CELL_LSTM ? input_of(node, in, IN_C0) : NULL;
    kiln_tensor *y = node->n_outputs > 0 ? out[0] : NULL;
    kiln_tensor *y_h = node->n_outputs > 1 ? out[1] : NULL, *y_c = cell == CELL_LSTM && node->n_outputs > 2 ? out[2] : NULL;
    if (y) memset(y->data, 0, kiln_tensor_bytes(y));
    for (int64_t b = 0; b < d.batch; b++) {
        int64_t len = lens ? kiln_tensor_get_i64(lens, b) : d.seq;
        if (len < 0 || len > d.seq) return KILN_ERROR_INVALID_VALUE;
        for (int64_t dir = 0; dir < d.dirs; dir++) {
            bool reverse = d.reverse_only || dir == 1;
            int64_t so = state_offset(&d, dir, b);
            if (h0) kiln_reduce_row_load_f64(h0, so, 1, d.hidden, s.h);
            else memset(s.h, 0, (size_t)d.hidden * sizeof(double));
            if (c0) kiln_reduce_row_load_f64(c0, so, 1, d.hidden, s.c);
            else memset(s.c, 0, (size_t)d.hidden * sizeof(double));
            const double *w = s.w + dir * gh * d.input, *r = s.r + dir * gh * d.hidden;
            const double *wb = s.b + dir * 2 * gh, *rb = wb + gh, *p = s.p + dir * 3 * d.hidden;
            for (int64_t step = 0; step < len; step++) {
                int64_t t = reverse ? len - 1 - step : step;
                matvec(w, s.x + (t * d.batch + b) * d.input, wb, gh, d.input, s.gx);
                cell_step(&d, &s, r, rb, p, d.acts + dir * n_acts);
                if (y) {
                    int64_t yo = (d.layout_batch_first ? (b * d.seq + t) * d.dirs + dir : (t * d.dirs + dir) * d.batch + b)
                                 * d.hidden;
                    kiln_reduce_row_store_f64(y, yo, 1, d.hidden, s.h);
                }
            }
            if (y_h) kiln_reduce_row_store_f64(y_h, so, 1, d.hidden, s.h);
            if (y_c) kiln_reduce_row_store_f64(y_c, so, 1, d.hidden, s.c);
        }
    }
    return KILN_OK;
}

#define RNN_KERNEL_FNS(name, cell)                                                                                   \
    static kiln_status name##_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,  \
                                    size_t *scratch_size)                                                          \
    {                                                                                                              \
        return rnn_infer_cell(node, in, out, scratch_size, cell);                                                  \
    }                                                                                                              \
    static kiln_status name##_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,    \
                                  kiln_kernel_ctx *ctx)                                                            \
    {                                                                                                              \
        return rnn_run_cell(node, in, out, ctx, cell);                                                             \
    }
RNN_KERNEL_FNS(rnn, CELL_RNN)
RNN_KERNEL_FNS(gru, CELL_GRU)
RNN_KERNEL_FNS(lstm, CELL_LSTM)
#undef RNN_KERNEL_FNS

#define RNN_COMMON_ATTRS "activation_alpha:F activation_beta:F activations:S clip:f direction:s hidden_size:i layout:i"

const kiln_kernel kiln_kernels_rnn[] = {
    {"RNN", 7, rnn_infer, rnn_run, {{0, 3, 6, 0, 2}}, RNN_COMMON_ATTRS},
    {"GRU", 7, gru_infer, gru_run, {{0, 3, 6, 0, 2}}, RNN_COMMON_ATTRS " linear_before_reset:i"},
    {"LSTM", 7, lstm_infer, lstm_run, {{0, 3, 8, 0, 3}}, RNN_COMMON_ATTRS " input_forget:i"},
    {0},
};
