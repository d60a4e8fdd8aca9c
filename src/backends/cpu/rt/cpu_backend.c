/* cpu_backend.c — the `cpu` backend vtable (placeholder until the runtime half lands: it is
 * never available, so programs with cpu delegates fail to load with a clear status).
 * Layer: backends/cpu/rt. */
#include "backends/cpu/rt/cpu_backend.h"

static bool cpu_is_available(void *user)
{
    (void)user;
    return false;
}

static kiln_status cpu_init(void *user, const kiln_backend_init_args *args, void **handle_out)
{
    (void)user, (void)args;
    *handle_out = NULL;
    return KILN_ERROR_BACKEND_UNAVAILABLE;
}

static kiln_status cpu_execute(void *user, void *handle, const kiln_tensor *const *in, size_t n_in,
                               kiln_tensor *const *out, size_t n_out)
{
    (void)user, (void)handle, (void)in, (void)n_in, (void)out, (void)n_out;
    return KILN_ERROR_BACKEND_UNAVAILABLE;
}

static void cpu_destroy(void *user, void *handle) { (void)user, (void)handle; }

static const kiln_backend cpu_backend = {
    .abi_version = KILN_BACKEND_ABI_VERSION,
    .struct_size = sizeof(kiln_backend),
    .name = "cpu",
    .is_available = cpu_is_available,
    .init = cpu_init,
    .execute = cpu_execute,
    .destroy = cpu_destroy,
};

const kiln_backend *kiln_cpu_backend(void) { return &cpu_backend; }
