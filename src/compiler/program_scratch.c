/* program_scratch.c — scratch facts and group sizes of a program's backend payloads, and
 * writing a program so changed (see program_scratch.h).
 *
 * Layer: compiler. The program is validated by the format reader before any reference is
 * followed; each payload is read and patched through its backend's own hooks (scratch_info,
 * set_group_scratch of the built-in table, compiler_backend.h); backends without them, and
 * delegate calls naming no built-in backend, take no part. A segment shared by several delegate calls is handled
 * once. Setting a group size is two passes — check every binary, then patch — so a refused
 * size leaves the bytes untouched.
 */
#include "compiler/program_scratch.h"

#include <stdio.h>
#include <string.h>

#include "compiler/compiler_backend.h"
#include "core/check.h"
#include "core/hash.h"
#include "format/program_reader.h"

/* The built-in backend with scratch hooks that a DELEGATE instruction calls, or NULL. */
static const kiln_compiler_backend *scratch_backend(const kiln_program_view *v, const kiln_fmt_instr *in)
{
    if (in->kind != KILN_INSTR_DELEGATE) return NULL;
    const kiln_compiler_backend *b = kiln_compiler_backend_find(kiln_view_string(v, in->op));
    return b && b->scratch_info && b->set_group_scratch ? b : NULL;
}

typedef kiln_status (*segment_fn)(void *arg, const kiln_program_view *v, const kiln_compiler_backend *b,
                                  uint32_t segment);

/* Call fn once for every distinct segment that a DELEGATE instruction of such a backend names. An earlier
   instruction naming the same segment is looked for rather than remembered: delegate calls are
   few (tens), and a search needs no allocation. */
static kiln_status for_each_segment(const kiln_program_view *v, segment_fn fn, void *arg)
{
    for (uint64_t k = 0; k < v->n_instrs; k++) {
        const kiln_fmt_instr *in = &v->instrs[k];
        const kiln_compiler_backend *b = scratch_backend(v, in);
        if (!b) continue;
        bool seen = false;
        for (uint64_t j = 0; j < k && !seen; j++)
            seen = scratch_backend(v, &v->instrs[j]) && v->instrs[j].segment == in->segment;
        if (!seen) KILN_TRY(fn(arg, v, b, in->segment));
    }
    return KILN_OK;
}

static kiln_status segment_info(const kiln_program_view *v, const kiln_compiler_backend *b, uint32_t segment,
                                 uint64_t *need, uint64_t *group)
{
    const kiln_fmt_segment *s = &v->segments[segment];
    KILN_CHECK(s->size <= SIZE_MAX, KILN_ERROR_INCOMPATIBLE);
    return b->scratch_info(kiln_view_segment_data(v, segment), (size_t)s->size, need, group);
}

static kiln_status add_to_query(void *arg, const kiln_program_view *v, const kiln_compiler_backend *b,
                                uint32_t segment)
{
    kiln_program_scratch *q = arg;
    uint64_t need, group;
    KILN_TRY(segment_info(v, b, segment, &need, &group));
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
    return for_each_segment(&v, add_to_query, out);
}

typedef struct payload_refusal {
    uint32_t *segment;
    char *message;
    size_t message_size;
} payload_refusal;

static kiln_status check_payload(void *arg, const kiln_program_view *v, const kiln_compiler_backend *b,
                                 uint32_t segment)
{
    payload_refusal *r = arg;
    const kiln_fmt_segment *s = &v->segments[segment];
    KILN_CHECK(s->size <= SIZE_MAX, KILN_ERROR_INCOMPATIBLE);
    kiln_payload_check check;
    KILN_TRY(kiln_payload_check_run(b, kiln_view_segment_data(v, segment), (size_t)s->size, &check));
    if (check.status == KILN_OK) return KILN_OK;
    *r->segment = segment;
    snprintf(r->message, r->message_size, "%s", check.message[0] ? check.message : kiln_status_str(check.status));
    return check.status;
}

kiln_status kiln_program_scratch_check(const void *data, size_t size, uint32_t *segment, char *message,
                                       size_t message_size)
{
    kiln_program_view v;
    KILN_TRY(kiln_program_view_init(&v, data, size));
    payload_refusal r = {segment, message, message_size};
    return for_each_segment(&v, check_payload, &r);
}

typedef struct group_patch {
    uint8_t *base;              /* the writable program bytes */
    uint64_t group_size;
    bool write;                 /* false: check pass */
} group_patch;

static kiln_status patch_segment(void *arg, const kiln_program_view *v, const kiln_compiler_backend *b,
                                 uint32_t segment)
{
    group_patch *p = arg;
    uint64_t need, group;
    KILN_TRY(segment_info(v, b, segment, &need, &group));
    KILN_CHECK(p->group_size == 0 || p->group_size >= need, KILN_ERROR_INVALID_ARGUMENT);
    if (!p->write) return KILN_OK;
    kiln_fmt_segment s = v->segments[segment];
    uint8_t *bytes = p->base + s.offset;
    KILN_TRY(b->set_group_scratch(bytes, (size_t)s.size, p->group_size));
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
    KILN_TRY(for_each_segment(&v, patch_segment, &p));
    p.write = true;
    return for_each_segment(&v, patch_segment, &p);
}

kiln_status kiln_program_scratch_write(const kiln_file_io *io, const char *path, void *data, size_t size,
                                       uint64_t group_size, char *message, size_t message_size)
{
    kiln_status st = kiln_program_scratch_set_group(data, size, group_size);
    if (st != KILN_OK) {
        if (message && message_size && !message[0])
            snprintf(message, message_size, "cannot record the group size %llu in '%s': %s",
                     (unsigned long long)group_size, path ? path : "", kiln_status_str(st));
        return st;
    }
    kiln_file_piece piece = {data, size};
    return kiln_file_write_atomic(io, NULL, path, &piece, 1, message, message_size);
}
