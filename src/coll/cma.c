/* Data movement by single copy: the engine behind the "cma" algorithms of Gather(v),
 * Scatter(v), Allgather(v) and Alltoall(v). A rank describes in its shared buffer, one
 * entry per block, where each block it offers lies: small blocks are copied inline into the
 * buffer itself, large ones are left in place and the peer copies them straight from (or,
 * for gather, into) the owner's memory with one process_vm_readv/writev. Readers follow the
 * entries, so the ranks need not agree on sizes in advance: this is what lets the
 * v-variants use shared memory at all, and a rank whose blocks are all small never waits
 * for its readers. Alltoall(v) with more than two ranks sends its largest blocks as
 * point-to-point messages instead (ALLTOALLV_P2P).
 *
 * Steps: g+1, the entries (and inline data, or for gather the writes) are in place; g+2, a
 * rank has finished taking what it needed. A rank that offered a block in place waits for
 * everyone's g+2 before it returns (its buffer may change as soon as it does). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* Blocks at least this large go by single copy (a system call cost about what copying 16
 * KiB twice does on the machine this was first measured on; docs/collectives.md). Between
 * two ranks, one per core, from 8 KiB: a block copied inline is read from the other core's
 * cache, which costs more than the system call from there (µs, 8 KiB blocks inline against
 * single copy: Gather 1.48-1.59 / 0.97-0.99, Scatter 1.61-1.67 / 0.97-0.99, Allgather
 * 2.08-2.13 / 1.67-1.74, Alltoall 2.15-2.23 / 1.71-1.93; at 4 KiB inline stays ahead for
 * Allgather and Alltoall, 1.28-1.34 against 1.50-1.57, and at 2 KiB for all). With more
 * ranks than cores inline stays ahead to 16 KiB (Gatherv of 8 KiB blocks at 4 ranks
 * 1.83-1.95 against 2.68-2.84). Where single copy is costly (CO_CMA_COSTLY_NS), blocks of
 * 16 KiB go inline too between two ranks, and a gather's senders, who copy only their own
 * block, inline theirs up to 32 KiB when there are more (a Scatter root copying every block
 * inline was slower at 4 ranks). */
#define CMA_MIN      16384
#define CMA_MIN_PAIR 8192
static size_t cma_min(int n) {
    if (n == 2) return co_coll_cma_costly() ? CMA_MIN + 1 : CMA_MIN_PAIR;
    return CMA_MIN;
}
/* Gather(v) and Scatter(v) between two ranks take single copy from 4 KiB: one block each
 * way, no block of the reader's own to copy meanwhile (4 KiB blocks, µs: Gather 0.85-0.89
 * against 0.90-0.92 inline, Scatter 0.86 against 1.01-1.05). Where single copy is costly,
 * a 2-rank block goes inline whenever it fits the buffer beside its entry (64 KiB does), as
 * Gather and Scatter take their shm algorithm there (far CPUs, µs, Gatherv / Scatterv inline
 * against by system call: 32 KiB 2.0 / 2.5 against 4.3 / 4.6, 64 KiB 3.7 / 4.2 against 6.8 /
 * 6.1). */
static size_t rooted_min(int n) {
    if (n == 2) return co_coll_cma_costly() ? 64 * 1024 + 1 : 4096;
    return co_coll_cma_costly() ? 32768 + 1 : CMA_MIN;
}
/* With more than two ranks, Alltoallv inlines blocks below this (see co_cma_alltoallv) and
 * Scatterv below SCATTER_INLINE: its root alone copies every inline block while the readers
 * wait, where by single copy they all copy at once. 8 ranks, µs, 4 KiB limit against the
 * old 16 KiB, near: 8 KiB blocks 5.5-6.0 / 7.2-9.6, 12 KiB 5.9-6.5 / 9.2-11.4; far: 8 KiB
 * 6.1-7.5 / 21-23, 12 KiB 6.7-7.9 / 31-33; 4 ranks near, 12 KiB 4.9-6.0 / 6.4-7.2. Up to 4
 * KiB inline stays ahead (4 ranks, 4 KiB: 2.6-3.3 against 4.6-5.3 by single copy). */
#define ALLTOALL_INLINE (32768 + 1)
#define SCATTER_INLINE  (4096 + 1)
/* Where single copy is costly, Alltoallv inlines blocks as large as Alltoall's shm algorithm
 * takes there (docs/collectives.md, "Costly single copy on filled buffers"): 4 ranks, 64 KiB
 * blocks, 23.4 us inline against 58-65 by system call; 2 ranks, 64 KiB, 5.8 against 7.6. */
static size_t alltoall_inline(int n) {
    if (n == 2) return co_coll_cma_costly() ? 64 * 1024 + 1 : CMA_MIN_PAIR;
    if (!co_coll_cma_costly()) return ALLTOALL_INLINE;
    return n <= 4 ? 128 * 1024 + 1 : 64 * 1024 + 1;
}
/* With more than two ranks, Alltoallv sends blocks from this size as point-to-point
 * messages in the linear algorithms' send mode (co_coll_linear_mode: with 3 ranks sender and
 * receiver share the copy, whichever of them is on a core copying, docs/runtime.md; from 4
 * the receiver copies the whole block), instead of a single-copy read. The sender decides
 * from its own count and says so in its entry (ENT_P2P), and the receiver follows the
 * entry: the ranks need not agree in advance. */
#define ALLTOALLV_P2P (512 * 1024)
#define ENT_P2P       UINT64_MAX /* an entry's inl: the block comes as a message */

typedef struct co_cma_ent_ {
    uint64_t addr;  /* where the block lies in its owner's memory (remote entries) */
    uint64_t bytes; /* packed size */
    uint64_t inl;   /* 1 + offset of an inline copy in the owner's buffer; 0: remote */
} ent;

/* Room for n entries and some inline data in one buffer? */
int co_cma_fits(const co_cshm *s, int n) { /* gather's root table has n entries */
    return (size_t)n * sizeof(ent) + 4096 <= co_cshm_cap(s);
}

/* Scratch that lives until the end of the collective. */
typedef struct scratch {
    char **p;
    int n, cap;
} scratch;

static char *scratch_alloc(scratch *t, size_t bytes) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        char **p = co_coll_alloc((size_t)t->cap * sizeof(*t->p));
        if (!p) co_fatal("out of memory");
        if (t->n) memcpy(p, t->p, (size_t)t->n * sizeof(*t->p));
        co_coll_free(t->p);
        t->p = p;
    }
    char *m = co_coll_alloc(bytes);
    if (!m) co_fatal("out of memory");
    return t->p[t->n++] = m;
}

static void scratch_free(scratch *t) {
    for (int i = 0; i < t->n; i++) co_coll_free(t->p[i]);
    co_coll_free(t->p);
}

/* Bytes to skip before an inline copy of `bytes` bytes from src to dst, so that dst does not
 * lie just past src modulo 4 KiB: the copy's loads would then wait on its own stores of the
 * same low address bits (4K aliasing). */
static size_t alias_pad(const char *dst, const void *src, size_t bytes) {
    if (bytes < 4096) return 0;
    size_t d = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    return d && d < 64 ? ((64 - d) + 15) & ~(size_t)15 : 0;
}

/* Describe (buf, count, dt) in *v: inline at pay + *used if smaller than inl_max and there
 * is room, else by address (packed first when not contiguous). `at` is added to an inline
 * offset (a spill buffer's distance, see inline_at). Returns 1 for a remote entry. The
 * caller stores *v in the table and keeps its own copy: the table's first line is the one
 * readers poll, so a load from it right after the stores waits for the line to come back
 * (the stores cannot be forwarded to a wider load). */
static int offer(const co_cshm *s, char *pay, size_t *used, ent *v, const void *buf, size_t count,
                 co_dtype *dt, scratch *t, size_t inl_max, size_t at) {
    *v = (ent){.bytes = count * dt->size};
    if (v->bytes < inl_max && *used + v->bytes <= co_cshm_cap(s)) {
        if (dt->contig) {
            size_t pad = alias_pad(pay + *used, (const char *)buf + dt->true_lb, v->bytes);
            if (*used + pad + v->bytes <= co_cshm_cap(s)) *used += pad;
        }
        co_dt_pack(dt, count, buf, 0, pay + *used, v->bytes);
        v->inl = at + *used + 1;
        *used += (v->bytes + 15) & ~(size_t)15;
        return 0;
    }
    if (dt->contig) {
        v->addr = (uint64_t)(uintptr_t)((const char *)buf + dt->true_lb);
    } else {
        char *m = scratch_alloc(t, v->bytes);
        co_dt_pack(dt, count, buf, 0, m, v->bytes);
        v->addr = (uint64_t)(uintptr_t)m;
    }
    co_cma_expose((const void *)(uintptr_t)v->addr, v->bytes);
    return 1;
}

/* An inline copy may lie in one of the owner's later buffers (alltoallv spills there):
 * `inl` - 1 is then that buffer's distance from b times the capacity, plus the offset. */
static const char *inline_at(const co_cshm *s, int q, unsigned b, uint64_t inl) {
    size_t cap = co_cshm_cap(s), at = (size_t)inl - 1;
    return co_cshm_data(s, q, (unsigned)((b + at / cap) % CO_CSHM_NBUF)) + at % cap;
}

/* Take block e of rank q, published in its buffer b, into (buf, count, dt). */
static int take(const co_cshm *s, int q, unsigned b, const ent *e, void *buf, size_t count,
                co_dtype *dt) {
    size_t want = count * dt->size, n = CO_MIN(e->bytes, want);
    int rc = co_coll_sizes(e->bytes, want);
    if (!n) return rc;
    if (e->inl) {
        co_dt_unpack(dt, count, buf, 0, inline_at(s, q, b, e->inl), n);
    } else if (dt->contig) {
        co_cma_read(s->pids[q], (char *)buf + dt->true_lb, (const void *)(uintptr_t)e->addr, n);
    } else {
        char *m = co_coll_alloc(n);
        if (!m) co_fatal("out of memory");
        co_cma_read(s->pids[q], m, (const void *)(uintptr_t)e->addr, n);
        co_dt_unpack(dt, count, buf, 0, m, n);
        co_coll_free(m);
    }
    return rc;
}

static void finish(co_cshm *s, uint64_t g) {
    co_cshm_post(s, g + 2);
    s->seq = g + 2;
}

/* Readers post g+2 as soon as they have read, and copy their own block afterwards: a peer
 * waiting to reuse its buffer need not wait for that copy too. */
static void leave(co_cshm *s, uint64_t g, int wait) {
    if (wait) co_cshm_wait_all(s, g + 2);
    s->seq = g + 2;
}

/* A table holds entries for the n-1 peers only, the next rank's first: with two ranks the
 * one entry and up to 24 bytes of inline data share the cache line a reader polls. */
static inline int slot(int owner, int peer, int n) {
    return (peer - owner - 1 + n) % n;
}

#define BLOCK(buf, displ, dt) ((char *)(buf) + (MPI_Aint)(displ)*co_dt_extent(dt))

/* Where a rank's inline blocks start: after its table (tab bytes), moved on through the
 * buffer from call to call like the other shared payloads (co_cshm_spread) when the blocks
 * it inlines, `bytes` together, fit more than once. Readers follow the entries' offsets, so
 * only the writer computes it. */
static size_t inline_start(const co_cshm *s, uint64_t g, size_t tab, size_t bytes) {
    size_t cap = co_cshm_cap(s);
    co_cshm_spreading(s, bytes);
    return tab + (tab + bytes <= cap ? co_cshm_spread_in(cap - tab, g + 1, bytes) : 0);
}

int co_cma_allgatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int me = s->me, rc = MPI_SUCCESS;
    uint64_t g = s->seq;
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    scratch t = {0};
    char *pay = co_cshm_acquire(s, b);
    size_t inl_max = cma_min(s->n);
    size_t bytes = sbuf == MPI_IN_PLACE ? (size_t)rcounts[me] * rdt->size : scount * sdt->size;
    size_t used = inline_start(s, g, sizeof(ent), bytes < inl_max ? bytes : 0);
    int remote;
    ent v;
    if (sbuf == MPI_IN_PLACE)
        remote = offer(s, pay, &used, &v, BLOCK(rbuf, displs[me], rdt), (size_t)rcounts[me], rdt,
                       &t, inl_max, 0);
    else
        remote = offer(s, pay, &used, &v, sbuf, scount, sdt, &t, inl_max, 0);
    *(ent *)pay = v;
    co_cshm_publish(s, b, g + 1, 0, g + 2);
    co_cshm_iter it;
    co_cshm_iter_init(&it, s);
    CO_CSHM_EACH_READY(s, &it, b, g + 1, q) {
        const char *qp = co_cshm_data(s, q, b);
        int r =
            take(s, q, b, (const ent *)qp, BLOCK(rbuf, displs[q], rdt), (size_t)rcounts[q], rdt);
        if (r && !rc) rc = r;
    }
    co_cshm_iter_fini(&it);
    co_cshm_post(s, g + 2);
    if (sbuf != MPI_IN_PLACE) {
        int r =
            co_coll_copy(sbuf, scount, sdt, BLOCK(rbuf, displs[me], rdt), (size_t)rcounts[me], rdt);
        if (r && !rc) rc = r;
    }
    leave(s, g, remote);
    scratch_free(&t);
    return rc;
}

/* Alltoallv's blocks that go point to point (ALLTOALLV_P2P): their requests, and the
 * first error in starting them. */
typedef struct co_p2p_blocks {
    co_comm *c;
    co_req **reqs;
    int n, rc;
} co_p2p_blocks;

static void p2p_post(co_p2p_blocks *m, int send, void *buf, size_t count, co_dtype *dt, int peer) {
    co_comm *c = m->c;
    if (!m->reqs) { /* at most one send and one receive per peer */
        m->reqs = co_coll_zalloc(2 * (size_t)c->size, sizeof(*m->reqs));
        if (!m->reqs) co_fatal("out of memory");
    }
    int tag = co_coll_tag(c, CO_TAG_ALLTOALL), r;
    if (send)
        r = co_isend(buf, count, dt, peer, tag, c, co_coll_ctx(c), co_coll_linear_mode(c),
                     &m->reqs[m->n]);
    else
        r = co_irecv(buf, count, dt, peer, tag, c, co_coll_ctx(c), &m->reqs[m->n]);
    if (r) {
        if (!m->rc) m->rc = r;
        return;
    }
    m->n++;
}

/* Waits for every message of m; the first error, of starting one or of one's completion. */
static int p2p_finish(co_p2p_blocks *m) {
    int rc = m->rc;
    if (m->n) {
        int r = co_coll_waitall(m->n, m->reqs);
        if (r && !rc) rc = r;
    }
    co_coll_free(m->reqs);
    return rc;
}

/* Offer my blocks for every peer (the farthest peers' last: they read last) in the table of
 * n-1 entries at the start of my buffer g % NBUF, inline data after it (for Alltoall(v),
 * `spread`, at inline_start's place: rooted Scatter measured 20% slower spread at 2 KiB
 * between two ranks). Inline blocks that do
 * not fit spill into my other buffers, not to single copy (readers find them by the offset,
 * inline_at): Alltoallv's 16 KiB blocks at 8 ranks need two. Spares are taken one, three,
 * two buffers on: successive two-step collectives start in buffers two apart, so the odd
 * ones are the least likely to be wanted next. A spare stays mine until every rank is past
 * g+2. Returns 1 if any block is remote. */
static int offer_blocks(co_cshm *s, uint64_t g, ent *tab, const void *sbuf, const int *counts,
                        const int *displs, co_dtype *dt, scratch *t, size_t inl_max, ent *first,
                        co_p2p_blocks *m, int spread) {
    static const unsigned spare[CO_CSHM_NBUF] = {0, 1, 3, 2};
    int n = s->n, me = s->me, remote = 0, k = 0;
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    size_t cap = co_cshm_cap(s), used = (size_t)(n - 1) * sizeof(ent), all = 0;
    char *room = (char *)tab;
    for (int d = 0; spread && d < n; d++) {
        size_t bytes = (size_t)counts[d] * dt->size;
        if (d != me && bytes < inl_max && !(m && bytes >= ALLTOALLV_P2P))
            all += (bytes + 15) & ~(size_t)15;
    }
    if (spread) used = inline_start(s, g, used, all);
    for (int j = 1; j < n; j++) {
        int d = (me + j) % n;
        size_t bytes = (size_t)counts[d] * dt->size;
        size_t pad = dt->contig
                         ? alias_pad(room + used, BLOCK(sbuf, displs[d], dt) + dt->true_lb, bytes)
                         : 0;
        if (bytes < inl_max && used + pad + bytes > cap && bytes <= cap && k + 1 < CO_CSHM_NBUF) {
            unsigned bk = (b + spare[++k]) % CO_CSHM_NBUF;
            room = co_cshm_acquire(s, bk);
            s->free_at[bk] = g + 2;
            used = 0;
        }
        ent v;
        if (m && bytes >= ALLTOALLV_P2P) {
            v = (ent){.bytes = bytes, .inl = ENT_P2P};
            p2p_post(m, 1, (void *)BLOCK(sbuf, displs[d], dt), (size_t)counts[d], dt, d);
        } else {
            remote |= offer(s, room, &used, &v, BLOCK(sbuf, displs[d], dt), (size_t)counts[d], dt,
                            t, inl_max, spare[k] * cap);
        }
        tab[slot(me, d, n)] = v;
        if (j == 1 && first) *first = v;
    }
    return remote;
}

int co_cma_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, co_dtype *sdt,
                     void *rbuf, const int *rcounts, const int *rdispls, co_dtype *rdt,
                     co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    uint64_t g = s->seq;
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    scratch t = {0};
    ent *tab = (ent *)co_cshm_acquire(s, b);
    /* With more than two ranks, blocks up to 32 KiB go inline: every rank copies (Alltoallv
     * of 16 KiB blocks, 4 ranks: 9.7 µs against 14.6 by system call; 8 ranks: 55 against 63).
     * With two, a rank's one system call is cheaper than the second copy (16 KiB: 4.0
     * against 2.4) where single copy is cheap; where it is costly, inline wins up to 64 KiB
     * (alltoall_inline). Scatterv inlines less (SCATTER_INLINE). */
    co_p2p_blocks m = {.c = c};
    int remote = offer_blocks(s, g, tab, sbuf, scounts, sdispls, sdt, &t, alltoall_inline(n), NULL,
                              n > 2 ? &m : NULL, 1);
    co_cshm_publish(s, b, g + 1, 0, g + 2);
    co_cshm_iter it;
    co_cshm_iter_init(&it, s);
    CO_CSHM_EACH_READY(s, &it, b, g + 1, q) {
        const ent *e = (const ent *)co_cshm_data(s, q, b) + slot(q, me, n);
        void *to = BLOCK(rbuf, rdispls[q], rdt);
        int r;
        if (e->inl == ENT_P2P) { /* a size that disagrees is the receive's error */
            p2p_post(&m, 0, to, (size_t)rcounts[q], rdt, q);
            r = co_coll_sizes(e->bytes, (size_t)rcounts[q] * rdt->size);
        } else {
            r = take(s, q, b, e, to, (size_t)rcounts[q], rdt);
        }
        if (r && !rc) rc = r;
    }
    co_cshm_iter_fini(&it);
    co_cshm_post(s, g + 2);
    int r = co_coll_copy(BLOCK(sbuf, sdispls[me], sdt), (size_t)scounts[me], sdt,
                         BLOCK(rbuf, rdispls[me], rdt), (size_t)rcounts[me], rdt);
    if (r && !rc) rc = r;
    r = p2p_finish(&m);
    if (r && !rc) rc = r;
    leave(s, g, remote);
    scratch_free(&t);
    return rc;
}

/* Two ranks, a large contiguous block: the root writes the head of its peer's block while
 * the peer reads the tail, so both cores copy. The root also copies its own block, and a
 * local copy runs about twice as fast as a single-copy transfer here, so it takes the
 * smaller share (a quarter) unless it has no copy of its own. Both sides compute the split
 * from the root's size and the peer's capacity. */
static size_t coop_split(size_t bytes, size_t cap, int root_copies) {
    size_t nb = CO_MIN(bytes, cap);
    /* Below 64 KiB a root that copies its own block writes nothing into the peer: a system
     * call saved is worth more than a share of the copy (Scatter at 16-48 KiB took 15-25%
     * less). From 64 KiB sharing wins: Gather(v) and Scatter(v) of 64 KiB took 15-17% less
     * shared than by the peer alone (21 interleaved runs), whose 64 KiB took longer than
     * 80 KiB shared. */
    if (root_copies && nb < 64 * 1024) return 0;
    return (root_copies ? nb / 4 : nb / 2) & ~(size_t)63;
}

/* Whether the two ranks share the copy of the block entry e describes (then both compute
 * the split with coop_split). */
static int coop_block(int n, const ent *e) {
    return n == 2 && !e->inl && e->bytes >= CMA_MIN;
}

int co_cma_scatterv(const void *sbuf, const int *scounts, const int *displs, co_dtype *sdt,
                    void *rbuf, size_t rcount, co_dtype *rdt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    uint64_t g = s->seq;
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    if (me != root) {
        size_t cap = rcount * rdt->size;
        uint64_t root_copies;
        const char *rp = co_cshm_read(s, root, b, g + 1, &root_copies);
        const ent *e = (const ent *)rp + slot(root, me, n);
        if (coop_block(n, e)) {
            /* tell the root where to write: my buffer, or scratch to unpack from */
            ent *mine = (ent *)co_cshm_acquire(s, b);
            char *m = rdt->contig ? NULL : co_coll_alloc(cap);
            mine->addr = (uint64_t)(uintptr_t)(m ? m : (char *)rbuf + rdt->true_lb);
            mine->bytes = cap;
            co_cma_expose((const void *)(uintptr_t)mine->addr, cap);
            co_cshm_publish(s, b, g + 1, 0, g + 2);
            size_t x = coop_split(e->bytes, cap, (int)root_copies);
            size_t nb = CO_MIN(e->bytes, cap);
            if (!rc) rc = co_coll_sizes(e->bytes, cap);
            if (nb > x)
                co_cma_read(s->pids[root], (char *)(uintptr_t)mine->addr + x,
                            (const char *)(uintptr_t)e->addr + x, nb - x);
            co_cshm_post(s, g + 2);
            co_cshm_wait(s, root, g + 2); /* the root's part is written */
            if (m) co_dt_unpack(rdt, rcount, rbuf, 0, m, nb);
            co_coll_free(m);
            s->seq = g + 2;
            return rc;
        }
        rc = take(s, root, b, e, rbuf, rcount, rdt);
        finish(s, g);
        return rc;
    }
    scratch t = {0};
    ent *tab = (ent *)co_cshm_acquire(s, b);
    ent e0 = {0}; /* my entry for the next rank, kept here: readers poll the line it is in */
    int remote = offer_blocks(s, g, tab, sbuf, scounts, displs, sdt, &t,
                              n > 2 ? SCATTER_INLINE : rooted_min(n), &e0, NULL, 0);
    int copies = rbuf != MPI_IN_PLACE; /* in the header: tells a coop peer my share */
    co_cshm_publish(s, b, g + 1, (uint64_t)copies, g + 2);
    if (coop_block(n, &e0)) {
        int p = 1 - me;
        const ent *pe = (const ent *)co_cshm_read(s, p, b, g + 1, NULL);
        size_t x = coop_split(e0.bytes, pe->bytes, copies);
        if (x) co_cma_write(s, p, (const char *)(uintptr_t)e0.addr, (char *)(uintptr_t)pe->addr, x);
    }
    co_cshm_post(s, g + 2); /* my part of the copying into others is done */
    if (rbuf != MPI_IN_PLACE)
        rc =
            co_coll_copy(BLOCK(sbuf, displs[me], sdt), (size_t)scounts[me], sdt, rbuf, rcount, rdt);
    leave(s, g, remote);
    scratch_free(&t);
    return rc;
}

/* Gather writes instead of reads, so that the senders copy in parallel: the root publishes
 * where each block goes (its receive buffer, or scratch to unpack from when that is not
 * contiguous); a sender with a large block writes it there before publishing its entry.
 * The root's header says ROOT_TABLE besides its share of a coop copy: ranks that name
 * different roots then find a table where they expect an entry, or an entry where they
 * expect a table, and report MPI_ERR_ROOT instead of taking one for the other (a root would
 * take another root's table for a block that was written in place, and lose it). A sender
 * whose root turned out not to be one says NOT_WRITTEN, so that the real root does not take
 * its entry for a block written in place either.
 * With two ranks the root, once its own block is copied, reads the head of its peer's large
 * block while the peer writes the tail (coop_split, as in Scatter): the peer publishes its
 * entry first and posts g+2 when its part is written, then waits for the root's g+2. */
#define ROOT_TABLE  2
#define NOT_WRITTEN 4

int co_cma_gatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
                   const int *displs, co_dtype *rdt, int root, co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    uint64_t g = s->seq;
    unsigned b = (unsigned)(g % CO_CSHM_NBUF);
    if (me != root) {
        char *pay = co_cshm_acquire(s, b);
        size_t used = sizeof(ent);
        scratch t = {0};
        ent e;
        int remote = offer(s, pay, &used, &e, sbuf, scount, sdt, &t, rooted_min(n), 0);
        *(ent *)pay = e;
        if (!remote) {
            co_cshm_publish(s, b, g + 1, 0, g + 2);
            finish(s, g);
            return rc;
        }
        uint64_t root_copies;
        const ent *dst = (const ent *)co_cshm_read(s, root, b, g + 1, &root_copies) + me;
        if (!(root_copies & ROOT_TABLE)) { /* the root gathers elsewhere: nothing to write */
            co_cshm_publish(s, b, g + 1, NOT_WRITTEN, g + 2);
            finish(s, g);
            scratch_free(&t);
            return MPI_ERR_ROOT;
        }
        root_copies &= 1;
        size_t nb = CO_MIN(e.bytes, dst->bytes);
        const char *from = (const char *)(uintptr_t)e.addr;
        /* shared: the root reads [0, x) from here while I write the rest, so my entry goes
         * first; otherwise it tells the root that my block is in place */
        size_t x = coop_block(n, &e) ? coop_split(e.bytes, dst->bytes, (int)root_copies) : 0;
        if (x) co_cshm_publish(s, b, g + 1, 0, g + 2);
        if (nb > x) co_cma_write(s, root, from + x, (char *)(uintptr_t)dst->addr + x, nb - x);
        if (!x) co_cshm_publish(s, b, g + 1, 0, g + 2);
        finish(s, g);
        if (x) co_cshm_wait(s, root, g + 2); /* the root has read its share */
        scratch_free(&t);
        return rc;
    }
    char *pay = co_cshm_acquire(s, b);
    ent *tab = (ent *)pay;
    char *tmp = NULL;
    if (!rdt->contig) {
        size_t total = 0;
        for (int q = 0; q < n; q++) total += (size_t)rcounts[q] * rdt->size;
        tmp = co_coll_alloc(total);
        if (!tmp) co_fatal("out of memory");
    }
    size_t off = 0;
    for (int q = 0; q < n; q++) {
        tab[q].bytes = (size_t)rcounts[q] * rdt->size;
        tab[q].inl = 0;
        tab[q].addr =
            (uint64_t)(uintptr_t)(tmp ? tmp + off : BLOCK(rbuf, displs[q], rdt) + rdt->true_lb);
        if (q != me) co_cma_expose((const void *)(uintptr_t)tab[q].addr, tab[q].bytes);
        off += tab[q].bytes;
    }
    int copies = sbuf != MPI_IN_PLACE; /* in the header: tells a coop peer my share */
    co_cshm_publish(s, b, g + 1, (uint64_t)copies | ROOT_TABLE, g + 2);
    if (copies)
        rc =
            co_coll_copy(sbuf, scount, sdt, BLOCK(rbuf, displs[me], rdt), (size_t)rcounts[me], rdt);
    co_cshm_iter it;
    co_cshm_iter_init(&it, s);
    CO_CSHM_EACH_READY(s, &it, b, g + 1, q) {
        const char *qp = co_cshm_data(s, q, b);
        const ent *e = (const ent *)qp;
        size_t want = (size_t)rcounts[q] * rdt->size;
        uint64_t qh;
        co_cshm_read(s, q, b, g + 1, &qh);
        if (qh & (ROOT_TABLE | NOT_WRITTEN)) { /* q gathers too, or wrote for another root */
            rc = MPI_ERR_ROOT;
            continue;
        }
        if (!rc) rc = co_coll_sizes(e->bytes, want);
        size_t x = coop_block(n, e) ? coop_split(e->bytes, want, copies) : 0;
        if (x) { /* my share of the peer's block, then wait for the peer's share */
            co_cma_read(s->pids[q], (char *)(uintptr_t)tab[q].addr,
                        (const char *)(uintptr_t)e->addr, x);
            co_cshm_wait(s, q, g + 2);
        }
        if (e->inl) {
            co_dt_unpack(rdt, (size_t)rcounts[q], BLOCK(rbuf, displs[q], rdt), 0, qp + e->inl - 1,
                         CO_MIN(e->bytes, want));
        } else if (tmp) {
            co_dt_unpack(rdt, (size_t)rcounts[q], BLOCK(rbuf, displs[q], rdt), 0,
                         (const char *)(uintptr_t)tab[q].addr, CO_MIN(e->bytes, want));
        }
    }
    co_cshm_iter_fini(&it);
    co_coll_free(tmp);
    finish(s, g);
    return rc;
}
