/* Sets of communicator IDs, as a pool holds them: a sorted array of disjoint, coalesced ranges
 * plus a stack of single IDs that came back one at a time. Single IDs are taken again first
 * (last in, first out), so a program that creates and frees communicators in a loop keeps
 * reusing the same few IDs and never touches the range array; the stack is merged into the
 * ranges only when a long run or a compact description is needed (normalising). */
#ifndef CO_IDSET_H
#define CO_IDSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct co_idrange {
    uint64_t lo, hi; /* [lo, hi) */
} co_idrange;

typedef struct co_idset {
    co_idrange *r; /* sorted, disjoint, never adjacent */
    size_t nr, capr;
    uint64_t *loose; /* single IDs, not in r */
    size_t nl, capl;
    uint64_t count; /* IDs in the set */
    /* Every range before r[fit_from] is shorter than fit_len IDs: co_idset_take_run starts its
     * search there, so a set fragmented into many short ranges (the IDs a split or create
     * reserved and did not use) does not make every later run cost a walk over all of them. */
    size_t fit_from;
    uint64_t fit_len;
} co_idset;

void co_idset_clear(co_idset *s); /* releases memory; the set is empty afterwards */
void co_idset_put(co_idset *s, uint64_t id);
void co_idset_put_range(co_idset *s, uint64_t lo, uint64_t hi);
/* One ID (the most recently returned single ID, else the lowest); 0 if empty. */
uint64_t co_idset_take1(co_idset *s);
/* n consecutive IDs; the first of them, or 0 if no run that long exists. */
uint64_t co_idset_take_run(co_idset *s, uint64_t n);
/* Up to n IDs described by at most maxr ranges, lowest first; returns the number of ranges
 * written to out and the number of IDs they hold in *got. */
size_t co_idset_take_ranges(co_idset *s, uint64_t n, co_idrange *out, size_t maxr, uint64_t *got);
/* Merge the single IDs into the ranges (the set stays the same). */
void co_idset_normalize(co_idset *s);
int co_idset_contains(co_idset *s, uint64_t id);

#endif /* CO_IDSET_H */
