/* 100 000 live communicators per process (Comm_dup of MPI_COMM_WORLD, all kept): every one
 * has its own ID, all processes agree on each, a sample of them carries traffic, and freeing
 * them all (in an order different from creation) brings the handle count and the ID pools
 * back to where they were. */
#include "comm_util.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n, count = argc > 1 ? atoi(argv[1]) : 100000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm *c = malloc(sizeof(MPI_Comm) * (size_t)count);
    uint64_t *ids = malloc(sizeof(uint64_t) * (size_t)count);
    CHECK(c && ids, "malloc");
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c[0])); /* WORLD's stream holds a reservation now */
    CHECK_RC(MPI_Comm_free(&c[0]));
    cu_settle();
    uint64_t before[MPIX_ID_STATS], after[MPIX_ID_STATS];
    cu_stats(before);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = MPI_Wtime();
    for (int i = 0; i < count; i++) CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
    MPI_Barrier(MPI_COMM_WORLD);
    double t_create = MPI_Wtime() - t0;

    /* all distinct here, and the same list everywhere (a checksum of the ordered list) */
    unsigned long long sum = 0, lo, hi;
    for (int i = 0; i < count; i++) {
        ids[i] = cu_id(c[i]);
        sum = sum * 1000003ull + ids[i];
    }
    CHECK_RC(MPI_Allreduce(&sum, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
    CHECK_RC(MPI_Allreduce(&sum, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    CHECK(lo == hi, "processes disagree on the IDs of the %d communicators", count);
    qsort(ids, (size_t)count, sizeof(uint64_t), cmp_u64);
    for (int i = 1; i < count; i++)
        CHECK(ids[i] != ids[i - 1], "two live communicators share ID %llu",
              (unsigned long long)ids[i]);
    cu_stats(after);
    CHECK(after[0] == before[0] + (uint64_t)count, "%llu handles alive",
          (unsigned long long)after[0]);
    for (int i = 0; i < count; i += count / 7 + 1) cu_check_works(c[i], i & 0x7fff);
    cu_check_works(c[count - 1], 1);

    /* free: odd indices first (backwards), then the even ones */
    t0 = MPI_Wtime();
    for (int i = (count - 1) | 1; i >= 1; i -= 2)
        if (i < count) CHECK_RC(MPI_Comm_free(&c[i]));
    for (int i = 0; i < count; i += 2) CHECK_RC(MPI_Comm_free(&c[i]));
    MPI_Barrier(MPI_COMM_WORLD);
    double t_free = MPI_Wtime() - t0;
    cu_settle_to(before);
    double t_settle = MPI_Wtime() - t0;
    cu_stats(after);
    for (int k = 0; k < 3; k++)
        CHECK(after[k] == before[k], "stat %d: %llu before, %llu after", k,
              (unsigned long long)before[k], (unsigned long long)after[k]);
    CHECK(after[4] == before[4], "IDs still lent: %llu, before %llu", (unsigned long long)after[4],
          (unsigned long long)before[4]);
    if (rank == 0)
        printf("%d live communicators on %d ranks: created in %.3f s, freed in %.3f s (all IDs "
               "home after %.3f s)\n",
               count, n, t_create, t_free, t_settle);
    free(c);
    free(ids);
    MPI_Finalize();
    return 0;
}
