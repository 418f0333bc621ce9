/* A hash map from nonzero 64-bit keys to 64-bit values (open addressing, linear probing,
 * deletion by backward shift, so no tombstones build up in create/free loops). Used for the
 * ID pools' indexes: pools by serial, leases by communicator ID, borrowers by (rank, serial). */
#ifndef CO_U64MAP_H
#define CO_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct co_u64map {
    uint64_t *keys; /* 0: empty slot */
    uint64_t *vals;
    size_t cap, n; /* cap is a power of two (or 0) */
} co_u64map;

uint64_t *co_u64map_get(const co_u64map *m, uint64_t key); /* NULL if absent */
void co_u64map_put(co_u64map *m, uint64_t key, uint64_t val);
int co_u64map_del(co_u64map *m, uint64_t key); /* 1 if it was there */
void co_u64map_clear(co_u64map *m);

#endif /* CO_U64MAP_H */
