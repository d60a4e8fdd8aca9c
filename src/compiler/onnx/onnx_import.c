/* onnx_import.c — builds the compiler IR from a serialized ONNX ModelProto: the model and its
 * graph (nodes are onnx_node.c's).
 *
 * Layer: compiler/onnx. Everything the IR keeps is copied into the graph's arena, so the
 * protobuf-c message is freed before returning. Nodes are expected in topological order, as
 * the ONNX spec requires; a name used before it is defined, or defined twice, is a model error.
 * Before protobuf-c sees the bytes, onnx_wire.c checks that no string holds a NUL byte (which
 * the unpacked C strings would silently drop). The default domain's opset must be imported
 * once, as an opset kiln knows (1 to KILN_PORTABLE_OPSET_MAX).
 */
#include "compiler/onnx/onnx_import.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/onnx/onnx_importer.h"
#include "compiler/onnx/onnx_tensor.h"
#include "compiler/onnx/onnx_wire.h"
#include "core/alloc.h"
#include "core/check.h"
#include "core/text_escape.h"

typedef kiln_onnx_importer importer;

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

kiln_status kiln_onnx_define_value(importer *im, const char *name, const char *definer, int32_t *out)
{
    kiln_ir_graph *g = im->g;
    int32_t old = name && name[0] ? kiln_strmap_get(&im->names, name) : -1;
    if (old >= 0) {
        const kiln_ir_value *v = &g->values[old];
        char first[2 * KILN_ESCAPED_NAME_SIZE];
        if (v->is_input) snprintf(first, sizeof first, "is a graph input");
        else if (v->producer >= 0)
            snprintf(first, sizeof first, "node '%s' (%s) already writes", g->nodes[v->producer].node.name,
                     g->nodes[v->producer].node.op);
        else snprintf(first, sizeof first, "is already an initializer or a Constant node's output");
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "%s defines '%s', which %s; an ONNX value has one definition",
                            definer, name, first);
    }
    KILN_TRY(kiln_ir_value_add(g, name, out));
    if (name && name[0] && !kiln_strmap_put(&im->names, g->values[*out].name, *out)) return KILN_ERROR_OUT_OF_MEMORY;
    return KILN_OK;
}

static kiln_status add_initializer(importer *im, const Onnx__TensorProto *tp)
{
    kiln_ir_graph *g = im->g;
    const char *name = tp->name ? tp->name : "";
    kiln_tensor t;
    char why[512];
    kiln_status st = kiln_onnx_tensor_to_kiln(tp, im->external, &im->arena_alloc, &t, why, sizeof why);
    if (st != KILN_OK) return kiln_ir_fail(g, st, "initializer '%s': %s", name, why);
    int32_t v;
    KILN_TRY(kiln_onnx_define_value(im, name, "an initializer", &v));
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
    KILN_TRY(kiln_onnx_define_value(im, name, "a graph input", &v));
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
    size_t bytes;
    KILN_TRY(kiln_ir_tensor_size(g, &val->t, "input", name, &bytes));
    val->shape_known = true;
    *slot = v;
    return KILN_OK;
}

/* The opset of the default domain: imported exactly once, at a version kiln knows. A model of
   training ops alone (domain KILN_DOMAIN_ONNX_TRAINING, version 1) may import no default
   opset: g->opset is then 0 and a default-domain node is refused where it appears. */
static kiln_status read_opset(importer *im, const Onnx__ModelProto *m)
{
    kiln_ir_graph *g = im->g;
    if (m->n_opset_import == 0)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "model has no opset_import: it does not say which ONNX opset its "
                            "ops follow");
    int64_t version = 0;
    bool found = false;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        int64_t v = o->has_version ? o->version : 0;
        if (o->domain && strcmp(o->domain, KILN_DOMAIN_ONNX_TRAINING) == 0) {
            if (v != 1)
                return kiln_ir_fail(g, KILN_ERROR_MODEL, "model imports version %" PRId64 " of domain '%s'; kiln "
                                    "knows version 1", v, KILN_DOMAIN_ONNX_TRAINING);
            im->training_opset = 1;
            continue;
        }
        if (!kiln_onnx_is_default_domain(o->domain)) continue;
        if (found && v != version)
            return kiln_ir_fail(g, KILN_ERROR_MODEL, "model imports the default ONNX domain twice, as opsets %" PRId64
                                " and %" PRId64, version, v);
        version = v;
        found = true;
    }
    if (!found && im->training_opset) {
        g->opset = 0;
        return KILN_OK;
    }
    if (!found) return kiln_ir_fail(g, KILN_ERROR_MODEL, "model does not import the default ONNX opset");
    if (version < 1 || version > KILN_PORTABLE_OPSET_MAX)
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "model imports opset %" PRId64 " of the default ONNX domain; kiln "
                            "knows opsets 1 to %d", version, KILN_PORTABLE_OPSET_MAX);
    g->opset = (int)version;
    return KILN_OK;
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
    KILN_TRY(read_opset(im, m));
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
    for (size_t i = 0; i < gp->n_node; i++) KILN_TRY(kiln_onnx_import_node(im, gp->node[i], i));
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

/* Refuses bytes whose strings protobuf-c would cut at a NUL, naming where. */
static kiln_status check_wire(kiln_ir_graph *g, const void *bytes, size_t size)
{
    kiln_onnx_nul_string nul;
    kiln_status st = kiln_onnx_check_wire(bytes, size, &nul);
    if (st == KILN_ERROR_LIMIT)
        return kiln_ir_fail(g, st, "model nests messages more than %d deep", KILN_ONNX_MAX_DEPTH);
    if (st == KILN_OK) return KILN_OK;
    if (!nul.where[0]) return kiln_ir_fail(g, st, "not a valid ONNX model (protobuf parse failed)");
    char value[KILN_ESCAPED_NAME_SIZE];
    return kiln_ir_fail_escaped(g, KILN_ERROR_MODEL, "%s: %s '%s' holds a NUL byte, which ONNX names and strings may "
                                "not hold", nul.where, nul.field,
                                kiln_text_escape(value, sizeof value, (const char *)nul.value, nul.value_size));
}

kiln_status kiln_onnx_import(kiln_ir_graph *g, const void *bytes, size_t size, const char *model_path,
                             const kiln_input_shape *shapes, size_t n_shapes, bool shapes_by_position)
{
    KILN_TRY(check_wire(g, bytes, size));
    kiln_onnx_external external;
    kiln_onnx_external_init(&external, model_path);
    pb_allocator_ctx pb = {g->allocator, false};
    ProtobufCAllocator pa = {pb_alloc, pb_free, &pb};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&pa, size, bytes);
    if (!m) {
        if (pb.failed) return kiln_ir_fail(g, KILN_ERROR_OUT_OF_MEMORY, "out of memory while parsing the model");
        return kiln_ir_fail(g, KILN_ERROR_MODEL, "not a valid ONNX model (protobuf parse failed)");
    }
    importer im = {.g = g, .shapes_by_position = shapes_by_position, .external = &external};
    kiln_strmap_init(&im.names, &g->arena);
    im.arena_alloc = kiln_arena_as_allocator(&g->arena);
    kiln_status st = import_graph(&im, m, shapes, n_shapes);
    onnx__model_proto__free_unpacked(m, &pa);
    return st;
}

static kiln_status import_source(kiln_ir_graph *g, const kiln_import_source *src, const kiln_import_options *opt)
{
    return kiln_onnx_import(g, src->bytes, src->size, src->path, opt->shapes, opt->n_shapes, opt->shapes_by_position);
}

const kiln_importer kiln_onnx_model_importer = {"onnx", kiln_onnx_probe, import_source};
