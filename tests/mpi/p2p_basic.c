/* Point-to-point between every pair of ranks at sizes that cross each protocol boundary
 * (inline cell, payload ring, rendezvous), with the data checked byte for byte. */
#include "testutil.h"

static const size_t sizes[] = {0,    1,     31,    32,    33,      1000,         4096,
                               8192, 16384, 16385, 65536, 1 << 20, (4 << 20) + 3};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t maxn = sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
    unsigned char *sbuf = malloc(maxn), *rbuf = malloc(maxn);
    CHECK(sbuf && rbuf, "malloc");
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        for (int step = 0; step < size; step++) {
            int to = (rank + step) % size, from = (rank - step + size) % size;
            for (size_t i = 0; i < n; i++) sbuf[i] = tu_pattern(rank, to, i);
            memset(rbuf, 0xee, n);
            MPI_Status st;
            CHECK_RC(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, to, (int)k, rbuf, (int)n, MPI_BYTE, from,
                                  (int)k, MPI_COMM_WORLD, &st));
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK((size_t)count == n, "size %zu from %d: count %d", n, from, count);
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == (int)k, "status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
            for (size_t i = 0; i < n; i++)
                CHECK(rbuf[i] == tu_pattern(from, rank, i), "size %zu from %d: byte %zu is %d", n,
                      from, i, rbuf[i]);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
