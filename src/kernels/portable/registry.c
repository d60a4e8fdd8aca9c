/* registry.c — the table of portable kernels, one array per op family file.
 * Layer: kernels/portable. The tables are const data; nothing here is mutable.
 * Lookup keys on (domain, op): each domain has its own tables, so an op of another domain
 * (kiln's own) never finds an ONNX kernel of the same name. It picks, among
 * the entries for an op, the one with the highest min_opset that is not
 * above the model's opset, so a family file can give an op one entry per semantic version.
 * Each entry also describes the op as ONNX defines it, for the importer to check nodes against:
 * input/output counts per opset and attribute types (kiln_kernel.arity, .attrs), taken from the
 * ONNX operator schemas of every version from min_opset on. */
#include <stdio.h>
#include <string.h>

#include "kernels/portable/families.h"

static const kiln_kernel *const families[] = {
    kiln_kernels_unary, kiln_kernels_binary, kiln_kernels_activation, kiln_kernels_linalg,
    kiln_kernels_conv,  kiln_kernels_pool,   kiln_kernels_norm,       kiln_kernels_softmax,
    kiln_kernels_reduce, kiln_kernels_shape, kiln_kernels_data,
    kiln_kernels_loss, kiln_kernels_rnn, kiln_kernels_quantize, kiln_kernels_qlinear_matmul, kiln_kernels_qlinear_conv,
    kiln_kernels_signal_window, kiln_kernels_signal_dft, kiln_kernels_einsum,
    kiln_kernels_resize, kiln_kernels_scatter_gather, kiln_kernels_select, kiln_kernels_rearrange,
    kiln_kernels_vision, kiln_kernels_det,
};

/* kiln's own ops (KILN_DOMAIN_KILN). */
static const kiln_kernel *const kiln_families[] = {kiln_kernels_kiln_domain};
/* ONNX's training ops (KILN_DOMAIN_ONNX_TRAINING). */
static const kiln_kernel *const training_families[] = {kiln_kernels_training};

/* The family tables of each domain: `families` above are the default ONNX domain's. */
typedef struct domain_families {
    const char *domain;                 /* NULL: the default ONNX domain */
    const kiln_kernel *const *families; /* (n_families) */
    size_t n_families;
} domain_families;

static const domain_families domains[] = {
    {NULL, families, sizeof families / sizeof families[0]},
    {KILN_DOMAIN_KILN, kiln_families, sizeof kiln_families / sizeof kiln_families[0]},
    {KILN_DOMAIN_ONNX_TRAINING, training_families, sizeof training_families / sizeof training_families[0]},
};

bool kiln_domain_equal(const char *a, const char *b)
{
    if (kiln_domain_is_onnx(a) || kiln_domain_is_onnx(b)) return kiln_domain_is_onnx(a) && kiln_domain_is_onnx(b);
    return strcmp(a, b) == 0;
}

const kiln_kernel *kiln_portable_kernel_find(const char *domain, const char *op, int opset)
{
    const kiln_kernel *best = NULL;
    for (size_t d = 0; d < sizeof domains / sizeof domains[0]; d++) {
        if (!kiln_domain_equal(domains[d].domain, domain)) continue;
        for (size_t f = 0; f < domains[d].n_families; f++) {
            for (const kiln_kernel *k = domains[d].families[f]; k->op; k++) {
                if (strcmp(k->op, op) != 0 || k->min_opset > opset) continue;
                if (!best || k->min_opset > best->min_opset) best = k;
            }
        }
    }
    return best;
}

void kiln_portable_kernel_foreach_in(const char *domain, void (*fn)(const kiln_kernel *kernel, void *user), void *user)
{
    for (size_t d = 0; d < sizeof domains / sizeof domains[0]; d++) {
        if (!kiln_domain_equal(domains[d].domain, domain)) continue;
        for (size_t f = 0; f < domains[d].n_families; f++)
            for (const kiln_kernel *k = domains[d].families[f]; k->op; k++) fn(k, user);
    }
}

void kiln_portable_kernel_foreach(void (*fn)(const kiln_kernel *kernel, void *user), void *user)
{
    kiln_portable_kernel_foreach_in(NULL, fn, user);
}

int kiln_kernel_quantized_input(const kiln_node *node, const kiln_tensor *const *in)
{
    if (!kiln_domain_is_onnx(node->domain)) return -1;
    for (size_t i = 0; i < node->n_inputs; i++)
        if (in[i] && kiln_dtype_is_quantized(in[i]->dtype)) return (int)i;
    return -1;
}

void kiln_kernel_explain(const kiln_kernel *kernel, const kiln_node *node, const kiln_tensor *const *in, char *why,
                         size_t why_size)
{
    if (!why || !why_size) return;
    why[0] = '\0';
    kiln_kernel_explain_fn explain = kiln_kernels_kiln_domain_explainer(kernel);
    if (explain) explain(node, in, why, why_size);
}

const kiln_arity *kiln_kernel_arity(const kiln_kernel *kernel, int opset)
{
    const kiln_arity *best = &kernel->arity[0];
    for (size_t i = 1; i < KILN_ARITY_VERSIONS; i++) {
        const kiln_arity *a = &kernel->arity[i];
        if (a->since != 0 && a->since <= opset) best = a;
    }
    return best;
}

const char *kiln_attr_type_name(kiln_attr_type type)
{
    static const char *const names[KILN_ATTR_TYPE_COUNT] = {
#define ATTR_TYPE_NAME(name, value, letter) [value] = #name,
        KILN_ATTR_TYPE_LIST(ATTR_TYPE_NAME)
#undef ATTR_TYPE_NAME
    };
    return (unsigned)type < KILN_ATTR_TYPE_COUNT ? names[type] : "?";
}

/* The attribute type of a letter of kiln_kernel.attrs, or -1. */
static int letter_type(char c)
{
    static const char letters[KILN_ATTR_TYPE_COUNT + 1] = { /* indexed by type, then a NUL for strchr */
#define ATTR_TYPE_LETTER(name, value, letter) [value] = letter,
        KILN_ATTR_TYPE_LIST(ATTR_TYPE_LETTER)
#undef ATTR_TYPE_LETTER
    };
    const char *p = c ? strchr(letters, c) : NULL;
    return p ? (int)(p - letters) : -1;
}

bool kiln_kernel_attr_ok(const kiln_kernel *kernel, const kiln_attr *a, char *expected, size_t expected_size)
{
    size_t name_len = strlen(a->name);
    for (const char *p = kernel->attrs ? kernel->attrs : ""; *p;) {
        const char *colon = strchr(p, ':'), *end = strchr(p, ' ');
        if (!end) end = p + strlen(p);
        if (!colon || colon > end) return true; /* malformed entry: test_onnx_strict checks every table */
        if ((size_t)(colon - p) == name_len && memcmp(p, a->name, name_len) == 0) {
            uint32_t mask = 0;
            for (const char *t = colon + 1; t < end; t++) {
                int type = letter_type(*t);
                if (type >= 0) mask |= 1u << type;
            }
            if (mask & (1u << KILN_ATTR_FLOAT)) mask |= 1u << KILN_ATTR_INT; /* read exactly by the float helper */
            if ((unsigned)a->type < KILN_ATTR_TYPE_COUNT && (mask & (1u << a->type))) return true;
            if (expected && expected_size) {
                expected[0] = '\0';
                size_t used = 0;
                for (const char *t = colon + 1; t < end && used < expected_size; t++) {
                    int type = letter_type(*t);
                    if (type < 0) continue;
                    int n = snprintf(expected + used, expected_size - used, "%s%s", used ? " or " : "",
                                     kiln_attr_type_name((kiln_attr_type)type));
                    if (n < 0) break;
                    used += (size_t)n;
                }
            }
            return false;
        }
        p = *end ? end + 1 : end;
    }
    return true;
}
