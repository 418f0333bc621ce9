/* Helpers of the communicator tests: IDs, a check that a communicator really carries traffic
 * (point-to-point around a ring and an allreduce), and waiting until the free protocol has
 * settled (members' free notices reach masters asynchronously). */
#ifndef COMM_UTIL_H
#define COMM_UTIL_H

#include "testutil.h"

#include <stdint.h>

static inline uint64_t cu_id(MPI_Comm c) {
    uint64_t id = 0;
    CHECK_RC(MPIX_Comm_get_id(c, &id));
    return id;
}

/* Every rank of intracommunicator `over` reports the same ID for c (min == max over `over`):
 * c's members, when over is c; both sides of an intercommunicator c, when every rank of
 * `over` is on one side. */
static inline void cu_check_id_over(MPI_Comm c, MPI_Comm over) {
    unsigned long long id = cu_id(c), lo, hi;
    CHECK_RC(MPI_Allreduce(&id, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, over));
    CHECK_RC(MPI_Allreduce(&id, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, over));
    CHECK(lo == hi && lo == id, "members disagree on the ID: %llu..%llu", lo, hi);
}
static inline void cu_check_same_id(MPI_Comm c) {
    cu_check_id_over(c, c);
}

/* Ring exchange plus an allreduce of the world ranks: data must arrive from the right rank of
 * this communicator, and the sum must be that of exactly its members. */
static inline void cu_check_works(MPI_Comm c, int tag) {
    int r, n, wr;
    CHECK_RC(MPI_Comm_rank(c, &r));
    CHECK_RC(MPI_Comm_size(c, &n));
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    int to = (r + 1) % n, from = (r - 1 + n) % n, got = -1;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(&wr, 1, MPI_INT, to, tag, &got, 1, MPI_INT, from, tag, c, &st));
    CHECK(st.MPI_SOURCE == from, "source %d, expected %d", st.MPI_SOURCE, from);
    MPI_Group g, wg;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int wfrom;
    MPI_Group_translate_ranks(g, 1, &from, wg, &wfrom);
    CHECK(got == wfrom, "ring: got world rank %d from rank %d, expected %d", got, from, wfrom);
    long mine = wr, sum = -1, expect = 0;
    for (int i = 0; i < n; i++) {
        int w;
        MPI_Group_translate_ranks(g, 1, &i, wg, &w);
        expect += w;
    }
    CHECK_RC(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c));
    CHECK(sum == expect, "allreduce %ld, expected %ld", sum, expect);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

/* Free notices travel to masters in the background; a few barriers let them all arrive. */
static inline void cu_settle(void) {
    for (int i = 0; i < 8; i++) MPI_Barrier(MPI_COMM_WORLD);
}

static inline void cu_stats(uint64_t s[MPIX_ID_STATS]) {
    CHECK_RC(MPIX_Comm_id_stats(s));
}

/* After freeing many communicators at once, their notices reach the masters at the pace the
 * masters poll; wait (barriers make progress) until this process's handles, pools and leases
 * are back to `expect`, everywhere, or give up after 20 s and report the difference. `extra`
 * pools may remain: delegate pools for communicators that are still alive (the world's). */
static inline void cu_settle_extra(const uint64_t expect[MPIX_ID_STATS], uint64_t extra) {
    double t0 = MPI_Wtime();
    for (;;) {
        uint64_t s[MPIX_ID_STATS];
        cu_stats(s);
        int off = s[0] != expect[0] || s[1] < expect[1] || s[1] > expect[1] + extra ||
                  s[2] != expect[2],
            any;
        MPI_Allreduce(&off, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!any) return;
        int late = MPI_Wtime() - t0 > 20, give_up;
        MPI_Allreduce(&late, &give_up, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(!give_up, "not settled: handles %llu/%llu pools %llu/%llu leases %llu/%llu",
              (unsigned long long)s[0], (unsigned long long)expect[0], (unsigned long long)s[1],
              (unsigned long long)expect[1], (unsigned long long)s[2],
              (unsigned long long)expect[2]);
    }
}

static inline void cu_settle_to(const uint64_t expect[MPIX_ID_STATS]) {
    cu_settle_extra(expect, 0);
}

/* Everything a test made is gone: only WORLD's and SELF's handles are left, and only the
 * world master (rank 0) holds a lease, WORLD's (waits for the last free notices). */
static inline void cu_expect_clean(void) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uint64_t expect[MPIX_ID_STATS] = {2, 0, rank == 0};
    cu_settle_extra(expect, UINT64_MAX); /* pools: any number */
}

#endif /* COMM_UTIL_H */
