/* cpu_aot.h — ahead-of-time half of the `cpu` backend: which nodes it takes, and lowering a
 * partition (one graph per method) into a context binary with one record per target.
 *
 * Layer: backends/cpu/aot. Depends on core, kernels/portable (kiln_node, shape helpers) and
 * backends/cpu, and on the compile-time backend interface (compiler/compiler_backend.h), whose
 * neutral description of a partition it lowers; it does not see the compiler IR. Reached from the
 * compiler only through its table entry (aot_backend.h).
 */
#ifndef KILN_BACKENDS_CPU_AOT_CPU_AOT_H
#define KILN_BACKENDS_CPU_AOT_CPU_AOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler_backend.h"
#include "kernels/portable/kernel.h"
#include "kiln/kiln.h"

/* A partition as the compiler hands it over (compiler/compiler_backend.h). */
typedef kiln_backend_value kiln_cpu_aot_value;
typedef kiln_backend_node kiln_cpu_aot_node;
typedef kiln_backend_graph kiln_cpu_aot_graph;

typedef struct kiln_cpu_aot_spec {
    const char *const *targets;     /* target names (validated by the caller), one record each */
    size_t n_targets;
    uint32_t precision;             /* kiln_ctx_precision of every record (record_precisions NULL) */
    const uint32_t *record_precisions; /* (n_targets) or NULL: record i's precision, so one binary
                                       can hold bf16 records for the CPUs that run them beside
                                       f32 records for the others */
    uint32_t flags;                 /* KILN_CTX_SPEC_* */
    uint64_t group_scratch_size;
    const kiln_allocator *allocator;
} kiln_cpu_aot_spec;

/* Whether the backend implements this node with these static shapes (constant inputs carry
 * data). Conservative: false for anything it cannot lower exactly. */
bool kiln_cpu_aot_supports(const kiln_node *node, const kiln_tensor *const *in, const kiln_tensor *const *out);

/* For listings such as docs/ops.md (docs/gen/gen_ops_doc.c): the name of the i-th ONNX op the
 * backend lowers, in table order, or NULL past the end; *steps_out (when not NULL) receives
 * the lowered ops it can become, bit (1u << kiln_cpu_op) each. A target compiles the op when
 * its kernel table has every one of them. Static strings. */
const char *kiln_cpu_aot_op_at(size_t i, uint32_t *steps_out);

/* Check a compile spec's target list before any work: non-empty, every name known, none twice.
 * KILN_OK or KILN_ERROR_COMPILE_SPEC with one line in message naming the fix (for an unknown
 * target it lists the known ones). */
kiln_status kiln_cpu_aot_validate_targets(const char *const *targets, size_t n_targets, char *message,
                                          size_t message_size);

/* Lower the graphs into one context binary (*out from spec->allocator, 64-byte aligned).
 * KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_NOT_SUPPORTED (a node supports() refused),
 * KILN_ERROR_COMPILE_SPEC (unknown target); message gets one line on failure. */
kiln_status kiln_cpu_aot_compile(const kiln_cpu_aot_spec *spec, const kiln_cpu_aot_graph *graphs, size_t n_graphs,
                                 void **out, size_t *out_size, char *message, size_t message_size);

#endif
