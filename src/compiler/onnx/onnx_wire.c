/* onnx_wire.c — a walk of a serialized ModelProto's wire format (see onnx_wire.h).
 *
 * Layer: compiler/onnx. The walk knows nothing of ONNX beyond what the protobuf-c descriptors
 * generated from onnx.proto say: for each length-delimited field, whether it is a string (check
 * it for NUL bytes) or a nested message (walk into it). Everything else is skipped by wire
 * type. It reads the bytes in place and allocates nothing; the path to a bad string is rebuilt
 * only once one is found.
 */
#include "compiler/onnx/onnx_wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/text_escape.h"
#include "onnx/onnx.pb-c.h"

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };

/* One nested message on the way down: field `field` of its parent, whose bytes start at
   parent_start, met at key_start; its own bytes are [start, end). */
typedef struct wire_level {
    const ProtobufCFieldDescriptor *field;
    const uint8_t *parent_start, *key_start;
    const uint8_t *start, *end;
} wire_level;

typedef struct walker {
    wire_level levels[KILN_ONNX_MAX_DEPTH];
    size_t n_levels;        /* levels on the path to the bad string */
    bool hit;
    kiln_onnx_nul_string *found;
} walker;

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Reads one field at *p: its key, and its value (for WIRE_BYTES: *value, *value_size). */
static bool read_field(const uint8_t **p, const uint8_t *end, uint64_t *key, const uint8_t **value,
                       size_t *value_size)
{
    uint64_t n;
    if (!read_varint(p, end, key)) return false;
    switch (*key & 7) {
    case WIRE_VARINT: return read_varint(p, end, &n);
    case WIRE_FIXED64:
        if (end - *p < 8) return false;
        *p += 8;
        return true;
    case WIRE_FIXED32:
        if (end - *p < 4) return false;
        *p += 4;
        return true;
    case WIRE_BYTES:
        if (!read_varint(p, end, &n) || n > (uint64_t)(end - *p)) return false;
        *value = *p;
        *value_size = (size_t)n;
        *p += n;
        return true;
    default: return false; /* groups (deprecated, not in onnx.proto) and invalid wire types */
    }
}

static kiln_status walk(walker *w, const ProtobufCMessageDescriptor *desc, const uint8_t *start, const uint8_t *end,
                        size_t depth)
{
    if (depth >= KILN_ONNX_MAX_DEPTH) return KILN_ERROR_LIMIT;
    for (const uint8_t *p = start; p < end;) {
        const uint8_t *key_start = p, *value = NULL;
        uint64_t key;
        size_t value_size = 0;
        if (!read_field(&p, end, &key, &value, &value_size)) return KILN_ERROR_MODEL;
        if ((key & 7) != WIRE_BYTES || (key >> 3) > UINT32_MAX) continue;
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3));
        if (!f) continue; /* a field this onnx.proto does not know: protobuf-c keeps it opaque */
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            if (!memchr(value, 0, value_size) || strcmp(f->name, "doc_string") == 0) continue;
            w->hit = true;
            w->n_levels = depth;
            w->found->value = value;
            w->found->value_size = value_size;
            snprintf(w->found->field, sizeof w->found->field, "%s", f->name);
            return KILN_ERROR_MODEL;
        }
        if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        w->levels[depth] = (wire_level){f, start, key_start, value, value + value_size};
        kiln_status st = walk(w, f->descriptor, value, value + value_size, depth + 1);
        if (st != KILN_OK) return st;
    }
    return KILN_OK;
}

/* How many times field `id` occurs in [start, at): the index of the occurrence at `at`. */
static size_t occurrence(const uint8_t *start, const uint8_t *at, uint32_t id)
{
    size_t n = 0;
    for (const uint8_t *p = start; p < at;) {
        uint64_t key;
        const uint8_t *value;
        size_t value_size;
        if (!read_field(&p, at, &key, &value, &value_size)) break;
        n += (key >> 3) == id;
    }
    return n;
}

/* The `name` string of the message [start, end) of type desc (the last one, as protobuf reads
   a repeated singular field), escaped into dst; false when it has none. */
static bool message_name(const ProtobufCMessageDescriptor *desc, const uint8_t *start, const uint8_t *end, char *dst,
                         size_t dst_size)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(desc, "name");
    if (!f || f->type != PROTOBUF_C_TYPE_STRING) return false;
    const uint8_t *name = NULL;
    size_t name_size = 0;
    for (const uint8_t *p = start; p < end;) {
        uint64_t key;
        const uint8_t *value = NULL;
        size_t value_size = 0;
        if (!read_field(&p, end, &key, &value, &value_size)) break;
        if ((key >> 3) == f->id && (key & 7) == WIRE_BYTES) {
            name = value;
            name_size = value_size;
        }
    }
    if (!name) return false;
    kiln_text_escape(dst, dst_size, (const char *)name, name_size);
    return true;
}

/* "graph.node[3] (node 'n3')": the path, and the name of the graph entry it goes through. */
static void describe(const walker *w, char *dst, size_t dst_size)
{
    size_t used = 0;
    dst[0] = '\0';
    for (size_t i = 0; i < w->n_levels && used < dst_size; i++) {
        const wire_level *l = &w->levels[i];
        int n = l->field->label == PROTOBUF_C_LABEL_REPEATED
                    ? snprintf(dst + used, dst_size - used, "%s%s[%zu]", i ? "." : "", l->field->name,
                               occurrence(l->parent_start, l->key_start, l->field->id))
                    : snprintf(dst + used, dst_size - used, "%s%s", i ? "." : "", l->field->name);
        if (n < 0) return;
        used += (size_t)n;
    }
    char name[KILN_ESCAPED_NAME_SIZE];
    if (w->n_levels >= 2 && used < dst_size &&
        message_name(w->levels[1].field->descriptor, w->levels[1].start, w->levels[1].end, name, sizeof name))
        snprintf(dst + used, dst_size - used, " (%s '%s')", w->levels[1].field->name, name);
}

kiln_status kiln_onnx_check_wire(const void *bytes, size_t size, kiln_onnx_nul_string *found)
{
    memset(found, 0, sizeof *found);
    walker w = {.found = found};
    const uint8_t *p = bytes;
    kiln_status st = walk(&w, &onnx__model_proto__descriptor, p, p + size, 0);
    if (w.hit) describe(&w, found->where, sizeof found->where);
    return st;
}

/* The wire type a field of this type is written with (a repeated number may also come packed,
   as one WIRE_BYTES field). */
static unsigned wire_type(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT: return WIRE_FIXED32;
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE: return WIRE_FIXED64;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE: return WIRE_BYTES;
    default: return WIRE_VARINT;
    }
}

int kiln_onnx_probe(const void *bytes, size_t size)
{
    const uint8_t *p = bytes, *end = p + size;
    bool known = false, graph = false;
    while (p < end) {
        uint64_t key;
        const uint8_t *value = NULL;
        size_t value_size = 0;
        if (!read_field(&p, end, &key, &value, &value_size) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) return 0;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field(&onnx__model_proto__descriptor, (unsigned)(key >> 3));
        if (!f) continue; /* a field of a newer onnx.proto: allowed, proves nothing */
        unsigned wire = (unsigned)(key & 7);
        bool packed = f->label == PROTOBUF_C_LABEL_REPEATED && wire == WIRE_BYTES && wire_type(f) != WIRE_BYTES;
        if (wire != wire_type(f) && !packed) return 0;
        known = true;
        graph |= strcmp(f->name, "graph") == 0;
    }
    return !known ? 0 : graph ? 2 : 1;
}
