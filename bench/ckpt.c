/*
 * ckpt: what a whole-job checkpoint costs (Cohort's MPIX_Checkpoint and MPIX_Restart,
 * docs/checkpoint.md) against the plain way of saving the same memory with standard MPI: every
 * rank writes its image into one file with MPI_File_write_at_all, then MPI_File_sync, and
 * reads it back with MPI_File_read_at_all. Cohort only (the MPIX calls are Cohort's own; built
 * with another MPI, only the MPI-IO rows are measured). Not part of bench/run's suites.
 *
 *   mpiexec -n 4 ckpt [-S 1M,16M,64M] [-r 5] [-k similar|field] [-d DIR]
 *
 * Kinds of image (SIZE bytes per rank):
 *   similar  the same random bytes on every rank, with 1 in 64 of its 4 KiB blocks the rank's
 *            own (replicated tables, read-mostly state)
 *   field    doubles of a smooth field that differs from rank to rank (a simulation's grid)
 *
 * Output: RESULT ckpt <case> <size> <value> <unit> <reps>, cases checkpoint, restart,
 * mpiio_write, mpiio_read (ms, medians) and ratio (file bytes / image bytes, %).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void fill(unsigned char *buf, size_t n, int field) {
    if (field) {
        double *d = (double *)(void *)buf;
        for (size_t i = 0; i < n / 8; i++)
            d[i] = 300.0 + 20.0 * sin((double)i * 1e-4 + me * 0.3) + 0.01 * me;
        return;
    }
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t v = mix(i);
        if (mix(i / 4096) % 64 == (uint64_t)me % 64) v = mix(i + (uint64_t)me * 7777);
        memcpy(buf + i, &v, 8);
    }
}

/* The slowest rank's time of one call. */
static double slowest(double t) {
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *sizes = "1M,16M,64M", *dir = getenv("TMPDIR");
    int reps = 5, field = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-S"))
            sizes = argv[i + 1];
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-k"))
            field = !strcmp(argv[i + 1], "field");
        else if (!strcmp(argv[i], "-d"))
            dir = argv[i + 1];
    }
    if (reps < 1 || reps > 99) reps = 5;
    char path[4096], iopath[4096 + 8];
    if (me == 0)
        snprintf(path, sizeof(path), "%s/cohort-bench-ckpt.%d", dir && *dir ? dir : "/tmp",
                 (int)getpid());
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(iopath, sizeof(iopath), "%s.mpiio", path);
    if (me == 0)
        printf("# ckpt np=%d kind=%s reps=%d: ms per call (slowest rank, median)\n", np,
               field ? "field" : "similar", reps);
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        long size = strtol(tok, &end, 10);
        if (*end == 'K' || *end == 'k') size <<= 10;
        if (*end == 'M' || *end == 'm') size <<= 20;
        if (*end == 'G' || *end == 'g') size <<= 30;
        size &= ~7L;
        unsigned char *img = malloc((size_t)size), *copy = malloc((size_t)size);
        if (!img || !copy) MPI_Abort(MPI_COMM_WORLD, 2);
        fill(img, (size_t)size, field);
        memcpy(copy, img, (size_t)size);
        double t[4][100];
        long long fsize = 0;
#ifdef COHORT
        MPIX_Checkpoint_register(img, size);
#endif
        for (int r = 0; r < reps; r++) {
            double t0;
#ifdef COHORT
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPIX_Checkpoint(MPI_COMM_WORLD, path);
            t[0][r] = slowest(MPI_Wtime() - t0);
            memset(img, 0, (size_t)size);
            int restored = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPIX_Restart(MPI_COMM_WORLD, path, &restored);
            t[1][r] = slowest(MPI_Wtime() - t0);
            if (!restored || memcmp(img, copy, (size_t)size)) {
                fprintf(stderr, "ckpt: rank %d: the restart did not give the image back\n", me);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            if (me == 0 && r == 0) {
                FILE *f = fopen(path, "rb");
                if (f && !fseek(f, 0, SEEK_END)) fsize = ftell(f);
                if (f) fclose(f);
            }
#endif
            MPI_File fh;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_File_open(MPI_COMM_WORLD, iopath, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh);
            MPI_File_write_at_all(fh, (MPI_Offset)me * size, img, (int)size, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
            MPI_File_sync(fh);
            MPI_File_close(&fh);
            t[2][r] = slowest(MPI_Wtime() - t0);
            memset(img, 0, (size_t)size);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_File_open(MPI_COMM_WORLD, iopath, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
            MPI_File_read_at_all(fh, (MPI_Offset)me * size, img, (int)size, MPI_BYTE,
                                 MPI_STATUS_IGNORE);
            MPI_File_close(&fh);
            t[3][r] = slowest(MPI_Wtime() - t0);
            if (memcmp(img, copy, (size_t)size)) MPI_Abort(MPI_COMM_WORLD, 4);
        }
#ifdef COHORT
        MPIX_Checkpoint_unregister(img);
#endif
        if (me == 0) {
            const char *names[4] = {"checkpoint", "restart", "mpiio_write", "mpiio_read"};
            for (int k = 0; k < 4; k++) {
#ifndef COHORT
                if (k < 2) continue;
#endif
                printf("RESULT ckpt %s %ld %.3f ms %d\n", names[k], size,
                       bench_median(t[k], reps) * 1e3, reps);
            }
            if (fsize)
                printf("RESULT ckpt ratio %ld %.2f %% %d\n", size,
                       100.0 * (double)fsize / ((double)size * np), reps);
        }
        free(img);
        free(copy);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(path);
        unlink(iopath);
    }
    free(list);
    MPI_Finalize();
    return 0;
}
