/* ref_run.c — kiln_ref_run: runs ONNX backend test cases node by node through the portable
 * kernels (the compiler's own shape inference and constant folding, with every input bound as
 * a constant) and compares with the expected outputs. A kernel-development tool: it skips the
 * program format and the runtime, so a failure here is a kernel's.
 *
 *   kiln_ref_run CASE_DIR...            one line per failing case, exit 1 if any failed
 *   kiln_ref_run --list FILE [--root D] cases named in FILE relative to D
 */
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "compiler/ir.h"
#include "compiler/onnx/onnx_import.h"
#include "core/alloc.h"
#include "onnx_case.h"

static bool run_case(const char *dir, char *why, size_t why_size)
{
    onnx_case c;
    kiln_ir_graph g;
    char msg[512];
    kiln_ir_graph_init(&g, kiln_allocator_default(), msg, sizeof msg);
    bool ok = false;
    if (!onnx_case_load(&c, dir, why, why_size)) goto done;
    kiln_status st = kiln_onnx_import(&g, c.model, c.model_size, NULL, c.shapes, c.n_inputs, true);
    if (st != KILN_OK) {
        snprintf(why, why_size, "import: %s", msg);
        goto done;
    }
    if (g.n_inputs != c.n_inputs) {
        snprintf(why, why_size, "model has %zu runtime inputs, test data %zu", g.n_inputs, c.n_inputs);
        goto done;
    }
    for (size_t i = 0; i < g.n_inputs; i++) {
        kiln_ir_value *v = &g.values[g.inputs[i]];
        if (v->t.dtype != c.inputs[i].dtype) {
            snprintf(why, why_size, "input %zu is %s, the model says %s", i, kiln_dtype_name(c.inputs[i].dtype),
                     kiln_dtype_name(v->t.dtype));
            goto done;
        }
        v->t.data = c.inputs[i].data;
        v->is_const = true;
    }
    if (kiln_ir_infer_and_fold(&g) != KILN_OK) {
        snprintf(why, why_size, "%s", msg);
        goto done;
    }
    if (g.n_outputs != c.n_expected) {
        snprintf(why, why_size, "%zu outputs, expected %zu", g.n_outputs, c.n_expected);
        goto done;
    }
    for (size_t j = 0; j < c.n_expected; j++) {
        kiln_ir_value *v = &g.values[g.outputs[j]];
        char detail[256];
        if (!v->is_const) {
            snprintf(why, why_size, "output %zu was not computed", j);
            goto done;
        }
        if (!kiln_test_compare(&v->t, &c.expected[j], 1e-3, 1e-7, detail, sizeof detail)) {
            snprintf(why, why_size, "output %zu: %s", j, detail);
            goto done;
        }
    }
    ok = true;
done:
    kiln_ir_graph_deinit(&g);
    onnx_case_free(&c);
    return ok;
}

int main(int argc, char **argv)
{
    const char *root = ONNX_CASE_DEFAULT_ROOT, *list_path = NULL;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--list") == 0 && first + 1 < argc) list_path = argv[++first];
        else if (strcmp(argv[first], "--root") == 0 && first + 1 < argc) root = argv[++first];
        else {
            fprintf(stderr, "usage: kiln_ref_run [--list FILE [--root DIR]] [CASE_DIR...]\n");
            return 2;
        }
    }
    size_t n_list = 0;
    char **list = list_path ? onnx_case_list_read(list_path, &n_list) : NULL;
    if (list_path && !list) {
        fprintf(stderr, "kiln_ref_run: cannot read %s\n", list_path);
        return 2;
    }
    int passed = 0, failed = 0;
    size_t n = list ? n_list : (size_t)(argc - first);
    for (size_t i = 0; i < n; i++) {
        char dir[4096], why[1024];
        const char *name = list ? list[i] : argv[first + (int)i];
        if (list) snprintf(dir, sizeof dir, "%s/%s", root, name);
        else snprintf(dir, sizeof dir, "%s", name);
        if (run_case(dir, why, sizeof why)) {
            passed++;
        } else {
            failed++;
            printf("FAIL %s: %s\n", name, why);
        }
    }
    onnx_case_list_free(list);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
