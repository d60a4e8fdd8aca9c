/* gguf_values.c — lookups and typed getters over a parsed kiln_gguf view (gguf_reader.h).
 *
 * Layer: format (src/format/gguf). Depends on core. Values were bounds-checked when the file
 * was opened, so the getters only check types; scalars are read byte by byte because the file
 * does not align them.
 */
#include <stdio.h>
#include <string.h>

#include "format/gguf/gguf_internal.h"
#include "core/check.h"
#include "core/diag.h"
#include "core/text_escape.h"

uint32_t kiln_gguf_version(const kiln_gguf *g) { return g->version; }
uint64_t kiln_gguf_alignment(const kiln_gguf *g) { return g->alignment; }
uint64_t kiln_gguf_data_offset(const kiln_gguf *g) { return g->data_offset; }
size_t kiln_gguf_n_kv(const kiln_gguf *g) { return g->n_kv; }
size_t kiln_gguf_n_tensors(const kiln_gguf *g) { return g->n_tensors; }

const kiln_gguf_kv *kiln_gguf_kv_at(const kiln_gguf *g, size_t index)
{
    return index < g->n_kv ? &g->kvs[index] : NULL;
}

const kiln_gguf_tensor *kiln_gguf_tensor_at(const kiln_gguf *g, size_t index)
{
    return index < g->n_tensors ? &g->tensors[index] : NULL;
}

const kiln_gguf_value *kiln_gguf_find_key(const kiln_gguf *g, const char *key)
{
    if (!g || !key) return NULL;
    size_t n = strlen(key), lo = 0, hi = g->n_kv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const kiln_gguf_kv *kv = g->kv_index[mid];
        int r = kiln_gguf_name_cmp(kv->key, kv->key_size, key, n);
        if (r == 0) return &kv->value;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const kiln_gguf_tensor *kiln_gguf_find_tensor(const kiln_gguf *g, const char *name)
{
    if (!g || !name) return NULL;
    size_t n = strlen(name), lo = 0, hi = g->n_tensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const kiln_gguf_tensor *t = g->tensor_index[mid];
        int r = kiln_gguf_name_cmp(t->name, t->name_size, name, n);
        if (r == 0) return t;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static kiln_status wrong_type(const kiln_gguf_value *v, const char *want, char *message, size_t message_size)
{
    return kiln_reject(KILN_ERROR_MODEL, message, message_size, "GGUF: value at byte %llu is %s, expected %s",
                       (unsigned long long)v->offset, kiln_gguf_type_name(v->type), want);
}

kiln_status kiln_gguf_value_u32(const kiln_gguf_value *v, uint32_t *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_U32) return wrong_type(v, "u32", message, message_size);
    *out = (uint32_t)kiln_gguf_load_le(v->data, 4);
    return KILN_OK;
}

kiln_status kiln_gguf_value_i32(const kiln_gguf_value *v, int32_t *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_I32) return wrong_type(v, "i32", message, message_size);
    *out = (int32_t)(uint32_t)kiln_gguf_load_le(v->data, 4);
    return KILN_OK;
}

kiln_status kiln_gguf_value_u64(const kiln_gguf_value *v, uint64_t *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_U64) return wrong_type(v, "u64", message, message_size);
    *out = kiln_gguf_load_le(v->data, 8);
    return KILN_OK;
}

kiln_status kiln_gguf_value_f32(const kiln_gguf_value *v, float *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_F32) return wrong_type(v, "f32", message, message_size);
    uint32_t bits = (uint32_t)kiln_gguf_load_le(v->data, 4);
    memcpy(out, &bits, sizeof *out);
    return KILN_OK;
}

kiln_status kiln_gguf_value_f64(const kiln_gguf_value *v, double *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_F64) return wrong_type(v, "f64", message, message_size);
    uint64_t bits = kiln_gguf_load_le(v->data, 8);
    memcpy(out, &bits, sizeof *out);
    return KILN_OK;
}

kiln_status kiln_gguf_value_bool(const kiln_gguf_value *v, bool *out, char *message, size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_BOOL) return wrong_type(v, "bool", message, message_size);
    *out = v->data[0] != 0;
    return KILN_OK;
}

kiln_status kiln_gguf_value_int(const kiln_gguf_value *v, int64_t *out, char *message, size_t message_size)
{
    size_t size = kiln_gguf_type_size(v->type);
    bool is_signed = v->type == KILN_GGUF_TYPE_I8 || v->type == KILN_GGUF_TYPE_I16 || v->type == KILN_GGUF_TYPE_I32 ||
                     v->type == KILN_GGUF_TYPE_I64;
    bool is_unsigned = v->type == KILN_GGUF_TYPE_U8 || v->type == KILN_GGUF_TYPE_U16 ||
                       v->type == KILN_GGUF_TYPE_U32 || v->type == KILN_GGUF_TYPE_U64;
    if (!is_signed && !is_unsigned) return wrong_type(v, "an integer", message, message_size);
    uint64_t raw = kiln_gguf_load_le(v->data, size);
    if (is_unsigned) {
        if (raw > (uint64_t)INT64_MAX)
            return kiln_reject(KILN_ERROR_MODEL, message, message_size,
                               "GGUF: value at byte %llu is %llu, too large for a signed 64-bit integer",
                               (unsigned long long)v->offset, (unsigned long long)raw);
        *out = (int64_t)raw;
        return KILN_OK;
    }
    unsigned shift = (unsigned)(64 - 8 * size);     /* sign-extend from the stored width */
    *out = (int64_t)(raw << shift) >> shift;
    return KILN_OK;
}

kiln_status kiln_gguf_value_string(const kiln_gguf_value *v, const char **data, size_t *size, char *message,
                                   size_t message_size)
{
    if (v->type != KILN_GGUF_TYPE_STRING) return wrong_type(v, "string", message, message_size);
    *data = (const char *)v->data;
    *size = (size_t)v->n;
    return KILN_OK;
}

kiln_status kiln_gguf_array_at(const kiln_gguf_value *v, uint64_t index, kiln_gguf_value *out)
{
    if (v->type != KILN_GGUF_TYPE_ARRAY) return KILN_ERROR_MODEL;
    if (index >= v->n) return KILN_ERROR_INDEX_OUT_OF_RANGE;
    if (v->elems) {
        *out = v->elems[index];
        return KILN_OK;
    }
    size_t size = kiln_gguf_type_size(v->elem_type);
    memset(out, 0, sizeof *out);
    out->type = v->elem_type;
    out->data = v->data + index * size;
    out->offset = (uint64_t)(v->offset + 12 + index * size);   /* after element type and count */
    return KILN_OK;
}

/* The key's value, or NOT_FOUND naming the key. */
static kiln_status lookup(const kiln_gguf *g, const char *key, const kiln_gguf_value **v, char *message,
                          size_t message_size)
{
    *v = kiln_gguf_find_key(g, key);
    if (*v) return KILN_OK;
    char esc[KILN_ESCAPED_NAME_SIZE];
    return kiln_reject(KILN_ERROR_NOT_FOUND, message, message_size, "GGUF: the file has no key '%s'",
                       kiln_text_escape(esc, sizeof esc, key, (size_t)-1));
}

/* Wrong-type messages name the key, which says more than the offset alone. */
static kiln_status named(kiln_status st, const char *key, char *message, size_t message_size)
{
    if (st != KILN_ERROR_MODEL || !message || !message_size) return st;
    char inner[KILN_GGUF_MESSAGE_SIZE], esc[KILN_ESCAPED_NAME_SIZE];
    snprintf(inner, sizeof inner, "%s", message);
    const char *rest = strncmp(inner, "GGUF: ", 6) == 0 ? inner + 6 : inner;
    snprintf(message, message_size, "GGUF: key '%s': %s", kiln_text_escape(esc, sizeof esc, key, (size_t)-1), rest);
    return st;
}

kiln_status kiln_gguf_get_u32(const kiln_gguf *g, const char *key, uint32_t *out, char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    return named(kiln_gguf_value_u32(v, out, message, message_size), key, message, message_size);
}

kiln_status kiln_gguf_get_int(const kiln_gguf *g, const char *key, int64_t *out, char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    return named(kiln_gguf_value_int(v, out, message, message_size), key, message, message_size);
}

kiln_status kiln_gguf_get_f32(const kiln_gguf *g, const char *key, float *out, char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    return named(kiln_gguf_value_f32(v, out, message, message_size), key, message, message_size);
}

kiln_status kiln_gguf_get_bool(const kiln_gguf *g, const char *key, bool *out, char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    return named(kiln_gguf_value_bool(v, out, message, message_size), key, message, message_size);
}

kiln_status kiln_gguf_get_string(const kiln_gguf *g, const char *key, const char **data, size_t *size,
                                 char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    return named(kiln_gguf_value_string(v, data, size, message, message_size), key, message, message_size);
}

kiln_status kiln_gguf_get_array(const kiln_gguf *g, const char *key, kiln_gguf_type elem_type,
                                const kiln_gguf_value **out, char *message, size_t message_size)
{
    const kiln_gguf_value *v;
    KILN_TRY(lookup(g, key, &v, message, message_size));
    if (v->type != KILN_GGUF_TYPE_ARRAY || v->elem_type != elem_type) {
        char esc[KILN_ESCAPED_NAME_SIZE];
        const char *have = v->type == KILN_GGUF_TYPE_ARRAY ? kiln_gguf_type_name(v->elem_type) : NULL;
        return kiln_reject(KILN_ERROR_MODEL, message, message_size,
                           "GGUF: key '%s' at byte %llu is %s%s%s, expected an array of %s",
                           kiln_text_escape(esc, sizeof esc, key, (size_t)-1), (unsigned long long)v->offset,
                           have ? "an array of " : "", have ? have : kiln_gguf_type_name(v->type),
                           "", kiln_gguf_type_name(elem_type));
    }
    *out = v;
    return KILN_OK;
}
