/* describe.c — printing a program's delegate payloads through their compile-time backends'
 * describe (see kiln_program_describe_delegates in compiler_backend.h).
 *
 * Layer: compiler. The compiler does not parse any payload: each is handed to the backend whose
 * name the DELEGATE instruction carries. A segment shared by several calls is described once.
 */
#include "compiler/compiler_backend.h"

#include <inttypes.h>
#include <string.h>

#include "core/check.h"
#include "format/program_reader.h"

static const kiln_compiler_backend *backend_named(const char *name, const kiln_compiler_backend *const *extra,
                                                  size_t n_extra)
{
    for (size_t i = 0; i < n_extra; i++)
        if (extra[i] && strcmp(extra[i]->name, name) == 0) return extra[i];
    return kiln_compiler_backend_find(name);
}

kiln_status kiln_program_describe_delegates(const void *data, size_t size, const kiln_compiler_backend *const *extra,
                                            size_t n_extra, FILE *out)
{
    kiln_program_view v;
    KILN_TRY(kiln_program_view_init(&v, data, size));
    for (uint64_t k = 0; k < v.n_instrs; k++) {
        const kiln_fmt_instr *in = &v.instrs[k];
        if (in->kind != KILN_INSTR_DELEGATE) continue;
        bool seen = false;
        for (uint64_t j = 0; j < k && !seen; j++)
            seen = v.instrs[j].kind == KILN_INSTR_DELEGATE && v.instrs[j].segment == in->segment;
        if (seen) continue;
        const char *name = kiln_view_string(&v, in->op);
        const kiln_fmt_segment *s = &v.segments[in->segment];
        KILN_CHECK(s->size <= SIZE_MAX, KILN_ERROR_FORMAT);
        const kiln_compiler_backend *b = backend_named(name, extra, n_extra);
        fprintf(out, "delegate %s segment %" PRIu32 ": %" PRIu64 " bytes, backend %s\n", kiln_view_string(&v, in->name),
                in->segment, s->size, b ? b->name : "(no compile-time backend)");
        if (b && b->describe) KILN_TRY(b->describe(kiln_view_segment_data(&v, in->segment), (size_t)s->size, out));
    }
    return KILN_OK;
}
