/* Point-to-point semantics beyond moving bytes: wildcards, PROC_NULL, message order,
 * truncation, send modes, the Wait/Test families, probes, cancellation, persistent requests,
 * sends to self, and flow control when a receiver falls far behind. */
#include "testutil.h"

#include <stdint.h>
#include <unistd.h>

static int rank, size;

static void wildcards(void) {
    /* every rank sends its rank to 0 with tag = rank; 0 takes them in any order */
    if (rank == 0) {
        int seen[64] = {0};
        for (int i = 1; i < size; i++) {
            int v;
            MPI_Status st;
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(v == st.MPI_SOURCE && v == st.MPI_TAG, "value %d from %d tag %d", v,
                  st.MPI_SOURCE, st.MPI_TAG);
            CHECK(!seen[v], "rank %d seen twice", v);
            seen[v] = 1;
        }
    } else {
        CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, rank, MPI_COMM_WORLD));
    }
    /* ANY_TAG with a specific source, ANY_SOURCE with a specific tag; the barrier keeps these
     * out of rank 0's wildcard receives above */
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1) {
        int peer = rank ^ 1;
        if (peer < size) {
            int out[2] = {rank, 100 + rank}, in[2];
            MPI_Request r[2];
            CHECK_RC(MPI_Irecv(&in[0], 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
            CHECK_RC(MPI_Irecv(&in[1], 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r[1]));
            CHECK_RC(MPI_Send(&out[0], 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(&out[1], 1, MPI_INT, peer, 77, MPI_COMM_WORLD));
            MPI_Status st[2];
            CHECK_RC(MPI_Waitall(2, r, st));
            CHECK(in[0] == peer && st[0].MPI_TAG == 5, "any-tag got %d tag %d", in[0],
                  st[0].MPI_TAG);
            CHECK(in[1] == 100 + peer && st[1].MPI_SOURCE == peer, "any-source got %d", in[1]);
        }
    }
}

static void proc_null(void) {
    int x = 42;
    MPI_Status st;
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && x == 42,
          "PROC_NULL status %d/%d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Request r;
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    int flag = 0;
    CHECK_RC(MPI_Test(&r, &flag, &st));
    CHECK(flag && r == MPI_REQUEST_NULL, "PROC_NULL receive did not complete at once");
    CHECK_RC(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "probe of PROC_NULL");
}

/* Messages between a pair are not overtaken, whatever their sizes and protocols. */
static void ordering(void) {
    if (size < 2 || rank > 1) return;
    enum { N = 300 };
    size_t maxn = 70000;
    char *buf = malloc(maxn);
    CHECK(buf, "malloc");
    for (int i = 0; i < N; i++) {
        size_t n = (size_t)(i % 3 == 0 ? 8 : i % 3 == 1 ? 5000 : 65536 + i);
        if (rank == 0) {
            memset(buf, i & 0xff, n);
            memcpy(buf, &i, sizeof(i));
            CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            CHECK_RC(MPI_Recv(buf, (int)maxn, MPI_BYTE, 0, i % 2 ? MPI_ANY_TAG : 9, MPI_COMM_WORLD,
                              &st));
            int seq, count;
            memcpy(&seq, buf, sizeof(seq));
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(seq == i && (size_t)count == n, "message %d arrived as %d (%d bytes)", i, seq,
                  count);
            CHECK((unsigned char)buf[n - 1] == (i & 0xff), "payload of message %d", i);
        }
    }
    free(buf);
}

static void truncation(void) {
    if (size < 2 || rank > 1) return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    static const int counts[] = {10, 5000, 300000}; /* inline/eager, eager, rendezvous */
    for (int k = 0; k < 3; k++) {
        int n = counts[k];
        int *buf = calloc((size_t)n, sizeof(int));
        CHECK(buf, "calloc");
        if (rank == 0) {
            for (int i = 0; i < n; i++) buf[i] = i;
            CHECK_RC(MPI_Send(buf, n, MPI_INT, 1, 3, MPI_COMM_WORLD));
            MPI_Request r;
            CHECK_RC(MPI_Isend(buf, n, MPI_INT, 1, 4, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            CHECK_ERR(MPI_Recv(buf, n / 2, MPI_INT, 0, 3, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == n / 2, "truncated count %d", count);
            for (int i = 0; i < n / 2; i++) CHECK(buf[i] == i, "truncated data at %d", i);
            /* the same through Irecv + Waitall: class MPI_ERR_IN_STATUS, detail in status */
            MPI_Request r;
            MPI_Status sts[1];
            CHECK_RC(MPI_Irecv(buf, n / 3, MPI_INT, 0, 4, MPI_COMM_WORLD, &r));
            CHECK_ERR(MPI_Waitall(1, &r, sts), MPI_ERR_IN_STATUS);
            CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE, "status error %d", sts[0].MPI_ERROR);
        }
        free(buf);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void zero_counts(void) {
    int peer = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, peer, 1, NULL, 0, MPI_DATATYPE_NULL, from, 1,
                          MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0 && st.MPI_SOURCE == from, "zero-byte message count %d", count);
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_DOUBLE_INT, peer, 2, NULL, 0, MPI_LONG_DOUBLE, from, 2,
                          MPI_COMM_WORLD, &st));
}

/* Issend may not complete before the matching receive is posted. The receiver posts only
 * after the sender has seen its request incomplete many times, so this can fail without any
 * timing assumption. */
static void sync_mode(void) {
    if (size < 2 || rank > 1) return;
    static const int counts[] = {1, 100000};
    for (int k = 0; k < 2; k++) {
        int n = counts[k];
        int *buf = calloc((size_t)n, sizeof(int));
        int go = 1;
        if (rank == 0) {
            buf[n - 1] = 17;
            MPI_Request r;
            CHECK_RC(MPI_Issend(buf, n, MPI_INT, 1, 1, MPI_COMM_WORLD, &r));
            for (int i = 0; i < 200; i++) {
                int flag;
                CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "Issend of %d ints completed before the receive was posted", n);
            }
            CHECK_RC(MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Ssend(buf, n, MPI_INT, 1, 3, MPI_COMM_WORLD));
        } else {
            CHECK_RC(MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Recv(buf, n, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(buf[n - 1] == 17, "Issend payload");
            buf[n - 1] = 0;
            CHECK_RC(MPI_Recv(buf, n, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(buf[n - 1] == 17, "Ssend payload");
        }
        free(buf);
    }
}

static void ready_and_buffered(void) {
    if (size < 2) return;
    int peer = rank ^ 1;
    if (peer >= size) return;
    int in = -1, out = rank;
    MPI_Request r;
    CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &r));
    /* both have posted their receive before either ready-sends */
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 12, NULL, 0, MPI_BYTE, peer, 12, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Rsend(&out, 1, MPI_INT, peer, 11, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(in == peer, "Rsend delivered %d", in);

    /* buffered: needs an attached buffer; without one, MPI_ERR_BUFFER */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERR(MPI_Bsend(&out, 1, MPI_INT, peer, 13, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int bsize = 200000 + 4 * MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    int *big = malloc(40000 * sizeof(int));
    for (int i = 0; i < 40000; i++) big[i] = i + rank;
    CHECK_RC(MPI_Bsend(big, 40000, MPI_INT, peer, 14, MPI_COMM_WORLD));
    for (int i = 0; i < 40000; i++) big[i] = -1; /* the data was copied at once */
    MPI_Request br;
    CHECK_RC(MPI_Ibsend(&out, 1, MPI_INT, peer, 15, MPI_COMM_WORLD, &br));
    CHECK_RC(MPI_Wait(&br, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Recv(big, 40000, MPI_INT, peer, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 40000; i++) CHECK(big[i] == i + peer, "Bsend data at %d", i);
    CHECK_RC(MPI_Recv(&in, 1, MPI_INT, peer, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == peer, "Ibsend delivered %d", in);
    void *det;
    int dsize;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf && dsize == bsize, "detach returned %p/%d", det, dsize);
    free(bbuf);
    free(big);
}

static void replace_ring(void) {
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int n = 50000;
    int *buf = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) buf[i] = rank * 1000000 + i;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv_replace(buf, n, MPI_INT, to, 21, from, 21, MPI_COMM_WORLD, &st));
    for (int i = 0; i < n; i++) CHECK(buf[i] == from * 1000000 + i, "replace data at %d", i);
    CHECK(st.MPI_SOURCE == from, "replace status source %d", st.MPI_SOURCE);
    free(buf);
}

static void completion_families(void) {
    enum { K = 6 };
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int in[K], out[K];
    MPI_Request r[2 * K + 2];
    r[0] = MPI_REQUEST_NULL;
    for (int i = 0; i < K; i++) {
        out[i] = rank * 10 + i;
        CHECK_RC(MPI_Irecv(&in[i], 1, MPI_INT, from, 30 + i, MPI_COMM_WORLD, &r[1 + i]));
    }
    for (int i = 0; i < K; i++)
        CHECK_RC(MPI_Isend(&out[i], 1, MPI_INT, to, 30 + i, MPI_COMM_WORLD, &r[1 + K + i]));
    r[2 * K + 1] = MPI_REQUEST_NULL;
    int done = 0, seen[2 * K + 2] = {0};
    /* Waitany until one, Testsome/Waitsome for the rest */
    int idx;
    MPI_Status st;
    CHECK_RC(MPI_Waitany(2 * K + 2, r, &idx, &st));
    CHECK(idx >= 1 && idx <= 2 * K && r[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
    seen[idx] = 1;
    done++;
    while (done < 2 * K) {
        int outc, ids[2 * K + 2];
        CHECK_RC(MPI_Testsome(2 * K + 2, r, &outc, ids, MPI_STATUSES_IGNORE));
        CHECK(outc != MPI_UNDEFINED, "Testsome says nothing is active with %d left", 2 * K - done);
        for (int i = 0; i < outc; i++) {
            CHECK(!seen[ids[i]], "index %d completed twice", ids[i]);
            seen[ids[i]] = 1;
        }
        done += outc;
        if (done < 2 * K) {
            CHECK_RC(MPI_Waitsome(2 * K + 2, r, &outc, ids, MPI_STATUSES_IGNORE));
            for (int i = 0; i < outc; i++) seen[ids[i]] = 1;
            done += outc;
        }
    }
    for (int i = 0; i < K; i++) CHECK(in[i] == from * 10 + i, "received %d", in[i]);
    /* all inactive now */
    int outc;
    CHECK_RC(MPI_Waitsome(2 * K + 2, r, &outc, NULL, MPI_STATUSES_IGNORE));
    CHECK(outc == MPI_UNDEFINED, "Waitsome on inactive requests gave %d", outc);
    int flag = 0;
    CHECK_RC(MPI_Testany(2 * K + 2, r, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on inactive requests");
    CHECK_RC(MPI_Testall(2 * K + 2, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "Testall on inactive requests");
    CHECK_RC(MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "Waitany on empty list");
}

static void probes(void) {
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int n = 1000 + rank * 37;
    double *out = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) out[i] = rank + i * 0.5;
    MPI_Request r;
    CHECK_RC(MPI_Isend(out, n, MPI_DOUBLE, to, 40, MPI_COMM_WORLD, &r));
    MPI_Status st;
    CHECK_RC(MPI_Probe(from, 40, MPI_COMM_WORLD, &st));
    int count;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 1000 + from * 37 && st.MPI_SOURCE == from, "probed count %d", count);
    double *in = malloc((size_t)count * sizeof(double));
    CHECK_RC(MPI_Recv(in, count, MPI_DOUBLE, from, 40, MPI_COMM_WORLD, &st));
    for (int i = 0; i < count; i++) CHECK(in[i] == from + i * 0.5, "probed data at %d", i);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int flag = 1;
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "Iprobe found a message that was never sent");
    free(out);
    free(in);
}

static void cancel_and_free(void) {
    int x = 0;
    MPI_Request r;
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Cancel(&r));
    MPI_Status st;
    CHECK_RC(MPI_Wait(&r, &st));
    int flag = 0;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "cancelled receive not reported cancelled");
    /* a matched receive is not cancelled */
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, from, 50, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Send(&rank, 1, MPI_INT, to, 50, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, &st)); /* complete first: then cancel has nothing to do */
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && x == from, "completed receive reported cancelled");
    /* Request_free on an active send: the message still arrives */
    int v = rank + 500;
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, to, 51, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, from, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == from + 500, "freed send delivered %d", x);
}

static void persistent(void) {
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int out = 0, in = -1;
    MPI_Request r[2];
    CHECK_RC(MPI_Recv_init(&in, 1, MPI_INT, from, 60, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Send_init(&out, 1, MPI_INT, to, 60, MPI_COMM_WORLD, &r[1]));
    for (int it = 0; it < 5; it++) {
        out = rank * 100 + it;
        CHECK_RC(MPI_Startall(2, r));
        CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(r[0] != MPI_REQUEST_NULL, "persistent request was released by Waitall");
        CHECK(in == from * 100 + it, "persistent iteration %d got %d", it, in);
    }
    /* an inactive persistent request completes at once with an empty status */
    MPI_Status st;
    CHECK_RC(MPI_Wait(&r[0], &st));
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && n == 0,
          "inactive request: status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    CHECK_RC(MPI_Request_free(&r[0]));
    CHECK_RC(MPI_Request_free(&r[1]));
}

/* The persistent forms of the other modes: synchronous waits for the receive, ready is a
 * send whose receive is posted, buffered copies at every MPI_Start and completes at once. */
static void persistent_modes(void) {
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    enum { N = 60000 };
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    MPI_Request s, r;
    /* synchronous: not complete before the receiver says it has posted nothing yet */
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, go = 1;
        if (rank == 0) {
            out[0] = 41;
            CHECK_RC(MPI_Ssend_init(out, 1, MPI_INT, peer, 80, MPI_COMM_WORLD, &s));
            for (int it = 0; it < 2; it++) {
                CHECK_RC(MPI_Start(&s));
                for (int i = 0; i < 100; i++) {
                    int flag;
                    CHECK_RC(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
                    CHECK(!flag, "Ssend_init's send completed before the receive was posted");
                }
                CHECK_RC(MPI_Send(&go, 1, MPI_INT, peer, 81, MPI_COMM_WORLD));
                CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
            }
            CHECK_RC(MPI_Request_free(&s));
        } else {
            for (int it = 0; it < 2; it++) {
                CHECK_RC(MPI_Recv(&go, 1, MPI_INT, peer, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_RC(MPI_Recv(in, 1, MPI_INT, peer, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(in[0] == 41, "Ssend_init payload %d", in[0]);
            }
        }
    }
    /* ready: the receive is posted (and every rank knows it) before the start */
    CHECK_RC(MPI_Rsend_init(out, 1, MPI_INT, to, 82, MPI_COMM_WORLD, &s));
    for (int it = 0; it < 3; it++) {
        CHECK_RC(MPI_Irecv(in, 1, MPI_INT, from, 82, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD);
        out[0] = rank * 10 + it;
        CHECK_RC(MPI_Start(&s));
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(in[0] == from * 10 + it, "Rsend_init iteration %d got %d", it, in[0]);
    }
    CHECK_RC(MPI_Request_free(&s));
    /* buffered: without a buffer MPI_Start fails and the request stays inactive */
    CHECK_RC(MPI_Bsend_init(out, N, MPI_INT, to, 83, MPI_COMM_WORLD, &s));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERR(MPI_Start(&s), MPI_ERR_BUFFER);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&s, &st));
    CHECK(st.MPI_TAG == MPI_ANY_TAG, "a failed start left the request active");
    int bsize = 2 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    /* every rank sends a large message before any receives: only a local completion (a copy
     * made at MPI_Start) lets the ring go on; the data of each start is the data at the time */
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < N; i++) out[i] = i * 3 + rank + it;
        CHECK_RC(MPI_Start(&s));
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) out[i] = -1;
        CHECK_RC(MPI_Recv(in, N, MPI_INT, from, 83, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(in[i] == i * 3 + from + it, "Bsend_init iteration %d: data at %d is %d", it, i,
                  in[i]);
    }
    CHECK_RC(MPI_Request_free(&s));
    void *det;
    int dsize;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    free(bbuf);
    free(out);
    free(in);
}

static void self_sends(void) {
    int n = 300000;
    int *a = malloc((size_t)n * sizeof(int)), *b = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) a[i] = i ^ rank;
    CHECK_RC(MPI_Send(a, n, MPI_INT, rank, 70, MPI_COMM_WORLD)); /* buffered internally */
    CHECK_RC(MPI_Send(a, 3, MPI_INT, rank, 71, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(b, 3, MPI_INT, rank, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Recv(b, n, MPI_INT, rank, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == (i ^ rank), "self data at %d", i);
    MPI_Request r;
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, 0, 72, MPI_COMM_SELF, &r));
    CHECK_RC(MPI_Ssend(a, n, MPI_INT, 0, 72, MPI_COMM_SELF));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(b[n - 1] == ((n - 1) ^ rank), "COMM_SELF synchronous self send");
    free(a);
    free(b);
}

/* Sends to self whose receive is already posted go straight into the receive buffer:
 * contiguous (MPI_Send and MPI_Isend) and strided on either side, buffered mode, empty,
 * truncated, and the order of two receives that both match. */
static void self_sends_posted(void) {
    int n = 300000;
    int *a = malloc((size_t)n * 2 * sizeof(int)), *b = malloc((size_t)n * 2 * sizeof(int));
    CHECK(a && b, "malloc");
    for (int i = 0; i < 2 * n; i++) a[i] = i ^ rank;
    MPI_Datatype every2;
    CHECK_RC(MPI_Type_vector(n, 1, 2, MPI_INT, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    MPI_Request r[2];
    MPI_Status st;
    int count;
    /* contiguous to contiguous */
    memset(b, 0xff, (size_t)n * 2 * sizeof(int));
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, rank, 80, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Send(a, n, MPI_INT, rank, 80, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r[0], &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n && st.MPI_SOURCE == rank && st.MPI_TAG == 80, "posted self: status");
    for (int i = 0; i < n; i++) CHECK(b[i] == (i ^ rank), "posted self data at %d", i);
    CHECK(b[n] == -1, "posted self: wrote past the message");
    /* the same with MPI_Isend: its request completes too, with the data delivered */
    memset(b, 0xff, (size_t)n * 2 * sizeof(int));
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, rank, 86, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Isend(a + 2, n, MPI_INT, rank, 86, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "posted self Isend: requests");
    for (int i = 0; i < n; i++) CHECK(b[i] == ((i + 2) ^ rank), "posted self Isend data at %d", i);
    CHECK(b[n] == -1, "posted self Isend: wrote past the message");
    /* strided sender, contiguous receiver: the elements in order */
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Isend(a, 1, every2, rank, 81, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == ((2 * i) ^ rank), "strided self data at %d", i);
    /* contiguous sender, strided receiver: the gaps untouched */
    memset(b, 0xff, (size_t)n * 2 * sizeof(int));
    CHECK_RC(MPI_Irecv(b, 1, every2, rank, 82, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Send(a, n, MPI_INT, rank, 82, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) {
        CHECK(b[2 * i] == (i ^ rank), "self into strided at %d", i);
        CHECK(b[2 * i + 1] == -1, "self into strided: gap %d written", i);
    }
    /* buffered mode, into a posted receive */
    int bsz = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *att = malloc((size_t)bsz);
    CHECK(att, "malloc");
    CHECK_RC(MPI_Buffer_attach(att, bsz));
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, rank, 83, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Bsend(a + 1, n, MPI_INT, rank, 83, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == ((i + 1) ^ rank), "buffered self data at %d", i);
    void *det;
    CHECK_RC(MPI_Buffer_detach(&det, &bsz));
    free(att);
    /* empty */
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, rank, 84, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Send(NULL, 0, MPI_INT, rank, 84, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r[0], &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "empty self send: count %d", count);
    /* two posted receives that both match take the sends in order */
    CHECK_RC(MPI_Irecv(b, n, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Irecv(b + n, n, MPI_INT, MPI_ANY_SOURCE, 85, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Send(a, 5, MPI_INT, rank, 85, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(a + n, n, MPI_INT, rank, 85, MPI_COMM_WORLD));
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(b[4] == (4 ^ rank) && b[n + n - 1] == ((2 * n - 1) ^ rank), "posted self order");
    /* truncated: the receive's error, the data up to its end */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    memset(b, 0xff, (size_t)n * 2 * sizeof(int));
    CHECK_RC(MPI_Irecv(b, n / 2, MPI_INT, rank, 86, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Send(a, n, MPI_INT, rank, 86, MPI_COMM_WORLD));
    CHECK_ERR(MPI_Wait(&r[0], &st), MPI_ERR_TRUNCATE);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n / 2, "truncated self count %d", count);
    CHECK(b[n / 2 - 1] == ((n / 2 - 1) ^ rank) && b[n / 2] == -1, "truncated self data");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&every2);
    free(a);
    free(b);
}

/* Far more small messages than a queue holds, with the receiver not yet receiving: the
 * sender's requests queue up and drain as the receiver catches up, in order. */
static void flood(void) {
    if (size < 2 || rank > 1) return;
    enum { N = 5000 };
    if (rank == 0) {
        MPI_Request *r = malloc(N * sizeof(MPI_Request));
        int *v = malloc(N * sizeof(int));
        for (int i = 0; i < N; i++) {
            v[i] = i;
            CHECK_RC(MPI_Isend(&v[i], 1, MPI_INT, 1, 80, MPI_COMM_WORLD, &r[i]));
        }
        int big[2000];
        memset(big, 7, sizeof(big));
        for (int i = 0; i < 50; i++) CHECK_RC(MPI_Send(big, 2000, MPI_INT, 1, 81, MPI_COMM_WORLD));
        CHECK_RC(MPI_Waitall(N, r, MPI_STATUSES_IGNORE));
        free(r);
        free(v);
    } else {
        int big[2000];
        for (int i = 0; i < 50; i++)
            CHECK_RC(MPI_Recv(big, 2000, MPI_INT, 0, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) {
            int x;
            CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == i, "flood message %d arrived as %d", i, x);
        }
    }
}

/* A large send whose sender stays away from MPI for a while after starting it: the receiver
 * must be able to do the whole copy alone; then one sent with a blocking MPI_Send. */
/* A token round the ranks, each waiting for it by polling (MPI_Iprobe, MPI_Test, MPI_Testany,
 * MPI_Testsome, MPI_Testall, MPI_Request_get_status in turn), small and large: the polling
 * calls find nothing many times (and, with more ranks than cores, yield) and must still report
 * the message, and the right one, once it is there. */
static void polling_ring(void) {
    if (size < 2) return;
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    enum { BIG = 50000 };
    int *tok = malloc(BIG * sizeof(int));
    for (int round = 0; round < 12; round++) {
        int n = round % 2 ? BIG : 1, how = round / 2;
        if (rank == 0) {
            for (int i = 0; i < n; i++) tok[i] = round * 1000 + i;
            CHECK_RC(MPI_Send(tok, n, MPI_INT, to, 95, MPI_COMM_WORLD));
        }
        memset(tok, 0, (size_t)n * sizeof(int));
        int flag = 0, idx = -1, out = 0;
        MPI_Request r = MPI_REQUEST_NULL;
        if (how == 0) {
            MPI_Status st;
            while (!flag) {
                CHECK_RC(MPI_Iprobe(from, 95, MPI_COMM_WORLD, &flag, &st));
            }
            int cnt;
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == n && st.MPI_SOURCE == from, "Iprobe found %d ints from %d", cnt,
                  st.MPI_SOURCE);
            CHECK_RC(MPI_Recv(tok, n, MPI_INT, from, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(MPI_Irecv(tok, n, MPI_INT, from, 95, MPI_COMM_WORLD, &r));
            while (!flag) {
                if (how == 1) CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                if (how == 2) CHECK_RC(MPI_Testany(1, &r, &idx, &flag, MPI_STATUS_IGNORE));
                if (how == 3) {
                    CHECK_RC(MPI_Testsome(1, &r, &out, &idx, MPI_STATUSES_IGNORE));
                    flag = out == 1;
                }
                if (how == 4) CHECK_RC(MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE));
                if (how == 5) {
                    CHECK_RC(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
                    if (flag) CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
                }
            }
            CHECK(r == MPI_REQUEST_NULL, "polling way %d left the request", how);
        }
        for (int i = 0; i < n; i++)
            CHECK(tok[i] == round * 1000 + i, "polling way %d, round %d: element %d is %d", how,
                  round, i, tok[i]);
        if (rank != 0) CHECK_RC(MPI_Send(tok, n, MPI_INT, to, 95, MPI_COMM_WORLD));
    }
    free(tok);
}

static void busy_sender(void) {
    if (size < 2 || rank > 1) return;
    int n = 1 << 20;
    int *buf = malloc((size_t)n * sizeof(int));
    if (rank == 0) {
        for (int i = 0; i < n; i++) buf[i] = i * 3;
        MPI_Request r;
        CHECK_RC(MPI_Isend(buf, n, MPI_INT, 1, 90, MPI_COMM_WORLD, &r));
        usleep(50000);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Send(buf, n, MPI_INT, 1, 91, MPI_COMM_WORLD));
    } else {
        CHECK_RC(MPI_Recv(buf, n, MPI_INT, 0, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) CHECK(buf[i] == i * 3, "busy-sender data at %d", i);
        memset(buf, 0, (size_t)n * sizeof(int));
        CHECK_RC(MPI_Recv(buf, n, MPI_INT, 0, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) CHECK(buf[i] == i * 3, "second large message at %d", i);
    }
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    wildcards();
    proc_null();
    ordering();
    truncation();
    zero_counts();
    sync_mode();
    ready_and_buffered();
    replace_ring();
    completion_families();
    probes();
    cancel_and_free();
    persistent();
    persistent_modes();
    polling_ring();
    self_sends();
    self_sends_posted();
    flood();
    busy_sender();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
