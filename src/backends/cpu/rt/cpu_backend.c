/* cpu_backend.c — the `cpu` backend's vtable and its delegate handles.
 *
 * Layer: backends/cpu/rt. A delegate handle is what one DELEGATE instruction of one loaded
 * method holds: a reference on the shared context (context_cache.h) and the index of the graph
 * that serves the method (graph name = method name; a binary with one graph serves any method).
 * Handles come from the loading module's allocator and carry a magic that destroy() clears, so a
 * handle passed again after destroy is refused instead of followed.
 *
 * Threads are per handle, not per context: the module's pool (valid while the handle lives) and,
 * when the module has n > 1 threads and the graph's steps use a workspace, n - 1 extra workspace
 * slots of the largest step workspace each, allocated here from the module's allocator. Slot 0
 * stays the workspace planned in the scratch group, so a single-threaded module pays nothing
 * and the group buffer does not grow with the thread count; the extra slots are the price of a
 * packing/gather buffer per thread (reported by no scratch-size query: they are handle memory).
 */
#include "backends/cpu/rt/cpu_backend.h"

#include <stdio.h>
#include <string.h>

#include "backends/cpu/rt/context_cache.h"
#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "core/check.h"

#define DELEGATE_MAGIC 0x44555043u /* "CPUD" */

typedef struct cpu_delegate {
    uint32_t magic;
    uint32_t graph;                     /* index in the context's selected record */
    kiln_cpu_context *context;          /* one reference */
    const kiln_allocator *allocator;    /* of this handle */
    kiln_cpu_exec threads;              /* pool and workspace slots 1..n-1 (thread_workspace owned) */
} cpu_delegate;

static cpu_delegate *live_delegate(void *handle)
{
    cpu_delegate *d = handle;
    return d && d->magic == DELEGATE_MAGIC ? d : NULL;
}

/* The generic target runs on any CPU, so the backend itself is always available; whether a
   given binary has a record for this CPU is decided per binary at init. */
static bool cpu_is_available(void *user)
{
    (void)user;
    return true;
}

static kiln_status key_from_args(const kiln_backend_init_args *args, kiln_cpu_key *key, char *message, size_t message_size)
{
    if (kiln_ctxbin_peek_signature(args->payload, args->payload_size, &key->signature) != KILN_OK)
        return kiln_ctxbin_reject(message, message_size, "payload is not a cpu context binary (size, alignment or magic)");
    key->allocator = args->allocator;
    key->payload = args->payload;
    key->payload_size = args->payload_size;
    key->target = args->target;
    key->group = args->scratch_group;
    key->rt = args->runtime;
    return KILN_OK;
}

/* The handle's thread fields: the module's pool and, for n > 1 threads, n - 1 workspace slots. */
static kiln_status setup_threads(cpu_delegate *d, const kiln_backend_init_args *args)
{
    int n = args->num_threads;
    if (n <= 1 || !args->parallel_for) return KILN_OK;
    kiln_cpu_exec *t = &d->threads;
    t->parallel_for = args->parallel_for;
    t->pool = args->pool;
    t->n_threads = (uint32_t)n;
    uint64_t slot = kiln_cpu_context_step_workspace(d->context, d->graph);
    if (slot == 0) return KILN_OK;
    slot = kiln_align_up_u64(slot, 64);
    KILN_CHECK(slot <= SIZE_MAX / (size_t)(n - 1), KILN_ERROR_OUT_OF_MEMORY);
    t->thread_workspace = kiln_alloc(args->allocator, (size_t)slot * (size_t)(n - 1), 64);
    KILN_CHECK(t->thread_workspace, KILN_ERROR_OUT_OF_MEMORY);
    t->thread_workspace_stride = (size_t)slot;
    return KILN_OK;
}

static kiln_status cpu_init(void *user, const kiln_backend_init_args *args, void **handle_out)
{
    (void)user;
    KILN_CHECK(handle_out, KILN_ERROR_INVALID_ARGUMENT);
    *handle_out = NULL;
    KILN_CHECK(args && args->struct_size >= sizeof *args && args->allocator, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(args->runtime && args->runtime->struct_size >= sizeof *args->runtime, KILN_ERROR_INVALID_ARGUMENT);
    char *message = args->message;
    size_t message_size = message ? args->message_size : 0;
    if (message_size) message[0] = '\0';
    kiln_cpu_key key;
    KILN_TRY(key_from_args(args, &key, message, message_size));
    cpu_delegate *d = KILN_NEW(args->allocator, cpu_delegate);
    KILN_CHECK(d, KILN_ERROR_OUT_OF_MEMORY);
    kiln_cpu_context *c;
    kiln_status st = kiln_cpu_cache_acquire(&key, message, message_size, &c);
    if (st != KILN_OK) {
        kiln_free(args->allocator, d);
        return st;
    }
    int64_t graph = kiln_ctxbin_find_graph(&c->bin, c->record, args->method_name, args->delegate_name);
    if (graph < 0) {
        kiln_cpu_cache_release(c);
        kiln_free(args->allocator, d);
        return kiln_ctxbin_reject(message, message_size, "no graph serves method '%s'",
                                  args->method_name ? args->method_name : "(unnamed)");
    }
    d->graph = (uint32_t)graph;
    d->context = c;
    d->allocator = args->allocator;
    st = setup_threads(d, args);
    /* The table's set-up hooks (AMX-like ISAs) on every thread of the pool before its first step. */
    if (st == KILN_OK) st = kiln_cpu_kernels_setup(c->kernels, &d->threads);
    if (st != KILN_OK) {
        kiln_free(args->allocator, d->threads.thread_workspace);
        kiln_cpu_cache_release(c);
        kiln_free(args->allocator, d);
        return st;
    }
    d->magic = DELEGATE_MAGIC;
    *handle_out = d;
    return KILN_OK;
}

static kiln_status cpu_execute(void *user, void *handle, const kiln_tensor *const *in, size_t n_in,
                               kiln_tensor *const *out, size_t n_out)
{
    (void)user;
    cpu_delegate *d = live_delegate(handle);
    KILN_CHECK(d, KILN_ERROR_STALE_HANDLE);
    /* The caller runs task 0 of every step and may be another thread than at init. */
    if (d->context->kernels->thread_setup) d->context->kernels->thread_setup();
    return kiln_cpu_context_execute(d->context, d->graph, in, n_in, out, n_out, &d->threads);
}

static void cpu_destroy(void *user, void *handle)
{
    (void)user;
    cpu_delegate *d = live_delegate(handle);
    if (!d) return;
    kiln_cpu_context *c = d->context;
    d->magic = 0;
    kiln_free(d->allocator, d->threads.thread_workspace);
    kiln_free(d->allocator, d);
    kiln_cpu_cache_release(c);
}

static uint64_t cpu_context_id(void *user, void *handle)
{
    (void)user;
    cpu_delegate *d = live_delegate(handle);
    return d ? d->context->id : 0;
}

/* "a, b, c" of every target this runtime knows. */
static void known_targets(char *names, size_t size)
{
    size_t n = 0;
    names[0] = '\0';
    for (size_t i = 0; i < kiln_cpu_target_count() && n < size; i++) {
        int w = snprintf(names + n, size - n, "%s%s", i ? ", " : "", kiln_cpu_target_at(i)->name);
        if (w < 0) break;
        n += (size_t)w;
    }
}

/* kiln_module_create's question (backend.h): is `target` a name we know, or a record of payload?
   The payload is validated as at load (its tables copied), so nothing unproven is read. */
static kiln_status cpu_find_target(void *user, const void *payload, size_t payload_size, const char *target, char *names,
                                   size_t names_size)
{
    (void)user;
    if (names_size) names[0] = '\0';
    if (!payload) {
        if (kiln_cpu_target_find(target)) return KILN_OK;
        if (names_size) known_targets(names, names_size);
        return KILN_ERROR_NOT_FOUND;
    }
    kiln_ctxbin bin;
    if (kiln_ctxbin_open(&bin, payload, payload_size, kiln_allocator_default(), NULL, 0) != KILN_OK)
        return KILN_ERROR_INCOMPATIBLE;
    kiln_status st = KILN_ERROR_NOT_FOUND;
    size_t n = 0;
    for (uint32_t i = 0; i < bin.header->n_records && st != KILN_OK; i++) {
        const char *name = kiln_ctxbin_string(&bin, bin.records[i].target);
        if (strcmp(name, target) == 0) st = KILN_OK;
        int w = n < names_size ? snprintf(names + n, names_size - n, "%s%s", i ? ", " : "", name) : -1;
        if (w > 0) n += (size_t)w;
    }
    kiln_ctxbin_close(&bin);
    return st;
}

static const kiln_backend cpu_backend = {
    .abi_version = KILN_BACKEND_ABI_VERSION,
    .struct_size = sizeof(kiln_backend),
    .name = "cpu",
    .is_available = cpu_is_available,
    .init = cpu_init,
    .execute = cpu_execute,
    .destroy = cpu_destroy,
    .context_id = cpu_context_id,
    .find_target = cpu_find_target,
};

const kiln_backend *kiln_cpu_backend(void) { return &cpu_backend; }
