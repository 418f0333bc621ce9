/* Small services every layer uses: wall-clock time, diagnostics on stderr and mapping pages
 * ahead of use. */
#include "cohort.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t co_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older C library headers lack them */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void co_map_pages(const void *p, size_t len, int write) {
    if (!len) return;
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(pg - 1);
    uintptr_t e = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);
    (void)madvise((void *)a, e - a, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

double co_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void co_log(int level, const char *fmt, ...) {
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > co_st.cfg.log_level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (co_st.world_size > 1 || co_st.launched)
        fprintf(stderr, "cohort(rank %d) %s: %s\n", co_st.world_rank, names[level], msg);
    else
        fprintf(stderr, "cohort %s: %s\n", names[level], msg);
}
