/* compare.h — output comparison as ONNX's backend test runner does it: same dtype and shape,
 * then |actual - expected| <= atol + rtol * |expected| elementwise, NaN equal to NaN.
 * Test support code (not part of the library). */
#ifndef KILN_TESTS_COMPARE_H
#define KILN_TESTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"

/* true when equal within tolerance; otherwise writes one line saying where and by how much. */
bool kiln_test_compare(const kiln_tensor *actual, const kiln_tensor *expected, double rtol, double atol, char *why,
                       size_t why_size);

#endif
