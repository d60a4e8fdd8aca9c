/* shards.c — kiln_compile_shards: one model compiled as N programs that run in sequence, plus
 * the text manifest that says how their inputs and outputs connect (docs/cli.md).
 *
 * Layer: compiler. The model is imported, inferred and folded once to plan the cuts
 * (shard_plan.c); each shard is then written back as an ONNX model (shard_onnx.c) and compiled
 * by kiln_compile_memory with the caller's options, so every compile option applies to shards
 * exactly as to a whole model. A GGUF LLM is cut by blocks instead (shards_gguf.c: each shard a
 * program of both methods over its blocks). Afterwards the largest scratch need over all shards' context
 * binaries is recorded as the group size in each (program_scratch.h), so their contexts join
 * one scratch group of that size. Files are written only once every shard compiled: each shard
 * atomically, then the manifest; a failure removes whatever this call had already written. No
 * output may be the model itself (checked before any work, output_file.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/gguf/gguf_import.h"
#include "compiler/onnx/onnx_import.h"
#include "compiler/onnx/onnx_tensor.h"
#include "compiler/output_file.h"
#include "compiler/program_scratch.h"
#include "compiler/shard_manifest_text.h"
#include "compiler/shard_plan.h"
#include "compiler/shards_gguf.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/diag.h"
#include "core/text_escape.h"
#include "kiln/compiler.h"

#define MAX_SHARDS 1024

typedef struct shard_job {
    const kiln_compile_options *opt;
    const kiln_allocator *a;
    const kiln_compile_method *method;
    size_t n_shards;
    const char *manifest_path;
    char *message;
    size_t message_size;
    /* owned */
    uint8_t *model_file;        /* the model read from model_path, or NULL */
    Onnx__ModelProto *model;
    const void *gguf;           /* a GGUF LLM's bytes (model_file's or the caller's), or NULL */
    size_t gguf_size;
    kiln_ir_graph g;
    bool g_live;
    kiln_shard_plan plan;
    void **programs;            /* (n_shards) compiled shard programs */
    size_t *sizes;
    char **paths;               /* (n_shards) where shard i goes */
} shard_job;

/* The first failure's message wins; returns st. Paths and names in it are escaped by the caller
   (kiln_text_escape); `inner` messages of kiln_compile_memory come escaped already. */
static kiln_status fail(shard_job *j, kiln_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static kiln_status fail(shard_job *j, kiln_status st, const char *fmt, ...)
{
    kiln_diag d = kiln_diag_over(j->message, j->message_size);
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail(&d, st, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- model ----------------------------------------------------------------------------------- */

static void *pb_alloc(void *ctx, size_t size) { return kiln_alloc(ctx, size, 16); }
static void pb_free(void *ctx, void *p) { kiln_free(ctx, p); }

static kiln_status load_model(shard_job *j)
{
    const void *bytes = j->method->model_data;
    size_t size = j->method->model_size;
    if (j->method->model_path) {
        const char *why;
        kiln_status st = kiln_read_file(j->method->model_path, j->a, &j->model_file, &size, &why);
        char path[1024];
        if (st != KILN_OK) /* unreadable is an invalid input, as in kiln_compile_file */
            return fail(j, st == KILN_ERROR_OUT_OF_MEMORY ? st : KILN_ERROR_MODEL, "cannot read model '%s': %s",
                        kiln_text_escape(path, sizeof path, j->method->model_path, (size_t)-1), why);
        bytes = j->model_file;
    }
    kiln_ir_graph_init(&j->g, j->a, j->message, j->message_size);
    j->g_live = true;
    kiln_import_source src = {bytes, size, j->method->model_path};
    kiln_import_options io = {.method = j->method->name, .shapes = j->opt->input_shapes,
                              .n_shapes = j->opt->n_input_shapes,
                              .shapes_by_position = j->opt->input_shapes_by_position != 0};
    /* Shards of an ONNX model are written back as ONNX models (shard_onnx.c); a GGUF LLM is cut
       by blocks and compiled by its importer (shards_gguf.c), from these bytes. Asked before the
       import, whose own refusals would hide why. */
    const kiln_importer *used = kiln_importer_pick(bytes, size);
    if (used == &kiln_gguf_model_importer) {
        if (strcmp(j->method->name, "forward") != 0)
            return fail(j, KILN_ERROR_COMPILE_SPEC, "--shards: a GGUF LLM is sharded whole, as its methods prefill and "
                        "decode: give it as the one model, not as a named method");
        j->gguf = bytes;
        j->gguf_size = size;
        return KILN_OK;
    }
    if (used && used != &kiln_onnx_model_importer)
        return fail(j, KILN_ERROR_COMPILE_SPEC, "--shards cuts ONNX and GGUF models only; this model is %s", used->name);
    KILN_TRY(kiln_import_model(&j->g, &src, &io, &used));
    /* Each shard is compiled from its ONNX model alone, which cannot carry the graph's program
       metadata; the ONNX importer attaches none, so this only guards a future one that does. */
    if (j->g.n_metadata) {
        char key[KILN_ESCAPED_NAME_SIZE];
        return fail(j, KILN_ERROR_NOT_SUPPORTED, "--shards: the model carries program metadata ('%s'), which shards "
                    "do not carry", kiln_text_escape(key, sizeof key, j->g.metadata[0].key, (size_t)-1));
    }
    KILN_TRY(kiln_ir_infer_and_fold(&j->g));
    ProtobufCAllocator pa = {pb_alloc, pb_free, (void *)j->a};
    j->model = onnx__model_proto__unpack(&pa, size, bytes);
    KILN_CHECK(j->model, KILN_ERROR_OUT_OF_MEMORY); /* the importer parsed the same bytes */
    kiln_free(j->a, j->model_file); /* protobuf-c copied what it keeps */
    j->model_file = NULL;
    return KILN_OK;
}

/* ---- compiling the shards ------------------------------------------------------------------- */

static kiln_status compile_shard(shard_job *j, size_t i)
{
    void *onnx;
    size_t onnx_size;
    kiln_status st = kiln_shard_to_onnx(&j->g, j->model, &j->plan.shards[i], i, j->a, &onnx, &onnx_size);
    if (st != KILN_OK) return fail(j, st, "shard %zu: cannot rebuild its ONNX model", i);
    /* Shapes are baked into the shard models: the caller's input shapes name the whole model's
       inputs, which later shards do not have. */
    kiln_compile_options opt = *j->opt;
    opt.input_shapes = NULL;
    opt.n_input_shapes = 0;
    opt.input_shapes_by_position = 0;
    kiln_compile_method m = {.name = j->method->name, .model_data = onnx, .model_size = onnx_size};
    char inner[768];
    st = kiln_compile_memory(&opt, &m, 1, &j->programs[i], &j->sizes[i], inner, sizeof inner);
    kiln_free(j->a, onnx);
    /* A bad compile spec is no shard's fault: say it as kiln_compile_file would. */
    bool spec = st == KILN_ERROR_COMPILE_SPEC || st == KILN_ERROR_INVALID_ARGUMENT;
    if (st != KILN_OK && spec) fail(j, st, "%s", inner);
    else if (st != KILN_OK) fail(j, st, "shard %zu of %zu: %s", i, j->n_shards, inner);
    return st;
}

/* The largest scratch need of any shard becomes every shard's group size. */
static kiln_status size_group(shard_job *j)
{
    uint64_t group = 0;
    for (size_t i = 0; i < j->n_shards; i++) {
        kiln_program_scratch q;
        KILN_TRY(kiln_program_scratch_query(j->programs[i], j->sizes[i], &q));
        if (q.need > group) group = q.need;
    }
    for (size_t i = 0; group && i < j->n_shards; i++)
        KILN_TRY(kiln_program_scratch_set_group(j->programs[i], j->sizes[i], group));
    return KILN_OK;
}

/* ---- files ------------------------------------------------------------------------------------ */

/* OUT minus the extension of its last path component, + "-shard<i>.kiln". */
static kiln_status shard_paths(shard_job *j)
{
    const char *path = j->manifest_path, *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t base = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
    j->paths = kiln_alloc_zero(j->a, j->n_shards * sizeof *j->paths, _Alignof(char *));
    KILN_CHECK(j->paths, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < j->n_shards; i++) {
        size_t n = base + 32;
        j->paths[i] = kiln_alloc(j->a, n, 1);
        KILN_CHECK(j->paths[i], KILN_ERROR_OUT_OF_MEMORY);
        snprintf(j->paths[i], n, "%.*s-shard%zu.kiln", (int)base, path, i);
    }
    return KILN_OK;
}

static kiln_status manifest_text(shard_job *j, kiln_buf *b)
{
    const kiln_ir_graph *g = &j->g;
    bool ok = kiln_manifest_head(b, j->method->name, j->n_shards, j->paths);
    for (size_t k = 0; ok && k < g->n_inputs; k++)
        ok = kiln_manifest_line(b, "graph-input %zu %s", k, g->values[g->inputs[k]].name);
    for (size_t i = 0; ok && i < j->n_shards; i++) {
        const kiln_shard *s = &j->plan.shards[i];
        for (size_t k = 0; ok && k < s->n_inputs; k++) {
            char head[64];
            snprintf(head, sizeof head, "input %zu %zu", i, k);
            ok = kiln_manifest_source(b, head, &j->plan.input_from[i][k], g->values[s->inputs[k]].name);
        }
    }
    for (size_t k = 0; ok && k < g->n_outputs; k++) {
        char head[64];
        snprintf(head, sizeof head, "output %zu", k);
        ok = kiln_manifest_source(b, head, &j->plan.output_from[k], g->values[g->outputs[k]].name);
    }
    return ok ? KILN_OK : KILN_ERROR_OUT_OF_MEMORY;
}

static kiln_status write_files(shard_job *j, const kiln_buf *manifest)
{
    kiln_status st = KILN_OK;
    size_t written = 0;
    char why[768] = ""; /* the writer's line, which names the file and the reason */
    while (st == KILN_OK && written < j->n_shards) {
        kiln_file_piece program = {j->programs[written], j->sizes[written]};
        st = kiln_file_write_atomic(NULL, j->a, j->paths[written], &program, 1, why, sizeof why);
        if (st != KILN_OK) fail(j, st, "cannot write shard program %zu: %s", written, why);
        else written++;
    }
    if (st == KILN_OK) {
        kiln_file_piece text = {manifest->data, manifest->size};
        st = kiln_file_write_atomic(NULL, j->a, j->manifest_path, &text, 1, why, sizeof why);
        if (st != KILN_OK) fail(j, st, "cannot write the manifest: %s", why);
    }
    if (st != KILN_OK)
        for (size_t i = 0; i < written; i++) remove(j->paths[i]); /* the ones this call completed */
    return st;
}

/* ---- driver ------------------------------------------------------------------------------------ */

static kiln_status check_args(shard_job *j)
{
    if (!j->opt || j->opt->struct_size < sizeof(kiln_compile_options))
        return fail(j, KILN_ERROR_INVALID_ARGUMENT,
                    "compile options: struct_size must be sizeof(kiln_compile_options)");
    if (!j->method || !j->method->name || !j->method->name[0] || (!j->method->model_path && !j->method->model_data))
        return fail(j, KILN_ERROR_INVALID_ARGUMENT, "sharding needs one method with a name and a model");
    if (!j->manifest_path || !j->manifest_path[0])
        return fail(j, KILN_ERROR_INVALID_ARGUMENT, "sharding needs an output path for the manifest");
    if (j->n_shards < 1 || j->n_shards > MAX_SHARDS)
        return fail(j, KILN_ERROR_COMPILE_SPEC, "--shards wants 1 to %d shards, got %zu", MAX_SHARDS, j->n_shards);
    return KILN_OK;
}

static void release(shard_job *j)
{
    for (size_t i = 0; j->programs && i < j->n_shards; i++) kiln_free(j->a, j->programs[i]);
    for (size_t i = 0; j->paths && i < j->n_shards; i++) kiln_free(j->a, j->paths[i]);
    kiln_free(j->a, j->programs);
    kiln_free(j->a, j->sizes);
    kiln_free(j->a, j->paths);
    if (j->model) {
        ProtobufCAllocator pa = {pb_alloc, pb_free, (void *)j->a};
        onnx__model_proto__free_unpacked(j->model, &pa);
    }
    if (j->g_live) kiln_ir_graph_deinit(&j->g);
    kiln_free(j->a, j->model_file);
}

kiln_status kiln_compile_shards(const kiln_compile_options *options, const kiln_compile_method *method, size_t n_shards,
                                const char *manifest_path, char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    shard_job j = {.opt = options, .method = method, .n_shards = n_shards, .manifest_path = manifest_path,
                   .message = message, .message_size = message_size};
    KILN_TRY(check_args(&j));
    j.a = options->allocator ? options->allocator : kiln_allocator_default();
    /* Every output is named before any work, so one that is the model itself is refused first. */
    kiln_status st = shard_paths(&j);
    for (size_t i = 0; st == KILN_OK && i < n_shards; i++)
        st = kiln_compile_check_output(method, 1, j.paths[i], message, message_size);
    if (st == KILN_OK) st = kiln_compile_check_output(method, 1, manifest_path, message, message_size);
    if (st == KILN_OK) st = load_model(&j);
    if (st == KILN_OK) {
        j.programs = kiln_alloc_zero(j.a, n_shards * sizeof *j.programs, _Alignof(void *));
        j.sizes = kiln_alloc_zero(j.a, n_shards * sizeof *j.sizes, _Alignof(size_t));
        if (!j.programs || !j.sizes) st = KILN_ERROR_OUT_OF_MEMORY;
    }
    kiln_buf manifest;
    kiln_buf_init(&manifest, j.a);
    if (st == KILN_OK && j.gguf) {
        st = kiln_llm_shards_compile(options, j.gguf, j.gguf_size, method->model_path, n_shards, j.paths, j.programs,
                                     j.sizes, &manifest, message, message_size);
    } else if (st == KILN_OK) {
        st = kiln_shard_plan_make(&j.g, n_shards, &j.plan);
        for (size_t i = 0; st == KILN_OK && i < n_shards; i++) st = compile_shard(&j, i);
        if (st == KILN_OK) st = manifest_text(&j, &manifest);
    }
    if (st == KILN_OK) st = size_group(&j);
    if (st == KILN_OK) st = write_files(&j, &manifest);
    kiln_buf_deinit(&manifest);
    release(&j);
    if (st != KILN_OK && message && message_size && !message[0])
        snprintf(message, message_size, "%s", kiln_status_str(st));
    return st;
}
