/* Topology calls: Cartesian, graph and distributed graph. Ranks are never reordered (reorder is
 * a hint): a Cartesian or graph communicator is the first prod(dims) or nnodes ranks of the old
 * one, a distributed graph communicator all of them, each made with one round of the ID
 * stream; Cart_sub is a split by the coordinates that are dropped. */
#include "api.h"

#include <stdlib.h>

/* A communicator that must carry a topology of `kind` (MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH);
 * NULL with *rc set (MPI_ERR_TOPOLOGY) otherwise. */
static co_comm *api_topo(MPI_Comm comm, const char *fn, int kind, int *rc) {
    static const char *const names[] = {"", "graph", "Cartesian", "distributed graph"};
    co_comm *c = co_api_comm(comm, fn, rc);
    if (c && (!c->topo || c->topo->kind != kind)) {
        *rc = co_error(c, fn, MPI_ERR_TOPOLOGY, "communicator has no %s topology", names[kind]);
        return NULL;
    }
    return c;
}

static co_comm *api_cart(MPI_Comm comm, const char *fn, int *rc) {
    return api_topo(comm, fn, MPI_CART, rc);
}

/* comm_old of a topology constructor: an intracommunicator, and a place for the result,
 * which holds MPI_COMM_NULL until the call succeeds. */
static co_comm *api_old(MPI_Comm comm_old, const char *fn, MPI_Comm *out, const char *what,
                        int *rc) {
    if (out) *out = MPI_COMM_NULL;
    co_comm *c = co_api_comm(comm_old, fn, rc);
    if (!c) return NULL;
    if (c->is_inter)
        *rc = co_error(c, fn, MPI_ERR_COMM, "comm_old is an intercommunicator");
    else if (!out)
        *rc = co_error(c, fn, MPI_ERR_ARG, "%s is NULL", what);
    return *rc ? NULL : c;
}

CO_WEAK(MPI_Cart_create, PMPI_Cart_create);
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart) {
    static const char fn[] = "MPI_Cart_create";
    CO_ENTER(fn);
    (void)reorder;
    int rc = MPI_SUCCESS;
    co_comm *c = api_old(comm_old, fn, comm_cart, "comm_cart", &rc), *n;
    if (!c) return rc;
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
 * whose largest and smallest factors are closest (9 x 8 for 72, not 12 x 6); of those, the one
 * with the largest smallest factor, then the largest next one, and so on (41 x 9 x 8 x 6 for
 * 17712, not 41 x 12 x 6 x 6; 51 x 40 x 35 for 71400, not 50 x 42 x 34), as MPICH chooses. */
typedef struct dims_best {
    int *v;
    int spread;      /* -1 until a first list is found */
    const int *divs; /* the divisors of the whole count, ascending */
    int ndivs;
} dims_best;

/* 1 if the non-increasing list a (k entries) is better than b by the second rule above */
static int dims_more_even(const int *a, const int *b, int k) {
    for (int i = k - 1; i >= 0; i--)
        if (a[i] != b[i]) return a[i] > b[i];
    return 0;
}

/* The largest r with r^k <= n. */
static int kth_root(int n, int k) {
    int lo = 1, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        long p = 1;
        for (int i = 0; i < k && p <= n; i++) p *= mid;
        if (p <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Splits n into k more factors, each at most maxd, after cur[0..depth). */
static void dims_search(int n, int k, int maxd, int *cur, int depth, dims_best *b) {
    if (k == 1) {
        if (n > maxd) return;
        cur[depth] = n;
        int s = cur[0] - n;
        if (b->spread < 0 || s < b->spread ||
            (s == b->spread && dims_more_even(cur, b->v, depth + 1))) {
            b->spread = s;
            for (int i = 0; i <= depth; i++) b->v[i] = cur[i];
        }
        return;
    }
    /* the smallest of the k factors is at most n's k-th root r: no better spread below, nor
     * an equal one with a larger smallest factor than the best list's */
    if (depth > 0 && b->spread >= 0) {
        int r = kth_root(n, k), s = cur[0] - r, best_min = b->v[depth + k - 1];
        if (s > b->spread || (s == b->spread && r < best_min)) return;
    }
    /* the divisors of the whole count that are at most min(maxd, n), largest first (n divides
     * the whole count, so its divisors are among them) */
    int top = CO_MIN(maxd, n), lo = 0, hi = b->ndivs - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (b->divs[mid] <= top)
            lo = mid;
        else
            hi = mid - 1;
    }
    for (int j = lo; j >= 0; j--) {
        int d = b->divs[j];
        if (n % d) continue;
        long pw = 1; /* the k factors are all <= d: d^k must reach n */
        for (int i = 0; i < k && pw < n; i++) pw *= d;
        if (pw < n) break;
        if (b->spread >= 0 && depth > 0 && cur[0] - d > b->spread) break; /* cannot do better */
        cur[depth] = d;
        dims_search(n / d, k - 1, d, cur, depth + 1, b);
    }
}

/* The divisors of n, ascending, into dv (room for 2048: n < 2^31 has at most 1600). */
static int divisors(int n, int *dv) {
    int m = 0;
    for (int i = 1; (long)i * i <= n; i++)
        if (n % i == 0) dv[m++] = i;
    for (int i = m - 1, hi = m; i >= 0; i--) /* the co-divisors, ascending after them */
        if ((long)dv[i] * dv[i] != n) dv[hi++] = n / dv[i], m = hi;
    return m;
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
    int *dv = malloc(2048 * sizeof(int));
    if (!dv) {
        free(cur);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    }
    dims_best best = {cur + nfree, -1, dv, divisors(rest, dv)};
    dims_search(rest, nfree, rest, cur, 0, &best);
    free(dv);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0) dims[i] = best.v[k++];
    free(cur);
    return MPI_SUCCESS;
}

/* ---- Maps: where a rank would be in a new topology (no reordering) ------------------------- */

CO_WEAK(MPI_Cart_map, PMPI_Cart_map);
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank) {
    static const char fn[] = "MPI_Cart_map";
    CO_ENTER(fn);
    (void)periods;
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!newrank || (ndims > 0 && !dims))
        return co_error(c, fn, MPI_ERR_ARG, "dims or newrank is NULL");
    if (ndims < 0) return co_error(c, fn, MPI_ERR_DIMS, "negative ndims %d", ndims);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return co_error(c, fn, MPI_ERR_DIMS, "dims[%d] is %d (must be positive)", i, dims[i]);
        if ((prod *= dims[i]) > c->size)
            return co_error(c, fn, MPI_ERR_DIMS,
                            "the grid has more points than the communicator has ranks (%d)",
                            c->size);
    }
    *newrank = c->rank < prod ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* MPI_Graph_create's arrays: nnodes in 0..size, index non-decreasing from 0, edges naming
 * nodes of the graph. */
static int check_graph(co_comm *c, const char *fn, int nnodes, const int *index, const int *edges) {
    if (nnodes < 0 || nnodes > c->size)
        return co_error(c, fn, MPI_ERR_ARG, "nnodes %d is not in 0..%d (the communicator's size)",
                        nnodes, c->size);
    if (nnodes > 0 && !index) return co_error(c, fn, MPI_ERR_ARG, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return co_error(c, fn, MPI_ERR_ARG, "index[%d] = %d is less than the one before", i,
                            index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges) return co_error(c, fn, MPI_ERR_ARG, "edges is NULL");
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return co_error(c, fn, MPI_ERR_ARG, "edges[%d] = %d is not a node (0..%d)", i, edges[i],
                            nnodes - 1);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Graph_map, PMPI_Graph_map);
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank) {
    static const char fn[] = "MPI_Graph_map";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!newrank) return co_error(c, fn, MPI_ERR_ARG, "newrank is NULL");
    if ((rc = check_graph(c, fn, nnodes, index, edges))) return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- Graph topologies ------------------------------------------------------------------------
 * The graph's first nnodes ranks form the new communicator (one round of the ID stream, as
 * MPI_Cart_create), each keeping the whole adjacency. */

CO_WEAK(MPI_Graph_create, PMPI_Graph_create);
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph) {
    static const char fn[] = "MPI_Graph_create";
    CO_ENTER(fn);
    (void)reorder;
    int rc = MPI_SUCCESS;
    co_comm *c = api_old(comm_old, fn, comm_graph, "comm_graph", &rc), *n;
    if (!c) return rc;
    if ((rc = check_graph(c, fn, nnodes, index, edges))) return rc;
    if ((rc = co_comm_first_n(c, nnodes, fn, &n))) return rc;
    if (n && !(n->topo = co_topo_graph_new(nnodes, index, edges))) co_fatal("out of memory");
    *comm_graph = co_api_comm_out(n);
    return MPI_SUCCESS;
}

static co_comm *api_graph(MPI_Comm comm, const char *fn, int *rc) {
    return api_topo(comm, fn, MPI_GRAPH, rc);
}

CO_WEAK(MPI_Graphdims_get, PMPI_Graphdims_get);
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges) {
    static const char fn[] = "MPI_Graphdims_get";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_graph(comm, fn, &rc);
    if (!c) return rc;
    if (!nnodes || !nedges) return co_error(c, fn, MPI_ERR_ARG, "nnodes or nedges is NULL");
    *nnodes = c->topo->nnodes;
    *nedges = c->topo->nedges;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Graph_get, PMPI_Graph_get);
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
    static const char fn[] = "MPI_Graph_get";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_graph(comm, fn, &rc);
    if (!c) return rc;
    const struct co_topo *t = c->topo;
    if (maxindex < 0 || maxedges < 0)
        return co_error(c, fn, MPI_ERR_ARG, "negative maxindex %d or maxedges %d", maxindex,
                        maxedges);
    int ni = CO_MIN(maxindex, t->nnodes), ne = CO_MIN(maxedges, t->nedges);
    if ((ni && !index) || (ne && !edges))
        return co_error(c, fn, MPI_ERR_ARG, "index or edges is NULL");
    for (int i = 0; i < ni; i++) index[i] = t->index[i];
    for (int i = 0; i < ne; i++) edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

/* A rank of a graph communicator, whose neighbours a call asks for. */
static int graph_rank(co_comm *c, const char *fn, int rank) {
    if (rank >= 0 && rank < c->size) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_RANK, "invalid rank %d (communicator size %d)", rank, c->size);
}

CO_WEAK(MPI_Graph_neighbors_count, PMPI_Graph_neighbors_count);
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors) {
    static const char fn[] = "MPI_Graph_neighbors_count";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_graph(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = graph_rank(c, fn, rank))) return rc;
    if (!nneighbors) return co_error(c, fn, MPI_ERR_ARG, "nneighbors is NULL");
    *nneighbors = c->topo->index[rank] - (rank ? c->topo->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Graph_neighbors, PMPI_Graph_neighbors);
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    static const char fn[] = "MPI_Graph_neighbors";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_graph(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = graph_rank(c, fn, rank))) return rc;
    const struct co_topo *t = c->topo;
    int lo = rank ? t->index[rank - 1] : 0, k = CO_MIN(maxneighbors, t->index[rank] - lo);
    if (maxneighbors < 0)
        return co_error(c, fn, MPI_ERR_ARG, "negative maxneighbors %d", maxneighbors);
    if (k > 0 && !neighbors) return co_error(c, fn, MPI_ERR_ARG, "neighbors is NULL");
    for (int i = 0; i < k; i++) neighbors[i] = t->edges[lo + i];
    return MPI_SUCCESS;
}

/* ---- Distributed graph topologies ------------------------------------------------------------
 * The new communicator has comm_old's group (one round of the ID stream); each process keeps
 * its own in- and out-edges. MPI_Dist_graph_create sends every edge to its two ends through
 * an allgather of all the edges given, so both ends list the edges between two processes in
 * the same order (that of the ranks that gave them, then of their arrays): the neighbourhood
 * collectives match the k-th message between two processes to the k-th edge on both sides. */

/* A weights argument: 0 unweighted (MPI_UNWEIGHTED), 1 weighted (an array, or
 * MPI_WEIGHTS_EMPTY / NULL with no edges); an error otherwise. */
static int weights_kind(co_comm *c, const char *fn, const int *w, int deg, const char *what,
                        int *kind) {
    if (w == MPI_UNWEIGHTED) {
        *kind = 0;
        return MPI_SUCCESS;
    }
    if ((w == MPI_WEIGHTS_EMPTY || !w) && deg > 0)
        return co_error(c, fn, MPI_ERR_ARG, "%s is %s but there are %d edges", what,
                        w ? "MPI_WEIGHTS_EMPTY" : "NULL", deg);
    for (int i = 0; i < deg; i++)
        if (w[i] < 0) return co_error(c, fn, MPI_ERR_ARG, "%s[%d] = %d is negative", what, i, w[i]);
    *kind = 1;
    return MPI_SUCCESS;
}

static int check_ranks(co_comm *c, const char *fn, const int *v, int n, const char *what) {
    if (n < 0) return co_error(c, fn, MPI_ERR_ARG, "negative number of %s %d", what, n);
    if (n > 0 && !v) return co_error(c, fn, MPI_ERR_ARG, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= c->size)
            return co_error(c, fn, MPI_ERR_RANK, "%s[%d] = %d is not a rank (communicator size %d)",
                            what, i, v[i], c->size);
    return MPI_SUCCESS;
}

/* The checks every distributed graph constructor starts with. */
static co_comm *dist_old(MPI_Comm comm_old, const char *fn, MPI_Info info, MPI_Comm *out, int *rc) {
    co_comm *c = api_old(comm_old, fn, out, "comm_dist_graph", rc);
    return !c || (*rc = co_api_info_arg(c, fn, info)) ? NULL : c;
}

static int dist_attach(co_comm *c, const char *fn, int indeg, const int *in, const int *inw,
                       int outdeg, const int *out, const int *outw, MPI_Comm *newcomm) {
    co_comm *n;
    int rc = co_comm_first_n(c, c->size, fn, &n);
    if (rc) return rc;
    if (!(n->topo = co_topo_dist_new(indeg, in, inw, outdeg, out, outw))) co_fatal("out of memory");
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Dist_graph_create_adjacent, PMPI_Dist_graph_create_adjacent);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int *sourceweights, int outdegree,
                                    const int destinations[], const int *destweights, MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph) {
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    CO_ENTER(fn);
    (void)reorder;
    int rc = MPI_SUCCESS, wi, wo;
    co_comm *c = dist_old(comm_old, fn, info, comm_dist_graph, &rc);
    if (!c) return rc;
    if ((rc = check_ranks(c, fn, sources, indegree, "sources")) ||
        (rc = check_ranks(c, fn, destinations, outdegree, "destinations")) ||
        (rc = weights_kind(c, fn, sourceweights, indegree, "sourceweights", &wi)) ||
        (rc = weights_kind(c, fn, destweights, outdegree, "destweights", &wo)))
        return rc;
    if (wi != wo)
        return co_error(c, fn, MPI_ERR_ARG,
                        "sourceweights and destweights must both be MPI_UNWEIGHTED or neither");
    static const int none[1];
    const int *iw = wi ? (indegree ? sourceweights : none) : NULL;
    const int *ow = wo ? (outdegree ? destweights : none) : NULL;
    return dist_attach(c, fn, indegree, sources, iw, outdegree, destinations, ow, comm_dist_graph);
}

CO_WEAK(MPI_Dist_graph_create, PMPI_Dist_graph_create);
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int *weights, MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph) {
    static const char fn[] = "MPI_Dist_graph_create";
    CO_ENTER(fn);
    (void)reorder;
    int rc = MPI_SUCCESS, weighted;
    co_comm *c = dist_old(comm_old, fn, info, comm_dist_graph, &rc);
    if (!c) return rc;
    if ((rc = check_ranks(c, fn, sources, n, "sources"))) return rc;
    if (n > 0 && !degrees) return co_error(c, fn, MPI_ERR_ARG, "degrees is NULL");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return co_error(c, fn, MPI_ERR_ARG, "degrees[%d] = %d is negative", i, degrees[i]);
        total += degrees[i];
    }
    if (total > 0x7fffffff / 3) return co_error(c, fn, MPI_ERR_ARG, "too many edges (%lld)", total);
    if ((rc = check_ranks(c, fn, destinations, (int)total, "destinations")) ||
        (rc = weights_kind(c, fn, weights, (int)total, "weights", &weighted)))
        return rc;
    /* every edge given anywhere, as (source, destination, weight), to every process */
    int mine = 3 * (int)total, size = c->size, *counts = malloc(2 * (size_t)size * sizeof(int));
    int *edges = malloc((size_t)(mine + 1) * sizeof(int));
    if (!counts || !edges) co_fatal("out of memory");
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            edges[3 * e] = sources[i];
            edges[3 * e + 1] = destinations[e];
            edges[3 * e + 2] = weighted ? weights[e] : 0;
        }
    /* whether the graph is weighted: as the processes that give edges say (they must agree);
     * when none does, as each process says for itself */
    int flags[2] = {weighted && total, !weighted && total}, any[2];
    MPI_Comm old = c->handle;
    if ((rc = PMPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, old)) ||
        (rc = PMPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, old))) {
        free(counts), free(edges);
        return rc;
    }
    int *displs = counts + size;
    long long all = 0;
    for (int r = 0; r < size; r++) displs[r] = (int)all, all += counts[r];
    int *every = all < 0x7fffffff ? malloc((size_t)(all + 1) * sizeof(int)) : NULL;
    if (!every) {
        free(counts), free(edges);
        return co_error(c, fn, MPI_ERR_NO_MEM, "no memory for the %lld edges", all / 3);
    }
    rc = PMPI_Allgatherv(edges, mine, MPI_INT, every, counts, displs, MPI_INT, old);
    free(edges);
    free(counts);
    co_st.api_fn = fn;
    if (rc) {
        free(every);
        return rc;
    }
    if (any[0] && any[1]) {
        free(every);
        return co_error(c, fn, MPI_ERR_ARG,
                        "some processes gave weights and others MPI_UNWEIGHTED");
    }
    /* this process's ends, in the order of the edges */
    int indeg = 0, outdeg = 0, me = c->rank;
    for (long long e = 0; e < all / 3; e++) {
        indeg += every[3 * e + 1] == me;
        outdeg += every[3 * e] == me;
    }
    int *v = malloc((size_t)(2 * (indeg + outdeg) + 1) * sizeof(int));
    if (!v) co_fatal("out of memory");
    int *in = v, *inw = in + indeg, *out = inw + indeg, *outw = out + outdeg, ki = 0, ko = 0;
    for (long long e = 0; e < all / 3; e++) {
        if (every[3 * e + 1] == me) in[ki] = every[3 * e], inw[ki++] = every[3 * e + 2];
        if (every[3 * e] == me) out[ko] = every[3 * e + 1], outw[ko++] = every[3 * e + 2];
    }
    free(every);
    if (any[0] || any[1]) weighted = any[0];
    rc = dist_attach(c, fn, indeg, in, weighted ? inw : NULL, outdeg, out, weighted ? outw : NULL,
                     comm_dist_graph);
    free(v);
    return rc;
}

static co_comm *api_dist(MPI_Comm comm, const char *fn, int *rc) {
    return api_topo(comm, fn, MPI_DIST_GRAPH, rc);
}

CO_WEAK(MPI_Dist_graph_neighbors_count, PMPI_Dist_graph_neighbors_count);
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_dist(comm, fn, &rc);
    if (!c) return rc;
    if (!indegree || !outdegree || !weighted)
        return co_error(c, fn, MPI_ERR_ARG, "indegree, outdegree or weighted is NULL");
    *indegree = c->topo->indeg;
    *outdegree = c->topo->outdeg;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Dist_graph_neighbors, PMPI_Dist_graph_neighbors);
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int *sourceweights,
                              int maxoutdegree, int destinations[], int *destweights) {
    static const char fn[] = "MPI_Dist_graph_neighbors";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = api_dist(comm, fn, &rc);
    if (!c) return rc;
    const struct co_topo *t = c->topo;
    if (maxindegree < t->indeg || maxoutdegree < t->outdeg)
        return co_error(c, fn, MPI_ERR_ARG,
                        "maxindegree %d or maxoutdegree %d is less than the degree (%d in, %d out)",
                        maxindegree, maxoutdegree, t->indeg, t->outdeg);
    if ((t->indeg && !sources) || (t->outdeg && !destinations))
        return co_error(c, fn, MPI_ERR_ARG, "sources or destinations is NULL");
    int wi = t->weighted && t->indeg && sourceweights != MPI_UNWEIGHTED;
    int wo = t->weighted && t->outdeg && destweights != MPI_UNWEIGHTED;
    if ((wi && (!sourceweights || sourceweights == MPI_WEIGHTS_EMPTY)) ||
        (wo && (!destweights || destweights == MPI_WEIGHTS_EMPTY)))
        return co_error(c, fn, MPI_ERR_ARG, "sourceweights or destweights is not an array");
    for (int i = 0; i < t->indeg; i++) {
        sources[i] = t->in[i];
        if (wi) sourceweights[i] = t->inw[i];
    }
    for (int i = 0; i < t->outdeg; i++) {
        destinations[i] = t->out[i];
        if (wo) destweights[i] = t->outw[i];
    }
    return MPI_SUCCESS;
}
