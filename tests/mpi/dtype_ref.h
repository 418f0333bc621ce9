/* Reference type maps for the datatype tests: a plain list of (displacement, length) entries
 * built straight from the definitions in the MPI standard, with no merging or cleverness, so
 * that the library's flattened types can be checked against something independent. A test
 * builds the same layout twice (MPI constructor and reference), then compares sizes, bounds
 * and the bytes Pack/Unpack and messages move. */
#ifndef DTYPE_REF_H
#define DTYPE_REF_H

#include "testutil.h"

typedef struct {
    MPI_Aint disp;
    int len;
} ref_ent;

typedef struct {
    ref_ent *e;
    int n, cap;
    MPI_Aint lb, ub; /* the bounds the standard gives this type */
} ref_map;

static inline MPI_Aint ref_extent(const ref_map *m) {
    return m->ub - m->lb;
}

static inline void ref_push(ref_map *m, MPI_Aint disp, int len) {
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->e = realloc(m->e, (size_t)m->cap * sizeof(ref_ent));
        CHECK(m->e != NULL, "out of memory");
    }
    m->e[m->n].disp = disp;
    m->e[m->n].len = len;
    m->n++;
}

static inline void ref_free(ref_map *m) {
    free(m->e);
    m->e = NULL;
    m->n = m->cap = 0;
}

/* A predefined type: one entry per basic element. */
static inline ref_map ref_basic(int len) {
    ref_map m = {0};
    ref_push(&m, 0, len);
    m.ub = len;
    return m;
}

/* Append n copies of old at disp + j*stride and widen [lo, hi] by the copies' bounds. */
static inline void ref_copies(ref_map *m, const ref_map *old, MPI_Aint disp, int n, MPI_Aint stride,
                              int *any, MPI_Aint *lo, MPI_Aint *hi) {
    for (int j = 0; j < n; j++) {
        MPI_Aint base = disp + (MPI_Aint)j * stride;
        for (int i = 0; i < old->n; i++) ref_push(m, base + old->e[i].disp, old->e[i].len);
        if (!*any || base + old->lb < *lo) *lo = base + old->lb;
        if (!*any || base + old->ub > *hi) *hi = base + old->ub;
        *any = 1;
    }
}

static inline ref_map ref_hvector(int count, int bl, MPI_Aint stride, const ref_map *old) {
    ref_map m = {0};
    int any = 0;
    MPI_Aint lo = 0, hi = 0;
    for (int i = 0; i < count; i++)
        ref_copies(&m, old, (MPI_Aint)i * stride, bl, ref_extent(old), &any, &lo, &hi);
    m.lb = any ? lo : 0;
    m.ub = any ? hi : 0;
    return m;
}

static inline ref_map ref_contiguous(int count, const ref_map *old) {
    return ref_hvector(count, 1, ref_extent(old), old);
}

static inline ref_map ref_vector(int count, int bl, int stride, const ref_map *old) {
    return ref_hvector(count, bl, (MPI_Aint)stride * ref_extent(old), old);
}

static inline ref_map ref_hindexed(int count, const int *bls, const MPI_Aint *disps,
                                   const ref_map *old) {
    ref_map m = {0};
    int any = 0;
    MPI_Aint lo = 0, hi = 0;
    for (int i = 0; i < count; i++)
        ref_copies(&m, old, disps[i], bls[i], ref_extent(old), &any, &lo, &hi);
    m.lb = any ? lo : 0;
    m.ub = any ? hi : 0;
    return m;
}

/* A struct; `align` is the padding unit the caller expects (1: none). */
static inline ref_map ref_struct(int count, const int *bls, const MPI_Aint *disps,
                                 const ref_map *olds, int align) {
    ref_map m = {0};
    int any = 0;
    MPI_Aint lo = 0, hi = 0;
    for (int i = 0; i < count; i++)
        ref_copies(&m, &olds[i], disps[i], bls[i], ref_extent(&olds[i]), &any, &lo, &hi);
    m.lb = any ? lo : 0;
    m.ub = any ? hi : 0;
    MPI_Aint ext = m.ub - m.lb;
    if (ext % align) m.ub += align - ext % align;
    return m;
}

static inline ref_map ref_resized(const ref_map *old, MPI_Aint lb, MPI_Aint extent) {
    ref_map m = {0};
    for (int i = 0; i < old->n; i++) ref_push(&m, old->e[i].disp, old->e[i].len);
    m.lb = lb;
    m.ub = lb + extent;
    return m;
}

/* Every element of the subarray, visited in the order of the array's memory layout. */
static inline ref_map ref_subarray(int ndims, const int *sizes, const int *subs, const int *starts,
                                   int order, const ref_map *old) {
    ref_map m = {0};
    int idx[8] = {0};
    MPI_Aint ext = ref_extent(old), total = ext;
    for (int d = 0; d < ndims; d++) total *= sizes[d];
    for (;;) {
        MPI_Aint off = 0, mul = ext;
        for (int k = 0; k < ndims; k++) { /* k-th fastest dimension */
            int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
            off += (MPI_Aint)(starts[d] + idx[d]) * mul;
            mul *= sizes[d];
        }
        for (int i = 0; i < old->n; i++) ref_push(&m, off + old->e[i].disp, old->e[i].len);
        int k = 0; /* advance the fastest dimension first */
        for (; k < ndims; k++) {
            int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
            if (++idx[d] < subs[d]) break;
            idx[d] = 0;
        }
        if (k == ndims) break;
    }
    m.lb = 0;
    m.ub = total;
    return m;
}

/* MPI_Type_create_darray for process `rank` of the row-major grid `psizes`: every element of
 * the global array in storage order whose index in each dimension d falls in a block that
 * the deal gives to the process's coordinate in d ((index / block) % psize); blocks of
 * ceil(gsize/psize) for a default block distribution, the darg when given, 1 for a default
 * cyclic one, the whole dimension when it is not distributed. lb 0, extent the whole array. */
static inline ref_map ref_darray(int rank, int ndims, const int *gsizes, const int *distribs,
                                 const int *dargs, const int *psizes, int order,
                                 const ref_map *old) {
    ref_map m = {0};
    int idx[8] = {0}, coord[8], bs[8];
    for (int d = ndims - 1, r = rank; d >= 0; d--) {
        coord[d] = r % psizes[d];
        r /= psizes[d];
        if (distribs[d] == MPI_DISTRIBUTE_NONE)
            bs[d] = gsizes[d];
        else if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG)
            bs[d] = dargs[d];
        else if (distribs[d] == MPI_DISTRIBUTE_BLOCK)
            bs[d] = (gsizes[d] + psizes[d] - 1) / psizes[d];
        else
            bs[d] = 1;
    }
    MPI_Aint ext = ref_extent(old), total = ext;
    for (int d = 0; d < ndims; d++) total *= gsizes[d];
    for (;;) {
        int mine = 1;
        MPI_Aint off = 0, mul = ext;
        for (int k = 0; k < ndims; k++) {
            int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
            mine &= (idx[d] / bs[d]) % psizes[d] == coord[d];
            off += (MPI_Aint)idx[d] * mul;
            mul *= gsizes[d];
        }
        if (mine)
            for (int i = 0; i < old->n; i++) ref_push(&m, off + old->e[i].disp, old->e[i].len);
        int done = 1; /* the fastest dimension first: storage order, as in the type */
        for (int k = 0; k < ndims && done; k++) {
            int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
            if (++idx[d] < gsizes[d])
                done = 0;
            else
                idx[d] = 0;
        }
        if (done) break;
    }
    m.lb = 0;
    m.ub = total;
    return m;
}

static inline size_t ref_size(const ref_map *m) {
    size_t s = 0;
    for (int i = 0; i < m->n; i++) s += (size_t)m->e[i].len;
    return s;
}

static inline void ref_true(const ref_map *m, MPI_Aint *tlb, MPI_Aint *text) {
    MPI_Aint lo = 0, hi = 0;
    for (int i = 0; i < m->n; i++) {
        if (i == 0 || m->e[i].disp < lo) lo = m->e[i].disp;
        if (i == 0 || m->e[i].disp + m->e[i].len > hi) hi = m->e[i].disp + m->e[i].len;
    }
    *tlb = lo;
    *text = hi - lo;
}

/* Gather the bytes of `count` elements of m from base (the reference Pack). */
static inline void ref_pack(const ref_map *m, int count, const char *base, char *out) {
    for (int c = 0; c < count; c++)
        for (int i = 0; i < m->n; i++) {
            memcpy(out, base + (MPI_Aint)c * ref_extent(m) + m->e[i].disp, (size_t)m->e[i].len);
            out += m->e[i].len;
        }
}

/* Lowest and highest byte offsets (relative to base) that `count` elements touch. */
static inline void ref_span(const ref_map *m, int count, MPI_Aint *lo, MPI_Aint *hi) {
    MPI_Aint tlb, text;
    ref_true(m, &tlb, &text);
    MPI_Aint s = (MPI_Aint)(count > 0 ? count - 1 : 0) * ref_extent(m);
    *lo = tlb + (s < 0 ? s : 0);
    *hi = tlb + text + (s > 0 ? s : 0);
}

#endif
