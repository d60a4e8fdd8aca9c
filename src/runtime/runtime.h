/* runtime.h — internal structures of programs, modules and methods.
 *
 * Layer: runtime. Depends on core, format and kernels/portable.
 * Ownership: a program is reference-counted (the caller's open reference plus one per module);
 * a module owns its methods; a method's memory comes from its module's allocator. Three kinds
 * of memory, kept apart: load-time structures (method->load arena), planned activations
 * (method->arena, offsets from the program, verified at load) and per-call scratch.
 */
#ifndef KILN_RUNTIME_RUNTIME_H
#define KILN_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/arena.h"
#include "core/threadpool.h"
#include "format/program_reader.h"
#include "kernels/portable/kernel.h"
#include "kiln/backend.h"
#include "kiln/kiln.h"

#define KILN_MODULE_MAGIC 0x4D4F444Bu  /* "KDOM" */
#define KILN_METHOD_MAGIC 0x4854454Du  /* "METH" */

struct kiln_program {
    atomic_int refs;
    kiln_program_view view;
    void *mapping;          /* mmap'd file, or NULL for kiln_program_open_memory */
    size_t mapping_size;
};

typedef struct kiln_method_state kiln_method_state;

/* A method handle. Handles are never reused within their module: unloading clears `state`, so
   a stale handle is detected (KILN_ERROR_STALE_HANDLE) instead of reaching freed memory. They
   are freed with the module. */
struct kiln_method {
    uint32_t magic;
    kiln_method_state *state;   /* NULL once unloaded */
    kiln_module *module;
    kiln_method *next;          /* the module's handle list */
};

struct kiln_module {
    uint32_t magic;
    kiln_program *program;
    const kiln_allocator *allocator;    /* options->allocator, or &own_allocator */
    kiln_allocator own_allocator;       /* without options->allocator: a default allocator whose
                                           address is this module's own, so that its contexts are
                                           never shared with another module (API.md) */
    kiln_scratch_group *scratch_group;  /* explicit group, one reference held while the module lives */
    int num_threads;            /* resolved: >= 1 */
    kiln_threadpool *pool;      /* num_threads - 1 workers, or NULL when single-threaded */
    char *target;               /* forced record name or NULL */
    pthread_mutex_t lock;       /* guards the handle list and last_error */
    kiln_method *handles;
    char last_error[512];
};

/* Registers the backends built into libkiln (once per process); defined by the library glue
   above the runtime (src/backends/builtin.c), called before any method is loaded. */
void kiln_runtime_register_builtin_backends(void);

/* One instruction, decoded at load. */
typedef struct kiln_exec_instr {
    kiln_node node;             /* KERNEL: op/attrs; DELEGATE: op = backend name */
    const kiln_kernel *kernel;  /* KERNEL */
    const kiln_backend *backend;/* DELEGATE */
    void *delegate;             /* DELEGATE: backend handle */
    int32_t *args;              /* (n_inputs + n_outputs) method-local values, -1 absent */
    uint64_t scratch_size;
    bool dynamic;               /* re-run infer() at execute: dynamic values or unverifiable shapes */
} kiln_exec_instr;

typedef struct kiln_exec_value {
    const char *name;
    kiln_tensor t;              /* current dtype/shape/data */
    kiln_tensor declared;       /* as in the program (data NULL) */
    uint8_t storage;            /* kiln_fmt_storage */
    bool owned_dynamic;         /* data allocated this execute; freed at the next */
} kiln_exec_value;

struct kiln_method_state {
    const kiln_fmt_method *fmt;
    const char *name;
    kiln_arena load;            /* decoded instructions, values, attribute arrays */
    kiln_exec_instr *instrs;    /* (n_instrs) */
    size_t n_instrs;
    kiln_exec_value *values;    /* (n_values) */
    size_t n_values;
    const int32_t *inputs;      /* (n_inputs) value indices */
    size_t n_inputs;
    const int32_t *outputs;     /* (n_outputs) */
    size_t n_outputs;
    void *arena;                /* planned activations (fmt->arena_size bytes) */
    void *scratch;              /* fmt->scratch_size bytes */
    bool *input_set;            /* (n_inputs) */
    bool executed;
    size_t n_delegates;
    pthread_mutex_t exec_lock;  /* serialises set_input / execute / get_output */
};

/* Explicit scratch groups are objects of the compiled backend, which defines these two
   (src/backends/cpu/rt/scratch_group.c; the runtime never looks inside a group). A module holds
   one reference on its group for its whole life, so loads after the user released the group
   still find it. retain: KILN_OK or KILN_ERROR_STALE_HANDLE (released or never created). */
kiln_status kiln_scratch_group_retain(kiln_scratch_group *group);
void kiln_scratch_group_unref(kiln_scratch_group *group);

/* Record a failure message on the module (module.c). */
void kiln_module_set_error(kiln_module *module, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void kiln_program_retain(kiln_program *p);
void kiln_program_release(kiln_program *p);

/* method_load.c */
kiln_status kiln_method_state_create(kiln_module *module, uint32_t method_index, kiln_method_state **out);
void kiln_method_state_destroy(kiln_module *module, kiln_method_state *s);
/* method_exec.c */
kiln_status kiln_method_state_execute(kiln_module *module, kiln_method_state *s);
void kiln_method_state_free_dynamic(kiln_module *module, kiln_method_state *s);

#endif
