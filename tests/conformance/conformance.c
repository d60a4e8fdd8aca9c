/* conformance.c — the ONNX conformance test: every case goes through the whole product path
 * (kiln_compile_memory -> kiln_program_open_memory -> module -> method -> execute) and its
 * outputs are compared with the reference at rtol 1e-3, atol 1e-7 (tests/conformance/README.md).
 *
 *   kiln_conformance [--root DIR] [--exclude FILE] [--ratchet FILE] [--report-only]
 *                    [--write-passing FILE] [--no-delegate | --target T] LIST...
 *
 * --no-delegate keeps every op on the portable kernels; --target T compiles the cpu delegates
 * for target T only and forces that record at load (exit 77, "skipped", when this CPU cannot run
 * T). Without either, delegates are compiled for the best target of this machine.
 *
 * --ratchet FILE: the committed list of cases known to pass; any of them failing fails the run.
 * Cases that pass but are not in it are counted so the list can grow. --report-only prints the
 * count and never fails (tier 3). The last line is "N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/targets.h"

#ifdef KILN_CPU_TEST_TARGETS
unsigned long kiln_cpu_kernels_test_min_calls(void); /* kernels-min.c */
#endif
#include "compare.h"
#include "core/alloc.h"
#include "onnx_case.h"

typedef struct run_config {
    int no_delegate;
    const char *target;     /* NULL: default */
} run_config;

/* The ONNX backend test data of onnx 1.12 stores bfloat16 tensors as UINT16 tensors of their
   bit patterns (numpy has no bfloat16), so a u16 tensor where the model has a bf16 value is
   that value, relabelled here; every other mismatch stays one. */
static void bf16_as_stored(kiln_tensor *t, kiln_dtype model_dtype)
{
    if (t->dtype == KILN_DTYPE_U16 && model_dtype == KILN_DTYPE_BF16) t->dtype = KILN_DTYPE_BF16;
}

static bool run_case(const char *dir, const run_config *cfg, char *why, size_t why_size)
{
    onnx_case c;
    void *bytes = NULL;
    kiln_program *program = NULL;
    kiln_module *module = NULL;
    kiln_method *method = NULL;
    bool ok = false;
    if (!onnx_case_load(&c, dir, why, why_size)) goto done;
    kiln_compile_options opt = {.struct_size = sizeof opt, .input_shapes = c.shapes, .n_input_shapes = c.n_inputs,
                                .input_shapes_by_position = 1, .no_delegate = cfg->no_delegate};
    if (cfg->target) {
        opt.targets = &cfg->target;
        opt.n_targets = 1;
    }
    kiln_compile_method m = {.name = "forward", .model_data = c.model, .model_size = c.model_size};
    size_t size;
    char msg[512];
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &bytes, &size, msg, sizeof msg);
    if (st != KILN_OK) {
        snprintf(why, why_size, "compile: %s", msg);
        goto done;
    }
    st = kiln_program_open_memory(bytes, size, &program);
    kiln_module_options mopt = {.struct_size = sizeof mopt, .num_threads = 1, .target = cfg->target};
    if (st == KILN_OK) st = kiln_module_create(program, &mopt, &module);
    if (st == KILN_OK) st = kiln_method_load(module, "forward", &method);
    if (st != KILN_OK) {
        snprintf(why, why_size, "load: %s %s", kiln_status_str(st), module ? kiln_module_last_error(module) : "");
        goto done;
    }
    if (kiln_method_input_count(method) != c.n_inputs || kiln_method_output_count(method) != c.n_expected) {
        snprintf(why, why_size, "method has %zu inputs/%zu outputs, test data %zu/%zu", kiln_method_input_count(method),
                 kiln_method_output_count(method), c.n_inputs, c.n_expected);
        goto done;
    }
    for (size_t i = 0; i < c.n_inputs && st == KILN_OK; i++) {
        kiln_tensor info;
        if (kiln_method_input_info(method, i, &info) == KILN_OK) bf16_as_stored(&c.inputs[i], info.dtype);
        st = kiln_method_set_input(method, i, &c.inputs[i]);
    }
    if (st == KILN_OK) st = kiln_method_execute(method);
    if (st != KILN_OK) {
        snprintf(why, why_size, "execute: %s", kiln_status_str(st));
        goto done;
    }
    for (size_t j = 0; j < c.n_expected; j++) {
        kiln_tensor out;
        char detail[256];
        kiln_method_get_output(method, j, &out);
        bf16_as_stored(&c.expected[j], out.dtype);
        if (!kiln_test_compare(&out, &c.expected[j], 1e-3, 1e-7, detail, sizeof detail)) {
            snprintf(why, why_size, "output %zu: %s", j, detail);
            goto done;
        }
    }
    ok = true;
done:
    kiln_module_destroy(module);
    kiln_program_close(program);
    kiln_free(kiln_allocator_default(), bytes);
    onnx_case_free(&c);
    return ok;
}

int main(int argc, char **argv)
{
    const char *root = ONNX_CASE_DEFAULT_ROOT, *exclude_path = NULL, *ratchet_path = NULL, *write_path = NULL;
    bool report_only = false;
    run_config cfg = {0};
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        const char *a = argv[first];
        bool v = first + 1 < argc;
        if (strcmp(a, "--root") == 0 && v) root = argv[++first];
        else if (strcmp(a, "--exclude") == 0 && v) exclude_path = argv[++first];
        else if (strcmp(a, "--ratchet") == 0 && v) ratchet_path = argv[++first];
        else if (strcmp(a, "--write-passing") == 0 && v) write_path = argv[++first];
        else if (strcmp(a, "--report-only") == 0) report_only = true;
        else if (strcmp(a, "--no-delegate") == 0) cfg.no_delegate = 1;
        else if (strcmp(a, "--target") == 0 && v) cfg.target = argv[++first];
        else {
            fprintf(stderr, "usage: kiln_conformance [--root DIR] [--exclude FILE] [--ratchet FILE] [--report-only] "
                            "[--write-passing FILE] [--no-delegate | --target T] LIST...\n");
            return 2;
        }
    }
    if (cfg.target) {
        const kiln_cpu_target *t = kiln_cpu_target_find(cfg.target);
        if (!t) {
            fprintf(stderr, "kiln_conformance: unknown target '%s'\n", cfg.target);
            return 2;
        }
        if (!kiln_cpu_target_runnable(t)) {
            printf("SKIPPED: this CPU cannot run target %s, so its records cannot be checked here\n", cfg.target);
            return 77;
        }
        printf("target %s (delegates compiled for it and forced at load)\n", cfg.target);
    } else if (cfg.no_delegate) {
        printf("portable kernels only (--no-delegate)\n");
    }
    size_t n_ex = 0, n_ratchet = 0;
    char **exclude = exclude_path ? onnx_case_list_read(exclude_path, &n_ex) : NULL;
    char **ratchet = ratchet_path ? onnx_case_list_read(ratchet_path, &n_ratchet) : NULL;
    if ((exclude_path && !exclude) || (ratchet_path && !ratchet)) {
        fprintf(stderr, "kiln_conformance: cannot read a list file\n");
        return 2;
    }
    FILE *wf = write_path ? fopen(write_path, "w") : NULL;
    int passed = 0, failed = 0, regressions = 0, new_passes = 0;
    for (int l = first; l < argc; l++) {
        size_t n;
        char **list = onnx_case_list_read(argv[l], &n);
        if (!list) {
            fprintf(stderr, "kiln_conformance: cannot read %s\n", argv[l]);
            return 2;
        }
        for (size_t i = 0; i < n; i++) {
            if (onnx_case_list_contains(exclude, list[i])) continue;
            char dir[4096], why[1024];
            snprintf(dir, sizeof dir, "%s/%s", root, list[i]);
            bool known = onnx_case_list_contains(ratchet, list[i]);
            if (run_case(dir, &cfg, why, sizeof why)) {
                passed++;
                if (wf) fprintf(wf, "%s\n", list[i]);
                if (ratchet && !known) new_passes++;
            } else {
                failed++;
                if (known) regressions++;
                if (!report_only) printf("%s %s: %s\n", known ? "REGRESSION" : "FAIL", list[i], why);
            }
        }
        onnx_case_list_free(list);
    }
    if (wf) fclose(wf);
    if (ratchet) {
        printf("ratchet: %zu cases must pass, %d regressed; %d more pass and can be added to %s\n", n_ratchet,
               regressions, new_passes, ratchet_path);
    }
    printf("%d passed, %d failed\n", passed, failed);
    onnx_case_list_free(exclude);
    onnx_case_list_free(ratchet);
#ifdef KILN_CPU_TEST_TARGETS
    /* The test-only table must have run its own slots, not only the generic ones or the
       portable kernels (kernels-min.c). */
    if (cfg.target && strcmp(cfg.target, "test-min") == 0) {
        unsigned long own = kiln_cpu_kernels_test_min_calls();
        printf("test-min: %lu calls of the table's own vector and GEMM kernels\n", own);
        if (own == 0) return 1;
    }
#endif
    if (report_only) return 0;
    return ratchet ? (regressions ? 1 : 0) : (failed ? 1 : 0);
}
