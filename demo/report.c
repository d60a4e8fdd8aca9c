/* report.c — digits_report: scores the digits demo's logits against the true labels.
 *
 * Layer: demo (a small program on tools/io/npy.h). Usage:
 *   digits_report LOGITS.npy LABELS.npy [EXPECTED_LOGITS.npy]
 * LOGITS is f32 [N, C] (the model's output, C classes), LABELS is i64 or i32 [N] with values in
 * [0, C). Prints one line per image and the accuracy. With EXPECTED_LOGITS (f32 [N, C], e.g. the
 * demo's expected_logits.npy from PyTorch) it also prints the largest difference and fails when
 * it exceeds 1e-3, so the demo checks kiln's numbers, not only its argmax.
 * Exit status: 0 on success, 1 with one line on stderr for bad input, 2 for bad usage.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "io/npy.h"

#define REPORT_TOLERANCE 1e-3

/* Reads one .npy file or says why not on stderr. */
static int load(const char *path, kiln_tensor *t)
{
    char why[KILN_NPY_MESSAGE_SIZE];
    kiln_status st = kiln_npy_read(path, NULL, t, why, sizeof why);
    if (st != KILN_OK) {
        fprintf(stderr, "digits_report: %s: %s\n", path, why);
        return 0;
    }
    return 1;
}

/* Index of the largest of n values; the first one on ties (NaN never wins a comparison). */
static size_t argmax(const float *values, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        if (values[i] > values[best]) best = i;
    }
    return best;
}

static int64_t label_at(const kiln_tensor *labels, size_t i)
{
    if (labels->dtype == KILN_DTYPE_I64) return ((const int64_t *)labels->data)[i];
    return ((const int32_t *)labels->data)[i];
}

/* Checks dtypes and shapes; on a mismatch prints why and returns 0. */
static int check_inputs(const kiln_tensor *logits, const kiln_tensor *labels, const char *logits_path,
                        const char *labels_path)
{
    if (logits->dtype != KILN_DTYPE_F32 || logits->rank != 2 || logits->shape[1] < 1) {
        fprintf(stderr, "digits_report: %s: expected f32 logits of shape [N, classes], got %s rank %u\n",
                logits_path, kiln_dtype_name(logits->dtype), logits->rank);
        return 0;
    }
    if ((labels->dtype != KILN_DTYPE_I64 && labels->dtype != KILN_DTYPE_I32) || labels->rank != 1) {
        fprintf(stderr, "digits_report: %s: expected i64 or i32 labels of shape [N], got %s rank %u\n",
                labels_path, kiln_dtype_name(labels->dtype), labels->rank);
        return 0;
    }
    if (labels->shape[0] != logits->shape[0] || labels->shape[0] == 0) {
        fprintf(stderr, "digits_report: %s has %lld images but %s has %lld labels; need the same, > 0\n",
                logits_path, (long long)logits->shape[0], labels_path, (long long)labels->shape[0]);
        return 0;
    }
    for (size_t i = 0; i < (size_t)labels->shape[0]; i++) {
        int64_t label = label_at(labels, i);
        if (label < 0 || label >= logits->shape[1]) {
            fprintf(stderr, "digits_report: %s: label %lld of image %zu is not a class of [0, %lld)\n",
                    labels_path, (long long)label, i, (long long)logits->shape[1]);
            return 0;
        }
    }
    return 1;
}

static void print_report(const kiln_tensor *logits, const kiln_tensor *labels)
{
    size_t n = (size_t)logits->shape[0], classes = (size_t)logits->shape[1], correct = 0;
    int width = snprintf(NULL, 0, "%zu", n - 1);
    for (size_t i = 0; i < n; i++) {
        size_t predicted = argmax((const float *)logits->data + i * classes, classes);
        int64_t label = label_at(labels, i);
        int ok = (int64_t)predicted == label;
        correct += (size_t)ok;
        printf("image %*zu: predicted %zu, label %lld  %s\n", width, i, predicted, (long long)label,
               ok ? "ok" : "WRONG");
    }
    printf("accuracy: %zu/%zu (%.1f%%)\n", correct, n, 100.0 * (double)correct / (double)n);
}

/* Largest |logit - expected| into *worst (infinity when either holds a NaN). Returns 0, after
   saying why, when the shapes differ. */
static int compare_expected(const kiln_tensor *logits, const kiln_tensor *expected, const char *path,
                            double *worst)
{
    if (expected->dtype != KILN_DTYPE_F32 || expected->rank != 2 ||
        expected->shape[0] != logits->shape[0] || expected->shape[1] != logits->shape[1]) {
        fprintf(stderr, "digits_report: %s: expected f32 [%lld, %lld] like the logits\n", path,
                (long long)logits->shape[0], (long long)logits->shape[1]);
        return 0;
    }
    size_t count = (size_t)logits->shape[0] * (size_t)logits->shape[1];
    const float *got = logits->data, *want = expected->data;
    *worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        double diff = fabs((double)got[i] - (double)want[i]);
        if (isnan(diff)) diff = INFINITY;
        if (diff > *worst) *worst = diff;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: digits_report LOGITS.npy LABELS.npy [EXPECTED_LOGITS.npy]\n");
        return 2;
    }
    kiln_tensor logits = {0}, labels = {0}, expected = {0};
    int ok = load(argv[1], &logits) && load(argv[2], &labels) &&
             check_inputs(&logits, &labels, argv[1], argv[2]);
    if (ok) print_report(&logits, &labels);
    if (ok && argc == 4) {
        double worst = 0.0;
        ok = load(argv[3], &expected) && compare_expected(&logits, &expected, argv[3], &worst);
        if (ok) printf("max |logit - expected|: %.3g\n", worst);
        if (ok && !(worst <= REPORT_TOLERANCE)) {
            fprintf(stderr, "digits_report: logits differ from %s by %.3g (tolerance %g)\n", argv[3],
                    worst, REPORT_TOLERANCE);
            ok = 0;
        }
    }
    const kiln_allocator *a = kiln_allocator_default();
    kiln_free(a, logits.data);
    kiln_free(a, labels.data);
    kiln_free(a, expected.data);
    return ok ? 0 : 1;
}
