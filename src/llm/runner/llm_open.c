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

static kiln_status load_methods(kiln_llm *llm, kiln_program *program, const kiln_llm_options *options, kiln_diag *d)
{
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "decode" : "prefill";
        if (!program_has_method(program, name))
            return kiln_diag_fail(d, KILN_ERROR_MODEL,
                                  "not an LLM program (kiln compile MODEL.gguf makes one): it has no method '%s'",
                                  name);
    }
    kiln_module_options mo = {.struct_size = sizeof mo};
    if (options) {
        mo.allocator = options->allocator;
        mo.scratch_group = options->scratch_group;
        mo.num_threads = options->num_threads;
        mo.target = options->target;
    }
    char why[512];
    kiln_status st = kiln_module_create_with_message(program, &mo, &llm->module, why, sizeof why);
    if (st != KILN_OK) return kiln_diag_fail(d, st, "creating the module failed: %s", why[0] ? why : kiln_status_str(st));
    st = kiln_method_load_with_message(llm->module, "prefill", &llm->prefill, why, sizeof why);
    if (st == KILN_OK) st = kiln_method_load_with_message(llm->module, "decode", &llm->decode, why, sizeof why);
    if (st != KILN_OK) return kiln_diag_fail(d, st, "%s", why[0] ? why : kiln_status_str(st));
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
    kiln_diag d = kiln_diag_over(message, message_size);
    kiln_diag_clear(&d);
    if (!out) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: out is NULL");
    *out = NULL;
    if (!program) return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: program is NULL");
    if (options && options->struct_size < sizeof *options)
        return kiln_diag_fail(&d, KILN_ERROR_INVALID_ARGUMENT, "kiln_llm_create: options->struct_size is %zu, at least %zu",
                              options->struct_size, sizeof *options);
    double t0 = llm_now();
    const kiln_allocator *a = options && options->allocator ? options->allocator : kiln_allocator_default();
    kiln_llm *llm = KILN_NEW(a, kiln_llm);
    if (!llm) return kiln_diag_fail(&d, KILN_ERROR_OUT_OF_MEMORY, "out of memory");
    llm->allocator = a;
    kiln_status st;
    KILN_TRY_GOTO(st, llm_vocab_from_program(program, a, &llm->vocab, &d));
    KILN_TRY_GOTO(st, load_methods(llm, program, options, &d));
    llm_layout lay;
    KILN_TRY_GOTO(st, llm_layout_read(llm->prefill, llm->decode, &lay, &d));
    if (lay.n_vocab != kiln_vocab_n_tokens(llm->vocab)) {
        st = kiln_diag_fail(&d, KILN_ERROR_MODEL, "the methods' logits have %zu entries, the vocabulary %zu tokens",
                            lay.n_vocab, kiln_vocab_n_tokens(llm->vocab));
        goto fail;
    }
    llm->n_ctx = lay.n_ctx, llm->n_batch = lay.n_batch, llm->n_layer = lay.n_layer, llm->n_kv = lay.n_kv;
    llm->n_vocab = lay.n_vocab;
    KILN_TRY_GOTO(st, allocate(llm, &d));
    llm->load_ms = 1e3 * (llm_now() - t0);
    llm->stats = (kiln_llm_stats){.struct_size = sizeof llm->stats, .load_ms = llm->load_ms};
    *out = llm;
    return KILN_OK;
fail:
    kiln_llm_destroy(llm);
    return st;
}

void kiln_llm_destroy(kiln_llm *llm)
{
    if (!llm) return;
    const kiln_allocator *a = llm->allocator;
    kiln_method_unload(llm->prefill);
    kiln_method_unload(llm->decode);
    kiln_module_destroy(llm->module);
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
