/* buf.h — a growable byte buffer over a kiln_allocator (writers build files in one).
 * Layer: core (internal). */
#ifndef KILN_CORE_BUF_H
#define KILN_CORE_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"

typedef struct kiln_buf {
    const kiln_allocator *allocator;
    unsigned char *data;  /* (cap), 64-byte aligned */
    size_t size, cap;
} kiln_buf;

void kiln_buf_init(kiln_buf *b, const kiln_allocator *allocator);
void kiln_buf_deinit(kiln_buf *b);
/* Make room for `extra` more bytes; false on overflow or allocation failure. */
bool kiln_buf_reserve(kiln_buf *b, size_t extra);
bool kiln_buf_append(kiln_buf *b, const void *data, size_t size);
/* Append zero bytes until size is a multiple of align (a power of two). */
bool kiln_buf_pad(kiln_buf *b, size_t align);
/* Hand the bytes to the caller (free with the buffer's allocator); the buffer becomes empty. */
void *kiln_buf_release(kiln_buf *b, size_t *size);

#endif
