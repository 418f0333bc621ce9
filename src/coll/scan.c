/* MPI_Scan (and, through co_scan_run, MPI_Exscan): a linear chain (each rank combines the
 * prefix it receives with its own operand and passes it on), recursive doubling
 * (ceil(log2 N) exchange rounds), and shared memory (every rank copies its operand into its
 * shared buffer, in pieces, and rank r folds operands 0..r itself). Operands are combined in
 * rank order, so non-commutative operators work with all three. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_scan_algs[] = {
    {"linear", 0,
     "a chain of messages: each rank receives the prefix from rank-1 and passes its own on "
     "(long vectors from 4 ranks on in pieces, pipelined)"},
    {"recursive_doubling", 0, "ceil(log2 N) rounds exchanging partial results"},
    {"shm", CO_ALG_SHM | CO_ALG_DENSE,
     "operands copied into shared buffers; rank r combines operands 0..r itself"},
    {"cma", CO_ALG_CMA | CO_ALG_DENSE,
     "rank r reads operands 0..r straight from the peers (process_vm_readv) and combines"},
    {"chain", CO_ALG_CMA | CO_ALG_DENSE,
     "pipelined chain: rank r reads rank r-1's prefix piece by piece (process_vm_readv), folds "
     "in its operand and passes its own on"},
};
CO_ALG_TABLE_CHECK(co_scan_algs, CO_SCAN_NALGS);

/* Sends of a chain in pieces: at most two in flight, the older waited for before a third
 * (send k goes into slot k % 2, which an exclusive scan's scratch pieces follow). */
typedef struct {
    co_req *q[2];
    unsigned k; /* sends posted */
    int rc;
    int tag;
    uint64_t ctx;
} piece_sends;

/* Waits for the send that last used the next send's slot (and its buffer). */
static co_req **piece_slot(piece_sends *w) {
    co_req **slot = &w->q[w->k & 1];
    int r = co_coll_waitall(1, slot);
    if (r && !w->rc) w->rc = r;
    return slot;
}

static void piece_send(piece_sends *w, const void *buf, size_t count, co_dtype *dt, int dest,
                       co_comm *c) {
    co_req **slot = piece_slot(w);
    w->k++;
    int r = co_isend(buf, count, dt, dest, w->tag, c, w->ctx, CO_MODE_STD, slot);
    if (r && !w->rc) w->rc = r;
}

/* A chain: rank r receives the prefix of ranks 0..r-1, combines its own operand and passes
 * the prefix of 0..r on. From 4 ranks on, a vector longer than COHORT_SCAN_PIECE bytes goes
 * in pieces of that size, each passed on as soon as it is combined, so that the ranks work
 * on different pieces at once (docs/collectives.md, "Chain of messages"). An exclusive scan
 * combines into two pieces of scratch in turn (each sent while the next is combined) and
 * saves its operand's piece there before the prefix lands on it in place. */
static int scan_linear(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                       co_comm *c, int excl) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS, tag = co_coll_tag(c, CO_TAG_SCAN);
    uint64_t ctx = co_coll_ctx(c);
    co_pieces p = co_scan_pieces(count, dt, n);
    piece_sends w = {{NULL, NULL}, 0, MPI_SUCCESS, tag, ctx};
    if (me == 0) {
        for (size_t k = 0; k < p.n; k++)
            piece_send(&w, co_piece(in, &p, k, dt), co_piece_count(&p, k), dt, 1, c);
        if (!excl && in != rbuf) co_coll_copy_same(in, rbuf, count, dt);
        rc = co_coll_waitall(2, w.q);
        return w.rc ? w.rc : rc;
    }
    void *tb;
    size_t pieces = !excl ? 1 : me + 1 < n ? 2 : 0; /* of scratch (the last Exscan rank: none) */
    char *tmp = co_coll_tmpbuf(dt, pieces * p.each, &tb);
    if (!tmp) return MPI_ERR_NO_MEM;
    size_t span = (size_t)co_dt_extent(dt) * p.each; /* one piece of scratch */
    for (size_t k = 0; k < p.n; k++) {
        size_t m = co_piece_count(&p, k);
        const void *mine = co_piece(in, &p, k, dt);
        void *res = co_piece(rbuf, &p, k, dt);
        int r;
        if (!excl) { /* res = prefix op operand, passed on */
            r = co_recv(tmp, m, dt, me - 1, tag, c, ctx, NULL);
            if (in != rbuf) co_coll_copy_same(mine, res, m, dt);
            co_op_apply(op, dt, tmp, res, m);
            if (me + 1 < n) piece_send(&w, res, m, dt, me + 1, c);
        } else if (me + 1 == n) { /* the prefix is all */
            r = co_recv(res, m, dt, me - 1, tag, c, ctx, NULL);
        } else { /* res = prefix; scratch = prefix op operand, passed on */
            piece_slot(&w);
            char *next = tmp + (w.k & 1) * span;  /* (its last send is done) */
            co_coll_copy_same(mine, next, m, dt); /* before the prefix lands on it in place */
            r = co_recv(res, m, dt, me - 1, tag, c, ctx, NULL);
            co_op_apply(op, dt, res, next, m);
            piece_send(&w, next, m, dt, me + 1, c);
        }
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(2, w.q);
    co_coll_free(tb);
    if (w.rc && !rc) rc = w.rc;
    return rc ? rc : r;
}

static int scan_rd(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                   int excl) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    void *pb, *tb;
    void *partial = co_coll_tmpbuf(dt, count, &pb), *tmp = co_coll_tmpbuf(dt, count, &tb);
    if (!partial || !tmp) co_fatal("out of memory in a scan");
    co_coll_copy_same(in, partial, count, dt);
    if (!excl && in != rbuf) co_coll_copy_same(in, rbuf, count, dt);
    int have = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        int dst = me ^ mask;
        if (dst >= n) continue;
        int r = co_sendrecv(partial, count, dt, dst, co_coll_tag(c, CO_TAG_SCAN), tmp, count, dt,
                            dst, co_coll_tag(c, CO_TAG_SCAN), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
        if (dst < me) { /* tmp covers the ranks just below mine */
            co_op_apply(op, dt, tmp, partial, count);
            if (!excl || have)
                co_op_apply(op, dt, tmp, rbuf, count);
            else
                co_coll_copy_same(tmp, rbuf, count, dt);
            have = 1;
        } else if (op->commute) {
            co_op_apply(op, dt, tmp, partial, count);
        } else {
            co_op_apply(op, dt, partial, tmp, count);
            void *t = partial;
            partial = tmp;
            tmp = t;
        }
    }
    co_coll_free(pb);
    co_coll_free(tb);
    return rc;
}

static int scan_shm(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                    int excl) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    size_t per = co_cshm_elems(s, dt);
    const void *stack[CO_COLL_SRCS];
    const void **src = co_coll_srcs(n, stack);
    uint64_t g = s->seq;
    size_t rounds = (count + per - 1) / per;
    int top = excl ? me - 1 : me; /* fold operands 0..top */
    for (size_t k = 0; k < rounds; k++) {
        size_t e0 = k * per, m = CO_MIN(per, count - e0);
        uint64_t h = g + 2 * k;
        unsigned b = (unsigned)((g + k) % CO_CSHM_NBUF); /* consecutive collectives rotate */
        /* the last rank's operand is nobody else's business */
        if (me < n - 1) co_cshm_put_image(s, b, in, e0, m, dt, h + 1, h + 2, 0);
        co_cshm_operands(s, b, h + 1, top, in, e0, m, e0, dt, src, &rc, 0);
        if (top >= 0 && !rc)
            rc = co_coll_reduce_n(op, dt, m, src, top + 1, co_coll_elem(rbuf, e0, dt));
        co_cshm_post(s, h + 2);
    }
    s->seq = g + 2 * rounds;
    if (src != stack) co_coll_free(src);
    return rc;
}

int co_scan_run(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                int excl) {
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0 || dt->size == 0) return MPI_SUCCESS;
    if (c->size == 1) {
        if (!excl && in != rbuf) co_coll_copy_same(in, rbuf, count, dt);
        return MPI_SUCCESS;
    }
    int kind = excl ? CO_COLL_EXSCAN : CO_COLL_SCAN;
    switch (co_coll_pick(c, kind, count * dt->size, op, dt)) {
    case CO_SCAN_RECURSIVE_DOUBLING: return scan_rd(in, rbuf, count, dt, op, c, excl);
    case CO_SCAN_SHM: return scan_shm(in, rbuf, count, dt, op, c, excl);
    case CO_SCAN_CMA: return co_scan_cma(in, rbuf, count, dt, op, c, excl);
    case CO_SCAN_CHAIN: return co_scan_chain(in, rbuf, count, dt, op, c, excl);
    default: return scan_linear(in, rbuf, count, dt, op, c, excl);
    }
}

int co_scan(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c) {
    return co_scan_run(sbuf, rbuf, count, dt, op, c, 0);
}
