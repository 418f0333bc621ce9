/* Waiting. Every blocking MPI call is a request plus co_progress_wait. A waiting rank polls
 * briefly with a pause instruction and then yields the CPU on every idle pass, so that on a
 * machine with fewer cores than ranks the rank we are waiting for gets to run. When ranks
 * outnumber cores it yields almost at once. */
#include "cohort.h"

#include <sched.h>
#include <time.h>

static void long_wait(void) {
    if (co_st.wait_check) co_st.wait_check();
}

void co_backoff_idle(co_backoff *b) {
    unsigned spin = (unsigned)co_st.cfg.spin_count;
    if (++b->idle < spin) {
        co_cpu_relax();
        return;
    }
    if (CO_UNLIKELY(b->idle % CO_WAIT_CHECK_PASSES == 0)) long_wait();
    sched_yield();
}

void co_backoff_yield(co_backoff *b) {
    if (CO_UNLIKELY(++b->idle % CO_WAIT_CHECK_PASSES == 0)) long_wait();
    sched_yield();
}

void co_progress_wait(co_req *r) {
    co_backoff b = {0};
    while (!r->complete) {
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}

void co_progress_wait_flag(const volatile int *flag, int value) {
    co_backoff b = {0};
    while (*flag < value) {
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}
