/* module.c — modules and the public method entry points (load, unload, I/O, execute).
 *
 * Layer: runtime. Handles: every entry point pins its module or method handle in the handle
 * table (handle_table.h) before it touches the object and unpins it on the way out; destroy and
 * unload retire the handle first, which waits for the calls in flight, so no call ever runs on
 * freed memory and every later call sees KILN_ERROR_STALE_HANDLE.
 *
 * Locking: module->lock guards the module's method list and its per-thread error texts (loads
 * and unloads from many threads); each method's exec_lock serialises that method's
 * set_input/execute/get_output. Module destroy retires the module handle (no load can start or
 * still be running), then retires and frees its methods one by one; a method that another thread
 * is unloading at the same moment is that thread's to free, and destroy waits on
 * module->unlinked until it has left the list.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/text_escape.h"
#include "runtime/handle_table.h"
#include "runtime/runtime.h"

/* ---- modules -------------------------------------------------------------------------------- */

static kiln_status module_new(kiln_program_obj *program, const kiln_module_options *opt, kiln_module_obj **out,
                              kiln_diag *diag)
{
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    if (!a->alloc || !a->free)
        return kiln_diag_fail(diag, KILN_ERROR_INVALID_ARGUMENT, "the module allocator has no alloc or free function");
    kiln_module_obj *m = KILN_NEW(a, kiln_module_obj);
    KILN_CHECK(m, KILN_ERROR_OUT_OF_MEMORY);
    kiln_status st = KILN_OK;
    bool lock_made = false, cond_made = false;
    if (!opt->allocator) { /* the allocator's address is the module's identity for context sharing */
        m->own_allocator = *a;
        a = &m->own_allocator;
    }
    m->allocator = a;
    if (opt->scratch_group) {
        st = kiln_scratch_group_retain(opt->scratch_group);
        if (st != KILN_OK) {
            kiln_diag_fail(diag, st, "the scratch group was released or never created");
            goto fail;
        }
        m->scratch_group = opt->scratch_group;
    }
    m->num_threads = opt->num_threads ? opt->num_threads : kiln_cpu_count();
    if (m->num_threads > 1) KILN_TRY_GOTO(st, kiln_threadpool_create(a, m->num_threads, &m->pool));
    if (opt->target) {
        m->target = kiln_strdup(a, opt->target);
        KILN_CHECK_GOTO(m->target, st, KILN_ERROR_OUT_OF_MEMORY);
    }
    KILN_CHECK_GOTO(pthread_mutex_init(&m->lock, NULL) == 0, st, KILN_ERROR_THREAD);
    lock_made = true;
    KILN_CHECK_GOTO(pthread_cond_init(&m->unlinked, NULL) == 0, st, KILN_ERROR_THREAD);
    cond_made = true;
    m->program = program;
    KILN_TRY_GOTO(st, kiln_handle_add(KILN_HANDLE_MODULE, m, &m->handle));
    kiln_program_retain(program);
    *out = m;
    return KILN_OK;
fail:
    if (cond_made) pthread_cond_destroy(&m->unlinked);
    if (lock_made) pthread_mutex_destroy(&m->lock);
    kiln_threadpool_destroy(m->pool);
    if (m->scratch_group) kiln_scratch_group_unref(m->scratch_group);
    const kiln_allocator own = *a; /* a may point into m */
    kiln_free(&own, m->target);
    kiln_free(&own, m);
    return st;
}

kiln_status kiln_module_create_with_message(kiln_program *program, const kiln_module_options *options, kiln_module **out,
                                            char *message, size_t message_size)
{
    kiln_diag diag = kiln_diag_over(message, message_size);
    kiln_diag_clear(&diag);
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    kiln_module_options opt = {sizeof opt, NULL, NULL, 0, NULL};
    if (options) {
        if (options->struct_size < sizeof opt)
            return kiln_diag_fail(&diag, KILN_ERROR_INVALID_ARGUMENT, "kiln_module_options.struct_size is %zu, expected %zu",
                                  options->struct_size, sizeof opt);
        opt = *options;
    }
    if (opt.num_threads < 0 || opt.num_threads > 1024)
        return kiln_diag_fail(&diag, KILN_ERROR_INVALID_ARGUMENT, "num_threads %d is out of range (0 to 1024)",
                              opt.num_threads);
    KILN_CHECK(program, KILN_ERROR_INVALID_ARGUMENT);
    kiln_runtime_register_builtin_backends();
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)program, KILN_HANDLE_PROGRAM);
    if (!p)
        return kiln_diag_fail(&diag, KILN_ERROR_STALE_HANDLE, "the program handle is stale (closed) or not a program");
    kiln_status st = KILN_OK;
    if (opt.target) {
        st = kiln_program_check_file(p, &diag);
        if (st == KILN_OK) st = kiln_module_check_target(p, opt.target, &diag);
    }
    kiln_module_obj *m = NULL;
    if (st == KILN_OK) st = module_new(p, &opt, &m, &diag);
    kiln_handle_unpin((uintptr_t)program);
    if (st != KILN_OK) return kiln_diag_fail(&diag, st, "%s", kiln_status_str(st)); /* unless a line says more */
    *out = (kiln_module *)m->handle;
    return KILN_OK;
}

kiln_status kiln_module_create(kiln_program *program, const kiln_module_options *options, kiln_module **out)
{
    return kiln_module_create_with_message(program, options, out, NULL, 0);
}

/* The calling thread's error text on m, created if `create` (NULL if it cannot be). Lock held. */
static kiln_thread_error *thread_error_locked(kiln_module_obj *m, bool create)
{
    pthread_t self = pthread_self();
    for (kiln_thread_error *e = m->errors; e; e = e->next)
        if (pthread_equal(e->thread, self)) return e;
    if (!create) return NULL;
    kiln_thread_error *e = KILN_NEW(m->allocator, kiln_thread_error);
    if (!e) return NULL; /* out of memory: the caller's own message buffer still has the text */
    e->thread = self;
    e->next = m->errors;
    m->errors = e;
    return e;
}

const char *kiln_module_last_error(const kiln_module *module)
{
    kiln_module_obj *m = kiln_handle_pin((uintptr_t)module, KILN_HANDLE_MODULE);
    if (!m) return "";
    pthread_mutex_lock(&m->lock);
    const kiln_thread_error *e = thread_error_locked(m, false);
    pthread_mutex_unlock(&m->lock);
    kiln_handle_unpin((uintptr_t)module);
    return e ? e->text : "";
}

/* Frees a method that has left its module's handle table: its state, then (under the module
   lock, which a concurrent destroy waits on) its list entry. */
static void method_free(kiln_module_obj *m, kiln_method_obj *x)
{
    if (x->state) kiln_method_state_destroy(m, x->state);
    pthread_mutex_lock(&m->lock);
    if (x->prev) x->prev->next = x->next;
    else m->methods = x->next;
    if (x->next) x->next->prev = x->prev;
    kiln_free(m->allocator, x);
    pthread_cond_broadcast(&m->unlinked);
    pthread_mutex_unlock(&m->lock);
}

void kiln_module_destroy(kiln_module *module)
{
    kiln_module_obj *m = kiln_handle_retire((uintptr_t)module, KILN_HANDLE_MODULE);
    if (!m) return; /* NULL, already destroyed, or not a module */
    pthread_mutex_lock(&m->lock);
    while (m->methods) {
        kiln_method_obj *x = m->methods;
        uintptr_t handle = x->handle;
        pthread_mutex_unlock(&m->lock);
        if (kiln_handle_retire(handle, KILN_HANDLE_METHOD) == x) {
            method_free(m, x);
            pthread_mutex_lock(&m->lock);
        } else { /* another thread is unloading x: it frees it and tells us */
            pthread_mutex_lock(&m->lock);
            while (m->methods == x) pthread_cond_wait(&m->unlinked, &m->lock);
        }
    }
    for (kiln_thread_error *e = m->errors, *next; e; e = next) {
        next = e->next;
        kiln_free(m->allocator, e);
    }
    pthread_mutex_unlock(&m->lock);
    pthread_cond_destroy(&m->unlinked);
    pthread_mutex_destroy(&m->lock);
    kiln_threadpool_destroy(m->pool);
    if (m->scratch_group) kiln_scratch_group_unref(m->scratch_group); /* after every member context */
    kiln_program_release(m->program);
    const kiln_allocator a = *m->allocator; /* m->allocator may point into m */
    kiln_free(&a, m->target);
    kiln_free(&a, m);
}

/* ---- loading and unloading ------------------------------------------------------------------ */

static kiln_status method_new(kiln_module_obj *m, const char *name, kiln_method **out, kiln_diag *why)
{
    const kiln_program_view *v = &m->program->view;
    KILN_TRY(kiln_program_check_file(m->program, why));
    uint32_t index = UINT32_MAX;
    for (uint64_t i = 0; i < v->n_methods && index == UINT32_MAX; i++)
        if (strcmp(kiln_view_string(v, v->methods[i].name), name) == 0) index = (uint32_t)i;
    if (index == UINT32_MAX) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        return kiln_diag_fail(why, KILN_ERROR_NOT_FOUND, "the program has no method '%s'",
                              kiln_text_escape(shown, sizeof shown, name, (size_t)-1));
    }
    kiln_method_obj *x = KILN_NEW(m->allocator, kiln_method_obj);
    KILN_CHECK(x, KILN_ERROR_OUT_OF_MEMORY);
    kiln_status st = kiln_method_state_create(m, index, &x->state, why);
    if (st == KILN_OK) st = kiln_handle_add(KILN_HANDLE_METHOD, x, &x->handle);
    if (st != KILN_OK) {
        if (x->state) kiln_method_state_destroy(m, x->state);
        kiln_free(m->allocator, x);
        return st;
    }
    x->module = m;
    pthread_mutex_lock(&m->lock);
    x->next = m->methods;
    if (x->next) x->next->prev = x;
    m->methods = x;
    pthread_mutex_unlock(&m->lock);
    *out = (kiln_method *)x->handle;
    return KILN_OK;
}

kiln_status kiln_method_load_with_message(kiln_module *module, const char *name, kiln_method **out, char *message,
                                          size_t message_size)
{
    kiln_diag diag = kiln_diag_over(message, message_size);
    kiln_diag_clear(&diag);
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(module && name, KILN_ERROR_INVALID_ARGUMENT);
    kiln_module_obj *m = kiln_handle_pin((uintptr_t)module, KILN_HANDLE_MODULE);
    if (!m) return kiln_diag_fail(&diag, KILN_ERROR_STALE_HANDLE, "the module handle is stale (destroyed) or not a module");
    /* The reason goes into a diag of its own, then the whole line into one of full size, from
       which both the caller's buffer (any size, or none) and the thread's last error copy. */
    char why_text[KILN_MESSAGE_SIZE] = "", line_text[KILN_MESSAGE_SIZE] = "";
    kiln_diag why = kiln_diag_over(why_text, sizeof why_text), line = kiln_diag_over(line_text, sizeof line_text);
    kiln_status st = method_new(m, name, out, &why);
    if (st != KILN_OK) {
        char shown[KILN_ESCAPED_NAME_SIZE];
        kiln_diag_fail(&line, st, "loading method '%s' failed: %s", kiln_text_escape(shown, sizeof shown, name, (size_t)-1),
                       kiln_diag_has_text(&why) ? why_text : kiln_status_str(st));
        kiln_diag_copy(&diag, &line);
        pthread_mutex_lock(&m->lock);
        kiln_thread_error *e = thread_error_locked(m, true);
        if (e) {
            kiln_diag last = kiln_diag_over(e->text, sizeof e->text);
            kiln_diag_clear(&last);
            kiln_diag_copy(&last, &line);
        }
        pthread_mutex_unlock(&m->lock);
    }
    kiln_handle_unpin((uintptr_t)module);
    return st;
}

kiln_status kiln_method_load(kiln_module *module, const char *name, kiln_method **out)
{
    return kiln_method_load_with_message(module, name, out, NULL, 0);
}

void kiln_method_unload(kiln_method *method)
{
    kiln_method_obj *x = kiln_handle_retire((uintptr_t)method, KILN_HANDLE_METHOD);
    if (x) method_free(x->module, x);
}

/* ---- the loaded method's entry points --------------------------------------------------------
 * Each pins the handle, works on the state and unpins; NULL or a stale handle gives
 * KILN_ERROR_STALE_HANDLE (or the documented zero/NULL). */

static kiln_method_obj *pin(const kiln_method *h) { return kiln_handle_pin((uintptr_t)h, KILN_HANDLE_METHOD); }
static void unpin(const kiln_method *h) { kiln_handle_unpin((uintptr_t)h); }

typedef enum count_kind { COUNT_INPUTS, COUNT_OUTPUTS, COUNT_DELEGATES } count_kind;

/* One of the counts fixed at load, 0 for a stale handle. */
static size_t count_of(const kiln_method *h, count_kind kind)
{
    kiln_method_obj *x = pin(h);
    if (!x) return 0;
    const kiln_method_state *s = x->state;
    size_t n = kind == COUNT_INPUTS ? s->n_inputs : kind == COUNT_OUTPUTS ? s->n_outputs : s->n_delegates;
    unpin(h);
    return n;
}

size_t kiln_method_input_count(const kiln_method *h) { return count_of(h, COUNT_INPUTS); }
size_t kiln_method_output_count(const kiln_method *h) { return count_of(h, COUNT_OUTPUTS); }
size_t kiln_method_delegate_count(const kiln_method *h) { return count_of(h, COUNT_DELEGATES); }

static const char *io_name(const kiln_method *h, bool input, size_t index)
{
    kiln_method_obj *x = pin(h);
    if (!x) return NULL;
    const kiln_method_state *s = x->state;
    const char *name = NULL;
    if (index < (input ? s->n_inputs : s->n_outputs)) name = s->values[input ? s->inputs[index] : s->outputs[index]].name;
    unpin(h);
    return name;
}

const char *kiln_method_input_name(const kiln_method *h, size_t index) { return io_name(h, true, index); }
const char *kiln_method_output_name(const kiln_method *h, size_t index) { return io_name(h, false, index); }

static kiln_status io_info(const kiln_method *h, bool input, size_t index, kiln_tensor *out)
{
    KILN_CHECK(out && h, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_obj *x = pin(h);
    KILN_CHECK(x, KILN_ERROR_STALE_HANDLE);
    const kiln_method_state *s = x->state;
    kiln_status st = KILN_ERROR_INDEX_OUT_OF_RANGE;
    if (index < (input ? s->n_inputs : s->n_outputs)) {
        *out = s->values[input ? s->inputs[index] : s->outputs[index]].declared;
        out->data = NULL;
        st = KILN_OK;
    }
    unpin(h);
    return st;
}

kiln_status kiln_method_input_info(const kiln_method *h, size_t index, kiln_tensor *out)
{
    return io_info(h, true, index, out);
}

kiln_status kiln_method_output_info(const kiln_method *h, size_t index, kiln_tensor *out)
{
    return io_info(h, false, index, out);
}

static kiln_status set_input(kiln_method_state *s, size_t index, const kiln_tensor *t)
{
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

kiln_status kiln_method_set_input(kiln_method *h, size_t index, const kiln_tensor *t)
{
    KILN_CHECK(h && t, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_obj *x = pin(h);
    KILN_CHECK(x, KILN_ERROR_STALE_HANDLE);
    kiln_status st = set_input(x->state, index, t);
    unpin(h);
    return st;
}

kiln_status kiln_method_execute(kiln_method *h)
{
    KILN_CHECK(h, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_obj *x = pin(h);
    KILN_CHECK(x, KILN_ERROR_STALE_HANDLE);
    kiln_method_state *s = x->state;
    /* Before any page of the mapping is read: a truncated file would be SIGBUS, a rewritten one
       other weights. */
    kiln_diag nowhere = kiln_diag_over(NULL, 0); /* execute reports by status only */
    kiln_status st = kiln_program_check_file(x->module->program, &nowhere);
    pthread_mutex_lock(&s->exec_lock);
    for (size_t i = 0; i < s->n_inputs && st == KILN_OK; i++)
        if (!s->input_set[i]) st = KILN_ERROR_INVALID_STATE;
    if (st == KILN_OK) st = kiln_method_state_execute(x->module, s);
    s->executed = st == KILN_OK;
    pthread_mutex_unlock(&s->exec_lock);
    unpin(h);
    return st;
}

kiln_status kiln_method_get_output(kiln_method *h, size_t index, kiln_tensor *out)
{
    KILN_CHECK(h && out, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_obj *x = pin(h);
    KILN_CHECK(x, KILN_ERROR_STALE_HANDLE);
    kiln_method_state *s = x->state;
    kiln_status st = KILN_ERROR_INDEX_OUT_OF_RANGE;
    if (index < s->n_outputs) {
        pthread_mutex_lock(&s->exec_lock);
        st = s->executed ? KILN_OK : KILN_ERROR_INVALID_STATE;
        if (st == KILN_OK) *out = s->values[s->outputs[index]].t;
        pthread_mutex_unlock(&s->exec_lock);
    }
    unpin(h);
    return st;
}

static kiln_status context_id(const kiln_method_state *s, size_t index, uint64_t *out)
{
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

kiln_status kiln_method_context_id(const kiln_method *h, size_t index, uint64_t *out)
{
    KILN_CHECK(h && out, KILN_ERROR_INVALID_ARGUMENT);
    kiln_method_obj *x = pin(h);
    KILN_CHECK(x, KILN_ERROR_STALE_HANDLE);
    kiln_status st = context_id(x->state, index, out);
    unpin(h);
    return st;
}
