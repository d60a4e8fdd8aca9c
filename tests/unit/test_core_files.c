/* test_core_files.c — unit tests of src/core's file opening (regular files only, a FIFO never
 * blocks) and of the escaping of untrusted strings for messages.
 *
 * Layer: tests (core). Writes only inside its own mkdtemp folder under $TMPDIR or /tmp.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/file_open.h"
#include "core/text_escape.h"
#include "unit_expect.h"

static void test_open_kinds(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512];
    snprintf(dir, sizeof dir, "%s/kiln-core-files-XXXXXX", tmp);
    EXPECT(mkdtemp(dir) != NULL);
    char regular[600], fifo[600], missing[600], sock[600];
    snprintf(regular, sizeof regular, "%s/regular", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(missing, sizeof missing, "%s/missing", dir);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    int w = open(regular, O_WRONLY | O_CREAT | O_EXCL, 0600);
    EXPECT(w >= 0 && write(w, "abc", 3) == 3);
    close(w);
    EXPECT(mkfifo(fifo, 0600) == 0);

    int fd;
    struct stat st;
    const char *why = NULL;
    EXPECT_STATUS(kiln_file_open_read(regular, &fd, &st, &why), KILN_OK);
    EXPECT(fd >= 0 && st.st_size == 3 && strcmp(why, "") == 0);
    /* The descriptor is blocking again: a read returns the bytes, not EAGAIN. */
    EXPECT((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
    char buf[4];
    EXPECT(read(fd, buf, sizeof buf) == 3);
    close(fd);

    /* A FIFO without a writer would block open() forever without O_NONBLOCK: this returns. */
    EXPECT_STATUS(kiln_file_open_read(fifo, &fd, &st, &why), KILN_ERROR_IO);
    EXPECT(fd == -1 && strstr(why, "FIFO") != NULL);
    EXPECT_STATUS(kiln_file_open_read(dir, &fd, NULL, &why), KILN_ERROR_IO);
    EXPECT(fd == -1 && strstr(why, "directory") != NULL);
    EXPECT_STATUS(kiln_file_open_read("/dev/null", &fd, NULL, &why), KILN_ERROR_IO);
    EXPECT(fd == -1 && strstr(why, "character device") != NULL);
    EXPECT_STATUS(kiln_file_open_read(missing, &fd, NULL, &why), KILN_ERROR_IO);
    EXPECT(fd == -1 && strstr(why, "No such file") != NULL);
    EXPECT_STATUS(kiln_file_open_read(NULL, &fd, NULL, &why), KILN_ERROR_INVALID_ARGUMENT);

    /* A bound unix socket: open() fails on it (ENXIO), which is still one clear refusal. */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (s >= 0 && strlen(sock) < sizeof addr.sun_path) {
        memcpy(addr.sun_path, sock, strlen(sock) + 1);
        EXPECT(bind(s, (struct sockaddr *)&addr, sizeof addr) == 0);
        EXPECT_STATUS(kiln_file_open_read(sock, &fd, NULL, &why), KILN_ERROR_IO);
        EXPECT(fd == -1);
        unlink(sock);
    }
    if (s >= 0) close(s);

    EXPECT(strcmp(kiln_file_kind_name(S_IFIFO), "a FIFO") == 0);
    EXPECT(strcmp(kiln_file_kind_name(S_IFREG), "a regular file") == 0);
    unlink(regular);
    unlink(fifo);
    rmdir(dir);
}

static void expect_escape(const char *src, size_t n, const char *want)
{
    char out[64];
    kiln_text_escape(out, sizeof out, src, n);
    EXPECT(strcmp(out, want) == 0);
    if (strcmp(out, want) != 0) fprintf(stderr, "  escaped to \"%s\", wanted \"%s\"\n", out, want);
}

static void test_escape(void)
{
    expect_escape("conv_1", (size_t)-1, "conv_1");
    expect_escape("a\nb", (size_t)-1, "a\\nb");
    expect_escape("\x1b[31mred", (size_t)-1, "\\x1b[31mred");
    expect_escape("back\\slash", (size_t)-1, "back\\\\slash");
    expect_escape("Add\0Evil", 8, "Add\\x00Evil");
    expect_escape("tab\there\r", (size_t)-1, "tab\\there\\r");
    expect_escape("\x7f", (size_t)-1, "\\x7f");
    /* Well-formed UTF-8 stays readable; C1 controls, overlong forms and stray bytes do not. */
    expect_escape("caf\xc3\xa9", (size_t)-1, "caf\xc3\xa9");
    expect_escape("\xe6\x97\xa5", (size_t)-1, "\xe6\x97\xa5");
    expect_escape("\xc2\x9b" "2J", (size_t)-1, "\\xc2\\x9b2J");
    expect_escape("\xc0\xaf", (size_t)-1, "\\xc0\\xaf");
    expect_escape("\xed\xa0\x80", (size_t)-1, "\\xed\\xa0\\x80");
    expect_escape("\xe6\x97", (size_t)-1, "\\xe6\\x97");
    expect_escape(NULL, 0, "(null)");
    /* Truncation keeps whole escapes and the terminator. */
    char small[6];
    kiln_text_escape(small, sizeof small, "ab\ncd", (size_t)-1);
    EXPECT(strcmp(small, "ab\\nc") == 0);
    kiln_text_escape(small, 4, "\x01\x02", (size_t)-1);
    EXPECT(strcmp(small, "") == 0);
    kiln_text_escape(small, 5, "\x01\x02", (size_t)-1);
    EXPECT(strcmp(small, "\\x01") == 0);
}

int main(void)
{
    test_open_kinds();
    test_escape();
    return unit_finish("test_core_files");
}
