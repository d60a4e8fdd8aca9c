/* context_cache.h — the delegate cache: one live context per key, shared by reference.
 *
 * Layer: backends/cpu/rt. DESIGN.md §4 rules 1-5: lookup, insertion, reference changes and
 * removal happen under the cache lock (rt_state.h); a miss builds a candidate outside it, owned
 * by a guard that destroys it on any failure; publication is first-published-wins (a loser destroys its
 * candidate and takes the winner); the last release removes the context and destroys it
 * completely. Default scratch groups are joined or formed at publication, under the same lock,
 * so only published contexts ever own or join one.
 */
#ifndef KILN_BACKENDS_CPU_RT_CONTEXT_CACHE_H
#define KILN_BACKENDS_CPU_RT_CONTEXT_CACHE_H

#include "backends/cpu/rt/context.h"

/* A reference on the context for key: the published one, or a new one built and published.
 * message gets one line on failure. Statuses: those of the context stages (context.h) and of
 * forming a scratch group (KILN_ERROR_OUT_OF_MEMORY, KILN_ERROR_THREAD); on failure nothing is
 * held or left allocated. */
kiln_status kiln_cpu_cache_acquire(const kiln_cpu_key *key, char *message, size_t message_size, kiln_cpu_context **out);

/* Drop a reference from kiln_cpu_cache_acquire. The last one unpublishes the context; it is
 * destroyed once no scratch-group member holds it either (then, if it was a member, its owner's
 * reference is dropped in turn). */
void kiln_cpu_cache_release(kiln_cpu_context *c);

#endif
