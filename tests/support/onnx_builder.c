/* onnx_builder.c — ONNX models built struct by struct with protobuf-c (see onnx_builder.h).
 *
 * Layer: tests/support. Every piece of memory a model is made of comes from builder_alloc,
 * which zero-fills it and threads it on one list, so destroy frees the whole model at once and
 * nothing is freed earlier (protobuf-c structs point into each other freely). Arrays are sized
 * once at their fixed capacity, which keeps the structs' pointers stable while a model grows.
 */
#include "onnx_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct allocation {
    struct allocation *next;
    max_align_t payload[];  /* the caller's bytes */
} allocation;

struct onnx_builder {
    allocation *allocations;
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opset_list[1];
};

static void *builder_alloc(onnx_builder *b, size_t size)
{
    allocation *a = calloc(1, sizeof *a + size);
    if (!a) {
        fprintf(stderr, "onnx_builder: out of memory\n");
        abort();
    }
    a->next = b->allocations;
    b->allocations = a;
    return a->payload;
}

static char *builder_strndup(onnx_builder *b, const char *s, size_t n)
{
    char *copy = builder_alloc(b, n + 1);
    memcpy(copy, s, n);
    return copy;
}

static void check_capacity(size_t used, size_t capacity, const char *what)
{
    if (used >= capacity) {
        fprintf(stderr, "onnx_builder: more than %zu %s\n", capacity, what);
        abort();
    }
}

onnx_builder *onnx_builder_create(int64_t opset)
{
    onnx_builder *b = calloc(1, sizeof *b);
    if (!b) {
        fprintf(stderr, "onnx_builder: out of memory\n");
        abort();
    }
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->opset.domain = builder_strndup(b, "", 0);
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->opset_list[0] = &b->opset;
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.n_opset_import = 1;
    b->model.opset_import = b->opset_list;
    b->model.producer_name = builder_strndup(b, "kiln-tests", 10);
    b->model.graph = &b->graph;
    b->graph.name = builder_strndup(b, "g", 1);
    b->graph.node = builder_alloc(b, ONNX_BUILDER_MAX_NODES * sizeof *b->graph.node);
    b->graph.input = builder_alloc(b, ONNX_BUILDER_MAX_VALUES * sizeof *b->graph.input);
    b->graph.output = builder_alloc(b, ONNX_BUILDER_MAX_VALUES * sizeof *b->graph.output);
    b->graph.initializer = builder_alloc(b, ONNX_BUILDER_MAX_VALUES * sizeof *b->graph.initializer);
    return b;
}

void onnx_builder_destroy(onnx_builder *b)
{
    if (!b) return;
    for (allocation *a = b->allocations; a;) {
        allocation *next = a->next;
        free(a);
        a = next;
    }
    free(b);
}

/* A tensor type of elem_type with a static shape (rank dims; rank 0 is a scalar). */
static Onnx__TypeProto *tensor_type(onnx_builder *b, int32_t elem_type, uint32_t rank, const int64_t *shape)
{
    Onnx__TensorShapeProto *sp = builder_alloc(b, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = rank;
    sp->dim = builder_alloc(b, (rank ? rank : 1) * sizeof *sp->dim);
    for (uint32_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = builder_alloc(b, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = shape[i];
        sp->dim[i] = d;
    }
    Onnx__TypeProto__Tensor *tt = builder_alloc(b, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    tt->shape = sp;
    Onnx__TypeProto *tp = builder_alloc(b, sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return tp;
}

static Onnx__ValueInfoProto *value_info(onnx_builder *b, const char *name, Onnx__TypeProto *type)
{
    Onnx__ValueInfoProto *v = builder_alloc(b, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = builder_strndup(b, name, strlen(name));
    v->type = type;
    return v;
}

void onnx_builder_input(onnx_builder *b, const char *name, int32_t elem_type, uint32_t rank, const int64_t *shape)
{
    check_capacity(b->graph.n_input, ONNX_BUILDER_MAX_VALUES, "graph inputs");
    b->graph.input[b->graph.n_input++] = value_info(b, name, tensor_type(b, elem_type, rank, shape));
}

void onnx_builder_output(onnx_builder *b, const char *name)
{
    check_capacity(b->graph.n_output, ONNX_BUILDER_MAX_VALUES, "graph outputs");
    b->graph.output[b->graph.n_output++] = value_info(b, name, NULL);
}

void onnx_builder_initializer(onnx_builder *b, const char *name, int32_t elem_type, uint32_t rank,
                              const int64_t *shape, const void *data, size_t size)
{
    check_capacity(b->graph.n_initializer, ONNX_BUILDER_MAX_VALUES, "initializers");
    Onnx__TensorProto *t = builder_alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = builder_strndup(b, name, strlen(name));
    t->has_data_type = 1;
    t->data_type = elem_type;
    t->n_dims = rank;
    t->dims = builder_alloc(b, (rank ? rank : 1) * sizeof *t->dims);
    if (rank) memcpy(t->dims, shape, rank * sizeof *t->dims);
    t->has_raw_data = 1;
    t->raw_data.len = size;
    t->raw_data.data = builder_alloc(b, size ? size : 1);
    if (size) memcpy(t->raw_data.data, data, size);
    b->graph.initializer[b->graph.n_initializer++] = t;
}

/* Split a comma-separated list into builder-owned strings; "" yields no names at all. */
static size_t split_names(onnx_builder *b, const char *list, char **names)
{
    size_t n = 0;
    if (!list || !list[0]) return 0;
    for (const char *s = list;; s++) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        check_capacity(n, ONNX_BUILDER_MAX_NODE_IO, "node inputs or outputs");
        names[n++] = builder_strndup(b, s, len);
        if (!end) return n;
        s = end;
    }
}

Onnx__NodeProto *onnx_builder_node(onnx_builder *b, const char *op, const char *inputs, const char *outputs)
{
    check_capacity(b->graph.n_node, ONNX_BUILDER_MAX_NODES, "nodes");
    Onnx__NodeProto *n = builder_alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    char name[32];
    snprintf(name, sizeof name, "n%zu", b->graph.n_node);
    n->name = builder_strndup(b, name, strlen(name));
    n->op_type = builder_strndup(b, op, strlen(op));
    n->domain = builder_strndup(b, "", 0);
    n->input = builder_alloc(b, ONNX_BUILDER_MAX_NODE_IO * sizeof *n->input);
    n->output = builder_alloc(b, ONNX_BUILDER_MAX_NODE_IO * sizeof *n->output);
    n->attribute = builder_alloc(b, ONNX_BUILDER_MAX_ATTRS * sizeof *n->attribute);
    n->n_input = split_names(b, inputs, n->input);
    n->n_output = split_names(b, outputs, n->output);
    b->graph.node[b->graph.n_node++] = n;
    return n;
}

static Onnx__AttributeProto *new_attr(onnx_builder *b, Onnx__NodeProto *node, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    check_capacity(node->n_attribute, ONNX_BUILDER_MAX_ATTRS, "attributes");
    Onnx__AttributeProto *a = builder_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = builder_strndup(b, name, strlen(name));
    a->has_type = 1;
    a->type = type;
    node->attribute[node->n_attribute++] = a;
    return a;
}

void onnx_builder_attr_int(onnx_builder *b, Onnx__NodeProto *node, const char *name, int64_t value)
{
    Onnx__AttributeProto *a = new_attr(b, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = value;
}

void onnx_builder_attr_float(onnx_builder *b, Onnx__NodeProto *node, const char *name, float value)
{
    Onnx__AttributeProto *a = new_attr(b, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = value;
}

void onnx_builder_attr_ints(onnx_builder *b, Onnx__NodeProto *node, const char *name, size_t n,
                            const int64_t *values)
{
    Onnx__AttributeProto *a = new_attr(b, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = builder_alloc(b, (n ? n : 1) * sizeof *a->ints);
    if (n) memcpy(a->ints, values, n * sizeof *a->ints);
}

void onnx_builder_attr_string(onnx_builder *b, Onnx__NodeProto *node, const char *name, const char *value)
{
    Onnx__AttributeProto *a = new_attr(b, node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    size_t len = strlen(value);
    a->has_s = 1;
    a->s.len = len;
    a->s.data = (uint8_t *)builder_strndup(b, value, len);
}

Onnx__ModelProto *onnx_builder_model(onnx_builder *b) { return &b->model; }

void onnx_builder_serialize(const onnx_builder *b, uint8_t **data, size_t *size)
{
    size_t n = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        fprintf(stderr, "onnx_builder: out of memory\n");
        abort();
    }
    *size = onnx__model_proto__pack(&b->model, buf);
    *data = buf;
}
