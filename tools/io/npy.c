/* npy.c — NumPy .npy reader and writer (npy.h states the supported subset).
 *
 * Layer: tools. Depends on kiln.h, src/core (allocation, overflow-safe arithmetic, opening
 * regular files only, escaping untrusted text, the atomic writer of core/file_write.h) and POSIX
 * file I/O (pread).
 *
 * The file (NumPy format versions 1.0, 2.0, 3.0; 3.0 only changes the header text to UTF-8):
 *
 *   0          6     7     8             8+L                                 data_offset
 *   +----------+-----+-----+-------------+-----------------------------------+-----------------+
 *   | \x93NUMPY | maj | min | header size | {'descr': '<f4', 'fortran_order': | numel * itemsize |
 *   |          |     |     | u16 LE (1.0)| False, 'shape': (2, 3), }  ...  \n| bytes, C order   |
 *   |          |     |     | u32 LE (2,3)| (a Python dict literal, padded)   |                 |
 *   +----------+-----+-----+-------------+-----------------------------------+-----------------+
 *
 * Invariant of the readers: nothing is allocated for the data until the header has parsed and
 * the data it announces has been checked to end exactly at the end of the input. Every refusal
 * also writes one line saying what is wrong into the caller's message buffer (npy_diag), so the
 * tool can tell a Fortran-order array from a truncated file without decoding statuses.
 */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check.h"
#include "core/file_open.h"
#include "core/file_write.h"
#include "core/text_escape.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_SIZE 6
#define NPY_PREAMBLE_MAX 12     /* magic, two version bytes, a 4-byte header size */
#define NPY_HEADER_MAX 65536    /* far above any header of a supported dtype; bounds the parse */
#define NPY_DATA_ALIGN 64
#define NPY_FILE_ALIGN 64       /* NumPy's ARRAY_ALIGN: header ends on a 64-byte boundary */
#define NPY_GROWTH_DIGITS 21    /* NumPy's GROWTH_AXIS_MAX_DIGITS: spare room after the dict */
#define NPY_WRITE_HEADER_MAX 512
#define NPY_IO_CHUNK ((size_t)1 << 30)
#define NPY_QUOTE_MAX 40        /* bytes of a key or dtype string quoted in a message */

typedef struct npy_dtype_entry {
    char kind;                  /* NumPy kind letter: f, i, u, b */
    unsigned size;              /* bytes per element */
    kiln_dtype dtype;
} npy_dtype_entry;

static const npy_dtype_entry npy_dtypes[] = {
    {'f', 4, KILN_DTYPE_F32}, {'f', 8, KILN_DTYPE_F64}, {'f', 2, KILN_DTYPE_F16},
    {'i', 8, KILN_DTYPE_I64}, {'i', 4, KILN_DTYPE_I32}, {'i', 2, KILN_DTYPE_I16},
    {'i', 1, KILN_DTYPE_I8},  {'u', 8, KILN_DTYPE_U64}, {'u', 4, KILN_DTYPE_U32},
    {'u', 2, KILN_DTYPE_U16}, {'u', 1, KILN_DTYPE_U8},  {'b', 1, KILN_DTYPE_BOOL},
};
#define NPY_DTYPE_COUNT (sizeof npy_dtypes / sizeof npy_dtypes[0])

/* What a parsed header announces. */
typedef struct npy_header {
    kiln_dtype dtype;
    bool byte_swap;             /* the data is in the byte order opposite to the host's */
    bool fortran_order;
    uint32_t rank;              /* may exceed KILN_MAX_RANK; then only the first dims are kept */
    int64_t shape[KILN_MAX_RANK];
} npy_header;

/* The caller's message buffer (buf NULL or size 0: no message wanted). */
typedef struct npy_diag {
    char *buf;
    size_t size;
} npy_diag;

static kiln_status npy_fail(npy_diag *d, kiln_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Says what is wrong (one line, no file name: the caller knows it) and returns st. */
static kiln_status npy_fail(npy_diag *d, kiln_status st, const char *fmt, ...)
{
    if (d->buf && d->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->buf, d->size, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* A printable copy of n bytes of header text, for quoting in a message. */
static const char *quote(char *buf, size_t size, const char *text, size_t n)
{
    return kiln_text_escape(buf, size, text, n < NPY_QUOTE_MAX ? n : NPY_QUOTE_MAX);
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---- header text: a small parser for the Python literals NumPy writes ---------------------- */

typedef struct npy_cursor {
    const char *p;
    const char *end;
} npy_cursor;

static void skip_space(npy_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Skips white space, then consumes ch if it comes next. */
static bool accept(npy_cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* A whole Python name such as True: "Truex" must not match. */
static bool accept_name(npy_cursor *c, const char *name)
{
    size_t n = strlen(name);
    skip_space(c);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, name, n) != 0) return false;
    if ((size_t)(c->end - c->p) > n && is_name_char(c->p[n])) return false;
    c->p += n;
    return true;
}

/* A quoted string in ' or ". Keys and dtype strings never need escapes, so a backslash or a
   control character is refused rather than interpreted. */
static bool parse_string(npy_cursor *c, const char **text, size_t *len)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char quote_char = *c->p++;
    const char *start = c->p;
    while (c->p < c->end && *c->p != quote_char) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '\\' || ch < 0x20 || ch == 0x7f) return false;
        c->p++;
    }
    if (c->p >= c->end) return false;
    *text = start;
    *len = (size_t)(c->p - start);
    c->p++;
    return true;
}

static bool parse_bool(npy_cursor *c, bool *value)
{
    if (accept_name(c, "True")) *value = true;
    else if (accept_name(c, "False")) *value = false;
    else return false;
    return true;
}

/* A decimal literal as Python 3 writes one: digits only (so never negative), no leading zeros,
   no '_' or suffix, and it must fit int64. */
static bool parse_dim(npy_cursor *c, int64_t *value)
{
    skip_space(c);
    const char *start = c->p;
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (!kiln_mul_i64(v, 10, &v) || __builtin_add_overflow(v, (int64_t)(*c->p - '0'), &v)) return false;
        c->p++;
    }
    if (c->p == start || (c->p - start > 1 && *start == '0')) return false;
    if (c->p < c->end && is_name_char(*c->p)) return false;
    *value = v;
    return true;
}

/* A tuple of dims: "()", "(3,)", "(2, 3)" or "(2, 3,)". "(3)" is an int in Python, not a tuple,
   and NumPy refuses it, so it is refused here too. */
static bool parse_shape(npy_cursor *c, npy_header *h)
{
    h->rank = 0;
    if (!accept(c, '(')) return false;
    if (accept(c, ')')) return true;
    for (;;) {
        int64_t dim;
        if (!parse_dim(c, &dim)) return false;
        if (h->rank < KILN_MAX_RANK) h->shape[h->rank] = dim;
        h->rank++;      /* cannot wrap: each dim takes bytes of a header of at most 64 KiB */
        bool comma = accept(c, ',');
        if (accept(c, ')')) return comma || h->rank > 1;
        if (!comma) return false;
    }
}

/* Maps a dtype string such as "<f4" to kiln; false for anything kiln has no dtype for. */
static bool map_descr(const char *text, size_t len, npy_header *h)
{
    char order = '=';
    if (len > 0 && memchr("<>=|", text[0], 4)) {
        order = text[0];
        text++;
        len--;
    }
    if (len != 2 || text[1] < '1' || text[1] > '9') return false;
    unsigned size = (unsigned)(text[1] - '0');
    for (size_t i = 0; i < NPY_DTYPE_COUNT; i++) {
        if (npy_dtypes[i].kind != text[0] || npy_dtypes[i].size != size) continue;
        if (order == '|' && size > 1) return false;     /* '|' means "no byte order": 1 byte only */
        bool little = host_is_little_endian();
        h->dtype = npy_dtypes[i].dtype;
        h->byte_swap = size > 1 && ((order == '>' && little) || (order == '<' && !little));
        return true;
    }
    return false;
}

/* Why a dtype string map_descr refused is refused: object arrays (what numpy.save pickles) and
   structured dtypes get a message of their own, since "dtype '|O'" tells most users nothing. */
static kiln_status refuse_descr(npy_diag *d, const char *text, size_t len)
{
    char q[NPY_QUOTE_MAX * 4 + 1];
    size_t skip = len > 0 && memchr("<>=|", text[0], 4) ? 1 : 0;
    if (len == skip + 1 && text[skip] == 'O')
        return npy_fail(d, KILN_ERROR_NOT_SUPPORTED,
                        "object arrays (pickled Python objects) are not supported; save a numeric array");
    return npy_fail(d, KILN_ERROR_NOT_SUPPORTED,
                    "dtype '%s' is not supported (kiln reads f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8 and b1)",
                    quote(q, sizeof q, text, len));
}

static bool key_is(const char *key, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(key, name, len) == 0;
}

/* The value of one key; *seen guards against a key given twice. */
static kiln_status parse_entry(npy_cursor *c, const char *key, size_t key_len, bool seen[3], const char **descr,
                               size_t *descr_len, npy_header *h, npy_diag *d)
{
    char q[NPY_QUOTE_MAX * 4 + 1];
    int which = key_is(key, key_len, "descr") ? 0 : key_is(key, key_len, "fortran_order") ? 1
              : key_is(key, key_len, "shape") ? 2 : -1;
    if (which < 0)
        return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: unknown key '%s'", quote(q, sizeof q, key, key_len));
    if (seen[which])
        return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: key '%s' given twice", quote(q, sizeof q, key, key_len));
    seen[which] = true;
    if (which == 0) {
        skip_space(c);
        if (c->p < c->end && *c->p == '[')
            return npy_fail(d, KILN_ERROR_NOT_SUPPORTED, "structured dtypes (records of fields) are not supported");
        if (!parse_string(c, descr, descr_len))
            return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: 'descr' is not a quoted dtype string");
    } else if (which == 1) {
        if (!parse_bool(c, &h->fortran_order))
            return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: 'fortran_order' is neither True nor False");
    } else if (!parse_shape(c, h)) {
        return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: 'shape' is not a tuple of non-negative integers");
    }
    return KILN_OK;
}

/* Parses the dict literal: exactly the keys descr, fortran_order and shape, each once, in any
   order, with optional trailing comma, then only white space. Syntax problems are FORMAT; a
   well-formed header kiln cannot represent is NOT_SUPPORTED or LIMIT. */
static kiln_status parse_header(const char *text, size_t len, npy_header *h, npy_diag *d)
{
    npy_cursor c = {text, text + len};
    const char *descr = NULL;
    size_t descr_len = 0;
    bool seen[3] = {false, false, false}; /* descr, fortran_order, shape */

    if (!accept(&c, '{')) return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: it does not start with '{'");
    while (!accept(&c, '}')) {
        const char *key;
        size_t key_len;
        if (!parse_string(&c, &key, &key_len) || !accept(&c, ':'))
            return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: expected a quoted key and ':'");
        KILN_TRY(parse_entry(&c, key, key_len, seen, &descr, &descr_len, h, d));
        if (!accept(&c, ',')) {
            if (!accept(&c, '}')) return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: expected ',' or '}'");
            break;
        }
    }
    skip_space(&c);
    if (c.p != c.end) return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: text after the closing '}'");
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; k++)
        if (!seen[k]) return npy_fail(d, KILN_ERROR_FORMAT, "malformed header: no '%s' key", keys[k]);
    if (!map_descr(descr, descr_len, h)) return refuse_descr(d, descr, descr_len);
    if (h->fortran_order)
        return npy_fail(d, KILN_ERROR_NOT_SUPPORTED,
                        "Fortran-order arrays are not supported (save with numpy.ascontiguousarray)");
    if (h->rank > KILN_MAX_RANK)
        return npy_fail(d, KILN_ERROR_LIMIT, "%u dimensions; kiln supports at most %d", h->rank, KILN_MAX_RANK);
    return KILN_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Checks magic and version in the first `avail` bytes (min(input size, NPY_PREAMBLE_MAX)) and
   returns where the header text lies. */
static kiln_status parse_preamble(const unsigned char *bytes, size_t avail, size_t *header_offset,
                                  size_t *header_size, npy_diag *d)
{
    size_t magic = avail < NPY_MAGIC_SIZE ? avail : NPY_MAGIC_SIZE;
    if (avail == 0) return npy_fail(d, KILN_ERROR_FORMAT, "empty file; not a .npy file");
    if (memcmp(bytes, NPY_MAGIC, magic) != 0)
        return npy_fail(d, KILN_ERROR_FORMAT, "not a .npy file (it does not start with \\x93NUMPY)");
    if (avail < 8) return npy_fail(d, KILN_ERROR_FORMAT, "truncated: %zu bytes, shorter than a .npy preamble", avail);
    unsigned major = bytes[6], minor = bytes[7];
    if (major == 0) return npy_fail(d, KILN_ERROR_FORMAT, "format version 0.%u is no NumPy format version", minor);
    if (major > 3 || minor != 0)
        return npy_fail(d, KILN_ERROR_VERSION, ".npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)",
                        major, minor);
    size_t size_bytes = major == 1 ? 2 : 4;
    if (avail < 8 + size_bytes)
        return npy_fail(d, KILN_ERROR_FORMAT, "truncated: %zu bytes, shorter than a .npy preamble", avail);
    uint32_t size = (uint32_t)bytes[8] | (uint32_t)bytes[9] << 8;
    if (size_bytes == 4) size |= (uint32_t)bytes[10] << 16 | (uint32_t)bytes[11] << 24;
    if (size > NPY_HEADER_MAX)
        return npy_fail(d, KILN_ERROR_FORMAT, "header of %u bytes, more than the %d a .npy header can need", size,
                        NPY_HEADER_MAX);
    *header_offset = 8 + size_bytes;
    *header_size = size;
    return KILN_OK;
}

/* The header must lie inside the input. */
static kiln_status header_fits(size_t header_offset, size_t header_size, uint64_t input_size, npy_diag *d)
{
    if (kiln_range_ok(header_offset, header_size, input_size)) return KILN_OK;
    return npy_fail(d, KILN_ERROR_FORMAT, "truncated: the header ends at byte %zu, the file has %llu bytes",
                    header_offset + header_size, (unsigned long long)input_size);
}

/* The data size the header announces, which must end exactly at the end of the input: less is
   a truncated file, more is not something NumPy writes. */
static kiln_status data_size(const npy_header *h, uint64_t data_offset, uint64_t input_size, size_t *out,
                             npy_diag *d)
{
    size_t n = kiln_dtype_size(h->dtype);
    for (uint32_t i = 0; i < h->rank; i++) {
        if ((uint64_t)h->shape[i] > SIZE_MAX || !kiln_mul_size(n, (size_t)h->shape[i], &n))
            return npy_fail(d, KILN_ERROR_FORMAT, "the shape's data size overflows");
    }
    uint64_t have = data_offset <= input_size ? input_size - data_offset : 0;
    if (have < n)
        return npy_fail(d, KILN_ERROR_FORMAT, "truncated: the header announces %zu data bytes, the file holds %llu",
                        n, (unsigned long long)have);
    if (have > n)
        return npy_fail(d, KILN_ERROR_FORMAT, "%llu bytes after the %zu data bytes the header announces",
                        (unsigned long long)(have - n), n);
    *out = n;
    return KILN_OK;
}

/* Brings freshly copied data to host form and hands it to *out. */
static void finish_tensor(const npy_header *h, unsigned char *data, size_t size, kiln_tensor *out)
{
    size_t elem = kiln_dtype_size(h->dtype);
    if (h->byte_swap) {
        for (size_t i = 0; i + elem <= size; i += elem) {
            for (size_t j = 0; j < elem / 2; j++) {
                unsigned char tmp = data[i + j];
                data[i + j] = data[i + elem - 1 - j];
                data[i + elem - 1 - j] = tmp;
            }
        }
    }
    /* Kernels may rely on booleans being 0 or 1; a file may hold any byte. */
    if (h->dtype == KILN_DTYPE_BOOL) {
        for (size_t i = 0; i < size; i++) data[i] = data[i] != 0;
    }
    out->dtype = h->dtype;
    out->rank = h->rank;
    for (uint32_t i = 0; i < h->rank; i++) out->shape[i] = h->shape[i];
    out->data = data;
}

static unsigned char *alloc_data(const kiln_allocator *a, size_t n, npy_diag *d)
{
    unsigned char *data = kiln_alloc(a, n, NPY_DATA_ALIGN);
    if (!data) npy_fail(d, KILN_ERROR_OUT_OF_MEMORY, "out of memory for %zu bytes of data", n);
    return data;
}

kiln_status kiln_npy_read_memory(const void *bytes, size_t size, const kiln_allocator *a, kiln_tensor *out,
                                 char *message, size_t message_size)
{
    npy_diag d = {message, message_size};
    if (message && message_size) message[0] = '\0';
    if (!out) return npy_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "no tensor to read into");
    memset(out, 0, sizeof *out);
    if (!bytes && size > 0) return npy_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "no bytes to read");
    if (!a) a = kiln_allocator_default();

    const unsigned char *b = bytes;
    size_t header_offset, header_size, n;
    npy_header h;
    KILN_TRY(parse_preamble(b, size < NPY_PREAMBLE_MAX ? size : NPY_PREAMBLE_MAX, &header_offset, &header_size, &d));
    KILN_TRY(header_fits(header_offset, header_size, size, &d));
    KILN_TRY(parse_header((const char *)b + header_offset, header_size, &h, &d));
    KILN_TRY(data_size(&h, header_offset + header_size, size, &n, &d));
    unsigned char *data = alloc_data(a, n, &d);
    if (!data) return KILN_ERROR_OUT_OF_MEMORY;
    memcpy(data, b + header_offset + header_size, n);
    finish_tensor(&h, data, n, out);
    return KILN_OK;
}

/* pread until all n bytes arrived. A file that ends early (it shrank after fstat) reads as
   truncated. */
static kiln_status read_at(int fd, void *buf, size_t n, uint64_t offset, npy_diag *d)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = pread(fd, p, n < NPY_IO_CHUNK ? n : NPY_IO_CHUNK, (off_t)offset);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return npy_fail(d, KILN_ERROR_IO, "read failed: %s", strerror(errno));
        if (got == 0) return npy_fail(d, KILN_ERROR_FORMAT, "truncated: the file shrank while it was read");
        p += got;
        n -= (size_t)got;
        offset += (uint64_t)got;
    }
    return KILN_OK;
}

/* Reads header then data straight into the tensor's buffer, so a file is never held twice. */
static kiln_status read_fd(int fd, uint64_t file_size, const kiln_allocator *a, kiln_tensor *out, npy_diag *d)
{
    unsigned char preamble[NPY_PREAMBLE_MAX];
    size_t avail = file_size < sizeof preamble ? (size_t)file_size : sizeof preamble;
    size_t header_offset, header_size, n;
    KILN_TRY(read_at(fd, preamble, avail, 0, d));
    KILN_TRY(parse_preamble(preamble, avail, &header_offset, &header_size, d));
    KILN_TRY(header_fits(header_offset, header_size, file_size, d));

    npy_header h;
    char *text = kiln_alloc(a, header_size, 1);
    if (!text) return npy_fail(d, KILN_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte header", header_size);
    kiln_status st = read_at(fd, text, header_size, header_offset, d);
    if (st == KILN_OK) st = parse_header(text, header_size, &h, d);
    kiln_free(a, text);
    KILN_TRY(st);
    KILN_TRY(data_size(&h, header_offset + header_size, file_size, &n, d));

    unsigned char *data = alloc_data(a, n, d);
    if (!data) return KILN_ERROR_OUT_OF_MEMORY;
    st = read_at(fd, data, n, header_offset + header_size, d);
    if (st != KILN_OK) {
        kiln_free(a, data);
        return st;
    }
    finish_tensor(&h, data, n, out);
    return KILN_OK;
}

kiln_status kiln_npy_read(const char *path, const kiln_allocator *a, kiln_tensor *out, char *message,
                          size_t message_size)
{
    npy_diag d = {message, message_size};
    if (message && message_size) message[0] = '\0';
    if (!out) return npy_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "no tensor to read into");
    memset(out, 0, sizeof *out);
    if (!path) return npy_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "no path given");
    if (!a) a = kiln_allocator_default();
    /* Regular files only: a FIFO would block open() and a device would read forever. */
    int fd;
    struct stat info;
    const char *why;
    if (kiln_file_open_read(path, &fd, &info, &why) != KILN_OK) return npy_fail(&d, KILN_ERROR_IO, "%s", why);
    kiln_status st = read_fd(fd, (uint64_t)info.st_size, a, out, &d);
    close(fd);
    return st;
}

/* ---- writing ------------------------------------------------------------------------------ */

static const npy_dtype_entry *entry_for_dtype(kiln_dtype dtype)
{
    for (size_t i = 0; i < NPY_DTYPE_COUNT; i++) {
        if (npy_dtypes[i].dtype == dtype) return &npy_dtypes[i];
    }
    return NULL;
}

/* Preamble and header exactly as NumPy 1.24 writes them for version 1.0: the dict with sorted
   keys, spare spaces so the first dimension can grow in place, then spaces and '\n' so the data
   starts on a 64-byte boundary. Returns the byte count put in buf. */
static size_t format_header(const kiln_tensor *t, const npy_dtype_entry *e,
                            char buf[NPY_WRITE_HEADER_MAX])
{
    char order = e->size == 1 ? '|' : host_is_little_endian() ? '<' : '>';
    char *dict = buf + 10;
    int len = sprintf(dict, "{'descr': '%c%c%u', 'fortran_order': False, 'shape': (", order, e->kind,
                      e->size);
    for (uint32_t i = 0; i < t->rank; i++) {
        len += sprintf(dict + len, i == 0 ? "%lld" : ", %lld", (long long)t->shape[i]);
    }
    len += sprintf(dict + len, "%s), }", t->rank == 1 ? "," : "");
    if (t->rank > 0) {
        int digits = snprintf(NULL, 0, "%lld", (long long)t->shape[0]);
        for (int i = digits; i < NPY_GROWTH_DIGITS; i++) dict[len++] = ' ';
    }
    /* At most 10 + 56 + 8 * 21 + 4 + 20 + 64 bytes: well inside NPY_WRITE_HEADER_MAX. */
    size_t total = 10 + (size_t)len + 1;
    size_t pad = NPY_FILE_ALIGN - total % NPY_FILE_ALIGN;
    memset(dict + len, ' ', pad);
    total += pad;
    buf[total - 1] = '\n';
    size_t header_size = total - 10;
    memcpy(buf, NPY_MAGIC, NPY_MAGIC_SIZE);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(header_size & 0xff);
    buf[9] = (char)(header_size >> 8);
    return total;
}

kiln_status kiln_npy_write_io(const struct kiln_file_io *io, const char *path, const kiln_tensor *t, char *message,
                              size_t message_size)
{
    KILN_CHECK(path && t && t->rank <= KILN_MAX_RANK, KILN_ERROR_INVALID_ARGUMENT);
    const npy_dtype_entry *e = entry_for_dtype(t->dtype);
    KILN_CHECK((unsigned)t->dtype < KILN_DTYPE_COUNT, KILN_ERROR_INVALID_ARGUMENT);
    if (!e) { /* BF16 and the block-quantized types: kiln dtypes NumPy has no equivalent for */
        char shown[KILN_ESCAPED_NAME_SIZE];
        if (message && message_size)
            snprintf(message, message_size, "cannot write '%s': NumPy has no dtype for kiln's %s",
                     kiln_text_escape(shown, sizeof shown, path, (size_t)-1), kiln_dtype_name(t->dtype));
        return KILN_ERROR_NOT_SUPPORTED;
    }
    int64_t numel = kiln_tensor_numel(t);
    size_t n;
    KILN_CHECK(numel >= 0 && (uint64_t)numel <= SIZE_MAX, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(kiln_mul_size((size_t)numel, e->size, &n), KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(t->data || n == 0, KILN_ERROR_INVALID_ARGUMENT);

    char header[NPY_WRITE_HEADER_MAX];
    kiln_file_piece pieces[2] = {{header, format_header(t, e, header)}, {t->data, n}};
    return kiln_file_write_atomic(io, NULL, path, pieces, 2, message, message_size);
}

kiln_status kiln_npy_write(const char *path, const kiln_tensor *t)
{
    return kiln_npy_write_io(NULL, path, t, NULL, 0);
}
