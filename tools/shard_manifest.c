/* shard_manifest.c — the manifest reader (see shard_manifest.h; grammar in docs/cli.md).
 *
 * Layer: tools. The whole file is read into one buffer and split in place: each record is one
 * line of space-separated fields whose last field (a name or a path) is the rest of the line.
 * Tables grow to the largest index a record names; a slot is "given" once its name is set, so a
 * missing or repeated index is found without a second pass. The file is read as a regular file
 * only (read_file.h: a FIFO would block). Fields quoted in messages are escaped: a manifest is
 * a file like any other, and its bytes must not split the error line or reach the terminal raw.
 */
#include "shard_manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text_escape.h"
#include "read_file.h"

#define MAX_FILE ((uint64_t)16 << 20)
#define MAX_INDEX 65536

typedef struct parser {
    shard_manifest *m;
    const char *path;
    size_t line;
    char *error;
    size_t error_size;
} parser;

static int reject(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int reject(parser *p, const char *fmt, ...)
{
    char shown[KILN_ESCAPED_NAME_SIZE];
    int n = snprintf(p->error, p->error_size, "manifest '%s'",
                     kiln_text_escape(shown, sizeof shown, p->path, (size_t)-1));
    if (n >= 0 && (size_t)n < p->error_size && p->line)
        n += snprintf(p->error + n, p->error_size - (size_t)n, " line %zu", p->line);
    if (n >= 0 && (size_t)n + 2 < p->error_size) {
        p->error[n++] = ':';
        p->error[n++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->error + n, p->error_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return 4;
}

/* ---- fields ----------------------------------------------------------------------------------- */

/* A printable copy of a field, by value so it can be an argument of reject(). */
typedef struct escaped_field {
    char text[KILN_ESCAPED_NAME_SIZE];
} escaped_field;

static escaped_field escaped(const char *field)
{
    escaped_field e;
    kiln_text_escape(e.text, sizeof e.text, field, (size_t)-1);
    return e;
}

static char *take_word(char **at)
{
    char *w = *at, *space = strchr(w, ' ');
    if (space) {
        *space = '\0';
        *at = space + 1;
    } else {
        *at = w + strlen(w);
    }
    return w;
}

static bool take_index(char **at, size_t limit, size_t *out)
{
    const char *w = take_word(at);
    size_t v = 0;
    if (!*w) return false;
    for (; *w; w++) {
        if (*w < '0' || *w > '9') return false;
        v = v * 10 + (size_t)(*w - '0');
        if (v >= limit) return false;
    }
    *out = v;
    return true;
}

/* Grow a zeroed table of elem-byte slots to hold index. */
static bool grow(void **table, size_t *n, size_t index, size_t elem)
{
    if (index < *n) return true;
    void *t = realloc(*table, (index + 1) * elem);
    if (!t) return false;
    memset((char *)t + *n * elem, 0, (index + 1 - *n) * elem);
    *table = t;
    *n = index + 1;
    return true;
}

/* "graph K NAME" or "shard S K NAME" */
static int take_source(parser *p, char **at, shard_source *out)
{
    const char *kind = take_word(at);
    size_t shard = 0;
    if (strcmp(kind, "shard") == 0) {
        if (!take_index(at, SHARD_MANIFEST_MAX_SHARDS, &shard)) return reject(p, "bad shard number");
        out->shard = (int32_t)shard;
    } else if (strcmp(kind, "graph") == 0) {
        out->shard = -1;
    } else {
        return reject(p, "a source is 'graph K NAME' or 'shard S K NAME', got '%s'", escaped(kind).text);
    }
    if (!take_index(at, MAX_INDEX, &out->index)) return reject(p, "bad index");
    out->name = *at;
    return 0;
}

/* ---- records ---------------------------------------------------------------------------------- */

static int need_shards(parser *p)
{
    return p->m->shards ? 0 : reject(p, "'shards N' must come before shard and input records");
}

static int record_shards(parser *p, char *at)
{
    size_t n;
    if (p->m->shards) return reject(p, "'shards' given twice");
    if (!take_index(&at, SHARD_MANIFEST_MAX_SHARDS + 1, &n) || n == 0 || *at)
        return reject(p, "'shards N' wants 1 to %d", SHARD_MANIFEST_MAX_SHARDS);
    p->m->shards = calloc(n, sizeof *p->m->shards);
    if (!p->m->shards) return reject(p, "out of memory");
    p->m->n_shards = n;
    return 0;
}

static int record_shard(parser *p, char *at)
{
    size_t i;
    int rc = need_shards(p);
    if (rc) return rc;
    if (!take_index(&at, p->m->n_shards, &i) || !*at)
        return reject(p, "'shard I PATH' wants I below %zu and a path", p->m->n_shards);
    if (p->m->shards[i].path) return reject(p, "shard %zu given twice", i);
    p->m->shards[i].path = at; /* resolved later */
    return 0;
}

static int record_graph_input(parser *p, char *at)
{
    size_t k;
    if (!take_index(&at, MAX_INDEX, &k)) return reject(p, "'graph-input K NAME' wants an index");
    if (!grow((void **)&p->m->graph_inputs, &p->m->n_graph_inputs, k, sizeof *p->m->graph_inputs))
        return reject(p, "out of memory");
    if (p->m->graph_inputs[k]) return reject(p, "graph-input %zu given twice", k);
    p->m->graph_inputs[k] = at;
    return 0;
}

static int record_input(parser *p, char *at)
{
    size_t i, j;
    int rc = need_shards(p);
    if (rc) return rc;
    if (!take_index(&at, p->m->n_shards, &i) || !take_index(&at, MAX_INDEX, &j))
        return reject(p, "'input I J SOURCE' wants a shard below %zu and an input index", p->m->n_shards);
    manifest_shard *s = &p->m->shards[i];
    if (!grow((void **)&s->inputs, &s->n_inputs, j, sizeof *s->inputs)) return reject(p, "out of memory");
    if (s->inputs[j].name) return reject(p, "input %zu of shard %zu given twice", j, i);
    if ((rc = take_source(p, &at, &s->inputs[j])) != 0) return rc;
    if (s->inputs[j].shard >= (int32_t)i)
        return reject(p, "shard %zu cannot read shard %d, which does not run before it", i, (int)s->inputs[j].shard);
    return 0;
}

static int record_output(parser *p, char *at)
{
    size_t j;
    if (!take_index(&at, MAX_INDEX, &j)) return reject(p, "'output J SOURCE' wants an output index");
    if (!grow((void **)&p->m->outputs, &p->m->n_outputs, j, sizeof *p->m->outputs)) return reject(p, "out of memory");
    if (p->m->outputs[j].name) return reject(p, "output %zu given twice", j);
    return take_source(p, &at, &p->m->outputs[j]);
}

static int record(parser *p, char *line)
{
    char *at = line;
    const char *key = take_word(&at);
    if (strcmp(key, "method") == 0) {
        if (!*at) return reject(p, "'method NAME' wants a name");
        p->m->method = at;
        return 0;
    }
    if (strcmp(key, "shards") == 0) return record_shards(p, at);
    if (strcmp(key, "shard") == 0) return record_shard(p, at);
    if (strcmp(key, "graph-input") == 0) return record_graph_input(p, at);
    if (strcmp(key, "input") == 0) return record_input(p, at);
    if (strcmp(key, "output") == 0) return record_output(p, at);
    return reject(p, "unknown record '%s'", escaped(key).text);
}

/* ---- whole file ------------------------------------------------------------------------------- */

/* Everything given, every source in range; shard paths made relative to the manifest. */
static int check_complete(parser *p)
{
    shard_manifest *m = p->m;
    p->line = 0;
    if (!m->shards) return reject(p, "no 'shards N' record");
    if (!m->n_outputs) return reject(p, "no output records");
    for (size_t k = 0; k < m->n_graph_inputs; k++)
        if (!m->graph_inputs[k]) return reject(p, "graph-input %zu is missing", k);
    for (size_t i = 0; i < m->n_shards; i++) {
        manifest_shard *s = &m->shards[i];
        if (!s->path) return reject(p, "shard %zu has no program", i);
        for (size_t j = 0; j < s->n_inputs; j++) {
            if (!s->inputs[j].name) return reject(p, "input %zu of shard %zu is missing", j, i);
            if (s->inputs[j].shard < 0 && s->inputs[j].index >= m->n_graph_inputs)
                return reject(p, "input %zu of shard %zu reads graph input %zu of %zu", j, i, s->inputs[j].index,
                              m->n_graph_inputs);
        }
    }
    for (size_t j = 0; j < m->n_outputs; j++) {
        const shard_source *o = &m->outputs[j];
        if (!o->name) return reject(p, "output %zu is missing", j);
        if ((o->shard < 0 && o->index >= m->n_graph_inputs) || o->shard >= (int32_t)m->n_shards)
            return reject(p, "output %zu comes from a graph input or shard that does not exist", j);
    }
    return 0;
}

static int resolve_paths(parser *p)
{
    const char *slash = strrchr(p->path, '/');
    size_t dir = slash ? (size_t)(slash - p->path) + 1 : 0;
    for (size_t i = 0; i < p->m->n_shards; i++) {
        const char *rel = p->m->shards[i].path;
        size_t keep = rel[0] == '/' ? 0 : dir, n = keep + strlen(rel) + 1;
        char *full = malloc(n);
        if (!full) return reject(p, "out of memory");
        snprintf(full, n, "%.*s%s", (int)keep, p->path, rel);
        p->m->shards[i].path = full;
        p->m->n_owned_paths = i + 1;
    }
    return 0;
}

static int read_text(parser *p, char **out)
{
    uint8_t *bytes;
    size_t n;
    char why[256];
    kiln_status st = cli_read_file(p->path, kiln_allocator_default(), MAX_FILE, &bytes, &n, why, sizeof why);
    if (st != KILN_OK) {
        reject(p, "cannot read it: %s", why);
        return 4; /* an input file that cannot be read (docs/cli.md) */
    }
    if (memchr(bytes, '\0', n)) {
        kiln_free(kiln_allocator_default(), bytes);
        return reject(p, "holds NUL bytes; not a manifest");
    }
    *out = (char *)bytes; /* cli_read_file put a NUL after the last byte */
    return 0;
}

static int parse_lines(parser *p, char *text)
{
    size_t magic = strlen(SHARD_MANIFEST_MAGIC);
    p->line = 1;
    if (strncmp(text, SHARD_MANIFEST_MAGIC, magic) != 0 || (text[magic] != '\n' && text[magic] != '\r' && text[magic]))
        return reject(p, "does not start with '%s'", SHARD_MANIFEST_MAGIC);
    char *line = text;
    while (*line) {
        char *end = strchr(line, '\n');
        char *next = end ? end + 1 : line + strlen(line);
        if (end) *end = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[len - 1] = '\0';
        if (p->line > 1 && line[0] && line[0] != '#') {
            int rc = record(p, line);
            if (rc) return rc;
        }
        line = next;
        p->line++;
    }
    return 0;
}

int shard_manifest_read(const char *path, shard_manifest *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    parser p = {out, path, 0, error, error_size};
    int rc = read_text(&p, &out->text);
    if (!rc) rc = parse_lines(&p, out->text);
    if (!rc) rc = check_complete(&p);
    if (!rc) rc = resolve_paths(&p);
    if (rc) shard_manifest_free(out);
    return rc;
}

void shard_manifest_free(shard_manifest *m)
{
    for (size_t i = 0; m->shards && i < m->n_shards; i++) {
        if (i < m->n_owned_paths) free(m->shards[i].path);
        free(m->shards[i].inputs);
    }
    free(m->shards);
    free(m->graph_inputs);
    free(m->outputs);
    kiln_free(kiln_allocator_default(), m->text);
    memset(m, 0, sizeof *m);
}
