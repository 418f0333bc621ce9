/* Graph and distributed graph topologies, and the neighbourhood collectives on every kind of
 * topology.
 *
 * Topologies: MPI_Graph_create (a ring with a self-loop and a doubled edge; fewer nodes than
 * ranks), MPI_Dist_graph_create_adjacent (weighted, with a doubled edge) and
 * MPI_Dist_graph_create (edges given by processes that are not their ends); their queries,
 * MPI_Topo_test, MPI_Comm_dup keeping them, MPI_Graph_map and MPI_Cart_map, and bad arguments.
 *
 * Neighbourhood collectives on Cartesian grids (periodic and not, with dimensions of 1 and 2
 * ranks, where the same peer is below and above), the graph and both distributed graphs: every
 * block says who sent it and which of the sender's blocks it was, and every receiver checks it
 * got, in receive block i from in-neighbour p, the block p addressed to it for that edge: on a
 * grid the one p sent the other way along the dimension, on a graph p's block for the k-th edge
 * to this process when this is the k-th edge from p here. Blocks from MPI_PROC_NULL stay
 * untouched. Blocking and nonblocking forms, v and w variants with counts that differ per edge. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static int wrank, wsize;

/* The block index sender p used for the edge into receive block i of this process (whose
 * in-neighbours are in[], p = in[i]); outs[p] is p's out-list of nouts[p] entries. */
static int sender_block(int cart, const int *in, int i, int me, int **outs, const int *nouts) {
    if (cart) return i ^ 1;
    int p = in[i], k = 0;
    for (int q = 0; q < i; q++) k += in[q] == p;
    for (int j = 0; j < nouts[p]; j++)
        if (outs[p][j] == me && k-- == 0) return j;
    return -1;
}

/* The neighbour lists of every rank of c: MPI_Cart_shift, MPI_Graph_neighbors or
 * MPI_Dist_graph_neighbors here, the out-lists of all gathered. */
typedef struct nbrs {
    int cart, nin, nout, *in, *out;
    int **outs, *nouts; /* every rank's out-list (graphs) */
} nbrs;

static nbrs get_nbrs(MPI_Comm c) {
    nbrs n = {0};
    int kind, me, size;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    CHECK_RC(MPI_Topo_test(c, &kind));
    if (kind == MPI_CART) {
        int nd;
        CHECK_RC(MPI_Cartdim_get(c, &nd));
        n.cart = 1, n.nin = n.nout = 2 * nd;
        n.in = malloc(sizeof(int) * (size_t)(2 * nd + 1));
        n.out = malloc(sizeof(int) * (size_t)(2 * nd + 1));
        for (int d = 0; d < nd; d++) {
            CHECK_RC(MPI_Cart_shift(c, d, 1, &n.in[2 * d], &n.in[2 * d + 1]));
            n.out[2 * d] = n.in[2 * d], n.out[2 * d + 1] = n.in[2 * d + 1];
        }
        return n;
    }
    if (kind == MPI_GRAPH) {
        CHECK_RC(MPI_Graph_neighbors_count(c, me, &n.nin));
        n.nout = n.nin;
        n.in = malloc(sizeof(int) * (size_t)(n.nin + 1));
        n.out = malloc(sizeof(int) * (size_t)(n.nin + 1));
        CHECK_RC(MPI_Graph_neighbors(c, me, n.nin, n.in));
        memcpy(n.out, n.in, sizeof(int) * (size_t)n.nin);
    } else {
        int w;
        CHECK(kind == MPI_DIST_GRAPH, "topology kind %d", kind);
        CHECK_RC(MPI_Dist_graph_neighbors_count(c, &n.nin, &n.nout, &w));
        n.in = malloc(sizeof(int) * (size_t)(n.nin + 1));
        n.out = malloc(sizeof(int) * (size_t)(n.nout + 1));
        CHECK_RC(MPI_Dist_graph_neighbors(c, n.nin, n.in, MPI_UNWEIGHTED, n.nout, n.out,
                                          MPI_UNWEIGHTED));
    }
    n.nouts = malloc(sizeof(int) * (size_t)size);
    n.outs = malloc(sizeof(int *) * (size_t)size);
    CHECK_RC(MPI_Allgather(&n.nout, 1, MPI_INT, n.nouts, 1, MPI_INT, c));
    int *displs = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int r = 0; r < size; r++) displs[r] = total, total += n.nouts[r];
    int *all = malloc(sizeof(int) * (size_t)(total + 1));
    CHECK_RC(MPI_Allgatherv(n.out, n.nout, MPI_INT, all, n.nouts, displs, MPI_INT, c));
    for (int r = 0; r < size; r++) n.outs[r] = all + displs[r];
    free(displs);
    return n;
}

static void free_nbrs(nbrs *n) {
    if (n->outs) free(n->outs[0]);
    free(n->outs), free(n->nouts), free(n->in), free(n->out);
}

/* Element e of the block sender s sends as its block j (count elements). */
static int val(int s, int j, int e) {
    return s * 10000 + j * 100 + e;
}
static int cnt(int j) { /* elements in a v/w block j */
    return 1 + j % 3;
}

#define K     3 /* elements per block of the uniform calls */
#define UNSET (-7)

static void check_one(MPI_Comm c, const char *what, int blocking) {
    int me;
    MPI_Comm_rank(c, &me);
    nbrs n = get_nbrs(c);
    int nin = n.nin, nout = n.nout;
    int *sb = malloc(sizeof(int) * (size_t)(nout * 4 * K + 1));
    int *rb = malloc(sizeof(int) * (size_t)(nin * 4 * K + 1));
    MPI_Request rq;
#define RUN(call, icall)                                                                           \
    do {                                                                                           \
        if (blocking) {                                                                            \
            CHECK_RC(call);                                                                        \
        } else {                                                                                   \
            CHECK_RC(icall);                                                                       \
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));                                            \
        }                                                                                          \
    } while (0)
#define EXPECT(i, off, j, count)                                                                   \
    do {                                                                                           \
        for (int e_ = 0; e_ < (count); e_++) {                                                     \
            int want_ = n.in[i] == MPI_PROC_NULL ? UNSET : val(n.in[i], (j), e_);                  \
            CHECK(rb[(off) + e_] == want_, "%s %s: block %d from %d [%d] = %d, expected %d", what, \
                  name, i, n.in[i], e_, rb[(off) + e_], want_);                                    \
        }                                                                                          \
    } while (0)
    const char *name;
    /* Neighbor_allgather: every out-neighbour gets the same block (this rank's block 0) */
    name = "Neighbor_allgather";
    for (int e = 0; e < K; e++) sb[e] = val(me, 0, e);
    for (int i = 0; i < nin * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_allgather(sb, K, MPI_INT, rb, K, MPI_INT, c),
        MPI_Ineighbor_allgather(sb, K, MPI_INT, rb, K, MPI_INT, c, &rq));
    for (int i = 0; i < nin; i++) EXPECT(i, i * K, 0, K);
    /* Neighbor_alltoall: block j to out-neighbour j */
    name = "Neighbor_alltoall";
    for (int j = 0; j < nout; j++)
        for (int e = 0; e < K; e++) sb[j * K + e] = val(me, j, e);
    for (int i = 0; i < nin * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, c),
        MPI_Ineighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, c, &rq));
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        EXPECT(i, i * K, j, K);
    }
    /* the v variants: block j has cnt(j) elements; receive blocks at reversed places */
    int *sc = malloc(sizeof(int) * (size_t)(2 * (nout + nin) + 1)), *sd = sc + nout,
        *rc = sd + nout, *rd = rc + nin;
    for (int j = 0, d = 0; j < nout; j++) sc[j] = cnt(j), sd[j] = d, d += cnt(j) + 1;
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        rc[i] = cnt(j < 0 ? 0 : j);
        rd[i] = (nin - 1 - i) * (3 + 1); /* block i at the far end, room for 3 */
    }
    name = "Neighbor_alltoallv";
    for (int j = 0; j < nout; j++)
        for (int e = 0; e < sc[j]; e++) sb[sd[j] + e] = val(me, j, e);
    for (int i = 0; i < nin * 4 * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c),
        MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c, &rq));
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        EXPECT(i, rd[i], j, rc[i]);
    }
    name = "Neighbor_allgatherv";
    for (int e = 0; e < 2; e++) sb[e] = val(me, 0, e);
    for (int i = 0; i < nin; i++) rc[i] = 2;
    for (int i = 0; i < nin * 4 * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_allgatherv(sb, 2, MPI_INT, rb, rc, rd, MPI_INT, c),
        MPI_Ineighbor_allgatherv(sb, 2, MPI_INT, rb, rc, rd, MPI_INT, c, &rq));
    for (int i = 0; i < nin; i++) EXPECT(i, rd[i], 0, 2);
    /* Neighbor_alltoallw: byte displacements; odd blocks sent as one contiguous type of
     * cnt(j) ints, received as MPI_INT */
    name = "Neighbor_alltoallw";
    MPI_Aint *sdw = malloc(sizeof(MPI_Aint) * (size_t)(nout + nin + 1)), *rdw = sdw + nout;
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)(nout + nin + 1)), *rt = st + nout,
                 three[4];
    for (int k = 1; k <= 3; k++) {
        CHECK_RC(MPI_Type_contiguous(k, MPI_INT, &three[k]));
        CHECK_RC(MPI_Type_commit(&three[k]));
    }
    int *swc = malloc(sizeof(int) * (size_t)(nout + nin + 1)), *rwc = swc + nout;
    for (int j = 0; j < nout; j++) {
        sdw[j] = (MPI_Aint)sizeof(int) * sd[j];
        st[j] = j % 2 ? three[cnt(j)] : MPI_INT;
        swc[j] = j % 2 ? 1 : cnt(j);
    }
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        rdw[i] = (MPI_Aint)sizeof(int) * rd[i];
        rt[i] = MPI_INT;
        rwc[i] = cnt(j < 0 ? 0 : j);
    }
    for (int j = 0; j < nout; j++)
        for (int e = 0; e < cnt(j); e++) sb[sd[j] + e] = val(me, j, e);
    for (int i = 0; i < nin * 4 * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_alltoallw(sb, swc, sdw, st, rb, rwc, rdw, rt, c),
        MPI_Ineighbor_alltoallw(sb, swc, sdw, st, rb, rwc, rdw, rt, c, &rq));
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        EXPECT(i, rd[i], j, rwc[i]);
    }
    /* the same with MPI_BOTTOM and absolute addresses (MPI_Get_address) on both sides */
    name = "Neighbor_alltoallw at MPI_BOTTOM";
    for (int j = 0; j < nout; j++) CHECK_RC(MPI_Get_address(sb + sd[j], &sdw[j]));
    for (int i = 0; i < nin; i++) CHECK_RC(MPI_Get_address(rb + rd[i], &rdw[i]));
    for (int i = 0; i < nin * 4 * K; i++) rb[i] = UNSET;
    RUN(MPI_Neighbor_alltoallw(MPI_BOTTOM, swc, sdw, st, MPI_BOTTOM, rwc, rdw, rt, c),
        MPI_Ineighbor_alltoallw(MPI_BOTTOM, swc, sdw, st, MPI_BOTTOM, rwc, rdw, rt, c, &rq));
    for (int i = 0; i < nin; i++) {
        int j = sender_block(n.cart, n.in, i, me, n.outs, n.nouts);
        EXPECT(i, rd[i], j, rwc[i]);
    }
    for (int k = 1; k <= 3; k++) MPI_Type_free(&three[k]);
    /* errors: MPI_IN_PLACE, a negative count, a bad type */
    CHECK_ERR(MPI_Neighbor_allgather(MPI_IN_PLACE, K, MPI_INT, rb, K, MPI_INT, c), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Neighbor_alltoall(sb, -1, MPI_INT, rb, K, MPI_INT, c), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Ineighbor_alltoall(sb, K, MPI_DATATYPE_NULL, rb, K, MPI_INT, c, &rq),
              MPI_ERR_TYPE);
    CHECK_ERR(MPI_Ineighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, c, NULL), MPI_ERR_ARG);
    if (nin > 0) {
        rc[0] = -1;
        CHECK_ERR(MPI_Neighbor_allgatherv(sb, 2, MPI_INT, rb, rc, rd, MPI_INT, c), MPI_ERR_COUNT);
    }
    free(swc), free(st), free(sdw), free(sc), free(sb), free(rb);
    free_nbrs(&n);
#undef RUN
#undef EXPECT
}

static void check_neighbors(MPI_Comm c, const char *what) {
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    check_one(c, what, 1);
    check_one(c, what, 0);
    /* a duplicate keeps the topology and its collectives */
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(c, &d));
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    check_one(d, what, 1);
    CHECK_RC(MPI_Comm_free(&d));
}

static void check_carts(void) {
    MPI_Comm c;
    int p1[1] = {1}, d1[1] = {wsize};
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c));
    check_neighbors(c, "ring");
    CHECK_RC(MPI_Comm_free(&c));
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    CHECK_RC(MPI_Dims_create(wsize, 2, d2));
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &c));
    check_neighbors(c, "2-d grid");
    CHECK_RC(MPI_Comm_free(&c));
    /* dimensions of 1 rank: periodic (the rank itself, twice) and not (MPI_PROC_NULL) */
    int d3[3] = {wsize, 1, 1}, p3[3] = {0, 1, 0};
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &c));
    check_neighbors(c, "3-d grid with flat dimensions");
    CHECK_RC(MPI_Comm_free(&c));
    if (wsize >= 2) { /* two ranks in a periodic dimension: the peer is below and above */
        int d4[2] = {2, wsize / 2}, p4[2] = {1, 1};
        CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, d4, p4, 0, &c));
        if (c != MPI_COMM_NULL) {
            check_neighbors(c, "2 x n/2 torus");
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
}

/* A ring of nnodes nodes (nnodes - 1 of the ranks when there are more than 2), with a
 * self-loop at node 0 and the edge between 0 and 1 doubled. */
static int ring_graph(int nnodes, int *index, int *edges) {
    int e = 0;
    for (int v = 0; v < nnodes; v++) {
        if (nnodes > 1) {
            edges[e++] = (v + nnodes - 1) % nnodes;
            edges[e++] = (v + 1) % nnodes;
        }
        if (v == 0) edges[e++] = 0;
        if (nnodes > 1 && v < 2) edges[e++] = 1 - v;
        index[v] = e;
    }
    return e;
}

static void check_graph(void) {
    int nnodes = wsize > 2 ? wsize - 1 : wsize, index[64], edges[256];
    int ne = ring_graph(nnodes, index, edges);
    MPI_Comm g;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 1, &g));
    int newrank;
    CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &newrank));
    CHECK(newrank == (wrank < nnodes ? wrank : MPI_UNDEFINED), "Graph_map: %d", newrank);
    if (wrank >= nnodes) {
        CHECK(g == MPI_COMM_NULL, "rank %d beyond the graph got a communicator", wrank);
        return;
    }
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int kind, nn, nedges, gi[64], ge[256];
    CHECK_RC(MPI_Topo_test(g, &kind));
    CHECK(kind == MPI_GRAPH, "Topo_test: %d", kind);
    CHECK_RC(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(nn == nnodes && nedges == ne, "Graphdims_get: %d %d", nn, nedges);
    CHECK_RC(MPI_Graph_get(g, 64, 256, gi, ge));
    CHECK(memcmp(gi, index, sizeof(int) * (size_t)nnodes) == 0 &&
              memcmp(ge, edges, sizeof(int) * (size_t)ne) == 0,
          "Graph_get differs from what was given");
    for (int v = 0; v < nnodes; v++) {
        int k, nb[8];
        CHECK_RC(MPI_Graph_neighbors_count(g, v, &k));
        CHECK(k == index[v] - (v ? index[v - 1] : 0), "Graph_neighbors_count(%d) = %d", v, k);
        CHECK_RC(MPI_Graph_neighbors(g, v, 8, nb));
        CHECK(memcmp(nb, edges + (v ? index[v - 1] : 0), sizeof(int) * (size_t)k) == 0,
              "Graph_neighbors(%d)", v);
    }
    /* errors */
    int x;
    CHECK_ERR(MPI_Graph_neighbors_count(g, nnodes, &x), MPI_ERR_RANK);
    CHECK_ERR(MPI_Cartdim_get(g, &x), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Dist_graph_neighbors_count(g, &x, &x, &x), MPI_ERR_TOPOLOGY);
    check_neighbors(g, "graph");
    CHECK_RC(MPI_Comm_free(&g));
}

static void check_dist(void) {
    int n = wsize, r = wrank, x;
    /* adjacent, weighted: out to r+1, r+2, r+1; in from r-1, r-2, r-1 */
    int out[3] = {(r + 1) % n, (r + 2) % n, (r + 1) % n};
    int in[3] = {(r + n - 1) % n, (r + 2 * n - 2) % n, (r + n - 1) % n};
    int ow[3] = {10, 20, 30}, iw[3] = {10, 20, 30};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, in, iw, 3, out, ow, MPI_INFO_NULL, 0,
                                            &g));
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int kind, ni, no, w, gin[3], gout[3], giw[3], gow[3];
    CHECK_RC(MPI_Topo_test(g, &kind));
    CHECK(kind == MPI_DIST_GRAPH, "Topo_test: %d", kind);
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &ni, &no, &w));
    CHECK(ni == 3 && no == 3 && w == 1, "Dist_graph_neighbors_count: %d %d %d", ni, no, w);
    CHECK_RC(MPI_Dist_graph_neighbors(g, 3, gin, giw, 3, gout, gow));
    CHECK(!memcmp(gin, in, sizeof(in)) && !memcmp(gout, out, sizeof(out)) &&
              !memcmp(giw, iw, sizeof(iw)) && !memcmp(gow, ow, sizeof(ow)),
          "Dist_graph_neighbors differs from what was given");
    CHECK_ERR(MPI_Dist_graph_neighbors(g, 2, gin, giw, 3, gout, gow), MPI_ERR_ARG);
    CHECK_ERR(MPI_Graph_neighbors_count(g, 0, &x), MPI_ERR_TOPOLOGY);
    check_neighbors(g, "adjacent distributed graph");
    CHECK_RC(MPI_Comm_free(&g));

    /* MPI_Dist_graph_create: rank r gives the edge (r+1) -> (r+2) twice, of weights r and
     * r + 100, and its own self-loop of weight 7; so a process's other edges are given by
     * others: in from r-1 twice (given by r-2), out to r+1 twice (given by r-1) */
    int src[2] = {(r + 1) % n, r}, deg[2] = {2, 1};
    int dst[3] = {(r + 2) % n, (r + 2) % n, r}, wts[3] = {r, r + 100, 7};
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, 2, src, deg, dst, wts, MPI_INFO_NULL, 0, &g));
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &ni, &no, &w));
    CHECK(ni == 3 && no == 3 && w == 1, "Dist_graph_create: degrees %d %d weighted %d", ni, no, w);
    int win[3], wout[3], wiw[3], wow[3];
    CHECK_RC(MPI_Dist_graph_neighbors(g, 3, win, wiw, 3, wout, wow));
    int sum_in = 0, sum_out = 0, from_below = 0, to_above = 0, self_in = 0, self_out = 0;
    for (int i = 0; i < 3; i++) {
        sum_in += wiw[i], sum_out += wow[i];
        from_below += win[i] == (r + n - 1) % n, self_in += win[i] == r;
        to_above += wout[i] == (r + 1) % n, self_out += wout[i] == r;
    }
    CHECK(n == 1 ? self_in == 3 && self_out == 3
                 : from_below == 2 && to_above == 2 && self_in == 1 && self_out == 1,
          "Dist_graph_create: in %d %d %d, out %d %d %d", win[0], win[1], win[2], wout[0], wout[1],
          wout[2]);
    CHECK(sum_in == 2 * ((r + 2 * n - 2) % n) + 107 && sum_out == 2 * ((r + n - 1) % n) + 107,
          "Dist_graph_create: weights in %d out %d", sum_in, sum_out);
    check_neighbors(g, "distributed graph");
    CHECK_RC(MPI_Comm_free(&g));

    /* unweighted, and a process without edges */
    int none = r % 2;
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, none ? 0 : 1, &r, (int[]){1}, &r,
                                   none ? MPI_WEIGHTS_EMPTY : MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &g));
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &ni, &no, &w));
    CHECK(w == 0 && ni == !none && no == !none, "self loops: %d %d weighted %d", ni, no, w);
    CHECK_RC(MPI_Comm_free(&g));

    /* no edges anywhere: weighted unless MPI_UNWEIGHTED */
    for (int k = 0; k < 3; k++) {
        const int *wk = k == 0 ? MPI_UNWEIGHTED : k == 1 ? MPI_WEIGHTS_EMPTY : NULL;
        CHECK_RC(
            MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, wk, MPI_INFO_NULL, 0, &g));
        CHECK_RC(MPI_Dist_graph_neighbors_count(g, &ni, &no, &w));
        CHECK(ni == 0 && no == 0 && w == (k != 0), "no edges (%d): %d %d weighted %d", k, ni, no,
              w);
        CHECK_RC(MPI_Comm_free(&g));
    }

    /* errors */
    int bad = n;
    CHECK_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
              MPI_ERR_RANK);
    CHECK_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &r, MPI_UNWEIGHTED, 1, &r, ow,
                                             MPI_INFO_NULL, 0, &g),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0, NULL,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, (int[]){1}, &bad, MPI_UNWEIGHTED,
                                    MPI_INFO_NULL, 0, &g),
              MPI_ERR_RANK);
    CHECK_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, (int[]){1}, &r, (int[]){-1},
                                    MPI_INFO_NULL, 0, &g),
              MPI_ERR_ARG);
    /* weights on some processes and MPI_UNWEIGHTED on others: every process reports it */
    if (n > 1)
        CHECK_ERR(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, (int[]){1}, &r,
                                        r ? (int[]){1} : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                  MPI_ERR_ARG);
}

static void check_maps_and_errors(void) {
    int x, d[2] = {wsize, 1}, p[2] = {0, 0};
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 2, d, p, &x));
    CHECK(x == wrank, "Cart_map: %d", x);
    d[1] = 2;
    CHECK_ERR(MPI_Cart_map(MPI_COMM_WORLD, 2, d, p, &x), MPI_ERR_DIMS);
    d[0] = 1, d[1] = 1;
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 2, d, p, &x));
    CHECK(x == (wrank == 0 ? 0 : MPI_UNDEFINED), "Cart_map of one point: %d", x);
    int index[2] = {1, 2}, edges[2] = {1, 5};
    MPI_Comm g;
    if (wsize >= 2) {
        CHECK_ERR(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &g), MPI_ERR_ARG);
        int down[2] = {2, 1};
        CHECK_ERR(MPI_Graph_create(MPI_COMM_WORLD, 2, down, edges, 0, &g), MPI_ERR_ARG);
    }
    CHECK_ERR(MPI_Graph_create(MPI_COMM_WORLD, wsize + 1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_ERR(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, NULL), MPI_ERR_ARG);
    /* no nodes: MPI_COMM_NULL everywhere */
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &g));
    CHECK(g == MPI_COMM_NULL, "a graph of no nodes gave a communicator");
    /* neighbourhood collectives need a topology */
    int b = 0;
    CHECK_ERR(MPI_Neighbor_allgather(&b, 1, MPI_INT, &b, 1, MPI_INT, MPI_COMM_WORLD),
              MPI_ERR_TOPOLOGY);
    MPI_Request rq;
    CHECK_ERR(MPI_Ineighbor_alltoall(&b, 1, MPI_INT, &b, 1, MPI_INT, MPI_COMM_SELF, &rq),
              MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &x), MPI_ERR_TOPOLOGY);
}

/* A rank's edges to itself, on a periodic dimension of 1 rank of MPI_COMM_SELF (below, then
 * above, both itself): what goes below arrives from above. Blocks of one size are exchanged;
 * where a receive block is smaller than the block sent into it the call fails with
 * MPI_ERR_TRUNCATE, where larger with MPI_ERR_COUNT, and the other edge's block still arrives,
 * blocking and nonblocking alike. Then the same between the ranks of a ring. */
static void check_self_sizes(void) {
    int one = 1, per = 1, sb[4] = {11, 12, 21, 22}, rb[6], sc[2] = {2, 2}, sd[2] = {0, 2};
    int rd[2] = {0, 3};
    MPI_Comm c;
    MPI_Request rq;
    CHECK_RC(MPI_Cart_create(MPI_COMM_SELF, 1, &one, &per, 0, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    static const struct {
        int rc[2], cls;
    } cases[] = {{{2, 2}, MPI_SUCCESS}, {{2, 1}, MPI_ERR_TRUNCATE}, {{3, 2}, MPI_ERR_COUNT}};
    for (int blocking = 0; blocking < 2; blocking++) {
        for (int k = 0; k < 3; k++) {
            const int *rc = cases[k].rc;
            for (int e = 0; e < 6; e++) rb[e] = UNSET;
            int got = blocking ? MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c)
                               : MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT,
                                                         c, &rq);
            if (!blocking && got == MPI_SUCCESS) got = MPI_Wait(&rq, MPI_STATUS_IGNORE);
            int cls = MPI_SUCCESS;
            if (got != MPI_SUCCESS) MPI_Error_class(got, &cls);
            CHECK(cls == cases[k].cls, "self edges, receive counts %d %d, %s: class %d", rc[0],
                  rc[1], blocking ? "blocking" : "nonblocking", cls);
            /* block 0 comes from above (the block sent above, 21 22), block 1 from below */
            if (rc[0] == 2) CHECK(rb[0] == 21 && rb[1] == 22, "self block 0: %d %d", rb[0], rb[1]);
            if (rc[1] == 2) CHECK(rb[3] == 11 && rb[4] == 12, "self block 1: %d %d", rb[3], rb[4]);
        }
    }
    MPI_Comm_free(&c);
    /* the same between ranks: every rank's receive blocks one element smaller, then larger,
     * than its neighbours' send blocks, on a periodic ring of all ranks */
    if (wsize < 2) return;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &wsize, &per, 0, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int blocking = 0; blocking < 2; blocking++) {
        for (int k = 0; k < 3; k++) {
            int rcount = 2 + (k == 1 ? -1 : k == 2 ? 1 : 0), want = cases[k].cls;
            for (int e = 0; e < 6; e++) rb[e] = UNSET;
            int got = blocking
                          ? MPI_Neighbor_alltoall(sb, 2, MPI_INT, rb, rcount, MPI_INT, c)
                          : MPI_Ineighbor_alltoall(sb, 2, MPI_INT, rb, rcount, MPI_INT, c, &rq);
            if (!blocking && got == MPI_SUCCESS) got = MPI_Wait(&rq, MPI_STATUS_IGNORE);
            int cls = MPI_SUCCESS;
            if (got != MPI_SUCCESS) MPI_Error_class(got, &cls);
            CHECK(cls == want, "ring, 2 elements sent, %d received, %s: class %d", rcount,
                  blocking ? "blocking" : "nonblocking", cls);
            if (k == 0) /* block 0 from below: what it sent above */
                CHECK(rb[0] == 21 && rb[1] == 22 && rb[2] == 11 && rb[3] == 12,
                      "ring blocks: %d %d %d %d", rb[0], rb[1], rb[2], rb[3]);
        }
    }
    MPI_Comm_free(&c);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 64, "at most 64 ranks");
    check_carts();
    check_graph();
    check_dist();
    check_maps_and_errors();
    check_self_sizes();
    MPI_Finalize();
    return 0;
}
