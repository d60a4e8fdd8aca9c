/* test_shards.c — kiln_compile_shards (issue 4 item 6) on ONNX backend test models.
 *
 * Layer: tests (include/kiln/compiler.h and kiln.h; compiler/program_scratch.h to read the group
 * sizes back). For models with several inputs and outputs, Constant nodes and a weight, cut
 * into 1 to 4 shards:
 *  - the manifest names the shard files and wires every shard input to a graph input or an
 *    earlier shard's output; running the shards that way, in modules sharing one explicit
 *    scratch group, gives the case's reference outputs (conformance tolerance);
 *  - every shard's cpu binaries carry the same group size, the largest need among them, and the
 *    run reserves exactly one buffer of that size;
 *  - asking for more shards than the model has cut places, 0 or too many shards is a compile-spec
 *    error; a manifest that cannot be written, or any failed allocation, leaves no file behind
 *    and no memory held.
 * The manifest is read here with its documented grammar (docs/cli.md), independently of the
 * kiln tool's reader, which tests/models/shards.sh exercises on real models.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "compiler/program_scratch.h"
#include "onnx_case.h"
#include "unit_expect.h"

#define MAX_SHARDS 8
#define MAX_IO 16

typedef struct src {
    int shard;                  /* -1: graph input */
    size_t index;
} src;

typedef struct manifest {
    size_t n_shards;
    char path[MAX_SHARDS][600];
    src in[MAX_SHARDS][MAX_IO];
    size_t n_in[MAX_SHARDS];
    src out[MAX_IO];
    size_t n_out;
} manifest;

static const char *const cases[] = {
    "node/test_layer_normalization_4d_axis1_expanded",   /* 3 inputs, 3 outputs, Constants */
    "node/test_hannwindow_expanded",                     /* data-dependent (dynamic) shapes */
    "pytorch-operator/test_operator_params",             /* a weight */
    "node/test_mvn_expanded",
};

static char tmp_dir[400];

static size_t files_in(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[900];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (remove(path) != 0) rmdir(path);
    }
    if (d) closedir(d);
}

/* Fill slot j of a table of *n entries (growing *n); false for a negative shard. */
static bool set_source(src *slot, size_t *n, size_t j, int shard, size_t index)
{
    *slot = (src){shard, index};
    if (j + 1 > *n) *n = j + 1;
    return shard >= -1;
}

static bool read_manifest(const char *path, manifest *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[1024], name[600];
    bool ok = fgets(line, sizeof line, f) && strcmp(line, "kiln-shards 1\n") == 0;
    while (ok && fgets(line, sizeof line, f)) {
        size_t i, j, k;
        int s;
        if (sscanf(line, "shards %zu", &m->n_shards) == 1) ok = m->n_shards <= MAX_SHARDS;
        else if (sscanf(line, "shard %zu %599s", &i, name) == 2 && i < MAX_SHARDS)
            snprintf(m->path[i], sizeof m->path[i], "%s/%s", tmp_dir, name);
        else if (sscanf(line, "input %zu %zu graph %zu", &i, &j, &k) == 3 && i < MAX_SHARDS && j < MAX_IO)
            set_source(&m->in[i][j], &m->n_in[i], j, -1, k);
        else if (sscanf(line, "input %zu %zu shard %d %zu", &i, &j, &s, &k) == 4 && i < MAX_SHARDS && j < MAX_IO)
            ok = set_source(&m->in[i][j], &m->n_in[i], j, s, k) && (size_t)s < i; /* earlier shards only */
        else if (sscanf(line, "output %zu graph %zu", &j, &k) == 2 && j < MAX_IO)
            set_source(&m->out[j], &m->n_out, j, -1, k);
        else if (sscanf(line, "output %zu shard %d %zu", &j, &s, &k) == 3 && j < MAX_IO)
            ok = set_source(&m->out[j], &m->n_out, j, s, k);
    }
    fclose(f);
    return ok && m->n_shards > 0 && m->n_out > 0;
}

/* The largest need and the group size each shard program records; false if they disagree. */
static bool groups_agree(const manifest *m, uint64_t *group)
{
    uint64_t need = 0;
    *group = 0;
    bool ok = true, first = true;
    for (size_t i = 0; i < m->n_shards; i++) {
        size_t size;
        uint8_t *bytes = unit_read_file(m->path[i], &size);
        kiln_program_scratch q;
        if (!bytes || kiln_program_scratch_query(bytes, size, &q) != KILN_OK) ok = false;
        else if (q.n_binaries) {
            if (q.need > need) need = q.need;
            if (!first && q.group != *group) ok = false;
            *group = q.group;
            first = false;
        }
        free(bytes);
    }
    return ok && *group == need;
}

static kiln_tensor view_of(kiln_method *const *methods, const onnx_case *c, src s)
{
    kiln_tensor t = {0};
    if (s.shard < 0) return c->inputs[s.index];
    kiln_method_get_output(methods[s.shard], s.index, &t);
    return t;
}

/* Run the shards as the manifest wires them and compare with the case's reference outputs. */
static void run_and_compare(const char *name, const manifest *m, const onnx_case *c, uint64_t group)
{
    kiln_program *programs[MAX_SHARDS] = {0};
    kiln_module *modules[MAX_SHARDS] = {0};
    kiln_method *methods[MAX_SHARDS] = {0};
    kiln_scratch_group *g = NULL;
    kiln_runtime_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
    kiln_runtime_stats_get(&s0);
    REQUIRE(kiln_scratch_group_create(&g) == KILN_OK);
    bool ok = true;
    for (size_t i = 0; ok && i < m->n_shards; i++) {
        kiln_module_options o = {.struct_size = sizeof o, .scratch_group = g, .num_threads = 1};
        ok = kiln_program_open(m->path[i], &programs[i]) == KILN_OK &&
             kiln_module_create(programs[i], &o, &modules[i]) == KILN_OK &&
             kiln_method_load(modules[i], "forward", &methods[i]) == KILN_OK &&
             kiln_method_input_count(methods[i]) == m->n_in[i];
        for (size_t j = 0; ok && j < m->n_in[i]; j++) {
            kiln_tensor t = view_of(methods, c, m->in[i][j]);
            ok = kiln_method_set_input(methods[i], j, &t) == KILN_OK;
        }
        ok = ok && kiln_method_execute(methods[i]) == KILN_OK;
        if (!ok) fprintf(stderr, "%s: shard %zu of %zu failed\n", name, i, m->n_shards);
    }
    EXPECT(ok);
    kiln_runtime_stats_get(&s1);
    EXPECT(s1.live_scratch_groups == s0.live_scratch_groups + 1);
    if (group) EXPECT(s1.scratch_bytes_reserved == s0.scratch_bytes_reserved + group);
    EXPECT(m->n_out == c->n_expected);
    for (size_t j = 0; ok && j < m->n_out && j < c->n_expected; j++) {
        kiln_tensor t = view_of(methods, c, m->out[j]);
        char why[256];
        bool same = kiln_test_compare(&t, &c->expected[j], 1e-3, 1e-7, why, sizeof why);
        if (!same) fprintf(stderr, "%s, %zu shards, output %zu: %s\n", name, m->n_shards, j, why);
        EXPECT(same);
    }
    for (size_t i = 0; i < m->n_shards; i++) {
        kiln_module_destroy(modules[i]);
        kiln_program_close(programs[i]);
    }
    kiln_scratch_group_release(g);
}

static kiln_compile_options options_for(const onnx_case *c)
{
    kiln_compile_options o = {.struct_size = sizeof o, .input_shapes = c->shapes, .n_input_shapes = c->n_inputs,
                              .input_shapes_by_position = 1};
    return o;
}

static void test_case(const char *name)
{
    char dir[600], why[256], message[512], out[700];
    snprintf(dir, sizeof dir, "%s/%s", UNIT_TESTDATA, name);
    onnx_case c;
    if (!onnx_case_load(&c, dir, why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", name, why);
        EXPECT(false);
        return;
    }
    kiln_compile_options opt = options_for(&c);
    kiln_compile_method method = {.name = "forward", .model_data = c.model, .model_size = c.model_size};
    snprintf(out, sizeof out, "%s/model.shards", tmp_dir);
    for (size_t n = 1; n <= 4; n++) {
        clear_dir(tmp_dir);
        kiln_status st = kiln_compile_shards(&opt, &method, n, out, message, sizeof message);
        if (st == KILN_ERROR_COMPILE_SPEC && n > 1 && strstr(message, "at most")) {
            EXPECT(files_in(tmp_dir) == 0); /* too small a model for n: refused, nothing written */
            continue;
        }
        if (st != KILN_OK) fprintf(stderr, "%s in %zu shards: %s\n", name, n, message);
        EXPECT_STATUS(st, KILN_OK);
        manifest m;
        bool read = st == KILN_OK && read_manifest(out, &m);
        EXPECT(read && m.n_shards == n && files_in(tmp_dir) == n + 1);
        uint64_t group = 0;
        EXPECT(read && groups_agree(&m, &group));
        if (read) run_and_compare(name, &m, &c, group);
    }
    onnx_case_free(&c);
}

static void test_refusals(void)
{
    char dir[600], why[256], message[512], out[700];
    snprintf(dir, sizeof dir, "%s/%s", UNIT_TESTDATA, cases[2]);
    onnx_case c;
    REQUIRE(onnx_case_load(&c, dir, why, sizeof why));
    kiln_compile_options opt = options_for(&c);
    kiln_compile_method method = {.name = "forward", .model_data = c.model, .model_size = c.model_size};
    clear_dir(tmp_dir);
    snprintf(out, sizeof out, "%s/m.shards", tmp_dir);
    EXPECT_STATUS(kiln_compile_shards(&opt, &method, 0, out, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    EXPECT_STATUS(kiln_compile_shards(&opt, &method, 1025, out, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    EXPECT_STATUS(kiln_compile_shards(&opt, &method, 50, out, message, sizeof message), KILN_ERROR_COMPILE_SPEC);
    EXPECT(strstr(message, "cannot cut the model into 50 shards") && strstr(message, "at most"));
    EXPECT_STATUS(kiln_compile_shards(&opt, NULL, 2, out, message, sizeof message), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(files_in(tmp_dir) == 0);
    /* The manifest's path is a directory: the shards are written, the manifest cannot be, and
       the shards go again. */
    snprintf(out, sizeof out, "%s/m.shards", tmp_dir);
    REQUIRE(mkdir(out, 0755) == 0);
    EXPECT_STATUS(kiln_compile_shards(&opt, &method, 2, out, message, sizeof message), KILN_ERROR_IO);
    EXPECT(strstr(message, "cannot write the manifest") != NULL);
    EXPECT(files_in(tmp_dir) == 1);
    onnx_case_free(&c);
}

/* Fail each allocation of a 2-shard compile in turn: a clean error, no block held, no file. */
static void test_allocation_failures(void)
{
    char dir[600], why[256], message[512], out[700];
    snprintf(dir, sizeof dir, "%s/%s", UNIT_TESTDATA, cases[0]);
    onnx_case c;
    REQUIRE(onnx_case_load(&c, dir, why, sizeof why));
    clear_dir(tmp_dir);
    snprintf(out, sizeof out, "%s/m.shards", tmp_dir);
    kiln_compile_method method = {.name = "forward", .model_data = c.model, .model_size = c.model_size};
    size_t failures = 0;
    for (size_t fail_at = 1;; fail_at++) {
        unit_alloc u;
        kiln_allocator a = unit_alloc_make(&u);
        u.fail_at = fail_at;
        kiln_compile_options opt = options_for(&c);
        opt.allocator = &a;
        kiln_status st = kiln_compile_shards(&opt, &method, 2, out, message, sizeof message);
        EXPECT(u.live_blocks == 0);
        if (u.n_failed == 0) {
            EXPECT_STATUS(st, KILN_OK);
            break;
        }
        failures++;
        if (st == KILN_OK || files_in(tmp_dir) != 0) {
            fprintf(stderr, "allocation %zu failed: %s, %zu files left\n", fail_at, kiln_status_name(st),
                    files_in(tmp_dir));
            EXPECT(false);
            clear_dir(tmp_dir);
        }
    }
    printf("  %zu allocation failures unwound cleanly\n", failures);
    EXPECT(failures > 10);
    onnx_case_free(&c);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/kiln_test_shards_XXXXXX", base && *base ? base : "/tmp");
    REQUIRE(mkdtemp(tmp_dir) != NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unit_section(cases[i]);
        test_case(cases[i]);
    }
    unit_section("refusals and cleanup");
    test_refusals();
    unit_section("allocation failures");
    test_allocation_failures();
    clear_dir(tmp_dir);
    rmdir(tmp_dir);
    return unit_finish("test_shards");
}
