/* Cartesian topologies: the dimensions and periodicity attached to a communicator, and the
 * row-major mapping between ranks and coordinates (the last dimension varies fastest). */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

struct co_topo *co_topo_cart_new(int ndims, const int *dims, const int *periods) {
    struct co_topo *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = malloc((size_t)(ndims ? ndims : 1) * sizeof(int));
    t->periods = malloc((size_t)(ndims ? ndims : 1) * sizeof(int));
    if (!t->dims || !t->periods) {
        co_topo_free(t);
        return NULL;
    }
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] ? 1 : 0;
    }
    return t;
}

struct co_topo *co_topo_dup(const struct co_topo *t) {
    return co_topo_cart_new(t->ndims, t->dims, t->periods);
}

void co_topo_free(struct co_topo *t) {
    if (!t) return;
    free(t->dims);
    free(t->periods);
    free(t);
}

void co_cart_coords(const struct co_topo *t, int rank, int *coords) {
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int co_cart_rank(const struct co_topo *t, const int *coords) {
    int rank = 0;
    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i], d = t->dims[i];
        if (c < 0 || c >= d) {
            if (!t->periods[i]) return -1;
            c %= d;
            if (c < 0) c += d;
        }
        rank = rank * d + c;
    }
    return rank;
}
