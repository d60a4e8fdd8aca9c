/* unicode.c — see unicode.h. Layer: llm (tokenizer core). */
#include "llm/unicode.h"

static bool in_ranges(const kiln_unicode_range *r, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid].first) hi = mid;
        else if (cp > r[mid].last) lo = mid + 1;
        else return true;
    }
    return false;
}

bool kiln_unicode_is_letter(uint32_t cp) { return in_ranges(kiln_unicode_letters, kiln_unicode_letters_count, cp); }
bool kiln_unicode_is_number(uint32_t cp) { return in_ranges(kiln_unicode_numbers, kiln_unicode_numbers_count, cp); }

bool kiln_unicode_is_space(uint32_t cp)
{
    /* Unicode's White_Space property (PropList.txt), unchanged since Unicode 6.3. */
    if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680) return true;
    if ((cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F) return true;
    return cp == 0x3000;
}

size_t kiln_utf8_lead_length(uint8_t lead)
{
    static const uint8_t by_high_nibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return by_high_nibble[lead >> 4];
}

size_t kiln_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
    uint8_t b = s[0];
    size_t len;
    uint32_t v, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if ((b & 0xE0) == 0xC0) len = 2, v = b & 0x1F, min = 0x80;
    else if ((b & 0xF0) == 0xE0) len = 3, v = b & 0x0F, min = 0x800;
    else if ((b & 0xF8) == 0xF0) len = 4, v = b & 0x07, min = 0x10000;
    else goto invalid;
    if (len > n) goto invalid;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) goto invalid;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) goto invalid;
    *cp = v;
    return len;
invalid:
    *cp = KILN_UNICODE_INVALID;
    return 1;
}

size_t kiln_utf8_encode(uint32_t cp, uint8_t out[4])
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}
