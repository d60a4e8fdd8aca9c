/* output_file.h — the compile driver's outputs: the file operations it writes through, and the
 * check that no output replaces one of the models it reads.
 *
 * Layer: compiler (internal; not installed). Every file the compiler writes (programs, shard
 * programs, manifests) goes through core/file_write.h's kiln_file_write_atomic: links followed,
 * non-regular destinations refused, a temporary file renamed into place, the destination's mode
 * kept. kiln_compile_file_io takes the file operations as a table so that tests fail each one in
 * turn (tests/unit/test_compile_faults.c).
 */
#ifndef KILN_COMPILER_OUTPUT_FILE_H
#define KILN_COMPILER_OUTPUT_FILE_H

#include <stddef.h>

#include "core/file_write.h"
#include "kiln/compiler.h"

/* kiln_compile_file with the file operations given (NULL: the real ones). */
kiln_status kiln_compile_file_io(const kiln_compile_options *options, const kiln_compile_method *methods,
                                 size_t n_methods, const char *out_path, const kiln_file_io *io, char *message,
                                 size_t message_size);

/* KILN_ERROR_INVALID_ARGUMENT, with one line in message, when out_path is the same file (same
 * device and inode, after links) as the model_path of one of the methods: replacing it would
 * destroy the model being compiled. KILN_OK otherwise (also for methods given as bytes, or NULL). */
kiln_status kiln_compile_check_output(const kiln_compile_method *methods, size_t n_methods, const char *out_path,
                                      char *message, size_t message_size);

#endif
