/* MPI_Bcast: binomial tree rooted at `root`. */
#include "coll.h"

int co_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *c) {
    int n = c->size;
    if (n < 2 || count == 0) return MPI_SUCCESS;
    int rel = (c->rank - root + n) % n;
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            int src = (rel - mask + root) % n;
            int rc = co_recv(buf, count, dt, src, CO_TAG_BCAST, c, co_coll_ctx(c), NULL);
            if (rc) return rc;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < n) {
            int dst = (rel + mask + root) % n;
            int rc = co_send(buf, count, dt, dst, CO_TAG_BCAST, c, co_coll_ctx(c));
            if (rc) return rc;
        }
        mask >>= 1;
    }
    return MPI_SUCCESS;
}
