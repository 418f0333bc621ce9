/* Reclaiming and running out, with a tiny ID space (COHORT_ID_SPACE=64, COHORT_ID_BATCH=8).
 * Every rank first makes and frees a dup of MPI_COMM_SELF, so its SELF pool keeps a batch of
 * idle IDs. Then the last rank alone keeps creating dups of SELF: once the root pool is empty
 * it must reclaim the idle batches from the other ranks (waiting in a barrier), and the last
 * rank must get every ID of the space except at most the one reservation each other rank's
 * SELF holds for its next dup; the next dup fails with MPI_ERR_OTHER. After freeing, all ranks
 * create again. */
#include "comm_util.h"

#define SPACE 64
#define MAXC  (SPACE + 8)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm c[MAXC];
    CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &c[0]));
    CHECK_RC(MPI_Comm_free(&c[0]));
    cu_settle();

    int created = 0;
    if (rank == n - 1) {
        int rc;
        while ((rc = MPI_Comm_dup(MPI_COMM_SELF, &c[created])) == MPI_SUCCESS) {
            CHECK(created < MAXC - 1, "more communicators than IDs");
            created++;
        }
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "running out gives MPI_ERR_OTHER, got %d", cls);
        CHECK(c[created] == MPI_COMM_NULL, "no communicator after the error");
        /* every ID but the reservation each other rank's SELF may hold for its next dup */
        CHECK(created >= SPACE - (n - 1) && created <= SPACE, "got %d of the %d IDs", created,
              SPACE);
        CHECK_ERR(MPI_Comm_dup(MPI_COMM_SELF, &c[created]), MPI_ERR_OTHER);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t st[MPIX_ID_STATS];
    cu_stats(st);
    if (rank == 0 && n > 1)
        CHECK(st[7] > 0, "the root reclaimed (%llu rounds)", (unsigned long long)st[7]);
    for (int i = 0; i < created; i++) CHECK_RC(MPI_Comm_free(&c[i]));
    cu_settle();

    /* everybody can create again */
    for (int i = 0; i < 4; i++) CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &c[i]));
    MPI_Comm w;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &w));
    cu_check_works(w, 1);
    MPI_Comm_free(&w);
    for (int i = 0; i < 4; i++) CHECK_RC(MPI_Comm_free(&c[i]));
    if (rank == n - 1) printf("%d IDs: the last rank got %d\n", SPACE, created);
    if (rank == 0) printf("the root ran %llu reclaim rounds\n", (unsigned long long)st[7]);
    MPI_Finalize();
    return 0;
}
