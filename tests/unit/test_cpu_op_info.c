/* test_cpu_op_info.c — the op vocabulary of the `cpu` backend is complete and consistent.
 *
 * Tests the X-macro lists of cpu_ops.h against the tables built from them and beside them:
 * every lowered op has its kiln_cpu_op_info row (a validator, the size of its own parameter
 * struct), a unique step name and a generic kernel; the activation and binary lists number
 * their kinds densely and give each ONNX name once, and the lowering's op table takes each of
 * those names as the step it makes; the CPU features and attribute types named by their lists
 * have unique names up to their derived counts. A row left out of kiln_cpu_op_info, a name
 * given twice or a list that skips a value fails here. Exit status: 0 when everything passed.
 */
#include <string.h>

#include "backends/cpu/aot/cpu_aot.h"
#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "core/cpu_features.h"
#include "kernels/portable/kernel.h"
#include "unit_expect.h"

/* Whether names[0 .. n) are all non-empty and pairwise different. */
static bool names_unique(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !names[i][0]) return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) return false;
    }
    return true;
}

/* The steps (bits of kiln_cpu_op) the lowering's op table gives an ONNX op, 0 when it has none. */
static uint32_t lowered_steps(const char *onnx_op)
{
    uint32_t steps = 0;
    for (size_t i = 0; kiln_cpu_aot_op_at(i, NULL); i++)
        if (strcmp(kiln_cpu_aot_op_at(i, &steps), onnx_op) == 0) return steps;
    return 0;
}

typedef struct op_row {
    uint32_t value;
    const char *name;
    size_t params_size;
} op_row;

static void test_ops(void)
{
    static const op_row rows[] = {
#define OP_ROW(name, value, step_name, params) {value, step_name, sizeof(params)},
        KILN_CPU_OP_LIST(OP_ROW)
#undef OP_ROW
    };
    const size_t n = sizeof rows / sizeof rows[0];
    EXPECT(n == KILN_CPU_OP_COUNT - 1);
    bool seen[KILN_CPU_OP_COUNT] = {false};
    const char *names[KILN_CPU_OP_COUNT] = {NULL};
    for (size_t i = 0; i < n; i++) {
        uint32_t op = rows[i].value;
        REQUIRE(op >= 1 && op < KILN_CPU_OP_COUNT);
        EXPECT(!seen[op]);
        seen[op] = true;
        const kiln_cpu_op_descriptor *info = &kiln_cpu_op_info[op];
        EXPECT(info->validate != NULL);
        EXPECT(info->params_size == rows[i].params_size && info->params_size <= KILN_CPU_PARAMS_SIZE);
        EXPECT(kiln_cpu_op_find(op) == info);
        EXPECT(strcmp(kiln_ctxbin_op_name(op), rows[i].name) == 0);
        EXPECT(kiln_cpu_kernels_generic.ops[op] != NULL); /* every op runs everywhere, if slowly */
        names[i] = kiln_ctxbin_op_name(op);
    }
    EXPECT(names_unique(names, n));
    for (uint32_t op = 1; op < KILN_CPU_OP_COUNT; op++) EXPECT(seen[op]);
    /* Values that are no op: refused by the reader and the validator alike. */
    EXPECT(kiln_cpu_op_find(0) == NULL && kiln_cpu_op_find(KILN_CPU_OP_COUNT) == NULL);
    EXPECT(kiln_cpu_op_find(UINT32_MAX) == NULL);
    EXPECT(kiln_cpu_op_info[0].validate == NULL && kiln_cpu_op_info[0].params_size == 0);
    EXPECT(strcmp(kiln_ctxbin_op_name(0), "?") == 0 && strcmp(kiln_ctxbin_op_name(KILN_CPU_OP_COUNT), "?") == 0);
    char params[KILN_CPU_PARAMS_SIZE] = {0};
    EXPECT(kiln_cpu_workspace_size(&kiln_cpu_kernels_generic, KILN_CPU_OP_COUNT, params, 1 << 15, 1 << 20) == 0);
}

typedef struct kind_row {
    uint32_t value;
    const char *onnx_op; /* NULL: none of its own */
} kind_row;

/* Rows cover 0 .. count - 1 once each; their ONNX names are unique and lowered as `step`. */
static void check_kinds(const kind_row *rows, size_t n, size_t count, uint32_t step)
{
    EXPECT(n == count);
    bool seen[64] = {false};
    const char *names[64] = {NULL};
    size_t n_names = 0;
    REQUIRE(count <= 64);
    for (size_t i = 0; i < n; i++) {
        REQUIRE(rows[i].value < count);
        EXPECT(!seen[rows[i].value]);
        seen[rows[i].value] = true;
        if (!rows[i].onnx_op) continue;
        names[n_names++] = rows[i].onnx_op;
        EXPECT(lowered_steps(rows[i].onnx_op) == (1u << step));
    }
    EXPECT(names_unique(names, n_names));
    for (size_t v = 0; v < count; v++) EXPECT(seen[v]);
}

static void test_activations(void)
{
    static const kind_row rows[] = {
#define ACT_ONNX(name, value, onnx_op, alpha, beta) {value, onnx_op},
#define ACT_OTHER(name, value, what) {value, NULL},
        KILN_CPU_ACT_ONNX_LIST(ACT_ONNX) KILN_CPU_ACT_OTHER_LIST(ACT_OTHER)
#undef ACT_ONNX
#undef ACT_OTHER
    };
    check_kinds(rows, sizeof rows / sizeof rows[0], KILN_CPU_ACT_COUNT, KILN_CPU_OP_UNARY);
    EXPECT(lowered_steps("Clip") == (1u << KILN_CPU_OP_UNARY)); /* lowered to CLIP by its own rules */
}

static void test_binary_kinds(void)
{
    static const kind_row rows[] = {
#define BIN_ROW(name, value, onnx_op) {value, onnx_op},
        KILN_CPU_BIN_LIST(BIN_ROW)
#undef BIN_ROW
    };
    check_kinds(rows, sizeof rows / sizeof rows[0], KILN_CPU_BIN_COUNT, KILN_CPU_OP_BINARY);
}

static void test_features_and_attr_types(void)
{
    const char *names[64] = {NULL};
    REQUIRE(KILN_CPU_FEATURE_COUNT <= 64);
    for (int bit = 0; bit < KILN_CPU_FEATURE_COUNT; bit++) {
        names[bit] = kiln_cpu_feature_name(bit);
        EXPECT(strcmp(names[bit], "?") != 0);
    }
    EXPECT(names_unique(names, KILN_CPU_FEATURE_COUNT));
    EXPECT(strcmp(kiln_cpu_feature_name(KILN_CPU_FEATURE_COUNT), "?") == 0);
    EXPECT(strcmp(kiln_cpu_feature_name(KILN_CPU_AMXINT8), "amx-int8") == 0);

    for (int t = 0; t < KILN_ATTR_TYPE_COUNT; t++) {
        names[t] = kiln_attr_type_name((kiln_attr_type)t);
        EXPECT(strcmp(names[t], "?") != 0);
    }
    EXPECT(names_unique(names, KILN_ATTR_TYPE_COUNT));
    EXPECT(strcmp(kiln_attr_type_name((kiln_attr_type)KILN_ATTR_TYPE_COUNT), "?") == 0);
    EXPECT(strcmp(kiln_attr_type_name(KILN_ATTR_STRINGS), "STRINGS") == 0);
}

int main(void)
{
    test_ops();
    test_activations();
    test_binary_kinds();
    test_features_and_attr_types();
    printf("test_cpu_op_info: %d checks, %d failures\n", unit_checks, unit_failures);
    return unit_failures ? 1 : 0;
}
