/* test_cpu_exit.c — a process may exit with modules still loaded (DESIGN.md §4 rule 6).
 *
 * Layer: tests (backends/cpu/rt through include/kiln/kiln.h). A child process loads modules —
 * one with worker threads, one in an explicit scratch group, one sharing a context between two
 * methods — executes them, and calls exit() with all of it still loaded: nothing global may be
 * torn down behind the modules, so the exit must be clean (status 0, no crash, no hang, no
 * sanitizer report; the handles stay reachable from `live` so LeakSanitizer sees no leak).
 * A second child does the same while another thread is still executing in a loop.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_cpu_support.h"

static const tb_spec spec = {.n = 512};

/* Everything the child leaves loaded, reachable until exit. */
static struct {
    tb_binary bin;
    tp_program prog;
    kiln_program *program;
    kiln_module *modules[3];
    kiln_method *methods[4];
    kiln_scratch_group *group;
} live;

static int load_everything(void)
{
    live.bin = tb_build(&spec);
    tp_method methods[2] = {{"a", spec.n, {&live.bin}, 1}, {"b", spec.n, {&live.bin}, 1}};
    live.prog = tp_build(methods, 2);
    live.program = tp_open(&live.prog);
    if (kiln_scratch_group_create(&live.group) != KILN_OK) return 1;
    kiln_module_options threaded = {sizeof threaded, NULL, NULL, 2, NULL};
    kiln_module_options grouped = {sizeof grouped, NULL, live.group, 1, NULL};
    kiln_module_options plain = {sizeof plain, NULL, NULL, 1, NULL};
    const kiln_module_options *opts[3] = {&threaded, &grouped, &plain};
    for (int i = 0; i < 3; i++)
        if (kiln_module_create(live.program, opts[i], &live.modules[i]) != KILN_OK) return 1;
    const char *names[4] = {"a", "a", "a", "b"};
    const int module_of[4] = {0, 1, 2, 2};
    for (int i = 0; i < 4; i++) {
        if (kiln_method_load(live.modules[module_of[i]], names[i], &live.methods[i]) != KILN_OK) return 1;
        if (!tp_run1(live.methods[i], &spec, KILN_CPU_ACT_RELU, 1.0f)) return 1;
    }
    return context_id(live.methods[2], 0) == context_id(live.methods[3], 0) ? 0 : 1;
}

static void *keep_running(void *arg)
{
    (void)arg;
    for (;;) (void)tp_run1(live.methods[0], &spec, KILN_CPU_ACT_RELU, 2.0f);
    return NULL;
}

static int run_child(bool busy_thread)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (load_everything() != 0) _exit(3);
        if (busy_thread) {
            pthread_t t;
            if (pthread_create(&t, NULL, keep_running, NULL) != 0) _exit(4);
            usleep(2000);
        }
        exit(0); /* modules still loaded: no teardown may run behind them */
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    if (!WIFEXITED(status)) {
        fprintf(stderr, "child %s\n", WIFSIGNALED(status) ? "was killed by a signal" : "did not exit");
        return -1;
    }
    return WEXITSTATUS(status);
}

int main(void)
{
    EXPECT(run_child(false) == 0);
    EXPECT(run_child(true) == 0);
    return test_report("test_cpu_exit");
}
