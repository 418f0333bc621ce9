/*
 * stream_bw: streaming (unidirectional) bandwidth, like osu_bw. In each iteration rank 0 posts a
 * window of W (default 64) MPI_Isend of SIZE bytes to rank 1, rank 1 posts the W matching
 * MPI_Irecv; both sides MPI_Waitall, then rank 1 sends a 4-byte acknowledgement that rank 0
 * receives before the next iteration. All messages of a window use the same buffer, as osu_bw
 * does. Bandwidth = SIZE * W * iterations / elapsed time on rank 0, in GB/s (10^9 bytes/s).
 * Default sizes are 4 KiB, 64 KiB and 1 MiB. Ranks other than 0 and 1 (if any) stay idle.
 *
 * Output: RESULT stream_bw bandwidth <size> <GB/s> GB/s <iterations>
 */
#include "bench_common.h"

typedef struct {
    char *sbuf, *rbuf;
    long size;
    int window, rank;
    MPI_Request *req;
    MPI_Status *st; /* real array: MPICH's MPI_STATUSES_IGNORE upsets gcc 12 -Werror */
} bw_ctx;

static double bw_kernel(void *vctx, long iters) {
    bw_ctx *c = vctx;
    int n = (int)c->size, ack = 0;
    double t0 = MPI_Wtime();
    if (c->rank == 0) {
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < c->window; w++)
                MPI_Isend(c->sbuf, n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &c->req[w]);
            MPI_Waitall(c->window, c->req, c->st);
            MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == 1) {
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < c->window; w++)
                MPI_Irecv(c->rbuf, n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &c->req[w]);
            MPI_Waitall(c->window, c->req, c->st);
            MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 4096, 1L << 20, 16);
    int window = 64;
    const char *what = "Streaming bandwidth rank 0 -> rank 1 with a window of MPI_Isend (GB/s).";
    const char *extra = "  -w N       window: messages in flight per iteration (default 64)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-w") == 0 && i + 1 < argc) {
            window = atoi(argv[++i]);
            r = window > 0 ? 1 : -1;
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }
    if (bench_nprocs() < 2) {
        if (bench_rank() == 0) fprintf(stderr, "stream_bw needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    size_t maxsize = (size_t)bench_max_of(sizes, ns);
    bw_ctx c = {bench_alloc(maxsize),
                bench_alloc(maxsize),
                0,
                window,
                bench_rank(),
                bench_alloc(sizeof(MPI_Request) * (size_t)window),
                bench_alloc(sizeof(MPI_Status) * (size_t)window)};
    if (c.rank == 0)
        printf("# stream_bw np=%d window=%d target=%.0fms\n", bench_nprocs(), window,
               o.target_s * 1e3);

    for (int k = 0; k < ns; k++) {
        c.size = sizes[k];
        long iters;
        double t = bench_measure(&o, bw_kernel, &c, 0, MPI_COMM_WORLD, &iters);
        double bytes = (double)c.size * (double)window * (double)iters;
        bench_result("stream_bw", "bandwidth", c.size, t > 0 ? bytes / t / 1e9 : 0, "GB/s", iters);
    }
    free(c.sbuf);
    free(c.rbuf);
    free(c.req);
    free(c.st);
    MPI_Finalize();
    return 0;
}
