/* MPI_Reduce_scatter (blocks of rcounts[i] elements): reduce to rank 0 and scatterv (any
 * operator), a ring (commutative), and shared memory (every rank copies its vector in
 * pieces; rank r combines its own block from all N copies, in rank order, straight into its
 * receive buffer). The ring and shared-memory cores serve Reduce_scatter_block and
 * Allreduce too. */
#include "coll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const co_coll_alg co_reduce_scatter_algs[] = {
    {"reduce_scatterv", 0, "reduce to rank 0, then scatterv"},
    {"ring", CO_ALG_COMMUTE, "ring: N-1 steps, each passing one partially combined block"},
    {"shm", CO_ALG_SHM | CO_ALG_DENSE,
     "vectors copied into shared buffers in pieces; each rank combines its block from all"},
    {"cma", CO_ALG_CMA | CO_ALG_DENSE,
     "each rank reads its block of every peer's vector with process_vm_readv and combines"},
};
CO_ALG_TABLE_CHECK(co_reduce_scatter_algs, CO_RSCAT_NALGS);

int co_rs_ring(const void *in, void *out, const size_t *cnt, const size_t *dsp, size_t count,
               co_dtype *dt, co_op *op, co_comm *c) {
    (void)count;
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    if (n == 1) {
        co_coll_copy_same(co_coll_elem(in, dsp[0], dt), out, cnt[0], dt);
        return MPI_SUCCESS;
    }
    size_t maxc = 0;
    for (int i = 0; i < n; i++) maxc = CO_MAX(maxc, cnt[i]);
    void *ab, *bb;
    void *buf[2] = {co_coll_tmpbuf(dt, maxc, &ab), co_coll_tmpbuf(dt, maxc, &bb)};
    if (!buf[0] || !buf[1]) co_fatal("out of memory in a reduction");
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    const void *cur = co_coll_elem(in, dsp[left], dt);
    int curbuf = -1;
    const void *mine = co_coll_elem(in, dsp[me], dt);
    for (int k = 0; k < n - 1; k++) {
        int bs = (me - k - 1 + 2 * n) % n, br = (me - k - 2 + 2 * n) % n;
        int last = k == n - 2;
        /* the last block received is our own: straight into `out`, unless `out` is where our
         * own operand still lies (in-place) */
        void *dst = last && out != mine ? out : buf[curbuf == 0 ? 1 : 0];
        co_req *reqs[2] = {NULL, NULL};
        int r = co_irecv(dst, cnt[br], dt, left, co_coll_tag(c, CO_TAG_RSCATTER), c, co_coll_ctx(c),
                         &reqs[0]);
        if (!r)
            r = co_isend(cur, cnt[bs], dt, right, co_coll_tag(c, CO_TAG_RSCATTER), c,
                         co_coll_ctx(c), CO_MODE_STD, &reqs[1]);
        int r2 = co_coll_waitall(2, reqs);
        if (r && !rc) rc = r;
        if (r2 && !rc) rc = r2;
        co_op_apply(op, dt, co_coll_elem(in, dsp[br], dt), dst, cnt[br]);
        cur = dst;
        curbuf = dst == buf[0] ? 0 : dst == buf[1] ? 1 : -1;
        if (last && dst != out) co_coll_copy_same(dst, out, cnt[me], dt);
    }
    co_coll_free(ab);
    co_coll_free(bb);
    return rc;
}

/* Rounds as wide as all NBUF buffers: in round j every rank copies up to NBUF pieces of its
 * vector (step h+1), then each rank combines the part of its block inside the round (h+2).
 * Two steps per 256 KiB instead of eight: 4 ranks 256 KiB 31 us instead of 46. */
int co_rs_shm(const void *in, void *out, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    size_t per = co_cshm_elems(s, dt);
    const void *stack[CO_COLL_SRCS];
    const void **src = co_coll_srcs(n, stack);
    uint64_t g = s->seq;
    size_t mlo = dsp[me], mhi = dsp[me] + cnt[me];
    size_t W = per * CO_CSHM_NBUF, rounds = (count + W - 1) / W;
    for (size_t j = 0; j < rounds; j++) {
        size_t r0 = j * W, rm = CO_MIN(W, count - r0);
        uint64_t h = g + 2 * j;
        co_cshm_put_wide(s, g, in, r0, rm, dt, h + 1, h + 2, 0);
        size_t lo = CO_MAX(mlo, r0), hi = CO_MIN(mhi, r0 + rm);
        if (!rc && hi > lo)
            rc = co_cshm_fold(s, g, h + 1, in, r0, rm, lo, hi, dt, op, src,
                              co_coll_elem(out, lo - mlo, dt), 0);
        co_cshm_post(s, h + 2);
    }
    s->seq = g + 2 * rounds;
    if (src != stack) co_coll_free(src);
    return rc;
}

/* The scatter after the reduction, for a vector longer than Scatterv's int displacements
 * reach: rank 0 posts a send of each block at once. */
static int scatter_long(const void *full, const size_t *cnt, const size_t *dsp, co_dtype *dt,
                        void *rbuf, co_comm *c) {
    int n = c->size, me = c->rank, tag = co_coll_tag(c, CO_TAG_SCATTER), rc = MPI_SUCCESS;
    if (me != 0) return cnt[me] ? co_recv(rbuf, cnt[me], dt, 0, tag, c, co_coll_ctx(c), NULL) : rc;
    co_req **reqs = co_coll_zalloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    for (int i = 1; i < n; i++) {
        int r = cnt[i] ? co_isend(co_coll_elem(full, dsp[i], dt), cnt[i], dt, i, tag, c,
                                  co_coll_ctx(c), CO_MODE_STD, &reqs[i])
                       : MPI_SUCCESS;
        if (r && !rc) rc = r;
    }
    co_coll_copy_same(full, rbuf, cnt[0], dt);
    int r = co_coll_waitall(n, reqs);
    co_coll_free(reqs);
    return rc ? rc : r;
}

/* Shared by Reduce_scatter and Reduce_scatter_block. */
int co_rs_run(const void *sbuf, void *rbuf, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c, int kind) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0 || dt->size == 0) return MPI_SUCCESS;
    if (n == 1) {
        if (sbuf != MPI_IN_PLACE) co_coll_copy_same(sbuf, rbuf, cnt[0], dt);
        return MPI_SUCCESS;
    }
    int alg = co_coll_pick(c, kind, count * dt->size, op, dt);
    /* in place, the result goes to the start of the vector that is still being read */
    void *ob = NULL;
    void *out = rbuf;
    if (sbuf == MPI_IN_PLACE && alg != CO_RSCAT_REDUCE_SCATTERV && dsp[me] != 0 && cnt[me]) {
        out = co_coll_tmpbuf(dt, cnt[me], &ob);
        if (!out) return MPI_ERR_NO_MEM;
    }
    switch (alg) {
    case CO_RSCAT_RING: rc = co_rs_ring(in, out, cnt, dsp, count, dt, op, c); break;
    case CO_RSCAT_SHM: rc = co_rs_shm(in, out, cnt, dsp, count, dt, op, c); break;
    case CO_RSCAT_CMA: rc = co_rs_cma(in, out, cnt, dsp, count, dt, op, c); break;
    default: {
        void *tb = NULL;
        void *full = me == 0 ? co_coll_tmpbuf(dt, count, &tb) : NULL;
        if (me == 0 && !full) return MPI_ERR_NO_MEM;
        rc = co_reduce(in, full, count, dt, op, 0, c);
        co_coll_part_failed(rc, "reduction", c, CO_COLL_SCATTERV, 0);
        if (count > INT_MAX) { /* past Scatterv's int displacements */
            int r = scatter_long(full, cnt, dsp, dt, rbuf, c);
            if (r && !rc) rc = r;
            co_coll_free(tb);
            break;
        }
        int *ic = co_coll_alloc(2 * (size_t)n * sizeof(int));
        if (!ic) co_fatal("out of memory");
        for (int i = 0; i < n; i++) {
            ic[i] = (int)cnt[i];
            ic[n + i] = (int)dsp[i];
        }
        int r = co_scatterv(full, ic, ic + n, dt, rbuf, cnt[me], dt, 0, c);
        if (r && !rc) rc = r;
        co_coll_free(ic);
        co_coll_free(tb);
        break;
    }
    }
    if (out != rbuf) co_coll_copy_same(out, rbuf, cnt[me], dt);
    co_coll_free(ob);
    return rc;
}

int co_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, co_dtype *dt, co_op *op,
                      co_comm *c) {
    int n = c->size;
    size_t *cnt = co_coll_alloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n, total = 0;
    for (int i = 0; i < n; i++) {
        cnt[i] = (size_t)rcounts[i];
        dsp[i] = total;
        total += cnt[i];
    }
    int rc = co_rs_run(sbuf, rbuf, cnt, dsp, total, dt, op, c, CO_COLL_REDUCE_SCATTER);
    co_coll_free(cnt);
    return rc;
}
