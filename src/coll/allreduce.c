/* MPI_Allreduce: recursive doubling (any operator; extra ranks of a non-power-of-two size
 * fold into their neighbours first), reduce + bcast, ring (reduce-scatter + allgather,
 * commutative, large vectors), the shared-memory engine, and with two ranks a single-copy
 * split: each rank reads half of its peer's vector, combines it and writes the result half
 * into the peer's buffer. Operands are always combined in rank order. */
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
    {"cma", CO_ALG_CMA | CO_ALG_PAIR | CO_ALG_DENSE,
     "2 ranks: each combines half (reading the peer's half with process_vm_readv) and writes "
     "it into the peer's result"},
};

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
            rc = co_send(rbuf, count, dt, me + 1, CO_TAG_ALLREDUCE, c, ctx);
            newrank = -1;
        } else {
            rc = co_recv(tmp, count, dt, me - 1, CO_TAG_ALLREDUCE, c, ctx, NULL);
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
            int r = co_sendrecv(rbuf, count, dt, dst, CO_TAG_ALLREDUCE, tmp, count, dt, dst,
                                CO_TAG_ALLREDUCE, c, ctx, NULL);
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
        int r = me % 2 == 0 ? co_recv(rbuf, count, dt, me + 1, CO_TAG_ALLREDUCE, c, ctx, NULL)
                            : co_send(rbuf, count, dt, me - 1, CO_TAG_ALLREDUCE, c, ctx);
        if (r && !rc) rc = r;
    }
    free(tb);
    return rc;
}

static int allreduce_ring(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                          co_comm *c) {
    int n = c->size, me = c->rank, rc;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t *cnt = malloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n, off = 0;
    for (int i = 0; i < n; i++) {
        cnt[i] = count / (size_t)n + ((size_t)i < count % (size_t)n ? 1 : 0);
        dsp[i] = off;
        off += cnt[i];
    }
    rc = co_rs_ring(in, co_coll_elem(rbuf, dsp[me], dt), cnt, dsp, count, dt, op, c);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        int r = co_sendrecv(co_coll_elem(rbuf, dsp[sb], dt), cnt[sb], dt, right, CO_TAG_ALLREDUCE,
                            co_coll_elem(rbuf, dsp[rb], dt), cnt[rb], dt, left, CO_TAG_ALLREDUCE, c,
                            co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
    }
    free(cnt);
    return rc;
}

/* Two ranks, contiguous type. g+1: input and result addresses published; g+2: my half is
 * combined and written into the peer's result, and I have finished reading its input. */
static int allreduce_cma(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                         co_comm *c) {
    co_cshm *s = c->coll->shm;
    int me = s->me, p = 1 - me, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    uint64_t g = s->seq;
    co_cshm_ctl *mine = &s->ctl[me];
    atomic_store_explicit(&mine->addr, (uint64_t)(uintptr_t)in, memory_order_relaxed);
    atomic_store_explicit(&mine->addr2, (uint64_t)(uintptr_t)rbuf, memory_order_relaxed);
    co_cshm_post(s, g + 1);
    co_cshm_wait(s, p, g + 1);
    const char *pin =
        (const char *)(uintptr_t)atomic_load_explicit(&s->ctl[p].addr, memory_order_relaxed);
    char *prbuf = (char *)(uintptr_t)atomic_load_explicit(&s->ctl[p].addr2, memory_order_relaxed);
    size_t h = count / 2;
    size_t lo = me == 0 ? 0 : h, hi = me == 0 ? h : count;
    if (hi > lo) {
        void *tb;
        void *t = co_coll_tmpbuf(dt, hi - lo, &tb);
        if (!t) co_fatal("out of memory in a reduction");
        size_t span = co_coll_span(dt, hi - lo);
        co_cma_read(s->pids[p], (char *)t + dt->true_lb,
                    (const char *)co_coll_elem(pin, lo, dt) + dt->true_lb, span);
        const void *src[2];
        src[me] = co_coll_elem(in, lo, dt);
        src[p] = t;
        void *out = co_coll_elem(rbuf, lo, dt);
        rc = co_coll_reduce_n(op, dt, hi - lo, src, 2, out);
        co_cma_write(s->pids[p], (char *)out + dt->true_lb,
                     (char *)co_coll_elem(prbuf, lo, dt) + dt->true_lb, span);
        free(tb);
    }
    co_cshm_post(s, g + 2);
    co_cshm_wait(s, p, g + 2);
    s->seq = g + 2;
    return rc;
}

int co_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c) {
    if (count == 0 || dt->size == 0) return MPI_SUCCESS;
    if (c->size == 1) {
        if (sbuf != MPI_IN_PLACE) co_coll_copy_same(sbuf, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    switch (co_coll_pick(c, CO_COLL_ALLREDUCE, count * dt->size, op, dt)) {
    case CO_ALLREDUCE_REDUCE_BCAST: {
        int rc = co_reduce(sbuf, rbuf, count, dt, op, 0, c);
        int r = co_bcast(rbuf, count, dt, 0, c);
        return rc ? rc : r;
    }
    case CO_ALLREDUCE_RING: return allreduce_ring(sbuf, rbuf, count, dt, op, c);
    case CO_ALLREDUCE_SHM: return co_reduce_shm(sbuf, rbuf, count, dt, op, -1, c);
    case CO_ALLREDUCE_CMA:
        if (dt->contig) return allreduce_cma(sbuf, rbuf, count, dt, op, c);
        return co_reduce_shm(sbuf, rbuf, count, dt, op, -1, c);
    default: return allreduce_rd(sbuf, rbuf, count, dt, op, c);
    }
}
