/* MPI_Scatter: linear (the root sends to everyone at once), binomial tree (subtrees' blocks
 * travel packed down the tree) and shared memory (the root copies every block, in pieces,
 * into its shared buffers; each rank copies its own out). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_scatter_algs[] = {
    {"linear", 0, "the root posts a send to every rank"},
    {"binomial", 0, "binomial tree; inner ranks forward their subtree's blocks packed"},
    {"shm", CO_ALG_SHM | CO_ALG_SLOTS,
     "the root copies the blocks into its shared buffers; each rank copies its own out"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers"},
};
CO_ALG_TABLE_CHECK(co_scatter_algs, CO_SCATTER_NALGS);

static int scatter_linear(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                          co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    if (me != root)
        return co_recv(rbuf, rcount, rdt, root, co_coll_tag(c, CO_TAG_SCATTER), c, co_coll_ctx(c),
                       NULL);
    co_req *stack[16];
    co_req **reqs = n <= 16 ? stack : co_coll_zalloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    size_t ext = (size_t)co_dt_extent(sdt) * scount;
    for (int k = 1; k <= n; k++) {
        int i = (me + k) % n;
        reqs[i] = NULL;
        if (i == me) continue;
        int r = co_isend((const char *)sbuf + ext * (size_t)i, scount, sdt, i,
                         co_coll_tag(c, CO_TAG_SCATTER), c, co_coll_ctx(c), CO_MODE_STD, &reqs[i]);
        if (r && !rc) rc = r;
    }
    if (rbuf != MPI_IN_PLACE) {
        int r = co_coll_copy((const char *)sbuf + ext * (size_t)me, scount, sdt, rbuf, rcount, rdt);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(n, reqs);
    if (r && !rc) rc = r;
    if (reqs != stack) co_coll_free(reqs);
    return rc;
}

static int scatter_binomial(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                            size_t rcount, co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    int rel = (me - root + n) % n;
    size_t bb = me == root ? scount * sdt->size : rcount * rdt->size;
    size_t sext = (size_t)co_dt_extent(sdt) * scount;
    int low = rel ? rel & -rel : n;
    int sub = CO_MIN(low, n - rel);
    char *tmp = co_coll_alloc((size_t)sub * bb);
    if (!tmp) return MPI_ERR_NO_MEM;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    if (rel == 0) {
        for (int j = 0; j < n; j++)
            co_dt_pack(sdt, scount, (const char *)sbuf + sext * (size_t)((j + root) % n), 0,
                       tmp + (size_t)j * bb, bb);
    } else {
        rc = co_recv(tmp, (size_t)sub * bb, byte, (rel - low + root) % n,
                     co_coll_tag(c, CO_TAG_SCATTER), c, co_coll_ctx(c), NULL);
    }
    co_req *reqs[32];
    int nr = 0;
    /* a short message (the root's blocks are smaller) goes on empty, so that the ranks below
     * report it too */
    int shortfall = rc == MPI_ERR_COUNT;
    for (int mask = 1; mask < low && rel + mask < n; mask <<= 1) {
        int child = rel + mask;
        size_t cb = shortfall ? 0 : (size_t)CO_MIN(mask, n - child) * bb;
        int r =
            co_isend(tmp + (size_t)mask * bb, cb, byte, (child + root) % n,
                     co_coll_tag(c, CO_TAG_SCATTER), c, co_coll_ctx(c), CO_MODE_STD, &reqs[nr++]);
        if (r && !rc) rc = r;
    }
    if (!(rel == 0 && rbuf == MPI_IN_PLACE)) {
        size_t have = CO_MIN(bb, rcount * rdt->size);
        if (bb > rcount * rdt->size && !rc) rc = MPI_ERR_TRUNCATE;
        co_dt_unpack(rdt, rcount, rbuf, 0, tmp, have);
    }
    int r = co_coll_waitall(nr, reqs);
    if (r && !rc) rc = r;
    co_coll_free(tmp);
    return rc;
}

/* Round k: the root packs bytes [k*Cb, (k+1)*Cb) of every block into its buffer k % NBUF
 * (block q at q*Cb) and publishes it as step h+2; a rank copies its piece out, then posts
 * h+2. Blocks that all fit in the cache line of the buffer's header, which the readers poll
 * anyway, lie back to back there instead (block q at q*bb): one line transfer then brings a
 * reader its block (2 ranks, 1-16 bytes: 0.22 to 0.19 µs). Packing larger blocks back to
 * back was slower (256 bytes: 10%). */
static int scatter_shm(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                       co_dtype *rdt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    size_t bb = me == root ? scount * sdt->size : rcount * rdt->size;
    size_t Cb = co_cshm_cap(s) / (size_t)n & ~(size_t)63;
    size_t sext = (size_t)co_dt_extent(sdt) * scount;
    size_t rounds = (bb + Cb - 1) / Cb;
    size_t stride = (size_t)n * bb <= CO_CACHELINE - CO_CSHM_HDR ? bb : Cb;
    uint64_t g = s->seq;
    for (size_t k = 0; k < rounds; k++) {
        uint64_t h = g + 2 * k;
        unsigned b = (unsigned)((g + k) % CO_CSHM_NBUF); /* consecutive collectives rotate */
        size_t off = k * Cb, len = CO_MIN(Cb, bb - off);
        if (me == root) {
            char *d = co_cshm_acquire(s, b);
            for (int q = 0; q < n; q++)
                if (q != me)
                    co_dt_pack(sdt, scount, (const char *)sbuf + sext * (size_t)q, off,
                               d + (size_t)q * stride, len);
            co_cshm_publish(s, b, h + 2, bb, h + 2);
        } else {
            uint64_t rb;
            const char *d = co_cshm_read(s, root, b, h + 1, &rb);
            if (!rc) rc = co_coll_sizes(rb, bb);
            co_dt_unpack(rdt, rcount, rbuf, off, d + (size_t)me * stride, len);
            co_cshm_post(s, h + 2);
        }
    }
    if (me == root && rbuf != MPI_IN_PLACE)
        rc = co_coll_copy((const char *)sbuf + sext * (size_t)me, scount, sdt, rbuf, rcount, rdt);
    s->seq = g + 2 * rounds;
    return rc;
}

int co_scatter(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
               co_dtype *rdt, int root, co_comm *c) {
    int me = c->rank;
    size_t bb = me == root ? scount * sdt->size : rcount * rdt->size;
    if (co_coll_unwatched())
        return co_coll_layer_move(c, CO_COLL_SCATTER, root, sbuf, scount, sdt, rbuf, rcount, rdt,
                                  bb);
    if (c->size == 1) {
        if (rbuf == MPI_IN_PLACE) return MPI_SUCCESS;
        return co_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    }
    if (bb == 0) return MPI_SUCCESS;
    int alg = co_coll_pick(c, CO_COLL_SCATTER, bb, NULL, NULL);
    if (alg == CO_SCATTER_CMA)
        alg = co_coll_uniform_alg(c, CO_COLL_SCATTER, alg, bb, CO_SCATTER_LINEAR);
    switch (alg) {
    case CO_SCATTER_BINOMIAL:
        return scatter_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    case CO_SCATTER_SHM: return scatter_shm(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    case CO_SCATTER_CMA: {
        int stack[128], *displs, *counts = co_coll_uniform(c->size, scount, stack, &displs);
        int rc = co_cma_scatterv(sbuf, counts, displs, sdt, rbuf, rcount, rdt, root, c);
        if (counts != stack) co_coll_free(counts);
        return rc;
    }
    default: return scatter_linear(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    }
}
