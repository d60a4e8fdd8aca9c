/* test_golden.c — committed program files (tests/golden/) must keep loading and computing the
 * right outputs (zstd's golden frames, STYLE.md "golden files that must keep loading").
 *
 * Layer: tests (format, runtime). Each golden file was written by `kiln compile` from an ONNX
 * backend test case, or from a model of tests/golden/cases/ (make_cases.py), and is checked
 * against that case's reference outputs. The table below says what each one covers; for a cpu
 * delegate it also names the context-binary version the file holds and the version 2 or 3
 * feature it must contain (kiln_ctxbin_v2_*_feature / kiln_ctxbin_v3_*_feature find it, so a
 * file that stopped covering what it is here for fails), and for every file the program format
 * version it was written at. A file whose records this CPU cannot run (x86-64-v4 without AVX-512)
 * must still open and validate, and its module must be refused as KILN_ERROR_NO_RUNNABLE_TARGET.
 *
 * If the program format version (KILN_FORMAT_VERSION) changes, or the context-binary version
 * (KILN_CTX_VERSION) changes so that older files no longer load, write new files with the new
 * build under a new suffix (tests/golden/regenerate.sh), keep or retire the old ones
 * deliberately, and record the change in the version table of docs/format.md. A golden file
 * must never be regenerated just to make this test pass at the same version: that is exactly
 * the compatibility break it is here to catch.
 *
 * The directory is found next to this source file (__FILE__ is absolute in CMake builds) or
 * given as argv[1].
 */
#include <libgen.h>
#include <stdint.h>
#include <string.h>

#include "backends/cpu/rt/ctxbin_reader.h"
#include "compare.h"
#include "core/alloc.h"
#include "core/cpu_features.h"
#include "format/program_format.h"
#include "onnx_case.h"
#include "unit_expect.h"

typedef struct golden {
    const char *file;
    uint32_t program_version;       /* program format version of the file (docs/format.md part 1) */
    const char *onnx_case;          /* under UNIT_TESTDATA, or "cases/..." under the golden folder */
    size_t n_delegates;
    uint32_t ctx_version;           /* version of its context binary; 0: no cpu delegate */
    const char *feature;            /* a kiln_ctxbin_v2_* or _v3_*_feature phrase it must hold, or NULL */
    double rtol, atol;              /* tolerance against the f32 expected outputs; 0, 0: 1e-3, 1e-7 */
} golden;

static const golden goldens[] = {
    /* version 1: the files earlier builds wrote; still read (version 1 is a subset of 2) */
    {"relu_portable_v1.kiln", 1, "node/test_relu", 0, 0, NULL, 0, 0},
    {"linear_portable_v1.kiln", 1, "pytorch-converted/test_Linear", 0, 0, NULL, 0, 0},
    {"add_cpu_generic_v1.kiln", 1, "node/test_add", 1, 1, NULL, 0, 0},
    {"linear_cpu_generic_v1.kiln", 1, "pytorch-converted/test_Linear", 1, 1, NULL, 0, 0},
    /* version 2: one per target and per feature version 1 did not have */
    {"linear_cpu_generic_v2.kiln", 1, "pytorch-converted/test_Linear", 1, 2, NULL, 0, 0},
    {"linear_cpu_x86-64-v3_nostrassen_v2.kiln", 1, "pytorch-converted/test_Linear", 1, 2,
     "the no-strassen compile-spec flag", 0, 0},
    {"linear_cpu_x86-64-v4_v2.kiln", 1, "pytorch-converted/test_Linear", 1, 2, NULL, 0, 0},
    /* bf16 rounds both operands to 8 significant bits (2^-9 relative each): an element is off by
       up to about 2^-8 of the sum of its |x w| terms (about 1 here), so one near 0 moves far in
       relative terms. This machine's result is exactly the product of bf16-rounded operands
       accumulated in f32 (element 0: 0.156176 against f32's 0.156492, element 3: 0.006630
       against 0.007872): a bf16 tolerance, not f32's. */
    {"linear_cpu_x86-64-v4-bf16_v2.kiln", 1, "pytorch-converted/test_Linear", 1, 2, "precision bf16", 1e-2, 5e-3},
    {"layernorm_residual_cpu_x86-64-v3_v2.kiln", 1, "cases/layernorm_residual", 1, 2,
     "a LayerNormalization with a residual input", 0, 0},
    {"conv_pixel_rows_cpu_generic_v2.kiln", 1, "cases/conv_pixel_rows", 1, 2, "a pixel-rows convolution", 0, 0},
    /* version 3, written at program format version 2 (which added the optional METADATA
       section); each pins steps or tensors only version 3 writes */
    {"layout_ops_cpu_generic_v3.kiln", 2, "cases/layout_ops", 1, 3, "a WHERE step", 0, 0},
    {"conv3d_taps_cpu_x86-64-v3_v3.kiln", 2, "cases/conv3d_taps", 1, 3, "a tap-list convolution", 0, 0},
};

/* Whether feature is among the version 2 or version 3 features anywhere in bin. */
static bool holds_feature(const kiln_ctxbin *bin, const char *feature)
{
    const char *f = kiln_ctxbin_v2_header_feature(bin->header);
    if (f && strcmp(f, feature) == 0) return true;
    for (uint32_t r = 0; r < bin->header->n_records; r++) {
        const kiln_ctx_record *rec = &bin->records[r];
        if ((f = kiln_ctxbin_v2_record_feature(rec)) && strcmp(f, feature) == 0) return true;
        const kiln_ctx_graph *graphs = kiln_ctxbin_graphs(bin, rec);
        for (uint32_t g = 0; g < rec->n_graphs; g++) {
            const kiln_ctx_tensor *t = kiln_ctxbin_tensors(bin, &graphs[g]);
            const kiln_ctx_step *st = kiln_ctxbin_steps(bin, &graphs[g]);
            for (uint32_t i = 0; i < graphs[g].n_tensors; i++) {
                if ((f = kiln_ctxbin_v2_tensor_feature(&t[i])) && strcmp(f, feature) == 0) return true;
                if ((f = kiln_ctxbin_v3_tensor_feature(&t[i])) && strcmp(f, feature) == 0) return true;
            }
            for (uint32_t i = 0; i < graphs[g].n_steps; i++) {
                if ((f = kiln_ctxbin_v2_step_feature(&st[i])) && strcmp(f, feature) == 0) return true;
                if ((f = kiln_ctxbin_v3_step_feature(&st[i])) && strcmp(f, feature) == 0) return true;
            }
        }
    }
    return false;
}

/* Checks the context binary inside the program file at path (found by its magic at a 64-byte
   aligned offset: segments are 64-aligned); returns whether this CPU runs one of its records. */
static bool check_ctxbin(const char *path, const golden *g)
{
    size_t size = 0;
    uint8_t *bytes = unit_read_file(path, &size);
    EXPECT(bytes != NULL);
    const uint8_t *found = NULL;
    for (size_t at = 0; bytes && !found && at + KILN_CTX_HEADER_SIZE <= size; at += 64)
        if (memcmp(bytes + at, KILN_CTX_MAGIC, 8) == 0) found = bytes + at;
    EXPECT(found != NULL);
    bool runnable = false;
    if (found) {
        kiln_ctx_header h;
        memcpy(&h, found, sizeof h);
        EXPECT(h.version == g->ctx_version);
        EXPECT(h.file_size <= size - (size_t)(found - bytes));
        EXPECT(kiln_ctx_signature(found, (size_t)h.file_size) == h.signature); /* seeded with its own version */
        kiln_ctxbin bin;
        char message[256] = "";
        kiln_status st = kiln_ctxbin_open(&bin, found, (size_t)h.file_size, kiln_allocator_default(), message,
                                          sizeof message);
        if (st != KILN_OK) fprintf(stderr, "%s: %s\n", g->file, message);
        EXPECT_STATUS(st, KILN_OK);
        if (st == KILN_OK) {
            if (g->feature && !holds_feature(&bin, g->feature))
                fprintf(stderr, "%s does not hold %s\n", g->file, g->feature);
            EXPECT(!g->feature || holds_feature(&bin, g->feature));
            for (uint32_t r = 0; r < bin.header->n_records; r++)
                runnable |= (bin.records[r].features & ~kiln_cpu_features()) == 0;
        }
        kiln_ctxbin_close(&bin);
    }
    free(bytes);
    return runnable;
}

static void check_header(const char *path, const golden *g)
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
    /* Files of context-binary versions 1 and 2 are program format version 1, which this build
       still reads (version 2 only added the optional METADATA section); the version 3 files
       were written at version 2. A file of another version is a new golden. */
    if (h.version != g->program_version)
        fprintf(stderr, "%s is program format version %u, expected %u: see the comment at the top of %s\n", path,
                h.version, g->program_version, __FILE__);
    EXPECT(h.version == g->program_version);
    EXPECT(h.file_size == size);
    free(bytes);
}

static void check_golden(const char *dir, const golden *g)
{
    char path[1024], case_dir[512], why[256];
    snprintf(path, sizeof path, "%s/%s", dir, g->file);
    bool local = strncmp(g->onnx_case, "cases/", 6) == 0;
    snprintf(case_dir, sizeof case_dir, "%s/%s", local ? dir : UNIT_TESTDATA, g->onnx_case);
    unit_section(path);
    check_header(path, g);
    bool runnable = g->ctx_version == 0 || check_ctxbin(path, g);
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
    if (p && !runnable) {
        /* It opened and validated above; this CPU lacks the features its record needs. */
        printf("%s: no record runs on this CPU; checked that it opens and validates\n", g->file);
        kiln_status st = kiln_module_create(p, NULL, &m);
        if (st == KILN_OK) st = kiln_method_load(m, "forward", &h);
        EXPECT_STATUS(st, KILN_ERROR_NO_RUNNABLE_TARGET);
        kiln_module_destroy(m);
        kiln_program_close(p);
        onnx_case_free(&c);
        return;
    }
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
            bool same = kiln_test_compare(&out, &c.expected[j], g->rtol > 0 ? g->rtol : 1e-3,
                                          g->atol > 0 ? g->atol : 1e-7, why, sizeof why);
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
