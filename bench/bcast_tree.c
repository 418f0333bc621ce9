/*
 * bcast_tree: what each MPI_Bcast of a run costs, call by call, so that a broadcast that
 * changes as the run goes (Cohort's self-tuning trees, docs/tuning.md) shows where it starts
 * and where it ends. Standard MPI only; with Cohort it is run under emulated links
 * (COHORT_EMU_TOPOLOGY), with the tuned trees (the default there) or an algorithm forced
 * (COHORT_BCAST_ALGORITHM=binomial). Not part of bench/run's suites.
 *
 *   mpiexec -n 8 bcast_tree [-s BYTES] [-n CALLS] [-t TAIL] [-r ROOT]
 *
 * A call's time: from the root's start, after a barrier, to the last rank's return (the ranks
 * share the machine's clock). Output: RESULT bcast_tree <case> <bytes> <value> us <calls>,
 * cases first (median of the first 3 calls), last (median of the last TAIL), all (median).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double *s = malloc((size_t)n * sizeof(double));
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np, calls = 400, tail = 50, root = 0, opt;
    long bytes = 1024;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((opt = getopt(argc, argv, "s:n:t:r:")) != -1) {
        if (opt == 's')
            bytes = atol(optarg);
        else if (opt == 'n')
            calls = atoi(optarg);
        else if (opt == 't')
            tail = atoi(optarg);
        else if (opt == 'r')
            root = atoi(optarg) % np;
    }
    if (calls < 3) calls = 3;
    if (tail > calls) tail = calls;
    char *buf = malloc(bytes ? (size_t)bytes : 1);
    double *lat = malloc((size_t)calls * sizeof(double));
    for (int i = 0; i < calls; i++) {
        memset(buf, me == root ? i : 0, (size_t)bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_us(), t1, last;
        MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        t1 = now_us();
        if (bytes && buf[bytes - 1] != (char)i) {
            fprintf(stderr, "rank %d: call %d delivered wrong data\n", me, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Bcast(&t0, 1, MPI_DOUBLE, root, MPI_COMM_WORLD); /* (not timed) */
        MPI_Reduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
        if (me == root) lat[i] = last - t0;
    }
    if (me == root) {
        printf("RESULT bcast_tree first %ld %.1f us %d\n", bytes, median(lat, 3), 3);
        printf("RESULT bcast_tree last %ld %.1f us %d\n", bytes, median(lat + calls - tail, tail),
               tail);
        printf("RESULT bcast_tree all %ld %.1f us %d\n", bytes, median(lat, calls), calls);
    }
    free(buf);
    free(lat);
    MPI_Finalize();
    return 0;
}
