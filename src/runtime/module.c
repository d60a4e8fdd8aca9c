/* module.c — modules and the public method entry points (load, unload, I/O, execute).
 *
 * Layer: runtime. Locking: module->lock guards the handle list (load/unload from many
 * threads); each method's exec_lock serialises that method's set_input/execute/get_output.
 * Executing a method while another thread unloads the same method is a caller error (API.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "runtime/runtime.h"

void kiln_module_set_error(kiln_module *m, const char *fmt, ...)
{
    char line[sizeof m->last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&m->lock);
    memcpy(m->last_error, line, sizeof line);
    pthread_mutex_unlock(&m->lock);
}

const char *kiln_module_last_error(const kiln_module *m)
{
    return m && m->magic == KILN_MODULE_MAGIC ? m->last_error : "";
}

kiln_status kiln_module_create(kiln_program *program, const kiln_module_options *options, kiln_module **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(program, KILN_ERROR_INVALID_ARGUMENT);
    kiln_runtime_register_builtin_backends();
    kiln_module_options opt = {sizeof opt, NULL, NULL, 0, NULL};
    if (options) {
        KILN_CHECK(options->struct_size >= sizeof opt, KILN_ERROR_INVALID_ARGUMENT);
        opt = *options;
    }
    KILN_CHECK(opt.num_threads >= 0 && opt.num_threads <= 1024, KILN_ERROR_INVALID_ARGUMENT);
    const kiln_allocator *a = opt.allocator ? opt.allocator : kiln_allocator_default();
    KILN_CHECK(a->alloc && a->free, KILN_ERROR_INVALID_ARGUMENT);
    kiln_module *m = KILN_NEW(a, kiln_module);
    KILN_CHECK(m, KILN_ERROR_OUT_OF_MEMORY);
    kiln_status st = KILN_OK;
    if (!opt.allocator) { /* the allocator's address is the module's identity for context sharing */
        m->own_allocator = *a;
        a = &m->own_allocator;
    }
    m->allocator = a;
    if (opt.scratch_group) {
        KILN_TRY_GOTO(st, kiln_scratch_group_retain(opt.scratch_group));
        m->scratch_group = opt.scratch_group;
    }
    m->num_threads = opt.num_threads ? opt.num_threads : kiln_cpu_count();
    if (m->num_threads > 1) KILN_TRY_GOTO(st, kiln_threadpool_create(a, m->num_threads, &m->pool));
    if (opt.target) {
        m->target = kiln_strdup(a, opt.target);
        KILN_CHECK_GOTO(m->target, st, KILN_ERROR_OUT_OF_MEMORY);
    }
    KILN_CHECK_GOTO(pthread_mutex_init(&m->lock, NULL) == 0, st, KILN_ERROR_THREAD);
    m->magic = KILN_MODULE_MAGIC;
    m->program = program;
    kiln_program_retain(program);
    *out = m;
    return KILN_OK;
fail:
    kiln_threadpool_destroy(m->pool);
    if (m->scratch_group) kiln_scratch_group_unref(m->scratch_group);
    const kiln_allocator own = *a; /* a may point into m */
    kiln_free(&own, m->target);
    kiln_free(&own, m);
    return st;
}

void kiln_module_destroy(kiln_module *m)
{
    if (!m || m->magic != KILN_MODULE_MAGIC) return;
    kiln_method *h = m->handles;
    while (h) {
        kiln_method *next = h->next;
        if (h->state) kiln_method_state_destroy(m, h->state);
        h->magic = 0;
        kiln_free(m->allocator, h);
        h = next;
    }
    pthread_mutex_destroy(&m->lock);
    kiln_threadpool_destroy(m->pool);
    if (m->scratch_group) kiln_scratch_group_unref(m->scratch_group); /* after every member context */
    m->magic = 0;
    kiln_program_release(m->program);
    const kiln_allocator a = *m->allocator; /* m->allocator may point into m */
    kiln_free(&a, m->target);
    kiln_free(&a, m);
}

kiln_status kiln_method_load(kiln_module *m, const char *name, kiln_method **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(m && name, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(m->magic == KILN_MODULE_MAGIC, KILN_ERROR_STALE_HANDLE);
    const kiln_program_view *v = &m->program->view;
    uint32_t index = UINT32_MAX;
    for (uint64_t i = 0; i < v->n_methods && index == UINT32_MAX; i++)
        if (strcmp(kiln_view_string(v, v->methods[i].name), name) == 0) index = (uint32_t)i;
    KILN_CHECK(index != UINT32_MAX, KILN_ERROR_NOT_FOUND);
    kiln_method *h = KILN_NEW(m->allocator, kiln_method);
    KILN_CHECK(h, KILN_ERROR_OUT_OF_MEMORY);
    kiln_method_state *s;
    kiln_status st = kiln_method_state_create(m, index, &s);
    if (st != KILN_OK) {
        if (st != KILN_ERROR_NO_RUNNABLE_TARGET && st < KILN_ERROR_BACKEND)
            kiln_module_set_error(m, "loading method '%s' failed: %s", name, kiln_status_str(st));
        kiln_free(m->allocator, h);
        return st;
    }
    h->magic = KILN_METHOD_MAGIC;
    h->state = s;
    h->module = m;
    pthread_mutex_lock(&m->lock);
    h->next = m->handles;
    m->handles = h;
    pthread_mutex_unlock(&m->lock);
    *out = h;
    return KILN_OK;
}

void kiln_method_unload(kiln_method *h)
{
    if (!h || h->magic != KILN_METHOD_MAGIC) return;
    kiln_module *m = h->module;
    pthread_mutex_lock(&m->lock);
    kiln_method_state *s = h->state;
    h->state = NULL;
    pthread_mutex_unlock(&m->lock);
    if (s) kiln_method_state_destroy(m, s);
}

/* The live state behind a handle, or NULL for NULL/stale handles. */
static kiln_method_state *state_of(const kiln_method *h)
{
    if (!h || h->magic != KILN_METHOD_MAGIC) return NULL;
    return h->state;
}

size_t kiln_method_input_count(const kiln_method *h)
{
    const kiln_method_state *s = state_of(h);
    return s ? s->n_inputs : 0;
}

size_t kiln_method_output_count(const kiln_method *h)
{
    const kiln_method_state *s = state_of(h);
    return s ? s->n_outputs : 0;
}

const char *kiln_method_input_name(const kiln_method *h, size_t index)
{
    const kiln_method_state *s = state_of(h);
    return s && index < s->n_inputs ? s->values[s->inputs[index]].name : NULL;
}

const char *kiln_method_output_name(const kiln_method *h, size_t index)
{
    const kiln_method_state *s = state_of(h);
    return s && index < s->n_outputs ? s->values[s->outputs[index]].name : NULL;
}

static kiln_status io_info(const kiln_method *h, bool input, size_t index, kiln_tensor *out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(h, KILN_ERROR_INVALID_ARGUMENT);
    const kiln_method_state *s = state_of(h);
    KILN_CHECK(s, KILN_ERROR_STALE_HANDLE);
    KILN_CHECK(index < (input ? s->n_inputs : s->n_outputs), KILN_ERROR_INDEX_OUT_OF_RANGE);
    *out = s->values[input ? s->inputs[index] : s->outputs[index]].declared;
    out->data = NULL;
    return KILN_OK;
}

kiln_status kiln_method_input_info(const kiln_method *h, size_t index, kiln_tensor *out)
{
    return io_info(h, true, index, out);
}

kiln_status kiln_method_output_info(const kiln_method *h, size_t index, kiln_tensor *out)
{
    return io_info(h, false, index, out);
}

kiln_status kiln_method_set_input(kiln_method *h, size_t index, const kiln_tensor *t)
{
    KILN_CHECK(h && t, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_state *s = state_of(h);
    KILN_CHECK(s, KILN_ERROR_STALE_HANDLE);
    KILN_CHECK(index < s->n_inputs, KILN_ERROR_INDEX_OUT_OF_RANGE);
    kiln_exec_value *v = &s->values[s->inputs[index]];
    KILN_CHECK(t->dtype == v->declared.dtype, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(t->rank == v->declared.rank, KILN_ERROR_SHAPE_MISMATCH);
    for (uint32_t d = 0; d < t->rank; d++) KILN_CHECK(t->shape[d] == v->declared.shape[d], KILN_ERROR_SHAPE_MISMATCH);
    size_t bytes = kiln_tensor_bytes(&v->declared);
    KILN_CHECK(t->data || bytes == 0, KILN_ERROR_INVALID_ARGUMENT);
    pthread_mutex_lock(&s->exec_lock);
    if (bytes) memcpy(v->t.data, t->data, bytes);
    s->input_set[index] = true;
    pthread_mutex_unlock(&s->exec_lock);
    return KILN_OK;
}

kiln_status kiln_method_execute(kiln_method *h)
{
    KILN_CHECK(h, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_state *s = state_of(h);
    KILN_CHECK(s, KILN_ERROR_STALE_HANDLE);
    pthread_mutex_lock(&s->exec_lock);
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < s->n_inputs; i++)
        if (!s->input_set[i]) st = KILN_ERROR_INVALID_STATE;
    if (st == KILN_OK) st = kiln_method_state_execute(h->module, s);
    s->executed = st == KILN_OK;
    pthread_mutex_unlock(&s->exec_lock);
    return st;
}

kiln_status kiln_method_get_output(kiln_method *h, size_t index, kiln_tensor *out)
{
    KILN_CHECK(h && out, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_state *s = state_of(h);
    KILN_CHECK(s, KILN_ERROR_STALE_HANDLE);
    KILN_CHECK(index < s->n_outputs, KILN_ERROR_INDEX_OUT_OF_RANGE);
    pthread_mutex_lock(&s->exec_lock);
    kiln_status st = s->executed ? KILN_OK : KILN_ERROR_INVALID_STATE;
    if (st == KILN_OK) *out = s->values[s->outputs[index]].t;
    pthread_mutex_unlock(&s->exec_lock);
    return st;
}

size_t kiln_method_delegate_count(const kiln_method *h)
{
    const kiln_method_state *s = state_of(h);
    return s ? s->n_delegates : 0;
}

kiln_status kiln_method_context_id(const kiln_method *h, size_t index, uint64_t *out)
{
    KILN_CHECK(h && out, KILN_ERROR_INVALID_ARGUMENT);
    const kiln_method_state *s = state_of(h);
    KILN_CHECK(s, KILN_ERROR_STALE_HANDLE);
    KILN_CHECK(index < s->n_delegates, KILN_ERROR_INDEX_OUT_OF_RANGE);
    size_t seen = 0;
    for (size_t i = 0; i < s->n_instrs; i++) {
        const kiln_exec_instr *in = &s->instrs[i];
        if (!in->backend) continue;
        if (seen++ != index) continue;
        if (!in->backend->context_id) return KILN_ERROR_NOT_SUPPORTED;
        *out = in->backend->context_id(in->backend->user, in->delegate);
        return KILN_OK;
    }
    return KILN_ERROR_INDEX_OUT_OF_RANGE;
}
