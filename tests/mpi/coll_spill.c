/* Alltoallv's inline blocks spill into more of a rank's shared buffers when one cannot hold
 * them (src/coll/cma.c). Run with 8 KiB buffers and single copy forced (tests/coll.cmake):
 * 7 blocks of 2.8 KiB take three buffers. Right after each Alltoallv, rank 0 broadcasts
 * three times through its own buffers and reaches the spilled ones while slower ranks may
 * still read them: a spill buffer reused before every reader is done shows here as wrong
 * data (with ranks outnumbering cores, within a few hundred rounds). */
#include "testutil.h"

enum { COUNT = 700, ROUNDS = 3000, BC = 64 };

static int val(int from, int to, int i, int round) {
    return (from * 131 + to) * 100000 + i + round;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int *sb = malloc(sizeof(int) * COUNT * (size_t)np),
        *rb = malloc(sizeof(int) * COUNT * (size_t)np);
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    CHECK(sb && rb && cnt && dsp, "out of memory");
    for (int q = 0; q < np; q++) cnt[q] = COUNT, dsp[q] = q * COUNT;
    int bc[BC];
    for (int round = 0; round < ROUNDS; round++) {
        for (int q = 0; q < np; q++)
            for (int i = 0; i < COUNT; i++) sb[q * COUNT + i] = val(me, q, i, round);
        memset(rb, 0, sizeof(int) * COUNT * (size_t)np);
        CHECK_RC(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < BC; i++) bc[i] = me == 0 ? -round - k : 0;
            CHECK_RC(MPI_Bcast(bc, BC, MPI_INT, 0, MPI_COMM_WORLD));
            for (int i = 0; i < BC; i++)
                CHECK(bc[i] == -round - k, "round %d: Bcast %d, int %d is %d", round, k, i, bc[i]);
        }
        for (int q = 0; q < np; q++)
            for (int i = 0; i < COUNT; i++)
                CHECK(rb[q * COUNT + i] == val(q, me, i, round),
                      "round %d: block from rank %d, int %d is %d, expected %d", round, q, i,
                      rb[q * COUNT + i], val(q, me, i, round));
    }
    free(sb), free(rb), free(cnt), free(dsp);
    MPI_Finalize();
    return 0;
}
