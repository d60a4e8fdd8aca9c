/* test_runtime_support.h — what the runtime API tests (test_runtime_api.c,
 * test_runtime_handles.c) share about node/test_add (x + y, f32 [3,4,5]): its tensors and the
 * check that every entry point of a method handle refuses it as stale.
 *
 * Layer: tests. Header-only (static inline) over unit_expect.h.
 */
#ifndef KILN_TESTS_UNIT_TEST_RUNTIME_SUPPORT_H
#define KILN_TESTS_UNIT_TEST_RUNTIME_SUPPORT_H

#include <stdint.h>

#include "unit_expect.h"

#define N 60 /* elements of [3,4,5] */

static inline kiln_tensor tensor_of(float *data)
{
    kiln_tensor t = {KILN_DTYPE_F32, 3, {3, 4, 5}, data};
    return t;
}

/* Every entry point of a method handle that must be stale; the unload at the end is ignored. */
static inline void expect_stale_method(kiln_method *h)
{
    float x[N] = {0};
    kiln_tensor t = tensor_of(x), info;
    uint64_t id;
    EXPECT_STATUS(kiln_method_set_input(h, 0, &t), KILN_ERROR_STALE_HANDLE);
    EXPECT_STATUS(kiln_method_execute(h), KILN_ERROR_STALE_HANDLE);
    EXPECT_STATUS(kiln_method_get_output(h, 0, &info), KILN_ERROR_STALE_HANDLE);
    EXPECT_STATUS(kiln_method_input_info(h, 0, &info), KILN_ERROR_STALE_HANDLE);
    EXPECT_STATUS(kiln_method_output_info(h, 0, &info), KILN_ERROR_STALE_HANDLE);
    EXPECT_STATUS(kiln_method_context_id(h, 0, &id), KILN_ERROR_STALE_HANDLE);
    EXPECT(kiln_method_input_count(h) == 0 && kiln_method_output_count(h) == 0 && kiln_method_delegate_count(h) == 0);
    EXPECT(kiln_method_input_name(h, 0) == NULL && kiln_method_output_name(h, 0) == NULL);
    kiln_method_unload(h);
}

#endif
