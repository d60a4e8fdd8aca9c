/* gpt2_split.c — GPT-2's pre-tokenizer, by hand:
 *
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * Layer: llm (tokenizer core). At each position the alternatives are tried in that order, as a
 * backtracking regex engine does; each is greedy. The one subtle alternative is \s+(?!\S): a
 * run of white space followed by something else gives back its last character, which then
 * starts the next piece (so "  Hello" is "  " -> " " + " Hello"); a single white-space
 * character before a non-space falls through to \s+ and is a piece of its own. Malformed UTF-8
 * bytes are in no class: they match [^\s\p{L}\p{N}].
 */
#include <string.h>

#include "llm/unicode.h"
#include "llm/vocab_internal.h"

enum char_class { CLASS_LETTER, CLASS_NUMBER, CLASS_SPACE, CLASS_OTHER };

static enum char_class class_of(uint32_t cp)
{
    if (kiln_unicode_is_letter(cp)) return CLASS_LETTER;
    if (kiln_unicode_is_number(cp)) return CLASS_NUMBER;
    if (kiln_unicode_is_space(cp)) return CLASS_SPACE;
    return CLASS_OTHER;
}

typedef struct scan {
    const uint8_t *text;
    size_t size;
} scan;

/* The code point at pos (pos < size) and its class; *next is the byte after it. */
static enum char_class at(const scan *s, size_t pos, uint32_t *cp, size_t *next)
{
    *next = pos + kiln_utf8_decode(s->text + pos, s->size - pos, cp);
    return class_of(*cp);
}

/* The end of the longest run of characters of class c starting at pos (pos itself if none). */
static size_t run_of(const scan *s, size_t pos, enum char_class c)
{
    while (pos < s->size) {
        uint32_t cp;
        size_t next;
        if (at(s, pos, &cp, &next) != c) break;
        pos = next;
    }
    return pos;
}

/* 's 't 'm 'd (one letter) and 're 've 'll (two), lower case only. 0 when none matches. */
static size_t contraction(const scan *s, size_t pos)
{
    if (s->text[pos] != '\'' || pos + 1 >= s->size) return 0;
    char c1 = (char)s->text[pos + 1];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return pos + 2;
    if (pos + 2 >= s->size) return 0;
    char c2 = (char)s->text[pos + 2];
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return pos + 3;
    return 0;
}

size_t kiln_gpt2_next_piece(const char *text, size_t size, size_t pos)
{
    scan s = {(const uint8_t *)text, size};
    size_t end = contraction(&s, pos);
    if (end) return end;

    /* " ?X+" for X = letters, numbers, other: an optional ASCII space, then one or more X. */
    size_t start = pos + (s.text[pos] == ' ' ? 1 : 0);
    if (start < size) {
        uint32_t cp;
        size_t next;
        enum char_class c = at(&s, start, &cp, &next);
        if (c != CLASS_SPACE) return run_of(&s, next, c);
    }
    /* White space: the whole run at the end of the text, else all but its last character, or
       the single character when the run is one long. */
    size_t run_end = run_of(&s, pos, CLASS_SPACE);
    if (run_end == size) return run_end;
    size_t last = pos, cursor = pos;
    while (cursor < run_end) {
        uint32_t cp;
        last = cursor;
        at(&s, cursor, &cp, &cursor);
    }
    return last > pos ? last : run_end;
}
