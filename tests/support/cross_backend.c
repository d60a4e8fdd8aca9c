/* cross_backend.c — compile, run and compare one cross-backend case (see cross_backend.h).
 *
 * Layer: tests/support. Per case: serialise the model; compile it with no_delegate (the portable
 * oracle), draw the inputs from the shapes the oracle's method declares, run it and keep copies
 * of its outputs; then per target compile with targets = {T} and, when this CPU can run T, load
 * with kiln_module_options.target = T, require a delegate (unless the case says it may stay
 * portable: otherwise the comparison could silently be portable against portable), run and
 * compare; then run it again on XB_THREADS threads, which must give the very same bits. Every
 * run executes twice, and the second execution must repeat the first bit for bit. Targets this
 * CPU cannot run are still compiled, so their lowering and weight packing are exercised
 * everywhere; only running them is skipped.
 */
#include "cross_backend.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "core/cpu_features.h"
#include "kiln/compiler.h"

#define XB_MAX_INPUTS 16
#define XB_MAX_OUTPUTS 8
/* Each delegated program runs once on one thread (compared with the oracle) and once on this
 * many (which must give the same bits); odd, so that work splits unevenly. */
#define XB_THREADS 3

typedef struct xb_range {
    float lo, hi;
    bool random_sign;
    uint8_t n_special;      /* every 5th element from the first n_special of special_values */
} xb_range;

/* Non-finite values and signed zeros first (xb_input_nonfinite takes those alone). */
static const float special_values[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, -1e30f, 1e-30f, -1e-30f,
                                       88.5f, -88.5f};
#define N_NONFINITE 5

struct xb_case {
    xb_suite *suite;
    char name[192];
    unsigned flags;
    onnx_builder *b;
    uint64_t rng;
    size_t n_inputs;
    xb_range ranges[XB_MAX_INPUTS];     /* of the graph inputs, in declaration order */
};

struct xb_suite {
    xb_case current;
    bool in_case;
    int passed, failed;
};

/* Tensors a run produced or consumes: data malloc'd, one block per tensor. */
typedef struct xb_tensors {
    size_t n;
    kiln_tensor t[XB_MAX_OUTPUTS > XB_MAX_INPUTS ? XB_MAX_OUTPUTS : XB_MAX_INPUTS];
} xb_tensors;

static void tensors_free(xb_tensors *ts)
{
    for (size_t i = 0; i < ts->n; i++) free(ts->t[i].data);
    ts->n = 0;
}

static void *checked_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "cross_backend: out of memory\n");
        abort();
    }
    return p;
}

/* ---- random data ----------------------------------------------------------------------------- */

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64: good enough spread for test data, and tiny */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float random_in(uint64_t *state, xb_range r)
{
    uint64_t bits = next_random(state);
    float u = (float)(bits >> 40) * (1.0f / 16777216.0f);
    float v = r.lo + (r.hi - r.lo) * u;
    return r.random_sign && (bits & 1) ? -v : v;
}

static void fill_random(uint64_t *state, xb_range r, float *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        data[i] = r.n_special && i % 5 == 2 ? special_values[(size_t)(i / 5) % r.n_special] : random_in(state, r);
}

static uint64_t seed_of(const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a */
    for (const char *p = name; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001B3ull;
    return h;
}

static int64_t dims_numel(xb_dims s)
{
    int64_t n = 1;
    for (uint32_t i = 0; i < s.rank; i++) n *= s.d[i];
    return n;
}

/* ---- suite and case building ------------------------------------------------------------------ */

xb_suite *xb_suite_create(void)
{
    xb_suite *s = calloc(1, sizeof *s);
    if (!s) abort();
    for (size_t i = 0; i < kiln_cpu_target_count(); i++) {
        const kiln_cpu_target *t = kiln_cpu_target_at(i);
        if (kiln_cpu_target_runnable(t)) continue;
        char missing[256];
        kiln_cpu_features_format(t->features & ~kiln_cpu_features(), missing, sizeof missing);
        printf("SKIPPED target %s: this CPU lacks %s (its programs are compiled, not run)\n", t->name, missing);
    }
    return s;
}

int xb_suite_finish(xb_suite *s)
{
    printf("%d passed, %d failed\n", s->passed, s->failed);
    int code = s->failed ? 1 : 0;
    free(s);
    return code;
}

xb_case *xb_case_begin(xb_suite *s, int64_t opset, unsigned flags, const char *fmt, ...)
{
    if (s->in_case) {
        fprintf(stderr, "cross_backend: xb_case_begin inside case '%s'\n", s->current.name);
        abort();
    }
    xb_case *c = &s->current;
    memset(c, 0, sizeof *c);
    c->suite = s;
    c->flags = flags;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->name, sizeof c->name, fmt, ap);
    va_end(ap);
    c->rng = seed_of(c->name);
    c->b = onnx_builder_create(opset);
    s->in_case = true;
    return c;
}

static void add_input(xb_case *c, const char *name, xb_dims shape, xb_range r)
{
    if (c->n_inputs >= XB_MAX_INPUTS) abort();
    c->ranges[c->n_inputs++] = r;
    onnx_builder_input(c->b, name, ONNX_BUILDER_FLOAT, shape.rank, shape.d);
}

void xb_input(xb_case *c, const char *name, xb_dims shape, float lo, float hi)
{
    add_input(c, name, shape, (xb_range){lo, hi, false, 0});
}

void xb_input_nonzero(xb_case *c, const char *name, xb_dims shape, float lo, float hi)
{
    add_input(c, name, shape, (xb_range){lo, hi, true, 0});
}

void xb_input_special(xb_case *c, const char *name, xb_dims shape, float lo, float hi)
{
    add_input(c, name, shape, (xb_range){lo, hi, false, sizeof special_values / sizeof special_values[0]});
}

void xb_input_nonfinite(xb_case *c, const char *name, xb_dims shape, float lo, float hi)
{
    add_input(c, name, shape, (xb_range){lo, hi, false, N_NONFINITE});
}

void xb_weight(xb_case *c, const char *name, xb_dims shape, float lo, float hi)
{
    int64_t n = dims_numel(shape);
    float *data = checked_malloc((size_t)n * sizeof(float));
    fill_random(&c->rng, (xb_range){lo, hi, false, 0}, data, n);
    xb_weight_values(c, name, shape, data);
    free(data);
}

void xb_weight_values(xb_case *c, const char *name, xb_dims shape, const float *values)
{
    onnx_builder_initializer(c->b, name, ONNX_BUILDER_FLOAT, shape.rank, shape.d, values,
                             (size_t)dims_numel(shape) * sizeof(float));
}

void xb_weight_i64(xb_case *c, const char *name, xb_dims shape, const int64_t *values)
{
    onnx_builder_initializer(c->b, name, ONNX_BUILDER_INT64, shape.rank, shape.d, values,
                             (size_t)dims_numel(shape) * sizeof(int64_t));
}

Onnx__NodeProto *xb_node(xb_case *c, const char *op, const char *inputs, const char *outputs)
{
    return onnx_builder_node(c->b, op, inputs, outputs);
}

void xb_attr_int(xb_case *c, Onnx__NodeProto *node, const char *name, int64_t value)
{
    onnx_builder_attr_int(c->b, node, name, value);
}

void xb_attr_float(xb_case *c, Onnx__NodeProto *node, const char *name, float value)
{
    onnx_builder_attr_float(c->b, node, name, value);
}

void xb_attr_ints(xb_case *c, Onnx__NodeProto *node, const char *name, size_t n, const int64_t *values)
{
    onnx_builder_attr_ints(c->b, node, name, n, values);
}

void xb_attr_string(xb_case *c, Onnx__NodeProto *node, const char *name, const char *value)
{
    onnx_builder_attr_string(c->b, node, name, value);
}

void xb_output(xb_case *c, const char *name) { onnx_builder_output(c->b, name); }

/* ---- compiling and running -------------------------------------------------------------------- */

typedef struct xb_model {
    const uint8_t *bytes;
    size_t size;
} xb_model;

/* Compile the model with options; the program bytes come from the default allocator. */
static bool compile(const xb_model *m, const kiln_compile_options *opt, void **prog, size_t *prog_size, char *why,
                    size_t why_size)
{
    kiln_compile_method method = {"main", NULL, m->bytes, m->size};
    char msg[512] = "";
    kiln_status st = kiln_compile_memory(opt, &method, 1, prog, prog_size, msg, sizeof msg);
    if (st != KILN_OK) snprintf(why, why_size, "compile: %s: %s", kiln_status_name(st), msg);
    return st == KILN_OK;
}

/* Random inputs for every input the method declares, from the case's ranges. */
static bool make_inputs(xb_case *c, kiln_method *method, xb_tensors *inputs, char *why, size_t why_size)
{
    size_t n = kiln_method_input_count(method);
    if (n != c->n_inputs || n > XB_MAX_INPUTS) {
        snprintf(why, why_size, "the method has %zu inputs, the case declared %zu", n, c->n_inputs);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        kiln_tensor *t = &inputs->t[i];
        if (kiln_method_input_info(method, i, t) != KILN_OK || t->dtype != KILN_DTYPE_F32) {
            snprintf(why, why_size, "input %zu is not f32", i);
            return false;
        }
        int64_t numel = kiln_tensor_numel(t);
        t->data = checked_malloc((size_t)numel * sizeof(float));
        inputs->n = i + 1;
        fill_random(&c->rng, c->ranges[i], t->data, numel);
    }
    return true;
}

static void copy_outputs(kiln_method *method, xb_tensors *outputs)
{
    size_t n = kiln_method_output_count(method);
    for (size_t j = 0; j < n && j < XB_MAX_OUTPUTS; j++) {
        kiln_tensor view;
        if (kiln_method_get_output(method, j, &view) != KILN_OK) break;
        size_t bytes = (size_t)kiln_tensor_numel(&view) * kiln_dtype_size(view.dtype);
        outputs->t[j] = view;
        outputs->t[j].data = checked_malloc(bytes);
        if (bytes) memcpy(outputs->t[j].data, view.data, bytes);
        outputs->n = j + 1;
    }
}

/* The method's outputs are bit for bit those of the earlier run kept in `before`. */
static bool same_as_before(kiln_method *method, const xb_tensors *before, char *why, size_t why_size)
{
    for (size_t j = 0; j < before->n; j++) {
        kiln_tensor view;
        size_t bytes = (size_t)kiln_tensor_numel(&before->t[j]) * kiln_dtype_size(before->t[j].dtype);
        if (kiln_method_get_output(method, j, &view) != KILN_OK ||
            (bytes && memcmp(view.data, before->t[j].data, bytes) != 0)) {
            snprintf(why, why_size, "output %zu of a second execution differs from the first", j);
            return false;
        }
    }
    return true;
}

typedef struct xb_run {
    const char *target;             /* NULL: the oracle */
    int threads;                    /* kiln_module_options.num_threads (>= 1) */
    xb_tensors *inputs;             /* filled here when empty (the oracle), else fed */
    xb_tensors outputs;
    size_t delegates;
} xb_run;

/* Open the program, load "main" (forcing run->target), feed the inputs, execute, copy outputs. */
static bool execute(xb_case *c, const void *prog, size_t prog_size, xb_run *run, char *why, size_t why_size)
{
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *method = NULL;
    bool ok = false;
    kiln_status st = kiln_program_open_memory(prog, prog_size, &program);
    if (st != KILN_OK) {
        snprintf(why, why_size, "program open: %s", kiln_status_name(st));
        return false;
    }
    kiln_module_options o = {sizeof o, NULL, NULL, run->threads, run->target};
    st = kiln_module_create(program, &o, &module);
    if (st != KILN_OK) {
        snprintf(why, why_size, "module create: %s", kiln_status_name(st));
        goto done;
    }
    st = kiln_method_load(module, "main", &method);
    if (st != KILN_OK) {
        snprintf(why, why_size, "load: %s: %s", kiln_status_name(st), kiln_module_last_error(module));
        goto done;
    }
    run->delegates = kiln_method_delegate_count(method);
    if (run->inputs->n == 0 && !make_inputs(c, method, run->inputs, why, why_size)) goto done;
    for (size_t i = 0; i < run->inputs->n; i++) {
        st = kiln_method_set_input(method, i, &run->inputs->t[i]);
        if (st != KILN_OK) {
            snprintf(why, why_size, "set input %zu: %s", i, kiln_status_name(st));
            goto done;
        }
    }
    st = kiln_method_execute(method);
    if (st != KILN_OK) {
        snprintf(why, why_size, "execute: %s", kiln_status_name(st));
        goto done;
    }
    copy_outputs(method, &run->outputs);
    /* Once more on the same inputs: a step that reads what an earlier run left in its output or
       scratch (an accumulation never reset, a pad never rewritten) shows up as a difference. */
    st = kiln_method_execute(method);
    if (st != KILN_OK) {
        snprintf(why, why_size, "second execute: %s", kiln_status_name(st));
        goto done;
    }
    ok = same_as_before(method, &run->outputs, why, why_size);
done:
    kiln_module_destroy(module);
    kiln_program_close(program);
    return ok;
}

/* ---- comparison ----------------------------------------------------------------------------------
 * Elementwise and data-movement outputs: |a - e| <= 1e-5 + 1e-3 |e|. 1e-3 is the ONNX conformance
 * rtol; the ISA kernels evaluate exp, log, tanh, erf ... with their own polynomials rather than
 * libm (a few ulp apart, ~1e-6 relative), and 1e-5 absolute covers functions whose result
 * crosses zero (erf, tanh, log near 1), where a relative bound means nothing.
 * Reductions (XB_REDUCES: GEMM, convolution, average pooling, softmax, normalisation): the
 * kernels sum in another order (K blocks, FMA, vector-lane partial sums), and the rounding
 * error of a K-term sum is bounded by about K * eps * sum |terms|, which does not shrink when
 * cancellation makes one output small. With inputs of magnitude <= ~1 and K <= ~600 here,
 * K * eps is ~4e-5 and sum |terms| is within a small factor of max |e|, so the absolute part
 * becomes 1e-4 * max |e| over the whole output: a few times the honest reordering error, far
 * below what a wrong tap, lane, tile edge or pad gives (an error of the order of |e| itself). */
static double absolute_tolerance(const xb_case *c, const kiln_tensor *e)
{
    double atol = 1e-5;
    if (!(c->flags & XB_REDUCES)) return atol;
    double max_abs = 0;
    const float *d = e->data;
    for (int64_t i = 0; i < kiln_tensor_numel(e); i++)
        if (isfinite(d[i]) && fabs(d[i]) > max_abs) max_abs = fabs(d[i]);
    return atol + 1e-4 * max_abs;
}

static bool same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* true when every output matches; *worst gets the largest |a - e| / tolerance seen. */
static bool compare_outputs(const xb_case *c, const xb_tensors *got, const xb_tensors *want, double *worst,
                            char *why, size_t why_size)
{
    *worst = 0;
    if (got->n != want->n) {
        snprintf(why, why_size, "%zu outputs, the oracle has %zu", got->n, want->n);
        return false;
    }
    for (size_t j = 0; j < want->n; j++) {
        const kiln_tensor *a = &got->t[j], *e = &want->t[j];
        if (!same_shape(a, e) || e->dtype != KILN_DTYPE_F32) {
            snprintf(why, why_size, "output %zu: dtype or shape differs from the oracle's", j);
            return false;
        }
        double atol = absolute_tolerance(c, e);
        const float *av = a->data, *ev = e->data;
        for (int64_t i = 0; i < kiln_tensor_numel(e); i++) {
            double x = av[i], y = ev[i];
            if ((isnan(x) && isnan(y)) || (isinf(y) && x == y)) continue;
            double tol = atol + 1e-3 * fabs(y), err = fabs(x - y);
            if (!(err <= tol)) {
                snprintf(why, why_size, "output %zu element %lld is %.9g, the oracle's %.9g (tolerance %.3g)", j,
                         (long long)i, x, y, tol);
                return false;
            }
            if (err / tol > *worst) *worst = err / tol;
        }
    }
    return true;
}

/* Same count, shapes and bits (the kernels promise results independent of the thread count). */
static bool tensors_identical(const xb_tensors *a, const xb_tensors *b)
{
    if (a->n != b->n) return false;
    for (size_t j = 0; j < a->n; j++) {
        size_t bytes = (size_t)kiln_tensor_numel(&b->t[j]) * kiln_dtype_size(b->t[j].dtype);
        if (!same_shape(&a->t[j], &b->t[j]) || (bytes && memcmp(a->t[j].data, b->t[j].data, bytes) != 0))
            return false;
    }
    return true;
}

/* ---- one case ----------------------------------------------------------------------------------- */

static void report(xb_case *c, const char *target, bool ok, const char *detail)
{
    printf("%s  %-10s %s  %s\n", ok ? "PASS" : "FAIL", target, c->name, detail);
    if (ok) c->suite->passed++;
    else c->suite->failed++;
}

/* The delegated program for target t: compile; when t runs here, execute and compare. */
static void run_target(xb_case *c, const xb_model *m, const kiln_cpu_target *t, xb_tensors *inputs,
                       const xb_tensors *want)
{
    char why[512] = "", detail[600];
    const char *targets[1] = {t->name};
    kiln_compile_options opt = {.struct_size = sizeof opt, .targets = targets, .n_targets = 1};
    void *prog = NULL;
    size_t prog_size = 0;
    if (!compile(m, &opt, &prog, &prog_size, why, sizeof why)) {
        report(c, t->name, false, why);
        return;
    }
    xb_run run = {.target = t->name, .threads = 1, .inputs = inputs};
    xb_run threaded = {.target = t->name, .threads = XB_THREADS, .inputs = inputs};
    bool ok = true;
    if (kiln_cpu_target_runnable(t)) {
        double worst = 0;
        ok = execute(c, prog, prog_size, &run, why, sizeof why);
        if (ok && run.delegates == 0 && !(c->flags & XB_MAY_STAY_PORTABLE)) {
            snprintf(why, sizeof why, "no delegate: the op stayed on the portable kernels, nothing was compared");
            ok = false;
        }
        if (ok) ok = compare_outputs(c, &run.outputs, want, &worst, why, sizeof why);
        if (ok) ok = execute(c, prog, prog_size, &threaded, why, sizeof why);
        if (ok && !tensors_identical(&threaded.outputs, &run.outputs)) {
            snprintf(why, sizeof why, "with %d threads the outputs differ from those of one thread", XB_THREADS);
            ok = false;
        }
        if (ok) snprintf(detail, sizeof detail, "(%zu delegate%s, worst error %.2g of tolerance)", run.delegates,
                         run.delegates == 1 ? "" : "s", worst);
        else snprintf(detail, sizeof detail, "%s", why);
        report(c, t->name, ok, detail);
        tensors_free(&run.outputs);
        tensors_free(&threaded.outputs);
    }
    kiln_free(kiln_allocator_default(), prog);
}

void xb_case_run(xb_case *c)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    onnx_builder_serialize(c->b, &bytes, &size);
    xb_model m = {bytes, size};
    xb_tensors inputs = {0};
    xb_run oracle = {.target = NULL, .threads = 1, .inputs = &inputs};
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = 1};
    void *prog = NULL;
    size_t prog_size = 0;
    char why[512] = "";
    bool ok = compile(&m, &opt, &prog, &prog_size, why, sizeof why);
    if (ok) {
        ok = execute(c, prog, prog_size, &oracle, why, sizeof why);
        if (ok && oracle.delegates != 0) {
            snprintf(why, sizeof why, "the no_delegate program has %zu delegate calls", oracle.delegates);
            ok = false;
        }
        kiln_free(kiln_allocator_default(), prog);
    }
    if (!ok) {
        report(c, "portable", false, why);
    } else {
        for (size_t i = 0; i < kiln_cpu_target_count(); i++)
            run_target(c, &m, kiln_cpu_target_at(i), &inputs, &oracle.outputs);
    }
    tensors_free(&oracle.outputs);
    tensors_free(&inputs);
    free(bytes);
    onnx_builder_destroy(c->b);
    c->b = NULL;
    c->suite->in_case = false;
}

void xb_conv_case(xb_suite *s, const xb_conv_form *f)
{
    xb_case *c = xb_case_begin(s, 11, XB_REDUCES, "Conv %s%s%s", f->what, f->tail ? " + " : "", f->tail ? f->tail : "");
    xb_input(c, "x", f->x, -1, 1);
    xb_dims w = {f->x.rank, {f->m, f->x.d[1] / f->group}};
    for (uint32_t i = 0; i < f->kernel.rank; i++) w.d[2 + i] = f->kernel.d[i];
    xb_weight(c, "w", w, -1, 1);
    if (!f->no_bias) xb_weight(c, "bias", XB_DIMS(f->m), -1, 1);
    Onnx__NodeProto *n = xb_node(c, "Conv", f->no_bias ? "x,w" : "x,w,bias", f->tail ? "conv" : "y");
    if (f->group != 1) xb_attr_int(c, n, "group", f->group);
    if (f->strides.rank) xb_attr_ints(c, n, "strides", f->strides.rank, f->strides.d);
    if (f->pads.rank) xb_attr_ints(c, n, "pads", f->pads.rank, f->pads.d);
    if (f->dilations.rank) xb_attr_ints(c, n, "dilations", f->dilations.rank, f->dilations.d);
    if (f->auto_pad) xb_attr_string(c, n, "auto_pad", f->auto_pad);
    if (f->tail) xb_node(c, f->tail, "conv", "y");
    xb_output(c, "y");
    xb_case_run(c);
}
