/* bpe_merge.c — see bpe_merge.h. Layer: llm (tokenizer core). */
#include "llm/bpe_merge.h"

#include "core/alloc.h"
#include "core/check.h"

typedef struct candidate {
    double priority;
    int64_t left, right;
    size_t size;                /* left + right size when queued */
} candidate;

static bool before(const candidate *a, const candidate *b)
{
    return a->priority < b->priority || (a->priority == b->priority && a->left < b->left);
}

typedef struct heap {
    candidate *items;
    size_t n;
} heap;

static void heap_push(heap *h, candidate c)
{
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&c, &h->items[parent])) break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = c;
}

static candidate heap_pop(heap *h)
{
    candidate top = h->items[0], last = h->items[--h->n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n) break;
        if (child + 1 < h->n && before(&h->items[child + 1], &h->items[child])) child++;
        if (!before(&h->items[child], &last)) break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->n) h->items[i] = last;
    return top;
}

static void offer(heap *h, const char *text, const kiln_bpe_symbol *syms, int64_t left, kiln_bpe_rank_fn rank,
                  const void *ctx)
{
    if (left < 0 || syms[left].next < 0) return;
    const kiln_bpe_symbol *l = &syms[left], *r = &syms[l->next];
    double priority;
    if (!rank(ctx, text + l->start, l->size, r->size, &priority)) return;
    heap_push(h, (candidate){priority, left, l->next, l->size + r->size});
}

kiln_status kiln_bpe_merge(const char *text, kiln_bpe_symbol *syms, size_t n, kiln_bpe_rank_fn rank,
                           const void *ctx, const kiln_allocator *allocator)
{
    if (n < 2) return KILN_OK;
    /* At most n - 1 first candidates and two new ones per merge (n - 1 merges). */
    size_t cap;
    if (!kiln_mul_size(n, 3 * sizeof(candidate), &cap)) return KILN_ERROR_OUT_OF_MEMORY;
    heap h = {kiln_alloc(allocator, cap, _Alignof(candidate)), 0};
    if (!h.items) return KILN_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i + 1 < n; i++) offer(&h, text, syms, (int64_t)i, rank, ctx);
    while (h.n) {
        candidate c = heap_pop(&h);
        kiln_bpe_symbol *l = &syms[c.left], *r = &syms[c.right];
        if (l->size == 0 || r->size == 0 || l->next != c.right || l->size + r->size != c.size) continue;
        l->size += r->size;
        l->next = r->next;
        if (r->next >= 0) syms[r->next].prev = c.left;
        r->size = 0;
        offer(&h, text, syms, l->prev, rank, ctx);
        offer(&h, text, syms, c.left, rank, ctx);
    }
    kiln_free(allocator, h.items);
    return KILN_OK;
}
