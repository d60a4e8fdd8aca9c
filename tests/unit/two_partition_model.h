/* two_partition_model.h — an ONNX model (built in C, tests/support/onnx_builder.h) whose cpu
 * delegates form two partitions with different scratch needs: an MLP cut in two by Softsign, an
 * op the cpu backend does not take (it stays on the portable kernels, src/compiler/partition.c),
 * the first partition on wide rows and the second on narrow ones.
 *
 * Layer: tests. Header-only, free of any check macros so that tests with either expectation
 * header (unit_expect.h, test_cpu_support.h) can use it. Used by test_scratch_size.c,
 * test_file_write.c and test_cli_outputs.c.
 */
#ifndef KILN_TESTS_UNIT_TWO_PARTITION_MODEL_H
#define KILN_TESTS_UNIT_TWO_PARTITION_MODEL_H

#include <stdint.h>

#include "onnx_builder.h"

static inline void two_partition_fill(float *w, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = 0.25f * ((float)(seed >> 8) / 16777216.0f - 0.5f);
    }
}

/* x[rows,256] -> MatMul 256x256 -> Relu -> MatMul 256x64 -> Softsign -> MatMul 64x16 -> Relu ->
   MatMul 16x16 -> y[rows,16]: partition one keeps a [rows,256] intermediate, partition two a
   [rows,16] one. */
static inline void two_partition_model(int64_t rows, uint8_t **data, size_t *size)
{
    static float w1[256 * 256], w2[256 * 64], w3[64 * 16], w4[16 * 16];
    two_partition_fill(w1, 256 * 256, 1);
    two_partition_fill(w2, 256 * 64, 2);
    two_partition_fill(w3, 64 * 16, 3);
    two_partition_fill(w4, 16 * 16, 4);
    onnx_builder *b = onnx_builder_create(13);
    int64_t xs[2] = {rows, 256}, s1[2] = {256, 256}, s2[2] = {256, 64}, s3[2] = {64, 16}, s4[2] = {16, 16};
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, xs);
    onnx_builder_initializer(b, "w1", ONNX_BUILDER_FLOAT, 2, s1, w1, sizeof w1);
    onnx_builder_initializer(b, "w2", ONNX_BUILDER_FLOAT, 2, s2, w2, sizeof w2);
    onnx_builder_initializer(b, "w3", ONNX_BUILDER_FLOAT, 2, s3, w3, sizeof w3);
    onnx_builder_initializer(b, "w4", ONNX_BUILDER_FLOAT, 2, s4, w4, sizeof w4);
    onnx_builder_node(b, "MatMul", "x,w1", "a1");
    onnx_builder_node(b, "Relu", "a1", "a2");
    onnx_builder_node(b, "MatMul", "a2,w2", "a3");
    onnx_builder_node(b, "Softsign", "a3", "a4");
    onnx_builder_node(b, "MatMul", "a4,w3", "a5");
    onnx_builder_node(b, "Relu", "a5", "a6");
    onnx_builder_node(b, "MatMul", "a6,w4", "y");
    onnx_builder_output(b, "y");
    onnx_builder_serialize(b, data, size);
    onnx_builder_destroy(b);
}

#endif
