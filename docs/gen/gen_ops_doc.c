/* gen_ops_doc.c — prints docs/ops.md, the list of ONNX ops (and kiln's own) kiln supports, from the tables the
 * code itself uses, so the list cannot drift from what kiln compiles.
 *
 * Layer: documentation tool (built by docs/gen/CMakeLists.txt, run by `make ops-doc`; the test
 * ops_doc_current fails when docs/ops.md differs from its output). Reads, never writes, the
 * tables of three layers:
 *  - the portable kernel table (kiln_portable_kernel_foreach, src/kernels/portable/registry.c):
 *    which ops exist and from which opset each kernel entry applies;
 *  - the ONNX importer, asked through the public compiler API: a one-node model is compiled at
 *    every default-domain opset from 1 to PROBE_MAX, so the accepted range is whatever the
 *    importer decides today (src/compiler/onnx/onnx_import.c), not a copy of its rule;
 *  - the cpu backend's op table (kiln_cpu_aot_op_at, src/backends/cpu/aot/aot_ops.c) and each
 *    target's kernel table (kiln_cpu_target_at, src/backends/cpu/targets.c): a target compiles
 *    an op when its table has a kernel for every lowered step the op can become.
 * A second table lists the ops of kiln's own domain (KILN_DOMAIN_KILN) from the same kernel table
 * (kiln_portable_kernel_foreach_in), with their input counts and attributes.
 * Output goes to stdout; exit 1 (with one line on stderr) when the tables disagree.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/aot/cpu_aot.h"
#include "backends/cpu/targets.h"
#include "core/alloc.h"
#include "kernels/portable/kernel.h"
#include "kiln/compiler.h"
#include "onnx_builder.h"

#define PROBE_MAX 100     /* opsets probed; accepted up to here is written "N+" */
#define MAX_OPS 256
#define MAX_ENTRIES 8     /* kernel entries (semantic versions) of one op */

typedef struct op_row {
    const char *name;
    int min_opsets[MAX_ENTRIES]; /* (n_entries), ascending */
    size_t n_entries;
} op_row;

typedef struct op_list {
    op_row rows[MAX_OPS];
    size_t n;
    bool overflow;
} op_list;

static void collect(const kiln_kernel *k, void *user)
{
    op_list *l = user;
    op_row *r = NULL;
    for (size_t i = 0; i < l->n && !r; i++)
        if (strcmp(l->rows[i].name, k->op) == 0) r = &l->rows[i];
    if (!r) {
        if (l->n == MAX_OPS) {
            l->overflow = true;
            return;
        }
        r = &l->rows[l->n++];
        *r = (op_row){.name = k->op};
    }
    if (r->n_entries == MAX_ENTRIES) {
        l->overflow = true;
        return;
    }
    size_t j = r->n_entries++;
    for (; j > 0 && r->min_opsets[j - 1] > k->min_opset; j--) r->min_opsets[j] = r->min_opsets[j - 1];
    r->min_opsets[j] = k->min_opset;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const op_row *)a)->name, ((const op_row *)b)->name);
}

/* Does the importer accept a model importing the default domain at this opset? Asked with
   y = Identity(x), the op every opset has, compiled for the portable kernels only. */
static bool importer_accepts(int64_t opset)
{
    onnx_builder *b = onnx_builder_create(opset);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 1, (const int64_t[]){1});
    onnx_builder_node(b, "Identity", "x", "y");
    onnx_builder_output(b, "y");
    uint8_t *model;
    size_t size;
    onnx_builder_serialize(b, &model, &size);
    onnx_builder_destroy(b);
    const kiln_allocator *a = kiln_allocator_default();
    kiln_compile_options o = {.struct_size = sizeof o, .allocator = a, .no_delegate = 1};
    kiln_compile_method m = {.name = "forward", .model_data = model, .model_size = size};
    void *program = NULL;
    size_t program_size = 0;
    char message[256] = "";
    kiln_status st = kiln_compile_memory(&o, &m, 1, &program, &program_size, message, sizeof message);
    if (program) a->free(a->ctx, program);
    free(model);
    return st == KILN_OK;
}

/* "1+", "7-21", "1-3, 5+": the opsets in [from, PROBE_MAX] the importer accepts. */
static void print_opsets(const bool *accepted, int from)
{
    bool first = true;
    for (int v = from; v <= PROBE_MAX; v++) {
        if (!accepted[v]) continue;
        int end = v;
        while (end < PROBE_MAX && accepted[end + 1]) end++;
        printf("%s%d", first ? "" : ", ", v);
        if (end == PROBE_MAX) printf("+");
        else if (end > v) printf("-%d", end);
        first = false;
        v = end;
    }
    if (first) printf("none");
}

/* The lowered steps (bits) the cpu backend can make of op, 0 when it does not lower it. */
static uint32_t cpu_steps(const char *op)
{
    uint32_t steps = 0;
    for (size_t i = 0; kiln_cpu_aot_op_at(i, NULL); i++)
        if (strcmp(kiln_cpu_aot_op_at(i, &steps), op) == 0) return steps;
    return 0;
}

/* "yes" when the target's kernel table runs every step, "some forms" when only some, else "no". */
static const char *target_cell(const kiln_cpu_target *t, uint32_t steps)
{
    uint32_t have = 0;
    for (uint32_t s = 0; s < KILN_CPU_OP_COUNT; s++)
        if ((steps & (1u << s)) && t->kernels->ops[s]) have |= 1u << s;
    return !steps || !have ? "no" : have == steps ? "yes" : "some forms";
}

static void print_row(const char *name, const bool *accepted, int from, const char *kernels, uint32_t steps)
{
    printf("| `%s` | ai.onnx | ", name);
    print_opsets(accepted, from);
    printf(" | %s |", kernels);
    for (size_t t = 0; t < kiln_cpu_target_count(); t++) printf(" %s |", target_cell(kiln_cpu_target_at(t), steps));
    printf("\n");
}

/* The rows printed of one domain's table. */
typedef struct domain_rows {
    const char *domain;
    size_t n;
} domain_rows;

/* One row of a domain's table (kiln's, ONNX's training ops): arity and attributes straight from
   the kernel entry. */
static void print_kiln_row(const kiln_kernel *k, void *user)
{
    domain_rows *rows = user;
    const kiln_arity *a = kiln_kernel_arity(k, k->min_opset);
    printf("| `%s` | %s | %d | ", k->op, rows->domain, k->min_opset);
    if (a->min_inputs == a->max_inputs) printf("%u", a->min_inputs);
    else if (a->max_inputs == KILN_ARITY_ANY) printf("%u+", a->min_inputs);
    else printf("%u-%u", a->min_inputs, a->max_inputs);
    if (a->max_outputs == KILN_ARITY_ANY) printf(" | %u+ | ", a->min_outputs);
    else printf(" | %u | ", a->max_outputs);
    bool any = false;
    for (const char *p = k->attrs; p && *p;) {
        size_t word = strcspn(p, " "), name = strcspn(p, ":");
        /* the accepted types as kiln_kernel_attr_ok words them, asked with a type no entry lists */
        char attr_name[64], types[64];
        snprintf(attr_name, sizeof attr_name, "%.*s", (int)name, p);
        kiln_attr probe = {.name = attr_name, .type = (kiln_attr_type)KILN_ATTR_TYPE_COUNT};
        if (kiln_kernel_attr_ok(k, &probe, types, sizeof types)) snprintf(types, sizeof types, "?");
        printf("%s`%s` (%s)", any ? ", " : "", attr_name, types);
        any = true;
        p += word;
        if (*p == ' ') p++;
    }
    printf("%s |\n", any ? "" : "none");
    rows->n++;
}

/* A section listing the ops of one domain other than the default: title, a paragraph, the table. */
static void print_domain_section(const char *title, const char *intro, const char *domain)
{
    printf("\n# %s\n\n%s\n\n", title, intro);
    printf("| op | domain | opset | inputs | outputs | attributes |\n|---|---|---|---|---|---|\n");
    domain_rows rows = {domain, 0};
    kiln_portable_kernel_foreach_in(domain, print_kiln_row, &rows);
    printf("\n%zu ops of the `%s` domain.\n", rows.n, domain);
}

static void print_kiln_section(void)
{
    print_domain_section("kiln operators",
                         "Ops of kiln's own domain (`" KILN_DOMAIN_KILN "`), which kiln builds itself (the GGUF "
                         "importer, docs/llm.md); their exact semantics are in docs/llm.md \"kiln ops\". Each runs "
                         "on its portable kernel (`src/kernels/portable/`); every `cpu` target also lowers `Linear` over Q8_0 and "
                         "Q4_0 weights (a QLINEAR step, docs/kernels.md) and `Embed` over Q8_0, Q4_0 and F32 rows (an "
                         "EMBED step), no other.",
                         KILN_DOMAIN_KILN);
}

static void print_training_section(void)
{
    print_domain_section("ONNX training operators",
                         "Ops of ONNX's domain `" KILN_DOMAIN_ONNX_TRAINING "` (version 1), which the ONNX importer "
                         "accepts besides the default domain. Each runs on its portable kernel "
                         "(`src/kernels/portable/training.c`); no `cpu` target lowers them.",
                         KILN_DOMAIN_ONNX_TRAINING);
}

int main(void)
{
    static op_list ops;
    kiln_portable_kernel_foreach(collect, &ops);
    if (ops.overflow) {
        fprintf(stderr, "gen_ops_doc: more ops or kernel entries than MAX_OPS/MAX_ENTRIES\n");
        return 1;
    }
    qsort(ops.rows, ops.n, sizeof ops.rows[0], by_name);
    for (size_t i = 0; kiln_cpu_aot_op_at(i, NULL); i++) {
        const char *op = kiln_cpu_aot_op_at(i, NULL);
        if (!kiln_portable_kernel_find(NULL, op, PROBE_MAX)) {
            fprintf(stderr, "gen_ops_doc: the cpu backend lowers '%s', which has no portable kernel\n", op);
            return 1;
        }
    }
    bool accepted[PROBE_MAX + 1] = {false};
    for (int v = 1; v <= PROBE_MAX; v++) accepted[v] = importer_accepts(v);

    printf("*Generated by `docs/gen/gen_ops_doc.c` from the op tables kiln compiles with; do not edit. "
           "Regenerate with `make ops-doc`.*\n\n");
    printf("# ONNX operators\n\n");
    printf("kiln imports nodes of the default ONNX domain (`ai.onnx`, also written as the empty string) only. "
           "A node of another domain, an op missing here, or an op used at an opset below its first one stops "
           "`kiln compile` with exit status 3 and a message naming the op, its domain, the opset and the node "
           "(docs/cli.md).\n\n");
    printf("- **Opsets**: the versions of the default domain a model may import for the op: from the first "
           "opset its kernel implements, within what the importer accepts (asked by compiling a one-node model "
           "at every opset from 1 to %d; `N+`: N and every later one, the importer having accepted all up to the highest "
           "probed).\n",
           PROBE_MAX);
    printf("- **Portable kernels from**: the opsets at which an entry of the portable kernel table "
           "(`src/kernels/portable/`) starts; a model of a later opset uses the latest entry at or below it. "
           "Every op listed runs on these kernels, which every runtime has.\n");
    printf("- **`cpu` targets** (docs/targets.md): `yes` when the target's kernel table runs every lowered step "
           "the op can become (`src/backends/cpu/aot/aot_ops.c`), `no` when the backend does not lower the op. "
           "The backend takes a node only when its tensors are non-empty f32 of static shape and its attributes "
           "lower exactly; every other node runs on the portable kernels: correct, only slower.\n\n");
    printf("| op | domain | opsets | portable kernels from |");
    for (size_t t = 0; t < kiln_cpu_target_count(); t++) printf(" `%s` |", kiln_cpu_target_at(t)->name);
    printf("\n|---|---|---|---|");
    for (size_t t = 0; t < kiln_cpu_target_count(); t++) printf("---|");
    printf("\n");

    size_t n_cpu = 0;
    bool constant_done = false;
    for (size_t i = 0; i < ops.n; i++) {
        const op_row *r = &ops.rows[i];
        /* Constant has no kernel: the importer turns it into a constant value at any opset. */
        if (!constant_done && strcmp(r->name, "Constant") > 0) {
            print_row("Constant", accepted, 1, "none: folded by the importer", 0);
            constant_done = true;
        }
        char kernels[MAX_ENTRIES * 12] = "";
        for (size_t e = 0; e < r->n_entries; e++)
            snprintf(kernels + strlen(kernels), sizeof kernels - strlen(kernels), "%s%d", e ? ", " : "",
                     r->min_opsets[e]);
        uint32_t steps = cpu_steps(r->name);
        n_cpu += steps != 0;
        print_row(r->name, accepted, r->min_opsets[0], kernels, steps);
    }
    if (!constant_done) print_row("Constant", accepted, 1, "none: folded by the importer", 0);
    printf("\n%zu ops with portable kernels, %zu of them also lowered by the `cpu` backend; `Constant` is "
           "handled by the importer.\n",
           ops.n, n_cpu);
    print_kiln_section();
    print_training_section();
    return 0;
}
