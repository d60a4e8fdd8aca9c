/* compile.c — the compiler driver behind include/kiln/compiler.h: validate the options, then
 * per method import, infer and fold, partition into `cpu` delegates, plan, emit; and an atomic
 * file write.
 *
 * Layer: compiler. Every intermediate (IR arenas, the builder, temporary files) is released on
 * success and on failure through one cleanup path per function.
 */
#include "kiln/compiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/cpu/targets.h"
#include "compiler/emit.h"
#include "compiler/onnx/onnx_import.h"
#include "compiler/onnx/onnx_tensor.h"
#include "compiler/partition.h"
#include "core/alloc.h"
#include "core/check.h"

static void set_message(char *message, size_t size, const char *fmt, const char *a, const char *b)
{
    if (message && size && message[0] == '\0') snprintf(message, size, fmt, a, b);
}

static kiln_status compile_method(const kiln_compile_options *opt, const kiln_allocator *a,
                                  const kiln_compile_method *m, kiln_program_builder *b, char *message,
                                  size_t message_size, kiln_ir_graph *g)
{
    uint8_t *file = NULL;
    const void *bytes = m->model_data;
    size_t size = m->model_size;
    kiln_status st;
    if (m->model_path) {
        st = kiln_read_file(m->model_path, a, &file, &size);
        if (st != KILN_OK) {
            set_message(message, message_size, "cannot read model '%s'%s", m->model_path, "");
            return st;
        }
        bytes = file;
    }
    kiln_ir_graph_init(g, a, message, message_size);
    st = kiln_onnx_import(g, bytes, size, opt->input_shapes, opt->n_input_shapes, opt->input_shapes_by_position != 0);
    kiln_free(a, file); /* the IR holds copies of everything it needs */
    if (st != KILN_OK) return st;
    KILN_TRY(kiln_ir_infer_and_fold(g));
    if (!opt->no_delegate) {
        /* Without a target list: the best target of the machine that compiles. */
        const char *best = kiln_cpu_target_best()->name;
        KILN_TRY(kiln_ir_delegate_cpu(g, m->name, opt->targets ? opt->targets : &best, opt->targets ? opt->n_targets : 1));
    }
    kiln_ir_plan plan;
    st = kiln_ir_plan_memory(g, &plan);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "memory planning failed: %s", kiln_status_str(st));
    st = kiln_ir_emit_method(g, &plan, m->name, b);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "writing method '%s' failed: %s", m->name, kiln_status_str(st));
    return KILN_OK;
}

static kiln_status validate(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n,
                            char *message, size_t message_size)
{
    if (!opt || opt->struct_size < sizeof(kiln_compile_options)) {
        set_message(message, message_size, "compile options: struct_size must be sizeof(kiln_compile_options)%s%s", "", "");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    if (!methods || n == 0) {
        set_message(message, message_size, "nothing to compile: give a model or --method NAME=MODEL.onnx%s%s", "", "");
        return KILN_ERROR_INVALID_ARGUMENT;
    }
    if (opt->targets || opt->n_targets) {
        if (opt->no_delegate) {
            set_message(message, message_size, "targets were given but delegation is off (no_delegate)%s%s; "
                        "drop one of the two", "", "");
            return KILN_ERROR_COMPILE_SPEC;
        }
        if (!opt->targets) {
            set_message(message, message_size, "n_targets is set but the target list is NULL%s%s", "", "");
            return KILN_ERROR_INVALID_ARGUMENT;
        }
        KILN_TRY(kiln_cpu_aot_validate_targets(opt->targets, opt->n_targets, message, message_size));
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

kiln_status kiln_compile_memory(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                                void **out_data, size_t *out_size, char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    KILN_CHECK(out_data && out_size, KILN_ERROR_INVALID_ARGUMENT);
    *out_data = NULL;
    *out_size = 0;
    KILN_TRY(validate(opt, methods, n_methods, message, message_size));
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    kiln_program_builder *b = NULL;
    kiln_status st = kiln_program_builder_create(a, &b);
    if (st != KILN_OK) return st;
    /* Graphs stay alive until finish(): the builder references their constants' bytes. */
    kiln_ir_graph *graphs = kiln_alloc_zero(a, n_methods * sizeof *graphs, 16);
    size_t n_graphs = 0;
    KILN_CHECK_GOTO(graphs, st, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n_methods; i++) {
        n_graphs++;
        st = compile_method(opt, a, &methods[i], b, message, message_size, &graphs[i]);
        if (st != KILN_OK) goto fail;
    }
    st = kiln_program_builder_finish(b, out_data, out_size);
    if (st != KILN_OK) set_message(message, message_size, "writing the program failed: %s%s", kiln_status_str(st), "");
fail:
    for (size_t i = 0; i < n_graphs; i++) kiln_ir_graph_deinit(&graphs[i]);
    kiln_free(a, graphs);
    kiln_program_builder_destroy(b);
    if (st != KILN_OK && message && message_size && !message[0])
        snprintf(message, message_size, "%s", kiln_status_str(st));
    return st;
}

kiln_status kiln_compile_file(const kiln_compile_options *opt, const kiln_compile_method *methods, size_t n_methods,
                              const char *out_path, char *message, size_t message_size)
{
    if (message && message_size) message[0] = '\0';
    KILN_CHECK(out_path, KILN_ERROR_INVALID_ARGUMENT);
    void *data;
    size_t size;
    KILN_TRY(kiln_compile_memory(opt, methods, n_methods, &data, &size, message, message_size));
    const kiln_allocator *a = opt->allocator ? opt->allocator : kiln_allocator_default();
    size_t n = strlen(out_path) + 16;
    char *tmp = kiln_alloc(a, n, 1);
    kiln_status st = KILN_OK;
    FILE *f = NULL;
    KILN_CHECK_GOTO(tmp, st, KILN_ERROR_OUT_OF_MEMORY);
    snprintf(tmp, n, "%s.tmp-XXXXXX", out_path);
    int fd = mkstemp(tmp);
    KILN_CHECK_GOTO(fd >= 0, st, KILN_ERROR_IO);
    (void)fchmod(fd, 0644); /* mkstemp creates 0600; a program file is meant to be shared */
    f = fdopen(fd, "wb");
    if (!f) close(fd);
    KILN_CHECK_GOTO(f, st, KILN_ERROR_IO);
    bool ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    f = NULL;
    KILN_CHECK_GOTO(ok && rename(tmp, out_path) == 0, st, KILN_ERROR_IO);
    kiln_free(a, tmp);
    kiln_free(a, data);
    return KILN_OK;
fail:
    if (tmp && tmp[0]) remove(tmp);
    set_message(message, message_size, "cannot write '%s'%s", out_path, "");
    kiln_free(a, tmp);
    kiln_free(a, data);
    return st;
}
