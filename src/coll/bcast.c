/* MPI_Bcast: binomial tree and scatter + ring allgather (point-to-point), a pipeline through
 * the root's shared-memory buffers, single copy (every rank reads the root's buffer with
 * process_vm_readv; with two ranks the root also writes half into its peer's buffer, so
 * both cores copy), and self-tuning trees (the tree travels with the message; src/tune
 * chooses it). Large data moves as packed bytes, so any datatype works and the ranks need
 * only agree on the type signature. */
#include "coll.h"
#include "../tune/tune.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

const co_coll_alg co_bcast_algs[] = {
    {"binomial", 0, "binomial tree rooted at the root (point-to-point)"},
    {"scatter_allgather", 0,
     "binomial scatter of N pieces, then a ring allgather (point-to-point, large messages)"},
    {"shm", CO_ALG_SHM,
     "root copies pieces into its shared buffers, the others copy them out (pipelined)"},
    {"cma", CO_ALG_CMA,
     "every rank reads the root's buffer (process_vm_readv; large ones in pieces, each reader "
     "starting at a different one); with 2 ranks root and peer each copy half"},
    {"tuned", 0,
     "a tree chosen by the root's tuner, sent with the message (point-to-point; chosen where "
     "ranks do not share memory, docs/tuning.md)"},
};
CO_ALG_TABLE_CHECK(co_bcast_algs, CO_BCAST_NALGS);

typedef struct binomial_args {
    void *buf;
    size_t count;
    co_dtype *dt;
    int root;
} binomial_args;
static int binomial_body(co_comm *c, const void *arg) {
    const binomial_args *a = arg;
    return co_bcast_binomial(a->buf, a->count, a->dt, a->root, c);
}

int co_bcast_binomial(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    if (co_coll_unwatched())
        return co_coll_layer_body(c, CO_COLL_BCAST, root, (uint64_t)count * dt->size, binomial_body,
                                  &(binomial_args){buf, count, dt, root});
    int n = c->size, rc = MPI_SUCCESS;
    if (n < 2 || count == 0) return MPI_SUCCESS;
    int rel = (c->rank - root + n) % n;
    int mask = 1;
    size_t fwd = count;
    while (mask < n) {
        if (rel & mask) {
            int src = (rel - mask + root) % n;
            co_status st;
            rc = co_recv(buf, count, dt, src, co_coll_tag(c, CO_TAG_BCAST), c, co_coll_ctx(c), &st);
            /* a short message (the root's count is smaller) goes on short, whole elements
             * only, so that the ranks below report it too */
            if (rc == MPI_ERR_COUNT && dt->size) fwd = st.bytes / dt->size;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < n) {
            int dst = (rel + mask + root) % n;
            int r = co_send(buf, fwd, dt, dst, co_coll_tag(c, CO_TAG_BCAST), c, co_coll_ctx(c));
            if (r && !rc) rc = r;
        }
        mask >>= 1;
    }
    return rc;
}

/* The packed bytes of (buf, count, dt): the buffer itself when contiguous, else a copy
 * (filled from buf when `fill`). */
static char *packed_view(void *buf, size_t count, co_dtype *dt, int fill, char **tmp) {
    size_t bytes = count * dt->size;
    *tmp = NULL;
    if (dt->contig) return (char *)buf + dt->true_lb;
    *tmp = co_coll_alloc(bytes);
    if (!*tmp) return NULL;
    if (fill) co_dt_pack(dt, count, buf, 0, *tmp, bytes);
    return *tmp;
}

static int bcast_scatter_allgather(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    size_t bytes = count * dt->size;
    char *tmp;
    char *w = packed_view(buf, count, dt, me == root, &tmp);
    if (!w) return MPI_ERR_NO_MEM;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    size_t bs = (bytes + (size_t)n - 1) / (size_t)n;
#define LO(i) CO_MIN((size_t)(i)*bs, bytes)
    int rel = (me - root + n) % n;
    int mask = 1;
    /* A rank that received a piece of another size than it expected (the root's count
     * differs, and with it every piece's bounds) sends empty pieces from then on, so that
     * every rank after it reports the mismatch too instead of taking pieces placed by other
     * bounds for data (the root, whose pieces these are, gets them as they are: too large or
     * too small). This takes the place of the blocking collectives' own rule
     * (co_st.coll_short, off meanwhile), which would send the root empty pieces too. */
    int outer = co_st.coll_short, shortfall = outer > 0;
    co_st.coll_short = -1;
#define SEND(lo, hi, to) (shortfall && (to) != root ? 0 : (hi) - (lo))
    while (mask < n) {
        if (rel & mask) {
            int src = (rel - mask + root) % n;
            size_t lo = LO(rel), hi = LO(CO_MIN(rel + mask, n));
            int r = co_recv(w + lo, hi - lo, byte, src, co_coll_tag(c, CO_TAG_BCAST), c,
                            co_coll_ctx(c), NULL);
            if (r && !rc) rc = r;
            shortfall |= r == MPI_ERR_COUNT || r == MPI_ERR_TRUNCATE;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < n) {
            int dst = (rel + mask + root) % n;
            size_t lo = LO(rel + mask), hi = LO(CO_MIN(rel + 2 * mask, n));
            int r = co_send(w + lo, SEND(lo, hi, dst), byte, dst, co_coll_tag(c, CO_TAG_BCAST), c,
                            co_coll_ctx(c));
            if (r && !rc) rc = r;
        }
        mask >>= 1;
    }
    /* ring allgather over relative ranks: every rank holds piece `rel`; the root gets its own
     * pieces back, into scratch, so that pieces of another size (counts that differ) never
     * overwrite what it broadcasts */
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    char *sink = me == root ? co_coll_alloc(bs ? bs : 1) : NULL;
    if (me == root && !sink) co_fatal("out of memory in a broadcast");
    for (int k = 0; k < n - 1; k++) {
        int sb = (rel - k + n) % n, rb = (rel - k - 1 + n) % n;
        int r =
            co_sendrecv(w + LO(sb), SEND(LO(sb), LO(sb + 1), right), byte, right,
                        co_coll_tag(c, CO_TAG_BCAST), sink ? sink : w + LO(rb), LO(rb + 1) - LO(rb),
                        byte, left, co_coll_tag(c, CO_TAG_BCAST), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
        shortfall |= r == MPI_ERR_COUNT || r == MPI_ERR_TRUNCATE;
    }
    co_st.coll_short = outer == 0 && rc ? 1 : outer;
    co_coll_free(sink);
#undef SEND
#undef LO
    if (tmp) {
        if (me != root) co_dt_unpack(dt, count, buf, 0, tmp, bytes);
        co_coll_free(tmp);
    }
    return rc;
}

/* Pieces of a large broadcast: a few, so that readers copy one piece while the root writes
 * the next, but not so small that steps cost more than copies. Root and readers derive it
 * from the root's total size. */
static size_t piece_size(size_t total, size_t cap) {
    if (total <= 8192) return cap;
    size_t p = (total / 4 + 4095) & ~(size_t)4095;
    return CO_MIN(CO_MAX(p, 4096), cap);
}

/* One step per piece: the root publishes piece j in its buffer (g+j) % NBUF as step g+j+1;
 * a reader copies it out and posts the same step. The root waits for readers only to reuse
 * a buffer. */
static int bcast_shm(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    size_t bytes = count * dt->size;
    uint64_t g = s->seq;
    int rc = MPI_SUCCESS;
    if (s->me == root) {
        size_t P = piece_size(bytes, co_cshm_cap(s)), nch = (bytes + P - 1) / P;
        for (size_t j = 0; j < nch; j++) {
            unsigned b = (unsigned)((g + j) % CO_CSHM_NBUF);
            char *d = co_cshm_acquire(s, b);
            size_t off = j * P, len = CO_MIN(P, bytes - off);
            co_dt_pack(dt, count, buf, off, d + co_cshm_spread(s, g + j + 1, len), len);
            co_cshm_publish(s, b, g + j + 1, bytes, g + j + 1);
        }
        s->seq = g + nch;
        return rc;
    }
    uint64_t total;
    co_cshm_read(s, root, (unsigned)(g % CO_CSHM_NBUF), g + 1, &total);
    rc = co_coll_sizes(total, bytes);
    size_t P = piece_size(total, co_cshm_cap(s)), nch = (total + P - 1) / P;
    size_t have = CO_MIN(total, bytes);
    for (size_t j = 0; j < nch; j++) {
        unsigned b = (unsigned)((g + j) % CO_CSHM_NBUF);
        const char *d = co_cshm_read(s, root, b, g + j + 1, NULL);
        size_t off = j * P;
        d += co_cshm_spread(s, g + j + 1, CO_MIN(P, total - off));
        if (off < have) co_dt_unpack(dt, count, buf, off, d, CO_MIN(P, have - off));
        co_cshm_post(s, g + j + 1);
    }
    s->seq = g + nch;
    return rc;
}

/* Rank q's addresses (ctl) describe this step of this algorithm: a rank that posted the
 * step from another algorithm left other ones there (its calls disagree with mine). A
 * later step cannot be there: the root waits for every reader's g+2 before it leaves, and a
 * reader for the root's. */
static void check_pub(const co_cshm *s, int q, uint64_t pub) {
    uint64_t theirs = atomic_load_explicit(&s->ctl[q].pub, memory_order_relaxed);
    if (CO_UNLIKELY(theirs != pub))
        co_coll_differ(q,
                       theirs >> CO_CSHM_TAG_BITS == pub >> CO_CSHM_TAG_BITS
                           ? (unsigned)(theirs & CO_CSHM_TAG_MASK)
                           : 0,
                       s->tag);
}

/* Step g+1: addresses published. Step g+2: a reader has finished reading (and, with two
 * ranks, the root has finished writing into its peer). The root's published size carries
 * AS_ROOT: a rank that names another root than its peers finds a reader's buffer where it
 * expects the root's and reports MPI_ERR_ROOT instead of copying it. */
#define AS_ROOT (1ull << 63)
static int bcast_cma(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int me = s->me, n = s->n, rc = MPI_SUCCESS;
    size_t bytes = count * dt->size;
    uint64_t g = s->seq;
    char *tmp;
    char *w = packed_view(buf, count, dt, me == root, &tmp);
    if (!w) co_fatal("out of memory in a broadcast");
    co_cma_expose(w, bytes);
    co_cshm_ctl *mine = &s->ctl[me];
    uint64_t pub = (g + 1) << CO_CSHM_TAG_BITS | s->tag;
    atomic_store_explicit(&mine->addr, (uint64_t)(uintptr_t)w, memory_order_relaxed);
    atomic_store_explicit(&mine->bytes, me == root ? bytes | AS_ROOT : bytes, memory_order_relaxed);
    atomic_store_explicit(&mine->pub, pub, memory_order_relaxed);
    co_cshm_post(s, g + 1);
    /* with two ranks the root writes the head, the peer reads the tail; up to 32 KiB the
     * peer reads it all (the root's system call and handshake cost more than half the copy
     * saves: 16 KiB took 1.07 µs instead of 1.34, 64 KiB 2.5 instead of 2.0) */
    size_t split = 0;
    if (me == root) {
        if (n == 2 && bytes > CO_CMA_SPLIT_MIN) {
            int p = 1 - me;
            co_cshm_wait(s, p, g + 1);
            check_pub(s, p, pub);
            uint64_t pb = atomic_load_explicit(&s->ctl[p].bytes, memory_order_relaxed);
            if (pb & AS_ROOT) rc = MPI_ERR_ROOT; /* (so is the peer: neither reads) */
            split = pb & AS_ROOT ? 0 : CO_MIN(bytes / 2, pb);
            char *remote =
                (char *)(uintptr_t)atomic_load_explicit(&s->ctl[p].addr, memory_order_relaxed);
            if (split) co_cma_write(s, p, w, remote, split);
        }
        co_cshm_post(s, g + 2);
        co_cshm_wait_all(s, g + 2);
    } else {
        co_cshm_wait(s, root, g + 1);
        check_pub(s, root, pub);
        uint64_t total = atomic_load_explicit(&s->ctl[root].bytes, memory_order_relaxed);
        const char *remote =
            (const char *)(uintptr_t)atomic_load_explicit(&s->ctl[root].addr, memory_order_relaxed);
        rc = total & AS_ROOT ? co_coll_sizes(total & ~AS_ROOT, bytes) : MPI_ERR_ROOT;
        total = total & AS_ROOT ? total & ~AS_ROOT : 0; /* not a root: nothing to read */
        size_t n_in = CO_MIN(total, bytes);
        if (n == 2 && total > CO_CMA_SPLIT_MIN) split = CO_MIN(total / 2, bytes);
        if (n_in > split)
            co_cma_read_spread(s->pids[root], w + split, remote + split, n_in - split,
                               (me - root + n) % n - 1, n - 1);
        co_cshm_post(s, g + 2);
        co_cshm_wait(s, root, g + 2);
    }
    s->seq = g + 2;
    if (tmp) {
        if (me != root) co_dt_unpack(dt, count, buf, 0, tmp, bytes);
        co_coll_free(tmp);
    }
    return rc;
}

/* ---- Self-tuning trees ----------------------------------------------------------------------
 * Every message carries a header and the receiver's subtree in preorder, (rank, size) pairs
 * (co_tree_preorder): the receiver forwards to its children what lies below each of them,
 * so no rank needs to know the tree beforehand and the root may change it at every call.
 * The data travels in the same message: up to TREE_INLINE bytes copied behind the tree,
 * beyond as a struct type over the packet and the user's buffer (one message, no copy; a
 * second message only past INT_MAX elements). Each message has room for a whole tree, so
 * that its length, which a collective receive checks, is the same everywhere. When the root
 * times the call, acknowledgements travel back up the tree: a rank acknowledges to its
 * parent once it has sent to its children and each of them has acknowledged (a leaf at once);
 * the root's call ends with its children's. Not each leaf straight to the root: that leaf's
 * own link to the root, which the broadcast never uses, would count in the tree's time.
 *
 * Calls that disagree: the header names the sender's root, so a rank that names another gets
 * MPI_ERR_ROOT (and still passes the tree on). A rank whose message had another length than
 * it expected (the root's count differs) still finds the header and its subtree at the front,
 * and passes on the header and tree alone, so that every rank below reports the mismatch
 * too and every rank still acknowledges: the root, which has nothing wrong, returns as with
 * the other algorithms instead of waiting for acknowledgements that would never come. This
 * takes the place of the blocking collectives' own rule (co_st.coll_short, off meanwhile). */
enum { TREE_MAGIC = 0x43425452, TREE_TIMED = 1, TREE_INLINE = 16384 };

typedef struct tree_hdr {
    uint32_t magic, flags, nent, root;
} tree_hdr;

/* What one tree message is: (mbuf, mcount, mdt), plus the data alone when split. */
typedef struct tree_msg {
    void *mbuf;
    size_t mcount;
    co_dtype *mdt, *pair;
    int inl, split;
} tree_msg;

static int tree_msg_init(tree_msg *m, char *pkt, size_t ctl, void *buf, size_t count, co_dtype *dt,
                         co_coll_comm *cc) {
    size_t bytes = count * dt->size;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    *m = (tree_msg){pkt, ctl, byte, NULL, bytes <= TREE_INLINE, 0};
    if (m->inl) {
        m->mcount = ctl + bytes;
    } else if (count <= INT_MAX) {
        int bl[2] = {(int)ctl, (int)count};
        MPI_Aint disp[2] = {(MPI_Aint)(uintptr_t)pkt, (MPI_Aint)(uintptr_t)buf};
        co_dtype *types[2] = {byte, dt};
        if (co_dt_struct(2, bl, disp, types, &m->pair)) return MPI_ERR_NO_MEM;
        *m = (tree_msg){MPI_BOTTOM, 1, m->pair, m->pair, 0, 0};
        cc->tune_pair = m->pair; /* an abandoned call (coll.c) jumps past the release */
    } else {
        m->split = 1;
    }
    return MPI_SUCCESS;
}

static int bcast_tuned(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS, timed = 0, data_rc = MPI_SUCCESS, parent = -1;
    int outer = co_st.coll_short;
    co_st.coll_short = -1;
    size_t bytes = count * dt->size, ctl = sizeof(tree_hdr) + (size_t)n * 8;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int tag = co_coll_tag(c, CO_TAG_BCAST);
    uint64_t ctx = co_coll_ctx(c);
    char *pkt = co_coll_alloc(ctl + (bytes <= TREE_INLINE ? bytes : 0));
    uint32_t *ent = co_coll_alloc((size_t)n * 8); /* (freed if the call is abandoned) */
    co_coll_comm *cc = co_coll_comm_of(c);
    if (cc->tune_pair) { /* left by an abandoned call */
        co_dt_release(cc->tune_pair);
        cc->tune_pair = NULL;
    }
    co_tune_ctx *t = NULL;
    uint64_t t0 = 0;
    tree_msg m = {0};
    if (!pkt || !ent || (rc = tree_msg_init(&m, pkt, ctl, buf, count, dt, cc))) {
        if (!rc) rc = MPI_ERR_NO_MEM;
        goto out;
    }
    tree_hdr h;
    if (me == root) {
        if (!cc->tune_key) cc->tune_key = co_tune_key(c);
        t = cc->tune_key ? co_tune_get(cc->tune_key, n, root, bytes) : NULL;
        if (!t || co_tree_preorder(co_tune_next(t, &timed), n, root, ent)) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        h = (tree_hdr){TREE_MAGIC, timed ? TREE_TIMED : 0, (uint32_t)n, (uint32_t)root};
        t0 = co_now_ns();
        if (m.inl) co_dt_pack(dt, count, buf, 0, pkt + ctl, bytes);
    } else {
        co_status st;
        rc = co_recv(m.mbuf, m.mcount, m.mdt, MPI_ANY_SOURCE, tag, c, ctx, &st);
        if ((rc == MPI_ERR_COUNT && st.bytes >= ctl) || rc == MPI_ERR_TRUNCATE) {
            data_rc = rc; /* the data is wrong; the header and tree are there */
            rc = MPI_SUCCESS;
        }
        if (rc) goto out;
        parent = st.source;
        memcpy(&h, pkt, sizeof(h));
        int whole = h.magic == TREE_MAGIC && h.nent >= 1 && h.nent <= (uint32_t)n;
        if (whole) memcpy(ent, pkt + sizeof(h), (size_t)h.nent * 8);
        if (!whole || ent[0] != (uint32_t)me || !co_tree_preorder_valid(ent, (int)h.nent, n)) {
            co_log(CO_LOG_ERROR, "tuned broadcast: rank %d sent a malformed tree", st.source);
            rc = MPI_ERR_INTERN;
            goto out;
        }
        if (h.root != (uint32_t)root) {
            co_debug("tuned broadcast: rank %d names root %u, this rank %d", st.source, h.root,
                     root);
            data_rc = MPI_ERR_ROOT;
        }
        if (m.inl && !data_rc)
            co_dt_unpack(dt, count, buf, 0, pkt + ctl, bytes);
        else if (m.split && !data_rc && (rc = co_recv(buf, count, dt, st.source, tag, c, ctx, &st)))
            goto out;
    }
    /* after a message of the wrong length, the header and tree alone (see above) */
    int shortfall = data_rc == MPI_ERR_COUNT || data_rc == MPI_ERR_TRUNCATE;
    /* each child gets its own subtree (the entries past it are left as they are: the child
     * reads only its own); the packet is reused (a send returns once its data has been
     * copied or taken) */
    uint32_t k = me == root ? (uint32_t)n : h.nent;
    for (uint32_t i = 1; i < k && !rc; i += ent[2 * i + 1]) {
        uint32_t sz = ent[2 * i + 1];
        int child = (int)ent[2 * i];
        tree_hdr ch = {TREE_MAGIC, h.flags, sz, h.root};
        memcpy(pkt, &ch, sizeof(ch));
        memcpy(pkt + sizeof(ch), ent + 2 * i, (size_t)sz * 8);
        if (shortfall)
            rc = co_send(pkt, ctl, byte, child, tag, c, ctx);
        else
            rc = co_send(m.mbuf, m.mcount, m.mdt, child, tag, c, ctx);
        if (!rc && m.split && !shortfall) rc = co_send(buf, count, dt, child, tag, c, ctx);
    }
    int ack = co_coll_tag(c, CO_TAG_TUNE);
    if (!rc && (h.flags & TREE_TIMED)) {
        for (uint32_t i = 1; i < k && !rc; i += ent[2 * i + 1])
            rc = co_recv(NULL, 0, byte, (int)ent[2 * i], ack, c, ctx, NULL);
        if (!rc && me != root) rc = co_send(NULL, 0, byte, parent, ack, c, ctx);
        if (!rc && me == root) co_tune_report(t, co_now_ns() - t0);
    }
out:
    if (m.pair) co_dt_release(m.pair);
    cc->tune_pair = NULL;
    co_coll_free(pkt);
    co_coll_free(ent);
    if (!rc) rc = data_rc;
    co_st.coll_short = outer == 0 && rc ? 1 : outer;
    return rc;
}

int co_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    if (co_coll_unwatched())
        return co_coll_layer(
            c,
            &(co_coll_args){
                .kind = CO_COLL_BCAST, .root = root, .rbuf = buf, .rcount = count, .rdt = dt},
            (uint64_t)count * dt->size);
    if (c->size < 2 || count == 0 || dt->size == 0) return MPI_SUCCESS;
    switch (co_coll_pick(c, CO_COLL_BCAST, count * dt->size, NULL, NULL)) {
    case CO_BCAST_SCATTER_ALLGATHER: return bcast_scatter_allgather(buf, count, dt, root, c);
    case CO_BCAST_SHM: return bcast_shm(buf, count, dt, root, c);
    case CO_BCAST_CMA: return bcast_cma(buf, count, dt, root, c);
    case CO_BCAST_TUNED: return bcast_tuned(buf, count, dt, root, c);
    default: return co_bcast_binomial(buf, count, dt, root, c);
    }
}
