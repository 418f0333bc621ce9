/* Waiting. Every blocking MPI call is a request plus co_progress_wait. A waiting rank polls
 * briefly with a pause instruction and then yields the CPU on every idle pass, so that on a
 * machine with fewer cores than ranks the rank we are waiting for gets to run. When ranks
 * outnumber cores it yields almost at once. */
#include "cohort.h"
#include "../boot/boot.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>

/* ---- Deadlocks --------------------------------------------------------------------------------
 * A wait's periodic check (every CO_WAIT_CHECK_PASSES idle passes, and for a wait that yields
 * every CO_WAIT_CHECK_NS too) stores this rank's `quiet`
 * word: the stretch number changes when this is the wait's first check since it last did
 * something (a new wait, or one that found work since its last check), the check count
 * always. mpiexec reads the words: when every rank's stretch has stayed the same while its
 * checks went up by two or more, each of them has looked at everything it waits for, after
 * the others had stopped doing anything, and found nothing; nothing will change any more
 * (tools/mpiexec.c, watch_deadlock). */

/* How long a rank waits for mpiexec's report once it has said where it waits. */
#define DL_REPORT_NS 5000000000ull

const char *co_deadlock_reason(void) {
    static char reason[CO_DEADLOCK_WHERE + 96];
    snprintf(reason, sizeof(reason),
             "deadlock: every rank of the job waits in an MPI call and none can go on; this "
             "rank: %s",
             co_st.dl_where);
    return reason;
}

void co_deadlock_end(void) {
    char msg[CO_DEADLOCK_WHERE + 200];
    snprintf(msg, sizeof(msg), "cohort(rank %d): %s: %s; ending the job", co_st.world_rank,
             co_st.api_fn ? co_st.api_fn : "MPI", co_deadlock_reason());
    co_abort_job(MPI_ERR_OTHER, CO_ABORT_FATAL_ERROR, msg);
}

/* A wait without a deadlock check of its own (an internal one) ends the job. */
static void no_deadlock_check(void) {
    co_deadlock_claim("waiting inside the call");
    co_deadlock_end();
}

/* A process started without mpiexec (a singleton) watches itself: a wait in which it has
 * found nothing to do for COHORT_DEADLOCK_MS never ends, since no other process can change
 * anything it waits for. */
static void self_watch(co_seg *seg) {
    uint64_t now = co_now_ns();
    if (co_st.quiet_stretch != co_st.dl_self_stretch) { /* a new quiet stretch */
        co_st.dl_self_stretch = co_st.quiet_stretch;
        co_st.dl_self_since = now;
        return;
    }
    if (now - co_st.dl_self_since < (uint64_t)co_st.cfg.deadlock_ms * 1000000u) return;
    uint32_t g = atomic_load_explicit(&seg->hdr->dl_gen, memory_order_relaxed);
    if (g != co_st.dl_seen) return; /* declared already */
    atomic_store_explicit(&seg->hdr->dl_done, g + 1, memory_order_relaxed);
    atomic_store_explicit(&seg->hdr->dl_gen, g + 1, memory_order_release);
}

static void quiet_check(int first) {
    co_seg *seg = co_st.seg;
    if (!seg) return;
    if (first) co_st.quiet_stretch++; /* the wait's first check */
    co_st.quiet_checks++;
    if (!co_st.launched && co_st.cfg.deadlock_ms > 0) self_watch(seg);
    atomic_store_explicit(&seg->ranks[co_st.proc].quiet,
                          (uint64_t)co_st.quiet_stretch << 32 | co_st.quiet_checks,
                          memory_order_release);
    uint32_t g = atomic_load_explicit(&seg->hdr->dl_gen, memory_order_acquire);
    if (CO_LIKELY(g == co_st.dl_seen)) return;
    if (co_st.dl_pending != g) { /* news: the wait's own check answers (co_deadlock_due) */
        co_st.dl_pending = g;
        co_st.dl_stretch = co_st.quiet_stretch;
    } else if (co_st.dl_stretch == co_st.quiet_stretch) {
        no_deadlock_check(); /* the same wait again: it has no check of its own */
    } else { /* the wait ended some other way (another error, say): that answers too */
        co_st.dl_seen = g;
        co_st.dl_pending = 0;
    }
}

void co_wait_timed(void) {
    co_st.quiet_stretch++; /* the next check's word shows a new stretch */
}

int co_deadlock_due(void) {
    return co_st.dl_pending || (co_st.dl_call && co_st.dl_call == co_st.api_calls);
}

void co_deadlock_claim(const char *fmt, ...) {
    uint32_t g = co_st.dl_pending;
    if (!g) return; /* an earlier wait of this call said it already */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(co_st.dl_where, sizeof(co_st.dl_where), fmt, ap);
    va_end(ap);
    co_seg *seg = co_st.seg;
    snprintf(co_seg_note(seg, co_st.proc), CO_SEG_NOTE, "%s: %s",
             co_st.api_fn ? co_st.api_fn : "MPI", co_st.dl_where);
    atomic_store_explicit(&seg->ranks[co_st.proc].dl_ack, g, memory_order_release);
    /* every rank's error would end the job before mpiexec has heard from all of them */
    uint64_t until = co_now_ns() + DL_REPORT_NS;
    while (atomic_load_explicit(&seg->hdr->dl_done, memory_order_acquire) != g &&
           co_now_ns() < until)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    co_st.dl_seen = g;
    co_st.dl_pending = 0;
    co_st.dl_call = co_st.api_calls;
}

/* ---- Waiting --------------------------------------------------------------------------------- */

/* A wait's periodic check: the deadlock watch, then the collective layer's look for ranks
 * whose calls disagree. */
static void check_pass(co_backoff *b) {
    int first = !b->checked_at; /* (a check runs on a pass past the first: idle >= 1) */
    b->checked_at = b->idle;
    b->check_ns = co_now_ns() + CO_WAIT_CHECK_NS;
    quiet_check(first);
    if (co_st.wait_check) co_st.wait_check();
}

/* Whether the check is due on this pass: every CO_WAIT_CHECK_PASSES passes, and on a pass
 * that yields also once CO_WAIT_CHECK_NS have gone by since the last check (or since the
 * wait first yielded). The clock is read on every 8th yielding pass only. */
static inline int check_due(co_backoff *b, int yields) {
    if (b->idle % CO_WAIT_CHECK_PASSES == 0) return 1;
    if (!yields || b->idle % 8) return 0;
    uint64_t now = co_now_ns();
    if (!b->check_ns) b->check_ns = now + CO_WAIT_CHECK_NS;
    return now >= b->check_ns;
}

void co_backoff_idle(co_backoff *b) {
    ++b->idle;
    int yields = b->idle >= (b->p2p ? co_st.p2p_spin : (unsigned)co_st.cfg.spin_count);
    if (CO_UNLIKELY(check_due(b, yields))) check_pass(b);
    if (!yields)
        co_cpu_relax();
    else
        sched_yield();
}

/* A program that polls (MPI_Iprobe or MPI_Test in a loop, often with work in between) on a
 * rank that shares its core with the rank it waits for would otherwise keep the core until
 * the scheduler's time slice ends: a token passed round 4 ranks on 2 cores took 2-5 ms per
 * hop. Yielding at every miss, as Open MPI does, cost a program that polls while it works
 * (HPCC's RandomAccess) a factor of 19. So a run of misses with nothing started or completed
 * yields once it has lasted COHORT_POLL_YIELD_US, and then once per as long again
 * (docs/runtime.md, "Waiting", has the measurements). */
void co_poll_missed(void) {
    long us = co_st.cfg.poll_yield_us;
    if (!co_st.oversubscribed || us < 0) return;
    uint64_t now = co_now_ns();
    if (!co_st.poll_since) {
        co_st.poll_since = now;
        if (us) return;
    }
    if (now - co_st.poll_since >= (uint64_t)us * 1000u) {
        sched_yield();
        co_st.poll_since = co_now_ns();
    }
}

void co_backoff_yield(co_backoff *b) {
    ++b->idle;
    if (CO_UNLIKELY(check_due(b, 1))) check_pass(b);
    sched_yield();
}

void co_progress_wait(co_req *r) {
    co_progress_wait_as(r, co_req_user_p2p(r));
}

void co_progress_wait_as(co_req *r, int p2p) {
    co_backoff b = {.p2p = p2p};
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
