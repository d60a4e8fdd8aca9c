/* text_escape.h — making strings from untrusted files safe to print in a one-line message.
 *
 * Layer: core (internal). Depends on nothing but the C library.
 * Why: node, value and file names come from models and program files. A newline in one would
 * split kiln's "one error line"; an ANSI escape sequence would reach the user's terminal. Every
 * message that quotes such a string quotes kiln_text_escape's copy of it instead.
 */
#ifndef KILN_CORE_TEXT_ESCAPE_H
#define KILN_CORE_TEXT_ESCAPE_H

#include <stddef.h>

/* Copies the first n bytes of src (or up to its NUL if n is (size_t)-1) into dst as printable
 * text: well-formed UTF-8 outside the C0/C1 control ranges is copied as it is; a backslash becomes
 * "\\", a tab, newline or carriage return "\t", "\n", "\r", and every other byte (controls, DEL,
 * bytes of malformed UTF-8) "\xHH". Truncates at a whole escape and always NUL-terminates when
 * dst_size > 0. Returns dst (so it can be an argument of snprintf); src NULL gives "(null)". */
char *kiln_text_escape(char *dst, size_t dst_size, const char *src, size_t n);

/* Enough room for the escaped form of a typical name in a message (longer ones are cut). */
#define KILN_ESCAPED_NAME_SIZE 256

#endif
