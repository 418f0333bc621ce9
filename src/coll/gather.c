/* MPI_Gather: linear (the root receives from everyone at once), binomial tree (blocks travel
 * packed up the tree; few, larger messages), and shared memory (each rank copies its block
 * into its own shared buffer, in pieces; the root copies all out). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_gather_algs[] = {
    {"linear", 0, "the root posts a receive from every rank"},
    {"binomial", 0, "binomial tree; inner ranks forward their subtree's blocks packed"},
    {"shm", CO_ALG_SHM, "each rank copies its block into its shared buffer; the root copies out"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks written straight into the root's buffer (process_vm_writev, all senders at "
     "once), small ones through the shared buffers"},
};
CO_ALG_TABLE_CHECK(co_gather_algs, CO_GATHER_NALGS);

static int gather_linear(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                         co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    if (me != root)
        return co_send(sbuf, scount, sdt, root, co_coll_tag(c, CO_TAG_GATHER), c, co_coll_ctx(c));
    co_req *stack[16];
    co_req **reqs = n <= 16 ? stack : co_coll_zalloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    size_t ext = (size_t)co_dt_extent(rdt) * rcount;
    for (int i = 0; i < n; i++) {
        reqs[i] = NULL;
        if (i == me) continue;
        int r = co_irecv((char *)rbuf + ext * (size_t)i, rcount, rdt, i,
                         co_coll_tag(c, CO_TAG_GATHER), c, co_coll_ctx(c), &reqs[i]);
        if (r && !rc) rc = r;
    }
    if (sbuf != MPI_IN_PLACE) {
        int r = co_coll_copy(sbuf, scount, sdt, (char *)rbuf + ext * (size_t)me, rcount, rdt);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(n, reqs);
    if (r && !rc) rc = r;
    if (reqs != stack) co_coll_free(reqs);
    return rc;
}

static int gather_binomial(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                           size_t rcount, co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    int rel = (me - root + n) % n;
    size_t bb = me == root ? rcount * rdt->size : scount * sdt->size;
    size_t rext = (size_t)co_dt_extent(rdt) * rcount;
    int low = rel ? rel & -rel : n; /* my subtree: relative ranks [rel, rel + sub) */
    int sub = CO_MIN(low, n - rel);
    char *tmp = co_coll_alloc((size_t)sub * bb);
    if (!tmp) return MPI_ERR_NO_MEM;
    if (me == root && sbuf == MPI_IN_PLACE)
        co_dt_pack(rdt, rcount, (char *)rbuf + rext * (size_t)me, 0, tmp, bb);
    else
        co_dt_pack(sdt, scount, sbuf, 0, tmp, CO_MIN(bb, scount * sdt->size));
    co_dtype *byte = co_dt_get(MPI_BYTE);
    co_req *reqs[32];
    int nr = 0;
    for (int mask = 1; mask < low && rel + mask < n; mask <<= 1) {
        int child = rel + mask;
        size_t cb = (size_t)CO_MIN(mask, n - child) * bb;
        int r = co_irecv(tmp + (size_t)mask * bb, cb, byte, (child + root) % n,
                         co_coll_tag(c, CO_TAG_GATHER), c, co_coll_ctx(c), &reqs[nr++]);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(nr, reqs);
    if (r && !rc) rc = r;
    if (rel) {
        /* a child's short message (its count is smaller) goes on empty, so that the root
         * reports it too */
        size_t up = r == MPI_ERR_COUNT ? 0 : (size_t)sub * bb;
        r = co_send(tmp, up, byte, (rel - low + root) % n, co_coll_tag(c, CO_TAG_GATHER), c,
                    co_coll_ctx(c));
        if (r && !rc) rc = r;
    } else {
        for (int j = 0; j < n; j++) {
            int q = (j + root) % n;
            if (q == me && sbuf == MPI_IN_PLACE) continue;
            co_dt_unpack(rdt, rcount, (char *)rbuf + rext * (size_t)q, 0, tmp + (size_t)j * bb, bb);
        }
    }
    co_coll_free(tmp);
    return rc;
}

/* Round k: every rank but the root packs bytes [k*C, (k+1)*C) of its block into its buffer
 * k % NBUF and publishes it as step h+2 (it has nothing else to do in the round); the root
 * copies each out, then posts h+2. */
static int gather_shm(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                      co_dtype *rdt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int me = s->me, rc = MPI_SUCCESS;
    size_t bb = me == root ? rcount * rdt->size : scount * sdt->size, C = co_cshm_cap(s);
    size_t rext = (size_t)co_dt_extent(rdt) * rcount;
    size_t rounds = (bb + C - 1) / C;
    uint64_t g = s->seq;
    for (size_t k = 0; k < rounds; k++) {
        uint64_t h = g + 2 * k;
        unsigned b = (unsigned)((g + k) % CO_CSHM_NBUF); /* consecutive collectives rotate */
        size_t off = k * C, len = CO_MIN(C, bb - off);
        if (me != root) {
            char *d = co_cshm_acquire(s, b);
            co_dt_pack(sdt, scount, sbuf, off, d, len);
            co_cshm_publish(s, b, h + 2, bb, h + 2);
            continue;
        }
        co_cshm_unpack_each(s, b, h + 1, 0, rbuf, rcount, rdt, off, len, bb, &rc);
        co_cshm_post(s, h + 2);
    }
    if (me == root && sbuf != MPI_IN_PLACE) {
        int r = co_coll_copy(sbuf, scount, sdt, (char *)rbuf + rext * (size_t)me, rcount, rdt);
        if (r) rc = r;
    }
    s->seq = g + 2 * rounds;
    return rc;
}

int co_gather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
              co_dtype *rdt, int root, co_comm *c) {
    int me = c->rank;
    size_t bb = me == root ? rcount * rdt->size : scount * sdt->size;
    if (co_coll_unwatched())
        return co_coll_layer_move(c, CO_COLL_GATHER, root, sbuf, scount, sdt, rbuf, rcount, rdt,
                                  bb);
    if (c->size == 1) {
        if (sbuf == MPI_IN_PLACE) return MPI_SUCCESS;
        return co_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    }
    if (bb == 0) return MPI_SUCCESS;
    int alg = co_coll_pick(c, CO_COLL_GATHER, bb, NULL, NULL);
    if (alg == CO_GATHER_CMA)
        alg = co_coll_uniform_alg(c, CO_COLL_GATHER, alg, bb, CO_GATHER_LINEAR);
    switch (alg) {
    case CO_GATHER_BINOMIAL: return gather_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    case CO_GATHER_SHM: return gather_shm(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    case CO_GATHER_CMA: {
        int stack[128], *displs, *counts = co_coll_uniform(c->size, rcount, stack, &displs);
        int rc = co_cma_gatherv(sbuf, scount, sdt, rbuf, counts, displs, rdt, root, c);
        if (counts != stack) co_coll_free(counts);
        return rc;
    }
    default: return gather_linear(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    }
}
