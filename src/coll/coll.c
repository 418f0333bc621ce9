/* Collective layer set-up and helpers shared by the per-collective files. */
#include "coll.h"

#include <stdlib.h>

void *co_coll_tmpbuf(co_dtype *dt, size_t count, void **base) {
    MPI_Aint true_ext = dt->true_ub - dt->true_lb;
    size_t bytes = count ? (size_t)true_ext + (count - 1) * (size_t)co_dt_extent(dt) : 1;
    *base = malloc(bytes ? bytes : 1);
    if (!*base) return NULL;
    return (char *)*base - dt->true_lb;
}

int co_coll_init(void) {
    return MPI_SUCCESS;
}
void co_coll_fini(void) {}
