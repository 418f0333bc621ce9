/* 100 000 create/free cycles (Comm_dup, Comm_split, Comm_create_group, Comm_create, dups of
 * SELF, dups of a subcommunicator), then 50 000 dup/free alone, must leave no trace: heap bytes in
 * use (mallinfo2), live handles, pool objects, leases and IDs lent out are the same after as
 * before, and the IDs handed out stay within a small window because freed ones come back and are
 * reused. */
#include "comm_util.h"

#include <malloc.h>

static void cycle(int i, MPI_Group wg, MPI_Comm sub, uint64_t *lo, uint64_t *hi) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm c = MPI_COMM_NULL;
    switch (i % 10) {
    case 0:
    case 1:
    case 2:
    case 3: CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c)); break;
    case 4: CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c)); break;
    case 5: CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, wg, i & 0xffff, &c)); break;
    case 6: CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, wg, &c)); break;
    case 7: CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &c)); break;
    default: CHECK_RC(MPI_Comm_dup(sub, &c)); break;
    }
    uint64_t id = cu_id(c);
    if (id < *lo) *lo = id;
    if (id > *hi) *hi = id;
    CHECK_RC(MPI_Comm_free(&c));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n, cycles = argc > 1 ? atoi(argv[1]) : 100000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm sub; /* a communicator whose master is not world rank 0 */
    MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &sub);

    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < 2000; i++) cycle(i, wg, sub, &lo, &hi);
    cu_settle();
    uint64_t before[MPIX_ID_STATS], after[MPIX_ID_STATS];
    cu_stats(before);
    size_t heap_before = mallinfo2().uordblks;
    /* Members may run one creation ahead of the master (they hold the reservation), so no
     * one starts before every process has taken its snapshot. */
    MPI_Barrier(MPI_COMM_WORLD);

    lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < cycles; i++) cycle(i, wg, sub, &lo, &hi);
    /* Then dup+free alone, where the master never has to wait: it must still read free
     * notices as it goes, so that right after the loop, before any waiting, only a few
     * communicators still await members' notices (not one per cycle). */
    for (int i = 0; i < cycles / 2; i++) {
        MPI_Comm c;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        CHECK_RC(MPI_Comm_free(&c));
    }
    cu_stats(after);
    CHECK(after[2] < 5000, "%llu communicators still await free notices after %d dups",
          (unsigned long long)after[2], cycles / 2);
    cu_settle_to(before);
    cu_stats(after);
    size_t heap_after = mallinfo2().uordblks;

    static const char *what[MPIX_ID_STATS] = {"handles",  "pools",    "leases",   "idle IDs",
                                              "lent IDs", "root IDs", "requests", "reclaims"};
    for (int k = 0; k < 6; k++) {
        if (k == 3 || k == 5) continue; /* idle IDs move between pools as they are reused */
        CHECK(after[k] == before[k], "%s: %llu before, %llu after %d cycles", what[k],
              (unsigned long long)before[k], (unsigned long long)after[k], cycles);
    }
    CHECK(after[3] + after[4] == before[3] + before[4], "IDs held by this process's pools");
    long growth = (long)heap_after - (long)heap_before;
    CHECK(growth < 256 * 1024, "heap grew by %ld bytes over %d cycles", growth, cycles);
    CHECK(hi - lo < 4096, "IDs ranged over [%llu, %llu] in %d cycles: not reused",
          (unsigned long long)lo, (unsigned long long)hi, cycles);
    if (rank == 0)
        printf("%d cycles: heap %+ld bytes, IDs within [%llu, %llu], %llu handles, %llu pools\n",
               cycles, growth, (unsigned long long)lo, (unsigned long long)hi,
               (unsigned long long)after[0], (unsigned long long)after[1]);
    MPI_Comm_free(&sub);
    MPI_Group_free(&wg);
    MPI_Finalize();
    return 0;
}
