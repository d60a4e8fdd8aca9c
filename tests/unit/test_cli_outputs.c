/* test_cli_outputs.c — what the `kiln` tool does to the files its outputs name (issue 12,
 * items 1, 2 and 3), end to end through the tool of this build (or the one given as argv[1]).
 *
 * Layer: tests (the kiln tool; compiler/program_scratch.h to read recorded group sizes).
 * Everything happens in a private temporary directory:
 *  - item 1: `compile -o` onto a FIFO, a directory or (as root) a private character device made
 *    with mknod (the numbers of /dev/null) exits 1 with one error line, leaves the node what it
 *    was and creates nothing; `run --outputs` onto a FIFO likewise; `compile -o LINK` and
 *    `scratch-size --write LINK` replace the program the link names and keep the link;
 *  - item 2: an output that is one of the inputs — `compile m.onnx -o m.onnx` (also through a
 *    link), with `--shards 1`, a shard file of `--shards`, a `--method` model, and a `run
 *    --outputs` file that is an `--input` or an `--inputs` file — exits 2 with one line and
 *    leaves the input byte for byte as it was;
 *  - item 3: a program file that exists keeps its mode (0600 stays 0600); a new one gets
 *    0666 & ~umask (umask 077: 0600, umask 022: 0644).
 */
#include <stdarg.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "compiler/program_scratch.h"
#include "io/npy.h"
#include "writer_support.h"

static char root[256], work[300], logs[300], tool[1100];

/* Runs "cd work && [umask U &&] tool ARGS", stdout and stderr into logs/. The exit status, or -1. */
static int run_tool(const char *umask_value, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run_tool(const char *umask_value, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s%s%s'%s' %s >'%s/out.txt' 2>'%s/err.txt'", work,
             umask_value ? "umask " : "", umask_value ? umask_value : "", umask_value ? " && " : "", tool, args, logs,
             logs);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* stderr of the last run is exactly one line starting "kiln: ". */
static bool one_error_line(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/err.txt", logs);
    size_t size = 0;
    uint8_t *text = unit_read_file(path, &size);
    bool ok = text && size > 7 && memcmp(text, "kiln: ", 6) == 0 && text[size - 1] == '\n' &&
              memchr(text, '\n', size - 1) == NULL;
    if (!ok) fprintf(stderr, "stderr is not one 'kiln: ' line: '%.*s'\n", (int)size, text ? (const char *)text : "");
    free(text);
    return ok;
}

/* The tool exits with `want` and one error line. */
static void expect_exit(int got, int want, const char *what)
{
    unit_checks++;
    if (got != want) {
        fprintf(stderr, "%s: exit status %d, wanted %d\n", what, got, want);
        unit_failures++;
    } else if (want != 0 && !one_error_line()) {
        fprintf(stderr, "%s: not one error line\n", what);
        unit_failures++;
    }
}

static void work_path(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", work, name); }

static mode_t kind_of(const char *name)
{
    char path[512];
    work_path(path, sizeof path, name);
    struct stat st;
    return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

/* The file `name` of work/ holds exactly these bytes. */
static bool same_bytes(const char *name, const uint8_t *want, size_t want_size)
{
    char path[512];
    work_path(path, sizeof path, name);
    return writer_file_is(path, want, want_size);
}

static bool is_program(const char *name, kiln_program_scratch *q)
{
    char path[512];
    work_path(path, sizeof path, name);
    size_t size = 0;
    uint8_t *bytes = unit_read_file(path, &size);
    bool ok = bytes && kiln_program_scratch_query(bytes, size, q) == KILN_OK;
    free(bytes);
    return ok;
}

/* ---- item 1: what the path names ---------------------------------------------------------------- */

static void test_special_outputs(void)
{
    unit_section("compile -o onto a FIFO, a directory or a device is refused and creates nothing");
    char path[512];
    work_path(path, sizeof path, "fifo");
    REQUIRE(mkfifo(path, 0666) == 0);
    work_path(path, sizeof path, "dir");
    REQUIRE(mkdir(path, 0777) == 0);
    size_t before = writer_dir_entries(work);
    expect_exit(run_tool(NULL, "compile m.onnx -o fifo"), 1, "compile -o FIFO");
    EXPECT(kind_of("fifo") == S_IFIFO && writer_dir_entries(work) == before);
    expect_exit(run_tool(NULL, "compile m.onnx -o dir"), 1, "compile -o DIR");
    EXPECT(kind_of("dir") == S_IFDIR && writer_dir_entries(work) == before && writer_dir_entries(path) == 0);

    unit_section("run --outputs onto a FIFO is refused");
    char out[512];
    work_path(out, sizeof out, "fifo-out");
    REQUIRE(mkdir(out, 0777) == 0);
    snprintf(path, sizeof path, "%s/output_0.npy", out);
    REQUIRE(mkfifo(path, 0666) == 0);
    expect_exit(run_tool(NULL, "run p.kiln --input x.npy --outputs fifo-out -q"), 1, "run --outputs FIFO");
    EXPECT(kind_of("fifo-out/output_0.npy") == S_IFIFO && writer_dir_entries(out) == 1);

    if (geteuid() != 0) {
        printf("SKIPPED: the device-node check needs root (mknod); running as uid %u\n", (unsigned)geteuid());
        return;
    }
    work_path(path, sizeof path, "null");
    REQUIRE(mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0); /* a private /dev/null */
    before = writer_dir_entries(work);
    expect_exit(run_tool(NULL, "compile m.onnx -o null"), 1, "compile -o DEVICE");
    struct stat st;
    EXPECT(lstat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
    EXPECT(writer_dir_entries(work) == before);
}

static void test_link_outputs(void)
{
    unit_section("compile -o LINK replaces the program the link names");
    char path[512];
    work_path(path, sizeof path, "real.kiln");
    writer_write_text(path, "not a program yet");
    work_path(path, sizeof path, "link.kiln");
    REQUIRE(symlink("real.kiln", path) == 0);
    expect_exit(run_tool(NULL, "compile m.onnx -o link.kiln"), 0, "compile -o LINK");
    kiln_program_scratch q;
    EXPECT(kind_of("link.kiln") == S_IFLNK && is_program("real.kiln", &q));

    unit_section("scratch-size --write LINK records the group size in the program the link names");
    /* big.kiln needs more scratch than real.kiln: --write records big's need in both */
    kiln_program_scratch big, small;
    REQUIRE(is_program("big.kiln", &big) && is_program("p.kiln", &small) && big.need > small.need);
    expect_exit(run_tool(NULL, "scratch-size --write link.kiln big.kiln"), 0, "scratch-size --write LINK");
    EXPECT(kind_of("link.kiln") == S_IFLNK && is_program("real.kiln", &q) && q.group == big.need);
}

/* ---- item 2: an output that is an input --------------------------------------------------------- */

static void test_output_is_input(const uint8_t *model, size_t model_size)
{
    unit_section("compile refuses an output that is one of its models");
    char path[512];
    work_path(path, sizeof path, "m.onnx");
    expect_exit(run_tool(NULL, "compile m.onnx -o m.onnx"), 2, "compile m.onnx -o m.onnx");
    EXPECT(same_bytes("m.onnx", model, model_size));
    writer_write_bytes(path, model, model_size); /* each check on its own, when an old tool fails them */
    expect_exit(run_tool(NULL, "compile m.onnx --shards 1 -o m.onnx"), 2, "compile --shards 1 -o m.onnx");
    EXPECT(same_bytes("m.onnx", model, model_size));
    writer_write_bytes(path, model, model_size);
    work_path(path, sizeof path, "m-link.onnx");
    REQUIRE(symlink("m.onnx", path) == 0);
    expect_exit(run_tool(NULL, "compile m.onnx -o m-link.onnx"), 2, "compile m.onnx -o LINK-TO-m.onnx");
    EXPECT(same_bytes("m.onnx", model, model_size) && kind_of("m-link.onnx") == S_IFLNK);
    /* shard 0 of "-o s.shards" is s-shard0.kiln, here the model itself */
    work_path(path, sizeof path, "s-shard0.kiln");
    writer_write_bytes(path, model, model_size);
    expect_exit(run_tool(NULL, "compile s-shard0.kiln --shards 1 -o s.shards"), 2, "compile --shards onto the model");
    EXPECT(same_bytes("s-shard0.kiln", model, model_size) && kind_of("s.shards") == 0);
    work_path(path, sizeof path, "second.onnx");
    writer_write_bytes(path, model, model_size);
    expect_exit(run_tool(NULL, "compile --method a=m.onnx --method b=second.onnx -o second.onnx"), 2,
                "compile --method b=second.onnx -o second.onnx");
    EXPECT(same_bytes("second.onnx", model, model_size));

    unit_section("run refuses --outputs files that are its inputs");
    char dir[512];
    work_path(dir, sizeof dir, "io");
    REQUIRE(mkdir(dir, 0777) == 0);
    size_t x_size = 0;
    work_path(path, sizeof path, "x.npy");
    uint8_t *x = unit_read_file(path, &x_size);
    REQUIRE(x);
    work_path(path, sizeof path, "io/output_0.npy");
    writer_write_bytes(path, x, x_size);
    expect_exit(run_tool(NULL, "run p.kiln --input io/output_0.npy --outputs io -q"), 2, "run --input = output");
    EXPECT(same_bytes("io/output_0.npy", x, x_size));
    work_path(dir, sizeof dir, "in");
    REQUIRE(mkdir(dir, 0777) == 0);
    work_path(path, sizeof path, "in/input_0.npy");
    writer_write_bytes(path, x, x_size);
    work_path(dir, sizeof dir, "out");
    REQUIRE(mkdir(dir, 0777) == 0);
    work_path(path, sizeof path, "out/output_0.npy");
    REQUIRE(symlink("../in/input_0.npy", path) == 0);
    expect_exit(run_tool(NULL, "run p.kiln --inputs in --outputs out -q"), 2, "run --inputs file = output");
    EXPECT(same_bytes("in/input_0.npy", x, x_size));
    /* io/output_0.npy is a copy of the input, not the input: replacing it is fine */
    expect_exit(run_tool(NULL, "run p.kiln --inputs in --outputs io -q"), 0, "run --outputs onto a copy");
    EXPECT(kind_of("io/output_0.npy") == S_IFREG && !same_bytes("io/output_0.npy", x, x_size));
    EXPECT(same_bytes("in/input_0.npy", x, x_size));
    free(x);
}

/* ---- item 3: modes ------------------------------------------------------------------------------- */

static void test_modes(void)
{
    unit_section("an existing program keeps its mode; a new one gets 0666 & ~umask");
    char path[512];
    work_path(path, sizeof path, "private.kiln");
    writer_write_text(path, "old");
    REQUIRE(chmod(path, 0600) == 0);
    expect_exit(run_tool("022", "compile m.onnx -o private.kiln"), 0, "compile onto a 0600 file");
    EXPECT(writer_file_mode(path) == 0600);
    work_path(path, sizeof path, "new077.kiln");
    expect_exit(run_tool("077", "compile m.onnx -o new077.kiln"), 0, "compile, umask 077");
    EXPECT(writer_file_mode(path) == 0600);
    work_path(path, sizeof path, "new022.kiln");
    expect_exit(run_tool("022", "compile m.onnx -o new022.kiln"), 0, "compile, umask 022");
    EXPECT(writer_file_mode(path) == 0644);
    work_path(path, sizeof path, "out77");
    expect_exit(run_tool("077", "run p.kiln --input x.npy --outputs out77 -q"), 0, "run --outputs, umask 077");
    snprintf(path + strlen(path), sizeof path - strlen(path), "/output_0.npy");
    EXPECT(writer_file_mode(path) == 0600);
}

int main(int argc, char **argv)
{
    if (argc > 1) snprintf(tool, sizeof tool, "%s", argv[1]);
    else if (!writer_tool(tool, sizeof tool)) return 0;
    snprintf(root, sizeof root, "/tmp/kiln_cli_outputs_XXXXXX");
    REQUIRE(mkdtemp(root));
    snprintf(work, sizeof work, "%s/work", root);
    snprintf(logs, sizeof logs, "%s/logs", root);
    REQUIRE(mkdir(work, 0777) == 0 && mkdir(logs, 0777) == 0);

    uint8_t *model, *big;
    size_t model_size, big_size;
    two_partition_model(8, &model, &model_size);
    two_partition_model(64, &big, &big_size);
    char path[512];
    work_path(path, sizeof path, "m.onnx");
    writer_write_bytes(path, model, model_size);
    work_path(path, sizeof path, "big.onnx");
    writer_write_bytes(path, big, big_size);
    static float zeros[8 * 256];
    kiln_tensor x = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {8, 256}, .data = zeros};
    work_path(path, sizeof path, "x.npy");
    REQUIRE(kiln_npy_write(path, &x) == KILN_OK);
    REQUIRE(run_tool(NULL, "compile m.onnx -o p.kiln") == 0 && run_tool(NULL, "compile big.onnx -o big.kiln") == 0);

    test_special_outputs();
    test_link_outputs();
    test_modes();
    test_output_is_input(model, model_size); /* last: the old tool destroyed m.onnx here */

    free(model);
    free(big);
    writer_remove_dir(root);
    return unit_finish("test_cli_outputs");
}
