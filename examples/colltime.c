/* colltime: a short table of collective latencies on MPI_COMM_WORLD (Barrier, Bcast,
 * Allreduce, Alltoall at a few sizes). Each entry is the median over 7 timed batches of the
 * slowest rank's mean time per call, in microseconds; standard MPI only, so the same
 * source builds with any MPI. Usage: colltime [max_bytes]  (default 65536). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 7

enum { BARRIER, BCAST, ALLREDUCE, ALLTOALL, NCOLL };
static const char *names[NCOLL] = {"Barrier", "Bcast", "Allreduce", "Alltoall"};

static void once(int which, char *a, char *b, int bytes, int np) {
    switch (which) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(a, bytes, MPI_CHAR, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE:
        MPI_Allreduce(a, b, bytes / (int)sizeof(double), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case ALLTOALL: MPI_Alltoall(a, bytes / np, MPI_CHAR, b, bytes / np, MPI_CHAR, MPI_COMM_WORLD);
    }
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median over batches of the slowest rank's mean time per call (microseconds). */
static double measure(int which, char *a, char *b, int bytes, int np) {
    double t[BATCHES];
    int iters = 1;
    /* calibrate: about 2 ms per batch (agreed on by all ranks) */
    for (;;) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) once(which, a, b, bytes, np);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (mx > 0.002 || iters >= (1 << 20)) break;
        iters *= 4;
    }
    for (int k = 0; k < BATCHES; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) once(which, a, b, bytes, np);
        double dt = (MPI_Wtime() - t0) / iters, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[k] = mx * 1e6;
    }
    qsort(t, BATCHES, sizeof(double), cmp);
    return t[BATCHES / 2];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int maxb = argc > 1 ? atoi(argv[1]) : 65536;
    if (maxb < 8) maxb = 8;
    static const int sizes[] = {8, 1024, 65536, 1048576};
    int nsizes = 0;
    while (nsizes < 4 && sizes[nsizes] <= maxb) nsizes++;
    size_t cap = (size_t)sizes[nsizes - 1] * 2 + (size_t)np * 64;
    char *a = malloc(cap), *b = malloc(cap);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(a, 1, cap);
    memset(b, 0, cap);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    char *nl = strchr(version, '\n');
    if (nl) *nl = 0;
    if (rank == 0) {
        printf("Collective latency, %d ranks, microseconds (median of %d batches, slowest rank)\n",
               np, BATCHES);
        printf("%s\n\n%-10s", version, "bytes");
        for (int s = 0; s < nsizes; s++) printf("%12d", sizes[s]);
        printf("\n");
    }
    for (int w = 0; w < NCOLL; w++) {
        if (rank == 0) printf("%-10s", names[w]);
        for (int s = 0; s < nsizes; s++) {
            int bytes = sizes[s];
            if (w == BARRIER && s > 0) break;
            if (w == ALLTOALL && bytes / np == 0) bytes = np;
            double us = measure(w, a, b, bytes, np);
            if (rank == 0) printf("%12.2f", us);
        }
        if (rank == 0) printf("\n");
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
