/* Communicators freed just before MPI_Finalize, while their master finalizes: the job must
 * end cleanly. World rank 0 stays out of them, so that the IDs their master's pool gives back
 * go up to a rank that has nothing of its own to send and is first through MPI_Finalize. The
 * last rank (the master) frees its handles first; the other members free theirs right before
 * MPI_Finalize, so that their notices reach the master while it is in MPI_Finalize and its
 * returns to rank 0 are still queued there as rank 0 finishes. Run with few queue cells
 * (COHORT_SHM_RING_CELLS=16) the returns do not fit in rank 0's queue.
 *
 * Two faults made this job crash or hang: a notice taken in after the communicator layer was
 * torn down reached its freed state (segfault), and messages queued for a rank that had
 * finished MPI_Finalize were waited for forever (mpiexec's deadlock report). At 4 ranks with
 * 16 cells each of them showed in nearly every run.
 *
 * Argument: how many communicators (default 1020). */
#include "comm_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np, n = argc > 1 ? atoi(argv[1]) : 1020;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)n);
    CHECK(c && n > 0, "malloc");
    /* reversed keys: the last world rank is each communicator's rank 0, its master */
    for (int i = 0; i < n; i++)
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me ? 0 : MPI_UNDEFINED, np - me, &c[i]));
    if (me == 0) {
        CHECK(c[0] == MPI_COMM_NULL && c[n - 1] == MPI_COMM_NULL, "rank 0 got a communicator");
    } else {
        int r, size;
        CHECK_RC(MPI_Comm_rank(c[n - 1], &r));
        CHECK_RC(MPI_Comm_size(c[n - 1], &size));
        CHECK(r == np - 1 - me && size == np - 1, "rank %d of %d, expected %d of %d", r, size,
              np - 1 - me, np - 1);
        if (np > 2) cu_check_works(c[n - 1], 5);
    }
    if (me == np - 1 && me)
        for (int i = 0; i < n; i++) CHECK_RC(MPI_Comm_free(&c[i]));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (me && me != np - 1)
        for (int i = 0; i < n; i++) CHECK_RC(MPI_Comm_free(&c[i]));
    for (int i = 0; i < n; i++) CHECK(c[i] == MPI_COMM_NULL, "handle %d not set to null", i);
    free(c);
    CHECK_RC(MPI_Finalize());
    return 0;
}
