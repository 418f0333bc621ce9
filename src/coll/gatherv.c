/* MPI_Gatherv: linear (the root receives from everyone at once) and sequential (the root
 * receives one rank after another, in rank order, which bounds the unexpected messages a
 * very large job would otherwise pile up at the root). */
#include "coll.h"

#include <stdlib.h>

const co_coll_alg co_gatherv_algs[] = {
    {"linear", 0, "the root posts a receive from every rank"},
    {"sequential", 0, "the root receives from one rank at a time, in rank order"},
};

int co_gatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
               const int *displs, co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(rdt);
    if (me != root) {
        if (scount * sdt->size == 0) return MPI_SUCCESS;
        return co_send(sbuf, scount, sdt, root, CO_TAG_GATHER, c, co_coll_ctx(c));
    }
    if (sbuf != MPI_IN_PLACE)
        rc = co_coll_copy(sbuf, scount, sdt, (char *)rbuf + (MPI_Aint)displs[me] * ext,
                          (size_t)rcounts[me], rdt);
    if (n == 1) return rc;
    int alg = co_coll_pick(c, CO_COLL_GATHERV, 0, NULL, NULL);
    co_req **reqs = calloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        if (i == me || rcounts[i] == 0 || rdt->size == 0) continue;
        void *dst = (char *)rbuf + (MPI_Aint)displs[i] * ext;
        int r;
        if (alg == CO_GATHERV_SEQUENTIAL)
            r = co_recv(dst, (size_t)rcounts[i], rdt, i, CO_TAG_GATHER, c, co_coll_ctx(c), NULL);
        else
            r = co_irecv(dst, (size_t)rcounts[i], rdt, i, CO_TAG_GATHER, c, co_coll_ctx(c),
                         &reqs[i]);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(n, reqs);
    if (r && !rc) rc = r;
    free(reqs);
    return rc;
}
