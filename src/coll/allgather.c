/* MPI_Allgather: ring (N-1 steps straight between the users' buffers), Bruck (ceil(log2 N)
 * steps on a packed copy; small blocks), gather + bcast; and, through Allgatherv's code with
 * uniform counts, shared memory (each rank copies its block into its shared buffers, in
 * pieces, and everyone copies every block out), single copy and linear. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_allgather_algs[] = {
    {"ring", 0, "N-1 steps; each passes one block to the right neighbour"},
    {"bruck", 0, "ceil(log2 N) steps doubling the blocks held (small blocks)"},
    {"gather_bcast", 0, "gather to rank 0, then broadcast the whole result"},
    {"shm", CO_ALG_SHM, "each rank copies its block into its shared buffer; all copy out"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers"},
    {"linear", 0, "every send and receive posted at once (point-to-point)"},
};
CO_ALG_TABLE_CHECK(co_allgather_algs, CO_ALLGATHER_NALGS);

static int allgather_ring(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                          co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    size_t rext = (size_t)co_dt_extent(rdt) * rcount;
    if (sbuf != MPI_IN_PLACE)
        rc = co_coll_copy(sbuf, scount, sdt, (char *)rbuf + rext * (size_t)me, rcount, rdt);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    /* after a short block (a rank's count is smaller) the blocks go on empty, so that every
     * rank after this one reports it too instead of receiving a full block from it */
    int shortfall = 0;
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        int r =
            co_sendrecv((char *)rbuf + rext * (size_t)sb, shortfall ? 0 : rcount, rdt, right,
                        co_coll_tag(c, CO_TAG_ALLGATHER), (char *)rbuf + rext * (size_t)rb, rcount,
                        rdt, left, co_coll_tag(c, CO_TAG_ALLGATHER), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
        shortfall |= r == MPI_ERR_COUNT;
    }
    return rc;
}

static int allgather_bruck(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                           size_t rcount, co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    size_t bb = rcount * rdt->size, rext = (size_t)co_dt_extent(rdt) * rcount;
    char *tmp = co_coll_alloc((size_t)n * bb);
    if (!tmp) return MPI_ERR_NO_MEM;
    if (sbuf == MPI_IN_PLACE)
        co_dt_pack(rdt, rcount, (char *)rbuf + rext * (size_t)me, 0, tmp, bb);
    else {
        if (scount * sdt->size > bb) rc = MPI_ERR_TRUNCATE;
        co_dt_pack(sdt, scount, sbuf, 0, tmp, CO_MIN(bb, scount * sdt->size));
    }
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int shortfall = 0; /* as in the ring: short blocks are passed on empty */
    for (int dist = 1; dist < n; dist <<= 1) {
        size_t nb = (size_t)CO_MIN(dist, n - dist);
        int r =
            co_sendrecv(tmp, shortfall ? 0 : nb * bb, byte, (me - dist + n) % n,
                        co_coll_tag(c, CO_TAG_ALLGATHER), tmp + (size_t)dist * bb, nb * bb, byte,
                        (me + dist) % n, co_coll_tag(c, CO_TAG_ALLGATHER), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
        shortfall |= r == MPI_ERR_COUNT;
    }
    for (int j = 0; j < n; j++) {
        int q = (me + j) % n;
        if (q == me && sbuf == MPI_IN_PLACE) continue;
        co_dt_unpack(rdt, rcount, (char *)rbuf + rext * (size_t)q, 0, tmp + (size_t)j * bb, bb);
    }
    co_coll_free(tmp);
    return rc;
}

int co_allgather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                 co_dtype *rdt, co_comm *c) {
    int n = c->size;
    size_t bb = rcount * rdt->size;
    if (co_coll_unwatched())
        return co_coll_layer_move(c, CO_COLL_ALLGATHER, -1, sbuf, scount, sdt, rbuf, rcount, rdt,
                                  bb);
    if (n == 1) {
        if (sbuf == MPI_IN_PLACE) return MPI_SUCCESS;
        return co_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    }
    if (bb == 0) return MPI_SUCCESS;
    int alg = co_coll_pick(c, CO_COLL_ALLGATHER, bb, NULL, NULL);
    if (alg == CO_ALLGATHER_SHM || alg == CO_ALLGATHER_CMA || alg == CO_ALLGATHER_LINEAR)
        alg = co_coll_uniform_alg(c, CO_COLL_ALLGATHER, alg, bb, CO_ALLGATHER_RING);
    switch (alg) {
    case CO_ALLGATHER_BRUCK: return allgather_bruck(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    case CO_ALLGATHER_SHM:
    case CO_ALLGATHER_CMA:
    case CO_ALLGATHER_LINEAR: {
        int stack[128], *displs, *counts = co_coll_uniform(n, rcount, stack, &displs);
        int rc = alg == CO_ALLGATHER_SHM
                     ? co_allgatherv_shm(sbuf, scount, sdt, rbuf, counts, displs, rdt, c)
                 : alg == CO_ALLGATHER_CMA
                     ? co_cma_allgatherv(sbuf, scount, sdt, rbuf, counts, displs, rdt, c)
                     : co_allgatherv_linear(sbuf, scount, sdt, rbuf, counts, displs, rdt, c);
        if (counts != stack) co_coll_free(counts);
        return rc;
    }
    case CO_ALLGATHER_GATHER_BCAST: {
        size_t rext = (size_t)co_dt_extent(rdt) * rcount;
        const void *s = sbuf;
        size_t sc = scount;
        co_dtype *st = sdt;
        if (sbuf == MPI_IN_PLACE && c->rank != 0) {
            s = (char *)rbuf + rext * (size_t)c->rank;
            sc = rcount;
            st = rdt;
        }
        int rc = co_gather(s, sc, st, rbuf, rcount, rdt, 0, c);
        /* a root that gathered a short block broadcasts one element less, so that every rank
         * reports it */
        size_t all = rcount * (size_t)n;
        int r = co_bcast(rbuf, c->rank == 0 && rc == MPI_ERR_COUNT ? all - 1 : all, rdt, 0, c);
        return rc ? rc : r;
    }
    default: return allgather_ring(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    }
}
