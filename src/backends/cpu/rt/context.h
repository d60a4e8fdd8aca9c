/* context.h — a live context: one context binary initialised for one runtime allocator.
 *
 * Layer: backends/cpu/rt. A context is the validated view of its binary, the record selected
 * for this CPU with that record's kernel table, per graph the shape of every tensor with the
 * weights bound in place (pointers into the payload, never copies), its scratch-group
 * membership and an id that is never reused. The binary's tables are the reader's private copy
 * (ctxbin_reader.h), owned by the context; only weights are read from the payload. The delegate cache (context_cache.c) builds
 * contexts in stages under a guard; after any stage kiln_cpu_context_destroy frees exactly what
 * was built. Everything but the sharing fields is immutable once published.
 *
 * A context never reads its payload while being destroyed: an owner kept alive only by its
 * scratch-group members may outlive the program its weights came from (it is never executed
 * again then — every execution goes through a handle whose method keeps the payload mapped).
 */
#ifndef KILN_BACKENDS_CPU_RT_CONTEXT_H
#define KILN_BACKENDS_CPU_RT_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/kernels/cpu_kernels.h"
#include "backends/cpu/rt/ctxbin_reader.h"
#include "backends/cpu/rt/rt_state.h"
#include "kiln/backend.h"
#include "kiln/kiln.h"

#define KILN_CPU_CONTEXT_MAGIC 0x58544E43u /* "CNTX" */

/* What makes two initialisations share one context: the same bytes (the very same payload,
 * which is what guarantees those bytes outlive every reference), the same runtime allocator
 * (DESIGN.md §4 rule 1), the same forced record and the same explicit scratch group. */
typedef struct kiln_cpu_key {
    uint64_t signature;
    const kiln_allocator *allocator;
    const void *payload;
    size_t payload_size;
    const char *target;             /* forced record name, or NULL for the best one */
    kiln_scratch_group *group;      /* explicit scratch group (a tagged id never reused), NULL: default */
    const kiln_runtime_services *rt;/* the runtime's scratch groups and counters (not part of the match) */
} kiln_cpu_key;

typedef struct kiln_cpu_graph {
    const kiln_ctx_graph *fmt;
    const kiln_ctx_step *steps;     /* (fmt->n_steps) */
    kiln_tensor *tensors;           /* (fmt->n_tensors) dtype and shape; WEIGHT: data bound in place */
} kiln_cpu_graph;

struct kiln_cpu_context {
    uint32_t magic;
    uint64_t id;
    /* key (immutable) */
    uint64_t signature;
    const kiln_allocator *allocator;
    const void *payload;
    size_t payload_size;
    char *target;                   /* forced record name (a copy), NULL for the best one */
    kiln_scratch_group *explicit_group;
    const kiln_runtime_services *rt;
    /* contents (immutable once loaded) */
    kiln_ctxbin bin;
    const kiln_ctx_record *record;
    const kiln_cpu_kernels *kernels;
    kiln_cpu_graph *graphs;         /* (record->n_graphs) */
    uint64_t group_size;            /* scratch this context needs from its group; 0: no group */
    /* scratch-group membership (set before publication, then immutable) */
    kiln_backend_group *group;      /* the runtime's group (explicit_group's, or a default one) */
    kiln_cpu_context *owner;        /* default-group member: the owner it holds a reference on */
    /* sharing (cache lock) */
    int refs;                       /* delegate handles */
    int member_refs;                /* members of the default group this context owns */
    bool published;                 /* in the cache list */
    kiln_cpu_context *next;
};

/* Stage 1, allocation: a context with its key copied and a fresh id (counted in the stats as
 * created). KILN_ERROR_OUT_OF_MEMORY (nothing left allocated). */
kiln_status kiln_cpu_context_new(const kiln_cpu_key *key, kiln_cpu_context **out);
/* Stage 2, validation and record selection: the whole binary, then the record to run and its
 * kernel table (every op present, the same register tile, enough workspace per step).
 * KILN_ERROR_INCOMPATIBLE, KILN_ERROR_NO_RUNNABLE_TARGET, KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_cpu_context_load(kiln_cpu_context *c, char *message, size_t message_size);
/* Stage 3, I/O setup and weight binding for every graph of the record. KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_cpu_context_bind(kiln_cpu_context *c);
/* Stage 4, explicit scratch group: member reference and a buffer large enough.
 * KILN_ERROR_STALE_HANDLE, KILN_ERROR_OUT_OF_MEMORY. (Default groups are joined at publication.) */
kiln_status kiln_cpu_context_join_explicit(kiln_cpu_context *c);

/* Free everything the context holds (whatever stage it reached) except its reference on an
 * owner, which the caller drops afterwards; counted in the stats as destroyed. */
void kiln_cpu_context_destroy(kiln_cpu_context *c);

bool kiln_cpu_context_matches(const kiln_cpu_context *c, const kiln_cpu_key *key);

/* Run graph `graph` (index in the record) on dense caller tensors whose dtypes and shapes must
 * be the graph's. Serialised with every other execution in the context's scratch group.
 * threads (NULL: one thread) gives the thread fields of every step's kiln_cpu_exec — the pool
 * and the workspace slots 1..n-1 of the calling handle, each at least as large as the graph's
 * largest step workspace; the workspace fields are filled per step.
 * KILN_ERROR_INVALID_ARGUMENT (counts, NULL data), KILN_ERROR_DTYPE_MISMATCH,
 * KILN_ERROR_SHAPE_MISMATCH, or a kernel's status. */
kiln_status kiln_cpu_context_execute(kiln_cpu_context *c, uint32_t graph, const kiln_tensor *const *in, size_t n_in,
                                     kiln_tensor *const *out, size_t n_out, const kiln_cpu_exec *threads);
/* Bytes of the largest workspace any step of graph `graph` uses (the size of one thread slot). */
uint64_t kiln_cpu_context_step_workspace(const kiln_cpu_context *c, uint32_t graph);

/* Record selection (ctx_select.c): the runnable record with the highest target rank, or the
 * forced one. KILN_ERROR_NO_RUNNABLE_TARGET with a message listing the binary's targets and
 * this CPU's features. */
kiln_status kiln_cpu_select_record(const kiln_ctxbin *bin, const char *forced, const kiln_ctx_record **out,
                                   char *message, size_t message_size);

#endif
