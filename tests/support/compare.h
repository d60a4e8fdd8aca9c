/* compare.h — output comparison as ONNX's backend test runner does it: same dtype and shape,
 * then |actual - expected| <= atol + rtol * |expected| elementwise, NaN equal to NaN.
 * Test support code (not part of the library). */
#ifndef KILN_TESTS_COMPARE_H
#define KILN_TESTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "kiln/kiln.h"

/* The element at flat index i of t as a double, for every kiln dtype (f16 and bf16 decoded;
   0 for an unknown dtype). */
double kiln_test_element(const kiln_tensor *t, int64_t i);

/* true when equal within tolerance; otherwise writes one line saying where and by how much. */
bool kiln_test_compare(const kiln_tensor *actual, const kiln_tensor *expected, double rtol, double atol, char *why,
                       size_t why_size);

#endif
