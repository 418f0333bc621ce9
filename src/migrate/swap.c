/* Swapping two ranks (docs/migration.md). World ranks are identities; processes sit in slots
 * that never change (co_st.proc), and every process keeps the table from one to the other
 * (co_proc_of). A swap of ranks a and b on processes Pa and Pb:
 *   1. the pair: every member names the same one (the markers' pattern depends on it);
 *   2. markers: every process sends one to Pa and Pb, and they to every process, on the
 *      communicator's collective context, behind whatever each sent before on the same queue;
 *      once a process has its markers, every message sent before the swap to or from Pa and Pb
 *      has reached it (a message of rank a sent before the swap cannot be overtaken by one of
 *      rank a sent after it from Pb);
 *   3. checks, agreed on by every member before anything changes: Pa and Pb have nothing in
 *      flight (requests, unreceived messages, nonblocking collectives) and no object that
 *      keeps per-rank state this swap cannot move (windows, persistent collectives,
 *      distributed graph topologies, communicators that hold one of a and b but not the
 *      other); both registered the same region sizes;
 *   4. the state: R1 = A xor B (Pa keeps it), R2 = R1 xor B = A (Pb keeps it), R3 = R1 xor A
 *      = B (Pa keeps it), three allreduces with MPI_BXOR to which every other rank gives
 *      zeros, in rounds of a bounded size;
 *   5. a barrier, so that no process still works on the old placement, then every process
 *      updates its table, and Pa and Pb their ranks in every group and communicator. */
#include "migrate.h"

#include "../ckpt/ckpt.h"
#include "../coll/coll.h"
#include "../comm/comm.h"
#include "../op/op.h"
#include "../p2p/p2p.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bytes of state per round of three allreduces: bounds the buffers every rank allocates */
#define SWAP_CHUNK (4u << 20)

typedef struct swap_err {
    int cls;
    char why[256];
} swap_err;

CO_PRINTF(3, 4) static void fail(swap_err *e, int cls, const char *fmt, ...) {
    if (e->cls) return; /* the first reason found is the one reported */
    e->cls = cls;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof(e->why), fmt, ap);
    va_end(ap);
}

static int group_index(const co_group *g, int w) {
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w) return i;
    return -1;
}

/* A communicator of this process (which holds rank `mine` of the pair; `other` is the other
 * one) that a swap would break. */
static void check_comm(co_comm *x, int mine, int other, swap_err *e) {
    /* an intercommunicator must have both in its local group (this process is in it) */
    int split = (x->is_inter || x->size > 1) && group_index(x->local, other) < 0;
    int dist = x->topo && x->topo->kind == MPI_DIST_GRAPH;
    if (e->cls || !(split || dist || x->idup_pending)) return;
    char name[MPI_MAX_OBJECT_NAME + 40];
    if (x->handle)
        snprintf(name, sizeof(name), "communicator %s (ID %llu)", co_comm_label(x),
                 (unsigned long long)x->id);
    else
        snprintf(name, sizeof(name), "an internal communicator (ID %llu)",
                 (unsigned long long)x->id);
    if (split && x->is_inter)
        fail(e, MPI_ERR_COMM,
             "%s is an intercommunicator whose local group holds world rank %d but not "
             "world rank %d",
             name, mine, other);
    else if (split)
        fail(e, MPI_ERR_COMM,
             "%s holds world rank %d but not world rank %d: the process that takes rank %d "
             "would not be a member of it (free it first, or swap ranks that share it)",
             name, mine, other, mine);
    else if (dist)
        fail(e, MPI_ERR_TOPOLOGY,
             "%s has a distributed graph topology, whose edges each rank holds alone", name);
    else
        fail(e, MPI_ERR_PENDING, "an MPI_Comm_idup on %s has not completed", name);
}

/* What keeps Pa or Pb (holding world rank `mine`) from swapping. */
static void check_movable(co_comm *c, int mine, int other, swap_err *e) {
    /* communicators the program holds first, so that the reason names one of them */
    for (int pass = 0; pass < 2; pass++)
        for (co_comm *x = co_st.all_comms; x; x = x->all_next)
            if ((x->handle != 0) == (pass == 0)) check_comm(x, mine, other, e);
    int active = 0, pcoll = 0;
    co_htab *t = &co_st.reqs;
    for (uint32_t i = 1; i < t->next; i++) {
        co_req *r = co_htab_at(t, i);
        if (!r || r->shared) continue;
        if (r->kind == CO_REQ_COLL && r->persistent)
            pcoll++;
        else if (r->persistent ? r->active : !r->complete)
            active++;
    }
    if (active)
        fail(e, MPI_ERR_PENDING,
             "world rank %d has %d request%s in flight (complete them before swapping)", mine,
             active, active == 1 ? "" : "s");
    if (co_nbc_active())
        fail(e, MPI_ERR_PENDING, "world rank %d has nonblocking collectives in flight", mine);
    if (pcoll)
        fail(e, MPI_ERR_REQUEST,
             "world rank %d holds %d persistent collective request%s, built for its rank (free "
             "them before swapping)",
             mine, pcoll, pcoll == 1 ? "" : "s");
    int unexp = 0;
    /* (the swap's own agreement may have begun to arrive: ranks that had their markers
     * first run ahead; on c's collective context nothing older can be waiting, since every
     * earlier collective call on c has completed here) */
    for (const co_umsg *u = co_st.p2p->unexp_head; u; u = u->next)
        unexp += u->ctx != co_coll_ctx(c);
    if (unexp)
        fail(e, MPI_ERR_PENDING,
             "%d message%s sent to world rank %d %s not been received (receive them before "
             "swapping)",
             unexp, unexp == 1 ? "" : "s", mine, unexp == 1 ? "has" : "have");
    if (co_st.msgs.live)
        fail(e, MPI_ERR_PENDING, "world rank %d holds messages taken by MPI_Mprobe/MPI_Improbe",
             mine);
    if (co_st.bsend_pending)
        fail(e, MPI_ERR_PENDING, "world rank %d has buffered sends not yet delivered", mine);
    if (co_st.wins.live)
        fail(e, MPI_ERR_WIN,
             "world rank %d has %u window%s or open file%s, whose memory stays with the process "
             "(free or close them before swapping)",
             mine, co_st.wins.live, co_st.wins.live == 1 ? "" : "s",
             co_st.wins.live == 1 ? "" : "s");
}

/* Step 2: the markers (see the top of the file). */
static int exchange_markers(co_comm *c, int a, int b) {
    int n = c->size, me = c->rank, k = 0;
    co_req **rq = calloc((size_t)2 * (size_t)n + 4, sizeof(*rq));
    if (!rq) return MPI_ERR_NO_MEM;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    uint64_t ctx = co_coll_ctx(c);
    int rc = MPI_SUCCESS;
    for (int q = 0; q < n && !rc; q++) {
        int talk = me == a || me == b ? q != me : (q == a || q == b);
        if (!talk) continue;
        if (!(rc = co_irecv(NULL, 0, byte, q, CO_TAG_SWAP, c, ctx, &rq[k]))) k++;
        if (!rc && !(rc = co_isend(NULL, 0, byte, q, CO_TAG_SWAP, c, ctx, CO_MODE_STD, &rq[k])))
            k++;
    }
    int wrc = co_waitall_internal(k, rq);
    free(rq);
    return rc ? rc : wrc;
}

/* Step 1: every member names the same pair, or every member says they do not. */
static int agree_pair(co_comm *c, int a, int b, const char *fn) {
    int64_t v[4] = {a, -(int64_t)a, b, -(int64_t)b}, all[4];
    int rc = co_allreduce(v, all, 4, co_dt_get(MPI_INT64_T), co_op_get(MPI_MAX), c);
    if (rc) return co_error(c, fn, rc, "comparing the members' arguments failed");
    if (all[0] != -all[1] || all[2] != -all[3])
        return co_error(c, fn, MPI_ERR_ARG,
                        "the members name different ranks to swap (rank_a from %lld to %lld, "
                        "rank_b from %lld to %lld)",
                        (long long)-all[1], (long long)all[0], (long long)-all[3],
                        (long long)all[2]);
    return MPI_SUCCESS;
}

/* Step 3's agreement: one allreduce with MPI_MAX over what every rank found. */
enum {
    V_ERR, /* (size - rank) << 8 | class of the lowest rank that found a reason, else 0 */
    V_BYTES_A,
    V_BYTES_B,
    V_REGIONS_A,
    V_REGIONS_B,
    V_SHAPE_A, /* a hash of the region sizes */
    V_SHAPE_B,
    V_N
};

static uint64_t shape_hash(const co_ckpt_region *r, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = r[i].size;
        for (int j = 0; j < 8; j++, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
    }
    return h >> 1; /* positive as an int64_t */
}

/* *image: the size of the two ranks' images, which every member's share of the exchange has
 * (the other members' own images may be of any size). */
static int agree(co_comm *c, int a, int b, const swap_err *mine, uint64_t bytes, size_t nregions,
                 uint64_t shape, int is_a, int is_b, uint64_t *image, const char *fn) {
    int64_t v[V_N], all[V_N];
    v[V_ERR] = mine->cls ? (int64_t)(c->size - c->rank) << 8 | mine->cls : 0;
    v[V_BYTES_A] = is_a ? (int64_t)bytes : -1;
    v[V_BYTES_B] = is_b ? (int64_t)bytes : -1;
    v[V_REGIONS_A] = is_a ? (int64_t)nregions : -1;
    v[V_REGIONS_B] = is_b ? (int64_t)nregions : -1;
    v[V_SHAPE_A] = is_a ? (int64_t)shape : -1;
    v[V_SHAPE_B] = is_b ? (int64_t)shape : -1;
    int rc = co_allreduce(v, all, V_N, co_dt_get(MPI_INT64_T), co_op_get(MPI_MAX), c);
    if (rc) return co_error(c, fn, rc, "combining the members' checks failed");
    if (all[V_ERR]) {
        int first = c->size - (int)(all[V_ERR] >> 8), cls = (int)(all[V_ERR] & 0xff);
        swap_err e = *mine;
        if ((rc = co_bcast_binomial(e.why, sizeof(e.why), co_dt_get(MPI_CHAR), first, c)))
            return co_error(c, fn, rc, "passing on rank %d's reason failed", first);
        e.why[sizeof(e.why) - 1] = 0;
        return co_error(c, fn, cls, "cannot swap ranks %d and %d: %s (found by rank %d)", a, b,
                        e.why, first);
    }
    if (all[V_BYTES_A] != all[V_BYTES_B] || all[V_REGIONS_A] != all[V_REGIONS_B] ||
        all[V_SHAPE_A] != all[V_SHAPE_B])
        return co_error(c, fn, MPI_ERR_SIZE,
                        "cannot swap ranks %d and %d: their registered regions differ (rank %d: "
                        "%lld bytes in %lld regions, rank %d: %lld bytes in %lld regions%s)",
                        a, b, a, (long long)all[V_BYTES_A], (long long)all[V_REGIONS_A], b,
                        (long long)all[V_BYTES_B], (long long)all[V_REGIONS_B],
                        all[V_BYTES_A] == all[V_BYTES_B] && all[V_REGIONS_A] == all[V_REGIONS_B]
                            ? ", of other sizes"
                            : "");
    *image = (uint64_t)all[V_BYTES_A];
    return MPI_SUCCESS;
}

/* Copies image bytes [off, off + n) between the regions and buf (out: regions to buf). */
static void image_copy(const co_ckpt_region *r, size_t nr, uint64_t off, uint8_t *buf, uint64_t n,
                       int out) {
    uint64_t at = 0;
    for (size_t i = 0; i < nr && n; i++) {
        uint64_t end = at + r[i].size;
        if (off < end) {
            uint64_t in = off - at, k = CO_MIN(end - off, n);
            if (out)
                memcpy(buf, r[i].base + in, k);
            else
                memcpy(r[i].base + in, buf, k);
            buf += k, off += k, n -= k;
        }
        at = end;
    }
}

/* The region memory of image bytes [off, off + n) when one region holds them all, else NULL. */
static uint8_t *image_at(const co_ckpt_region *r, size_t nr, uint64_t off, uint64_t n) {
    uint64_t at = 0;
    for (size_t i = 0; i < nr; i++) {
        if (off >= at && off + n <= at + r[i].size) return r[i].base + (off - at);
        at += r[i].size;
    }
    return NULL;
}

/* Step 4: role 1 on Pa, 2 on Pb, 0 elsewhere. The state travels in chunks of the image (the
 * regions one after the other); a chunk inside one region is exchanged in place, others go
 * through a buffer. */
static int exchange_state(co_comm *c, int role, uint64_t bytes, const char *fn) {
    size_t nr;
    const co_ckpt_region *r = co_ckpt_regions(&nr);
    size_t chunk = (size_t)CO_MIN(bytes, (uint64_t)SWAP_CHUNK);
    /* (the nonblocking schedules' cache: blocks that outlive the blocking calls made here) */
    uint8_t *pack = NULL, *t = co_coll_scratch(chunk), *zero = role ? NULL : co_coll_scratch(chunk);
    if (!t || (!role && !zero)) {
        co_coll_scratch_free(t), co_coll_scratch_free(zero);
        return co_error(c, fn, MPI_ERR_NO_MEM, "no memory for %zu bytes of swap buffers", chunk);
    }
    if (zero) memset(zero, 0, chunk);
    co_dtype *u8 = co_dt_get(MPI_BYTE);
    co_op *bxor = co_op_get(MPI_BXOR);
    int rc = MPI_SUCCESS;
    for (uint64_t off = 0; off < bytes && !rc; off += chunk) {
        size_t k = (size_t)CO_MIN((uint64_t)chunk, bytes - off);
        uint8_t *x = role ? image_at(r, nr, off, k) : NULL;
        if (role && !x) {
            if (!pack && !(pack = co_coll_scratch(chunk))) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            x = pack;
            image_copy(r, nr, off, x, k, 1);
        }
        /* what each rank gives and where its result goes in round i: the keeper's own bytes
         * in place, the other end's as they are, zeros from everyone else */
        for (int round = 0; round < 3 && !rc; round++) {
            int keeper = round == 1 ? 2 : 1;
            const void *in = role == keeper ? MPI_IN_PLACE : role ? x : zero;
            rc = co_allreduce(in, role == keeper ? x : t, k, u8, bxor, c);
        }
        if (!rc && x == pack && pack) image_copy(r, nr, off, x, k, 0);
    }
    co_coll_scratch_free(pack), co_coll_scratch_free(t), co_coll_scratch_free(zero);
    if (rc)
        return co_error(c, fn, rc,
                        "the exchange of the ranks' regions failed; both ranks' regions may be "
                        "partly exchanged%s%s",
                        co_coll_broken_sep(c), co_coll_broken_why(c));
    return MPI_SUCCESS;
}

/* Step 5, at every process: world ranks wa and wb change places. */
static void renumber(int wa, int wb) {
    int n = co_st.world_size;
    if (!co_st.proc_of) {
        co_st.proc_of = malloc((size_t)n * sizeof(int));
        co_st.world_of = malloc((size_t)n * sizeof(int));
        if (!co_st.proc_of || !co_st.world_of) co_fatal("out of memory swapping ranks");
        for (int i = 0; i < n; i++) co_st.proc_of[i] = co_st.world_of[i] = i;
    }
    int pa = co_st.proc_of[wa], pb = co_st.proc_of[wb];
    co_st.proc_of[wa] = pb, co_st.proc_of[wb] = pa;
    co_st.world_of[pa] = wb, co_st.world_of[pb] = wa;
    int old = co_st.world_rank;
    int now = old == wa ? wb : old == wb ? wa : old;
    if (now != old) {
        co_st.world_rank = now;
        atomic_store(&co_st.seg->ranks[co_st.proc].world1, now + 1);
        /* groups of this process alone (MPI_COMM_SELF's, a communicator split to one rank)
         * follow it; in every other group it just has another rank, or none */
        for (co_group *g = co_st.all_groups; g; g = g->all_next) {
            if (g->size == 1 && g->world[0] == old) g->world[0] = now;
            co_group_finish(g);
        }
    }
    for (co_comm *x = co_st.all_comms; x; x = x->all_next) {
        x->rank = x->local->rank;
        co_coll_renumber(x, group_index(x->local, wa), group_index(x->local, wb));
    }
}

int co_swap_ranks(co_comm *c, int a, int b, const char *fn) {
    int wa = c->local->world[a], wb = c->local->world[b];
    int is_a = co_st.world_rank == wa, is_b = co_st.world_rank == wb;
    int rc = agree_pair(c, a, b, fn);
    if (rc) return rc;
    if (a != b && (rc = exchange_markers(c, a, b)))
        return co_error(c, fn, rc, "exchanging the swap's markers failed");
    swap_err e = {0, ""};
    if (a != b && (is_a || is_b)) check_movable(c, is_a ? wa : wb, is_a ? wb : wa, &e);
    size_t nr;
    const co_ckpt_region *r = co_ckpt_regions(&nr);
    uint64_t bytes = 0;
    for (size_t i = 0; i < nr; i++) bytes += r[i].size;
    uint64_t image = 0;
    if ((rc = agree(c, a, b, &e, bytes, nr, shape_hash(r, nr), is_a, is_b, &image, fn))) return rc;
    if (a == b) return MPI_SUCCESS;
    if (image && (rc = exchange_state(c, is_a ? 1 : is_b ? 2 : 0, image, fn))) return rc;
    if ((rc = co_barrier(c))) return co_error(c, fn, rc, "the swap's closing barrier failed");
    renumber(wa, wb);
    return MPI_SUCCESS;
}
