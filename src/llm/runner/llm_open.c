/* llm_open.c — creating and destroying a kiln_llm: the vocabulary from the program's "llm.gguf"
 * metadata, one module with both methods, the layout check, the cache and buffers.
 *
 * Layer: llm runner. Depends on the public runtime API (kiln.h), core's allocator and
 * diagnostics, and the tokenizer (the vocabulary comes from llm_vocab_program.c). The order of
 * the checks is the order of the messages a user sees for a program that is not an LLM
 * program: no metadata first, then no methods, then their layout.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/check.h"
#include "llm/runner/llm_internal.h"
#include "llm/runner/llm_layout.h"
#include "llm/runner/llm_vocab_program.h"

double llm_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

kiln_diag llm_diag_begin(kiln_llm *llm)
{
    kiln_diag d = kiln_diag_over(llm->error, sizeof llm->error);
    kiln_diag_clear(&d);
    return d;
}

static bool program_has_method(const kiln_program *program, const char *name)
{
    for (size_t i = 0; i < kiln_program_method_count(program); i++)
        if (strcmp(kiln_program_method_name(program, i), name) == 0) return true;
    return false;
}

/* Creates shard sh's module (in the shards' one scratch group) and loads both methods from it,
   so that they share their contexts. */
static kiln_status load_methods(kiln_llm *llm, llm_shard *sh, kiln_program *program, const kiln_llm_options *options,
                                kiln_diag *d)
{
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "decode" : "prefill";
        if (!program_has_method(program, name))
            return kiln_diag_fail(d, KILN_ERROR_MODEL,
                                  "not an LLM program (kiln compile MODEL.gguf makes one): it has no method '%s'",
                                  name);
    }
    kiln_module_options mo = {.struct_size = sizeof mo, .scratch_group = llm->own_group};
    if (options) {
        mo.allocator = options->allocator;
        if (options->scratch_group) mo.scratch_group = options->scratch_group;
        mo.num_threads = options->num_threads;
        mo.target = options->target;
    }
    char why[512];
    kiln_status st = kiln_module_create_with_message(program, &mo, &sh->module, why, sizeof why);
    if (st != KILN_OK) return kiln_diag_fail(d, st, "creating the module failed: %s", why[0] ? why : kiln_status_str(st));
    st = kiln_method_load_with_message(sh->module, "prefill", &sh->prefill, why, sizeof why);
    if (st == KILN_OK) st = kiln_method_load_with_message(sh->module, "decode", &sh->decode, why, sizeof why);
    if (st != KILN_OK) return kiln_diag_fail(d, st, "%s", why[0] ? why : kiln_status_str(st));
    return KILN_OK;
}

/* Loads and checks every shard in order, each against the lengths of the ones before it. */
static kiln_status load_shards(kiln_llm *llm, kiln_program *const *programs, const kiln_llm_options *options,
                               kiln_diag *d)
{
    llm_layout first = {0};
    for (size_t s = 0; s < llm->n_shards; s++) {
        llm_shard *sh = &llm->shards[s];
        char why[KILN_LLM_ERROR_SIZE];
        kiln_diag inner = kiln_diag_over(why, sizeof why);
        kiln_diag_clear(&inner);
        kiln_status st = load_methods(llm, sh, programs[s], options, &inner);
        llm_shard_place place = {.first = s == 0, .last = s + 1 == llm->n_shards, .first_layer = llm->n_layer,
                                 .n_batch = first.n_batch, .n_ctx = first.n_ctx, .n_kv = first.n_kv,
                                 .n_embd = first.n_embd};
        llm_layout lay;
        if (st == KILN_OK) st = llm_layout_read(sh->prefill, sh->decode, &place, &lay, &inner);
        if (st != KILN_OK) /* one line, saying which shard when there are several */
            return llm->n_shards > 1 ? kiln_diag_fail(d, st, "shard %zu: %s", s, why) : kiln_diag_fail(d, st, "%s", why);
        if (s == 0) first = lay;
        sh->first_layer = llm->n_layer;
        sh->n_layer = lay.n_layer;
        llm->n_layer += lay.n_layer;
        llm->n_vocab = lay.n_vocab;
    }
    llm->n_ctx = first.n_ctx, llm->n_batch = first.n_batch, llm->n_kv = first.n_kv, llm->n_embd = first.n_embd;
    return KILN_OK;
}

static kiln_status allocate(kiln_llm *llm, kiln_diag *d)
{
    const kiln_allocator *a = llm->allocator;
    size_t C = llm->n_ctx, T = llm->n_batch;
    /* C, KVD, L and T come from the program's shapes: refuse products that overflow. */
    size_t cache_n = 0, mask_n = 0;
    if (__builtin_mul_overflow(llm->n_layer * 2, C, &cache_n) || __builtin_mul_overflow(cache_n, llm->n_kv, &cache_n) ||
        cache_n > SIZE_MAX / sizeof(float) || __builtin_mul_overflow(T, C + T, &mask_n) ||
        mask_n > SIZE_MAX / sizeof(float) || llm->n_vocab > SIZE_MAX / sizeof(float))
        return kiln_diag_fail(d, KILN_ERROR_LIMIT, "the KV cache of %zu layers x %zu positions x %zu does not fit in memory",
                              llm->n_layer, C, llm->n_kv);
    /* Not zeroed: a slot is read only once its position is filled (the mask of every other slot
       is -inf, and kiln.Attention skips such slots without reading them), and zeroing the cache
       of a 110M model (75 MB at 1024 positions) would fault in every page at load. */
    llm->cache = kiln_alloc(a, cache_n * sizeof(float), 64);
    llm->tokens = kiln_alloc(a, C * sizeof(int32_t), 64);
    llm->logits = kiln_alloc(a, llm->n_vocab * sizeof(float), 64);
    llm->in_tokens = kiln_alloc(a, T * sizeof(int32_t), 64);
    llm->in_positions = kiln_alloc(a, T * sizeof(int32_t), 64);
    llm->in_mask = kiln_alloc(a, mask_n * sizeof(float), 64);
    if (!llm->cache || !llm->tokens || !llm->logits || !llm->in_tokens || !llm->in_positions || !llm->in_mask)
        return kiln_diag_fail(d, KILN_ERROR_OUT_OF_MEMORY, "out of memory for the KV cache (%zu bytes) and buffers",
                              cache_n * sizeof(float));
    return KILN_OK;
}

kiln_status kiln_llm_create(kiln_program *program, const kiln_llm_options *options, kiln_llm **out, char *message,
                            size_t message_size)
{
    return kiln_llm_create_sharded(&program, 1, options, out, message, message_size);
}

kiln_status kiln_llm_create_sharded(kiln_program *const *programs, size_t n_programs, const kiln_llm_options *options,
                                    kiln_llm **out, char *message, size_t message_size)
{
    kiln_diag d = kiln_diag_over(message, message_size);
    kiln_diag_clear(&d);
    if (!out) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: out is NULL");
    *out = NULL;
    if (!programs || n_programs == 0) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: no program");
    for (size_t s = 0; s < n_programs; s++)
        if (!programs[s]) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: program %zu is NULL", s);
    if (options && options->struct_size < sizeof *options)
        return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: options->struct_size is %zu, at least %zu",
                              options->struct_size, sizeof *options);
    double t0 = llm_now();
    const kiln_allocator *a = options && options->allocator ? options->allocator : kiln_allocator_default();
    kiln_llm *llm = KILN_NEW(a, kiln_llm);
    if (!llm) return kiln_diag_fail(&d, KILN_ERROR_OUT_OF_MEMORY, "out of memory");
    llm->allocator = a;
    kiln_status st = KILN_OK;
    llm->shards = kiln_alloc_zero(a, n_programs * sizeof *llm->shards, 16);
    KILN_CHECK_GOTO(llm->shards, st, KILN_ERROR_OUT_OF_MEMORY);
    llm->n_shards = n_programs;
    /* The shards run one after the other: one scratch buffer, the size of the largest need, serves
       them all (the seeds' sharded Llama), unless the caller chose a group. */
    if (n_programs > 1 && !(options && options->scratch_group)) KILN_TRY_GOTO(st, kiln_scratch_group_create(&llm->own_group));
    KILN_TRY_GOTO(st, llm_vocab_from_program(programs[0], a, &llm->vocab, &d));
    KILN_TRY_GOTO(st, load_shards(llm, programs, options, &d));
    if (llm->n_vocab != kiln_vocab_n_tokens(llm->vocab)) {
        st = kiln_diag_fail(&d, KILN_ERROR_MODEL, "the methods' logits have %zu entries, the vocabulary %zu tokens",
                            llm->n_vocab, kiln_vocab_n_tokens(llm->vocab));
        goto fail;
    }
    KILN_TRY_GOTO(st, allocate(llm, &d));
    llm->load_ms = 1e3 * (llm_now() - t0);
    llm->stats = (kiln_llm_stats){.struct_size = sizeof llm->stats, .load_ms = llm->load_ms};
    *out = llm;
    return KILN_OK;
fail:
    if (st == KILN_ERROR_OUT_OF_MEMORY && message && message_size && !message[0]) kiln_diag_fail(&d, st, "out of memory");
    kiln_llm_destroy(llm);
    return st;
}

void kiln_llm_destroy(kiln_llm *llm)
{
    if (!llm) return;
    const kiln_allocator *a = llm->allocator;
    for (size_t s = 0; llm->shards && s < llm->n_shards; s++) {
        kiln_method_unload(llm->shards[s].prefill);
        kiln_method_unload(llm->shards[s].decode);
        kiln_module_destroy(llm->shards[s].module);
    }
    kiln_free(a, llm->shards);
    kiln_scratch_group_release(llm->own_group);
    kiln_vocab_destroy(llm->vocab);
    kiln_free(a, llm->cache);
    kiln_free(a, llm->tokens);
    kiln_free(a, llm->logits);
    kiln_free(a, llm->in_tokens);
    kiln_free(a, llm->in_positions);
    kiln_free(a, llm->in_mask);
    kiln_free(a, llm);
}

const char *kiln_llm_last_error(const kiln_llm *llm) { return llm ? llm->error : ""; }
size_t kiln_llm_context_length(const kiln_llm *llm) { return llm ? llm->n_ctx : 0; }
size_t kiln_llm_prefill_length(const kiln_llm *llm) { return llm ? llm->n_batch : 0; }
size_t kiln_llm_n_vocab(const kiln_llm *llm) { return llm ? llm->n_vocab : 0; }
size_t kiln_llm_n_layers(const kiln_llm *llm) { return llm ? llm->n_layer : 0; }
int32_t kiln_llm_bos(const kiln_llm *llm) { return llm ? kiln_vocab_bos(llm->vocab) : -1; }
int32_t kiln_llm_eos(const kiln_llm *llm) { return llm ? kiln_vocab_eos(llm->vocab) : -1; }
double kiln_llm_load_ms(const kiln_llm *llm) { return llm ? llm->load_ms : 0; }
