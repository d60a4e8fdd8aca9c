/* gguf_reader.h — a validating, zero-copy reader of GGUF files (versions 2 and 3).
 *
 * Layer: format (src/format/gguf). Depends on core only. The GGUF bytes are untrusted: every
 * read is bounds-checked, every size overflow-checked, every count capped by the bytes that are
 * left before anything is allocated, and a bad file gives KILN_ERROR_MODEL (exit 4 in the kiln
 * tool) with one message line naming the problem and its byte offset. The parsed view points
 * into the caller's bytes (strings and tensor data are not copied), so those bytes must outlive
 * it. docs/llm.md lists the validation rules.
 *
 * File layout (all little-endian):
 *
 *   "GGUF" | u32 version | u64 tensor_count | u64 kv_count
 *   kv_count x  { string key | u32 value_type | value }
 *   tensor_count x { string name | u32 n_dims | u64 dims[n_dims] | u32 ggml_type | u64 offset }
 *   padding to general.alignment (default 32)
 *   data section: each tensor at data_offset + offset (offset a multiple of the alignment)
 *
 * A string is a u64 length and that many bytes (no NUL); an array is a u32 element type, a u64
 * count and the elements (arrays may nest).
 */
#ifndef KILN_FORMAT_GGUF_READER_H
#define KILN_FORMAT_GGUF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* Metadata value types, numbered as the file stores them. */
typedef enum kiln_gguf_type {
    KILN_GGUF_TYPE_U8 = 0, KILN_GGUF_TYPE_I8 = 1, KILN_GGUF_TYPE_U16 = 2, KILN_GGUF_TYPE_I16 = 3,
    KILN_GGUF_TYPE_U32 = 4, KILN_GGUF_TYPE_I32 = 5, KILN_GGUF_TYPE_F32 = 6, KILN_GGUF_TYPE_BOOL = 7,
    KILN_GGUF_TYPE_STRING = 8, KILN_GGUF_TYPE_ARRAY = 9, KILN_GGUF_TYPE_U64 = 10,
    KILN_GGUF_TYPE_I64 = 11, KILN_GGUF_TYPE_F64 = 12
} kiln_gguf_type;
#define KILN_GGUF_TYPE_COUNT 13

/* The ggml tensor types kiln reads (the numbers are ggml's). Every other ggml type parses, and
   kiln_ggml_type_layout reports it as unsupported by name. */
enum {
    KILN_GGML_TYPE_F32 = 0, KILN_GGML_TYPE_F16 = 1, KILN_GGML_TYPE_Q4_0 = 2, KILN_GGML_TYPE_Q8_0 = 8,
    KILN_GGML_TYPE_Q4_K = 12, KILN_GGML_TYPE_Q6_K = 14, KILN_GGML_TYPE_BF16 = 30
};

#define KILN_GGUF_MAX_DIMS 4            /* ggml's tensors have at most four dimensions */
#define KILN_GGUF_MAX_ARRAY_DEPTH 8     /* arrays of arrays of ... deeper than this are refused */
#define KILN_GGUF_MAX_KEY_SIZE 65535    /* the spec's limit on key length */
#define KILN_GGUF_MAX_NAME_SIZE 64      /* the spec's limit on tensor-name length */
#define KILN_GGUF_DEFAULT_ALIGNMENT 32
/* Enough room for any message of the reader (longer names are cut). */
#define KILN_GGUF_MESSAGE_SIZE 256

/* One metadata value, pointing into the file. Scalars: `data` holds the little-endian bytes
   (possibly unaligned; read them with the getters). Strings: `data`, `n` bytes, not
   NUL-terminated. Arrays: `elem_type`, `n` elements starting at `data`; `elems` holds one node
   per element when the elements are strings or arrays, NULL when they are scalars. */
typedef struct kiln_gguf_value {
    kiln_gguf_type type;
    kiln_gguf_type elem_type;                /* arrays only */
    uint64_t offset;                         /* byte offset of the value in the file, for messages */
    const uint8_t *data;
    uint64_t n;                              /* string length in bytes, or array element count */
    const struct kiln_gguf_value *elems;     /* (n) for arrays of strings or arrays, else NULL */
} kiln_gguf_value;

typedef struct kiln_gguf_kv {
    const char *key;                         /* key_size bytes, not NUL-terminated, no NUL inside */
    size_t key_size;
    kiln_gguf_value value;
} kiln_gguf_kv;

typedef struct kiln_gguf_tensor {
    const char *name;                        /* name_size bytes, not NUL-terminated, no NUL inside */
    size_t name_size;
    uint32_t n_dims;                         /* 1 .. KILN_GGUF_MAX_DIMS */
    uint64_t dims[KILN_GGUF_MAX_DIMS];       /* ggml order: dims[0] varies fastest; unused ones 1 */
    uint64_t n_elements;                     /* product of dims, checked not to overflow */
    uint32_t ggml_type;
    uint64_t offset;                         /* from the start of the data section */
    uint64_t info_offset;                    /* byte offset of this tensor's info, for messages */
    /* Supported types only (else NULL and 0): the tensor's bytes inside the file. */
    const uint8_t *data;
    uint64_t data_size;
} kiln_gguf_tensor;

typedef struct kiln_gguf kiln_gguf;

/* Parses the `size` bytes at `bytes` as a GGUF file. The bytes are not copied and must outlive
 * *out (data pointers of values and tensors point into them); they need no alignment. The view's
 * own memory comes from `allocator` (NULL: kiln_allocator_default()), which must outlive it.
 * Returns KILN_OK or
 *   KILN_ERROR_INVALID_ARGUMENT  out is NULL, or bytes is NULL with size > 0;
 *   KILN_ERROR_MODEL             anything wrong with the file (docs/llm.md lists the checks),
 *                                also version 1, versions after 3 and big-endian files;
 *   KILN_ERROR_OUT_OF_MEMORY.
 * On failure *out is NULL, there is nothing to free, and message (when not NULL) holds one line
 * naming the problem and the byte offset where it was found; on success message holds "". */
kiln_status kiln_gguf_open(const void *bytes, size_t size, const kiln_allocator *allocator, kiln_gguf **out,
                           char *message, size_t message_size);
void kiln_gguf_destroy(kiln_gguf *gguf);

uint32_t kiln_gguf_version(const kiln_gguf *gguf);
uint64_t kiln_gguf_alignment(const kiln_gguf *gguf);
uint64_t kiln_gguf_data_offset(const kiln_gguf *gguf);   /* start of the data section in the file */

/* Metadata in file order. kiln_gguf_kv_at returns NULL past the end. */
size_t kiln_gguf_n_kv(const kiln_gguf *gguf);
const kiln_gguf_kv *kiln_gguf_kv_at(const kiln_gguf *gguf, size_t index);
/* The value of `key` (NUL-terminated), or NULL when the file has no such key. O(log n). */
const kiln_gguf_value *kiln_gguf_find_key(const kiln_gguf *gguf, const char *key);

/* Tensors in file order; find by NUL-terminated name, NULL when absent. */
size_t kiln_gguf_n_tensors(const kiln_gguf *gguf);
const kiln_gguf_tensor *kiln_gguf_tensor_at(const kiln_gguf *gguf, size_t index);
const kiln_gguf_tensor *kiln_gguf_find_tensor(const kiln_gguf *gguf, const char *name);

/* ---- Typed access ---------------------------------------------------------------------------
 * The value getters return KILN_OK, or KILN_ERROR_MODEL when the value has another type (the
 * message names both types and the value's byte offset); *out is unchanged on failure. The
 * kiln_gguf_get_* forms look the key up first and give KILN_ERROR_NOT_FOUND, naming the key,
 * when it is missing. `message` may be NULL. */
kiln_status kiln_gguf_value_u32(const kiln_gguf_value *v, uint32_t *out, char *message, size_t message_size);
kiln_status kiln_gguf_value_i32(const kiln_gguf_value *v, int32_t *out, char *message, size_t message_size);
kiln_status kiln_gguf_value_u64(const kiln_gguf_value *v, uint64_t *out, char *message, size_t message_size);
kiln_status kiln_gguf_value_f32(const kiln_gguf_value *v, float *out, char *message, size_t message_size);
kiln_status kiln_gguf_value_f64(const kiln_gguf_value *v, double *out, char *message, size_t message_size);
kiln_status kiln_gguf_value_bool(const kiln_gguf_value *v, bool *out, char *message, size_t message_size);
/* Any integer type (u8 .. i64) whose value fits int64_t (a u64 above INT64_MAX is refused):
   files differ in the integer width they use for counts and ids. */
kiln_status kiln_gguf_value_int(const kiln_gguf_value *v, int64_t *out, char *message, size_t message_size);
/* A string value: *data (not NUL-terminated) and its length. */
kiln_status kiln_gguf_value_string(const kiln_gguf_value *v, const char **data, size_t *size, char *message,
                                   size_t message_size);
/* Element `index` of an array, as a value of the element type (scalars included). Returns
   KILN_ERROR_MODEL when v is not an array, KILN_ERROR_INDEX_OUT_OF_RANGE past its end. */
kiln_status kiln_gguf_array_at(const kiln_gguf_value *v, uint64_t index, kiln_gguf_value *out);

kiln_status kiln_gguf_get_u32(const kiln_gguf *g, const char *key, uint32_t *out, char *message, size_t message_size);
kiln_status kiln_gguf_get_int(const kiln_gguf *g, const char *key, int64_t *out, char *message, size_t message_size);
kiln_status kiln_gguf_get_f32(const kiln_gguf *g, const char *key, float *out, char *message, size_t message_size);
kiln_status kiln_gguf_get_bool(const kiln_gguf *g, const char *key, bool *out, char *message, size_t message_size);
kiln_status kiln_gguf_get_string(const kiln_gguf *g, const char *key, const char **data, size_t *size,
                                 char *message, size_t message_size);
/* The array value of `key` whose elements have type elem_type (NOT_FOUND / MODEL as above). */
kiln_status kiln_gguf_get_array(const kiln_gguf *g, const char *key, kiln_gguf_type elem_type,
                                const kiln_gguf_value **out, char *message, size_t message_size);

/* "u8", "string", "array", ... ; "?" for a number that is not a kiln_gguf_type. Static. */
const char *kiln_gguf_type_name(uint32_t type);
/* Bytes of one scalar of the type; 0 for string, array and unknown numbers. */
size_t kiln_gguf_type_size(uint32_t type);

/* ---- ggml tensor types ----------------------------------------------------------------------- */

/* ggml's name of a tensor type ("F32", "Q4_K", "IQ2_XXS" ...), NULL for a number ggml does not
   define. Static. */
const char *kiln_ggml_type_name(uint32_t ggml_type);
/* The block layout of a supported type: `block_size` elements take `block_bytes` bytes (1 and
 * 4 for F32; 32 and 18 for Q4_0). Returns KILN_OK, or KILN_ERROR_NOT_SUPPORTED with a message
 * naming the type (by ggml's name when ggml defines it) and the supported list. */
kiln_status kiln_ggml_type_layout(uint32_t ggml_type, uint32_t *block_size, uint32_t *block_bytes, char *message,
                                  size_t message_size);
/* The byte size of a supported tensor (the dims are checked at open: dims[0] whole blocks).
   KILN_ERROR_NOT_SUPPORTED as kiln_ggml_type_layout, naming the tensor. */
kiln_status kiln_gguf_tensor_size(const kiln_gguf_tensor *t, uint64_t *size, char *message, size_t message_size);

#endif /* KILN_FORMAT_GGUF_READER_H */
