/* describe.c — reading a program's delegate payloads back through their compile-time backends:
 * checking and printing one payload (what `kiln inspect` prints per payload), and a whole
 * program's payloads (see compiler_backend.h).
 *
 * Layer: compiler. The compiler parses no payload: each is handed to the backend whose name the
 * DELEGATE instruction carries. A segment shared by several calls is one payload, printed once.
 */
#include "compiler/compiler_backend.h"

#include <string.h>

#include "core/check.h"
#include "core/text_escape.h"
#include "core/text_format.h"
#include "format/program_reader.h"

const kiln_compiler_backend *kiln_compiler_backend_lookup(const char *name, const kiln_compiler_backend *const *extra,
                                                          size_t n_extra)
{
    for (size_t i = 0; i < n_extra; i++)
        if (extra[i] && strcmp(extra[i]->name, name) == 0) return extra[i];
    return kiln_compiler_backend_find(name);
}

kiln_status kiln_payload_check_run(const kiln_compiler_backend *b, const void *payload, size_t size,
                                   kiln_payload_check *check)
{
    memset(check, 0, sizeof *check);
    check->status = KILN_OK;
    check->intact = true;
    return b && b->check ? b->check(payload, size, check) : KILN_OK;
}

static kiln_status print_text(const kiln_compiler_backend *b, const char *op, const void *payload, size_t size,
                              uint32_t segment, size_t uses, const kiln_payload_check *check, FILE *out)
{
    fprintf(out, "  context binary in segment %u: %llu bytes, %zu delegate call%s\n", segment, (unsigned long long)size,
            uses, uses == 1 ? "" : "s");
    if (check->status != KILN_OK) {
        char why[sizeof check->message];
        fprintf(out, "    INVALID (%s): %s\n", kiln_status_name(check->status),
                kiln_text_escape(why, sizeof why, check->message, (size_t)-1));
        return KILN_OK;
    }
    if (b && b->describe) return b->describe(payload, size, KILN_DESCRIBE_TEXT, out);
    char name[KILN_ESCAPED_NAME_SIZE];
    fprintf(out, "    backend '%s' has no description of its payloads in this build\n",
            kiln_text_escape(name, sizeof name, op, (size_t)-1));
    return KILN_OK;
}

static kiln_status print_json(const kiln_compiler_backend *b, const void *payload, size_t size, uint32_t segment,
                              size_t uses, const kiln_payload_check *check, FILE *out)
{
    fprintf(out, "{\"segment\": %u, \"size\": %llu, \"delegate_calls\": %zu, \"valid\": %s", segment,
            (unsigned long long)size, uses, check->status == KILN_OK ? "true" : "false");
    kiln_status st = KILN_OK;
    if (check->status != KILN_OK) {
        fprintf(out, ", \"error\": ");
        kiln_json_string(out, check->message);
    } else if (b && b->describe) {
        st = b->describe(payload, size, KILN_DESCRIBE_JSON, out);
    }
    fprintf(out, "}");
    return st;
}

kiln_status kiln_payload_print(const kiln_compiler_backend *b, const char *op, const void *payload, size_t size,
                               uint32_t segment, size_t uses, const kiln_payload_check *check,
                               kiln_describe_format format, FILE *out)
{
    if (format == KILN_DESCRIBE_JSON) return print_json(b, payload, size, segment, uses, check, out);
    return print_text(b, op, payload, size, segment, uses, check, out);
}

/* Whether instruction k is the first DELEGATE naming its segment; *uses counts all that do. */
static bool first_call(const kiln_program_view *v, uint64_t k, size_t *uses)
{
    uint32_t segment = v->instrs[k].segment;
    *uses = 0;
    bool first = true;
    for (uint64_t j = 0; j < v->n_instrs; j++) {
        if (v->instrs[j].kind != KILN_INSTR_DELEGATE || v->instrs[j].segment != segment) continue;
        if (j < k) first = false;
        (*uses)++;
    }
    return first;
}

kiln_status kiln_program_describe_delegates(const void *data, size_t size, const kiln_compiler_backend *const *extra,
                                            size_t n_extra, kiln_describe_format format, FILE *out)
{
    kiln_program_view v;
    KILN_TRY(kiln_program_view_init(&v, data, size));
    bool any = false;
    for (uint64_t k = 0; k < v.n_instrs; k++) {
        const kiln_fmt_instr *in = &v.instrs[k];
        size_t uses;
        if (in->kind != KILN_INSTR_DELEGATE || !first_call(&v, k, &uses)) continue;
        const kiln_fmt_segment *s = &v.segments[in->segment];
        KILN_CHECK(s->size <= SIZE_MAX, KILN_ERROR_FORMAT);
        const char *op = kiln_view_string(&v, in->op);
        const kiln_compiler_backend *b = kiln_compiler_backend_lookup(op, extra, n_extra);
        const void *payload = kiln_view_segment_data(&v, in->segment);
        kiln_payload_check check;
        KILN_TRY(kiln_payload_check_run(b, payload, (size_t)s->size, &check));
        if (format == KILN_DESCRIBE_JSON && any) fprintf(out, ", ");
        KILN_TRY(kiln_payload_print(b, op, payload, (size_t)s->size, in->segment, uses, &check, format, out));
        any = true;
    }
    return KILN_OK;
}
