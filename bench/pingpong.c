/*
 * pingpong: point-to-point latency. Rank 0 sends a message of SIZE bytes (MPI_CHAR) to rank 1
 * with MPI_Send, rank 1 returns it with MPI_Send, and rank 0 times many such round trips with
 * MPI_Wtime. The reported value is half the average round-trip time in microseconds, as in
 * osu_latency. Default sizes are 1 B, 4 KiB, 64 KiB and 1 MiB; `-s 2 -m 1 -M 1M` gives every power
 * of two. Ranks other than 0 and 1 (if any) stay idle.
 *
 * Output: RESULT pingpong latency <size> <usec> us <iterations>
 */
#include "bench_common.h"

typedef struct {
    char *buf;
    long size;
    int rank;
} pp_ctx;

static double pp_kernel(void *vctx, long iters) {
    pp_ctx *c = vctx;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    if (c->rank == 0) {
        for (long i = 0; i < iters; i++) {
            MPI_Send(c->buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(c->buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == 1) {
        for (long i = 0; i < iters; i++) {
            MPI_Recv(c->buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(c->buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 1, 1L << 20, 2);
    bench_set_list(&o, "1,4K,64K,1M");
    const char *what = "Ping-pong latency between ranks 0 and 1 (half round trip, microseconds).";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, NULL, 0);
        if (r <= 0) bench_usage_exit(argv[0], what, NULL, 2);
    }
    if (bench_nprocs() < 2) {
        if (bench_rank() == 0) fprintf(stderr, "pingpong needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    pp_ctx c = {bench_alloc((size_t)bench_max_of(sizes, ns)), 0, bench_rank()};
    if (c.rank == 0) printf("# pingpong np=%d target=%.0fms\n", bench_nprocs(), o.target_s * 1e3);

    for (int k = 0; k < ns; k++) {
        c.size = sizes[k];
        long iters;
        double t = bench_measure(&o, pp_kernel, &c, 0, MPI_COMM_WORLD, &iters);
        bench_result("pingpong", "latency", c.size, t * 1e6 / (2.0 * (double)iters), "us", iters);
    }
    free(c.buf);
    MPI_Finalize();
    return 0;
}
