/* program.c — opening, validating and reference-counting program files.
 * Layer: runtime. The file is mapped read-only and never copied; weights are read in place. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"
#include "runtime/runtime.h"

static kiln_status program_create(const void *data, size_t size, void *mapping, kiln_program **out)
{
    kiln_program_view view;
    KILN_TRY(kiln_program_view_init(&view, data, size));
    kiln_program *p = KILN_NEW(kiln_allocator_default(), kiln_program);
    KILN_CHECK(p, KILN_ERROR_OUT_OF_MEMORY);
    atomic_init(&p->refs, 1);
    p->view = view;
    p->mapping = mapping;
    p->mapping_size = mapping ? size : 0;
    *out = p;
    return KILN_OK;
}

kiln_status kiln_program_open_memory(const void *data, size_t size, kiln_program **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(data, KILN_ERROR_INVALID_ARGUMENT);
    return program_create(data, size, NULL, out);
}

kiln_status kiln_program_open(const char *path, kiln_program **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    KILN_CHECK(path, KILN_ERROR_INVALID_ARGUMENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    KILN_CHECK(fd >= 0, KILN_ERROR_IO);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return KILN_ERROR_IO;
    }
    if ((uint64_t)st.st_size < sizeof(kiln_fmt_header)) {
        close(fd);
        return KILN_ERROR_FORMAT; /* also covers empty files, which mmap refuses */
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    KILN_CHECK(map != MAP_FAILED, KILN_ERROR_IO);
    kiln_status status = program_create(map, size, map, out);
    if (status != KILN_OK) munmap(map, size);
    return status;
}

void kiln_program_retain(kiln_program *p) { atomic_fetch_add(&p->refs, 1); }

void kiln_program_release(kiln_program *p)
{
    if (atomic_fetch_sub(&p->refs, 1) != 1) return;
    if (p->mapping) munmap(p->mapping, p->mapping_size);
    kiln_free(kiln_allocator_default(), p);
}

void kiln_program_close(kiln_program *p)
{
    if (p) kiln_program_release(p);
}

size_t kiln_program_method_count(const kiln_program *p) { return p ? (size_t)p->view.n_methods : 0; }

const char *kiln_program_method_name(const kiln_program *p, size_t i)
{
    if (!p || i >= p->view.n_methods) return NULL;
    return kiln_view_string(&p->view, p->view.methods[i].name);
}
