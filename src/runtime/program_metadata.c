/* program_metadata.c — a program's metadata (format version 2): key -> bytes, behind
 * kiln_program_metadata_count / _key / _get (include/kiln/kiln.h).
 *
 * Layer: runtime. The values are copied out of the file at open, into one buffer of the
 * default allocator (each value 64-byte aligned, as in the file), because their users parse
 * them — the LLM runner opens the GGUF of "llm.gguf" in place — and a file changed after open
 * must not change bytes a parser already validated (the guarantee of kiln.h, "Program files
 * changed after open"). Keys live in the copied tables; lookups are a binary search over them
 * (the reader proved them sorted and unique).
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "runtime/handle_table.h"
#include "runtime/runtime.h"

static uint64_t value_size(const kiln_program_view *v, uint64_t i) { return v->segments[v->metadata[i].segment].size; }

kiln_status kiln_program_copy_metadata(kiln_program_obj *p)
{
    const kiln_program_view *v = &p->view;
    if (v->n_metadata == 0) return KILN_OK;
    const kiln_allocator *a = kiln_allocator_default();
    uint64_t total = 0;
    for (uint64_t i = 0; i < v->n_metadata; i++) {
        /* Each size lies inside the file (the reader checked), so only the sum can overflow. */
        KILN_CHECK(kiln_add_u64(kiln_align_up_u64(total, 64), value_size(v, i), &total) && total <= SIZE_MAX / 2,
                   KILN_ERROR_OUT_OF_MEMORY);
    }
    p->metadata_offsets = kiln_alloc(a, (size_t)v->n_metadata * sizeof *p->metadata_offsets, 8);
    p->metadata_values = kiln_alloc(a, total ? (size_t)total : 1, 64);
    if (!p->metadata_offsets || !p->metadata_values) {
        kiln_program_free_metadata(p);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    uint64_t at = 0;
    for (uint64_t i = 0; i < v->n_metadata; i++) {
        at = kiln_align_up_u64(at, 64);
        p->metadata_offsets[i] = at;
        memcpy(p->metadata_values + at, kiln_view_segment_data(v, v->metadata[i].segment), (size_t)value_size(v, i));
        at += value_size(v, i);
    }
    return KILN_OK;
}

void kiln_program_free_metadata(kiln_program_obj *p)
{
    const kiln_allocator *a = kiln_allocator_default();
    kiln_free(a, p->metadata_values);
    kiln_free(a, p->metadata_offsets);
    p->metadata_values = NULL;
    p->metadata_offsets = NULL;
}

size_t kiln_program_metadata_count(const kiln_program *handle)
{
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    if (!p) return 0;
    size_t n = (size_t)p->view.n_metadata;
    kiln_handle_unpin((uintptr_t)handle);
    return n;
}

const char *kiln_program_metadata_key(const kiln_program *handle, size_t i)
{
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    if (!p) return NULL;
    const char *key = i < p->view.n_metadata ? kiln_view_string(&p->view, p->view.metadata[i].key) : NULL;
    kiln_handle_unpin((uintptr_t)handle);
    return key;
}

kiln_status kiln_program_metadata_get(const kiln_program *handle, const char *key, const void **data, size_t *size)
{
    KILN_CHECK(data && size, KILN_ERROR_INVALID_ARGUMENT);
    *data = NULL;
    *size = 0;
    KILN_CHECK(handle && key, KILN_ERROR_INVALID_ARGUMENT);
    kiln_program_obj *p = kiln_handle_pin((uintptr_t)handle, KILN_HANDLE_PROGRAM);
    KILN_CHECK(p, KILN_ERROR_STALE_HANDLE);
    int64_t i = kiln_view_metadata_find(&p->view, key);
    if (i >= 0) {
        *data = p->metadata_values + p->metadata_offsets[i];
        *size = (size_t)value_size(&p->view, (uint64_t)i);
    }
    kiln_handle_unpin((uintptr_t)handle);
    return i >= 0 ? KILN_OK : KILN_ERROR_NOT_FOUND;
}
