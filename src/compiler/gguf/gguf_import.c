/* gguf_import.c — the GGUF entry of the importer table: probe by magic number, the method and
 * lengths a compilation asks for, then the hyperparameters (gguf_hparams.c) and the graph
 * (gguf_llama_graph.c) of that method.
 *
 * Layer: compiler/gguf. The file is parsed by the validating reader (gguf_reader.h) over the
 * caller's bytes; every tensor the graph keeps is copied into the graph's arena, and the view is
 * destroyed before returning, as importer.h requires.
 */
#include "compiler/gguf/gguf_import.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/gguf/gguf_llm.h"
#include "core/alloc.h"
#include "core/check.h"
#include "format/gguf/gguf_writer.h"

/* The default lengths (docs/llm.md): the cache holds the trained context up to this many rows,
   a prefill call this many tokens. */
#define DEFAULT_MAX_CONTEXT 2048
#define DEFAULT_PREFILL 128

int kiln_gguf_probe(const void *bytes, size_t size)
{
    const unsigned char *p = bytes;
    if (size < 8 || memcmp(p, "GGUF", 4) != 0) return 0;
    uint32_t version = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    return version == 2 || version == 3 ? KILN_IMPORTER_MAGIC : 0;
}

/* T and C of the method from its name and the options. */
static kiln_status method_lengths(kiln_ir_graph *g, const kiln_import_options *opt, const kiln_llm_hparams *hp,
                                  int64_t *tokens, int64_t *context)
{
    const char *method = opt->method ? opt->method : "";
    bool prefill = strcmp(method, KILN_GGUF_METHOD_PREFILL) == 0, decode = strcmp(method, KILN_GGUF_METHOD_DECODE) == 0;
    if (!prefill && !decode)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "a GGUF LLM has the methods '" KILN_GGUF_METHOD_PREFILL
                            "' and '" KILN_GGUF_METHOD_DECODE "', not '%s'", method);
    if (opt->n_shapes)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "input shapes do not apply to a GGUF LLM: its lengths "
                            "are the context and prefill lengths (--context, --prefill)");
    if (opt->llm_context < 0 || opt->llm_prefill < 0)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "GGUF LLM: context length %" PRId64 " and prefill "
                            "length %" PRId64 " must not be negative", opt->llm_context, opt->llm_prefill);
    int64_t c = opt->llm_context ? opt->llm_context
                                 : (hp->n_ctx_train < DEFAULT_MAX_CONTEXT ? hp->n_ctx_train : DEFAULT_MAX_CONTEXT);
    int64_t t = opt->llm_prefill ? opt->llm_prefill : (c < DEFAULT_PREFILL ? c : DEFAULT_PREFILL);
    if (c > hp->n_ctx_train)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "GGUF LLM: context length %" PRId64 " is more than the "
                            "%" PRId64 " the model was trained for (%s.context_length)", c, hp->n_ctx_train,
                            hp->arch->name);
    if (t > c)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "GGUF LLM: prefill length %" PRId64 " is more than the "
                            "context length %" PRId64, t, c);
    *context = c;
    *tokens = prefill ? t : 1;
    return KILN_OK;
}

/* The program metadata "llm.gguf": the file's key/values as a GGUF of no tensors, from which
   the runner builds its vocabulary and reads the hyperparameters (docs/llm.md). Both methods
   attach the same bytes, which compile.c stores once. */
static kiln_status store_metadata(kiln_ir_graph *g, const kiln_gguf *gguf)
{
    void *blob = NULL;
    size_t size = 0;
    kiln_status st = kiln_gguf_metadata_blob(gguf, g->allocator, &blob, &size);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "GGUF LLM: writing the metadata blob failed: %s", kiln_status_str(st));
    st = kiln_ir_graph_add_metadata(g, KILN_GGUF_METADATA_KEY, blob, size);
    kiln_free(g->allocator, blob);
    return st;
}

/* The part of the model to build: opt's, checked against the model, or the whole of it. A part
   is also program metadata "llm.shard" (docs/llm.md), so the runner finds its blocks. */
static kiln_status model_part(kiln_ir_graph *g, const kiln_import_options *opt, const kiln_llm_hparams *hp,
                              kiln_llm_layers *out)
{
    *out = (kiln_llm_layers){.first = 0, .count = hp->n_layer, .embedding = true, .head = true, .n_shards = 1};
    const kiln_llm_layers *p = opt->llm_layers;
    if (!p) return KILN_OK;
    if (p->first < 0 || p->count < 1 || p->first > hp->n_layer - p->count || p->embedding != (p->first == 0) ||
        p->head != (p->first + p->count == hp->n_layer) || p->shard < 0 || p->shard >= p->n_shards)
        return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "GGUF LLM: blocks %" PRId64 " + %" PRId64 " (embedding %d, "
                            "head %d) are no part of a model of %" PRId64 " blocks", p->first, p->count,
                            (int)p->embedding, (int)p->head, hp->n_layer);
    *out = *p;
    char text[160];
    int n = snprintf(text, sizeof text, "shard=%" PRId64 "\nshards=%" PRId64 "\nfirst_block=%" PRId64
                     "\nblock_count=%" PRId64 "\n", p->shard, p->n_shards, p->first, p->count);
    return kiln_ir_graph_add_metadata(g, KILN_GGUF_SHARD_METADATA_KEY, text, (size_t)n);
}

static kiln_status import_gguf(kiln_ir_graph *g, const kiln_import_source *src, const kiln_import_options *opt)
{
    kiln_gguf *gguf = NULL;
    char why[KILN_GGUF_MESSAGE_SIZE];
    kiln_status st = kiln_gguf_open(src->bytes, src->size, g->allocator, &gguf, why, sizeof why);
    if (st != KILN_OK)
        return kiln_ir_fail(g, st, "model '%s': %s", src->path ? src->path : "(from memory)", why);
    kiln_llm_hparams hp;
    kiln_llm_builder b = {.g = g, .gguf = gguf, .hp = &hp};
    kiln_strmap_init(&b.weights, &g->arena);
    KILN_TRY_GOTO(st, kiln_llm_read_hparams(g, gguf, &hp));
    KILN_TRY_GOTO(st, method_lengths(g, opt, &hp, &b.tokens, &b.context));
    KILN_TRY_GOTO(st, model_part(g, opt, &hp, &b.layers));
    KILN_TRY_GOTO(st, kiln_llm_build_graph(&b));
    st = store_metadata(g, gguf);
fail:
    kiln_gguf_destroy(gguf);
    return st;
}

const kiln_importer kiln_gguf_model_importer = {"gguf", kiln_gguf_probe, import_gguf};
