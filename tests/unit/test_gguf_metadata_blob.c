/* test_gguf_metadata_blob.c — kiln_gguf_metadata_blob (src/format/gguf/gguf_writer.h): the blob
 * of a GGUF file opens with kiln_gguf_open as a version 3 file with no tensors and the very
 * same key/values (keys, types, values, nested arrays, in file order); allocation failures give
 * KILN_ERROR_OUT_OF_MEMORY and leak nothing.
 *
 * Layer: tests (format). Sources: the builder's file with a key of every type (version 2 and
 * 3), and the committed trained model models/llm/fortunes-llama-f32.gguf (a real tokenizer's
 * key/values: large string and float arrays), found next to this source file.
 */
#include <libgen.h>
#include <string.h>

#include "core/alloc.h"
#include "format/gguf/gguf_reader.h"
#include "format/gguf/gguf_writer.h"
#include "gguf_builder.h"
#include "unit_expect.h"

/* Whether a and b are the same value: type, element type, count and bytes, recursively. */
static bool same_value(const kiln_gguf_value *a, const kiln_gguf_value *b)
{
    if (a->type != b->type) return false;
    if (a->type == KILN_GGUF_TYPE_STRING) return a->n == b->n && memcmp(a->data, b->data, a->n) == 0;
    if (a->type != KILN_GGUF_TYPE_ARRAY) return memcmp(a->data, b->data, kiln_gguf_type_size(a->type)) == 0;
    if (a->elem_type != b->elem_type || a->n != b->n || !a->elems != !b->elems) return false;
    if (!a->elems) return a->n == 0 || memcmp(a->data, b->data, a->n * kiln_gguf_type_size(a->elem_type)) == 0;
    for (uint64_t i = 0; i < a->n; i++)
        if (!same_value(&a->elems[i], &b->elems[i])) return false;
    return true;
}

/* Opens bytes, writes its blob, opens the blob and compares every key/value. */
static void check_round_trip(const void *bytes, size_t size, size_t want_kv)
{
    char msg[KILN_GGUF_MESSAGE_SIZE];
    kiln_gguf *src = NULL, *back = NULL;
    REQUIRE(kiln_gguf_open(bytes, size, NULL, &src, msg, sizeof msg) == KILN_OK);
    EXPECT(kiln_gguf_n_kv(src) == want_kv);
    unit_alloc u;
    kiln_allocator a = unit_alloc_make(&u);
    void *blob = NULL;
    size_t blob_size = 0;
    EXPECT_STATUS(kiln_gguf_metadata_blob(src, &a, &blob, &blob_size), KILN_OK);
    REQUIRE(blob);
    EXPECT((uintptr_t)blob % 64 == 0);
    EXPECT(blob_size < size); /* the tensors are gone */
    EXPECT_STATUS(kiln_gguf_open(blob, blob_size, NULL, &back, msg, sizeof msg), KILN_OK);
    if (back) {
        EXPECT(kiln_gguf_version(back) == 3);
        EXPECT(kiln_gguf_n_tensors(back) == 0);
        EXPECT(kiln_gguf_alignment(back) == kiln_gguf_alignment(src));
        EXPECT(kiln_gguf_n_kv(back) == kiln_gguf_n_kv(src));
        size_t same = 0;
        for (size_t i = 0; i < kiln_gguf_n_kv(src) && i < kiln_gguf_n_kv(back); i++) {
            const kiln_gguf_kv *x = kiln_gguf_kv_at(src, i), *y = kiln_gguf_kv_at(back, i);
            same += x->key_size == y->key_size && memcmp(x->key, y->key, x->key_size) == 0 &&
                    same_value(&x->value, &y->value);
        }
        EXPECT(same == kiln_gguf_n_kv(src));
    }
    /* The blob is a fixed point: written again from itself, byte for byte the same. */
    void *again = NULL;
    size_t again_size = 0;
    if (back) EXPECT_STATUS(kiln_gguf_metadata_blob(back, NULL, &again, &again_size), KILN_OK);
    EXPECT(again && again_size == blob_size && memcmp(again, blob, blob_size) == 0);
    kiln_free(kiln_allocator_default(), again);
    kiln_gguf_destroy(back);
    kiln_free(&a, blob);
    EXPECT(u.live_blocks == 0);

    /* Every allocation failing in turn (there is one) gives OUT_OF_MEMORY, *out NULL, no leak. */
    for (size_t n = 1; n <= 2; n++) {
        kiln_allocator f = unit_alloc_make(&u);
        u.fail_at = n;
        void *out = (void *)1;
        size_t out_size = 7;
        kiln_status st = kiln_gguf_metadata_blob(src, &f, &out, &out_size);
        EXPECT(n == 1 ? st == KILN_ERROR_OUT_OF_MEMORY : st == KILN_OK);
        if (st != KILN_OK) EXPECT(out == NULL && out_size == 0);
        else kiln_free(&f, out);
        EXPECT(u.live_blocks == 0);
    }
    kiln_gguf_destroy(src);
}

int main(void)
{
    unit_section("blob of the builder's file with every value type, version 3 and version 2");
    gguf_builder b = {0};
    gb_build_every_type(&b, 3, 64);
    check_round_trip(b.data, b.size, 18);
    gb_free(&b);
    gb_build_every_type(&b, 2, 0);
    check_round_trip(b.data, b.size, 17);
    gb_free(&b);

    unit_section("blob of models/llm/fortunes-llama-f32.gguf");
    char here[1024], path[1200];
    snprintf(here, sizeof here, "%s", __FILE__);
    snprintf(path, sizeof path, "%s/../../models/llm/fortunes-llama-f32.gguf", dirname(here));
    size_t size = 0;
    uint8_t *model = unit_read_file(path, &size);
    EXPECT(model != NULL);
    if (model) {
        kiln_gguf *g = NULL;
        REQUIRE(kiln_gguf_open(model, size, NULL, &g, NULL, 0) == KILN_OK);
        size_t n_kv = kiln_gguf_n_kv(g);
        EXPECT(n_kv > 10 && kiln_gguf_find_key(g, "tokenizer.ggml.tokens"));
        kiln_gguf_destroy(g);
        check_round_trip(model, size, n_kv);
        free(model);
    }

    unit_section("NULL arguments");
    void *out = (void *)1;
    size_t out_size = 1;
    EXPECT_STATUS(kiln_gguf_metadata_blob(NULL, NULL, &out, &out_size), KILN_ERROR_INVALID_ARGUMENT);
    EXPECT(out == NULL && out_size == 0);
    EXPECT_STATUS(kiln_gguf_metadata_blob(NULL, NULL, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    return unit_finish("test_gguf_metadata_blob");
}
