/*
 * rma: one-sided communication (MPI_Put, MPI_Get, MPI_Accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap) from rank 0 to rank 1, OSU-style (osu_put_latency, osu_get_latency,
 * osu_acc_latency, osu_fop_latency, osu_cas_latency, osu_put_bw). The window is made once with
 * MPI_Win_allocate (disp_unit 1, the largest size rounded up to a multiple of 64 bytes, on every
 * rank) over MPI_COMM_WORLD; every operation targets displacement 0 of rank 1's window. All
 * transfers are timed on rank 0 with MPI_Wtime.
 *
 * Cases (-c selects some; sizes default 8 B, 4 KiB, 64 KiB, 1 MiB):
 *   put_lat    MPI_Put of SIZE bytes (MPI_CHAR) to rank 1, then MPI_Win_flush(1); time per
 *              put+flush. All iterations of a data point (its warm-up and calibration runs
 *              included) lie in one MPI_Win_lock(MPI_LOCK_SHARED, 1) epoch, opened before and
 *              closed after them, outside the timed loops (as osu_put_latency -w create -s lock).
 *   get_lat    the same with MPI_Get of SIZE bytes.
 *   acc_lat    the same with MPI_Accumulate of SIZE/8 MPI_DOUBLE (at least one) with MPI_SUM; the
 *              size printed is 8 x the count (a size that rounds to one already measured is
 *              skipped).
 *   fop_lat    the same with MPI_Fetch_and_op of one MPI_LONG with MPI_SUM; size 8 only.
 *   cas_lat    the same with MPI_Compare_and_swap of one MPI_LONG; size 8 only. Every swap is
 *              meant to succeed: the compare value is the count of swaps so far, the new value
 *              that count + 1.
 *   put_bw     W (-w, default 64) MPI_Put of SIZE bytes, all from the same buffer to the same
 *              target displacement (as osu_put_bw), then one MPI_Win_flush(1), in the same kind
 *              of epoch; bandwidth = SIZE x W x iterations / time, MB/s = 10^6 bytes/s.
 *   fence_put  MPI_Win_fence(0); rank 0 does MPI_Put of SIZE bytes to rank 1; MPI_Win_fence(0);
 *              time per iteration (fence, put, fence), on rank 0. Every rank calls the fences.
 * In the lock cases ranks other than 0 do nothing while rank 0 times (they wait in the
 * MPI_Bcast of the calibration and in MPI_Barrier); ranks other than 0 and 1 (if any) take part
 * in the fences of fence_put only.
 *
 * Results are checked outside the timed loops: after each data point rank 1 reads its window
 * (in an MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) epoch of its own) and compares it with what
 * rank 0 put or accumulated (every element of acc_lat must equal the number of accumulates of
 * 1.0); rank 0 compares what MPI_Get brought with what rank 1 had written, and each value that
 * MPI_Fetch_and_op and MPI_Compare_and_swap fetch with the one expected. A wrong result is
 * printed on standard error ("rma: WRONG ...") instead of its RESULT line, the remaining data
 * points still run, and the program exits with status 1. An MPI error in a window call prints
 * the case, size and error string and aborts (error handler of the window).
 *
 * Output: RESULT rma <case> <size> <usec> us <iterations>   (put_bw: <MB/s> MB/s)
 */
#include "bench_common.h"

enum { PUT_LAT, GET_LAT, ACC_LAT, FOP_LAT, CAS_LAT, PUT_BW, FENCE_PUT, NCASES };
static const char *const case_names[NCASES] = {"put_lat", "get_lat", "acc_lat",  "fop_lat",
                                               "cas_lat", "put_bw",  "fence_put"};

typedef struct {
    MPI_Win win;
    unsigned char *base; /* this rank's window memory */
    unsigned char *obuf; /* origin buffer (also where MPI_Get lands) */
    double *dbuf;        /* accumulate operands, 1.0 each */
    long size;           /* bytes moved per operation */
    int cse, rank, window;
    long ops; /* operations issued on rank 0 in this data point (all kernel calls) */
    long bad; /* fop/cas: fetched values that differed from the expected ones */
    long bad_i, bad_got, bad_want; /* the first of them */
} rma_ctx;

/* what the window error handler reports */
static const char *cur_case = "setup";
static long cur_size;

static void win_error(MPI_Win *win, int *code, ...) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    (void)win;
    MPI_Error_string(*code, msg, &len);
    fprintf(stderr, "rma: rank %d: MPI error in case %s, size %ld: %s\n", bench_rank(), cur_case,
            cur_size, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static double rma_kernel(void *vctx, long iters) {
    rma_ctx *c = vctx;
    int n = (int)c->size;
    double t0 = MPI_Wtime();
    if (c->cse == FENCE_PUT) {
        for (long i = 0; i < iters; i++) {
            MPI_Win_fence(0, c->win);
            if (c->rank == 0) MPI_Put(c->obuf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, c->win);
            MPI_Win_fence(0, c->win);
        }
        if (c->rank == 0) c->ops += iters;
        return MPI_Wtime() - t0;
    }
    if (c->rank != 0) return MPI_Wtime() - t0;
    switch (c->cse) {
    case PUT_LAT:
        for (long i = 0; i < iters; i++) {
            MPI_Put(c->obuf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, c->win);
            MPI_Win_flush(1, c->win);
        }
        break;
    case GET_LAT:
        for (long i = 0; i < iters; i++) {
            MPI_Get(c->obuf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, c->win);
            MPI_Win_flush(1, c->win);
        }
        break;
    case ACC_LAT: {
        int count = n / 8;
        for (long i = 0; i < iters; i++) {
            MPI_Accumulate(c->dbuf, count, MPI_DOUBLE, 1, 0, count, MPI_DOUBLE, MPI_SUM, c->win);
            MPI_Win_flush(1, c->win);
        }
        break;
    }
    case FOP_LAT: {
        long one = 1, got = -1;
        for (long i = 0; i < iters; i++) {
            MPI_Fetch_and_op(&one, &got, MPI_LONG, 1, 0, MPI_SUM, c->win);
            MPI_Win_flush(1, c->win);
            if (got != c->ops + i && c->bad++ == 0) {
                c->bad_i = c->ops + i;
                c->bad_got = got;
                c->bad_want = c->ops + i;
            }
        }
        break;
    }
    case CAS_LAT: {
        long got = -1;
        for (long i = 0; i < iters; i++) {
            long cmp = c->ops + i, val = cmp + 1;
            MPI_Compare_and_swap(&val, &cmp, &got, MPI_LONG, 1, 0, c->win);
            MPI_Win_flush(1, c->win);
            if (got != cmp && c->bad++ == 0) {
                c->bad_i = cmp;
                c->bad_got = got;
                c->bad_want = cmp;
            }
        }
        break;
    }
    case PUT_BW:
        for (long i = 0; i < iters; i++) {
            for (int w = 0; w < c->window; w++)
                MPI_Put(c->obuf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, c->win);
            MPI_Win_flush(1, c->win);
        }
        break;
    }
    c->ops += iters;
    return MPI_Wtime() - t0;
}

/* Runs `fn` on rank 1 inside an exclusive lock of its own window (the portable way to read or
 * write one's window memory in either memory model), then a barrier. */
static void on_target(rma_ctx *c, void (*fn)(rma_ctx *, void *), void *arg) {
    if (c->rank == 1) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
        fn(c, arg);
        MPI_Win_unlock(1, c->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void fill_target(rma_ctx *c, void *arg) {
    int byte = *(int *)arg;
    if (c->cse == ACC_LAT || c->cse == FOP_LAT || c->cse == CAS_LAT) {
        /* zero operands: the doubles 0.0, the long 0 */
        if (c->cse == ACC_LAT) {
            double *d = (double *)(void *)c->base;
            for (long k = 0; k < c->size / 8; k++) d[k] = 0.0;
        } else {
            long zero = 0;
            memcpy(c->base, &zero, sizeof zero);
        }
        return;
    }
    memset(c->base, byte, (size_t)c->size);
}

/* On rank 1: checks the window after put/acc/fop/cas; prints the first difference. */
typedef struct {
    int tag;   /* byte rank 0 put */
    long ops;  /* operations rank 0 issued */
    int wrong; /* out */
} check_arg;

static void check_target(rma_ctx *c, void *varg) {
    check_arg *a = varg;
    const char *name = case_names[c->cse];
    if (c->cse == ACC_LAT) {
        const double *d = (const double *)(const void *)c->base;
        for (long k = 0; k < c->size / 8; k++) {
            if (d[k] != (double)a->ops) {
                fprintf(stderr,
                        "rma: WRONG %s size %ld: target element %ld is %.17g after %ld "
                        "accumulates of 1.0 to 0.0\n",
                        name, c->size, k, d[k], a->ops);
                a->wrong = 1;
                return;
            }
        }
        return;
    }
    if (c->cse == FOP_LAT || c->cse == CAS_LAT) {
        long v;
        memcpy(&v, c->base, sizeof v);
        if (v != a->ops) {
            fprintf(stderr, "rma: WRONG %s: target value is %ld after %ld %s from 0\n", name, v,
                    a->ops, c->cse == FOP_LAT ? "fetch-and-adds of 1" : "successful swaps");
            a->wrong = 1;
        }
        return;
    }
    for (long k = 0; k < c->size; k++) {
        if (c->base[k] != (unsigned char)a->tag) {
            fprintf(stderr, "rma: WRONG %s size %ld: target byte %ld is 0x%02x, put 0x%02x\n", name,
                    c->size, k, c->base[k], a->tag);
            a->wrong = 1;
            return;
        }
    }
}

/* One data point of one case: set the buffers up, measure, check. Returns 1 if it was wrong. */
static int run_point(const bench_opts *o, rma_ctx *c, int tag, long *iters, double *t) {
    c->ops = c->bad = 0;
    /* the target: zero operands (acc/fop/cas), 0 bytes (put cases), `tag` bytes (get) */
    int fill = c->cse == GET_LAT ? tag : 0;
    on_target(c, fill_target, &fill);
    if (c->rank == 0) memset(c->obuf, c->cse == GET_LAT ? 0 : tag, (size_t)c->size);

    int passive = c->cse != FENCE_PUT;
    if (passive && c->rank == 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
    *t = bench_measure(o, rma_kernel, c, 0, MPI_COMM_WORLD, iters);
    if (passive && c->rank == 0) MPI_Win_unlock(1, c->win);
    if (!passive) MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
    MPI_Barrier(MPI_COMM_WORLD);

    check_arg a = {tag, c->ops, 0};
    MPI_Bcast(&a.ops, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (c->cse != GET_LAT) on_target(c, check_target, &a);
    if (c->rank == 0 && c->cse == GET_LAT) {
        for (long k = 0; k < c->size; k++) {
            if (c->obuf[k] != (unsigned char)tag) {
                fprintf(stderr,
                        "rma: WRONG get_lat size %ld: byte %ld got 0x%02x, target has 0x%02x\n",
                        c->size, k, c->obuf[k], tag);
                a.wrong = 1;
                break;
            }
        }
    }
    if (c->rank == 0 && c->bad) {
        fprintf(stderr,
                "rma: WRONG %s: %ld of %ld fetched values differ; the first (operation %ld) "
                "is %ld, expected %ld\n",
                case_names[c->cse], c->bad, c->ops, c->bad_i, c->bad_got, c->bad_want);
        a.wrong = 1;
    }
    int wrong = 0;
    MPI_Allreduce(&a.wrong, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return wrong;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 8, 1L << 20, 2);
    bench_set_list(&o, "8,4K,64K,1M");
    int window = 64, mask = (1 << NCASES) - 1;
    const char *what = "One-sided latency (us) and bandwidth (MB/s), rank 0 -> rank 1's window: "
                       "put_lat get_lat acc_lat fop_lat cas_lat put_bw fence_put.";
    const char *extra = "  -c LIST    cases, e.g. put_lat,fence_put (default: all)\n"
                        "  -w N       put_bw: puts per flush (default 64)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-w") == 0 && i + 1 < argc) {
            window = atoi(argv[++i]);
            r = window > 0 ? 1 : -1;
        }
        if (r == 0 && strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            mask = bench_parse_cases(argv[++i], case_names, NCASES);
            r = mask > 0 ? 1 : -1;
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }
    if (bench_nprocs() < 2) {
        if (bench_rank() == 0) fprintf(stderr, "rma needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    long maxsize = bench_max_of(sizes, ns);
    if (maxsize < 8) maxsize = 8;
    /* The window: the largest size rounded up to a multiple of 64 bytes, at least 64. With
     * MPICH 4.0.2 (ch4:ucx) on one machine, windows of MPI_Win_allocate under 16 bytes are
     * broken: rank 1's base is the segment + rank 0's size, and a Put of 8 bytes to a window of
     * 8 never shows there, nor does Fetch_and_op see what rank 1 wrote; from 16 bytes it works. */
    long winsize = (maxsize + 63) / 64 * 64;
    rma_ctx c;
    memset(&c, 0, sizeof c);
    c.rank = bench_rank();
    c.window = window;
    c.obuf = bench_alloc((size_t)maxsize);
    c.dbuf = bench_alloc((size_t)maxsize);
    for (long k = 0; k < maxsize / 8; k++) c.dbuf[k] = 1.0;
    MPI_Win_allocate((MPI_Aint)winsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win);
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(win_error, &eh);
    MPI_Win_set_errhandler(c.win, eh);
    /* first touch of every rank's window memory (bench_alloc's reason), in its own epoch */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, c.win);
    memset(c.base, 0x3f, (size_t)winsize);
    MPI_Win_unlock(c.rank, c.win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.rank == 0)
        printf("# rma np=%d window=%d target=%.0fms\n", bench_nprocs(), window, o.target_s * 1e3);

    int wrong = 0, point = 0;
    for (int cse = 0; cse < NCASES; cse++) {
        if (!(mask & (1 << cse))) continue;
        c.cse = cse;
        cur_case = case_names[cse];
        long last = -1;
        for (int k = 0; k < ns; k++) {
            long size = sizes[k];
            if (cse == ACC_LAT) size = size < 8 ? 8 : size / 8 * 8;
            if (cse == FOP_LAT || cse == CAS_LAT) size = 8;
            if (size == last) continue;
            last = size;
            c.size = cur_size = size;
            int tag = 1 + point++ % 250; /* never 0 (the cleared target) */
            long iters;
            double t;
            if (run_point(&o, &c, tag, &iters, &t)) {
                wrong = 1;
                continue;
            }
            if (cse == PUT_BW)
                bench_result("rma", cur_case, size, (double)size * window * (double)iters / t / 1e6,
                             "MB/s", iters);
            else
                bench_result("rma", cur_case, size, t * 1e6 / (double)iters, "us", iters);
        }
    }
    cur_case = "teardown";
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&c.win);
    MPI_Errhandler_free(&eh);
    free(c.obuf);
    free(c.dbuf);
    MPI_Finalize();
    return wrong;
}
