/* MPI_Allgatherv: ring (N-1 steps between the users' buffers), gatherv + broadcast of the
 * packed blocks, shared memory (as Allgather, with rounds enough for the largest block),
 * single copy (cma.c) and linear (all point-to-point transfers at once). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_allgatherv_algs[] = {
    {"ring", 0, "N-1 steps; each passes one block to the right neighbour"},
    {"gatherv_bcast", 0, "gatherv to rank 0, then a broadcast of all blocks packed"},
    {"shm", CO_ALG_SHM, "each rank copies its block into its shared buffer; all copy out"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers"},
    {"linear", 0, "every send and receive posted at once (point-to-point)"},
};
CO_ALG_TABLE_CHECK(co_allgatherv_algs, CO_ALLGATHERV_NALGS);

static int allgatherv_ring(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                           const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(rdt);
#define BLK(i) ((char *)rbuf + (MPI_Aint)displs[i] * ext)
    if (sbuf != MPI_IN_PLACE)
        rc = co_coll_copy(sbuf, scount, sdt, BLK(me), (size_t)rcounts[me], rdt);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    int shortfall = 0; /* after a short block the blocks go on empty (allgather.c's ring) */
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        int r = co_sendrecv(BLK(sb), shortfall ? 0 : (size_t)rcounts[sb], rdt, right,
                            co_coll_tag(c, CO_TAG_ALLGATHER), BLK(rb), (size_t)rcounts[rb], rdt,
                            left, co_coll_tag(c, CO_TAG_ALLGATHER), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
        shortfall |= r == MPI_ERR_COUNT;
    }
    return rc;
}

static int allgatherv_gatherv_bcast(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                                    const int *rcounts, const int *displs, co_dtype *rdt,
                                    co_comm *c) {
    int n = c->size, me = c->rank, rc;
    MPI_Aint ext = co_dt_extent(rdt);
    const void *s = sbuf;
    size_t sc = scount;
    co_dtype *st = sdt;
    if (sbuf == MPI_IN_PLACE && me != 0) {
        s = BLK(me);
        sc = (size_t)rcounts[me];
        st = rdt;
    }
    rc = co_gatherv(s, sc, st, rbuf, rcounts, displs, rdt, 0, c);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (size_t)rcounts[i] * rdt->size;
    if (total == 0) return rc;
    char *tmp = co_coll_alloc(total);
    if (!tmp) return MPI_ERR_NO_MEM;
    size_t off = 0;
    if (me == 0)
        for (int i = 0; i < n; i++) {
            co_dt_pack(rdt, (size_t)rcounts[i], BLK(i), 0, tmp + off,
                       (size_t)rcounts[i] * rdt->size);
            off += (size_t)rcounts[i] * rdt->size;
        }
    /* a root that gathered a short block broadcasts a byte less, so that every rank reports
     * it */
    int r = co_bcast(tmp, me == 0 && rc == MPI_ERR_COUNT ? total - 1 : total, co_dt_get(MPI_BYTE),
                     0, c);
    if (r && !rc) rc = r;
    off = 0;
    if (me != 0)
        for (int i = 0; i < n; i++) {
            co_dt_unpack(rdt, (size_t)rcounts[i], BLK(i), 0, tmp + off,
                         (size_t)rcounts[i] * rdt->size);
            off += (size_t)rcounts[i] * rdt->size;
        }
    co_coll_free(tmp);
    return rc;
}

/* Rounds as wide as all NBUF buffers: in round j every rank packs up to NBUF pieces of its
 * block into its buffers (step h+1), then copies the same pieces of every other block out
 * (h+2). Also Allgather's "shm" (uniform counts). */
int co_allgatherv_shm(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(rdt);
    size_t C = co_cshm_cap(s), W = C * CO_CSHM_NBUF, maxb = 0;
    for (int i = 0; i < n; i++) maxb = CO_MAX(maxb, (size_t)rcounts[i] * rdt->size);
    size_t rounds = (maxb + W - 1) / W;
    size_t mb = (size_t)rcounts[me] * rdt->size;
    uint64_t g = s->seq;
    for (size_t j = 0; j < rounds; j++) {
        uint64_t h = g + 2 * j;
        for (size_t k = 0; k < CO_CSHM_NBUF && j * W + k * C < mb; k++) {
            size_t off = j * W + k * C;
            char *d = co_cshm_acquire(s, (unsigned)((g + k) % CO_CSHM_NBUF));
            if (sbuf == MPI_IN_PLACE)
                co_dt_pack(rdt, (size_t)rcounts[me], BLK(me), off, d, CO_MIN(C, mb - off));
            else
                co_dt_pack(sdt, scount, sbuf, off, d, CO_MIN(C, mb - off));
            co_cshm_publish(s, (unsigned)((g + k) % CO_CSHM_NBUF), h + 1,
                            sbuf == MPI_IN_PLACE ? mb : scount * sdt->size, h + 2);
        }
        for (size_t k = 0; k < CO_CSHM_NBUF && j * W + k * C < maxb; k++) {
            size_t off = j * W + k * C;
            unsigned b = (unsigned)((g + k) % CO_CSHM_NBUF); /* consecutive collectives rotate */
            co_cshm_iter it;
            co_cshm_iter_init(&it, s);
            for (int q = 0; q < n; q++)
                if (off >= (size_t)rcounts[q] * rdt->size) it.done[q] = 1;
            CO_CSHM_EACH_READY(s, &it, b, h + 1, q) {
                size_t qb = (size_t)rcounts[q] * rdt->size;
                uint64_t wb;
                const char *qd = co_cshm_read(s, q, b, h + 1, &wb);
                if (!rc) rc = co_coll_sizes(wb, qb);
                co_dt_unpack(rdt, (size_t)rcounts[q], BLK(q), off, qd, CO_MIN(C, qb - off));
            }
            co_cshm_iter_fini(&it);
        }
        co_cshm_post(s, h + 2);
    }
    if (sbuf != MPI_IN_PLACE) {
        int r = co_coll_copy(sbuf, scount, sdt, BLK(me), (size_t)rcounts[me], rdt);
        if (r) rc = r;
    }
    s->seq = g + 2 * rounds;
    return rc;
}

/* Every send and receive posted at once; large blocks then move by the point-to-point single
 * copy, shared with the sender or not (co_coll_linear_mode). */
int co_allgatherv_linear(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                         const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(rdt);
    co_req *stack[32] = {NULL}; /* [k]: receive from me-k, [n+k]: send to me+k; 0, n unused */
    co_req **reqs = 2 * n <= 32 ? stack : co_coll_zalloc(2 * (size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    const void *s = sbuf;
    size_t sc = scount;
    co_dtype *st = sdt;
    if (sbuf == MPI_IN_PLACE) {
        s = BLK(me);
        sc = (size_t)rcounts[me];
        st = rdt;
    }
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n, to = (me + k) % n;
        int r = co_irecv(BLK(from), (size_t)rcounts[from], rdt, from,
                         co_coll_tag(c, CO_TAG_ALLGATHER), c, co_coll_ctx(c), &reqs[k]);
        if (r && !rc) rc = r;
        r = co_isend(s, sc, st, to, co_coll_tag(c, CO_TAG_ALLGATHER), c, co_coll_ctx(c),
                     co_coll_linear_mode(c), &reqs[n + k]);
        if (r && !rc) rc = r;
    }
    if (sbuf != MPI_IN_PLACE) {
        int r = co_coll_copy(sbuf, scount, sdt, BLK(me), (size_t)rcounts[me], rdt);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(2 * n, reqs);
    if (r && !rc) rc = r;
    if (reqs != stack) co_coll_free(reqs);
    return rc;
}
#undef BLK

int co_allgatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
                  const int *displs, co_dtype *rdt, co_comm *c) {
    int n = c->size;
    if (n == 1) {
        if (sbuf == MPI_IN_PLACE) return MPI_SUCCESS;
        return co_coll_copy(sbuf, scount, sdt,
                            (char *)rbuf + (MPI_Aint)displs[0] * co_dt_extent(rdt),
                            (size_t)rcounts[0], rdt);
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (size_t)rcounts[i];
    if (total * rdt->size == 0) return MPI_SUCCESS;
    switch (co_coll_pick(c, CO_COLL_ALLGATHERV, total * rdt->size / (size_t)n, NULL, NULL)) {
    case CO_ALLGATHERV_GATHERV_BCAST:
        return allgatherv_gatherv_bcast(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    case CO_ALLGATHERV_CMA:
        return co_cma_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    case CO_ALLGATHERV_SHM:
        return co_allgatherv_shm(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    case CO_ALLGATHERV_LINEAR:
        return co_allgatherv_linear(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    default: return allgatherv_ring(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    }
}
