/* Hash map of 64-bit keys (see u64map.h). */
#include "u64map.h"

#include "../core/cohort.h"

#include <stdlib.h>
#include <string.h>

static inline size_t slot_of(const co_u64map *m, uint64_t key) {
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1);
}

uint64_t *co_u64map_get(const co_u64map *m, uint64_t key) {
    if (!m->n) return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) return &m->vals[i];
        if (!m->keys[i]) return NULL;
    }
}

static void rehash(co_u64map *m, size_t cap) {
    co_u64map n = {calloc(cap, sizeof(uint64_t)), malloc(cap * sizeof(uint64_t)), cap, 0};
    if (!n.keys || !n.vals) co_fatal("out of memory growing a communicator index");
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) co_u64map_put(&n, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = n;
}

void co_u64map_put(co_u64map *m, uint64_t key, uint64_t val) {
    if ((m->n + 1) * 4 > m->cap * 3) rehash(m, m->cap ? m->cap * 2 : 64);
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return;
        }
        if (!m->keys[i]) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->n++;
            return;
        }
    }
}

int co_u64map_del(co_u64map *m, uint64_t key) {
    if (!m->n) return 0;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    while (m->keys[i] != key) {
        if (!m->keys[i]) return 0;
        i = (i + 1) & mask;
    }
    /* Backward shift: move later members of the probe run into the hole when their home
     * slot does not lie (cyclically) between the hole and their position. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->keys[j]);
        int movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = 0;
    m->n--;
    return 1;
}

void co_u64map_clear(co_u64map *m) {
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}
