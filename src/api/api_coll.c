/* Collective entry points and reduction operator objects: argument checks, then src/coll. */
#include "api.h"
#include "../coll/coll.h"

#include <stdlib.h>

static co_op *check_op(co_comm *c, const char *fn, MPI_Op h, const co_dtype *dt, int *rc) {
    co_op *op = co_op_get(h);
    if (!op) {
        *rc = co_error(c, fn, MPI_ERR_OP,
                       h == MPI_OP_NULL ? "operator is MPI_OP_NULL"
                                        : "invalid operator (freed or never created)");
        return NULL;
    }
    if (op->predefined == (MPI_REPLACE & 0xfffff) || op->predefined == (MPI_NO_OP & 0xfffff)) {
        *rc = co_error(c, fn, MPI_ERR_OP,
                       "MPI_REPLACE and MPI_NO_OP are for one-sided "
                       "accumulates only");
        return NULL;
    }
    if (co_op_check(op, dt)) {
        *rc = co_error(c, fn, MPI_ERR_OP, "operator is not defined on datatype %s",
                       dt->name[0] ? dt->name : "(derived)");
        return NULL;
    }
    return op;
}

static int check_root(co_comm *c, const char *fn, int root) {
    if (root >= 0 && root < c->size) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_ROOT, "invalid root %d (communicator size %d)", root, c->size);
}

static co_comm *intra(MPI_Comm comm, const char *fn, int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (c && c->is_inter) {
        *rc = co_error(c, fn, MPI_ERR_COMM, "collectives on intercommunicators are not supported");
        return NULL;
    }
    return c;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm) {
    static const char fn[] = "MPI_Barrier";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = intra(comm, fn, &rc);
    if (!c) return rc;
    rc = co_barrier(c);
    return rc ? co_error(c, fn, rc, "barrier failed") : MPI_SUCCESS;
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    static const char fn[] = "MPI_Bcast";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = intra(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_count(c, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, count, &rc);
    if (!dt) return rc;
    if ((rc = co_api_buf(c, fn, buffer, count, dt)) || (rc = check_root(c, fn, root))) return rc;
    rc = co_bcast(buffer, (size_t)count, dt, root, c);
    return rc ? co_error(c, fn, rc, "broadcast failed") : MPI_SUCCESS;
}

static int reduce_common(const char *fn, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, int all) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = intra(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_count(c, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, count, &rc);
    if (!dt) return rc;
    co_op *o = check_op(c, fn, op, dt, &rc);
    if (!o) return rc;
    if (!all && (rc = check_root(c, fn, root))) return rc;
    if (sendbuf == recvbuf && count > 0 && sendbuf != MPI_IN_PLACE)
        return co_error(c, fn, MPI_ERR_BUFFER,
                        "send and receive buffers are the same (use "
                        "MPI_IN_PLACE)");
    if (!all && sendbuf == MPI_IN_PLACE && c->rank != root)
        return co_error(c, fn, MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid at the root");
    rc = all ? co_allreduce(sendbuf, recvbuf, (size_t)count, dt, o, c)
             : co_reduce(sendbuf, recvbuf, (size_t)count, dt, o, root, c);
    return rc ? co_error(c, fn, rc, "reduction failed") : MPI_SUCCESS;
}

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
    return reduce_common("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}

#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
    return reduce_common("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1);
}

#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
    static const char fn[] = "MPI_Reduce_local";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = co_api_count(NULL, fn, count))) return rc;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, count, &rc);
    if (!dt) return rc;
    co_op *o = check_op(NULL, fn, op, dt, &rc);
    if (!o) return rc;
    co_op_apply(o, dt, inbuf, inoutbuf, (size_t)count);
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_create = PMPI_Op_create
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    static const char fn[] = "MPI_Op_create";
    CO_ENTER(fn);
    if (!user_fn) return co_error(NULL, fn, MPI_ERR_ARG, "function is NULL");
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

#pragma weak MPI_Op_free = PMPI_Op_free
int PMPI_Op_free(MPI_Op *op) {
    static const char fn[] = "MPI_Op_free";
    CO_ENTER(fn);
    co_op *o = op ? co_op_get(*op) : NULL;
    if (!o) return co_error(NULL, fn, MPI_ERR_OP, "invalid operator");
    if (o->predefined) return co_error(NULL, fn, MPI_ERR_OP, "cannot free a predefined operator");
    co_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int PMPI_Op_commutative(MPI_Op op, int *commute) {
    static const char fn[] = "MPI_Op_commutative";
    CO_ENTER(fn);
    co_op *o = co_op_get(op);
    if (!o) return co_error(NULL, fn, MPI_ERR_OP, "invalid operator");
    *commute = o->commute;
    return MPI_SUCCESS;
}
