/* Bad input to the communicator calls: MPI_COMM_NULL, freed communicators, the predefined
 * communicators where they cannot be used, invalid colors (reported by every process, not only
 * the one that passed it), bad split types, groups that are not subsets or that differ between
 * processes, bad tags, attribute keys, and NULL output arguments. Each must give its error
 * class, and the job must go on working afterwards. */
#include "comm_util.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm c = MPI_COMM_NULL, d;
    int res;

    /* MPI_COMM_NULL, freed handles, predefined communicators */
    CHECK_ERR(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_split(MPI_COMM_NULL, 0, 0, &c), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_free(&c), MPI_ERR_COMM);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm stale = d;
    CHECK_RC(MPI_Comm_free(&d));
    CHECK_ERR(MPI_Comm_dup(stale, &c), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_free(&stale), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_rank(stale, &res), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res), MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;
    CHECK_ERR(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_free(&s), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_free(NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Comm_remote_size(MPI_COMM_WORLD, &res), MPI_ERR_COMM);
    uint64_t id;
    CHECK_ERR(MPIX_Comm_get_id(MPI_COMM_NULL, &id), MPI_ERR_COMM);

    /* an invalid color at one process: every process reports MPI_ERR_ARG */
    c = MPI_COMM_WORLD;
    CHECK_ERR(MPI_Comm_split(MPI_COMM_WORLD, rank == n - 1 ? -5 : 0, 0, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "no communicator after an error");
    CHECK_ERR(MPI_Comm_split(MPI_COMM_WORLD, -1, rank, &c), MPI_ERR_ARG);
    /* keys may be anything, negative included */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, -1000000 * rank, &c));
    int r;
    MPI_Comm_rank(c, &r);
    CHECK(r == n - 1 - rank, "negative keys order ranks (rank %d)", r);
    MPI_Comm_free(&c);
    CHECK_ERR(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    CHECK_ERR(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? 12345 : MPI_COMM_TYPE_SHARED, 0,
                                  MPI_INFO_NULL, &c),
              MPI_ERR_ARG);

    /* groups */
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    CHECK_ERR(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Comm_create_group(MPI_COMM_WORLD, wg, -3, &c), MPI_ERR_TAG);
    if (n > 1) {
        /* the world group is no subset of a half */
        MPI_Comm half;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        CHECK_ERR(MPI_Comm_create(half, wg, &c), MPI_ERR_GROUP);
        CHECK_ERR(MPI_Comm_create_group(half, wg, 1, &c), MPI_ERR_GROUP);
        /* one process passes a group that is no subset: all of its half report it */
        MPI_Group hg;
        MPI_Comm_group(half, &hg);
        if (rank % 2 == 0) {
            CHECK_ERR(MPI_Comm_create(half, rank == 0 ? wg : hg, &c), MPI_ERR_GROUP);
        } else {
            CHECK_RC(MPI_Comm_create(half, hg, &c));
            MPI_Comm_free(&c);
        }
        MPI_Group_free(&hg);
        cu_check_works(half, 1);
        MPI_Comm_free(&half);
    }
    if (n > 2) {
        /* mismatched groups: rank 0 passes {0, 1}, everyone else {0, 1, 2} */
        MPI_Group g01, g012;
        MPI_Group_incl(wg, 2, (int[]){0, 1}, &g01);
        MPI_Group_incl(wg, 3, (int[]){0, 1, 2}, &g012);
        CHECK_ERR(MPI_Comm_create(MPI_COMM_WORLD, rank == 0 ? g01 : g012, &c), MPI_ERR_GROUP);
        /* same members, different order */
        MPI_Group g102;
        MPI_Group_incl(wg, 3, (int[]){1, 0, 2}, &g102);
        CHECK_ERR(MPI_Comm_create(MPI_COMM_WORLD, rank == 1 ? g102 : g012, &c), MPI_ERR_GROUP);
        MPI_Group_free(&g01);
        MPI_Group_free(&g012);
        MPI_Group_free(&g102);
    }
    MPI_Group_incl(wg, 1, &rank, &g);
    MPI_Group stale_g = g;
    MPI_Group_free(&g);
    CHECK_ERR(MPI_Comm_create(MPI_COMM_WORLD, stale_g, &c), MPI_ERR_GROUP);

    /* attributes */
    int kv;
    void *v;
    int flag;
    CHECK_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &kv), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, 12345, &kv), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_delete_attr(MPI_COMM_WORLD, 12345), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    int kv_copy = kv;
    CHECK_RC(MPI_Comm_free_keyval(&kv));
    CHECK_ERR(MPI_Comm_free_keyval(&kv_copy), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, kv_copy, &kv), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);

    /* the job still works */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    cu_check_works(c, 2);
    MPI_Comm_free(&c);
    MPI_Group_free(&wg);
    cu_expect_clean();
    MPI_Finalize();
    return 0;
}
