/* onnx_external.c — reading ONNX external tensor data, confined to the model's folder.
 *
 * Layer: compiler/onnx (see onnx_external.h for the rules). The folder test works on canonical
 * paths: the model's folder is resolved once (realpath), the tensor's location is joined to it
 * and resolved too, so every symbolic link on the way is followed before the prefix is compared.
 * The file is then opened by its resolved name. A link swapped in between the two steps by a
 * concurrent writer of the model's own folder is outside what this guards against: whoever can
 * write there can change the model itself.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "compiler/onnx/onnx_external.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/file_open.h"

void kiln_onnx_external_init(kiln_onnx_external *ext, const char *model_path)
{
    ext->model_path = model_path;
    ext->resolved = false;
    ext->dir[0] = '\0';
}

/* The canonical folder of ext->model_path into ext->dir. */
static kiln_status resolve_dir(kiln_onnx_external *ext, char *why, size_t why_size)
{
    char dir[PATH_MAX];
    const char *path = ext->model_path, *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= sizeof dir) {
            snprintf(why, why_size, "the path of the model's folder is too long");
            return KILN_ERROR_IO;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    if (!realpath(dir, ext->dir)) {
        snprintf(why, why_size, "cannot resolve the model's folder '%s': %s", dir, strerror(errno));
        return KILN_ERROR_IO;
    }
    ext->resolved = true;
    return KILN_OK;
}

bool kiln_onnx_tensor_is_external(const Onnx__TensorProto *tp)
{
    return tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* A decimal byte count, digits only (what onnx writes); false when malformed or too large. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s) return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        if (!kiln_mul_u64(v, 10, &v) || !kiln_add_u64(v, (uint64_t)(*s - '0'), &v)) return false;
    }
    *out = v;
    return true;
}

typedef struct external_entries {
    const char *location;
    uint64_t offset, length;
    bool has_length;
} external_entries;

static kiln_status read_entries(const Onnx__TensorProto *tp, external_entries *e, char *why, size_t why_size)
{
    *e = (external_entries){0};
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *key = tp->external_data[i]->key ? tp->external_data[i]->key : "";
        const char *value = tp->external_data[i]->value ? tp->external_data[i]->value : "";
        bool ok = true;
        if (strcmp(key, "location") == 0) e->location = value;
        else if (strcmp(key, "offset") == 0) ok = parse_u64(value, &e->offset);
        else if (strcmp(key, "length") == 0) ok = e->has_length = parse_u64(value, &e->length);
        if (!ok) {
            snprintf(why, why_size, "external data %s '%s' is not a byte count", key, value);
            return KILN_ERROR_MODEL;
        }
    }
    if (!e->location || !e->location[0]) {
        snprintf(why, why_size, "its data is external but names no location");
        return KILN_ERROR_MODEL;
    }
    return KILN_OK;
}

/* Refuses an absolute location and one with a `..` component; joins it to the folder. */
static kiln_status join_location(const kiln_onnx_external *ext, const char *location, char *joined, size_t size,
                                 char *why, size_t why_size)
{
    if (location[0] == '/') {
        snprintf(why, why_size, "external data location '%s' is an absolute path; it must be relative to the "
                 "model's folder", location);
        return KILN_ERROR_MODEL;
    }
    for (const char *p = location; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            snprintf(why, why_size, "external data location '%s' has a '..' component; it must stay inside the "
                     "model's folder", location);
            return KILN_ERROR_MODEL;
        }
        p += n;
        if (*p == '/') p++;
    }
    int n = snprintf(joined, size, "%s/%s", ext->dir, location);
    if (n < 0 || (size_t)n >= size) {
        snprintf(why, why_size, "external data location '%s' makes too long a path", location);
        return KILN_ERROR_MODEL;
    }
    return KILN_OK;
}

/* Resolves joined and checks it is inside the folder; opens it. */
static kiln_status open_inside(const kiln_onnx_external *ext, const char *location, const char *joined, int *fd,
                               struct stat *st, char *why, size_t why_size)
{
    char resolved[PATH_MAX];
    if (!realpath(joined, resolved)) {
        snprintf(why, why_size, "cannot open external data file '%s': %s", location, strerror(errno));
        return KILN_ERROR_MODEL;
    }
    size_t dir_len = strlen(ext->dir);
    bool root = dir_len == 1 && ext->dir[0] == '/';
    if (!root && (strncmp(resolved, ext->dir, dir_len) != 0 || resolved[dir_len] != '/')) {
        snprintf(why, why_size, "external data location '%s' resolves outside the model's folder (through a "
                 "symbolic link)", location);
        return KILN_ERROR_MODEL;
    }
    const char *reason;
    if (kiln_file_open_read(resolved, fd, st, &reason) != KILN_OK) {
        snprintf(why, why_size, "cannot open external data file '%s': %s", location, reason);
        return KILN_ERROR_MODEL;
    }
    return KILN_OK;
}

static kiln_status read_range(int fd, uint64_t offset, void *dst, size_t bytes)
{
    uint8_t *p = dst;
    errno = 0;
    while (bytes) {
        size_t chunk = bytes < ((size_t)1 << 30) ? bytes : ((size_t)1 << 30);
        ssize_t n = pread(fd, p, chunk, (off_t)offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return KILN_ERROR_IO; /* 0: the file shrank under us */
        p += n;
        offset += (uint64_t)n;
        bytes -= (size_t)n;
    }
    return KILN_OK;
}

kiln_status kiln_onnx_external_read(kiln_onnx_external *ext, const Onnx__TensorProto *tp, void *dst,
                                    size_t bytes, char *why, size_t why_size)
{
    if (why_size) why[0] = '\0';
    external_entries e;
    KILN_TRY(read_entries(tp, &e, why, why_size));
    if (!ext || !ext->model_path) {
        snprintf(why, why_size, "its data is in the external file '%s', which is found relative to the model's "
                 "folder: compile the model from its file, not from memory", e.location);
        return KILN_ERROR_MODEL;
    }
    if (tp->has_raw_data) {
        snprintf(why, why_size, "it holds raw_data and also names the external file '%s'", e.location);
        return KILN_ERROR_MODEL;
    }
    if (!ext->resolved) KILN_TRY(resolve_dir(ext, why, why_size));
    char joined[PATH_MAX];
    KILN_TRY(join_location(ext, e.location, joined, sizeof joined, why, why_size));
    int fd;
    struct stat st;
    KILN_TRY(open_inside(ext, e.location, joined, &fd, &st, why, why_size));
    kiln_status status = KILN_OK;
    uint64_t file_size = (uint64_t)st.st_size;
    /* no length: the data runs to the end of the file */
    uint64_t length = e.has_length ? e.length : e.offset <= file_size ? file_size - e.offset : 0;
    if (length != bytes) {
        snprintf(why, why_size, "external data in '%s' is %llu bytes long; the tensor's dims and type need %zu",
                 e.location, (unsigned long long)length, bytes);
        status = KILN_ERROR_MODEL;
    } else if (!kiln_range_ok(e.offset, length, file_size)) {
        snprintf(why, why_size, "external data file '%s' holds %llu bytes; the tensor needs bytes %llu to %llu "
                 "(the file is truncated or the offset is wrong)", e.location, (unsigned long long)file_size,
                 (unsigned long long)e.offset, (unsigned long long)(e.offset + length));
        status = KILN_ERROR_MODEL;
    } else if (bytes && read_range(fd, e.offset, dst, bytes) != KILN_OK) {
        snprintf(why, why_size, "cannot read external data file '%s': %s", e.location,
                 errno ? strerror(errno) : "it became shorter while being read");
        status = KILN_ERROR_IO;
    }
    close(fd);
    return status;
}
