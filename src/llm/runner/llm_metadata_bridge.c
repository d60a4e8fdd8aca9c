/* llm_metadata_bridge.c — TEMPORARY: kiln_program_metadata_get as the contract declares it,
 * until the runtime's own (branch meta) is merged; this file goes then. Weak, so the real one
 * wins as soon as it is linked. Reports every key as absent. */
#include "kiln/kiln.h"

KILN_API kiln_status kiln_program_metadata_get(const kiln_program *program, const char *key, const void **data,
                                               size_t *size);

__attribute__((weak)) kiln_status kiln_program_metadata_get(const kiln_program *program, const char *key,
                                                            const void **data, size_t *size)
{
    (void)program, (void)key, (void)data, (void)size;
    return KILN_ERROR_NOT_FOUND;
}
