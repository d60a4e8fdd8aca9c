/* cli.h — shared pieces of the kiln command-line tool: exit statuses, error reporting,
 * option parsing helpers and tensor files.
 *
 * Layer: tools. Uses the public API (kiln.h, compiler.h) plus tools/io.
 *
 * Exit statuses (documented in docs/cli.md):
 *   0  success
 *   1  failure while running (I/O, runtime error, execution error)
 *   2  usage error (unknown option, missing argument, bad value)
 *   3  the model uses an operator (or operator form) kiln does not support
 *   4  invalid input: corrupt or foreign model, program or tensor file, inconsistent model
 */
#ifndef KILN_TOOLS_CLI_H
#define KILN_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/text_escape.h"
#include "core/text_format.h"
#include "kiln/compiler.h"
#include "kiln/kiln.h"

enum { KILN_EXIT_OK = 0, KILN_EXIT_FAILURE = 1, KILN_EXIT_USAGE = 2, KILN_EXIT_UNSUPPORTED = 3, KILN_EXIT_INVALID = 4 };

/* Print "kiln: <message>" as one line on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Map a status to the documented exit status. */
int cli_exit_status(kiln_status st);
/* Parse "NAME=D0,D1,..." in place (the '=' becomes the name's terminator, so spec must outlive
   *out). Without "NAME=" the shape is positional (name NULL). false on a malformed spec. */
bool cli_parse_shape(char *spec, kiln_input_shape *out);
/* Parse a non-negative integer option value. */
bool cli_parse_int(const char *s, long min, long max, long *out);
/* Parse a number in [min, max] (NaN never is). */
bool cli_parse_double(const char *s, double min, double max, double *out);
/* true when s ends with suffix. */
bool cli_ends_with(const char *s, const char *suffix);
/* What the file at path holds, judged by its bytes and never by its name: a kiln program (it
   starts with the program magic), a model one of the compiler's importers recognises (*format,
   when not NULL, its importer's name, static), another readable file, or one that cannot be
   opened or read (a missing file, a FIFO: opening it as a program says why). */
typedef enum cli_file_kind { CLI_FILE_UNREADABLE, CLI_FILE_PROGRAM, CLI_FILE_MODEL, CLI_FILE_OTHER } cli_file_kind;
cli_file_kind cli_file_kind_of(const char *path, const char **format);
/* Load a .npy or ONNX TensorProto .pb file; data from the default allocator (free()). 0, or after
   reporting "cannot read input 'PATH': what is wrong" the exit status: KILN_EXIT_INVALID for
   every refused file (missing, not a regular file, corrupt, unsupported), KILN_EXIT_FAILURE when
   out of memory. */
int cli_load_tensor(const char *path, kiln_tensor *out);
/* A printable copy of a string from a file or the command line, for messages and text output
   (kiln_text_escape; long strings are cut). Returns buf. */
const char *cli_esc(char buf[KILN_ESCAPED_NAME_SIZE], const char *s);
/* s as a JSON string literal on stdout (kiln_json_string, core/text_format.h: the quoting the
   backends' descriptions use too). Shapes print with kiln_format_shape. */
void cli_json_string(const char *s);
/* Monotonic clock in seconds. */
double cli_now(void);
/* Sort n doubles ascending (timings, before taking min and median). */
void cli_sort_doubles(double *values, size_t n);

/* Shared by `kiln run` and `kiln bench`, whose command lines and inputs look alike. cmd names the
   command in messages ("run", "bench"). */
/* Parse a --threads value (0..1024); false after reporting a bad one. */
bool cli_parse_threads(const char *value, long *out);
/* An argument that is no known option: the program when it is the first operand. false after
   reporting an unknown option or a second program. */
bool cli_take_program(const char *cmd, const char *arg, const char **program);
/* false after reporting that no program was given. */
bool cli_require_program(const char *cmd, const char *program);
/* The method to run into *name: the one asked for (which must exist), else the program's only
   method. 0, or after reporting the exit status: KILN_EXIT_USAGE when the asked-for method does
   not exist or the program has several and none was asked for (the line lists them and says to
   pass --method), KILN_EXIT_INVALID for a program without methods. path names the program. */
int cli_choose_method(const char *cmd, const char *path, const kiln_program *program, const char *requested,
                      const char **name);
/* kiln_program_open of a user-named program file, refusing anything but a regular file first.
   0, or after reporting the exit status (KILN_EXIT_INVALID when the file cannot be opened or
   read, is not a regular file or not a valid program). */
int cli_open_program(const char *cmd, const char *path, kiln_program **out);
/* Creates *module from program with options and loads the method cli_choose_method picks (its
   name into *name, valid while the program is). path
   names the program in messages; when options->target is set and loading fails, the program's
   records are checked (cli_check_target: read from path, or the size bytes at bytes when the
   program was compiled in memory) so a record the file lacks is a usage error naming the ones it
   has. 0, or after reporting the exit status (*module may then be set: destroy it). */
int cli_load_method(const char *cmd, const char *path, const void *bytes, size_t size, kiln_program *program,
                    const kiln_module_options *options, const char *requested, const char **name,
                    kiln_module **module, kiln_method **method);
/* Load dir/input_<i>.npy (or .pb) for i = 0, 1, ... until one is missing or max are loaded.
   *n counts the tensors loaded even on failure (free() their data). 0 or an exit status (after
   reporting; KILN_EXIT_INVALID when dir does not exist or is not a directory). */
int cli_load_input_dir(const char *dir, kiln_tensor *inputs, size_t max, size_t *n);

int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_scratch_size(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_perplexity(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);

#endif
