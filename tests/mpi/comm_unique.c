/* The job-wide invariant: one communicator has one ID, and no two live communicators share
 * one. Each rank builds communicators of every kind (dups, splits, Comm_create with disjoint
 * groups, Comm_create_group without the parent's master, Cartesian, intercommunicators and
 * their merges, nested ones, SELF dups), labels each with a value all its members agree on,
 * and sends its (label, ID) pairs to rank 0, which checks both halves of the invariant. Then
 * half of them are freed and new ones made (reusing IDs), and the check runs again. */
#include "comm_util.h"

#define MAXC 512

typedef struct {
    uint64_t label, id;
} pair;

static pair mine[MAXC];
static MPI_Comm comms[MAXC];
static int nmine;

static uint64_t label(int kind, int inst, int color) {
    return ((uint64_t)kind << 40) | ((uint64_t)inst << 16) | (uint64_t)color;
}

static void add(MPI_Comm c, uint64_t lab) {
    if (c == MPI_COMM_NULL) return;
    CHECK(nmine < MAXC, "too many");
    comms[nmine] = c;
    mine[nmine].label = lab;
    mine[nmine].id = cu_id(c);
    nmine++;
}

static void drop(int i) {
    if (comms[i] != MPI_COMM_WORLD && comms[i] != MPI_COMM_SELF) MPI_Comm_free(&comms[i]);
    comms[i] = comms[--nmine];
    mine[i] = mine[nmine];
}

static int cmp_pair(const void *a, const void *b) {
    const pair *x = a, *y = b;
    if (x->label != y->label) return x->label < y->label ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void check_job(int round) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (rank != 0) {
        MPI_Send(&nmine, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(mine, nmine * 2, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    pair *all = malloc(sizeof(pair) * MAXC * (size_t)n);
    int total = 0;
    memcpy(all, mine, sizeof(pair) * (size_t)nmine);
    total = nmine;
    for (int src = 1; src < n; src++) {
        int k;
        MPI_Recv(&k, 1, MPI_INT, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(all + total, k * 2, MPI_UINT64_T, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        total += k;
    }
    qsort(all, (size_t)total, sizeof(pair), cmp_pair);
    /* one communicator, one ID */
    uint64_t *ids = malloc(sizeof(uint64_t) * (size_t)total);
    int nids = 0;
    for (int i = 0; i < total; i++) {
        if (i && all[i].label == all[i - 1].label) {
            CHECK(all[i].id == all[i - 1].id, "round %d: label %llx has IDs %llu and %llu", round,
                  (unsigned long long)all[i].label, (unsigned long long)all[i - 1].id,
                  (unsigned long long)all[i].id);
            continue;
        }
        ids[nids++] = all[i].id;
    }
    /* two live communicators, two IDs */
    qsort(ids, (size_t)nids, sizeof(uint64_t), cmp_u64);
    for (int i = 1; i < nids; i++)
        CHECK(ids[i] != ids[i - 1], "round %d: two live communicators share ID %llu", round,
              (unsigned long long)ids[i]);
    printf("round %d: %d communicators, %d memberships, all IDs unique\n", round, nids, total);
    free(ids);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm c, c2;
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);

    add(MPI_COMM_WORLD, label(1, 0, 0));
    add(MPI_COMM_SELF, label(2, 0, rank));
    for (int i = 0; i < 6; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        add(c, label(3, i, 0));
    }
    for (int m = 2; m <= 3; m++) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % m, rank, &c);
        add(c, label(4, m, rank % m));
        MPI_Comm_dup(c, &c2);
        add(c2, label(5, m, rank % m));
        MPI_Comm_split(c, 0, -rank, &c2); /* nested, master moves */
        add(c2, label(11, m, rank % m));
    }
    /* disjoint blocks of two */
    int blk[2] = {rank / 2 * 2, rank / 2 * 2 + 1};
    MPI_Group_incl(wg, blk[1] < n ? 2 : 1, blk, &g);
    MPI_Comm_create(MPI_COMM_WORLD, g, &c);
    add(c, label(6, 0, rank / 2));
    MPI_Group_free(&g);
    /* without the world's master */
    if (n > 1) {
        MPI_Group_excl(wg, 1, (int[]){0}, &g);
        if (rank > 0) {
            for (int i = 0; i < 4; i++) {
                MPI_Comm_create_group(MPI_COMM_WORLD, g, i, &c);
                add(c, label(7, i, 0));
            }
        }
        MPI_Group_free(&g);
    }
    int dims[2] = {0, 0}, per[2] = {1, 1};
    MPI_Dims_create(n, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &c);
    add(c, label(8, 0, 0));
    MPI_Cart_sub(c, (int[]){1, 0}, &c2);
    int co[2];
    MPI_Cart_coords(c, rank, 2, co);
    add(c2, label(8, 1, co[1]));
    if (n > 1) {
        int low = rank < n / 2;
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, low, 0, &half);
        add(half, label(9, 0, low));
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? n / 2 : 0, 3, &c);
        add(c, label(9, 1, 0));
        MPI_Comm_dup(c, &c2);
        add(c2, label(9, 2, 0));
        MPI_Intercomm_merge(c, low, &c2);
        add(c2, label(10, 0, 0));
    }
    for (int i = 0; i < 5; i++) {
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        add(c, label(12, i, rank));
    }
    check_job(1);

    /* free about half of them (chosen by label, so all members agree), make more */
    for (int i = nmine - 1; i >= 0; i--) {
        uint64_t l = mine[i].label, h = (l * 0x9E3779B97F4A7C15ull) >> 60;
        if (l >> 40 > 2 && h % 2) drop(i);
    }
    for (int i = 0; i < 8; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        add(c, label(13, i, 0));
        MPI_Comm_split(MPI_COMM_WORLD, (rank + i) % 3, rank, &c);
        add(c, label(14, i, (rank + i) % 3));
        MPI_Comm_dup(MPI_COMM_SELF, &c);
        add(c, label(15, i, rank));
    }
    check_job(2);
    cu_check_works(comms[nmine - 2], 4);

    while (nmine > 0) drop(nmine - 1);
    MPI_Group_free(&wg);
    MPI_Finalize();
    return 0;
}
