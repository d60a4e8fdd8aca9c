/* test_backend_toy.c — a second backend, registered at run time, on the runtime's shared
 * services (kiln_runtime_services in include/kiln/backend.h): its contexts join scratch groups
 * and report stats exactly as the built-in `cpu` backend's do, with nothing of it outside this
 * file.
 *
 * Layer: tests (runtime). The toy backend "toy_rt" runs y = x * scale through its scratch
 * buffer (the input is staged in the group buffer, then scaled into the output), so a wrong or
 * too small buffer shows in the results. Each handle is one toy context. Without an explicit
 * group, contexts of one (allocator, size) share a default group, reference-counted by the toy
 * itself through the owner cookie the runtime keeps; with one, they join the module's explicit
 * group. Checks:
 *  - stats: live contexts, contexts created/destroyed, live scratch groups and reserved bytes
 *    move with the toy's loads and unloads and return to where they were;
 *  - default groups: equal sizes in one module share one group, another size forms another,
 *    another module (allocator) never shares, and the last release lets a fresh group form;
 *  - explicit group: N modules reserve one buffer sized to the largest member; it holds no
 *    buffer once memberless and is gone once released;
 *  - execution inside a group is serialised: threads running methods of different modules in
 *    one explicit group never overlap inside execute() (the toy counts who is inside), and every
 *    output is exact (label tsan: ThreadSanitizer sees any unsynchronised buffer use).
 * Programs come from tests/support/delegate_program.h (values v0..vn, n DELEGATE calls
 * v[k] -> v[k+1]).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"
#include "delegate_program.h"
#include "kiln/backend.h"
#include "unit_expect.h"

#define TOY_MAGIC 0x31594F54u /* "TOY1" */
#define SMALL 256u
#define LARGE 4096u

typedef struct toy_payload {
    uint32_t magic;
    uint32_t scratch;   /* bytes of group scratch the call needs (>= 16) */
    float scale;
} toy_payload;

/* A default group's owner cookie: the toy's reference count on it (toy.lock). */
typedef struct toy_group_ref {
    int refs;
} toy_group_ref;

typedef struct toy_handle {
    const kiln_allocator *allocator;
    const kiln_runtime_services *rt;
    kiln_backend_group *group;
    toy_group_ref *shared;          /* default group: the toy's count; NULL for explicit */
    float scale;
    atomic_int *inside;             /* executions inside this handle's group (per group) */
} toy_handle;

/* Process-wide state of the toy, as a real backend would keep it (vtable `user`). */
typedef struct toy_state {
    pthread_mutex_t lock;           /* find + register of default groups */
    atomic_int inside;              /* executions currently inside any group of the toy */
    atomic_int overlaps;            /* executions that found another inside their group */
    int live_handles;
} toy_state;

static toy_state toy = {.lock = PTHREAD_MUTEX_INITIALIZER};
static const char toy_class; /* the toy's class among default groups */

/* Join the default group of (allocator, size) or form it, holding the toy's own reference. */
static kiln_status join_default(toy_handle *h, uint64_t size)
{
    const kiln_runtime_services *rt = h->rt;
    kiln_backend_group *spare = NULL;
    for (;;) {
        pthread_mutex_lock(&toy.lock);
        void *owner;
        kiln_backend_group *g = rt->default_find(&toy_class, h->allocator, size, &owner);
        if (g || spare) {
            if (g) {
                h->shared = owner;
                h->shared->refs++;
            } else {
                h->shared = kiln_alloc_zero(kiln_allocator_default(), sizeof *h->shared, _Alignof(toy_group_ref));
                if (!h->shared) {
                    pthread_mutex_unlock(&toy.lock);
                    rt->default_free(spare);
                    return KILN_ERROR_OUT_OF_MEMORY;
                }
                h->shared->refs = 1;
                g = spare;
                spare = NULL;
                rt->default_register(g, &toy_class, h->shared);
            }
            pthread_mutex_unlock(&toy.lock);
            rt->default_free(spare);
            h->group = g;
            return KILN_OK;
        }
        pthread_mutex_unlock(&toy.lock);
        kiln_status st = rt->default_new(h->allocator, size, &spare); /* allocate outside the lock */
        if (st != KILN_OK) return st;
    }
}

static void leave_group(toy_handle *h)
{
    if (!h->group) return;
    if (!h->shared) {
        h->rt->leave_explicit(h->group);
        return;
    }
    pthread_mutex_lock(&toy.lock);
    bool last = --h->shared->refs == 0;
    if (last) h->rt->default_unregister(h->group);
    pthread_mutex_unlock(&toy.lock);
    if (last) {
        h->rt->default_free(h->group);
        kiln_free(kiln_allocator_default(), h->shared);
    }
}

static bool toy_is_available(void *user)
{
    (void)user;
    return true;
}

static kiln_status toy_init(void *user, const kiln_backend_init_args *args, void **handle_out)
{
    toy_state *s = user;
    if (args->struct_size < sizeof *args || !args->runtime || args->payload_size != sizeof(toy_payload))
        return KILN_ERROR_INCOMPATIBLE;
    toy_payload p;
    memcpy(&p, args->payload, sizeof p);
    if (p.magic != TOY_MAGIC || p.scratch < 16) return KILN_ERROR_INCOMPATIBLE;
    toy_handle *h = kiln_alloc_zero(args->allocator, sizeof *h, _Alignof(toy_handle));
    if (!h) return KILN_ERROR_OUT_OF_MEMORY;
    h->allocator = args->allocator;
    h->rt = args->runtime;
    h->scale = p.scale;
    h->inside = &s->inside;
    kiln_status st = args->scratch_group ? h->rt->join_explicit(args->scratch_group, p.scratch, &h->group)
                                         : join_default(h, p.scratch);
    if (st != KILN_OK) {
        kiln_free(args->allocator, h);
        return st;
    }
    h->rt->context_created();
    s->live_handles++;
    *handle_out = h;
    return KILN_OK;
}

static kiln_status toy_execute(void *user, void *handle, const kiln_tensor *const *inputs, size_t n_inputs,
                               kiln_tensor *const *outputs, size_t n_outputs)
{
    toy_state *s = user;
    toy_handle *h = handle;
    if (n_inputs != 1 || n_outputs != 1) return KILN_ERROR_BACKEND;
    float *scratch = h->rt->lock(h->group);
    if (atomic_fetch_add(&s->inside, 1) != 0) atomic_fetch_add(&s->overlaps, 1);
    const float *x = inputs[0]->data;
    float *y = outputs[0]->data;
    for (int i = 0; i < 4; i++) scratch[i] = x[i];
    for (volatile int spin = 0; spin < 20000; spin++) { /* widen the window an overlap would need */
    }
    for (int i = 0; i < 4; i++) y[i] = scratch[i] * h->scale;
    atomic_fetch_sub(&s->inside, 1);
    h->rt->unlock(h->group);
    return KILN_OK;
}

static void toy_destroy(void *user, void *handle)
{
    toy_state *s = user;
    toy_handle *h = handle;
    leave_group(h);
    h->rt->context_destroyed();
    s->live_handles--;
    kiln_free(h->allocator, h);
}

static const kiln_backend toy_backend = {
    .abi_version = KILN_BACKEND_ABI_VERSION,
    .struct_size = sizeof(kiln_backend),
    .name = "toy_rt",
    .user = &toy,
    .is_available = toy_is_available,
    .init = toy_init,
    .execute = toy_execute,
    .destroy = toy_destroy,
};

/* ---- programs ---- */

/* Method "forward": n toy calls, call k needing sizes[k] bytes of scratch and scaling by 2. */
static void *build_program(size_t n, const uint32_t *sizes, size_t *size_out)
{
    toy_payload payloads[4];
    kiln_test_delegate_call calls[4];
    REQUIRE(n <= 4);
    for (size_t k = 0; k < n; k++) {
        payloads[k] = (toy_payload){TOY_MAGIC, sizes[k], 2.0f};
        calls[k] = (kiln_test_delegate_call){"toy_rt", &payloads[k], sizeof payloads[k]};
    }
    void *data;
    REQUIRE(kiln_test_delegate_program(calls, n, &data, size_out) == KILN_OK);
    return data;
}

static kiln_runtime_stats stats_now(void)
{
    kiln_runtime_stats s = {.struct_size = sizeof s};
    REQUIRE(kiln_runtime_stats_get(&s) == KILN_OK);
    return s;
}

static kiln_module *module_in(kiln_program *p, kiln_scratch_group *group)
{
    kiln_module_options opt = {.struct_size = sizeof opt, .scratch_group = group, .num_threads = 1};
    kiln_module *m;
    REQUIRE(kiln_module_create(p, &opt, &m) == KILN_OK);
    return m;
}

static kiln_method *load(kiln_module *m)
{
    kiln_method *h;
    REQUIRE(kiln_method_load(m, "forward", &h) == KILN_OK);
    return h;
}

/* One run of x = {1, -2, 3, k}: every output must be x * 2^n_calls. */
static bool run_exact(kiln_method *h, size_t n_calls, float k)
{
    const float x[4] = {1, -2, 3, k};
    kiln_tensor t = {KILN_DTYPE_F32, 1, {4}, (void *)x}, y;
    if (kiln_method_set_input(h, 0, &t) != KILN_OK || kiln_method_execute(h) != KILN_OK ||
        kiln_method_get_output(h, 0, &y) != KILN_OK)
        return false;
    const float *yd = y.data;
    float f = (float)(1u << n_calls);
    for (int i = 0; i < 4; i++)
        if (yd[i] != x[i] * f) return false;
    return true;
}

/* ---- tests ---- */

static void test_default_groups(void)
{
    unit_section("default groups: one per (allocator, size) of the toy, stats back to the start");
    const uint32_t sizes[3] = {SMALL, SMALL, LARGE};
    size_t bytes;
    void *data = build_program(3, sizes, &bytes);
    kiln_program *p;
    REQUIRE(kiln_program_open_memory(data, bytes, &p) == KILN_OK);
    kiln_runtime_stats s0 = stats_now();
    kiln_module *m1 = module_in(p, NULL), *m2 = module_in(p, NULL);
    kiln_method *a = load(m1);
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_contexts == s0.live_contexts + 3 && s1.contexts_created == s0.contexts_created + 3);
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 2); /* SMALL shared, LARGE alone */
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + SMALL + LARGE);
    EXPECT(run_exact(a, 3, 0.5f));
    kiln_method *b = load(m2); /* another module: its own allocator, its own groups */
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_scratch_groups == s1.live_scratch_groups + 2);
    EXPECT(s2.scratch_bytes_reserved == s1.scratch_bytes_reserved + SMALL + LARGE);
    EXPECT(run_exact(b, 3, 7.0f));
    kiln_method_unload(a);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups + 2);
    kiln_method *again = load(m1); /* the last release freed m1's groups: fresh ones form */
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups + 4);
    EXPECT(run_exact(again, 3, -1.0f));
    kiln_module_destroy(m1);
    kiln_module_destroy(m2);
    kiln_runtime_stats s3 = stats_now();
    EXPECT(s3.live_contexts == s0.live_contexts && s3.contexts_destroyed == s0.contexts_destroyed + 9);
    EXPECT(s3.live_scratch_groups == s0.live_scratch_groups && s3.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    EXPECT(toy.live_handles == 0);
    kiln_program_close(p);
    kiln_free(kiln_allocator_default(), data);
}

#define N_MODULES 3
#define N_RUNS 100

typedef struct runner {
    kiln_method *method;
    float k;
    bool ok;
} runner;

static void *run_many(void *arg)
{
    runner *r = arg;
    r->ok = true;
    for (int i = 0; i < N_RUNS && r->ok; i++) r->ok = run_exact(r->method, 1, r->k + (float)i);
    return NULL;
}

static void test_explicit_group(void)
{
    unit_section("explicit group: N modules of the toy share one buffer; executions never overlap");
    const uint32_t small[1] = {SMALL}, large[1] = {LARGE};
    size_t n_small, n_large;
    void *d_small = build_program(1, small, &n_small), *d_large = build_program(1, large, &n_large);
    kiln_program *ps, *pl;
    REQUIRE(kiln_program_open_memory(d_small, n_small, &ps) == KILN_OK);
    REQUIRE(kiln_program_open_memory(d_large, n_large, &pl) == KILN_OK);
    kiln_runtime_stats s0 = stats_now();
    kiln_scratch_group *group;
    REQUIRE(kiln_scratch_group_create(&group) == KILN_OK);
    EXPECT(stats_now().live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(stats_now().scratch_bytes_reserved == s0.scratch_bytes_reserved); /* no member: no buffer */
    kiln_module *mods[N_MODULES];
    runner runners[N_MODULES];
    for (int i = 0; i < N_MODULES; i++) {
        mods[i] = module_in(i == N_MODULES - 1 ? pl : ps, group);
        runners[i] = (runner){load(mods[i]), (float)(i * 1000), false};
    }
    kiln_scratch_group_release(group); /* the modules keep it */
    kiln_runtime_stats s1 = stats_now();
    EXPECT(s1.live_contexts == s0.live_contexts + N_MODULES);
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1);
    EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + LARGE); /* one buffer, the largest */
    atomic_store(&toy.overlaps, 0);
    pthread_t threads[N_MODULES];
    for (int i = 0; i < N_MODULES; i++) REQUIRE(pthread_create(&threads[i], NULL, run_many, &runners[i]) == 0);
    for (int i = 0; i < N_MODULES; i++) {
        pthread_join(threads[i], NULL);
        EXPECT(runners[i].ok);
    }
    EXPECT(atomic_load(&toy.overlaps) == 0);
    for (int i = 0; i < N_MODULES; i++) kiln_module_destroy(mods[i]);
    kiln_runtime_stats s2 = stats_now();
    EXPECT(s2.live_contexts == s0.live_contexts && s2.contexts_destroyed == s0.contexts_destroyed + N_MODULES);
    EXPECT(s2.live_scratch_groups == s0.live_scratch_groups && s2.scratch_bytes_reserved == s0.scratch_bytes_reserved);
    kiln_module *late; /* the released group is stale for a new module */
    kiln_module_options opt = {.struct_size = sizeof opt, .scratch_group = group, .num_threads = 1};
    EXPECT_STATUS(kiln_module_create(ps, &opt, &late), KILN_ERROR_STALE_HANDLE);
    kiln_program_close(ps);
    kiln_program_close(pl);
    kiln_free(kiln_allocator_default(), d_small);
    kiln_free(kiln_allocator_default(), d_large);
}

int main(void)
{
    REQUIRE(kiln_backend_register(&toy_backend) == KILN_OK);
    test_default_groups();
    test_explicit_group();
    return unit_finish("test_backend_toy");
}
