/* read_file.c — whole regular files into memory (see read_file.h). Layer: tools. */
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/file_open.h"

#define READ_CHUNK ((size_t)1 << 30)

static kiln_status say(char *why, size_t why_size, kiln_status st, const char *text)
{
    if (why && why_size) snprintf(why, why_size, "%s", text);
    return st;
}

kiln_status cli_read_file(const char *path, const kiln_allocator *a, uint64_t max_size, uint8_t **data, size_t *size,
                          char *why, size_t why_size)
{
    *data = NULL;
    *size = 0;
    if (why && why_size) why[0] = '\0';
    int fd;
    struct stat info;
    const char *phrase;
    if (kiln_file_open_read(path, &fd, &info, &phrase) != KILN_OK) return say(why, why_size, KILN_ERROR_IO, phrase);
    uint64_t n = (uint64_t)info.st_size;
    kiln_status st = KILN_OK;
    uint8_t *buf = NULL;
    if (n > max_size || n >= SIZE_MAX) {
        st = KILN_ERROR_LIMIT;
        if (why && why_size)
            snprintf(why, why_size, "%llu bytes, more than the %llu this reads", (unsigned long long)n,
                     (unsigned long long)max_size);
    } else if (!(buf = kiln_alloc(a, (size_t)n + 1, 64))) {
        st = say(why, why_size, KILN_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t done = 0; st == KILN_OK && done < n;) {
        size_t want = (size_t)n - done < READ_CHUNK ? (size_t)n - done : READ_CHUNK;
        ssize_t got = pread(fd, buf + done, want, (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) st = say(why, why_size, KILN_ERROR_IO, strerror(errno));
        else if (got == 0) st = say(why, why_size, KILN_ERROR_IO, "the file shrank while it was read");
        else done += (size_t)got;
    }
    close(fd);
    if (st != KILN_OK) {
        kiln_free(a, buf);
        return st;
    }
    buf[n] = '\0';
    *data = buf;
    *size = (size_t)n;
    return KILN_OK;
}
