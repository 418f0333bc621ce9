/* Reductions by single copy, for large vectors: every rank publishes where its operand lies
 * and the ranks read each other's operands with process_vm_readv instead of copying them
 * through shared buffers. Reduce-scatter: rank r reads block r of every peer and folds the N
 * operands in rank order (from the right, acc = d_q op acc, so non-commutative operators
 * work too). Allreduce has every rank write its reduced block into every peer's receive
 * buffer, Reduce into the root's; two ranks have their own way (reduce_pair). Scan and Exscan:
 * rank r folds operands 0..r (0..r-1) itself. Operands are raw memory images, so these take
 * dense types; writes into user buffers (Allreduce's and Reduce's block transfers) need
 * contiguous ones.
 *
 * Steps: g+1, addresses published; g+2, my part is combined (and written) and I have read
 * all I need of the others' operands. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

typedef struct addrs {
    uint64_t in;  /* image of my operand (element 0's first data byte) */
    uint64_t out; /* my receive buffer, same convention */
} addrs;

/* What a rank publishes in its buffer of the call: its addresses and, for the chain scan,
 * how many elements of the prefix it passes on are final. */
typedef struct published {
    addrs a;
    _Atomic uint64_t done;
} published;

/* What a rank publishes with its addresses, which every reader checks before it touches
 * its memory: which engine entry (and root) it runs and the size of its operand. */
enum { OP_RS = 1, OP_REDUCE, OP_SCAN, OP_EXSCAN_PAIR, OP_CHAIN };
#define SIG_BYTES ((1ull << 48) - 1)
static uint64_t sig(int op, int root, size_t bytes) {
    return (uint64_t)bytes | (uint64_t)op << 60 | (uint64_t)((unsigned)(root + 1) & 0xfff) << 48;
}

/* Publishes my addresses (NULL: none) as step g+1, with `bytes` (sig()) for the readers'
 * checks and `done` for the chain's readers; returns where `done` lies. */
static _Atomic uint64_t *publish_addrs(co_cshm *s, uint64_t g, const void *in, void *out,
                                       const co_dtype *dt, uint64_t bytes, uint64_t done) {
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    if (in) co_cma_expose((const char *)in + dt->true_lb, bytes & SIG_BYTES);
    if (out) co_cma_expose((char *)out + dt->true_lb, bytes & SIG_BYTES);
    published *p = (published *)co_cshm_acquire(s, b);
    p->a.in = in ? (uint64_t)(uintptr_t)((const char *)in + dt->true_lb) : 0;
    p->a.out = out ? (uint64_t)(uintptr_t)((char *)out + dt->true_lb) : 0;
    atomic_store_explicit(&p->done, done, memory_order_relaxed);
    co_cshm_publish(s, b, g + 1, bytes, g + 2);
    return &p->done;
}

/* MPI_SUCCESS if ranks lo..hi all published what I did (sig()); else the ranks' calls
 * disagree, and nothing of theirs may be read or written. */
static int same_sizes(const co_cshm *s, uint64_t g, int lo, int hi, uint64_t mine) {
    for (int q = lo; q <= hi; q++) {
        if (q == s->me) continue;
        uint64_t qs;
        co_cshm_read(s, q, (unsigned)(g % CO_CSHM_NBUF), g + 1, &qs);
        int rc = (qs & ~SIG_BYTES) != (mine & ~SIG_BYTES)
                     ? MPI_ERR_OTHER
                     : co_coll_sizes(qs & SIG_BYTES, mine & SIG_BYTES);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

static const published *peer_published(const co_cshm *s, int q, uint64_t g) {
    return (const published *)co_cshm_read(s, q, (unsigned)(g % CO_CSHM_NBUF), g + 1, NULL);
}

static addrs peer_addrs(const co_cshm *s, int q, uint64_t g) {
    return peer_published(s, q, g)->a;
}

/* Read `count` elements of rank q's image at `remote` into a local image buffer. */
static void fetch(const co_cshm *s, int q, uint64_t remote, size_t elem0, void *local_buf,
                  size_t count, const co_dtype *dt) {
    if (!count) return;
    co_cma_read(s->pids[q], (char *)local_buf + dt->true_lb,
                (const void *)(uintptr_t)(remote + elem0 * (uint64_t)co_dt_extent(dt)),
                co_coll_span(dt, count));
}

/* Blocks of FOLD_SPLIT bytes and more are folded in pieces of FOLD_PIECE bytes (see fold). */
#define FOLD_SPLIT (1u << 20)
#define FOLD_PIECE (256u << 10)

/* acc = d_lo op ... op d_hi over elements [e0, e0+m) of every rank's operand, into `out`
 * (a typed buffer for m elements; may be where my own operand lies). `tmp` holds m
 * elements' images; the fold starts from rank `start`'s operand and accumulates in `ab`
 * when given (see fold), else in out. */
static void fold_part(co_cshm *s, uint64_t g, const void *in, int lo, int hi, int start, size_t e0,
                      size_t m, void *out, co_dtype *dt, co_op *op, void *tmp, void *ab) {
    int me = s->me;
    const void *mine = co_coll_elem(in, e0, dt);
    void *acc = ab ? ab : out;
    if (start == me)
        co_coll_copy_same(mine, acc, m, dt);
    else
        fetch(s, start, peer_addrs(s, start, g).in, e0, acc, m, dt);
    for (int k = hi; k >= lo; k--) {
        if (k == start) continue;
        if (k == me) {
            co_op_apply(op, dt, mine, acc, m);
        } else {
            fetch(s, k, peer_addrs(s, k, g).in, e0, tmp, m, dt);
            co_op_apply(op, dt, tmp, acc, m);
        }
    }
    if (acc != out) co_coll_copy_same(acc, out, m, dt);
}

/* A large block is folded piece by piece, so that the piece being accumulated and the
 * operand just fetched stay in the core's cache while every rank's operand is folded into
 * it: one pass over memory instead of one per rank (4 ranks, Reduce of 4 MiB: 21% less
 * time). Smaller blocks stay in the cache anyway, and more pieces are only more system
 * calls (2 ranks, 1 MiB: 13% more time in 256 KiB pieces). */
static int fold(co_cshm *s, uint64_t g, const void *in, int lo, int hi, size_t e0, size_t m,
                void *out, co_dtype *dt, co_op *op) {
    if (!m || hi < lo) return MPI_SUCCESS;
    size_t ext = (size_t)co_dt_extent(dt), chunk = m;
    if (ext && m * ext >= FOLD_SPLIT) chunk = ext < FOLD_PIECE ? FOLD_PIECE / ext : 1;
    /* Accumulate straight into out when the fold can start there: from my own operand (a
     * typed copy; commutative, or I am the last), or from a fetched one when out has no
     * gaps for the raw image to overwrite. */
    int me = s->me, start = op->commute && me >= lo && me <= hi ? me : hi;
    int apart = (!op->commute && hi != me) || (start != me && !dt->contig);
    void *tb, *ab = NULL;
    void *tmp = co_coll_tmpbuf(dt, chunk, &tb),
         *acc = apart ? co_coll_tmpbuf(dt, chunk, &ab) : NULL;
    if (!tmp || (apart && !acc)) co_fatal("out of memory in a reduction");
    for (size_t c0 = 0; c0 < m; c0 += chunk)
        fold_part(s, g, in, lo, hi, start, e0 + c0, CO_MIN(chunk, m - c0),
                  co_coll_elem(out, c0, dt), dt, op, tmp, acc);
    co_coll_free(tb);
    co_coll_free(ab);
    return MPI_SUCCESS;
}

int co_rs_cma(const void *in, void *out, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c) {
    co_cshm *s = c->coll->shm;
    uint64_t g = s->seq;
    uint64_t mine = sig(OP_RS, -1, count * dt->size);
    publish_addrs(s, g, in, NULL, dt, mine, 0);
    int rc = same_sizes(s, g, 0, s->n - 1, mine);
    if (!rc) rc = fold(s, g, in, 0, s->n - 1, dsp[s->me], cnt[s->me], out, dt, op);
    co_cshm_post(s, g + 2);
    co_cshm_wait_all(s, g + 2);
    s->seq = g + 2;
    return rc;
}

/* Blocks for Reduce and Allreduce (more than two ranks). For Reduce the others also write
 * their block into the root's buffer (three passes over it against the root's two), so the
 * root takes a block one and a half times as large and everyone finishes together. */
static void blocks(size_t count, int n, int root, size_t *cnt, size_t *dsp) {
    if (root < 0) {
        co_coll_blocks(count, n, cnt, dsp);
        return;
    }
    size_t off = 0;
    size_t big = count * 3 / (size_t)(2 * n + 1), rest = count - big;
    for (int i = 0, k = 0; i < n; i++) {
        if (i == root) {
            cnt[i] = big;
        } else {
            cnt[i] = rest / (size_t)(n - 1) + ((size_t)k < rest % (size_t)(n - 1) ? 1 : 0);
            k++;
        }
        dsp[i] = off;
        off += cnt[i];
    }
}

/* ---- Reduce and Allreduce on two ranks ------------------------------------------------------
 * A rank that gets the result (the root; with Allreduce both) reads its peer's operand piece
 * by piece and folds it into its own. Nothing that one rank wrote during the call is read by
 * the other, which on these machines costs more than the copy itself: letting the peer
 * write its operand's tail into the root's buffer for the root to fold made 16 KiB take
 * 4.3 µs instead of 1.7. Above PAIR_SPLIT_MIN bytes a Reduce's peer takes part: it reads the
 * tail of the root's operand, folds its own into it and writes the result into the root's
 * receive buffer, which the root does not read. The root says where the tail starts (its
 * published `done`); the peer follows. Every rank folds rank 0's operand first, and with a
 * user-defined operator in that order even if it commutes, so both results of an Allreduce
 * are the same bits (the peer's part is for predefined operators, or for a peer that is
 * rank 0).
 * Steps as above: g+1, addresses published; g+2, I have read (and written) my part. */
/* bytes fetched and folded at a time: Allreduce of 1 MiB took 81 µs in pieces of 128 KiB,
 * 89 in 64 KiB and 90 in 256 KiB (16 KiB pieces, which stay in the first-level cache, cost
 * more in system calls than they save: 64 KiB 5.3 µs against 4.1) */
#define PAIR_PIECE (128u << 10)
/* A Reduce's root leaves the last 35% of a vector above this to its peer. Interleaved, µs,
 * root alone / 35% to the peer / 40%: 128 KiB 7.68 / 7.75 / 7.88, 256 KiB 14.3 / 13.5 /
 * 13.9, 1 MiB 54.0 / 41.0 / 43.8; 4 MiB 335-375 alone, 216-229 shared. The earlier blocks
 * (the root a 65% block, the peer folding the rest in a scratch vector) took 59-70 µs at
 * 1 MiB and 310-325 at 4 MiB. */
#define PAIR_SPLIT_MIN (128u << 10)
/* An Allreduce above this is split: each rank computes one half, rank 0's operand first,
 * and writes it into its peer's receive buffer after reading the peer's operand there, so
 * in place needs no scratch vector, and both ranks hold the same bits whatever the
 * operator. Each rank reads half a vector and writes half where unsplit it reads a whole
 * one, and folds half. Interleaved, µs, split / whole: 32 KiB 3.70 / 3.53, 48 KiB 4.55 /
 * 5.04, 64 KiB 5.69-5.85 / 6.41-6.59, 256 KiB 18.0 / 24.3, 1 MiB 68.6 / 86.4, 4 MiB 383 /
 * 396. */
#define ALLRED_SPLIT_MIN (32u << 10)

static int reduce_pair(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                       co_cshm *s) {
    uint64_t g = s->seq;
    int me = s->me, p = 1 - me;
    uint64_t mine = sig(OP_REDUCE, root, count * dt->size);
    size_t ext = (size_t)co_dt_extent(dt), piece = ext < PAIR_PIECE ? PAIR_PIECE / ext : 1;
    size_t h = count;
    if (root >= 0 && me == root && count * dt->size > PAIR_SPLIT_MIN &&
        (root == 1 || (op->commute && op->predefined)))
        h = count - count / 20 * 7;
    /* Allreduce, split: each rank computes one half and writes it into its peer's buffer */
    int split = root < 0 && count * dt->size > ALLRED_SPLIT_MIN;
    size_t lo = 0, hi = h;
    if (split) {
        lo = me == 0 ? 0 : count / 2;
        hi = me == 0 ? count / 2 : count;
    }
    publish_addrs(s, g, in, me == root || split ? rbuf : NULL, dt, mine, h);
    int rc = same_sizes(s, g, p, p, mine);
    void *lb = NULL, *out = rbuf;
    if (!rc && root >= 0 && me != root) {
        const published *rp = peer_published(s, root, g);
        size_t rh = (size_t)atomic_load_explicit(&rp->done, memory_order_relaxed);
        void *tb = NULL, *tmp = NULL;
        if (rh < count && !(tmp = co_coll_tmpbuf(dt, CO_MIN(piece, count - rh), &tb)))
            co_fatal("out of memory in a reduction");
        for (size_t e0 = rh; e0 < count; e0 += piece) {
            size_t m = CO_MIN(piece, count - e0);
            fetch(s, root, rp->a.in, e0, tmp, m, dt);
            co_op_apply(op, dt, co_coll_elem(in, e0, dt), tmp, m);
            co_cma_write(s, root, (char *)tmp + dt->true_lb,
                         (void *)(uintptr_t)(rp->a.out + e0 * ext), m * dt->size);
        }
        co_coll_free(tb);
    }
    if (!rc && (root < 0 || me == root)) {
        /* Allreduce in place, unsplit: the peer reads my operand in rbuf until it posts g+2
         * (split, it reads only its half, which I leave alone) */
        if (root < 0 && !split && in == rbuf && !(out = co_coll_tmpbuf(dt, count, &lb)))
            co_fatal("out of memory in a reduction");
        addrs pa = peer_addrs(s, p, g);
        uint64_t theirs = pa.in;
        /* straight into the result where my operand is elsewhere and comes first (rank 0),
         * or where the order cannot change the bits (predefined operators) */
        int direct = in != out && (me == 0 || (op->commute && op->predefined));
        void *tb = NULL, *tmp = NULL;
        if (!direct && !(tmp = co_coll_tmpbuf(dt, CO_MIN(piece, count), &tb)))
            co_fatal("out of memory in a reduction");
        for (size_t e0 = lo; e0 < hi; e0 += piece) {
            size_t m = CO_MIN(piece, hi - e0);
            const void *x = co_coll_elem(in, e0, dt);
            void *r = co_coll_elem(out, e0, dt);
            if (direct) { /* r = mine op theirs */
                fetch(s, p, theirs, e0, r, m, dt);
                co_op_apply(op, dt, x, r, m);
            } else if (me == 1) { /* r = theirs op mine */
                fetch(s, p, theirs, e0, tmp, m, dt);
                if (x != r) co_coll_copy_same(x, r, m, dt);
                co_op_apply(op, dt, tmp, r, m);
            } else { /* rank 0 in place, not direct: r = mine op theirs */
                fetch(s, p, theirs, e0, tmp, m, dt);
                co_op_apply(op, dt, x, tmp, m);
                co_coll_copy_same(tmp, r, m, dt);
            }
            if (split) /* after reading the peer's operand there, which may be that buffer */
                co_cma_write(s, p, (char *)r + dt->true_lb, (void *)(uintptr_t)(pa.out + e0 * ext),
                             m * dt->size);
        }
        co_coll_free(tb);
    }
    co_cshm_post(s, g + 2);
    co_cshm_wait(s, p, g + 2);
    s->seq = g + 2;
    if (out != rbuf) {
        co_coll_copy_same(out, rbuf, count, dt);
        co_coll_free(lb);
    }
    return rc;
}

/* root < 0: allreduce. `dt` is contiguous. */
int co_reduce_cma(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                  co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (n == 2) return reduce_pair(in, rbuf, count, dt, op, root, s);
    size_t stack[64];
    size_t *cnt = n <= 32 ? stack : co_coll_alloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) co_fatal("out of memory");
    size_t *dsp = cnt + n;
    blocks(count, n, root, cnt, dsp);
    uint64_t g = s->seq;
    int all = root < 0, has_out = all || me == root;
    uint64_t mine = sig(OP_REDUCE, root, count * dt->size);
    publish_addrs(s, g, in, has_out ? rbuf : NULL, dt, mine, 0);
    void *ob = NULL;
    void *out = has_out ? co_coll_elem(rbuf, dsp[me], dt) : co_coll_tmpbuf(dt, cnt[me], &ob);
    if (!out) co_fatal("out of memory in a reduction");
    rc = same_sizes(s, g, 0, n - 1, mine);
    if (!rc) rc = fold(s, g, in, 0, n - 1, dsp[me], cnt[me], out, dt, op);
    /* My reduced block into the root's receive buffer, or with Allreduce into every peer's,
     * where only I read that peer's operand (in place) and have done so. Writing it from my
     * cache beats each peer reading it from there (Allreduce, 4 ranks, µs, write / read:
     * 1 MiB 297 / 404, 4 MiB 1162 / 1376; 3 ranks 1 MiB 250 / 334). */
    if (!rc && cnt[me])
        for (int j = 1; j < n; j++) {
            int q = (me + j) % n;
            if (!all && q != root) continue;
            uint64_t dst = peer_addrs(s, q, g).out + dsp[me] * (uint64_t)co_dt_extent(dt);
            co_cma_write(s, q, (char *)out + dt->true_lb, (void *)(uintptr_t)dst,
                         cnt[me] * dt->size);
        }
    co_cshm_post(s, g + 2);
    co_cshm_wait_all(s, g + 2);
    s->seq = g + 2;
    co_coll_free(ob);
    if (cnt != stack) co_coll_free(cnt);
    return rc;
}

/* Exscan on two ranks: rank 1's result is rank 0's operand, so rank 0 writes the first half
 * into rank 1's buffer while rank 1 reads the second (up to CO_CMA_SPLIT_MIN rank 1 reads
 * it all: 16 KiB took 1.15 µs instead of 1.4). */
static int exscan_pair(const void *in, void *rbuf, size_t count, co_dtype *dt, co_cshm *s) {
    uint64_t g = s->seq;
    int me = s->me, p = 1 - me;
    uint64_t mine = sig(OP_EXSCAN_PAIR, -1, count * dt->size);
    publish_addrs(s, g, in, rbuf, dt, mine, 0);
    addrs a = peer_addrs(s, p, g);
    size_t h = count * dt->size <= CO_CMA_SPLIT_MIN ? 0 : count / 2;
    size_t ext = (size_t)co_dt_extent(dt);
    int rc = same_sizes(s, g, p, p, mine);
    if (!rc && me == 0 && h)
        co_cma_write(s, p, (const char *)in + dt->true_lb, (void *)(uintptr_t)a.out, h * dt->size);
    else if (!rc && me == 1 && count > h)
        co_cma_read(s->pids[p], (char *)rbuf + dt->true_lb + h * ext,
                    (const void *)(uintptr_t)(a.in + h * ext), (count - h) * dt->size);
    co_cshm_post(s, g + 2);
    co_cshm_wait(s, p, g + 2);
    s->seq = g + 2;
    return rc;
}

int co_scan_cma(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                int excl) {
    co_cshm *s = c->coll->shm;
    if (excl && s->n == 2 && dt->contig) return exscan_pair(in, rbuf, count, dt, s);
    uint64_t g = s->seq;
    uint64_t mine = sig(OP_SCAN, -1, count * dt->size);
    publish_addrs(s, g, in, NULL, dt, mine, 0);
    int top = excl ? s->me - 1 : s->me;
    /* in place, the peers read my operand from rbuf until they post g+2 */
    void *tb = NULL;
    void *out = in == rbuf && top >= 0 ? co_coll_tmpbuf(dt, count, &tb) : rbuf;
    if (!out) co_fatal("out of memory in a scan");
    int rc = same_sizes(s, g, 0, top, mine);
    if (!rc) rc = fold(s, g, in, 0, top, 0, count, out, dt, op);
    co_cshm_post(s, g + 2);
    co_cshm_wait_all(s, g + 2);
    if (out != rbuf) co_coll_copy_same(out, rbuf, count, dt);
    co_coll_free(tb);
    s->seq = g + 2;
    return rc;
}

/* ---- Chain scan -----------------------------------------------------------------------------
 * Rank r reads rank r-1's inclusive prefix, piece by piece as rank r-1 finishes it, folds in
 * its own operand and so finishes its own prefix piece by piece for rank r+1: N-1 reads and
 * folds of the vector in all (the fold above does N(N-1)/2), and the ranks of the chain work
 * on different pieces at once. The prefix a rank passes on is its receive buffer (Scan), a
 * scratch vector (Exscan, whose result is the prefix before it) or, at rank 0, its operand.
 * Steps: g+1, the prefix's address is published (as `in`, its progress as `done`); g+2, I
 * have read all I need from rank r-1. A rank returns once rank r+1 is past g+2 (its prefix
 * may change after that). */

#define CHAIN_PIECE (64u << 10) /* bytes per piece */

int co_scan_chain(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                  int excl) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, last = me == n - 1, rc = MPI_SUCCESS;
    uint64_t g = s->seq;
    size_t ext = (size_t)co_dt_extent(dt);
    size_t piece = ext < CHAIN_PIECE ? CHAIN_PIECE / ext : 1;
    void *fb = NULL, *tb = NULL, *fwd = me == 0 ? (void *)in : excl ? NULL : rbuf;
    if (!fwd && !last && !(fwd = co_coll_tmpbuf(dt, count, &fb)))
        co_fatal("out of memory in a scan");
    uint64_t mine = sig(OP_CHAIN, excl, count * dt->size);
    _Atomic uint64_t *done = publish_addrs(s, g, fwd, NULL, dt, mine, me == 0 ? count : 0);
    if (me == 0) {
        if (!excl && in != rbuf) co_coll_copy_same(in, rbuf, count, dt);
    } else if (!(rc = same_sizes(s, g, 0, me - 1, mine))) {
        const published *p = peer_published(s, me - 1, g);
        /* straight into my receive buffer where the fold may start there (see fold) */
        int direct = !excl && op->commute && in != rbuf && dt->contig;
        void *tmp = NULL;
        if (!direct && !(excl && dt->contig) &&
            !(tmp = co_coll_tmpbuf(dt, CO_MIN(piece, count), &tb)))
            co_fatal("out of memory in a scan");
        for (size_t e0 = 0; e0 < count; e0 += piece) {
            size_t m = CO_MIN(piece, count - e0);
            const void *x = co_coll_elem(in, e0, dt);
            void *r = co_coll_elem(rbuf, e0, dt);
            co_cshm_wait_word(&p->done, e0 + m);
            if (direct) { /* r = x op prefix (commutative) */
                fetch(s, me - 1, p->a.in, e0, r, m, dt);
                co_op_apply(op, dt, x, r, m);
            } else if (!excl) { /* r = prefix op x */
                fetch(s, me - 1, p->a.in, e0, tmp, m, dt);
                if (in != rbuf) co_coll_copy_same(x, r, m, dt);
                co_op_apply(op, dt, tmp, r, m);
            } else { /* r = prefix; pass on prefix op x (x copied first: it may be r) */
                void *f = last ? NULL : co_coll_elem(fwd, e0, dt), *pre = tmp ? tmp : r;
                if (f) co_coll_copy_same(x, f, m, dt);
                fetch(s, me - 1, p->a.in, e0, pre, m, dt);
                if (f) co_op_apply(op, dt, pre, f, m);
                if (pre != r) co_coll_copy_same(pre, r, m, dt);
            }
            atomic_store_explicit(done, e0 + m, memory_order_release);
        }
    }
    if (rc) atomic_store_explicit(done, count, memory_order_release); /* nothing to wait for */
    co_cshm_post(s, g + 2);
    if (!last) co_cshm_wait(s, me + 1, g + 2);
    s->seq = g + 2;
    co_coll_free(tb);
    co_coll_free(fb);
    return rc;
}
