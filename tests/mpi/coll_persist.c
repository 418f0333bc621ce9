/* Persistent collectives (MPI 4: MPI_Barrier_init ... MPI_Reduce_scatter_block_init): each one
 * made once and started three times, with new data in the send buffers before every start,
 * against the blocking call on the same data (the other collective tests check those against
 * serial references), byte for byte: on the communicators of coll_util.h, counts 0, 1, 7 and
 * 3000 (past the eager limit), first and last root, MPI_IN_PLACE where allowed, a derived type
 * and a non-commutative operator. Then: two requests started in a different order on
 * different ranks; starts mixed with nonblocking and blocking collectives; the request's life
 * (kept by MPI_Wait and MPI_Test, empty when inactive); operator and types freed after the init
 * call; an intercommunicator; and the errors (starting an active request, freeing or
 * cancelling it, bad info, NULL request, bad root); a run through the request's lane that
 * completes before a tree child has started (check_lane); many requests alive at once, some
 * without a lane, started in different orders (check_many). */
#include "coll_util.h"

typedef struct mat {
    unsigned a, b, c, d;
} mat;
/* Walks the elements by the extent of the datatype it is given, as operators written for
 * several types do; check_freed gives it a type the program has freed since the call began,
 * which it must still be able to ask about. */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *t) {
    MPI_Aint lb, ext;
    CHECK_RC(MPI_Type_get_extent(*t, &lb, &ext));
    CHECK(ext == (MPI_Aint)sizeof(mat), "operator's datatype has extent %ld", (long)ext);
    for (int i = 0; i < *len; i++) {
        mat p = *(mat *)((char *)in + i * ext), *y = (mat *)((char *)inout + i * ext), q = *y;
        *y = (mat){p.a * q.a + p.b * q.c, p.a * q.b + p.b * q.d, p.c * q.a + p.d * q.c,
                   p.c * q.b + p.d * q.d};
    }
}
static MPI_Datatype mat_type;
static MPI_Op mat_mul;

#define MAXN  3000
#define SLACK 16
#define RUNS  3

/* Buffers: A for the blocking call, B for the persistent one; both start equal. */
static char *sa, *sb, *ra, *rb;
static size_t cap;
static int wait_by_test;

static void fill(int rank, int salt) {
    cu_fill_pairs(sa, sb, ra, rb, cap, rank, salt, salt);
}

static void same(const char *what, int run, size_t count, int root) {
    if (memcmp(ra, rb, cap) == 0 && memcmp(sa, sb, cap) == 0) return;
    size_t i = 0;
    while (i < cap && ra[i] == rb[i]) i++;
    CHECK(0, "%s (run %d, count %zu, root %d): persistent result differs from blocking at byte %zu",
          what, run, count, root, i);
}

/* Starts rq and completes it; the request stays (inactive) afterwards. */
static void start_complete(MPI_Request *rq) {
    MPI_Request h = *rq;
    CHECK_RC(MPI_Start(rq));
    if (!wait_by_test) {
        CHECK_RC(MPI_Wait(rq, MPI_STATUS_IGNORE));
    } else {
        int flag = 0;
        while (!flag) CHECK_RC(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
    }
    CHECK(*rq == h, "a persistent collective request was released by its completion");
}

/* Makes a persistent request with INIT, then RUNS times: new data, the blocking call BLOCKING
 * on buffers A, a start of the request on buffers B, and the comparison. */
#define TRY(what, salt, BLOCKING, INIT, fixup)                                                     \
    do {                                                                                           \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                                        \
        CHECK_RC(INIT);                                                                            \
        CHECK(rq_ != MPI_REQUEST_NULL, "%s gave no request", what);                                \
        for (int run_ = 0; run_ < RUNS; run_++) {                                                  \
            fill(rank, (salt) + 40 * run_);                                                        \
            CHECK_RC(BLOCKING);                                                                    \
            start_complete(&rq_);                                                                  \
            fixup;                                                                                 \
            same(what, run_, (size_t)k, root);                                                     \
        }                                                                                          \
        CHECK_RC(MPI_Request_free(&rq_));                                                          \
        CHECK(rq_ == MPI_REQUEST_NULL, "MPI_Request_free left the handle");                        \
    } while (0)

static void check_comm(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Datatype vec = cu_vector_type();
    static const int counts[] = {0, 1, 7, MAXN};
    int *cnt = malloc(sizeof(int) * (size_t)n * 4), *dsp = cnt + n, *cnt2 = dsp + n,
        *dsp2 = cnt2 + n;
    int *rcv2 = malloc(sizeof(int) * (size_t)n * 2), *rdsp2 = rcv2 + n;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int k = counts[ci], root = -1;
        for (int i = 0; i < n; i++) {
            cnt[i] = (k + i) % (k + 2);
            cnt2[i] = (k + rank + i) % (k + 2);
            rcv2[i] = (k + i + rank) % (k + 2); /* = sender i's cnt2[rank] */
        }
        for (int i = 0, d = 0; i < n; i++) dsp[i] = d, d += cnt[i] + 1;
        for (int i = 0, d = 0; i < n; i++) dsp2[i] = d, d += cnt2[i];
        for (int i = 0, d = 0; i < n; i++) rdsp2[i] = d, d += rcv2[i];
        for (root = 0; root < n; root += (n > 2 ? n - 1 : 1)) {
            int me = rank == root;
            TRY("Bcast_init", 1, MPI_Bcast(ra, k, vec, root, c),
                MPI_Bcast_init(rb, k, vec, root, c, MPI_INFO_NULL, &rq_), (void)0);
            for (int op = 0; op < 2; op++) {
                MPI_Datatype t = op ? mat_type : MPI_INT;
                MPI_Op o = op ? mat_mul : MPI_SUM;
                TRY("Reduce_init", 2 + op, MPI_Reduce(sa, ra, k, t, o, root, c),
                    MPI_Reduce_init(sb, rb, k, t, o, root, c, MPI_INFO_NULL, &rq_), (void)0);
                TRY("Reduce_init in place", 4 + op,
                    MPI_Reduce(me ? MPI_IN_PLACE : sa, me ? sa : ra, k, t, o, root, c),
                    MPI_Reduce_init(me ? MPI_IN_PLACE : sb, me ? sb : rb, k, t, o, root, c,
                                    MPI_INFO_NULL, &rq_),
                    (void)0);
            }
            TRY("Gather_init", 6, MPI_Gather(sa, 6 * k, MPI_DOUBLE, ra, k, vec, root, c),
                MPI_Gather_init(sb, 6 * k, MPI_DOUBLE, rb, k, vec, root, c, MPI_INFO_NULL, &rq_),
                (void)0);
            TRY("Gatherv_init", 7,
                MPI_Gatherv(sa, cnt[rank], MPI_INT, ra, cnt, dsp, MPI_INT, root, c),
                MPI_Gatherv_init(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, root, c,
                                 MPI_INFO_NULL, &rq_),
                (void)0);
            TRY("Gather_init in place", 8,
                MPI_Gather(me ? MPI_IN_PLACE : sa, k, MPI_INT, ra, k, MPI_INT, root, c),
                MPI_Gather_init(me ? MPI_IN_PLACE : sb, k, MPI_INT, rb, k, MPI_INT, root, c,
                                MPI_INFO_NULL, &rq_),
                (void)0);
            TRY("Scatter_init", 9, MPI_Scatter(sa, k, vec, ra, 6 * k, MPI_DOUBLE, root, c),
                MPI_Scatter_init(sb, k, vec, rb, 6 * k, MPI_DOUBLE, root, c, MPI_INFO_NULL, &rq_),
                (void)0);
            TRY("Scatterv_init (in place at the root)", 10,
                MPI_Scatterv(sa, cnt, dsp, MPI_INT, me ? MPI_IN_PLACE : ra, cnt[rank], MPI_INT,
                             root, c),
                MPI_Scatterv_init(sb, cnt, dsp, MPI_INT, me ? MPI_IN_PLACE : rb, cnt[rank], MPI_INT,
                                  root, c, MPI_INFO_NULL, &rq_),
                (void)0);
        }
        root = -1;
        for (int op = 0; op < 2; op++) {
            MPI_Datatype t = op ? mat_type : MPI_INT;
            MPI_Op o = op ? mat_mul : MPI_SUM;
            TRY("Allreduce_init", 11 + op, MPI_Allreduce(sa, ra, k, t, o, c),
                MPI_Allreduce_init(sb, rb, k, t, o, c, MPI_INFO_NULL, &rq_), (void)0);
            TRY("Allreduce_init in place", 13 + op, MPI_Allreduce(MPI_IN_PLACE, ra, k, t, o, c),
                MPI_Allreduce_init(MPI_IN_PLACE, rb, k, t, o, c, MPI_INFO_NULL, &rq_), (void)0);
            TRY("Scan_init", 15 + op, MPI_Scan(sa, ra, k, t, o, c),
                MPI_Scan_init(sb, rb, k, t, o, c, MPI_INFO_NULL, &rq_), (void)0);
            /* (rank 0's Exscan result is undefined) */
            TRY("Exscan_init", 17 + op, MPI_Exscan(sa, ra, k, t, o, c),
                MPI_Exscan_init(sb, rb, k, t, o, c, MPI_INFO_NULL, &rq_),
                if (rank == 0) memcpy(rb, ra, cap));
            TRY("Exscan_init in place", 19 + op, MPI_Exscan(MPI_IN_PLACE, ra, k, t, o, c),
                MPI_Exscan_init(MPI_IN_PLACE, rb, k, t, o, c, MPI_INFO_NULL, &rq_),
                if (rank == 0) memcpy(rb, ra, cap));
            TRY("Reduce_scatter_init", 21 + op, MPI_Reduce_scatter(sa, ra, cnt, t, o, c),
                MPI_Reduce_scatter_init(sb, rb, cnt, t, o, c, MPI_INFO_NULL, &rq_), (void)0);
            TRY("Reduce_scatter_block_init in place", 23 + op,
                MPI_Reduce_scatter_block(MPI_IN_PLACE, ra, k, t, o, c),
                MPI_Reduce_scatter_block_init(MPI_IN_PLACE, rb, k, t, o, c, MPI_INFO_NULL, &rq_),
                (void)0);
            TRY("Reduce_scatter_block_init", 25 + op, MPI_Reduce_scatter_block(sa, ra, k, t, o, c),
                MPI_Reduce_scatter_block_init(sb, rb, k, t, o, c, MPI_INFO_NULL, &rq_), (void)0);
        }
        TRY("Allgather_init", 27, MPI_Allgather(sa, 6 * k, MPI_DOUBLE, ra, k, vec, c),
            MPI_Allgather_init(sb, 6 * k, MPI_DOUBLE, rb, k, vec, c, MPI_INFO_NULL, &rq_), (void)0);
        TRY("Allgather_init in place", 28,
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, ra, k, MPI_INT, c),
            MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_INT, rb, k, MPI_INT, c, MPI_INFO_NULL, &rq_),
            (void)0);
        TRY("Allgatherv_init", 29, MPI_Allgatherv(sa, cnt[rank], MPI_INT, ra, cnt, dsp, MPI_INT, c),
            MPI_Allgatherv_init(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, c, MPI_INFO_NULL,
                                &rq_),
            (void)0);
        TRY("Alltoall_init", 30, MPI_Alltoall(sa, k, MPI_INT, ra, k, MPI_INT, c),
            MPI_Alltoall_init(sb, k, MPI_INT, rb, k, MPI_INT, c, MPI_INFO_NULL, &rq_), (void)0);
        TRY("Alltoall_init in place", 31, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, ra, k, vec, c),
            MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_INT, rb, k, vec, c, MPI_INFO_NULL, &rq_),
            (void)0);
        TRY("Alltoallv_init", 32,
            MPI_Alltoallv(sa, cnt2, dsp2, MPI_INT, ra, rcv2, rdsp2, MPI_INT, c),
            MPI_Alltoallv_init(sb, cnt2, dsp2, MPI_INT, rb, rcv2, rdsp2, MPI_INT, c, MPI_INFO_NULL,
                               &rq_),
            (void)0);
    }
    /* Barrier_init: no data; started three times among the others */
    MPI_Request b;
    CHECK_RC(MPI_Barrier_init(c, MPI_INFO_NULL, &b));
    for (int i = 0; i < RUNS; i++) start_complete(&b);
    CHECK_RC(MPI_Request_free(&b));
    free(cnt);
    free(rcv2);
    cu_type_free(&vec);
}

/* Alltoallw_init with a type per peer, the types freed by the program right after the init
 * call (the request holds them): to rank q, (me + q) % 4 + 1 ints, as MPI_INT to even ranks
 * and one contiguous type to odd ones; received as MPI_INT from even ranks and as a vector
 * with a gap after each int from odd ones. */
static void check_alltoallw(MPI_Comm c) {
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    if (n > 64) return;
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype st[64], rt[64];
    int *sbuf = malloc(64 * 16 * sizeof(int)), *rbuf = malloc(64 * 16 * sizeof(int));
    for (int q = 0, off = 0, roff = 0; q < n; q++) {
        int k = (me + q) % 4 + 1;
        if (q % 2) {
            CHECK_RC(MPI_Type_contiguous(k, MPI_INT, &st[q]));
            CHECK_RC(MPI_Type_commit(&st[q]));
            sc[q] = 1;
            CHECK_RC(MPI_Type_vector(k, 1, 2, MPI_INT, &rt[q]));
            CHECK_RC(MPI_Type_commit(&rt[q]));
            rc[q] = 1;
        } else {
            st[q] = rt[q] = MPI_INT;
            sc[q] = rc[q] = k;
        }
        sd[q] = off * (int)sizeof(int);
        rd[q] = roff * (int)sizeof(int);
        off += k + 1;
        roff += 2 * k + 1;
    }
    MPI_Request rq;
    CHECK_RC(MPI_Alltoallw_init(sbuf, sc, sd, st, rbuf, rc, rd, rt, c, MPI_INFO_NULL, &rq));
    for (int q = 1; q < n; q += 2) {
        MPI_Type_free(&st[q]);
        MPI_Type_free(&rt[q]);
    }
    for (int run = 0; run < RUNS; run++) {
        for (int q = 0; q < n; q++)
            for (int i = 0; i < (me + q) % 4 + 1; i++)
                sbuf[sd[q] / (int)sizeof(int) + i] = cu_val(me * 64 + q, (size_t)i, run);
        for (int i = 0; i < 64 * 16; i++) rbuf[i] = -1;
        start_complete(&rq);
        for (int p = 0; p < n; p++) {
            int k = (p + me) % 4 + 1, stride = p % 2 ? 2 : 1;
            for (int i = 0; i < k; i++) {
                int got = rbuf[rd[p] / (int)sizeof(int) + i * stride];
                CHECK(got == cu_val(p * 64 + me, (size_t)i, run),
                      "Alltoallw_init run %d from %d [%d] = %d", run, p, i, got);
            }
        }
    }
    CHECK_RC(MPI_Request_free(&rq));
    free(sbuf), free(rbuf);
}

/* Two persistent allreduces started in opposite orders on even and odd ranks (the standard
 * lets MPI_Startall start its requests in any order), a nonblocking and a blocking collective
 * between start and wait, and completion in reverse order. */
static void check_order(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    int x[2], y[2], sx[2], sy[2], bsum, isum;
    MPI_Request rq[2], nb;
    CHECK_RC(MPI_Allreduce_init(x, sx, 2, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &rq[0]));
    CHECK_RC(MPI_Allreduce_init(y, sy, 2, MPI_INT, MPI_MAX, c, MPI_INFO_NULL, &rq[1]));
    int tri = n * (n - 1) / 2;
    for (int run = 0; run < 4; run++) {
        x[0] = rank + run, x[1] = 2 * rank;
        y[0] = rank * run, y[1] = -rank;
        if (rank % 2) {
            CHECK_RC(MPI_Start(&rq[1]));
            CHECK_RC(MPI_Start(&rq[0]));
        } else {
            CHECK_RC(MPI_Startall(2, rq));
        }
        CHECK_RC(MPI_Iallreduce(&rank, &isum, 1, MPI_INT, MPI_SUM, c, &nb));
        CHECK_RC(MPI_Allreduce(&rank, &bsum, 1, MPI_INT, MPI_SUM, c));
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&nb, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        CHECK(sx[0] == tri + n * run && sx[1] == 2 * tri, "run %d: sum %d %d", run, sx[0], sx[1]);
        CHECK(sy[0] == (n - 1) * run && sy[1] == 0, "run %d: max %d %d", run, sy[0], sy[1]);
        CHECK(isum == tri && bsum == tri, "run %d: Iallreduce %d, Allreduce %d", run, isum, bsum);
    }
    /* Waitall over both, inactive ones included: empty requests complete at once */
    CHECK_RC(MPI_Start(&rq[0]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "Waitall released them");
    /* an inactive request: MPI_Test says complete, with an empty status */
    int flag = 0;
    MPI_Status st;
    st.MPI_SOURCE = 12345;
    CHECK_RC(MPI_Test(&rq[1], &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "inactive request: flag %d source %d tag %d", flag, st.MPI_SOURCE, st.MPI_TAG);
    CHECK_RC(MPI_Request_free(&rq[0]));
    CHECK_RC(MPI_Request_free(&rq[1]));
}

/* The request's lane (nbc.c, "Persistent collectives"): a run of MPI_Reduce_init by rank 2
 * completes before rank 3 has started, as the operand goes into rank 2's buffer of the lane,
 * where as messages (a binomial tree towards rank 0) it would wait for rank 3's. Rank 3 starts
 * only once rank 2's run has completed within a bound of MPI_Test calls and rank 2 has said so. */
static void check_lane(MPI_Comm c) {
    int rank, n, x, y = -1, flag = 0;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    if (n < 4) return;
    MPI_Request rq;
    CHECK_RC(MPI_Reduce_init(&x, &y, 1, MPI_INT, MPI_SUM, 0, c, MPI_INFO_NULL, &rq));
    for (int run = 0; run < RUNS; run++) {
        x = rank + run;
        if (rank == 2) {
            CHECK_RC(MPI_Start(&rq));
            for (long t = 0; !flag && t < 100000; t++)
                CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            CHECK(flag, "run %d: rank 2's Reduce_init did not complete before rank 3 started", run);
            CHECK_RC(MPI_Send(&flag, 1, MPI_INT, 3, 0, c)); /* (CHECK ends the job otherwise) */
            flag = 0;
        } else {
            if (rank == 3) CHECK_RC(MPI_Recv(&flag, 1, MPI_INT, 2, 0, c, MPI_STATUS_IGNORE));
            start_complete(&rq);
        }
        CHECK(rank != 0 || y == n * (n - 1) / 2 + n * run, "run %d: Reduce_init gave %d", run, y);
    }
    CHECK_RC(MPI_Request_free(&rq));
}

/* Many requests alive at once, started in a different order on every rank: of 64 KiB, so that
 * from 4 ranks on the later ones find no room for a lane and run as messages beside those that
 * have one. */
#define MANY      40
#define MANY_INTS 16384
static void check_many(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    int *in = malloc(sizeof(int) * MANY * MANY_INTS), *out = malloc(sizeof(int) * MANY * MANY_INTS);
    CHECK(in && out, "out of memory");
    MPI_Request rq[MANY];
    for (int i = 0; i < MANY; i++)
        CHECK_RC(MPI_Allreduce_init(in + i * MANY_INTS, out + i * MANY_INTS, MANY_INTS, MPI_INT,
                                    MPI_SUM, c, MPI_INFO_NULL, &rq[i]));
    for (int run = 0; run < 2; run++) {
        for (int i = 0; i < MANY * MANY_INTS; i++) in[i] = rank + i % 7 + run, out[i] = -1;
        for (int k = 0; k < MANY; k++) CHECK_RC(MPI_Start(&rq[(k * 7 + rank * 3 + run) % MANY]));
        CHECK_RC(MPI_Waitall(MANY, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < MANY * MANY_INTS; i++)
            if (out[i] != n * (n - 1) / 2 + n * (i % 7 + run)) {
                CHECK(0, "run %d: request %d element %d is %d", run, i / MANY_INTS, i % MANY_INTS,
                      out[i]);
                break;
            }
    }
    for (int i = 0; i < MANY; i++) CHECK_RC(MPI_Request_free(&rq[i]));
    free(in);
    free(out);
}

/* An operator and a datatype freed by the program between init and the starts. */
static void check_freed(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Op op;
    MPI_Datatype t;
    CHECK_RC(MPI_Op_create(mat_op, 0, &op));
    CHECK_RC(MPI_Type_contiguous(4, MPI_UNSIGNED, &t));
    CHECK_RC(MPI_Type_commit(&t));
    mat in[3], out[3], ref[3];
    MPI_Request rq;
    CHECK_RC(MPI_Allreduce_init(in, out, 3, t, op, c, MPI_INFO_NULL, &rq));
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&t));
    for (int run = 0; run < RUNS; run++) {
        for (int i = 0; i < 3; i++)
            in[i] = (mat){(unsigned)(rank + i + run), 1u, (unsigned)run, (unsigned)(rank + 2)};
        CHECK_RC(MPI_Allreduce(in, ref, 3, mat_type, mat_mul, c));
        start_complete(&rq);
        CHECK(memcmp(out, ref, sizeof(out)) == 0, "run %d: freed operator and type", run);
    }
    CHECK_RC(MPI_Request_free(&rq));
}

static void check_errors(MPI_Comm c) {
    int rank, n, x = 1, y = 0;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Request rq;
    CHECK_ERR(MPI_Bcast_init(&x, 1, MPI_INT, n, c, MPI_INFO_NULL, &rq), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, c, MPI_INFO_NULL, &rq),
              MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce_init(&x, &y, -1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &rq),
              MPI_ERR_COUNT);
    CHECK_ERR(MPI_Barrier_init(c, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Barrier_init(c, (MPI_Info)0x7777, &rq), MPI_ERR_INFO);
    CHECK_ERR(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &rq), MPI_ERR_COMM);
    /* an info object with hints is accepted (none is acted on) */
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "cohort_hint", "1"));
    CHECK_RC(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, c, info, &rq));
    CHECK_RC(MPI_Info_free(&info));
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(y == n, "Allreduce_init with info: %d", y);
    CHECK_RC(MPI_Request_free(&rq));
    /* active: a second start, a free and a cancel are refused, and the request still works.
     * A barrier cannot complete before the last rank starts it, which it does only once the
     * others have made their checks and said so. */
    CHECK_RC(MPI_Barrier_init(c, MPI_INFO_NULL, &rq));
    if (rank < n - 1) {
        CHECK_RC(MPI_Start(&rq));
        CHECK_ERR(MPI_Start(&rq), MPI_ERR_REQUEST);
        CHECK_ERR(MPI_Request_free(&rq), MPI_ERR_REQUEST);
        CHECK_ERR(MPI_Cancel(&rq), MPI_ERR_REQUEST);
        CHECK(rq != MPI_REQUEST_NULL, "a refused free released the request");
        CHECK_RC(MPI_Send(&x, 1, MPI_INT, n - 1, 71, c));
    } else {
        for (int i = 0; i < n - 1; i++)
            CHECK_RC(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 71, c, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Start(&rq));
    }
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* completed but not yet returned by MPI_Wait or MPI_Test: still not startable */
    CHECK_RC(MPI_Start(&rq));
    if (n == 1) CHECK_ERR(MPI_Start(&rq), MPI_ERR_REQUEST); /* (complete at once alone) */
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Request_free(&rq));
    CHECK_ERR(MPI_Start(&rq), MPI_ERR_REQUEST); /* MPI_REQUEST_NULL */
    /* a free of an inactive request that was never started */
    CHECK_RC(MPI_Barrier_init(c, MPI_INFO_NULL, &rq));
    CHECK_RC(MPI_Request_free(&rq));
    /* and a broadcast of 4 ints into 2 at rank 1: the error comes with the completion */
    if (n > 1) {
        int buf[4] = {1, 2, 3, 4}, rc;
        CHECK_RC(MPI_Bcast_init(buf, rank == 1 ? 2 : 4, MPI_INT, 0, c, MPI_INFO_NULL, &rq));
        CHECK_RC(MPI_Start(&rq));
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int cls = MPI_SUCCESS;
        if (rc) MPI_Error_class(rc, &cls);
        CHECK(rank == 1 ? cls == MPI_ERR_TRUNCATE : 1, "broadcast 4 into 2: class %d", cls);
        CHECK_RC(MPI_Request_free(&rq));
    }
}

/* Error handlers: a bad info goes to the communicator's handler, not MPI_COMM_WORLD's; and a
 * handler that runs a nonblocking collective into the very request variable of the failing init
 * call gets a nonblocking collective, not a persistent request. */
static int world_handler_calls;
static void count_world(MPI_Comm *c, int *code, ...) {
    (void)c, (void)code;
    world_handler_calls++;
}
static MPI_Request handler_rq;
static int handler_rq_null = -1;
static void barrier_in_handler(MPI_Comm *c, int *code, ...) {
    (void)code;
    CHECK_RC(MPI_Ibarrier(*c, &handler_rq));
    CHECK_RC(MPI_Wait(&handler_rq, MPI_STATUS_IGNORE));
    handler_rq_null = handler_rq == MPI_REQUEST_NULL;
}

static void check_handlers(void) {
    MPI_Comm d, dg = MPI_COMM_WORLD;
    MPI_Errhandler wh, bh;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_RC(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_create_errhandler(count_world, &wh));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, wh));
    MPI_Info info, bad;
    CHECK_RC(MPI_Info_create(&info));
    bad = info;
    CHECK_RC(MPI_Info_free(&info)); /* bad is now a stale handle */
    int x = 0;
    MPI_Request rq;
    CHECK_ERR(MPI_Bcast_init(&x, 1, MPI_INT, 0, d, bad, &rq), MPI_ERR_INFO);
    CHECK_ERR(MPI_Dist_graph_create_adjacent(d, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                             bad, 0, &dg),
              MPI_ERR_INFO);
    CHECK(world_handler_calls == 0, "MPI_COMM_WORLD's handler ran %d times", world_handler_calls);
    CHECK(dg == MPI_COMM_NULL, "a failed Dist_graph_create_adjacent left its output set");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Errhandler_free(&wh));
    CHECK_RC(MPI_Comm_create_errhandler(barrier_in_handler, &bh));
    CHECK_RC(MPI_Comm_set_errhandler(d, bh));
    int n;
    MPI_Comm_size(d, &n);
    int rc = MPI_Bcast_init(&x, 1, MPI_INT, n, d, MPI_INFO_NULL, &handler_rq); /* bad root */
    CHECK(rc != MPI_SUCCESS, "Bcast_init with root %d succeeded", n);
    CHECK(handler_rq_null == 1, "the handler's MPI_Ibarrier gave a request that stayed (%d)",
          handler_rq_null);
    CHECK_RC(MPI_Errhandler_free(&bh));
    CHECK_RC(MPI_Comm_free(&d));
}

/* An intercommunicator of the even and the odd ranks: Bcast_init from the odd group's first
 * rank and Allreduce_init, each started three times. */
static void check_inter(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) return;
    MPI_Comm half, ic;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int lrank, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_remote_size(ic, &rsize);
    int odd = rank % 2, root = odd ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int buf[5], in[2], out[2];
    MPI_Request rq[2];
    CHECK_RC(MPI_Bcast_init(buf, 5, MPI_INT, root, ic, MPI_INFO_NULL, &rq[0]));
    CHECK_RC(MPI_Allreduce_init(in, out, 2, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &rq[1]));
    for (int run = 0; run < RUNS; run++) {
        for (int i = 0; i < 5; i++) buf[i] = root == MPI_ROOT ? 10 * run + i : -1;
        in[0] = rank, in[1] = run;
        CHECK_RC(MPI_Startall(2, rq));
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        if (!odd)
            for (int i = 0; i < 5; i++)
                CHECK(buf[i] == 10 * run + i, "inter Bcast_init run %d [%d] = %d", run, i, buf[i]);
        /* the sum over the other group's ranks */
        int want = 0;
        for (int r = !odd; r < size; r += 2) want += r;
        CHECK(out[0] == want && out[1] == rsize * run, "inter Allreduce_init run %d: %d %d", run,
              out[0], out[1]);
    }
    CHECK_RC(MPI_Request_free(&rq[0]));
    CHECK_RC(MPI_Request_free(&rq[1]));
    CHECK_RC(MPI_Comm_free(&ic));
    CHECK_RC(MPI_Comm_free(&half));
}

/* A communicator freed while a persistent request on it lives: the request still runs, and
 * the communicator goes with the request. */
static void check_comm_freed(void) {
    int n, x = 2, y = 0;
    MPI_Comm d;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Request rq;
    CHECK_RC(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, d, MPI_INFO_NULL, &rq));
    CHECK_RC(MPI_Comm_free(&d));
    for (int run = 0; run < RUNS; run++) {
        y = 0;
        start_complete(&rq);
        CHECK(y == 2 * n, "on a freed communicator: %d", y);
    }
    CHECK_RC(MPI_Request_free(&rq));
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d)); /* and a new one works */
    CHECK_RC(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
    CHECK(y == 2 * n, "after: %d", y);
    CHECK_RC(MPI_Comm_free(&d));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    CHECK_RC(MPI_Type_commit(&mat_type));
    CHECK_RC(MPI_Op_create(mat_op, 0, &mat_mul));
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cap = (size_t)(MAXN + SLACK) * 72 * (size_t)(size + 1);
    sa = malloc(cap), sb = malloc(cap), ra = malloc(cap), rb = malloc(cap);
    CHECK(sa && sb && ra && rb, "out of memory");
    MPI_Comm comms[MAXCOMMS];
    int owned[MAXCOMMS];
    int nc = cu_comms(comms, owned);
    for (int i = 0; i < nc; i++) {
        wait_by_test = i % 2;
        check_comm(comms[i]);
        check_alltoallw(comms[i]);
        check_order(comms[i]);
        check_lane(comms[i]);
        check_freed(comms[i]);
        check_errors(comms[i]);
    }
    check_many(MPI_COMM_WORLD);
    check_inter();
    check_comm_freed();
    check_handlers();
    /* requests the program still holds at MPI_Finalize: released there (the sanitizer build's
     * leak check sees it), an Alltoallw_init with its type copies among them */
    MPI_Request kept[2];
    int one = 1, all = 0, wc[1] = {0}, wd[1] = {0};
    MPI_Datatype wt[1] = {MPI_INT};
    CHECK_RC(MPI_Allreduce_init(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL,
                                &kept[0]));
    CHECK_RC(MPI_Alltoallw_init(&one, wc, wd, wt, &all, wc, wd, wt, MPI_COMM_SELF, MPI_INFO_NULL,
                                &kept[1]));
    CHECK_RC(MPI_Startall(2, kept));
    CHECK_RC(MPI_Waitall(2, kept, MPI_STATUSES_IGNORE));
    cu_free_comms(comms, owned, nc);
    free(sa), free(sb), free(ra), free(rb);
    MPI_Op_free(&mat_mul);
    MPI_Type_free(&mat_type);
    MPI_Finalize();
    return 0;
}
