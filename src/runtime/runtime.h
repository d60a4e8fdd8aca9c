/* runtime.h — internal structures of programs, modules and methods.
 *
 * Layer: runtime. Depends on core, format and kernels/portable.
 * Ownership: a program is reference-counted (the caller's open reference plus one per module);
 * a module owns its methods; a method's memory comes from its module's allocator. The public
 * handles are never these structs' addresses: each is a slot of the handle table
 * (handle_table.h) that public entry points pin before they touch the object. Three kinds
 * of memory, kept apart: load-time structures (method->load arena), planned activations
 * (method->arena, offsets from the program, verified at load) and per-call scratch.
 */
#ifndef KILN_RUNTIME_RUNTIME_H
#define KILN_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/arena.h"
#include "core/diag.h"
#include "core/threadpool.h"
#include "format/program_reader.h"
#include "kernels/portable/kernel.h"
#include "kiln/backend.h"
#include "kiln/kiln.h"

#define KILN_MESSAGE_SIZE 512   /* one-line failure messages of loads and module creation */

/* The object behind a kiln_program handle. Tables and segment data are kept apart (the
   contract is in kiln.h, "Program files"): view's tables point into `tables`, a private copy
   made and validated at open, and only segment data (weights, constants, delegate payloads) is
   read from the mapping. */
typedef struct kiln_program_obj {
    atomic_int refs;        /* the caller's (until kiln_program_close) + one per module */
    uintptr_t handle;       /* the caller's handle */
    kiln_program_view view;
    void *tables;           /* private copy of the file's tables (default allocator) */
    /* Private copy of every metadata value (program_metadata.c), made at open so that what a
       caller parses cannot change under it when the file does: value i is the
       view.segments[view.metadata[i].segment].size bytes at metadata_values + metadata_offsets[i]. */
    uint8_t *metadata_values;
    uint64_t *metadata_offsets;
    void *mapping;          /* mmap'd file, or NULL for kiln_program_open_memory */
    size_t mapping_size;
    /* The file as it was at open (kiln_program_open only; fd -1 otherwise): the descriptor
       keeps the mapped inode, whose size and modification time are compared before every load
       and execute (kiln_program_check_file). */
    int fd;
    int64_t file_size;
    struct timespec file_mtime;
    char *path;             /* for messages */
} kiln_program_obj;

/* Copies the validated view's metadata values into p (program_metadata.c); freed by
   kiln_program_free_metadata. KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_program_copy_metadata(kiln_program_obj *p);
void kiln_program_free_metadata(kiln_program_obj *p);

typedef struct kiln_method_state kiln_method_state;
typedef struct kiln_module_obj kiln_module_obj;

/* The object behind a kiln_method handle, on its module's list until unloaded. */
typedef struct kiln_method_obj {
    uintptr_t handle;
    kiln_method_state *state;
    kiln_module_obj *module;
    struct kiln_method_obj *prev, *next;   /* the module's methods (module->lock) */
} kiln_method_obj;

/* The last load failure of one thread on one module (kiln_module_last_error): a copy of the
   line that load wrote into its diag. Only its thread writes or reads `text`, so the text is
   never shared between threads. */
typedef struct kiln_thread_error {
    pthread_t thread;
    struct kiln_thread_error *next;
    char text[KILN_MESSAGE_SIZE];
} kiln_thread_error;

/* The object behind a kiln_module handle. */
struct kiln_module_obj {
    uintptr_t handle;
    kiln_program_obj *program;          /* one reference */
    const kiln_allocator *allocator;    /* options->allocator, or &own_allocator */
    kiln_allocator own_allocator;       /* without options->allocator: a default allocator whose
                                           address is this module's own, so that its contexts are
                                           never shared with another module (API.md) */
    kiln_scratch_group *scratch_group;  /* explicit group, one reference held while the module lives */
    int num_threads;            /* resolved: >= 1 */
    kiln_threadpool *pool;      /* num_threads - 1 workers, or NULL when single-threaded */
    char *target;               /* forced record name or NULL */
    pthread_mutex_t lock;       /* guards methods and errors */
    pthread_cond_t unlinked;    /* broadcast when an unload has removed its method from the list */
    kiln_method_obj *methods;
    kiln_thread_error *errors;
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

/* scratch_group.c: the runtime's scratch groups and counters (kiln_runtime_services in
   kiln/backend.h). A module holds one reference on its explicit group for its whole life, so
   loads after the user released the group still find it. retain: KILN_OK or
   KILN_ERROR_STALE_HANDLE (released or never created). */
kiln_status kiln_scratch_group_retain(kiln_scratch_group *group);
void kiln_scratch_group_unref(kiln_scratch_group *group);
/* The services table handed to every backend's init(); static, never NULL. */
const kiln_runtime_services *kiln_runtime_services_get(void);

/* program.c */
void kiln_program_retain(kiln_program_obj *p);
void kiln_program_release(kiln_program_obj *p);
/* KILN_OK while the program's file is as it was at open (always for memory programs);
   KILN_ERROR_IO, with "program file X changed since it was opened; reopen it" in diag, once its
   size or modification time differ or it cannot be checked. One fstat. */
kiln_status kiln_program_check_file(const kiln_program_obj *p, kiln_diag *diag);

/* module_target.c: KILN_OK when a module of p may force record `target` (module options):
   some context binary of the program has a record of that name and the name is a target its
   backend knows (a program without context binaries only needs the name to be known).
   KILN_ERROR_NO_RUNNABLE_TARGET with a message in diag listing the names that exist;
   KILN_ERROR_OUT_OF_MEMORY. */
kiln_status kiln_module_check_target(const kiln_program_obj *p, const char *target, kiln_diag *diag);

/* method_load.c: on failure, diag says why in one line, or stays "" (the status says it). */
kiln_status kiln_method_state_create(kiln_module_obj *module, uint32_t method_index, kiln_method_state **out,
                                     kiln_diag *diag);
void kiln_method_state_destroy(kiln_module_obj *module, kiln_method_state *s);
/* method_exec.c */
kiln_status kiln_method_state_execute(kiln_module_obj *module, kiln_method_state *s);
void kiln_method_state_free_dynamic(kiln_module_obj *module, kiln_method_state *s);

#endif
