/* MPI_Reduce: binomial tree (any operator), reduce-scatter + gather (commutative, large),
 * the shared-memory engine, and with two ranks a single-copy split in which each rank
 * combines half of the vector. Non-commutative operators combine lower ranks first
 * everywhere: the binomial tree then runs over ranks in order (rank 0 accumulates and
 * forwards the result to the root); the shared-memory engine folds operands in rank
 * order. */
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
    {"cma", CO_ALG_CMA | CO_ALG_PAIR | CO_ALG_DENSE,
     "2 ranks: each reads half of the other's vector with process_vm_readv and combines it; "
     "the peer writes its half of the result into the root's buffer"},
};

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
        int r = co_recv(tmp, count, dt, (child + vroot) % n, CO_TAG_REDUCE, c, ctx, NULL);
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
        int r = co_send(result, count, dt, (rel - mask + vroot) % n, CO_TAG_REDUCE, c, ctx);
        if (r && !rc) rc = r;
    }
    if (vroot != root) { /* non-commutative with root != 0: rank 0 forwards */
        if (me == 0) {
            int r = co_send(result, count, dt, root, CO_TAG_REDUCE, c, ctx);
            if (r && !rc) rc = r;
        } else if (me == root) {
            int r = co_recv(rbuf, count, dt, 0, CO_TAG_REDUCE, c, ctx, NULL);
            if (r && !rc) rc = r;
        }
    } else if (me == root && result != rbuf) {
        co_coll_copy_same(result, rbuf, count, dt);
    }
    free(accb);
    free(tmpb);
    return rc;
}

static void blocks(size_t count, int n, size_t *cnt, size_t *dsp) {
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        cnt[i] = count / (size_t)n + ((size_t)i < count % (size_t)n ? 1 : 0);
        dsp[i] = off;
        off += cnt[i];
    }
}

static int reduce_scatter_gather(const void *sbuf, void *rbuf, size_t count, co_dtype *dt,
                                 co_op *op, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t *cnt = malloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n;
    blocks(count, n, cnt, dsp);
    void *outb = NULL;
    void *out = me == root ? co_coll_elem(rbuf, dsp[me], dt) : co_coll_tmpbuf(dt, cnt[me], &outb);
    if (!out) co_fatal("out of memory in a reduction");
    rc = co_rs_ring(in, out, cnt, dsp, count, dt, op, c);
    if (me == root) {
        co_req **reqs = calloc((size_t)n, sizeof(*reqs));
        if (!reqs) co_fatal("out of memory");
        for (int i = 0; i < n; i++) {
            if (i == me || !cnt[i]) continue;
            int r = co_irecv(co_coll_elem(rbuf, dsp[i], dt), cnt[i], dt, i, CO_TAG_REDUCE, c,
                             co_coll_ctx(c), &reqs[i]);
            if (r && !rc) rc = r;
        }
        int r = co_coll_waitall(n, reqs);
        if (r && !rc) rc = r;
        free(reqs);
    } else if (cnt[me]) {
        int r = co_send(out, cnt[me], dt, root, CO_TAG_REDUCE, c, co_coll_ctx(c));
        if (r && !rc) rc = r;
    }
    free(outb);
    free(cnt);
    return rc;
}

/* Two ranks. Step g+1: input (and at the root, result) addresses published. The root
 * combines the head into its result; the peer reads the root's tail, combines it and writes
 * it into the root's result, then posts g+2. Both leave after the other's g+2 (neither may
 * touch its buffers before the other has finished reading them). */
static int reduce_cma(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
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
    size_t h = count / 2;
    size_t lo = me == root ? 0 : h, hi = me == root ? h : count;
    if (hi > lo) {
        void *tb;
        void *t = co_coll_tmpbuf(dt, hi - lo, &tb);
        if (!t) co_fatal("out of memory in a reduction");
        co_cma_read(s->pids[p], (char *)t + dt->true_lb,
                    (const char *)co_coll_elem(pin, lo, dt) + dt->true_lb,
                    co_coll_span(dt, hi - lo));
        const void *src[2];
        src[me] = co_coll_elem(in, lo, dt);
        src[p] = t;
        if (me == root) {
            rc = co_coll_reduce_n(op, dt, hi - lo, src, 2, co_coll_elem(rbuf, lo, dt));
        } else {
            rc = co_coll_reduce_n(op, dt, hi - lo, src, 2, t);
            char *prbuf =
                (char *)(uintptr_t)atomic_load_explicit(&s->ctl[p].addr2, memory_order_relaxed);
            co_cma_write(s->pids[p], (char *)t + dt->true_lb,
                         (char *)co_coll_elem(prbuf, lo, dt) + dt->true_lb,
                         co_coll_span(dt, hi - lo));
        }
        free(tb);
    }
    co_cshm_post(s, g + 2);
    co_cshm_wait(s, p, g + 2);
    s->seq = g + 2;
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
        if (dt->contig) return reduce_cma(sbuf, rbuf, count, dt, op, root, c);
        return co_reduce_shm(sbuf, rbuf, count, dt, op, root, c);
    default: return reduce_binomial(sbuf, rbuf, count, dt, op, root, c);
    }
}
