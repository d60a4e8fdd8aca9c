/* onnx_node.c — one ONNX NodeProto into the IR: attributes, Constant nodes, and the checks that
 * keep kiln from running a node with a meaning its model does not have.
 *
 * Layer: compiler/onnx (see onnx_importer.h). What onnx.checker refuses, kiln refuses too
 * (KILN_ERROR_MODEL, naming the node): an attribute whose declared type and stored value
 * disagree, or whose type the op does not take (the kernels' helpers would silently read the
 * default instead); an attribute given twice; a STRING attribute holding a NUL byte (kernels
 * read it as a C string); more or fewer inputs or outputs than the op has at the model's opset,
 * or an empty required one (the counts come from the kernel table, kiln_kernel.arity).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/onnx/onnx_tensor.h"
#include "core/check.h"
#include "core/text_escape.h"

/* onnx.proto's name of an AttributeType value ("FLOAT", "GRAPHS"...). */
static const char *onnx_attr_type_name(int type)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&onnx__attribute_proto__attribute_type__descriptor, type);
    return v ? v->name : "UNDEFINED";
}

/* The attribute's type as onnx.checker decides it: every value field present must match the
   declared type, at most one may be present, and without a declared type (old exporters) the
   present field says it (none: an INT 0, as protobuf's defaults read). */
static kiln_status attr_type(kiln_ir_graph *g, const Onnx__AttributeProto *a, const char *node, const char *op,
                             int *type_out)
{
    const struct {
        bool used;
        int type;
    } fields[] = {
        {a->has_f, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT},
        {a->has_i, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT},
        {a->has_s, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING},
        {a->t != NULL, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR},
        {a->g != NULL, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH},
        {a->sparse_tensor != NULL, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR},
        {a->tp != NULL, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO},
        {a->n_floats > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS},
        {a->n_ints > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS},
        {a->n_strings > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS},
        {a->n_tensors > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS},
        {a->n_graphs > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS},
        {a->n_sparse_tensors > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS},
        {a->n_type_protos > 0, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS},
    };
    const char *name = a->name ? a->name : "";
    int declared = a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED ? (int)a->type : -1;
    int used = -1;
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        if (!fields[k].used) continue;
        if (declared >= 0 && fields[k].type != declared)
            return kiln_ir_fail(g, KILN_ERROR_MODEL,
                                "node '%s' (%s): attribute '%s' is declared %s but holds a %s value", node, op, name,
                                onnx_attr_type_name(declared), onnx_attr_type_name(fields[k].type));
        if (used >= 0)
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s): attribute '%s' holds both a %s and a %s value",
                                node, op, name, onnx_attr_type_name(used), onnx_attr_type_name(fields[k].type));
        used = fields[k].type;
    }
    if (a->ref_attr_name && a->ref_attr_name[0])
        return kiln_ir_fail(g, KILN_ERROR_MODEL,
                            "node '%s' (%s): attribute '%s' refers to function attribute '%s', which only a function "
                            "body may do", node, op, name, a->ref_attr_name);
    *type_out = declared >= 0 ? declared : used >= 0 ? used : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    return KILN_OK;
}

/* A STRING attribute is read as a C string: a NUL inside would cut it short. */
static kiln_status check_no_nul(kiln_ir_graph *g, const ProtobufCBinaryData *s, const char *node, const char *op,
                                const char *attr)
{
    if (!s->len || !memchr(s->data, 0, s->len)) return KILN_OK;
    char n[KILN_ESCAPED_NAME_SIZE], o[KILN_ESCAPED_NAME_SIZE], a[KILN_ESCAPED_NAME_SIZE], v[KILN_ESCAPED_NAME_SIZE];
    return kiln_ir_fail_escaped(g, KILN_ERROR_MODEL, "node '%s' (%s): attribute '%s' is the string '%s', which holds a "
                                "NUL byte", kiln_text_escape(n, sizeof n, node, (size_t)-1),
                                kiln_text_escape(o, sizeof o, op, (size_t)-1),
                                kiln_text_escape(a, sizeof a, attr, (size_t)-1),
                                kiln_text_escape(v, sizeof v, (const char *)s->data, s->len));
}

static kiln_status convert_attr(kiln_onnx_importer *im, const Onnx__AttributeProto *a, kiln_attr *out,
                                const char *node_name, const char *op)
{
    kiln_ir_graph *g = im->g;
    kiln_arena *arena = &g->arena;
    out->name = kiln_arena_strdup(arena, a->name ? a->name : "");
    KILN_CHECK(out->name, KILN_ERROR_OUT_OF_MEMORY);
    int type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
    KILN_TRY(attr_type(g, a, node_name, op, &type));
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: out->type = KILN_ATTR_FLOAT; out->f = a->f; return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: out->type = KILN_ATTR_INT; out->i = a->i; return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        KILN_TRY(check_no_nul(g, &a->s, node_name, op, out->name));
        out->type = KILN_ATTR_STRING;
        out->n = a->s.len;
        out->s = kiln_arena_alloc(arena, a->s.len + 1, 1);
        KILN_CHECK(out->s, KILN_ERROR_OUT_OF_MEMORY);
        if (a->s.len) memcpy((char *)out->s, a->s.data, a->s.len);
        return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        out->type = KILN_ATTR_INTS;
        out->n = a->n_ints;
        out->ints = kiln_arena_memdup(arena, a->ints, a->n_ints * sizeof(int64_t), 8);
        KILN_CHECK(out->ints, KILN_ERROR_OUT_OF_MEMORY);
        return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        out->type = KILN_ATTR_FLOATS;
        out->n = a->n_floats;
        out->floats = kiln_arena_memdup(arena, a->floats, a->n_floats * sizeof(float), 4);
        KILN_CHECK(out->floats, KILN_ERROR_OUT_OF_MEMORY);
        return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        size_t total = 0;
        for (size_t i = 0; i < a->n_strings; i++) {
            KILN_TRY(check_no_nul(g, &a->strings[i], node_name, op, out->name));
            KILN_CHECK(kiln_add_size(total, a->strings[i].len + 1, &total), KILN_ERROR_LIMIT);
        }
        char *s = kiln_arena_alloc(arena, total + 1, 1);
        KILN_CHECK(s, KILN_ERROR_OUT_OF_MEMORY);
        out->type = KILN_ATTR_STRINGS;
        out->n = a->n_strings;
        out->s = s;
        for (size_t i = 0; i < a->n_strings; i++) {
            if (a->strings[i].len) memcpy(s, a->strings[i].data, a->strings[i].len);
            s += a->strings[i].len + 1;
        }
        return KILN_OK;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        out->type = KILN_ATTR_TENSOR;
        char why[512];
        kiln_status st = kiln_onnx_tensor_to_kiln(a->t, im->external, &im->arena_alloc, &out->tensor, why, sizeof why);
        if (st != KILN_OK)
            return kiln_ir_fail(g, st, "node '%s' (%s): tensor attribute '%s': %s", node_name, op, out->name, why);
        return KILN_OK;
    }
    default:
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED,
                            "node '%s' (%s): attribute '%s' is a %s attribute, which kiln does not support", node_name,
                            op, out->name, onnx_attr_type_name(type));
    }
}

/* Constant nodes become constant values directly; no kernel runs for them. Each `value*`
   attribute has one type: any other is a model error, not a guess. */
static kiln_status import_constant(kiln_onnx_importer *im, const Onnx__NodeProto *np, const kiln_attr *attrs,
                                   const char *node_name)
{
    kiln_ir_graph *g = im->g;
    if (np->n_input != 0 || np->n_output != 1)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "Constant node '%s' has %zu inputs and %zu outputs; it takes none and "
                            "gives one", node_name, np->n_input, np->n_output);
    if (np->n_attribute != 1)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "Constant node '%s' must have exactly one attribute", node_name);
    static const struct {
        const char *name;
        kiln_attr_type type;
    } forms[] = {{"value", KILN_ATTR_TENSOR}, {"value_float", KILN_ATTR_FLOAT}, {"value_int", KILN_ATTR_INT},
                 {"value_floats", KILN_ATTR_FLOATS}, {"value_ints", KILN_ATTR_INTS}};
    const kiln_attr *a = &attrs[0];
    size_t form = 0;
    while (form < sizeof forms / sizeof forms[0] && strcmp(a->name, forms[form].name) != 0) form++;
    if (form == sizeof forms / sizeof forms[0])
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "Constant node '%s': attribute '%s' is not supported",
                            node_name, a->name);
    if (a->type != forms[form].type)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "Constant node '%s': attribute '%s' is %s; it must be %s", node_name,
                            a->name, kiln_attr_type_name(a->type), kiln_attr_type_name(forms[form].type));
    kiln_tensor t = {0};
    switch (a->type) {
    case KILN_ATTR_TENSOR: t = a->tensor; break;
    case KILN_ATTR_FLOAT: case KILN_ATTR_INT:
        t.dtype = a->type == KILN_ATTR_FLOAT ? KILN_DTYPE_F32 : KILN_DTYPE_I64;
        t.data = kiln_arena_alloc(&g->arena, 8, 8);
        KILN_CHECK(t.data, KILN_ERROR_OUT_OF_MEMORY);
        if (a->type == KILN_ATTR_FLOAT) *(float *)t.data = a->f;
        else *(int64_t *)t.data = a->i;
        break;
    default: /* FLOATS, INTS */
        t.dtype = a->type == KILN_ATTR_FLOATS ? KILN_DTYPE_F32 : KILN_DTYPE_I64;
        t.rank = 1;
        t.shape[0] = (int64_t)a->n;
        t.data = a->type == KILN_ATTR_FLOATS ? (void *)a->floats : (void *)a->ints;
        break;
    }
    char definer[KILN_ESCAPED_NAME_SIZE + 32];
    snprintf(definer, sizeof definer, "Constant node '%s'", node_name);
    int32_t v;
    KILN_TRY(kiln_onnx_define_value(im, np->output[0], definer, &v));
    g->values[v].t = t;
    g->values[v].typed = g->values[v].shape_known = g->values[v].is_const = true;
    return KILN_OK;
}

/* "2", "1 to 3", "at least 1". */
static void count_text(unsigned lo, unsigned hi, char *buf, size_t size)
{
    if (hi == KILN_ARITY_ANY) snprintf(buf, size, "at least %u", lo);
    else if (lo == hi) snprintf(buf, size, "%u", lo);
    else snprintf(buf, size, "%u to %u", lo, hi);
}

static kiln_status check_arity(kiln_ir_graph *g, const Onnx__NodeProto *np, const kiln_kernel *k, int opset,
                               const char *name, const char *op)
{
    const kiln_arity *ar = kiln_kernel_arity(k, opset);
    char want[48];
    if (np->n_input < ar->min_inputs || (ar->max_inputs != KILN_ARITY_ANY && np->n_input > ar->max_inputs)) {
        count_text(ar->min_inputs, ar->max_inputs, want, sizeof want);
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s, opset %d) has %zu inputs; %s takes %s", name, op,
                            opset, np->n_input, op, want);
    }
    if (np->n_output < ar->min_outputs || (ar->max_outputs != KILN_ARITY_ANY && np->n_output > ar->max_outputs)) {
        count_text(ar->min_outputs, ar->max_outputs, want, sizeof want);
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s, opset %d) has %zu outputs; %s gives %s", name, op,
                            opset, np->n_output, op, want);
    }
    for (size_t i = 0; i < ar->min_inputs; i++)
        if (!np->input[i] || !np->input[i][0])
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s): input %zu is required but empty", name, op, i);
    for (size_t j = 0; j < ar->min_outputs; j++)
        if (!np->output[j] || !np->output[j][0])
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s): output %zu is required but empty", name, op, j);
    return KILN_OK;
}

static kiln_status check_attrs(kiln_ir_graph *g, const kiln_kernel *k, const kiln_attr *attrs, size_t n,
                               const char *name, const char *op)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcmp(attrs[i].name, attrs[j].name) == 0)
                return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s): attribute '%s' is given twice", name, op,
                                    attrs[i].name);
        char expected[64];
        if (!kiln_kernel_attr_ok(k, &attrs[i], expected, sizeof expected))
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s): attribute '%s' is %s; %s takes it as %s", name,
                                op, attrs[i].name, kiln_attr_type_name(attrs[i].type), op, expected);
    }
    return KILN_OK;
}

kiln_status kiln_onnx_import_node(kiln_onnx_importer *im, const Onnx__NodeProto *np, size_t index)
{
    kiln_ir_graph *g = im->g;
    const char *op = np->op_type ? np->op_type : "";
    const char *name = np->name && np->name[0] ? np->name : "";
    char fallback_name[32];
    if (!name[0]) {
        snprintf(fallback_name, sizeof fallback_name, "#%zu", index);
        name = fallback_name;
    }
    const char *domain = np->domain && np->domain[0] ? np->domain : "ai.onnx";
    /* Besides the default domain, the ONNX training ops (when the model imports their domain). */
    bool training = im->training_opset && strcmp(domain, KILN_DOMAIN_ONNX_TRAINING) == 0;
    if (!kiln_onnx_is_default_domain(np->domain) && !training)
        return kiln_ir_fail(g, KILN_ERROR_UNSUPPORTED_OP,
                            "unsupported op '%s' (domain '%s') at node '%s': only the default ONNX domain is supported",
                            op, domain, name);
    if (!training && g->opset == 0)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s) is of the default ONNX domain, which the model does "
                            "not import", name, op);
    int opset = training ? im->training_opset : g->opset;
    kiln_attr *attrs = KILN_ARENA_ARRAY(&g->arena, kiln_attr, np->n_attribute ? np->n_attribute : 1);
    KILN_CHECK(attrs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < np->n_attribute; i++) KILN_TRY(convert_attr(im, np->attribute[i], &attrs[i], name, op));

    if (!training && strcmp(op, "Constant") == 0) return import_constant(im, np, attrs, name);
    /* Only nodes of ONNX's domains get here, so the kernel is an ONNX one: kiln's own ops (domain
       KILN_DOMAIN_KILN) come from other importers, never from an ONNX file's node names. */
    const kiln_kernel *kernel = kiln_portable_kernel_find(training ? KILN_DOMAIN_ONNX_TRAINING : NULL, op, opset);
    if (!kernel)
        return kiln_ir_fail(g, KILN_ERROR_UNSUPPORTED_OP, "unsupported op '%s' (domain '%s', opset %d) at node '%s'",
                            op, domain, opset, name);
    KILN_TRY(check_arity(g, np, kernel, opset, name, op));
    KILN_TRY(check_attrs(g, kernel, attrs, np->n_attribute, name, op));
    int32_t ni;
    KILN_TRY(kiln_ir_node_add(g, np->n_input, np->n_output, &ni));
    kiln_ir_node *n = &g->nodes[ni];
    n->kernel = kernel;
    n->node.op = kiln_arena_strdup(&g->arena, op);
    n->node.name = kiln_arena_strdup(&g->arena, name);
    KILN_CHECK(n->node.op && n->node.name, KILN_ERROR_OUT_OF_MEMORY);
    n->node.domain = training ? KILN_DOMAIN_ONNX_TRAINING : ""; /* "ai.onnx" and an absent domain alike */
    n->node.opset = opset;
    n->node.attrs = attrs;
    n->node.n_attrs = np->n_attribute;
    for (size_t i = 0; i < np->n_input; i++) {
        const char *in = np->input[i];
        if (!in || !in[0]) continue;
        int32_t v = kiln_strmap_get(&im->names, in);
        if (v < 0)
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "node '%s' (%s) uses '%s', which is not defined before it", name,
                                op, in);
        n->inputs[i] = v;
    }
    char definer[2 * KILN_ESCAPED_NAME_SIZE];
    snprintf(definer, sizeof definer, "node '%s' (%s)", name, op);
    for (size_t j = 0; j < np->n_output; j++) {
        const char *outn = np->output[j];
        if (!outn || !outn[0]) continue;
        int32_t v;
        KILN_TRY(kiln_onnx_define_value(im, outn, definer, &v));
        g->values[v].producer = ni;
        g->nodes[ni].outputs[j] = v; /* re-index: define_value may have grown the arrays */
    }
    return KILN_OK;
}
