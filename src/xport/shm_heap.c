/* First-fit allocator over a heap slice (see shm_heap.h). Slices hold a handful of blocks
 * (one per communicator that uses shared-memory collectives), so a sorted array of free
 * ranges is all it needs. */
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
    h->cap = 16;
    h->free = malloc(h->cap * sizeof(*h->free));
    if (!h->free) return -1;
    if (h->size) h->free[h->nfree++] = (co_shm_heap_range){0, h->size};
    return 0;
}

void co_shm_heap_fini(co_shm_heap *h) {
    free(h->free);
    memset(h, 0, sizeof(*h));
}

uint64_t co_shm_heap_alloc(co_shm_heap *h, uint64_t len) {
    len = page_round(len ? len : 1);
    for (size_t i = 0; i < h->nfree; i++) {
        co_shm_heap_range *r = &h->free[i];
        if (r->len < len) continue;
        uint64_t off = r->off;
        r->off += len;
        r->len -= len;
        if (!r->len) {
            memmove(r, r + 1, (h->nfree - i - 1) * sizeof(*r));
            h->nfree--;
        }
        return off;
    }
    return CO_SHM_HEAP_FAIL;
}

void co_shm_heap_free(co_shm_heap *h, uint64_t off, uint64_t len) {
    len = page_round(len ? len : 1);
    /* The pages are shmem: MADV_REMOVE frees them (the slice stays sparse). */
    madvise(h->base + off, len, MADV_REMOVE);
    size_t i = 0;
    while (i < h->nfree && h->free[i].off < off) i++;
    int merge_prev = i > 0 && h->free[i - 1].off + h->free[i - 1].len == off;
    int merge_next = i < h->nfree && off + len == h->free[i].off;
    if (merge_prev && merge_next) {
        h->free[i - 1].len += len + h->free[i].len;
        memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof(*h->free));
        h->nfree--;
    } else if (merge_prev) {
        h->free[i - 1].len += len;
    } else if (merge_next) {
        h->free[i].off = off;
        h->free[i].len += len;
    } else {
        if (h->nfree == h->cap) {
            size_t cap = h->cap * 2;
            co_shm_heap_range *n = realloc(h->free, cap * sizeof(*n));
            if (!n) return; /* the block is lost to this slice, nothing worse */
            h->free = n;
            h->cap = cap;
        }
        memmove(&h->free[i + 1], &h->free[i], (h->nfree - i) * sizeof(*h->free));
        h->free[i] = (co_shm_heap_range){off, len};
        h->nfree++;
    }
}
