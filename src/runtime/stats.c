/* stats.c — runtime statistics and scratch groups. Layer: runtime.
 * Both belong to the compiled `cpu` backend (contexts and scratch buffers); until it exists
 * they report KILN_ERROR_NOT_SUPPORTED rather than invent numbers. */
#include "core/check.h"
#include "runtime/runtime.h"

kiln_status kiln_runtime_stats_get(kiln_runtime_stats *out)
{
    KILN_CHECK(out && out->struct_size >= sizeof *out, KILN_ERROR_INVALID_ARGUMENT);
    return KILN_ERROR_NOT_SUPPORTED;
}

kiln_status kiln_scratch_group_create(kiln_scratch_group **out)
{
    KILN_CHECK(out, KILN_ERROR_INVALID_ARGUMENT);
    *out = NULL;
    return KILN_ERROR_NOT_SUPPORTED;
}

void kiln_scratch_group_release(kiln_scratch_group *group) { (void)group; }
