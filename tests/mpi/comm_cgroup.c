/* Creation without the master. World rank 0, master of MPI_COMM_WORLD and holder of the root
 * pool, sits in one long blocking MPI_Recv while the other ranks
 *   - call Comm_create_group on the world (groups without rank 0) hundreds of times,
 *   - split themselves into disjoint pairs that all create children at the same time (dups,
 *     splits, create_group, create, nested dups), keeping many alive,
 * so every ID they get comes, directly or through pools in between, from the root pool by
 * control messages that rank 0's progress engine answers inside its MPI_Recv. The last rank
 * releases rank 0 at the end; rank 0 then collects every live (communicator, ID) pair and
 * checks that none is shared. Then the same with the roles turned: the parent's master (the
 * last rank) blocks while groups without it are created from its communicator. */
#include "comm_util.h"

#define MAXL 1024

typedef struct {
    uint64_t label, id;
} pair;

static pair live[MAXL];
static MPI_Comm lc[MAXL];
static int nlive;

static void keep(MPI_Comm c, uint64_t label) {
    CHECK(nlive < MAXL, "too many");
    lc[nlive] = c;
    live[nlive].label = label;
    live[nlive].id = cu_id(c);
    nlive++;
}

static int cmp_pair(const void *a, const void *b) {
    const pair *x = a, *y = b;
    if (x->label != y->label) return x->label < y->label ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Rank 0 gathers every rank's pairs: one label one ID, two labels two IDs. */
static void check_unique(void) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (rank) {
        MPI_Send(&nlive, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(live, 2 * nlive, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
        return;
    }
    pair *all = malloc(sizeof(pair) * MAXL * (size_t)n);
    int total = nlive;
    memcpy(all, live, sizeof(pair) * (size_t)nlive);
    for (int s = 1; s < n; s++) {
        int k;
        MPI_Recv(&k, 1, MPI_INT, s, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(all + total, 2 * k, MPI_UINT64_T, s, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += k;
    }
    qsort(all, (size_t)total, sizeof(pair), cmp_pair);
    int distinct = 0;
    for (int i = 0; i < total; i++) {
        if (i && all[i].label == all[i - 1].label) {
            CHECK(all[i].id == all[i - 1].id, "one communicator, two IDs (label %llx)",
                  (unsigned long long)all[i].label);
            continue;
        }
        distinct++;
        for (int j = 0; j < i; j++)
            if (all[j].label != all[i].label)
                CHECK(all[j].id != all[i].id, "two live communicators share ID %llu",
                      (unsigned long long)all[i].id);
    }
    printf("%d live communicators (%d memberships), all IDs unique\n", distinct, total);
    free(all);
}

static uint64_t label(int kind, int a, int b) {
    return ((uint64_t)kind << 48) | ((uint64_t)a << 24) | (uint64_t)b;
}

/* Ranks other than 0, while rank 0 waits in MPI_Recv. */
static void without_master(int rounds) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Group wg, rest_g, sub_g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_excl(wg, 1, (int[]){0}, &rest_g);
    /* hundreds of create_group on the world, with the whole rest or with a part of it */
    for (int i = 0; i < rounds; i++) {
        MPI_Comm c;
        int part[2] = {1 + i % (n - 1), 1 + (i + 1) % (n - 1)};
        int np = n > 2 ? 2 : 1;
        MPI_Group_incl(wg, np, part, &sub_g);
        int member = rank == part[0] || (np == 2 && rank == part[1]);
        if (i % 2 || member) {
            CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, i % 2 ? rest_g : sub_g, i, &c));
            cu_check_works(c, i);
            CHECK_RC(MPI_Comm_free(&c));
        }
        MPI_Group_free(&sub_g);
    }
    MPI_Comm rest;
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, rest_g, 1000, &rest));
    keep(rest, label(1, 0, 0));
    /* disjoint pairs, all creating at the same time */
    int rr, pair_ix;
    MPI_Comm_rank(rest, &rr);
    pair_ix = rr / 2;
    MPI_Comm pc;
    CHECK_RC(MPI_Comm_split(rest, pair_ix, -rr, &pc)); /* master: the pair's higher rank */
    keep(pc, label(2, pair_ix, 0));
    MPI_Group pg;
    MPI_Comm_group(pc, &pg);
    MPI_Comm nest = pc;
    for (int i = 0; i < rounds / 4; i++) {
        MPI_Comm c;
        int prank;
        MPI_Comm_rank(pc, &prank);
        switch (i % 5) {
        case 0: CHECK_RC(MPI_Comm_dup(pc, &c)); break;
        case 1: CHECK_RC(MPI_Comm_split(pc, 0, prank, &c)); break;
        case 2: CHECK_RC(MPI_Comm_create_group(pc, pg, i, &c)); break;
        case 3: CHECK_RC(MPI_Comm_create(pc, pg, &c)); break;
        default:
            CHECK_RC(MPI_Comm_dup(nest, &c)); /* a chain, each level a new pool */
            nest = c;
            keep(c, label(4, pair_ix, i));
            continue;
        }
        if (i % 2) {
            keep(c, label(3, pair_ix, i));
        } else {
            cu_check_works(c, 3);
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
    MPI_Group_free(&pg);
    MPI_Group_free(&rest_g);
    MPI_Group_free(&wg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n, rounds = argc > 1 ? atoi(argv[1]) : 300;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2) {
        MPI_Comm c;
        MPI_Group g;
        MPI_Comm_group(MPI_COMM_WORLD, &g);
        for (int i = 0; i < rounds; i++) {
            CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, i, &c));
            CHECK_RC(MPI_Comm_free(&c));
        }
        MPI_Group_free(&g);
        MPI_Finalize();
        return 0;
    }
    uint64_t before[MPIX_ID_STATS], st[MPIX_ID_STATS];
    cu_settle();
    cu_stats(before);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 1: rank 0 blocked in MPI_Recv */
    int token = 0;
    if (rank == 0) {
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, n - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == 4242, "released by %d", token);
    } else {
        without_master(rounds);
        MPI_Comm done; /* all others finished: a barrier among them, without rank 0 */
        MPI_Group wg, rg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_excl(wg, 1, (int[]){0}, &rg);
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, rg, 2000, &done));
        MPI_Barrier(done);
        MPI_Comm_free(&done);
        MPI_Group_free(&rg);
        MPI_Group_free(&wg);
        if (rank == n - 1) {
            token = 4242;
            MPI_Send(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
        }
    }
    check_unique();

    /* Phase 2: the parent's master blocks. Parent: the world reversed (master: rank n-1). */
    MPI_Comm rev;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, n - rank, &rev));
    if (rank == n - 1) {
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MPI_Group rg, g;
        MPI_Comm_group(rev, &rg);
        MPI_Group_excl(rg, 1, (int[]){0}, &g); /* rev's rank 0 is world rank n-1 */
        for (int i = 0; i < rounds; i++) {
            MPI_Comm c;
            CHECK_RC(MPI_Comm_create_group(rev, g, i, &c));
            if (i % 50 == 0) cu_check_works(c, i);
            CHECK_RC(MPI_Comm_free(&c));
        }
        MPI_Group_free(&g);
        MPI_Group_free(&rg);
        if (rank == 0) { /* the others are done once rank 0 has heard from them */
            for (int s = 1; s < n - 1; s++)
                MPI_Recv(&token, 1, MPI_INT, s, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_INT, n - 1, 78, MPI_COMM_WORLD);
        } else {
            MPI_Send(&token, 1, MPI_INT, 0, 79, MPI_COMM_WORLD);
        }
    }
    MPI_Comm_free(&rev);

    for (int i = nlive - 1; i >= 0; i--) CHECK_RC(MPI_Comm_free(&lc[i]));
    cu_settle_extra(before, 1); /* a delegate pool for the world, where it made groups */
    cu_stats(st);
    unsigned long long v[2] = {st[6], st[7]}, tot[2];
    MPI_Reduce(v, tot, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%llu ID requests between pools, %llu reclaim rounds, all IDs home\n", tot[0],
               tot[1]);
    MPI_Finalize();
    return 0;
}
