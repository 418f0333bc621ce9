/* MPI_Reduce_scatter_block: Reduce_scatter with N equal blocks; the same algorithms and
 * selection rules (see reduce_scatter.c), forced separately. */
#include "coll.h"

#include <stdlib.h>

int co_reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount, co_dtype *dt, co_op *op,
                            co_comm *c) {
    int n = c->size;
    size_t *cnt = co_coll_alloc(2 * (size_t)n * sizeof(size_t));
    if (!cnt) return MPI_ERR_NO_MEM;
    size_t *dsp = cnt + n;
    for (int i = 0; i < n; i++) {
        cnt[i] = rcount;
        dsp[i] = rcount * (size_t)i;
    }
    int rc = co_rs_run(sbuf, rbuf, cnt, dsp, rcount * (size_t)n, dt, op, c,
                       CO_COLL_REDUCE_SCATTER_BLOCK);
    co_coll_free(cnt);
    return rc;
}
