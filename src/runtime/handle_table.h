/* handle_table.h — the process-wide table behind the public program, module and method handles.
 *
 * Layer: runtime (internal). Depends on kiln.h and pthreads.
 * Why: a public handle (kiln_program *, kiln_module *, kiln_method *) is not an address but a
 * slot index, that slot's generation and a kind tag packed into a pointer-sized integer, so a
 * handle used after its object is gone (a second destroy, a method of a destroyed module, a
 * random integer) is looked up and refused — it is never dereferenced. Slots are reused, their
 * generation never: a handle names one object for ever.
 *
 * Every public entry point pins its handle (kiln_handle_pin) before touching the object and
 * unpins it when done; kiln_handle_retire makes a handle stale for every later pin and waits
 * until the pins in flight are released, so an object is never freed under a call that
 * validated it. Pins are cheap: one uncontended mutex round trip each, no allocation.
 *
 * This table is one of the documented mutable globals of kiln (docs/layers.md): statically
 * initialised, guarded by its own lock, never torn down (its slot chunks live for the process).
 */
#ifndef KILN_RUNTIME_HANDLE_TABLE_H
#define KILN_RUNTIME_HANDLE_TABLE_H

#include <stdint.h>

#include "kiln/kiln.h"

typedef enum kiln_handle_kind {
    KILN_HANDLE_PROGRAM = 1,
    KILN_HANDLE_MODULE = 2,
    KILN_HANDLE_METHOD = 3,
} kiln_handle_kind;

/* A new handle for object (never 0, never a valid address). KILN_ERROR_OUT_OF_MEMORY (a new slot
 * chunk could not be allocated), KILN_ERROR_LIMIT (every slot is live). */
kiln_status kiln_handle_add(kiln_handle_kind kind, void *object, uintptr_t *out);

/* The object behind a live handle of that kind, with one pin taken; NULL for 0, a handle of
 * another kind, a retired handle or any other integer. Every non-NULL result must be followed by
 * kiln_handle_unpin(handle) on the same handle. */
void *kiln_handle_pin(uintptr_t handle, kiln_handle_kind kind);
void kiln_handle_unpin(uintptr_t handle);

/* Makes handle stale for every later kiln_handle_pin, waits until every pin on it has been
 * released and frees its slot; returns the object. NULL when the handle was not live (already
 * retired, or never a handle): of concurrent retirers of one handle exactly one gets the object.
 * The caller must not hold a pin on the same handle. */
void *kiln_handle_retire(uintptr_t handle, kiln_handle_kind kind);

#endif
