/* A communicator's segment is mapped into each rank in one go the first time a payload is
 * spread through it (co_cshm_populate): the broadcasts after the first then take no page
 * faults in the segment, where without it each reader faults in the root's buffers page by
 * page as the spread payloads reach them. COLL_PAGES=on expects at most a few faults per
 * rank over 200 broadcasts of 2 KiB after the first, COLL_PAGES=off (run with
 * COHORT_COLL_POPULATE=0) expects the faults, which shows the count sees them. Every
 * broadcast's data is checked as well. */
#include "testutil.h"

#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older C library headers lack it */
#endif

enum { B = 2048, CALLS = 200 };

static long faults(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Whether this kernel knows MADV_POPULATE_READ (Linux 5.14). */
static int kernel_populates(void) {
    long pg = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    int ok = madvise(p, (size_t)pg, MADV_POPULATE_READ) == 0;
    munmap(p, (size_t)pg);
    return ok;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *mode = getenv("COLL_PAGES");
    CHECK(mode && (!strcmp(mode, "on") || !strcmp(mode, "off")), "set COLL_PAGES=on or off");
    int on = !strcmp(mode, "on"), me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm c; /* a new segment, never touched before */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    unsigned char *buf = malloc(B);
    CHECK(buf, "out of memory");
    memset(buf, 0, B);
    long before = 0;
    for (int k = 0; k <= CALLS; k++) {
        if (k == 1) before = faults(); /* the first call maps the segment */
        for (int i = 0; i < B; i++) buf[i] = me == 0 ? (unsigned char)(k * 7 + i) : 0;
        CHECK_RC(MPI_Bcast(buf, B, MPI_BYTE, 0, c));
        for (int i = 0; i < B; i++)
            CHECK(buf[i] == (unsigned char)(k * 7 + i), "call %d: byte %d is %u", k, i, buf[i]);
    }
    long got = faults() - before;
    if (on && !kernel_populates()) {
        if (me == 0) printf("coll_pages: this kernel has no MADV_POPULATE_READ; not counted\n");
    } else if (on) {
        CHECK(got <= 4, "rank %d: %ld page faults in %d broadcasts after the first", me, got,
              CALLS);
    } else if (me != 0) {
        /* a reader meets each page of the root's buffers that the payloads reach */
        CHECK(got >= 8, "rank %d: only %ld page faults without mapping the segment", me, got);
    }
    free(buf);
    CHECK_RC(MPI_Comm_free(&c));
    MPI_Finalize();
    if (me == 0) printf("coll_pages %s: ok\n", mode);
    return 0;
}
