/* Datatype life cycle: a type freed while types built from it or pending requests still use
 * it keeps working for them (reference counts), while its own handle is rejected;
 * Type_get_contents hands back usable, independently freeable handles; dup copies the
 * committed state; thousands of create/free cycles reuse handles. Large non-contiguous
 * messages are used so that the receiver reads the sender's layout while its handle is
 * already freed. */
#include "testutil.h"

static int rank, size;
static MPI_Status sts[2]; /* (MPI_STATUSES_IGNORE trips GCC's -Wstringop-overflow) */

#define N 150000 /* doubles in a column: 1.2 MB, the rendezvous path */

static MPI_Datatype column(void) {
    MPI_Datatype t;
    CHECK_RC(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &t));
    CHECK_RC(MPI_Type_commit(&t));
    return t;
}

static void fill(double *m, int who) {
    for (int i = 0; i < 2 * N; i++) m[i] = i % 2 ? -1.0 : who * 1e6 + i / 2;
}

static void check(const double *m, int who, const char *what) {
    for (int i = 0; i < 2 * N; i++) {
        double want = i % 2 ? -2.0 : who * 1e6 + i / 2;
        CHECK(m[i] == want, "%s: m[%d] = %g, expected %g", what, i, m[i], want);
    }
}

static void clear(double *m) {
    for (int i = 0; i < 2 * N; i++) m[i] = -2.0;
}

/* Recursively decode a type and check every returned handle works, then free them. */
static int decode(MPI_Datatype t, int depth) {
    int ni, na, nt, comb;
    CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED) return 1;
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    CHECK_RC(MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types));
    int leaves = 0;
    for (int i = 0; i < nt; i++) {
        leaves += decode(types[i], depth + 1);
        int d, c;
        MPI_Type_get_envelope(types[i], &d, &d, &d, &c);
        if (c != MPI_COMBINER_NAMED) CHECK_RC(MPI_Type_free(&types[i]));
    }
    free(ints);
    free(addrs);
    free(types);
    return leaves;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double *s = malloc(sizeof(double) * 2 * N), *r = malloc(sizeof(double) * 2 * N);
    CHECK(s && r, "malloc");

    /* 1. free the send type right after Isend, the receive type right after Irecv */
    for (int round = 0; round < 2; round++) {
        MPI_Datatype ts = column(), tr = column();
        MPI_Request rq[2];
        fill(s, rank);
        clear(r);
        if (round == 0) { /* receive posted first */
            CHECK_RC(MPI_Irecv(r, 1, tr, from, 1, MPI_COMM_WORLD, &rq[0]));
            CHECK_RC(MPI_Type_free(&tr));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Isend(s, 1, ts, to, 1, MPI_COMM_WORLD, &rq[1]));
            CHECK_RC(MPI_Type_free(&ts));
        } else { /* send first: its RTS waits unexpected with the freed type's layout */
            CHECK_RC(MPI_Isend(s, 1, ts, to, 1, MPI_COMM_WORLD, &rq[1]));
            CHECK_RC(MPI_Type_free(&ts));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Irecv(r, 1, tr, from, 1, MPI_COMM_WORLD, &rq[0]));
            CHECK_RC(MPI_Type_free(&tr));
        }
        /* new types created meanwhile must not disturb the freed ones */
        MPI_Datatype junk[8];
        for (int i = 0; i < 8; i++) MPI_Type_vector(3, 1, 7, MPI_INT, &junk[i]);
        CHECK_RC(MPI_Waitall(2, rq, sts));
        for (int i = 0; i < 8; i++) MPI_Type_free(&junk[i]);
        check(r, from, round ? "type freed after Isend (unexpected)" : "type freed after Irecv");
    }

    /* 2. persistent requests outlive the type they were created with */
    {
        MPI_Datatype ts = column(), tr = column();
        MPI_Request rq[2];
        CHECK_RC(MPI_Recv_init(r, 1, tr, from, 2, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Send_init(s, 1, ts, to, 2, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Type_free(&ts));
        CHECK_RC(MPI_Type_free(&tr));
        for (int it = 0; it < 3; it++) {
            fill(s, rank + it);
            clear(r);
            CHECK_RC(MPI_Startall(2, rq));
            CHECK_RC(MPI_Waitall(2, rq, sts));
            check(r, from + it, "persistent request with a freed type");
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
    }

    /* 3. a type built from a freed type; its contents give back a usable copy */
    {
        MPI_Datatype inner, outer, got[1];
        CHECK_RC(MPI_Type_vector(N / 2, 1, 2, MPI_DOUBLE, &inner)); /* not committed */
        CHECK_RC(MPI_Type_contiguous(2, inner, &outer));
        CHECK_RC(MPI_Type_free(&inner));
        CHECK_RC(MPI_Type_commit(&outer));
        fill(s, rank);
        clear(r);
        CHECK_RC(MPI_Sendrecv(s, 1, outer, to, 3, r, 1, outer, from, 3, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        /* contiguous(2, vector(N/2,1,2)): the vector's extent is N-1 doubles, so the second
         * copy covers the odd places from N-1 on */
        for (int i = 0; i < 2 * N; i++) {
            int in = (i < N && i % 2 == 0) || (i >= N - 1 && i <= 2 * N - 3 && i % 2);
            double want = !in ? -2.0 : i % 2 ? -1.0 : from * 1e6 + i / 2;
            CHECK(r[i] == want, "type built from a freed type: r[%d] = %g, expected %g", i, r[i],
                  want);
        }
        int ints[1];
        CHECK_RC(MPI_Type_get_contents(outer, 1, 0, 1, ints, NULL, got));
        CHECK(ints[0] == 2, "contents of contiguous");
        int sz;
        CHECK_RC(MPI_Type_size(got[0], &sz));
        CHECK(sz == N / 2 * 8, "returned inner type size %d", sz);
        /* the copy has the committed state of the original (uncommitted): commit, use it */
        CHECK_ERR(MPI_Send(s, 1, got[0], to, 4, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_RC(MPI_Type_commit(&got[0]));
        clear(r);
        fill(s, rank);
        CHECK_RC(MPI_Sendrecv(s, 1, got[0], to, 4, r, 1, got[0], from, 4, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(r[i] == (i % 2 ? -2.0 : from * 1e6 + i / 2), "inner copy: r[%d] = %g", i, r[i]);
        CHECK_RC(MPI_Type_free(&got[0]));
        /* freeing the returned copy did not hurt the outer type */
        CHECK_RC(MPI_Type_size(outer, &sz));
        CHECK(sz == N * 8, "outer type after its contents were freed");
        CHECK_RC(MPI_Type_free(&outer));
    }

    /* 4. dup keeps the committed state; a freed handle is rejected even while in use */
    {
        MPI_Datatype a = column(), b, c, u, ud;
        CHECK_RC(MPI_Type_dup(a, &b));
        fill(s, rank);
        clear(r);
        CHECK_RC(MPI_Sendrecv(s, 1, b, to, 5, r, 1, b, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(r, from, "dup of a committed type");
        CHECK_RC(MPI_Type_contiguous(4, MPI_INT, &u));
        CHECK_RC(MPI_Type_dup(u, &ud));
        CHECK_ERR(MPI_Send(s, 1, ud, to, 6, MPI_COMM_WORLD), MPI_ERR_TYPE);
        MPI_Type_free(&ud);
        MPI_Type_free(&u);
        CHECK_RC(MPI_Type_contiguous(1, a, &c));
        MPI_Datatype stale = a;
        CHECK_RC(MPI_Type_free(&a));
        int sz;
        CHECK_ERR(MPI_Type_size(stale, &sz), MPI_ERR_TYPE);
        CHECK_ERR(MPI_Send(s, 1, stale, to, 6, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_RC(MPI_Type_free(&c));
        CHECK_RC(MPI_Type_free(&b));
    }

    /* 5. a deep tree decoded all the way down, with its inner types freed first */
    {
        MPI_Datatype v, st, rs, sub, top;
        MPI_Type_vector(3, 2, 4, MPI_INT, &v);
        MPI_Type_create_struct(3, (int[]){1, 2, 1}, (MPI_Aint[]){0, 64, 128},
                               (MPI_Datatype[]){v, MPI_DOUBLE, MPI_CHAR}, &st);
        MPI_Type_create_resized(st, 0, 256, &rs);
        MPI_Type_create_subarray(2, (int[]){4, 4}, (int[]){2, 2}, (int[]){1, 1}, MPI_ORDER_C, rs,
                                 &sub);
        MPI_Type_dup(sub, &top);
        MPI_Type_free(&v);
        MPI_Type_free(&st);
        MPI_Type_free(&rs);
        MPI_Type_free(&sub);
        int leaves = decode(top, 0);
        CHECK(leaves == 3, "decoded %d predefined leaves", leaves); /* INT, DOUBLE, CHAR */
        MPI_Type_commit(&top);
        int sz;
        MPI_Type_size(top, &sz);
        CHECK(sz == 4 * (6 * 4 + 16 + 1), "size of the tree %d", sz);
        MPI_Type_free(&top);
    }

    /* 6. many create/free cycles: handles are reused, nothing runs out */
    for (int i = 0; i < 20000; i++) {
        MPI_Datatype a, b;
        CHECK_RC(MPI_Type_vector(4, 1, 3, MPI_INT, &a));
        CHECK_RC(MPI_Type_contiguous(2, a, &b));
        CHECK_RC(MPI_Type_free(&a));
        CHECK_RC(MPI_Type_commit(&b));
        CHECK_RC(MPI_Type_free(&b));
    }

    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
