/* MPI_Gatherv: linear (the root receives from everyone at once) and sequential (the root
 * receives one rank after another, in rank order, which bounds the unexpected messages a
 * very large job would otherwise pile up at the root). */
#include "coll.h"

#include <stdlib.h>

const co_coll_alg co_gatherv_algs[] = {
    {"linear", 0, "the root posts a receive from every rank"},
    {"sequential", 0, "the root receives from one rank at a time, in rank order"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks written straight into the root's buffer (process_vm_writev, all senders at "
     "once), small ones through the shared buffers"},
};
CO_ALG_TABLE_CHECK(co_gatherv_algs, CO_GATHERV_NALGS);

int co_gatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
               const int *displs, co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(rdt);
    /* every rank must take the same path, so the choice depends on the size alone */
    int alg = n > 1 ? co_coll_pick(c, CO_COLL_GATHERV, 0, NULL, NULL) : 0;
    if (alg == CO_GATHERV_CMA)
        return co_cma_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
    if (me != root) {
        if (scount * sdt->size == 0) return MPI_SUCCESS;
        return co_send(sbuf, scount, sdt, root, co_coll_tag(c, CO_TAG_GATHER), c, co_coll_ctx(c));
    }
    if (sbuf != MPI_IN_PLACE)
        rc = co_coll_copy(sbuf, scount, sdt, (char *)rbuf + (MPI_Aint)displs[me] * ext,
                          (size_t)rcounts[me], rdt);
    if (n == 1) return rc;
    co_req **reqs = co_coll_zalloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        if (i == me || rcounts[i] == 0 || rdt->size == 0) continue;
        void *dst = (char *)rbuf + (MPI_Aint)displs[i] * ext;
        int r;
        if (alg == CO_GATHERV_SEQUENTIAL)
            r = co_recv(dst, (size_t)rcounts[i], rdt, i, co_coll_tag(c, CO_TAG_GATHER), c,
                        co_coll_ctx(c), NULL);
        else
            r = co_irecv(dst, (size_t)rcounts[i], rdt, i, co_coll_tag(c, CO_TAG_GATHER), c,
                         co_coll_ctx(c), &reqs[i]);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(n, reqs);
    if (r && !rc) rc = r;
    co_coll_free(reqs);
    return rc;
}
