/* text_format.h — small printers shared by `kiln inspect` and the backends' descriptions of their
 * payloads: a JSON string literal, and a tensor's type as one short line.
 *
 * Layer: core (internal). Depends on the public dtype names (kiln.h) and the C library.
 * Why here: the tool and a backend's describe (compiler_backend.h) print into one output, so
 * both must quote and format alike; neither may include the other.
 */
#ifndef KILN_CORE_TEXT_FORMAT_H
#define KILN_CORE_TEXT_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "kiln/kiln.h"

/* s as a JSON string literal on out (quotes, backslashes, control characters and DEL escaped). */
void kiln_json_string(FILE *out, const char *s);

/* A one-line description "f32 [1,3,224,224]" of t's dtype and shape into buf (cut to size). */
void kiln_format_shape(const kiln_tensor *t, char *buf, size_t size);

#endif
