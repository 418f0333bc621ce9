/*
 * comm_create: cost of communicator management, in microseconds per pair of calls:
 *   dup_free           MPI_Comm_dup(MPI_COMM_WORLD) + MPI_Comm_free, on all ranks;
 *   dup_coll_free      the same with one MPI_Allreduce of a double on the new communicator in
 *                      between (a communicator made for one collective, as a library that dups
 *                      its caller's communicator per call makes them);
 *   split_free         MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank) + MPI_Comm_free;
 *   create_group_free  MPI_Comm_create_group + MPI_Comm_free on the group of all ranks except
 *                      rank 0 (with 2 ranks: rank 1 alone), called only by the members, which is
 *                      what MPI_Comm_create_group allows; timed on rank 1.
 * Then, with MPI_ERRORS_RETURN set on MPI_COMM_WORLD, it keeps MPI_Comm_dup'ing MPI_COMM_WORLD
 * without freeing until a dup fails or the cap (-C, default 200000) is reached, and reports the
 * number of live communicators reached (max_live_comms, unit "comms"; the cap if nothing failed)
 * and the average time per dup during that growth (dup_live_avg; includes a small MPI_Allreduce
 * per dup that keeps the ranks agreed on when to stop). If neither happens within the time limit
 * (-T, default 20 s; dups are slow when ranks outnumber cores), max_live_comms is not reported,
 * as the count would only be a lower bound; a '#' line gives it. The size field is always 0.
 *
 * Output: RESULT comm_create <case> 0 <value> {us|comms} <iterations>
 */
#include "bench_common.h"

typedef struct {
    int rank;
    MPI_Group group; /* all ranks except 0; MPI_GROUP_NULL on non-members */
} cc_ctx;

static double dup_kernel(void *vctx, long iters) {
    (void)vctx;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
    }
    return MPI_Wtime() - t0;
}

static double dup_coll_kernel(void *vctx, long iters) {
    (void)vctx;
    double x = 1, y = 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
        MPI_Comm_free(&c);
    }
    if (iters > 0 && y != bench_nprocs()) {
        fprintf(stderr, "dup_coll_free: MPI_Allreduce gave %g, expected %d\n", y, bench_nprocs());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return MPI_Wtime() - t0;
}

static double split_kernel(void *vctx, long iters) {
    cc_ctx *x = vctx;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, x->rank % 2, x->rank, &c);
        MPI_Comm_free(&c);
    }
    return MPI_Wtime() - t0;
}

static double create_group_kernel(void *vctx, long iters) {
    cc_ctx *x = vctx;
    if (x->group == MPI_GROUP_NULL) return 0;
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Comm c;
        MPI_Comm_create_group(MPI_COMM_WORLD, x->group, 0, &c);
        MPI_Comm_free(&c);
    }
    return MPI_Wtime() - t0;
}

/* Times one case; `root` is the rank whose clock counts (it must take part). */
static void measure(const bench_opts *o, const char *name, bench_kernel fn, cc_ctx *x, int root) {
    long iters;
    double t = bench_measure(o, fn, x, root, MPI_COMM_WORLD, &iters);
    MPI_Bcast(&t, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);
    bench_result("comm_create", name, 0, t * 1e6 / (double)iters, "us", iters);
}

static void max_live(long cap, double tlimit) {
    MPI_Comm *comms = bench_alloc(sizeof(MPI_Comm) * (size_t)cap);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    long live = 0;
    int rc = MPI_SUCCESS, all[2] = {1, 1}; /* all ranks' dups succeeded; all within time */
    double t0 = MPI_Wtime();
    while (live < cap) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[live]);
        int mine[2] = {rc == MPI_SUCCESS, MPI_Wtime() - t0 < tlimit};
        if (mine[0]) live++;
        if (MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
            all[0] = 0;
        if (!all[0] || !all[1]) break;
    }
    double t = MPI_Wtime() - t0;
    long attempts = live + (all[0] ? 0 : 1);
    long min_live = live;
    MPI_Allreduce(&live, &min_live, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (bench_rank() == 0) {
        if (!all[0]) {
            char msg[MPI_MAX_ERROR_STRING] = "(error on another rank)";
            int len = 0;
            if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
            for (char *p = msg; *p; p++)
                if (*p == '\n') *p = ' '; /* keep it one comment line */
            printf("# max_live_comms: MPI_Comm_dup failed after %ld live communicators: %s\n",
                   min_live, msg);
        } else if (!all[1]) {
            printf("# max_live_comms: not reported, time limit of %.0f s reached with %ld live "
                   "communicators and no error\n",
                   tlimit, min_live);
        } else {
            printf("# max_live_comms: cap of %ld reached without error\n", cap);
        }
    }
    bench_result("comm_create", "dup_live_avg", 0, attempts ? t * 1e6 / (double)attempts : 0, "us",
                 attempts);
    if (!all[0] || all[1]) /* exact count: a failure or the cap */
        bench_result("comm_create", "max_live_comms", 0, (double)min_live, "comms", attempts);
    while (live > 0) MPI_Comm_free(&comms[--live]);
    free(comms);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 0, 0, 2);
    long cap = 200000;
    double tlimit = 20;
    const char *what = "Communicator dup/split/create_group cost and the live-communicator limit.";
    const char *extra =
        "  -C N       cap for the live-communicator count (default 200000, 0 = skip)\n"
        "  -T SEC     time limit for the live-communicator count (default 20)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-C") == 0 && i + 1 < argc) {
            cap = atol(argv[++i]);
            r = cap >= 0 ? 1 : -1;
        }
        if (r == 0 && strcmp(argv[i], "-T") == 0 && i + 1 < argc) {
            tlimit = atof(argv[++i]);
            r = tlimit > 0 ? 1 : -1;
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }
    int np = bench_nprocs();
    if (np < 2) {
        if (bench_rank() == 0) fprintf(stderr, "comm_create needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }

    cc_ctx x = {bench_rank(), MPI_GROUP_NULL};
    MPI_Group world, rest;
    int zero = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &zero, &rest);
    MPI_Group_free(&world);
    if (x.rank != 0) x.group = rest;
    if (x.rank == 0)
        printf("# comm_create np=%d create_group members=ranks 1..%d target=%.0fms\n", np, np - 1,
               o.target_s * 1e3);

    measure(&o, "dup_free", dup_kernel, &x, 0);
    measure(&o, "dup_coll_free", dup_coll_kernel, &x, 0);
    measure(&o, "split_free", split_kernel, &x, 0);
    measure(&o, "create_group_free", create_group_kernel, &x, 1);
    MPI_Group_free(&rest);
    if (cap > 0) max_live(cap, tlimit);
    MPI_Finalize();
    return 0;
}
