/*
 * Shared helpers for the benchmark programs: command-line parsing of the common flags, the list
 * of message sizes, the adaptive iteration count and the RESULT line printer. Everything here is
 * plain C11 plus the standard MPI API, header-only (all functions are static inline), so each
 * benchmark is still a single translation unit: `mpicc -std=c11 -O2 prog.c`.
 *
 * Common flags (every program):
 *   -m SIZE      smallest message size (bytes; suffixes K/M/G = KiB/MiB/GiB)
 *   -M SIZE      largest message size
 *   -s FACTOR    geometric step between sizes (2 = every power of two)
 *   -S LIST      explicit comma-separated size list, e.g. -S 1,4K,64K,1M (overrides -m/-M/-s)
 *   -t MS        target duration of one measured data point, in milliseconds (default 20)
 *   -i N         fixed iteration count (disables the adaptive calibration)
 *   -h           help
 *
 * Output: one line per data point, printed by rank 0 of MPI_COMM_WORLD:
 *   RESULT <bench> <case> <size_bytes> <value> <unit> <iterations>
 * Lines starting with '#' are informational comments.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SIZES 64

typedef struct {
    long min_size, max_size, step;
    long list[BENCH_MAX_SIZES];
    int nlist;        /* > 0: explicit list given with -S */
    double target_s;  /* wall time of one measured data point */
    long fixed_iters; /* > 0: skip calibration */
    long max_iters;   /* hard cap on iterations */
} bench_opts;

static inline int bench_rank(void) {
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static inline int bench_nprocs(void) {
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

/* "4K" -> 4096, "1M" -> 1048576, "64KiB" -> 65536; returns -1 on error. */
static inline long bench_parse_size(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0) return -1;
    switch (*end) {
    case '\0': return v;
    case 'k':
    case 'K': v <<= 10; break;
    case 'm':
    case 'M': v <<= 20; break;
    case 'g':
    case 'G': v <<= 30; break;
    case 'b':
    case 'B': return end[1] == '\0' ? v : -1;
    default: return -1;
    }
    end++;
    if (*end == '\0' || strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) return v;
    return -1;
}

static inline void bench_defaults(bench_opts *o, long min_size, long max_size, long step) {
    memset(o, 0, sizeof *o);
    o->min_size = min_size;
    o->max_size = max_size;
    o->step = step;
    o->target_s = 0.020;
    o->max_iters = 100000000L;
}

static inline void bench_set_list(bench_opts *o, const char *csv) {
    char buf[1024];
    size_t n = strlen(csv);
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, csv, n);
    buf[n] = '\0';
    o->nlist = 0;
    for (char *p = buf; *p && o->nlist < BENCH_MAX_SIZES;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        o->list[o->nlist++] = bench_parse_size(p);
        if (!comma) break;
        p = comma + 1;
    }
}

static const char bench_common_usage[] =
    "  -m SIZE    smallest message size (bytes, K/M suffixes allowed)\n"
    "  -M SIZE    largest message size\n"
    "  -s FACTOR  geometric step between sizes (2 = all powers of two)\n"
    "  -S LIST    explicit comma-separated sizes, e.g. 1,4K,64K,1M\n"
    "  -t MS      target milliseconds per data point (default 20)\n"
    "  -i N       fixed iteration count (no adaptive calibration)\n"
    "  -h         this help\n";

/*
 * Tries to consume argv[*i] (and its value) as a common flag.
 * Returns 1 if consumed, 0 if the flag is not a common one, -1 on a malformed value.
 */
static inline int bench_common_opt(bench_opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || !strchr("mMsSti", a[1])) return 0;
    if (*i + 1 >= argc) return -1;
    const char *v = argv[++*i];
    switch (a[1]) {
    case 'm':
        o->min_size = bench_parse_size(v);
        o->nlist = 0;
        return o->min_size >= 0 ? 1 : -1;
    case 'M':
        o->max_size = bench_parse_size(v);
        o->nlist = 0;
        return o->max_size >= 0 ? 1 : -1;
    case 's':
        o->step = atol(v);
        o->nlist = 0;
        return o->step >= 2 ? 1 : -1;
    case 'S':
        bench_set_list(o, v);
        for (int k = 0; k < o->nlist; k++)
            if (o->list[k] < 0) return -1;
        return o->nlist > 0 ? 1 : -1;
    case 't': o->target_s = atof(v) / 1000.0; return o->target_s > 0 ? 1 : -1;
    case 'i': o->fixed_iters = atol(v); return o->fixed_iters > 0 ? 1 : -1;
    }
    return 0;
}

/* Fills out[] with the sizes to measure (ascending geometric series, max always included). */
static inline int bench_sizes(const bench_opts *o, long *out) {
    int n = 0;
    if (o->nlist > 0) {
        for (int k = 0; k < o->nlist; k++) out[n++] = o->list[k];
        return n;
    }
    long s = o->min_size;
    for (; s <= o->max_size && n < BENCH_MAX_SIZES - 1; s = s ? s * o->step : 1) out[n++] = s;
    if (n == 0 || out[n - 1] != o->max_size) out[n++] = o->max_size;
    return n;
}

/* "a,b" -> bit mask of the names' indices in names[0..n); -1 on an unknown name or none. */
static inline int bench_parse_cases(const char *csv, const char *const *names, int n) {
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", csv);
    for (char *p = strtok(buf, ","); p; p = strtok(NULL, ",")) {
        int k = 0;
        while (k < n && strcmp(p, names[k]) != 0) k++;
        if (k == n) return -1;
        mask |= 1 << k;
    }
    return mask ? mask : -1;
}

static inline long bench_max_of(const long *sizes, int n) {
    long m = 0;
    for (int k = 0; k < n; k++)
        if (sizes[k] > m) m = sizes[k];
    return m;
}

/* Prints usage on rank 0, finalizes and exits with the given status. */
static inline void bench_usage_exit(const char *prog, const char *what, const char *extra,
                                    int status) {
    if (bench_rank() == 0) {
        fprintf(status ? stderr : stdout, "usage: mpiexec -n N %s [options]\n%s\noptions:\n%s%s",
                prog, what, bench_common_usage, extra ? extra : "");
    }
    MPI_Finalize();
    exit(status);
}

/*
 * One timed run of `iters` iterations of the benchmark kernel; returns the elapsed wall time seen
 * by the calling rank. Must be called by every rank of the communicator given to bench_measure().
 */
typedef double (*bench_kernel)(void *ctx, long iters);

/*
 * Measures one data point and returns the elapsed time of the measured run on the calling rank
 * (*iters_out gets its iteration count). After a first-touch call with one iteration, up to 16
 * more warm-up iterations run (in runs of 1, 1, 2, 4 and 8, stopping once they have taken half
 * the target on the root): an MPI's first rounds through its own fresh buffers (a shared ring
 * whose pages are first written, one fault each) can take several times as long as the next
 * ones, and a calibration that saw only them planned too few iterations, measured in the same
 * slow phase (OSU's benchmarks skip their first iterations likewise). Then the kernel
 * is run with 1, 4, 16... iterations until the root's elapsed time reaches 1/20 of the target;
 * the count is then scaled so that the measured run lasts about o->target_s, preceded by a
 * warm-up of a tenth of it. The root's timings are broadcast, so every rank of `comm` runs the
 * same counts. If a calibration run already lasted the target (slow operations), it is taken as
 * the measurement: a data point never costs more than about three calls plus twice the target
 * time.
 * With -i N: one warm-up call, N/10 warm-up iterations, then N measured iterations.
 */
static inline double bench_measure(const bench_opts *o, bench_kernel fn, void *ctx, int root,
                                   MPI_Comm comm, long *iters_out) {
    long iters;
    fn(ctx, 1); /* first touch: connection setup, page faults, caches */
    if (o->fixed_iters > 0) {
        iters = o->fixed_iters;
    } else {
        long n = 1;
        double t, spent = 0;
        for (long done = 0; done < 16 && spent < o->target_s / 2; done += n, n = done) {
            t = fn(ctx, n);
            MPI_Bcast(&t, 1, MPI_DOUBLE, root, comm);
            spent += t;
        }
        n = 1;
        for (;;) {
            t = fn(ctx, n);
            MPI_Bcast(&t, 1, MPI_DOUBLE, root, comm);
            if (t >= o->target_s / 20 || n >= o->max_iters) break;
            n *= 4;
        }
        if (t >= o->target_s || n >= o->max_iters) {
            *iters_out = n;
            return t; /* the last calibration run is the measurement (ctx state is its) */
        }
        double want = t > 0 ? (double)n * o->target_s / t : (double)o->max_iters;
        if (want > (double)o->max_iters) want = (double)o->max_iters;
        iters = want < 1 ? 1 : (long)want;
    }
    if (iters / 10 > 0) fn(ctx, iters / 10);
    *iters_out = iters;
    return fn(ctx, iters);
}

static inline void bench_result(const char *bench, const char *cse, long size, double value,
                                const char *unit, long iters) {
    if (bench_rank() != 0) return;
    printf("RESULT %s %s %ld %.6g %s %ld\n", bench, cse, size, value, unit, iters);
    fflush(stdout);
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of t[0..n) (t is sorted in place). */
static inline double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), bench_cmp_double);
    return t[n / 2];
}

/* Allocates a buffer and writes every byte of it (first touch); aborts on failure. The bytes
 * are 0x3f, not zero: compilers turn malloc followed by a zero fill into calloc, which leaves a
 * large buffer's pages unmapped, and every read of such a page then hits the kernel's single
 * zero page, always in the cache, which no program's data does. As floats the bytes are 0.747
 * and as doubles 4.8e-4, so sums of them stay ordinary numbers. */
static inline void *bench_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return NULL;
    }
    memset(p, 0x3f, bytes ? bytes : 1);
    return p;
}

#endif
