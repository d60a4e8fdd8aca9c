/* onnx_case.c — ONNX backend test cases on disk (see onnx_case.h). */
#include "onnx_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/onnx/onnx_tensor.h"
#include "core/alloc.h"

static size_t count_files(const char *dir, const char *prefix)
{
    char path[4096];
    size_t n = 0;
    for (;; n++) {
        snprintf(path, sizeof path, "%s/%s%zu.pb", dir, prefix, n);
        FILE *f = fopen(path, "rb");
        if (!f) return n;
        fclose(f);
    }
}

static bool load_tensors(const char *dir, const char *prefix, kiln_tensor *t, size_t n, char *why, size_t why_size)
{
    char path[4096];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s%zu.pb", dir, prefix, i);
        kiln_status st = kiln_onnx_read_tensor_file(path, kiln_allocator_default(), &t[i]);
        if (st != KILN_OK) {
            snprintf(why, why_size, "%s%zu.pb: %s", prefix, i, kiln_status_str(st));
            return false;
        }
    }
    return true;
}

bool onnx_case_load(onnx_case *c, const char *dir, char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    char path[4096], data_dir[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data_dir, sizeof data_dir, "%s/test_data_set_0", dir);
    if (kiln_read_file(path, kiln_allocator_default(), &c->model, &c->model_size, NULL) != KILN_OK) {
        snprintf(why, why_size, "cannot read %s", path);
        return false;
    }
    c->n_inputs = count_files(data_dir, "input_");
    c->n_expected = count_files(data_dir, "output_");
    if (c->n_inputs > ONNX_CASE_MAX_IO || c->n_expected > ONNX_CASE_MAX_IO) {
        snprintf(why, why_size, "too many inputs or outputs");
        return false;
    }
    if (!load_tensors(data_dir, "input_", c->inputs, c->n_inputs, why, why_size)) return false;
    if (!load_tensors(data_dir, "output_", c->expected, c->n_expected, why, why_size)) return false;
    for (size_t i = 0; i < c->n_inputs; i++) {
        c->shapes[i].rank = c->inputs[i].rank;
        memcpy(c->shapes[i].dims, c->inputs[i].shape, sizeof c->shapes[i].dims);
    }
    return true;
}

void onnx_case_free(onnx_case *c)
{
    const kiln_allocator *a = kiln_allocator_default();
    for (size_t i = 0; i < ONNX_CASE_MAX_IO; i++) {
        kiln_free(a, c->inputs[i].data);
        kiln_free(a, c->expected[i].data);
    }
    kiln_free(a, c->model);
    memset(c, 0, sizeof *c);
}

char **onnx_case_list_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 64, count = 0;
    char **list = malloc(cap * sizeof *list), line[1024];
    while (list && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        if (count + 1 == cap) {
            char **bigger = realloc(list, (cap *= 2) * sizeof *list);
            if (!bigger) break;
            list = bigger;
        }
        list[count++] = strdup(line);
    }
    fclose(f);
    if (list) list[count] = NULL;
    *n = count;
    return list;
}

void onnx_case_list_free(char **list)
{
    for (size_t i = 0; list && list[i]; i++) free(list[i]);
    free(list);
}

bool onnx_case_list_contains(char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0) return true;
    return false;
}
