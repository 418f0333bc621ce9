/* MPI_Finalize's look back (src/coll/coll.c): collective calls whose ranks disagreed in a way
 * that let every rank finish without waiting return success, and MPI_Finalize must then
 * report the disagreement. Every case runs under MPI_ERRORS_RETURN and checks that a rank
 * whose calls all returned success gets MPI_ERR_OTHER from MPI_Finalize (a rank that was told
 * of the disagreement earlier may get either). The `clean` case makes the same calls without
 * the disagreement: MPI_Finalize must return MPI_SUCCESS everywhere.
 *   coll_final CASE
 * CASE: roots (a broadcast of 4 ints on MPI_COMM_WORLD in which the last rank names itself
 * the root and the others rank 0), dup (the same on a duplicate of MPI_COMM_WORLD that stays
 * alive), extra (rank 0 makes one broadcast as its root that the others do not make), scatter
 * (a scatter whose last rank names itself the root), iroots (roots as with `roots`, in
 * MPI_Ibcast), late (as `roots`, and rank 0 comes to MPI_Finalize 300 ms after the others,
 * which find the difference while they wait in its barrier), clean. */
#include "testutil.h"

static int me, np, told; /* told: some call of this rank returned an error */

static void note(int rc) {
    if (rc != MPI_SUCCESS) told = 1;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "clean";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int clean = !strcmp(what, "clean");
    int buf[4 * 8] = {0}, got[4] = {0}, sum = 0, one = 1;
    for (int i = 0; i < 4 * 8; i++) buf[i] = me * 100 + i;
    /* ordinary calls first: their signatures agree */
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == np, "sum %d", sum);
    int last = np - 1, odd = me == last && last > 0 && !clean;
    MPI_Comm d = MPI_COMM_NULL;
    int late = !strcmp(what, "late"), roots = late || !strcmp(what, "roots"),
        iroots = !strcmp(what, "iroots");
    if (roots || clean) note(MPI_Bcast(buf, 4, MPI_INT, odd ? last : 0, MPI_COMM_WORLD));
    if (iroots || clean) {
        MPI_Request r;
        note(MPI_Ibcast(buf, 4, MPI_INT, odd ? last : 0, MPI_COMM_WORLD, &r));
        if (r != MPI_REQUEST_NULL) note(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    if (!strcmp(what, "dup")) {
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
        note(MPI_Bcast(buf, 4, MPI_INT, odd ? last : 0, d));
    } else if (!strcmp(what, "extra")) {
        if (me == 0) note(MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD));
    } else if (!strcmp(what, "scatter")) {
        note(MPI_Scatter(buf, 4, MPI_INT, got, 4, MPI_INT, odd ? last : 0, MPI_COMM_WORLD));
    } else {
        CHECK(roots || iroots || clean, "unknown case %s", what);
    }
    if (late && me == 0) tu_sleep_ms(300);
    /* (np 1: nothing can disagree) */
    int expect_error = !clean && np > 1 && !told;
    int rc = MPI_Finalize();
    if (clean || np == 1)
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Finalize returned %d", what, rc);
    else if (expect_error)
        CHECK(rc == MPI_ERR_OTHER, "%s: every call returned success, then MPI_Finalize %d", what,
              rc);
    else
        CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_OTHER, "%s: MPI_Finalize returned %d", what, rc);
    (void)d; /* left alive on purpose: MPI_Finalize looks at every communicator */
    return 0;
}
