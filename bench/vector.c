/*
 * vector: cost of non-contiguous data. A matrix of doubles with ROWLEN columns (default 16, i.e.
 * rows 128 bytes apart) lives on ranks 0 and 1; one column of it is described by
 * MPI_Type_vector(rows, 1, ROWLEN, MPI_DOUBLE) and ping-ponged: rank 0 sends the column, rank 1
 * receives it into the same column layout and sends it back. The payload is rows * 8 bytes
 * (from 8 B, one double, to 4 MiB by default; sizes are rounded down to whole doubles). The
 * "contig" case ping-pongs the same payload as `rows` contiguous MPI_DOUBLEs for comparison, so
 * column/contig shows the datatype (pack/unpack) overhead. For each case and size, two lines:
 * latency (half round trip, microseconds) and bandwidth (payload / latency, GB/s = 10^9 B/s).
 *
 * Output: RESULT vector {column|contig} <payload_bytes> <usec> us <iterations>
 *         RESULT vector {column|contig} <payload_bytes> <GB/s> GB/s <iterations>
 */
#include "bench_common.h"

typedef struct {
    double *buf;
    int count, rank;
    MPI_Datatype type; /* column type (count 1) or MPI_DOUBLE (count rows) */
} vec_ctx;

static double vec_kernel(void *vctx, long iters) {
    vec_ctx *c = vctx;
    double t0 = MPI_Wtime();
    if (c->rank == 0) {
        for (long i = 0; i < iters; i++) {
            MPI_Send(c->buf, c->count, c->type, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(c->buf, c->count, c->type, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (c->rank == 1) {
        for (long i = 0; i < iters; i++) {
            MPI_Recv(c->buf, c->count, c->type, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(c->buf, c->count, c->type, 0, 7, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

static void measure(const bench_opts *o, vec_ctx *c, const char *name, long payload) {
    long iters;
    double t = bench_measure(o, vec_kernel, c, 0, MPI_COMM_WORLD, &iters);
    double lat = t / (2.0 * (double)iters);
    bench_result("vector", name, payload, lat * 1e6, "us", iters);
    bench_result("vector", name, payload, lat > 0 ? (double)payload / lat / 1e9 : 0, "GB/s", iters);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 16, 4L << 20, 4); /* 16 B, 64 B, ..., 1 MiB, 4 MiB */
    int rowlen = 16;
    const char *what =
        "Ping-pong of a matrix column (MPI_Type_vector) vs the same contiguous payload.";
    const char *extra = "  -r N       row length in doubles = vector stride (default 16)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            rowlen = atoi(argv[++i]);
            r = rowlen > 0 ? 1 : -1;
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }
    if (bench_nprocs() < 2) {
        if (bench_rank() == 0) fprintf(stderr, "vector needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    long maxrows = bench_max_of(sizes, ns) / 8;
    if (maxrows < 1) maxrows = 1;
    vec_ctx c = {bench_alloc(sizeof(double) * (size_t)maxrows * (size_t)rowlen), 0, bench_rank(),
                 MPI_DATATYPE_NULL};
    if (c.rank == 0)
        printf("# vector np=%d rowlen=%d doubles target=%.0fms\n", bench_nprocs(), rowlen,
               o.target_s * 1e3);

    long prev_rows = 0;
    for (int k = 0; k < ns; k++) {
        long rows = sizes[k] / 8;
        if (rows < 1) rows = 1;
        if (rows == prev_rows) continue; /* several requested sizes round to the same payload */
        prev_rows = rows;
        long payload = rows * 8;

        MPI_Datatype column;
        MPI_Type_vector((int)rows, 1, rowlen, MPI_DOUBLE, &column);
        MPI_Type_commit(&column);
        c.type = column;
        c.count = 1;
        measure(&o, &c, "column", payload);
        MPI_Type_free(&column);

        c.type = MPI_DOUBLE;
        c.count = (int)rows;
        measure(&o, &c, "contig", payload);
    }
    free(c.buf);
    MPI_Finalize();
    return 0;
}
