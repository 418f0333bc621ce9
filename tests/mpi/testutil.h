/* Helpers for the MPI test programs: a failed check prints where and why, then aborts the
 * job so that mpiexec (and ctest) see the failure. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int tu_rank(void) {
    int r = -1, init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (init && !fini) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Ends the job after a failed check; before MPI_Init and after MPI_Finalize, where MPI_Abort
 * is not available, the process exits by itself. */
static inline void tu_fail(void) {
    int init = 0, fini = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fini);
    if (fini || !init) exit(1);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", tu_rank(), __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fflush(stderr);                                                                        \
            tu_fail();                                                                             \
        }                                                                                          \
    } while (0)

#define CHECK_RC(call)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS) {                                                                  \
            char es_[MPI_MAX_ERROR_STRING];                                                        \
            tu_error(rc_, es_);                                                                    \
            CHECK(0, "%s returned %d (%s)", #call, rc_, es_);                                      \
        }                                                                                          \
    } while (0)

/* The error class an erroneous call returned under MPI_ERRORS_RETURN. */
#define CHECK_ERR(call, cls)                                                                       \
    do {                                                                                           \
        int rc_ = (call), cls_ = -1;                                                               \
        if (rc_ != MPI_SUCCESS) MPI_Error_class(rc_, &cls_);                                       \
        CHECK(cls_ == (cls), "%s: expected error class %d (%s), got rc %d class %d", #call, (cls), \
              #cls, rc_, cls_);                                                                    \
    } while (0)

/* The name every rank of MPI_COMM_WORLD uses for the test's files: $TMPDIR (else /tmp), then
 * cohort-<what>-test.<rank 0's pid>; the test adds a suffix per file. */
static inline void tu_tmp_name(char *out, int len, const char *what) {
    if (tu_rank() == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(out, (size_t)len, "%s/cohort-%s-test.%d", t && *t ? t : "/tmp", what,
                 (int)getpid());
    }
    MPI_Bcast(out, len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The error class of rc, with its message in msg (MPI_MAX_ERROR_STRING bytes; "" for
 * MPI_SUCCESS). */
static inline int tu_error(int rc, char *msg) {
    int cls = -1, len = 0;
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    msg[len] = 0;
    return cls;
}

/* A number in [0, n) from the random stream *state (splitmix64). The random tests draw the
 * plan every rank shares from one such stream and each rank's own choices from another. */
static inline int tu_below(uint64_t *state, int n) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (int)((z ^ (z >> 31)) % (uint64_t)n);
}

static inline void tu_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline unsigned char tu_pattern(int src, int dst, size_t i) {
    return (unsigned char)(src * 31 + dst * 7 + i * 13 + (i >> 8));
}

/* Ends the job as skipped (exit status 77; the test's SKIP_RETURN_CODE) unless
 * /proc/meminfo says at least need_kib are available. Rank 0 reads it for everyone; a
 * machine without MemAvailable runs the test. Call after MPI_Init. */
static inline void tu_need_memory(long long need_kib) {
    long long have = -1;
    if (tu_rank() == 0) {
        FILE *f = fopen("/proc/meminfo", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lld kB", &have) == 1) break;
        if (f) fclose(f);
    }
    MPI_Bcast(&have, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (have < 0 || have >= need_kib) return;
    if (tu_rank() == 0)
        printf("skipped: about %lld GiB needed, %lld GiB available\n", need_kib >> 20, have >> 20);
    MPI_Finalize();
    exit(77);
}

/* malloc for buffers of gigabytes: asks the kernel for transparent huge pages over the
 * block, where it would otherwise make the pages on first touch one 4 KiB fault at a time
 * (a machine whose huge pages are `madvise` only, or `always` with defrag `madvise`). On a
 * virtual machine such a fault can cost 12 us, 3 s a GiB. The advice is a hint: refused,
 * the block is still an ordinary one. Free with free(). */
static inline void *tu_big_malloc(size_t bytes) {
    char *p = malloc(bytes);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t from = ((size_t)p + pg - 1) & ~(pg - 1), to = ((size_t)p + bytes) & ~(pg - 1);
#ifdef MADV_HUGEPAGE
    if (p && to > from) (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#endif
    return p;
}

#endif
