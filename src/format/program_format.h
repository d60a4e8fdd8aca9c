/* program_format.h — the on-disk layout of a kiln program file (.kiln), version 2.
 *
 * Layer: format. Depends on core. docs/format.md is the prose spec of these structs; change
 * one only together with the other and with KILN_FORMAT_VERSION.
 *
 * File map (every section and every segment starts at a multiple of 64 bytes):
 *
 *   0      header (64 B): magic "KILNPROG", version, file size, section table location
 *   64     section table: n_sections x kiln_fmt_section
 *   ...    sections, each an array of fixed-size little-endian records or a byte blob:
 *          STRINGS (NUL-terminated strings, referenced by byte offset), I64 and I32 pools
 *          (shapes, attribute lists, instruction arguments), SEGMENTS (descriptors),
 *          METHODS, VALUES, INSTRS, ATTRS, and (version 2, optional) METADATA
 *   ...    segment data (weights, folded constants, delegate payloads), 64-byte aligned,
 *          each distinct content stored once (deduplicated by hash and bytes at write time)
 *
 * All references are indices or offsets that the reader validates before anything uses them.
 */
#ifndef KILN_FORMAT_PROGRAM_FORMAT_H
#define KILN_FORMAT_PROGRAM_FORMAT_H

#include <stdint.h>

#define KILN_FORMAT_MAGIC "KILNPROG"
#define KILN_FORMAT_VERSION 2u      /* what writers write */
#define KILN_FORMAT_VERSION_MIN 1u  /* oldest version readers read: version 1 is version 2 without METADATA */
#define KILN_FORMAT_ALIGN 64u
#define KILN_FMT_NONE UINT32_MAX /* "no reference" in u32 reference fields */

typedef struct kiln_fmt_header {
    char magic[8];
    uint32_t version;
    uint32_t flags;            /* 0; readers reject unknown bits */
    uint64_t file_size;
    uint64_t sections_offset;
    uint32_t n_sections;
    uint32_t reserved0;
    uint8_t reserved[24];      /* zero */
} kiln_fmt_header;             /* 64 bytes */

typedef enum kiln_fmt_section_kind {
    KILN_SECTION_STRINGS = 1,
    KILN_SECTION_I64 = 2,
    KILN_SECTION_I32 = 3,
    KILN_SECTION_SEGMENTS = 4,
    KILN_SECTION_METHODS = 5,
    KILN_SECTION_VALUES = 6,
    KILN_SECTION_INSTRS = 7,
    KILN_SECTION_ATTRS = 8,
    KILN_SECTION_METADATA = 9, /* version 2; optional */
} kiln_fmt_section_kind;
#define KILN_SECTION_KIND_MAX 9

typedef struct kiln_fmt_section {
    uint32_t kind;
    uint32_t elem_size;        /* record size; 1 for STRINGS */
    uint64_t offset;           /* absolute, 64-byte aligned */
    uint64_t count;            /* number of records */
} kiln_fmt_section;            /* 24 bytes */

typedef struct kiln_fmt_segment {
    uint64_t offset;           /* absolute, 64-byte aligned */
    uint64_t size;
    uint64_t hash;             /* kiln_hash64(bytes, size, 0) */
} kiln_fmt_segment;

typedef struct kiln_fmt_method {
    uint32_t name;             /* string offset */
    uint32_t first_value, n_values;   /* VALUES range; instructions index values method-locally */
    uint32_t first_instr, n_instrs;   /* INSTRS range */
    uint32_t inputs, n_inputs;        /* I32 range of method-local value indices */
    uint32_t outputs, n_outputs;      /* I32 range */
    uint32_t reserved0;
    uint64_t arena_size;       /* bytes of planned activation memory */
    uint64_t scratch_size;     /* largest per-instruction scratch */
} kiln_fmt_method;             /* 56 bytes */

typedef enum kiln_fmt_storage {
    KILN_STORAGE_CONST = 1,    /* bytes in a segment */
    KILN_STORAGE_ARENA = 2,    /* planned: [offset, offset+size) of the method's arena */
    KILN_STORAGE_DYNAMIC = 3,  /* shape known only at run time; allocated per execute */
} kiln_fmt_storage;

typedef struct kiln_fmt_value {
    uint32_t name;             /* string offset */
    uint8_t dtype;             /* kiln_dtype */
    uint8_t rank;              /* <= KILN_MAX_RANK; meaningless for DYNAMIC */
    uint8_t storage;           /* kiln_fmt_storage */
    uint8_t reserved0;
    uint32_t shape;            /* I64 index of rank dims */
    uint32_t segment;          /* CONST: segment index; else KILN_FMT_NONE */
    uint32_t reserved1;
    uint64_t offset;           /* CONST: byte offset in the segment; ARENA: byte offset in the arena */
    uint64_t size;             /* bytes = numel * dtype size (0 for DYNAMIC) */
} kiln_fmt_value;              /* 40 bytes */

typedef enum kiln_fmt_instr_kind {
    KILN_INSTR_KERNEL = 0,     /* portable kernel call: op, opset, attrs */
    KILN_INSTR_DELEGATE = 1,   /* delegate call: op = backend name, segment = payload */
} kiln_fmt_instr_kind;

typedef struct kiln_fmt_instr {
    uint32_t kind;
    uint32_t op;               /* string offset: KERNEL: the op (kiln_fmt_op_domain_size); DELEGATE: backend name */
    uint32_t name;             /* string offset: node name for messages */
    int32_t opset;
    uint32_t first_attr, n_attrs;     /* ATTRS range */
    uint32_t args;             /* I32 index: n_inputs then n_outputs method-local value indices, -1 = absent */
    uint16_t n_inputs, n_outputs;
    uint32_t segment;          /* DELEGATE: payload segment; else KILN_FMT_NONE */
    uint32_t reserved0;
    uint64_t scratch_size;
} kiln_fmt_instr;              /* 48 bytes */

/* A KERNEL instruction's op string names the op and its domain: the op_type alone for the
   default ONNX domain (as in every program written before domains existed, so they read the
   same), "<domain>.<op_type>" for another ("kiln.RMSNorm"). An op_type never holds a '.', a
   domain may ("com.example"), so the domain is everything before the last '.'. These give the
   length of that domain (0: the default ONNX domain) and the op_type within the string. */
static inline size_t kiln_fmt_op_domain_size(const char *stored)
{
    size_t domain = 0;
    for (size_t i = 0; stored[i]; i++)
        if (stored[i] == '.') domain = i;
    return domain;
}

static inline const char *kiln_fmt_op_type(const char *stored)
{
    size_t domain = kiln_fmt_op_domain_size(stored);
    return domain ? stored + domain + 1 : stored;
}

typedef struct kiln_fmt_attr {
    uint32_t name;             /* string offset */
    uint32_t type;             /* kiln_attr_type */
    uint64_t count;            /* INTS/FLOATS/STRINGS element count, STRING byte length */
    int64_t i;                 /* INT value; FLOAT: float bits in the low 32; TENSOR: dtype | rank << 8 */
    uint64_t ref;              /* INTS: I64 index; FLOATS: I32 index (float bits); STRING(S): string
                                  offset; TENSOR: segment index, shape at I64 index `count` */
} kiln_fmt_attr;               /* 32 bytes */

/* Program metadata (version 2): a named byte blob the program carries for its users (the GGUF
   key/values an LLM runner needs, "llm.gguf"). The bytes are a segment, so they are 64-byte
   aligned and stored once however many keys hold them. Records are sorted by key, strictly
   ascending in bytewise (strcmp) order, which makes keys unique and lookups a binary search. */
typedef struct kiln_fmt_metadata {
    uint32_t key;              /* string offset; a non-empty string */
    uint32_t segment;          /* segment index: the value's bytes are the whole segment */
} kiln_fmt_metadata;           /* 8 bytes */

#endif
