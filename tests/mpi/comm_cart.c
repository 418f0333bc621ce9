/* Cartesian topologies: Dims_create (balanced factors, fixed entries, errors), Cart_create
 * (periodic and not, fewer points than ranks), Cart_get, Cartdim_get, Cart_coords and
 * Cart_rank both ways for every rank, Cart_shift at edges and with wrap-around, a halo
 * exchange along the shifts, Cart_sub, Topo_test, and the bad arguments. */
#include "comm_util.h"

static void dims_expect(int nnodes, int ndims, const int *in, const int *expect) {
    int d[8];
    if (ndims > 0) memcpy(d, in, (size_t)ndims * sizeof(int));
    CHECK_RC(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == expect[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims,
              i, d[i], expect[i]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    dims_expect(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims_expect(72, 2, (int[]){0, 0}, (int[]){9, 8});
    dims_expect(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_expect(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_expect(6, 3, (int[]){0, 0, 0}, (int[]){3, 2, 1});
    dims_expect(12, 2, (int[]){0, 3}, (int[]){4, 3});
    dims_expect(24, 3, (int[]){0, 2, 0}, (int[]){4, 2, 3});
    dims_expect(1, 1, (int[]){0}, (int[]){1});
    /* equal spreads: the larger smallest factor, then the larger next one */
    dims_expect(17712, 4, (int[]){0, 0, 0, 0}, (int[]){41, 9, 8, 6});
    dims_expect(71400, 3, (int[]){0, 0, 0}, (int[]){51, 40, 35});
    dims_expect(30, 2, (int[]){5, 6}, (int[]){5, 6});
    dims_expect(1, 0, NULL, NULL);
    int d2[2] = {5, 0}, bad[2] = {-1, 0};
    CHECK_ERR(MPI_Dims_create(12, 2, d2), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Dims_create(12, 2, bad), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Dims_create(12, -1, d2), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Dims_create(0, 2, d2), MPI_ERR_ARG);

    int status;
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "world has no topology");

    /* a 2-D grid over everyone, periodic in the first dimension only */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(n, 2, dims);
    MPI_Comm cart;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK_RC(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "Topo_test %d", status);
    int nd, gd[2], gp[2], gc[2], c[2], r, cr;
    CHECK_RC(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get %d", nd);
    CHECK_RC(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get");
    MPI_Comm_rank(cart, &cr);
    CHECK(cr == rank, "ranks are not reordered");
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "row-major coordinates");
    for (r = 0; r < n; r++) {
        int back;
        CHECK_RC(MPI_Cart_coords(cart, r, 2, c));
        CHECK(c[0] == r / dims[1] && c[1] == r % dims[1], "coords of %d", r);
        CHECK_RC(MPI_Cart_rank(cart, c, &back));
        CHECK(back == r, "Cart_rank(coords(%d)) = %d", r, back);
    }
    c[0] = gc[0] + dims[0]; /* periodic: wraps */
    c[1] = gc[1];
    CHECK_RC(MPI_Cart_rank(cart, c, &r));
    CHECK(r == rank, "periodic wrap gives %d", r);
    c[0] = gc[0];
    c[1] = dims[1];
    CHECK_ERR(MPI_Cart_rank(cart, c, &r), MPI_ERR_ARG);

    int src, dst;
    CHECK_RC(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(dst == ((gc[0] + 1) % dims[0]) * dims[1] + gc[1], "shift dim 0 dest %d", dst);
    CHECK(src == ((gc[0] - 1 + dims[0]) % dims[0]) * dims[1] + gc[1], "shift dim 0 src %d", src);
    CHECK_RC(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(dst == (gc[1] + 1 < dims[1] ? rank + 1 : MPI_PROC_NULL), "shift dim 1 dest %d", dst);
    CHECK(src == (gc[1] > 0 ? rank - 1 : MPI_PROC_NULL), "shift dim 1 src %d", src);
    /* halo exchange along dimension 1: the left neighbour's rank arrives (or nothing) */
    int got = -7;
    CHECK_RC(
        MPI_Sendrecv(&rank, 1, MPI_INT, dst, 4, &got, 1, MPI_INT, src, 4, cart, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -7 : src), "halo got %d", got);
    CHECK_RC(MPI_Cart_shift(cart, 0, -2, &src, &dst));
    CHECK(dst == ((gc[0] - 2 + 2 * dims[0]) % dims[0]) * dims[1] + gc[1], "shift by -2");
    CHECK_ERR(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_ERR(MPI_Cart_coords(cart, n, 2, c), MPI_ERR_RANK);
    CHECK_ERR(MPI_Cart_coords(cart, 0, 1, c), MPI_ERR_ARG);
    cu_check_same_id(cart);
    cu_check_works(cart, 2);

    /* rows: keep dimension 1 */
    MPI_Comm row;
    CHECK_RC(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    int size;
    MPI_Comm_size(row, &size);
    MPI_Comm_rank(row, &r);
    CHECK(size == dims[1] && r == gc[1], "row: rank %d of %d", r, size);
    CHECK_RC(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1, "row has 1 dimension (%d)", nd);
    cu_check_works(row, 3);
    MPI_Comm_free(&row);
    CHECK_RC(MPI_Cart_sub(cart, (int[]){0, 0}, &row)); /* nothing kept: alone */
    MPI_Comm_size(row, &size);
    CHECK_RC(MPI_Cartdim_get(row, &nd));
    CHECK(size == 1 && nd == 0, "empty sub: size %d, %d dims", size, nd);
    MPI_Comm_free(&row);

    /* a dup keeps the topology */
    MPI_Comm cd;
    CHECK_RC(MPI_Comm_dup(cart, &cd));
    CHECK_RC(MPI_Cart_get(cd, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gp[0] == 1, "dup keeps the grid");
    MPI_Comm_free(&cd);
    MPI_Comm_free(&cart);

    /* fewer points than ranks: the last rank is left out */
    int line = n > 1 ? n - 1 : 1, per = 0;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &per, 1, &cart));
    if (rank >= line) {
        CHECK(cart == MPI_COMM_NULL, "rank outside the grid gets MPI_COMM_NULL");
    } else {
        MPI_Comm_size(cart, &size);
        CHECK(size == line, "line of %d", size);
        cu_check_works(cart, 4);
        MPI_Comm_free(&cart);
    }

    /* bad arguments */
    int big = n + 1, zero = 0, neg = -1;
    cart = MPI_COMM_WORLD;
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &per, 0, &cart), MPI_ERR_DIMS);
    CHECK(cart == MPI_COMM_NULL, "a failed Cart_create left its output set");
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, &zero, &per, 0, &cart), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Cart_create(MPI_COMM_WORLD, -1, &big, &per, 0, &cart), MPI_ERR_DIMS);
    CHECK_ERR(MPI_Cart_create(MPI_COMM_NULL, 1, &line, &per, 0, &cart), MPI_ERR_COMM);
    CHECK_ERR(MPI_Cart_coords(MPI_COMM_WORLD, 0, 1, c), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Cartdim_get(MPI_COMM_SELF, &nd), MPI_ERR_TOPOLOGY);
    CHECK_ERR(MPI_Cart_sub(MPI_COMM_WORLD, &neg, &row), MPI_ERR_TOPOLOGY);
    MPI_Finalize();
    return 0;
}
