/* Allocator for a rank's slice of the job segment's shared heap (co_seg_heap). Only the
 * owning rank allocates from its slice, so the bookkeeping is private to that process; other
 * ranks learn offsets from the owner and address the bytes through their own mapping. Blocks
 * are page-aligned so that freeing one can hand its memory back to the kernel; freed blocks
 * keep their pages up to an eighth of the slice, for the next blocks. */
#ifndef CO_SHM_HEAP_H
#define CO_SHM_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct co_shm_heap_range {
    uint64_t off, len;
    int kept; /* the range's pages are still there (else given back) */
} co_shm_heap_range;

typedef struct co_shm_heap {
    char *base; /* start of the slice in this process's mapping */
    uint64_t size;
    co_shm_heap_range *free; /* sorted by offset; touching ones differ in `kept` */
    size_t nfree, cap;
    uint64_t kept, keep; /* bytes of the free ranges whose pages are kept; most kept */
} co_shm_heap;

#define CO_SHM_HEAP_FAIL UINT64_MAX

int co_shm_heap_init(co_shm_heap *h, char *base, uint64_t size);
void co_shm_heap_fini(co_shm_heap *h);
/* Offset of a block of at least `len` bytes (page-aligned), or CO_SHM_HEAP_FAIL. */
uint64_t co_shm_heap_alloc(co_shm_heap *h, uint64_t len);
/* Return a block. Its pages stay while the kept ranges stay within `keep` (the next block
 * from them holds what was there), else go back to the kernel (the next user sees zeros). */
void co_shm_heap_free(co_shm_heap *h, uint64_t off, uint64_t len);

#endif /* CO_SHM_HEAP_H */
