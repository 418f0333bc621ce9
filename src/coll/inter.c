/* Collectives on intercommunicators (MPI 3.1 section 5.2.2). Data flows between the two
 * groups: a rooted collective moves it between the root (which passes MPI_ROOT) and every
 * process of the other group (which pass the root's rank there); the root's group-mates pass
 * MPI_PROC_NULL and take no part. The unrooted ones move each group's data to the other.
 *
 * Each is built from collectives inside each group, on the intercommunicator's hidden local
 * communicator (whose algorithms, selection and mismatch watch are the intracommunicator
 * ones), and point-to-point messages between the groups on the intercommunicator's collective
 * context; where a group's data must cross, its rank 0 (the leader) gathers or reduces it and
 * one message carries it:
 *   Barrier         barrier in each group, the leaders swap an empty message, barrier again;
 *   Bcast           root -> remote leader -> bcast there;
 *   Reduce          reduce to the leader -> root;
 *   Allreduce       reduce to each leader, the leaders swap, bcast in each group;
 *   Gather          gather to the leader -> root;  Scatter: root -> leader -> scatter;
 *   Allgather       gather to each leader, the leaders swap, bcast in each group;
 *   Reduce_scatter  reduce to each leader, the leaders swap, scatterv in each group;
 *   Gatherv, Scatterv, Allgatherv, Alltoall(v,w): one message between each pair that
 *                   exchanges data, all posted at once (the blocks differ in size, so no
 *                   leader could gather them without another exchange of counts): their
 *                   nonblocking schedule, waited for (nbc.c; src/api/api_coll.c).
 * A step that fails does not stop the others (the peers would wait for it): the call runs to
 * its end and returns the first error. */
#include "coll.h"

/* One collective inside this rank's group (a co_coll_body on the local communicator). */
typedef struct local_call {
    int kind, root;
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    co_dtype *sdt, *rdt;
    const int *counts, *displs;
    co_op *op;
} local_call;

static int local_body(co_comm *l, const void *arg) {
    const local_call *a = arg;
    switch (a->kind) {
    case CO_COLL_BARRIER: return co_barrier(l);
    case CO_COLL_BCAST: return co_bcast(a->rbuf, a->rcount, a->rdt, a->root, l);
    case CO_COLL_REDUCE: return co_reduce(a->sbuf, a->rbuf, a->rcount, a->rdt, a->op, a->root, l);
    case CO_COLL_GATHER:
        return co_gather(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root, l);
    case CO_COLL_SCATTER:
        return co_scatter(a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt, a->root, l);
    default:
        return co_scatterv(a->sbuf, a->counts, a->displs, a->sdt, a->rbuf, a->rcount, a->rdt,
                           a->root, l);
    }
}

/* Runs it watched, as every collective call is (the group's ranks must agree on `bytes`). */
static int local_run(co_comm *ic, const local_call *a, uint64_t bytes) {
    int failed;
    return co_coll_watched(ic->local_comm, a->kind, a->root, a->op, bytes, local_body, a, &failed);
}

static int local_barrier(co_comm *ic) {
    return local_run(ic, &(local_call){.kind = CO_COLL_BARRIER, .root = -1}, 0);
}

static int local_bcast(co_comm *ic, void *buf, size_t count, co_dtype *dt) {
    local_call a = {.kind = CO_COLL_BCAST, .root = 0, .rbuf = buf, .rcount = count, .rdt = dt};
    return local_run(ic, &a, (uint64_t)count * dt->size);
}

/* The group's operands reduced into `out` at the leader (a scratch buffer of count dt). */
static int local_reduce(co_comm *ic, const void *sbuf, void *out, size_t count, co_dtype *dt,
                        co_op *op) {
    local_call a = {.kind = CO_COLL_REDUCE,
                    .root = 0,
                    .sbuf = sbuf,
                    .rbuf = out,
                    .rcount = count,
                    .rdt = dt,
                    .op = op};
    return local_run(ic, &a, (uint64_t)count * dt->size);
}

/* Every member's (sbuf, scount, sdt) gathered at the leader into `out`, as scount * size
 * elements of its sdt. */
static int local_gather(co_comm *ic, const void *sbuf, size_t scount, co_dtype *sdt, void *out) {
    int lead = ic->rank == 0;
    local_call a = {.kind = CO_COLL_GATHER,
                    .root = 0,
                    .sbuf = sbuf,
                    .scount = scount,
                    .sdt = sdt,
                    .rbuf = out,
                    .rcount = lead ? scount : 0,
                    .rdt = lead ? sdt : co_dt_get(MPI_BYTE)};
    return local_run(ic, &a, (uint64_t)scount * sdt->size);
}

static inline int first_error(int rc, int r) {
    return rc ? rc : r;
}

/* Scratch memory here is the C library's, not co_coll_alloc's: a step inside a group that is
 * abandoned (its ranks disagree) releases every block co_coll_alloc handed out, and these
 * outlive the steps. */
static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) co_fatal("out of memory in an intercommunicator collective");
    return p;
}

/* The leader's scratch buffer for count elements of dt (NULL elsewhere); *base to free. */
static void *leader_buf(const co_comm *ic, co_dtype *dt, size_t count, void **base) {
    *base = NULL;
    if (ic->rank != 0) return NULL;
    *base = xmalloc(count ? co_coll_span(dt, count) : 1);
    return (char *)*base - dt->true_lb;
}

/* n counts of `count` and their displacements: 2n ints to free. */
static int *uniform(int n, size_t count, int **displs) {
    int *c = xmalloc(2 * (size_t)n * sizeof(int));
    co_coll_uniform_fill(n, count, c);
    *displs = c + n;
    return c;
}

int co_inter_barrier(co_comm *ic) {
    int rc = local_barrier(ic);
    if (ic->rank == 0) {
        co_dtype *byte = co_dt_get(MPI_BYTE);
        rc = first_error(rc, co_sendrecv(NULL, 0, byte, 0, CO_TAG_BARRIER, NULL, 0, byte, 0,
                                         CO_TAG_BARRIER, ic, co_coll_ctx(ic), NULL));
    }
    return first_error(rc, local_barrier(ic));
}

int co_inter_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *ic) {
    uint64_t ctx = co_coll_ctx(ic);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT) return co_send(buf, count, dt, 0, CO_TAG_BCAST, ic, ctx);
    int rc = MPI_SUCCESS;
    if (ic->rank == 0) rc = co_recv(buf, count, dt, root, CO_TAG_BCAST, ic, ctx, NULL);
    return first_error(rc, local_bcast(ic, buf, count, dt));
}

int co_inter_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                    co_comm *ic) {
    uint64_t ctx = co_coll_ctx(ic);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT) return co_recv(rbuf, count, dt, 0, CO_TAG_REDUCE, ic, ctx, NULL);
    void *base, *tmp = leader_buf(ic, dt, count, &base);
    int rc = local_reduce(ic, sbuf, tmp, count, dt, op);
    if (ic->rank == 0) {
        rc = first_error(rc, co_send(tmp, count, dt, root, CO_TAG_REDUCE, ic, ctx));
        free(base);
    }
    return rc;
}

int co_inter_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                       co_comm *ic) {
    void *base, *tmp = leader_buf(ic, dt, count, &base);
    int rc = local_reduce(ic, sbuf, tmp, count, dt, op);
    if (ic->rank == 0) {
        rc = first_error(rc, co_sendrecv(tmp, count, dt, 0, CO_TAG_ALLREDUCE, rbuf, count, dt, 0,
                                         CO_TAG_ALLREDUCE, ic, co_coll_ctx(ic), NULL));
        free(base);
    }
    return first_error(rc, local_bcast(ic, rbuf, count, dt));
}

int co_inter_gather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                    co_dtype *rdt, int root, co_comm *ic) {
    uint64_t ctx = co_coll_ctx(ic);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return co_recv(rbuf, rcount * (size_t)ic->remote->size, rdt, 0, CO_TAG_GATHER, ic, ctx,
                       NULL);
    size_t all = scount * (size_t)ic->size;
    void *base, *tmp = leader_buf(ic, sdt, all, &base);
    int rc = local_gather(ic, sbuf, scount, sdt, tmp);
    if (ic->rank == 0) {
        rc = first_error(rc, co_send(tmp, all, sdt, root, CO_TAG_GATHER, ic, ctx));
        free(base);
    }
    return rc;
}

int co_inter_scatter(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                     co_dtype *rdt, int root, co_comm *ic) {
    uint64_t ctx = co_coll_ctx(ic);
    if (root == MPI_PROC_NULL) return MPI_SUCCESS;
    if (root == MPI_ROOT)
        return co_send(sbuf, scount * (size_t)ic->remote->size, sdt, 0, CO_TAG_SCATTER, ic, ctx);
    int lead = ic->rank == 0, rc = MPI_SUCCESS;
    size_t all = rcount * (size_t)ic->size;
    void *base, *tmp = leader_buf(ic, rdt, all, &base);
    if (lead) rc = co_recv(tmp, all, rdt, root, CO_TAG_SCATTER, ic, ctx, NULL);
    local_call a = {.kind = CO_COLL_SCATTER,
                    .root = 0,
                    .sbuf = tmp,
                    .scount = lead ? rcount : 0,
                    .sdt = lead ? rdt : co_dt_get(MPI_BYTE),
                    .rbuf = rbuf,
                    .rcount = rcount,
                    .rdt = rdt};
    rc = first_error(rc, local_run(ic, &a, (uint64_t)rcount * rdt->size));
    if (lead) free(base);
    return rc;
}

int co_inter_allgather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                       co_dtype *rdt, co_comm *ic) {
    size_t mine = scount * (size_t)ic->size, theirs = rcount * (size_t)ic->remote->size;
    void *base, *tmp = leader_buf(ic, sdt, mine, &base);
    int rc = local_gather(ic, sbuf, scount, sdt, tmp);
    if (ic->rank == 0) {
        rc = first_error(rc, co_sendrecv(tmp, mine, sdt, 0, CO_TAG_ALLGATHER, rbuf, theirs, rdt, 0,
                                         CO_TAG_ALLGATHER, ic, co_coll_ctx(ic), NULL));
        free(base);
    }
    return first_error(rc, local_bcast(ic, rbuf, theirs, rdt));
}

int co_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, co_dtype *dt,
                            co_op *op, co_comm *ic) {
    int n = ic->size, lead = ic->rank == 0;
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (size_t)rcounts[i];
    /* the leader: this group's reduction, then the other group's, to scatter here */
    void *b1, *mine = leader_buf(ic, dt, total, &b1);
    void *b2, *theirs = leader_buf(ic, dt, total, &b2);
    int rc = local_reduce(ic, sbuf, mine, total, dt, op);
    if (lead)
        rc = first_error(rc, co_sendrecv(mine, total, dt, 0, CO_TAG_RSCATTER, theirs, total, dt, 0,
                                         CO_TAG_RSCATTER, ic, co_coll_ctx(ic), NULL));
    int *displs = xmalloc((size_t)n * sizeof(int));
    for (int i = 0, d = 0; i < n; d += rcounts[i++]) displs[i] = d;
    local_call a = {.kind = CO_COLL_SCATTERV,
                    .root = 0,
                    .sbuf = theirs,
                    .counts = rcounts,
                    .displs = displs,
                    .sdt = dt,
                    .rbuf = rbuf,
                    .rcount = (size_t)rcounts[ic->rank],
                    .rdt = dt};
    rc = first_error(rc, local_run(ic, &a, 0));
    free(displs);
    if (lead) {
        free(b1);
        free(b2);
    }
    return rc;
}

int co_inter_reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount, co_dtype *dt,
                                  co_op *op, co_comm *ic) {
    int *displs, *counts = uniform(ic->size, rcount, &displs);
    int rc = co_inter_reduce_scatter(sbuf, rbuf, counts, dt, op, ic);
    free(counts);
    return rc;
}
