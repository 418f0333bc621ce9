/* Nesting 24 levels deep: each level is made from the one above by Comm_dup, by Comm_split
 * with reversed keys (so the master moves to another process), by Comm_create_group on the
 * parent's group rotated by one (so the group's master is not the parent's), or by
 * Comm_create. Pools at each level borrow from the level above, so with small batches
 * (COHORT_ID_BATCH=1 in one variant) requests climb many levels. Every level must carry
 * traffic and differ in ID from all its ancestors; the deepest level then makes children of
 * its own; and the levels are freed parents first, leaving orphan pools that must still take
 * their children's IDs home. */
#include "comm_util.h"

#define LEVELS 24

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    cu_settle();
    uint64_t before[MPIX_ID_STATS];
    cu_stats(before);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Comm lv[LEVELS + 1];
    uint64_t ids[LEVELS + 1];
    lv[0] = MPI_COMM_WORLD;
    ids[0] = cu_id(MPI_COMM_WORLD);
    for (int l = 1; l <= LEVELS; l++) {
        MPI_Comm p = lv[l - 1];
        int pr, ps;
        MPI_Comm_rank(p, &pr);
        MPI_Comm_size(p, &ps);
        MPI_Group pg, g;
        switch (l % 4) {
        case 0: CHECK_RC(MPI_Comm_dup(p, &lv[l])); break;
        case 1: CHECK_RC(MPI_Comm_split(p, 0, ps - pr, &lv[l])); break;
        case 2: {
            int ranks[64];
            for (int i = 0; i < ps; i++) ranks[i] = (i + 1) % ps;
            MPI_Comm_group(p, &pg);
            MPI_Group_incl(pg, ps, ranks, &g);
            CHECK_RC(MPI_Comm_create_group(p, g, l, &lv[l]));
            MPI_Group_free(&pg);
            MPI_Group_free(&g);
            break;
        }
        default:
            MPI_Comm_group(p, &pg);
            CHECK_RC(MPI_Comm_create(p, pg, &lv[l]));
            MPI_Group_free(&pg);
            break;
        }
        ids[l] = cu_id(lv[l]);
        for (int a = 0; a < l; a++)
            CHECK(ids[a] != ids[l], "level %d has the ID of level %d (%llu)", l, a,
                  (unsigned long long)ids[l]);
        cu_check_same_id(lv[l]);
        cu_check_works(lv[l], l);
    }
    /* the deepest level makes children: live ones, then create/free cycles */
    MPI_Comm kids[32];
    for (int i = 0; i < 32; i++) {
        CHECK_RC(i % 2 ? MPI_Comm_dup(lv[LEVELS], &kids[i])
                       : MPI_Comm_split(lv[LEVELS], rank % 2, rank, &kids[i]));
        uint64_t id = cu_id(kids[i]);
        for (int a = 0; a <= LEVELS; a++) CHECK(ids[a] != id, "child %d has level %d's ID", i, a);
    }
    cu_check_works(kids[31], 99);
    for (int i = 0; i < 500; i++) {
        MPI_Comm c;
        CHECK_RC(MPI_Comm_dup(lv[LEVELS - i % 3], &c));
        CHECK_RC(MPI_Comm_free(&c));
    }
    /* parents first: levels 1..24 go while the children of the deepest still live */
    for (int l = 1; l <= LEVELS; l++) CHECK_RC(MPI_Comm_free(&lv[l]));
    cu_check_works(kids[0], 98);
    for (int i = 0; i < 32; i++) CHECK_RC(MPI_Comm_free(&kids[i]));
    cu_settle_to(before);
    uint64_t st[MPIX_ID_STATS];
    cu_stats(st);
    unsigned long long req = st[6], total;
    MPI_Reduce(&req, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d levels: %llu ID requests between pools, all IDs home\n", LEVELS, total);
    MPI_Finalize();
    return 0;
}
