/* compile.c — the compiler driver behind include/kiln/compiler.h: validate the options and the
 * compile spec (compile_spec.c) before any work, then in three phases over the methods:
 *   1. import, infer and fold each method;
 *   2. delegate, backend by backend (compiler_backend.h: a caller's extra backends, then the
 *      built-in table): each method's partitions into payloads of their own, or with weight
 *      sharing partition i of every method into one payload with a graph per method;
 *   3. plan and emit each method, in method order;
 * then the program's largest cpu scratch need becomes the scratch-group size of every one of its
 * context binaries (so one module holds one scratch buffer, not one per distinct need), and the
 * atomic file write (core/file_write.h), refused when the output is one of the models.
 *
 * Models are read by the importer their content names (importer.h), never by file extension.
 * One GGUF LLM under the default method name becomes its two methods, prefill and decode, with
 * weight sharing (expand_llm; docs/llm.md).
 *
 * Layer: compiler. Every intermediate (IR arenas and the payloads the graphs own, the builder,
 * the program bytes, temporary files) is released on success and on failure through one cleanup
 * path per function; the graphs all live until the program is finished, because the builder and
 * shared payloads reference their memory.
 */
#include "kiln/compiler.h"

#include <stdio.h>
#include <string.h>

#include "compiler/compile_metadata.h"
#include "compiler/compile_part.h"
#include "compiler/compile_spec.h"
#include "compiler/compiler_backend.h"
#include "compiler/emit.h"
#include "compiler/gguf/gguf_import.h"
#include "compiler/importer.h"
#include "compiler/onnx/onnx_tensor.h"
#include "compiler/output_file.h"
#include "compiler/partition.h"
#include "compiler/program_scratch.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/cpu_features.h"
#include "core/diag.h"
#include "core/file_open.h"
#include "core/text_escape.h"

#include <unistd.h>

static void set_message(char *message, size_t size, const char *fmt, const char *a, const char *b)
{
    kiln_diag d = kiln_diag_over(message, size);
    kiln_diag_fail(&d, KILN_OK, fmt, a, b);
}

/* Phase 1: the method's model as an IR graph with static shapes inferred and constants folded.
   g is initialised first, so the caller's cleanup can deinit it whatever fails. */
static kiln_status import_method(const kiln_compile_options *opt, const kiln_llm_layers *layers,
                                 const kiln_allocator *a, const kiln_compile_method *m, char *message,
                                 size_t message_size, kiln_ir_graph *g)
{
    kiln_ir_graph_init(g, a, message, message_size);
    uint8_t *file = NULL;
    const void *bytes = m->model_data;
    size_t size = m->model_size;
    kiln_status st;
    if (m->model_path) {
        const char *why;
        st = kiln_read_file(m->model_path, a, &file, &size, &why);
        if (st != KILN_OK) {
            char path[KILN_ESCAPED_NAME_SIZE];
            set_message(message, message_size, "cannot read model '%s': %s",
                        kiln_text_escape(path, sizeof path, m->model_path, (size_t)-1), why);
            /* An unreadable model file is an invalid input (exit 4, docs/cli.md), as a corrupt one is. */
            return st == KILN_ERROR_OUT_OF_MEMORY ? st : KILN_ERROR_MODEL;
        }
        bytes = file;
    }
    kiln_import_source src = {bytes, size, m->model_path};
    kiln_import_options io = {.method = m->name, .shapes = opt->input_shapes, .n_shapes = opt->n_input_shapes,
                              .shapes_by_position = opt->input_shapes_by_position != 0,
                              .llm_context = opt->llm_context, .llm_prefill = opt->llm_prefill,
                              .llm_layers = layers};
    st = kiln_import_model(g, &src, &io, NULL);
    kiln_free(a, file); /* the IR holds copies of everything it needs */
    if (st != KILN_OK) return st;
    return kiln_ir_infer_and_fold(g);
}

/* A backend of this compilation with its spec in normal form. */
typedef struct backend_run {
    const kiln_compiler_backend *backend;
    kiln_compile_kv spec[KILN_COMPILE_KV_MAX];
    size_t n_spec;
} backend_run;

/* The backends in claiming order: the extra ones, then the built-in table (entry 0 with the
   options' spec, the others with none), each spec through its backend's validate_spec. */
static kiln_status make_runs(const kiln_compile_spec *cs, const kiln_compiler_backend_use *extra, size_t n_extra,
                             const kiln_allocator *a, backend_run **out, size_t *n_out, char *message,
                             size_t message_size)
{
    size_t n_builtin;
    const kiln_compiler_backend *const *builtin = kiln_compiler_builtin_backends(&n_builtin);
    size_t n = n_extra + n_builtin;
    backend_run *runs = kiln_alloc_zero(a, n * sizeof *runs, 16);
    KILN_CHECK(runs, KILN_ERROR_OUT_OF_MEMORY);
    *out = runs;
    *n_out = n;
    for (size_t i = 0; i < n; i++) {
        backend_run *r = &runs[i];
        const kiln_compile_kv *kv = NULL;
        size_t n_kv = 0;
        if (i < n_extra) {
            KILN_CHECK(extra[i].backend && (extra[i].spec || !extra[i].n_spec), KILN_ERROR_INVALID_ARGUMENT);
            r->backend = extra[i].backend;
            kv = extra[i].spec;
            n_kv = extra[i].n_spec;
        } else if (i == n_extra) {
            r->backend = builtin[0];
            memcpy(r->spec, cs->normal, cs->n_normal * sizeof *cs->normal);
            r->n_spec = cs->n_normal;
            continue;
        } else {
            r->backend = builtin[i - n_extra];
        }
        KILN_TRY(r->backend->validate_spec(kv, n_kv, kiln_cpu_features(), r->spec, KILN_COMPILE_KV_MAX, &r->n_spec,
                                           message, message_size));
    }
    return KILN_OK;
}

/* Phase 2: the delegates of every method, backend by backend: a node an earlier backend took is
   a delegate call, which no later backend takes. */
static kiln_status delegate_methods(const kiln_compile_spec *cs, const backend_run *runs, size_t n_runs,
                                    const kiln_compile_method *methods, size_t n, kiln_ir_graph *graphs)
{
    if (!cs->delegate) return KILN_OK;
    for (size_t r = 0; r < n_runs; r++) {
        const backend_run *run = &runs[r];
        if (cs->weight_sharing) {
            KILN_TRY(kiln_ir_delegate_shared(graphs, methods, n, run->backend, run->spec, run->n_spec));
            continue;
        }
        for (size_t i = 0; i < n; i++)
            KILN_TRY(kiln_ir_delegate(&graphs[i], methods[i].name, run->backend, run->spec, run->n_spec));
    }
    return KILN_OK;
}

/* Phase 3: plan the method's memory and write it into the program. */
static kiln_status emit_method(kiln_ir_graph *g, const char *name, kiln_program_builder *b)
{
    kiln_ir_plan plan;
    kiln_status st = kiln_ir_plan_memory(g, &plan);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "memory planning failed: %s", kiln_status_str(st));
    st = kiln_ir_emit_method(g, &plan, name, b);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "writing method '%s' failed: %s", name, kiln_status_str(st));
    return KILN_OK;
}

static kiln_status validate(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n,
                            kiln_compile_spec *spec, char *message, size_t message_size)
{
    if (!opt || opt->struct_size < sizeof(kiln_compile_options)) {
        set_message(message, message_size, "compile options: struct_size must be sizeof(kiln_compile_options)%s%s", "", "");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    if (!methods || n == 0) {
        set_message(message, message_size, "nothing to compile: give a model or --method NAME=MODEL.onnx%s%s", "", "");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    KILN_TRY(kiln_compile_spec_make(opt, spec, message, message_size));
    if (opt->slc && opt->no_delegate) {
        set_message(message, message_size, "slc plans the cpu delegates' scratch but delegation is off "
                    "(no_delegate)%s%s; drop one of the two", "", "");
        return KILN_ERROR_COMPILE_SPEC;
    }
    for (size_t i = 0; i < n; i++) {
        if (!methods[i].name || !methods[i].name[0] || (!methods[i].model_path && !methods[i].model_data)) {
            set_message(message, message_size, "method %s%s has no name or no model", "", "");
            return KILN_ERROR_INVALID_ARGUMENT;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(methods[i].name, methods[j].name) == 0) {
                set_message(message, message_size, "method '%s' is given twice%s", methods[i].name, "");
                return KILN_ERROR_COMPILE_SPEC;
            }
        }
    }
    return KILN_OK;
}

/* Every cpu context binary of the program records the program's largest scratch need as its
   group size, so at load its contexts join one scratch group — one buffer of that size — where
   a group size of 0 would give them one group per distinct need (torchvision squeezenet1_0 for
   x86-64-v3: 9 groups holding 16.2 MB, against one of 6.1 MB). The delegate calls of a method
   run one after the other anyway; the group serialises its members' use of the buffer, as it
   already did for contexts of equal need. */
static kiln_status one_scratch_group(void *data, size_t size)
{
    kiln_program_scratch q;
    KILN_TRY(kiln_program_scratch_query(data, size, &q));
    if (q.need == 0) return KILN_OK; /* no binary has intermediates: nothing to share */
    return kiln_program_scratch_set_group(data, size, q.need);
}

/* Whether the method's model is a GGUF file, from its first bytes (an unreadable file is not:
   the import reports why it cannot be read). */
static bool model_is_gguf(const kiln_compile_method *m)
{
    if (!m->model_path) return m->model_data && kiln_gguf_probe(m->model_data, m->model_size) > 0;
    int fd;
    if (kiln_file_open_read(m->model_path, &fd, NULL, NULL) != KILN_OK) return false;
    unsigned char head[8];
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && kiln_gguf_probe(head, sizeof head) > 0;
}

/* One GGUF LLM under the default method name is the program docs/llm.md lays out: its two
   methods, prefill and decode, over the same file, compiled with weight sharing (unless
   nothing is delegated) so both run one context binary per partition over one copy of the
   weights. Rewrites *methods, *n and *opt to point at llm and llm_opt then. */
static void expand_llm(const kiln_compile_options **opt, const kiln_compile_method **methods, size_t *n,
                       kiln_compile_options *llm_opt, kiln_compile_method llm[2])
{
    if (!*opt || (*opt)->struct_size < sizeof(kiln_compile_options) || !*methods || *n != 1) return;
    if (!(*methods)[0].name || strcmp((*methods)[0].name, "forward") != 0 || !model_is_gguf(&(*methods)[0])) return;
    llm[0] = llm[1] = (*methods)[0];
    llm[0].name = KILN_GGUF_METHOD_PREFILL;
    llm[1].name = KILN_GGUF_METHOD_DECODE;
    *llm_opt = **opt;
    llm_opt->weight_sharing = !llm_opt->no_delegate;
    *opt = llm_opt;
    *methods = llm;
    *n = 2;
}

kiln_status kiln_compile_memory(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                                void **out_data, size_t *out_size, char *message, size_t message_size)
{
    return kiln_compile_memory_backends(opt, methods, n_methods, NULL, 0, out_data, out_size, message, message_size);
}

static kiln_status compile_memory(const kiln_compile_options *opt, const kiln_compile_method *methods,
                                  size_t n_methods, const kiln_compiler_backend_use *extra, size_t n_extra,
                                  const kiln_llm_layers *layers, void **out_data, size_t *out_size, char *message,
                                  size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    KILN_CHECK(out_data && out_size, KILN_ERROR_INVALID_ARGUMENT);
    *out_data = NULL;
    *out_size = 0;
    kiln_compile_options llm_opt;
    kiln_compile_method llm[2];
    expand_llm(&opt, &methods, &n_methods, &llm_opt, llm);
    kiln_compile_spec spec;
    KILN_TRY(validate(opt, methods, n_methods, &spec, message, message_size));
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    kiln_program_builder *b = NULL;
    kiln_ir_graph *graphs = NULL;
    size_t n_graphs = 0;
    backend_run *runs = NULL;
    size_t n_runs = 0;
    kiln_status st;
    KILN_TRY_GOTO(st, make_runs(&spec, extra, n_extra, a, &runs, &n_runs, message, message_size));
    KILN_TRY_GOTO(st, kiln_program_builder_create(a, &b));
    /* Graphs stay alive until finish(): the builder references their constants' bytes. */
    graphs = kiln_alloc_zero(a, n_methods * sizeof *graphs, 16);
    KILN_CHECK_GOTO(graphs, st, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n_methods; i++) {
        n_graphs++;
        KILN_TRY_GOTO(st, import_method(opt, layers, a, &methods[i], message, message_size, &graphs[i]));
    }
    KILN_TRY_GOTO(st, kiln_compile_metadata_union(graphs, methods, n_methods, b, message, message_size));
    KILN_TRY_GOTO(st, delegate_methods(&spec, runs, n_runs, methods, n_methods, graphs));
    for (size_t i = 0; i < n_methods; i++) KILN_TRY_GOTO(st, emit_method(&graphs[i], methods[i].name, b));
    st = kiln_program_builder_finish(b, out_data, out_size);
    if (st != KILN_OK) set_message(message, message_size, "writing the program failed: %s%s", kiln_status_str(st), "");
    if (st == KILN_OK && spec.delegate) {
        st = one_scratch_group(*out_data, *out_size);
        if (st != KILN_OK) {
            set_message(message, message_size, "recording the scratch-group size failed: %s%s", kiln_status_str(st), "");
            kiln_free(a, *out_data);
            *out_data = NULL;
            *out_size = 0;
        }
    }
fail:
    for (size_t i = 0; i < n_graphs; i++) kiln_ir_graph_deinit(&graphs[i]);
    kiln_free(a, graphs);
    kiln_free(a, runs);
    kiln_program_builder_destroy(b);
    if (st != KILN_OK && message && message_size && !message[0])
        snprintf(message, message_size, "%s", kiln_status_str(st));
    return st;
}

kiln_status kiln_compile_memory_backends(const kiln_compile_options *opt, const kiln_compile_method *methods,
                                         size_t n_methods, const kiln_compiler_backend_use *extra, size_t n_extra,
                                         void **out_data, size_t *out_size, char *message, size_t message_size)
{
    return compile_memory(opt, methods, n_methods, extra, n_extra, NULL, out_data, out_size, message, message_size);
}

kiln_status kiln_compile_memory_llm_part(const kiln_compile_options *opt, const kiln_compile_method *model,
                                         const kiln_llm_layers *layers, void **out_data, size_t *out_size,
                                         char *message, size_t message_size)
{
    return compile_memory(opt, model, 1, NULL, 0, layers, out_data, out_size, message, message_size);
}

kiln_status kiln_compile_check_output(const kiln_compile_method *methods, size_t n_methods, const char *out_path,
                                      char *message, size_t message_size)
{
    for (size_t i = 0; methods && out_path && i < n_methods; i++) {
        if (!methods[i].model_path || !kiln_file_same(methods[i].model_path, out_path)) continue;
        if (message && message_size && !message[0])
            snprintf(message, message_size,
                     "output '%s' is the same file as the model '%s' of method '%s'; writing it would destroy the "
                     "model: choose another output path", out_path, methods[i].model_path,
                     methods[i].name ? methods[i].name : "");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    return KILN_OK;
}

kiln_status kiln_compile_file_io(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                                 const char *out_path, const kiln_file_io *io, char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    KILN_CHECK(out_path, KILN_ERROR_INVALID_ARGUMENT);
    KILN_TRY(kiln_compile_check_output(methods, n_methods, out_path, message, message_size));
    void *data;
    size_t size;
    KILN_TRY(kiln_compile_memory(opt, methods, n_methods, &data, &size, message, message_size));
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    kiln_file_piece piece = {data, size};
    kiln_status st = kiln_file_write_atomic(io, a, out_path, &piece, 1, message, message_size);
    kiln_free(a, data);
    return st;
}

kiln_status kiln_compile_file(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                              const char *out_path, char *message, size_t message_size)
{
    return kiln_compile_file_io(opt, methods, n_methods, out_path, NULL, message, message_size);
}
