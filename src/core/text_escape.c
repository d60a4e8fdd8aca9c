/* text_escape.c — printable copies of untrusted strings. Layer: core. See text_escape.h. */
#include "core/text_escape.h"

#include <stdint.h>
#include <string.h>

/* Length of the well-formed, printable UTF-8 sequence at s (of at most avail bytes), or 0 when the
 * byte at s must be escaped. Rejects overlong forms, surrogates, code points past U+10FFFF and
 * the C1 controls U+0080..U+009F (some terminals act on them as on ESC). */
static size_t utf8_printable_length(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c >= 0x20 && c < 0x7f) return 1;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1fu; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0fu; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07u; }
    else return 0;
    if (len > avail) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0u) != 0x80u) return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    if (cp >= 0x80 && cp <= 0x9f) return 0;
    return len;
}

char *kiln_text_escape(char *dst, size_t dst_size, const char *src, size_t n)
{
    if (!dst || dst_size == 0) return dst;
    if (!src) src = "(null)", n = (size_t)-1;
    if (n == (size_t)-1) n = strlen(src);
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char piece[8];
        size_t piece_len;
        size_t run = utf8_printable_length(s + i, n - i);
        if (run > 0 && s[i] != '\\') {
            memcpy(piece, s + i, run);
            piece_len = run;
        } else {
            static const char hex[] = "0123456789abcdef";
            run = 1;
            piece[0] = '\\';
            piece_len = 2;
            switch (s[i]) {
            case '\\': piece[1] = '\\'; break;
            case '\n': piece[1] = 'n'; break;
            case '\r': piece[1] = 'r'; break;
            case '\t': piece[1] = 't'; break;
            default:
                piece[1] = 'x';
                piece[2] = hex[s[i] >> 4];
                piece[3] = hex[s[i] & 15];
                piece_len = 4;
            }
        }
        if (o + piece_len >= dst_size) break; /* cut at a whole piece, leave room for the NUL */
        memcpy(dst + o, piece, piece_len);
        o += piece_len;
        i += run;
    }
    dst[o] = '\0';
    return dst;
}
