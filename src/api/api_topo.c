/* Cartesian topology calls. Ranks are never reordered (reorder is a hint); a Cartesian
 * communicator is the first prod(dims) ranks of the old one, made with one round of the ID
 * stream, and Cart_sub is a split by the coordinates that are dropped. */
#include "api.h"

#include <stdlib.h>

static co_comm *api_cart(MPI_Comm comm, const char *fn, int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (c && (!c->topo || c->topo->kind != MPI_CART)) {
        *rc = co_error(c, fn, MPI_ERR_TOPOLOGY, "communicator has no Cartesian topology");
        return NULL;
    }
    return c;
}

CO_WEAK(MPI_Cart_create, PMPI_Cart_create);
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart) {
    static const char fn[] = "MPI_Cart_create";
    CO_ENTER(fn);
    (void)reorder;
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm_old, fn, &rc), *n;
    if (!c) return rc;
    if (c->is_inter) return co_error(c, fn, MPI_ERR_COMM, "comm_old is an intercommunicator");
    if (!comm_cart) return co_error(c, fn, MPI_ERR_ARG, "comm_cart is NULL");
    if (ndims < 0) return co_error(c, fn, MPI_ERR_DIMS, "negative ndims %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return co_error(c, fn, MPI_ERR_ARG, "dims or periods is NULL");
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return co_error(c, fn, MPI_ERR_DIMS, "dims[%d] is %d (must be positive)", i, dims[i]);
        prod *= dims[i];
        if (prod > c->size)
            return co_error(c, fn, MPI_ERR_DIMS,
                            "the grid has more points than the communicator has ranks (%d)",
                            c->size);
    }
    rc = co_comm_first_n(c, (int)prod, fn, &n);
    if (rc) return rc;
    if (n && !(n->topo = co_topo_cart_new(ndims, dims, periods))) co_fatal("out of memory");
    *comm_cart = co_api_comm_out(n);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cartdim_get, PMPI_Cartdim_get);
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    static const char fn[] = "MPI_Cartdim_get";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc);
    if (!c) return rc;
    if (!ndims) return co_error(c, fn, MPI_ERR_ARG, "ndims is NULL");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cart_get, PMPI_Cart_get);
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    static const char fn[] = "MPI_Cart_get";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc);
    if (!c) return rc;
    struct co_topo *t = c->topo;
    if (maxdims < t->ndims)
        return co_error(c, fn, MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims,
                        t->ndims);
    if (t->ndims && (!dims || !periods || !coords))
        return co_error(c, fn, MPI_ERR_ARG, "dims, periods or coords is NULL");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    co_cart_coords(t, c->rank, coords);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cart_coords, PMPI_Cart_coords);
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    static const char fn[] = "MPI_Cart_coords";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc);
    if (!c) return rc;
    if (rank < 0 || rank >= c->size)
        return co_error(c, fn, MPI_ERR_RANK, "invalid rank %d (communicator size %d)", rank,
                        c->size);
    if (maxdims < c->topo->ndims)
        return co_error(c, fn, MPI_ERR_ARG, "maxdims %d is less than the %d dimensions", maxdims,
                        c->topo->ndims);
    if (c->topo->ndims && !coords) return co_error(c, fn, MPI_ERR_ARG, "coords is NULL");
    co_cart_coords(c->topo, rank, coords);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cart_rank, PMPI_Cart_rank);
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    static const char fn[] = "MPI_Cart_rank";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc);
    if (!c) return rc;
    if (!rank || (c->topo->ndims && !coords))
        return co_error(c, fn, MPI_ERR_ARG, "coords or rank is NULL");
    int r = co_cart_rank(c->topo, coords);
    if (r < 0) {
        int i = 0; /* the first non-periodic dimension whose coordinate is off the grid */
        while (c->topo->periods[i] || (coords[i] >= 0 && coords[i] < c->topo->dims[i])) i++;
        return co_error(c, fn, MPI_ERR_ARG,
                        "coords[%d] = %d is outside the non-periodic dimension of size %d", i,
                        coords[i], c->topo->dims[i]);
    }
    *rank = r;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cart_shift, PMPI_Cart_shift);
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    static const char fn[] = "MPI_Cart_shift";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc);
    if (!c) return rc;
    struct co_topo *t = c->topo;
    if (direction < 0 || direction >= t->ndims)
        return co_error(c, fn, MPI_ERR_ARG, "invalid direction %d (%d dimensions)", direction,
                        t->ndims);
    if (!rank_source || !rank_dest)
        return co_error(c, fn, MPI_ERR_ARG, "rank_source or rank_dest is NULL");
    int *co = malloc((size_t)t->ndims * sizeof(int));
    if (!co) return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
    co_cart_coords(t, c->rank, co);
    int mine = co[direction];
    co[direction] = mine + disp;
    *rank_dest = co_cart_rank(t, co);
    co[direction] = mine - disp;
    *rank_source = co_cart_rank(t, co);
    free(co);
    if (*rank_dest < 0) *rank_dest = MPI_PROC_NULL;
    if (*rank_source < 0) *rank_source = MPI_PROC_NULL;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cart_sub, PMPI_Cart_sub);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Cart_sub";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_cart(comm, fn, &rc), *n;
    if (!c) return rc;
    struct co_topo *t = c->topo;
    if (!newcomm || (t->ndims && !remain_dims))
        return co_error(c, fn, MPI_ERR_ARG, "remain_dims or newcomm is NULL");
    int *co = malloc((size_t)(t->ndims + 1) * 3 * sizeof(int));
    if (!co) return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory");
    int *dims = co + t->ndims + 1, *periods = dims + t->ndims + 1, k = 0;
    co_cart_coords(t, c->rank, co);
    /* color: position in the grid of the dropped dimensions; key: in the kept ones */
    int color = 0, key = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + co[i];
            dims[k] = t->dims[i];
            periods[k++] = t->periods[i];
        } else {
            color = color * t->dims[i] + co[i];
        }
    }
    rc = co_comm_split(c, color, key, 0, NULL, fn, &n);
    if (!rc && !(n->topo = co_topo_cart_new(k, dims, periods))) co_fatal("out of memory");
    free(co);
    if (rc) return rc;
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Topo_test, PMPI_Topo_test);
int PMPI_Topo_test(MPI_Comm comm, int *status) {
    static const char fn[] = "MPI_Topo_test";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!status) return co_error(c, fn, MPI_ERR_ARG, "status is NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Balanced factorisation: of all non-increasing factor lists of n with k entries, the one
 * whose largest and smallest factors are closest (9 x 8 for 72, not 12 x 6). */
static void dims_search(int n, int k, int maxd, int *cur, int depth, int *best, int *spread) {
    if (k == 1) {
        if (n > maxd) return;
        cur[depth] = n;
        int s = cur[0] - n;
        if (*spread < 0 || s < *spread) {
            *spread = s;
            for (int i = 0; i <= depth; i++) best[i] = cur[i];
        }
        return;
    }
    for (int d = CO_MIN(maxd, n); d >= 1; d--) {
        if (n % d) continue;
        long pw = 1; /* the k factors are all <= d: d^k must reach n */
        for (int i = 0; i < k && pw < n; i++) pw *= d;
        if (pw < n) break;
        if (*spread >= 0 && depth > 0 && cur[0] - d >= *spread) break; /* cannot do better */
        cur[depth] = d;
        dims_search(n / d, k - 1, d, cur, depth + 1, best, spread);
    }
}

CO_WEAK(MPI_Dims_create, PMPI_Dims_create);
int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    static const char fn[] = "MPI_Dims_create";
    CO_ENTER(fn);
    if (nnodes <= 0) return co_error(NULL, fn, MPI_ERR_ARG, "nnodes %d is not positive", nnodes);
    if (ndims < 0) return co_error(NULL, fn, MPI_ERR_DIMS, "negative ndims %d", ndims);
    if (ndims > 0 && !dims) return co_error(NULL, fn, MPI_ERR_ARG, "dims is NULL");
    long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return co_error(NULL, fn, MPI_ERR_DIMS, "dims[%d] is negative (%d)", i, dims[i]);
        if (dims[i] == 0)
            nfree++;
        else
            fixed *= dims[i];
        if (fixed > nnodes) break;
    }
    if (nnodes % fixed)
        return co_error(NULL, fn, MPI_ERR_DIMS,
                        "nnodes %d is not a multiple of the product of the given dims (%ld)",
                        nnodes, fixed);
    int rest = (int)(nnodes / fixed);
    if (nfree == 0) {
        if (rest != 1)
            return co_error(NULL, fn, MPI_ERR_DIMS, "the given dims multiply to %ld, not nnodes %d",
                            fixed, nnodes);
        return MPI_SUCCESS;
    }
    int *cur = malloc((size_t)nfree * 2 * sizeof(int));
    if (!cur) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    int *best = cur + nfree, spread = -1;
    dims_search(rest, nfree, rest, cur, 0, best, &spread);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0) dims[i] = best[k++];
    free(cur);
    return MPI_SUCCESS;
}
