/* test_core_diag.c — the one diagnostics channel (core/diag.h): first failure wins, safe
 * truncation, sinks, escaping, copies of unterminated buffers; and that the library writes
 * nothing to stderr when it refuses bad input (every message goes to the caller's buffer), in
 * debug builds too, where KILN_CHECK used to print each refused condition.
 */
#include <fcntl.h>
#include <unistd.h>

#include "core/diag.h"
#include "unit_expect.h"

static void test_first_failure_wins(void)
{
    char text[64] = "stale";
    kiln_diag d = kiln_diag_over(text, sizeof text);
    kiln_diag_clear(&d);
    EXPECT(!kiln_diag_has_text(&d));
    EXPECT(strcmp(kiln_diag_text(&d), "") == 0);
    EXPECT_STATUS(kiln_diag_fail(&d, KILN_ERROR_MODEL, "node '%s' has %d inputs", "n1", 3), KILN_ERROR_MODEL);
    EXPECT(strcmp(text, "node 'n1' has 3 inputs") == 0);
    /* The outer caller's less specific line does not overwrite the inner one. */
    EXPECT_STATUS(kiln_diag_fail(&d, KILN_ERROR_IO, "loading failed"), KILN_ERROR_IO);
    EXPECT(strcmp(text, "node 'n1' has 3 inputs") == 0);
    EXPECT(kiln_diag_has_text(&d));
}

static void test_truncation_and_sinks(void)
{
    char text[8];
    memset(text, 'x', sizeof text);
    kiln_diag d = kiln_diag_over(text, sizeof text);
    kiln_diag_clear(&d);
    kiln_diag_fail(&d, KILN_ERROR_LIMIT, "%s", "a line much longer than eight bytes");
    EXPECT(strcmp(text, "a line ") == 0); /* size - 1 bytes and a NUL */

    kiln_diag sink = kiln_diag_over(NULL, 100);
    kiln_diag_clear(&sink);
    EXPECT_STATUS(kiln_diag_fail(&sink, KILN_ERROR_IO, "nowhere %d", 1), KILN_ERROR_IO);
    EXPECT(!kiln_diag_has_text(&sink));
    EXPECT(strcmp(kiln_diag_text(&sink), "") == 0);

    char one = 'x';
    kiln_diag zero = kiln_diag_over(&one, 0); /* size 0: a sink, the byte is not touched */
    kiln_diag_clear(&zero);
    kiln_diag_fail(&zero, KILN_ERROR_IO, "nowhere");
    EXPECT(one == 'x');
}

static void test_escaping(void)
{
    char text[64];
    kiln_diag d = kiln_diag_over(text, sizeof text);
    kiln_diag_clear(&d);
    kiln_diag_fail_escaping(&d, KILN_ERROR_MODEL, "node '%s'", "a\nb\x1b[31m");
    EXPECT(strcmp(text, "node 'a\\nb\\x1b[31m'") == 0);
    /* kiln_reject: the same channel over a pointer and size. */
    char msg[32] = "";
    EXPECT_STATUS(kiln_reject(KILN_ERROR_COMPILE_SPEC, msg, sizeof msg, "key '%s'", "k"), KILN_ERROR_COMPILE_SPEC);
    EXPECT(strcmp(msg, "key 'k'") == 0);
    EXPECT_STATUS(kiln_reject(KILN_ERROR_COMPILE_SPEC, msg, sizeof msg, "second"), KILN_ERROR_COMPILE_SPEC);
    EXPECT(strcmp(msg, "key 'k'") == 0);
}

static void test_copy(void)
{
    /* A backend may leave its buffer unterminated: the copy stops at its size. */
    char from_text[4] = {'a', 'b', 'c', 'd'};
    kiln_diag from = {from_text, sizeof from_text};
    char to_text[16];
    kiln_diag to = kiln_diag_over(to_text, sizeof to_text);
    kiln_diag_clear(&to);
    kiln_diag_copy(&to, &from);
    EXPECT(strcmp(to_text, "abcd") == 0);
    char small_text[3];
    kiln_diag small = kiln_diag_over(small_text, sizeof small_text);
    kiln_diag_clear(&small);
    kiln_diag_copy(&small, &to);
    EXPECT(strcmp(small_text, "ab") == 0);
    kiln_diag_copy(&small, &from); /* holds text already: unchanged */
    EXPECT(strcmp(small_text, "ab") == 0);
}

/* Refusals of bad bytes leave stderr empty: every failure speaks through the caller's buffer. */
static void test_nothing_on_stderr(void)
{
    char path[] = "/tmp/kiln-diag-stderr-XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd < 0) return;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);

    static const unsigned char garbage[64] = {0x4b, 0x49, 0x4c, 0x4e, 1, 2, 3};
    kiln_program *p = NULL;
    kiln_status open_st = kiln_program_open_memory(garbage, sizeof garbage, &p);
    char message[256] = "";
    kiln_compile_method m = {"forward", NULL, garbage, sizeof garbage};
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = 1};
    void *data = NULL;
    size_t size = 0;
    kiln_status compile_st = kiln_compile_memory(&opt, &m, 1, &data, &size, message, sizeof message);

    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    off_t written = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(path);
    EXPECT(open_st != KILN_OK && p == NULL);
    EXPECT(compile_st != KILN_OK && data == NULL);
    EXPECT(message[0] != '\0');
    EXPECT(written == 0);
}

int main(void)
{
    test_first_failure_wins();
    test_truncation_and_sinks();
    test_escaping();
    test_copy();
    test_nothing_on_stderr();
    return unit_finish("test_core_diag");
}
