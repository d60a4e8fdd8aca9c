/* program_file.h — a program file as `kiln inspect`, `kiln verify` and the --target check of
 * `kiln run`/`kiln bench` see it: its bytes, the validated view, and each distinct delegate
 * payload (context binary) with the check of the compile-time backend its DELEGATE names.
 *
 * Layer: tools. Uses the format reader (format/program_reader.h) and the compile-time backend
 * interface (compiler/compiler_backend.h): each backend's check validates its payloads exactly
 * as loading does and recomputes what loading deliberately skips (loading stays O(metadata)),
 * for the cpu backend the context binaries' signatures and weight-block hashes; this file
 * recomputes the program's segment hashes (docs/format.md). No backend's format is read here.
 */
#ifndef KILN_TOOLS_PROGRAM_FILE_H
#define KILN_TOOLS_PROGRAM_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler_backend.h"
#include "format/program_reader.h"
#include "kiln/kiln.h"

typedef struct cli_ctx_entry {
    uint32_t segment;
    size_t uses;                    /* delegate calls naming this segment */
    const char *op;                 /* the backend the calls name (in the program's strings) */
    const kiln_compiler_backend *backend; /* its compile-time backend, NULL when this build has none */
    kiln_payload_check check;       /* the backend's check of the payload */
} cli_ctx_entry;

typedef struct cli_program_file {
    uint8_t *owned;                 /* the bytes when read from a file (else NULL) */
    kiln_program_view view;
    cli_ctx_entry *ctx;             /* (n_ctx) in program order, each segment once */
    size_t n_ctx;
} cli_program_file;

/* Reads the regular file at path (a FIFO or device is refused before it is read), validates it
 * and collects its context binaries. 0, or the exit status with message (message_size bytes)
 * holding one line without the path: KILN_EXIT_INVALID when the file cannot be read or is not a
 * valid program, KILN_EXIT_FAILURE when out of memory. On failure nothing is held. */
int cli_program_file_read(const char *path, cli_program_file *out, char *message, size_t message_size);

/* The same over size bytes the caller keeps (8-byte aligned) for as long as *out is used. */
int cli_program_file_init(cli_program_file *out, const void *bytes, size_t size, char *message, size_t message_size);

/* NULL-safe; leaves *f zeroed. */
void cli_program_file_free(cli_program_file *f);

/* Problems of a valid program beyond what its validation checks: context binaries their backend
 * refuses, stored signatures or weight-block hashes that do not match the contents, segment
 * hashes that do not match their bytes. Returns how many; the first goes to first (first_size
 * bytes) as one line naming the binary or segment, e.g. "context binary in segment 0: signature
 * 762c8ab413445099 does not match its contents (they hash to 1f0e...)". */
size_t cli_program_file_problems(const cli_program_file *f, char *first, size_t first_size);

/* For a module or method with a forced target that failed to come up: 0 when every context
 * binary of the program whose backend lists targets (read from path, or the size bytes at bytes when bytes is not NULL) has
 * a record named target, or when the program cannot be read (the caller reports its own
 * failure); else, after reporting one line naming the records the program has,
 * KILN_EXIT_USAGE. cmd names the command in the message. */
int cli_check_target(const char *cmd, const char *path, const void *bytes, size_t size, const char *target);

#endif
