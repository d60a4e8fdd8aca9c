/* ref_run.c — kiln_ref_run: runs ONNX backend test cases node by node through the portable
 * kernels (the compiler's own shape inference and constant folding with every input bound as
 * a constant) and compares with the expected outputs. A kernel-development tool and the
 * reference half of the conformance tests; it does not exercise the program format or runtime.
 *
 *   kiln_ref_run CASE_DIR...            one line per failing case, exit 1 if any failed
 *   kiln_ref_run --list FILE [--root D] cases named in FILE relative to D
 *                                       (default /usr/share/libonnx-testdata/data)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compiler/ir.h"
#include "compiler/onnx/onnx_import.h"
#include "compiler/onnx/onnx_tensor.h"
#include "core/alloc.h"

#define MAX_IO 64

static int count_files(const char *dir, const char *prefix)
{
    int n = 0;
    char path[4096];
    for (;; n++) {
        snprintf(path, sizeof path, "%s/%s%d.pb", dir, prefix, n);
        FILE *f = fopen(path, "rb");
        if (!f) return n;
        fclose(f);
    }
}

/* Names of the non-initializer graph inputs, in order: test inputs bind to them by position. */
static int runtime_input_names(const uint8_t *bytes, size_t size, char names[MAX_IO][256])
{
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, bytes);
    if (!m || !m->graph) return -1;
    int n = 0;
    const Onnx__GraphProto *gp = m->graph;
    for (size_t i = 0; i < gp->n_input && n < MAX_IO; i++) {
        bool init = false;
        for (size_t k = 0; k < gp->n_initializer; k++)
            if (strcmp(gp->initializer[k]->name, gp->input[i]->name) == 0) init = true;
        if (!init) snprintf(names[n++], 256, "%s", gp->input[i]->name);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return n;
}

static bool run_case(const char *dir, char *why, size_t why_size)
{
    const kiln_allocator *a = kiln_allocator_default();
    char path[4096], data_dir[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data_dir, sizeof data_dir, "%s/test_data_set_0", dir);
    uint8_t *bytes;
    size_t size;
    if (kiln_read_file(path, a, &bytes, &size) != KILN_OK) {
        snprintf(why, why_size, "cannot read %s", path);
        return false;
    }
    static char names[MAX_IO][256];
    int n_names = runtime_input_names(bytes, size, names);
    int n_in = count_files(data_dir, "input_"), n_out = count_files(data_dir, "output_");
    kiln_tensor inputs[MAX_IO] = {0}, expected[MAX_IO] = {0};
    kiln_input_shape shapes[MAX_IO] = {0};
    bool ok = false;
    kiln_ir_graph g;
    char msg[512];
    kiln_ir_graph_init(&g, a, msg, sizeof msg);
    if (n_names < 0 || n_in > n_names) {
        snprintf(why, why_size, "model has %d runtime inputs, test data %d", n_names, n_in);
        goto done;
    }
    for (int i = 0; i < n_in; i++) {
        snprintf(path, sizeof path, "%s/input_%d.pb", data_dir, i);
        kiln_status st = kiln_onnx_read_tensor_file(path, a, &inputs[i]);
        if (st != KILN_OK) {
            snprintf(why, why_size, "input_%d.pb: %s", i, kiln_status_str(st));
            goto done;
        }
        shapes[i].name = names[i];
        shapes[i].rank = inputs[i].rank;
        memcpy(shapes[i].dims, inputs[i].shape, sizeof inputs[i].shape);
    }
    for (int j = 0; j < n_out; j++) {
        snprintf(path, sizeof path, "%s/output_%d.pb", data_dir, j);
        kiln_status st = kiln_onnx_read_tensor_file(path, a, &expected[j]);
        if (st != KILN_OK) {
            snprintf(why, why_size, "output_%d.pb: %s", j, kiln_status_str(st));
            goto done;
        }
    }
    kiln_status st = kiln_onnx_import(&g, bytes, size, shapes, (size_t)n_in, false);
    if (st != KILN_OK) {
        snprintf(why, why_size, "import: %s", msg);
        goto done;
    }
    for (size_t i = 0; i < g.n_inputs && (int)i < n_in; i++) {
        kiln_ir_value *v = &g.values[g.inputs[i]];
        if (v->t.dtype != inputs[i].dtype) {
            snprintf(why, why_size, "input %zu dtype %s, model says %s", i, kiln_dtype_name(inputs[i].dtype),
                     kiln_dtype_name(v->t.dtype));
            goto done;
        }
        v->t.data = inputs[i].data;
        v->is_const = true;
    }
    st = kiln_ir_infer_and_fold(&g);
    if (st != KILN_OK) {
        snprintf(why, why_size, "%s", msg);
        goto done;
    }
    if ((int)g.n_outputs != n_out) {
        snprintf(why, why_size, "%zu outputs, expected %d", g.n_outputs, n_out);
        goto done;
    }
    for (int j = 0; j < n_out; j++) {
        kiln_ir_value *v = &g.values[g.outputs[j]];
        if (!v->is_const) {
            snprintf(why, why_size, "output %d was not computed", j);
            goto done;
        }
        char detail[256];
        if (!kiln_test_compare(&v->t, &expected[j], 1e-3, 1e-7, detail, sizeof detail)) {
            snprintf(why, why_size, "output %d: %s", j, detail);
            goto done;
        }
    }
    ok = true;
done:
    kiln_ir_graph_deinit(&g);
    for (int i = 0; i < MAX_IO; i++) {
        kiln_free(a, inputs[i].data);
        kiln_free(a, expected[i].data);
    }
    kiln_free(a, bytes);
    return ok;
}

int main(int argc, char **argv)
{
    const char *root = "/usr/share/libonnx-testdata/data", *list = NULL;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--list") == 0 && first + 1 < argc) list = argv[++first];
        else if (strcmp(argv[first], "--root") == 0 && first + 1 < argc) root = argv[++first];
        else {
            fprintf(stderr, "usage: kiln_ref_run [--list FILE [--root DIR]] [CASE_DIR...]\n");
            return 2;
        }
    }
    int passed = 0, failed = 0;
    char why[1024], dir[4096], line[1024];
    FILE *lf = list ? fopen(list, "r") : NULL;
    if (list && !lf) {
        fprintf(stderr, "kiln_ref_run: cannot open %s\n", list);
        return 2;
    }
    for (int i = first;; i++) {
        const char *name;
        if (lf) {
            if (!fgets(line, sizeof line, lf)) break;
            line[strcspn(line, "\r\n")] = '\0';
            if (!line[0] || line[0] == '#') continue;
            snprintf(dir, sizeof dir, "%s/%s", root, line);
            name = line;
        } else {
            if (i >= argc) break;
            snprintf(dir, sizeof dir, "%s", argv[i]);
            name = argv[i];
        }
        if (run_case(dir, why, sizeof why)) {
            passed++;
        } else {
            failed++;
            printf("FAIL %s: %s\n", name, why);
        }
    }
    if (lf) fclose(lf);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
