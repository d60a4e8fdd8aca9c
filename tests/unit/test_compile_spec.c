/* test_compile_spec.c — compile-spec validation before any work (issue 4, item 2).
 *
 * Layer: tests (include/kiln/compiler.h; the kiln tool for the exit status). Every invalid spec
 * must be refused with its status and a one-line message naming the problem and the fix, before
 * the compiler reads the model (the methods here name a file that does not exist, so any work
 * would fail with KILN_ERROR_IO instead) or allocates anything. Valid forms: no precision, one
 * for all targets, one per target; the scalar `target` and a one-target list compile to the same
 * bytes, and no target at all is the same as the scalar best target. `kiln compile` exits with
 * status 2 on a bad spec.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "unit_expect.h"

#define MODEL UNIT_TESTDATA "/pytorch-converted/test_Linear/model.onnx"

static const char *const generic[1] = {"generic"};
static const char *const three[3] = {"generic", "x86-64-v3", "x86-64-v4"};
static const char *const twice[2] = {"x86-64-v3", "x86-64-v3"};
static const char *const unknown[2] = {"generic", "x86-64-v9"};
static const char *const f32[1] = {"f32"};
static const char *const f32x2[2] = {"f32", "f32"};
static const char *const f32x3[3] = {"f32", "f32", "f32"};
static const char *const bf16[1] = {"bf16"};
static const char *const mixed[3] = {"f32", "bf16", "f32"};
static const char *const fp8[1] = {"fp8"};

static kiln_compile_options base(void) { return (kiln_compile_options){.struct_size = sizeof(kiln_compile_options)}; }

/* opt must be refused with want and a message holding `problem` and `fix`, before any work: the
   method's model does not exist, and the allocator must not be called. */
static void expect_refused(const char *what, kiln_compile_options opt, kiln_status want, const char *problem,
                           const char *fix)
{
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    opt.allocator = &a;
    kiln_compile_method m = {.name = "forward", .model_path = "/nonexistent/model.onnx"};
    void *data = NULL;
    size_t size = 0;
    char message[512] = "";
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, &size, message, sizeof message);
    unit_checks++;
    bool ok = st == want && strstr(message, problem) && strstr(message, fix) && !strchr(message, '\n') &&
              data == NULL && u.n_allocs == 0;
    if (!ok) {
        fprintf(stderr, "%s: %s (%zu allocations), message '%s'; wanted %s with '%s' and '%s'\n", what,
                kiln_status_name(st), u.n_allocs, message, kiln_status_name(want), problem, fix);
        unit_failures++;
    }
    /* The file path refuses the same way and writes nothing. */
    const char *out = "/tmp/kiln_test_compile_spec.kiln";
    remove(out);
    message[0] = '\0';
    EXPECT_STATUS(kiln_compile_file(&opt, &m, 1, out, message, sizeof message), want);
    EXPECT(access(out, F_OK) != 0);
}

static void test_invalid_specs(void)
{
    unit_section("invalid compile specs");
    kiln_compile_options o = base();
    o.targets = generic;
    o.n_targets = 0;
    expect_refused("empty list", o, KILN_ERROR_COMPILE_SPEC, "the target list is empty", "name at least one target");

    o = base();
    o.n_targets = 2;
    expect_refused("count without list", o, KILN_ERROR_INVALID_ARGUMENT, "the target list is NULL", "set n_targets to 0");

    o = base();
    o.targets = twice;
    o.n_targets = 2;
    expect_refused("duplicate", o, KILN_ERROR_COMPILE_SPEC, "target 'x86-64-v3' is listed twice", "give each target once");

    o = base();
    o.targets = unknown;
    o.n_targets = 2;
    expect_refused("unknown", o, KILN_ERROR_COMPILE_SPEC, "unknown target 'x86-64-v9'",
                   "known targets: generic, x86-64-v3, x86-64-v4");

    o = base();
    o.target = "avx9000";
    expect_refused("unknown scalar", o, KILN_ERROR_COMPILE_SPEC, "unknown target 'avx9000'", "known targets:");

    o = base();
    o.target = "generic";
    o.targets = three;
    o.n_targets = 3;
    expect_refused("scalar and list", o, KILN_ERROR_COMPILE_SPEC, "targets were given twice", "give only the list");

    o = base();
    o.targets = three;
    o.n_targets = 3;
    o.precisions = f32x2;
    o.n_precisions = 2;
    expect_refused("2 precisions, 3 targets", o, KILN_ERROR_COMPILE_SPEC, "2 precisions for 3 targets",
                   "one precision for all targets or exactly one per target");

    o = base();
    o.precisions = f32x2;
    o.n_precisions = 2;
    expect_refused("2 precisions, default target", o, KILN_ERROR_COMPILE_SPEC, "2 precisions for 1 target",
                   "exactly one per target");

    o = base();
    o.targets = generic;
    o.n_targets = 1;
    o.n_precisions = 1;
    expect_refused("precision count without list", o, KILN_ERROR_INVALID_ARGUMENT, "the precision list is NULL",
                   "set n_precisions to 0");

    o = base();
    o.precisions = fp8;
    o.n_precisions = 1;
    expect_refused("unknown precision", o, KILN_ERROR_COMPILE_SPEC, "unknown precision 'fp8'", "known precisions: f32");

    o = base();
    o.targets = three;
    o.n_targets = 3;
    o.precisions = bf16;
    o.n_precisions = 1;
    expect_refused("bf16 for all", o, KILN_ERROR_COMPILE_SPEC,
                   "target 'generic' cannot execute precision bf16 (targets supporting bf16: x86-64-v4-bf16)",
                   "use f32 (--precision f32) or leave the precision out");

    o = base();
    o.targets = three;
    o.n_targets = 3;
    o.precisions = mixed;
    o.n_precisions = 3;
    expect_refused("bf16 for one target", o, KILN_ERROR_COMPILE_SPEC, "target 'x86-64-v3' cannot execute precision bf16",
                   "use f32");

    static const struct {
        const char *what, *problem;
        kiln_compile_options opt;
    } no_delegate[] = {
        {"no_delegate + targets", "targets (--target)",
         {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .targets = generic, .n_targets = 1}},
        {"no_delegate + scalar target", "targets (--target)",
         {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .target = "generic"}},
        {"no_delegate + precision", "precisions (--precision)",
         {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .precisions = f32, .n_precisions = 1}},
        {"no_delegate + slc", "slc (--slc)", {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .slc = 1}},
        {"no_delegate + no_strassen", "no_strassen (--no-strassen)",
         {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .no_strassen = 1}},
        {"no_delegate + weight sharing", "weight_sharing (--weight-sharing)",
         {.struct_size = sizeof(kiln_compile_options), .no_delegate = 1, .weight_sharing = 1}},
    };
    for (size_t i = 0; i < sizeof no_delegate / sizeof no_delegate[0]; i++)
        expect_refused(no_delegate[i].what, no_delegate[i].opt, KILN_ERROR_COMPILE_SPEC, no_delegate[i].problem,
                       "cannot be combined with no_delegate (--no-delegate)");
}

static void *compile_ok(kiln_compile_options opt, size_t *size)
{
    kiln_compile_method m = {.name = "forward", .model_path = MODEL};
    void *data = NULL;
    char message[512] = "";
    kiln_status st = kiln_compile_memory(&opt, &m, 1, &data, size, message, sizeof message);
    EXPECT_STATUS(st, KILN_OK);
    if (st != KILN_OK) fprintf(stderr, "  message: %s\n", message);
    return data;
}

static bool same_bytes(const void *a, size_t na, const void *b, size_t nb)
{
    return a && b && na == nb && memcmp(a, b, na) == 0;
}

static void test_valid_forms(void)
{
    unit_section("valid forms; a one-target list is the scalar form byte for byte");
    size_t n_list = 0, n_scalar = 0, n_default = 0, n_best = 0;
    kiln_compile_options o = base();
    o.targets = generic;
    o.n_targets = 1;
    void *list = compile_ok(o, &n_list);
    o = base();
    o.target = "generic";
    void *scalar = compile_ok(o, &n_scalar);
    EXPECT(same_bytes(list, n_list, scalar, n_scalar));

    /* No target is this machine's best, as a scalar. */
    o = base();
    void *dflt = compile_ok(o, &n_default);
    static const char *best[1];
    kiln_compile_options probe = base();
    const char *names[3] = {"x86-64-v4", "x86-64-v3", "generic"};
    void *best_bytes = NULL;
    for (int i = 0; i < 3 && !same_bytes(best_bytes, n_best, dflt, n_default); i++) {
        free(best_bytes);
        best[0] = names[i];
        probe.targets = best;
        probe.n_targets = 1;
        best_bytes = compile_ok(probe, &n_best);
    }
    EXPECT(same_bytes(best_bytes, n_best, dflt, n_default));

    /* Precisions: one for all, one per target, and none are the same program. */
    size_t n0, n1, n3;
    o = base();
    o.targets = three;
    o.n_targets = 3;
    void *p0 = compile_ok(o, &n0);
    o.precisions = f32;
    o.n_precisions = 1;
    void *p1 = compile_ok(o, &n1);
    o.precisions = f32x3;
    o.n_precisions = 3;
    void *p3 = compile_ok(o, &n3);
    EXPECT(same_bytes(p0, n0, p1, n1) && same_bytes(p0, n0, p3, n3));
    free(list);
    free(scalar);
    free(dflt);
    free(best_bytes);
    free(p0);
    free(p1);
    free(p3);
}

/* `kiln compile` with a bad spec exits with status 2 and prints the message. The tool lives
   next to the tests directory this test runs from (BUILD/tests/.. = BUILD/kiln). */
static void test_cli_exit_status(void)
{
    unit_section("kiln compile exit status on a bad spec");
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return;
    *slash = '\0';
    char tool[1100];
    snprintf(tool, sizeof tool, "%s/../kiln", self);
    if (access(tool, X_OK) != 0) {
        printf("SKIPPED: no kiln tool at %s\n", tool);
        return;
    }
    static const char *const args[] = {
        "--target bogus", "--target generic --target generic", "--no-delegate --target generic",
        "--precision bf16", "--target generic --precision f32 --precision f32", "--no-delegate --weight-sharing",
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "'%s' compile '%s' -o /tmp/kiln_test_compile_spec_cli.kiln %s 2>/dev/null", tool,
                 MODEL, args[i]);
        int rc = system(cmd);
        unit_checks++;
        if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 2) {
            fprintf(stderr, "kiln compile %s: exit status %d, wanted 2\n", args[i], WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
            unit_failures++;
        }
    }
}

int main(void)
{
    test_invalid_specs();
    test_valid_forms();
    test_cli_exit_status();
    return unit_finish("test_compile_spec");
}
