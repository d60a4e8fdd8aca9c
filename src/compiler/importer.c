/* importer.c — the compiler's fixed table of model importers and the choice among them by
 * content (importer.h).
 *
 * Layer: compiler. The one file that names every importer; adding a format is a line in the
 * table (and the importer's own folder). The table is const data: nothing here is mutable.
 */
#include "compiler/importer.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "compiler/gguf/gguf_import.h"
#include "compiler/ir.h"
#include "compiler/onnx/onnx_import.h"

static const kiln_importer *const builtin[] = {&kiln_onnx_model_importer, &kiln_gguf_model_importer};

#define N_BUILTIN (sizeof builtin / sizeof builtin[0])

const kiln_importer *const *kiln_importers_builtin(size_t *n)
{
    *n = N_BUILTIN;
    return builtin;
}

const kiln_importer *kiln_importer_pick(const void *bytes, size_t size)
{
    const kiln_importer *best = NULL;
    int best_score = 0;
    for (size_t i = 0; i < N_BUILTIN; i++) {
        int score = builtin[i]->probe(bytes, size);
        if (score > best_score) {
            best = builtin[i];
            best_score = score;
        }
    }
    return best;
}

/* What the first bytes of an unrecognised file are, for the message: text when they are
   printable (a magic number usually is), hex otherwise. */
static void describe_start(const unsigned char *p, size_t size, char *out, size_t out_size)
{
    if (size == 0) {
        snprintf(out, out_size, "the file is empty");
        return;
    }
    size_t n = size < 4 ? size : 4;
    bool text = true;
    for (size_t i = 0; i < n; i++) text &= isprint(p[i]) != 0;
    if (text) {
        snprintf(out, out_size, "it starts with \"%.*s\"", (int)n, (const char *)p);
        return;
    }
    int used = snprintf(out, out_size, "it starts with bytes");
    for (size_t i = 0; i < n && used > 0 && (size_t)used < out_size; i++)
        used += snprintf(out + used, out_size - (size_t)used, " %02x", p[i]);
}

kiln_status kiln_import_model(kiln_ir_graph *g, const kiln_import_source *src, const kiln_import_options *opt,
                              const kiln_importer **used)
{
    const kiln_importer *im = kiln_importer_pick(src->bytes, src->size);
    if (used) *used = im;
    if (im) return im->import(g, src, opt);
    char start[64], tried[128] = "";
    describe_start(src->bytes, src->size, start, sizeof start);
    for (size_t i = 0, n = 0; i < N_BUILTIN; i++) {
        int k = snprintf(tried + n, sizeof tried - n, "%s%s", i ? ", " : "", builtin[i]->name);
        if (k < 0 || (size_t)k >= sizeof tried - n) break;
        n += (size_t)k;
    }
    return kiln_ir_fail(g, KILN_ERROR_MODEL, "model '%s' is not in a format kiln can import (%s; tried %s)",
                        src->path ? src->path : "(from memory)", start, tried);
}
