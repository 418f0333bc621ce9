/* MPI_Reduce: binomial tree (any operator), reduce-scatter + gather (commutative, large),
 * the shared-memory engine, and single copy (rank r combines block r of all vectors, read
 * straight from the peers, and writes it into the root's buffer: cma_reduce.c). Non-commutative
 * operators combine lower ranks first everywhere: the binomial tree then runs over ranks in order
 * (rank 0 accumulates and forwards the result to the root); the shared-memory and single-copy
 * engines fold operands in rank order. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_reduce_algs[] = {
    {"binomial", 0,
     "binomial tree (commutative: rooted at the root; otherwise over ranks in order, rank 0 "
     "forwards)"},
    {"scatter_gather", CO_ALG_COMMUTE,
     "ring reduce-scatter, then the root gathers the pieces (large vectors)"},
    {"shm", CO_ALG_SHM | CO_ALG_DENSE,
     "operands copied into shared buffers; small: the root combines all, large: each rank "
     "combines a part"},
    {"cma", CO_ALG_CMA | CO_ALG_DENSE,
     "rank r reads block r of every vector (process_vm_readv), combines it and writes it into "
     "the root's buffer; with 2 ranks the root reads its peer's vector and combines it (above "
     "128 KiB the peer combines the last 35% and writes it) (contiguous types, else as shm)"},
};
CO_ALG_TABLE_CHECK(co_reduce_algs, CO_REDUCE_NALGS);

static int reduce_binomial(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                           int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    int vroot = op->commute ? root : 0;
    int rel = (me - vroot + n) % n;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *accb = NULL, *tmpb = NULL, *acc = NULL, *tmp = NULL;
    uint64_t ctx = co_coll_ctx(c);
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (rel & mask) break;
        int child = rel + mask;
        if (child >= n) continue;
        if (!acc) {
            acc = me == root ? rbuf : co_coll_tmpbuf(dt, count, &accb);
            tmp = co_coll_tmpbuf(dt, count, &tmpb);
            if (!acc || !tmp) co_fatal("out of memory in a reduction");
            co_coll_copy_same(in, acc, count, dt);
        }
        int r = co_recv(tmp, count, dt, (child + vroot) % n, co_coll_tag(c, CO_TAG_REDUCE), c, ctx,
                        NULL);
        if (r && !rc) rc = r;
        if (op->commute) {
            co_op_apply(op, dt, tmp, acc, count);
        } else { /* acc covers lower ranks than tmp */
            co_op_apply(op, dt, acc, tmp, count);
            co_coll_copy_same(tmp, acc, count, dt);
        }
    }
    const void *result = acc ? acc : in;
    if (rel != 0) {
        int r = co_send(result, count, dt, (rel - mask + vroot) % n, co_coll_tag(c, CO_TAG_REDUCE),
                        c, ctx);
        if (r && !rc) rc = r;
    }
    if (vroot != root) { /* non-commutative with root != 0: rank 0 forwards */
        if (me == 0) {
            int r = co_send(result, count, dt, root, co_coll_tag(c, CO_TAG_REDUCE), c, ctx);
            if (r && !rc) rc = r;
        } else if (me == root) {
            int r = co_recv(rbuf, count, dt, 0, co_coll_tag(c, CO_TAG_REDUCE), c, ctx, NULL);
            if (r && !rc) rc = r;
        }
    } else if (me == root && result != rbuf) {
        co_coll_copy_same(result, rbuf, count, dt);
    }
    co_coll_free(accb);
    co_coll_free(tmpb);
    return rc;
}

static int reduce_scatter_gather(const void *sbuf, void *rbuf, size_t count, co_dtype *dt,
                                 co_op *op, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t *cnt = co_coll_alloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n;
    co_coll_blocks(count, n, cnt, dsp);
    void *outb = NULL;
    void *out = me == root ? co_coll_elem(rbuf, dsp[me], dt) : co_coll_tmpbuf(dt, cnt[me], &outb);
    if (!out) co_fatal("out of memory in a reduction");
    rc = co_rs_ring(in, out, cnt, dsp, count, dt, op, c);
    if (me == root) {
        co_req **reqs = co_coll_zalloc((size_t)n, sizeof(*reqs));
        if (!reqs) co_fatal("out of memory");
        for (int i = 0; i < n; i++) {
            if (i == me || !cnt[i]) continue;
            int r = co_irecv(co_coll_elem(rbuf, dsp[i], dt), cnt[i], dt, i,
                             co_coll_tag(c, CO_TAG_REDUCE), c, co_coll_ctx(c), &reqs[i]);
            if (r && !rc) rc = r;
        }
        int r = co_coll_waitall(n, reqs);
        if (r && !rc) rc = r;
        co_coll_free(reqs);
    } else if (cnt[me]) {
        int r = co_send(out, cnt[me], dt, root, co_coll_tag(c, CO_TAG_REDUCE), c, co_coll_ctx(c));
        if (r && !rc) rc = r;
    }
    co_coll_free(outb);
    co_coll_free(cnt);
    return rc;
}

int co_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
              co_comm *c) {
    if (count == 0 || dt->size == 0) return MPI_SUCCESS;
    if (c->size == 1) {
        if (sbuf != MPI_IN_PLACE) co_coll_copy_same(sbuf, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    switch (co_coll_pick(c, CO_COLL_REDUCE, count * dt->size, op, dt)) {
    case CO_REDUCE_SCATTER_GATHER: return reduce_scatter_gather(sbuf, rbuf, count, dt, op, root, c);
    case CO_REDUCE_SHM: return co_reduce_shm(sbuf, rbuf, count, dt, op, root, c);
    case CO_REDUCE_CMA:
        if (dt->contig) return co_reduce_cma(sbuf, rbuf, count, dt, op, root, c);
        return co_reduce_shm(sbuf, rbuf, count, dt, op, root, c);
    default: return reduce_binomial(sbuf, rbuf, count, dt, op, root, c);
    }
}
