/* MPI_Comm_idup: the new communicator works and has an ID of its own, the same on every rank;
 * a member's call completes even when its master calls only later, after waiting for that
 * member (a blocking dup there would deadlock); several calls in flight on one parent,
 * completed in any order, and a blocking MPI_Comm_dup after them, keep the order of the calls;
 * attributes are copied, and a copy callback that fails on one rank leaves the ranks' later
 * creations in step; the child's error handler is the parent's at the call;
 * intercommunicators; MPI_Comm_idup_with_info; the bad arguments. */
#include "comm_util.h"

static int copies;
static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c, (void)key, (void)extra;
    copies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int fail_on_1(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)key, (void)extra;
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    (void)c;
    if (r == 1) return MPI_ERR_OTHER;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void check_dup(MPI_Comm parent, MPI_Comm c) {
    int res;
    CHECK(c != MPI_COMM_NULL, "no communicator");
    CHECK_RC(MPI_Comm_compare(parent, c, &res));
    CHECK(res == MPI_CONGRUENT, "compare(parent, idup) = %d", res);
    CHECK(cu_id(c) != cu_id(parent), "the idup has its parent's ID");
    cu_check_same_id(c);
    cu_check_works(c, 3);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm p, c, more[4], b;
    MPI_Request rq, rqs[4];

    /* the simple case */
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &c, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_WORLD, c);
    MPI_Comm_free(&c);

    /* the master (rank 0 of a fresh parent, whose members hold no reservation yet) calls only
     * once every member has called and told it so */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &p));
    MPI_Comm_set_errhandler(p, MPI_ERRORS_RETURN);
    int token = 1;
    if (rank == 0) {
        for (int q = 1; q < n; q++)
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, q, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Comm_idup(p, &c, &rq));
    } else {
        CHECK_RC(MPI_Comm_idup(p, &c, &rq));
        int flag = 1;
        CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag && c == MPI_COMM_NULL, "completed before the master called");
        /* a pending nonblocking call's request cannot be freed or cancelled */
        CHECK_ERR(MPI_Request_free(&rq), MPI_ERR_REQUEST);
        CHECK_ERR(MPI_Cancel(&rq), MPI_ERR_REQUEST);
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(p, c);
    MPI_Comm_free(&c);

    /* four in flight, completed last first; then, with two more in flight, a blocking dup:
     * each rank's k-th call makes the same communicator everywhere */
    for (int k = 0; k < 4; k++) CHECK_RC(MPI_Comm_idup(p, &more[k], &rqs[k]));
    for (int k = 3; k >= 0; k--) CHECK_RC(MPI_Wait(&rqs[k], MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++) {
        check_dup(p, more[k]);
        for (int j = 0; j < k; j++) CHECK(cu_id(more[j]) != cu_id(more[k]), "IDs %d, %d", j, k);
    }
    for (int k = 0; k < 4; k++) MPI_Comm_free(&more[k]);
    if (rank == 0) {
        for (int q = 1; q < n; q++)
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, q, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Comm_idup(p, &more[0], &rqs[0]));
        CHECK_RC(MPI_Comm_idup(p, &more[1], &rqs[1]));
        CHECK_RC(MPI_Comm_dup(p, &b));
    } else {
        CHECK_RC(MPI_Comm_idup(p, &more[0], &rqs[0]));
        CHECK_RC(MPI_Comm_idup(p, &more[1], &rqs[1]));
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
        CHECK_RC(MPI_Comm_dup(p, &b)); /* completes the two first */
        int flag = 0;
        CHECK_RC(MPI_Testall(2, rqs, &flag, MPI_STATUSES_IGNORE));
        CHECK(flag, "the idups in flight did not complete before the blocking dup");
    }
    if (rank == 0) CHECK_RC(MPI_Waitall(2, rqs, MPI_STATUSES_IGNORE));
    check_dup(p, more[0]);
    check_dup(p, more[1]);
    check_dup(p, b);
    MPI_Comm_free(&more[0]);
    MPI_Comm_free(&more[1]);
    MPI_Comm_free(&b);

    /* attributes: copied at the call, through the copy callback */
    int key;
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    CHECK_RC(MPI_Comm_set_attr(p, key, (void *)10));
    CHECK_RC(MPI_Comm_idup(p, &c, &rq));
    CHECK(copies == 1, "copy callback called %d times at the call", copies);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    void *v = NULL;
    int flag = 0;
    CHECK_RC(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECK(flag && v == (void *)11, "attribute on the idup: %p", v);
    MPI_Comm_free(&c);
    MPI_Comm_free_keyval(&key);

    /* the child takes the parent's error handler at the call, even when a member's call
     * completes later, after the parent's handler changed */
    MPI_Comm q;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &q));
    CHECK_RC(MPI_Comm_set_errhandler(q, MPI_ERRORS_ARE_FATAL));
    if (rank == 0) {
        for (int k = 1; k < n; k++)
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, k, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Comm_idup(q, &c, &rq));
    } else {
        CHECK_RC(MPI_Comm_idup(q, &c, &rq));
        CHECK_RC(MPI_Comm_set_errhandler(q, MPI_ERRORS_RETURN));
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "the idup took the parent's later error handler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&c);
    MPI_Comm_free(&q);

    /* a copy callback that fails on one rank: its call fails, the others' succeed, and the
     * ranks' next creations on the parent still agree (the failed call took its round) */
    if (n > 1) {
        CHECK_RC(MPI_Comm_create_keyval(fail_on_1, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        CHECK_RC(MPI_Comm_set_attr(p, key, (void *)1));
        int rc = MPI_Comm_idup(p, &c, &rq);
        if (rank == 1) {
            CHECK(rc != MPI_SUCCESS, "the failing copy callback's idup succeeded");
        } else {
            CHECK_RC(rc);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MPI_Comm_free(&c);
        }
        CHECK_RC(MPI_Comm_delete_attr(p, key));
        MPI_Comm_free_keyval(&key);
        CHECK_RC(MPI_Comm_dup(p, &b));
        cu_check_same_id(b);
        cu_check_works(b, 4);
        MPI_Comm_free(&b);
    }

    /* with info */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    CHECK_RC(MPI_Comm_idup_with_info(p, info, &c, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(p, c);
    MPI_Comm_free(&c);
    MPI_Info_free(&info);

    /* an intercommunicator */
    if (n > 1) {
        MPI_Comm local, ic, icd;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank < n / 2, rank, &local));
        CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank < n / 2 ? n / 2 : 0, 4, &ic));
        CHECK_RC(MPI_Comm_idup(ic, &icd, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        int rs, res;
        MPI_Comm_remote_size(icd, &rs);
        CHECK_RC(MPI_Comm_compare(ic, icd, &res));
        CHECK(res == MPI_CONGRUENT && rs == (rank < n / 2 ? n - n / 2 : n / 2), "inter idup");
        cu_check_id_over(icd, MPI_COMM_WORLD);
        MPI_Comm_free(&icd);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }

    /* bad arguments */
    CHECK_ERR(MPI_Comm_idup(MPI_COMM_NULL, &c, &rq), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_idup(p, NULL, &rq), MPI_ERR_ARG);
    CHECK_ERR(MPI_Comm_idup(p, &c, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Comm_idup_with_info(p, (MPI_Info)12345, &c, &rq), MPI_ERR_INFO);

    MPI_Comm_free(&p);
    cu_expect_clean();
    MPI_Finalize();
    return 0;
}
