/* MPI_Reduce: binomial tree over ranks in order, so that non-commutative operators combine
 * lower ranks first; rank 0 forwards the result to the root when the root is another rank. */
#include "coll.h"

#include <string.h>
#include <stdlib.h>

int co_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
              co_comm *c) {
    int n = c->size, me = c->rank;
    if (count == 0) return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE) sbuf = rbuf;
    void *accb, *tmpb;
    void *acc = co_coll_tmpbuf(dt, count, &accb);
    void *tmp = co_coll_tmpbuf(dt, count, &tmpb);
    if (!acc || !tmp) {
        free(accb);
        free(tmpb);
        return MPI_ERR_NO_MEM;
    }
    co_dtype *byte = co_dt_get(MPI_BYTE);
    (void)byte;
    /* acc = my contribution, in dt layout */
    {
        size_t bytes = count * dt->size;
        void *pk = malloc(bytes);
        if (!pk) return MPI_ERR_NO_MEM;
        co_dt_pack(dt, count, sbuf, 0, pk, bytes);
        co_dt_unpack(dt, count, acc, 0, pk, bytes);
        free(pk);
    }
    int rc = MPI_SUCCESS;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            rc = co_send(acc, count, dt, me - mask, CO_TAG_REDUCE, c, co_coll_ctx(c));
            break;
        }
        if (me + mask < n) {
            rc = co_recv(tmp, count, dt, me + mask, CO_TAG_REDUCE, c, co_coll_ctx(c), NULL);
            if (rc) break;
            co_op_apply(op, dt, acc, tmp, count); /* tmp = acc op tmp: lower ranks first */
            void *t = acc;
            acc = tmp;
            tmp = t;
            t = accb;
            accb = tmpb;
            tmpb = t;
        }
    }
    if (!rc && root != 0) {
        if (me == 0)
            rc = co_send(acc, count, dt, root, CO_TAG_REDUCE, c, co_coll_ctx(c));
        else if (me == root)
            rc = co_recv(rbuf, count, dt, 0, CO_TAG_REDUCE, c, co_coll_ctx(c), NULL);
    } else if (!rc && me == 0) {
        size_t bytes = count * dt->size;
        void *pk = malloc(bytes);
        if (!pk) return MPI_ERR_NO_MEM;
        co_dt_pack(dt, count, acc, 0, pk, bytes);
        co_dt_unpack(dt, count, rbuf, 0, pk, bytes);
        free(pk);
    }
    free(accb);
    free(tmpb);
    return rc;
}

int co_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c) {
    int rc = co_reduce(sbuf, rbuf, count, dt, op, 0, c);
    if (rc) return rc;
    return co_bcast(rbuf, count, dt, 0, c);
}
