/* A rank that dies during rank swaps: swap_crash US K makes 9 swaps of pairs of ranks with 1 MiB
 * images (the same pairs every run); the last launched process kills itself with SIGKILL US
 * microseconds after its K-th swap, which lands in some phase of some swap, or in the barrier
 * that the others wait in after the last (tests/swap.sh
 * runs it at a dozen moments and checks that the job ends with the death reported, never
 * hanging). Without US it swaps 20 times and checks every image. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#define IMAGE (1u << 20)

static void die(int sig) {
    (void)sig;
    kill(getpid(), SIGKILL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long us = argc > 1 ? atol(argv[1]) : 0;
    unsigned char *img = malloc(IMAGE);
    for (size_t i = 0; i < IMAGE; i++) img[i] = (unsigned char)(i * 7 + (size_t)rank);
    CHECK_RC(MPIX_Checkpoint_register(img, IMAGE));
    int after = argc > 2 ? atoi(argv[2]) : 0, dies = us > 0 && rank == n - 1;
    if (dies) signal(SIGALRM, die);
    /* a dying run makes 9 swaps: in none after its second does the dying process get world
     * rank 3 back (from the tenth it does), so tests/swap.sh knows which rank it holds when it
     * dies; then it waits for its timer, the others in a barrier that it never reaches */
    int rounds = us > 0 ? 9 : 20;
    unsigned x = 12345; /* the same pairs on every rank */
    for (int k = 0; k < rounds; k++) {
        if (dies && k == after) {
            struct itimerval t = {{0, 0}, {us / 1000000, us % 1000000}};
            setitimer(ITIMER_REAL, &t, NULL);
        }
        x = x * 1103515245u + 12345u;
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, (int)((x >> 16) % (unsigned)n),
                                 (int)((x >> 8) % (unsigned)n)));
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        for (size_t i = 0; i < IMAGE; i += 4093)
            CHECK(img[i] == (unsigned char)(i * 7 + (size_t)rank), "rank %d byte %zu", rank, i);
    }
    if (dies)
        for (;;) pause();
    if (us > 0) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("swap_crash: %d swaps\n", rounds);
    free(img);
    MPI_Finalize();
    return 0;
}
