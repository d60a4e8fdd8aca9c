/* detokenize.c — ids back to bytes: per token (kiln_vocab_token_piece) and for a sequence.
 *
 * Layer: llm (tokenizer core). Depends on core. llama: a byte token <0xXX> is its byte, "▁"
 * is a space, other text is copied; gpt2: every character of the token is mapped back to its
 * byte (characters outside GPT-2's table, which a real vocabulary does not have, are copied as
 * UTF-8). Control tokens give no bytes in either.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/check.h"
#include "llm/unicode.h"
#include "llm/vocab_internal.h"

/* Writes byte b at out[n] when it fits; returns n + 1 (the length so far either way). */
static size_t put(char *out, size_t size, size_t n, char b)
{
    if (n < size) out[n] = b;
    return n + 1;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static size_t llama_piece(const char *t, size_t len, int32_t type, char *out, size_t size)
{
    if (type == KILN_TOKEN_BYTE && len == 6 && memcmp(t, "<0x", 3) == 0 && t[5] == '>' && hex_digit(t[3]) >= 0 &&
        hex_digit(t[4]) >= 0)
        return put(out, size, 0, (char)(hex_digit(t[3]) * 16 + hex_digit(t[4])));
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (i + 3 <= len && (uint8_t)t[i] == 0xE2 && (uint8_t)t[i + 1] == 0x96 && (uint8_t)t[i + 2] == 0x81) {
            n = put(out, size, n, ' ');
            i += 3;
        } else {
            n = put(out, size, n, t[i++]);
        }
    }
    return n;
}

static size_t gpt2_piece(const char *t, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t step = kiln_utf8_decode((const uint8_t *)t + i, len - i, &cp);
        int byte = cp == KILN_UNICODE_INVALID ? -1 : kiln_gpt2_cp_byte(cp);
        if (byte >= 0) {
            n = put(out, size, n, (char)byte);
        } else {
            for (size_t k = 0; k < step; k++) n = put(out, size, n, t[i + k]);
        }
        i += step;
    }
    return n;
}

/* The piece's full length; writes what fits in out[0..size). */
static size_t piece(const kiln_vocab *v, int32_t id, char *out, size_t size)
{
    if (v->types[id] == KILN_TOKEN_CONTROL) return 0;
    if (v->kind == KILN_VOCAB_LLAMA) return llama_piece(v->text[id], v->text_size[id], v->types[id], out, size);
    return gpt2_piece(v->text[id], v->text_size[id], out, size);
}

kiln_status kiln_vocab_token_piece(const kiln_vocab *v, int32_t id, char *out, size_t size, size_t *n_out)
{
    if (!v || !n_out || (!out && size)) return KILN_ERROR_INVALID_ARGUMENT;
    if (id < 0 || (size_t)id >= v->n_tokens) return KILN_ERROR_INDEX_OUT_OF_RANGE;
    *n_out = piece(v, id, out, size);
    return *n_out <= size ? KILN_OK : KILN_ERROR_INVALID_ARGUMENT;
}

kiln_status kiln_vocab_detokenize(const kiln_vocab *v, const int32_t *ids, size_t n,
                                  const kiln_allocator *allocator, char **text_out, size_t *size_out)
{
    if (text_out) *text_out = NULL;
    if (size_out) *size_out = 0;
    if (!v || !text_out || !size_out || (!ids && n)) return KILN_ERROR_INVALID_ARGUMENT;
    if (!allocator) allocator = kiln_allocator_default();
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= v->n_tokens) return KILN_ERROR_INDEX_OUT_OF_RANGE;
        if (!kiln_add_size(total, piece(v, ids[i], NULL, 0), &total)) return KILN_ERROR_OUT_OF_MEMORY;
    }
    char *text = kiln_alloc(allocator, total + 1, 1);
    if (!text) return KILN_ERROR_OUT_OF_MEMORY;
    size_t at = 0;
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        size_t len = piece(v, ids[i], text + at, total - at);
        /* The space the llama tokenizer put in front of the text is not part of it. */
        if (first && len && v->kind == KILN_VOCAB_LLAMA && v->add_space_prefix && text[at] == ' ') {
            memmove(text + at, text + at + 1, len - 1);
            len--;
            total--;
        }
        if (v->types[ids[i]] != KILN_TOKEN_CONTROL) first = false;
        at += len;
    }
    text[at] = '\0';
    *text_out = text;
    *size_out = at;
    return KILN_OK;
}
