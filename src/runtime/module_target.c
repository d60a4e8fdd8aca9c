/* module_target.c — checking a module's forced target (kiln_module_options.target) at create.
 *
 * Layer: runtime. The runtime cannot read a context binary; it asks the backend of each DELEGATE
 * instruction through the optional find_target hook (backend.h) whether the target is a name the
 * backend knows and whether the payload has a record of it. A name no context binary of the
 * program has, or one no backend knows, is refused here with the names that do exist, instead of
 * failing every later load with the reason only in a message nobody asked for. A program without
 * context binaries only needs a known name: nothing in it depends on the target, and callers
 * (kiln run --target, the conformance runner) pass one whatever the compiler delegated.
 */
#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "core/text_escape.h"
#include "runtime/runtime.h"

#define NAMES_SIZE 256

typedef struct target_query {
    const char *target;
    bool asked_known, known;        /* some backend answered "known?"; one of them said yes */
    bool asked_record, has_record;  /* some payload was asked; one of them has the record */
    char known_names[NAMES_SIZE];   /* what the backends know, for the message */
    char record_names[NAMES_SIZE];  /* what the payloads have, for the message */
} target_query;

static bool has_hook(const kiln_backend *b) { return b && b->find_target; }

/* Appends a backend's "a, b" list to acc unless acc already holds it. */
static void add_names(char *acc, size_t size, const char *names)
{
    if (!names[0] || strstr(acc, names)) return;
    size_t n = strlen(acc);
    snprintf(acc + n, size - n, "%s%s", n ? ", " : "", names);
}

static void ask_known(target_query *q, const kiln_backend *b)
{
    char names[NAMES_SIZE] = "";
    q->asked_known = true;
    kiln_status st = b->find_target(b->user, NULL, 0, q->target, names, sizeof names);
    names[sizeof names - 1] = '\0';
    if (st == KILN_OK) q->known = true;
    else add_names(q->known_names, sizeof q->known_names, names);
}

static void ask_record(target_query *q, const kiln_backend *b, const void *payload, size_t size)
{
    char names[NAMES_SIZE] = "";
    q->asked_record = true;
    kiln_status st = b->find_target(b->user, payload, size, q->target, names, sizeof names);
    names[sizeof names - 1] = '\0';
    if (st == KILN_OK || st == KILN_ERROR_INCOMPATIBLE) q->has_record = true; /* unreadable: load says why */
    else add_names(q->record_names, sizeof q->record_names, names);
}

/* Whether instruction k is the first DELEGATE instruction of backend b (or, with
   same_segment, of its payload segment), so each backend and payload is asked once. */
static bool first_use(const kiln_program_view *v, uint64_t k, bool same_segment)
{
    const kiln_fmt_instr *in = &v->instrs[k];
    for (uint64_t j = 0; j < k; j++) {
        const kiln_fmt_instr *o = &v->instrs[j];
        if (o->kind != KILN_INSTR_DELEGATE) continue;
        if (same_segment ? o->segment == in->segment : strcmp(kiln_view_string(v, o->op), kiln_view_string(v, in->op)) == 0)
            return false;
    }
    return true;
}

kiln_status kiln_module_check_target(const kiln_program_obj *p, const char *target, kiln_diag *diag)
{
    const kiln_program_view *v = &p->view;
    target_query q = {.target = target};
    for (uint64_t k = 0; k < v->n_instrs; k++) {
        const kiln_fmt_instr *in = &v->instrs[k];
        if (in->kind != KILN_INSTR_DELEGATE) continue;
        const kiln_backend *b = kiln_backend_find(kiln_view_string(v, in->op));
        if (!has_hook(b)) continue;
        if (first_use(v, k, false)) ask_known(&q, b);
        if (first_use(v, k, true)) ask_record(&q, b, kiln_view_segment_data(v, in->segment), v->segments[in->segment].size);
    }
    if (!q.asked_record) /* no context binary: every backend that can tell is asked about the name */
        for (size_t i = 0; i < kiln_backend_count(); i++)
            if (has_hook(kiln_backend_at(i))) ask_known(&q, kiln_backend_at(i));
    char shown[KILN_ESCAPED_NAME_SIZE], known[2 * NAMES_SIZE], records[2 * NAMES_SIZE];
    kiln_text_escape(shown, sizeof shown, target, (size_t)-1);
    kiln_text_escape(known, sizeof known, q.known_names, (size_t)-1);
    kiln_text_escape(records, sizeof records, q.record_names, (size_t)-1);
    if (q.asked_known && !q.known)
        return kiln_diag_fail(diag, KILN_ERROR_NO_RUNNABLE_TARGET,
                              "target '%s' is not a target this runtime knows (known targets: %s)%s%s", shown, known,
                              records[0] ? "; this program's context binaries have records for: " : "", records);
    if (q.asked_record && !q.has_record)
        return kiln_diag_fail(diag, KILN_ERROR_NO_RUNNABLE_TARGET,
                              "no context binary of this program has a record for target '%s'; records: %s", shown,
                              records);
    return KILN_OK;
}
