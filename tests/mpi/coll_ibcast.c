/* MPI_Ibcast and MPI_Bcast_init on both of their schedules: the flat tree (up to 8 ranks)
 * and the binomial tree (more). Run at 9 and more ranks, MPI_COMM_WORLD takes the binomial
 * tree and each half of a split the flat one. Every root, eager and rendezvous sizes, a
 * strided type, several broadcasts in flight at once; every rank checks every element. */
#include "testutil.h"

static int value(int root, int call, int i) {
    return root * 1000003 + call * 7919 + i;
}

/* What element i holds after a broadcast of `count` elements of the given stride from root:
 * its value where the broadcast writes, else the -1 every rank starts with. */
static int expect(int count, int stride, int root, int call, size_t i) {
    return i < (size_t)count * (size_t)stride && i % (size_t)stride == 0 ? value(root, call, (int)i)
                                                                         : -1;
}

/* Ibcast of `count` elements (of `t`: 1 int, or every other int when stride 2) from `root`;
 * `calls` of them in flight together, then persistent ones started twice. */
static void check_bcasts(MPI_Comm c, int count, int stride, int root) {
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    enum { CALLS = 3 };
    MPI_Datatype t = MPI_INT;
    if (stride > 1) {
        CHECK_RC(MPI_Type_vector(1, 1, stride, MPI_INT, &t));
        MPI_Datatype r;
        CHECK_RC(MPI_Type_create_resized(t, 0, (MPI_Aint)(stride * sizeof(int)), &r));
        MPI_Type_free(&t);
        t = r;
        CHECK_RC(MPI_Type_commit(&t));
    }
    size_t len = (size_t)(count ? count : 1) * (size_t)stride;
    int *b[CALLS];
    MPI_Request rq[CALLS];
    for (int k = 0; k < CALLS; k++) {
        b[k] = malloc(len * sizeof(int));
        CHECK(b[k], "out of memory");
        for (size_t i = 0; i < len; i++)
            b[k][i] = me == root ? expect(count, stride, root, k, i) : -1;
        CHECK_RC(MPI_Ibcast(b[k], count, t, root, c, &rq[k]));
    }
    CHECK_RC(MPI_Waitall(CALLS, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < CALLS; k++)
        for (size_t i = 0; i < len; i++) {
            int want = expect(count, stride, root, k, i);
            CHECK(b[k][i] == want,
                  "Ibcast %d of %d from %d (stride %d, %d ranks): [%zu] = %d, "
                  "expected %d",
                  k, count, root, stride, n, i, b[k][i], want);
        }
    MPI_Request p;
    CHECK_RC(MPI_Bcast_init(b[0], count, t, root, c, MPI_INFO_NULL, &p));
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < len; i++)
            b[0][i] = me == root ? expect(count, stride, root, 10 + round, i) : -1;
        CHECK_RC(MPI_Start(&p));
        CHECK_RC(MPI_Wait(&p, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < len; i++) {
            int want = expect(count, stride, root, 10 + round, i);
            CHECK(b[0][i] == want, "Bcast_init round %d of %d from %d: [%zu] = %d, expected %d",
                  round, count, root, i, b[0][i], want);
        }
    }
    CHECK_RC(MPI_Request_free(&p));
    for (int k = 0; k < CALLS; k++) free(b[k]);
    if (stride > 1) MPI_Type_free(&t);
}

static void run_all(MPI_Comm c) {
    int n;
    MPI_Comm_size(c, &n);
    /* 5000 ints and more: rendezvous; 3000 (12000 bytes): eager, but on two ranks by
     * rendezvous (nbc.c, NB_BCAST_PAIR_RNDV); 40000 and 100000 at 4 to 8 ranks: each reader
     * copies all of its message (NB_BCAST_PULL_MIN) */
    static const int counts[] = {0, 1, 7, 3000, 5000, 40000, 100000};
    int roots[] = {0, n / 2, n - 1};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        for (int r = 0; r < 3; r++) {
            if (r && roots[r] == roots[r - 1]) continue;
            check_bcasts(c, counts[i], 1, roots[r]);
            if (counts[i] <= 40000) check_bcasts(c, counts[i], 2, roots[r]);
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    run_all(MPI_COMM_WORLD);
    MPI_Comm half;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &half)); /* reversed order too */
    run_all(half);
    CHECK_RC(MPI_Comm_free(&half));
    MPI_Finalize();
    return 0;
}
