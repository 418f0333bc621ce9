/* Without single copies between processes (COHORT_CMA=0, as mpiexec sets under valgrind), a
 * window over the program's own memory cannot reach other ranks: MPI_Win_create and
 * MPI_Win_create_dynamic of more than one rank fail on every rank with
 * MPI_ERR_UNSUPPORTED_OPERATION (one rank alone needs no single copy), while windows from
 * MPI_Win_allocate and MPI_Win_allocate_shared work as usual. */
#include "testutil.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *cma = getenv("COHORT_CMA");
    CHECK(cma && !strcmp(cma, "0"), "run this test with COHORT_CMA=0");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int mem[4] = {0};
    MPI_Win win = MPI_WIN_NULL;
    if (np > 1) {
        CHECK_ERR(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                  MPI_ERR_UNSUPPORTED_OPERATION);
        CHECK(win == MPI_WIN_NULL, "a failed creation leaves the handle alone");
        CHECK_ERR(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                  MPI_ERR_UNSUPPORTED_OPERATION);
    }
    /* one rank alone: its own memory is reached directly */
    CHECK_RC(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &win));
    int v = 7 + me;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&v, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(mem[2] == 7 + me, "self window: %d", mem[2]);
    CHECK_RC(MPI_Win_free(&win));

    for (int shared = 0; shared < 2; shared++) {
        int *base = NULL;
        if (shared)
            CHECK_RC(MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                             MPI_COMM_WORLD, &base, &win));
        else
            CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                      &base, &win));
        for (int k = 0; k < 4; k++) base[k] = -1;
        CHECK_RC(MPI_Win_fence(0, win));
        v = 100 + me;
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, (me + 1) % np, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK(base[1] == 100 + (me + np - 1) % np && base[0] == -1 && base[2] == -1,
              "allocated window: %d %d %d", base[0], base[1], base[2]);
        CHECK_RC(MPI_Win_free(&win));
    }
    MPI_Finalize();
    if (me == 0) printf("rma_nocma: %d ranks ok\n", np);
    return 0;
}
