/* The collective layer's common ground: the registry of algorithms (what `cohort info` lists
 * and COHORT_<COLL>_ALGORITHM names), the selection table that picks an algorithm by
 * communicator size, message size and shared memory, per-communicator state, and the copy
 * and combine helpers the per-collective files share. */
#include "coll.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S (co_st.coll)

#define DESC(kind, nm, set, field, table, n)                                                       \
    [kind] = {nm, set, offsetof(co_config, field), table, n}

static const co_coll_desc registry[CO_COLL_KINDS] = {
    DESC(CO_COLL_BARRIER, "barrier", "BARRIER_ALGORITHM", barrier_algorithm, co_barrier_algs,
         CO_BARRIER_NALGS),
    DESC(CO_COLL_BCAST, "bcast", "BCAST_ALGORITHM", bcast_algorithm, co_bcast_algs, CO_BCAST_NALGS),
    DESC(CO_COLL_REDUCE, "reduce", "REDUCE_ALGORITHM", reduce_algorithm, co_reduce_algs,
         CO_REDUCE_NALGS),
    DESC(CO_COLL_ALLREDUCE, "allreduce", "ALLREDUCE_ALGORITHM", allreduce_algorithm,
         co_allreduce_algs, CO_ALLREDUCE_NALGS),
    DESC(CO_COLL_GATHER, "gather", "GATHER_ALGORITHM", gather_algorithm, co_gather_algs,
         CO_GATHER_NALGS),
    DESC(CO_COLL_GATHERV, "gatherv", "GATHERV_ALGORITHM", gatherv_algorithm, co_gatherv_algs,
         CO_GATHERV_NALGS),
    DESC(CO_COLL_SCATTER, "scatter", "SCATTER_ALGORITHM", scatter_algorithm, co_scatter_algs,
         CO_SCATTER_NALGS),
    DESC(CO_COLL_SCATTERV, "scatterv", "SCATTERV_ALGORITHM", scatterv_algorithm, co_scatterv_algs,
         CO_SCATTERV_NALGS),
    DESC(CO_COLL_ALLGATHER, "allgather", "ALLGATHER_ALGORITHM", allgather_algorithm,
         co_allgather_algs, CO_ALLGATHER_NALGS),
    DESC(CO_COLL_ALLGATHERV, "allgatherv", "ALLGATHERV_ALGORITHM", allgatherv_algorithm,
         co_allgatherv_algs, CO_ALLGATHERV_NALGS),
    DESC(CO_COLL_ALLTOALL, "alltoall", "ALLTOALL_ALGORITHM", alltoall_algorithm, co_alltoall_algs,
         CO_ALLTOALL_NALGS),
    DESC(CO_COLL_ALLTOALLV, "alltoallv", "ALLTOALLV_ALGORITHM", alltoallv_algorithm,
         co_alltoallv_algs, CO_ALLTOALLV_NALGS),
    DESC(CO_COLL_REDUCE_SCATTER, "reduce_scatter", "REDUCE_SCATTER_ALGORITHM",
         reduce_scatter_algorithm, co_reduce_scatter_algs, CO_RSCAT_NALGS),
    DESC(CO_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", "REDUCE_SCATTER_BLOCK_ALGORITHM",
         reduce_scatter_block_algorithm, co_reduce_scatter_algs, CO_RSCAT_NALGS),
    DESC(CO_COLL_SCAN, "scan", "SCAN_ALGORITHM", scan_algorithm, co_scan_algs, CO_SCAN_NALGS),
    DESC(CO_COLL_EXSCAN, "exscan", "EXSCAN_ALGORITHM", exscan_algorithm, co_exscan_algs,
         CO_SCAN_NALGS),
};

const co_coll_desc *co_coll_registry(int *n) {
    *n = CO_COLL_KINDS;
    return registry;
}

/* -1: auto; -2: unknown name; else the algorithm id. */
static int lookup(int kind, const char *name) {
    if (!name[0] || !strcmp(name, "auto")) return -1;
    for (int a = 0; a < registry[kind].nalgs; a++)
        if (!strcmp(registry[kind].algs[a].name, name)) return a;
    return -2;
}

int co_coll_check_config(const co_config *cfg, char *err, size_t errlen) {
    for (int k = 0; k < CO_COLL_KINDS; k++) {
        const char *v = (const char *)cfg + registry[k].cfg_offset;
        if (lookup(k, v) != -2) continue;
        int len = snprintf(err, errlen, "COHORT_%s=%s: unknown %s algorithm (choose auto",
                           registry[k].setting, v, registry[k].name);
        for (int a = 0; a < registry[k].nalgs && len > 0 && (size_t)len < errlen; a++)
            len += snprintf(err + len, errlen - (size_t)len, ", %s", registry[k].algs[a].name);
        if (len > 0 && (size_t)len < errlen) snprintf(err + len, errlen - (size_t)len, ")");
        return -1;
    }
    return 0;
}

/* ---- Selection ------------------------------------------------------------------------------
 * The first rule of the collective whose limits hold and whose algorithm can run wins; if
 * none does, the collective's first algorithm (which runs everywhere). The limits come from
 * measurements on a 2-core machine at 2, 4 and 8 ranks (docs/collectives.md has the
 * numbers); `costly` rules only where single-copy reads are slow (COHORT_CMA_COST, which
 * mpiexec measures). `shared`: the rule only applies when all members share memory (every
 * communicator, until there is a network transport; the other rules are the point-to-point
 * choices for that day). */
typedef struct rule {
    uint8_t kind, alg, shared;
    int max_np;       /* communicator size at most this */
    size_t max_bytes; /* bytes per block at most this */
    uint8_t costly;   /* only where single-copy reads are costly (CO_CMA_COSTLY_NS) */
} rule;

#define ANY 0x7fffffff
#define KB  1024u
#define MB  (1024u * 1024u)
#define BIG ((size_t)-1)

static const rule rules[] = {
    {CO_COLL_BARRIER, CO_BARRIER_COUNTER, 1, ANY, BIG},

    {CO_COLL_BCAST, CO_BCAST_SHM, 1, ANY, 4 * KB},
    {CO_COLL_BCAST, CO_BCAST_SHM, 1, 2, 256 * KB, 1},
    {CO_COLL_BCAST, CO_BCAST_CMA, 1, 2, BIG},
    {CO_COLL_BCAST, CO_BCAST_SHM, 1, 4, 4 * MB, 1},
    {CO_COLL_BCAST, CO_BCAST_CMA, 1, 3, BIG},
    {CO_COLL_BCAST, CO_BCAST_SHM, 1, ANY, 256 * KB, 1},
    {CO_COLL_BCAST, CO_BCAST_CMA, 1, ANY, BIG},
    {CO_COLL_BCAST, CO_BCAST_BINOMIAL, 0, ANY, 32 * KB},
    {CO_COLL_BCAST, CO_BCAST_SCATTER_ALLGATHER, 0, ANY, BIG},

    {CO_COLL_REDUCE, CO_REDUCE_SHM, 1, ANY, 4 * KB},
    {CO_COLL_REDUCE, CO_REDUCE_SHM, 1, 2, 256 * KB, 1},
    {CO_COLL_REDUCE, CO_REDUCE_CMA, 1, 2, BIG},
    {CO_COLL_REDUCE, CO_REDUCE_SHM, 1, ANY, 256 * KB},
    {CO_COLL_REDUCE, CO_REDUCE_CMA, 1, ANY, BIG},
    {CO_COLL_REDUCE, CO_REDUCE_BINOMIAL, 0, ANY, 64 * KB},
    {CO_COLL_REDUCE, CO_REDUCE_SCATTER_GATHER, 0, ANY, BIG},

    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_SHM, 1, 2, 4 * KB},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_SHM, 1, 2, 128 * KB, 1},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_CMA, 1, 2, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_REDUCE_BCAST, 1, 2, 2 * MB},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_RING, 1, 2, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_REDUCE_BCAST, 1, 2, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_SHM, 1, 4, 256 * KB},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_CMA, 1, 4, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_SHM, 1, ANY, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_REDUCE_BCAST, 1, ANY, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_RECURSIVE_DOUBLING, 0, ANY, 16 * KB},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_RING, 0, ANY, BIG},
    {CO_COLL_ALLREDUCE, CO_ALLREDUCE_REDUCE_BCAST, 0, ANY, BIG},

    {CO_COLL_GATHER, CO_GATHER_SHM, 1, 2, 1 * KB},
    {CO_COLL_GATHER, CO_GATHER_CMA, 1, 2, 16 * KB},
    {CO_COLL_GATHER, CO_GATHER_SHM, 1, 2, 256 * KB, 1},
    {CO_COLL_GATHER, CO_GATHER_CMA, 1, 2, BIG},
    {CO_COLL_GATHER, CO_GATHER_CMA, 1, ANY, 1 * KB},
    {CO_COLL_GATHER, CO_GATHER_LINEAR, 1, ANY, 16 * KB},
    {CO_COLL_GATHER, CO_GATHER_SHM, 1, ANY, 256 * KB, 1},
    {CO_COLL_GATHER, CO_GATHER_CMA, 1, ANY, BIG},
    {CO_COLL_GATHER, CO_GATHER_SHM, 1, ANY, 16 * KB},
    {CO_COLL_GATHER, CO_GATHER_BINOMIAL, 0, ANY, 1 * KB},

    {CO_COLL_GATHERV, CO_GATHERV_CMA, 1, ANY, BIG},

    {CO_COLL_SCATTER, CO_SCATTER_SHM, 1, 2, 512},
    {CO_COLL_SCATTER, CO_SCATTER_CMA, 1, ANY, 512},
    {CO_COLL_SCATTER, CO_SCATTER_SHM, 1, ANY, 512},
    {CO_COLL_SCATTER, CO_SCATTER_SHM, 1, 2, 256 * KB, 1},
    {CO_COLL_SCATTER, CO_SCATTER_CMA, 1, 2, BIG},
    {CO_COLL_SCATTER, CO_SCATTER_SHM, 1, 4, 4 * KB},
    {CO_COLL_SCATTER, CO_SCATTER_LINEAR, 1, ANY, 4 * KB},
    {CO_COLL_SCATTER, CO_SCATTER_CMA, 1, ANY, BIG},
    {CO_COLL_SCATTER, CO_SCATTER_BINOMIAL, 0, ANY, 1 * KB},

    {CO_COLL_SCATTERV, CO_SCATTERV_CMA, 1, ANY, BIG},

    {CO_COLL_ALLGATHER, CO_ALLGATHER_SHM, 1, 2, 64 * KB, 1},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_SHM, 1, 2, 1 * KB},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_CMA, 1, 2, BIG},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_CMA, 1, 4, 64},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_SHM, 1, 4, 64 * KB},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_SHM, 1, ANY, 4 * MB, 1},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_LINEAR, 1, 4, BIG},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_SHM, 1, ANY, 256 * KB},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_LINEAR, 1, ANY, BIG},
    {CO_COLL_ALLGATHER, CO_ALLGATHER_BRUCK, 0, ANY, 1 * KB},

    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_SHM, 1, 2, 64 * KB, 1},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_SHM, 1, 2, 1 * KB},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_CMA, 1, 2, BIG},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_CMA, 1, 4, 64},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_SHM, 1, 4, 64 * KB},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_SHM, 1, ANY, 4 * MB, 1},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_LINEAR, 1, 4, BIG},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_SHM, 1, ANY, 256 * KB},
    {CO_COLL_ALLGATHERV, CO_ALLGATHERV_LINEAR, 1, ANY, BIG},

    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, 2, 64 * KB, 1},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, ANY, 1 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_CMA, 1, 2, BIG},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, 4, 128 * KB, 1},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, ANY, 64 * KB, 1},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, 3, 32 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, 4, 4 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_LINEAR, 1, 4, 32 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_CMA, 1, 4, 64 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_SHM, 1, ANY, 32 * KB},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_LINEAR, 1, ANY, BIG},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_BRUCK, 0, ANY, 256},
    {CO_COLL_ALLTOALL, CO_ALLTOALL_LINEAR, 0, ANY, BIG},

    {CO_COLL_ALLTOALLV, CO_ALLTOALLV_CMA, 1, ANY, BIG},
    {CO_COLL_ALLTOALLV, CO_ALLTOALLV_LINEAR, 0, ANY, BIG},

    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_SHM, 1, 2, 8 * KB},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_SHM, 1, 2, 256 * KB, 1},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_RING, 1, 2, BIG},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_CMA, 1, 2, BIG},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_SHM, 1, ANY, 256 * KB},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_CMA, 1, ANY, BIG},
    {CO_COLL_REDUCE_SCATTER, CO_RSCAT_RING, 0, ANY, BIG},

    {CO_COLL_SCAN, CO_SCAN_SHM, 1, 2, 4 * KB},
    {CO_COLL_SCAN, CO_SCAN_SHM, 1, 2, 4 * MB, 1},
    {CO_COLL_SCAN, CO_SCAN_CHAIN, 1, 2, BIG},
    {CO_COLL_SCAN, CO_SCAN_SHM, 1, 8, 256 * KB},
    {CO_COLL_SCAN, CO_SCAN_SHM, 1, ANY, 64 * KB},
    {CO_COLL_SCAN, CO_SCAN_CHAIN, 1, ANY, BIG},
    {CO_COLL_SCAN, CO_SCAN_RECURSIVE_DOUBLING, 0, ANY, 64 * KB},
    {CO_COLL_EXSCAN, CO_SCAN_SHM, 1, 2, 4 * KB},
    {CO_COLL_EXSCAN, CO_SCAN_SHM, 1, 2, 128 * KB, 1},
    {CO_COLL_EXSCAN, CO_SCAN_CMA, 1, 2, BIG},
    {CO_COLL_EXSCAN, CO_SCAN_SHM, 1, 8, 256 * KB},
    {CO_COLL_EXSCAN, CO_SCAN_SHM, 1, ANY, 64 * KB},
    {CO_COLL_EXSCAN, CO_SCAN_CHAIN, 1, 3, BIG},
    {CO_COLL_EXSCAN, CO_SCAN_CHAIN, 1, 8, 512 * KB},
    {CO_COLL_EXSCAN, CO_SCAN_LINEAR, 1, 8, BIG},
    {CO_COLL_EXSCAN, CO_SCAN_CHAIN, 1, ANY, BIG},
    {CO_COLL_EXSCAN, CO_SCAN_RECURSIVE_DOUBLING, 0, ANY, 64 * KB},
};

int co_coll_all_local(const co_comm *c) {
    (void)c;
    return co_st.emu == NULL;
}

static int usable(co_comm *c, int kind, int alg, const co_op *op, const co_dtype *dt) {
    unsigned need = registry[kind].algs[alg].needs;
    if ((need & CO_ALG_COMMUTE) && (!op || !op->commute)) return 0;
    if ((need & CO_ALG_DENSE) && (!dt || !co_coll_dense(dt))) return 0;
    if (need & (CO_ALG_SHM | CO_ALG_CMA)) {
        if (!co_coll_all_local(c) || !co_cshm_get(c)) return 0;
        const co_cshm *s = c->coll->shm;
        if ((need & CO_ALG_CMA) && !s->cma) return 0;
        if ((need & CO_ALG_TABLE) && !co_cma_fits(s, c->size)) return 0;
        if ((need & CO_ALG_SLOTS) && co_cshm_cap(s) / (size_t)c->size < 64) return 0;
        /* the shared-memory reductions take at least one element per buffer */
        if ((need & CO_ALG_DENSE) && (need & CO_ALG_SHM) &&
            (size_t)(dt->true_ub - dt->true_lb) > co_cshm_cap(s))
            return 0;
    }
    return 1;
}

static int holds(const rule *r, int np, size_t bytes, int shared, int costly) {
    return (!r->shared || shared) && np <= r->max_np && bytes <= r->max_bytes &&
           (!r->costly || costly);
}

static int choose(co_comm *c, int kind, size_t bytes, const co_op *op, const co_dtype *dt) {
    int f = S->forced[kind];
    if (f >= 0 && usable(c, kind, f, op, dt)) return f;
    int shared = co_coll_all_local(c);
    if (kind == CO_COLL_BCAST && !shared && co_st.cfg.bcast_tune && c->size > 2)
        return CO_BCAST_TUNED;
    for (size_t i = S->first_rule[kind]; i < S->end_rule[kind]; i++) {
        const rule *r = &rules[i];
        if (holds(r, c->size, bytes, shared, S->cma_costly) && usable(c, kind, r->alg, op, dt))
            return r->alg;
    }
    return 0;
}

/* The choice also becomes the segment's tag, which every buffer published from now on
 * carries (a reader that finds another tag knows the ranks chose differently), and part of
 * the call's point-to-point tags (co_coll_tag). */
static void chosen(co_comm *c, int kind, int alg) {
    if (!c->coll) return;
    c->coll->tag_alg = (unsigned)alg;
    if (c->coll->shm) c->coll->shm->tag = CO_CSHM_TAG(kind, alg, c->coll->calls);
}

int co_coll_pick(co_comm *c, int kind, size_t bytes, const co_op *op, const co_dtype *dt) {
    if (CO_UNLIKELY(c->coll && c->coll->nbc_shm_started != c->coll->nbc_shm_finished))
        co_nbc_shm_drain(c);
    int alg = choose(c, kind, bytes, op, dt);
    chosen(c, kind, alg);
    return alg;
}

int co_coll_cma_costly(void) {
    return S->cma_costly;
}

int co_coll_table_pick(int kind, int np, size_t bytes, int shared, long cma_ns) {
    if (kind == CO_COLL_REDUCE_SCATTER_BLOCK) kind = CO_COLL_REDUCE_SCATTER;
    for (size_t i = 0; i < CO_ARRAY_LEN(rules); i++)
        if (rules[i].kind == kind &&
            holds(&rules[i], np, bytes, shared, cma_ns >= CO_CMA_COSTLY_NS))
            return rules[i].alg;
    return 0;
}

/* ---- Per-communicator state ------------------------------------------------------------------ */

co_coll_comm *co_coll_comm_of(co_comm *c) {
    if (CO_LIKELY(c->coll != NULL)) return c->coll;
    c->coll = calloc(1, sizeof(co_coll_comm));
    if (!c->coll) co_fatal("out of memory for collective state");
    return c->coll;
}

static void sweep_zombies(void) {
    co_cshm_zombie **pp = &S->zombies;
    while (*pp) {
        co_cshm_zombie *z = *pp;
        co_cshm_hdr *h = z->hdr;
        if (atomic_load_explicit(&h->released, memory_order_acquire) < z->size) {
            pp = &z->next;
            continue;
        }
        co_shm_heap_free(&S->heap, z->off, z->len);
        *pp = z->next;
        free(z);
    }
}

/* Gives a communicator's shared-memory segment back (the master's slice reuses the region once
 * every member has). */
static void release_segment(co_coll_comm *cc) {
    co_cshm *s = cc->shm;
    if (s && S) {
        /* The master's slice holds the region: it is reused only after every member has
         * freed the communicator (a slow member may still be reading the last collective). */
        if (s->owner) {
            co_cshm_zombie *z = malloc(sizeof(*z));
            if (z) {
                z->off = s->off;
                z->len = s->bytes;
                z->hdr = s->hdr;
                z->size = s->n;
                z->next = S->zombies;
                S->zombies = z;
            }
        }
        atomic_fetch_add_explicit(&s->hdr->released, 1, memory_order_acq_rel);
        if (s->owner) sweep_zombies();
    }
    if (s) {
        free(s->pids);
        free(s->seen);
        free(s);
    }
    cc->shm = NULL;
}

/* The program has freed c while requests still use it: comm.c keeps the object until they
 * are gone, which for a send of an abandoned call that its receiver will never take is
 * never. No collective can be called on c any more, so its segment goes back now, unless a
 * call in flight uses it (a counter MPI_Ibarrier, nbc.c); without that, every abandoned call
 * with large messages kept a segment, and after some dozens a new communicator found no room
 * for one. */
static void coll_comm_freed(co_comm *c) {
    co_coll_comm *cc = c->coll;
    if (!cc || !cc->shm || co_nbc_uses_segment(c)) return;
    release_segment(cc);
    cc->shm_state = -1;
}

void co_coll_comm_free(co_comm *c) {
    co_coll_comm *cc = c->coll;
    if (!cc) return;
    release_segment(cc);
    free(cc->lag);
    free(cc->tune_key);
    if (cc->tune_pair) co_dt_release(cc->tune_pair);
    free(cc);
    c->coll = NULL;
}

void co_coll_renumber(co_comm *c, int qa, int qb) {
    co_coll_comm *cc = c->coll;
    if (!cc) return;
    co_cshm *s = cc->shm;
    if (s && s->me != c->rank) { /* this process holds another rank of c now */
        s->me = c->rank;
        /* its own buffers are another rank's: their reuse steps start afresh (every step
         * before the swap is complete everywhere), their pages are not mapped here yet */
        memset(s->free_at, 0, sizeof(s->free_at));
        s->populated = 0;
    }
    if (qa >= 0 && qb >= 0) {
        if (s) {
            pid_t t = s->pids[qa];
            s->pids[qa] = s->pids[qb];
            s->pids[qb] = t;
        }
        /* per-rank timings and the tuner's key (process slots) describe the old placement */
        free(cc->lag);
        cc->lag = NULL;
        free(cc->tune_key);
        cc->tune_key = NULL;
    }
}

/* ---- Mismatched calls (see coll.h) ------------------------------------------------------------
 */

/* The call in progress: where to jump back to when it is abandoned. */
typedef struct co_coll_call {
    co_comm *c;
    int cls;          /* the error class, when the call was abandoned (message: broken_msg) */
    int setup;        /* setting up the communicator's segment (its first call), not numbered */
    int published;    /* this rank's control block says it waits in this call (unpublish) */
    pid_t ended;      /* abandoned because this process ended (co_coll_fail_ended), or 0 */
    co_coll_sig pend; /* during the set-up: the signature the call will have */
    void *escape[5];  /* for __builtin_setjmp */
} co_coll_call;

static void unpublish(co_coll_call *k);
CO_NORETURN static void abandon(co_coll_call *k, int cls);

/* A signature's `what`: the collective, its root and a reduction's operator (co_coll_sig),
 * and back. User-defined operators are not told apart: their handles may differ between
 * ranks that pass the same operator. */
#define SIG_USER_OP 255
static inline uint64_t sig_what(int kind, int root, const co_op *op) {
    uint64_t o = !op ? 0 : op->predefined ? (uint64_t)op->predefined : SIG_USER_OP;
    return o << 48 | (uint64_t)kind << 32 | (uint32_t)root;
}
static inline int sig_kind(const co_coll_sig *g) {
    return (int)(g->what >> 32 & 0xffff);
}
static inline int sig_root(const co_coll_sig *g) {
    return (int)(uint32_t)g->what;
}
static inline int sig_op(const co_coll_sig *g) {
    return (int)(g->what >> 48);
}

/* The running hash after a call (what) made with the segment at step `steps`, from the hash
 * before it. It leaves the sizes out: a call whose sizes differed and that the data path
 * reported (TRUNCATE, COUNT) leaves the communicator usable. It takes in the segment's step
 * count instead, the same on every rank unless such a call made the ranks' shared-memory
 * algorithms run different numbers of rounds: then the next wait finds the chains apart,
 * where the ranks would otherwise wait for steps that never come. */
static inline uint64_t chain_next(uint64_t chain, uint64_t what, uint64_t steps) {
    chain = (chain ^ what ^ steps << 40 ^ steps >> 24) * 0x9e3779b97f4a7c15ull;
    return (chain ^ chain >> 29) * 0xbf58476d1ce4e5b9ull;
}

void co_coll_nb_record(co_coll_comm *cc, const co_coll_args *a) {
    cc->nbc_chain = chain_next(cc->nbc_chain, sig_what(a->kind, a->root, a->op), cc->nbc_calls);
    if (cc->shm) co_cshm_nb_publish(cc->shm, cc->nbc_chain);
}

/* Numbers the call on its communicator and remembers its signature; returns it. */
static inline co_coll_sig record(co_coll_comm *cc, uint64_t what, uint64_t bytes) {
    uint64_t n = ++cc->calls;
    uint64_t chain =
        chain_next(cc->hist[(n - 1) % CO_COLL_HIST].chain, what, cc->shm ? cc->shm->seq : 0);
    co_coll_sig g = {n, what, bytes, chain};
    cc->hist[n % CO_COLL_HIST] = g;
    return g;
}

/* Publishes the call's signature and makes it the watched one (a few stores to a line only
 * this rank writes): every collective call pays for this. The first call on a communicator
 * sets up its segment (every rank reaches it at the same call, so collectively); without a
 * segment there is nowhere to publish and the call is not watched. MPI_SUCCESS, or the class
 * of the disagreement that broke c earlier. */
static inline int enter(co_coll_call *k, co_comm *c, uint64_t what, uint64_t bytes) {
    co_coll_comm *cc = c->coll;
    k->c = c;
    k->setup = 0;
    k->published = 0;
    k->ended = 0;
    if (CO_UNLIKELY(!cc || cc->shm_state <= 0 || cc->broken)) {
        cc = co_coll_comm_of(c);
        if (cc->broken) return cc->broken;
        int ready = c->size > 1 && cc->shm_state > 0;
        if (c->size > 1 && cc->shm_state == 0) { /* the set-up waits for every rank: watch it */
            k->setup = 1;
            k->pend = (co_coll_sig){cc->calls + 1, what, bytes, 0};
            S->cur = k;
            ready = co_cshm_get(c) != NULL;
            S->cur = NULL;
            if (k->published) unpublish(k); /* it said "set-up", which needs every rank */
            k->setup = 0;
        }
        if (!ready) {
            record(cc, what, bytes);
            return MPI_SUCCESS;
        }
    }
    co_coll_sig g = record(cc, what, bytes);
    const co_coll_sig *prev = &cc->hist[(g.call - 1) % CO_COLL_HIST];
    co_cshm_sig *me = &cc->shm->sig[cc->shm->me];
    atomic_store_explicit(&me->call, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&me->what, g.what, memory_order_relaxed);
    atomic_store_explicit(&me->bytes, g.bytes, memory_order_relaxed);
    atomic_store_explicit(&me->chain, g.chain, memory_order_relaxed);
    atomic_store_explicit(&me->prev_what, prev->call == g.call - 1 ? prev->what : 0,
                          memory_order_relaxed);
    atomic_store_explicit(&me->prev_bytes, prev->bytes, memory_order_relaxed);
    atomic_store_explicit(&me->call, g.call, memory_order_release);
    S->cur = k;
    return MPI_SUCCESS;
}

/* Whether broken word b was published in call number `call` (the word keeps the call's low
 * 32 bits: a communicator may well see more than 2^32 calls). */
static inline int same_call(uint64_t b, uint64_t call) {
    return (uint32_t)(b >> 32) == (uint32_t)call;
}

/* Why peer q abandoned a call (its broken word is set): "(their calls disagree with another
 * rank's)", or the process whose end made it. */
static const char *why_broken(const co_cshm *s, int q, char *buf, size_t len) {
    int pid = atomic_load_explicit(&s->sig[q].ended, memory_order_relaxed);
    if (pid)
        snprintf(buf, len, "(process %d has ended)", pid);
    else
        snprintf(buf, len, "(their calls disagree with another rank's)");
    return buf;
}

/* A call that copied from or into a peer's buffers by single copy reports success only if
 * none of those peers abandoned the call meanwhile. A peer that abandons it (its arguments
 * disagree with a third rank's, say) leaves at once, without waiting for its readers, and
 * its user may then change the buffer a copy of this rank is still reading: the data this
 * rank holds may not be that call's. The peer publishes its broken word before it leaves
 * (abandon, with a full fence); a copy finished before this rank's load that finds no such
 * word read the buffer before the peer left. */
static void copied_from(co_coll_call *k) {
    co_coll_comm *cc = k->c->coll;
    const co_cshm *s = cc ? cc->shm : NULL;
    if (!s) return;
    atomic_thread_fence(memory_order_seq_cst);
    for (int q = 0; q < s->n; q++) {
        if (q == s->me) continue;
        int copied = S->cma_n < 0;
        for (int i = 0; i < S->cma_n && !copied; i++) copied = S->cma_pids[i] == s->pids[q];
        if (!copied) continue;
        uint64_t b = atomic_load_explicit(&s->sig[q].broken, memory_order_acquire);
        if (!b || !same_call(b, cc->calls)) continue; /* (one that left it normally waited) */
        char why[64];
        snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                 "rank %d abandoned collective call %llu on this communicator while this rank "
                 "copied its data %s: what this rank received may not be that call's data",
                 q, (unsigned long long)cc->calls, why_broken(s, q, why, sizeof(why)));
        abandon(k, MPI_ERR_OTHER);
    }
}

/* A write into a peer's buffer is the other way round: the peer, if it abandons the call,
 * must not leave while the write may still land there (its user would find the buffer
 * changed after the call returned). The writer says in its writing word that it writes in
 * this call, then, after a full fence, reads the peer's broken word; the peer stores that
 * word, fences, then waits while any peer's writing word names the call (abandon). Either
 * the writer finds the word and writes nothing, or the peer finds the write announced and
 * waits for it. Returns the call number announced, 0 outside a watched call. */
uint64_t co_coll_write_begin(co_cshm *s, int q) {
    co_coll_call *k = S ? S->cur : NULL;
    if (!k || k->c->coll->shm != s) return 0;
    co_coll_comm *cc = k->c->coll;
    uint64_t call = cc->calls;
    atomic_store_explicit(&s->sig[s->me].writing, call, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t b = atomic_load_explicit(&s->sig[q].broken, memory_order_acquire);
    if (CO_UNLIKELY(b && same_call(b, call))) {
        char why[64];
        snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                 "rank %d abandoned collective call %llu on this communicator before this rank "
                 "wrote its data there %s",
                 q, (unsigned long long)call, why_broken(s, q, why, sizeof(why)));
        abandon(k, MPI_ERR_OTHER); /* (clears the writing word) */
    }
    return call;
}

/* In abandon: waits until no peer writes into this rank's buffers in the call abandoned (see
 * co_coll_write_begin). A write is one system call, so the wait is short; a writer that has
 * ended meanwhile (crashed or killed) does not hold it up. */
static void await_writers(const co_cshm *s, uint64_t call) {
    for (int q = 0; q < s->n && call; q++) {
        if (q == s->me) continue;
        for (unsigned i = 1; atomic_load_explicit(&s->sig[q].writing, memory_order_acquire) == call;
             i++) {
            if (i % 1024 == 0 && kill(s->pids[q], 0) != 0 && errno == ESRCH) break;
            sched_yield();
        }
    }
}

int co_coll_watched(co_comm *c, int kind, int root, const co_op *op, uint64_t bytes,
                    co_coll_body body, const void *arg, int *failed) {
    co_coll_call k;
    const int bodies = S->bodies; /* (set before the jump's target: read after it) */
    /* The compiler's own setjmp (GCC and clang) saves only what the jump needs, where libc's
     * saves every register and mangles pointers; abandon() jumps back (from the segment's
     * set-up in enter, too). */
    if (__builtin_setjmp(k.escape)) {
        S->bodies = bodies;
        c->coll->tag_alg = 0;
        *failed = CO_CALL_ABANDONED;
        return k.cls;
    }
    int rc = enter(&k, c, sig_what(kind, root, op), bytes);
    *failed = rc ? CO_CALL_BROKEN : CO_CALL_RAN;
    if (rc) return rc;
    co_st.coll_short = 0; /* armed for the call's own transfers (p2p.c) */
    S->cma_n = 0;
    S->bodies++;
    rc = body(c, arg);
    S->bodies--;
    /* the call's choice ends with it: the broadcasts that other layers run straight after
     * (co_bcast_binomial, no choice of their own) must not carry what a call whose ranks
     * disagreed chose differently on each rank */
    c->coll->tag_alg = 0;
    if (S->cma_n && rc == MPI_SUCCESS) copied_from(&k);
    S->cur = NULL;
    co_st.coll_short = -1;
    if (CO_UNLIKELY(k.published)) unpublish(&k);
    if (rc == MPI_ERR_TRUNCATE || rc == MPI_ERR_COUNT) c->quarantined = 1; /* ranks disagree */
    return rc;
}

int co_coll_dispatch(co_comm *c, const void *arg) {
    const co_coll_args *a = arg;
    switch (a->kind) {
    case CO_COLL_BARRIER: return co_barrier(c);
    case CO_COLL_BCAST: return co_bcast(a->rbuf, a->rcount, a->rdt, a->root, c);
    case CO_COLL_REDUCE: return co_reduce(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, a->root, c);
    case CO_COLL_ALLREDUCE: return co_allreduce(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, c);
    case CO_COLL_SCAN: return co_scan(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, c);
    case CO_COLL_EXSCAN: return co_exscan(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, c);
    case CO_COLL_GATHER:
        return co_gather(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root, c);
    case CO_COLL_GATHERV:
        return co_gatherv(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts, a->rdispls, a->rdt,
                          a->root, c);
    case CO_COLL_SCATTER:
        return co_scatter(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root, c);
    case CO_COLL_SCATTERV:
        return co_scatterv(a->sbuf, a->scounts, a->sdispls, a->sdt, a->rbuf, a->rcount, a->rdt,
                           a->root, c);
    case CO_COLL_ALLGATHER:
        return co_allgather(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, c);
    case CO_COLL_ALLGATHERV:
        return co_allgatherv(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts, a->rdispls, a->rdt,
                             c);
    case CO_COLL_ALLTOALL:
        return co_alltoall(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, c);
    case CO_COLL_ALLTOALLV:
        return co_alltoallv(a->sbuf, a->scounts, a->sdispls, a->sdt, a->rbuf, a->rcounts,
                            a->rdispls, a->rdt, c);
    case CO_COLL_REDUCE_SCATTER:
        return co_reduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rdt, a->op, c);
    default: return co_reduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, c);
    }
}

const char *co_coll_kind_name(int kind) {
    static const char *const extra[] = {"alltoallw",           "neighbor_allgather",
                                        "neighbor_allgatherv", "neighbor_alltoall",
                                        "neighbor_alltoallv",  "neighbor_alltoallw"};
    if (kind >= 0 && kind < CO_COLL_KINDS) return registry[kind].name;
    if (kind >= CO_COLL_KINDS && kind - CO_COLL_KINDS < (int)CO_ARRAY_LEN(extra))
        return extra[kind - CO_COLL_KINDS];
    return "?";
}

int co_coll_layer_body(co_comm *c, int kind, int root, uint64_t bytes, co_coll_body body,
                       const void *arg) {
    int failed;
    return co_coll_watched(c, kind, root, NULL, bytes, body, arg, &failed);
}

int co_coll_layer_move(co_comm *c, int kind, int root, const void *sbuf, size_t scount,
                       co_dtype *sdt, void *rbuf, size_t rcount, co_dtype *rdt, uint64_t bytes) {
    co_coll_args a = {.kind = kind,
                      .root = root,
                      .sbuf = sbuf,
                      .scount = scount,
                      .sdt = sdt,
                      .rbuf = rbuf,
                      .rcount = rcount,
                      .rdt = rdt};
    return co_coll_layer(c, &a, bytes);
}

int co_coll_layer(co_comm *c, const co_coll_args *a, uint64_t bytes) {
    int failed;
    return co_coll_watched(c, a->kind, a->root, a->op, bytes, co_coll_dispatch, a, &failed);
}

static int barrier_body(co_comm *c, const void *arg) {
    (void)arg;
    return co_barrier(c);
}

static void free_blocks(void);

static void describe(char *out, size_t len, const co_coll_sig *g) {
    static const char *const ops[] = {"",         "MPI_MAX",    "MPI_MIN",   "MPI_SUM", "MPI_PROD",
                                      "MPI_LAND", "MPI_BAND",   "MPI_LOR",   "MPI_BOR", "MPI_LXOR",
                                      "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};
    int kind = sig_kind(g), root = sig_root(g), op = sig_op(g);
    const char *name = kind < CO_COLL_KINDS ? registry[kind].name : "?";
    char at[32] = "", with[32] = "";
    if (root >= 0) snprintf(at, sizeof(at), "root %d, ", root);
    if (op == SIG_USER_OP)
        snprintf(with, sizeof(with), "a user's operator, ");
    else if (op > 0 && op < (int)CO_ARRAY_LEN(ops))
        snprintf(with, sizeof(with), "%s, ", ops[op]);
    snprintf(out, len, "%s (%s%s%llu bytes)", name, at, with, (unsigned long long)g->bytes);
}

/* Abandons the call in progress: the communicator is broken from now on (here and, through
 * the published word, for every peer that waits on it). */
CO_NORETURN static void abandon(co_coll_call *k, int cls) {
    co_comm *c = k->c;
    co_coll_comm *cc = c->coll;
    cc->broken = cls;
    c->quarantined = 1;
    if (cc->shm) { /* (none yet if the set-up was abandoned before the segment was known) */
        co_cshm *s = cc->shm;
        atomic_store_explicit(&s->sig[c->rank].writing, 0, memory_order_relaxed);
        atomic_store_explicit(&s->sig[c->rank].ended, (int32_t)k->ended, memory_order_relaxed);
        atomic_store_explicit(&s->sig[c->rank].broken, cc->calls << 32 | (uint32_t)cls,
                              memory_order_release);
        /* before the user may change a buffer that a peer still copies (see copied_from), and
         * before the writing words are read (co_coll_write_begin) */
        atomic_thread_fence(memory_order_seq_cst);
        if (!k->setup) await_writers(s, cc->calls); /* (the set-up writes nowhere) */
    }
    co_p2p_abandon(co_coll_ctx(c), CO_TAG_NBC);
    free_blocks(); /* the abandoned call's scratch memory */
    if (k->published) unpublish(k);
    k->cls = cls;
    S->cur = NULL;
    co_st.coll_short = -1;
    __builtin_longjmp(k->escape, 1);
}

void co_coll_broken_by(co_comm *c, int cls, const char *msg) {
    co_coll_comm *cc = co_coll_comm_of(c);
    if (cc->broken) return;
    cc->broken = cls;
    c->quarantined = 1;
    snprintf(cc->broken_msg, sizeof(cc->broken_msg), "%s", msg);
}

void co_coll_fail_ended(pid_t pid, const char *msg) {
    if (S && S->cur) S->cur->ended = pid;
    co_coll_fail(MPI_ERR_OTHER, "%s", msg);
}

void co_coll_fail(int cls, const char *fmt, ...) {
    co_coll_call *k = S ? S->cur : NULL;
    if (!k) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->c->coll->broken_msg, sizeof(k->c->coll->broken_msg), fmt, ap);
    va_end(ap);
    abandon(k, cls);
}

void co_coll_part_failed(int rc, const char *part, co_comm *c, int next, size_t bytes) {
    if (rc != MPI_ERR_TRUNCATE && rc != MPI_ERR_COUNT) return;
    int alg = choose(c, next, bytes, NULL, NULL); /* (as co_bcast and co_scatterv choose) */
    if (!(registry[next].algs[alg].needs & (CO_ALG_SHM | CO_ALG_CMA))) {
        if (co_st.coll_short >= 0) co_st.coll_short = 1;
        return;
    }
    co_coll_fail(rc,
                 "the %s part of this call found data of another size than this rank's count "
                 "(counts or types differ between processes)",
                 part);
}

/* A peer's published signature, and in *prev (if not NULL) what it says of its call before
 * (what 0: not known); 0 if it was being rewritten. */
static int peer_sig(const co_cshm_sig *t, co_coll_sig *g, co_coll_sig *prev) {
    g->call = atomic_load_explicit(&t->call, memory_order_acquire);
    g->what = atomic_load_explicit(&t->what, memory_order_relaxed);
    g->bytes = atomic_load_explicit(&t->bytes, memory_order_relaxed);
    g->chain = atomic_load_explicit(&t->chain, memory_order_relaxed);
    if (prev)
        *prev =
            (co_coll_sig){g->call - 1, atomic_load_explicit(&t->prev_what, memory_order_relaxed),
                          atomic_load_explicit(&t->prev_bytes, memory_order_relaxed), 0};
    atomic_thread_fence(memory_order_acquire);
    return g->call && atomic_load_explicit(&t->call, memory_order_relaxed) == g->call;
}

/* Whether peer q has sat in call `call` for CO_COLL_LAG_NS since this rank first found it
 * there with other sizes. Different sizes alone do not mean a hang: the ranks may share the
 * algorithm, and then its data path reports MPI_ERR_TRUNCATE or MPI_ERR_COUNT and the
 * communicator stays usable, or q may just not have been scheduled yet (a rank that has left
 * a broadcast as its root finds its reader still in it). Only a peer that stays there is
 * waiting for something that will not come. */
static int lagged_long(co_comm *c, int q, uint64_t call) {
    co_coll_comm *cc = c->coll;
    if (!cc->lag && !(cc->lag = calloc((size_t)c->size, sizeof(*cc->lag))))
        return 1; /* no memory to wait patiently with */
    uint64_t now = co_now_ns();
    if (cc->lag[q].call != call) {
        cc->lag[q].call = call;
        cc->lag[q].since = now;
    }
    return now - cc->lag[q].since >= CO_COLL_LAG_NS;
}

/* Abandons call k because peer q's signature g of the same call differs from mine: says
 * both (and `why`, if not NULL) and picks the class from what differs. */
CO_NORETURN static void disagree(co_coll_call *k, int q, const co_coll_sig *g,
                                 const co_coll_sig *mine, const char *why) {
    co_coll_comm *cc = k->c->coll;
    char theirs[96], ours[96];
    describe(theirs, sizeof(theirs), g);
    describe(ours, sizeof(ours), mine);
    snprintf(cc->broken_msg, sizeof(cc->broken_msg),
             "collective call %llu on this communicator: rank %d called %s, this rank %s%s%s",
             (unsigned long long)g->call, q, theirs, ours, why ? ", " : "", why ? why : "");
    abandon(k, sig_kind(g) != sig_kind(mine)   ? MPI_ERR_OTHER
               : sig_root(g) != sig_root(mine) ? MPI_ERR_ROOT
               : sig_op(g) != sig_op(mine)     ? MPI_ERR_OP
               : g->bytes > mine->bytes        ? MPI_ERR_TRUNCATE
                                               : MPI_ERR_COUNT);
}

/* Whether peer q has entered call k; during the set-up, whether it has posted the set-up's
 * step (a rank that left the set-up any other way published its broken word). */
static int entered(const co_coll_call *k, int q) {
    const co_coll_comm *cc = k->c->coll;
    if (k->setup)
        return cc->shm && atomic_load_explicit(&cc->shm->ctl[q].step, memory_order_acquire) >= 1;
    return atomic_load_explicit(&cc->shm->sig[q].call, memory_order_acquire) >= cc->calls;
}

/* Abandons call k if peer q has called MPI_Finalize without making it (it refused the call,
 * say, for its own arguments). On MPI_COMM_WORLD only once q has finished MPI_Finalize:
 * until then its barrier, a call on MPI_COMM_WORLD, may still be the one this rank waits in
 * (and is left to the signatures). */
static void check_finalizing(co_coll_call *k, int q) {
    co_comm *c = k->c;
    co_coll_comm *cc = c->coll;
    /* its signature and steps are visible once it says it is finalizing */
    int st = co_seg_state(co_st.seg, co_proc_of(c->local->world[q]));
    if (st != CO_RANK_FINALIZED && (st != CO_RANK_FINALIZING || c == co_st.world)) return;
    if (entered(k, q)) return; /* it made this call and left it (a broadcast's root, say) */
    snprintf(cc->broken_msg, sizeof(cc->broken_msg),
             "rank %d called MPI_Finalize without making collective call %llu on this "
             "communicator (a call that failed its argument checks there, perhaps)",
             q, (unsigned long long)cc->calls + (uint64_t)k->setup);
    abandon(k, MPI_ERR_OTHER);
}

/* ---- MPI_Finalize's look back ----------------------------------------------------------------
 * A disagreement that let every rank finish without waiting (two ranks that both think they
 * are a broadcast's root, a call that one rank made and the others did not) goes unnoticed
 * by the watch, which looks only during long waits, and the calls returned success with data
 * that may be wrong. MPI_Finalize looks once more: after its barrier on MPI_COMM_WORLD no rank
 * makes another collective call anywhere, so each rank's latest signature on each of its
 * communicators is final (on MPI_COMM_WORLD, the barrier's, or the second barrier's below),
 * and ranks whose running hashes or call counts differ there disagreed somewhere before.
 * Nonblocking calls are compared by their running hash alone (nbc_chain, published with each
 * call once the segment is set up, and at its set-up). A second barrier keeps every rank's
 * segments in place until all have looked. */

/* q's latest signature, read whole; 0 if it has none. On MPI_COMM_WORLD (moving: q may be
 * writing its second barrier's) the read is tried again. */
static int final_sig(const co_cshm_sig *t, co_coll_sig *g, int moving) {
    for (int i = 0; i < (moving ? 1000 : 1); i++) {
        if (peer_sig(t, g, NULL)) return 1;
        sched_yield();
    }
    return 0;
}

/* Compares c's signatures with its peers' after the barrier (call `barrier` on MPI_COMM_WORLD,
 * 0 on the others); says what differs into why and returns 1, or 0. */
static int final_compare(co_comm *c, uint64_t barrier, char *why, size_t len) {
    co_coll_comm *cc = c->coll;
    const co_cshm *s = cc->shm;
    uint64_t m = cc->calls;
    /* a peer may already be in the second barrier: its hash then goes one call further */
    uint64_t next =
        chain_next(cc->hist[m % CO_COLL_HIST].chain, sig_what(CO_COLL_BARRIER, -1, NULL), s->seq);
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank) continue;
        uint64_t b = atomic_load_explicit(&s->sig[q].broken, memory_order_acquire);
        if (b) {
            char w[64];
            snprintf(why, len,
                     "rank %d abandoned collective call %llu on %s %s, which this rank never "
                     "learned: what this rank's later collective calls there returned may be "
                     "wrong",
                     q, (unsigned long long)(b >> 32), co_comm_label(c),
                     why_broken(s, q, w, sizeof(w)));
            return 1;
        }
        co_coll_sig g;
        if (!final_sig(&s->sig[q], &g, barrier != 0))
            g = (co_coll_sig){0}; /* none: as this rank's before its first call */
        int ahead = barrier && g.call == m + 1;
        if (g.call != m && !ahead) {
            snprintf(why, len,
                     "rank %d has made %llu collective calls on %s and this rank %llu%s (calls "
                     "that some ranks made and others did not): what they returned may be wrong",
                     q, (unsigned long long)g.call, co_comm_label(c), (unsigned long long)m,
                     barrier ? ", counting MPI_Finalize's barriers" : "");
            return 1;
        }
        if (atomic_load_explicit(&s->sig[q].nbc_chain, memory_order_relaxed) != cc->nbc_chain) {
            snprintf(why, len,
                     "rank %d and this rank disagree on an earlier nonblocking collective call "
                     "on %s (different collectives, roots or operators, or a call that some "
                     "ranks made and others did not): what those calls returned may be wrong",
                     q, co_comm_label(c));
            return 1;
        }
        if (g.chain != (ahead ? next : cc->hist[m % CO_COLL_HIST].chain)) {
            snprintf(why, len,
                     "rank %d and this rank disagree on an earlier collective call on %s "
                     "(different collectives, roots or operators, which no rank noticed then): "
                     "what those calls returned may be wrong",
                     q, co_comm_label(c));
            return 1;
        }
    }
    return 0;
}

/* Whether MPI_Finalize compares c's signatures (intracommunicators with a segment; not a
 * broken or quarantined one, which has reported its error already). */
static int final_looked(const co_comm *c) {
    const co_coll_comm *cc = c->coll;
    return !c->is_inter && c->size > 1 && cc && cc->shm && !cc->broken && !c->quarantined;
}

int co_coll_final_barrier(co_comm *world, char *why, size_t len) {
    why[0] = 0;
    int failed;
    int rc = co_coll_watched(world, CO_COLL_BARRIER, -1, NULL, 0, barrier_body, NULL, &failed);
    /* A barrier abandoned over a difference that its wait found (or a peer's broken word, a
     * peer that finished MPI_Finalize without it, a deadlock) says why, as the look below
     * would have; one on a world broken earlier (whose error was reported then) has none. */
    if (failed == CO_CALL_ABANDONED) snprintf(why, len, "%s", world->coll->broken_msg);
    if (failed || rc) return failed ? MPI_SUCCESS : rc;
    if (world->size < 2 || !world->coll->shm) return MPI_SUCCESS;
    uint64_t barrier = world->coll->calls;
    for (co_comm *c = co_st.all_comms; c; c = c->all_next)
        if (final_looked(c) && final_compare(c, c == world ? barrier : 0, why, len)) break;
    rc = co_coll_watched(world, CO_COLL_BARRIER, -1, NULL, 0, barrier_body, NULL, &failed);
    return failed ? MPI_SUCCESS : rc;
}

/* ---- Waits on two communicators -------------------------------------------------------------
 * A rank that has waited long in a call says where in its control block of the job segment
 * (communicator ID, call number, kind), so that a peer it waits for elsewhere can tell that
 * they wait for each other: this rank in call m on B, which needs the peer, the peer in call n
 * on A, which needs this rank. Neither can leave: the ranks called collectives on A and B in
 * different orders (or one refused a call on A and went on to B). Only calls that no rank can
 * leave before every rank has entered count (needs_everyone); the v-variants and rooted ones
 * may let a rank through early. */

/* Whether no rank can leave call g before every rank has entered it. */
static int needs_everyone(const co_coll_sig *g) {
    switch (sig_kind(g)) {
    case CO_COLL_BARRIER: return 1;
    case CO_COLL_ALLREDUCE:
    case CO_COLL_ALLGATHER:
    case CO_COLL_ALLTOALL:
    case CO_COLL_REDUCE_SCATTER_BLOCK: return g->bytes > 0;
    default: return 0;
    }
}

#define WAIT_NEEDS_ALL (1 << 16) /* in wait_kind: the call needs every rank */

/* The signature of call k (during the set-up, the one it will have). */
static const co_coll_sig *call_sig(const co_coll_call *k) {
    const co_coll_comm *cc = k->c->coll;
    return k->setup ? &k->pend : &cc->hist[cc->calls % CO_COLL_HIST];
}

/* Whether call k cannot end before every rank has entered it: the set-up never can. */
static int call_needs_everyone(const co_coll_call *k) {
    return k->setup || needs_everyone(call_sig(k));
}

static void publish(co_coll_call *k) {
    const co_coll_sig *g = call_sig(k);
    co_rank_ctl *me = &co_st.seg->ranks[co_st.proc];
    uint64_t gen = atomic_load_explicit(&me->wait_gen, memory_order_relaxed);
    atomic_store_explicit(&me->wait_comm, k->c->id, memory_order_relaxed);
    atomic_store_explicit(&me->wait_call, g->call, memory_order_relaxed);
    atomic_store_explicit(&me->wait_kind,
                          sig_kind(g) | (call_needs_everyone(k) ? WAIT_NEEDS_ALL : 0),
                          memory_order_relaxed);
    atomic_store_explicit(&me->wait_gen, gen + 1, memory_order_release); /* odd: waiting */
    k->published = 1;
}

static void unpublish(co_coll_call *k) {
    co_rank_ctl *me = &co_st.seg->ranks[co_st.proc];
    uint64_t gen = atomic_load_explicit(&me->wait_gen, memory_order_relaxed);
    atomic_store_explicit(&me->wait_gen, gen + 1, memory_order_release);
    k->published = 0;
}

/* World rank w's published wait, if it waits in a call that needs every rank: its gen. */
static uint64_t peer_wait(int w, uint64_t *comm, uint64_t *call, int *kind) {
    const co_rank_ctl *t = &co_st.seg->ranks[co_proc_of(w)];
    uint64_t gen = atomic_load_explicit(&t->wait_gen, memory_order_acquire);
    if (!(gen & 1)) return 0;
    *comm = atomic_load_explicit(&t->wait_comm, memory_order_relaxed);
    *call = atomic_load_explicit(&t->wait_call, memory_order_relaxed);
    int32_t kd = atomic_load_explicit(&t->wait_kind, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&t->wait_gen, memory_order_relaxed) != gen || !(kd & WAIT_NEEDS_ALL))
        return 0;
    *kind = kd & 0xffff;
    return gen;
}

/* This rank's communicator with ID `id`, or NULL if it is not a member (any more). */
static co_comm *comm_by_id(uint64_t id) {
    co_htab *t = &co_st.comms;
    for (uint32_t i = 1; i < t->next; i++) {
        co_comm *x = co_htab_at(t, i);
        if (x && x->id == id && !x->is_inter) return x;
    }
    return NULL;
}

/* Abandons call k if peer q, which has not entered it, waits in a call on another
 * communicator that needs this rank, which has not entered that one. */
static void check_elsewhere(co_coll_call *k, int q) {
    co_comm *c = k->c;
    co_coll_comm *cc = c->coll;
    /* A finalizing rank makes no other call, and its peers learn that from its state; its
     * MPI_Finalize barrier must not be cut short. */
    if (!call_needs_everyone(k) || co_seg_finalizing(co_st.seg, co_st.proc) || entered(k, q))
        return;
    uint64_t id, call;
    int kind, w = c->local->world[q];
    uint64_t gen = peer_wait(w, &id, &call, &kind);
    if (!gen || id == c->id) return;
    co_comm *b = comm_by_id(id);
    /* a communicator broken here fails this rank's calls on it at once: q learns that from
     * this rank's published word, or from where this rank waits */
    if (!b || (b->coll && (b->coll->calls >= call || b->coll->broken))) return;
    if (peer_wait(w, &id, &call, &kind) != gen) return; /* it moved on meanwhile */
    snprintf(cc->broken_msg, sizeof(cc->broken_msg),
             "rank %d waits in collective call %llu (%s) on %s, which needs this "
             "rank, and has not made collective call %llu here: the ranks called collectives on "
             "the two communicators in different orders",
             q, (unsigned long long)call, kind < CO_COLL_KINDS ? registry[kind].name : "?",
             co_comm_label(b), (unsigned long long)call_sig(k)->call);
    abandon(k, MPI_ERR_OTHER);
}

/* Installed as co_st.wait_check: run by a rank that has waited long. A peer in the same call
 * (or behind, in a call this rank remembers) with another signature means the calls
 * disagree; a peer one call ahead is compared by what it says of the call before (it left
 * this call, with a count of 0 perhaps, and need not come to wait anywhere), one further
 * ahead makes the comparison itself if it comes to wait. A peer that has called
 * MPI_Finalize instead will never come. */
static void wait_check(void) {
    co_coll_call *k = S ? S->cur : NULL;
    if (!k) return;
    co_comm *c = k->c;
    co_coll_comm *cc = c->coll;
    /* Every rank waits and none can go on: say where, then let a disagreement found below
     * name the cause (sizes alone, too, without waiting longer); else the deadlock does. */
    int dl = co_deadlock_due();
    if (CO_UNLIKELY(dl)) {
        /* This wait ends now. Its published word goes first, before the claim lets any rank
         * on: a peer must not find it still there and take it for a wait that goes on
         * (check_elsewhere). */
        if (k->published) unpublish(k);
        char what[96];
        describe(what, sizeof(what), call_sig(k));
        co_deadlock_claim("collective call %llu on %s: %s", (unsigned long long)call_sig(k)->call,
                          co_comm_label(c), what);
    }
    if (!dl && !k->published) publish(k);
    const co_cshm *s = cc->shm; /* during the set-up, NULL until the segment is known */
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank) continue;
        check_finalizing(k, q);
        if (!dl) check_elsewhere(k, q); /* (after a deadlock, q may wait in its next call) */
        uint64_t b = s ? atomic_load_explicit(&s->sig[q].broken, memory_order_acquire) : 0;
        if (b && !dl) { /* (in a deadlock, q may have broken it for that: say the deadlock) */
            int pid = atomic_load_explicit(&s->sig[q].ended, memory_order_relaxed);
            if (pid)
                snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                         "rank %d abandoned collective call %llu on this communicator: process "
                         "%d has ended",
                         q, (unsigned long long)(b >> 32), pid);
            else
                snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                         "rank %d found that the ranks' arguments to collective call %llu on "
                         "this communicator disagree",
                         q, (unsigned long long)(b >> 32));
            abandon(k, (int)(uint32_t)b);
        }
        if (k->setup) continue; /* no call numbers or signatures yet */
        co_coll_sig g, before;
        if (!peer_sig(&s->sig[q], &g, &before)) continue;
        int ahead = g.call == cc->calls + 1 && before.what;
        if (ahead) g = before; /* (its chain is not known: what and bytes only) */
        if (g.call > cc->calls || cc->calls - g.call >= CO_COLL_HIST) continue;
        const co_coll_sig *mine = &cc->hist[g.call % CO_COLL_HIST];
        if (mine->what == g.what && mine->bytes != g.bytes && !dl && !lagged_long(c, q, g.call)) {
            co_wait_timed(); /* waiting for time now: not quiet for the deadlock watch */
            continue;        /* sizes alone: the data path may still report it, see lagged_long */
        }
        if (mine->what == g.what && mine->bytes == g.bytes) {
            if (ahead || mine->chain == g.chain) continue;
            snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                     "rank %d and this rank disagree on an earlier collective call on this "
                     "communicator (different collectives or counts, which went unnoticed then)",
                     q);
            abandon(k, MPI_ERR_OTHER);
        }
        disagree(k, q, &g, mine, NULL);
    }
    if (CO_UNLIKELY(dl)) {
        snprintf(cc->broken_msg, sizeof(cc->broken_msg), "%s", co_deadlock_reason());
        abandon(k, MPI_ERR_OTHER);
    }
}

_Static_assert(CO_COLL_KINDS < 31, "collective numbers fit a call tag (CO_CSHM_TAG)");

static void tag_name(char *out, size_t len, unsigned tag) {
    int kind = CO_CSHM_TAG_KIND(tag), alg = CO_CSHM_TAG_ALG(tag);
    if (kind < 0 || kind >= CO_COLL_KINDS || alg < 0 || alg >= registry[kind].nalgs)
        snprintf(out, len, "another collective or algorithm");
    else
        snprintf(out, len, "%s by %s", registry[kind].name, registry[kind].algs[alg].name);
}

void co_coll_differ(int q, unsigned theirs, unsigned mine) {
    co_coll_call *k = S ? S->cur : NULL;
    if (!k) co_fatal("rank %d published data of another collective outside a collective call", q);
    co_comm *c = k->c;
    co_coll_comm *cc = c->coll;
    char t[96], m[96];
    tag_name(t, sizeof(t), theirs);
    tag_name(m, sizeof(m), mine);
    co_coll_sig g;
    const co_coll_sig *own = &cc->hist[cc->calls % CO_COLL_HIST];
    if (peer_sig(&cc->shm->sig[q], &g, NULL) && g.call == cc->calls &&
        (g.what != own->what || g.bytes != own->bytes)) /* say what differs, as wait_check */
        disagree(k, q, &g, own, "and the ranks chose different algorithms");
    if (theirs && CO_CSHM_TAG_KIND(theirs) == CO_CSHM_TAG_KIND(mine) &&
        CO_CSHM_TAG_ALG(theirs) == CO_CSHM_TAG_ALG(mine)) { /* the same call but its number */
        int d = (int)((CO_CSHM_TAG_CALL(theirs) - CO_CSHM_TAG_CALL(mine)) & CO_CSHM_TAG_CALLS);
        if (d > (int)CO_CSHM_TAG_CALLS / 2) d -= (int)CO_CSHM_TAG_CALLS + 1;
        snprintf(cc->broken_msg, sizeof(cc->broken_msg),
                 "collective call %llu on this communicator: rank %d sent data of its call "
                 "%lld, also %s (the two are at different calls: one has left a call the other "
                 "is still in, or skipped it, as a count of 0 on some ranks only does)",
                 (unsigned long long)cc->calls, q, (long long)cc->calls + d, m);
        abandon(k, MPI_ERR_OTHER);
    }
    snprintf(cc->broken_msg, sizeof(cc->broken_msg),
             "collective call %llu on this communicator: rank %d runs %s, this rank %s (the "
             "ranks' arguments or COHORT_*_ALGORITHM settings differ)",
             (unsigned long long)cc->calls, q, t, m);
    abandon(k, MPI_ERR_OTHER);
}

/* ---- Helpers --------------------------------------------------------------------------------- */

#define CACHE_MIN (64 * 1024)        /* smaller blocks come from malloc as they are */
#define CACHE_MAX (16 * 1024 * 1024) /* larger ones are not kept (at most 6 x 16 MiB held) */

/* Every block has a 64-byte prefix: its size (0: not for the cache), so co_coll_free knows
 * where it goes, and links in the list of blocks handed out, which a collective abandoned
 * midway (coll.h, "Mismatched calls") leaves for free_blocks. */
typedef struct blockhdr {
    size_t bytes;
    size_t magic;
    struct blockhdr *prev, *next;
    char pad[32];
} blockhdr;
static blockhdr *out_blocks;

static void free_blocks(void) {
    while (out_blocks) co_coll_free(out_blocks + 1);
}

static void *hand_out(blockhdr *h) {
    h->prev = NULL;
    h->next = out_blocks;
    if (out_blocks) out_blocks->prev = h;
    out_blocks = h;
    return h + 1;
}
#define BLOCK_MAGIC   0x636f6c6c626c6bull /* handed out by co_coll_alloc (on the list) */
#define SCRATCH_MAGIC 0x636f6c6c736372ull /* by co_coll_scratch (not on it) */

/* A block of `bytes` (with its header), from the cache where one is large enough; the caller
 * marks whose it is (h->magic). */
static blockhdr *take(size_t bytes) {
    blockhdr *h;
    if (bytes < CACHE_MIN) {
        h = malloc(sizeof(blockhdr) + (bytes ? bytes : 1));
        if (h) h->bytes = 0;
        return h;
    }
    int best = -1;
    for (int i = 0; i < CO_COLL_CACHE; i++)
        if (S->cache[i].p && S->cache[i].bytes >= bytes &&
            (best < 0 || S->cache[i].bytes < S->cache[best].bytes))
            best = i;
    if (best >= 0) {
        h = S->cache[best].p;
        S->cache[best].p = NULL;
        return h;
    }
    h = malloc(sizeof(blockhdr) + bytes);
    if (h) h->bytes = bytes;
    return h;
}

/* p's header, which must carry `magic`: a block freed by the other kind's call would corrupt
 * the list of blocks handed out (free_blocks) or be freed twice. */
static blockhdr *header_of(void *p, size_t magic, const char *fn) {
    blockhdr *h = (blockhdr *)p - 1;
    if (h->magic != magic) co_fatal("%s of a block it did not allocate", fn);
    return h;
}

/* Keeps h in the cache (in a free slot, or in place of the smallest kept block if it is
 * larger), or frees it. */
static void keep(blockhdr *h) {
    h->magic = 0; /* a second free of it is caught */
    if (!h->bytes || h->bytes > CACHE_MAX || !S) {
        free(h);
        return;
    }
    int slot = -1;
    for (int i = 0; i < CO_COLL_CACHE; i++)
        if (!S->cache[i].p) {
            slot = i;
            break;
        }
    if (slot < 0) {
        slot = 0;
        for (int i = 1; i < CO_COLL_CACHE; i++)
            if (S->cache[i].bytes < S->cache[slot].bytes) slot = i;
        if (S->cache[slot].bytes >= h->bytes) {
            free(h);
            return;
        }
        free(S->cache[slot].p);
    }
    S->cache[slot].p = h;
    S->cache[slot].bytes = h->bytes;
}

void *co_coll_alloc(size_t bytes) {
    blockhdr *h = take(bytes);
    if (!h) return NULL;
    h->magic = BLOCK_MAGIC;
    return hand_out(h);
}

void *co_coll_zalloc(size_t n, size_t size) {
    void *p = co_coll_alloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

void co_coll_free(void *p) {
    if (!p) return;
    blockhdr *h = header_of(p, BLOCK_MAGIC, "co_coll_free");
    if (h->prev)
        h->prev->next = h->next;
    else
        out_blocks = h->next;
    if (h->next) h->next->prev = h->prev;
    keep(h);
}

void *co_coll_scratch(size_t bytes) {
    blockhdr *h = take(bytes);
    if (!h) return NULL;
    h->magic = SCRATCH_MAGIC;
    h->prev = h->next = NULL;
    return h + 1;
}

void co_coll_scratch_free(void *p) {
    if (p) keep(header_of(p, SCRATCH_MAGIC, "co_coll_scratch_free"));
}

void *co_coll_tmpbuf(co_dtype *dt, size_t count, void **base) {
    size_t bytes = count ? co_coll_span(dt, count) : 1;
    *base = co_coll_alloc(bytes);
    if (!*base) return NULL;
    return (char *)*base - dt->true_lb;
}

int co_coll_dense(const co_dtype *dt) {
    MPI_Aint ext = co_dt_extent(dt);
    MPI_Aint true_ext = dt->true_ub - dt->true_lb;
    return ext > 0 && ext >= true_ext && (MPI_Aint)dt->size * 2 >= ext;
}

void co_coll_copy_same(const void *src, void *dst, size_t count, const co_dtype *dt) {
    if (!count || !dt->size || src == dst) return;
    if (dt->contig) {
        memcpy((char *)dst + dt->true_lb, (const char *)src + dt->true_lb, count * dt->size);
        return;
    }
    MPI_Aint ext = co_dt_extent(dt);
    for (size_t e = 0; e < count; e++) {
        for (size_t k = 0; k < dt->nsegs; k++) {
            const co_dt_seg *g = &dt->segs[k];
            MPI_Aint base = (MPI_Aint)e * ext + g->disp;
            for (size_t r = 0; r < g->count; r++) {
                MPI_Aint off = base + (MPI_Aint)r * g->stride;
                memcpy((char *)dst + off, (const char *)src + off, g->len);
            }
        }
    }
}

int co_coll_copy(const void *src, size_t scount, co_dtype *sdt, void *dst, size_t rcount,
                 co_dtype *rdt) {
    size_t sb = scount * sdt->size, rb = rcount * rdt->size;
    int rc = sb > rb ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    size_t n = CO_MIN(sb, rb);
    if (!n) return rc;
    if (sdt == rdt && scount == rcount) {
        co_coll_copy_same(src, dst, scount, sdt);
        return rc;
    }
    if (sdt->contig) {
        co_dt_unpack(rdt, rcount, dst, 0, (const char *)src + sdt->true_lb, n);
        return rc;
    }
    if (rdt->contig) {
        co_dt_pack(sdt, scount, src, 0, (char *)dst + rdt->true_lb, n);
        return rc;
    }
    char bounce[16384];
    for (size_t off = 0; off < n; off += sizeof(bounce)) {
        size_t len = CO_MIN(sizeof(bounce), n - off);
        co_dt_pack(sdt, scount, src, off, bounce, len);
        co_dt_unpack(rdt, rcount, dst, off, bounce, len);
    }
    return rc;
}

int co_coll_reduce_n(const co_op *op, co_dtype *dt, size_t count, const void *const *src, int n,
                     void *out) {
    if (!count || n <= 0) return MPI_SUCCESS;
    int alias = -1;
    for (int i = 0; i < n; i++)
        if (src[i] == out) alias = i;
    if (op->commute) {
        if (alias < 0) {
            co_coll_copy_same(src[n - 1], out, count, dt);
            alias = n - 1;
        }
        for (int i = 0; i < n; i++)
            if (i != alias) co_op_apply(op, dt, src[i], out, count);
        return MPI_SUCCESS;
    }
    /* Not commutative: fold from the right, acc = src[q] op acc, so that the operands keep
     * their rank order (associativity is all MPI promises). */
    void *base = NULL, *acc = out;
    if (alias >= 0 && alias != n - 1) {
        acc = co_coll_tmpbuf(dt, count, &base);
        if (!acc) return MPI_ERR_NO_MEM;
    }
    co_coll_copy_same(src[n - 1], acc, count, dt);
    for (int q = n - 2; q >= 0; q--) co_op_apply(op, dt, src[q], acc, count);
    if (acc != out) co_coll_copy_same(acc, out, count, dt);
    co_coll_free(base);
    return MPI_SUCCESS;
}

void co_coll_blocks(size_t count, int n, size_t *cnt, size_t *dsp) {
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        cnt[i] = count / (size_t)n + ((size_t)i < count % (size_t)n ? 1 : 0);
        dsp[i] = off;
        off += cnt[i];
    }
}

void co_coll_uniform_fill(int n, size_t count, int *c) {
    for (int i = 0; i < n; i++) {
        c[i] = (int)count; /* (the API checked that the counts fit an int) */
        c[n + i] = (int)(count * (size_t)i);
    }
}

int co_coll_uniform_alg(co_comm *c, int kind, int alg, size_t bytes, int safe) {
    if (bytes * (size_t)(c->size - 1) <= INT_MAX) return alg;
    chosen(c, kind, safe);
    return safe;
}

int *co_coll_uniform(int n, size_t count, int *stack, int **displs) {
    int *c = n <= 64 ? stack : co_coll_alloc(2 * (size_t)n * sizeof(int));
    if (!c) co_fatal("out of memory");
    co_coll_uniform_fill(n, count, c);
    *displs = c + n;
    return c;
}

int co_coll_waitall(int n, co_req **reqs) {
    return co_waitall_internal(n, reqs);
}

/* ---- Set-up ---------------------------------------------------------------------------------- */

int co_coll_init(void) {
    S = calloc(1, sizeof(*S));
    if (!S) return MPI_ERR_NO_MEM;
    co_st.coll_comm_free = co_coll_comm_free;
    co_st.coll_comm_freed = coll_comm_freed;
    co_st.coll_short = -1; /* armed only inside collective calls (co_coll_watched) */
    co_st.wait_check = wait_check;
    co_nbc_init();
    char err[512];
    if (co_coll_check_config(&co_st.cfg, err, sizeof(err))) {
        co_log(CO_LOG_ERROR, "%s", err);
        return MPI_ERR_ARG;
    }
    for (int k = 0; k < CO_COLL_KINDS; k++)
        S->forced[k] = lookup(k, (const char *)&co_st.cfg + registry[k].cfg_offset);
    /* the table lists each collective's rules together */
    for (size_t i = CO_ARRAY_LEN(rules); i-- > 0;) S->first_rule[rules[i].kind] = (uint16_t)i;
    for (size_t i = 0; i < CO_ARRAY_LEN(rules); i++) S->end_rule[rules[i].kind] = (uint16_t)(i + 1);
    /* Reduce_scatter_block is Reduce_scatter with equal blocks: the same rules */
    S->first_rule[CO_COLL_REDUCE_SCATTER_BLOCK] = S->first_rule[CO_COLL_REDUCE_SCATTER];
    S->end_rule[CO_COLL_REDUCE_SCATTER_BLOCK] = S->end_rule[CO_COLL_REDUCE_SCATTER];
    S->cma_costly = co_st.cfg.cma_cost >= CO_CMA_COSTLY_NS;
    if (co_shm_heap_init(&S->heap, co_seg_heap(co_st.seg, co_st.proc), co_st.seg->hdr->heap_slice))
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

void co_coll_fini(void) {
    co_nbc_fini();
    if (!S) return; /* the hook stays: communicators destroyed later still free their state */
    if (co_st.world) co_coll_comm_free(co_st.world);
    if (co_st.self) co_coll_comm_free(co_st.self);
    for (int i = 0; i < CO_COLL_CACHE; i++) free(S->cache[i].p);
    while (S->zombies) {
        co_cshm_zombie *z = S->zombies;
        S->zombies = z->next;
        free(z);
    }
    co_shm_heap_fini(&S->heap);
    free(S);
    S = NULL;
}
