/* text_format.c — JSON string literals and one-line tensor types (see text_format.h).
 * Layer: core. */
#include "core/text_format.h"

void kiln_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

void kiln_format_shape(const kiln_tensor *t, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s [", kiln_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}
