/* MPI_Barrier: dissemination (point-to-point), the counter barrier and a flag barrier (both
 * on the communicator's shared-memory segment).
 *
 * Counter barrier: every rank owns a counter in its own cache line. Entering barrier number
 * e (counted per communicator), a rank adds one to the counter of every peer and leaves when
 * its own counter reaches e*(N-1). Counters are never reset: a fast peer may already be
 * adding for barrier e+1, which is why the exit test is >= and not ==. */
#include "coll.h"

const co_coll_alg co_barrier_algs[] = {
    {"dissemination", 0, "ceil(log2 N) rounds of zero-byte point-to-point messages"},
    {"counter", CO_ALG_SHM,
     "each arriving rank adds one to every peer's counter (own cache lines), leaves when its "
     "own counter reaches e*(N-1)"},
    {"flag", CO_ALG_SHM,
     "rank 0 reads every rank's arrival flag (a radix-8 tree above 17 ranks), leaves first "
     "and releases everyone with one flag"},
};
CO_ALG_TABLE_CHECK(co_barrier_algs, CO_BARRIER_NALGS);

static int barrier_dissemination(co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    for (int dist = 1; dist < n; dist <<= 1) {
        int to = (me + dist) % n, from = (me - dist + n) % n;
        int r = co_sendrecv(NULL, 0, byte, to, co_coll_tag(c, CO_TAG_BARRIER), NULL, 0, byte, from,
                            co_coll_tag(c, CO_TAG_BARRIER), c, co_coll_ctx(c), NULL);
        if (r && !rc) rc = r;
    }
    return rc;
}

static int barrier_counter(co_comm *c, co_cshm *s) {
    int n = s->n, me = s->me;
    uint64_t e = ++c->coll->barrier_epoch;
    /* Two ranks: my peer's counter has one writer, me, so the add is a plain store of the
     * value it would produce. A locked add holds the core until it owns the line; the store
     * lets it go on to poll its own counter at once (far CPUs: 0.36 µs against 0.51). */
    if (n == 2) {
        atomic_store_explicit(&s->ctl[1 - me].counter, e, memory_order_release);
        co_cshm_wait_word(&s->ctl[me].counter, e);
        return MPI_SUCCESS;
    }
    for (int k = 1; k < n; k++) {
        int q = me + k < n ? me + k : me + k - n;
        atomic_fetch_add_explicit(&s->ctl[q].counter, 1, memory_order_acq_rel);
    }
    co_cshm_wait_word(&s->ctl[me].counter, e * (uint64_t)(n - 1));
    return MPI_SUCCESS;
}

/* A rank's step is its arrival (its subtree has arrived); rank 0's step is the release.
 * Up to FLAG_FLAT ranks, rank 0 reads every arrival itself: with more ranks than cores, each
 * level of a tree waits for its inner rank to be scheduled (at 8 ranks on 2 cores a radix-4
 * tree took twice as long as the flat gather, docs/collectives.md). */
#define FLAG_FLAT 17
static int barrier_flag(co_cshm *s) {
    int n = s->n, me = s->me;
    int radix = n <= FLAG_FLAT ? n - 1 : 8;
    uint64_t g = ++s->seq;
    for (int k = 1; k <= radix; k++) {
        int child = me * radix + k;
        if (child >= n) break;
        co_cshm_wait(s, child, g);
    }
    co_cshm_post(s, g);
    if (me != 0) co_cshm_wait(s, 0, g);
    return MPI_SUCCESS;
}

int co_barrier(co_comm *c) {
    if (co_coll_unwatched())
        return co_coll_layer(c, &(co_coll_args){.kind = CO_COLL_BARRIER, .root = -1}, 0);
    if (c->size < 2) return MPI_SUCCESS;
    int rc;
    switch (co_coll_pick(c, CO_COLL_BARRIER, 0, NULL, NULL)) {
    case CO_BARRIER_COUNTER: rc = barrier_counter(c, c->coll->shm); break;
    case CO_BARRIER_FLAG: rc = barrier_flag(c->coll->shm); break;
    default: rc = barrier_dissemination(c); break;
    }
    /* Every rank has returned from every earlier collective on c, so nobody reads my shared
     * buffers any more: the next collectives reuse them without asking (no wait on the
     * peers' step words, each a cache miss on the path to the first publish). */
    co_cshm *s = c->coll ? c->coll->shm : NULL;
    if (rc == MPI_SUCCESS && s)
        for (int b = 0; b < CO_CSHM_NBUF; b++) s->free_at[b] = 0;
    return rc;
}
