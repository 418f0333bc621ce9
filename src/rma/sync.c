/* Synchronisation of windows: fence, post-start-complete-wait (messages on the window's own
 * communicator) and passive-target locks (the lock words of the control blocks). Operations
 * complete at their call (rma.h), so what is left here is ordering: a memory fence, so that
 * this process's stores are seen before what follows, and the wait for the other side. */
#include "rma.h"

#include "../coll/coll.h"
#include "../comm/comm.h"
#include "../p2p/p2p.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_POST = 1, TAG_DONE = 2 };

/* One idle pass of a wait: progress (the holder of a lock may wait for this rank's
 * messages), then spin or yield as every wait does. */
static void idle(co_backoff *b) {
    if (co_progress())
        co_backoff_reset(b);
    else
        co_backoff_idle(b);
}

/* The lock word: CO_WIN_EXCL while an exclusive holder has it, the number of exclusive lockers
 * waiting (bits 32-62), the number of shared holders (bits 0-31). A waiting exclusive locker
 * keeps new shared ones out: without that, ranks that take and give back shared locks in a
 * loop (polling a flag under MPI_Win_lock) never leave the word free, and the exclusive one
 * waits for ever (8 ranks on 2 cores did). */
#define WAITER  (UINT64_C(1) << 32)
#define WAITERS (((UINT64_C(1) << 31) - 1) << 32)
#define SHARED  ((UINT64_C(1) << 32) - 1)

static int try_lock(co_win_ctl *c, int type, int *waiting) {
    uint64_t v = atomic_load_explicit(&c->lock, memory_order_relaxed);
    if (type == MPI_LOCK_EXCLUSIVE) {
        if (!*waiting) { /* count in as waiting, once */
            v = atomic_fetch_add_explicit(&c->lock, WAITER, memory_order_relaxed) + WAITER;
            *waiting = 1;
        }
        while (!(v & (CO_WIN_EXCL | SHARED)))
            if (atomic_compare_exchange_weak_explicit(&c->lock, &v, (v - WAITER) | CO_WIN_EXCL,
                                                      memory_order_acquire, memory_order_relaxed))
                return 1;
        return 0;
    }
    while (!(v & (CO_WIN_EXCL | WAITERS)))
        if (atomic_compare_exchange_weak_explicit(&c->lock, &v, v + 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
    return 0;
}

static void take_lock(co_win *w, int t, int type) {
    co_win_ctl *c = &w->ctl[t];
    int waiting = 0;
    if (try_lock(c, type, &waiting)) return;
    co_backoff b = {0};
    do idle(&b);
    while (!try_lock(c, type, &waiting));
}

static void give_lock(co_win *w, int t, int type) {
    atomic_thread_fence(memory_order_seq_cst);
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_fetch_and_explicit(&w->ctl[t].lock, ~CO_WIN_EXCL, memory_order_release);
    else
        atomic_fetch_sub_explicit(&w->ctl[t].lock, 1, memory_order_release);
}

void co_win_acc_lock(co_win *w, int t) {
    _Atomic uint32_t *m = &w->ctl[t].acc;
    uint32_t z = 0;
    if (atomic_compare_exchange_strong_explicit(m, &z, 1, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    co_backoff b = {0};
    for (;;) {
        z = 0;
        if (atomic_load_explicit(m, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(m, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        idle(&b);
    }
}

void co_win_acc_unlock(co_win *w, int t) {
    atomic_store_explicit(&w->ctl[t].acc, 0, memory_order_release);
}

int co_win_can_access(co_win *w, int t) {
    return w->fence != CO_FENCE_NONE || w->lock_all || w->locked[t] || (w->start && w->started[t]);
}

/* A new epoch of another kind may follow a fence only if no operation was issued since. */
static int leave_fence(co_win *w, const char *fn) {
    if (w->fence == CO_FENCE_USED)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                            "operations issued since the last MPI_Win_fence are not completed by "
                            "a closing fence");
    w->fence = CO_FENCE_NONE;
    return MPI_SUCCESS;
}

int co_win_fence(co_win *w, int mode, const char *fn) {
    if (w->start || w->post || w->nlocked || w->lock_all)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "a %s epoch is open on this window",
                            w->start  ? "post-start (access)"
                            : w->post ? "post-start (exposure)"
                                      : "lock");
    atomic_thread_fence(memory_order_seq_cst);
    int rc = co_barrier(w->comm);
    if (rc) return co_win_error(w, fn, rc, "the fence's barrier failed");
    w->fence = (mode & MPI_MODE_NOSUCCEED) ? CO_FENCE_NONE : CO_FENCE_OPEN;
    return MPI_SUCCESS;
}

/* An empty message with `tag` to each of the window ranks. */
static int tell(co_win *w, const int *ranks, int n, int tag, const char *fn) {
    co_dtype *byte = co_dt_get(MPI_BYTE);
    for (int i = 0; i < n; i++) {
        int rc = co_send(NULL, 0, byte, ranks[i], tag, w->comm, w->comm->ctx);
        if (rc) return co_win_error(w, fn, rc, "telling rank %d failed", ranks[i]);
    }
    return MPI_SUCCESS;
}

int co_win_post(co_win *w, const int *ranks, int n, int mode, const char *fn) {
    if (w->post)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                            "an exposure epoch (MPI_Win_post) is already open; MPI_Win_wait "
                            "ends it");
    int rc = leave_fence(w, fn);
    if (rc) return rc;
    atomic_thread_fence(memory_order_seq_cst);
    if (!(mode & MPI_MODE_NOCHECK) && (rc = tell(w, ranks, n, TAG_POST, fn))) return rc;
    /* MPI_Win_wait counts the origins' messages; which origin sent one does not matter */
    w->post = 1;
    w->npost = n;
    w->post_done = 0;
    return MPI_SUCCESS;
}

int co_win_start(co_win *w, int *ranks, int n, int mode, const char *fn) {
    int rc = MPI_SUCCESS;
    if (w->start)
        rc = co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                          "an access epoch (MPI_Win_start) is already open; MPI_Win_complete "
                          "ends it");
    else if (w->nlocked || w->lock_all)
        rc = co_win_error(w, fn, MPI_ERR_RMA_SYNC, "a lock epoch is open on this window");
    else
        rc = leave_fence(w, fn);
    co_dtype *byte = co_dt_get(MPI_BYTE);
    for (int i = 0; i < n && !rc && !(mode & MPI_MODE_NOCHECK); i++)
        if ((rc = co_recv(NULL, 0, byte, ranks[i], TAG_POST, w->comm, w->comm->ctx, NULL)))
            rc = co_win_error(w, fn, rc, "waiting for rank %d's MPI_Win_post failed", ranks[i]);
    if (rc) {
        free(ranks);
        return rc;
    }
    atomic_thread_fence(memory_order_seq_cst);
    w->start = ranks;
    w->nstart = n;
    for (int i = 0; i < n; i++) w->started[ranks[i]] = 1;
    return MPI_SUCCESS;
}

int co_win_complete(co_win *w, const char *fn) {
    if (!w->start)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "no access epoch (MPI_Win_start) is open");
    atomic_thread_fence(memory_order_seq_cst);
    int rc = tell(w, w->start, w->nstart, TAG_DONE, fn);
    for (int i = 0; i < w->nstart; i++) w->started[w->start[i]] = 0;
    free(w->start);
    w->start = NULL;
    w->nstart = 0;
    return rc;
}

int co_win_wait(co_win *w, int *flag, const char *fn) {
    if (!w->post)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "no exposure epoch (MPI_Win_post) is open");
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int rc;
    while (w->post_done < w->npost) {
        if (flag) {
            int got = 0;
            co_status st;
            if ((rc = co_iprobe(MPI_ANY_SOURCE, TAG_DONE, w->comm, w->comm->ctx, &got, &st)))
                return co_win_error(w, fn, rc, "probing for MPI_Win_complete failed");
            if (!got) {
                co_poll_missed();
                *flag = 0;
                return MPI_SUCCESS;
            }
        }
        if ((rc = co_recv(NULL, 0, byte, MPI_ANY_SOURCE, TAG_DONE, w->comm, w->comm->ctx, NULL)))
            return co_win_error(w, fn, rc, "waiting for the origins' MPI_Win_complete failed");
        w->post_done++;
    }
    atomic_thread_fence(memory_order_seq_cst);
    w->post = w->npost = w->post_done = 0;
    if (flag) *flag = 1;
    return MPI_SUCCESS;
}

int co_win_lock(co_win *w, int type, int rank, int mode, const char *fn) {
    if (w->locked[rank] || w->lock_all)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "rank %d is already locked by this rank%s",
                            rank, w->lock_all ? " (MPI_Win_lock_all)" : "");
    if (w->start)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                            "an access epoch (MPI_Win_start) is open on this window");
    int rc = leave_fence(w, fn);
    if (rc) return rc;
    if (mode & MPI_MODE_NOCHECK) {
        w->locked[rank] = CO_WIN_LOCK_NOCHECK;
    } else {
        take_lock(w, rank, type);
        w->locked[rank] = (uint8_t)(type == MPI_LOCK_EXCLUSIVE ? 1 : 2);
    }
    w->nlocked++;
    return MPI_SUCCESS;
}

int co_win_unlock(co_win *w, int rank, const char *fn) {
    if (!w->locked[rank])
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "rank %d is not locked by this rank%s", rank,
                            w->lock_all ? " (MPI_Win_lock_all: use MPI_Win_unlock_all)" : "");
    int how = w->locked[rank];
    if (how == CO_WIN_LOCK_NOCHECK)
        atomic_thread_fence(memory_order_seq_cst);
    else
        give_lock(w, rank, how == 1 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
    w->locked[rank] = 0;
    w->nlocked--;
    return MPI_SUCCESS;
}

int co_win_lock_all(co_win *w, int mode, const char *fn) {
    if (w->lock_all || w->nlocked)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "this rank already holds %s",
                            w->lock_all ? "MPI_Win_lock_all" : "a lock on this window");
    if (w->start)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                            "an access epoch (MPI_Win_start) is open on this window");
    int rc = leave_fence(w, fn);
    if (rc) return rc;
    if (mode & MPI_MODE_NOCHECK) {
        w->lock_all = 2;
        return MPI_SUCCESS;
    }
    for (int t = 0; t < w->size; t++) take_lock(w, t, MPI_LOCK_SHARED);
    w->lock_all = 1;
    return MPI_SUCCESS;
}

int co_win_unlock_all(co_win *w, const char *fn) {
    if (!w->lock_all)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all is not in force");
    if (w->lock_all == 1)
        for (int t = 0; t < w->size; t++) give_lock(w, t, MPI_LOCK_SHARED);
    else
        atomic_thread_fence(memory_order_seq_cst);
    w->lock_all = 0;
    return MPI_SUCCESS;
}
