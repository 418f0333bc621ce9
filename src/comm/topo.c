/* Process topologies attached to a communicator: Cartesian (dimensions and periodicity, and the
 * row-major mapping between ranks and coordinates, the last dimension varying fastest), graph
 * (MPI_Graph_create's whole adjacency) and distributed graph (this process's in- and
 * out-edges); and each kind's neighbours for the neighbourhood collectives. */
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

static int *ints(const int *v, int n) {
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (p && n > 0) memcpy(p, v, (size_t)n * sizeof(int));
    return p;
}

struct co_topo *co_topo_graph_new(int nnodes, const int *index, const int *edges) {
    struct co_topo *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes ? index[nnodes - 1] : 0;
    t->index = ints(index, nnodes);
    t->edges = ints(edges, t->nedges);
    if (!t->index || !t->edges) {
        co_topo_free(t);
        return NULL;
    }
    return t;
}

struct co_topo *co_topo_dist_new(int indeg, const int *in, const int *inw, int outdeg,
                                 const int *out, const int *outw) {
    struct co_topo *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = inw != NULL;
    t->in = ints(in, indeg);
    t->out = ints(out, outdeg);
    if (t->weighted) {
        t->inw = ints(inw, indeg);
        t->outw = ints(outw, outdeg);
    }
    if (!t->in || !t->out || (t->weighted && (!t->inw || !t->outw))) {
        co_topo_free(t);
        return NULL;
    }
    return t;
}

struct co_topo *co_topo_dup(const struct co_topo *t) {
    if (t->kind == MPI_GRAPH) return co_topo_graph_new(t->nnodes, t->index, t->edges);
    if (t->kind == MPI_DIST_GRAPH)
        return co_topo_dist_new(t->indeg, t->in, t->inw, t->outdeg, t->out, t->outw);
    return co_topo_cart_new(t->ndims, t->dims, t->periods);
}

void co_topo_free(struct co_topo *t) {
    if (!t) return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->inw);
    free(t->out);
    free(t->outw);
    free(t->nb);
    free(t);
}

/* The neighbour lists of `rank` in one allocation (in-neighbours, then out-neighbours), or NULL
 * when out of memory. */
static int *neighbors_of(const struct co_topo *t, int rank, int *nin, int *nout) {
    int ni, no;
    const int *src = NULL, *dst = NULL;
    if (t->kind == MPI_CART) {
        ni = no = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        int lo = rank ? t->index[rank - 1] : 0;
        ni = no = t->index[rank] - lo;
        src = dst = t->edges + lo;
    } else {
        ni = t->indeg, no = t->outdeg;
        src = t->in, dst = t->out;
    }
    int *v = malloc((size_t)(ni + no + 1) * sizeof(int));
    *nin = ni, *nout = no;
    if (!v) return NULL;
    if (t->kind != MPI_CART) {
        if (ni) memcpy(v, src, (size_t)ni * sizeof(int));
        if (no) memcpy(v + ni, dst, (size_t)no * sizeof(int));
        return v;
    }
    /* for each dimension the rank below, then the one above (MPI_Cart_shift's source and
     * destination for a shift of 1), for receiving and for sending alike */
    int *co = malloc((size_t)(t->ndims + 1) * sizeof(int));
    if (!co) {
        free(v);
        return NULL;
    }
    for (int d = 0; d < t->ndims; d++) {
        co_cart_coords(t, rank, co);
        int mine = co[d];
        co[d] = mine - 1;
        int lo = co_cart_rank(t, co);
        co[d] = mine + 1;
        int hi = co_cart_rank(t, co);
        v[2 * d] = v[ni + 2 * d] = lo < 0 ? MPI_PROC_NULL : lo;
        v[2 * d + 1] = v[ni + 2 * d + 1] = hi < 0 ? MPI_PROC_NULL : hi;
    }
    free(co);
    return v;
}

void co_topo_neighbors(struct co_topo *t, int rank, const int **in, int *nin, const int **out,
                       int *nout) {
    if (!t->nb || t->nb_rank != rank) {
        free(t->nb);
        t->nb = neighbors_of(t, rank, &t->nb_in, &t->nb_out);
        t->nb_rank = rank;
    }
    *in = t->nb, *nin = t->nb_in, *out = t->nb ? t->nb + t->nb_in : NULL, *nout = t->nb_out;
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
