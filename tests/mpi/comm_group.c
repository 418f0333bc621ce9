/* Every MPI_Group_* call against results worked out by hand from the world group: sizes and
 * ranks, inclusion and exclusion (lists and ranges, strides both ways), set operations,
 * comparisons, rank translation, the empty group, and each bad argument's error class. */
#include "comm_util.h"

static void check_members(MPI_Group g, int n, const int *expect_world, const char *what) {
    int size, rank, wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    CHECK_RC(MPI_Group_size(g, &size));
    CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int expect_rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        int w;
        CHECK_RC(MPI_Group_translate_ranks(g, 1, &i, wg, &w));
        CHECK(w == expect_world[i], "%s: member %d is world rank %d, expected %d", what, i, w,
              expect_world[i]);
        if (expect_world[i] == wr) expect_rank = i;
    }
    CHECK_RC(MPI_Group_rank(g, &rank));
    CHECK(rank == expect_rank, "%s: my rank %d, expected %d", what, rank, expect_rank);
    MPI_Group_free(&wg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int all[64], rev[64], evens[64], odds[64], ne = 0, no = 0;
    for (int i = 0; i < n; i++) {
        all[i] = i;
        rev[i] = n - 1 - i;
        if (i % 2)
            odds[no++] = i;
        else
            evens[ne++] = i;
    }

    MPI_Group wg, g, g2, g3;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    check_members(wg, n, all, "world");
    int res;
    CHECK_RC(MPI_Group_compare(wg, wg, &res));
    CHECK(res == MPI_IDENT, "compare(world, world) = %d", res);

    /* incl / excl */
    CHECK_RC(MPI_Group_incl(wg, n, rev, &g));
    check_members(g, n, rev, "incl reversed");
    CHECK_RC(MPI_Group_compare(wg, g, &res));
    CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "compare(world, reversed) = %d", res);
    int tr[64], out[64];
    for (int i = 0; i < n; i++) tr[i] = i;
    tr[0] = MPI_PROC_NULL;
    CHECK_RC(MPI_Group_translate_ranks(wg, n, tr, g, out));
    CHECK(out[0] == MPI_PROC_NULL, "PROC_NULL translates to %d", out[0]);
    for (int i = 1; i < n; i++) CHECK(out[i] == n - 1 - i, "translate %d -> %d", i, out[i]);
    MPI_Group_free(&g);
    CHECK(g == MPI_GROUP_NULL, "Group_free leaves %d", g);

    int zero = 0;
    CHECK_RC(MPI_Group_excl(wg, 1, &zero, &g));
    check_members(g, n - 1, all + 1, "excl {0}");
    CHECK_RC(MPI_Group_translate_ranks(wg, 1, &zero, g, out));
    CHECK(out[0] == MPI_UNDEFINED, "rank 0 is not in excl {0}, got %d", out[0]);
    MPI_Group_free(&g);

    /* ranges: evens by (0, n-1, 2), reversed by (n-1, 0, -1), odds by excluding the evens */
    int ev_range[1][3] = {{0, n - 1, 2}}, rv_range[1][3] = {{n - 1, 0, -1}};
    CHECK_RC(MPI_Group_range_incl(wg, 1, ev_range, &g));
    check_members(g, ne, evens, "range_incl evens");
    CHECK_RC(MPI_Group_range_excl(wg, 1, ev_range, &g2));
    check_members(g2, no, odds, "range_excl evens");
    CHECK_RC(MPI_Group_range_incl(wg, 1, rv_range, &g3));
    check_members(g3, n, rev, "range_incl reversed");
    MPI_Group_free(&g3);

    /* set operations */
    CHECK_RC(MPI_Group_union(g, g2, &g3));
    int ev_od[64];
    for (int i = 0; i < ne; i++) ev_od[i] = evens[i];
    for (int i = 0; i < no; i++) ev_od[ne + i] = odds[i];
    check_members(g3, n, ev_od, "union(evens, odds)");
    CHECK_RC(MPI_Group_compare(g3, wg, &res));
    CHECK(res == (n > 2 ? MPI_SIMILAR : MPI_IDENT), "compare(evens+odds, world) = %d", res);
    MPI_Group_free(&g3);
    CHECK_RC(MPI_Group_union(wg, g, &g3)); /* nothing new from the evens */
    check_members(g3, n, all, "union(world, evens)");
    MPI_Group_free(&g3);
    CHECK_RC(MPI_Group_intersection(wg, g, &g3));
    check_members(g3, ne, evens, "intersection(world, evens)");
    CHECK_RC(MPI_Group_compare(g3, g, &res));
    CHECK(res == MPI_IDENT, "compare(intersection, evens) = %d", res);
    MPI_Group_free(&g3);
    CHECK_RC(MPI_Group_difference(wg, g, &g3));
    check_members(g3, no, odds, "difference(world, evens)");
    MPI_Group_free(&g3);
    CHECK_RC(MPI_Group_intersection(g, g2, &g3));
    CHECK(g3 == MPI_GROUP_EMPTY, "an empty intersection is MPI_GROUP_EMPTY (%d)", g3);
    check_members(g3, 0, NULL, "empty");
    CHECK_RC(MPI_Group_free(&g3)); /* freeing the empty group is allowed */
    if (n > 1) {
        CHECK_RC(MPI_Group_compare(g, g2, &res));
        CHECK(res == MPI_UNEQUAL, "compare(evens, odds) = %d", res);
    }
    CHECK_RC(MPI_Group_difference(g, wg, &g3));
    CHECK(g3 == MPI_GROUP_EMPTY, "evens minus world is empty");
    MPI_Group_free(&g2);

    /* empty inputs */
    CHECK_RC(MPI_Group_incl(wg, 0, NULL, &g2));
    CHECK(g2 == MPI_GROUP_EMPTY, "incl of nothing is MPI_GROUP_EMPTY");
    CHECK_RC(MPI_Group_size(MPI_GROUP_EMPTY, &res));
    CHECK(res == 0, "MPI_GROUP_EMPTY has size %d", res);
    CHECK_RC(MPI_Group_rank(MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_UNDEFINED, "rank in MPI_GROUP_EMPTY is %d", res);
    CHECK_RC(MPI_Group_excl(wg, n, all, &g2));
    CHECK(g2 == MPI_GROUP_EMPTY, "excluding everyone gives MPI_GROUP_EMPTY");

    /* groups of other communicators */
    MPI_Comm half;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, 0, &half));
    CHECK_RC(MPI_Comm_group(half, &g2));
    CHECK_RC(MPI_Group_compare(g2, rank % 2 ? wg : g, &res));
    if (rank % 2 == 0)
        CHECK(res == MPI_IDENT, "group of the even half = evens (%d)", res);
    else /* an odd rank exists only with 2 or more ranks, so the odd half is not everyone */
        CHECK(res == MPI_UNEQUAL, "group of the odd half vs the world group (%d)", res);
    MPI_Group_free(&g2);
    MPI_Comm_free(&half);

    /* bad arguments */
    int bad = n, dup2[2] = {0, 0};
    CHECK_ERR(MPI_Group_incl(wg, 1, &bad, &g2), MPI_ERR_RANK);
    CHECK_ERR(MPI_Group_incl(wg, -1, all, &g2), MPI_ERR_ARG);
    CHECK_ERR(MPI_Group_incl(wg, 2, dup2, &g2), n > 1 ? MPI_ERR_RANK : MPI_ERR_ARG);
    CHECK_ERR(MPI_Group_excl(wg, 1, &bad, &g2), MPI_ERR_RANK);
    int neg = -1;
    CHECK_ERR(MPI_Group_excl(wg, 1, &neg, &g2), MPI_ERR_RANK);
    int stride0[1][3] = {{0, 0, 0}}, outside[1][3] = {{0, n, 1}};
    CHECK_ERR(MPI_Group_range_incl(wg, 1, stride0, &g2), MPI_ERR_ARG);
    CHECK_ERR(MPI_Group_range_excl(wg, 1, outside, &g2), MPI_ERR_RANK);
    int twice[2][3] = {{0, 0, 1}, {0, 0, 1}};
    CHECK_ERR(MPI_Group_range_incl(wg, 2, twice, &g2), MPI_ERR_RANK);
    CHECK_ERR(MPI_Group_translate_ranks(wg, 1, &bad, wg, out), MPI_ERR_RANK);
    CHECK_ERR(MPI_Group_size(MPI_GROUP_NULL, &res), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Group_compare(wg, MPI_GROUP_NULL, &res), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Group_union(MPI_GROUP_NULL, wg, &g2), MPI_ERR_GROUP);
    MPI_Group stale = g;
    MPI_Group_free(&g);
    CHECK_ERR(MPI_Group_rank(stale, &res), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Group_free(&stale), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Group_free(NULL), MPI_ERR_ARG);

    MPI_Group_free(&wg);
    MPI_Finalize();
    return 0;
}
