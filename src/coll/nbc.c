/* Nonblocking collectives (MPI_Ibarrier, MPI_Ibcast, ...): each call compiles into a schedule
 * of rounds. A round posts its sends and receives at once; when they have all completed, its
 * local steps run (reductions, copies) and the next round starts. The progress engine advances
 * every schedule in flight (co_st.coll_progress), so a schedule moves on whatever MPI call the
 * process is in, not only in MPI_Test or MPI_Wait on its own request.
 *
 * Messages travel on the communicator's collective context with a tag of their own per
 * nonblocking call (CO_TAG_NBC plus the call's number on the communicator): collectives are
 * called in the same order on every rank, so the numbers agree, and neither blocking
 * collectives (tags below CO_TAG_NBC) nor another nonblocking call in flight can take a
 * schedule's messages.
 *
 * The algorithms aim at few rounds and no extra copies rather than at the blocking ones'
 * speed (docs/collectives.md, "Nonblocking collectives"): the counter barrier once the
 * communicator's segment is set up (dissemination before), binomial broadcast, binomial
 * reduction to rank 0 (in rank order, so non-commutative operators are right) and then to the
 * root, recursive doubling for Iallreduce (long vectors: recursive halving, then doubling of
 * the parts), one round straight to each block's rank for Ireduce_scatter(_block), a chain for
 * Iscan and Iexscan, and every transfer posted at once for the gathers, scatters, allgathers
 * and alltoalls (Alltoallw's blocking form runs its schedule too). Small calls of most
 * kinds go through the communicator's shared buffers instead, once its segment is set up
 * ("Shared-memory schedules" below). On intercommunicators the
 * schedules are the blocking ones' steps (inter.c), each group's on its hidden local communicator.
 * The same hook completes the MPI_Comm_idup calls that wait for their master (src/comm/create.c).
 */
#include "coll.h"
#include "../comm/comm.h"

/* A nonblocking call's tag: CO_TAG_NBC + its number on the communicator << NB_KIND_BITS |
 * its collective (next_tag). */
#define NB_KIND_BITS 5
_Static_assert(CO_COLL_NEIGHBOR_ALLTOALLW < 1 << NB_KIND_BITS, "a collective fits its tag bits");
#define NB_TAG_CALLS ((uint64_t)(0x7fffffff - CO_TAG_NBC) >> NB_KIND_BITS)

enum { NB_SEND, NB_RECV, NB_REDUCE, NB_COPY, NB_MEMCPY, NB_ARRIVE };

typedef struct nb_step {
    uint8_t type;
    uint8_t mode; /* send: its mode (CO_MODE_STD, or CO_MODE_RNDV, CO_MODE_PULL) */
    int peer;
    co_comm *on;     /* where the transfer goes: the call's communicator, or for an
                      * intercommunicator's steps inside a group its local communicator */
    const void *src; /* send, reduce (in), copy */
    void *dst;       /* recv, reduce (inout), copy */
    size_t count;    /* send, recv, reduce; copy: source count */
    co_dtype *dt;
    size_t count2; /* copy: destination count and type */
    co_dtype *dt2;
} nb_step;

#define NB_SHM_BYMSG_OWN 64

typedef struct nb_sched {
    struct nb_sched *next;
    co_req *req; /* the user's request */
    co_comm *c;
    co_comm *on; /* where the steps being built go (nb_step.on) */
    int tag;
    co_op *op;
    co_dtype *dts[2]; /* the call's datatypes, retained until the end */
    co_dtype **wdts;  /* Alltoallw's, 2 per rank (NULL where none), retained too */
    int nwdts;
    nb_step *steps;
    int nsteps, cap;
    int *ends; /* ends[k]: one past round k's last step */
    int nrounds, rcap, round, posted;
    co_req **pend; /* the current round's transfers */
    int npend, pcap;
    void **blocks; /* scratch memory (co_coll_scratch) */
    void *own;     /* MPI_Isendrecv_replace's copy of the data to send (malloc) */
    int nblocks, bcap;
    int err;
    /* MPI_Ibarrier as a counter barrier: its epoch on the communicator (0 for other calls);
     * once it has arrived, the round also waits for *word to reach epoch * (n - 1) */
    co_cshm *cshm;
    uint64_t epoch;
    const _Atomic uint64_t *word;
    /* A shared-memory schedule (shm_take): the segment, the steps it took (g+1: my payload
     * published, g+2: the peers' read), its buffer tag, how far it is, what it moves */
    co_cshm *sh;
    uint64_t g;
    unsigned shtag;
    int shstate, shnext;
    uint64_t ticket;        /* its number among the communicator's shared-memory calls */
    int lane;               /* a persistent request's run on its own lane (co_nbc_persistent) */
    size_t shbytes, shwant; /* what I publish, what I expect of each rank I read */
    /* a call with slots (shm_slotted): whether rank q's block to me comes as a message (in
     * bymsg_own up to NB_SHM_BYMSG_OWN ranks), whether I send a block inline (publish), the
     * bytes of a slot */
    char *bymsg, bymsg_own[NB_SHM_BYMSG_OWN];
    int shout;
    size_t shslot;
    co_coll_args sa;
    /* MPI_Isendrecv: a schedule of point-to-point messages (the communicator's own context and
     * the program's tags); its status is the receive's */
    int late_err; /* co_coll_args.err: reported at completion, sends unaffected */
    int p2p, stag, rtag;
    co_req *precv;
    co_status rstatus;
} nb_sched;

static nb_sched *active; /* schedules in flight, newest first */

int co_nbc_active(void) {
    return active != NULL;
}

static void *grow(void *p, int *cap, int need, size_t elem) {
    if (need <= *cap) return p;
    int n = *cap ? *cap * 2 : 8;
    while (n < need) n *= 2;
    void *q = realloc(p, (size_t)n * elem);
    if (!q) co_fatal("out of memory in a nonblocking collective");
    *cap = n;
    return q;
}

static nb_step *add(nb_sched *s, int type) {
    s->steps = grow(s->steps, &s->cap, s->nsteps + 1, sizeof(nb_step));
    nb_step *t = &s->steps[s->nsteps++];
    memset(t, 0, sizeof(*t));
    t->type = (uint8_t)type;
    t->on = s->on;
    return t;
}

/* Returns the step, whose mode the caller may set. */
static nb_step *nb_send(nb_sched *s, const void *buf, size_t count, co_dtype *dt, int peer) {
    nb_step *t = add(s, NB_SEND);
    t->src = buf, t->count = count, t->dt = dt, t->peer = peer;
    return t;
}

static void nb_recv(nb_sched *s, void *buf, size_t count, co_dtype *dt, int peer) {
    nb_step *t = add(s, NB_RECV);
    t->dst = buf, t->count = count, t->dt = dt, t->peer = peer;
}

/* inout = in op inout (in: the lower ranks' operand) */
static void nb_reduce(nb_sched *s, const void *in, void *inout, size_t count, co_dtype *dt) {
    nb_step *t = add(s, NB_REDUCE);
    t->src = in, t->dst = inout, t->count = count, t->dt = dt;
}

static void nb_copy(nb_sched *s, const void *src, size_t scount, co_dtype *sdt, void *dst,
                    size_t rcount, co_dtype *rdt) {
    if (src == dst && sdt == rdt && scount == rcount) return;
    nb_step *t = add(s, NB_COPY);
    t->src = src, t->count = scount, t->dt = sdt, t->dst = dst, t->count2 = rcount, t->dt2 = rdt;
}

/* `bytes` raw bytes (a memory image with its gaps). */
static void nb_memcpy(nb_sched *s, const void *src, void *dst, size_t bytes) {
    nb_step *t = add(s, NB_MEMCPY);
    t->src = src, t->dst = dst, t->count = bytes;
}

/* Closes the round being built (nothing if it is empty). */
static void nb_round(nb_sched *s) {
    int start = s->nrounds ? s->ends[s->nrounds - 1] : 0;
    if (s->nsteps == start) return;
    s->ends = grow(s->ends, &s->rcap, s->nrounds + 1, sizeof(int));
    s->ends[s->nrounds++] = s->nsteps;
}

/* Scratch for count elements of dt, laid out as dt says; freed with the schedule. */
static void *nb_tmp(nb_sched *s, co_dtype *dt, size_t count) {
    void *b = co_coll_scratch(count ? co_coll_span(dt, count) : 1);
    if (!b) co_fatal("out of memory in a nonblocking collective");
    s->blocks = grow(s->blocks, &s->bcap, s->nblocks + 1, sizeof(void *));
    s->blocks[s->nblocks++] = b;
    return (char *)b - dt->true_lb;
}

/* ---- Schedules --------------------------------------------------------------------------------
 */

/* MPI_Ibarrier: the counter barrier (barrier.c) on its own counters, when the communicator's
 * shared-memory segment is already set up (setting it up would wait for the others, and
 * MPI_Ibarrier must return at once; every rank has the same segment state, made by the same
 * earlier collectives): arriving adds one to every peer's counter, and the e-th such call
 * completes once the rank's own counter reaches e * (n - 1). A rank arrives at call e only
 * once its call e - 1 has completed (arrive_at): the count proves that every peer has arrived
 * only while no peer can have added for a later call, which the blocking barrier gets for free
 * and several MPI_Ibarrier calls in flight would break (two arrivals of one rank would stand
 * for a third rank that has not come yet). Not for persistent requests, whose starts may come
 * in different orders on different ranks, but on their own lanes (co_nbc_persistent).
 * Otherwise, and on intercommunicators,
 * dissemination: ceil(log2 n) rounds of empty messages. */
static void build_barrier(nb_sched *s, int counter) {
    int n = s->on->size, me = s->on->rank;
    co_coll_comm *cc = co_coll_comm_of(s->on);
    if (counter && n > 1 && cc->shm_state > 0 && co_coll_all_local(s->on)) {
        s->cshm = cc->shm;
        s->epoch = ++cc->ibarrier_epoch;
        add(s, NB_ARRIVE);
        nb_round(s);
        return;
    }
    co_dtype *byte = co_dt_get(MPI_BYTE);
    for (int d = 1; d < n; d <<= 1) {
        nb_send(s, NULL, 0, byte, (me + d) % n);
        nb_recv(s, NULL, 0, byte, (me - d + n) % n);
        nb_round(s);
    }
}

#define NB_BCAST_FLAT_MAX 8

/* With two ranks, a broadcast above this many bytes goes by rendezvous even below the eager
 * limit: the two processes then share one copy from the root's buffer, where an eager send
 * copies through the queue and the receiver reads lines the root has just written. 16 KiB
 * took 1.8 µs instead of 2.5 (12 KiB alike; 8 KiB and below no faster). With 4 and 8 ranks
 * it was slower (16 KiB: 5.0 against 2.7 µs, 8.2 against 6.4): the root then waits for
 * every receiver to match before its sends complete. */
#define NB_BCAST_PAIR_RNDV (8 * 1024)

/* From 4 ranks on, a flat tree's messages of more than NB_BCAST_PULL_MIN bytes, as long as all
 * readers together copy at most NB_BCAST_PULL_ALL, leave the whole single copy to each reader
 * (CO_MODE_PULL); with its share of each, the root copied half of every reader's message in
 * turn. Medians of 4-5 alternating runs, µs, shared / pulled: 4 ranks 64 KiB 6.6 / 8.0, 128 KiB
 * 11.9 / 9.4, 256 KiB 24.5 / 15.9, 512 KiB 53.0 / 41.6, 768 KiB 62.9 / 81.3, 4 MiB 421 / 622;
 * 6 ranks 256 KiB 24.7 / 18.0, 512 KiB 52.4 / 60.6; 8 ranks 256 KiB 26.9 / 21.5, 4 MiB 472 /
 * 690. At 3 ranks the share was as quick or quicker (512 KiB 27.2 / 41.0). */
#define NB_BCAST_PULL_MIN (64 * 1024)
#define NB_BCAST_PULL_ALL (2 * 1024 * 1024)

/* Up to NB_BCAST_FLAT_MAX ranks a flat tree: the root sends to every rank at once (with more
 * ranks than cores, inner ranks of a tree forward only once scheduled; docs/collectives.md,
 * "Nonblocking collectives", has the measurements). Beyond, a binomial tree from root:
 * receive from the parent, then send to every child at once. */
static void build_bcast(nb_sched *s, void *buf, size_t count, co_dtype *dt, int root) {
    int n = s->on->size, rel = (s->on->rank - root + n) % n, mask = 1;
    if (n <= NB_BCAST_FLAT_MAX) {
        if (rel)
            nb_recv(s, buf, count, dt, root);
        else
            for (int q = 1; q < n; q++) {
                nb_step *t = nb_send(s, buf, count, dt, (q + root) % n);
                size_t bytes = count * dt->size;
                if (n == 2 && bytes > NB_BCAST_PAIR_RNDV)
                    t->mode = CO_MODE_RNDV;
                else if (n > 3 && bytes > NB_BCAST_PULL_MIN &&
                         bytes * (size_t)(n - 1) <= NB_BCAST_PULL_ALL)
                    t->mode = CO_MODE_PULL;
            }
        nb_round(s);
        return;
    }
    for (; mask < n; mask <<= 1)
        if (rel & mask) {
            nb_recv(s, buf, count, dt, (rel - mask + root) % n);
            nb_round(s);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n) nb_send(s, buf, count, dt, (rel + mask + root) % n);
    nb_round(s);
}

/* Binomial reduction of every rank's `in` towards rank 0, which combines its subtree's
 * operands in rank order; then rank 0 hands the result to `root`, whose `out` it lands in. */
static void build_reduce(nb_sched *s, const void *in, void *out, size_t count, co_dtype *dt,
                         int root) {
    int n = s->on->size, me = s->on->rank;
    const void *acc = in; /* my subtree's operand so far */
    void *spare[2] = {NULL, NULL};
    int k = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            nb_send(s, acc, count, dt, me - mask);
            nb_round(s);
            break;
        }
        if (me + mask < n) { /* the next subtree: ranks me + mask .. */
            if (!spare[k]) spare[k] = nb_tmp(s, dt, count);
            nb_recv(s, spare[k], count, dt, me + mask);
            nb_reduce(s, acc, spare[k], count, dt);
            nb_round(s);
            acc = spare[k];
            k ^= 1;
        }
    }
    if (me == 0 && root == 0) {
        nb_copy(s, acc, count, dt, out, count, dt);
    } else if (me == 0) {
        nb_send(s, acc, count, dt, root);
    } else if (me == root) {
        nb_recv(s, out, count, dt, 0);
    }
    nb_round(s);
}

/* dst = lower op upper, where mine (at `src`) and theirs (received into `tmp`) are the two
 * operands and `theirs_lower` says which comes first in rank order; dst may be src. With a
 * non-commutative operator and theirs second, the result is formed in tmp and copied. */
static void nb_combine(nb_sched *s, const void *src, void *tmp, void *dst, size_t count,
                       co_dtype *dt, int theirs_lower) {
    if (theirs_lower || s->op->commute) {
        nb_copy(s, src, count, dt, dst, count, dt);
        nb_reduce(s, tmp, dst, count, dt);
    } else {
        nb_reduce(s, src, tmp, count, dt);
        nb_copy(s, tmp, count, dt, dst, count, dt);
    }
}

/* Iallreduce. With p the largest power of two not above n and r = n - p, ranks 2i and 2i+1
 * (i < r) first fold: 2i hands its operand to 2i+1 and waits for the result. The p ranks left
 * (new rank i: old 2i+1 below r, old i + r from there on) then combine by recursive doubling,
 * the whole vector each round; or, for long vectors from 4 ranks on, by recursive halving and
 * doubling: log2 p rounds in which partners swap halves of the part they hold and each
 * combines the half it keeps, so that each ends with 1/p of the result, then log2 p rounds in
 * which they swap what they hold. Partners are 1, 2, 4... new ranks apart, so every
 * combination joins two adjacent blocks of ranks, the lower one first: non-commutative
 * operators are applied in rank order. Halving pays only from 4 ranks on (with 2 or 3, one
 * swap of the whole vector was quicker at every size) and for long vectors,
 * COHORT_NBC_ALLREDUCE_SPLIT (docs/collectives.md, "Nonblocking collectives"). */
static void build_allreduce(nb_sched *s, const void *in, void *out, size_t count, co_dtype *dt) {
    int n = s->on->size, me = s->on->rank, p = 1;
    while (p * 2 <= n) p *= 2;
    int r = n - p;
    if (me < 2 * r && !(me & 1)) {
        nb_send(s, in, count, dt, me + 1);
        nb_round(s);
        nb_recv(s, out, count, dt, me + 1);
        nb_round(s);
        return;
    }
    void *tmp = nb_tmp(s, dt, count);
    const void *cur = in; /* my partial result */
    if (me < 2 * r) {
        nb_recv(s, tmp, count, dt, me - 1);
        nb_combine(s, in, tmp, out, count, dt, 1);
        nb_round(s);
        cur = out;
    }
    int nr = me < 2 * r ? me / 2 : me - r;
#define OLD(q) ((q) < r ? 2 * (q) + 1 : (q) + r)
    if (p < 4 || count < (size_t)p ||
        (double)count * (double)dt->size < (double)co_st.cfg.nbc_allreduce_split) {
        for (int mask = 1; mask < p; mask <<= 1) {
            int q = nr ^ mask;
            nb_send(s, cur, count, dt, OLD(q));
            nb_recv(s, tmp, count, dt, OLD(q));
            nb_combine(s, cur, tmp, out, count, dt, q < nr);
            nb_round(s);
            cur = out;
        }
    } else {
        size_t lo = 0, hi = count, los[32], his[32]; /* my part; before halving step k */
        int k = 0;
        for (int mask = 1; mask < p; mask <<= 1, k++) {
            int q = nr ^ mask, upper = nr & mask; /* I keep the upper half */
            size_t mid = lo + (hi - lo) / 2;
            size_t klo = upper ? mid : lo, khi = upper ? hi : mid;
            size_t glo = upper ? lo : mid, ghi = upper ? mid : hi;
            nb_send(s, co_coll_elem(cur, glo, dt), ghi - glo, dt, OLD(q));
            nb_recv(s, co_coll_elem(tmp, klo, dt), khi - klo, dt, OLD(q));
            nb_combine(s, co_coll_elem(cur, klo, dt), co_coll_elem(tmp, klo, dt),
                       co_coll_elem(out, klo, dt), khi - klo, dt, q < nr);
            nb_round(s);
            cur = out;
            los[k] = lo, his[k] = hi;
            lo = klo, hi = khi;
        }
        for (int mask = p >> 1; mask > 0; mask >>= 1) {
            int q = nr ^ mask, upper = nr & mask;
            k--;
            size_t olo = upper ? los[k] : hi, ohi = upper ? lo : his[k]; /* the other half */
            nb_send(s, co_coll_elem(out, lo, dt), hi - lo, dt, OLD(q));
            nb_recv(s, co_coll_elem(out, olo, dt), ohi - olo, dt, OLD(q));
            nb_round(s);
            lo = los[k], hi = his[k];
        }
    }
#undef OLD
    if (me < 2 * r) {
        nb_send(s, out, count, dt, me - 1);
        nb_round(s);
    }
}

/* Every transfer at once: block q of (sbuf, scounts, sdispls) to rank q and block q of
 * (rbuf, rcounts, rdispls) from it; my own block copied (when both sides are given). NULL
 * arrays: nothing sent (or received); sdispls may be NULL with scounts, meaning the same
 * block (sbuf) for everyone. From 3 ranks on each receiver copies its blocks whole
 * (CO_MODE_PULL): every rank then makes n - 1 single copies instead of 2(n - 1) halves, all
 * ranks being busy anyway. Medians of 4 alternating runs, µs, halves / whole: Ialltoall 3
 * ranks 64 KiB 22.2 / 20.5; 4 ranks 64 KiB 36.9 / 33.7, 1 MiB 440 / 424, 4 MiB 2089 / 1788; 8
 * ranks 64 KiB 159 / 145, 1 MiB 2028 / 1838; Iallgather 4 ranks 256 KiB 124 / 119, 4 MiB 1996
 * / 1759; 8 ranks 64 KiB 174 / 159. */
static void build_pairwise(nb_sched *s, const void *sbuf, const size_t *scounts,
                           const size_t *sdispls, co_dtype *sdt, void *rbuf, const size_t *rcounts,
                           const size_t *rdispls, co_dtype *rdt, int copy_own) {
    int n = s->on->size, me = s->on->rank;
    for (int k = 1; k < n; k++) {
        int q = (me + k) % n, p = (me - k + n) % n;
        if (rcounts) nb_recv(s, co_coll_elem(rbuf, rdispls[p], rdt), rcounts[p], rdt, p);
        if (scounts)
            nb_send(s, sdispls ? co_coll_elem(sbuf, sdispls[q], sdt) : sbuf, scounts[q], sdt, q)
                ->mode = n > 2 ? CO_MODE_PULL : CO_MODE_STD;
    }
    if (copy_own && scounts && rcounts)
        nb_copy(s, sdispls ? co_coll_elem(sbuf, sdispls[me], sdt) : sbuf, scounts[me], sdt,
                co_coll_elem(rbuf, rdispls[me], rdt), rcounts[me], rdt);
    nb_round(s);
}

/* Uniform counts and displacements for n blocks of `count` (scratch of the schedule). */
static int *uniform(nb_sched *s, int n, size_t count, int **displs) {
    int *c = nb_tmp(s, co_dt_get(MPI_INT), 2 * (size_t)n);
    co_coll_uniform_fill(n, count, c);
    *displs = c + n;
    return c;
}

/* n blocks as size_t counts c[0..n) and displacements c[n..2n) (scratch of the schedule):
 * the program's (counts, displs), or with counts NULL n blocks of `count` back to back, which
 * may start past element 2^31 - 1. (A negative displacement converts as the element offset
 * arithmetic expects.) */
static size_t *blocks_of(nb_sched *s, int n, const int *counts, const int *displs, size_t count) {
    size_t *c = nb_tmp(s, co_dt_get(MPI_BYTE), 2 * (size_t)n * sizeof(size_t));
    for (int i = 0; i < n; i++) {
        c[i] = counts ? (size_t)counts[i] : count;
        c[n + i] = counts ? (size_t)displs[i] : count * (size_t)i;
    }
    return c;
}

/* From 4 ranks on, Iscatter(v)'s blocks of up to this many bytes leave the whole single copy to
 * each reader (CO_MODE_PULL, as Ibcast's): medians of 4 alternating runs, µs, shared / pulled,
 * 4 ranks 64 KiB 8.2 / 7.4, 256 KiB 24.6 / 14.7, 1 MiB 93.6 / 77.4, but 4 MiB 347 / 372; 8 ranks
 * 64 KiB 10.1 / 7.1, 256 KiB 29.0 / 18.7, 1 MiB 119 / 104. At 2 and 3 ranks the shared copy was
 * quicker from 64 KiB (2 ranks 256 KiB 8.0 / 11.1). Igather's root taking no share (the senders
 * writing all) was slower (8 ranks 64 KiB 24.1 / 36.5, 1 MiB 235 / 323), so it keeps its. */
#define NB_SCATTER_PULL_MAX (1024 * 1024)

static void build_rooted(nb_sched *s, const co_coll_args *a) {
    int n = s->on->size, me = s->on->rank, root = a->root;
    int gather = a->kind == CO_COLL_GATHER || a->kind == CO_COLL_GATHERV;
    if (me != root) { /* one transfer with the root */
        if (gather)
            nb_send(s, a->sbuf, a->scount, a->sdt, root);
        else
            nb_recv(s, a->rbuf, a->rcount, a->rdt, root);
        nb_round(s);
        return;
    }
    const size_t *cnt = a->kind == CO_COLL_GATHERV ? blocks_of(s, n, a->rcounts, a->rdispls, 0)
                        : a->kind == CO_COLL_SCATTERV
                            ? blocks_of(s, n, a->scounts, a->sdispls, 0)
                            : blocks_of(s, n, NULL, NULL, gather ? a->rcount : a->scount),
                 *dsp = cnt + n;
    co_dtype *dt = gather ? a->rdt : a->sdt;
    for (int k = 1; k < n; k++) {
        int q = (me + k) % n;
        if (gather)
            nb_recv(s, co_coll_elem(a->rbuf, dsp[q], dt), cnt[q], dt, q);
        else
            nb_send(s, co_coll_elem(a->sbuf, dsp[q], dt), cnt[q], dt, q)->mode =
                n > 3 && cnt[q] * dt->size <= NB_SCATTER_PULL_MAX ? CO_MODE_PULL : CO_MODE_STD;
    }
    /* the root's own block, unless it is in place */
    if (gather && a->sbuf != MPI_IN_PLACE)
        nb_copy(s, a->sbuf, a->scount, a->sdt, co_coll_elem(a->rbuf, dsp[me], dt), cnt[me], dt);
    if (!gather && a->rbuf != MPI_IN_PLACE)
        nb_copy(s, co_coll_elem(a->sbuf, dsp[me], dt), cnt[me], dt, a->rbuf, a->rcount, a->rdt);
    nb_round(s);
}

static void build_allgather(nb_sched *s, const co_coll_args *a) {
    int n = s->on->size, me = s->on->rank;
    const size_t *rc = a->kind == CO_COLL_ALLGATHER ? blocks_of(s, n, NULL, NULL, a->rcount)
                                                    : blocks_of(s, n, a->rcounts, a->rdispls, 0),
                 *rd = rc + n;
    const void *mine = a->sbuf;
    size_t scount = a->scount;
    co_dtype *sdt = a->sdt;
    if (a->sbuf == MPI_IN_PLACE) { /* my block is already in place */
        mine = co_coll_elem(a->rbuf, rd[me], a->rdt);
        scount = rc[me];
        sdt = a->rdt;
    }
    build_pairwise(s, mine, blocks_of(s, n, NULL, NULL, scount), NULL, sdt, a->rbuf, rc, rd, a->rdt,
                   a->sbuf != MPI_IN_PLACE);
}

static void build_alltoall(nb_sched *s, const co_coll_args *a) {
    int n = s->on->size;
    int uni = a->kind == CO_COLL_ALLTOALL;
    const size_t *r = uni ? blocks_of(s, n, NULL, NULL, a->rcount)
                          : blocks_of(s, n, a->rcounts, a->rdispls, 0),
                 *rc = r, *rd = r + n, *sc = NULL, *sd = NULL;
    if (a->sbuf != MPI_IN_PLACE) {
        sc = uni ? blocks_of(s, n, NULL, NULL, a->scount)
                 : blocks_of(s, n, a->scounts, a->sdispls, 0);
        sd = sc + n;
    }
    const void *sbuf = a->sbuf;
    co_dtype *sdt = a->sdt;
    if (sbuf == MPI_IN_PLACE) { /* send from a copy of the receive buffer */
        size_t span = 0;
        for (int q = 0; q < n; q++) span = CO_MAX(span, rd[q] + rc[q]);
        void *copy = nb_tmp(s, a->rdt, span);
        nb_copy(s, a->rbuf, span, a->rdt, copy, span, a->rdt);
        nb_round(s);
        sbuf = copy, sc = rc, sd = rd, sdt = a->rdt;
    }
    build_pairwise(s, sbuf, sc, sd, sdt, a->rbuf, rc, rd, a->rdt, 1);
}

/* The w-collectives' types, nr receive types then ns send types (stypes may be NULL), each
 * retained (NULL where none), in one array: held while a schedule or a persistent request may
 * outlive the caller's arrays. drop_types releases them. */
static co_dtype **held_types(const co_coll_args *a, int nr, int ns) {
    co_dtype **v = calloc((size_t)(nr + ns) + 1, sizeof(co_dtype *));
    if (!v) co_fatal("out of memory in a nonblocking collective");
    for (int q = 0; q < nr; q++)
        if ((v[q] = a->rtypes[q])) co_dt_retain(v[q]);
    for (int q = 0; q < ns && a->stypes; q++)
        if ((v[nr + q] = a->stypes[q])) co_dt_retain(v[nr + q]);
    return v;
}

static void drop_types(co_dtype **v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i]) co_dt_release(v[i]);
    free(v);
}

static void hold_types(nb_sched *s, const co_coll_args *a, int nr, int ns) {
    s->wdts = held_types(a, nr, ns);
    s->nwdts = nr + ns;
}

/* Alltoallw: a type per peer, displacements in bytes; in place, the sends read a copy of the
 * receive buffer's memory image. */
static void build_alltoallw(nb_sched *s, const co_coll_args *a) {
    int n = s->on->size, me = s->on->rank;
    hold_types(s, a, n, n);
    const char *sbuf = a->sbuf;
    const int *sc = a->scounts, *sd = a->sdispls;
    co_dtype *const *st = a->stypes;
    if (sbuf == MPI_IN_PLACE) {
        MPI_Aint lo = 0, hi = 0;
        int any = 0;
        for (int q = 0; q < n; q++) {
            if (!a->rcounts[q]) continue;
            co_dtype *t = a->rtypes[q];
            MPI_Aint b = a->rdispls[q] + t->true_lb;
            MPI_Aint e = b + (MPI_Aint)co_coll_span(t, (size_t)a->rcounts[q]);
            lo = any ? CO_MIN(lo, b) : b;
            hi = any ? CO_MAX(hi, e) : e;
            any = 1;
        }
        char *copy = nb_tmp(s, co_dt_get(MPI_BYTE), (size_t)(hi - lo));
        if (hi > lo) nb_memcpy(s, co_coll_at(a->rbuf, lo), copy, (size_t)(hi - lo));
        nb_round(s);
        sbuf = co_coll_at(copy, -lo), sc = a->rcounts, sd = a->rdispls, st = a->rtypes;
    }
    for (int k = 1; k < n; k++) {
        int q = (me + k) % n, p = (me - k + n) % n;
        nb_recv(s, co_coll_at(a->rbuf, a->rdispls[p]), (size_t)a->rcounts[p], a->rtypes[p], p);
        nb_send(s, co_coll_at(sbuf, sd[q]), (size_t)sc[q], st[q], q);
    }
    if (a->sbuf != MPI_IN_PLACE)
        nb_copy(s, co_coll_at(sbuf, sd[me]), (size_t)sc[me], st[me],
                co_coll_at(a->rbuf, a->rdispls[me]), (size_t)a->rcounts[me], a->rtypes[me]);
    nb_round(s);
}

/* Reduce_scatter(_block): one round in which block q of every rank's vector goes straight to
 * rank q, then each rank combines the n operands of its block in rank order, from the last:
 * acc = x[n-1], then acc = x[i] op acc for i = n-2 .. 0. Every rank sends and receives n-1
 * blocks, the least any algorithm moves, and nothing waits on a chain of rounds. */
static void build_rscatter(nb_sched *s, const co_coll_args *a) {
    int n = s->on->size, me = s->on->rank;
    co_dtype *dt = a->rdt;
    /* size_t: the vector may hold more than 2^31 - 1 elements */
    size_t *cnt = nb_tmp(s, co_dt_get(MPI_BYTE), 2 * (size_t)n * sizeof(size_t)), *dsp = cnt + n;
    for (int i = 0; i < n; i++) {
        cnt[i] = a->kind == CO_COLL_REDUCE_SCATTER_BLOCK ? a->rcount : (size_t)a->rcounts[i];
        dsp[i] = i ? dsp[i - 1] + cnt[i - 1] : 0;
    }
    int in_place = a->sbuf == MPI_IN_PLACE;
    const void *in = in_place ? a->rbuf : a->sbuf;
    size_t mine = cnt[me];
    /* the others' operands of my block, slot i for rank i; in place, mine too (the result
     * overwrites the start of the vector, where my operand may lie) */
    void *ops = nb_tmp(s, dt, mine * (size_t)n);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        nb_recv(s, co_coll_elem(ops, mine * (size_t)from, dt), mine, dt, from);
        nb_send(s, co_coll_elem(in, dsp[to], dt), cnt[to], dt, to);
    }
    const void *own = co_coll_elem(in, dsp[me], dt);
    if (in_place) {
        nb_copy(s, own, mine, dt, co_coll_elem(ops, mine * (size_t)me, dt), mine, dt);
        own = co_coll_elem(ops, mine * (size_t)me, dt);
    }
#define OPERAND(i) ((i) == me ? own : co_coll_elem(ops, mine * (size_t)(i), dt))
    nb_copy(s, OPERAND(n - 1), mine, dt, a->rbuf, mine, dt);
    for (int i = n - 2; i >= 0; i--) nb_reduce(s, OPERAND(i), a->rbuf, mine, dt);
#undef OPERAND
    nb_round(s);
}

/* A chain: rank r receives the prefix of ranks 0..r-1, combines its own operand and passes
 * the prefix of 0..r on. A long vector (co_scan_pieces) goes in pieces: round k receives piece k
 * and passes on piece k - 1, combined in the round before, and one piece of scratch serves every
 * piece (a round's local steps run once its transfers are done): COHORT_SCAN_PIECE bytes, so that
 * the ranks work on different pieces at once. */
static void build_scan(nb_sched *s, const co_coll_args *a, int excl) {
    int n = s->on->size, me = s->on->rank;
    size_t count = a->rcount;
    co_dtype *dt = a->rdt;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    co_pieces p = co_scan_pieces(count, dt, n);
    if (excl && in == a->rbuf && me > 0 && me + 1 < n) { /* the prefix lands in rbuf */
        void *keep = nb_tmp(s, dt, count);
        nb_copy(s, in, count, dt, keep, count, dt);
        nb_round(s);
        in = keep;
    }
    if (me == 0) { /* my operand is the prefix I pass on */
        if (n > 1)
            for (size_t k = 0; k < p.n; k++)
                nb_send(s, co_piece(in, &p, k, dt), co_piece_count(&p, k), dt, 1);
        if (!excl) nb_copy(s, in, count, dt, a->rbuf, count, dt);
        nb_round(s);
        return;
    }
    if (excl && me + 1 == n) { /* the prefix received is all */
        for (size_t k = 0; k < p.n; k++)
            nb_recv(s, co_piece(a->rbuf, &p, k, dt), co_piece_count(&p, k), dt, me - 1);
        nb_round(s);
        return;
    }
    /* inclusive: the prefix received goes into scratch, rbuf gets it combined with my
     * operand and is what I pass on; exclusive: the prefix lands in rbuf, scratch gets it
     * combined with my operand and is passed on */
    void *tmp = nb_tmp(s, dt, p.each);
    for (size_t k = 0; k <= p.n; k++) {
        if (k > 0 && me + 1 < n) /* piece k - 1, combined in the round before */
            nb_send(s, excl ? tmp : co_piece(a->rbuf, &p, k - 1, dt), co_piece_count(&p, k - 1), dt,
                    me + 1);
        if (k < p.n) {
            size_t m = co_piece_count(&p, k);
            const void *mine = co_piece(in, &p, k, dt);
            void *res = co_piece(a->rbuf, &p, k, dt);
            if (!excl) {
                nb_recv(s, tmp, m, dt, me - 1);
                nb_copy(s, mine, m, dt, res, m, dt);
                nb_reduce(s, tmp, res, m, dt);
            } else {
                nb_recv(s, res, m, dt, me - 1);
                nb_copy(s, mine, m, dt, tmp, m, dt);
                nb_reduce(s, res, tmp, m, dt);
            }
        }
        nb_round(s);
    }
}

/* ---- Intercommunicators: the steps of the blocking ones (inter.c), as rounds: inside a
 * group on its local communicator, between the groups on the intercommunicator, each group's
 * rank 0 (its leader) carrying what crosses. MPI_ROOT, MPI_PROC_NULL or a remote rank as
 * root; counts of the v-variants per remote rank. */

/* The group's blocks gathered at the leader into `out` (scount * size of sdt). */
static void inter_gather(nb_sched *s, const co_coll_args *a, void *out) {
    co_coll_args g = {.kind = CO_COLL_GATHER,
                      .root = 0,
                      .sbuf = a->sbuf,
                      .scount = a->scount,
                      .sdt = a->sdt,
                      .rbuf = out,
                      .rcount = a->scount,
                      .rdt = a->sdt};
    s->on = s->c->local_comm;
    build_rooted(s, &g);
}

/* Every transfer with the remote group at once (Allgatherv, Alltoall(v,w), the roots of
 * Gatherv and Scatterv); NULL sbuf or rbuf: no sends or receives. `bytes`: displacements in
 * bytes and a type per peer (Alltoallw). */
static void inter_pairwise(nb_sched *s, const co_coll_args *a, const void *sbuf, void *rbuf,
                           int bytes) {
    co_comm *ic = s->c;
    int nr = ic->remote->size;
    s->on = ic;
    for (int k = 0; k < nr; k++) {
        int q = (ic->rank + k) % nr;
        if (rbuf) {
            co_dtype *t = bytes ? a->rtypes[q] : a->rdt;
            size_t cnt = a->rcounts ? (size_t)a->rcounts[q] : a->rcount;
            void *where =
                bytes ? co_coll_at(rbuf, a->rdispls[q])
                      : co_coll_elem(rbuf, a->rcounts ? (size_t)a->rdispls[q] : q * a->rcount, t);
            nb_recv(s, where, cnt, t, q);
        }
        if (sbuf) {
            co_dtype *t = bytes ? a->stypes[q] : a->sdt;
            size_t cnt = a->scounts ? (size_t)a->scounts[q] : a->scount;
            const void *where = bytes        ? co_coll_at(sbuf, a->sdispls[q])
                                : a->scounts ? co_coll_elem(sbuf, (size_t)a->sdispls[q], t)
                                : a->kind == CO_COLL_ALLGATHERV
                                    ? sbuf
                                    : co_coll_elem(sbuf, q * a->scount, t);
            nb_send(s, where, cnt, t, q);
        }
    }
    nb_round(s);
}

static void build_inter(nb_sched *s, const co_coll_args *a) {
    co_comm *ic = s->c, *l = ic->local_comm;
    int lead = ic->rank == 0, nl = ic->size, nr = ic->remote->size, root = a->root;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int rooted = a->kind == CO_COLL_BCAST || a->kind == CO_COLL_REDUCE ||
                 a->kind == CO_COLL_GATHER || a->kind == CO_COLL_GATHERV ||
                 a->kind == CO_COLL_SCATTER || a->kind == CO_COLL_SCATTERV;
    if (rooted && root == MPI_PROC_NULL) return; /* no part in it: complete at once */
    switch (a->kind) {
    case CO_COLL_BARRIER:
        s->on = l;
        build_barrier(s, 0);
        s->on = ic;
        if (lead) {
            nb_send(s, NULL, 0, byte, 0);
            nb_recv(s, NULL, 0, byte, 0);
            nb_round(s);
        }
        s->on = l;
        build_bcast(s, NULL, 0, byte, 0);
        break;
    case CO_COLL_BCAST:
        s->on = ic;
        if (root == MPI_ROOT) {
            nb_send(s, a->rbuf, a->rcount, a->rdt, 0);
            nb_round(s);
            break;
        }
        if (lead) {
            nb_recv(s, a->rbuf, a->rcount, a->rdt, root);
            nb_round(s);
        }
        s->on = l;
        build_bcast(s, a->rbuf, a->rcount, a->rdt, 0);
        break;
    case CO_COLL_REDUCE:
    case CO_COLL_ALLREDUCE: {
        int all = a->kind == CO_COLL_ALLREDUCE;
        s->on = ic;
        if (!all && root == MPI_ROOT) {
            nb_recv(s, a->rbuf, a->rcount, a->rdt, 0);
            nb_round(s);
            break;
        }
        void *mine = lead ? nb_tmp(s, a->rdt, a->rcount) : NULL;
        s->on = l;
        build_reduce(s, a->sbuf, mine, a->rcount, a->rdt, 0);
        s->on = ic;
        if (lead) {
            nb_send(s, mine, a->rcount, a->rdt, all ? 0 : root);
            if (all) nb_recv(s, a->rbuf, a->rcount, a->rdt, 0);
            nb_round(s);
        }
        if (all) {
            s->on = l;
            build_bcast(s, a->rbuf, a->rcount, a->rdt, 0);
        }
        break;
    }
    case CO_COLL_GATHER: {
        s->on = ic;
        if (root == MPI_ROOT) {
            nb_recv(s, a->rbuf, a->rcount * (size_t)nr, a->rdt, 0);
            nb_round(s);
            break;
        }
        size_t total = a->scount * (size_t)nl;
        void *blocks = lead ? nb_tmp(s, a->sdt, total) : NULL;
        inter_gather(s, a, blocks);
        s->on = ic;
        if (lead) {
            nb_send(s, blocks, total, a->sdt, root);
            nb_round(s);
        }
        break;
    }
    case CO_COLL_SCATTER: {
        s->on = ic;
        if (root == MPI_ROOT) {
            nb_send(s, a->sbuf, a->scount * (size_t)nr, a->sdt, 0);
            nb_round(s);
            break;
        }
        size_t total = a->rcount * (size_t)nl;
        void *blocks = lead ? nb_tmp(s, a->rdt, total) : NULL;
        if (lead) {
            nb_recv(s, blocks, total, a->rdt, root);
            nb_round(s);
        }
        co_coll_args g = {.kind = CO_COLL_SCATTER,
                          .root = 0,
                          .sbuf = blocks,
                          .scount = a->rcount,
                          .sdt = a->rdt,
                          .rbuf = a->rbuf,
                          .rcount = a->rcount,
                          .rdt = a->rdt};
        s->on = l;
        build_rooted(s, &g);
        break;
    }
    case CO_COLL_GATHERV:
    case CO_COLL_SCATTERV:
        s->on = ic;
        if (root == MPI_ROOT) {
            int gathers = a->kind == CO_COLL_GATHERV;
            inter_pairwise(s, a, gathers ? NULL : a->sbuf, gathers ? a->rbuf : NULL, 0);
        } else if (a->kind == CO_COLL_GATHERV) {
            nb_send(s, a->sbuf, a->scount, a->sdt, root);
            nb_round(s);
        } else {
            nb_recv(s, a->rbuf, a->rcount, a->rdt, root);
            nb_round(s);
        }
        break;
    case CO_COLL_ALLGATHER: {
        size_t mine = a->scount * (size_t)nl, theirs = a->rcount * (size_t)nr;
        void *blocks = lead ? nb_tmp(s, a->sdt, mine) : NULL;
        inter_gather(s, a, blocks);
        s->on = ic;
        if (lead) {
            nb_send(s, blocks, mine, a->sdt, 0);
            nb_recv(s, a->rbuf, theirs, a->rdt, 0);
            nb_round(s);
        }
        s->on = l;
        build_bcast(s, a->rbuf, theirs, a->rdt, 0);
        break;
    }
    case CO_COLL_ALLGATHERV:
    case CO_COLL_ALLTOALL:
    case CO_COLL_ALLTOALLV: inter_pairwise(s, a, a->sbuf, a->rbuf, 0); break;
    case CO_COLL_ALLTOALLW:
        hold_types(s, a, nr, nr);
        inter_pairwise(s, a, a->sbuf, a->rbuf, 1);
        break;
    default: { /* Reduce_scatter(_block): this group's reduction to the other */
        const int *cnt = a->rcounts;
        int *dsp;
        if (a->kind == CO_COLL_REDUCE_SCATTER_BLOCK) {
            cnt = uniform(s, nl, a->rcount, &dsp);
        } else {
            dsp = nb_tmp(s, co_dt_get(MPI_INT), (size_t)nl);
            for (int i = 0, d = 0; i < nl; d += cnt[i++]) dsp[i] = d;
        }
        size_t total = (size_t)dsp[nl - 1] + (size_t)cnt[nl - 1];
        void *mine = lead ? nb_tmp(s, a->rdt, total) : NULL;
        void *theirs = lead ? nb_tmp(s, a->rdt, total) : NULL;
        s->on = l;
        build_reduce(s, a->sbuf, mine, total, a->rdt, 0);
        s->on = ic;
        if (lead) {
            nb_send(s, mine, total, a->rdt, 0);
            nb_recv(s, theirs, total, a->rdt, 0);
            nb_round(s);
        }
        co_coll_args sv = {.kind = CO_COLL_SCATTERV,
                           .root = 0,
                           .sbuf = theirs,
                           .scounts = cnt,
                           .sdispls = dsp,
                           .sdt = a->rdt,
                           .rbuf = a->rbuf,
                           .rcount = (size_t)cnt[ic->rank],
                           .rdt = a->rdt};
        s->on = l;
        build_rooted(s, &sv);
        break;
    }
    }
    s->on = ic;
}

/* The neighbourhood collectives: one round, a receive from every in-neighbour and a send to
 * every out-neighbour (none for MPI_PROC_NULL). Two messages between the same processes in one
 * call are told apart by their order: the k-th edge from p to q on p's list is the k-th on q's
 * (topo.c). On a Cartesian grid whose dimension has 2 ranks and is periodic, or 1, the same
 * peer is below and above: what it sends downwards arrives from above, so the receives of each
 * dimension are posted above first (nbr_recv_order), to meet the sends, which go below first. */
typedef struct nbr_block {
    void *buf;
    size_t count;
    co_dtype *dt;
} nbr_block;

static int nbr_recv_order(const co_comm *c, int q) {
    return c->topo->kind == MPI_CART ? q ^ 1 : q;
}

/* Receive block i (from in-neighbour i) and send block j (to out-neighbour j) of call a. */
static nbr_block nbr_recv_block(const co_coll_args *a, int i) {
    char *dst = a->rbuf;
    int k = a->kind;
    if (k == CO_COLL_NEIGHBOR_ALLTOALLW)
        return (nbr_block){co_coll_at(dst, a->rwdispls[i]), (size_t)a->rcounts[i], a->rtypes[i]};
    MPI_Aint ext = co_dt_extent(a->rdt);
    if (k == CO_COLL_NEIGHBOR_ALLGATHERV || k == CO_COLL_NEIGHBOR_ALLTOALLV)
        return (nbr_block){dst + ext * a->rdispls[i], (size_t)a->rcounts[i], a->rdt};
    return (nbr_block){dst + (size_t)ext * a->rcount * (size_t)i, a->rcount, a->rdt};
}

static nbr_block nbr_send_block(const co_coll_args *a, int j) {
    char *src = (char *)a->sbuf;
    int k = a->kind;
    if (k == CO_COLL_NEIGHBOR_ALLTOALLW)
        return (nbr_block){co_coll_at(src, a->swdispls[j]), (size_t)a->scounts[j], a->stypes[j]};
    MPI_Aint ext = co_dt_extent(a->sdt);
    if (k == CO_COLL_NEIGHBOR_ALLTOALLV)
        return (nbr_block){src + ext * a->sdispls[j], (size_t)a->scounts[j], a->sdt};
    if (k == CO_COLL_NEIGHBOR_ALLTOALL)
        return (nbr_block){src + (size_t)ext * a->scount * (size_t)j, a->scount, a->sdt};
    return (nbr_block){src, a->scount, a->sdt};
}

static void build_neighbor(nb_sched *s, const co_coll_args *a) {
    const int *in, *out;
    int nin, nout;
    co_topo_neighbors(s->c->topo, s->c->rank, &in, &nin, &out, &nout);
    if (!in) co_fatal("out of memory in a neighbourhood collective");
    if (a->kind == CO_COLL_NEIGHBOR_ALLTOALLW) { /* the types are held until the end */
        hold_types(s, a, nin, nout);
    }
    for (int q = 0; q < nin; q++) {
        int i = nbr_recv_order(s->c, q);
        if (in[i] == MPI_PROC_NULL) continue;
        nbr_block b = nbr_recv_block(a, i);
        nb_recv(s, b.buf, b.count, b.dt, in[i]);
    }
    for (int j = 0; j < nout; j++) {
        if (out[j] == MPI_PROC_NULL) continue;
        nbr_block b = nbr_send_block(a, j);
        nb_send(s, b.buf, b.count, b.dt, out[j]);
    }
    nb_round(s);
}

static void build(nb_sched *s, const co_coll_args *a) {
    if (s->c->is_inter) {
        build_inter(s, a);
        return;
    }
    switch (a->kind) {
    case CO_COLL_BARRIER: build_barrier(s, !s->req->persistent || s->lane); break;
    case CO_COLL_BCAST: build_bcast(s, a->rbuf, a->rcount, a->rdt, a->root); break;
    case CO_COLL_REDUCE: {
        int n = s->on->size;
        const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        if (n == 1) {
            nb_copy(s, in, a->rcount, a->rdt, a->rbuf, a->rcount, a->rdt);
            nb_round(s);
        } else {
            build_reduce(s, in, a->rbuf, a->rcount, a->rdt, a->root);
        }
        break;
    }
    case CO_COLL_ALLREDUCE: {
        const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
        if (s->on->size == 1) {
            nb_copy(s, in, a->rcount, a->rdt, a->rbuf, a->rcount, a->rdt);
            nb_round(s);
            break;
        }
        build_allreduce(s, in, a->rbuf, a->rcount, a->rdt);
        break;
    }
    case CO_COLL_GATHER:
    case CO_COLL_GATHERV:
    case CO_COLL_SCATTER:
    case CO_COLL_SCATTERV: build_rooted(s, a); break;
    case CO_COLL_ALLGATHER:
    case CO_COLL_ALLGATHERV: build_allgather(s, a); break;
    case CO_COLL_ALLTOALL:
    case CO_COLL_ALLTOALLV: build_alltoall(s, a); break;
    case CO_COLL_ALLTOALLW: build_alltoallw(s, a); break;
    case CO_COLL_REDUCE_SCATTER:
    case CO_COLL_REDUCE_SCATTER_BLOCK: build_rscatter(s, a); break;
    case CO_COLL_SCAN: build_scan(s, a, 0); break;
    case CO_COLL_EXSCAN: build_scan(s, a, 1); break;
    default: build_neighbor(s, a); break;
    }
}

/* ---- Running them ---------------------------------------------------------------------------
 */

/* Schedules that ended are kept, with their arrays (steps, rounds, transfers, scratch list),
 * for the next calls: a small nonblocking collective then allocates nothing but its requests
 * (2-rank MPI_Iallgather of 1 byte: 0.45 against 0.40 µs). Schedules whose arrays grew large
 * (many ranks) are freed. */
#define NB_POOL     8
#define NB_POOL_CAP 256
static nb_sched *pool[NB_POOL];
static int npool;

static nb_sched *sched_alloc(void) {
    if (!npool) {
        nb_sched *s = calloc(1, sizeof(*s));
        if (!s) co_fatal("out of memory in a nonblocking collective");
        return s;
    }
    nb_sched *s = pool[--npool], kept = *s;
    memset(s, 0, sizeof(*s));
    s->steps = kept.steps, s->cap = kept.cap;
    s->ends = kept.ends, s->rcap = kept.rcap;
    s->pend = kept.pend, s->pcap = kept.pcap;
    s->blocks = kept.blocks, s->bcap = kept.bcap;
    return s;
}

static void sched_destroy(nb_sched *s) {
    free(s->blocks);
    free(s->steps);
    free(s->ends);
    free(s->pend);
    free(s);
}

static void sched_free(nb_sched *s) {
    for (int i = 0; i < s->nblocks; i++) co_coll_scratch_free(s->blocks[i]);
    free(s->own);
    for (int i = 0; i < 2; i++)
        if (s->dts[i]) co_dt_release(s->dts[i]);
    if (s->wdts) drop_types(s->wdts, s->nwdts);
    if (s->op) co_op_release(s->op);
    if (npool < NB_POOL && s->cap <= NB_POOL_CAP && s->rcap <= NB_POOL_CAP &&
        s->pcap <= NB_POOL_CAP && s->bcap <= NB_POOL_CAP)
        pool[npool++] = s;
    else
        sched_destroy(s);
}

static void note(nb_sched *s, int rc) {
    if (rc && !s->err) s->err = rc;
}

/* A counter MPI_Ibarrier arrives (build_barrier), once the rank's previous one has completed;
 * 0 while it has not. */
static int arrive_at(nb_sched *s) {
    if (s->c->coll->ibarrier_done + 1 < s->epoch) return 0;
    co_cshm *sh = s->cshm;
    for (int k = 1; k < sh->n; k++) { /* (release: what this rank wrote before is seen after) */
        int q = sh->me + k < sh->n ? sh->me + k : sh->me + k - sh->n;
        atomic_fetch_add_explicit(&sh->ctl[q].icounter, 1, memory_order_acq_rel);
    }
    s->word = &sh->ctl[sh->me].icounter;
    return 1;
}

/* Keeps r (a transfer the schedule posted; NULL: none) among those it waits for. */
static void pend_add(nb_sched *s, co_req *r) {
    if (!r) return;
    r->internal = 1;
    s->pend = grow(s->pend, &s->pcap, s->npend + 1, sizeof(co_req *));
    s->pend[s->npend++] = r;
}

/* Posts the current round's transfers; leaves s->posted 0 while a counter MPI_Ibarrier may not
 * arrive yet. */
static void post_round(nb_sched *s) {
    int start = s->round ? s->ends[s->round - 1] : 0, end = s->ends[s->round];
    s->npend = 0;
    for (int i = start; i < end; i++) {
        nb_step *t = &s->steps[i];
        if (t->type == NB_ARRIVE && !arrive_at(s)) return;
        if (t->type != NB_SEND && t->type != NB_RECV) continue;
        co_req *r = NULL;
        uint64_t ctx = s->p2p ? t->on->ctx : co_coll_ctx(t->on);
        int tag = !s->p2p ? s->tag : t->type == NB_SEND ? s->stag : s->rtag;
        /* after an error, sends carry nothing: what this rank passes on may be wrong, and a
         * short block makes the receiver report MPI_ERR_COUNT in turn (on collective contexts) */
        size_t count = t->type == NB_SEND && s->err ? 0 : t->count;
        int rc = t->type == NB_SEND ? co_isend(t->src, count, t->dt, t->peer, tag, t->on, ctx,
                                               count ? t->mode : CO_MODE_STD, &r)
                                    : co_irecv(t->dst, count, t->dt, t->peer, tag, t->on, ctx, &r);
        note(s, rc);
        if (s->p2p && t->type == NB_RECV) s->precv = r;
        pend_add(s, r);
    }
    s->posted = 1;
}

/* Runs the current round's local steps. */
static void finish_round(nb_sched *s) {
    int start = s->round ? s->ends[s->round - 1] : 0, end = s->ends[s->round];
    for (int i = start; i < end; i++) {
        nb_step *t = &s->steps[i];
        if (t->type == NB_REDUCE)
            co_op_apply(s->op, t->dt, t->src, t->dst, t->count);
        else if (t->type == NB_COPY)
            note(s, co_coll_copy(t->src, t->count, t->dt, t->dst, t->count2, t->dt2));
        else if (t->type == NB_MEMCPY)
            memcpy(t->dst, t->src, t->count);
    }
    s->round++;
    s->posted = 0;
}

/* Completes s's request with the schedule's outcome. */
static void complete(nb_sched *s) {
    co_req *r = s->req;
    if (s->p2p) {
        r->status = s->rstatus;
        r->status.error = s->err;
    } else {
        r->status = (co_status){
            .source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG, .error = s->err ? s->err : s->late_err};
    }
    co_req_complete(r);
}

/* ---- Shared-memory schedules -------------------------------------------------------------
 * A small MPI_Iallreduce, MPI_Iallgather(v), MPI_Ialltoall, MPI_Ireduce_scatter(_block),
 * MPI_Ireduce, MPI_Igather, MPI_Ibcast or MPI_Iscatter on a communicator whose segment is set
 * up, and any MPI_Igatherv, MPI_Iscatterv or MPI_Ialltoallv there (slots, their large blocks
 * as messages: shm_slotted), goes through the shared buffers as the blocking one-step algorithms
 * do, in two steps of the segment's sequence taken when the call starts (every rank starts its
 * collectives in the same order, so the steps agree): g+1, a rank's operand or blocks are in its
 * buffer g % NBUF; g+2, it has read everyone's. A rank writes once its buffer is free (every rank
 * past the step its last readers finish), which may be later than the start: the call must
 * return at once. It then reads each peer's buffer as it finds it ready, in whatever MPI call the
 * process makes, as any schedule moves on. Steps mean "everything up to here is done", so
 * while such a call is in flight on a communicator nothing else may post later ones: the
 * next such call writes only once it has finished (they run in turn, ticket), and a blocking
 * collective (co_coll_pick) first waits for them all (co_nbc_shm_drain), which needs nothing
 * but the peers' own progress, since they started these calls before the blocking one.
 * Whether a call takes this way depends only on what every rank has alike (the segment, the
 * call and its sizes, or for the slotted calls the call alone), never on what is in flight here:
 * ranks that chose differently would wait for each other for ever. */

/* Size limits, measured (docs/collectives.md, "Nonblocking collectives"); beyond them
 * messages were quicker. Iallreduce, Iallgather(v), Ialltoall and Ireduce_scatter(_block): a
 * rank's operand, block, or (Ialltoall) blocks, up to NB_SHM_PAIR_MAX between two ranks, where
 * messages go by single copy, and whatever fits a buffer with more ranks; Iscan and Iexscan
 * the same, but NB_SHM_ROOTED_PAIR_MAX between two ranks; Ireduce's vector likewise (a tree
 * of messages took 2-4 times as long from 32 KiB, nb_eager_max). The other rooted calls, where
 * the root's buffer or the root alone carries everything: Ibcast's message up to
 * NB_SHM_ROOTED_MAX bytes (NB_SHM_ROOTED_PAIR_MAX between two ranks), the blocks of Igather
 * and Iscatter up to NB_SHM_ROOTED_MAX together (Igather between two ranks: twice
 * NB_SHM_ROOTED_PAIR_MAX), and Igather's blocks above the eager limit (nb_eager_max). */
#define NB_SHM_PAIR_MAX        4096
#define NB_SHM_ROOTED_MAX      4096
#define NB_SHM_ROOTED_PAIR_MAX 1024
#define NB_SHM_ALG             14 /* the calls' algorithm number in their buffer tags */

/* From 3 ranks on, the fan-ins (Ireduce, and the blocks of Igather(v)) also take the buffers
 * for whatever fits one once a message would go by rendezvous: each of its hand-overs between
 * processes waits for a core there, and the root taking the senders' copies from their buffers
 * needs none (4 ranks, Igatherv of 64 KiB 13.1 µs by messages against 6.7; 8 ranks 25.7
 * against 7.2; Ireduce of 64 KiB 16.8 against 7.4). Below the eager limit Igather(v)'s messages
 * were as quick (16 KiB 2.5 against 3.3), Ireduce's not (8 ranks 8 KiB 4.36 against 2.55);
 * between two ranks the messages stayed quicker. */
static size_t nb_eager_max(void) {
    return (size_t)co_st.seg->hdr->eager_limit;
}

/* Igatherv, Iscatterv and Ialltoallv, whose counts not every rank knows, publish a slot per
 * block the rank sends (one for an Igatherv sender, one per rank for Iscatterv's root and
 * Ialltoallv), each starting on a cache line: the block's size, then the block itself. A block
 * that is not shm_inline goes as a message with the call's tag instead, sent and received from
 * the start of the call (its two sides have the same size, so both know), and its slot says so
 * (NB_SHM_BY_MSG). A rank that sends no block inline publishes nothing, and one that expects
 * none reads nothing: a call of large blocks costs two step posts per rank more than messages
 * alone (at 8 ranks, writing and reading the sizes of such blocks too took Iscatterv of 1 KiB
 * from 3.1 to 5.0 µs). Ranks whose sizes differ: a block expected inline that comes as a message is
 * received then, and the message layer reports the difference; one expected as a message that
 * comes inline is never sent, and the deadlock watch ends the wait. */
#define NB_SHM_BY_MSG   (UINT64_C(1) << 63)
#define NB_SHM_SLOT_HDR sizeof(uint64_t)

static int shm_slotted(int kind) {
    return kind == CO_COLL_GATHERV || kind == CO_COLL_SCATTERV || kind == CO_COLL_ALLTOALLV;
}

/* The bytes of a slot, a multiple of the cache line; 0 when the buffer (cap) cannot hold one
 * per rank. The room for inline blocks is that of Igather (one slot: the sender's buffer),
 * Iscatter and Ialltoall shared by the blocks a rank may publish. */
static size_t shm_slot(int kind, size_t n, size_t cap) {
    if (kind == CO_COLL_GATHERV) return cap;
    size_t line = CO_CACHELINE, room = kind == CO_COLL_SCATTERV ? NB_SHM_ROOTED_MAX / n
                                       : n == 2                 ? NB_SHM_PAIR_MAX / n
                                                                : 0; /* 0: the buffer over n */
    size_t slot = room ? (NB_SHM_SLOT_HDR + room + line - 1) / line * line : cap / n / line * line;
    return slot >= line && n * slot <= cap ? slot : 0;
}

/* Whether call a on c would take shared buffers of `cap` bytes, judged only by what the ranks'
 * calls agree on (the sizes every rank's call names alike), so that a rank whose own blocks are
 * larger takes part all the same; *bytes: what this rank publishes (its readers check it),
 * *want: what it expects of each rank it reads. */
static int shm_fits_in(const co_comm *c, const co_coll_args *a, size_t cap, size_t *bytes,
                       size_t *want) {
    size_t n = (size_t)c->size, agreed = 0;
    size_t max = n == 2 ? NB_SHM_PAIR_MAX : cap,
           rooted = n == 2 ? NB_SHM_ROOTED_PAIR_MAX : NB_SHM_ROOTED_MAX;
    int in_place = a->sbuf == MPI_IN_PLACE, root = c->rank == a->root;
    *bytes = 0;
    if (!co_coll_all_local(c)) return 0;
    switch (a->kind) {
    case CO_COLL_ALLREDUCE:
    case CO_COLL_REDUCE:
    case CO_COLL_REDUCE_SCATTER:
    case CO_COLL_REDUCE_SCATTER_BLOCK:
    case CO_COLL_SCAN:
    case CO_COLL_EXSCAN: {
        if (!co_coll_dense(a->rdt) || !a->op) return 0;
        size_t count = a->kind == CO_COLL_REDUCE_SCATTER_BLOCK ? n * a->rcount : a->rcount;
        if (a->kind == CO_COLL_REDUCE_SCATTER) /* the whole vector */
            for (size_t q = count = 0; q < n; q++) count += (size_t)a->rcounts[q];
        agreed = co_coll_span(a->rdt, count);
        if (a->kind != CO_COLL_REDUCE || !root) *bytes = agreed;
        if (n == 2 &&
            (a->kind == CO_COLL_REDUCE || a->kind == CO_COLL_SCAN || a->kind == CO_COLL_EXSCAN))
            max = rooted;
        break;
    }
    case CO_COLL_BCAST:
        agreed = a->rcount * a->rdt->size;
        if (root) *bytes = agreed;
        max = rooted;
        break;
    case CO_COLL_ALLGATHER:
        agreed = a->rcount * a->rdt->size;
        *bytes = in_place ? agreed : a->scount * a->sdt->size;
        break;
    case CO_COLL_ALLGATHERV: /* the largest block (a reader expects each rank's own size) */
        for (size_t q = 0; q < n; q++)
            if ((size_t)a->rcounts[q] * a->rdt->size > agreed)
                agreed = (size_t)a->rcounts[q] * a->rdt->size;
        *bytes = in_place ? (size_t)a->rcounts[c->rank] * a->rdt->size : a->scount * a->sdt->size;
        break;
    case CO_COLL_GATHER: /* the senders' blocks (the root's receive blocks) */
        agreed = root ? a->rcount * a->rdt->size : a->scount * a->sdt->size;
        if (!root) *bytes = agreed;
        if (n * agreed > (n == 2 ? 2 : 1) * rooted && (n == 2 || agreed <= nb_eager_max()))
            return 0; /* all the root reads, or a block by rendezvous */
        break;
    case CO_COLL_ALLTOALL:
        agreed = n * a->rcount * a->rdt->size;
        *bytes = in_place ? agreed : n * a->scount * a->sdt->size;
        break;
    case CO_COLL_GATHERV:
    case CO_COLL_SCATTERV:
    case CO_COLL_ALLTOALLV: /* slots whatever the sizes (shm_slots), if the buffer has room */
        if (a->kind == CO_COLL_ALLTOALLV && in_place) return 0; /* (in place on every rank) */
        *want = 0;
        return shm_slot(a->kind, n, cap) != 0;
    case CO_COLL_SCATTER: /* all the root's blocks */
        agreed = n * (root ? a->scount * a->sdt->size : a->rcount * a->rdt->size);
        if (root) *bytes = agreed;
        max = NB_SHM_ROOTED_MAX;
        break;
    default: return 0;
    }
    *want = agreed; /* (whoever reads a rank expects this of it) */
    return agreed && agreed <= max && agreed <= cap;
}

/* The same for c's own buffers, once its segment is set up. */
static int shm_fits(co_comm *c, const co_coll_args *a, size_t *bytes, size_t *want) {
    co_coll_comm *cc = c->coll;
    if (c->is_inter || c->size < 2 || !cc || cc->shm_state <= 0 || !cc->shm || cc->broken) return 0;
    return shm_fits_in(c, a, co_cshm_cap(cc->shm), bytes, want);
}

/* Rank q's buffer b: 1 once it holds step `step` (then *bytes), 0 before; a tag other than
 * this call's means the ranks' calls differ, and the schedule fails. */
static int shm_ready(nb_sched *s, int q, unsigned b, uint64_t step, uint64_t *bytes) {
    const co_cshm_bufhdr *h = (const co_cshm_bufhdr *)co_cshm_buf(s->sh, q, b);
    uint64_t v = atomic_load_explicit(&h->seq, memory_order_acquire);
    if (v >> CO_CSHM_TAG_BITS < step) return 0;
    if ((unsigned)(v & CO_CSHM_TAG_MASK) != s->shtag) {
        note(s, MPI_ERR_OTHER);
        *bytes = UINT64_MAX;
        return 1;
    }
    *bytes = h->bytes;
    return 1;
}

/* Posts my step: never below one posted before, which would tell the peers that later calls'
 * buffers are free while this one still reads (the blocking collectives wait for these
 * calls first, co_nbc_shm_drain). */
static void shm_post(nb_sched *s, uint64_t step) {
    co_cshm *sh = s->sh;
    uint64_t was = atomic_load_explicit(&sh->ctl[sh->me].step, memory_order_relaxed);
    if (was >= step)
        co_fatal("a nonblocking collective would post step %llu after step %llu",
                 (unsigned long long)step, (unsigned long long)was);
    co_cshm_post(sh, step);
}

/* Copies this rank's payload (s->shbytes) into d: a reduction's operand image, Ibcast's
 * message, the block of Iallgather and Igather, all the blocks of Ialltoall and Iscatter. */
static void shm_pack(nb_sched *s, char *d) {
    const co_coll_args *a = &s->sa;
    int n = s->sh->n, kind = a->kind, in_place = a->sbuf == MPI_IN_PLACE;
    if (kind == CO_COLL_ALLREDUCE || kind == CO_COLL_REDUCE || kind == CO_COLL_REDUCE_SCATTER ||
        kind == CO_COLL_REDUCE_SCATTER_BLOCK || kind == CO_COLL_SCAN || kind == CO_COLL_EXSCAN)
        memcpy(d, (const char *)(in_place ? a->rbuf : a->sbuf) + a->rdt->true_lb, s->shbytes);
    else if (kind == CO_COLL_BCAST)
        co_dt_pack(a->rdt, a->rcount, a->rbuf, 0, d, s->shbytes);
    else if (kind == CO_COLL_ALLGATHER && in_place)
        co_dt_pack(a->rdt, a->rcount, co_coll_elem(a->rbuf, (size_t)s->sh->me * a->rcount, a->rdt),
                   0, d, s->shbytes);
    else if (kind == CO_COLL_ALLGATHERV && in_place)
        co_dt_pack(a->rdt, (size_t)a->rcounts[s->sh->me],
                   co_coll_elem(a->rbuf, (size_t)a->rdispls[s->sh->me], a->rdt), 0, d, s->shbytes);
    else if (kind == CO_COLL_ALLGATHER || kind == CO_COLL_ALLGATHERV || kind == CO_COLL_GATHER)
        co_dt_pack(a->sdt, a->scount, a->sbuf, 0, d, s->shbytes);
    else if (kind == CO_COLL_ALLTOALL && in_place) /* all my blocks, in rank order */
        co_dt_pack(a->rdt, (size_t)n * a->rcount, a->rbuf, 0, d, s->shbytes);
    else /* Ialltoall, Iscatter */
        co_dt_pack(a->sdt, (size_t)n * a->scount, a->sbuf, 0, d, s->shbytes);
}

/* Combines the operands of elements [e0, e0 + count) of the vectors of ranks 0..nr-1, mine
 * from `in`, the others' from their buffers b (images of the whole vector), into out, in rank
 * order. */
static void shm_combine(nb_sched *s, unsigned b, const void *in, size_t e0, size_t count, void *out,
                        int nr) {
    co_cshm *sh = s->sh;
    co_dtype *dt = s->sa.rdt;
    const void *stack[CO_COLL_SRCS] = {0};
    const void **src = co_coll_srcs(nr, stack);
    for (int q = 0; q < nr; q++)
        src[q] = co_coll_elem(q == sh->me ? in : co_cshm_data(sh, q, b) - dt->true_lb, e0, dt);
    note(s, co_coll_reduce_n(s->sa.op, dt, count, src, nr, out));
    if (src != stack) co_coll_free(src);
}

/* Whether a block of `bytes` goes inline: what a slot holds, but Igatherv's senders share
 * the root's reading (Igather's limit over n), except from 3 ranks on for a block that would
 * go by rendezvous and fits the buffer (nb_eager_max). */
static int shm_inline(const nb_sched *s, size_t bytes) {
    size_t n = (size_t)s->sh->n;
    if (s->sa.kind == CO_COLL_GATHERV)
        return bytes <= (n == 2 ? 2 * NB_SHM_ROOTED_PAIR_MAX : NB_SHM_ROOTED_MAX) / n ||
               (n > 2 && bytes > nb_eager_max() && bytes <= s->shslot - NB_SHM_SLOT_HDR);
    return bytes <= s->shslot - NB_SHM_SLOT_HDR;
}

/* The block I send to rank q (*count elements of a->sdt) and the one I receive from q. */
static void *shm_send_block(const co_coll_args *a, int q, size_t *count) {
    if (a->kind == CO_COLL_GATHERV) {
        *count = a->scount;
        return (void *)a->sbuf;
    }
    *count = (size_t)a->scounts[q];
    return co_coll_elem(a->sbuf, (size_t)a->sdispls[q], a->sdt);
}
static void *shm_recv_block(const co_coll_args *a, int q, size_t *count) {
    if (a->kind == CO_COLL_SCATTERV) {
        *count = a->rcount;
        return a->rbuf;
    }
    *count = (size_t)a->rcounts[q];
    return co_coll_elem(a->rbuf, (size_t)a->rdispls[q], a->rdt);
}

/* Posts a transfer of the call's messages (its tag, the collective context), kept in s->pend. */
static void shm_msg(nb_sched *s, int send, void *buf, size_t count, co_dtype *dt, int peer,
                    int mode) {
    co_req *r = NULL;
    uint64_t ctx = co_coll_ctx(s->c);
    note(s, send ? co_isend(buf, count, dt, peer, s->tag, s->c, ctx, count ? mode : CO_MODE_STD, &r)
                 : co_irecv(buf, count, dt, peer, s->tag, s->c, ctx, &r));
    pend_add(s, r);
}

/* A message's mode: build_pairwise's for Ialltoallv, build_rooted's for Iscatterv. */
static int shm_send_mode(int kind, int n, size_t bytes) {
    if (kind == CO_COLL_ALLTOALLV && n > 2) return CO_MODE_PULL;
    if (kind == CO_COLL_SCATTERV && n > 3 && bytes <= NB_SCATTER_PULL_MAX) return CO_MODE_PULL;
    return CO_MODE_STD;
}

/* At the start of a slotted call: the messages of its blocks not inline, both ways
 * (s->bymsg[q]: the block from rank q comes as one). */
static void shm_prepost(nb_sched *s) {
    const co_coll_args *a = &s->sa;
    int n = s->sh->n, me = s->sh->me, root = a->root;
    size_t count;
    int sends = a->kind == CO_COLL_ALLTOALLV || (a->kind == CO_COLL_GATHERV) != (me == root);
    int recvs = a->kind == CO_COLL_ALLTOALLV || (a->kind == CO_COLL_GATHERV) == (me == root);
    s->shslot = shm_slot(a->kind, (size_t)n, co_cshm_cap(s->sh));
    s->bymsg = n <= NB_SHM_BYMSG_OWN ? s->bymsg_own : nb_tmp(s, co_dt_get(MPI_CHAR), (size_t)n);
    memset(s->bymsg, 0, (size_t)n);
    s->shout = 0;
    for (int k = 1; k < n; k++) { /* (as build_pairwise: from me - k, to me + k) */
        int p = (me - k + n) % n, q = (me + k) % n;
        if (recvs && (a->kind != CO_COLL_SCATTERV || p == root)) {
            void *dst = shm_recv_block(a, p, &count);
            if (!shm_inline(s, count * a->rdt->size)) {
                s->bymsg[p] = 1;
                shm_msg(s, 0, dst, count, a->rdt, p, 0);
            }
        }
        if (sends && (a->kind != CO_COLL_GATHERV || q == root)) {
            void *src = shm_send_block(a, q, &count);
            size_t bytes = count * a->sdt->size;
            if (shm_inline(s, bytes))
                s->shout = 1;
            else
                shm_msg(s, 1, src, count, a->sdt, q, shm_send_mode(a->kind, n, bytes));
        }
    }
}

/* Writes my slots into d; returns the bytes published. My own block is copied locally: its
 * slot stays empty. */
static size_t shm_slots(nb_sched *s, char *d) {
    const co_coll_args *a = &s->sa;
    int n = s->sh->n, me = s->sh->me, one = a->kind == CO_COLL_GATHERV, k = one ? 1 : n;
    size_t count;
    uint64_t h = 0;
    for (int i = 0; i < k; i++) {
        int q = one ? a->root : i;
        const void *src = shm_send_block(a, q, &count);
        uint64_t bytes = count * a->sdt->size;
        char *slot = d + (size_t)i * s->shslot;
        h = 0;
        if (q != me && !shm_inline(s, bytes))
            h = NB_SHM_BY_MSG | bytes;
        else if (q != me) {
            co_dt_pack(a->sdt, count, src, 0, slot + NB_SHM_SLOT_HDR, bytes);
            h = bytes;
        }
        memcpy(slot, &h, sizeof h);
    }
    /* (Igatherv's one slot may be most of the buffer: only what it holds) */
    return one ? NB_SHM_SLOT_HDR + (h & NB_SHM_BY_MSG ? 0 : h) : (size_t)k * s->shslot;
}

/* Reads my slot of rank q's buffer b (`bytes` published), where I expect my block inline, and
 * unpacks it. */
static void shm_from_slot(nb_sched *s, int q, unsigned b, uint64_t bytes) {
    const co_coll_args *a = &s->sa;
    size_t at = a->kind == CO_COLL_GATHERV ? 0 : (size_t)s->sh->me * s->shslot, count;
    const char *slot = co_cshm_data(s->sh, q, b) + at;
    void *dst = shm_recv_block(a, q, &count);
    uint64_t h;
    if (at + NB_SHM_SLOT_HDR > bytes) { /* no slot for me: the calls differ */
        note(s, MPI_ERR_OTHER);
        return;
    }
    memcpy(&h, slot, sizeof h);
    if (h & NB_SHM_BY_MSG) { /* larger than I expect */
        shm_msg(s, 0, dst, count, a->rdt, q, 0);
        return;
    }
    int r = co_coll_sizes(h, count * a->rdt->size);
    note(s, r);
    if (!r && at + NB_SHM_SLOT_HDR + h <= bytes)
        co_dt_unpack(a->rdt, count, dst, 0, slot + NB_SHM_SLOT_HDR, h);
}

/* Once its buffers are done: completes the call when its messages (a slotted call's) have
 * completed; 1 if it did. */
static int shm_finish(nb_sched *s) {
    for (int i = 0; i < s->npend; i++)
        if (!s->pend[i]->complete) return 0;
    for (int i = 0; i < s->npend; i++) {
        note(s, s->pend[i]->status.error);
        co_req_free(s->pend[i]);
    }
    s->npend = 0;
    complete(s);
    return 1;
}

/* Moves a shared-memory schedule on; 1 once it has completed. Who publishes what and reads
 * whom: every rank everything for Iallreduce, Iallgather(v), Ialltoall(v) and
 * Ireduce_scatter(_block); for Igather(v) and Ireduce the others publish and the root reads
 * them; for Ibcast and Iscatter(v) the root publishes and the others read it; for Iscan and
 * Iexscan every rank but the last publishes and each reads the ranks before it (the slotted
 * calls skip what goes as messages). */
static int advance_shm(nb_sched *s) {
    co_cshm *sh = s->sh;
    const co_coll_args *a = &s->sa;
    int n = sh->n, me = sh->me, kind = a->kind, in_place = a->sbuf == MPI_IN_PLACE;
    int root = a->root, rooted = kind == CO_COLL_GATHER || kind == CO_COLL_REDUCE ||
                                 kind == CO_COLL_BCAST || kind == CO_COLL_SCATTER ||
                                 kind == CO_COLL_GATHERV || kind == CO_COLL_SCATTERV;
    int fan_in = kind == CO_COLL_GATHER || kind == CO_COLL_REDUCE || kind == CO_COLL_GATHERV;
    int slotted = shm_slotted(kind), scan = kind == CO_COLL_SCAN || kind == CO_COLL_EXSCAN;
    if (s->shstate == 2) return shm_finish(s);
    /* in a rooted call a rank either publishes or reads; in a scan it reads the ranks before
     * it, and no one reads the last */
    int writes = scan ? me < n - 1 : !rooted || (fan_in ? me != root : me == root);
    unsigned b = (unsigned)(s->g % CO_CSHM_NBUF);
    co_coll_comm *cc = s->c->coll;
    /* (a rooted call's receive side means nothing on some ranks) */
    size_t blk = a->rdt ? a->rcount * a->rdt->size : 0;
    void *mine = a->rdt ? co_coll_elem(a->rbuf, (size_t)me * a->rcount, a->rdt) : NULL;
    const void *in = in_place ? a->rbuf : a->sbuf; /* a reduction's operand */
    if (!s->shstate) { /* my buffer, once the calls before are done and it is free */
        if (s->ticket != cc->nbc_shm_finished) return 0;
        if (writes && (!slotted || s->shout)) {
            if (!co_cshm_free_now(sh, b)) return 0;
            /* (larger than the buffer: only its size, which my readers report; the API
             * refuses a send larger than the receive, so none comes here) */
            if (slotted)
                s->shbytes = shm_slots(s, co_cshm_data(sh, me, b));
            else if (s->shbytes <= co_cshm_cap(sh))
                shm_pack(s, co_cshm_data(sh, me, b));
            co_cshm_fill(sh, b, s->g + 1, s->shbytes, s->g + 2, s->shtag);
        }
        shm_post(s, s->g + 1);
        s->shstate = 1;
        s->shnext = rooted && writes ? n : scan ? n - me : 1; /* (scan: from rank 0 on) */
    }
    for (; s->shnext < n; s->shnext++) { /* the peers in turn, from the next rank on */
        int q = me + s->shnext < n ? me + s->shnext : me + s->shnext - n;
        if (rooted && !fan_in) { /* the root only */
            q = root;
            s->shnext = n - 1;
        }
        uint64_t qb;
        if (slotted && s->bymsg[q]) continue; /* its block comes as a message */
        if (!shm_ready(s, q, b, s->g + 1, &qb)) return 0;
        if (qb == UINT64_MAX) continue;
        if (slotted) {
            shm_from_slot(s, q, b, qb);
            continue;
        }
        int r = co_coll_sizes(qb, kind == CO_COLL_ALLGATHERV ? (size_t)a->rcounts[q] * a->rdt->size
                                                             : s->shwant);
        note(s, r);
        if (r) continue;
        const char *d = co_cshm_data(sh, q, b);
        if (kind == CO_COLL_ALLGATHERV)
            co_dt_unpack(a->rdt, (size_t)a->rcounts[q],
                         co_coll_elem(a->rbuf, (size_t)a->rdispls[q], a->rdt), 0, d, qb);
        else if (kind == CO_COLL_ALLGATHER || kind == CO_COLL_GATHER)
            co_dt_unpack(a->rdt, a->rcount, co_coll_elem(a->rbuf, (size_t)q * a->rcount, a->rdt), 0,
                         d, blk);
        else if (kind == CO_COLL_ALLTOALL)
            co_dt_unpack(a->rdt, a->rcount, co_coll_elem(a->rbuf, (size_t)q * a->rcount, a->rdt), 0,
                         d + (size_t)me * blk, blk);
        else if (kind == CO_COLL_BCAST)
            co_dt_unpack(a->rdt, a->rcount, a->rbuf, 0, d, blk);
        else if (kind == CO_COLL_SCATTER)
            co_dt_unpack(a->rdt, a->rcount, a->rbuf, 0, d + (size_t)me * blk, blk);
    }
    /* local parts: my own block, or the combination */
    if ((kind == CO_COLL_ALLGATHER || (kind == CO_COLL_GATHER && me == root)) && !in_place)
        note(s, co_coll_copy(a->sbuf, a->scount, a->sdt, mine, a->rcount, a->rdt));
    else if ((kind == CO_COLL_ALLGATHERV || (kind == CO_COLL_GATHERV && me == root)) && !in_place)
        note(s, co_coll_copy(a->sbuf, a->scount, a->sdt,
                             co_coll_elem(a->rbuf, (size_t)a->rdispls[me], a->rdt),
                             (size_t)a->rcounts[me], a->rdt));
    else if (kind == CO_COLL_ALLTOALLV ||
             (kind == CO_COLL_SCATTERV && me == root && a->rbuf != MPI_IN_PLACE)) {
        size_t sc, rc;
        const void *src = shm_send_block(a, me, &sc);
        void *dst = shm_recv_block(a, me, &rc);
        note(s, co_coll_copy(src, sc, a->sdt, dst, rc, a->rdt));
    } else if (kind == CO_COLL_ALLTOALL && !in_place)
        note(s, co_coll_copy(co_coll_elem(a->sbuf, (size_t)me * a->scount, a->sdt), a->scount,
                             a->sdt, mine, a->rcount, a->rdt));
    else if (kind == CO_COLL_SCATTER && me == root && a->rbuf != MPI_IN_PLACE)
        note(s, co_coll_copy(co_coll_elem(a->sbuf, (size_t)me * a->scount, a->sdt), a->scount,
                             a->sdt, a->rbuf, a->rcount, a->rdt));
    else if (!s->err && (kind == CO_COLL_ALLREDUCE || (kind == CO_COLL_REDUCE && me == root)))
        shm_combine(s, b, in, 0, a->rcount, a->rbuf, n);
    else if (!s->err && kind == CO_COLL_REDUCE_SCATTER_BLOCK)
        shm_combine(s, b, in, (size_t)me * a->rcount, a->rcount, a->rbuf, n);
    else if (!s->err && (kind == CO_COLL_SCAN || (kind == CO_COLL_EXSCAN && me > 0)))
        shm_combine(s, b, in, 0, a->rcount, a->rbuf, kind == CO_COLL_SCAN ? me + 1 : me);
    else if (!s->err && kind == CO_COLL_REDUCE_SCATTER) {
        size_t e0 = 0;
        for (int q = 0; q < me; q++) e0 += (size_t)a->rcounts[q];
        /* in place my result may overlap my operand's part shifted: take that from my buffer */
        shm_combine(s, b, in_place ? co_cshm_data(sh, me, b) - a->rdt->true_lb : in, e0,
                    (size_t)a->rcounts[me], a->rbuf, n);
    }
    shm_post(s, s->g + 2);
    cc->nbc_shm_finished++;
    s->shstate = 2; /* the buffers done; a slotted call's messages may still be on their way */
    return shm_finish(s);
}

/* Makes s (set up for call a) a shared-memory schedule if the call qualifies (shm_fits);
 * 0 if not. A persistent request's only on its lane: its starts may come in different orders
 * on different ranks, which would take a shared segment's steps in different orders. */
static int shm_take(nb_sched *s, const co_coll_args *a) {
    if ((s->req->persistent && !s->lane) || !shm_fits(s->c, a, &s->shbytes, &s->shwant)) return 0;
    co_coll_comm *cc = s->c->coll;
    s->sh = cc->shm;
    s->g = s->sh->seq;
    s->sh->seq += 2;
    s->shtag = CO_CSHM_TAG(a->kind, NB_SHM_ALG, (unsigned)(s->tag - CO_TAG_NBC) >> NB_KIND_BITS);
    s->sa = *a;
    s->ticket = cc->nbc_shm_started++;
    if (shm_slotted(a->kind)) shm_prepost(s);
    return 1;
}

void co_nbc_shm_drain(co_comm *c) {
    co_backoff bo = {0};
    while (c->coll->nbc_shm_started != c->coll->nbc_shm_finished) {
        if (co_progress())
            co_backoff_reset(&bo);
        else
            co_backoff_idle(&bo);
    }
}

/* Moves s on as far as it can go now; 1 once it has completed (its request then too). */
static int advance(nb_sched *s) {
    if (s->sh) return advance_shm(s);
    for (;;) {
        if (s->round == s->nrounds) {
            complete(s);
            return 1;
        }
        if (!s->posted) {
            post_round(s);
            if (!s->posted) return 0;
        }
        for (int i = 0; i < s->npend; i++)
            if (!s->pend[i]->complete) return 0;
        if (s->word) {
            uint64_t until = s->epoch * (uint64_t)(s->cshm->n - 1);
            if (atomic_load_explicit(s->word, memory_order_acquire) < until) return 0;
            s->word = NULL;
            s->c->coll->ibarrier_done = s->epoch;
        }
        for (int i = 0; i < s->npend; i++) {
            if (s->pend[i] == s->precv) s->rstatus = s->precv->status;
            note(s, s->pend[i]->status.error);
            co_req_free(s->pend[i]);
        }
        s->precv = NULL;
        s->npend = 0;
        finish_round(s);
    }
}

/* Run by every progress pass: two loads when nothing is in flight. */
static int nbc_progress(void) {
    int n = CO_UNLIKELY(co_comm_idup_any()) ? co_comm_idup_progress() : 0;
    if (CO_LIKELY(!active)) return n;
    for (nb_sched **pp = &active; *pp;) {
        nb_sched *s = *pp;
        int round = s->round;
        if (advance(s)) {
            *pp = s->next;
            sched_free(s);
            n++;
            continue;
        }
        n += s->round != round;
        pp = &s->next;
    }
    return n;
}

/* A new schedule for call `a` on c, with message tag `tag`, completing request r. */
static nb_sched *sched_setup(co_comm *c, const co_coll_args *a, co_req *r, int tag) {
    nb_sched *s = sched_alloc();
    s->req = r;
    s->c = c;
    s->on = c;
    s->tag = tag;
    s->late_err = a->err;
    if (a->op) co_op_retain(s->op = a->op);
    if (a->sdt) co_dt_retain(s->dts[0] = a->sdt);
    if (a->rdt) co_dt_retain(s->dts[1] = a->rdt);
    return s;
}

/* Runs s as far as it goes now and leaves the rest to the progress engine. */
static void launch(nb_sched *s) {
    s->req->active = 1;
    s->req->complete = 0;
    if (advance(s)) {
        sched_free(s);
        return;
    }
    s->next = active;
    active = s;
}

/* The call's number on c and its collective, as a tag (NB_KIND_BITS): every rank counts every
 * call, even one that fails. With the collective in the tag, ranks that call different collectives
 * never take each other's messages: an Iallreduce and an Iallgather of 4 ints each on two ranks
 * matched and both returned MPI_SUCCESS; now they wait, and the deadlock watch names them. */
static int next_tag(co_comm *c, const co_coll_args *a) {
    co_coll_comm *cc = co_coll_comm_of(c);
    co_coll_nb_record(cc, a); /* (for MPI_Finalize's look back) */
    return CO_TAG_NBC + (int)((cc->nbc_calls++ % NB_TAG_CALLS) << NB_KIND_BITS | (uint64_t)a->kind);
}

int co_nbc_start(co_comm *c, const co_coll_args *a, co_req **out) {
    *out = NULL;
    int tag = next_tag(c, a); /* first: the number is taken even when the call fails */
    co_req *r = co_req_new(CO_REQ_COLL);
    if (!r) return MPI_ERR_NO_MEM;
    co_req_set_comm(r, c);
    *out = r;
    nb_sched *s = sched_setup(c, a, r, tag);
    if (!shm_take(s, a)) build(s, a);
    launch(s);
    return MPI_SUCCESS;
}

/* ---- Blocking neighbourhood collectives ---------------------------------------------------
 * The same transfers as build_neighbor's, posted at once without a schedule and waited for as
 * the program's own point-to-point requests are (docs/runtime.md, "Waiting"): a blocking call
 * is a halo exchange. A block this rank sends to itself goes straight into the receive block
 * that its message would meet (the k-th edge to itself meets the k-th from itself) when the two
 * hold as many bytes; from the first pair that does not, the rest go as messages, whose
 * receives report the difference. */
static int nbr_self_pair(const co_comm *c, const co_coll_args *a, const int *in, int nin,
                         const int *out, int nout, int *q, int *j, nbr_block *rb, nbr_block *sb) {
    while (*q < nin && in[nbr_recv_order(c, *q)] != c->rank) ++*q;
    while (*j < nout && out[*j] != c->rank) ++*j;
    if (*q == nin || *j == nout) return 0;
    *rb = nbr_recv_block(a, nbr_recv_order(c, *q));
    *sb = nbr_send_block(a, *j);
    return rb->count * rb->dt->size == sb->count * sb->dt->size;
}

int co_nbc_neighbor(co_comm *c, const co_coll_args *a) {
    int tag = next_tag(c, a); /* first: every rank counts every call */
    const int *in, *out;
    int nin, nout;
    co_topo_neighbors(c->topo, c->rank, &in, &nin, &out, &nout);
    if (!in) return MPI_ERR_NO_MEM;
    co_req *local[16], **reqs = local;
    if (nin + nout > 16 && !(reqs = malloc((size_t)(nin + nout) * sizeof(*reqs))))
        return MPI_ERR_NO_MEM;
    nbr_block rb, sb;
    int self = 0; /* edges to itself copied: the first `self` on each list */
    for (int q = 0, j = 0; nbr_self_pair(c, a, in, nin, out, nout, &q, &j, &rb, &sb); q++, j++)
        self++;
    uint64_t ctx = co_coll_ctx(c);
    int err = 0, n = 0, skip = self;
    for (int q = 0; q < nin; q++) {
        int i = nbr_recv_order(c, q);
        if (in[i] == MPI_PROC_NULL || (in[i] == c->rank && skip && skip--)) continue;
        nbr_block b = nbr_recv_block(a, i);
        co_req *r = NULL;
        int rc = co_irecv(b.buf, b.count, b.dt, in[i], tag, c, ctx, &r);
        if (rc && !err) err = rc;
        if (r) r->internal = 1, reqs[n++] = r;
    }
    skip = self;
    for (int j = 0; j < nout; j++) {
        if (out[j] == MPI_PROC_NULL || (out[j] == c->rank && skip && skip--)) continue;
        nbr_block b = nbr_send_block(a, j);
        /* after an error, sends carry nothing, as a schedule's do (post_round) */
        size_t count = err ? 0 : b.count;
        /* a small contiguous block goes straight into the queue, as the program's own
         * MPI_Isend would send it: no request to make and wait for */
        if (b.dt->contig && co_send_eager_fast((const char *)b.buf + b.dt->true_lb,
                                               count * b.dt->size, c, ctx, out[j], tag))
            continue;
        co_req *r = NULL;
        int rc = co_isend(b.buf, count, b.dt, out[j], tag, c, ctx, CO_MODE_STD, &r);
        if (rc && !err) err = rc;
        if (r) r->internal = 1, reqs[n++] = r;
    }
    for (int q = 0, j = 0, k = 0; k < self; k++, q++, j++) {
        nbr_self_pair(c, a, in, nin, out, nout, &q, &j, &rb, &sb);
        int rc = co_coll_copy(sb.buf, sb.count, sb.dt, rb.buf, rb.count, rb.dt);
        if (rc && !err) err = rc;
    }
    for (int k = 0; k < n; k++) {
        co_progress_wait_as(reqs[k], 1);
        if (reqs[k]->status.error && !err) err = reqs[k]->status.error;
        co_req_free(reqs[k]);
    }
    if (reqs != local) free(reqs);
    return err ? err : a->err;
}

/* ---- MPI_Isendrecv -----------------------------------------------------------------------------
 * One round: the receive and the send posted at once. `own` (may be NULL) is scratch memory
 * the schedule frees at its end (MPI_Isendrecv_replace's packed copy of the data to send). */
int co_nbc_sendrecv(co_comm *c, const void *sbuf, size_t scount, co_dtype *sdt, int dest, int stag,
                    void *rbuf, size_t rcount, co_dtype *rdt, int source, int rtag, void *own,
                    co_req **out) {
    *out = NULL;
    co_req *r = co_req_new(CO_REQ_COLL);
    if (!r) {
        free(own);
        return MPI_ERR_NO_MEM;
    }
    r->mode = CO_NBC_P2P;
    co_req_set_comm(r, c);
    nb_sched *s = sched_alloc();
    s->req = r;
    s->c = s->on = c;
    s->p2p = 1, s->stag = stag, s->rtag = rtag;
    s->rstatus = (co_status){.source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG};
    co_dt_retain(s->dts[0] = sdt);
    co_dt_retain(s->dts[1] = rdt);
    s->own = own;
    nb_recv(s, rbuf, rcount, rdt, source);
    nb_send(s, sbuf, scount, sdt, dest);
    nb_round(s);
    *out = r;
    launch(s);
    return MPI_SUCCESS;
}

/* ---- Persistent collectives -----------------------------------------------------------------
 * The request keeps the call (its arguments, its operator and datatypes held, Alltoallw's type
 * arrays copied; the count and displacement arrays are the program's, which MPI 4 forbids it to
 * change while the request lives) and the tag numbered at the init call. Every MPI_Start builds
 * a fresh schedule with that tag: a rank starts the request again only after the previous run
 * completed there, and messages between two ranks on one tag are matched in the order they were
 * sent, so a peer already in the next run cannot take this run's messages.
 *
 * Different requests may be started in different orders on different ranks, so their runs
 * cannot take turns in the communicator's shared buffers, whose steps every rank takes in one
 * order. So on an intracommunicator every request gets a lane of its own (co_comm_lane): a
 * hidden communicator over the same group with a small segment of its own, set up by the init
 * call (MPI 4 makes the init calls nonlocal: they may wait for every rank, and come in one order
 * everywhere). A request's runs take its lane's steps one after the other, as nonblocking calls
 * take their communicator's, whatever the other requests and collectives do meanwhile, and get
 * the nonblocking calls' shared-memory schedules (the barrier: the counter barrier). The lane's
 * buffers hold what the call needs (lane_cap); a call that would not take shared buffers gets
 * no lane, nor does any once a lane would leave its communicators less than half the heap slice
 * (co_cshm_lane); those run as messages. The lanes' messages go on the communicator's contexts
 * with the request's tag. */
typedef struct nb_persist {
    co_coll_args a;
    co_dtype **wdts; /* Alltoallw's 2 x n types (the copies a.stypes and a.rtypes point into) */
    int nwdts;
    int tag;
    co_comm *lane;                  /* NULL: the runs go on the communicator itself */
    struct nb_persist *prev, *next; /* the requests with lanes (co_nbc_fini) */
} nb_persist;

static nb_persist *laned;

/* The bytes of a lane buffer's payload for call a on c: what one rank publishes, at least
 * NB_LANE_MIN (so that a rank whose size differs a little still takes the buffers and reports
 * the difference; the ranks use rank 0's figure), at most what a communicator's buffer holds,
 * and that for the calls with slots, whose blocks go inline up to a share of the buffer (so
 * that they do as the nonblocking calls: with 8 KiB, the 8-rank Ialltoallv of 1 KiB blocks
 * went as messages, 30-44 us against 10-13); a cache line for the barrier (the counter
 * barrier needs only the control lines); 0 for a call that would not take the buffers. */
#define NB_LANE_MIN 4096
static size_t lane_cap(const co_comm *c, const co_coll_args *a) {
    if (a->kind == CO_COLL_BARRIER) return CO_CACHELINE;
    size_t full = co_cshm_full_cap(), bytes, want;
    if (!shm_fits_in(c, a, full, &bytes, &want)) return 0;
    /* (a buffer of `want` bytes or more holds the call as a full one does: only what the
     * buffer must hold depends on its size, and slots take a share of it) */
    return shm_slotted(a->kind) ? full : CO_MIN(CO_MAX(want, NB_LANE_MIN), full);
}

static void lane_drop(nb_persist *p) {
    if (p->prev)
        p->prev->next = p->next;
    else
        laned = p->next;
    if (p->next) p->next->prev = p->prev;
    co_comm_lane_free(p->lane);
    p->lane = NULL;
}

static void persist_free(co_req *r) {
    nb_persist *p = r->cb_arg;
    if (!p) return;
    if (p->lane) lane_drop(p);
    if (p->a.op) co_op_release(p->a.op);
    if (p->a.sdt) co_dt_release(p->a.sdt);
    if (p->a.rdt) co_dt_release(p->a.rdt);
    if (p->wdts) drop_types(p->wdts, p->nwdts);
    free(p);
    r->cb_arg = NULL;
}

int co_nbc_lane(co_comm *c, const void *arg) {
    const co_nbc_lane_args *la = arg;
    co_comm *l = co_comm_lane(c);
    if (!l) co_fatal("out of memory for a persistent collective");
    *la->out = l;
    if (!co_cshm_lane(l, c, lane_cap(c, la->a))) { /* (every rank alike: rank 0's verdict) */
        co_comm_lane_free(l);
        *la->out = NULL;
    }
    return MPI_SUCCESS;
}

int co_nbc_persistent(co_comm *c, const co_coll_args *a, co_comm *lane, co_req **out) {
    *out = NULL;
    int tag = next_tag(c, a);
    nb_persist *p = calloc(1, sizeof(*p));
    co_req *r = p ? co_req_new(CO_REQ_COLL) : NULL;
    if (!r) {
        free(p);
        if (lane) co_comm_lane_free(lane);
        return MPI_ERR_NO_MEM;
    }
    p->a = *a;
    p->tag = tag;
    if (lane) {
        p->lane = lane;
        p->next = laned;
        if (laned) laned->prev = p;
        laned = p;
    }
    if (a->kind == CO_COLL_ALLTOALLW) {
        int n = c->is_inter ? c->remote->size : c->size;
        p->nwdts = 2 * n;
        p->wdts = held_types(a, n, n);
        p->a.rtypes = p->wdts;
        p->a.stypes = a->stypes ? p->wdts + n : NULL;
    }
    if (a->op) co_op_retain(a->op);
    if (a->sdt) co_dt_retain(a->sdt);
    if (a->rdt) co_dt_retain(a->rdt);
    r->persistent = 1;
    r->cb_arg = p;
    r->on_free = persist_free;
    co_req_set_comm(r, c);
    *out = r;
    return MPI_SUCCESS;
}

int co_nbc_uses_segment(const co_comm *c) {
    for (const nb_sched *s = active; s; s = s->next)
        if ((s->cshm || s->sh) && s->c == c) return 1;
    return 0;
}

void co_nbc_restart(co_req *r) {
    nb_persist *p = r->cb_arg;
    nb_sched *s = sched_setup(p->lane ? p->lane : r->comm, &p->a, r, p->tag);
    s->lane = p->lane != NULL;
    if (!s->lane || !shm_take(s, &p->a)) build(s, &p->a);
    launch(s);
}

/* The job has deadlocked and schedule s (in the active list at *pp) waits: fails it with
 * MPI_ERR_OTHER (status.deadlock), as a blocking collective's wait fails, if nothing of it
 * can move any more: every transfer it waits for is a receive that no message has matched
 * (cancelled here) or is done. 0 if it waits for a send, which a receiver might still match
 * and which cannot be taken back, or for data on its way. A schedule through the shared
 * buffers or a counter MPI_Ibarrier has taken steps or counters that its peers have not
 * matched: its communicator is broken then, as by an abandoned blocking call (later blocking
 * collectives on it fail at once, and no nonblocking one takes the shared buffers again). */
static int deadlock_fail(nb_sched **pp) {
    nb_sched *s = *pp;
    for (int i = 0; i < s->npend; i++) {
        const co_req *q = s->pend[i];
        if (!q->complete && (q->kind != CO_REQ_RECV || q->matched)) return 0;
    }
    for (int i = 0; i < s->npend; i++) {
        co_req_cancel(s->pend[i]); /* (the receives not done: none has matched) */
        co_req_free(s->pend[i]);
    }
    s->npend = 0;
    if (s->sh || s->cshm) { /* (an intercommunicator's counters are its group's) */
        co_comm *b = s->sh || s->c->coll->shm == s->cshm ? s->c : s->c->local_comm;
        if (b) co_coll_broken_by(b, MPI_ERR_OTHER, co_deadlock_reason());
    }
    co_req *r = s->req;
    r->status = (co_status){
        .source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG, .error = MPI_ERR_OTHER, .deadlock = 1};
    co_req_complete(r);
    *pp = s->next;
    sched_free(s);
    return 1;
}

/* A long wait on r: the transfers its schedule waits for are checked as a wait on them would
 * be. Those of MPI_Isendrecv (on the point-to-point context) fail when their partner has gone
 * or the job has deadlocked, and the schedule completes with the error; collective ones are
 * left to the deadlock watch. */
static void nbc_wait_check(co_req *r) {
    for (nb_sched **pp = &active; *pp; pp = &(*pp)->next) {
        nb_sched *s = *pp;
        if (s->req != r) continue;
        for (int i = 0; i < s->npend; i++) co_p2p_wait_check(s->pend[i]);
        /* A deadlock that none of those claimed (a collective's transfers have no check of
         * their own): name the call for mpiexec's report, then fail the wait, or end the job
         * where the schedule cannot be taken back half-run (deadlock_fail). */
        if (CO_UNLIKELY(co_st.dl_pending) && !s->p2p && !r->complete) {
            unsigned t = (unsigned)(s->tag - CO_TAG_NBC);
            co_deadlock_claim("nonblocking collective call %u on %s: %s", (t >> NB_KIND_BITS) + 1,
                              co_comm_label(s->c),
                              co_coll_kind_name((int)(t & ((1u << NB_KIND_BITS) - 1))));
            if (!deadlock_fail(pp)) co_deadlock_end();
        }
        return;
    }
}

void co_nbc_init(void) {
    /* (also what completes the MPI_Comm_idup calls that wait for their master) */
    co_st.coll_progress = nbc_progress;
    co_st.sched_wait_check = nbc_wait_check;
}

void co_nbc_fini(void) {
    while (active) { /* never completed by the program: nothing waits for them any more */
        nb_sched *s = active;
        active = s->next;
        for (int i = 0; i < s->npend; i++)
            if (s->pend[i]->kind == CO_REQ_RECV) co_req_cancel(s->pend[i]);
        sched_free(s);
    }
    while (laned) lane_drop(laned); /* (the requests go later, with the point-to-point layer) */
    while (npool) sched_destroy(pool[--npool]);
    co_st.coll_progress = NULL;
    co_st.sched_wait_check = NULL;
}
