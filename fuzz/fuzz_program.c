/* fuzz_program.c — libFuzzer target for program files: the format reader, the load-time plan
 * verifier and the executor.
 *
 * Layer: fuzz (public API only). Arbitrary bytes go to kiln_program_open_memory; a program that
 * opens gets a module, and every method is loaded, fed zero-filled inputs of its declared
 * shapes, executed twice (the second run frees the first run's dynamic buffers) and every
 * output byte is read, so an output view that points outside its buffer is caught by ASan.
 * Every metadata value is read in full. Invariants checked beyond "no crash": statuses come
 * from KILN_STATUS_MAP, every metadata key reads back, a stale handle is reported as such, and
 * the module allocator has nothing live after kiln_module_destroy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kiln/kiln.h"

/* Live bytes a module may hold; also bounds kernel work (see fuzz_common.h). */
#define PROGRAM_BUDGET ((size_t)1 << 20)
/* Programs may hold thousands of methods; a few exercise every path. */
#define MAX_METHODS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all_bytes(const kiln_tensor *t)
{
    size_t bytes; /* block-quantized outputs too: whole blocks per row */
    if (kiln_tensor_size(t, &bytes) != KILN_OK) {
        fprintf(stderr, "fuzz: output with invalid shape or dtype %d\n", (int)t->dtype);
        abort();
    }
    if (bytes == 0) return;
    if (!t->data) {
        fprintf(stderr, "fuzz: output of %zu bytes without data\n", bytes);
        abort();
    }
    const volatile uint8_t *p = t->data;
    uint8_t sum = 0;
    for (size_t i = 0; i < bytes; i++) sum ^= p[i];
    (void)sum;
}

/* Sets every input to zeros of its declared shape; false when one cannot be set. */
static int set_zero_inputs(kiln_method *h)
{
    size_t n = kiln_method_input_count(h);
    for (size_t i = 0; i < n; i++) {
        kiln_tensor t;
        kiln_status st = kiln_method_input_info(h, i, &t);
        fuzz_check_status(st, "kiln_method_input_info");
        if (st != KILN_OK) return 0;
        size_t bytes;
        if (kiln_tensor_size(&t, &bytes) != KILN_OK || bytes > PROGRAM_BUDGET) return 0;
        t.data = calloc(1, bytes ? bytes : 1);
        if (!t.data) return 0;
        st = kiln_method_set_input(h, i, &t);
        free(t.data);
        fuzz_check_status(st, "kiln_method_set_input");
        if (st != KILN_OK) return 0;
    }
    return 1;
}

static void run_method(kiln_module *m, const char *name)
{
    kiln_method *h;
    kiln_status st = kiln_method_load(m, name, &h);
    fuzz_check_status(st, "kiln_method_load");
    if (st != KILN_OK) return;
    for (size_t i = 0; i < kiln_method_output_count(h); i++) {
        kiln_tensor info;
        fuzz_check_status(kiln_method_output_info(h, i, &info), "kiln_method_output_info");
        (void)kiln_method_output_name(h, i);
    }
    if (set_zero_inputs(h)) {
        for (int run = 0; run < 2; run++) {
            st = kiln_method_execute(h);
            fuzz_check_status(st, "kiln_method_execute");
            if (st != KILN_OK) break;
            for (size_t i = 0; i < kiln_method_output_count(h); i++) {
                kiln_tensor out;
                st = kiln_method_get_output(h, i, &out);
                if (st != KILN_OK) {
                    fprintf(stderr, "fuzz: get_output %zu after a successful execute: %s\n", i, kiln_status_name(st));
                    abort();
                }
                read_all_bytes(&out);
            }
        }
    }
    kiln_method_unload(h);
    /* The handle stays valid memory until the module goes, and must say it is stale. */
    if (kiln_method_execute(h) != KILN_ERROR_STALE_HANDLE) {
        fprintf(stderr, "fuzz: execute on an unloaded method did not report a stale handle\n");
        abort();
    }
}

/* Every metadata key is found by kiln_program_metadata_get (keys are unique) and every value
   byte is read, so a value pointing outside its copy is caught by ASan. */
static void read_metadata(kiln_program *p)
{
    size_t n = kiln_program_metadata_count(p);
    for (size_t i = 0; i < n; i++) {
        const char *key = kiln_program_metadata_key(p, i);
        const void *data;
        size_t size;
        if (!key || !key[0] || kiln_program_metadata_get(p, key, &data, &size) != KILN_OK) {
            fprintf(stderr, "fuzz: metadata key %zu of %zu cannot be read back\n", i, n);
            abort();
        }
        const volatile uint8_t *b = data;
        uint8_t sum = 0;
        for (size_t k = 0; k < size; k++) sum ^= b[k];
        (void)sum;
    }
    if (kiln_program_metadata_key(p, n) != NULL) {
        fprintf(stderr, "fuzz: a metadata key past the count\n");
        abort();
    }
}

static void exercise_program(kiln_program *p)
{
    read_metadata(p);
    fuzz_budget budget;
    kiln_allocator a = fuzz_budget_allocator(&budget, PROGRAM_BUDGET);
    kiln_module_options opt = {sizeof opt, &a, NULL, 1, NULL};
    kiln_module *m;
    kiln_status st = kiln_module_create(p, &opt, &m);
    fuzz_check_status(st, "kiln_module_create");
    if (st == KILN_OK) {
        size_t n = kiln_program_method_count(p);
        for (size_t i = 0; i < n && i < MAX_METHODS; i++) {
            const char *name = kiln_program_method_name(p, i);
            if (name) run_method(m, name);
        }
        kiln_module_destroy(m);
    }
    fuzz_budget_check_clean(&budget, "module");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reader requires 8-byte aligned bytes (it refuses others with INVALID_ARGUMENT) and
       fuzzers hand over arbitrary addresses, so copy into 64-byte aligned storage of exactly
       `size` bytes: ASan then flags a read even one byte past the end. */
    void *storage = NULL;
    if (posix_memalign(&storage, 64, size ? size : 1) != 0) return 0;
    uint8_t *copy = storage;
    if (size) memcpy(copy, data, size);
    kiln_program *p;
    kiln_status st = kiln_program_open_memory(copy, size, &p);
    fuzz_check_status(st, "kiln_program_open_memory");
    if (st == KILN_OK) {
        exercise_program(p);
        kiln_program_close(p);
    }
    free(copy);
    return 0;
}
