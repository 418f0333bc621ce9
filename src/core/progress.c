/* Waiting. Every blocking MPI call is a request plus co_progress_wait. A waiting rank polls
 * briefly with a pause instruction and then yields the CPU on every idle pass, so that on a
 * machine with fewer cores than ranks the rank we are waiting for gets to run. When ranks
 * outnumber cores it yields almost at once. */
#include "cohort.h"

#include <sched.h>
#include <time.h>

/* Give the CPU away; now and then (a long wait) let the collective layer look for ranks whose
 * calls disagree. */
static void yield_pass(const co_backoff *b) {
    if (CO_UNLIKELY(co_backoff_check_due(b)) && co_st.wait_check) co_st.wait_check();
    sched_yield();
}

void co_backoff_idle(co_backoff *b) {
    if (++b->idle < (unsigned)co_st.cfg.spin_count) {
        co_cpu_relax();
        return;
    }
    yield_pass(b);
}

void co_backoff_yield(co_backoff *b) {
    ++b->idle;
    yield_pass(b);
}

void co_progress_wait(co_req *r) {
    co_backoff b = {0};
    while (!r->complete) {
        if (co_progress()) {
            co_backoff_reset(&b);
        } else {
            co_backoff_idle(&b);
            if (CO_UNLIKELY(co_backoff_check_due(&b))) co_p2p_wait_check(r);
        }
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
