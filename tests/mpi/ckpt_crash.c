/* A job that checkpoints while one of its ranks dies, for tests/ckpt.sh. Every rank registers
 * 2 MiB that all ranks share and 2 MiB of its own, both made from the step number.
 *   ckpt_crash write STEP PATH [US]  fills the regions for STEP and checkpoints to PATH; with
 *                                    US, the last rank dies by SIGALRM US microseconds after
 *                                    entering MPIX_Checkpoint (or later, if the call is done
 *                                    by then: the job then ends normally)
 *   ckpt_crash restart PATH          restores from PATH, checks every byte against the step
 *                                    the image says it holds, and prints "restored STEP" */
#include "testutil.h"

#include <signal.h>
#include <sys/time.h>

#define HALF (2 << 20)

static unsigned char shared_part[HALF], own_part[HALF];
static int step, me;

static unsigned char byte_of(int s, int r, size_t i) {
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + (uint64_t)s * 0xbf58476d1ce4e5b9ull +
                 (uint64_t)(r + 1) * 0x94d049bb133111ebull;
    return (unsigned char)(x >> 56);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc >= 3, "usage: ckpt_crash write STEP PATH [US] | restart PATH");
    CHECK_RC(MPIX_Checkpoint_register(&step, sizeof(step)));
    CHECK_RC(MPIX_Checkpoint_register(shared_part, HALF));
    CHECK_RC(MPIX_Checkpoint_register(own_part, HALF));
    if (!strcmp(argv[1], "write")) {
        CHECK(argc >= 4, "write STEP PATH [US]");
        step = atoi(argv[2]);
        for (size_t i = 0; i < HALF; i++) {
            shared_part[i] = byte_of(step, -1, i);
            own_part[i] = byte_of(step, me, i);
        }
        if (argc > 4 && me == np - 1) {
            struct itimerval t = {{0, 0}, {0, atoi(argv[4])}};
            signal(SIGALRM, SIG_DFL);
            setitimer(ITIMER_REAL, &t, NULL);
        }
        double t = MPI_Wtime();
        CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, argv[3]));
        t = MPI_Wtime() - t;
        if (me == 0) printf("checkpointed %d\nin %.2f ms\n", step, t * 1e3);
    } else {
        int restored = 0;
        step = -1;
        CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, argv[2], &restored));
        CHECK(restored == 1, "nothing to restore at %s", argv[2]);
        for (size_t i = 0; i < HALF; i++) {
            CHECK(shared_part[i] == byte_of(step, -1, i), "step %d: shared byte %zu", step, i);
            CHECK(own_part[i] == byte_of(step, me, i), "step %d: own byte %zu", step, i);
        }
        int lo, hi;
        MPI_Allreduce(&step, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&step, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(lo == hi, "the ranks restored steps %d to %d", lo, hi);
        if (me == 0) printf("restored %d\n", step);
    }
    MPI_Finalize();
    return 0;
}
