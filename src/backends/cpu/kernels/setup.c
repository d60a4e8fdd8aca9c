/* setup.c — running a kernel table's set-up hooks (kiln_cpu_kernels.process_setup, thread_setup)
 * before its first step.
 *
 * Layer: backends/cpu/kernels, compiled with the generic flags. Some ISAs need state the
 * kernels cannot set up themselves without a cost per call: AMX needs the process's permission
 * for the tile registers once (Linux arch_prctl) and a tile configuration on every thread
 * (ldtilecfg). A runtime therefore calls kiln_cpu_kernels_setup once with the threads it will
 * run steps on. The thread pool assigns tasks dynamically, so "once per thread" is made sure of
 * by a rendezvous: each task holds its thread until every task has started, hence the
 * n_threads tasks run on n_threads different threads (the exec's parallel_for runs n_threads
 * calls at once: kiln_threadpool has the caller and n_threads - 1 workers).
 */
#include <sched.h>
#include <stdatomic.h>

#include "backends/cpu/kernels/kernel_kit.h"
#include "core/check.h"

typedef struct setup_rendezvous {
    void (*thread_setup)(void);
    size_t tasks;
    atomic_size_t started;
} setup_rendezvous;

static void setup_task(void *arg, size_t task)
{
    setup_rendezvous *r = arg;
    (void)task;
    r->thread_setup();
    atomic_fetch_add_explicit(&r->started, 1, memory_order_acq_rel);
    while (atomic_load_explicit(&r->started, memory_order_acquire) < r->tasks) sched_yield();
}

kiln_status kiln_cpu_kernels_setup(const kiln_cpu_kernels *k, const kiln_cpu_exec *exec)
{
    if (k->process_setup) KILN_TRY(k->process_setup());
    if (!k->thread_setup) return KILN_OK;
    size_t tasks = exec && exec->parallel_for && exec->n_threads > 1 ? exec->n_threads : 1;
    if (tasks == 1) {
        k->thread_setup();
        return KILN_OK;
    }
    setup_rendezvous r = {k->thread_setup, tasks, 0};
    exec->parallel_for(exec->pool, tasks, setup_task, &r);
    return KILN_OK;
}
