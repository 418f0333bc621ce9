/* What a rank publishes must fit its shared buffer. Run with 4 KiB buffers
 * (tests/coll.cmake): a 15 KiB Gatherv block cannot go inline. The root arrives late;
 * meanwhile rank 1 returns from Gatherv and broadcasts through its own buffers, which would
 * overwrite a block that ran past its buffer before the root copied it out. Each round
 * starts the pair at another buffer. */
#include "testutil.h"

#include <time.h>

enum { N = 15 * 1024, B = 4096 };

static unsigned char val(int src, size_t i, int round) {
    return (unsigned char)(src * 31 + (int)(i % 251) * 7 + round);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    unsigned char *sb = malloc(N), *rb = malloc((size_t)N * (size_t)np), *bc = malloc(B);
    int *counts = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np);
    CHECK(sb && rb && bc && counts && displs, "out of memory");
    for (int q = 0; q < np; q++) counts[q] = N, displs[q] = q * N;
    for (int round = 0; round < 8; round++) {
        for (size_t i = 0; i < N; i++) sb[i] = val(me, i, round);
        memset(rb, 0, (size_t)N * (size_t)np);
        memset(bc, me == 1 ? 0xA5 : 0, B);
        if (me == 0) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        CHECK_RC(MPI_Gatherv(sb, N, MPI_BYTE, rb, counts, displs, MPI_BYTE, 0, c));
        CHECK_RC(MPI_Bcast(bc, B, MPI_BYTE, 1, c));
        for (size_t i = 0; i < B; i++) CHECK(bc[i] == 0xA5, "round %d: Bcast byte %zu", round, i);
        if (me == 0)
            for (int q = 0; q < np; q++)
                for (size_t i = 0; i < N; i++)
                    CHECK(rb[(size_t)q * N + i] == val(q, i, round),
                          "round %d: Gatherv block of rank %d, byte %zu is %d, want %d", round, q,
                          i, rb[(size_t)q * N + i], val(q, i, round));
    }
    MPI_Comm_free(&c);
    free(sb), free(rb), free(bc), free(counts), free(displs);
    MPI_Finalize();
    return 0;
}
