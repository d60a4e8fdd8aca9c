/* npy.h — NumPy .npy files to and from kiln_tensor.
 *
 * Layer: tools (host-side I/O for the kiln tool and the demo). Depends on kiln.h and src/core.
 * Supports format versions 1.0, 2.0 and 3.0, C order, rank 0 .. KILN_MAX_RANK and these dtypes:
 *   f4 f8 f2 -> F32 F64 F16,  i8 i4 i2 i1 -> I64 I32 I16 I8,  u8 u4 u2 u1 -> U64 U32 U16 U8,
 *   b1 -> BOOL.
 * Byte order '<', '=' and '|' (one-byte types) are read as they are; '>' is byte-swapped to the
 * host order. Files are written in host order (little-endian on every kiln target) with exactly
 * the header NumPy 1.24 writes, so a tensor read from a NumPy file writes back byte for byte.
 *
 * The readers treat the bytes as untrusted: every length, the header dict and the data size are
 * validated before anything is allocated, and a bad file yields a status, never a crash.
 */
#ifndef KILN_TOOLS_IO_NPY_H
#define KILN_TOOLS_IO_NPY_H

#include <stddef.h>

#include "kiln/kiln.h"

struct kiln_file_io; /* src/core/file_write.h; only kiln_npy_write_io needs it */

/* Reads the .npy file at path into *out. out->data is allocated from a (NULL selects
 * kiln_allocator_default()) with 64-byte alignment and belongs to the caller, who releases it with
 * kiln_free(a, out->data). Boolean elements are normalised to 0/1. Only a regular file is read:
 * a FIFO, device, socket or directory is refused before anything is read (a FIFO cannot block).
 * Returns KILN_OK or
 *   KILN_ERROR_INVALID_ARGUMENT  path or out is NULL;
 *   KILN_ERROR_IO                the file cannot be opened, is not a regular file or a read fails;
 *   KILN_ERROR_FORMAT            bad magic, header length, header dict or shape, or the data size
 *                                does not match the file size (truncated or trailing bytes);
 *   KILN_ERROR_VERSION           a format version other than 1.0, 2.0, 3.0;
 *   KILN_ERROR_NOT_SUPPORTED     a dtype outside the list above (object arrays, which numpy.save
 *                                pickles, and structured dtypes among them), or fortran_order True;
 *   KILN_ERROR_LIMIT             more than KILN_MAX_RANK dimensions;
 *   KILN_ERROR_OUT_OF_MEMORY.
 * On failure *out is zeroed (data NULL) and there is nothing to free, and when message is not
 * NULL the message_size bytes at message hold one line saying what is wrong, without the path
 * ("Fortran-order arrays are not supported (save with numpy.ascontiguousarray)"; quoted header
 * text is escaped, so the line is printable). On success message holds "". */
kiln_status kiln_npy_read(const char *path, const kiln_allocator *a, kiln_tensor *out, char *message,
                          size_t message_size);

/* As kiln_npy_read over the size bytes at `bytes` (no alignment needed); the bytes are copied,
 * not retained. KILN_ERROR_INVALID_ARGUMENT also when bytes is NULL with size > 0. */
kiln_status kiln_npy_read_memory(const void *bytes, size_t size, const kiln_allocator *a, kiln_tensor *out,
                                 char *message, size_t message_size);

/* Enough room for any message of the readers. */
#define KILN_NPY_MESSAGE_SIZE 256

/* Writes t as a version 1.0 .npy file at path, through kiln_file_write_atomic (core/file_write.h):
 * a link at path is followed, a destination that is not a regular file (device, FIFO, directory)
 * is refused before anything is created, and the bytes go to "PATH.tmp-XXXXXX" in the same
 * directory, are flushed to disk and then renamed over path, so readers never see a partial file;
 * on any failure the temporary file is removed and path is untouched. An existing file keeps its
 * mode; a new one gets 0666 minus the umask.
 * Returns KILN_OK or
 *   KILN_ERROR_INVALID_ARGUMENT  path or t is NULL, rank > KILN_MAX_RANK, a negative dimension,
 *                                an element count that overflows, or data NULL with elements;
 *   KILN_ERROR_NOT_SUPPORTED     a dtype NumPy has no equivalent for (BF16, the block-quantized
 *                                Q8_0, Q4_0, Q4_K, Q6_K ...);
 *   KILN_ERROR_IO                not a regular file, or creating, writing, syncing or renaming
 *                                failed;
 *   KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_npy_write(const char *path, const kiln_tensor *t);

/* kiln_npy_write with the file operations given (NULL: the real ones; tests inject failures
 * through it) and, for the file errors, one line naming path in message (may be NULL). */
kiln_status kiln_npy_write_io(const struct kiln_file_io *io, const char *path, const kiln_tensor *t, char *message,
                              size_t message_size);

#endif /* KILN_TOOLS_IO_NPY_H */
