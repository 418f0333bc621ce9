/* A message of more than 4 GiB (5 GiB + 12 bytes of MPI_INT) from rank 0 to rank 1. The
 * rendezvous copies it in two halves, one taken by each side (docs/runtime.md), and each
 * half is more than one process_vm_readv/_writev call moves (about 2 GiB): both sides must
 * continue short copies. tests/p2p.cmake runs it with COHORT_LOG_LEVEL=2 and fails on the
 * note that single copy was given up. The receiver checks every element and the status.
 * Skipped (exit status 77) with less than 12 GiB available. */
#include "testutil.h"

#include <stdint.h>

static uint32_t value(size_t i) {
    return (uint32_t)(i * 2654435761u + 17);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np == 2, "run with 2 ranks");
    tu_need_memory(12LL << 20);
    int count = (1 << 30) + (1 << 28) + 3;
    size_t n = (size_t)count;
    uint32_t *b = tu_big_malloc(n * sizeof(uint32_t));
    CHECK(b, "out of memory");
    if (me == 0) {
        for (size_t i = 0; i < n; i++) b[i] = value(i);
        CHECK_RC(MPI_Send(b, count, MPI_INT, 1, 5, MPI_COMM_WORLD));
    } else {
        memset(b, 0, n * sizeof(uint32_t));
        MPI_Status st;
        CHECK_RC(MPI_Recv(b, count, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == count && st.MPI_SOURCE == 0 && st.MPI_TAG == 5, "status: count %d", got);
        for (size_t i = 0; i < n; i++)
            if (b[i] != value(i)) CHECK(0, "element %zu is %u, expected %u", i, b[i], value(i));
    }
    free(b);
    MPI_Finalize();
    return 0;
}
