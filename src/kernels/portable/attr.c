/* attr.c — attribute lookup helpers for kernels.
 * Layer: kernels/portable. Attribute lists are short (a handful), so a linear scan by name is
 * cheaper than any index. */
#include <string.h>

#include "kernels/portable/kernel.h"

const kiln_attr *kiln_node_attr(const kiln_node *node, const char *name)
{
    for (size_t i = 0; i < node->n_attrs; i++)
        if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
    return NULL;
}

int64_t kiln_node_attr_int(const kiln_node *node, const char *name, int64_t fallback)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    return a && a->type == KILN_ATTR_INT ? a->i : fallback;
}

float kiln_node_attr_float(const kiln_node *node, const char *name, float fallback)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    if (!a) return fallback;
    if (a->type == KILN_ATTR_FLOAT) return a->f;
    if (a->type == KILN_ATTR_INT) return (float)a->i;
    return fallback;
}

size_t kiln_node_attr_ints(const kiln_node *node, const char *name, const int64_t **values)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    if (!a || a->type != KILN_ATTR_INTS) {
        *values = NULL;
        return 0;
    }
    *values = a->ints;
    return a->n;
}

size_t kiln_node_attr_floats(const kiln_node *node, const char *name, const float **values)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    if (!a || a->type != KILN_ATTR_FLOATS) {
        *values = NULL;
        return 0;
    }
    *values = a->floats;
    return a->n;
}

const char *kiln_node_attr_string(const kiln_node *node, const char *name, const char *fallback)
{
    const kiln_attr *a = kiln_node_attr(node, name);
    return a && a->type == KILN_ATTR_STRING ? a->s : fallback;
}
