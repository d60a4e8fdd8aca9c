/* test_gemm_blocking.c — the integer helpers of core/check.h and the GEMM family's blocking
 * constants (backends/cpu/kernels/gemm-blocking.h), as the driver and Strassen use them.
 *
 * Tests core/check.h and backends/cpu/kernels (f32-gemm-driver.c, f32-gemm-strassen.c): the
 * helpers give the counts and extents the sizing code relies on; the K-block cap is the one both
 * the driver's K blocks and Strassen's half K obey; workspaces are whole cache lines. Exit
 * status: 0 when everything passed.
 */
#include "backends/cpu/kernels/gemm-blocking.h"
#include "backends/cpu/kernels/kernel_kit.h"
#include "unit_expect.h"

static void test_helpers(void)
{
    unit_section("integer helpers");
    EXPECT(kiln_min_i64(3, -2) == -2 && kiln_min_i64(-2, 3) == -2 && kiln_min_i64(INT64_MAX, 5) == 5);
    EXPECT(kiln_max_i64(3, -2) == 3 && kiln_max_i64(-2, 3) == 3 && kiln_max_i64(INT64_MIN, 5) == 5);
    EXPECT(kiln_ceil_div_i64(0, 4) == 0 && kiln_ceil_div_i64(1, 4) == 1 && kiln_ceil_div_i64(4, 4) == 1);
    EXPECT(kiln_ceil_div_i64(5, 4) == 2 && kiln_ceil_div_i64(1000, 1) == 1000);
    EXPECT(kiln_round_up_i64(0, 16) == 0 && kiln_round_up_i64(1, 16) == 16 && kiln_round_up_i64(16, 16) == 16);
    EXPECT(kiln_round_up_i64(17, 16) == 32 && kiln_round_up_i64(13, 6) == 18 && kiln_round_up_i64(7, 1) == 7);
    EXPECT(kiln_gemm_ws_align(0) == 0 && kiln_gemm_ws_align(1) == KILN_GEMM_WS_ALIGN);
    EXPECT(kiln_gemm_ws_align(KILN_GEMM_WS_ALIGN) == KILN_GEMM_WS_ALIGN && kiln_gemm_ws_align(65) == 128);
}

static void test_blocking(void)
{
    unit_section("GEMM blocking constants");
    /* The K block of every tile width lies within the caps; narrow tiles reach the longest. */
    for (uint32_t nr = 1; nr <= 1024; nr *= 2) {
        int64_t kc = kiln_cpu_gemm_kc(nr);
        EXPECT(kc >= KILN_GEMM_KC_MIN && kc <= KILN_GEMM_KC_MAX);
    }
    EXPECT(kiln_cpu_gemm_kc(16) == KILN_GEMM_KC_MAX && kiln_cpu_gemm_kc(32) == KILN_GEMM_KC_MAX);
    EXPECT(kiln_cpu_gemm_kc(1024) == KILN_GEMM_KC_MIN);
    /* Strassen takes a half K only while it fits one K block of the driver. */
    int64_t big = 4 * KILN_GEMM_KC_MAX;
    EXPECT(kiln_cpu_gemm_strassen_pays(big, big, 2 * KILN_GEMM_KC_MAX));
    EXPECT(!kiln_cpu_gemm_strassen_pays(big, big, 2 * KILN_GEMM_KC_MAX + 2));
    /* Workspaces are whole cache lines, and a B packed at run time is buffered NC columns at
       most: a wide N needs no more than an N of KILN_GEMM_NC_MAX. */
    size_t ws = kiln_cpu_gemm_workspace(6, 16, 100, 4 * KILN_GEMM_NC_MAX, 300, false, false, 256 << 10);
    EXPECT(ws > 0 && ws % KILN_GEMM_WS_ALIGN == 0);
    EXPECT(ws == kiln_cpu_gemm_workspace(6, 16, 100, KILN_GEMM_NC_MAX, 300, false, false, 256 << 10));
    EXPECT(ws > kiln_cpu_gemm_workspace(6, 16, 100, KILN_GEMM_NC_MAX / 2, 300, false, false, 256 << 10));
    size_t sws = kiln_cpu_gemm_strassen_workspace(12, 32, 2048, 2048, 1 << 20);
    EXPECT(sws > 0 && sws % KILN_GEMM_WS_ALIGN == 0);
}

int main(void)
{
    test_helpers();
    test_blocking();
    return unit_finish("test_gemm_blocking");
}
