/* onnx_import.c — builds the compiler IR from a serialized ONNX ModelProto.
 *
 * Layer: compiler/onnx. Everything the IR keeps is copied into the graph's arena, so the
 * protobuf-c message is freed before returning. Nodes are expected in topological order, as
 * the ONNX spec requires; a name used before it is defined is a model error.
 */
#include "compiler/onnx/onnx_import.h"

#include <string.h>

#include "compiler/onnx/onnx_tensor.h"
#include "compiler/strmap.h"
#include "core/alloc.h"
#include "core/check.h"

typedef struct importer {
    kiln_ir_graph *g;
    bool shapes_by_position;
    kiln_strmap names;
    kiln_allocator arena_alloc;
} importer;

/* protobuf-c's unpack returns NULL both for bad bytes and for a failed allocation; the
   allocator remembers the latter so the import can report OUT_OF_MEMORY, not a bad model. */
typedef struct pb_allocator_ctx {
    const kiln_allocator *allocator;
    bool failed;
} pb_allocator_ctx;

static void *pb_alloc(void *ctx, size_t size)
{
    pb_allocator_ctx *c = ctx;
    void *p = kiln_alloc(c->allocator, size, 16);
    if (!p) c->failed = true;
    return p;
}

static void pb_free(void *ctx, void *p) { kiln_free(((pb_allocator_ctx *)ctx)->allocator, p); }

static bool is_default_domain(const char *domain)
{
    return !domain || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

static kiln_status define_value(importer *im, const char *name, int32_t *out)
{
    KILN_TRY(kiln_ir_value_add(im->g, name, out));
    if (name && name[0] && !kiln_strmap_put(&im->names, im->g->values[*out].name, *out))
        return KILN_ERROR_OUT_OF_MEMORY;
    return KILN_OK;
}

static kiln_status add_initializer(importer *im, const Onnx__TensorProto *tp)
{
    kiln_ir_graph *g = im->g;
    kiln_tensor t;
    kiln_status st = kiln_onnx_tensor_to_kiln(tp, &im->arena_alloc, &t);
    if (st != KILN_OK)
        return kiln_ir_fail(g, st == KILN_ERROR_OUT_OF_MEMORY ? st : KILN_ERROR_MODEL,
                            "initializer '%s': %s", tp->name ? tp->name : "", kiln_status_str(st));
    int32_t v;
    KILN_TRY(define_value(im, tp->name, &v));
    g->values[v].t = t;
    g->values[v].typed = g->values[v].shape_known = g->values[v].is_const = true;
    return KILN_OK;
}

static const kiln_input_shape *find_shape(const kiln_input_shape *shapes, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (shapes[i].name && strcmp(shapes[i].name, name) == 0) return &shapes[i];
    return NULL;
}

static kiln_status add_input(importer *im, const Onnx__ValueInfoProto *vi, const kiln_input_shape *shapes,
                             size_t n_shapes, int32_t *slot)
{
    kiln_ir_graph *g = im->g;
    const char *name = vi->name ? vi->name : "";
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "input '%s': only tensor inputs are supported", name);
    int32_t v;
    KILN_TRY(define_value(im, name, &v));
    kiln_ir_value *val = &g->values[v];
    val->is_input = true;
    if (kiln_onnx_dtype(tp->tensor_type->elem_type, &val->t.dtype) != KILN_OK)
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "input '%s': element type %d is not supported", name,
                            (int)tp->tensor_type->elem_type);
    val->typed = true;
    const kiln_input_shape *override = im->shapes_by_position
                                           ? (im->g->n_inputs < n_shapes ? &shapes[im->g->n_inputs] : NULL)
                                           : find_shape(shapes, n_shapes, name);
    if (override) {
        KILN_CHECK(override->rank <= KILN_MAX_RANK, KILN_ERROR_INVALID_ARGUMENT);
        val->t.rank = override->rank;
        for (uint32_t d = 0; d < override->rank; d++) {
            if (override->dims[d] < 0)
                return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "--input-shape %s: negative dimension", name);
            val->t.shape[d] = override->dims[d];
        }
    } else {
        const Onnx__TensorShapeProto *sp = tp->tensor_type->shape;
        if (!sp)
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "input '%s' has no shape; pass --input-shape %s=D0,D1,...",
                                name, name);
        if (sp->n_dim > KILN_MAX_RANK)
            return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "input '%s' has rank %zu (max %d)", name, sp->n_dim,
                                KILN_MAX_RANK);
        val->t.rank = (uint32_t)sp->n_dim;
        for (size_t d = 0; d < sp->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sp->dim[d];
            if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dim->dim_value < 0)
                return kiln_ir_fail(g, KILN_ERROR_MODEL,
                                    "input '%s' dimension %zu is symbolic ('%s'); pass --input-shape %s=D0,D1,...",
                                    name, d,
                                    dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                        ? dim->dim_param : "?", name);
            val->t.shape[d] = dim->dim_value;
        }
    }
    if (kiln_tensor_numel(&val->t) < 0)
        return kiln_ir_fail(g, KILN_ERROR_LIMIT, "input '%s' is too large", name);
    val->shape_known = true;
    *slot = v;
    return KILN_OK;
}

/* Attribute type when an old exporter left `type` unset: whichever field carries data. */
static int attr_type_of(const Onnx__AttributeProto *a)
{
    if (a->has_type) return a->type;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
}

static kiln_status convert_attr(importer *im, const Onnx__AttributeProto *a, kiln_attr *out, const char *node_name)
{
    kiln_arena *arena = &im->g->arena;
    out->name = kiln_arena_strdup(arena, a->name ? a->name : "");
    KILN_CHECK(out->name, KILN_ERROR_OUT_OF_MEMORY);
    switch (attr_type_of(a)) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: out->type = KILN_ATTR_FLOAT; out->f = a->f; return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: out->type = KILN_ATTR_INT; out->i = a->i; return KILN_OK;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
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
        for (size_t i = 0; i < a->n_strings; i++) total += a->strings[i].len + 1;
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
        /* `type` may say TENSOR while the message carries none */
        if (!a->t)
            return kiln_ir_fail(im->g, KILN_ERROR_MODEL, "node '%s': tensor attribute '%s' holds no tensor",
                                node_name, out->name);
        kiln_status st = kiln_onnx_tensor_to_kiln(a->t, &im->arena_alloc, &out->tensor);
        if (st != KILN_OK)
            return kiln_ir_fail(im->g, st == KILN_ERROR_OUT_OF_MEMORY ? st : KILN_ERROR_MODEL,
                                "node '%s': tensor attribute '%s': %s", node_name, out->name, kiln_status_str(st));
        return KILN_OK;
    }
    default:
        return kiln_ir_fail(im->g, KILN_ERROR_NOT_SUPPORTED,
                            "node '%s': attribute '%s' is a graph/sparse/type attribute, which kiln does not support",
                            node_name, out->name);
    }
}

/* Constant nodes become constant values directly; no kernel runs for them. */
static kiln_status import_constant(importer *im, const kiln_attr *attrs, size_t n_attrs, const char *out_name,
                                   const char *node_name)
{
    kiln_ir_graph *g = im->g;
    if (n_attrs != 1)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "Constant node '%s' must have exactly one attribute", node_name);
    const kiln_attr *a = &attrs[0];
    kiln_tensor t = {0};
    if (strcmp(a->name, "value") == 0 && a->type == KILN_ATTR_TENSOR) {
        t = a->tensor;
    } else if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_int") == 0) {
        bool is_float = a->type == KILN_ATTR_FLOAT;
        t.dtype = is_float ? KILN_DTYPE_F32 : KILN_DTYPE_I64;
        t.data = kiln_arena_alloc(&g->arena, 8, 8);
        KILN_CHECK(t.data, KILN_ERROR_OUT_OF_MEMORY);
        if (is_float) *(float *)t.data = a->f;
        else *(int64_t *)t.data = a->i;
    } else if (strcmp(a->name, "value_floats") == 0 || strcmp(a->name, "value_ints") == 0) {
        bool is_float = a->type == KILN_ATTR_FLOATS;
        t.dtype = is_float ? KILN_DTYPE_F32 : KILN_DTYPE_I64;
        t.rank = 1;
        t.shape[0] = (int64_t)a->n;
        t.data = is_float ? (void *)a->floats : (void *)a->ints;
    } else {
        return kiln_ir_fail(g, KILN_ERROR_NOT_SUPPORTED, "Constant node '%s': attribute '%s' is not supported",
                            node_name, a->name);
    }
    int32_t v;
    KILN_TRY(define_value(im, out_name, &v));
    g->values[v].t = t;
    g->values[v].typed = g->values[v].shape_known = g->values[v].is_const = true;
    return KILN_OK;
}

static kiln_status import_node(importer *im, const Onnx__NodeProto *np, size_t index)
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
    if (!is_default_domain(np->domain))
        return kiln_ir_fail(g, KILN_ERROR_UNSUPPORTED_OP,
                            "unsupported op '%s' (domain '%s') at node '%s': only the default ONNX domain is supported",
                            op, domain, name);
    kiln_attr *attrs = KILN_ARENA_ARRAY(&g->arena, kiln_attr, np->n_attribute ? np->n_attribute : 1);
    KILN_CHECK(attrs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < np->n_attribute; i++) KILN_TRY(convert_attr(im, np->attribute[i], &attrs[i], name));

    if (strcmp(op, "Constant") == 0) {
        if (np->n_output != 1) return kiln_ir_fail(g, KILN_ERROR_MODEL, "Constant node '%s' needs one output", name);
        return import_constant(im, attrs, np->n_attribute, np->output[0], name);
    }
    const kiln_kernel *kernel = kiln_portable_kernel_find(op, g->opset);
    if (!kernel)
        return kiln_ir_fail(g, KILN_ERROR_UNSUPPORTED_OP, "unsupported op '%s' (domain '%s', opset %d) at node '%s'",
                            op, domain, g->opset, name);
    int32_t ni;
    KILN_TRY(kiln_ir_node_add(g, np->n_input, np->n_output, &ni));
    kiln_ir_node *n = &g->nodes[ni];
    n->kernel = kernel;
    n->node.op = kiln_arena_strdup(&g->arena, op);
    n->node.name = kiln_arena_strdup(&g->arena, name);
    KILN_CHECK(n->node.op && n->node.name, KILN_ERROR_OUT_OF_MEMORY);
    n->node.opset = g->opset;
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
    for (size_t j = 0; j < np->n_output; j++) {
        const char *outn = np->output[j];
        if (!outn || !outn[0]) continue;
        int32_t v;
        KILN_TRY(define_value(im, outn, &v));
        g->values[v].producer = ni;
        g->nodes[ni].outputs[j] = v;   /* re-index: define_value may have grown the arrays */
    }
    return KILN_OK;
}

static int default_opset(const Onnx__ModelProto *m)
{
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (is_default_domain(o->domain)) return o->has_version ? (int)o->version : 1;
    }
    return m->n_opset_import ? 0 : 1;
}

static bool is_initializer(const Onnx__GraphProto *gp, const char *name)
{
    for (size_t i = 0; i < gp->n_initializer; i++)
        if (gp->initializer[i]->name && strcmp(gp->initializer[i]->name, name) == 0) return true;
    return false;
}

static kiln_status import_graph(importer *im, const Onnx__ModelProto *m, const kiln_input_shape *shapes,
                                size_t n_shapes)
{
    kiln_ir_graph *g = im->g;
    const Onnx__GraphProto *gp = m->graph;
    if (!gp) return kiln_ir_fail(g, KILN_ERROR_MODEL, "model has no graph");
    g->opset = default_opset(m);
    if (g->opset <= 0) return kiln_ir_fail(g, KILN_ERROR_MODEL, "model does not import the default ONNX opset");
    for (size_t i = 0; i < gp->n_initializer; i++) KILN_TRY(add_initializer(im, gp->initializer[i]));
    g->inputs = KILN_ARENA_ARRAY(&g->arena, int32_t, gp->n_input ? gp->n_input : 1);
    KILN_CHECK(g->inputs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *name = gp->input[i]->name ? gp->input[i]->name : "";
        if (is_initializer(gp, name)) continue; /* old exporters list weights as inputs too */
        KILN_TRY(add_input(im, gp->input[i], shapes, n_shapes, &g->inputs[g->n_inputs]));
        g->n_inputs++;
    }
    for (size_t i = 0; i < n_shapes && !im->shapes_by_position; i++) {
        int32_t v = shapes[i].name ? kiln_strmap_get(&im->names, shapes[i].name) : -1;
        if (v < 0 || !g->values[v].is_input)
            return kiln_ir_fail(g, KILN_ERROR_INVALID_ARGUMENT, "--input-shape names '%s', which is not a model input",
                                shapes[i].name ? shapes[i].name : "");
    }
    for (size_t i = 0; i < gp->n_node; i++) KILN_TRY(import_node(im, gp->node[i], i));
    g->outputs = KILN_ARENA_ARRAY(&g->arena, int32_t, gp->n_output ? gp->n_output : 1);
    KILN_CHECK(g->outputs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i]->name ? gp->output[i]->name : "";
        int32_t v = kiln_strmap_get(&im->names, name);
        if (v < 0) return kiln_ir_fail(g, KILN_ERROR_MODEL, "graph output '%s' is never computed", name);
        g->values[v].is_output = true;
        g->outputs[g->n_outputs++] = v;
    }
    if (g->n_outputs == 0) return kiln_ir_fail(g, KILN_ERROR_MODEL, "graph has no outputs");
    return KILN_OK;
}

kiln_status kiln_onnx_import(kiln_ir_graph *g, const void *bytes, size_t size, const kiln_input_shape *shapes,
                             size_t n_shapes, bool shapes_by_position)
{
    pb_allocator_ctx pb = {g->allocator, false};
    ProtobufCAllocator pa = {pb_alloc, pb_free, &pb};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&pa, size, bytes);
    if (!m && pb.failed) return kiln_ir_fail(g, KILN_ERROR_OUT_OF_MEMORY, "out of memory while parsing the model");
    if (!m) return kiln_ir_fail(g, KILN_ERROR_MODEL, "not a valid ONNX model (protobuf parse failed)");
    importer im = {.g = g, .shapes_by_position = shapes_by_position};
    kiln_strmap_init(&im.names, &g->arena);
    im.arena_alloc = kiln_arena_as_allocator(&g->arena);
    kiln_status st = import_graph(&im, m, shapes, n_shapes);
    onnx__model_proto__free_unpacked(m, &pa);
    return st;
}
