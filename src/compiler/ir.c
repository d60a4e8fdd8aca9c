/* ir.c — graph IR storage. Layer: compiler. */
#include "compiler/ir.h"

#include <stdarg.h>
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"

void kiln_ir_graph_init(kiln_ir_graph *g, const kiln_allocator *allocator, char *message, size_t message_size)
{
    memset(g, 0, sizeof *g);
    g->allocator = allocator;
    kiln_arena_init(&g->arena, allocator, 256 * 1024);
    g->diag = kiln_diag_over(message, message_size);
    kiln_diag_clear(&g->diag);
}

void kiln_ir_graph_deinit(kiln_ir_graph *g)
{
    /* The list nodes live in the arena: free what they hold before the arena goes. */
    for (kiln_ir_owned *o = g->owned; o; o = o->next) kiln_free(g->allocator, o->ptr);
    g->owned = NULL;
    kiln_arena_deinit(&g->arena);
}

kiln_status kiln_ir_graph_adopt(kiln_ir_graph *g, void *ptr)
{
    kiln_ir_owned *o = KILN_ARENA_NEW(&g->arena, kiln_ir_owned);
    if (!o) {
        kiln_free(g->allocator, ptr);
        return KILN_ERROR_OUT_OF_MEMORY;
    }
    o->ptr = ptr;
    o->next = g->owned;
    g->owned = o;
    return KILN_OK;
}

/* Grow an arena array to hold one more element; old storage stays in the arena (compile-time
   graphs are small next to their weights, so the waste does not matter). */
static bool grow(kiln_arena *arena, void **items, size_t *cap, size_t n, size_t item_size)
{
    if (n < *cap) return true;
    size_t new_cap = *cap ? *cap * 2 : 64;
    void *p = kiln_arena_alloc_array(arena, new_cap, item_size, 16);
    if (!p) return false;
    if (n) memcpy(p, *items, n * item_size);
    *items = p;
    *cap = new_cap;
    return true;
}

kiln_status kiln_ir_value_add(kiln_ir_graph *g, const char *name, int32_t *out)
{
    KILN_CHECK(g->n_values < INT32_MAX, KILN_ERROR_LIMIT);
    KILN_CHECK(grow(&g->arena, (void **)&g->values, &g->cap_values, g->n_values, sizeof *g->values),
               KILN_ERROR_OUT_OF_MEMORY);
    kiln_ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = kiln_arena_strdup(&g->arena, name ? name : "");
    KILN_CHECK(v->name, KILN_ERROR_OUT_OF_MEMORY);
    v->producer = -1;
    v->first_use = v->last_use = -1;
    *out = (int32_t)g->n_values++;
    return KILN_OK;
}

kiln_status kiln_ir_graph_add_metadata(kiln_ir_graph *g, const char *key, const void *data, size_t size)
{
    KILN_CHECK(key && key[0] && (data || size == 0), KILN_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < g->n_metadata; i++) KILN_CHECK(strcmp(g->metadata[i].key, key) != 0, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(grow(&g->arena, (void **)&g->metadata, &g->cap_metadata, g->n_metadata, sizeof *g->metadata),
               KILN_ERROR_OUT_OF_MEMORY);
    kiln_ir_metadata *m = &g->metadata[g->n_metadata];
    m->key = kiln_arena_strdup(&g->arena, key);
    m->data = kiln_arena_memdup(&g->arena, size ? data : "", size ? size : 1, 64);
    m->size = size;
    KILN_CHECK(m->key && m->data, KILN_ERROR_OUT_OF_MEMORY);
    g->n_metadata++;
    return KILN_OK;
}

kiln_status kiln_ir_node_add(kiln_ir_graph *g, size_t n_inputs, size_t n_outputs, int32_t *out)
{
    KILN_CHECK(g->n_nodes < INT32_MAX, KILN_ERROR_LIMIT);
    KILN_CHECK(grow(&g->arena, (void **)&g->nodes, &g->cap_nodes, g->n_nodes, sizeof *g->nodes),
               KILN_ERROR_OUT_OF_MEMORY);
    kiln_ir_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->inputs = KILN_ARENA_ARRAY(&g->arena, int32_t, n_inputs ? n_inputs : 1);
    n->outputs = KILN_ARENA_ARRAY(&g->arena, int32_t, n_outputs ? n_outputs : 1);
    KILN_CHECK(n->inputs && n->outputs, KILN_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n_inputs; i++) n->inputs[i] = -1;
    for (size_t i = 0; i < n_outputs; i++) n->outputs[i] = -1;
    n->node.n_inputs = n_inputs;
    n->node.n_outputs = n_outputs;
    *out = (int32_t)g->n_nodes++;
    return KILN_OK;
}

kiln_status kiln_ir_fail(kiln_ir_graph *g, kiln_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail_escaping(&g->diag, status, fmt, ap);
    va_end(ap);
    return status;
}

kiln_status kiln_ir_fail_escaped(kiln_ir_graph *g, kiln_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kiln_diag_vfail(&g->diag, status, fmt, ap);
    va_end(ap);
    return status;
}

kiln_status kiln_ir_tensor_size(kiln_ir_graph *g, const kiln_tensor *t, const char *what, const char *name,
                                size_t *out)
{
    kiln_status st = kiln_tensor_size(t, out);
    if (st == KILN_OK) return KILN_OK;
    char shape[KILN_MAX_RANK * 24 + 16];
    kiln_tensor_shape_text(t, shape, sizeof shape);
    if (st == KILN_ERROR_SHAPE_MISMATCH) {
        uint32_t block = 0;
        kiln_dtype_block(t->dtype, &block, NULL);
        return kiln_ir_fail(g, st, "%s '%s' of shape %s (%s) is not stored in whole blocks: a %s row (the last "
                            "dimension) must be a multiple of %u elements", what, name, shape,
                            kiln_dtype_name(t->dtype), kiln_dtype_name(t->dtype), block);
    }
    return kiln_ir_fail(g, KILN_ERROR_LIMIT, "%s '%s' of shape %s (%s) is too large: its byte size overflows 63 bits",
                        what, name, shape, kiln_dtype_name(t->dtype));
}
