/* MPI_Alltoall: pairwise exchange (N-1 steps, one partner each), linear (all sends and
 * receives posted at once), Bruck (ceil(log2 N) steps on packed blocks; small blocks) and
 * shared memory (each rank copies all its outgoing blocks into its shared buffer; each
 * copies its incoming block out of everyone's). In place, the receive buffer is first
 * copied aside and serves as the send buffer. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_alltoall_algs[] = {
    {"pairwise", 0, "N-1 steps; in step k send to rank+k, receive from rank-k"},
    {"linear", 0, "every send and receive posted at once"},
    {"bruck", 0, "ceil(log2 N) steps on packed blocks (small blocks)"},
    {"shm", CO_ALG_SHM | CO_ALG_SLOTS,
     "each rank copies its outgoing blocks into its shared buffer; each copies its own out"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers; with more than two ranks, blocks from 512 KiB as messages"},
};
CO_ALG_TABLE_CHECK(co_alltoall_algs, CO_ALLTOALL_NALGS);

static int a2a_pairwise(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                        co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank;
    size_t sext = (size_t)co_dt_extent(sdt) * scount, rext = (size_t)co_dt_extent(rdt) * rcount;
    int rc = co_coll_copy((const char *)sbuf + sext * (size_t)me, scount, sdt,
                          (char *)rbuf + rext * (size_t)me, rcount, rdt);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        int r =
            co_sendrecv((const char *)sbuf + sext * (size_t)to, scount, sdt, to,
                        co_coll_tag(c, CO_TAG_ALLTOALL), (char *)rbuf + rext * (size_t)from, rcount,
                        rdt, from, co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
    }
    return rc;
}

/* Every send and receive posted at once (sends in co_coll_linear_mode). */
static int a2a_linear(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                      co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank;
    size_t sext = (size_t)co_dt_extent(sdt) * scount, rext = (size_t)co_dt_extent(rdt) * rcount;
    co_req **reqs = co_coll_zalloc(2 * (size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        int r = co_irecv((char *)rbuf + rext * (size_t)from, rcount, rdt, from,
                         co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c), &reqs[k]);
        if (r && !rc) rc = r;
    }
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n;
        int r = co_isend((const char *)sbuf + sext * (size_t)to, scount, sdt, to,
                         co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c), co_coll_linear_mode(c),
                         &reqs[n + k]);
        if (r && !rc) rc = r;
    }
    int r = co_coll_copy((const char *)sbuf + sext * (size_t)me, scount, sdt,
                         (char *)rbuf + rext * (size_t)me, rcount, rdt);
    if (r && !rc) rc = r;
    r = co_coll_waitall(2 * n, reqs);
    if (r && !rc) rc = r;
    co_coll_free(reqs);
    return rc;
}

static int a2a_bruck(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                     co_dtype *rdt, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    size_t bb = rcount * rdt->size;
    size_t sext = (size_t)co_dt_extent(sdt) * scount, rext = (size_t)co_dt_extent(rdt) * rcount;
    if (scount * sdt->size > bb) rc = MPI_ERR_TRUNCATE;
    size_t sb = CO_MIN(bb, scount * sdt->size);
    char *tmp = co_coll_alloc(2 * CO_MAX((size_t)n * bb, 1));
    if (!tmp) return MPI_ERR_NO_MEM;
    char *pk = tmp + CO_MAX((size_t)n * bb, 1);
    /* tmp[j]: the block for rank me + j */
    for (int j = 0; j < n; j++)
        co_dt_pack(sdt, scount, (const char *)sbuf + sext * (size_t)((me + j) % n), 0,
                   tmp + (size_t)j * bb, sb);
    co_dtype *byte = co_dt_get(MPI_BYTE);
    /* blocks travel through other ranks: after a short message (a rank's count is smaller)
     * they go on empty, so that every rank they reach reports it */
    int shortfall = 0;
    for (int dist = 1; dist < n; dist <<= 1) {
        size_t nb = 0;
        for (int j = 0; j < n; j++)
            if (j & dist) memcpy(pk + (nb++) * bb, tmp + (size_t)j * bb, bb);
        int r = co_sendrecv(pk, shortfall ? 0 : nb * bb, byte, (me + dist) % n,
                            co_coll_tag(c, CO_TAG_ALLTOALL), pk + nb * bb, nb * bb, byte,
                            (me - dist + n) % n, co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c),
                            NULL);
        if (r && !rc) rc = r;
        shortfall |= r == MPI_ERR_COUNT;
        size_t got = 0; /* the received blocks follow the sent ones in pk */
        for (int j = 0; j < n; j++)
            if (j & dist) memcpy(tmp + (size_t)j * bb, pk + (nb + got++) * bb, bb);
    }
    for (int j = 0; j < n; j++)
        co_dt_unpack(rdt, rcount, (char *)rbuf + rext * (size_t)((me - j + n) % n), 0,
                     tmp + (size_t)j * bb, bb);
    co_coll_free(tmp);
    return rc;
}

/* Round k: every rank packs bytes [k*Cd, (k+1)*Cd) of its block for rank q at q*Cd in its
 * buffer k % NBUF (step h+1), then copies its own piece out of every other rank's (h+2). */
static int a2a_shm(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                   co_dtype *rdt, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    size_t bb = rcount * rdt->size, Cd = co_cshm_cap(s) / (size_t)n & ~(size_t)63;
    size_t sext = (size_t)co_dt_extent(sdt) * scount, rext = (size_t)co_dt_extent(rdt) * rcount;
    size_t W = Cd * CO_CSHM_NBUF, rounds = (bb + W - 1) / W;
    uint64_t g = s->seq;
    for (size_t j = 0; j < rounds; j++) {
        uint64_t h = g + 2 * j;
        for (size_t k = 0; k < CO_CSHM_NBUF && j * W + k * Cd < bb; k++) {
            unsigned b = (unsigned)((g + k) % CO_CSHM_NBUF); /* consecutive collectives rotate */
            size_t off = j * W + k * Cd, len = CO_MIN(Cd, bb - off);
            char *d = co_cshm_acquire(s, b);
            for (int q = 0; q < n; q++)
                if (q != me)
                    co_dt_pack(sdt, scount, (const char *)sbuf + sext * (size_t)q, off,
                               d + (size_t)q * Cd, len);
            co_cshm_publish(s, b, h + 1, scount * sdt->size, h + 2);
        }
        for (size_t k = 0; k < CO_CSHM_NBUF && j * W + k * Cd < bb; k++) {
            size_t off = j * W + k * Cd;
            co_cshm_unpack_each(s, (unsigned)((g + k) % CO_CSHM_NBUF), h + 1, (size_t)me * Cd, rbuf,
                                rcount, rdt, off, CO_MIN(Cd, bb - off), bb, &rc);
        }
        co_cshm_post(s, h + 2);
    }
    s->seq = g + 2 * rounds;
    int r = co_coll_copy((const char *)sbuf + sext * (size_t)me, scount, sdt,
                         (char *)rbuf + rext * (size_t)me, rcount, rdt);
    return rc ? rc : r;
}

int co_alltoall(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                co_dtype *rdt, co_comm *c) {
    int n = c->size;
    size_t bb = rcount * rdt->size;
    if (co_coll_unwatched())
        return co_coll_layer_move(c, CO_COLL_ALLTOALL, -1, sbuf, scount, sdt, rbuf, rcount, rdt,
                                  bb);
    if (bb == 0 || (sbuf == MPI_IN_PLACE && n == 1)) return MPI_SUCCESS;
    void *copy = NULL;
    if (sbuf == MPI_IN_PLACE) {
        size_t cnt = rcount * (size_t)n;
        void *cb;
        copy = co_coll_tmpbuf(rdt, cnt, &cb);
        if (!copy) return MPI_ERR_NO_MEM;
        co_coll_copy_same(rbuf, copy, cnt, rdt);
        sbuf = copy;
        scount = rcount;
        sdt = rdt;
        copy = cb;
    }
    int rc;
    if (n == 1) {
        rc = co_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    } else {
        int alg = co_coll_pick(c, CO_COLL_ALLTOALL, bb, NULL, NULL);
        if (alg == CO_ALLTOALL_CMA)
            alg = co_coll_uniform_alg(c, CO_COLL_ALLTOALL, alg, bb, CO_ALLTOALL_PAIRWISE);
        switch (alg) {
        case CO_ALLTOALL_LINEAR: rc = a2a_linear(sbuf, scount, sdt, rbuf, rcount, rdt, c); break;
        case CO_ALLTOALL_BRUCK: rc = a2a_bruck(sbuf, scount, sdt, rbuf, rcount, rdt, c); break;
        case CO_ALLTOALL_CMA: {
            int st[128], rt[128], *sd, *rd;
            int *sc = co_coll_uniform(n, scount, st, &sd),
                *rcn = co_coll_uniform(n, rcount, rt, &rd);
            rc = co_cma_alltoallv(sbuf, sc, sd, sdt, rbuf, rcn, rd, rdt, c);
            if (sc != st) co_coll_free(sc);
            if (rcn != rt) co_coll_free(rcn);
            break;
        }
        case CO_ALLTOALL_SHM: rc = a2a_shm(sbuf, scount, sdt, rbuf, rcount, rdt, c); break;
        default: rc = a2a_pairwise(sbuf, scount, sdt, rbuf, rcount, rdt, c); break;
        }
    }
    co_coll_free(copy);
    return rc;
}
