/* buf.c — growable byte buffer. Layer: core. */
#include "core/buf.h"

#include <string.h>

#include "core/alloc.h"
#include "core/check.h"

void kiln_buf_init(kiln_buf *b, const kiln_allocator *allocator)
{
    b->allocator = allocator;
    b->data = NULL;
    b->size = b->cap = 0;
}

void kiln_buf_deinit(kiln_buf *b)
{
    kiln_free(b->allocator, b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

bool kiln_buf_reserve(kiln_buf *b, size_t extra)
{
    size_t need;
    if (!kiln_add_size(b->size, extra, &need)) return false;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (!kiln_mul_size(cap, 2, &cap)) return false;
    }
    unsigned char *p = kiln_alloc(b->allocator, cap, 64);
    if (!p) return false;
    if (b->size) memcpy(p, b->data, b->size);
    kiln_free(b->allocator, b->data);
    b->data = p;
    b->cap = cap;
    return true;
}

bool kiln_buf_append(kiln_buf *b, const void *data, size_t size)
{
    if (!kiln_buf_reserve(b, size)) return false;
    if (size) memcpy(b->data + b->size, data, size);
    b->size += size;
    return true;
}

bool kiln_buf_pad(kiln_buf *b, size_t align)
{
    size_t target = kiln_align_up(b->size, align);
    if (!kiln_buf_reserve(b, target - b->size)) return false;
    memset(b->data + b->size, 0, target - b->size);
    b->size = target;
    return true;
}

void *kiln_buf_release(kiln_buf *b, size_t *size)
{
    void *p = b->data;
    *size = b->size;
    b->data = NULL;
    b->size = b->cap = 0;
    return p;
}
