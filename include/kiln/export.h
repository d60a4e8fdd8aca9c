/* export.h — KILN_API, the mark of every function kiln's shared libraries export.
 *
 * Layer: public header. Depends on nothing. kiln is compiled with -fvisibility=hidden, so
 * libkiln.so and libkiln_compiler.so export exactly the functions their installed headers
 * declare with KILN_API and nothing of the internal layers (tests/install/check_install.sh
 * checks both directions). For programs that include the headers the mark is harmless, with
 * or without -fvisibility=hidden of their own.
 */
#ifndef KILN_EXPORT_H
#define KILN_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#endif /* KILN_EXPORT_H */
