/* context_cache.c — the delegate cache (see context_cache.h).
 *
 * Layer: backends/cpu/rt. The cache is the list of published contexts in the runtime state
 * (rt_state.h). A context's life, with the cache lock held only at the marked points:
 *
 *   miss ─► candidate (guard) ─► load ─► bind ─► explicit group ─►[lock: publish or lose]
 *                 │ any failure: guard destroys it          │ lost: destroy it, take the winner
 *   handles ─►[lock: refs++ / refs--] ─► refs == 0: [lock: unpublish]
 *   refs == 0 and member_refs == 0: [lock: owner's group leaves the registry] ─► destroy
 *                                    ─► a member then drops its reference on its owner
 *
 * Scratch groups are the runtime's (kiln_runtime_services): the owner/member policy is ours,
 * and the runtime's default-group registry is searched and edited only with the cache lock held,
 * so a find never returns a group whose owner has started to die.
 * Building a default scratch group allocates its buffer, so that too happens outside the lock:
 * publication that finds neither a winner nor a group for its key unlocks, forms a spare group
 * and tries again (at most once more: the second pass has a spare in hand).
 */
#include "backends/cpu/rt/context_cache.h"

#include "core/check.h"

/* The cpu backend's class among the runtime's default groups: its groups' owners are cpu
   contexts, so only cpu contexts may find them. */
static const char group_class_tag;
#define GROUP_CLASS ((const void *)&group_class_tag)

static kiln_cpu_context *find(kiln_cpu_rt *rt, const kiln_cpu_key *key)
{
    for (kiln_cpu_context *c = rt->contexts; c; c = c->next)
        if (kiln_cpu_context_matches(c, key)) return c;
    return NULL;
}

static void publish_locked(kiln_cpu_rt *rt, kiln_cpu_context *c)
{
    c->refs = 1;
    c->published = true;
    c->next = rt->contexts;
    rt->contexts = c;
}

static void unpublish_locked(kiln_cpu_rt *rt, kiln_cpu_context *c)
{
    kiln_cpu_context **p = &rt->contexts;
    while (*p && *p != c) p = &(*p)->next;
    if (KILN_NEVER(!*p)) return;
    *p = c->next;
    c->next = NULL;
    c->published = false;
}

/* Owns a candidate from creation until publication. Every way out before publication goes
   through guard_fail, which destroys the candidate completely; guard_hand_over ends the guard's
   ownership once the cache holds the context. */
typedef struct candidate_guard {
    kiln_cpu_context *candidate;
} candidate_guard;

static kiln_status guard_fail(candidate_guard *g, kiln_status st)
{
    kiln_cpu_context_destroy(g->candidate);
    g->candidate = NULL;
    return st;
}

static kiln_cpu_context *guard_hand_over(candidate_guard *g)
{
    kiln_cpu_context *c = g->candidate;
    g->candidate = NULL;
    return c;
}

/* Under the lock: make c a member of the live default group for its key, or the owner of
   `*spare`. false when there is neither (the caller forms a spare outside the lock). */
static bool join_default_locked(kiln_cpu_context *c, kiln_backend_group **spare)
{
    if (!c->group_size || c->explicit_group) return true; /* no scratch, or an explicit group */
    void *owner;
    kiln_backend_group *g = c->rt->default_find(GROUP_CLASS, c->allocator, c->group_size, &owner);
    if (g) {
        c->group = g;
        c->owner = owner;
        c->owner->member_refs++;
        return true;
    }
    if (!*spare) return false;
    g = *spare;
    *spare = NULL;
    c->group = g;
    c->rt->default_register(g, GROUP_CLASS, c);
    return true;
}

static kiln_status publish(candidate_guard *guard, const kiln_cpu_key *key, kiln_cpu_context **out)
{
    kiln_cpu_context *c = guard->candidate;
    kiln_backend_group *spare = NULL;
    for (;;) {
        kiln_cpu_rt *rt = kiln_cpu_rt_lock();
        kiln_cpu_context *winner = find(rt, key);
        if (winner) {
            winner->refs++;
            kiln_cpu_rt_unlock(rt);
            c->rt->default_free(spare);
            guard_fail(guard, KILN_OK); /* first published wins: the loser's candidate goes */
            *out = winner;
            return KILN_OK;
        }
        if (join_default_locked(c, &spare)) {
            publish_locked(rt, c);
            kiln_cpu_rt_unlock(rt);
            c->rt->default_free(spare); /* a group for the key appeared while we formed ours */
            *out = guard_hand_over(guard);
            return KILN_OK;
        }
        kiln_cpu_rt_unlock(rt);
        kiln_status st = c->rt->default_new(c->allocator, c->group_size, &spare);
        if (st != KILN_OK) return guard_fail(guard, st);
    }
}

kiln_status kiln_cpu_cache_acquire(const kiln_cpu_key *key, char *message, size_t message_size, kiln_cpu_context **out)
{
    *out = NULL;
    kiln_cpu_rt *rt = kiln_cpu_rt_lock();
    kiln_cpu_context *hit = find(rt, key);
    if (hit) hit->refs++;
    kiln_cpu_rt_unlock(rt);
    if (hit) {
        *out = hit;
        return KILN_OK;
    }
    candidate_guard guard = {NULL};
    KILN_TRY(kiln_cpu_context_new(key, &guard.candidate));
    kiln_status st = kiln_cpu_context_load(guard.candidate, message, message_size);
    if (st == KILN_OK) st = kiln_cpu_context_bind(guard.candidate);
    if (st == KILN_OK) st = kiln_cpu_context_join_explicit(guard.candidate);
    if (st != KILN_OK) return guard_fail(&guard, st);
    return publish(&guard, key, out);
}

/* Under the lock: drop a handle's reference (or, when `member`, a group member's). true when c
   must be destroyed now: it is out of the cache and any default group it owns has left the
   registry, so nothing can find it any more. */
static bool unref_locked(kiln_cpu_rt *rt, kiln_cpu_context *c, bool member)
{
    if (member) c->member_refs--;
    else c->refs--;
    if (c->refs == 0 && c->published) unpublish_locked(rt, c);
    if (c->refs > 0 || c->member_refs > 0) return false;
    if (c->group && !c->explicit_group && !c->owner) c->rt->default_unregister(c->group);
    return true;
}

void kiln_cpu_cache_release(kiln_cpu_context *c)
{
    bool member = false;
    while (c) {
        kiln_cpu_rt *rt = kiln_cpu_rt_lock();
        bool dead = unref_locked(rt, c, member);
        kiln_cpu_rt_unlock(rt);
        if (!dead) return;
        kiln_cpu_context *owner = c->owner;
        kiln_cpu_context_destroy(c); /* a member is gone completely before its owner is released */
        c = owner;
        member = true;
    }
}
