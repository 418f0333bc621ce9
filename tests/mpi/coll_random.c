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
 * COLL_RANDOM_SEED and COLL_RANDOM_OPS choose the sequence; a failure names both and the
 * call's position in it. */
#include "testutil.h"

#include <stdint.h>
#include <time.h>

enum { OPS = 300, MAXN = 200000, TAIL = 64, SENT = 0x7f7f7f7f };
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

static uint64_t rng;
static uint64_t draw(void) { /* splitmix64: the same sequence on every rank */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int below(int n) {
    return (int)(draw() % (uint64_t)n);
}

/* One call's parameters, drawn alike everywhere. */
typedef struct {
    int coll, comm, n, root, op, strided, inplace, late, late_us, anysrc;
} call_t;

static int me, np, cme, cnp, stride;
static long seed, pos;
static int *sb, *rb, *want, *cnt, *dsp, *rcnt, *rdsp;
static size_t cap;
static MPI_Datatype strided_int;

static int val(int src, int dst, int i) {
    return (int)(((long)src * 7919 + (long)dst * 104729 + (long)i * 31 + pos * 17) % 100003);
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
    return e * (size_t)stride;
}
static void put(int *b, size_t e0, int count, int src, int dst) {
    for (int e = 0; e < count; e++) b[at(e0 + (size_t)e)] = val(src, dst, e);
}
static void sentinel(int *b, size_t ints) {
    for (size_t i = 0; i < ints; i++) b[i] = SENT;
}

/* This rank's receive buffer is not significant in the call (or its content undefined):
 * whatever the call left there is accepted. */
static void unchecked(void) {
    memcpy(want, rb, cap * sizeof(int));
}

static void compare(const call_t *k, size_t elems) {
    size_t ints = at(elems) + TAIL < cap ? at(elems) + TAIL : cap;
    for (size_t i = 0; i < ints; i++)
        CHECK(rb[i] == want[i],
              "seed %ld call %ld: %s n=%d root=%d op=%d strided=%d inplace=%d comm=%d (size %d, "
              "rank %d): int %zu is %d, expected %d",
              seed, pos, names[k->coll], k->n, k->root, k->op, k->strided, k->inplace, k->comm, cnp,
              cme, i, rb[i], want[i]);
}

/* v-layouts: uneven counts (some zero) and holes between the blocks. */
static void vlayout(int n, int salt) {
    int d = 0;
    for (int q = 0; q < cnp; q++) {
        cnt[q] = (q + salt) % 4 == 3 ? 0 : n + (q * 3 + salt) % 5;
        dsp[q] = d;
        d += cnt[q] + (q % 2) * 3;
    }
}

static void run(const call_t *k, MPI_Comm c) {
    MPI_Datatype T = k->strided ? strided_int : MPI_INT;
    MPI_Op ops[3] = {MPI_SUM, MPI_MAX, MPI_BXOR};
    MPI_Op op = ops[k->op];
    int n = k->n, root = k->root % cnp;
    size_t total = 0; /* elements the result spans */
    sentinel(rb, cap);
    sentinel(want, cap);
    sentinel(sb, cap);
    switch (k->coll) {
    case BARRIER: CHECK_RC(MPI_Barrier(c)); break;
    case BCAST:
        if (cme == root) put(rb, 0, n, root, 0);
        CHECK_RC(MPI_Bcast(rb, n, T, root, c));
        put(want, 0, n, root, 0);
        total = (size_t)n;
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
        if (k->coll == REDUCE) CHECK_RC(MPI_Reduce(src, rb, n, T, op, root, c));
        if (k->coll == ALLREDUCE) CHECK_RC(MPI_Allreduce(src, rb, n, T, op, c));
        if (k->coll == SCAN) CHECK_RC(MPI_Scan(src, rb, n, T, op, c));
        if (k->coll == EXSCAN) CHECK_RC(MPI_Exscan(src, rb, n, T, op, c));
        int upto = k->coll == SCAN ? cme + 1 : k->coll == EXSCAN ? cme : cnp;
        if ((k->coll == REDUCE && cme != root) || upto == 0)
            unchecked();
        else
            for (int e = 0; e < n; e++) want[at((size_t)e)] = red(k->op, upto, e);
        total = (size_t)n;
        break;
    }
    case GATHER:
        put(sb, 0, n, cme, root);
        if (cme == root && k->inplace) put(rb, (size_t)cme * (size_t)n, n, cme, root);
        CHECK_RC(
            MPI_Gather(cme == root && k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, root, c));
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, root);
        else
            unchecked();
        total = (size_t)n * (size_t)cnp;
        break;
    case SCATTER:
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(sb, (size_t)q * (size_t)n, n, root, q);
        if (cme == root && k->inplace) {
            memcpy(rb, sb, cap * sizeof(int));
            memcpy(want, sb, cap * sizeof(int));
            CHECK_RC(MPI_Scatter(rb, n, T, MPI_IN_PLACE, n, T, root, c));
        } else {
            CHECK_RC(MPI_Scatter(sb, n, T, rb, n, T, root, c));
            put(want, 0, n, root, cme);
        }
        total = (size_t)n * (size_t)cnp;
        break;
    case ALLGATHER:
        put(sb, 0, n, cme, 0);
        if (k->inplace) put(rb, (size_t)cme * (size_t)n, n, cme, 0);
        CHECK_RC(MPI_Allgather(k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, c));
        for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, 0);
        total = (size_t)n * (size_t)cnp;
        break;
    case ALLTOALL:
        for (int q = 0; q < cnp; q++) put(k->inplace ? rb : sb, (size_t)q * (size_t)n, n, cme, q);
        CHECK_RC(MPI_Alltoall(k->inplace ? MPI_IN_PLACE : sb, n, T, rb, n, T, c));
        for (int q = 0; q < cnp; q++) put(want, (size_t)q * (size_t)n, n, q, cme);
        total = (size_t)n * (size_t)cnp;
        break;
    case GATHERV:
    case ALLGATHERV:
        vlayout(n, (int)(pos % 7));
        put(sb, 0, cnt[cme], cme, 0);
        if (k->coll == GATHERV)
            CHECK_RC(MPI_Gatherv(sb, cnt[cme], T, rb, cnt, dsp, T, root, c));
        else
            CHECK_RC(MPI_Allgatherv(sb, cnt[cme], T, rb, cnt, dsp, T, c));
        if (k->coll == ALLGATHERV || cme == root)
            for (int q = 0; q < cnp; q++) put(want, (size_t)dsp[q], cnt[q], q, 0);
        else
            unchecked();
        total = (size_t)dsp[cnp - 1] + (size_t)cnt[cnp - 1];
        break;
    case SCATTERV:
        vlayout(n, (int)(pos % 5));
        if (cme == root)
            for (int q = 0; q < cnp; q++) put(sb, (size_t)dsp[q], cnt[q], root, q);
        CHECK_RC(MPI_Scatterv(sb, cnt, dsp, T, rb, cnt[cme], T, root, c));
        put(want, 0, cnt[cme], root, cme);
        total = (size_t)cnt[cme];
        break;
    case ALLTOALLV: {
        /* rank p sends (n + p + 2q) % 7 == 6 ? 0 : n + (p + 2q) % 5 elements to rank q */
        int d = 0, r = 0;
        for (int q = 0; q < cnp; q++) {
            cnt[q] = (n + cme + 2 * q) % 7 == 6 ? 0 : n + (cme + 2 * q) % 5;
            dsp[q] = d;
            d += cnt[q] + q % 2;
            rcnt[q] = (n + q + 2 * cme) % 7 == 6 ? 0 : n + (q + 2 * cme) % 5;
            rdsp[q] = r;
            r += rcnt[q] + 2 * (q % 2);
        }
        for (int q = 0; q < cnp; q++) put(sb, (size_t)dsp[q], cnt[q], cme, q);
        CHECK_RC(MPI_Alltoallv(sb, cnt, dsp, T, rb, rcnt, rdsp, T, c));
        for (int q = 0; q < cnp; q++) put(want, (size_t)rdsp[q], rcnt[q], q, cme);
        total = (size_t)r;
        break;
    }
    case RSCATTER:
    case RSCATTER_BLOCK: {
        int len = 0, mine = 0;
        for (int q = 0; q < cnp; q++) {
            cnt[q] = k->coll == RSCATTER_BLOCK ? n : (q + (int)pos) % 3 == 2 ? 0 : n + q % 4;
            if (q == cme) mine = len;
            len += cnt[q];
        }
        for (int e = 0; e < len; e++) sb[at((size_t)e)] = val(cme, 0, e);
        if (k->coll == RSCATTER)
            CHECK_RC(MPI_Reduce_scatter(sb, rb, cnt, T, op, c));
        else
            CHECK_RC(MPI_Reduce_scatter_block(sb, rb, n, T, op, c));
        for (int e = 0; e < cnt[cme]; e++) want[at((size_t)e)] = red(k->op, cnp, mine + e);
        total = (size_t)cnt[cme];
        break;
    }
    }
    compare(k, total);
}

static int pick_count(void) {
    int cls = below(100);
    if (cls < 5) return 0;
    if (cls < 40) return 1 + below(12);
    if (cls < 65) return 13 + below(1000);
    if (cls < 85) return 1000 + below(20000);
    return 20000 + below(MAXN / 8 - 20000); /* per rank; v-layouts and rounds add up */
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *e = getenv("COLL_RANDOM_SEED");
    seed = e ? atol(e) : 1;
    e = getenv("COLL_RANDOM_OPS");
    long ops = e ? atol(e) : OPS;
    rng = (uint64_t)seed * 0x2545f4914f6cdd1dull + (uint64_t)np;

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
    sb = malloc(cap * sizeof(int));
    rb = malloc(cap * sizeof(int));
    want = malloc(cap * sizeof(int));
    cnt = malloc(4 * (size_t)np * sizeof(int));
    CHECK(sb && rb && want && cnt, "out of memory");
    dsp = cnt + np, rcnt = dsp + np, rdsp = rcnt + np;

    for (pos = 0; pos < ops; pos++) {
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
        MPI_Comm c = comms[k.comm];
        MPI_Comm_rank(c, &cme);
        MPI_Comm_size(c, &cnp);
        stride = k.strided ? 2 : 1;
        int got = -1;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (k.anysrc) CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &rq));
        if (k.late == me) {
            struct timespec ts = {0, (long)k.late_us * 1000};
            nanosleep(&ts, NULL);
        }
        run(&k, c);
        if (k.anysrc) {
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
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("coll_random: %ld calls, seed %ld, %d ranks: ok\n", ops, seed, np);
    for (int i = 1; i < 4; i++) MPI_Comm_free(&comms[i]);
    MPI_Type_free(&strided_int);
    free(sb);
    free(rb);
    free(want);
    free(cnt);
    MPI_Finalize();
    return 0;
}
