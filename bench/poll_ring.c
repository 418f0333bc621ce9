/*
 * poll_ring: a message of SIZE bytes goes round all ranks (rank r sends to r+1 with MPI_Send),
 * and each rank waits for it by polling instead of blocking, as programs that overlap work with
 * communication do (HPL's look-ahead, for one): case `iprobe` calls MPI_Iprobe until the message
 * is there and then MPI_Recv; case `test` posts MPI_Irecv and calls MPI_Test until it
 * completes. The value is the time per hop in microseconds. With more ranks than cores, a
 * polling rank can keep the core that the rank it waits for needs: that is what this measures.
 *
 * Output: RESULT poll_ring iprobe|test <size> <usec> us <iterations>
 */
#include "bench_common.h"

typedef struct {
    char *buf;
    long size;
    int rank, n, use_test;
} ring_ctx;

static void ring_wait(ring_ctx *c, int from) {
    int flag = 0, sz = (int)c->size;
    if (c->use_test) {
        MPI_Request r;
        MPI_Irecv(c->buf, sz, MPI_CHAR, from, 3, MPI_COMM_WORLD, &r);
        while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    } else {
        while (!flag) MPI_Iprobe(from, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(c->buf, sz, MPI_CHAR, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static double ring_kernel(void *vctx, long iters) {
    ring_ctx *c = vctx;
    int next = (c->rank + 1) % c->n, prev = (c->rank + c->n - 1) % c->n, sz = (int)c->size;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (c->rank == 0) {
            MPI_Send(c->buf, sz, MPI_CHAR, next, 3, MPI_COMM_WORLD);
            ring_wait(c, prev);
        } else {
            ring_wait(c, prev);
            MPI_Send(c->buf, sz, MPI_CHAR, next, 3, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 1, 1L << 20, 2);
    bench_set_list(&o, "1,4K");
    const char *what = "A message passed round all ranks, each waiting for it by polling "
                       "(MPI_Iprobe, or MPI_Test on MPI_Irecv): microseconds per hop.";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, NULL, 0);
        if (r <= 0) bench_usage_exit(argv[0], what, NULL, 2);
    }
    if (bench_nprocs() < 2) {
        if (bench_rank() == 0) fprintf(stderr, "poll_ring needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    ring_ctx c = {bench_alloc((size_t)bench_max_of(sizes, ns)), 0, bench_rank(), bench_nprocs(), 0};
    if (c.rank == 0) printf("# poll_ring np=%d target=%.0fms\n", c.n, o.target_s * 1e3);
    static const char *cases[] = {"iprobe", "test"};
    for (int t = 0; t < 2; t++) {
        c.use_test = t;
        for (int k = 0; k < ns; k++) {
            c.size = sizes[k];
            long iters;
            double s = bench_measure(&o, ring_kernel, &c, 0, MPI_COMM_WORLD, &iters);
            bench_result("poll_ring", cases[t], c.size, s * 1e6 / ((double)iters * c.n), "us",
                         iters);
        }
    }
    free(c.buf);
    MPI_Finalize();
    return 0;
}
