/* vision_nms.c — NonMaxSuppression (listed in kiln_kernels_vision, vision.c).
 * Layer: kernels/portable.
 *
 * Per batch and class, candidates whose score is above score_threshold are visited in
 * descending score (ties: lower box index first); a candidate is selected unless its IoU with
 * a box selected before it exceeds iou_threshold, until max_output_boxes_per_class are chosen.
 * The output's row count depends on the values, so infer() runs the same selection to count
 * it. infer() has no memory, so the selection needs none beyond a bitmap of selected boxes on
 * the stack: the next candidate is found by a scan (O(N) per step), which bounds the boxes per
 * image to NMS_MAX_BOXES (refused as KILN_ERROR_NOT_SUPPORTED beyond).
 */
#include <math.h>
#include <string.h>

#include "core/check.h"
#include "kernels/portable/shape_common.h"
#include "kernels/portable/vision_ops.h"

#define IN(i) kiln_shape_in(node, in, (i))
#define OUT(j) kiln_shape_out(node, out, (j))

#define NMS_MAX_BOXES (1 << 17) /* a 16 KiB bitmap */

typedef struct nms_params {
    int64_t batches, classes, boxes, max_per_class;
    float iou_threshold, score_threshold;
    bool center_point;
    bool has_score_threshold;
} nms_params;

static kiln_status nms_params_make(const kiln_node *node, const kiln_tensor *const *in, nms_params *p)
{
    const kiln_tensor *boxes = IN(0), *scores = IN(1), *max_out = IN(2), *iou = IN(3), *score = IN(4);
    KILN_CHECK(boxes && scores, KILN_ERROR_INVALID_ARGUMENT);
    KILN_CHECK(boxes->dtype == KILN_DTYPE_F32 && scores->dtype == KILN_DTYPE_F32, KILN_ERROR_DTYPE_MISMATCH);
    KILN_CHECK(boxes->rank == 3 && boxes->shape[2] == 4 && scores->rank == 3, KILN_ERROR_SHAPE_MISMATCH);
    KILN_CHECK(scores->shape[0] == boxes->shape[0] && scores->shape[2] == boxes->shape[1], KILN_ERROR_SHAPE_MISMATCH);
    *p = (nms_params){.batches = boxes->shape[0], .classes = scores->shape[1], .boxes = boxes->shape[1]};
    int64_t center = kiln_node_attr_int(node, "center_point_box", 0);
    KILN_CHECK(center == 0 || center == 1, KILN_ERROR_INVALID_ARGUMENT);
    p->center_point = center == 1;
    KILN_CHECK(p->boxes <= NMS_MAX_BOXES, KILN_ERROR_NOT_SUPPORTED);
    const kiln_tensor *scalars[3] = {max_out, iou, score};
    for (int k = 0; k < 3; k++) {
        const kiln_tensor *t = scalars[k];
        if (!t || kiln_numel(t) == 0) continue;
        KILN_CHECK(kiln_numel(t) == 1 && t->rank <= 1, KILN_ERROR_SHAPE_MISMATCH);
        KILN_CHECK(k == 0 ? t->dtype == KILN_DTYPE_I64 : t->dtype == KILN_DTYPE_F32, KILN_ERROR_DTYPE_MISMATCH);
    }
    KILN_CHECK(boxes->data && scores->data, KILN_ERROR_SHAPE_UNKNOWN);
    for (int k = 0; k < 3; k++) KILN_CHECK(!scalars[k] || scalars[k]->data, KILN_ERROR_SHAPE_UNKNOWN);
    if (max_out && kiln_numel(max_out)) p->max_per_class = ((const int64_t *)max_out->data)[0];
    if (iou && kiln_numel(iou)) p->iou_threshold = ((const float *)iou->data)[0];
    if (score && kiln_numel(score)) {
        p->has_score_threshold = true;
        p->score_threshold = ((const float *)score->data)[0];
    }
    KILN_CHECK(p->iou_threshold >= 0 && p->iou_threshold <= 1, KILN_ERROR_INVALID_VALUE);
    if (p->max_per_class < 0) p->max_per_class = 0;
    return KILN_OK;
}

/* Corners (x1, y1, x2, y2) with x1 <= x2, y1 <= y2 of a box as stored. */
static void box_corners(const float *b, bool center_point, float c[4])
{
    if (center_point) {
        c[0] = b[0] - b[2] / 2, c[1] = b[1] - b[3] / 2, c[2] = b[0] + b[2] / 2, c[3] = b[1] + b[3] / 2;
        return;
    }
    /* [y1, x1, y2, x2], either corner pair first */
    c[0] = fminf(b[1], b[3]), c[2] = fmaxf(b[1], b[3]), c[1] = fminf(b[0], b[2]), c[3] = fmaxf(b[0], b[2]);
}

static bool overlaps(const float *a, const float *b, const nms_params *p)
{
    float ca[4], cb[4];
    box_corners(a, p->center_point, ca);
    box_corners(b, p->center_point, cb);
    float area_a = (ca[2] - ca[0]) * (ca[3] - ca[1]), area_b = (cb[2] - cb[0]) * (cb[3] - cb[1]);
    if (area_a <= 0 || area_b <= 0) return false;
    float w = fminf(ca[2], cb[2]) - fmaxf(ca[0], cb[0]), h = fminf(ca[3], cb[3]) - fmaxf(ca[1], cb[1]);
    if (w <= 0 || h <= 0) return false;
    float inter = w * h;
    return inter / (area_a + area_b - inter) > p->iou_threshold;
}

/* Whether (score a, index ia) comes after (score b, index ib) in the visiting order. */
static bool after(float a, int64_t ia, float b, int64_t ib)
{
    return a < b || (a == b && ia > ib);
}

/* Selects for one (batch, class); writes rows to dst (NULL: only counts) and returns the count. */
static int64_t nms_select(const nms_params *p, const float *boxes, const float *scores, int64_t batch, int64_t cls,
                          int64_t *dst)
{
    uint64_t selected[NMS_MAX_BOXES / 64];
    memset(selected, 0, (size_t)((p->boxes + 63) / 64) * sizeof selected[0]);
    int64_t n_selected = 0, prev = -1;
    float prev_score = INFINITY;
    while (n_selected < p->max_per_class) {
        int64_t next = -1;
        for (int64_t i = 0; i < p->boxes; i++) {
            float s = scores[i];
            if (p->has_score_threshold && !(s > p->score_threshold)) continue;
            if (isnan(s) || (prev >= 0 && !after(s, i, prev_score, prev))) continue;
            if (next < 0 || after(scores[next], next, s, i)) next = i;
        }
        if (next < 0) break;
        prev = next;
        prev_score = scores[next];
        bool keep = true;
        for (int64_t s = 0; s < p->boxes && keep; s++)
            if (selected[s / 64] >> (s % 64) & 1) keep = !overlaps(boxes + 4 * next, boxes + 4 * s, p);
        if (!keep) continue;
        selected[next / 64] |= (uint64_t)1 << (next % 64);
        if (dst) {
            dst[3 * n_selected] = batch;
            dst[3 * n_selected + 1] = cls;
            dst[3 * n_selected + 2] = next;
        }
        n_selected++;
    }
    return n_selected;
}

static int64_t nms_all(const nms_params *p, const kiln_tensor *boxes, const kiln_tensor *scores, int64_t *dst)
{
    int64_t total = 0;
    for (int64_t b = 0; b < p->batches; b++)
        for (int64_t c = 0; c < p->classes; c++)
            total += nms_select(p, (const float *)boxes->data + b * p->boxes * 4,
                                (const float *)scores->data + (b * p->classes + c) * p->boxes, b, c,
                                dst ? dst + 3 * total : NULL);
    return total;
}

kiln_status kiln_vision_nms_infer(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                  size_t *scratch_size)
{
    nms_params p;
    KILN_TRY(nms_params_make(node, in, &p));
    int64_t shape[2] = {nms_all(&p, IN(0), IN(1), NULL), 3};
    if (OUT(0)) kiln_tensor_set_shape(OUT(0), KILN_DTYPE_I64, 2, shape);
    return KILN_OK;
}

kiln_status kiln_vision_nms_run(const kiln_node *node, const kiln_tensor *const *in, kiln_tensor *const *out,
                                kiln_kernel_ctx *ctx)
{
    nms_params p;
    KILN_TRY(nms_params_make(node, in, &p));
    kiln_tensor *y = OUT(0);
    if (!y) return KILN_OK;
    KILN_CHECK(nms_all(&p, in[0], in[1], NULL) == y->shape[0], KILN_ERROR_INVALID_VALUE);
    nms_all(&p, in[0], in[1], y->data);
    return KILN_OK;
}
