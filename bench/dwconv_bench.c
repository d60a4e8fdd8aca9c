/* dwconv_bench.c — the depthwise convolutions of MobileNetV2, MobileNetV3-Large and
 * EfficientNet-B0 (batch 1, f32, their fused activations) through the cpu backend's CONV2D step
 * on one thread: nanoseconds per layer (the minimum over repeats) and per model.
 *
 * Layer: bench. Built against this tree's libkiln; bench/dwconv_ab.sh also builds it against
 * another tree's libkiln and runs the two alternately, which is how a kernel change is compared
 * with its base (timings on a shared machine are noisy, ratios of interleaved minima are not).
 * Usage: kiln_dwconv_bench [TARGET] [REPEATS]; TARGET defaults to the best one the CPU runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/targets.h"

typedef struct dw_layer {
    const char *model;
    int64_t C, H, K, stride;
    uint32_t act;
} dw_layer;

/* Each distinct layer once with its count in the model, as the ONNX exports in
   build/bench-work/exported/ have them (square inputs, pad = K / 2). */
typedef struct dw_use {
    dw_layer l;
    int count;
} dw_use;

static const dw_use layers[] = {
    {{"mobilenet_v2", 32, 112, 3, 1, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 96, 112, 3, 2, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 144, 56, 3, 1, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 144, 56, 3, 2, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 192, 28, 3, 1, KILN_CPU_ACT_CLIP}, 2},
    {{"mobilenet_v2", 192, 28, 3, 2, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 384, 14, 3, 1, KILN_CPU_ACT_CLIP}, 4},
    {{"mobilenet_v2", 576, 14, 3, 1, KILN_CPU_ACT_CLIP}, 2},
    {{"mobilenet_v2", 576, 14, 3, 2, KILN_CPU_ACT_CLIP}, 1},
    {{"mobilenet_v2", 960, 7, 3, 1, KILN_CPU_ACT_CLIP}, 3},
    {{"mobilenet_v3_large", 16, 112, 3, 1, KILN_CPU_ACT_RELU}, 1},
    {{"mobilenet_v3_large", 64, 112, 3, 2, KILN_CPU_ACT_RELU}, 1},
    {{"mobilenet_v3_large", 72, 56, 3, 1, KILN_CPU_ACT_RELU}, 1},
    {{"mobilenet_v3_large", 72, 56, 5, 2, KILN_CPU_ACT_RELU}, 1},
    {{"mobilenet_v3_large", 120, 28, 5, 1, KILN_CPU_ACT_RELU}, 2},
    {{"mobilenet_v3_large", 240, 28, 3, 2, KILN_CPU_ACT_HARD_SWISH}, 1},
    {{"mobilenet_v3_large", 200, 14, 3, 1, KILN_CPU_ACT_HARD_SWISH}, 1},
    {{"mobilenet_v3_large", 184, 14, 3, 1, KILN_CPU_ACT_HARD_SWISH}, 2},
    {{"mobilenet_v3_large", 480, 14, 3, 1, KILN_CPU_ACT_HARD_SWISH}, 1},
    {{"mobilenet_v3_large", 672, 14, 3, 1, KILN_CPU_ACT_HARD_SWISH}, 1},
    {{"mobilenet_v3_large", 672, 14, 5, 2, KILN_CPU_ACT_HARD_SWISH}, 1},
    {{"mobilenet_v3_large", 960, 7, 5, 1, KILN_CPU_ACT_HARD_SWISH}, 2},
    {{"efficientnet_b0", 32, 112, 3, 1, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 96, 112, 3, 2, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 144, 56, 3, 1, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 144, 56, 5, 2, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 240, 28, 5, 1, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 240, 28, 3, 2, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 480, 14, 3, 1, KILN_CPU_ACT_SILU}, 2},
    {{"efficientnet_b0", 480, 14, 5, 1, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 672, 14, 5, 1, KILN_CPU_ACT_SILU}, 2},
    {{"efficientnet_b0", 672, 14, 5, 2, KILN_CPU_ACT_SILU}, 1},
    {{"efficientnet_b0", 1152, 7, 5, 1, KILN_CPU_ACT_SILU}, 3},
    {{"efficientnet_b0", 1152, 7, 3, 1, KILN_CPU_ACT_SILU}, 1},
};
#define N_LAYERS (sizeof layers / sizeof layers[0])

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static float *filled(int64_t n, unsigned seed)
{
    float *v = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((seed >> 9) & 0xFFFF) / 32768.0f - 1.0f;
    }
    return v;
}

static void set_nchw(kiln_tensor *t, int64_t C, int64_t H, int64_t W, void *data)
{
    memset(t, 0, sizeof *t);
    t->dtype = KILN_DTYPE_F32;
    t->rank = 4;
    t->shape[0] = 1;
    t->shape[1] = C;
    t->shape[2] = H;
    t->shape[3] = W;
    t->data = data;
}

/* Minimum nanoseconds of one step of layer l over `repeats` runs. */
static double time_layer(const kiln_cpu_kernels *k, const dw_layer *l, int repeats)
{
    int64_t pad = l->K / 2, OH = (l->H + 2 * pad - l->K) / l->stride + 1;
    kiln_cpu_conv_params p = {.N = 1, .C = l->C, .H = l->H, .W = l->H, .M = l->C, .OH = OH, .OW = OH, .KH = l->K,
                              .KW = l->K, .stride_h = l->stride, .stride_w = l->stride, .pad_top = pad,
                              .pad_left = pad, .dil_h = 1, .dil_w = 1, .group = l->C, .has_bias = 1, .depthwise = 1,
                              .act = {l->act, 0.0f, 6.0f}};
    float *x = filled(l->C * l->H * l->H, 1), *w = filled(l->C * l->K * l->K, 2), *b = filled(l->C, 3);
    float *y = malloc((size_t)(l->C * OH * OH) * sizeof(float));
    kiln_tensor tx, tw, tb, ty;
    set_nchw(&tx, l->C, l->H, l->H, x);
    set_nchw(&tw, l->C, 1, l->K * l->K, w);
    memset(&tb, 0, sizeof tb);
    tb.dtype = KILN_DTYPE_F32;
    tb.rank = 1;
    tb.shape[0] = l->C;
    tb.data = b;
    set_nchw(&ty, l->C, OH, OH, y);
    const kiln_tensor *in[3] = {&tx, &tw, &tb};
    kiln_tensor *out[1] = {&ty};
    kiln_cpu_exec exec = {.n_threads = 1};
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        double t0 = now_ns();
        kiln_status st = k->ops[KILN_CPU_OP_CONV2D](&p, in, out, &exec);
        double dt = now_ns() - t0;
        if (st != KILN_OK) {
            fprintf(stderr, "step failed: %d\n", (int)st);
            exit(1);
        }
        if (dt < best) best = dt;
    }
    free(x);
    free(w);
    free(b);
    free(y);
    return best;
}

int main(int argc, char **argv)
{
    const kiln_cpu_target *t = argc > 1 ? kiln_cpu_target_find(argv[1]) : kiln_cpu_target_best();
    int repeats = argc > 2 ? atoi(argv[2]) : 50;
    if (!t || !kiln_cpu_target_runnable(t)) {
        fprintf(stderr, "target %s not runnable here\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    const char *model = NULL;
    double total = 0.0;
    for (size_t i = 0; i < N_LAYERS; i++) {
        const dw_layer *l = &layers[i].l;
        if (model && strcmp(model, l->model) != 0) {
            printf("total %s %.0f\n", model, total);
            total = 0.0;
        }
        model = l->model;
        double ns = time_layer(t->kernels, l, repeats);
        total += ns * layers[i].count;
        printf("layer %s C=%lld %lldx%lld k=%lld s=%lld act=%u %.0f\n", l->model, (long long)l->C, (long long)l->H,
               (long long)l->H, (long long)l->K, (long long)l->stride, l->act, ns);
    }
    printf("total %s %.0f\n", model, total);
    return 0;
}
