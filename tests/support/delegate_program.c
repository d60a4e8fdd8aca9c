/* delegate_program.c — programs of chained DELEGATE calls (see delegate_program.h). */
#include "delegate_program.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"

static kiln_status add_string(kiln_program_builder *b, const char *s, uint32_t *off)
{
    return kiln_program_builder_string(b, s, strlen(s), off);
}

kiln_status kiln_test_delegate_method_add(kiln_program_builder *b, const char *name, int64_t n,
                                          const kiln_test_delegate_call *calls, size_t n_calls)
{
    size_t slot = kiln_align_up((size_t)n * sizeof(float), 64);
    const int64_t dims[1] = {n};
    uint32_t shape, node;
    kiln_fmt_method m = {.first_value = kiln_program_builder_n_values(b), .n_values = (uint32_t)n_calls + 1,
                         .first_instr = kiln_program_builder_n_instrs(b), .n_instrs = (uint32_t)n_calls,
                         .n_inputs = 1, .n_outputs = 1, .arena_size = slot * (n_calls + 1)};
    KILN_TRY(kiln_program_builder_i64(b, dims, 1, &shape));
    KILN_TRY(add_string(b, name, &m.name));
    KILN_TRY(add_string(b, "delegate", &node));
    for (size_t k = 0; k <= n_calls; k++) {
        char value_name[24];
        snprintf(value_name, sizeof value_name, "v%zu", k);
        kiln_fmt_value v = {.dtype = KILN_DTYPE_F32, .rank = 1, .storage = KILN_STORAGE_ARENA, .shape = shape,
                            .segment = KILN_FMT_NONE, .offset = slot * k, .size = (uint64_t)n * sizeof(float)};
        KILN_TRY(add_string(b, value_name, &v.name));
        KILN_TRY(kiln_program_builder_value(b, &v, NULL));
    }
    for (size_t k = 0; k < n_calls; k++) {
        const int32_t args[2] = {(int32_t)k, (int32_t)k + 1};
        kiln_fmt_instr in = {.kind = KILN_INSTR_DELEGATE, .name = node, .opset = 17,
                             .first_attr = kiln_program_builder_n_attrs(b), .n_inputs = 1, .n_outputs = 1};
        KILN_TRY(add_string(b, calls[k].backend, &in.op));
        KILN_TRY(kiln_program_builder_segment(b, calls[k].payload, calls[k].payload_size, &in.segment));
        KILN_TRY(kiln_program_builder_i32(b, args, 2, &in.args));
        KILN_TRY(kiln_program_builder_instr(b, &in, NULL));
    }
    const int32_t ins[1] = {0}, outs[1] = {(int32_t)n_calls};
    KILN_TRY(kiln_program_builder_i32(b, ins, 1, &m.inputs));
    KILN_TRY(kiln_program_builder_i32(b, outs, 1, &m.outputs));
    return kiln_program_builder_method(b, &m, NULL);
}

kiln_status kiln_test_delegate_program(const kiln_test_delegate_call *calls, size_t n_calls, void **data_out,
                                       size_t *size_out)
{
    kiln_program_builder *b;
    KILN_TRY(kiln_program_builder_create(kiln_allocator_default(), &b));
    kiln_status st = kiln_test_delegate_method_add(b, "forward", 4, calls, n_calls);
    if (st == KILN_OK) st = kiln_program_builder_finish(b, data_out, size_out);
    kiln_program_builder_destroy(b);
    return st;
}
