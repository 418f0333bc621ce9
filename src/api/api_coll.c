/* Collective entry points and reduction operator objects: argument checks, then src/coll.
 * Every check that can be made locally is made before any communication, so that a bad
 * argument given on every rank fails on every rank alike. Calls whose arguments disagree
 * between ranks are reported by the algorithms (MPI_ERR_TRUNCATE, MPI_ERR_COUNT) or, when
 * the ranks would wait for each other forever, by the watch every call runs under (run(),
 * and coll.h, "Mismatched calls"). Intercommunicators take their own path (inter_*, at the
 * end, and src/coll/inter.c); Scan and Exscan are not defined on them (MPI_ERR_COMM). */
#include "api.h"
#include "../coll/coll.h"

#include <stdio.h>
#include <stdlib.h>

/* A live operator handle, else MPI_ERR_OP. */
static co_op *api_op(co_comm *c, const char *fn, MPI_Op h, int *rc) {
    co_op *op = co_op_get(h);
    if (!op)
        *rc = co_error(c, fn, MPI_ERR_OP,
                       h == MPI_OP_NULL ? "operator is MPI_OP_NULL"
                                        : "invalid operator (freed or never created)");
    return op;
}

/* The operator of a reduction over datatype handle t (dt: its type). MPI_DATATYPE_NULL, taken
 * with a count of 0 only (co_api_dtype), has nothing to combine: any operator will do. */
static co_op *check_op(co_comm *c, const char *fn, MPI_Op h, MPI_Datatype t, const co_dtype *dt,
                       int *rc) {
    co_op *op = api_op(c, fn, h, rc);
    if (!op) return NULL;
    if (op->predefined == (MPI_REPLACE & 0xfffff) || op->predefined == (MPI_NO_OP & 0xfffff)) {
        *rc = co_error(c, fn, MPI_ERR_OP,
                       "MPI_REPLACE and MPI_NO_OP are for one-sided accumulates only");
        return NULL;
    }
    if (t != MPI_DATATYPE_NULL && co_op_check(op, dt)) {
        *rc = co_error(c, fn, MPI_ERR_OP, "operator is not defined on datatype %s",
                       dt->name[0] ? dt->name : "(derived)");
        return NULL;
    }
    return op;
}

static int check_root(co_comm *c, const char *fn, int root) {
    if (CO_LIKELY(root >= 0 && root < c->size)) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_ROOT, "invalid root %d (communicator size %d)", root, c->size);
}

/* Calls of an intercommunicator (defined after the intracommunicator path). */
static int inter_bcast(co_comm *c, const char *fn, void *buf, int count, MPI_Datatype type,
                       int root, MPI_Request *req);
static int inter_reduce(co_comm *c, const char *fn, const void *sbuf, void *rbuf, int count,
                        MPI_Datatype type, MPI_Op op, int root, int all, MPI_Request *req);
static int inter_rooted(co_comm *c, const char *fn, int kind, const void *sbuf, int scount,
                        const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                        int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                        int root, MPI_Request *req);
static int inter_every(co_comm *c, const char *fn, int kind, const void *sbuf, int scount,
                       const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                       int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                       MPI_Request *req);
static int inter_done(co_comm *c, const char *fn, int rc);
static int inter_in_place(co_comm *c, const char *fn);

static int not_in_place(co_comm *c, const char *fn, const void *buf, const char *what) {
    if (CO_LIKELY(buf != MPI_IN_PLACE)) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as the %s here", what);
}

static int check_counts(co_comm *c, const char *fn, const int *counts, int n, const char *what) {
    if (!counts) return co_error(c, fn, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return co_error(c, fn, MPI_ERR_COUNT, "negative %s[%d] = %d", what, i, counts[i]);
    return MPI_SUCCESS;
}

static int check_displs(co_comm *c, const char *fn, const int *displs, const char *what) {
    if (displs) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_ARG, "%s is NULL", what);
}

/* One side of a v-collective: counts, displacements, type, and the buffer (checked against
 * the largest count, which covers every block). */
static co_dtype *vside(co_comm *c, const char *fn, const void *buf, const int *counts,
                       const int *displs, MPI_Datatype t, const char *cname, const char *dname,
                       int *rc) {
    int n = c->is_inter ? c->remote->size : c->size; /* blocks: one per rank of the other side */
    if ((*rc = check_counts(c, fn, counts, n, cname)) || (*rc = check_displs(c, fn, displs, dname)))
        return NULL;
    int most = 0;
    for (int i = 0; i < n; i++) most = CO_MAX(most, counts[i]);
    /* (MPI_DATATYPE_NULL only where every count is 0, as a count of 0 allows it on the other
     * side: a root that refused it while its peers went ahead would leave them waiting) */
    co_dtype *dt = co_api_dtype(c, fn, t, most, rc);
    if (!dt) return NULL;
    return (*rc = co_api_buf(c, fn, buf, most, dt)) ? NULL : dt;
}

/* Send and receive buffers must differ when both carry data (MPI_IN_PLACE is the way). */
static int distinct(co_comm *c, const char *fn, const void *sbuf, const void *rbuf, long long count,
                    const co_dtype *dt) {
    /* (both MPI_BOTTOM: the types give absolute addresses, which may well differ) */
    if (sbuf != rbuf || sbuf == MPI_BOTTOM || count <= 0 || dt->size == 0) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_BUFFER,
                    "send and receive buffers are the same (use MPI_IN_PLACE)");
}

/* Where a collective gathers or scatters blocks, this rank's own block in the buffer of all
 * blocks (element `at` of `all`, a buffer of dt) is not its other buffer either: that is the
 * usual way of meaning MPI_IN_PLACE without saying it. `mine` carries count elements. */
static int not_own_block(co_comm *c, const char *fn, const void *mine, const void *all,
                         long long at, long long count, const co_dtype *dt,
                         const co_dtype *mine_dt) {
    if (count <= 0 || mine_dt->size == 0 || all == MPI_IN_PLACE || mine == MPI_IN_PLACE ||
        mine == MPI_BOTTOM || all == MPI_BOTTOM) /* (absolute addresses: the types say) */
        return MPI_SUCCESS;
    if (mine != (const char *)all + at * co_dt_extent(dt)) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_BUFFER,
                    "this rank's buffer is its own block of the other buffer (use MPI_IN_PLACE)");
}

/* The start of a rooted collective: the communicator, the root, and the side every rank
 * gives (the send side of a gather, the receive side of a scatter), which only the root may
 * give as MPI_IN_PLACE (*dt is then NULL). Returns the communicator, or NULL with *rc set. */
static co_comm *rooted(const char *fn, co_comm *c, int root, const void *buf, int count,
                       MPI_Datatype type, co_dtype **dt, int *rc) {
    if ((*rc = check_root(c, fn, root))) return NULL;
    *dt = NULL;
    if (buf == MPI_IN_PLACE) {
        if (c->rank == root) return c;
        *rc = co_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid at the root");
        return NULL;
    }
    return (*dt = co_api_data(c, fn, buf, count, type, rc)) ? c : NULL;
}

/* The local block a rank sends must fit the one it receives for itself. */
static int fits(int scount, const co_dtype *sdt, int rcount, const co_dtype *rdt) {
    return (size_t)scount * sdt->size <= (size_t)rcount * rdt->size;
}

static int check_fit(co_comm *c, const char *fn, int scount, const co_dtype *sdt, int rcount,
                     const co_dtype *rdt) {
    size_t sb = (size_t)scount * sdt->size, rb = (size_t)rcount * rdt->size;
    if (CO_LIKELY(sb <= rb)) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_TRUNCATE,
                    "send count and type (%zu bytes) exceed receive count and type (%zu bytes)", sb,
                    rb);
}

/* Allgather and Alltoall: every rank gives both sides; the send side may be MPI_IN_PLACE
 * (*sdt is then NULL). With check_own, a send side larger than the receive block is refused
 * here; Alltoall lets its algorithms find it instead (every one copies the own block by
 * co_coll_copy and reports MPI_ERR_TRUNCATE, and the peers' receives report the same), so that
 * the call runs on every rank and the communicator stays usable. Returns the communicator,
 * or NULL with *rc set. */
static co_comm *every_rank(const char *fn, co_comm *c, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int check_own, co_dtype **sdt, co_dtype **rdt,
                           int *rc) {
    *sdt = NULL;
    if ((*rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return NULL;
    if (!(*rdt = co_api_data(c, fn, recvbuf, recvcount, recvtype, rc))) return NULL;
    if (sendbuf == MPI_IN_PLACE) return c;
    if (!(*sdt = co_api_data(c, fn, sendbuf, sendcount, sendtype, rc))) return NULL;
    /* (with nothing to receive, the algorithms have nothing to find it in) */
    check_own |= (size_t)recvcount * (*rdt)->size == 0;
    if ((check_own && (*rc = check_fit(c, fn, sendcount, *sdt, recvcount, *rdt))) ||
        (*rc = distinct(c, fn, sendbuf, recvbuf, sendcount, *sdt)) ||
        (*rc = not_own_block(c, fn, sendbuf, recvbuf, (long long)c->rank * recvcount, sendcount,
                             *rdt, *sdt)))
        return NULL;
    return c;
}

static int done(co_comm *c, const char *fn, int rc) {
    if (CO_LIKELY(rc == MPI_SUCCESS)) return MPI_SUCCESS;
    if (rc == MPI_ERR_TRUNCATE)
        return co_error(c, fn, rc,
                        "a rank sent more data than its receive buffer holds (counts or types "
                        "differ between processes)");
    if (rc == MPI_ERR_COUNT)
        return co_error(c, fn, rc,
                        "this rank received less data than its count and type describe (counts "
                        "or types differ between processes)");
    return co_error(c, fn, rc, "collective operation failed");
}

/* A collective call's arguments, for run() (and for nonblocking schedules). */
typedef co_coll_args call_args;

/* A data-movement call's arguments; a side given as NULL (MPI_IN_PLACE, or a side only the
 * root gives) travels as 0 bytes of MPI_BYTE. The v-variants add their arrays. */
static call_args move_args(int kind, int root, const void *sbuf, int scount, co_dtype *sdt,
                           void *rbuf, int rcount, co_dtype *rdt) {
    co_dtype *byte = co_dt_get(MPI_BYTE);
    return (call_args){.kind = kind,
                       .root = root,
                       .sbuf = sbuf,
                       .scount = sdt ? (size_t)scount : 0,
                       .sdt = sdt ? sdt : byte,
                       .rbuf = rbuf,
                       .rcount = rdt ? (size_t)rcount : 0,
                       .rdt = rdt ? rdt : byte};
}

/* A reduction's arguments (one count, type and operator). */
static call_args reduce_args(int kind, int root, const void *sbuf, void *rbuf, size_t count,
                             co_dtype *dt, co_op *op) {
    return (call_args){.kind = kind,
                       .root = root,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .rcount = count,
                       .rdt = dt,
                       .op = op};
}

/* Runs a collective call watched for calls that disagree between ranks (coll.h, "Mismatched
 * calls"); `bytes` is what every rank must agree on (0 for the v-variants). */
static int run(co_comm *c, const char *fn, uint64_t bytes, const call_args *a) {
    int failed;
    int rc = co_coll_watched(c, a->kind, a->root, a->op, bytes, co_coll_dispatch, a, &failed);
    if (failed == CO_CALL_BROKEN)
        return co_error(c, fn, rc, "an earlier collective on this communicator failed: %s",
                        c->coll->broken_msg);
    if (failed) return co_error(c, fn, rc, "%s", c->coll->broken_msg);
    return done(c, fn, rc);
}

/* Nonblocking collectives: the request argument (a NULL one is passed as &no_request), and
 * where the call goes once its arguments are checked (run, or a schedule of src/coll/nbc.c). */
static MPI_Request no_request;
static MPI_Request *nb_req(MPI_Request *r) {
    return r ? r : &no_request;
}

static int nb_check(co_comm *c, const char *fn, MPI_Request *req) {
    if (req == &no_request) return co_error(c, fn, MPI_ERR_ARG, "request is NULL");
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

/* A call that has one way, its nonblocking schedule, run and waited for: MPI_Alltoallw and the
 * intercommunicator collectives that exchange one message per pair. */
static int sched_wait(co_comm *c, const char *fn, const call_args *a) {
    co_req *r;
    int rc = co_nbc_start(c, a, &r);
    if (rc) return co_error(c, fn, rc, "out of request handles");
    co_progress_wait(r);
    rc = r->status.error;
    co_req_free(r);
    return c->is_inter ? inter_done(c, fn, rc) : done(c, fn, rc);
}

/* Persistent collectives (MPI 4, MPI_Bcast_init...) take the nonblocking path with this slot
 * as their request argument (PERSISTENT, below), and go() then prepares an inactive persistent
 * request that MPI_Start runs (src/coll/nbc.c). No other call can pass the slot, not even one
 * an error handler makes during the init call. */
static MPI_Request persistent_slot;
static MPI_Info persistent_info; /* the init call's, checked once the communicator is known */

static int go(co_comm *c, const char *fn, MPI_Request *req, uint64_t bytes, const call_args *a) {
    if (!req) return run(c, fn, bytes, a);
    co_req *r;
    int rc;
    if (req == &persistent_slot) {
        if ((rc = co_api_info_arg(c, fn, persistent_info))) return rc;
        /* the request's lane: set up by every rank, as a collective call (nonlocal, MPI 4),
         * watched for other calls, not for other sizes (those a start reports, as a
         * nonblocking call's completion does) */
        co_comm *lane = NULL;
        if (!c->is_inter && c->size > 1) {
            int failed;
            co_nbc_lane_args la = {a, &lane};
            rc = co_coll_watched(c, a->kind, a->root, a->op, 0, co_nbc_lane, &la, &failed);
            if (rc && lane) co_comm_lane_free(lane);
            if (failed == CO_CALL_BROKEN)
                return co_error(c, fn, rc, "an earlier collective on this communicator failed: %s",
                                c->coll->broken_msg);
            if (failed) return co_error(c, fn, rc, "%s", c->coll->broken_msg);
            if (rc) return co_error(c, fn, rc, "setting up the request failed");
        }
        rc = co_nbc_persistent(c, a, lane, &r);
    } else {
        rc = co_nbc_start(c, a, &r);
    }
    if (rc) return co_error(c, fn, rc, "out of request handles");
    *req = r->handle;
    return MPI_SUCCESS;
}

/* A root whose own block does not fit its other buffer (Gather(v), Scatter(v)) takes part
 * with that block left out (the caller made it MPI_IN_PLACE), so that the others are not left
 * waiting, and reports MPI_ERR_TRUNCATE after the call, or at its completion when it is
 * nonblocking (co_coll_args.err). The counts and types are the own block's two sides. */
static int go_own(co_comm *c, const char *fn, MPI_Request *req, uint64_t bytes, call_args *a,
                  int misfit, int scount, const co_dtype *sdt, int rcount, const co_dtype *rdt) {
    if (misfit) a->err = MPI_ERR_TRUNCATE;
    int rc = go(c, fn, req, bytes, a);
    return misfit && !rc && !req ? check_fit(c, fn, scount, sdt, rcount, rdt) : rc;
}

static int barrier_common(const char *fn, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter && !req) return inter_done(c, fn, co_inter_barrier(c));
    return go(c, fn, req, 0, &(call_args){.kind = CO_COLL_BARRIER, .root = -1});
}

CO_WEAK(MPI_Barrier, PMPI_Barrier);
int PMPI_Barrier(MPI_Comm comm) {
    return barrier_common("MPI_Barrier", comm, NULL);
}

CO_WEAK(MPI_Ibarrier, PMPI_Ibarrier);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    return barrier_common("MPI_Ibarrier", comm, nb_req(request));
}

static int bcast_common(const char *fn, void *buffer, int count, MPI_Datatype datatype, int root,
                        MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter) return inter_bcast(c, fn, buffer, count, datatype, root, req);
    co_dtype *dt = co_api_data(c, fn, buffer, count, datatype, &rc);
    if (!dt) return rc;
    if ((rc = check_root(c, fn, root)) || (rc = not_in_place(c, fn, buffer, "buffer"))) return rc;
    return go(c, fn, req, (uint64_t)count * dt->size,
              &(call_args){.kind = CO_COLL_BCAST,
                           .root = root,
                           .rbuf = buffer,
                           .rcount = (size_t)count,
                           .rdt = dt});
}

CO_WEAK(MPI_Bcast, PMPI_Bcast);
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    return bcast_common("MPI_Bcast", buffer, count, datatype, root, comm, NULL);
}

CO_WEAK(MPI_Ibcast, PMPI_Ibcast);
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request) {
    return bcast_common("MPI_Ibcast", buffer, count, datatype, root, comm, nb_req(request));
}

/* Reduce, Allreduce, Scan, Exscan: one count, one type, one operator. */
enum { R_REDUCE, R_ALLREDUCE, R_SCAN, R_EXSCAN };
static int reduce_common(const char *fn, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, int which,
                         MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter) {
        if (which == R_SCAN || which == R_EXSCAN)
            return co_error(c, fn, MPI_ERR_COMM, "%s is not defined on intercommunicators", fn);
        return inter_reduce(c, fn, sendbuf, recvbuf, count, datatype, op, root,
                            which == R_ALLREDUCE, req);
    }
    if ((rc = co_api_count(c, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, count, &rc);
    if (!dt) return rc;
    co_op *o = check_op(c, fn, op, datatype, dt, &rc);
    if (!o) return rc;
    if (which == R_REDUCE && (rc = check_root(c, fn, root))) return rc;
    int receives = which != R_REDUCE || c->rank == root;
    /* (recvbuf is not significant at a Reduce's other ranks: anything goes there) */
    if (receives && (rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (sendbuf == MPI_IN_PLACE && which == R_REDUCE && c->rank != root)
        return co_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid at the root");
    if (sendbuf != MPI_IN_PLACE && (rc = co_api_buf(c, fn, sendbuf, count, dt))) return rc;
    if (receives && (rc = co_api_buf(c, fn, recvbuf, count, dt))) return rc;
    if (receives && (rc = distinct(c, fn, sendbuf, recvbuf, count, dt))) return rc;
    static const int kinds[] = {CO_COLL_REDUCE, CO_COLL_ALLREDUCE, CO_COLL_SCAN, CO_COLL_EXSCAN};
    call_args a = reduce_args(kinds[which], which == R_REDUCE ? root : -1, sendbuf, recvbuf,
                              (size_t)count, dt, o);
    return go(c, fn, req, (uint64_t)count * dt->size, &a);
}

CO_WEAK(MPI_Reduce, PMPI_Reduce);
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, R_REDUCE,
                         NULL);
}

CO_WEAK(MPI_Allreduce, PMPI_Allreduce);
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm,
                         R_ALLREDUCE, NULL);
}

CO_WEAK(MPI_Scan, PMPI_Scan);
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
    return reduce_common("MPI_Scan", sendbuf, recvbuf, count, datatype, op, 0, comm, R_SCAN, NULL);
}

CO_WEAK(MPI_Exscan, PMPI_Exscan);
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
    return reduce_common("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, 0, comm, R_EXSCAN,
                         NULL);
}

CO_WEAK(MPI_Ireduce, PMPI_Ireduce);
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request) {
    return reduce_common("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, R_REDUCE,
                         nb_req(request));
}

CO_WEAK(MPI_Iallreduce, PMPI_Iallreduce);
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request) {
    return reduce_common("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 0, comm,
                         R_ALLREDUCE, nb_req(request));
}

CO_WEAK(MPI_Iscan, PMPI_Iscan);
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request) {
    return reduce_common("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, 0, comm, R_SCAN,
                         nb_req(request));
}

CO_WEAK(MPI_Iexscan, PMPI_Iexscan);
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request) {
    return reduce_common("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, 0, comm, R_EXSCAN,
                         nb_req(request));
}

static int gather_common(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt = NULL;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_rooted(c, fn, CO_COLL_GATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, root, req);
    c = rooted(fn, c, root, sendbuf, sendcount, sendtype, &sdt, &rc);
    if (!c) return rc;
    int at_root = c->rank == root, misfit = 0;
    if (at_root) {
        if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
        if (!(rdt = co_api_data(c, fn, recvbuf, recvcount, recvtype, &rc))) return rc;
        if (sdt && ((rc = distinct(c, fn, sendbuf, recvbuf, sendcount, sdt)) ||
                    (rc = not_own_block(c, fn, sendbuf, recvbuf, (long long)root * recvcount,
                                        sendcount, rdt, sdt))))
            return rc;
        misfit = sdt && !fits(sendcount, sdt, recvcount, rdt);
    }
    uint64_t bytes = at_root ? (uint64_t)recvcount * rdt->size : (uint64_t)sendcount * sdt->size;
    call_args a = move_args(CO_COLL_GATHER, root, misfit ? MPI_IN_PLACE : sendbuf, sendcount,
                            misfit ? NULL : sdt, recvbuf, recvcount, rdt);
    return go_own(c, fn, req, bytes, &a, misfit, sendcount, sdt, recvcount, rdt);
}

CO_WEAK(MPI_Gather, PMPI_Gather);
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather_common("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         root, comm, NULL);
}

CO_WEAK(MPI_Igather, PMPI_Igather);
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
    return gather_common("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                         root, comm, nb_req(request));
}

static int gatherv_common(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt = NULL;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_rooted(c, fn, CO_COLL_GATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, 0, recvcounts, displs, recvtype, root, req);
    c = rooted(fn, c, root, sendbuf, sendcount, sendtype, &sdt, &rc);
    if (!c) return rc;
    int at_root = c->rank == root, misfit = 0;
    if (at_root) {
        if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
        if (!(rdt =
                  vside(c, fn, recvbuf, recvcounts, displs, recvtype, "recvcounts", "displs", &rc)))
            return rc;
        if (sdt &&
            ((rc = distinct(c, fn, sendbuf, recvbuf, sendcount, sdt)) ||
             (rc = not_own_block(c, fn, sendbuf, recvbuf, displs[root], sendcount, rdt, sdt))))
            return rc;
        misfit = sdt && !fits(sendcount, sdt, recvcounts[root], rdt);
    }
    call_args a = move_args(CO_COLL_GATHERV, root, misfit ? MPI_IN_PLACE : sendbuf, sendcount,
                            misfit ? NULL : sdt, recvbuf, 0, rdt);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return go_own(c, fn, req, 0, &a, misfit, sendcount, sdt, at_root ? recvcounts[root] : 0, rdt);
}

CO_WEAK(MPI_Gatherv, PMPI_Gatherv);
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
    return gatherv_common("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                          recvtype, root, comm, NULL);
}

CO_WEAK(MPI_Igatherv, PMPI_Igatherv);
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request) {
    return gatherv_common("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                          recvtype, root, comm, nb_req(request));
}

static int scatter_common(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *rdt, *sdt = NULL;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_rooted(c, fn, CO_COLL_SCATTER, sendbuf, sendcount, NULL, NULL, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, root, req);
    c = rooted(fn, c, root, recvbuf, recvcount, recvtype, &rdt, &rc);
    if (!c) return rc;
    int at_root = c->rank == root, misfit = 0;
    if (at_root) {
        if ((rc = not_in_place(c, fn, sendbuf, "send buffer"))) return rc;
        if (!(sdt = co_api_data(c, fn, sendbuf, sendcount, sendtype, &rc))) return rc;
        if (rdt && ((rc = distinct(c, fn, sendbuf, recvbuf, recvcount, rdt)) ||
                    (rc = not_own_block(c, fn, recvbuf, sendbuf, (long long)root * sendcount,
                                        recvcount, sdt, rdt))))
            return rc;
        misfit = rdt && !fits(sendcount, sdt, recvcount, rdt);
    }
    uint64_t bytes = at_root ? (uint64_t)sendcount * sdt->size : (uint64_t)recvcount * rdt->size;
    call_args a = move_args(CO_COLL_SCATTER, root, sendbuf, sendcount, sdt,
                            misfit ? MPI_IN_PLACE : recvbuf, recvcount, misfit ? NULL : rdt);
    return go_own(c, fn, req, bytes, &a, misfit, sendcount, sdt, recvcount, rdt);
}

CO_WEAK(MPI_Scatter, PMPI_Scatter);
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter_common("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          root, comm, NULL);
}

CO_WEAK(MPI_Iscatter, PMPI_Iscatter);
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request) {
    return scatter_common("MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, root, comm, nb_req(request));
}

static int scatterv_common(const char *fn, const void *sendbuf, const int sendcounts[],
                           const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *rdt, *sdt = NULL;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_rooted(c, fn, CO_COLL_SCATTERV, sendbuf, 0, sendcounts, displs, sendtype,
                            recvbuf, recvcount, NULL, NULL, recvtype, root, req);
    c = rooted(fn, c, root, recvbuf, recvcount, recvtype, &rdt, &rc);
    if (!c) return rc;
    int at_root = c->rank == root, misfit = 0;
    if (at_root) {
        if ((rc = not_in_place(c, fn, sendbuf, "send buffer"))) return rc;
        if (!(sdt =
                  vside(c, fn, sendbuf, sendcounts, displs, sendtype, "sendcounts", "displs", &rc)))
            return rc;
        if (rdt &&
            ((rc = distinct(c, fn, sendbuf, recvbuf, recvcount, rdt)) ||
             (rc = not_own_block(c, fn, recvbuf, sendbuf, displs[root], recvcount, sdt, rdt))))
            return rc;
        misfit = rdt && !fits(sendcounts[root], sdt, recvcount, rdt);
    }
    call_args a = move_args(CO_COLL_SCATTERV, root, sendbuf, 0, sdt,
                            misfit ? MPI_IN_PLACE : recvbuf, recvcount, misfit ? NULL : rdt);
    a.scounts = sendcounts;
    a.sdispls = displs;
    return go_own(c, fn, req, 0, &a, misfit, at_root ? sendcounts[root] : 0, sdt, recvcount, rdt);
}

CO_WEAK(MPI_Scatterv, PMPI_Scatterv);
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
    return scatterv_common("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf,
                           recvcount, recvtype, root, comm, NULL);
}

CO_WEAK(MPI_Iscatterv, PMPI_Iscatterv);
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request) {
    return scatterv_common("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf,
                           recvcount, recvtype, root, comm, nb_req(request));
}

static int allgather_common(const char *fn, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_every(c, fn, CO_COLL_ALLGATHER, sendbuf, sendcount, NULL, NULL, sendtype,
                           recvbuf, recvcount, NULL, NULL, recvtype, req);
    c = every_rank(fn, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 1, &sdt, &rdt,
                   &rc);
    if (!c) return rc;
    call_args a =
        move_args(CO_COLL_ALLGATHER, -1, sendbuf, sendcount, sdt, recvbuf, recvcount, rdt);
    return go(c, fn, req, (uint64_t)recvcount * rdt->size, &a);
}

CO_WEAK(MPI_Allgather, PMPI_Allgather);
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather_common("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, NULL);
}

CO_WEAK(MPI_Iallgather, PMPI_Iallgather);
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgather_common("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, nb_req(request));
}

static int allgatherv_common(const char *fn, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_every(c, fn, CO_COLL_ALLGATHERV, sendbuf, sendcount, NULL, NULL, sendtype,
                           recvbuf, 0, recvcounts, displs, recvtype, req);
    co_dtype *sdt = NULL, *rdt;
    if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (!(rdt = vside(c, fn, recvbuf, recvcounts, displs, recvtype, "recvcounts", "displs", &rc)))
        return rc;
    if (sendbuf != MPI_IN_PLACE) {
        if (!(sdt = co_api_data(c, fn, sendbuf, sendcount, sendtype, &rc))) return rc;
        if ((rc = check_fit(c, fn, sendcount, sdt, recvcounts[c->rank], rdt)) ||
            (rc = distinct(c, fn, sendbuf, recvbuf, sendcount, sdt)) ||
            (rc = not_own_block(c, fn, sendbuf, recvbuf, displs[c->rank], sendcount, rdt, sdt)))
            return rc;
    }
    call_args a = move_args(CO_COLL_ALLGATHERV, -1, sendbuf, sendcount, sdt, recvbuf, 0, rdt);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return go(c, fn, req, 0, &a);
}

CO_WEAK(MPI_Allgatherv, PMPI_Allgatherv);
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
    return allgatherv_common("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             displs, recvtype, comm, NULL);
}

CO_WEAK(MPI_Iallgatherv, PMPI_Iallgatherv);
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request) {
    return allgatherv_common("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             displs, recvtype, comm, nb_req(request));
}

static int alltoall_common(const char *fn, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_every(c, fn, CO_COLL_ALLTOALL, sendbuf, sendcount, NULL, NULL, sendtype,
                           recvbuf, recvcount, NULL, NULL, recvtype, req);
    c = every_rank(fn, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, &sdt, &rdt,
                   &rc);
    if (!c) return rc;
    call_args a = move_args(CO_COLL_ALLTOALL, -1, sendbuf, sendcount, sdt, recvbuf, recvcount, rdt);
    return go(c, fn, req, (uint64_t)recvcount * rdt->size, &a);
}

CO_WEAK(MPI_Alltoall, PMPI_Alltoall);
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall_common("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm, NULL);
}

CO_WEAK(MPI_Ialltoall, PMPI_Ialltoall);
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoall_common("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm, nb_req(request));
}

static int alltoallv_common(const char *fn, const void *sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if (c->is_inter)
        return inter_every(c, fn, CO_COLL_ALLTOALLV, sendbuf, 0, sendcounts, sdispls, sendtype,
                           recvbuf, 0, recvcounts, rdispls, recvtype, req);
    co_dtype *sdt = NULL, *rdt;
    if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (!(rdt = vside(c, fn, recvbuf, recvcounts, rdispls, recvtype, "recvcounts", "rdispls", &rc)))
        return rc;
    if (sendbuf != MPI_IN_PLACE) {
        if (!(sdt = vside(c, fn, sendbuf, sendcounts, sdispls, sendtype, "sendcounts", "sdispls",
                          &rc)))
            return rc;
        if ((rc = check_fit(c, fn, sendcounts[c->rank], sdt, recvcounts[c->rank], rdt))) return rc;
        if (sendbuf == recvbuf) { /* only then: the sum walks every count */
            long long sent = 0;
            for (int i = 0; i < c->size; i++) sent += sendcounts[i];
            if ((rc = distinct(c, fn, sendbuf, recvbuf, sent, sdt))) return rc;
        }
    }
    call_args a = move_args(CO_COLL_ALLTOALLV, -1, sendbuf, 0, sdt, recvbuf, 0, rdt);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.rcounts = recvcounts;
    a.rdispls = rdispls;
    return go(c, fn, req, 0, &a);
}

CO_WEAK(MPI_Alltoallv, PMPI_Alltoallv);
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoallv_common("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm, NULL);
}

CO_WEAK(MPI_Ialltoallv, PMPI_Ialltoallv);
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request) {
    return alltoallv_common("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm, nb_req(request));
}

/* One side of Alltoallw: a count, a byte displacement and a type per rank of the other side;
 * the types into dts[] (n entries). */
static int wside(co_comm *c, const char *fn, const void *buf, const int *counts, const int *displs,
                 const MPI_Datatype *types, int n, co_dtype **dts, const char *side) {
    char what[32];
    snprintf(what, sizeof(what), "%scounts", side);
    int rc = check_counts(c, fn, counts, n, what);
    if (rc) return rc;
    if (!displs) return co_error(c, fn, MPI_ERR_ARG, "%sdispls is NULL", side);
    if (!types) return co_error(c, fn, MPI_ERR_ARG, "%stypes is NULL", side);
    for (int q = 0; q < n; q++) {
        if (!(dts[q] = co_api_dtype(c, fn, types[q], counts[q], &rc))) return rc;
        if ((rc = co_api_buf(c, fn, co_coll_at(buf, displs[q]), counts[q], dts[q]))) return rc;
    }
    return MPI_SUCCESS;
}

static int alltoallw_common(const char *fn, const void *sendbuf, const int sendcounts[],
                            const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                            const int recvcounts[], const int rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    int n = c->is_inter ? c->remote->size : c->size;
    if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (sendbuf == MPI_IN_PLACE && c->is_inter) return inter_in_place(c, fn);
    co_dtype **dts = malloc(2 * (size_t)n * sizeof(*dts) + 1);
    if (!dts) return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
    co_dtype **sdts = sendbuf == MPI_IN_PLACE ? NULL : dts + n;
    if ((rc = wside(c, fn, recvbuf, recvcounts, rdispls, recvtypes, n, dts, "recv")) ||
        (sdts && (rc = wside(c, fn, sendbuf, sendcounts, sdispls, sendtypes, n, sdts, "send")))) {
        free(dts);
        return rc;
    }
    if (sdts && sendbuf == recvbuf && sendbuf != MPI_BOTTOM) {
        size_t moved = 0;
        for (int q = 0; q < n; q++) moved += (size_t)sendcounts[q] * sdts[q]->size;
        if (moved) {
            free(dts);
            return co_error(c, fn, MPI_ERR_BUFFER,
                            "send and receive buffers are the same (use MPI_IN_PLACE)");
        }
    }
    call_args a = {.kind = CO_COLL_ALLTOALLW,
                   .root = -1,
                   .sbuf = sendbuf,
                   .scounts = sendcounts,
                   .sdispls = sdispls,
                   .stypes = sdts,
                   .rbuf = recvbuf,
                   .rcounts = recvcounts,
                   .rdispls = rdispls,
                   .rtypes = dts};
    rc = req ? go(c, fn, req, 0, &a) : sched_wait(c, fn, &a);
    free(dts); /* (the schedule holds its own references to the types) */
    return rc;
}

CO_WEAK(MPI_Alltoallw, PMPI_Alltoallw);
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoallw_common("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm, NULL);
}

CO_WEAK(MPI_Ialltoallw, PMPI_Ialltoallw);
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request) {
    return alltoallw_common("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm, nb_req(request));
}

/* On an intercommunicator the leaders' exchange and the local Scatterv (int displacements)
 * carry the whole vector, so its length must fit an int there. */
static int inter_rs_total(co_comm *c, const char *fn, long long total) {
    if (total <= 0x7fffffff) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_COUNT,
                    "the receive counts add up to %lld elements; on an intercommunicator at most "
                    "2^31 - 1 are supported",
                    total);
}

static int reduce_scatter_common(const char *fn, const void *sendbuf, void *recvbuf,
                                 const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if ((rc = check_counts(c, fn, recvcounts, c->size, "recvcounts"))) return rc;
    long long total = 0; /* may pass 2^31 - 1: the vector's length is not an argument */
    for (int i = 0; i < c->size; i++) total += recvcounts[i];
    co_dtype *dt = co_api_dtype(c, fn, datatype, total, &rc);
    if (!dt) return rc;
    co_op *o = check_op(c, fn, op, datatype, dt, &rc);
    if (!o) return rc;
    if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (sendbuf != MPI_IN_PLACE && (rc = co_api_buf(c, fn, sendbuf, total, dt))) return rc;
    if ((rc =
             co_api_buf(c, fn, recvbuf, sendbuf == MPI_IN_PLACE ? total : recvcounts[c->rank], dt)))
        return rc;
    if ((rc = distinct(c, fn, sendbuf, recvbuf, total, dt))) return rc;
    if (c->is_inter) {
        if ((rc = inter_rs_total(c, fn, total))) return rc;
        if (sendbuf == MPI_IN_PLACE) return inter_in_place(c, fn);
        if (!req)
            return inter_done(c, fn,
                              co_inter_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, o, c));
    }
    call_args a = reduce_args(CO_COLL_REDUCE_SCATTER, -1, sendbuf, recvbuf, 0, dt, o);
    a.rcounts = recvcounts;
    return go(c, fn, req, (uint64_t)total * dt->size, &a);
}

CO_WEAK(MPI_Reduce_scatter, PMPI_Reduce_scatter);
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_common("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op,
                                 comm, NULL);
}

CO_WEAK(MPI_Ireduce_scatter, PMPI_Ireduce_scatter);
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return reduce_scatter_common("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op,
                                 comm, nb_req(request));
}

static int reduce_scatter_block_common(const char *fn, const void *sendbuf, void *recvbuf,
                                       int recvcount, MPI_Datatype datatype, MPI_Op op,
                                       MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (req && (rc = nb_check(c, fn, req))) return rc;
    if ((rc = co_api_count(c, fn, recvcount))) return rc;
    long long total = (long long)recvcount * c->size; /* may pass 2^31 - 1 */
    co_dtype *dt = co_api_dtype(c, fn, datatype, total, &rc);
    if (!dt) return rc;
    co_op *o = check_op(c, fn, op, datatype, dt, &rc);
    if (!o) return rc;
    if ((rc = not_in_place(c, fn, recvbuf, "receive buffer"))) return rc;
    if (sendbuf != MPI_IN_PLACE && (rc = co_api_buf(c, fn, sendbuf, total, dt))) return rc;
    if ((rc = co_api_buf(c, fn, recvbuf, sendbuf == MPI_IN_PLACE ? total : recvcount, dt)))
        return rc;
    if ((rc = distinct(c, fn, sendbuf, recvbuf, total, dt))) return rc;
    if (c->is_inter) {
        if ((rc = inter_rs_total(c, fn, total))) return rc;
        if (sendbuf == MPI_IN_PLACE) return inter_in_place(c, fn);
        if (!req)
            return inter_done(
                c, fn,
                co_inter_reduce_scatter_block(sendbuf, recvbuf, (size_t)recvcount, dt, o, c));
    }
    call_args a =
        reduce_args(CO_COLL_REDUCE_SCATTER_BLOCK, -1, sendbuf, recvbuf, (size_t)recvcount, dt, o);
    return go(c, fn, req, (uint64_t)recvcount * dt->size, &a);
}

CO_WEAK(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block);
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_block_common("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount,
                                       datatype, op, comm, NULL);
}

CO_WEAK(MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block);
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request) {
    return reduce_scatter_block_common("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount,
                                       datatype, op, comm, nb_req(request));
}

CO_WEAK(MPI_Reduce_local, PMPI_Reduce_local);
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
    static const char fn[] = "MPI_Reduce_local";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = co_api_count(NULL, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, count, &rc);
    if (!dt) return rc;
    co_op *o = check_op(NULL, fn, op, datatype, dt, &rc);
    if (!o) return rc;
    if ((rc = not_in_place(NULL, fn, inbuf, "input buffer")) ||
        (rc = not_in_place(NULL, fn, inoutbuf, "input/output buffer")) ||
        (rc = co_api_buf(NULL, fn, inbuf, count, dt)) ||
        (rc = co_api_buf(NULL, fn, inoutbuf, count, dt)))
        return rc;
    if (inbuf == inoutbuf && count > 0 && dt->size > 0)
        return co_error(NULL, fn, MPI_ERR_BUFFER, "input and input/output buffers are the same");
    co_op_apply(o, dt, inbuf, inoutbuf, (size_t)count);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Op_create, PMPI_Op_create);
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    static const char fn[] = "MPI_Op_create";
    CO_ENTER(fn);
    if (!user_fn) return co_error(NULL, fn, MPI_ERR_ARG, "function is NULL");
    if (!op) return co_error(NULL, fn, MPI_ERR_ARG, "op (the output argument) is NULL");
    co_op *o = calloc(1, sizeof(*o));
    if (!o) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    o->refcount = 1;
    o->commute = commute != 0;
    o->fn = user_fn;
    o->handle = co_htab_insert(&co_st.ops, o);
    if (!o->handle) {
        free(o);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "too many operators");
    }
    *op = o->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Op_free, PMPI_Op_free);
int PMPI_Op_free(MPI_Op *op) {
    static const char fn[] = "MPI_Op_free";
    CO_ENTER(fn);
    if (!op) return co_error(NULL, fn, MPI_ERR_ARG, "op is NULL");
    int rc = MPI_SUCCESS;
    co_op *o = api_op(NULL, fn, *op, &rc);
    if (!o) return rc;
    if (o->predefined) return co_error(NULL, fn, MPI_ERR_OP, "cannot free a predefined operator");
    /* the handle goes now, though calls still in progress keep the operator: freeing it
     * again is then an error, not the release of their reference */
    co_htab_remove(&co_st.ops, o->handle);
    o->handle = 0;
    co_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Op_commutative, PMPI_Op_commutative);
int PMPI_Op_commutative(MPI_Op op, int *commute) {
    static const char fn[] = "MPI_Op_commutative";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_op *o = api_op(NULL, fn, op, &rc);
    if (!o) return rc;
    if (!commute) return co_error(NULL, fn, MPI_ERR_ARG, "commute is NULL");
    *commute = o->commute;
    return MPI_SUCCESS;
}

/* ---- Neighbourhood collectives (MPI 3.1 section 7.6) -------------------------------------------
 * On a communicator with a topology: receive block i comes from in-neighbour i, send block j
 * goes to out-neighbour j (src/comm/topo.c gives both lists, src/coll/nbc.c the schedule, which
 * the blocking calls run and wait for). MPI_IN_PLACE is not allowed. */

/* The communicator, which must carry a topology, and its numbers of in- and out-neighbours. */
static co_comm *api_neighbors(MPI_Comm comm, const char *fn, MPI_Request *req, int *nin, int *nout,
                              int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (!c) return NULL;
    if (req && (*rc = nb_check(c, fn, req))) return NULL;
    if (!c->topo) {
        *rc = co_error(c, fn, MPI_ERR_TOPOLOGY,
                       "the communicator has no topology (Cartesian, graph or distributed graph)");
        return NULL;
    }
    const int *in, *out;
    co_topo_neighbors(c->topo, c->rank, &in, nin, &out, nout);
    if (!in) {
        *rc = co_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
        return NULL;
    }
    return c;
}

/* One side given as (buf, count, type) for every neighbour. */
static co_dtype *nside(co_comm *c, const char *fn, const void *buf, int count, MPI_Datatype t,
                       const char *what, int *rc) {
    if ((*rc = not_in_place(c, fn, buf, what))) return NULL;
    return co_api_data(c, fn, buf, count, t, rc);
}

/* One side given with a count and displacement per neighbour (n of them). */
static co_dtype *nvside(co_comm *c, const char *fn, const void *buf, const int *counts,
                        const int *displs, MPI_Datatype t, int n, const char *cname,
                        const char *dname, int *rc) {
    if ((*rc = not_in_place(c, fn, buf, cname[0] == 's' ? "send buffer" : "receive buffer")) ||
        (n && ((*rc = check_counts(c, fn, counts, n, cname)) ||
               (*rc = check_displs(c, fn, displs, dname)))))
        return NULL;
    int most = 0;
    for (int i = 0; i < n; i++) most = CO_MAX(most, counts[i]);
    co_dtype *dt = co_api_dtype(c, fn, t, most, rc);
    if (!dt) return NULL;
    return (*rc = co_api_buf(c, fn, buf, most, dt)) ? NULL : dt;
}

/* A blocking neighbourhood collective is a halo exchange: its wait spins as briefly as the
 * program's own MPI_Waitall would (docs/runtime.md, "Waiting"). */
static int neighbor_go(co_comm *c, const char *fn, MPI_Request *req, const call_args *a) {
    return req ? go(c, fn, req, 0, a) : done(c, fn, co_nbc_neighbor(c, a));
}

static int n_allgather_common(const char *fn, int kind, const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS, nin, nout;
    co_comm *c = api_neighbors(comm, fn, req, &nin, &nout, &rc);
    if (!c) return rc;
    co_dtype *sdt = nside(c, fn, sendbuf, sendcount, sendtype, "send buffer", &rc);
    if (!sdt) return rc;
    co_dtype *rdt = nside(c, fn, recvbuf, recvcount, recvtype, "receive buffer", &rc);
    if (!rdt) return rc;
    call_args a = move_args(kind, -1, sendbuf, sendcount, sdt, recvbuf, recvcount, rdt);
    return neighbor_go(c, fn, req, &a);
}

static int n_allgatherv_common(const char *fn, const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS, nin, nout;
    co_comm *c = api_neighbors(comm, fn, req, &nin, &nout, &rc);
    if (!c) return rc;
    co_dtype *sdt = nside(c, fn, sendbuf, sendcount, sendtype, "send buffer", &rc);
    if (!sdt) return rc;
    co_dtype *rdt =
        nvside(c, fn, recvbuf, recvcounts, displs, recvtype, nin, "recvcounts", "displs", &rc);
    if (!rdt) return rc;
    call_args a =
        move_args(CO_COLL_NEIGHBOR_ALLGATHERV, -1, sendbuf, sendcount, sdt, recvbuf, 0, rdt);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return neighbor_go(c, fn, req, &a);
}

static int n_alltoallv_common(const char *fn, const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS, nin, nout;
    co_comm *c = api_neighbors(comm, fn, req, &nin, &nout, &rc);
    if (!c) return rc;
    co_dtype *sdt =
        nvside(c, fn, sendbuf, sendcounts, sdispls, sendtype, nout, "sendcounts", "sdispls", &rc);
    if (!sdt) return rc;
    co_dtype *rdt =
        nvside(c, fn, recvbuf, recvcounts, rdispls, recvtype, nin, "recvcounts", "rdispls", &rc);
    if (!rdt) return rc;
    call_args a = move_args(CO_COLL_NEIGHBOR_ALLTOALLV, -1, sendbuf, 0, sdt, recvbuf, 0, rdt);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.rcounts = recvcounts;
    a.rdispls = rdispls;
    return neighbor_go(c, fn, req, &a);
}

/* One side of Neighbor_alltoallw: a count, a byte displacement and a type per neighbour. */
static int nwside(co_comm *c, const char *fn, const void *buf, const int *counts,
                  const MPI_Aint *displs, const MPI_Datatype *types, int n, co_dtype **dts,
                  const char *side) {
    char what[32];
    snprintf(what, sizeof(what), "%s buffer", side);
    int rc = not_in_place(c, fn, buf, what);
    if (rc || !n) return rc;
    snprintf(what, sizeof(what), "%scounts", side);
    if ((rc = check_counts(c, fn, counts, n, what))) return rc;
    if (!displs || !types)
        return co_error(c, fn, MPI_ERR_ARG, "%sdispls or %stypes is NULL", side, side);
    for (int q = 0; q < n; q++) {
        if (!(dts[q] = co_api_dtype(c, fn, types[q], counts[q], &rc))) return rc;
        if ((rc = co_api_buf(c, fn, co_coll_at(buf, displs[q]), counts[q], dts[q]))) return rc;
    }
    return MPI_SUCCESS;
}

static int n_alltoallw_common(const char *fn, const void *sendbuf, const int sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS, nin, nout;
    co_comm *c = api_neighbors(comm, fn, req, &nin, &nout, &rc);
    if (!c) return rc;
    co_dtype **dts = malloc(((size_t)nin + (size_t)nout + 1) * sizeof(*dts));
    if (!dts) return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
    if ((rc = nwside(c, fn, recvbuf, recvcounts, rdispls, recvtypes, nin, dts, "recv")) ||
        (rc = nwside(c, fn, sendbuf, sendcounts, sdispls, sendtypes, nout, dts + nin, "send"))) {
        free(dts);
        return rc;
    }
    call_args a = {.kind = CO_COLL_NEIGHBOR_ALLTOALLW,
                   .root = -1,
                   .sbuf = sendbuf,
                   .scounts = sendcounts,
                   .swdispls = sdispls,
                   .stypes = dts + nin,
                   .rbuf = recvbuf,
                   .rcounts = recvcounts,
                   .rwdispls = rdispls,
                   .rtypes = dts};
    rc = neighbor_go(c, fn, req, &a);
    free(dts); /* (the schedule holds its own references to the types) */
    return rc;
}

CO_WEAK(MPI_Neighbor_allgather, PMPI_Neighbor_allgather);
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return n_allgather_common("MPI_Neighbor_allgather", CO_COLL_NEIGHBOR_ALLGATHER, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL);
}

CO_WEAK(MPI_Ineighbor_allgather, PMPI_Ineighbor_allgather);
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request) {
    return n_allgather_common("MPI_Ineighbor_allgather", CO_COLL_NEIGHBOR_ALLGATHER, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              nb_req(request));
}

CO_WEAK(MPI_Neighbor_alltoall, PMPI_Neighbor_alltoall);
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return n_allgather_common("MPI_Neighbor_alltoall", CO_COLL_NEIGHBOR_ALLTOALL, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL);
}

CO_WEAK(MPI_Ineighbor_alltoall, PMPI_Ineighbor_alltoall);
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request) {
    return n_allgather_common("MPI_Ineighbor_alltoall", CO_COLL_NEIGHBOR_ALLTOALL, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              nb_req(request));
}

CO_WEAK(MPI_Neighbor_allgatherv, PMPI_Neighbor_allgatherv);
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
    return n_allgatherv_common("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm, NULL);
}

CO_WEAK(MPI_Ineighbor_allgatherv, PMPI_Ineighbor_allgatherv);
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return n_allgatherv_common("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm, nb_req(request));
}

CO_WEAK(MPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallv);
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return n_alltoallv_common("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype,
                              recvbuf, recvcounts, rdispls, recvtype, comm, NULL);
}

CO_WEAK(MPI_Ineighbor_alltoallv, PMPI_Ineighbor_alltoallv);
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request) {
    return n_alltoallv_common("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype,
                              recvbuf, recvcounts, rdispls, recvtype, comm, nb_req(request));
}

CO_WEAK(MPI_Neighbor_alltoallw, PMPI_Neighbor_alltoallw);
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
    return n_alltoallw_common("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                              recvbuf, recvcounts, rdispls, recvtypes, comm, NULL);
}

CO_WEAK(MPI_Ineighbor_alltoallw, PMPI_Ineighbor_alltoallw);
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request) {
    return n_alltoallw_common("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                              recvbuf, recvcounts, rdispls, recvtypes, comm, nb_req(request));
}

/* ---- Persistent collectives (MPI 4) --------------------------------------------------------- */

/* Runs CALL (an init's common body, with req_ as its request argument) and hands the slot's
 * request out on success. */
#define PERSISTENT(CALL)                                                                           \
    do {                                                                                           \
        MPI_Request *req_ = request ? &persistent_slot : nb_req(NULL);                             \
        if (request) *request = MPI_REQUEST_NULL;                                                  \
        persistent_info = info;                                                                    \
        int rc_ = (CALL);                                                                          \
        if (rc_ == MPI_SUCCESS && request) *request = persistent_slot;                             \
        return rc_;                                                                                \
    } while (0)

CO_WEAK(MPI_Barrier_init, PMPI_Barrier_init);
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(barrier_common("MPI_Barrier_init", comm, req_));
}

CO_WEAK(MPI_Bcast_init, PMPI_Bcast_init);
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request) {
    PERSISTENT(bcast_common("MPI_Bcast_init", buffer, count, datatype, root, comm, req_));
}

CO_WEAK(MPI_Reduce_init, PMPI_Reduce_init);
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(reduce_common("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm,
                             R_REDUCE, req_));
}

CO_WEAK(MPI_Allreduce_init, PMPI_Allreduce_init);
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(reduce_common("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, 0, comm,
                             R_ALLREDUCE, req_));
}

CO_WEAK(MPI_Scan_init, PMPI_Scan_init);
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(reduce_common("MPI_Scan_init", sendbuf, recvbuf, count, datatype, op, 0, comm,
                             R_SCAN, req_));
}

CO_WEAK(MPI_Exscan_init, PMPI_Exscan_init);
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(reduce_common("MPI_Exscan_init", sendbuf, recvbuf, count, datatype, op, 0, comm,
                             R_EXSCAN, req_));
}

CO_WEAK(MPI_Gather_init, PMPI_Gather_init);
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request) {
    PERSISTENT(gather_common("MPI_Gather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, req_));
}

CO_WEAK(MPI_Gatherv_init, PMPI_Gatherv_init);
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(gatherv_common("MPI_Gatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                              displs, recvtype, root, comm, req_));
}

CO_WEAK(MPI_Scatter_init, PMPI_Scatter_init);
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request) {
    PERSISTENT(scatter_common("MPI_Scatter_init", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                              recvtype, root, comm, req_));
}

CO_WEAK(MPI_Scatterv_init, PMPI_Scatterv_init);
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(scatterv_common("MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf,
                               recvcount, recvtype, root, comm, req_));
}

CO_WEAK(MPI_Allgather_init, PMPI_Allgather_init);
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
    PERSISTENT(allgather_common("MPI_Allgather_init", sendbuf, sendcount, sendtype, recvbuf,
                                recvcount, recvtype, comm, req_));
}

CO_WEAK(MPI_Allgatherv_init, PMPI_Allgatherv_init);
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    PERSISTENT(allgatherv_common("MPI_Allgatherv_init", sendbuf, sendcount, sendtype, recvbuf,
                                 recvcounts, displs, recvtype, comm, req_));
}

CO_WEAK(MPI_Alltoall_init, PMPI_Alltoall_init);
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request) {
    PERSISTENT(alltoall_common("MPI_Alltoall_init", sendbuf, sendcount, sendtype, recvbuf,
                               recvcount, recvtype, comm, req_));
}

CO_WEAK(MPI_Alltoallv_init, PMPI_Alltoallv_init);
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
    PERSISTENT(alltoallv_common("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype,
                                recvbuf, recvcounts, rdispls, recvtype, comm, req_));
}

CO_WEAK(MPI_Alltoallw_init, PMPI_Alltoallw_init);
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request) {
    PERSISTENT(alltoallw_common("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes,
                                recvbuf, recvcounts, rdispls, recvtypes, comm, req_));
}

CO_WEAK(MPI_Reduce_scatter_init, PMPI_Reduce_scatter_init);
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request) {
    PERSISTENT(reduce_scatter_common("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts,
                                     datatype, op, comm, req_));
}

CO_WEAK(MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init);
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) {
    PERSISTENT(reduce_scatter_block_common("MPI_Reduce_scatter_block_init", sendbuf, recvbuf,
                                           recvcount, datatype, op, comm, req_));
}

/* ---- Intercommunicators ------------------------------------------------------------------------
 * The root of a rooted collective passes MPI_ROOT, the other processes of its group
 * MPI_PROC_NULL (their other arguments are not looked at), the processes of the other group
 * the root's rank there. Counts and arrays of the v-variants describe the other group's
 * blocks. MPI_IN_PLACE is not allowed. */

static int inter_in_place(co_comm *c, const char *fn) {
    return co_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on intercommunicators");
}

static int inter_root(co_comm *c, const char *fn, int root) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote->size))
        return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_ROOT,
                    "invalid root %d (on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank "
                    "of the remote group, of size %d)",
                    root, c->remote->size);
}

static int inter_done(co_comm *c, const char *fn, int rc) {
    if (CO_LIKELY(rc == MPI_SUCCESS)) return MPI_SUCCESS;
    /* counts that disagree may leave messages behind on the collective context */
    if (rc == MPI_ERR_TRUNCATE || rc == MPI_ERR_COUNT) c->quarantined = 1;
    const co_coll_comm *lc = c->local_comm->coll;
    if (lc && lc->broken) return co_error(c, fn, rc, "in this process's group: %s", lc->broken_msg);
    return done(c, fn, rc);
}

static int inter_bcast(co_comm *c, const char *fn, void *buf, int count, MPI_Datatype type,
                       int root, MPI_Request *req) {
    int rc;
    call_args a = {.kind = CO_COLL_BCAST, .root = root, .rbuf = buf, .rdt = co_dt_get(MPI_BYTE)};
    if ((rc = inter_root(c, fn, root))) return rc;
    if (root == MPI_PROC_NULL) return req ? go(c, fn, req, 0, &a) : MPI_SUCCESS;
    if (buf == MPI_IN_PLACE) return inter_in_place(c, fn);
    co_dtype *dt = co_api_data(c, fn, buf, count, type, &rc);
    if (!dt) return rc;
    a.rcount = (size_t)count;
    a.rdt = dt;
    if (req) return go(c, fn, req, 0, &a);
    return inter_done(c, fn, co_inter_bcast(buf, (size_t)count, dt, root, c));
}

/* Reduce (all = 0) and Allreduce (all = 1). */
static int inter_reduce(co_comm *c, const char *fn, const void *sbuf, void *rbuf, int count,
                        MPI_Datatype type, MPI_Op op, int root, int all, MPI_Request *req) {
    int rc;
    if (!all && (rc = inter_root(c, fn, root))) return rc;
    if (!all && root == MPI_PROC_NULL) {
        call_args none = {.kind = CO_COLL_REDUCE, .root = root};
        return req ? go(c, fn, req, 0, &none) : MPI_SUCCESS;
    }
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE) return inter_in_place(c, fn);
    if ((rc = co_api_count(c, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, type, count, &rc);
    if (!dt) return rc;
    co_op *o = check_op(c, fn, op, type, dt, &rc);
    if (!o) return rc;
    int sends = all || root != MPI_ROOT, receives = all || root == MPI_ROOT;
    if ((sends && (rc = co_api_buf(c, fn, sbuf, count, dt))) ||
        (receives && (rc = co_api_buf(c, fn, rbuf, count, dt))) ||
        (all && (rc = distinct(c, fn, sbuf, rbuf, count, dt))))
        return rc;
    if (req) {
        call_args a = reduce_args(all ? CO_COLL_ALLREDUCE : CO_COLL_REDUCE, root, sbuf, rbuf,
                                  (size_t)count, dt, o);
        return go(c, fn, req, 0, &a);
    }
    if (all) return inter_done(c, fn, co_inter_allreduce(sbuf, rbuf, (size_t)count, dt, o, c));
    return inter_done(c, fn, co_inter_reduce(sbuf, rbuf, (size_t)count, dt, o, root, c));
}

/* One side of a data-movement call: (buf, count, type), or with counts and displacements
 * (one per rank of the other group) when `counts` is given. */
static co_dtype *inter_side(co_comm *c, const char *fn, const void *buf, int count,
                            const int *counts, const int *displs, MPI_Datatype type,
                            const char *cname, const char *dname, int *rc) {
    if (buf == MPI_IN_PLACE) {
        *rc = inter_in_place(c, fn);
        return NULL;
    }
    if (cname) return vside(c, fn, buf, counts, displs, type, cname, dname, rc);
    return co_api_data(c, fn, buf, count, type, rc);
}

/* Gather(v) and Scatter(v): the root gives the side that holds every block, the other group
 * the side of its own block. */
static int inter_rooted(co_comm *c, const char *fn, int kind, const void *sbuf, int scount,
                        const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                        int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                        int root, MPI_Request *req) {
    int rc;
    if ((rc = inter_root(c, fn, root))) return rc;
    int gathers = kind == CO_COLL_GATHER || kind == CO_COLL_GATHERV;
    int vector = kind == CO_COLL_GATHERV || kind == CO_COLL_SCATTERV;
    if (root == MPI_PROC_NULL) { /* (a schedule counts the call, which every rank must do) */
        call_args none = {.kind = kind, .root = root};
        return req ? go(c, fn, req, 0, &none) : vector ? sched_wait(c, fn, &none) : MPI_SUCCESS;
    }
    co_dtype *byte = co_dt_get(MPI_BYTE), *sdt = byte, *rdt = byte;
    if (gathers == (root == MPI_ROOT)) { /* this process receives */
        rdt = inter_side(c, fn, rbuf, rcount, rcounts, rdispls, rtype,
                         vector && gathers ? "recvcounts" : NULL, "displs", &rc);
        if (!rdt) return rc;
    } else {
        sdt = inter_side(c, fn, sbuf, scount, scounts, sdispls, stype,
                         vector && !gathers ? "sendcounts" : NULL, "displs", &rc);
        if (!sdt) return rc;
    }
    call_args a = {.kind = kind,
                   .root = root,
                   .sbuf = sbuf,
                   .scount = (size_t)scount,
                   .sdt = sdt,
                   .scounts = scounts,
                   .sdispls = sdispls,
                   .rbuf = rbuf,
                   .rcount = (size_t)rcount,
                   .rdt = rdt,
                   .rcounts = rcounts,
                   .rdispls = rdispls};
    if (req) return go(c, fn, req, 0, &a);
    if (vector) return sched_wait(c, fn, &a); /* one message per pair */
    if (gathers)
        rc = co_inter_gather(sbuf, (size_t)scount, sdt, rbuf, (size_t)rcount, rdt, root, c);
    else
        rc = co_inter_scatter(sbuf, (size_t)scount, sdt, rbuf, (size_t)rcount, rdt, root, c);
    return inter_done(c, fn, rc);
}

/* Allgather(v) and Alltoall(v): every process gives both sides. */
static int inter_every(co_comm *c, const char *fn, int kind, const void *sbuf, int scount,
                       const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
                       int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                       MPI_Request *req) {
    int rc;
    co_dtype *sdt = inter_side(c, fn, sbuf, scount, scounts, sdispls, stype,
                               scounts ? "sendcounts" : NULL, "sdispls", &rc);
    if (!sdt) return rc;
    co_dtype *rdt =
        inter_side(c, fn, rbuf, rcount, rcounts, rdispls, rtype, rcounts ? "recvcounts" : NULL,
                   kind == CO_COLL_ALLGATHERV ? "displs" : "rdispls", &rc);
    if (!rdt) return rc;
    if (!scounts && (rc = distinct(c, fn, sbuf, rbuf, scount, sdt))) return rc;
    call_args a = {.kind = kind,
                   .root = -1,
                   .sbuf = sbuf,
                   .scount = (size_t)scount,
                   .sdt = sdt,
                   .scounts = scounts,
                   .sdispls = sdispls,
                   .rbuf = rbuf,
                   .rcount = (size_t)rcount,
                   .rdt = rdt,
                   .rcounts = rcounts,
                   .rdispls = rdispls};
    if (req) return go(c, fn, req, 0, &a);
    if (kind != CO_COLL_ALLGATHER) return sched_wait(c, fn, &a); /* one message per pair */
    return inter_done(c, fn,
                      co_inter_allgather(sbuf, (size_t)scount, sdt, rbuf, (size_t)rcount, rdt, c));
}
