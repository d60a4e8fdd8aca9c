/* shard_onnx.c — one shard of a plan as a self-contained ONNX model (see shard_plan.h).
 *
 * Layer: compiler. The shard model reuses the source model's NodeProtos as they are (attributes
 * included) and its opset imports; only the graph's inputs, outputs and initializers are new:
 * inputs and outputs carry the static types the IR inferred, initializers the constants' bytes
 * as raw_data (pointing at the IR's copies while packing). Every new message lives in one
 * arena that dies once the model is packed, so nothing of it outlives this call.
 */
#include <stdio.h>
#include <string.h>

#include "compiler/onnx/onnx_tensor.h"
#include "compiler/shard_plan.h"
#include "core/alloc.h"
#include "core/arena.h"
#include "core/check.h"

/* The model's NodeProto behind each IR node: import turns every node but Constant into one IR
   node, in order. Checked op by op, so a mismatch is an error rather than a wrong model. */
static kiln_status map_nodes(const kiln_ir_graph *g, const Onnx__GraphProto *gp, kiln_arena *arena,
                             Onnx__NodeProto ***out)
{
    Onnx__NodeProto **of = KILN_ARENA_ARRAY(arena, Onnx__NodeProto *, g->n_nodes + 1);
    KILN_CHECK(of, KILN_ERROR_OUT_OF_MEMORY);
    size_t k = 0;
    for (size_t i = 0; i < gp->n_node; i++) {
        const char *op = gp->node[i]->op_type ? gp->node[i]->op_type : "";
        if (strcmp(op, "Constant") == 0) continue;
        KILN_CHECK(k < g->n_nodes && strcmp(op, g->nodes[k].node.op) == 0, KILN_ERROR_MODEL);
        of[k++] = gp->node[i];
    }
    KILN_CHECK(k == g->n_nodes, KILN_ERROR_MODEL);
    *out = of;
    return KILN_OK;
}

static Onnx__ValueInfoProto *value_info(kiln_arena *arena, const kiln_ir_value *v)
{
    Onnx__ValueInfoProto *vi = KILN_ARENA_NEW(arena, Onnx__ValueInfoProto);
    Onnx__TypeProto *type = KILN_ARENA_NEW(arena, Onnx__TypeProto);
    Onnx__TypeProto__Tensor *tensor = KILN_ARENA_NEW(arena, Onnx__TypeProto__Tensor);
    Onnx__TensorShapeProto *shape = KILN_ARENA_NEW(arena, Onnx__TensorShapeProto);
    Onnx__TensorShapeProto__Dimension **dims =
        KILN_ARENA_ARRAY(arena, Onnx__TensorShapeProto__Dimension *, v->t.rank + 1);
    if (!vi || !type || !tensor || !shape || !dims) return NULL;
    *vi = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
    vi->name = (char *)v->name;
    if (!v->typed) return vi; /* a dynamic graph output: the importer does not read its type */
    *type = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
    *tensor = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
    tensor->has_elem_type = 1;
    tensor->elem_type = kiln_onnx_dtype_from_kiln(v->t.dtype);
    if (v->shape_known) {
        *shape = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
        for (uint32_t d = 0; d < v->t.rank; d++) {
            Onnx__TensorShapeProto__Dimension *dim = KILN_ARENA_NEW(arena, Onnx__TensorShapeProto__Dimension);
            if (!dim) return NULL;
            *dim = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dim->dim_value = v->t.shape[d];
            dims[d] = dim;
        }
        shape->n_dim = v->t.rank;
        shape->dim = dims;
        tensor->shape = shape;
    }
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tensor;
    vi->type = type;
    return vi;
}

static Onnx__TensorProto *initializer(kiln_arena *arena, const kiln_ir_value *v)
{
    Onnx__TensorProto *tp = KILN_ARENA_NEW(arena, Onnx__TensorProto);
    if (!tp) return NULL;
    *tp = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
    tp->name = (char *)v->name;
    tp->n_dims = v->t.rank;
    tp->dims = (int64_t *)v->t.shape;
    tp->has_data_type = 1;
    tp->data_type = kiln_onnx_dtype_from_kiln(v->t.dtype);
    tp->has_raw_data = 1;
    tp->raw_data.len = kiln_tensor_bytes(&v->t);
    tp->raw_data.data = v->t.data;
    return tp;
}

static kiln_status build_graph(const kiln_ir_graph *g, const kiln_shard *s, size_t index, Onnx__NodeProto **onnx_of,
                               kiln_arena *arena, Onnx__GraphProto *gp)
{
    char name[48];
    snprintf(name, sizeof name, "kiln_shard_%zu", index);
    *gp = (Onnx__GraphProto)ONNX__GRAPH_PROTO__INIT;
    gp->node = KILN_ARENA_ARRAY(arena, Onnx__NodeProto *, s->n_nodes + 1);
    gp->input = KILN_ARENA_ARRAY(arena, Onnx__ValueInfoProto *, s->n_inputs + 1);
    gp->output = KILN_ARENA_ARRAY(arena, Onnx__ValueInfoProto *, s->n_outputs + 1);
    gp->initializer = KILN_ARENA_ARRAY(arena, Onnx__TensorProto *, s->n_consts + 1);
    gp->name = kiln_arena_strdup(arena, name);
    KILN_CHECK(gp->node && gp->input && gp->output && gp->initializer && gp->name, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < s->n_nodes; i++) gp->node[i] = onnx_of[s->nodes[i]];
    gp->n_node = s->n_nodes;
    for (size_t i = 0; i < s->n_inputs; i++) {
        gp->input[i] = value_info(arena, &g->values[s->inputs[i]]);
        KILN_CHECK(gp->input[i], KILN_ERROR_OUT_OF_MEMORY);
    }
    gp->n_input = s->n_inputs;
    for (size_t i = 0; i < s->n_outputs; i++) {
        gp->output[i] = value_info(arena, &g->values[s->outputs[i]]);
        KILN_CHECK(gp->output[i], KILN_ERROR_OUT_OF_MEMORY);
    }
    gp->n_output = s->n_outputs;
    for (size_t i = 0; i < s->n_consts; i++) {
        gp->initializer[i] = initializer(arena, &g->values[s->consts[i]]);
        KILN_CHECK(gp->initializer[i], KILN_ERROR_OUT_OF_MEMORY);
    }
    gp->n_initializer = s->n_consts;
    return KILN_OK;
}

static kiln_status pack(const Onnx__ModelProto *model, const kiln_allocator *a, void **out, size_t *out_size)
{
    size_t size = onnx__model_proto__get_packed_size(model);
    uint8_t *bytes = kiln_alloc(a, size, 64);
    KILN_CHECK(bytes, KILN_ERROR_OUT_OF_MEMORY);
    if (onnx__model_proto__pack(model, bytes) != size) { /* cannot happen: protobuf-c sized it */
        kiln_free(a, bytes);
        return KILN_ERROR_INTERNAL;
    }
    *out = bytes;
    *out_size = size;
    return KILN_OK;
}

kiln_status kiln_shard_to_onnx(const kiln_ir_graph *g, const Onnx__ModelProto *model, const kiln_shard *s,
                               size_t index, const kiln_allocator *a, void **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    KILN_CHECK(model->graph, KILN_ERROR_MODEL);
    kiln_arena arena;
    kiln_arena_init(&arena, a, 64 * 1024);
    Onnx__NodeProto **onnx_of;
    Onnx__GraphProto graph;
    kiln_status st = map_nodes(g, model->graph, &arena, &onnx_of);
    if (st == KILN_OK) st = build_graph(g, s, index, onnx_of, &arena, &graph);
    if (st == KILN_OK) {
        Onnx__ModelProto shard = ONNX__MODEL_PROTO__INIT;
        shard.has_ir_version = model->has_ir_version;
        shard.ir_version = model->ir_version;
        shard.n_opset_import = model->n_opset_import;
        shard.opset_import = model->opset_import;
        shard.producer_name = model->producer_name;
        shard.producer_version = model->producer_version;
        shard.graph = &graph;
        st = pack(&shard, a, out, out_size);
    }
    kiln_arena_deinit(&arena);
    return st;
}
