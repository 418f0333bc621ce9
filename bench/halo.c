/*
 * halo: every rank exchanges SIZE bytes with each of its neighbours, as a stencil code does
 * once per time step. Case `ring`: a periodic line, two neighbours (MPI_Irecv, MPI_Isend,
 * MPI_Waitall). Case `grid`: a periodic 2-D grid from MPI_Dims_create, four neighbours, the
 * same calls. Case `neighbor`: the same grid with MPI_Neighbor_alltoall on a Cartesian
 * communicator. The value is the time per exchange in microseconds (every rank takes part in
 * every exchange; rank 0's time is reported). With more ranks than cores, every rank copies
 * while others wait for the core: that is what the large sizes show.
 *
 * Output: RESULT halo ring|grid|neighbor <size> <usec> us <iterations>
 */
#include "bench_common.h"

enum { CASE_RING, CASE_GRID, CASE_NEIGHBOR, NCASES };

typedef struct {
    char *sbuf, *rbuf;
    long size;
    int which;
    int nbr[4]; /* to: -x, +x, -y, +y (ring: -x, +x) */
    int nn;     /* neighbours used by the current case */
    MPI_Comm cart;
} halo_ctx;

static double halo_kernel(void *vctx, long iters) {
    halo_ctx *c = vctx;
    int sz = (int)c->size;
    MPI_Request req[8];
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (c->which == CASE_NEIGHBOR) {
            MPI_Neighbor_alltoall(c->sbuf, sz, MPI_CHAR, c->rbuf, sz, MPI_CHAR, c->cart);
            continue;
        }
        /* Direction d goes to nbr[d] with tag d; what arrives with tag d came from the
         * opposite neighbour (d ^ 1), so equal neighbours (2 ranks in a dimension) still
         * match one to one. */
        for (int d = 0; d < c->nn; d++)
            MPI_Irecv(c->rbuf + (long)d * c->size, sz, MPI_CHAR, c->nbr[d ^ 1], d, c->cart,
                      &req[d]);
        for (int d = 0; d < c->nn; d++)
            MPI_Isend(c->sbuf + (long)d * c->size, sz, MPI_CHAR, c->nbr[d], d, c->cart,
                      &req[c->nn + d]);
        MPI_Waitall(2 * c->nn, req, MPI_STATUSES_IGNORE);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 1, 4L << 20, 4);
    const char *what = "Halo exchange with each neighbour on a periodic line (ring) or 2-D grid "
                       "(grid: MPI_Isend/MPI_Irecv; neighbor: MPI_Neighbor_alltoall): "
                       "microseconds per exchange.";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, NULL, 0);
        if (r <= 0) bench_usage_exit(argv[0], what, NULL, 2);
    }
    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    long max = bench_max_of(sizes, ns);
    halo_ctx c = {
        bench_alloc((size_t)max * 4), bench_alloc((size_t)max * 4), 0, 0, {0}, 0, MPI_COMM_NULL};
    int n = bench_nprocs(), dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(n, 2, dims);
    if (bench_rank() == 0)
        printf("# halo np=%d grid=%dx%d target=%.0fms\n", n, dims[0], dims[1], o.target_s * 1e3);
    MPI_Comm line, grid;
    int one = n;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &one, periods, 0, &line);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    static const char *names[] = {"ring", "grid", "neighbor"};
    for (int t = 0; t < NCASES; t++) {
        c.which = t;
        c.cart = t == CASE_RING ? line : grid;
        c.nn = t == CASE_RING ? 2 : 4;
        for (int dim = 0; dim < c.nn / 2; dim++)
            MPI_Cart_shift(c.cart, dim, 1, &c.nbr[2 * dim], &c.nbr[2 * dim + 1]);
        for (int k = 0; k < ns; k++) {
            c.size = sizes[k];
            long iters;
            double s = bench_measure(&o, halo_kernel, &c, 0, c.cart, &iters);
            bench_result("halo", names[t], c.size, s * 1e6 / (double)iters, "us", iters);
        }
    }
    MPI_Comm_free(&line);
    MPI_Comm_free(&grid);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}
