/* Barrier: no rank leaves barrier k before every rank has entered it. Ranks enter at
 * staggered times (some sleep first); each records its entry and exit times (one machine,
 * one monotonic clock) and afterwards every exit must come after every entry of the same
 * barrier. Many barriers in a row exercise the counter barrier's never-reset counters. */
#include "coll_util.h"

#include <time.h>

#define ROUNDS 300

static void run(MPI_Comm comm) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    double *t = malloc(2 * ROUNDS * sizeof(double));
    double *all = malloc(2 * ROUNDS * sizeof(double) * (size_t)np);
    CHECK(t && all, "malloc");
    for (int k = 0; k < ROUNDS; k++) {
        if ((k + me) % 7 == 0 && k % 5 == 0) {
            struct timespec ts = {0, 200000 * ((me + k) % 3 + 1)};
            nanosleep(&ts, NULL);
        }
        t[2 * k] = MPI_Wtime();
        CHECK_RC(MPI_Barrier(comm));
        t[2 * k + 1] = MPI_Wtime();
    }
    for (int k = 0; k < 2000; k++) CHECK_RC(MPI_Barrier(comm)); /* back to back */
    CHECK_RC(MPI_Allgather(t, 2 * ROUNDS, MPI_DOUBLE, all, 2 * ROUNDS, MPI_DOUBLE, comm));
    for (int k = 0; k < ROUNDS; k++) {
        double last_in = 0, first_out = 1e300;
        for (int q = 0; q < np; q++) {
            double in = all[(size_t)q * 2 * ROUNDS + 2 * k],
                   out = all[(size_t)q * 2 * ROUNDS + 2 * k + 1];
            if (in > last_in) last_in = in;
            if (out < first_out) first_out = out;
        }
        CHECK(first_out >= last_in, "barrier %d: a rank left %.9f s before the last one entered", k,
              last_in - first_out);
    }
    free(t);
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comms[MAXCOMMS];
    int owned[MAXCOMMS];
    int nc = cu_comms(comms, owned);
    for (int i = 0; i < nc; i++) run(comms[i]);
    cu_free_comms(comms, owned, nc);
    MPI_Finalize();
    return 0;
}
