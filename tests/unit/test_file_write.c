/* test_file_write.c — the one atomic writer (src/core/file_write.h) and its three users' write
 * paths (issue 12, items 1, 3 and 4).
 *
 * Layer: tests (core/file_write.h; tools/io/npy.h and compiler/program_scratch.h for the users).
 * Checks, each in a private temporary directory:
 *  - links: a link (relative, absolute, a chain of them) is followed and the file it names is
 *    replaced, the link stays a link; a dangling link creates the file it names; a link into
 *    another directory gets its temporary file there; a link loop is refused;
 *  - a FIFO, a directory, a socket, a link to a FIFO and (as root) a character device made with
 *    mknod (the numbers of /dev/null) at the path are refused with one line, stay what they were,
 *    and nothing is created — no file operation is even attempted;
 *  - modes: a new file gets 0666 & ~umask for several umasks; an existing file keeps its mode
 *    (0600 stays private, 0755 stays executable) and, as root, its owner and group;
 *  - kiln_file_same: same file directly, through a link and through a hard link; not for two
 *    files or an absent one;
 *  - every file operation failed in turn (fault_io.h) for the writer itself, for the .npy write
 *    path (kiln_npy_write_io) and for the `kiln scratch-size --write` path
 *    (kiln_program_scratch_write): the destination keeps its previous content or stays absent,
 *    no temporary file is left.
 * The compile path's fault loop is test_compile_faults.c; the tool's behaviour test_cli_outputs.c.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "compiler/program_scratch.h"
#include "core/alloc.h"
#include "fault_io.h"
#include "io/npy.h"
#include "writer_support.h"

static char root[256];

static void path_in(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", root, name); }

static kiln_status write_text(const kiln_file_io *io, const char *path, const char *text, char *message,
                              size_t size)
{
    kiln_file_piece piece = {text, strlen(text)};
    return kiln_file_write_atomic(io, NULL, path, &piece, 1, message, size);
}

static bool holds(const char *path, const char *text) { return writer_file_is(path, text, strlen(text)); }

static bool is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* ---- pieces and links ---------------------------------------------------------------------------- */

static void test_pieces(void)
{
    unit_section("pieces are written in order");
    char path[512];
    path_in(path, sizeof path, "pieces.bin");
    kiln_file_piece pieces[3] = {{"head,", 5}, {NULL, 0}, {"tail", 4}};
    char message[512] = "";
    EXPECT_OK(kiln_file_write_atomic(NULL, NULL, path, pieces, 3, message, sizeof message));
    EXPECT(holds(path, "head,tail"));
    EXPECT_STATUS(kiln_file_write_atomic(NULL, NULL, "", pieces, 3, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    kiln_file_piece bad = {NULL, 3};
    EXPECT_STATUS(kiln_file_write_atomic(NULL, NULL, path, &bad, 1, NULL, 0), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(holds(path, "head,tail"));
    unlink(path);
}

static void test_links(void)
{
    unit_section("links are followed to the file they name");
    char real[512], rel[512], abs_link[512], chain[512], message[512] = "";
    path_in(real, sizeof real, "real.kiln");
    path_in(rel, sizeof rel, "rel.kiln");
    path_in(abs_link, sizeof abs_link, "abs.kiln");
    path_in(chain, sizeof chain, "chain.kiln");
    writer_write_text(real, "old");
    REQUIRE(symlink("real.kiln", rel) == 0 && symlink(real, abs_link) == 0 && symlink("abs.kiln", chain) == 0);
    size_t before = writer_dir_entries(root);

    EXPECT_OK(write_text(NULL, rel, "through a relative link", message, sizeof message));
    EXPECT(is_link(rel) && holds(real, "through a relative link"));
    EXPECT_OK(write_text(NULL, abs_link, "through an absolute link", message, sizeof message));
    EXPECT(is_link(abs_link) && holds(real, "through an absolute link"));
    EXPECT_OK(write_text(NULL, chain, "through a chain", message, sizeof message));
    EXPECT(is_link(chain) && is_link(abs_link) && holds(real, "through a chain"));
    EXPECT(writer_dir_entries(root) == before); /* no temporary file left, nothing else created */

    unit_section("a dangling link creates the file it names");
    char dangling[512], named[512];
    path_in(dangling, sizeof dangling, "dangling.kiln");
    path_in(named, sizeof named, "named.kiln");
    REQUIRE(symlink("named.kiln", dangling) == 0);
    EXPECT_OK(write_text(NULL, dangling, "created", message, sizeof message));
    EXPECT(is_link(dangling) && holds(named, "created"));

    unit_section("a link into another directory: the temporary file goes there");
    char a[512], b[512], link[512], target[512];
    path_in(a, sizeof a, "a");
    path_in(b, sizeof b, "b");
    REQUIRE(mkdir(a, 0777) == 0 && mkdir(b, 0777) == 0);
    snprintf(link, sizeof link, "%s/out.kiln", a);
    snprintf(target, sizeof target, "%s/out.kiln", b);
    REQUIRE(symlink("../b/out.kiln", link) == 0);
    fault_io f;
    kiln_file_io io = fault_io_make(&f);
    EXPECT_OK(write_text(&io, link, "across", message, sizeof message));
    EXPECT(is_link(link) && holds(target, "across"));
    EXPECT(strncmp(f.temp, a, strlen(a)) == 0 && strstr(f.temp, "/../b/out.kiln.tmp-") != NULL);
    EXPECT(writer_dir_entries(a) == 1 && writer_dir_entries(b) == 1);

    unit_section("a link loop is refused");
    char loop[512];
    path_in(loop, sizeof loop, "loop.kiln");
    REQUIRE(symlink("loop.kiln", loop) == 0);
    before = writer_dir_entries(root);
    message[0] = '\0';
    EXPECT_STATUS(write_text(NULL, loop, "never", message, sizeof message), KILN_ERROR_IO);
    EXPECT(strstr(message, loop) && strstr(message, "symbolic links") && !strchr(message, '\n'));
    EXPECT(writer_dir_entries(root) == before && is_link(loop));
}

/* ---- what is not a regular file ------------------------------------------------------------------ */

/* path exists and is of kind `kind` (S_IFIFO, ...): the write is refused before any file
   operation, with one line naming the path, and leaves the directory as it was. */
static void expect_refused(const char *path, mode_t kind, const char *phrase)
{
    size_t before = writer_dir_entries(root);
    fault_io f;
    kiln_file_io io = fault_io_make(&f);
    char message[512] = "";
    EXPECT_STATUS(write_text(&io, path, "never", message, sizeof message), KILN_ERROR_IO);
    unit_checks++;
    if (!strstr(message, path) || !strstr(message, phrase) || strchr(message, '\n')) {
        fprintf(stderr, "%s: unexpected message '%s'\n", path, message);
        unit_failures++;
    }
    EXPECT(f.n_ops == 0); /* not even a temporary file was created */
    EXPECT(writer_dir_entries(root) == before);
    struct stat st;
    EXPECT(stat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind);
}

static void test_not_regular(void)
{
    unit_section("a FIFO, a directory, a socket or a device at the path is refused");
    char fifo[512], dir[512], sock[512], to_fifo[512], dev[512];
    path_in(fifo, sizeof fifo, "fifo");
    path_in(dir, sizeof dir, "dir");
    path_in(sock, sizeof sock, "sock");
    path_in(to_fifo, sizeof to_fifo, "to_fifo.kiln");
    path_in(dev, sizeof dev, "null");
    REQUIRE(mkfifo(fifo, 0666) == 0 && mkdir(dir, 0777) == 0 && symlink("fifo", to_fifo) == 0);
    expect_refused(fifo, S_IFIFO, "it is a FIFO, not a regular file");
    expect_refused(to_fifo, S_IFIFO, "it is a FIFO, not a regular file");
    EXPECT(is_link(to_fifo));
    expect_refused(dir, S_IFDIR, "it is a directory, not a regular file");

    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (s >= 0 && strlen(sock) < sizeof addr.sun_path) {
        memcpy(addr.sun_path, sock, strlen(sock) + 1);
        REQUIRE(bind(s, (const struct sockaddr *)&addr, sizeof addr) == 0);
        expect_refused(sock, S_IFSOCK, "it is a socket, not a regular file");
    }
    if (s >= 0) close(s);

    if (geteuid() != 0) {
        printf("SKIPPED: the device-node check needs root (mknod); running as uid %u\n", (unsigned)geteuid());
        return;
    }
    REQUIRE(mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0); /* a private /dev/null */
    expect_refused(dev, S_IFCHR, "it is a character device, not a regular file");
    struct stat st;
    EXPECT(stat(dev, &st) == 0 && st.st_rdev == makedev(1, 3));

    unit_section("the .npy writer refuses the same, saying why");
    float v[2] = {1, 2};
    kiln_tensor t = {.dtype = KILN_DTYPE_F32, .rank = 1, .shape = {2}, .data = v};
    char message[512] = "";
    EXPECT_STATUS(kiln_npy_write_io(NULL, dev, &t, message, sizeof message), KILN_ERROR_IO);
    EXPECT(strstr(message, "character device") != NULL);
    EXPECT_STATUS(kiln_npy_write(fifo, &t), KILN_ERROR_IO);
    EXPECT(stat(dev, &st) == 0 && S_ISCHR(st.st_mode) && stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
}

/* ---- modes and owners ---------------------------------------------------------------------------- */

static void test_modes(void)
{
    unit_section("a new file gets 0666 & ~umask");
    char path[512], message[512] = "";
    path_in(path, sizeof path, "mode.kiln");
    static const mode_t masks[] = {022, 077, 027, 0};
    mode_t saved = umask(022);
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        unlink(path);
        umask(masks[i]);
        EXPECT_OK(write_text(NULL, path, "new", message, sizeof message));
        unit_checks++;
        if (writer_file_mode(path) != (int)(0666 & ~masks[i])) {
            fprintf(stderr, "umask %03o: new file has mode %03o, wanted %03o\n", (unsigned)masks[i],
                    (unsigned)writer_file_mode(path), (unsigned)(0666 & ~masks[i]));
            unit_failures++;
        }
    }

    unit_section("an existing file keeps its mode, whatever the umask");
    umask(022);
    static const mode_t kept[] = {0600, 0640, 0755, 0444};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        unlink(path);
        writer_write_text(path, "old");
        REQUIRE(chmod(path, kept[i]) == 0);
        EXPECT_OK(write_text(NULL, path, "replaced", message, sizeof message));
        EXPECT(holds(path, "replaced"));
        unit_checks++;
        if (writer_file_mode(path) != (int)kept[i]) {
            fprintf(stderr, "existing file of mode %03o became %03o\n", (unsigned)kept[i],
                    (unsigned)writer_file_mode(path));
            unit_failures++;
        }
    }
    char link[512];
    path_in(link, sizeof link, "mode-link.kiln");
    REQUIRE(chmod(path, 0600) == 0 && symlink("mode.kiln", link) == 0);
    EXPECT_OK(write_text(NULL, link, "via link", message, sizeof message));
    EXPECT(writer_file_mode(path) == 0600 && holds(path, "via link"));
    umask(saved);

    if (geteuid() != 0) {
        printf("SKIPPED: keeping another user's ownership needs root; running as uid %u\n", (unsigned)geteuid());
        return;
    }
    unit_section("as root, an existing file keeps its owner and group");
    REQUIRE(chown(path, 4242, 4343) == 0 && chmod(path, 0640) == 0);
    EXPECT_OK(write_text(NULL, path, "owned", message, sizeof message));
    struct stat st;
    EXPECT(stat(path, &st) == 0 && st.st_uid == 4242 && st.st_gid == 4343 && (st.st_mode & 07777) == 0640);
}

static void test_same_file(void)
{
    unit_section("kiln_file_same: after links and for hard links, never for absent files");
    char a[512], b[512], soft[512], hard[512], absent[512];
    path_in(a, sizeof a, "same-a");
    path_in(b, sizeof b, "same-b");
    path_in(soft, sizeof soft, "same-link");
    path_in(hard, sizeof hard, "same-hard");
    path_in(absent, sizeof absent, "same-absent");
    writer_write_text(a, "a");
    writer_write_text(b, "a");
    REQUIRE(symlink("same-a", soft) == 0 && link(a, hard) == 0);
    EXPECT(kiln_file_same(a, a) && kiln_file_same(a, soft) && kiln_file_same(hard, soft));
    EXPECT(!kiln_file_same(a, b) && !kiln_file_same(a, absent) && !kiln_file_same(absent, absent));
    EXPECT(!kiln_file_same(NULL, a));
}

/* ---- every file operation failed, for each user ------------------------------------------------- */

static kiln_status core_write(void *arg, const kiln_file_io *io, char *message, size_t size)
{
    const fault_target *t = arg;
    static const char big[10000] = "big piece"; /* several short writes */
    kiln_file_piece pieces[3] = {{"head", 4}, {big, sizeof big}, {"tail", 4}};
    return kiln_file_write_atomic(io, NULL, t->path, pieces, 3, message, size);
}

static kiln_status npy_write(void *arg, const kiln_file_io *io, char *message, size_t size)
{
    const fault_target *t = arg;
    static float values[3000];
    kiln_tensor tensor = {.dtype = KILN_DTYPE_F32, .rank = 2, .shape = {30, 100}, .data = values};
    return kiln_npy_write_io(io, t->path, &tensor, message, size);
}

typedef struct scratch_job {
    fault_target t;
    void *program;
    size_t size;
    uint64_t need;
} scratch_job;

static kiln_status scratch_write(void *arg, const kiln_file_io *io, char *message, size_t size)
{
    scratch_job *j = arg;
    return kiln_program_scratch_write(io, j->t.path, j->program, j->size, j->need, message, size);
}

static void test_fault_loops(void)
{
    char dir[512], path[600];
    path_in(dir, sizeof dir, "faults");
    REQUIRE(mkdir(dir, 0777) == 0);
    snprintf(path, sizeof path, "%s/out.bin", dir);
    fault_target t = {dir, path, "out.bin"};

    unit_section("the writer: every file operation failed in turn");
    fault_io_each_op("kiln_file_write_atomic", &t, core_write, &t);
    unit_section("the .npy write path: every file operation failed in turn");
    fault_io_each_op("kiln_npy_write_io", &t, npy_write, &t);

    unit_section("the scratch-size --write path: every file operation failed in turn");
    uint8_t *model;
    size_t model_size;
    two_partition_model(8, &model, &model_size);
    kiln_compile_options opt = {.struct_size = sizeof opt};
    kiln_compile_method m = {"forward", NULL, model, model_size};
    scratch_job j = {t, NULL, 0, 0};
    char message[512] = "";
    EXPECT_OK(kiln_compile_memory(&opt, &m, 1, &j.program, &j.size, message, sizeof message));
    kiln_program_scratch q;
    REQUIRE(j.program && kiln_program_scratch_query(j.program, j.size, &q) == KILN_OK && q.need > 0);
    j.need = q.need + 4096; /* a size no compile records by itself */
    fault_io_each_op("kiln_program_scratch_write", &j.t, scratch_write, &j);
    /* the last clean write left the program with the group size recorded */
    REQUIRE(kiln_program_scratch_write(NULL, path, j.program, j.size, j.need, message, sizeof message) == KILN_OK);
    size_t size = 0;
    uint8_t *written = unit_read_file(path, &size);
    EXPECT(written && kiln_program_scratch_query(written, size, &q) == KILN_OK && q.group == j.need &&
           !q.groups_differ);
    free(written);
    kiln_free(kiln_allocator_default(), j.program);
    free(model);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/kiln_file_write_XXXXXX");
    REQUIRE(mkdtemp(root));
    test_pieces();
    test_links();
    test_not_regular();
    test_modes();
    test_same_file();
    test_fault_loops();
    writer_remove_dir(root);
    return unit_finish("test_file_write");
}
