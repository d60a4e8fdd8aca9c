/* gemm-tile-store.h — TEMPLATE: the store of a GEMM tile of two vectors a row (the epilogue of
 * the kiln_cpu_gemm_tile contract, kernel_kit.h), written once against the vector layer;
 * include after the ISA's vector layer (vec-<isa>.h) and kernel_kit.h.
 *
 * Layer: backends/cpu/kernels (template). A row's accumulators lo (columns 0..VF_WIDTH-1) and hi
 * (the next VF_WIDTH) become c = alpha * acc + (accumulate ? c : scalar + beta * (row_bias[i] +
 * col_bias[j])), then ReLU when asked; c2 += alpha2 * acc is the second tile's (Strassen). The
 * ISA chooses how a row meets memory through `part`, a constant at each call: false, whole
 * vectors (the AVX2 kernel, which finishes a partial tile in a padded copy: its masked store is
 * microcoded on AMD cores); true, the first n0 and n1 lanes of the two vectors only (AVX-512's
 * masked loads and stores, so that nothing past n is read or written). Everything is inlined
 * into the microkernel, where the accumulators stay in registers.
 */
#ifndef KILN_BACKENDS_CPU_KERNELS_TEMPLATE_GEMM_TILE_STORE_H
#define KILN_BACKENDS_CPU_KERNELS_TEMPLATE_GEMM_TILE_STORE_H

/* What every row of one tile's store needs besides its accumulators. */
typedef struct gemm_tile_store {
    size_t n0, n1;                  /* lanes of the two vectors that exist (part only) */
    vf alpha, beta, add0, add1;     /* add: scalar + beta * col_bias, when not accumulating */
} gemm_tile_store;

static inline __attribute__((always_inline)) vf gemm_tile_load(const float *p, size_t n, bool part)
{
    return part ? vf_load_part(p, n) : vf_loadu(p);
}

static inline __attribute__((always_inline)) void gemm_tile_put(float *p, vf v, size_t n, bool part)
{
    if (part) vf_store_part(p, v, n);
    else vf_storeu(p, v);
}

/* The constants of a tile of n columns (n <= 2 * VF_WIDTH; all of them unless part), col_bias
   with as many readable floats when set. */
static inline __attribute__((always_inline)) gemm_tile_store gemm_tile_setup(size_t n, bool part,
                                                                             const kiln_cpu_gemm_tile *tile,
                                                                             const float *col_bias)
{
    gemm_tile_store k = {n < VF_WIDTH ? n : VF_WIDTH, n > VF_WIDTH ? n - VF_WIDTH : 0, vf_set1(tile->alpha),
                         vf_set1(tile->beta), vf_set1(tile->scalar), vf_set1(tile->scalar)};
    if (!tile->accumulate && col_bias) {
        k.add0 = vf_fmadd(k.beta, gemm_tile_load(col_bias, k.n0, part), k.add0);
        k.add1 = vf_fmadd(k.beta, gemm_tile_load(col_bias + VF_WIDTH, k.n1, part), k.add1);
    }
    return k;
}

/* Row i of the tile into `row` (that row of C). */
static inline __attribute__((always_inline)) void gemm_tile_row(vf lo, vf hi, float *row, size_t i, bool part,
                                                                const gemm_tile_store *k,
                                                                const kiln_cpu_gemm_tile *tile)
{
    vf v0, v1;
    if (tile->accumulate) {
        v0 = gemm_tile_load(row, k->n0, part);
        v1 = gemm_tile_load(row + VF_WIDTH, k->n1, part);
    } else if (tile->row_bias) {
        vf rb = vf_mul(k->beta, vf_set1(tile->row_bias[i]));
        v0 = vf_add(k->add0, rb);
        v1 = vf_add(k->add1, rb);
    } else {
        v0 = k->add0;
        v1 = k->add1;
    }
    v0 = vf_fmadd(k->alpha, lo, v0);
    v1 = vf_fmadd(k->alpha, hi, v1);
    if (tile->relu) {
        v0 = vf_max(v0, vf_zero());
        v1 = vf_max(v1, vf_zero());
    }
    gemm_tile_put(row, v0, k->n0, part);
    gemm_tile_put(row + VF_WIDTH, v1, k->n1, part);
}

/* row2 (a row of the second tile, c2) += alpha2 * the row's accumulators. */
static inline __attribute__((always_inline)) void gemm_tile_add_row(vf lo, vf hi, float *row2, vf alpha2, bool part,
                                                                    const gemm_tile_store *k)
{
    gemm_tile_put(row2, vf_fmadd(alpha2, lo, gemm_tile_load(row2, k->n0, part)), k->n0, part);
    gemm_tile_put(row2 + VF_WIDTH, vf_fmadd(alpha2, hi, gemm_tile_load(row2 + VF_WIDTH, k->n1, part)), k->n1, part);
}

#endif
