/* MPI_Alltoallv: pairwise exchange (N-1 steps) and linear (everything posted at once). In
 * place, the receive buffer is copied aside first and serves as the send buffer. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

const co_coll_alg co_alltoallv_algs[] = {
    {"pairwise", 0, "N-1 steps; in step k send to rank+k, receive from rank-k"},
    {"linear", 0, "every send and receive posted at once"},
    {"cma", CO_ALG_CMA | CO_ALG_TABLE,
     "large blocks copied straight between the processes (process_vm_readv/writev), small ones "
     "through the shared buffers; with more than two ranks, blocks from 512 KiB as messages"},
};
CO_ALG_TABLE_CHECK(co_alltoallv_algs, CO_ALLTOALLV_NALGS);

int co_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, co_dtype *sdt,
                 void *rbuf, const int *rcounts, const int *rdispls, co_dtype *rdt, co_comm *c) {
    if (co_coll_unwatched())
        return co_coll_layer(c,
                             &(co_coll_args){.kind = CO_COLL_ALLTOALLV,
                                             .root = -1,
                                             .sbuf = sbuf,
                                             .scounts = scounts,
                                             .sdispls = sdispls,
                                             .sdt = sdt,
                                             .rbuf = rbuf,
                                             .rcounts = rcounts,
                                             .rdispls = rdispls,
                                             .rdt = rdt},
                             0);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    void *copyb = NULL;
    if (sbuf == MPI_IN_PLACE) {
        size_t span = 0;
        for (int i = 0; i < n; i++)
            if (rcounts[i]) span = CO_MAX(span, (size_t)rdispls[i] + (size_t)rcounts[i]);
        if (span) {
            void *copy = co_coll_tmpbuf(rdt, span, &copyb);
            if (!copy) return MPI_ERR_NO_MEM;
            co_coll_copy_same(rbuf, copy, span, rdt);
            sbuf = copy;
        }
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    MPI_Aint sext = co_dt_extent(sdt), rext = co_dt_extent(rdt);
#define SB(i) ((const char *)sbuf + (MPI_Aint)sdispls[i] * sext)
#define RB(i) ((char *)rbuf + (MPI_Aint)rdispls[i] * rext)
    int alg = n > 1 ? co_coll_pick(c, CO_COLL_ALLTOALLV, 0, NULL, NULL) : 0;
    if (alg == CO_ALLTOALLV_CMA) {
        rc = co_cma_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c);
        co_coll_free(copyb);
        return rc;
    }
    if (alg == CO_ALLTOALLV_LINEAR) { /* as Alltoall's: the own block copied after posting */
        co_req **reqs = co_coll_zalloc(2 * (size_t)n, sizeof(*reqs));
        if (!reqs) {
            co_coll_free(copyb);
            return MPI_ERR_NO_MEM;
        }
        for (int k = 1; k < n; k++) {
            int from = (me - k + n) % n;
            int r = co_irecv(RB(from), (size_t)rcounts[from], rdt, from,
                             co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c), &reqs[k]);
            if (r && !rc) rc = r;
        }
        for (int k = 1; k < n; k++) {
            int to = (me + k) % n;
            int r = co_isend(SB(to), (size_t)scounts[to], sdt, to, co_coll_tag(c, CO_TAG_ALLTOALL),
                             c, co_coll_ctx(c), co_coll_linear_mode(c), &reqs[n + k]);
            if (r && !rc) rc = r;
        }
        int r = co_coll_copy(SB(me), (size_t)scounts[me], sdt, RB(me), (size_t)rcounts[me], rdt);
        if (r && !rc) rc = r;
        r = co_coll_waitall(2 * n, reqs);
        if (r && !rc) rc = r;
        co_coll_free(reqs);
    } else {
        rc = co_coll_copy(SB(me), (size_t)scounts[me], sdt, RB(me), (size_t)rcounts[me], rdt);
        for (int k = 1; k < n; k++) {
            int to = (me + k) % n, from = (me - k + n) % n;
            int r =
                co_sendrecv(SB(to), (size_t)scounts[to], sdt, to, co_coll_tag(c, CO_TAG_ALLTOALL),
                            RB(from), (size_t)rcounts[from], rdt, from,
                            co_coll_tag(c, CO_TAG_ALLTOALL), c, co_coll_ctx(c), NULL);
            if (r && !rc) rc = r;
        }
    }
#undef SB
#undef RB
    co_coll_free(copyb);
    return rc;
}
