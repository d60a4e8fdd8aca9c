/* program.c — opening, validating and reference-counting program files.
 *
 * Layer: runtime. The file is mapped read-only and its weights are read in place; its tables
 * (everything the runtime interprets) are copied and validated at open
 * (kiln_program_view_init_copy), so a file changed in place afterwards can change numbers in its
 * segments but never where the runtime reads or writes. The descriptor stays open so that
 * kiln_program_check_file can tell, with one fstat before each load and execute, that the mapped
 * file was rewritten or truncated, before anything touches a page of it that no longer exists.
 * A file replaced by rename keeps its old inode under the mapping and the descriptor, so it
 * passes the check and keeps working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/file_open.h"
#include "core/text_escape.h"
#include "runtime/handle_table.h"
#include "runtime/runtime.h"

static void program_free(kiln_program_obj *p)
{
    const kiln_allocator *a = kiln_allocator_default();
    if (p->mapping) munmap(p->mapping, p->mapping_size);
    if (p->fd >= 0) close(p->fd);
    kiln_program_free_metadata(p);
    kiln_free(a, p->tables);
    kiln_free(a, p->path);
    kiln_free(a, p);
}

/* Asks the kernel to read the first bytes of every segment now, all at once. Loading a module
   reads each delegate payload's header and tables; with the file not in the page cache, those
   reads were one disk round trip each, in turn (a 110M LLM: 24 payloads, about 7 ms each on a
   VM disk, 170-240 ms of load against 10 ms warm). Queued together they overlap. Advice only:
   its failure changes nothing. */
#define SEGMENT_HEAD_BYTES ((size_t)64 << 10)
static void prefetch_segment_heads(const kiln_program_obj *p)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (uint64_t i = 0; i < p->view.n_segments; i++) {
        const kiln_fmt_segment *seg = &p->view.segments[i];
        size_t start = (size_t)seg->offset / page * page;
        size_t end = (size_t)seg->offset + (seg->size < SEGMENT_HEAD_BYTES ? (size_t)seg->size : SEGMENT_HEAD_BYTES);
        if (end > p->mapping_size) end = p->mapping_size;
        if (start < end) (void)madvise((char *)p->mapping + start, end - start, MADV_WILLNEED);
    }
}

/* Validates (a copy of the tables of) data and returns a program handle. The program takes the
   mapping and the descriptor in every case: on failure they are released here. */
static kiln_status program_create(const void *data, size_t size, void *mapping, int fd, const struct stat *st,
                                  const char *path, kiln_program **out)
{
    const kiln_allocator *a = kiln_allocator_default();
    kiln_program_obj *p = KILN_NEW(a, kiln_program_obj);
    if (!p) {
        if (mapping) munmap(mapping, size);
        if (fd >= 0) close(fd);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    atomic_init(&p->refs, 1);
    p->mapping = mapping;
    p->mapping_size = mapping ? size : 0;
    p->fd = fd;
    if (st) {
        p->file_size = (int64_t)st->st_size;
        p->file_mtime = st->st_mtim;
    }
    kiln_status status = KILN_OK;
    if (path) {
        p->path = kiln_strdup(a, path);
        KILN_CHECK_GOTO(p->path, status, KILN_ERROR_OUT_OF_MEMORY);
    }
    KILN_TRY_GOTO(status, kiln_program_view_init_copy(&p->view, data, size, a, &p->tables));
    KILN_TRY_GOTO(status, kiln_program_copy_metadata(p));
    if (p->mapping) prefetch_segment_heads(p);
    KILN_TRY_GOTO(status, kiln_handle_add(KILN_HANDLE_PROGRAM, p, &p->handle));
    *out = (kiln_program *)p->handle;
    return KILN_OK;
fail:
    program_free(p);
    return status;
}

kiln_status kiln_program_open_memory(const void *data, size_t size, kiln_program **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(data, KILN_ERROR_INVALID_ARGUMENT);
    return program_create(data, size, NULL, -1, NULL, NULL, out);
}

kiln_status kiln_program_open(const char *path, kiln_program **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(path, KILN_ERROR_INVALID_ARGUMENT);
    int fd;
    struct stat st;
    KILN_TRY(kiln_file_open_read(path, &fd, &st, NULL)); /* a FIFO or device is refused, never waited on */
    if ((uint64_t)st.st_size < sizeof(kiln_fmt_header) || (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return KILN_ERROR_FORMAT; /* also covers empty files, which mmap refuses */
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return KILN_ERROR_IO;
    }
    return program_create(map, size, map, fd, &st, path, out);
}

kiln_status kiln_program_check_file(const kiln_program_obj *p, kiln_diag *diag)
{
    if (p->fd < 0) return KILN_OK;
    struct stat st;
    if (fstat(p->fd, &st) == 0 && (int64_t)st.st_size == p->file_size && st.st_mtim.tv_sec == p->file_mtime.tv_sec &&
        st.st_mtim.tv_nsec == p->file_mtime.tv_nsec)
        return KILN_OK;
    char shown[KILN_ESCAPED_NAME_SIZE];
    return kiln_diag_fail(diag, KILN_ERROR_IO, "program file %s changed since it was opened; reopen it",
                          kiln_text_escape(shown, sizeof shown, p->path, (size_t)-1));
}

void kiln_program_retain(kiln_program_obj *p) { atomic_fetch_add(&p->refs, 1); }

void kiln_program_release(kiln_program_obj *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1) program_free(p);
}

void kiln_program_close(kiln_program *handle)
{
    kiln_program_obj *p = kiln_handle_retire((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    if (p) kiln_program_release(p);
}

size_t kiln_program_method_count(const kiln_program *handle)
{
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    if (!p) return 0;
    size_t n = (size_t)p->view.n_methods;
    kiln_handle_unpin((uintptr_t)handle);
    return n;
}

const char *kiln_program_method_name(const kiln_program *handle, size_t i)
{
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    if (!p) return NULL;
    const char *name = i < p->view.n_methods ? kiln_view_string(&p->view, p->view.methods[i].name) : NULL;
    kiln_handle_unpin((uintptr_t)handle);
    return name;
}
