/*
 * swap: what a rank swap costs (Cohort's MPIX_Swap_ranks, docs/migration.md) against moving
 * the same bytes with standard MPI: the same three MPI_Allreduce calls with MPI_BXOR (every
 * other rank giving zeros), which move the state but not the identities, and a plain
 * MPI_Sendrecv_replace between the two ranks. The MPIX row is Cohort's own; built with another
 * MPI only the standard rows are measured.
 *
 *   mpiexec -n 4 swap [-S 8,64K,1M,16M] [-r 5]
 *
 * Every rank registers SIZE bytes; ranks 0 and N-1 are swapped (and swapped back, untimed, so
 * that every repetition starts from the same placement); every byte is checked afterwards.
 * Output: RESULT swap <case> <size> <value> us <reps>, cases swap, xor3, sendrecv: the slowest
 * rank's time of one call, median over the repetitions. Part of bench/run's suites as `swap`
 * (Open MPI and MPICH run the two standard rows).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

static void fill(unsigned char *b, size_t n, int who) {
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 131 + (size_t)who * 17 + 1);
}

static void check(const unsigned char *b, size_t n, int who, const char *what) {
    for (size_t i = 0; i < n; i += 61)
        if (b[i] != (unsigned char)(i * 131 + (size_t)who * 17 + 1)) {
            fprintf(stderr, "swap: %s: byte %zu of rank %d's state is wrong\n", what, i, who);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* The slowest rank's time of fn in microseconds. */
#define TIMED(out, stmt)                                                                           \
    do {                                                                                           \
        MPI_Barrier(MPI_COMM_WORLD);                                                               \
        double t0_ = MPI_Wtime();                                                                  \
        stmt;                                                                                      \
        double t_ = (MPI_Wtime() - t0_) * 1e6;                                                     \
        MPI_Allreduce(&t_, &(out), 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);                        \
    } while (0)

static void xor3(unsigned char *x, unsigned char *t, const unsigned char *zero, size_t n, int a,
                 int b) {
    int cnt = (int)n;
    if (me == a) {
        MPI_Allreduce(MPI_IN_PLACE, x, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
        MPI_Allreduce(x, t, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, x, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    } else if (me == b) {
        MPI_Allreduce(x, t, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, x, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
        MPI_Allreduce(x, t, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    } else {
        for (int k = 0; k < 3; k++) MPI_Allreduce(zero, t, cnt, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *sizes = "8,64K,1M,16M";
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-S") && i + 1 < argc) sizes = argv[++i];
        if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
    }
    if (np < 2) {
        if (me == 0) fprintf(stderr, "swap: needs 2 ranks or more\n");
        MPI_Finalize();
        return 0;
    }
    int a = 0, b = np - 1;
    char *list = strdup(sizes);
    double *t = malloc((size_t)reps * sizeof(double));
    for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
        long sz = bench_parse_size(s);
        size_t n = (size_t)(sz > 0 ? sz : 0);
        unsigned char *x = malloc(n), *tmp = malloc(n), *zero = calloc(1, n);
        if (sz <= 0 || !x || !tmp || !zero || n > (size_t)1 << 30) {
            fprintf(stderr, "swap: size %s is out of reach\n", s);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int rank = me; /* whose state this process holds */
        fill(x, n, rank);
#ifdef COHORT
        MPIX_Checkpoint_register(x, (MPI_Aint)n);
        for (int r = 0; r < reps; r++) {
            TIMED(t[r], MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            check(x, n, rank, "MPIX_Swap_ranks");
            MPIX_Swap_ranks(MPI_COMM_WORLD, a, b);
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        }
        MPIX_Checkpoint_unregister(x);
        if (me == 0) printf("RESULT swap swap %zu %.1f us %d\n", n, bench_median(t, reps), reps);
#endif
        for (int r = 0; r < reps; r++) {
            TIMED(t[r], xor3(x, tmp, zero, n, a, b));
            rank = me == a ? b : me == b ? a : me;
            if (me == a || me == b) check(x, n, rank, "three allreduces");
            xor3(x, tmp, zero, n, a, b);
        }
        check(x, n, me, "three allreduces, back");
        if (me == 0) printf("RESULT swap xor3 %zu %.1f us %d\n", n, bench_median(t, reps), reps);
        for (int r = 0; r < reps; r++) {
            int peer = me == a ? b : me == b ? a : MPI_PROC_NULL;
            TIMED(t[r], MPI_Sendrecv_replace(x, (int)n, MPI_BYTE, peer, 1, peer, 1, MPI_COMM_WORLD,
                                             MPI_STATUS_IGNORE));
            if (peer != MPI_PROC_NULL) {
                check(x, n, peer, "MPI_Sendrecv_replace");
                MPI_Sendrecv_replace(x, (int)n, MPI_BYTE, peer, 1, peer, 1, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
            }
        }
        check(x, n, me, "MPI_Sendrecv_replace, back");
        if (me == 0)
            printf("RESULT swap sendrecv %zu %.1f us %d\n", n, bench_median(t, reps), reps);
        fflush(stdout);
        free(x), free(tmp), free(zero);
    }
    free(list);
    free(t);
    MPI_Finalize();
    return 0;
}
