/* Nonblocking collectives: every MPI_I<collective> against its blocking form (which the other
 * collective tests check against serial references), on the communicators of coll_util.h,
 * with counts 0, 1, 7 and 3000 (past the eager limit), every root, MPI_IN_PLACE where allowed,
 * a derived type, a commutative and a non-commutative operator, completion by MPI_Wait and by
 * polling MPI_Test. Then several calls in flight at once, completed out of order and across a
 * blocking collective; progress while a rank waits in MPI_Recv (the schedule must move on
 * there, or the job hangs); operator and datatype freed while a call is in flight; and the
 * errors: NULL request, bad root, freeing or cancelling the request, intercommunicators,
 * counts that differ between ranks. */
#include "coll_util.h"

#include <unistd.h>

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
static int wait_by_test; /* complete by polling MPI_Test instead of MPI_Wait */

static void complete(MPI_Request *rq) {
    MPI_Status st;
    if (!wait_by_test) {
        CHECK_RC(MPI_Wait(rq, &st));
    } else {
        int flag = 0;
        while (!flag) CHECK_RC(MPI_Test(rq, &flag, &st));
    }
    CHECK(*rq == MPI_REQUEST_NULL, "request not released");
}

/* Buffers: A for the blocking call, B for the nonblocking one; both start equal. */
static char *sa, *sb, *ra, *rb;
static size_t cap;

static void fill(int rank, int salt) {
    cu_fill_pairs(sa, sb, ra, rb, cap, rank, salt, 0);
}

static void same(const char *what, size_t count, int root) {
    if (memcmp(ra, rb, cap) == 0 && memcmp(sa, sb, cap) == 0) return;
    size_t i = 0;
    while (i < cap && ra[i] == rb[i]) i++;
    CHECK(0, "%s (count %zu, root %d): nonblocking result differs from blocking at byte %zu", what,
          count, root, i);
}

static void check_comm(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Datatype vec = cu_vector_type();
    static const size_t counts[] = {0, 1, 7, MAXN};
    int *cnt = malloc(sizeof(int) * (size_t)n * 4), *dsp = cnt + n, *cnt2 = dsp + n,
        *dsp2 = cnt2 + n;
    MPI_Request rq;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int k = (int)counts[ci];
        for (int i = 0; i < n; i++) {
            cnt[i] = (k + i) % (k + 2);
            cnt2[i] = (k + rank + i) % (k + 2);
        }
        for (int i = 0, d = 0; i < n; i++) dsp[i] = d, d += cnt[i] + 1;
        for (int i = 0, d = 0; i < n; i++) dsp2[i] = d, d += cnt2[i];
        int my_alltoallv_recv[64], rdsp[64];
        for (int i = 0, d = 0; i < n && n <= 64; i++) {
            my_alltoallv_recv[i] = (k + i + rank) % (k + 2); /* = sender i's cnt2[rank] */
            rdsp[i] = d, d += my_alltoallv_recv[i];
        }
        for (int root = 0; root < n; root += (n > 2 ? n - 1 : 1)) {
            fill(rank, 1);
            CHECK_RC(MPI_Bcast(ra, k, vec, root, c));
            CHECK_RC(MPI_Ibcast(rb, k, vec, root, c, &rq));
            complete(&rq);
            same("Ibcast", (size_t)k, root);
            for (int op = 0; op < 2; op++) {
                MPI_Datatype t = op ? mat_type : MPI_INT;
                MPI_Op o = op ? mat_mul : MPI_SUM;
                fill(rank, 2 + op);
                CHECK_RC(MPI_Reduce(sa, ra, k, t, o, root, c));
                CHECK_RC(MPI_Ireduce(sb, rb, k, t, o, root, c, &rq));
                complete(&rq);
                same("Ireduce", (size_t)k, root);
                fill(rank, 4 + op);
                CHECK_RC(MPI_Reduce(rank == root ? MPI_IN_PLACE : sa, rank == root ? sa : ra, k, t,
                                    o, root, c));
                CHECK_RC(MPI_Ireduce(rank == root ? MPI_IN_PLACE : sb, rank == root ? sb : rb, k, t,
                                     o, root, c, &rq));
                complete(&rq);
                same("Ireduce in place", (size_t)k, root);
            }
            fill(rank, 6);
            CHECK_RC(MPI_Gather(sa, 6 * k, MPI_DOUBLE, ra, k, vec, root, c));
            CHECK_RC(MPI_Igather(sb, 6 * k, MPI_DOUBLE, rb, k, vec, root, c, &rq));
            complete(&rq);
            same("Igather", (size_t)k, root);
            fill(rank, 7);
            CHECK_RC(MPI_Gatherv(sa, cnt[rank], MPI_INT, ra, cnt, dsp, MPI_INT, root, c));
            CHECK_RC(MPI_Igatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, root, c, &rq));
            complete(&rq);
            same("Igatherv", (size_t)k, root);
            fill(rank, 8);
            CHECK_RC(
                MPI_Gather(rank == root ? MPI_IN_PLACE : sa, k, MPI_INT, ra, k, MPI_INT, root, c));
            CHECK_RC(MPI_Igather(rank == root ? MPI_IN_PLACE : sb, k, MPI_INT, rb, k, MPI_INT, root,
                                 c, &rq));
            complete(&rq);
            same("Igather in place", (size_t)k, root);
            fill(rank, 9);
            CHECK_RC(MPI_Scatter(sa, k, vec, ra, 6 * k, MPI_DOUBLE, root, c));
            CHECK_RC(MPI_Iscatter(sb, k, vec, rb, 6 * k, MPI_DOUBLE, root, c, &rq));
            complete(&rq);
            same("Iscatter", (size_t)k, root);
            fill(rank, 10);
            CHECK_RC(MPI_Scatterv(sa, cnt, dsp, MPI_INT, rank == root ? MPI_IN_PLACE : ra,
                                  cnt[rank], MPI_INT, root, c));
            CHECK_RC(MPI_Iscatterv(sb, cnt, dsp, MPI_INT, rank == root ? MPI_IN_PLACE : rb,
                                   cnt[rank], MPI_INT, root, c, &rq));
            complete(&rq);
            same("Iscatterv (in place at the root)", (size_t)k, root);
        }
        for (int op = 0; op < 2; op++) {
            MPI_Datatype t = op ? mat_type : MPI_INT;
            MPI_Op o = op ? mat_mul : MPI_SUM;
            fill(rank, 11 + op);
            CHECK_RC(MPI_Allreduce(sa, ra, k, t, o, c));
            CHECK_RC(MPI_Iallreduce(sb, rb, k, t, o, c, &rq));
            complete(&rq);
            same("Iallreduce", (size_t)k, -1);
            fill(rank, 13 + op);
            CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, ra, k, t, o, c));
            CHECK_RC(MPI_Iallreduce(MPI_IN_PLACE, rb, k, t, o, c, &rq));
            complete(&rq);
            same("Iallreduce in place", (size_t)k, -1);
            fill(rank, 15 + op);
            CHECK_RC(MPI_Scan(sa, ra, k, t, o, c));
            CHECK_RC(MPI_Iscan(sb, rb, k, t, o, c, &rq));
            complete(&rq);
            same("Iscan", (size_t)k, -1);
            fill(rank, 17 + op);
            CHECK_RC(MPI_Exscan(MPI_IN_PLACE, ra, k, t, o, c));
            CHECK_RC(MPI_Iexscan(MPI_IN_PLACE, rb, k, t, o, c, &rq));
            complete(&rq);
            if (rank == 0) memcpy(rb, ra, cap); /* rank 0's exscan result is undefined */
            same("Iexscan in place", (size_t)k, -1);
            fill(rank, 19 + op);
            CHECK_RC(MPI_Exscan(sa, ra, k, t, o, c));
            CHECK_RC(MPI_Iexscan(sb, rb, k, t, o, c, &rq));
            complete(&rq);
            if (rank == 0) memcpy(rb, ra, cap);
            same("Iexscan", (size_t)k, -1);
            fill(rank, 21 + op);
            CHECK_RC(MPI_Reduce_scatter(sa, ra, cnt, t, o, c));
            CHECK_RC(MPI_Ireduce_scatter(sb, rb, cnt, t, o, c, &rq));
            complete(&rq);
            same("Ireduce_scatter", (size_t)k, -1);
            fill(rank, 23 + op);
            CHECK_RC(MPI_Reduce_scatter_block(MPI_IN_PLACE, ra, k, t, o, c));
            CHECK_RC(MPI_Ireduce_scatter_block(MPI_IN_PLACE, rb, k, t, o, c, &rq));
            complete(&rq);
            same("Ireduce_scatter_block in place", (size_t)k, -1);
        }
        fill(rank, 25);
        CHECK_RC(MPI_Allgather(sa, 6 * k, MPI_DOUBLE, ra, k, vec, c));
        CHECK_RC(MPI_Iallgather(sb, 6 * k, MPI_DOUBLE, rb, k, vec, c, &rq));
        complete(&rq);
        same("Iallgather", (size_t)k, -1);
        fill(rank, 26);
        CHECK_RC(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, ra, k, MPI_INT, c));
        CHECK_RC(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_INT, rb, k, MPI_INT, c, &rq));
        complete(&rq);
        same("Iallgather in place", (size_t)k, -1);
        fill(rank, 27);
        CHECK_RC(MPI_Allgatherv(sa, cnt[rank], MPI_INT, ra, cnt, dsp, MPI_INT, c));
        CHECK_RC(MPI_Iallgatherv(sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, c, &rq));
        complete(&rq);
        same("Iallgatherv", (size_t)k, -1);
        fill(rank, 28);
        CHECK_RC(MPI_Alltoall(sa, k, MPI_INT, ra, k, MPI_INT, c));
        CHECK_RC(MPI_Ialltoall(sb, k, MPI_INT, rb, k, MPI_INT, c, &rq));
        complete(&rq);
        same("Ialltoall", (size_t)k, -1);
        /* contiguous blocks of 6 doubles per count (144000 bytes at MAXN): rendezvous, each
         * receiver copying whole blocks from 3 ranks on (nbc.c, build_pairwise) */
        fill(rank, 32);
        CHECK_RC(MPI_Alltoall(sa, 6 * k, MPI_DOUBLE, ra, 6 * k, MPI_DOUBLE, c));
        CHECK_RC(MPI_Ialltoall(sb, 6 * k, MPI_DOUBLE, rb, 6 * k, MPI_DOUBLE, c, &rq));
        complete(&rq);
        same("Ialltoall of contiguous doubles", (size_t)k, -1);
        fill(rank, 33);
        CHECK_RC(MPI_Allgather(sa, 6 * k, MPI_DOUBLE, ra, 6 * k, MPI_DOUBLE, c));
        CHECK_RC(MPI_Iallgather(sb, 6 * k, MPI_DOUBLE, rb, 6 * k, MPI_DOUBLE, c, &rq));
        complete(&rq);
        same("Iallgather of contiguous doubles", (size_t)k, -1);
        fill(rank, 29);
        CHECK_RC(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, ra, k, vec, c));
        CHECK_RC(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, rb, k, vec, c, &rq));
        complete(&rq);
        same("Ialltoall in place", (size_t)k, -1);
        if (n <= 64) {
            fill(rank, 30);
            CHECK_RC(
                MPI_Alltoallv(sa, cnt2, dsp2, MPI_INT, ra, my_alltoallv_recv, rdsp, MPI_INT, c));
            CHECK_RC(MPI_Ialltoallv(sb, cnt2, dsp2, MPI_INT, rb, my_alltoallv_recv, rdsp, MPI_INT,
                                    c, &rq));
            complete(&rq);
            same("Ialltoallv", (size_t)k, -1);
        }
        fill(rank, 31);
        CHECK_RC(MPI_Ibarrier(c, &rq));
        complete(&rq);
    }
    free(cnt);
    cu_type_free(&vec);
}

/* Alltoallw: to rank q, k(me, q) = (me + q) % 4 + 1 ints, as MPI_INT to even ranks and as one
 * contiguous type of k ints to odd ones; from rank p, k(p, me) ints, as MPI_INT from even ranks
 * and as one vector of k ints with a gap after each from odd ones. Blocking, nonblocking and in
 * place, each checked element by element. */
static int kk(int a, int b) {
    return (a + b) % 4 + 1;
}

static void check_alltoallw(MPI_Comm c) {
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    if (n > 64) return;
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype st[64], rt[64];
    int *sbuf = malloc(64 * 16 * sizeof(int)), *r1 = malloc(64 * 16 * sizeof(int)),
        *r2 = malloc(64 * 16 * sizeof(int));
    for (int q = 0, off = 0, roff = 0; q < n; q++) {
        int k = kk(me, q);
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
        for (int i = 0; i < k; i++) sbuf[off + i] = cu_val(me * 64 + q, (size_t)i, 3);
        off += k + 1;
        roff += 2 * k + 1;
    }
    for (int i = 0; i < 64 * 16; i++) r1[i] = r2[i] = -1;
    CHECK_RC(MPI_Alltoallw(sbuf, sc, sd, st, r1, rc, rd, rt, c));
    MPI_Request rq;
    CHECK_RC(MPI_Ialltoallw(sbuf, sc, sd, st, r2, rc, rd, rt, c, &rq));
    complete(&rq);
    for (int p = 0; p < n; p++) {
        int k = kk(p, me), stride = p % 2 ? 2 : 1;
        for (int i = 0; i < k; i++)
            CHECK(r1[rd[p] / (int)sizeof(int) + i * stride] == cu_val(p * 64 + me, (size_t)i, 3),
                  "Alltoallw from %d [%d] = %d", p, i, r1[rd[p] / (int)sizeof(int) + i * stride]);
    }
    CHECK(memcmp(r1, r2, 64 * 16 * sizeof(int)) == 0, "Ialltoallw differs from Alltoallw");
    /* in place: block q of the receive buffer is what goes to q */
    for (int q = 0; q < n; q++) {
        int k = kk(me, q), stride = q % 2 ? 2 : 1;
        for (int i = 0; i < k; i++)
            r1[rd[q] / (int)sizeof(int) + i * stride] = cu_val(me, (size_t)i, q);
    }
    memcpy(r2, r1, 64 * 16 * sizeof(int));
    CHECK_RC(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r1, rc, rd, rt, c));
    CHECK_RC(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r2, rc, rd, rt, c, &rq));
    complete(&rq);
    for (int p = 0; p < n; p++) {
        int k = kk(p, me), stride = p % 2 ? 2 : 1;
        for (int i = 0; i < k; i++)
            CHECK(r1[rd[p] / (int)sizeof(int) + i * stride] == cu_val(p, (size_t)i, me),
                  "Alltoallw in place from %d [%d]", p, i);
    }
    CHECK(memcmp(r1, r2, 64 * 16 * sizeof(int)) == 0, "Ialltoallw in place differs");
    /* errors: a NULL types array, a bad type, the same buffer on both sides */
    CHECK_ERR(MPI_Alltoallw(sbuf, sc, sd, NULL, r1, rc, rd, rt, c), MPI_ERR_ARG);
    MPI_Datatype bad[64];
    for (int q = 0; q < n; q++) bad[q] = q == n - 1 ? MPI_DATATYPE_NULL : st[q];
    CHECK_ERR(MPI_Alltoallw(sbuf, sc, sd, bad, r1, rc, rd, rt, c), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Alltoallw(r1, rc, rd, rt, r1, rc, rd, rt, c), MPI_ERR_BUFFER);
    for (int q = 1; q < n; q += 2) {
        MPI_Type_free(&st[q]);
        MPI_Type_free(&rt[q]);
    }
    free(sbuf), free(r1), free(r2);
}

/* Several calls in flight on one communicator, a blocking one among them, completed in
 * reverse order. */
static void check_overlap(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    int x[4] = {rank, rank * 2, rank * 3, rank * 4}, sum[4], bc[8], ag[64], bsum;
    MPI_Request rq[4];
    for (int i = 0; i < 8; i++) bc[i] = rank == n - 1 ? 100 + i : -1;
    CHECK_RC(MPI_Iallreduce(x, sum, 4, MPI_INT, MPI_SUM, c, &rq[0]));
    CHECK_RC(MPI_Ibcast(bc, 8, MPI_INT, n - 1, c, &rq[1]));
    CHECK_RC(MPI_Ibarrier(c, &rq[2]));
    CHECK_RC(MPI_Allreduce(&rank, &bsum, 1, MPI_INT, MPI_SUM, c)); /* blocking, meanwhile */
    CHECK_RC(MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, c, &rq[3]));
    for (int i = 3; i >= 0; i--) CHECK_RC(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    int tri = n * (n - 1) / 2;
    CHECK(bsum == tri, "blocking allreduce among nonblocking ones: %d", bsum);
    for (int i = 0; i < 4; i++) CHECK(sum[i] == tri * (i + 1), "Iallreduce [%d] = %d", i, sum[i]);
    for (int i = 0; i < 8; i++) CHECK(bc[i] == 100 + i, "Ibcast [%d] = %d", i, bc[i]);
    for (int i = 0; i < n && n <= 64; i++) CHECK(ag[i] == i, "Iallgather [%d] = %d", i, ag[i]);
    /* Waitall over a mix of point-to-point and collective requests */
    int to = (rank + 1) % n, from = (rank + n - 1) % n, got = -1;
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, from, 5, c, &rq[0]));
    CHECK_RC(MPI_Iallreduce(x, sum, 4, MPI_INT, MPI_MAX, c, &rq[1]));
    CHECK_RC(MPI_Isend(&rank, 1, MPI_INT, to, 5, c, &rq[2]));
    CHECK_RC(MPI_Ibarrier(c, &rq[3]));
    CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(got == from && sum[0] == n - 1, "mixed Waitall: got %d max %d", got, sum[0]);
}

/* Several MPI_Ibarrier calls in flight on some ranks: a rank may leave the first only once
 * every rank has entered it. Rank 0 starts two at once; the last rank first sends rank 1 a
 * synchronous message, which completes only once rank 1 has matched it, and only then starts
 * its own; rank 1 posts that receive before its first MPI_Ibarrier, so the receive must have
 * completed by the time that barrier has. (A counter barrier that lets two arrivals of rank 0
 * stand for the last rank's lets rank 1 out at once.) */
static void check_ibarrier_order(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    if (n < 3) return;
    MPI_Request rq[2], rr;
    int token = 0;
    if (rank == 1) {
        CHECK_RC(MPI_Irecv(&token, 1, MPI_INT, n - 1, 11, c, &rr));
        CHECK_RC(MPI_Ibarrier(c, &rq[0]));
        complete(&rq[0]);
        int flag = 0;
        CHECK_RC(MPI_Test(&rr, &flag, MPI_STATUS_IGNORE));
        CHECK(flag && token == 7, "rank 1 left an MPI_Ibarrier before rank %d entered it", n - 1);
        if (!flag) CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Ibarrier(c, &rq[1]));
        complete(&rq[1]);
        return;
    }
    if (rank == n - 1) {
        usleep(20000); /* (makes the early exit likely, where it is possible at all) */
        token = 7;
        CHECK_RC(MPI_Ssend(&token, 1, MPI_INT, 1, 11, c));
    }
    CHECK_RC(MPI_Ibarrier(c, &rq[0]));
    CHECK_RC(MPI_Ibarrier(c, &rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

/* The last rank waits for the Iallreduce, whose root (rank 0) is meanwhile blocked in
 * MPI_Recv for a message the last rank sends only after its Iallreduce completed. */
static void check_progress(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    if (n < 2) return;
    double big[MAXN], out[MAXN];
    for (int i = 0; i < MAXN; i++) big[i] = rank + i;
    MPI_Request rq;
    CHECK_RC(MPI_Iallreduce(big, out, MAXN, MPI_DOUBLE, MPI_SUM, c, &rq));
    int token = 0;
    if (rank == 0) {
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, n - 1, 9, c, MPI_STATUS_IGNORE));
        CHECK(token == 42, "token %d", token);
    }
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (rank == n - 1) {
        token = 42;
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 9, c));
    }
    double tri = n * (n - 1) / 2.0;
    for (int i = 0; i < MAXN; i++)
        CHECK(out[i] == tri + (double)n * i, "Iallreduce [%d] = %g", i, out[i]);
}

/* The operator and a datatype freed right after the call started. */
static void check_freed(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Op op;
    MPI_Datatype pair;
    CHECK_RC(MPI_Op_create(mat_op, 0, &op));
    CHECK_RC(MPI_Type_contiguous(4, MPI_UNSIGNED, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    mat in = {1, (unsigned)rank, 0, 1}, out;
    MPI_Request rq;
    CHECK_RC(MPI_Iallreduce(&in, &out, 1, pair, op, c, &rq));
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&pair));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* the product of [[1, r], [0, 1]] over r = 0..n-1 is [[1, sum r], [0, 1]] */
    CHECK(out.a == 1 && out.b == (unsigned)(n * (n - 1) / 2) && out.c == 0 && out.d == 1,
          "product %u %u %u %u", out.a, out.b, out.c, out.d);
}

/* Vectors long enough for MPI_Iallreduce's halving (from 4 ranks on,
 * COHORT_NBC_ALLREDUCE_SPLIT: 64 KiB by default), with odd counts so that halves differ: a
 * non-commutative operator, a type with gaps, in place; and MPI_Ireduce on the same, first,
 * middle and last root. */
static void check_reduce_long(MPI_Comm c) {
    int rank, n;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Datatype gappy; /* ints 0 and 2 of every 3 */
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &gappy));
    CHECK_RC(MPI_Type_commit(&gappy));
    struct {
        int count;
        MPI_Datatype t;
        MPI_Op o;
        int in_place;
    } cases[] = {{4097, mat_type, mat_mul, 0}, {4099, mat_type, mat_mul, 1},
                 {16411, MPI_INT, MPI_SUM, 1}, {8195, gappy, MPI_SUM, 0},
                 {8195, gappy, MPI_MAX, 1},    {20000, MPI_INT, MPI_BXOR, 0}};
    MPI_Request rq;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int k = cases[i].count, ip = cases[i].in_place;
        MPI_Datatype t = cases[i].t;
        MPI_Op o = cases[i].o;
        fill(rank, 40 + (int)i);
        CHECK_RC(MPI_Allreduce(ip ? MPI_IN_PLACE : sa, ra, k, t, o, c));
        CHECK_RC(MPI_Iallreduce(ip ? MPI_IN_PLACE : sb, rb, k, t, o, c, &rq));
        complete(&rq);
        same(ip ? "long Iallreduce in place" : "long Iallreduce", (size_t)k, -1);
        for (int root = 0; root<n; root += n> 2 ? (n + 1) / 2 : 1) {
            int here = ip && rank == root;
            fill(rank, 50 + (int)i);
            CHECK_RC(MPI_Reduce(here ? MPI_IN_PLACE : sa, here ? sa : ra, k, t, o, root, c));
            CHECK_RC(MPI_Ireduce(here ? MPI_IN_PLACE : sb, here ? sb : rb, k, t, o, root, c, &rq));
            complete(&rq);
            same(ip ? "long Ireduce in place" : "long Ireduce", (size_t)k, root);
        }
    }
    MPI_Type_free(&gappy);
}

static void check_errors(MPI_Comm c) {
    int rank, n, a[8] = {0}, b[8] = {0};
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &n);
    MPI_Request rq;
    CHECK_ERR(MPI_Ibarrier(c, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Ibarrier(MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    CHECK_ERR(MPI_Ibcast(a, 1, MPI_INT, n, c, &rq), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, c, &rq), MPI_ERR_OP);
    CHECK_ERR(MPI_Iallreduce(a, b, -1, MPI_INT, MPI_SUM, c, &rq), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Ibcast(MPI_IN_PLACE, 1, MPI_INT, 0, c, &rq), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Ialltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, c, &rq), MPI_ERR_TYPE);
    /* the request of one in flight cannot be freed or cancelled; it still completes. Rank 0
     * starts only once the others have tried, so theirs cannot have completed yet; its own
     * may have (alone, it completes at once) */
    int rc, cls = MPI_SUCCESS;
    if (rank == 0)
        for (int i = 1; i < n; i++)
            CHECK_RC(MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 77, c, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, c, &rq));
    rc = MPI_Request_free(&rq);
    if (rc) MPI_Error_class(rc, &cls);
    CHECK(rank == 0
              ? (rc == MPI_SUCCESS) == (rq == MPI_REQUEST_NULL) && (!rc || cls == MPI_ERR_REQUEST)
              : cls == MPI_ERR_REQUEST,
          "Request_free of an active nonblocking collective: class %d", cls);
    if (rank > 0) CHECK_RC(MPI_Send(NULL, 0, MPI_INT, 0, 77, c));
    if (rq != MPI_REQUEST_NULL) {
        CHECK_ERR(MPI_Cancel(&rq), MPI_ERR_REQUEST);
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    /* counts that differ: rank 0 broadcasts 4 ints, the others expect 2; its children in the
     * tree (rank 1 among them) see the truncation when they complete, their children get
     * nothing from them and report MPI_ERR_COUNT */
    if (n > 1) {
        CHECK_RC(MPI_Ibcast(a, rank == 0 ? 4 : 2, MPI_INT, 0, c, &rq));
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        if (rank == 1) CHECK(cls == MPI_ERR_TRUNCATE, "truncated Ibcast: class %d", cls);
        /* the others: truncated, or too little from a parent that was truncated */
        CHECK(rank == 0 ? rc == MPI_SUCCESS : (cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT),
              "Ibcast: class %d", cls);
        CHECK_RC(MPI_Barrier(c));
        /* too little from the root: every other rank reports it, also those that get the data
         * from a rank that got too little itself (they would otherwise take its whole buffer,
         * half of it never received, for the broadcast's) */
        CHECK_RC(MPI_Ibcast(a, rank == 0 ? 2 : 4, MPI_INT, 0, c, &rq));
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        cls = MPI_SUCCESS;
        if (rc) MPI_Error_class(rc, &cls);
        CHECK(rank == 0 ? rc == MPI_SUCCESS : cls == MPI_ERR_COUNT, "short Ibcast: class %d", cls);
        CHECK_RC(MPI_Barrier(c));
        /* the same in the Iallreduce's broadcast: rank 0 reduces too little */
        int v[4] = {1, 1, 1, 1}, sum[4];
        CHECK_RC(MPI_Iallreduce(v, sum, rank == 0 ? 2 : 4, MPI_INT, MPI_SUM, c, &rq));
        rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        cls = MPI_SUCCESS;
        if (rc) MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS, "Iallreduce with counts 2 and 4 succeeded on rank %d", rank);
        CHECK_RC(MPI_Barrier(c));
    }
}

/* A communicator freed while a nonblocking collective runs on it, then another made at once
 * and used the same way: the first one's ID must not go to the second before its schedule
 * has ended (their messages would meet). 30 rounds, large enough for several steps each. */
static void check_free_in_flight(void) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    enum { N = 5000 };
    double *a = malloc(2 * N * sizeof(double)), *b = malloc(2 * N * sizeof(double));
    for (int round = 0; round < 30; round++) {
        MPI_Comm c, d;
        MPI_Request rq[2];
        for (int i = 0; i < N; i++) a[i] = rank + i + round, a[N + i] = 2.0 * rank - i;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        CHECK_RC(MPI_Iallreduce(a, b, N, MPI_DOUBLE, MPI_SUM, c, &rq[0]));
        CHECK_RC(MPI_Comm_free(&c)); /* pending operations complete normally */
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        CHECK_RC(MPI_Iallreduce(a + N, b + N, N, MPI_DOUBLE, MPI_SUM, d, &rq[1]));
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        double tri = n * (n - 1) / 2.0;
        for (int i = 0; i < N; i++) {
            CHECK(b[i] == tri + (double)n * (i + round), "round %d: [%d] = %g", round, i, b[i]);
            CHECK(b[N + i] == 2.0 * tri - (double)n * i, "round %d: second [%d] = %g", round, i,
                  b[N + i]);
        }
        CHECK_RC(MPI_Comm_free(&d));
    }
    free(a);
    free(b);
}

/* An erroneous program the collective watch reports: a nonblocking broadcast whose ranks
 * name different roots (never completes), then blocking collectives that disagree on the
 * same communicator (abandoned with an error). The abandoned call must leave the broadcast's
 * posted receive alone (it used to free it, and the user's next receive got the same object). */
static void check_abandon_spares(void) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) return;
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int b = 0, x = 1, y, v = -1;
    MPI_Request r, u;
    CHECK_RC(MPI_Ibcast(&b, 1, MPI_INT, rank == 0 ? 1 : 0, c, &r)); /* both wait to receive */
    int rc = rank == 0 ? MPI_Barrier(c) : MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
    CHECK(rc != MPI_SUCCESS, "disagreeing collectives returned success");
    if (rank == 0) {
        CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &u));
        CHECK(u != r, "the user's receive got the broadcast's request");
        int flag = 1;
        CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "the broadcast completed although no rank sends");
        CHECK_RC(MPI_Wait(&u, MPI_STATUS_IGNORE));
        CHECK(v == 42, "user receive got %d", v);
    } else {
        x = 42;
        CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }
    /* (c and the broadcast are left as they are: freeing c would wait for the broadcast) */
}

/* On intercommunicators (uneven halves, and evens against odds): every call against the
 * blocking one, which coll_inter checks against references; roots on both sides (MPI_ROOT,
 * MPI_PROC_NULL), sides that send different counts, the non-commutative operator. */
static void check_inter_comm(MPI_Comm ic) {
    int r, nl, nr;
    MPI_Comm_rank(ic, &r);
    MPI_Comm_size(ic, &nl);
    MPI_Comm_remote_size(ic, &nr);
    int wr, lw0, rw0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Group lg, rg, wg;
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int zero = 0;
    MPI_Group_translate_ranks(lg, 1, &zero, wg, &lw0);
    MPI_Group_translate_ranks(rg, 1, &zero, wg, &rw0);
    MPI_Group_free(&lg), MPI_Group_free(&rg), MPI_Group_free(&wg);
    int side = lw0 < rw0; /* 1 on the side holding the lower world rank */
    MPI_Request rq;
    static const int counts[] = {0, 5, 3000};
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype st[64], rt[64];
    for (int ci = 0; ci < 3; ci++) {
        int k = counts[ci];
        int ks = side ? k : 2 * k + 1, kr = side ? 2 * k + 1 : k; /* sides send differently */
        CHECK_RC(MPI_Ibarrier(ic, &rq));
        complete(&rq);
        for (int rs = 0; rs < 2; rs++) { /* the root's side */
            int mine = rs == side, root = mine ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
            fill(wr, 40 + rs);
            CHECK_RC(MPI_Bcast(ra, k, MPI_INT, root, ic));
            CHECK_RC(MPI_Ibcast(rb, k, MPI_INT, root, ic, &rq));
            complete(&rq);
            same("inter Ibcast", (size_t)k, root);
            fill(wr, 42 + rs);
            CHECK_RC(MPI_Reduce(sa, ra, k, mat_type, mat_mul, root, ic));
            CHECK_RC(MPI_Ireduce(sb, rb, k, mat_type, mat_mul, root, ic, &rq));
            complete(&rq);
            same("inter Ireduce", (size_t)k, root);
            /* the non-root side sends k ints each, the root gathers them */
            fill(wr, 44 + rs);
            CHECK_RC(MPI_Gather(sa, k, MPI_INT, ra, k, MPI_INT, root, ic));
            CHECK_RC(MPI_Igather(sb, k, MPI_INT, rb, k, MPI_INT, root, ic, &rq));
            complete(&rq);
            same("inter Igather", (size_t)k, root);
            fill(wr, 46 + rs);
            CHECK_RC(MPI_Scatter(sa, k, MPI_INT, ra, k, MPI_INT, root, ic));
            CHECK_RC(MPI_Iscatter(sb, k, MPI_INT, rb, k, MPI_INT, root, ic, &rq));
            complete(&rq);
            same("inter Iscatter", (size_t)k, root);
            int cnt[64], dsp[64];
            for (int q = 0, d = 0; q < nr && nr <= 64; q++)
                cnt[q] = k + q, dsp[q] = d, d += k + q + 1;
            int my = k + r;
            fill(wr, 48 + rs);
            CHECK_RC(MPI_Gatherv(sa, my, MPI_INT, ra, cnt, dsp, MPI_INT, root, ic));
            CHECK_RC(MPI_Igatherv(sb, my, MPI_INT, rb, cnt, dsp, MPI_INT, root, ic, &rq));
            complete(&rq);
            same("inter Igatherv", (size_t)k, root);
            fill(wr, 50 + rs);
            CHECK_RC(MPI_Scatterv(sa, cnt, dsp, MPI_INT, ra, my, MPI_INT, root, ic));
            CHECK_RC(MPI_Iscatterv(sb, cnt, dsp, MPI_INT, rb, my, MPI_INT, root, ic, &rq));
            complete(&rq);
            same("inter Iscatterv", (size_t)k, root);
        }
        fill(wr, 52);
        CHECK_RC(MPI_Allreduce(sa, ra, k, mat_type, mat_mul, ic));
        CHECK_RC(MPI_Iallreduce(sb, rb, k, mat_type, mat_mul, ic, &rq));
        complete(&rq);
        same("inter Iallreduce", (size_t)k, -1);
        fill(wr, 53);
        CHECK_RC(MPI_Allgather(sa, ks, MPI_INT, ra, kr, MPI_INT, ic));
        CHECK_RC(MPI_Iallgather(sb, ks, MPI_INT, rb, kr, MPI_INT, ic, &rq));
        complete(&rq);
        same("inter Iallgather", (size_t)k, -1);
        fill(wr, 54);
        CHECK_RC(MPI_Alltoall(sa, ks, MPI_INT, ra, kr, MPI_INT, ic));
        CHECK_RC(MPI_Ialltoall(sb, ks, MPI_INT, rb, kr, MPI_INT, ic, &rq));
        complete(&rq);
        same("inter Ialltoall", (size_t)k, -1);
        if (nr <= 64) {
            /* to remote q: k + r + q ints (what q expects from me: k + q + r) */
            for (int q = 0, so = 0, ro = 0; q < nr; q++) {
                sc[q] = rc[q] = k + r + q;
                sd[q] = so, rd[q] = ro;
                so += sc[q];
                ro += rc[q] + 1;
                st[q] = rt[q] = MPI_INT;
            }
            int agc[64], agd[64]; /* remote q sends k + q ints (its rank) */
            for (int q = 0, d = 0; q < nr; q++) agc[q] = k + q, agd[q] = d, d += k + q + 1;
            fill(wr, 55);
            CHECK_RC(MPI_Allgatherv(sa, k + r, MPI_INT, ra, agc, agd, MPI_INT, ic));
            CHECK_RC(MPI_Iallgatherv(sb, k + r, MPI_INT, rb, agc, agd, MPI_INT, ic, &rq));
            complete(&rq);
            same("inter Iallgatherv", (size_t)k, -1);
            fill(wr, 56);
            CHECK_RC(MPI_Alltoallv(sa, sc, sd, MPI_INT, ra, rc, rd, MPI_INT, ic));
            CHECK_RC(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, &rq));
            complete(&rq);
            same("inter Ialltoallv", (size_t)k, -1);
            for (int q = 0; q < nr; q++) sd[q] *= (int)sizeof(int), rd[q] *= (int)sizeof(int);
            fill(wr, 57);
            CHECK_RC(MPI_Alltoallw(sa, sc, sd, st, ra, rc, rd, rt, ic));
            CHECK_RC(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, ic, &rq));
            complete(&rq);
            same("inter Ialltoallw", (size_t)k, -1);
        }
        /* Reduce_scatter: both groups' totals equal (6k), split over each group */
        int cnt[64];
        for (int i = 0; i < nl && nl <= 64; i++) cnt[i] = 6 * k / nl + (i < 6 * k % nl);
        fill(wr, 58);
        CHECK_RC(MPI_Reduce_scatter(sa, ra, cnt, MPI_INT, MPI_SUM, ic));
        CHECK_RC(MPI_Ireduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, ic, &rq));
        complete(&rq);
        same("inter Ireduce_scatter", (size_t)k, -1);
        fill(wr, 59);
        CHECK_RC(MPI_Reduce_scatter_block(sa, ra, k * nr, mat_type, mat_mul, ic));
        CHECK_RC(MPI_Ireduce_scatter_block(sb, rb, k * nr, mat_type, mat_mul, ic, &rq));
        complete(&rq);
        same("inter Ireduce_scatter_block", (size_t)k, -1);
    }
    int a = 0, b = 0;
    CHECK_ERR(MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, ic, &rq), MPI_ERR_COMM);
    CHECK_ERR(MPI_Iexscan(&a, &b, 1, MPI_INT, MPI_SUM, ic, &rq), MPI_ERR_COMM);
    CHECK_ERR(MPI_Ibcast(&a, 1, MPI_INT, nr, ic, &rq), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Iallreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, ic, &rq), MPI_ERR_BUFFER);
}

static void check_inter(void) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2 || n > 64) return;
    MPI_Comm local, ic;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank < n / 2, rank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank < n / 2 ? n / 2 : 0, 3, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    check_inter_comm(ic);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    int even = rank % 2 == 0;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, even, rank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, even ? 1 : 0, 4, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    check_inter_comm(ic);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
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
        check_overlap(comms[i]);
        check_ibarrier_order(comms[i]);
        check_reduce_long(comms[i]);
        check_progress(comms[i]);
        check_freed(comms[i]);
        check_errors(comms[i]);
    }
    check_inter();
    check_free_in_flight();
    cu_free_comms(comms, owned, nc);
    check_abandon_spares(); /* last: it leaves a broken communicator behind */
    free(sa), free(sb), free(ra), free(rb);
    MPI_Op_free(&mat_mul);
    MPI_Type_free(&mat_type);
    MPI_Finalize();
    return 0;
}
