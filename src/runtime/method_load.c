/* method_load.c — turning a method of a validated program into executable state.
 *
 * Layer: runtime. The format reader has already proven every reference in range; this file
 * proves the program's *semantics* before anything runs: every kernel exists, every static
 * shape the program claims is the one the kernel's own infer() computes, every scratch need
 * fits the planned scratch, every value is written once before it is read, and no two planned
 * activations that are alive at the same time overlap in the arena. A program that fails any of
 * these is KILN_ERROR_FORMAT: the plan is verified, never re-planned.
 *
 * Constants whose bytes decide shapes or addresses are copied here, so that a program file
 * changed under its mapping can only change numbers (the contract in kiln.h): infer() read them
 * at load to prove the plan, and run() must see the same bytes. Such constants are small or not
 * floating point (shapes, axes, pads, indices, scales, Range bounds); large floating-point
 * constants are weights, read in place as numbers. Constants a method returns are copied too, so
 * an output view never points into the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/text_escape.h"
#include "runtime/runtime.h"

#define MAX_ARGS 256
/* Constants up to this size are copied whatever their dtype (see the file comment). */
#define COPY_CONST_MAX 4096

/* Whether a constant of this dtype and size is copied out of the file at load. */
static bool const_is_copied(kiln_dtype dtype, uint64_t size)
{
    bool floating = dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16 || dtype == KILN_DTYPE_F64;
    return !floating || size <= COPY_CONST_MAX;
}

/* The constant's bytes in the mapping, or a copy of them in the load arena when
   const_is_copied says so (or `always`). NULL when the copy cannot be allocated. */
static const void *const_bytes(kiln_method_state *s, const void *data, kiln_dtype dtype, uint64_t size, bool always)
{
    if (!always && !const_is_copied(dtype, size)) return data;
    return size ? kiln_arena_memdup(&s->load, data, (size_t)size, 64) : data;
}

static kiln_status decode_attr(kiln_method_state *s, const kiln_program_view *v, const kiln_fmt_attr *f, kiln_attr *a)
{
    a->name = kiln_view_string(v, f->name);
    a->type = (kiln_attr_type)f->type;
    a->n = (size_t)f->count;
    switch (a->type) {
    case KILN_ATTR_INT: a->i = f->i; break;
    case KILN_ATTR_FLOAT: {
        uint32_t bits = (uint32_t)f->i;
        memcpy(&a->f, &bits, 4);
        break;
    }
    case KILN_ATTR_INTS: a->ints = v->i64 + f->ref; break;
    case KILN_ATTR_FLOATS: a->floats = (const float *)(const void *)(v->i32 + f->ref); break;
    case KILN_ATTR_STRING: case KILN_ATTR_STRINGS: a->s = kiln_view_string(v, (uint32_t)f->ref); break;
    case KILN_ATTR_TENSOR:
        a->n = 0;
        a->tensor.dtype = (kiln_dtype)(f->i & 0xFF);
        a->tensor.rank = (uint32_t)((f->i >> 8) & 0xFF);
        for (uint32_t d = 0; d < a->tensor.rank; d++) a->tensor.shape[d] = v->i64[f->count + d];
        {
            uint64_t bytes = kiln_tensor_bytes(&a->tensor);
            a->tensor.data = (void *)const_bytes(s, kiln_view_segment_data(v, (uint32_t)f->ref), a->tensor.dtype, bytes, false);
            KILN_CHECK(a->tensor.data, KILN_ERROR_OUT_OF_MEMORY);
        }
        break;
    }
    return KILN_OK;
}

static bool is_output(const kiln_method_state *s, size_t value)
{
    for (size_t i = 0; i < s->n_outputs; i++)
        if ((size_t)s->outputs[i] == value) return true;
    return false;
}

static kiln_status decode_values(kiln_method_state *s, const kiln_program_view *v)
{
    const kiln_fmt_method *m = s->fmt;
    s->inputs = v->i32 + m->inputs;
    s->n_inputs = m->n_inputs;
    s->outputs = v->i32 + m->outputs;
    s->n_outputs = m->n_outputs;
    s->n_values = m->n_values;
    s->values = KILN_ARENA_ARRAY(&s->load, kiln_exec_value, s->n_values ? s->n_values : 1);
    KILN_CHECK(s->values, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < s->n_values; i++) {
        const kiln_fmt_value *f = &v->values[m->first_value + i];
        kiln_exec_value *x = &s->values[i];
        x->name = kiln_view_string(v, f->name);
        x->storage = f->storage;
        x->declared.dtype = (kiln_dtype)f->dtype;
        if (f->storage != KILN_STORAGE_DYNAMIC) {
            x->declared.rank = f->rank;
            for (uint32_t d = 0; d < f->rank; d++) x->declared.shape[d] = v->i64[f->shape + d];
        }
        x->t = x->declared;
        if (f->storage == KILN_STORAGE_CONST) {
            const uint8_t *bytes = (const uint8_t *)kiln_view_segment_data(v, f->segment) + f->offset;
            x->t.data = (void *)const_bytes(s, bytes, x->declared.dtype, f->size, is_output(s, i));
            KILN_CHECK(x->t.data, KILN_ERROR_OUT_OF_MEMORY);
        } else if (f->storage == KILN_STORAGE_ARENA) {
            x->t.data = (uint8_t *)s->arena + f->offset;
        }
    }
    for (size_t i = 0; i < s->n_inputs; i++)
        KILN_CHECK(s->values[s->inputs[i]].storage == KILN_STORAGE_ARENA, KILN_ERROR_FORMAT);
    return KILN_OK;
}

static bool same_shape(const kiln_tensor *a, const kiln_tensor *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* Run the kernel's infer() over the declared shapes. Statically planned outputs must come out
   exactly as declared; instructions touching dynamic values (or whose shapes depend on data
   only known at run time) are marked to re-infer at execute. */
static kiln_status verify_instr(kiln_method_state *s, kiln_exec_instr *in)
{
    const kiln_tensor *ins[MAX_ARGS] = {0};
    kiln_tensor outs_storage[MAX_ARGS];
    kiln_tensor *outs[MAX_ARGS] = {0};
    size_t n_in = in->node.n_inputs, n_out = in->node.n_outputs;
    kiln_tensor in_copies[MAX_ARGS];
    for (size_t i = 0; i < n_in; i++) {
        int32_t a = in->args[i];
        if (a < 0) continue;
        const kiln_exec_value *x = &s->values[a];
        if (x->storage == KILN_STORAGE_DYNAMIC) in->dynamic = true;
        in_copies[i] = x->t;
        if (x->storage != KILN_STORAGE_CONST) in_copies[i].data = NULL; /* contents unknown yet */
        ins[i] = &in_copies[i];
    }
    for (size_t j = 0; j < n_out; j++) {
        int32_t a = in->args[n_in + j];
        if (a < 0) continue;
        if (s->values[a].storage == KILN_STORAGE_DYNAMIC) in->dynamic = true;
        KILN_CHECK(s->values[a].storage != KILN_STORAGE_CONST, KILN_ERROR_FORMAT);
        memset(&outs_storage[j], 0, sizeof outs_storage[j]);
        outs[j] = &outs_storage[j];
    }
    /* Before the dynamic return: a run-time inference would see the same inputs. */
    KILN_CHECK(!in->kernel || kiln_kernel_quantized_input(&in->node, ins) < 0, KILN_ERROR_FORMAT);
    if (in->dynamic || !in->kernel) return KILN_OK;
    size_t scratch = 0;
    kiln_status st = in->kernel->infer(&in->node, ins, outs, &scratch);
    if (st == KILN_ERROR_SHAPE_UNKNOWN) {
        in->dynamic = true;
        return KILN_OK;
    }
    KILN_CHECK(st == KILN_OK, KILN_ERROR_FORMAT);
    KILN_CHECK(scratch <= s->fmt->scratch_size, KILN_ERROR_FORMAT);
    for (size_t j = 0; j < n_out; j++)
        if (outs[j]) KILN_CHECK(same_shape(outs[j], &s->values[in->args[n_in + j]].declared), KILN_ERROR_FORMAT);
    return KILN_OK;
}

typedef struct live_range {
    uint64_t offset, size;
    int64_t first, last;
} live_range;

static int by_offset(const void *pa, const void *pb)
{
    const live_range *a = pa, *b = pb;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* No two arena values alive at the same time may share a byte. Lifetimes come from the
   instruction order: inputs are alive from before the first instruction, outputs until after
   the last. */
static kiln_status verify_arena(kiln_method_state *s)
{
    size_t n = s->n_values;
    live_range *r = KILN_ARENA_ARRAY(&s->load, live_range, n ? n : 1);
    KILN_CHECK(r, KILN_ERROR_OUT_OF_MEMORY);
    int64_t end = (int64_t)s->n_instrs;
    for (size_t i = 0; i < n; i++) {
        r[i].first = INT64_MAX;
        r[i].last = INT64_MIN;
    }
    for (size_t k = 0; k < s->n_instrs; k++) {
        const kiln_exec_instr *in = &s->instrs[k];
        for (size_t a = 0; a < in->node.n_inputs + in->node.n_outputs; a++) {
            int32_t x = in->args[a];
            if (x < 0) continue;
            if ((int64_t)k < r[x].first) r[x].first = (int64_t)k;
            if ((int64_t)k > r[x].last) r[x].last = (int64_t)k;
        }
    }
    for (size_t i = 0; i < s->n_inputs; i++) {
        r[s->inputs[i]].first = -1;
        r[s->inputs[i]].last = end;
    }
    for (size_t i = 0; i < s->n_outputs; i++) {
        live_range *o = &r[s->outputs[i]];
        if (o->first == INT64_MAX) o->first = end;
        o->last = end;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (s->values[i].storage != KILN_STORAGE_ARENA || r[i].first == INT64_MAX) continue;
        live_range x = r[i];
        x.offset = (uint64_t)((uint8_t *)s->values[i].t.data - (uint8_t *)s->arena);
        x.size = kiln_tensor_bytes(&s->values[i].declared);
        if (x.size) r[m++] = x;
    }
    qsort(r, m, sizeof *r, by_offset);
    for (size_t i = 0; i < m; i++) {
        for (size_t j = i + 1; j < m && r[j].offset < r[i].offset + r[i].size; j++) {
            bool together = !(r[i].last < r[j].first || r[j].last < r[i].first);
            KILN_CHECK(!together, KILN_ERROR_FORMAT);
        }
    }
    return KILN_OK;
}

/* Values are single-assignment: method inputs and constants are defined on entry, every other
   value by exactly one instruction, before any instruction reads it, and no instruction writes a
   value it reads. Without this a DYNAMIC value could be read (or returned) before it has memory,
   and an instruction could free its own input when it allocates its output. */
static kiln_status verify_dataflow(kiln_method_state *s, const kiln_program_view *v)
{
    const kiln_fmt_method *m = s->fmt;
    bool *defined = KILN_ARENA_ARRAY(&s->load, bool, s->n_values ? s->n_values : 1);
    KILN_CHECK(defined, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < s->n_values; i++) defined[i] = s->values[i].storage == KILN_STORAGE_CONST;
    for (size_t i = 0; i < s->n_inputs; i++) defined[s->inputs[i]] = true;
    for (size_t k = 0; k < m->n_instrs; k++) {
        const kiln_fmt_instr *f = &v->instrs[m->first_instr + k];
        const int32_t *args = v->i32 + f->args;
        for (size_t i = 0; i < f->n_inputs; i++) KILN_CHECK(args[i] < 0 || defined[args[i]], KILN_ERROR_FORMAT);
        for (size_t j = f->n_inputs; j < (size_t)f->n_inputs + f->n_outputs; j++) {
            if (args[j] < 0) continue;
            KILN_CHECK(!defined[args[j]], KILN_ERROR_FORMAT);
            defined[args[j]] = true;
        }
    }
    for (size_t i = 0; i < s->n_outputs; i++) KILN_CHECK(defined[s->outputs[i]], KILN_ERROR_FORMAT);
    return KILN_OK;
}

static kiln_status decode_instrs(kiln_module_obj *module, kiln_method_state *s, const kiln_program_view *v,
                                 kiln_diag *diag)
{
    const kiln_fmt_method *m = s->fmt;
    s->n_instrs = m->n_instrs;
    s->instrs = KILN_ARENA_ARRAY(&s->load, kiln_exec_instr, s->n_instrs ? s->n_instrs : 1);
    KILN_CHECK(s->instrs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t k = 0; k < s->n_instrs; k++) {
        const kiln_fmt_instr *f = &v->instrs[m->first_instr + k];
        kiln_exec_instr *in = &s->instrs[k];
        KILN_CHECK((size_t)f->n_inputs + f->n_outputs <= MAX_ARGS, KILN_ERROR_LIMIT);
        in->node.op = kiln_view_string(v, f->op);
        in->node.name = kiln_view_string(v, f->name);
        in->node.opset = f->opset;
        in->node.n_inputs = f->n_inputs;
        in->node.n_outputs = f->n_outputs;
        in->node.n_attrs = f->n_attrs;
        in->args = (int32_t *)(v->i32 + f->args);
        in->scratch_size = f->scratch_size;
        kiln_attr *attrs = KILN_ARENA_ARRAY(&s->load, kiln_attr, f->n_attrs ? f->n_attrs : 1);
        KILN_CHECK(attrs, KILN_ERROR_OUT_OF_MEMORY);
        for (uint32_t i = 0; i < f->n_attrs; i++) KILN_TRY(decode_attr(s, v, &v->attrs[f->first_attr + i], &attrs[i]));
        in->node.attrs = attrs;
        char op[KILN_ESCAPED_NAME_SIZE];
        kiln_text_escape(op, sizeof op, in->node.op, (size_t)-1);
        if (f->kind == KILN_INSTR_KERNEL) {
            /* "kiln.RMSNorm" is op RMSNorm of domain kiln; a bare name is an ONNX op. */
            size_t domain_size = kiln_fmt_op_domain_size(in->node.op);
            if (domain_size) {
                char *domain = kiln_arena_alloc(&s->load, domain_size + 1, 1);
                KILN_CHECK(domain, KILN_ERROR_OUT_OF_MEMORY);
                memcpy(domain, in->node.op, domain_size);
                domain[domain_size] = '\0';
                in->node.domain = domain;
                in->node.op = kiln_fmt_op_type(in->node.op);
            }
            in->kernel = kiln_portable_kernel_find(in->node.domain, in->node.op, in->node.opset);
            if (!in->kernel)
                return kiln_diag_fail(diag, KILN_ERROR_NOT_SUPPORTED,
                                      "op '%s' opset %d (instruction %zu) is not in this build's kernels", op,
                                      (int)in->node.opset, k);
        } else {
            in->backend = kiln_backend_find(in->node.op);
            if (!in->backend || !in->backend->is_available(in->backend->user))
                return kiln_diag_fail(diag, KILN_ERROR_BACKEND_UNAVAILABLE, "backend '%s' (instruction %zu) is %s", op, k,
                                      in->backend ? "not available on this machine" : "not registered");
            /* The backend writes into a buffer of the init args (backend.h); its line crosses into
               this load's diag with the instruction named, escaped (it may quote names from the
               payload) and cut at the buffer's end (a backend's text is not trusted to end). */
            char why[KILN_MESSAGE_SIZE] = "";
            kiln_backend_init_args args = {sizeof args, kiln_view_segment_data(v, f->segment), v->segments[f->segment].size,
                                           module->allocator, module->scratch_group, module->target,
                                           module->num_threads, s->name, why, sizeof why,
                                           kiln_threadpool_parallel_for, module->pool,
                                           kiln_runtime_services_get(), in->node.name};
            kiln_status st = in->backend->init(in->backend->user, &args, &in->delegate);
            if (st != KILN_OK) {
                char shown[KILN_MESSAGE_SIZE];
                kiln_text_escape(shown, sizeof shown, why, strnlen(why, sizeof why));
                return kiln_diag_fail(diag, st, "%s (backend '%s', instruction %zu)", why[0] ? shown : kiln_status_str(st),
                                      op, k);
            }
            s->n_delegates++;
        }
        KILN_TRY(verify_instr(s, in));
    }
    return KILN_OK;
}

kiln_status kiln_method_state_create(kiln_module_obj *module, uint32_t index, kiln_method_state **out,
                                     kiln_diag *diag)
{
    *out = NULL;
    const kiln_allocator *a = module->allocator;
    const kiln_program_view *v = &module->program->view;
    kiln_method_state *s = KILN_NEW(a, kiln_method_state);
    KILN_CHECK(s, KILN_ERROR_OUT_OF_MEMORY);
    kiln_arena_init(&s->load, a, 16 * 1024);
    kiln_status st = KILN_OK;
    s->fmt = &v->methods[index];
    s->name = kiln_view_string(v, s->fmt->name);
    KILN_CHECK_GOTO(s->fmt->arena_size < ((uint64_t)1 << 46) && s->fmt->scratch_size < ((uint64_t)1 << 46), st,
                    KILN_ERROR_LIMIT);
    s->arena = kiln_alloc(a, (size_t)s->fmt->arena_size, 64);
    s->scratch = s->fmt->scratch_size ? kiln_alloc(a, (size_t)s->fmt->scratch_size, 64) : NULL;
    KILN_CHECK_GOTO(s->arena && (s->scratch || !s->fmt->scratch_size), st, KILN_ERROR_OUT_OF_MEMORY);
    KILN_TRY_GOTO(st, decode_values(s, v));
    s->input_set = KILN_ARENA_ARRAY(&s->load, bool, s->n_inputs ? s->n_inputs : 1);
    KILN_CHECK_GOTO(s->input_set, st, KILN_ERROR_OUT_OF_MEMORY);
    KILN_TRY_GOTO(st, verify_dataflow(s, v));
    KILN_TRY_GOTO(st, decode_instrs(module, s, v, diag));
    KILN_TRY_GOTO(st, verify_arena(s));
    KILN_CHECK_GOTO(pthread_mutex_init(&s->exec_lock, NULL) == 0, st, KILN_ERROR_THREAD);
    *out = s;
    return KILN_OK;
fail:
    for (size_t k = 0; s->instrs && k < s->n_instrs; k++)
        if (s->instrs[k].delegate) s->instrs[k].backend->destroy(s->instrs[k].backend->user, s->instrs[k].delegate);
    kiln_free(a, s->arena);
    kiln_free(a, s->scratch);
    kiln_arena_deinit(&s->load);
    kiln_free(a, s);
    return st;
}

void kiln_method_state_destroy(kiln_module_obj *module, kiln_method_state *s)
{
    const kiln_allocator *a = module->allocator;
    kiln_method_state_free_dynamic(module, s);
    for (size_t k = 0; k < s->n_instrs; k++)
        if (s->instrs[k].delegate) s->instrs[k].backend->destroy(s->instrs[k].backend->user, s->instrs[k].delegate);
    pthread_mutex_destroy(&s->exec_lock);
    kiln_free(a, s->arena);
    kiln_free(a, s->scratch);
    kiln_arena_deinit(&s->load);
    kiln_free(a, s);
}
