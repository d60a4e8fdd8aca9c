/* test_importer.c — the compiler picks a model's importer by the file's bytes, never its name
 * (issue 13, item 3).
 *
 * Layer: tests (public compiler API; the importer table through compiler/importer.h). An ONNX
 * model written to "model.bin" compiles from its path; kiln_importer_pick names ONNX for its
 * bytes. Bytes no importer recognises are KILN_ERROR_MODEL with one line naming how the file
 * starts and what was tried: a GGUF header of a version kiln does not read, an ONNX TensorProto
 * (well-formed protobuf, but not a ModelProto), random bytes and an empty file. A GGUF v2/v3
 * header is the GGUF importer's, whatever follows it (tests/llm covers the importer itself).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compiler/gguf/gguf_import.h"
#include "compiler/importer.h"
#include "test_model_support.h"
#include "test_random.h"

static onnx_builder *relu_model(void)
{
    static const int64_t shape[2] = {2, 3};
    onnx_builder *b = onnx_builder_create(13);
    onnx_builder_input(b, "x", ONNX_BUILDER_FLOAT, 2, shape);
    onnx_builder_node(b, "Relu", "x", "y");
    onnx_builder_output(b, "y");
    return b;
}

static void onnx_named_bin(void)
{
    unit_section("an ONNX model named model.bin");
    onnx_builder *b = relu_model();
    uint8_t *model;
    size_t model_size;
    onnx_builder_serialize(b, &model, &model_size);
    const kiln_importer *im = kiln_importer_pick(model, model_size);
    EXPECT(im != NULL && strcmp(im->name, "onnx") == 0);
    char dir[] = "/tmp/kiln_test_importer.XXXXXX", path[64], out[64];
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/model.bin", dir);
    snprintf(out, sizeof out, "%s/model.kiln", dir);
    FILE *f = fopen(path, "wb");
    EXPECT(f && fwrite(model, 1, model_size, f) == model_size);
    if (f) fclose(f);
    kiln_compile_options opt = {.struct_size = sizeof opt, .no_delegate = 1};
    kiln_compile_method m = {.name = "forward", .model_path = path};
    char message[1024];
    kiln_status st = kiln_compile_file(&opt, &m, 1, out, message, sizeof message);
    EXPECT_STATUS(st, KILN_OK);
    if (st != KILN_OK) fprintf(stderr, "  message: %s\n", message);
    unlink(out);
    unlink(path);
    rmdir(dir);
    free(model);
    onnx_builder_destroy(b);
}

/* Refused by every importer: pick says none, a compile says so naming the start and the table. */
static void expect_unknown(const void *bytes, size_t size, const char *start)
{
    EXPECT(kiln_importer_pick(bytes, size) == NULL);
    static const uint8_t empty[1];
    tm_expect_refused_bytes(size ? bytes : empty, size, KILN_ERROR_MODEL,
                            "model '(from memory)' is not in a format kiln can import", start);
    tm_expect_refused_bytes(size ? bytes : empty, size, KILN_ERROR_MODEL, "tried onnx, gguf)", NULL);
}

static void unknown_formats(void)
{
    unit_section("GGUF v2/v3 picked by magic, v1 and v4 not; a TensorProto, random bytes, nothing");
    /* a GGUF v3 header: magic, version, tensor count 1, metadata count 0, then no tensor info */
    uint8_t gguf[24] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    EXPECT(kiln_importer_pick(gguf, sizeof gguf) == &kiln_gguf_model_importer);
    tm_expect_refused_bytes(gguf, sizeof gguf, KILN_ERROR_MODEL, "model '(from memory)': GGUF: ", NULL);
    gguf[4] = 2;
    EXPECT(kiln_importer_pick(gguf, sizeof gguf) == &kiln_gguf_model_importer);
    gguf[4] = 1;
    expect_unknown(gguf, sizeof gguf, "it starts with \"GGUF\"");
    gguf[4] = 4;
    expect_unknown(gguf, sizeof gguf, "it starts with \"GGUF\"");
    /* TensorProto {dims: 2, data_type: FLOAT, name: "w"}: fields 1 and 2 are varints, where
       ModelProto's field 2 (producer_name) is a string */
    static const uint8_t tensor[] = {0x08, 0x02, 0x10, 0x01, 0x42, 0x01, 'w'};
    expect_unknown(tensor, sizeof tensor, "it starts with bytes 08 02 10 01");
    uint64_t seed = 13;
    for (int round = 0; round < 64; round++) {
        uint8_t noise[256];
        for (size_t i = 0; i < sizeof noise; i++) noise[i] = (uint8_t)(test_next_random(&seed) >> 56);
        EXPECT(kiln_importer_pick(noise, sizeof noise) == NULL);
        if (round == 0) expect_unknown(noise, sizeof noise, "it starts with");
    }
    expect_unknown(NULL, 0, "the file is empty");
}

int main(void)
{
    onnx_named_bin();
    unknown_formats();
    return unit_finish("test_importer");
}
