/* ctxbin_group.h — reading and setting the scratch-group size of a context binary after it was
 * written (`kiln scratch-size --write`, `kiln compile --shards`).
 *
 * Layer: backends/cpu/aot. The compiler sees context binaries as opaque bytes; these two calls
 * are the writer's side of the header field group_scratch_size (docs/format.md part 2). The
 * field lies inside the 128-byte header, which the signature does not cover, so setting it
 * leaves the signature, and every other byte, unchanged. Both calls bounds-check what they read
 * (header, record and graph tables) but are not the runtime's full validation: callers that got
 * the bytes from outside validate them with the runtime reader first.
 */
#ifndef KILN_BACKENDS_CPU_AOT_CTXBIN_GROUP_H
#define KILN_BACKENDS_CPU_AOT_CTXBIN_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln.h"

/* The largest graph scratch size over every record (*need) and the header's group size
 * (*group, 0 when unset) of the binary at data (8-byte aligned). KILN_ERROR_INCOMPATIBLE when
 * the bytes are not a context binary of this version or a table lies outside them. */
kiln_status kiln_cpu_aot_scratch_info(const void *data, size_t size, uint64_t *need, uint64_t *group);

/* Record group_size as the binary's scratch-group size (0 clears it). KILN_ERROR_INVALID_ARGUMENT
 * when 0 < group_size < the binary's need or group_size > 2^46 (what readers accept);
 * KILN_ERROR_INCOMPATIBLE as above. On failure the bytes are unchanged. */
kiln_status kiln_cpu_aot_set_group_scratch(void *data, size_t size, uint64_t group_size);

#endif
