/* pad_index.h — which input element an output element of a Pad reads, for every Pad.
 *
 * Layer: core (internal). Depends on nothing. The portable Pad (kernels/portable/data_pad.c) and
 * the cpu backend's PAD step (kernels/generic/f32-pad-where-generic.c) map coordinates with this
 * one definition, so the two agree on every mode, crop and pad wider than the axis.
 */
#ifndef KILN_CORE_PAD_INDEX_H
#define KILN_CORE_PAD_INDEX_H

#include <stdint.h>

/* The modes; the values are the cpu backend's kiln_cpu_pad_mode, stored in context binaries. */
typedef enum kiln_pad_mode { KILN_PAD_CONSTANT = 0, KILN_PAD_REFLECT = 1, KILN_PAD_EDGE = 2 } kiln_pad_mode;

/* Input coordinate of output coordinate o along an axis of dim elements padded by begin before
   it (negative: cropped), or -1 for the constant. Reflect and edge need dim >= 1. */
static inline int64_t kiln_pad_source_index(int64_t o, int64_t begin, int64_t dim, kiln_pad_mode mode)
{
    int64_t i = o - begin;
    if (i >= 0 && i < dim) return i;
    if (mode == KILN_PAD_CONSTANT) return -1;
    if (mode == KILN_PAD_EDGE) return i < 0 ? 0 : dim - 1;
    if (dim == 1) return 0;
    /* Reflection without repeating the edge is periodic with period 2*(dim-1); this also
       covers pads wider than the axis, as numpy's reflect does. */
    int64_t period = 2 * (dim - 1);
    i %= period;
    if (i < 0) i += period;
    return i < dim ? i : period - i;
}

#endif
