/* builtin.c — registers the backends built into libkiln, once per process.
 * Layer: library glue above runtime and backends/cpu/rt: the runtime calls this hook
 * (declared in runtime/runtime.h) so that it never includes a backend itself. */
#include <pthread.h>

#include "backends/cpu/rt/cpu_backend.h"
#include "runtime/runtime.h"

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void register_builtins(void)
{
    /* Registration can only fail if an application registered its own "cpu" first; the
       application's then wins, which is its prerogative. */
    (void)kiln_backend_register(kiln_cpu_backend());
}

void kiln_runtime_register_builtin_backends(void) { pthread_once(&builtin_once, register_builtins); }
