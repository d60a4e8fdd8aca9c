/* program_scratch.c — scratch facts and group sizes of a program's cpu context binaries, and
 * the atomic file write (see program_scratch.h).
 *
 * Layer: compiler. The program is validated by the format reader before any reference is
 * followed; each context binary is read and patched through the cpu writer's own helpers
 * (backends/cpu/aot/ctxbin_group.h). A segment shared by several delegate calls is handled
 * once. Setting a group size is two passes — check every binary, then patch — so a refused
 * size leaves the bytes untouched.
 */
#include "compiler/program_scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/cpu/aot/ctxbin_group.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/hash.h"
#include "format/program_reader.h"

typedef kiln_status (*segment_fn)(void *arg, const kiln_program_view *v, uint32_t segment);

/* Call fn once for every distinct segment that a `cpu` DELEGATE instruction names. */
static kiln_status for_each_cpu_segment(const kiln_program_view *v, segment_fn fn, void *arg)
{
    bool *seen = kiln_alloc_zero(kiln_allocator_default(), (size_t)v->n_segments + 1, 1);
    KILN_CHECK(seen, KILN_ERROR_OUT_OF_MEMORY);
    kiln_status st = KILN_OK;
    for (uint64_t k = 0; k < v->n_instrs && st == KILN_OK; k++) {
        const kiln_fmt_instr *in = &v->instrs[k];
        if (in->kind != KILN_INSTR_DELEGATE || strcmp(kiln_view_string(v, in->op), "cpu") != 0) continue;
        if (seen[in->segment]) continue;
        seen[in->segment] = true;
        st = fn(arg, v, in->segment);
    }
    kiln_free(kiln_allocator_default(), seen);
    return st;
}

static kiln_status segment_info(const kiln_program_view *v, uint32_t segment, uint64_t *need, uint64_t *group)
{
    const kiln_fmt_segment *s = &v->segments[segment];
    KILN_CHECK(s->size <= SIZE_MAX, KILN_ERROR_INCOMPATIBLE);
    return kiln_cpu_aot_scratch_info(kiln_view_segment_data(v, segment), (size_t)s->size, need, group);
}

static kiln_status add_to_query(void *arg, const kiln_program_view *v, uint32_t segment)
{
    kiln_program_scratch *q = arg;
    uint64_t need, group;
    KILN_TRY(segment_info(v, segment, &need, &group));
    if (need > q->need) q->need = need;
    if (q->n_binaries > 0 && group != q->group) q->groups_differ = true;
    if (q->n_binaries == 0 || group > q->group) q->group = group;
    q->n_binaries++;
    return KILN_OK;
}

kiln_status kiln_program_scratch_query(const void *data, size_t size, kiln_program_scratch *out)
{
    memset(out, 0, sizeof *out);
    kiln_program_view v;
    KILN_TRY(kiln_program_view_init(&v, data, size));
    return for_each_cpu_segment(&v, add_to_query, out);
}

typedef struct group_patch {
    uint8_t *base;              /* the writable program bytes */
    uint64_t group_size;
    bool write;                 /* false: check pass */
} group_patch;

static kiln_status patch_segment(void *arg, const kiln_program_view *v, uint32_t segment)
{
    group_patch *p = arg;
    uint64_t need, group;
    KILN_TRY(segment_info(v, segment, &need, &group));
    KILN_CHECK(p->group_size == 0 || p->group_size >= need, KILN_ERROR_INVALID_ARGUMENT);
    if (!p->write) return KILN_OK;
    kiln_fmt_segment s = v->segments[segment];
    uint8_t *bytes = p->base + s.offset;
    KILN_TRY(kiln_cpu_aot_set_group_scratch(bytes, (size_t)s.size, p->group_size));
    s.hash = kiln_hash64(bytes, (size_t)s.size, 0);
    size_t at = (size_t)((const uint8_t *)&v->segments[segment] - v->base);
    memcpy(p->base + at, &s, sizeof s);
    return KILN_OK;
}

kiln_status kiln_program_scratch_set_group(void *data, size_t size, uint64_t group_size)
{
    kiln_program_view v;
    KILN_TRY(kiln_program_view_init(&v, data, size));
    group_patch p = {data, group_size, false};
    KILN_TRY(for_each_cpu_segment(&v, patch_segment, &p));
    p.write = true;
    return for_each_cpu_segment(&v, patch_segment, &p);
}

kiln_status kiln_write_file_atomic(const char *path, const void *data, size_t size)
{
    KILN_CHECK(path && (data || size == 0), KILN_ERROR_INVALID_ARGUMENT);
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    KILN_CHECK(tmp, KILN_ERROR_OUT_OF_MEMORY);
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return KILN_ERROR_IO;
    }
    (void)fchmod(fd, 0644); /* mkstemp creates 0600; programs and manifests are meant to be shared */
    FILE *f = fdopen(fd, "wb");
    bool ok = f != NULL;
    if (!f) close(fd);
    if (ok) ok = size == 0 || fwrite(data, 1, size, f) == size;
    if (f) ok = (fclose(f) == 0) && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) remove(tmp);
    free(tmp);
    return ok ? KILN_OK : KILN_ERROR_IO;
}
