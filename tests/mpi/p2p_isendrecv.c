/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4): a shift round a ring, small and past the
 * eager limit, with the receive's status (source, tag, count); several in flight completed in
 * reverse order; the replace form with a strided type, whose send must carry the data from
 * before the call; MPI_PROC_NULL ends; MPI_ANY_SOURCE and MPI_ANY_TAG; progress while the
 * process waits elsewhere (its partner receives only once its own Isendrecv has completed);
 * a truncated receive; freeing and cancelling the request; bad arguments; and (argument
 * "deadlock") a wait that the deadlock watch must fail. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#define BIG 100000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int rank, n;
    MPI_Comm_rank(w, &rank);
    MPI_Comm_size(w, &n);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    int *sb = malloc(sizeof(int) * BIG), *rb = malloc(sizeof(int) * BIG);
    MPI_Request rq[3];
    MPI_Status st;

    /* a shift round the ring: small, then past the eager limit */
    for (int big = 0; big < 2; big++) {
        int k = big ? BIG : 5;
        for (int i = 0; i < k; i++) sb[i] = rank * 1000 + i, rb[i] = -1;
        CHECK_RC(MPI_Isendrecv(sb, k, MPI_INT, right, 10 + big, rb, k, MPI_INT, left, 10 + big, w,
                               &rq[0]));
        CHECK_RC(MPI_Wait(&rq[0], &st));
        CHECK(rq[0] == MPI_REQUEST_NULL, "request not released");
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 10 + big && cnt == k,
              "status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        for (int i = 0; i < k; i++)
            CHECK(rb[i] == left * 1000 + i, "shift of %d: [%d] = %d", k, i, rb[i]);
    }

    /* three in flight, completed in reverse order; the last by MPI_ANY_SOURCE / MPI_ANY_TAG */
    int a[3], b[3] = {-1, -1, -1};
    for (int j = 0; j < 3; j++) a[j] = rank + 100 * j;
    CHECK_RC(MPI_Isendrecv(&a[0], 1, MPI_INT, right, 20, &b[0], 1, MPI_INT, left, 20, w, &rq[0]));
    CHECK_RC(MPI_Isendrecv(&a[1], 1, MPI_INT, left, 21, &b[1], 1, MPI_INT, right, 21, w, &rq[1]));
    CHECK_RC(MPI_Isendrecv(&a[2], 1, MPI_INT, right, 22, &b[2], 1, MPI_INT, MPI_ANY_SOURCE,
                           MPI_ANY_TAG, w, &rq[2]));
    for (int j = 2; j >= 0; j--) {
        CHECK_RC(MPI_Wait(&rq[j], &st));
        if (j == 2)
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 22, "any: source %d tag %d", st.MPI_SOURCE,
                  st.MPI_TAG);
    }
    CHECK(b[0] == left && b[1] == right + 100 && b[2] == left + 200, "in flight: %d %d %d", b[0],
          b[1], b[2]);

    /* the replace form with a strided type: every other int of 2k */
    MPI_Datatype every2;
    CHECK_RC(MPI_Type_vector(50, 1, 2, MPI_INT, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    for (int i = 0; i < 100; i++) sb[i] = i % 2 ? -7 : rank * 1000 + i;
    CHECK_RC(MPI_Isendrecv_replace(sb, 1, every2, right, 30, left, 30, w, &rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], &st));
    for (int i = 0; i < 100; i++) {
        int want = i % 2 ? -7 : left * 1000 + i;
        CHECK(sb[i] == want, "replace [%d] = %d, expected %d", i, sb[i], want);
    }
    MPI_Type_free(&every2);

    /* MPI_PROC_NULL on both ends: complete at once, receive buffer untouched */
    b[0] = 42;
    CHECK_RC(MPI_Isendrecv(&a[0], 1, MPI_INT, MPI_PROC_NULL, 1, &b[0], 1, MPI_INT, MPI_PROC_NULL, 1,
                           w, &rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], &st));
    CHECK(b[0] == 42 && st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL: %d from %d", b[0],
          st.MPI_SOURCE);

    /* progress elsewhere: rank 0's partner (rank 1) receives in MPI_Recv the message rank 0
     * sends once its Isendrecv with rank 1 has completed, and meanwhile rank 0 waits in an
     * MPI_Recv from rank 1 that rank 1 sends only after its own Isendrecv completed */
    if (n >= 2 && rank < 2) {
        int other = 1 - rank, x = rank + 5, y = -1;
        for (int i = 0; i < BIG; i++) sb[i] = rank + i;
        CHECK_RC(
            MPI_Isendrecv(sb, BIG, MPI_INT, other, 40, rb, BIG, MPI_INT, other, 40, w, &rq[0]));
        if (rank == 0) {
            CHECK_RC(MPI_Recv(&y, 1, MPI_INT, 1, 41, w, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Send(&x, 1, MPI_INT, 0, 41, w));
        }
        CHECK(rb[BIG - 1] == other + BIG - 1, "progress: %d", rb[BIG - 1]);
        if (rank == 0) CHECK(y == 6, "progress: got %d", y);
    }
    CHECK_RC(MPI_Barrier(w));

    /* a receive too small: MPI_ERR_TRUNCATE at completion */
    int got[2];
    CHECK_RC(MPI_Isendrecv(sb, 3, MPI_INT, right, 50, got, 2, MPI_INT, left, 50, w, &rq[0]));
    int rc = MPI_Wait(&rq[0], &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated: class %d", cls);

    /* freed while active: the exchange still happens (the partner's data arrives) */
    int fin = -1, val = rank;
    CHECK_RC(MPI_Isendrecv(&val, 1, MPI_INT, right, 60, &fin, 1, MPI_INT, left, 60, w, &rq[0]));
    CHECK_RC(MPI_Request_free(&rq[0]));
    CHECK(rq[0] == MPI_REQUEST_NULL, "freed request not NULL");
    /* a cancel does nothing (its send is never cancelled) */
    int c1 = -1;
    CHECK_RC(MPI_Isendrecv(&val, 1, MPI_INT, right, 61, &c1, 1, MPI_INT, left, 61, w, &rq[0]));
    CHECK_RC(MPI_Cancel(&rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], &st));
    int flag = 1;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && c1 == left, "cancelled Isendrecv: flag %d value %d", flag, c1);
    CHECK_RC(MPI_Barrier(w));
    /* the freed one's receive still takes the first message on its tag: a second exchange on
     * the same tags, with other values, gets the second */
    int after = -1, val2 = rank + 1000;
    CHECK_RC(MPI_Sendrecv(&val2, 1, MPI_INT, right, 60, &after, 1, MPI_INT, left, 60, w, &st));
    CHECK(after == left + 1000, "after a freed Isendrecv: %d", after);

    /* bad arguments */
    CHECK_ERR(MPI_Isendrecv(&val, 1, MPI_INT, n, 1, &fin, 1, MPI_INT, left, 1, w, &rq[0]),
              MPI_ERR_RANK);
    CHECK_ERR(MPI_Isendrecv(&val, 1, MPI_INT, right, -5, &fin, 1, MPI_INT, left, 1, w, &rq[0]),
              MPI_ERR_TAG);
    CHECK_ERR(MPI_Isendrecv(&val, -1, MPI_INT, right, 1, &fin, 1, MPI_INT, left, 1, w, &rq[0]),
              MPI_ERR_COUNT);
    CHECK_ERR(MPI_Isendrecv(&val, 1, MPI_INT, right, 1, &fin, 1, MPI_INT, left, 1, w, NULL),
              MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Isendrecv_replace(&val, 1, MPI_DATATYPE_NULL, right, 1, left, 1, w, &rq[0]),
              MPI_ERR_TYPE);
    CHECK_ERR(MPI_Isendrecv_replace(&val, 1, MPI_INT, right, 1, n + 3, 1, w, &rq[0]), MPI_ERR_RANK);
    CHECK_ERR(
        MPI_Isendrecv(&val, 1, MPI_INT, right, 1, &fin, 1, MPI_INT, left, 1, MPI_COMM_NULL, &rq[0]),
        MPI_ERR_COMM);
    /* with the argument "deadlock", last, on two ranks: a receive nobody will match. The
     * deadlock watch fails the wait on both ranks with MPI_ERR_OTHER, as for MPI_Sendrecv (it
     * ended the job before) */
    if (n == 2 && argc > 1 && strcmp(argv[1], "deadlock") == 0) {
        int z = 0, got2 = -1;
        CHECK_RC(MPI_Isendrecv(&z, 1, MPI_INT, right, 70, &got2, 1, MPI_INT, left, 71, w, &rq[0]));
        CHECK_ERR(MPI_Wait(&rq[0], &st), MPI_ERR_OTHER);
    }
    free(sb), free(rb);
    MPI_Finalize();
    return 0;
}
