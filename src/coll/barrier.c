/* MPI_Barrier: dissemination (ceil(log2 N) rounds of zero-byte messages). */
#include "coll.h"

int co_barrier(co_comm *c) {
    int n = c->size, me = c->rank;
    if (n < 2) return MPI_SUCCESS;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    for (int dist = 1; dist < n; dist <<= 1) {
        int to = (me + dist) % n, from = (me - dist + n) % n;
        int rc = co_sendrecv(NULL, 0, byte, to, CO_TAG_BARRIER, NULL, 0, byte, from, CO_TAG_BARRIER,
                             c, co_coll_ctx(c), NULL);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}
