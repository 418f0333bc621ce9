/* MPI_Allreduce: recursive doubling (any operator; extra ranks of a non-power-of-two size
 * fold into their neighbours first), reduce + bcast, ring (reduce-scatter + allgather,
 * commutative, large vectors), the shared-memory engine, and single copy (rank r combines
 * block r of all vectors read straight from the peers, then everyone reads the combined
 * blocks: cma_reduce.c). Operands are always combined in rank order. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_allreduce_algs[] = {
    {"recursive_doubling", 0,
     "log2 N exchange rounds of the whole vector (non-power-of-two sizes fold first)"},
    {"reduce_bcast", 0, "reduce to rank 0, then broadcast"},
    {"ring", CO_ALG_COMMUTE, "ring reduce-scatter, then ring allgather (large vectors)"},
    {"shm", CO_ALG_SHM | CO_ALG_DENSE,
     "operands copied into shared buffers; small: every rank combines all, large: each rank "
     "combines a part and everyone copies the parts out"},
    {"cma", CO_ALG_CMA | CO_ALG_DENSE,
     "rank r reads block r of every vector (process_vm_readv), combines it and writes it into "
     "every peer's buffer; with 2 ranks each combines half (small vectors: all) of its peer's "
     "vector with its own (contiguous types, else as shm)"},
};
CO_ALG_TABLE_CHECK(co_allreduce_algs, CO_ALLREDUCE_NALGS);

static int allreduce_rd(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                        co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    uint64_t ctx = co_coll_ctx(c);
    if (sbuf != MPI_IN_PLACE) co_coll_copy_same(sbuf, rbuf, count, dt);
    void *tb;
    void *tmp = co_coll_tmpbuf(dt, count, &tb);
    if (!tmp) return MPI_ERR_NO_MEM;
    int pof2 = 1;
    while (pof2 * 2 <= n) pof2 *= 2;
    int rem = n - pof2, newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            rc = co_send(rbuf, count, dt, me + 1, co_coll_tag(c, CO_TAG_ALLREDUCE), c, ctx);
            newrank = -1;
        } else {
            rc = co_recv(tmp, count, dt, me - 1, co_coll_tag(c, CO_TAG_ALLREDUCE), c, ctx, NULL);
            co_op_apply(op, dt, tmp, rbuf, count);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask;
            int dst = nd < rem ? nd * 2 + 1 : nd + rem;
            int r = co_sendrecv(rbuf, count, dt, dst, co_coll_tag(c, CO_TAG_ALLREDUCE), tmp, count,
                                dt, dst, co_coll_tag(c, CO_TAG_ALLREDUCE), c, ctx, NULL);
            if (r && !rc) rc = r;
            if (dst < me || op->commute) {
                co_op_apply(op, dt, tmp, rbuf, count);
            } else {
                co_op_apply(op, dt, rbuf, tmp, count);
                co_coll_copy_same(tmp, rbuf, count, dt);
            }
        }
    }
    if (me < 2 * rem) {
        int r =
            me % 2 == 0
                ? co_recv(rbuf, count, dt, me + 1, co_coll_tag(c, CO_TAG_ALLREDUCE), c, ctx, NULL)
                : co_send(rbuf, count, dt, me - 1, co_coll_tag(c, CO_TAG_ALLREDUCE), c, ctx);
        if (r && !rc) rc = r;
    }
    co_coll_free(tb);
    return rc;
}

static int allreduce_ring(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                          co_comm *c) {
    int n = c->size, me = c->rank, rc;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t *cnt = co_coll_alloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n;
    co_coll_blocks(count, n, cnt, dsp);
    rc = co_rs_ring(in, co_coll_elem(rbuf, dsp[me], dt), cnt, dsp, count, dt, op, c);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        int r =
            co_sendrecv(co_coll_elem(rbuf, dsp[sb], dt), cnt[sb], dt, right,
                        co_coll_tag(c, CO_TAG_ALLREDUCE), co_coll_elem(rbuf, dsp[rb], dt), cnt[rb],
                        dt, left, co_coll_tag(c, CO_TAG_ALLREDUCE), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
    }
    co_coll_free(cnt);
    return rc;
}

int co_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c) {
    if (co_coll_unwatched())
        return co_coll_layer(c,
                             &(co_coll_args){.kind = CO_COLL_ALLREDUCE,
                                             .root = -1,
                                             .sbuf = sbuf,
                                             .rbuf = rbuf,
                                             .rcount = count,
                                             .rdt = dt,
                                             .op = op},
                             (uint64_t)count * dt->size);
    if (count == 0 || dt->size == 0) return MPI_SUCCESS;
    if (c->size == 1) {
        if (sbuf != MPI_IN_PLACE) co_coll_copy_same(sbuf, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    switch (co_coll_pick(c, CO_COLL_ALLREDUCE, count * dt->size, op, dt)) {
    case CO_ALLREDUCE_REDUCE_BCAST: {
        int rc = co_reduce(sbuf, rbuf, count, dt, op, 0, c);
        co_coll_part_failed(rc, "reduction", c, CO_COLL_BCAST, count * dt->size);
        int r = co_bcast(rbuf, count, dt, 0, c);
        return rc ? rc : r;
    }
    case CO_ALLREDUCE_RING: return allreduce_ring(sbuf, rbuf, count, dt, op, c);
    case CO_ALLREDUCE_SHM: return co_reduce_shm(sbuf, rbuf, count, dt, op, -1, c);
    case CO_ALLREDUCE_CMA:
        if (dt->contig) return co_reduce_cma(sbuf, rbuf, count, dt, op, -1, c);
        return co_reduce_shm(sbuf, rbuf, count, dt, op, -1, c);
    default: return allreduce_rd(sbuf, rbuf, count, dt, op, c);
    }
}
