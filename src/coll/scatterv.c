/* MPI_Scatterv: linear (the root sends to everyone at once) and sequential (one rank after
 * another, each send complete before the next). */
#include "coll.h"

#include <stdlib.h>

const co_coll_alg co_scatterv_algs[] = {
    {"linear", 0, "the root posts a send to every rank"},
    {"sequential", 0, "the root sends to one rank at a time, in rank order"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers"},
};
CO_ALG_TABLE_CHECK(co_scatterv_algs, CO_SCATTERV_NALGS);

int co_scatterv(const void *sbuf, const int *scounts, const int *displs, co_dtype *sdt, void *rbuf,
                size_t rcount, co_dtype *rdt, int root, co_comm *c) {
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    MPI_Aint ext = co_dt_extent(sdt);
    int alg = n > 1 ? co_coll_pick(c, CO_COLL_SCATTERV, 0, NULL, NULL) : 0;
    if (alg == CO_SCATTERV_CMA)
        return co_cma_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
    if (me != root) {
        if (rcount * rdt->size == 0) return MPI_SUCCESS;
        return co_recv(rbuf, rcount, rdt, root, co_coll_tag(c, CO_TAG_SCATTER), c, co_coll_ctx(c),
                       NULL);
    }
    co_req **reqs = co_coll_zalloc((size_t)n, sizeof(*reqs));
    if (!reqs) return MPI_ERR_NO_MEM;
    for (int k = 1; k < n; k++) {
        int i = (me + k) % n;
        if (scounts[i] == 0 || sdt->size == 0) continue;
        const void *src = (const char *)sbuf + (MPI_Aint)displs[i] * ext;
        int r;
        if (alg == CO_SCATTERV_SEQUENTIAL)
            r = co_send(src, (size_t)scounts[i], sdt, i, co_coll_tag(c, CO_TAG_SCATTER), c,
                        co_coll_ctx(c));
        else
            r = co_isend(src, (size_t)scounts[i], sdt, i, co_coll_tag(c, CO_TAG_SCATTER), c,
                         co_coll_ctx(c), CO_MODE_STD, &reqs[i]);
        if (r && !rc) rc = r;
    }
    if (rbuf != MPI_IN_PLACE) {
        int r = co_coll_copy((const char *)sbuf + (MPI_Aint)displs[me] * ext, (size_t)scounts[me],
                             sdt, rbuf, rcount, rdt);
        if (r && !rc) rc = r;
    }
    int r = co_coll_waitall(n, reqs);
    if (r && !rc) rc = r;
    co_coll_free(reqs);
    return rc;
}
