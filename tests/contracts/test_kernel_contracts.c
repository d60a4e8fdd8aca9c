/* test_kernel_contracts.c — the contract checks at GEMM microkernel entry (KILN_CONTRACT,
 * core/check.h; KILN_CPU_GEMM_CONTRACT, kernel_kit.h).
 *
 * Built with the generic and avx2 microkernels and core/check.c compiled into the test itself
 * with KILN_DEBUG=1 (tests/CMakeLists.txt), so the contracts are on in every build type, release
 * included. Each violated contract is called in a child process (fork), which must die of
 * SIGABRT having written "contract violated: <condition>" to stderr; valid calls, tile
 * remainders included, must pass and give the product a plain loop gives.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/cpu/kernels/generic/kernels-generic.h"
#ifdef KILN_X86
#include "backends/cpu/kernels/avx2/kernels-avx2.h"
#endif

#define MR 6
#define NR 16
#define KC 5

static int failures;

typedef struct kernel {
    const char *name;
    kiln_cpu_gemm_ukernel fn;
    bool available;
} kernel;

/* One call's operands: a packed MR panel of A, an NR panel of B, C with ldc = NR + 3. */
typedef struct operands {
    float a[KC * MR], b[KC * NR], c[(MR + 2) * (NR + 3)];
    kiln_cpu_gemm_tile tile;
} operands;

static void operands_init(operands *o)
{
    for (int i = 0; i < KC * MR; i++) o->a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < KC * NR; i++) o->b[i] = (float)(i % 5) * 0.5f - 1.0f;
    for (size_t i = 0; i < sizeof o->c / sizeof o->c[0]; i++) o->c[i] = 100.0f;
    memset(&o->tile, 0, sizeof o->tile);
    o->tile.alpha = 1.0f;
}

typedef enum violation {
    V_M_ZERO, V_M_PAST_MR, V_N_ZERO, V_N_PAST_NR, V_KC_ZERO, V_A_NULL, V_TILE_NULL, V_LDC_SHORT,
    V_A_STEP, V_C2_RELU, V_C_MISALIGNED, V_COUNT
} violation;

/* The condition as the message prints it: the kernel's MR and NR (6, 16) expanded. */
static const char *const expected_condition[V_COUNT] = {
    [V_M_ZERO] = "(m) >= 1 && (m) <= (6)",
    [V_M_PAST_MR] = "(m) >= 1 && (m) <= (6)",
    [V_N_ZERO] = "(n) >= 1 && (n) <= (16)",
    [V_N_PAST_NR] = "(n) >= 1 && (n) <= (16)",
    [V_KC_ZERO] = "(kc) >= 1",
    [V_A_NULL] = "(a) != NULL && (b) != NULL && (c) != NULL && (tile) != NULL",
    [V_TILE_NULL] = "(a) != NULL && (b) != NULL && (c) != NULL && (tile) != NULL",
    [V_LDC_SHORT] = "(m) == 1 || (ldc) >= (n)",
    [V_A_STEP] = "(tile)->a_step == 0 || (tile)->a_step == 1 || (tile)->a_step == (6)",
    [V_C2_RELU] = "!(tile)->c2 || !(tile)->relu",
    [V_C_MISALIGNED] = "(uintptr_t)(c) % _Alignof(float) == 0",
};

/* The child: make exactly one argument break the contract and call the kernel. */
static void call_violating(const kernel *k, violation v)
{
    static operands o;
    operands_init(&o);
    size_t kc = KC, m = MR, n = NR, ldc = NR + 3;
    const float *a = o.a;
    float *c = o.c;
    const kiln_cpu_gemm_tile *tile = &o.tile;
    switch (v) {
    case V_M_ZERO: m = 0; break;
    case V_M_PAST_MR: m = MR + 1; break;
    case V_N_ZERO: n = 0; break;
    case V_N_PAST_NR: n = NR + 1; break;
    case V_KC_ZERO: kc = 0; break;
    case V_A_NULL: a = NULL; break;
    case V_TILE_NULL: tile = NULL; break;
    case V_LDC_SHORT: ldc = NR - 1; break;
    case V_A_STEP: o.tile.a_step = 2; break;
    case V_C2_RELU: o.tile.c2 = o.c + NR + 3; o.tile.relu = 1; break;
    case V_C_MISALIGNED: c = (float *)((char *)o.c + 1); break;
    case V_COUNT: break;
    }
    k->fn(kc, a, o.b, c, ldc, m, n, tile);
}

/* Runs call_violating in a child; checks it aborted with the condition on stderr. */
static void expect_abort(const kernel *k, violation v)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], STDERR_FILENO);
        call_violating(k, v);
        _exit(0); /* the contract did not stop the call */
    }
    close(pipefd[1]);
    char out[1024] = "";
    size_t used = 0;
    ssize_t got;
    while (used + 1 < sizeof out && (got = read(pipefd[0], out + used, sizeof out - 1 - used)) > 0) used += (size_t)got;
    out[used] = '\0';
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    char want[256];
    snprintf(want, sizeof want, "contract violated: %s\n", expected_condition[v]);
    bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    if (!aborted || !strstr(out, want) || !strstr(out, "kiln: ")) {
        fprintf(stderr, "FAIL %s violation %d: %s, stderr \"%s\", expected \"%s\"\n", k->name, (int)v,
                aborted ? "aborted" : "did not abort", out, want);
        failures++;
    }
}

/* Valid calls, every tile remainder: the kernel's m x n part equals the plain product and C
   outside it is untouched. */
static void expect_valid(const kernel *k)
{
    for (size_t m = 1; m <= MR; m++)
        for (size_t n = 1; n <= NR; n++) {
            operands o;
            operands_init(&o);
            const size_t ldc = NR + 3;
            k->fn(KC, o.a, o.b, o.c, ldc, m, n, &o.tile);
            for (size_t i = 0; i < MR + 2; i++)
                for (size_t j = 0; j < ldc; j++) {
                    float want = 100.0f;
                    if (i < m && j < n) {
                        want = 0.0f;
                        for (size_t p = 0; p < KC; p++) want += o.a[p * MR + i] * o.b[p * NR + j];
                    }
                    float got = o.c[i * ldc + j];
                    if (got != want && !(got - want < 1e-4f && want - got < 1e-4f)) {
                        fprintf(stderr, "FAIL %s m=%zu n=%zu: c[%zu][%zu] = %g, expected %g\n", k->name, m, n, i, j,
                                (double)got, (double)want);
                        failures++;
                        return;
                    }
                }
        }
}

int main(void)
{
    const kernel kernels[] = {
        {"generic", kiln_cpu_f32_gemm_ukernel_6x16__generic, true},
#ifdef KILN_X86
        {"avx2", kiln_cpu_f32_gemm_ukernel_6x16__avx2,
         (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))},
#endif
    };
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        const kernel *k = &kernels[i];
        if (!k->available) {
            printf("skip %s: this CPU lacks the ISA\n", k->name);
            continue;
        }
        expect_valid(k);
        for (int v = 0; v < V_COUNT; v++) expect_abort(k, (violation)v);
    }
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
