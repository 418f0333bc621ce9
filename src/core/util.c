/* Small services every layer uses: wall-clock time and diagnostics on stderr. */
#include "cohort.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t co_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
