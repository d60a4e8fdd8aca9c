/* shards_gguf.c — the blocks of a GGUF LLM over N shard programs (shards_gguf.h).
 *
 * Layer: compiler. The plan is made from the file alone: each tensor's bytes go to its block
 * ("blk.<l>.*"), the embedding to the first shard, the output norm and head (or the tied
 * embedding, of which the last shard holds its own copy) to the last. The ranges minimise the
 * largest shard's bytes (dynamic programming over the cut points; ties keep the earliest cut).
 * Each shard is then compiled by the ordinary driver (compile_part.h) with its layers, so it has
 * both methods over one context per partition, and the program metadata "llm.gguf" plus
 * "llm.shard" naming its blocks.
 */
#include "compiler/shards_gguf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile_part.h"
#include "compiler/gguf/gguf_import.h"
#include "compiler/gguf/gguf_llm.h"
#include "compiler/shard_manifest_text.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/diag.h"
#include "core/text_escape.h"

/* The block of tensor t ("blk.<l>.<what>" with l below n_layer), or -1. */
static int64_t block_of(const kiln_gguf_tensor *t, int64_t n_layer)
{
    if (t->name_size < 5 || memcmp(t->name, "blk.", 4) != 0) return -1;
    int64_t l = 0;
    size_t k = 4;
    for (; k < t->name_size && t->name[k] >= '0' && t->name[k] <= '9' && l <= n_layer; k++) l = l * 10 + (t->name[k] - '0');
    return k > 4 && k < t->name_size && t->name[k] == '.' && l < n_layer ? l : -1;
}

static bool named(const kiln_gguf_tensor *t, const char *name)
{
    return t->name_size == strlen(name) && memcmp(t->name, name, t->name_size) == 0;
}

/* Weight bytes: of each block (blocks[n_layer]), of the first shard's embedding and of the last
   shard's head. */
static void weigh(const kiln_gguf *gguf, int64_t n_layer, uint64_t *blocks, uint64_t *first, uint64_t *last)
{
    bool tied = !kiln_gguf_find_tensor(gguf, "output.weight");
    for (size_t i = 0; i < kiln_gguf_n_tensors(gguf); i++) {
        const kiln_gguf_tensor *t = kiln_gguf_tensor_at(gguf, i);
        int64_t l = block_of(t, n_layer);
        if (l >= 0) blocks[l] += t->data_size;
        else if (named(t, "token_embd.weight")) *first += t->data_size, *last += tied ? t->data_size : 0;
        else if (named(t, "output.weight") || named(t, "output_norm.weight")) *last += t->data_size;
    }
}

/* parts[0..n) := the contiguous block ranges of least largest weight. best[k * (L + 1) + i]: the
   least largest weight of blocks [0, i) in k shards, cut[...] where its last shard starts. */
static kiln_status balance(const kiln_allocator *a, const uint64_t *blocks, int64_t L, uint64_t first, uint64_t last,
                           size_t n, kiln_llm_layers *parts)
{
    size_t cells = (n + 1) * (size_t)(L + 1);
    uint64_t *best = kiln_alloc(a, cells * sizeof *best, 8);
    int64_t *cut = kiln_alloc(a, cells * sizeof *cut, 8);
    if (!best || !cut) {
        kiln_free(a, best);
        kiln_free(a, cut);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    for (size_t c = 0; c < cells; c++) best[c] = UINT64_MAX;
    best[0] = 0;
    for (size_t k = 1; k <= n; k++) {
        for (int64_t i = (int64_t)k; i <= L; i++) {
            uint64_t span = i == L ? last : 0; /* bytes of blocks [j, i) plus the ends they hold */
            for (int64_t j = i - 1; j >= (int64_t)k - 1; j--) {
                span += blocks[j];
                uint64_t prev = best[(k - 1) * (size_t)(L + 1) + (size_t)j];
                if (prev == UINT64_MAX) continue;
                uint64_t w = span + (j == 0 ? first : 0);
                uint64_t worst = w > prev ? w : prev;
                size_t at = k * (size_t)(L + 1) + (size_t)i;
                if (worst <= best[at]) { /* the smaller j wins a tie: earlier shards take fewer blocks */
                    best[at] = worst;
                    cut[at] = j;
                }
            }
        }
    }
    int64_t end = L;
    for (size_t k = n; k >= 1; k--) {
        int64_t start = cut[k * (size_t)(L + 1) + (size_t)end];
        parts[k - 1] = (kiln_llm_layers){.first = start, .count = end - start, .embedding = start == 0,
                                         .head = end == L, .shard = (int64_t)k - 1, .n_shards = (int64_t)n};
        end = start;
    }
    kiln_free(a, best);
    kiln_free(a, cut);
    return KILN_OK;
}

/* The manifest's wiring (docs/llm.md): the whole model's inputs and outputs are the unsharded
   program's; shard i > 0 takes shard i - 1's output 0 ("hidden") instead of tokens; the logits
   are the last shard's output 0, each layer's k/v the outputs of the shard holding it. */
static bool wiring(kiln_buf *b, const kiln_llm_layers *parts, size_t n, int64_t L)
{
    bool ok = kiln_manifest_line(b, "# GGUF LLM: every shard program has the methods prefill and decode, wired alike; "
                                 "its blocks are its program metadata llm.shard (docs/llm.md)");
    const char *fixed[3] = {"tokens", "positions", "mask"};
    for (size_t k = 0; ok && k < 3; k++) ok = kiln_manifest_line(b, "graph-input %zu %s", k, fixed[k]);
    for (int64_t l = 0; ok && l < L; l++)
        ok = kiln_manifest_line(b, "graph-input %" PRId64 " cache_k.%" PRId64, 3 + 2 * l, l) &&
             kiln_manifest_line(b, "graph-input %" PRId64 " cache_v.%" PRId64, 4 + 2 * l, l);
    for (size_t i = 0; ok && i < n; i++) {
        const kiln_llm_layers *p = &parts[i];
        ok = i == 0 ? kiln_manifest_line(b, "input 0 0 graph 0 tokens")
                    : kiln_manifest_line(b, "input %zu 0 shard %zu 0 hidden", i, i - 1);
        ok = ok && kiln_manifest_line(b, "input %zu 1 graph 1 positions", i) &&
             kiln_manifest_line(b, "input %zu 2 graph 2 mask", i);
        for (int64_t j = 0; ok && j < p->count; j++) {
            int64_t l = p->first + j;
            ok = kiln_manifest_line(b, "input %zu %" PRId64 " graph %" PRId64 " cache_k.%" PRId64, i, 3 + 2 * j,
                                    3 + 2 * l, l) &&
                 kiln_manifest_line(b, "input %zu %" PRId64 " graph %" PRId64 " cache_v.%" PRId64, i, 4 + 2 * j,
                                    4 + 2 * l, l);
        }
    }
    ok = ok && kiln_manifest_line(b, "output 0 shard %zu 0 logits", n - 1);
    for (size_t i = 0; ok && i < n; i++) {
        for (int64_t j = 0; ok && j < parts[i].count; j++) {
            int64_t l = parts[i].first + j;
            ok = kiln_manifest_line(b, "output %" PRId64 " shard %zu %" PRId64 " k.%" PRId64, 1 + 2 * l, i, 1 + 2 * j,
                                    l) &&
                 kiln_manifest_line(b, "output %" PRId64 " shard %zu %" PRId64 " v.%" PRId64, 2 + 2 * l, i, 2 + 2 * j,
                                    l);
        }
    }
    return ok;
}

/* The plan: the model's block count from its hyperparameters (checked as the import checks
   them), then the ranges. */
static kiln_status plan(const kiln_allocator *a, const void *bytes, size_t size, const char *path, size_t n,
                        kiln_llm_layers *parts, int64_t *n_layer, char *message, size_t message_size)
{
    kiln_diag d = kiln_diag_over(message, message_size);
    kiln_gguf *gguf = NULL;
    char why[KILN_GGUF_MESSAGE_SIZE];
    kiln_status st = kiln_gguf_open(bytes, size, a, &gguf, why, sizeof why);
    char shown[KILN_ESCAPED_NAME_SIZE];
    if (st != KILN_OK)
        return kiln_diag_fail(&d, st, "model '%s': %s",
                              path ? kiln_text_escape(shown, sizeof shown, path, (size_t)-1) : "(from memory)", why);
    kiln_ir_graph g; /* only for the hyperparameter reader's messages */
    kiln_ir_graph_init(&g, a, message, message_size);
    kiln_llm_hparams hp;
    uint64_t *blocks = NULL;
    st = kiln_llm_read_hparams(&g, gguf, &hp);
    if (st == KILN_OK && (size_t)hp.n_layer < n)
        st = kiln_diag_fail(&d, KILN_ERROR_COMPILE_SPEC, "--shards %zu: the model has %" PRId64 " blocks, so at most "
                            "%" PRId64 " shards (a shard holds whole blocks)", n, hp.n_layer, hp.n_layer);
    if (st == KILN_OK) {
        blocks = kiln_alloc_zero(a, (size_t)hp.n_layer * sizeof *blocks, 8);
        st = blocks ? KILN_OK : KILN_ERROR_OUT_OF_MEMORY;
    }
    if (st == KILN_OK) {
        uint64_t first = 0, last = 0;
        weigh(gguf, hp.n_layer, blocks, &first, &last);
        st = balance(a, blocks, hp.n_layer, first, last, n, parts);
        *n_layer = hp.n_layer;
    }
    kiln_free(a, blocks);
    kiln_ir_graph_deinit(&g);
    kiln_gguf_destroy(gguf);
    return st;
}

kiln_status kiln_llm_shards_compile(const kiln_compile_options *opt, const void *bytes, size_t size, const char *path,
                                    size_t n_shards, char *const *paths, void **programs, size_t *sizes,
                                    kiln_buf *manifest, char *message, size_t message_size)
{
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    kiln_llm_layers *parts = kiln_alloc_zero(a, n_shards * sizeof *parts, _Alignof(kiln_llm_layers));
    KILN_CHECK(parts, KILN_ERROR_OUT_OF_MEMORY);
    int64_t n_layer = 0;
    kiln_status st = plan(a, bytes, size, path, n_shards, parts, &n_layer, message, message_size);
    kiln_compile_method m = {.name = "forward", .model_data = bytes, .model_size = size};
    for (size_t i = 0; st == KILN_OK && i < n_shards; i++) {
        char inner[768];
        st = kiln_compile_memory_llm_part(opt, &m, &parts[i], &programs[i], &sizes[i], inner, sizeof inner);
        if (st != KILN_OK) {
            kiln_diag d = kiln_diag_over(message, message_size);
            bool spec = st == KILN_ERROR_COMPILE_SPEC || st == KILN_ERROR_INVALID_ARGUMENT;
            if (spec) kiln_diag_fail(&d, st, "%s", inner);
            else kiln_diag_fail(&d, st, "shard %zu of %zu (blocks %" PRId64 "..%" PRId64 "): %s", i, n_shards,
                                parts[i].first, parts[i].first + parts[i].count - 1, inner);
        }
    }
    if (st == KILN_OK && !(kiln_manifest_head(manifest, KILN_GGUF_METHOD_PREFILL, n_shards, paths) &&
                           wiring(manifest, parts, n_shards, n_layer)))
        st = KILN_ERROR_OUT_OF_MEMORY;
    kiln_free(a, parts);
    return st;
}
