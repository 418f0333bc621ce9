/* First-fit allocator over a heap slice (see shm_heap.h). Slices hold a handful of blocks
 * (one per communicator that uses shared-memory collectives, one per persistent request's
 * lane), so a sorted array of free ranges is all it needs. */
#include "shm_heap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096u

static uint64_t page_round(uint64_t v) {
    return (v + PAGE - 1) & ~(uint64_t)(PAGE - 1);
}

int co_shm_heap_init(co_shm_heap *h, char *base, uint64_t size) {
    memset(h, 0, sizeof(*h));
    h->base = base;
    h->size = size & ~(uint64_t)(PAGE - 1);
    h->keep = h->size / 8 & ~(uint64_t)(PAGE - 1);
    h->cap = 16;
    h->free = malloc(h->cap * sizeof(*h->free));
    if (!h->free) return -1;
    if (h->size) h->free[h->nfree++] = (co_shm_heap_range){0, h->size, 0};
    return 0;
}

void co_shm_heap_fini(co_shm_heap *h) {
    free(h->free);
    memset(h, 0, sizeof(*h));
}

static void drop(co_shm_heap *h, size_t i) {
    memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof(*h->free));
    h->nfree--;
}

/* Joins range i with the next one when they touch and agree on keeping their pages. */
static int join_next(co_shm_heap *h, size_t i) {
    co_shm_heap_range *r = &h->free[i];
    if (i + 1 >= h->nfree || r->off + r->len != r[1].off || r->kept != r[1].kept) return 0;
    r->len += r[1].len;
    drop(h, i + 1);
    return 1;
}

/* Gives every kept range's pages back, so that ranges that touch become one. */
static void unkeep_all(co_shm_heap *h) {
    for (size_t i = 0; i < h->nfree; i++)
        if (h->free[i].kept) {
            madvise(h->base + h->free[i].off, h->free[i].len, MADV_REMOVE);
            h->free[i].kept = 0;
        }
    h->kept = 0;
    for (size_t i = 0; i + 1 < h->nfree;)
        if (!join_next(h, i)) i++;
}

static uint64_t take(co_shm_heap *h, uint64_t len, int kept_only) {
    for (size_t i = 0; i < h->nfree; i++) {
        co_shm_heap_range *r = &h->free[i];
        if (r->len < len || (kept_only && !r->kept)) continue;
        uint64_t off = r->off;
        if (r->kept) h->kept -= len;
        r->off += len;
        r->len -= len;
        if (!r->len) drop(h, i);
        return off;
    }
    return CO_SHM_HEAP_FAIL;
}

uint64_t co_shm_heap_alloc(co_shm_heap *h, uint64_t len) {
    len = page_round(len ? len : 1);
    uint64_t off = take(h, len, 1); /* pages already there first */
    if (off == CO_SHM_HEAP_FAIL) off = take(h, len, 0);
    if (off == CO_SHM_HEAP_FAIL && h->kept) {
        unkeep_all(h);
        off = take(h, len, 0);
    }
    return off;
}

void co_shm_heap_free(co_shm_heap *h, uint64_t off, uint64_t len) {
    len = page_round(len ? len : 1);
    /* The pages are shmem. Up to `keep` bytes of freed blocks keep them, for the next block
     * (making and removing pages costs every process that mapped them a TLB flush, and each
     * page a fault when touched again); beyond that MADV_REMOVE frees them. */
    int kept = h->kept + len <= h->keep;
    if (kept)
        h->kept += len;
    else
        madvise(h->base + off, len, MADV_REMOVE);
    size_t i = 0;
    while (i < h->nfree && h->free[i].off < off) i++;
    if (h->nfree == h->cap) {
        size_t cap = h->cap * 2;
        co_shm_heap_range *n = realloc(h->free, cap * sizeof(*n));
        if (!n) { /* the block is lost to this slice, nothing worse */
            if (kept) h->kept -= len;
            return;
        }
        h->free = n;
        h->cap = cap;
    }
    memmove(&h->free[i + 1], &h->free[i], (h->nfree - i) * sizeof(*h->free));
    h->free[i] = (co_shm_heap_range){off, len, kept};
    h->nfree++;
    join_next(h, i);
    if (i > 0) join_next(h, i - 1);
}
