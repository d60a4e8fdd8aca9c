/* test_dtype.c — kiln_dtype's block-quantized weight types (issue 13, item 3): their values,
 * names and blocks (ggml's layouts), byte sizes counted in whole blocks with checked arithmetic,
 * and every element-wise path refusing them cleanly.
 *
 * Layer: tests (core through the public API; the compiler IR, portable kernels and the runtime
 * through ir_program_support.h; tools/io's .npy writer). Sizes: a row that is no whole number of
 * blocks (also as the compiler reports it), a block-quantized scalar, negative and overflowing
 * counts. Refusals: an ONNX node fed a
 * Q8_0 value at compile time (DTYPE_MISMATCH naming it); a program holding a Q4_0 input opens
 * (the reader sizes it in blocks) and loading a portable kernel that reads it is FORMAT; the
 * .npy writer is NOT_SUPPORTED naming the dtype and writes nothing.
 */
#include <stdint.h>
#include <stdio.h>

#include "io/npy.h"
#include "ir_program_support.h"

static void values_and_blocks(void)
{
    unit_section("dtype values, names and blocks");
    /* the values are part of the program format: appended, never renumbered */
    EXPECT(KILN_DTYPE_BOOL == 12 && KILN_DTYPE_Q8_0 == 13 && KILN_DTYPE_Q4_0 == 14 && KILN_DTYPE_Q4_K == 15 &&
           KILN_DTYPE_Q6_K == 16 && KILN_DTYPE_COUNT == 17);
    static const struct { kiln_dtype d; const char *name; uint32_t elements, bytes; } want[] = {
        {KILN_DTYPE_F32, "f32", 1, 4},      {KILN_DTYPE_BF16, "bf16", 1, 2},  {KILN_DTYPE_BOOL, "bool", 1, 1},
        {KILN_DTYPE_Q8_0, "q8_0", 32, 34},  {KILN_DTYPE_Q4_0, "q4_0", 32, 18}, {KILN_DTYPE_Q4_K, "q4_k", 256, 144},
        {KILN_DTYPE_Q6_K, "q6_k", 256, 210},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint32_t elements = 0, bytes = 0;
        EXPECT_STATUS(kiln_dtype_block(want[i].d, &elements, &bytes), KILN_OK);
        EXPECT(elements == want[i].elements && bytes == want[i].bytes);
        EXPECT(strcmp(kiln_dtype_name(want[i].d), want[i].name) == 0);
        EXPECT(!kiln_dtype_is_quantized(want[i].d) == (want[i].elements == 1));
        EXPECT(kiln_dtype_size(want[i].d) == (want[i].elements == 1 ? want[i].bytes : 0));
    }
    EXPECT_STATUS(kiln_dtype_block((kiln_dtype)KILN_DTYPE_COUNT, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(strcmp(kiln_dtype_name((kiln_dtype)KILN_DTYPE_COUNT), "?") == 0 && !kiln_dtype_is_quantized((kiln_dtype)99));
}

static void sizes(void)
{
    unit_section("byte sizes in whole blocks");
    size_t n = 0;
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q8_0, 64, &n), KILN_OK);
    EXPECT(n == 68);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q4_K, 512, &n), KILN_OK);
    EXPECT(n == 288);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q6_K, 256, &n), KILN_OK);
    EXPECT(n == 210);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q4_0, 0, &n), KILN_OK);
    EXPECT(n == 0);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_F32, 3, &n), KILN_OK);
    EXPECT(n == 12);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q8_0, 33, &n), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q4_K, 32, &n), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q8_0, -32, &n), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_dtype_row_size((kiln_dtype)KILN_DTYPE_COUNT, 32, &n), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_Q8_0, INT64_MAX / 32 * 32, &n), KILN_ERROR_LIMIT);
    EXPECT_STATUS(kiln_dtype_row_size(KILN_DTYPE_F64, INT64_MAX / 4, &n), KILN_ERROR_LIMIT);

    kiln_tensor t = {.dtype = KILN_DTYPE_Q4_0, .rank = 2, .shape = {3, 64}};
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_OK);
    EXPECT(n == 3 * 2 * 18);
    t.shape[0] = 0;
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_OK);
    EXPECT(n == 0);
    t.shape[1] = 48; /* 1.5 blocks per row, even with no rows */
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_ERROR_SHAPE_MISMATCH);
    t = (kiln_tensor){.dtype = KILN_DTYPE_Q8_0, .rank = 0};
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_ERROR_SHAPE_MISMATCH);
    t.dtype = KILN_DTYPE_I64;
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_OK);
    EXPECT(n == 8);
    t = (kiln_tensor){.dtype = KILN_DTYPE_Q6_K, .rank = 3, .shape = {INT64_MAX / 2, 4, 256}};
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_ERROR_LIMIT);
    t.shape[0] = -1;
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_ERROR_INVALID_ARGUMENT);
    t = (kiln_tensor){.dtype = KILN_DTYPE_F32, .rank = KILN_MAX_RANK + 1};
    EXPECT_STATUS(kiln_tensor_size(&t, &n), KILN_ERROR_INVALID_ARGUMENT);
}

static void compiler_refuses(void)
{
    unit_section("an ONNX node fed a Q8_0 value is refused at compile time");
    char message[512] = "";
    kiln_ir_graph g;
    irp_import(&g, "Relu", 64, message, sizeof message);
    /* every size the compiler records: a row of no whole number of blocks is named */
    kiln_tensor bad = {.dtype = KILN_DTYPE_Q4_K, .rank = 2, .shape = {2, 100}};
    size_t n;
    EXPECT_STATUS(kiln_ir_tensor_size(&g, &bad, "initializer", "w", &n), KILN_ERROR_SHAPE_MISMATCH);
    EXPECT(strstr(message, "initializer 'w' of shape [2, 100] (q4_k) is not stored in whole blocks") != NULL);
    EXPECT(strstr(message, "multiple of 256 elements") != NULL);
    message[0] = '\0';
    REQUIRE(g.n_inputs == 1);
    g.values[g.inputs[0]].t.dtype = KILN_DTYPE_Q8_0;
    EXPECT_STATUS(kiln_ir_infer_and_fold(&g), KILN_ERROR_DTYPE_MISMATCH);
    EXPECT(strstr(message, "input 0 is q8_0, a block-quantized type, which ONNX ops do not take") != NULL);
    if (!strstr(message, "block-quantized")) fprintf(stderr, "  message: %s\n", message);
    kiln_ir_graph_deinit(&g);
}

/* The Relu program with its input (f32 [2, 64]) declared as dtype instead; the load's status. */
static kiln_status relu_program_with_input(kiln_dtype dtype)
{
    char message[512] = "";
    kiln_ir_graph g;
    irp_import(&g, "Relu", 64, message, sizeof message);
    EXPECT_STATUS(kiln_ir_infer_and_fold(&g), KILN_OK);
    g.values[g.inputs[0]].t.dtype = dtype; /* after inference: only the program sees it */
    size_t size;
    void *data = irp_emit(&g, &size);
    kiln_ir_graph_deinit(&g);
    kiln_program *p = NULL;
    EXPECT_STATUS(kiln_program_open_memory(data, size, &p), KILN_OK);
    kiln_program_close(p);
    kiln_status st = irp_load_and_run_relu(data, size, message, sizeof message);
    kiln_free(kiln_allocator_default(), data);
    return st;
}

static void runtime_refuses(void)
{
    unit_section("a program's Q4_0 input opens, and the kernel reading it does not load");
    EXPECT_STATUS(relu_program_with_input(KILN_DTYPE_F32), KILN_OK);
    EXPECT_STATUS(relu_program_with_input(KILN_DTYPE_Q4_0), KILN_ERROR_FORMAT);
}

static void npy_refuses(void)
{
    unit_section("the .npy writer refuses block-quantized tensors");
    uint8_t blocks[34] = {0};
    kiln_tensor t = {.dtype = KILN_DTYPE_Q8_0, .rank = 1, .shape = {32}, .data = blocks};
    char message[256] = "";
    EXPECT_STATUS(kiln_npy_write_io(NULL, "/tmp/kiln_test_dtype_never_written.npy", &t, message, sizeof message),
                  KILN_ERROR_NOT_SUPPORTED);
    EXPECT(strstr(message, "NumPy has no dtype for kiln's q8_0") != NULL);
    FILE *f = fopen("/tmp/kiln_test_dtype_never_written.npy", "rb");
    EXPECT(f == NULL);
    if (f) fclose(f);
}

int main(void)
{
    values_and_blocks();
    sizes();
    compiler_refuses();
    runtime_refuses();
    npy_refuses();
    return unit_finish("test_dtype");
}
