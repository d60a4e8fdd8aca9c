/* test_golden.c — committed program files (tests/golden/) must keep loading and computing the
 * right outputs (zstd's golden frames, STYLE.md "golden files that must keep loading").
 *
 * Layer: tests (format, runtime). Each golden file was written by `kiln compile` from an ONNX
 * backend test case, and is checked against that case's reference outputs:
 *   relu_portable_v1.kiln     node/test_relu, --no-delegate: the smallest portable program
 *   linear_portable_v1.kiln   pytorch-converted/test_Linear, --no-delegate: constant segments,
 *                             FLOAT/INT attributes, scratch
 *   add_cpu_generic_v1.kiln   node/test_add, --target generic: a cpu-backend delegate whose
 *                             context binary has one record that runs on any x86-64
 *   linear_cpu_generic_v1.kiln pytorch-converted/test_Linear, --target generic: a context
 *                             binary with packed weight blocks and a GEMM step
 *
 * If the program format version (KILN_FORMAT_VERSION) or the context-binary version
 * (KILN_CTX_VERSION) changes, these files stop loading by design: regenerate them with the new
 * build under a new name (…_v2.kiln), keep or retire the old ones deliberately, and record the
 * change in the version table of docs/format.md. A golden file must never be regenerated just to make this test pass
 * at the same version: that is exactly the compatibility break it is here to catch.
 *
 * The directory is found next to this source file (__FILE__ is absolute in CMake builds) or
 * given as argv[1].
 */
#include <libgen.h>
#include <stdint.h>
#include <string.h>

#include "compare.h"
#include "format/program_format.h"
#include "onnx_case.h"
#include "unit_expect.h"

typedef struct golden {
    const char *file;
    const char *onnx_case;
    size_t n_delegates;
} golden;

static const golden goldens[] = {
    {"relu_portable_v1.kiln", "node/test_relu", 0},
    {"linear_portable_v1.kiln", "pytorch-converted/test_Linear", 0},
    {"add_cpu_generic_v1.kiln", "node/test_add", 1},
    {"linear_cpu_generic_v1.kiln", "pytorch-converted/test_Linear", 1},
};

static void check_header(const char *path)
{
    size_t size = 0;
    uint8_t *bytes = unit_read_file(path, &size);
    EXPECT(bytes && size >= sizeof(kiln_fmt_header));
    if (!bytes || size < sizeof(kiln_fmt_header)) {
        free(bytes);
        return;
    }
    kiln_fmt_header h;
    memcpy(&h, bytes, sizeof h);
    EXPECT(memcmp(h.magic, KILN_FORMAT_MAGIC, 8) == 0);
    if (h.version != KILN_FORMAT_VERSION)
        fprintf(stderr, "%s is format version %u, this build writes %u: see the comment at the top of %s\n", path,
                h.version, KILN_FORMAT_VERSION, __FILE__);
    EXPECT(h.version == KILN_FORMAT_VERSION);
    EXPECT(h.file_size == size);
    free(bytes);
}

static void check_golden(const char *dir, const golden *g)
{
    char path[1024], case_dir[512], why[256];
    snprintf(path, sizeof path, "%s/%s", dir, g->file);
    snprintf(case_dir, sizeof case_dir, "%s/%s", UNIT_TESTDATA, g->onnx_case);
    unit_section(path);
    check_header(path);
    onnx_case c;
    if (!onnx_case_load(&c, case_dir, why, sizeof why)) {
        fprintf(stderr, "cannot load %s: %s\n", case_dir, why);
        EXPECT(false);
        return;
    }
    kiln_program *p = NULL;
    kiln_module *m = NULL;
    kiln_method *h = NULL;
    EXPECT_STATUS(kiln_program_open(path, &p), KILN_OK);
    if (p) EXPECT_STATUS(kiln_module_create(p, NULL, &m), KILN_OK);
    if (m) EXPECT_STATUS(kiln_method_load(m, "forward", &h), KILN_OK);
    if (h) {
        EXPECT(kiln_program_method_count(p) == 1);
        EXPECT(kiln_method_delegate_count(h) == g->n_delegates);
        EXPECT(kiln_method_input_count(h) == c.n_inputs && kiln_method_output_count(h) == c.n_expected);
        for (size_t i = 0; i < c.n_inputs && i < kiln_method_input_count(h); i++)
            EXPECT_STATUS(kiln_method_set_input(h, i, &c.inputs[i]), KILN_OK);
        EXPECT_STATUS(kiln_method_execute(h), KILN_OK);
        for (size_t j = 0; j < c.n_expected && j < kiln_method_output_count(h); j++) {
            kiln_tensor out;
            EXPECT_STATUS(kiln_method_get_output(h, j, &out), KILN_OK);
            bool same = kiln_test_compare(&out, &c.expected[j], 1e-3, 1e-7, why, sizeof why);
            if (!same) fprintf(stderr, "%s output %zu: %s\n", g->file, j, why);
            EXPECT(same);
        }
    } else if (m) {
        fprintf(stderr, "%s: %s\n", g->file, kiln_module_last_error(m));
    }
    kiln_module_destroy(m);
    kiln_program_close(p);
    onnx_case_free(&c);
}

int main(int argc, char **argv)
{
    char here[1024];
    snprintf(here, sizeof here, "%s", __FILE__);
    char dir[1100];
    if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
    else snprintf(dir, sizeof dir, "%s/../golden", dirname(here));
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) check_golden(dir, &goldens[i]);
    return unit_finish("test_golden");
}
