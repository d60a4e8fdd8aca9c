/* onnx_case.h — loading one ONNX backend test case (model.onnx + test_data_set_0 .pb files) and
 * iterating over case lists. Test support code shared by the conformance test and kiln_ref_run.
 */
#ifndef KILN_TESTS_ONNX_CASE_H
#define KILN_TESTS_ONNX_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kiln/compiler.h"
#include "kiln/kiln.h"

#define ONNX_CASE_MAX_IO 64
#define ONNX_CASE_DEFAULT_ROOT "/usr/share/libonnx-testdata/data"

typedef struct onnx_case {
    uint8_t *model;                 /* (model_size) model.onnx bytes */
    size_t model_size;
    kiln_tensor inputs[ONNX_CASE_MAX_IO];
    size_t n_inputs;
    kiln_tensor expected[ONNX_CASE_MAX_IO];
    size_t n_expected;
    kiln_input_shape shapes[ONNX_CASE_MAX_IO]; /* positional shapes of the inputs */
} onnx_case;

/* Load the case in dir. false with a reason in why. */
bool onnx_case_load(onnx_case *c, const char *dir, char *why, size_t why_size);
void onnx_case_free(onnx_case *c);

/* Read a case list (one "kind/name" per line, '#' comments) into a NULL-terminated array of
   strings (free with onnx_case_list_free); NULL if the file cannot be read. */
char **onnx_case_list_read(const char *path, size_t *n);
void onnx_case_list_free(char **list);
bool onnx_case_list_contains(char *const *list, const char *name);

#endif
