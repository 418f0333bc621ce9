/* A deadlock: every rank waits in an MPI call that no other rank's call will complete.
 * mpiexec's watch finds it (COHORT_DEADLOCK_MS) and the waits fail with MPI_ERR_OTHER naming
 * the deadlock and what this rank waits for. Under MPI_ERRORS_RETURN the program then goes on:
 * later calls must work as usual, with nothing failed that could complete. And a job that is
 * merely slow (a rank outside MPI for longer than the watch's window) is not a deadlock.
 * One case comes from a refused call: a rank that rejects a collective's arguments and then
 * waits for a peer that is still inside that collective.
 *
 * Argument: the case (a name from `main` below). */
#include "testutil.h"

/* rc must be MPI_ERR_OTHER (or `cls`) with a message that names the deadlock and `what`. */
static void check_deadlock(int rc, int cls, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int c = tu_error(rc, msg);
    CHECK(c == cls, "expected class %d, got rc %d class %d (%s)", cls, rc, c, msg);
    if (cls == MPI_ERR_OTHER)
        CHECK(strstr(msg, "deadlock") && strstr(msg, what), "message lacks '%s': %s", what, msg);
}

/* After the failed calls: a ring of messages around MPI_COMM_WORLD and a barrier, which
 * must go through. */
static void recover(int me, int np) {
    int v = -1, next = (me + 1) % np, prev = (me + np - 1) % np;
    CHECK_RC(MPI_Sendrecv(&me, 1, MPI_INT, next, 9, &v, 1, MPI_INT, prev, 9, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK(v == prev, "ring after the deadlock: got %d from rank %d", v, prev);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(w, &me);
    MPI_Comm_size(w, &np);
    CHECK(argc == 2, "usage: deadlock CASE");
    const char *k = argv[1];
    CHECK(np >= 2 || !strcmp(k, "self"), "case %s needs at least 2 ranks", k);
    int next = (me + 1) % np, v = -1;
    char what[64];

    if (!strcmp(k, "recv")) { /* every rank receives from the next, none sends */
        snprintf(what, sizeof(what), "receive from rank %d (tag 3)", next);
        check_deadlock(MPI_Recv(&v, 1, MPI_INT, next, 3, w, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                       what);
        recover(me, np);
    } else if (!strcmp(k, "probe")) {
        check_deadlock(MPI_Probe(MPI_ANY_SOURCE, 4, w, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                       "probe for a message from any source (tag 4)");
        recover(me, np);
    } else if (!strcmp(k, "waitall")) { /* both requests of the call fail */
        MPI_Request r[2];
        MPI_Status st[2];
        int x[2];
        for (int i = 0; i < 2; i++) CHECK_RC(MPI_Irecv(&x[i], 1, MPI_INT, next, i, w, &r[i]));
        check_deadlock(MPI_Waitall(2, r, st), MPI_ERR_IN_STATUS, "");
        for (int i = 0; i < 2; i++) {
            int c = -1;
            MPI_Error_class(st[i].MPI_ERROR, &c);
            CHECK(c == MPI_ERR_OTHER, "request %d: class %d", i, c);
            CHECK(r[i] == MPI_REQUEST_NULL, "request %d is not freed", i);
        }
        recover(me, np);
    } else if (!strcmp(k, "coll")) {
        /* rank 0 enters a barrier on a communicator of its own making; the others wait for a
         * message from it on MPI_COMM_WORLD */
        MPI_Comm d;
        CHECK_RC(MPI_Comm_dup(w, &d));
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        MPI_Comm_set_name(d, "dup");
        if (me == 0)
            check_deadlock(MPI_Barrier(d), MPI_ERR_OTHER, "collective call 1 on dup: barrier");
        else
            check_deadlock(MPI_Recv(&v, 1, MPI_INT, 0, 5, w, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                           "receive from rank 0 (tag 5)");
        recover(me, np);
        CHECK_RC(MPI_Comm_free(&d));
    } else if (!strcmp(k, "nbc")) {
        /* rank 0 waits for a nonblocking broadcast that its root, rank 1, never starts: rank 1
         * (and the others) wait for a message from rank 0 instead. First by messages (a
         * communicator with no segment yet), then through the shared buffers (a barrier set
         * it up), where the failed call leaves the communicator broken at rank 0 */
        for (int shm = 0; shm < 2; shm++) {
            MPI_Comm d;
            CHECK_RC(MPI_Comm_dup(w, &d));
            MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
            MPI_Comm_set_name(d, shm ? "shm" : "p2p");
            if (shm) CHECK_RC(MPI_Barrier(d));
            if (me == 0) {
                int x[4] = {0};
                MPI_Request r;
                CHECK_RC(MPI_Ibcast(x, 4, MPI_INT, 1, d, &r));
                snprintf(what, sizeof(what), "nonblocking collective call 1 on %s: bcast",
                         shm ? "shm" : "p2p");
                check_deadlock(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OTHER, what);
                CHECK(r == MPI_REQUEST_NULL, "the failed request is not freed");
                if (shm) /* at once, without the others */
                    check_deadlock(MPI_Barrier(d), MPI_ERR_OTHER, "an earlier collective");
            } else {
                check_deadlock(MPI_Recv(&v, 1, MPI_INT, 0, 5, w, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                               "receive from rank 0 (tag 5)");
            }
            recover(me, np);
            CHECK_RC(MPI_Comm_free(&d));
        }
    } else if (!strcmp(k, "refuse")) {
        /* rank 1 refuses an allreduce for its own arguments and then waits for a message
         * that rank 0, still in the allreduce, will not send */
        MPI_Comm d;
        CHECK_RC(MPI_Comm_dup(w, &d));
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        int x = 1, y = 0;
        if (me == 1) {
            check_deadlock(MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, d), MPI_ERR_COUNT, "");
            check_deadlock(MPI_Recv(&v, 1, MPI_INT, 0, 8, w, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                           "receive from rank 0 (tag 8)");
        } else {
            check_deadlock(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d), MPI_ERR_OTHER,
                           "allreduce (MPI_SUM, 4 bytes)");
        }
        recover(me, np);
        CHECK_RC(MPI_Comm_free(&d));
    } else if (!strcmp(k, "self")) {
        /* each rank waits for a message from itself that it never sent: run without mpiexec,
         * the process watches itself */
        check_deadlock(MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE),
                       MPI_ERR_OTHER, "receive from rank 0 (tag 2) on MPI_COMM_SELF");
        CHECK_RC(MPI_Sendrecv(&me, 1, MPI_INT, 0, 2, &v, 1, MPI_INT, 0, 2, MPI_COMM_SELF,
                              MPI_STATUS_IGNORE));
        CHECK(v == me, "message to itself after the deadlock: %d", v);
    } else if (!strcmp(k, "slow")) {
        /* rank 0 stays away from MPI for three windows of the watch, then sends: a slow job,
         * not a deadlock */
        if (me == 0) {
            tu_sleep_ms(1500);
            for (int q = 1; q < np; q++) CHECK_RC(MPI_Send(&q, 1, MPI_INT, q, 6, w));
        } else {
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 0, 6, w, MPI_STATUS_IGNORE));
            CHECK(v == me, "got %d", v);
        }
        /* and a token that waits outside MPI at each rank in turn */
        int t = 0;
        if (me == 0) CHECK_RC(MPI_Send(&t, 1, MPI_INT, next, 7, w));
        CHECK_RC(MPI_Recv(&t, 1, MPI_INT, (me + np - 1) % np, 7, w, MPI_STATUS_IGNORE));
        tu_sleep_ms(700);
        if (me != 0) CHECK_RC(MPI_Send(&t, 1, MPI_INT, next, 7, w));
        CHECK_RC(MPI_Barrier(w));
    } else {
        CHECK(0, "unknown case %s", k);
    }
    MPI_Finalize();
    return 0;
}
