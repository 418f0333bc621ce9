/* Random sequences of collectives. The fixed-order tests run one collective at a time; here
 * every rank draws the same sequence from one seed: a collective, a communicator (WORLD, a
 * dup, the halves of two splits, both halves running the same call at once), a count from 0
 * to 200000 elements (inline, one buffer, many rounds, single copy), a root, an operator,
 * a contiguous or a strided type, in place or not. Now and then one rank arrives late, or
 * every rank has a receive from MPI_ANY_SOURCE with MPI_ANY_TAG pending across the call,
 * which must not catch the collective's own messages. So buffers are reused, and steps
 * and messages of consecutive calls overlap, in orders no fixed test produces.
 *
 * Every element received is checked, and so is every element the call must leave alone
 * (the gaps of the strided type, holes between v-blocks, the tail past the data).
 * With COLL_RANDOM_NB=1 each call is also drawn blocking, nonblocking (MPI_I<collective>) or
 * persistent (MPI_<collective>_init, then MPI_Start). Up to FLY of the latter two are in flight
 * at once, on any of the communicators, each with buffers of its own, while blocking calls run
 * among them; each rank completes them in an order of its own (MPI_Wait on one, MPI_Waitall,
 * MPI_Testany or MPI_Test until done) and checks them then. So schedules of several calls,
 * on one communicator and on several, progress together and inside blocking calls.
 *
 * COLL_RANDOM_SEED and COLL_RANDOM_OPS choose the sequence; a failure names both and the
 * call's position in it. */
#include "testutil.h"

#include <stdint.h>
#include <time.h>

enum { OPS = 300, FLY = 4, MAXN = 200000, TAIL = 64, SENT = 0x7f7f7f7f };
/* Every collective, with its name for the messages. */
#define COLLS(X)                                                                                   \
    X(BARRIER, "Barrier")                                                                          \
    X(BCAST, "Bcast")                                                                              \
    X(REDUCE, "Reduce")                                                                            \
    X(ALLREDUCE, "Allreduce")                                                                      \
    X(GATHER, "Gather")                                                                            \
    X(GATHERV, "Gatherv")                                                                          \
    X(SCATTER, "Scatter")                                                                          \
    X(SCATTERV, "Scatterv")                                                                        \
    X(ALLGATHER, "Allgather")                                                                      \
    X(ALLGATHERV, "Allgatherv")                                                                    \
    X(ALLTOALL, "Alltoall")                                                                        \
    X(ALLTOALLV, "Alltoallv")                                                                      \
    X(RSCATTER, "Reduce_scatter")                                                                  \
    X(RSCATTER_BLOCK, "Reduce_scatter_block")                                                      \
    X(SCAN, "Scan")                                                                                \
    X(EXSCAN, "Exscan")
#define AS_ENUM(id, name) id,
#define AS_NAME(id, name) name,
enum { COLLS(AS_ENUM) NCOLL };
static const char *const names[NCOLL] = {COLLS(AS_NAME)};

static uint64_t rng;       /* the sequence every rank draws alike */
static uint64_t local_rng; /* this rank's own choices: the order of completion */
static int below(int n) {
    return tu_below(&rng, n);
}

/* One call's parameters, drawn alike everywhere. */
typedef struct {
    int coll, comm, n, root, op, strided, inplace, late, late_us, anysrc, mode;
} call_t;
enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* A call and what it needs until it completes: its buffers, counts and expected result. */
typedef struct {
    call_t k;
    long pos;
    int cme, cnp, stride, check;
    size_t total;          /* elements the result spans */
    size_t loose0, loose1; /* elements [loose0, loose1) may hold anything afterwards */
    int *sb, *rb, *want, *cnt, *dsp, *rcnt, *rdsp;
    MPI_Request rq;
} slot_t;

static int me, np;
static long seed;
static size_t cap;
static MPI_Datatype strided_int;
static slot_t *S; /* the call being set up or checked */

static int val(int src, int dst, int i) {
    return (int)(((long)src * 7919 + (long)dst * 104729 + (long)i * 31 + S->pos * 17) % 100003);
}
static int fold(int op, int a, int b) {
    return op == 0 ? a + b : op == 1 ? (a > b ? a : b) : a ^ b;
}
static int red(int op, int upto, int i) { /* ranks 0..upto-1 of the communicator combined */
    int v = val(0, 0, i);
    for (int q = 1; q < upto; q++) v = fold(op, v, val(q, 0, i));
    return v;
}

/* Element e of a block starting at element `at`, in ints. */
static size_t at(size_t e) {
    return e * (size_t)S->stride;
}
static void put(int *b, size_t e0, int count, int src, int dst) {
    for (int e = 0; e < count; e++) b[at(e0 + (size_t)e)] = val(src, dst, e);
}
static void sentinel(int *b, size_t ints) {
    for (size_t i = 0; i < ints; i++) b[i] = SENT;
}

static void compare(void) {
    const call_t *k = &S->k;
    static const char *const modes[] = {"", "nonblocking ", "persistent "};
    if (!S->check) return; /* the receive buffer is not significant here */
    size_t ints = at(S->total) + TAIL < cap ? at(S->total) + TAIL : cap;
    for (size_t i = 0; i < ints; i++)
        CHECK(S->rb[i] == S->want[i] ||
                  (i >= at(S->loose0) && i < at(S->loose1) && i % (size_t)S->stride == 0),
              "seed %ld call %ld: %s%s n=%d root=%d op=%d strided=%d inplace=%d comm=%d (size %d, "
              "rank %d): int %zu is %d, expected %d",
              seed, S->pos, modes[k->mode], names[k->coll], k->n, k->root, k->op, k->strided,
              k->inplace, k->comm, S->cnp, S->cme, i, S->rb[i], S->want[i]);
}

/* v-layouts: uneven counts (some zero) and holes between the blocks. */
static void vlayout(int n, int salt) {
    int d = 0;
    for (int q = 0; q < S->cnp; q++) {
        S->cnt[q] = (q + salt) % 4 == 3 ? 0 : n + (q * 3 + salt) % 5;
        S->dsp[q] = d;
        d += S->cnt[q] + (q % 2) * 3;
    }
}

/* The call in its drawn form: MPI_<name>, MPI_<iname>, or MPI_<name>_init and MPI_Start. */
#define CALL(name, iname, ...)                                                                     \
    do {                                                                                           \
        if (k->mode == BLOCKING)                                                                   \
            CHECK_RC(MPI_##name(__VA_ARGS__));                                                     \
        else if (k->mode == NONBLOCKING)                                                           \
            CHECK_RC(MPI_##iname(__VA_ARGS__, &S->rq));                                            \
        else {                                                                                     \
            CHECK_RC(MPI_##name##_init(__VA_ARGS__, MPI_INFO_NULL, &S->rq));                       \
            CHECK_RC(MPI_Start(&S->rq));                                                           \
        }                                                                                          \
    } while (0)

/* Fills S's buffers and its expected result, and makes (or starts) the call. */
static void start(MPI_Comm c) {
    const call_t *k = &S->k;
    MPI_Datatype T = k->strided ? strided_int : MPI_INT;
    MPI_Op ops[3] = {MPI_SUM, MPI_MAX, MPI_BXOR};
    MPI_Op op = ops[k->op];
    int n = k->n, cme = S->cme, cnp = S->cnp, root = k->root % cnp;
    int *sb = S->sb, *rb = S->rb, *want = S->want;
    int *cnt = S->cnt, *dsp = S->dsp, *rcnt = S->rcnt, *rdsp = S->rdsp;
    S->total = S->loose0 = S->loose1 = 0;
    S->check = 1;
    S->rq = MPI_REQUEST_NULL;
    sentinel(rb, cap);
    sentinel(want, cap);
    sentinel(sb, cap);
    switch (k->coll) {
    case BARRIER: CALL(Barrier, Ibarrier, c); break;
    case BCAST:
        if (cme == root) put(rb, 0, n, root, 0);
        CALL(Bcast, Ibcast, rb, n, T, root, c);
        put(want, 0, n, root, 0);
        S->total = (size_t)n;
        break;
    case REDUCE:
    case ALLREDUCE:
    case SCAN:
    case EXSCAN: {
        int *src = sb;
        if (k->inplace && (k->coll != REDUCE || cme == root) && k->coll != EXSCAN) {
            put(rb, 0, n, cme, 0);
            src = MPI_IN_PLACE;
        } else
            put(sb, 0, n, cme, 0);
        if (k->coll == REDUCE) CALL(Reduce, Ireduce, src, rb, n, T, op, root, c);
        if (k->coll == ALLREDUCE) CALL(Allreduce, Iallreduce, src, rb, n, T, op, c);
        if (k->coll == SCAN) CALL(Scan, Iscan, src, rb, n, T, op, c);
        if (k->coll == EXSCAN) CALL(Exscan, Iexscan, src, rb, n, T, op, c);
        int upto = k->coll == SCAN ? cme + 1 : k->coll == EXSCAN ? cme : cnp;
        if ((k->coll == REDUCE && cme != root) || upto == 0)
            S->check = 0;
        else
            for (int e = 0; e < n; e++) want[at((size_t)e)] = red(k->op, upto, e);
        S->total = (size_t)n;
        break;
    }
    case GATHER:
        put(sb, 0, n, cme, root);
        if (cme == root && k->inplace) put(rb, (size_t)cme * (size_t)n, n, cme, root);
        CALL(Gather, Igather, cme == root && k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, root,
             c);
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, root);
        else
            S->check = 0;
        S->total = (size_t)n * (size_t)cnp;
        break;
    case SCATTER:
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(sb, (size_t)q * (size_t)n, n, root, q);
        if (cme == root && k->inplace) {
            memcpy(rb, sb, cap * sizeof(int));
            memcpy(want, sb, cap * sizeof(int));
            CALL(Scatter, Iscatter, rb, n, T, MPI_IN_PLACE, n, T, root, c);
        } else {
            put(want, 0, n, root, cme);
            CALL(Scatter, Iscatter, sb, n, T, rb, n, T, root, c);
        }
        S->total = (size_t)n * (size_t)cnp;
        break;
    case ALLGATHER:
        put(sb, 0, n, cme, 0);
        if (k->inplace) put(rb, (size_t)cme * (size_t)n, n, cme, 0);
        CALL(Allgather, Iallgather, k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, c);
        for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, 0);
        S->total = (size_t)n * (size_t)cnp;
        break;
    case ALLTOALL:
        for (int q = 0; q < cnp; q++) put(k->inplace ? rb : sb, (size_t)q * (size_t)n, n, cme, q);
        CALL(Alltoall, Ialltoall, k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, c);
        for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, cme);
        S->total = (size_t)n * (size_t)cnp;
        break;
    case GATHERV:
    case ALLGATHERV:
        vlayout(n, (int)(S->pos % 7));
        put(sb, 0, cnt[cme], cme, 0);
        if (k->inplace && (k->coll == ALLGATHERV || cme == root)) { /* my block is in place */
            put(rb, (size_t)dsp[cme], cnt[cme], cme, 0);
            sb = MPI_IN_PLACE;
        }
        if (k->coll == GATHERV)
            CALL(Gatherv, Igatherv, sb, cnt[cme], T, rb, cnt, dsp, T, root, c);
        else
            CALL(Allgatherv, Iallgatherv, sb, cnt[cme], T, rb, cnt, dsp, T, c);
        if (k->coll == ALLGATHERV || cme == root)
            for (int q = 0; q < cnp; q++) put(want, (size_t)dsp[q], cnt[q], q, 0);
        else
            S->check = 0;
        S->total = (size_t)dsp[cnp - 1] + (size_t)cnt[cnp - 1];
        break;
    case SCATTERV:
        vlayout(n, (int)(S->pos % 5));
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(sb, (size_t)dsp[q], cnt[q], root, q);
        if (cme == root && k->inplace) { /* the root's receive buffer is left alone */
            memcpy(rb, sb, cap * sizeof(int));
            memcpy(want, sb, cap * sizeof(int));
            CALL(Scatterv, Iscatterv, rb, cnt, dsp, T, MPI_IN_PLACE, cnt[cme], T, root, c);
            S->total = (size_t)dsp[cnp - 1] + (size_t)cnt[cnp - 1];
            break;
        }
        put(want, 0, cnt[cme], root, cme);
        CALL(Scatterv, Iscatterv, sb, cnt, dsp, T, rb, cnt[cme], T, root, c);
        S->total = (size_t)cnt[cme];
        break;
    case ALLTOALLV: {
        /* rank p sends (n + p + 2q) % 7 == 6 ? 0 : n + (p + 2q) % 5 elements to rank q; in
         * place, where what p sends q is what q sends p, (n + p + q) % 7 == 6 ? 0 : n + (p + q) % 5
         */
        int d = 0, r = 0, ip = k->inplace;
        for (int q = 0; q < cnp; q++) {
            int to = ip ? cme + q : cme + 2 * q, from = ip ? q + cme : q + 2 * cme;
            cnt[q] = (n + to) % 7 == 6 ? 0 : n + to % 5;
            dsp[q] = d;
            d += cnt[q] + q % 2;
            rcnt[q] = (n + from) % 7 == 6 ? 0 : n + from % 5;
            rdsp[q] = r;
            r += rcnt[q] + 2 * (q % 2);
        }
        for (int q = 0; q < cnp; q++)
            put(ip ? rb : sb, (size_t)(ip ? rdsp[q] : dsp[q]), cnt[q], cme, q);
        for (int q = 0; q < cnp; q++) put(want, (size_t)rdsp[q], rcnt[q], q, cme);
        CALL(Alltoallv, Ialltoallv, ip ? MPI_IN_PLACE : sb, cnt, dsp, T, rb, rcnt, rdsp, T, c);
        S->total = (size_t)r;
        break;
    }
    case RSCATTER:
    case RSCATTER_BLOCK: {
        int len = 0, mine = 0;
        for (int q = 0; q < cnp; q++) {
            cnt[q] = k->coll == RSCATTER_BLOCK ? n : (q + (int)S->pos) % 3 == 2 ? 0 : n + q % 4;
            if (q == cme) mine = len;
            len += cnt[q];
        }
        /* in place: the whole vector in the receive buffer, my block of the result at its start,
         * the rest of the vector undefined afterwards (the gaps of the strided type untouched) */
        for (int e = 0; e < len; e++) (k->inplace ? rb : sb)[at((size_t)e)] = val(cme, 0, e);
        for (int e = 0; e < cnt[cme]; e++) want[at((size_t)e)] = red(k->op, cnp, mine + e);
        if (k->inplace) sb = MPI_IN_PLACE;
        if (k->coll == RSCATTER)
            CALL(Reduce_scatter, Ireduce_scatter, sb, rb, cnt, T, op, c);
        else
            CALL(Reduce_scatter_block, Ireduce_scatter_block, sb, rb, n, T, op, c);
        S->total = (size_t)cnt[cme];
        if (k->inplace) {
            S->loose0 = (size_t)cnt[cme];
            S->total = S->loose1 = (size_t)len;
        }
        break;
    }
    }
}

static int pick_count(void) {
    int cls = below(100);
    if (cls < 5) return 0;
    if (cls < 40) return 1 + below(12);
    if (cls < 65) return 13 + below(1000);
    if (cls < 85) return 1000 + below(20000);
    return 20000 + below(MAXN / 8 - 20000); /* per rank; v-layouts and rounds add up */
}

static int mine_below(int n) { /* this rank's own draw */
    return tu_below(&local_rng, n);
}

static slot_t slots[FLY + 1]; /* slots[FLY]: the blocking calls */
static int busy[FLY];         /* slot taken: alike on every rank, freed only by complete_all */
static int pending[FLY];      /* the call in the slot is not complete yet on this rank */

/* The call in flight in slot i is complete: check it. */
static void done(int i) {
    S = &slots[i];
    if (S->k.mode == PERSISTENT) CHECK_RC(MPI_Request_free(&S->rq));
    CHECK(S->rq == MPI_REQUEST_NULL, "seed %ld call %ld: the request is not freed", seed, S->pos);
    compare();
    pending[i] = 0;
}

/* Completes some of the calls pending on this rank, in a way it draws for itself. */
static void complete_some(void) {
    MPI_Request rq[FLY];
    int idx[FLY], m = 0;
    for (int i = 0; i < FLY; i++)
        if (pending[i]) idx[m] = i, rq[m++] = slots[i].rq;
    if (m == 0) return;
    int j = MPI_UNDEFINED, flag = 0;
    switch (mine_below(4)) {
    case 0: /* MPI_Waitall */
        CHECK_RC(MPI_Waitall(m, rq, MPI_STATUSES_IGNORE));
        for (j = 0; j < m; j++) {
            slots[idx[j]].rq = rq[j];
            done(idx[j]);
        }
        break;
    case 1: /* MPI_Wait on one of them */
        j = mine_below(m);
        CHECK_RC(MPI_Wait(&slots[idx[j]].rq, MPI_STATUS_IGNORE));
        done(idx[j]);
        break;
    case 2: /* MPI_Testany until one completes */
        while (!flag) CHECK_RC(MPI_Testany(m, rq, &j, &flag, MPI_STATUS_IGNORE));
        CHECK(j >= 0 && j < m, "seed %ld: MPI_Testany flagged index %d of %d", seed, j, m);
        slots[idx[j]].rq = rq[j];
        done(idx[j]);
        break;
    default: /* MPI_Test on one until it completes */
        j = mine_below(m);
        while (!flag) CHECK_RC(MPI_Test(&slots[idx[j]].rq, &flag, MPI_STATUS_IGNORE));
        done(idx[j]);
    }
}

/* Every rank completes all its calls; the slots are free again everywhere. */
static void complete_all(void) {
    for (int i = 0; i < FLY; i++)
        while (pending[i]) complete_some();
    memset(busy, 0, sizeof busy);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *e = getenv("COLL_RANDOM_SEED");
    seed = e ? atol(e) : 1;
    e = getenv("COLL_RANDOM_OPS");
    long ops = e ? atol(e) : OPS;
    e = getenv("COLL_RANDOM_NB");
    int nb = e && atoi(e) > 0;
    rng = (uint64_t)seed * 0x2545f4914f6cdd1dull + (uint64_t)np;
    local_rng = rng ^ ((uint64_t)(me + 1) << 32);

    MPI_Comm comms[4];
    comms[0] = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &comms[2]));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me < np / 2, me, &comms[3]));
    /* one int in every two */
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided_int));
    CHECK_RC(MPI_Type_commit(&strided_int));

    /* the largest span: a v-layout of MAXN/8 + 4 elements per rank and holes, strided */
    cap = 2 * ((size_t)np * (MAXN / 8 + 8) + 4 * (size_t)np) + TAIL;
    for (int i = 0; i < (nb ? FLY + 1 : 1); i++) {
        slot_t *s = &slots[nb ? i : FLY];
        s->sb = malloc(cap * sizeof(int));
        s->rb = malloc(cap * sizeof(int));
        s->want = malloc(cap * sizeof(int));
        s->cnt = malloc(4 * (size_t)np * sizeof(int));
        CHECK(s->sb && s->rb && s->want && s->cnt, "out of memory");
        s->dsp = s->cnt + np, s->rcnt = s->dsp + np, s->rdsp = s->rcnt + np;
    }

    for (long pos = 0; pos < ops; pos++) {
        call_t k;
        k.coll = below(NCOLL);
        k.comm = below(4);
        k.n = pick_count();
        k.root = below(8);
        k.op = below(3);
        k.strided = below(4) == 0;
        k.inplace = below(3) == 0;
        k.late = below(6) == 0 ? below(np) : -1;
        k.late_us = 200 + below(2000);
        k.anysrc = below(10) == 0;
        k.mode = nb ? below(3) : BLOCKING;
        MPI_Comm c = comms[k.comm];
        int slot = FLY;
        if (k.mode != BLOCKING) {
            k.anysrc = 0;
            int all = 1;
            for (int i = 0; i < FLY; i++) all &= busy[i];
            if (all) complete_all();
            while (busy[slot = below(FLY)]) /* the same free slot everywhere */
                ;
        }
        S = &slots[slot];
        S->k = k;
        S->pos = pos;
        MPI_Comm_rank(c, &S->cme);
        MPI_Comm_size(c, &S->cnp);
        S->stride = k.strided ? 2 : 1;
        int got = -1;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (k.anysrc) CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &rq));
        if (k.late == me) {
            struct timespec ts = {0, (long)k.late_us * 1000};
            nanosleep(&ts, NULL);
        }
        start(c);
        if (k.mode == BLOCKING)
            compare();
        else
            busy[slot] = pending[slot] = 1;
        if (k.anysrc) {
            int cme = S->cme, cnp = S->cnp;
            int token = 1000 * (cme + 1) + (int)(pos % 1000);
            MPI_Status st;
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, (cme + 1) % cnp, 7, c));
            CHECK_RC(MPI_Wait(&rq, &st));
            int from = (cme - 1 + cnp) % cnp;
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 7 &&
                      got == 1000 * (from + 1) + (int)(pos % 1000),
                  "seed %ld call %ld (%s): the pending receive got %d from %d tag %d", seed, pos,
                  names[k.coll], got, st.MPI_SOURCE, st.MPI_TAG);
        }
        if (nb && mine_below(3) == 0) complete_some(); /* each rank when it likes */
        if (nb && below(10) == 0) complete_all();
    }
    complete_all();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("coll_random: %ld calls%s, seed %ld, %d ranks: ok\n", ops,
               nb ? " (blocking, nonblocking and persistent)" : "", seed, np);
    for (int i = 1; i < 4; i++) MPI_Comm_free(&comms[i]);
    MPI_Type_free(&strided_int);
    for (int i = 0; i <= FLY; i++) {
        free(slots[i].sb);
        free(slots[i].rb);
        free(slots[i].want);
        free(slots[i].cnt);
    }
    MPI_Finalize();
    return 0;
}
