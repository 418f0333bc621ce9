/* One-sided entry points: argument checks, then src/rma. An invalid window is reported on
 * MPI_COMM_WORLD's error handler, every other error on the window's (MPI_ERRORS_ARE_FATAL
 * until MPI_Win_set_errhandler). */
#include "api.h"
#include "../rma/rma.h"

#include <stdlib.h>

#define ASSERT_BITS                                                                                \
    (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

static co_win *win_arg(const char *fn, MPI_Win h, int *rc) {
    co_win *w = co_win_get(h);
    if (CO_UNLIKELY(!w))
        *rc = co_error(NULL, fn, MPI_ERR_WIN,
                       h == MPI_WIN_NULL ? "window is MPI_WIN_NULL"
                                         : "invalid window (freed or never created)");
    return w;
}

#define WIN_ENTER(fn, h)                                                                           \
    CO_ENTER(fn);                                                                                  \
    int rc = MPI_SUCCESS;                                                                          \
    co_win *w = win_arg(fn, h, &rc);                                                               \
    if (!w) return rc

static int check_assert(co_win *w, const char *fn, int assert) {
    if (assert & ~ASSERT_BITS)
        return co_win_error(w, fn, MPI_ERR_ASSERT, "assert %#x has bits no MPI_MODE_* constant has",
                            (unsigned)assert);
    return MPI_SUCCESS;
}

static int check_rank(co_win *w, const char *fn, int rank, int allow_null) {
    if ((rank >= 0 && rank < w->size) || (allow_null && rank == MPI_PROC_NULL)) return MPI_SUCCESS;
    return co_win_error(w, fn, MPI_ERR_RANK, "invalid rank %d (window of %d ranks)", rank, w->size);
}

/* ---- Creation ------------------------------------------------------------------------------ */

static int create_common(const char *fn, int flavor, void *base, MPI_Aint size, int disp_unit,
                         MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (c->is_inter)
        return co_error(c, fn, MPI_ERR_COMM, "windows are made over intracommunicators");
    CO_API_OUT(c, fn, win);
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        CO_API_OUT(c, fn, baseptr);
    if (size < 0) return co_error(c, fn, MPI_ERR_SIZE, "negative size %ld", (long)size);
    if (disp_unit <= 0)
        return co_error(c, fn, MPI_ERR_DISP, "displacement unit %d is not positive", disp_unit);
    if (flavor == MPI_WIN_FLAVOR_CREATE && !base && size > 0)
        return co_error(c, fn, MPI_ERR_BASE, "base is NULL but size is %ld", (long)size);
    if ((rc = co_api_info_arg(c, fn, info))) return rc;
    co_win *w;
    rc = co_win_create(c, flavor, base, size, disp_unit,
                       info == MPI_INFO_NULL ? NULL : co_info_get(info), fn, &w);
    if (rc) return rc;
    *win = w->handle;
    if (baseptr && flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        *(void **)baseptr = w->base;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_create, PMPI_Win_create);
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win) {
    return create_common("MPI_Win_create", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm,
                         NULL, win);
}

CO_WEAK(MPI_Win_allocate, PMPI_Win_allocate);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win) {
    return create_common("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info,
                         comm, baseptr, win);
}

CO_WEAK(MPI_Win_allocate_shared, PMPI_Win_allocate_shared);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win) {
    return create_common("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit,
                         info, comm, baseptr, win);
}

CO_WEAK(MPI_Win_create_dynamic, PMPI_Win_create_dynamic);
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    return create_common("MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm,
                         NULL, win);
}

CO_WEAK(MPI_Win_shared_query, PMPI_Win_shared_query);
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr) {
    static const char fn[] = "MPI_Win_shared_query";
    WIN_ENTER(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return co_win_error(w, fn, MPI_ERR_RMA_FLAVOR,
                            "the window was not made by MPI_Win_allocate_shared");
    if ((rc = check_rank(w, fn, rank, 1))) return rc;
    if (!size || !disp_unit || !baseptr)
        return co_win_error(w, fn, MPI_ERR_ARG, "size, disp_unit or baseptr is NULL");
    if (rank == MPI_PROC_NULL) { /* the lowest rank with memory */
        rank = 0;
        while (rank < w->size - 1 && w->peers[rank].size == 0) rank++;
    }
    *size = w->peers[rank].size;
    *disp_unit = w->peers[rank].disp_unit;
    *(void **)baseptr = *size ? w->peers[rank].local : NULL;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_attach, PMPI_Win_attach);
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    static const char fn[] = "MPI_Win_attach";
    WIN_ENTER(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return co_win_error(w, fn, MPI_ERR_RMA_FLAVOR,
                            "memory is attached only to windows of MPI_Win_create_dynamic");
    if (size < 0) return co_win_error(w, fn, MPI_ERR_SIZE, "negative size %ld", (long)size);
    if (!base && size > 0) return co_win_error(w, fn, MPI_ERR_BASE, "base is NULL");
    for (int i = 0; i < w->nregions; i++) {
        co_win_region *g = &w->regions[i];
        if ((char *)base < g->base + g->size && g->base < (char *)base + size)
            return co_win_error(w, fn, MPI_ERR_RMA_ATTACH,
                                "the memory overlaps a region attached before");
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 8;
        co_win_region *r = realloc(w->regions, (size_t)cap * sizeof(*r));
        if (!r) return co_win_error(w, fn, MPI_ERR_NO_MEM, "out of memory");
        w->regions = r;
        w->capregions = cap;
    }
    w->regions[w->nregions++] = (co_win_region){base, size};
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_detach, PMPI_Win_detach);
int PMPI_Win_detach(MPI_Win win, const void *base) {
    static const char fn[] = "MPI_Win_detach";
    WIN_ENTER(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return co_win_error(w, fn, MPI_ERR_RMA_FLAVOR,
                            "memory is detached only from windows of MPI_Win_create_dynamic");
    for (int i = 0; i < w->nregions; i++)
        if (w->regions[i].base == base) {
            w->regions[i] = w->regions[--w->nregions];
            return MPI_SUCCESS;
        }
    return co_win_error(w, fn, MPI_ERR_RMA_ATTACH, "no region attached at %p", base);
}

CO_WEAK(MPI_Win_free, PMPI_Win_free);
int PMPI_Win_free(MPI_Win *win) {
    static const char fn[] = "MPI_Win_free";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, win);
    int rc = MPI_SUCCESS;
    co_win *w = win_arg(fn, *win, &rc);
    if (!w) return rc;
    if (w->nlocked || w->lock_all || w->start || w->post)
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "a%s epoch is still open on the window",
                            w->start || w->post ? " post-start" : " lock");
    if ((rc = co_win_free(w, fn))) return rc;
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

/* ---- Synchronisation ----------------------------------------------------------------------- */

CO_WEAK(MPI_Win_fence, PMPI_Win_fence);
int PMPI_Win_fence(int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_fence";
    WIN_ENTER(fn, win);
    if ((rc = check_assert(w, fn, assert))) return rc;
    return co_win_fence(w, assert, fn);
}

/* The window ranks of group h's members; NULL with *rc set when h is invalid or has members
 * outside the window. */
static int *group_ranks(co_win *w, const char *fn, MPI_Group h, int *n, int *rc) {
    co_group *g = co_group_get(h);
    if (!g) {
        *rc = co_win_error(w, fn, MPI_ERR_GROUP,
                           h == MPI_GROUP_NULL ? "group is MPI_GROUP_NULL" : "invalid group");
        return NULL;
    }
    int *t = co_group_rank_table(w->comm->local), *r = malloc((size_t)(g->size + 1) * sizeof(int));
    if (!t || !r) co_fatal("out of memory");
    for (int i = 0; i < g->size; i++) {
        r[i] = t[g->world[i]];
        if (r[i] < 0) {
            *rc = co_win_error(w, fn, MPI_ERR_GROUP,
                               "member %d of the group is not in the window's group", i);
            free(t);
            free(r);
            return NULL;
        }
    }
    free(t);
    *n = g->size;
    return r;
}

static int pscw_begin(const char *fn, MPI_Group group, int assert, MPI_Win win, int post) {
    WIN_ENTER(fn, win);
    if ((rc = check_assert(w, fn, assert))) return rc;
    int n = 0, *ranks = group_ranks(w, fn, group, &n, &rc);
    if (!ranks) return rc;
    if (!post) return co_win_start(w, ranks, n, assert, fn); /* keeps ranks */
    rc = co_win_post(w, ranks, n, assert, fn);
    free(ranks);
    return rc;
}

CO_WEAK(MPI_Win_post, PMPI_Win_post);
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    return pscw_begin("MPI_Win_post", group, assert, win, 1);
}

CO_WEAK(MPI_Win_start, PMPI_Win_start);
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    return pscw_begin("MPI_Win_start", group, assert, win, 0);
}

CO_WEAK(MPI_Win_complete, PMPI_Win_complete);
int PMPI_Win_complete(MPI_Win win) {
    static const char fn[] = "MPI_Win_complete";
    WIN_ENTER(fn, win);
    return co_win_complete(w, fn);
}

CO_WEAK(MPI_Win_wait, PMPI_Win_wait);
int PMPI_Win_wait(MPI_Win win) {
    static const char fn[] = "MPI_Win_wait";
    WIN_ENTER(fn, win);
    return co_win_wait(w, NULL, fn);
}

CO_WEAK(MPI_Win_test, PMPI_Win_test);
int PMPI_Win_test(MPI_Win win, int *flag) {
    static const char fn[] = "MPI_Win_test";
    WIN_ENTER(fn, win);
    if (!flag) return co_win_error(w, fn, MPI_ERR_ARG, "flag is NULL");
    return co_win_wait(w, flag, fn);
}

CO_WEAK(MPI_Win_lock, PMPI_Win_lock);
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_lock";
    WIN_ENTER(fn, win);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return co_win_error(w, fn, MPI_ERR_LOCKTYPE,
                            "lock type %d is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED",
                            lock_type);
    if ((rc = check_rank(w, fn, rank, 1)) || (rc = check_assert(w, fn, assert))) return rc;
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS; /* as every RMA call takes it: no effect */
    return co_win_lock(w, lock_type, rank, assert, fn);
}

CO_WEAK(MPI_Win_unlock, PMPI_Win_unlock);
int PMPI_Win_unlock(int rank, MPI_Win win) {
    static const char fn[] = "MPI_Win_unlock";
    WIN_ENTER(fn, win);
    if ((rc = check_rank(w, fn, rank, 1))) return rc;
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return co_win_unlock(w, rank, fn);
}

CO_WEAK(MPI_Win_lock_all, PMPI_Win_lock_all);
int PMPI_Win_lock_all(int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_lock_all";
    WIN_ENTER(fn, win);
    if ((rc = check_assert(w, fn, assert))) return rc;
    return co_win_lock_all(w, assert, fn);
}

CO_WEAK(MPI_Win_unlock_all, PMPI_Win_unlock_all);
int PMPI_Win_unlock_all(MPI_Win win) {
    static const char fn[] = "MPI_Win_unlock_all";
    WIN_ENTER(fn, win);
    return co_win_unlock_all(w, fn);
}

/* Operations complete at their call, so a flush only orders memory; it needs a passive-target
 * epoch on the rank (all: on some rank). */
static int flush(const char *fn, int rank, int all, MPI_Win win) {
    WIN_ENTER(fn, win);
    if (!all) {
        if ((rc = check_rank(w, fn, rank, 1))) return rc;
        if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
        if (!w->locked[rank] && !w->lock_all)
            return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "rank %d is not locked by this rank",
                                rank);
    } else if (!w->nlocked && !w->lock_all) {
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC, "this rank holds no lock on the window");
    }
    /* whoever synchronises with this rank afterwards sees the operations */
    atomic_thread_fence(memory_order_acq_rel);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_flush, PMPI_Win_flush);
int PMPI_Win_flush(int rank, MPI_Win win) {
    return flush("MPI_Win_flush", rank, 0, win);
}

CO_WEAK(MPI_Win_flush_local, PMPI_Win_flush_local);
int PMPI_Win_flush_local(int rank, MPI_Win win) {
    return flush("MPI_Win_flush_local", rank, 0, win);
}

CO_WEAK(MPI_Win_flush_all, PMPI_Win_flush_all);
int PMPI_Win_flush_all(MPI_Win win) {
    return flush("MPI_Win_flush_all", 0, 1, win);
}

CO_WEAK(MPI_Win_flush_local_all, PMPI_Win_flush_local_all);
int PMPI_Win_flush_local_all(MPI_Win win) {
    return flush("MPI_Win_flush_local_all", 0, 1, win);
}

CO_WEAK(MPI_Win_sync, PMPI_Win_sync);
int PMPI_Win_sync(MPI_Win win) {
    static const char fn[] = "MPI_Win_sync";
    WIN_ENTER(fn, win);
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

/* ---- Operations ---------------------------------------------------------------------------- */

/* One buffer argument of an operation; buf NULL for the target's side (no buffer here). */
static int side(co_win *w, const char *fn, const char *what, const void *buf, int count,
                MPI_Datatype type, int is_target, co_rma_side *s) {
    if (count < 0) return co_win_error(w, fn, MPI_ERR_COUNT, "negative %s count %d", what, count);
    co_dtype *dt = co_dt_get(type);
    if (!dt && type == MPI_DATATYPE_NULL && count == 0) dt = co_dt_get(MPI_BYTE);
    if (!dt || !dt->committed || dt->freed)
        return co_win_error(w, fn, MPI_ERR_TYPE, "%s datatype is %s", what,
                            type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                            : !dt                     ? "invalid (freed or never created)"
                            : dt->freed               ? "freed"
                                                      : "not committed");
    if (!is_target && !buf && count > 0 && dt->size > 0 && dt->true_lb == 0)
        return co_win_error(w, fn, MPI_ERR_BUFFER, "%s buffer is NULL but count is %d", what,
                            count);
    *s = (co_rma_side){(void *)buf, (size_t)count, dt};
    return MPI_SUCCESS;
}

/* The operator and element types of an accumulate: a predefined operator, and origin (and
 * result) of the same predefined element type as the target. */
static int acc_args(co_win *w, const char *fn, MPI_Op oph, const co_rma_side *o,
                    const co_rma_side *r, const co_rma_side *t, co_op **op) {
    *op = co_op_get(oph);
    if (!*op) return co_win_error(w, fn, MPI_ERR_OP, "invalid operator");
    if (!(*op)->predefined)
        return co_win_error(w, fn, MPI_ERR_OP,
                            "accumulates take predefined operators only, not user-defined ones");
    int noop = oph == MPI_NO_OP;
    if (!t->count || !t->dt->size) return MPI_SUCCESS;
    if (t->dt->basic == CO_B_NONE)
        return co_win_error(w, fn, MPI_ERR_TYPE,
                            "the target datatype mixes element types (an accumulate needs one)");
    if (o && !noop && o->count && o->dt->size && o->dt->basic != t->dt->basic)
        return co_win_error(w, fn, MPI_ERR_TYPE,
                            "origin elements (%s) and target elements (%s) differ",
                            co_basic_name(o->dt->basic), co_basic_name(t->dt->basic));
    if (r && r->count && r->dt->size && r->dt->basic != t->dt->basic)
        return co_win_error(w, fn, MPI_ERR_TYPE,
                            "result elements (%s) and target elements (%s) differ",
                            co_basic_name(r->dt->basic), co_basic_name(t->dt->basic));
    if (!noop && oph != MPI_REPLACE && co_op_check(*op, t->dt))
        return co_win_error(w, fn, MPI_ERR_OP, "the operator is not defined on %s",
                            co_basic_name(t->dt->basic));
    return MPI_SUCCESS;
}

/* An operation's request: complete already, as the operation is (rma.h). */
static int done_request(co_win *w, const char *fn, MPI_Request *request) {
    co_req *r = co_req_new(CO_REQ_COLL);
    if (!r) return co_win_error(w, fn, MPI_ERR_NO_MEM, "out of requests");
    r->complete = 1;
    r->status.source = MPI_ANY_SOURCE;
    r->status.tag = MPI_ANY_TAG;
    *request = r->handle;
    return MPI_SUCCESS;
}

static int put_get(const char *fn, int kind, const void *oaddr, int ocount, MPI_Datatype otype,
                   int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win,
                   MPI_Request *request) {
    WIN_ENTER(fn, win);
    co_rma_side o, t;
    if ((rc = side(w, fn, "origin", oaddr, ocount, otype, 0, &o)) ||
        (rc = side(w, fn, "target", NULL, tcount, ttype, 1, &t)) ||
        (rc = check_rank(w, fn, trank, 1)))
        return rc;
    if (request) CO_API_OUT(NULL, fn, request);
    rc = kind == CO_RMA_PUT ? co_rma_op(w, kind, &o, NULL, NULL, trank, tdisp, &t, NULL, fn)
                            : co_rma_op(w, kind, NULL, &o, NULL, trank, tdisp, &t, NULL, fn);
    if (rc || !request) return rc;
    return done_request(w, fn, request);
}

CO_WEAK(MPI_Put, PMPI_Put);
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win) {
    return put_get("MPI_Put", CO_RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, NULL);
}

CO_WEAK(MPI_Get, PMPI_Get);
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    return put_get("MPI_Get", CO_RMA_GET, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, NULL);
}

CO_WEAK(MPI_Rput, PMPI_Rput);
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request) {
    if (!request) return co_error(NULL, "MPI_Rput", MPI_ERR_ARG, "request is NULL");
    return put_get("MPI_Rput", CO_RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, request);
}

CO_WEAK(MPI_Rget, PMPI_Rget);
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request) {
    if (!request) return co_error(NULL, "MPI_Rget", MPI_ERR_ARG, "request is NULL");
    return put_get("MPI_Rget", CO_RMA_GET, origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, request);
}

/* Fetch_and_op and Compare_and_swap take one element of a predefined type. */
static co_dtype *single_type(co_win *w, const char *fn, MPI_Datatype type, int *rc) {
    co_dtype *dt = co_dt_get(type);
    if (!dt || !dt->predefined || dt->size == 0) {
        *rc = co_win_error(w, fn, MPI_ERR_TYPE, "the datatype must be a predefined one");
        return NULL;
    }
    return dt;
}

static int accumulate(const char *fn, const void *oaddr, int ocount, MPI_Datatype otype,
                      void *raddr, int rcount, MPI_Datatype rtype, int trank, MPI_Aint tdisp,
                      int tcount, MPI_Datatype ttype, MPI_Op oph, MPI_Win win, int fetch,
                      int single, MPI_Request *request) {
    WIN_ENTER(fn, win);
    if (single && !single_type(w, fn, ttype, &rc)) return rc; /* MPI_Fetch_and_op */
    co_rma_side o, r, t;
    co_op *op;
    int noop = oph == MPI_NO_OP;
    /* MPI_NO_OP ignores the origin's arguments */
    if (noop) o = (co_rma_side){NULL, 0, co_dt_get(MPI_BYTE)};
    if ((!noop && (rc = side(w, fn, "origin", oaddr, ocount, otype, 0, &o))) ||
        (fetch && (rc = side(w, fn, "result", raddr, rcount, rtype, 0, &r))) ||
        (rc = side(w, fn, "target", NULL, tcount, ttype, 1, &t)) ||
        (rc = check_rank(w, fn, trank, 1)) ||
        (rc = acc_args(w, fn, oph, &o, fetch ? &r : NULL, &t, &op)))
        return rc;
    rc = co_rma_op(w, fetch ? CO_RMA_GET_ACC : CO_RMA_ACC, &o, fetch ? &r : NULL, NULL, trank,
                   tdisp, &t, op, fn);
    if (rc || !request) return rc;
    return done_request(w, fn, request);
}

CO_WEAK(MPI_Accumulate, PMPI_Accumulate);
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    return accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                      MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
                      op, win, 0, 0, NULL);
}

CO_WEAK(MPI_Raccumulate, PMPI_Raccumulate);
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) {
    if (!request) return co_error(NULL, "MPI_Raccumulate", MPI_ERR_ARG, "request is NULL");
    return accumulate("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                      MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype,
                      op, win, 0, 0, request);
}

CO_WEAK(MPI_Get_accumulate, PMPI_Get_accumulate);
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    return accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                      result_count, result_datatype, target_rank, target_disp, target_count,
                      target_datatype, op, win, 1, 0, NULL);
}

CO_WEAK(MPI_Rget_accumulate, PMPI_Rget_accumulate);
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request) {
    if (!request) return co_error(NULL, "MPI_Rget_accumulate", MPI_ERR_ARG, "request is NULL");
    return accumulate("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype,
                      result_addr, result_count, result_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, win, 1, 0, request);
}

CO_WEAK(MPI_Fetch_and_op, PMPI_Fetch_and_op);
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    return accumulate("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
                      target_rank, target_disp, 1, datatype, op, win, 1, 1, NULL);
}

CO_WEAK(MPI_Compare_and_swap, PMPI_Compare_and_swap);
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
    static const char fn[] = "MPI_Compare_and_swap";
    WIN_ENTER(fn, win);
    co_dtype *dt = single_type(w, fn, datatype, &rc);
    if (!dt) return rc;
    switch (dt->basic) { /* integers, logical and byte types only */
    case CO_B_FLOAT:
    case CO_B_DOUBLE:
    case CO_B_LDOUBLE:
    case CO_B_CFLOAT:
    case CO_B_CDOUBLE:
    case CO_B_CLDOUBLE:
    case CO_B_PACKED:
        return co_win_error(w, fn, MPI_ERR_TYPE,
                            "compare-and-swap takes integer, logical or byte types, not %s",
                            co_basic_name(dt->basic));
    default:
        if (co_basic_is_pair(dt->basic))
            return co_win_error(w, fn, MPI_ERR_TYPE,
                                "compare-and-swap takes integer, logical or byte types, not %s",
                                co_basic_name(dt->basic));
    }
    if (!origin_addr || !compare_addr || !result_addr)
        return co_win_error(w, fn, MPI_ERR_BUFFER, "origin, compare or result buffer is NULL");
    if ((rc = check_rank(w, fn, target_rank, 1))) return rc;
    co_rma_side o = {(void *)origin_addr, 1, dt}, r = {result_addr, 1, dt}, t = {NULL, 1, dt};
    return co_rma_op(w, CO_RMA_CAS, &o, &r, compare_addr, target_rank, target_disp, &t, NULL, fn);
}

/* ---- Names, groups, hints, attributes, error handlers -------------------------------------- */

CO_WEAK(MPI_Win_get_group, PMPI_Win_get_group);
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group) {
    static const char fn[] = "MPI_Win_get_group";
    WIN_ENTER(fn, win);
    if (!group) return co_win_error(w, fn, MPI_ERR_ARG, "group is NULL");
    *group = co_group_handle_out(w->comm->local);
    if (*group == MPI_GROUP_NULL) return co_win_error(w, fn, MPI_ERR_NO_MEM, "out of handles");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_set_name, PMPI_Win_set_name);
int PMPI_Win_set_name(MPI_Win win, const char *win_name) {
    static const char fn[] = "MPI_Win_set_name";
    WIN_ENTER(fn, win);
    if (!win_name) return co_win_error(w, fn, MPI_ERR_ARG, "name is NULL");
    strncpy(w->name, win_name, MPI_MAX_OBJECT_NAME - 1);
    w->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_get_name, PMPI_Win_get_name);
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen) {
    static const char fn[] = "MPI_Win_get_name";
    WIN_ENTER(fn, win);
    if (!win_name || !resultlen)
        return co_win_error(w, fn, MPI_ERR_ARG, "name or resultlen is NULL");
    strcpy(win_name, w->name);
    *resultlen = (int)strlen(w->name);
    return MPI_SUCCESS;
}

/* Hints: none changes what Cohort does (docs/rma.md); the window keeps the ones it was given
 * and hands a copy back. */
CO_WEAK(MPI_Win_set_info, PMPI_Win_set_info);
int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
    static const char fn[] = "MPI_Win_set_info";
    WIN_ENTER(fn, win);
    co_info *in = co_info_get(info);
    if (!in) return co_win_error(w, fn, MPI_ERR_INFO, "invalid info object");
    for (int i = 0; i < in->n; i++)
        if (co_info_set(w->info, in->kv[i].key, in->kv[i].val))
            return co_win_error(w, fn, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_get_info, PMPI_Win_get_info);
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    static const char fn[] = "MPI_Win_get_info";
    WIN_ENTER(fn, win);
    if (!info_used) return co_win_error(w, fn, MPI_ERR_ARG, "info_used is NULL");
    co_info *d = co_info_dup(w->info);
    if (!d) return co_win_error(w, fn, MPI_ERR_NO_MEM, "out of info objects");
    *info_used = d->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_create_keyval, PMPI_Win_create_keyval);
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state) {
    static const char fn[] = "MPI_Win_create_keyval";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, win_keyval);
    int rc =
        co_keyval_create(win_copy_attr_fn, win_delete_attr_fn, extra_state, CO_KV_WIN, win_keyval);
    if (rc) return co_error(NULL, fn, rc, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_free_keyval, PMPI_Win_free_keyval);
int PMPI_Win_free_keyval(int *win_keyval) {
    static const char fn[] = "MPI_Win_free_keyval";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, win_keyval);
    if (co_keyval_free(*win_keyval, CO_KV_WIN))
        return co_error(NULL, fn, MPI_ERR_KEYVAL, "%d is not a window attribute key", *win_keyval);
    *win_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int is_predefined_key(int keyval) {
    return keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL;
}

static int win_key(co_win *w, const char *fn, int keyval) {
    if (co_keyval_kind(keyval) != CO_KV_WIN)
        return co_win_error(w, fn, MPI_ERR_KEYVAL, "%d is not a window attribute key", keyval);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_set_attr, PMPI_Win_set_attr);
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val) {
    static const char fn[] = "MPI_Win_set_attr";
    WIN_ENTER(fn, win);
    if (is_predefined_key(win_keyval))
        return co_win_error(w, fn, MPI_ERR_KEYVAL, "predefined attributes cannot be set");
    if ((rc = win_key(w, fn, win_keyval))) return rc;
    rc = co_attrs_set(&w->attrs, w->handle, win_keyval, attribute_val);
    if (rc) return co_win_error(w, fn, rc, "setting the attribute failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_get_attr, PMPI_Win_get_attr);
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag) {
    static const char fn[] = "MPI_Win_get_attr";
    WIN_ENTER(fn, win);
    if (!attribute_val || !flag)
        return co_win_error(w, fn, MPI_ERR_ARG, "attribute_val or flag is NULL");
    void *v = NULL;
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: v = &w->wsize; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->flavor; break;
    case MPI_WIN_MODEL: v = &w->model; break;
    default:
        if ((rc = win_key(w, fn, win_keyval))) return rc;
        co_attrs_get(w->attrs, win_keyval, &v, flag);
    }
    if (*flag) *(void **)attribute_val = v;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_delete_attr, PMPI_Win_delete_attr);
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
    static const char fn[] = "MPI_Win_delete_attr";
    WIN_ENTER(fn, win);
    if (is_predefined_key(win_keyval))
        return co_win_error(w, fn, MPI_ERR_KEYVAL, "predefined attributes cannot be deleted");
    if ((rc = win_key(w, fn, win_keyval))) return rc;
    rc = co_attrs_delete(&w->attrs, w->handle, win_keyval);
    if (rc == MPI_ERR_KEYVAL) return MPI_SUCCESS; /* nothing was set */
    if (rc) return co_win_error(w, fn, rc, "the attribute's delete callback failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_create_errhandler, PMPI_Win_create_errhandler);
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler) {
    /* the same function type: a handle is an int for either kind */
    return co_api_errh_create("MPI_Win_create_errhandler", win_errhandler_fn, errhandler);
}

CO_WEAK(MPI_Win_set_errhandler, PMPI_Win_set_errhandler);
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    static const char fn[] = "MPI_Win_set_errhandler";
    WIN_ENTER(fn, win);
    if (co_api_errh_set(&w->errh, errhandler))
        return co_win_error(w, fn, MPI_ERR_ARG, "invalid error handler");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_get_errhandler, PMPI_Win_get_errhandler);
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler) {
    static const char fn[] = "MPI_Win_get_errhandler";
    WIN_ENTER(fn, win);
    if (!errhandler) return co_win_error(w, fn, MPI_ERR_ARG, "errhandler is NULL");
    *errhandler = co_errh_handle_out(w->errh);
    if (*errhandler == MPI_ERRHANDLER_NULL)
        return co_win_error(w, fn, MPI_ERR_NO_MEM, "too many error handlers");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Win_call_errhandler, PMPI_Win_call_errhandler);
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    static const char fn[] = "MPI_Win_call_errhandler";
    WIN_ENTER(fn, win);
    co_win_error(w, fn, errorcode, "error raised by the application");
    return MPI_SUCCESS;
}
