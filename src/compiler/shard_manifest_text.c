/* shard_manifest_text.c — manifest records (shard_manifest_text.h). Layer: compiler. */
#include "compiler/shard_manifest_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool kiln_manifest_line(kiln_buf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    size_t len = (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    for (size_t k = 0; k < len; k++) /* names are informative: keep every record on one line */
        if ((unsigned char)line[k] < 0x20) line[k] = '?';
    line[len] = '\n';
    return kiln_buf_append(b, line, len + 1);
}

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool kiln_manifest_head(kiln_buf *b, const char *method, size_t n_shards, char *const *paths)
{
    bool ok = kiln_manifest_line(b, "%s", KILN_SHARD_MANIFEST_MAGIC) &&
              kiln_manifest_line(b, "# %zu shard programs run in sequence; paths are relative to this file "
                                 "(docs/cli.md)", n_shards) &&
              kiln_manifest_line(b, "method %s", method) && kiln_manifest_line(b, "shards %zu", n_shards);
    for (size_t i = 0; ok && i < n_shards; i++) ok = kiln_manifest_line(b, "shard %zu %s", i, file_name(paths[i]));
    return ok;
}

bool kiln_manifest_source(kiln_buf *b, const char *head, const kiln_shard_source *src, const char *name)
{
    if (src->shard < 0) return kiln_manifest_line(b, "%s graph %zu %s", head, src->index, name);
    return kiln_manifest_line(b, "%s shard %d %zu %s", head, (int)src->shard, src->index, name);
}
