/*
 * coll: OSU-style latency of every MPI collective on MPI_COMM_WORLD: Barrier, Bcast, Reduce,
 * Allreduce, Gather, Gatherv, Scatter, Scatterv, Allgather, Allgatherv, Alltoall, Alltoallv,
 * Reduce_scatter, Reduce_scatter_block, Scan, Exscan; and sixteen nonblocking ones, each
 * started and at once waited for (Ibarrier, Ibcast, Iallreduce, Iallgather, Ialltoall, Ireduce,
 * Ireduce_scatter_block, Igather, Iscatter, Iallgatherv, Ireduce_scatter, Igatherv, Iscatterv,
 * Ialltoallv, Iscan, Iexscan: what a program that overlaps nothing pays, OSU's "pure communication
 * latency" of osu_i*). As in the OSU micro-benchmarks, each call is timed on its own (MPI_Wtime
 * before and after) and followed by an MPI_Barrier that is not timed (Barrier itself is timed back
 * to back). Sizes follow OSU: the per-rank message in bytes (Bcast: the broadcast buffer;
 * Gather/Scatter/Allgather: what one rank contributes/receives; Alltoall: what one rank sends to
 * each peer; the v-variants use equal counts). Data-movement collectives use MPI_CHAR; reductions
 * use MPI_FLOAT with MPI_SUM and count = size/4 (at least one element, so they start at 4 B):
 * Reduce/Allreduce/Scan/Exscan reduce size bytes, Reduce_scatter reduces a size-byte vector split
 * as evenly as possible over the ranks (OSU's scheme), and Reduce_scatter_block gives each rank
 * max(1, size/4/np) elements (so it starts at 4*np B). Sizes that round to an already-measured size
 * are skipped; printed sizes are the real ones. Reported value: average over ranks of each rank's
 * mean latency (OSU's default "Avg Latency"), in microseconds; with -f also the maximum over ranks
 * (case <Name>_max); with -l also the time per iteration of the whole loop, the untimed barrier
 * included (case <Name>_loop, average over ranks), which shows how much of a collective's cost a
 * rank pays in the following barrier instead. Roots are rank 0.
 *
 * Persistent collectives (MPI 4.0; Open MPI 4.1's MPIX_ extension): with -p, each selected
 * nonblocking collective is measured again as a persistent request (MPI_Iallreduce ->
 * MPI_Allreduce_init, case Allreduce_init), made once per size and then started and waited for
 * in place of the call.
 *
 * Output: RESULT coll <Collective> <size> <usec> us <iterations>
 */
#include "bench_common.h"
#include <ctype.h>

#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#define PINIT(f) MPIX_##f##_init
#elif MPI_VERSION >= 4 || defined(COHORT)
#define PINIT(f) MPI_##f##_init
#endif

enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLGATHER,
    ALLGATHERV,
    ALLTOALL,
    ALLTOALLV,
    REDUCE_SCATTER,
    REDUCE_SCATTER_BLOCK,
    SCAN,
    EXSCAN,
    IBARRIER,
    IBCAST,
    IALLREDUCE,
    IALLGATHER,
    IALLTOALL,
    IREDUCE,
    IREDUCE_SCATTER_BLOCK,
    IGATHER,
    ISCATTER,
    IALLGATHERV,
    IREDUCE_SCATTER,
    IGATHERV,
    ISCATTERV,
    IALLTOALLV,
    ISCAN,
    IEXSCAN,
    NCOLL
};

static const char *const coll_names[NCOLL] = {"Barrier",
                                              "Bcast",
                                              "Reduce",
                                              "Allreduce",
                                              "Gather",
                                              "Gatherv",
                                              "Scatter",
                                              "Scatterv",
                                              "Allgather",
                                              "Allgatherv",
                                              "Alltoall",
                                              "Alltoallv",
                                              "Reduce_scatter",
                                              "Reduce_scatter_block",
                                              "Scan",
                                              "Exscan",
                                              "Ibarrier",
                                              "Ibcast",
                                              "Iallreduce",
                                              "Iallgather",
                                              "Ialltoall",
                                              "Ireduce",
                                              "Ireduce_scatter_block",
                                              "Igather",
                                              "Iscatter",
                                              "Iallgatherv",
                                              "Ireduce_scatter",
                                              "Igatherv",
                                              "Iscatterv",
                                              "Ialltoallv",
                                              "Iscan",
                                              "Iexscan"};

typedef struct {
    int which, np, rank;
    int count; /* elements: MPI_CHAR for data movement, MPI_FLOAT for reductions */
    char *sbuf, *rbuf;
    int *counts, *displs;
    double acc;       /* time spent inside the collective on this rank */
    MPI_Request preq; /* -p: the persistent request measured, else MPI_REQUEST_NULL */
} coll_ctx;

static void coll_once(coll_ctx *c) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request rq = MPI_REQUEST_NULL;
    int n = c->count;
    if (c->preq != MPI_REQUEST_NULL) {
        MPI_Start(&c->preq);
        MPI_Wait(&c->preq, MPI_STATUS_IGNORE);
        return;
    }
    switch (c->which) {
    case BARRIER: MPI_Barrier(w); break;
    case BCAST: MPI_Bcast(c->sbuf, n, MPI_CHAR, 0, w); break;
    case REDUCE: MPI_Reduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, 0, w); break;
    case ALLREDUCE: MPI_Allreduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w); break;
    case GATHER: MPI_Gather(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w); break;
    case GATHERV:
        MPI_Gatherv(c->sbuf, n, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, 0, w);
        break;
    case SCATTER: MPI_Scatter(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w); break;
    case SCATTERV:
        MPI_Scatterv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w);
        break;
    case ALLGATHER: MPI_Allgather(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, w); break;
    case ALLGATHERV:
        MPI_Allgatherv(c->sbuf, n, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, w);
        break;
    case ALLTOALL: MPI_Alltoall(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, w); break;
    case ALLTOALLV:
        MPI_Alltoallv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, c->counts, c->displs,
                      MPI_CHAR, w);
        break;
    case REDUCE_SCATTER:
        MPI_Reduce_scatter(c->sbuf, c->rbuf, c->counts, MPI_FLOAT, MPI_SUM, w);
        break;
    case REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w);
        break;
    case SCAN: MPI_Scan(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w); break;
    case EXSCAN: MPI_Exscan(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w); break;
    case IBARRIER: MPI_Ibarrier(w, &rq); break;
    case IBCAST: MPI_Ibcast(c->sbuf, n, MPI_CHAR, 0, w, &rq); break;
    case IALLREDUCE: MPI_Iallreduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w, &rq); break;
    case IALLGATHER: MPI_Iallgather(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, w, &rq); break;
    case IALLTOALL: MPI_Ialltoall(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, w, &rq); break;
    case IREDUCE: MPI_Ireduce(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, 0, w, &rq); break;
    case IREDUCE_SCATTER_BLOCK:
        MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w, &rq);
        break;
    case IGATHER: MPI_Igather(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w, &rq); break;
    case ISCATTER: MPI_Iscatter(c->sbuf, n, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w, &rq); break;
    case IALLGATHERV:
        MPI_Iallgatherv(c->sbuf, n, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, w, &rq);
        break;
    case IREDUCE_SCATTER:
        MPI_Ireduce_scatter(c->sbuf, c->rbuf, c->counts, MPI_FLOAT, MPI_SUM, w, &rq);
        break;
    case IGATHERV:
        MPI_Igatherv(c->sbuf, n, MPI_CHAR, c->rbuf, c->counts, c->displs, MPI_CHAR, 0, w, &rq);
        break;
    case ISCATTERV:
        MPI_Iscatterv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, n, MPI_CHAR, 0, w, &rq);
        break;
    case IALLTOALLV:
        MPI_Ialltoallv(c->sbuf, c->counts, c->displs, MPI_CHAR, c->rbuf, c->counts, c->displs,
                       MPI_CHAR, w, &rq);
        break;
    case ISCAN: MPI_Iscan(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w, &rq); break;
    case IEXSCAN: MPI_Iexscan(c->sbuf, c->rbuf, n, MPI_FLOAT, MPI_SUM, w, &rq); break;
    }
    if (rq != MPI_REQUEST_NULL) MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

/* The persistent request for nonblocking case c->which on w, with coll_once's arguments. */
static MPI_Request persist_init(coll_ctx *c, MPI_Comm w) {
    MPI_Request rq = MPI_REQUEST_NULL;
#ifdef PINIT
    MPI_Info no = MPI_INFO_NULL;
    int n = c->count;
    char *sb = c->sbuf, *rb = c->rbuf;
    int *cn = c->counts, *ds = c->displs;
    switch (c->which) {
    case IBARRIER: PINIT(Barrier)(w, no, &rq); break;
    case IBCAST: PINIT(Bcast)(sb, n, MPI_CHAR, 0, w, no, &rq); break;
    case IALLREDUCE: PINIT(Allreduce)(sb, rb, n, MPI_FLOAT, MPI_SUM, w, no, &rq); break;
    case IALLGATHER: PINIT(Allgather)(sb, n, MPI_CHAR, rb, n, MPI_CHAR, w, no, &rq); break;
    case IALLTOALL: PINIT(Alltoall)(sb, n, MPI_CHAR, rb, n, MPI_CHAR, w, no, &rq); break;
    case IREDUCE: PINIT(Reduce)(sb, rb, n, MPI_FLOAT, MPI_SUM, 0, w, no, &rq); break;
    case IREDUCE_SCATTER_BLOCK:
        PINIT(Reduce_scatter_block)(sb, rb, n, MPI_FLOAT, MPI_SUM, w, no, &rq);
        break;
    case IGATHER: PINIT(Gather)(sb, n, MPI_CHAR, rb, n, MPI_CHAR, 0, w, no, &rq); break;
    case ISCATTER: PINIT(Scatter)(sb, n, MPI_CHAR, rb, n, MPI_CHAR, 0, w, no, &rq); break;
    case IALLGATHERV: PINIT(Allgatherv)(sb, n, MPI_CHAR, rb, cn, ds, MPI_CHAR, w, no, &rq); break;
    case IREDUCE_SCATTER: PINIT(Reduce_scatter)(sb, rb, cn, MPI_FLOAT, MPI_SUM, w, no, &rq); break;
    case IGATHERV: PINIT(Gatherv)(sb, n, MPI_CHAR, rb, cn, ds, MPI_CHAR, 0, w, no, &rq); break;
    case ISCATTERV: PINIT(Scatterv)(sb, cn, ds, MPI_CHAR, rb, n, MPI_CHAR, 0, w, no, &rq); break;
    case IALLTOALLV:
        PINIT(Alltoallv)(sb, cn, ds, MPI_CHAR, rb, cn, ds, MPI_CHAR, w, no, &rq);
        break;
    case ISCAN: PINIT(Scan)(sb, rb, n, MPI_FLOAT, MPI_SUM, w, no, &rq); break;
    case IEXSCAN: PINIT(Exscan)(sb, rb, n, MPI_FLOAT, MPI_SUM, w, no, &rq); break;
    }
#else
    (void)c, (void)w;
#endif
    return rq;
}

/* OSU loop: time each call, untimed barrier in between. Returns the loop's wall time. */
static double coll_kernel(void *vctx, long iters) {
    coll_ctx *c = vctx;
    c->acc = 0;
    double t0 = MPI_Wtime();
    if (c->which == BARRIER) {
        for (long i = 0; i < iters; i++) MPI_Barrier(MPI_COMM_WORLD);
        c->acc = MPI_Wtime() - t0;
        return c->acc;
    }
    for (long i = 0; i < iters; i++) {
        double t = MPI_Wtime();
        coll_once(c);
        c->acc += MPI_Wtime() - t;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

/*
 * Sets counts for `size` requested bytes; returns the real size in bytes that will be reported.
 */
static long coll_setup(coll_ctx *c, long size) {
    int np = c->np;
    long nf = size / 4 > 0 ? size / 4 : 1; /* float elements for reductions */
    switch (c->which) {
    case BARRIER:
    case IBARRIER: c->count = 0; return 0;
    case REDUCE:
    case ALLREDUCE:
    case IALLREDUCE:
    case IREDUCE:
    case SCAN:
    case EXSCAN:
    case ISCAN:
    case IEXSCAN: c->count = (int)nf; return nf * 4;
    case REDUCE_SCATTER:
    case IREDUCE_SCATTER:
        for (int i = 0; i < np; i++) c->counts[i] = (int)(nf / np + (i < nf % np ? 1 : 0));
        return nf * 4;
    case REDUCE_SCATTER_BLOCK:
    case IREDUCE_SCATTER_BLOCK:
        c->count = (int)(nf / np > 0 ? nf / np : 1);
        return (long)c->count * np * 4;
    default:
        c->count = (int)size;
        for (int i = 0; i < np; i++) {
            c->counts[i] = (int)size;
            c->displs[i] = (int)(size * i);
        }
        return size;
    }
}

static int coll_lookup(const char *name) {
    for (int k = 0; k < NCOLL; k++) {
        const char *a = name, *b = coll_names[k];
        while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b)) a++, b++;
        if (*a == '\0' && *b == '\0') return k;
    }
    return -1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 1, 4L << 20, 4);
    int selected[NCOLL], any_selected = 0, full = 0, loop = 0, persist = 0;
    for (int k = 0; k < NCOLL; k++) selected[k] = 0;
    const char *what = "OSU-style latency of every collective (average over ranks, microseconds).";
    const char *extra =
        "  -c LIST    comma-separated collectives (case-insensitive), default all:\n"
        "             Barrier,Bcast,Reduce,Allreduce,Gather,Gatherv,Scatter,\n"
        "             Scatterv,Allgather,Allgatherv,Alltoall,Alltoallv,\n"
        "             Reduce_scatter,Reduce_scatter_block,Scan,Exscan,\n"
        "             Ibarrier,Ibcast,Iallreduce,Iallgather,Ialltoall,Ireduce,\n"
        "             Ireduce_scatter_block,Igather,Iscatter,Iallgatherv,\n"
        "             Ireduce_scatter,Igatherv,Iscatterv,Ialltoallv,Iscan,Iexscan\n"
        "  -f         also report the maximum over ranks (case <Name>_max)\n"
        "  -l         also report the time per iteration with the untimed barrier (<Name>_loop)\n"
        "  -p         also measure each nonblocking collective as a persistent request\n"
        "             (Allreduce_init...)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-f") == 0) r = full = 1;
        if (r == 0 && strcmp(argv[i], "-l") == 0) r = loop = 1;
        if (r == 0 && strcmp(argv[i], "-p") == 0) r = persist = 1;
        if (r == 0 && strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            r = 1;
            for (char *p = buf; p && *p;) {
                char *comma = strchr(p, ',');
                if (comma) *comma = '\0';
                int k = coll_lookup(p);
                if (k < 0) {
                    if (bench_rank() == 0) fprintf(stderr, "unknown collective '%s'\n", p);
                    r = -1;
                    break;
                }
                selected[k] = any_selected = 1;
                p = comma ? comma + 1 : NULL;
            }
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }
    if (!any_selected)
        for (int k = 0; k < NCOLL; k++) selected[k] = 1;
#ifndef PINIT
    if (persist && bench_rank() == 0)
        fprintf(stderr, "-p: this MPI has no persistent collectives\n");
    if (persist) bench_usage_exit(argv[0], what, extra, 2);
#endif

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    coll_ctx c;
    memset(&c, 0, sizeof c);
    c.np = bench_nprocs();
    c.rank = bench_rank();
    c.preq = MPI_REQUEST_NULL;
    long maxsize = bench_max_of(sizes, ns);
    if (maxsize < 4) maxsize = 4;
    size_t bufbytes = (size_t)maxsize * (size_t)c.np + 64;
    c.sbuf = bench_alloc(bufbytes);
    c.rbuf = bench_alloc(bufbytes);
    c.counts = bench_alloc(sizeof(int) * (size_t)c.np);
    c.displs = bench_alloc(sizeof(int) * (size_t)c.np);
    if (c.rank == 0) printf("# coll np=%d target=%.0fms\n", c.np, o.target_s * 1e3);

    for (int k = 0; k < NCOLL; k++) {
        if (!selected[k]) continue;
        c.which = k;
        long prev = -1;
        for (int s = 0; s < ns; s++) {
            long real = coll_setup(&c, sizes[s]);
            if (real == prev) continue;
            prev = real;
            for (int mode = 0; mode < 2; mode++) { /* the call, then its persistent request */
                if (mode > 0 && (k < IBARRIER || !persist)) continue;
                if (mode > 0) c.preq = persist_init(&c, MPI_COMM_WORLD);
                long iters;
                double wall = bench_measure(&o, coll_kernel, &c, 0, MPI_COMM_WORLD, &iters);
                double mine[2] = {c.acc / (double)iters, wall / (double)iters}, sum[2] = {0, 0},
                       max = 0;
                if (c.preq != MPI_REQUEST_NULL) MPI_Request_free(&c.preq);
                MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                MPI_Reduce(&mine[0], &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                /* (Ixxx -> Xxx_init: the name without its I) */
                char base[64], name[80];
                snprintf(base, sizeof base, "%s%s", coll_names[k] + mode, mode ? "_init" : "");
                if (mode > 0) base[0] = (char)toupper((unsigned char)base[0]);
                bench_result("coll", base, real, sum[0] / c.np * 1e6, "us", iters);
                if (full) {
                    snprintf(name, sizeof name, "%s_max", base);
                    bench_result("coll", name, real, max * 1e6, "us", iters);
                }
                if (loop && k != BARRIER) {
                    snprintf(name, sizeof name, "%s_loop", base);
                    bench_result("coll", name, real, sum[1] / c.np * 1e6, "us", iters);
                }
            }
        }
    }
    free(c.sbuf);
    free(c.rbuf);
    free(c.counts);
    free(c.displs);
    MPI_Finalize();
    return 0;
}
