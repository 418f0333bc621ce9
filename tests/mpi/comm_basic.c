/* The intracommunicator calls against expected results: Comm_dup (error handler and
 * attributes copied, traffic isolated from the parent), Comm_split (MPI_UNDEFINED, key
 * order, ties), Comm_split_type, Comm_create (one group, and disjoint groups), Comm_create_group
 * (a subset that leaves out the parent's master), Comm_compare, Comm_group, names, IDs, and
 * user attributes with copy and delete callbacks. */
#include "comm_util.h"

static int copies, deletes, last_deleted;

static int copy_plus_one(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)old, (void)keyval;
    CHECK(extra == &copies, "extra_state passed through");
    copies++;
    *(long *)out = (long)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int keyval, void *val, void *extra) {
    (void)c, (void)keyval, (void)extra;
    deletes++;
    last_deleted = (int)(long)val;
    return MPI_SUCCESS;
}

static int group_world_rank(MPI_Comm c, int r) {
    MPI_Group g, wg;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int w;
    MPI_Group_translate_ranks(g, 1, &r, wg, &w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return w;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n, res, size, r;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    /* predefined IDs */
    CHECK(cu_id(MPI_COMM_WORLD) == 1, "WORLD has ID 1");
    CHECK(cu_id(MPI_COMM_SELF) == 2 + (uint64_t)rank, "SELF has ID 2 + rank");

    /* dup */
    MPI_Comm d, d2;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_size(d, &size);
    MPI_Comm_rank(d, &r);
    CHECK(size == n && r == rank, "dup: rank %d of %d", r, size);
    CHECK(cu_id(d) > (uint64_t)n + 1, "dup's ID %llu is outside the predefined ones",
          (unsigned long long)cu_id(d));
    cu_check_same_id(d);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare(world, dup) = %d", res);
    CHECK_RC(MPI_Comm_compare(d, d, &res));
    CHECK(res == MPI_IDENT, "compare(dup, dup) = %d", res);
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(d, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "dup copies the error handler");
    MPI_Errhandler_free(&eh);
    int flag;
    CHECK_RC(MPI_Comm_test_inter(d, &flag));
    CHECK(!flag, "an intracommunicator");
    CHECK_ERR(MPI_Comm_remote_size(d, &size), MPI_ERR_COMM);
    cu_check_works(d, 3);

    /* isolation: the same tag on WORLD and on the dup, received in the other order */
    if (n > 1) {
        int to = (rank + 1) % n, from = (rank - 1 + n) % n, a = 100 + rank, b = 200 + rank, x, y;
        MPI_Request rq[2];
        MPI_Isend(&a, 1, MPI_INT, to, 0, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(&b, 1, MPI_INT, to, 0, d, &rq[1]);
        CHECK_RC(MPI_Recv(&y, 1, MPI_INT, from, 0, d, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Status sts[2];
        MPI_Waitall(2, rq, sts);
        CHECK(x == 100 + from && y == 200 + from, "traffic mixed up: %d %d", x, y);
    }

    /* operations pending when their communicator is freed complete normally */
    if (n > 1) {
        MPI_Comm t, u;
        uint64_t before[MPIX_ID_STATS];
        cu_stats(before);
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &t));
        int to = (rank + 1) % n, from = (rank - 1 + n) % n, big = 1 << 16;
        int *sb = malloc(sizeof(int) * (size_t)big), *rb = calloc((size_t)big, sizeof(int));
        for (int i = 0; i < big; i++) sb[i] = rank * 7 + i;
        MPI_Request rq[2];
        CHECK_RC(MPI_Irecv(rb, big, MPI_INT, from, 1, t, &rq[0]));
        CHECK_RC(MPI_Isend(sb, big, MPI_INT, to, 1, t, &rq[1]));
        CHECK_RC(MPI_Comm_free(&t));
        MPI_Status sts[2];
        CHECK_RC(MPI_Waitall(2, rq, sts));
        for (int i = 0; i < big; i++) CHECK(rb[i] == from * 7 + i, "data after free, int %d", i);
        CHECK(sts[0].MPI_SOURCE == from, "source after free %d", sts[0].MPI_SOURCE);
        free(sb);
        free(rb);
        /* t kept its ID while its requests lived; the next creation gives it back (no free
         * needed): one more handle, and at the master one lease more (u's), not two */
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &u));
        uint64_t expect[MPIX_ID_STATS];
        memcpy(expect, before, sizeof(expect));
        expect[0] += 1;
        expect[1] = 0; /* pools: any number */
        expect[2] += rank == 0;
        cu_settle_extra(expect, UINT64_MAX);
        MPI_Comm_free(&u);
    }

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_RC(MPI_Comm_set_name(d, "my dup"));
    CHECK_RC(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "my dup") && len == 6, "name '%s'", name);
    CHECK_RC(MPI_Comm_dup(d, &d2));
    CHECK_RC(MPI_Comm_get_name(d2, name, &len));
    CHECK(len == 0, "a dup is not named after its parent ('%s')", name);
    CHECK(cu_id(d2) != cu_id(d), "dup of dup gets its own ID");
    cu_check_same_id(d2);
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world's name '%s'", name);
    MPI_Comm_free(&d2);
    CHECK(d2 == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");

    /* split by parity, keys reversing the order; MPI_UNDEFINED for the last rank of 3+ */
    MPI_Comm s;
    int color = (n > 2 && rank == n - 1) ? MPI_UNDEFINED : rank % 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &s));
    if (color == MPI_UNDEFINED) {
        CHECK(s == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
    } else {
        int members[64], k = 0;
        for (int i = n - 1; i >= 0; i--)
            if (i % 2 == color && !(n > 2 && i == n - 1)) members[k++] = i;
        MPI_Comm_size(s, &size);
        MPI_Comm_rank(s, &r);
        CHECK(size == k, "split: size %d, expected %d", size, k);
        for (int i = 0; i < k; i++)
            CHECK(group_world_rank(s, i) == members[i], "split member %d is %d, expected %d", i,
                  group_world_rank(s, i), members[i]);
        CHECK(members[r] == rank, "my split rank %d", r);
        cu_check_same_id(s);
        cu_check_works(s, 5);
        CHECK_RC(MPI_Comm_free(&s));
    }

    /* ties in the key keep the parent's order: all in one color, key 0 */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 7, 0, &s));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, s, &res));
    CHECK(res == MPI_CONGRUENT, "split(all, key 0) is congruent to world (%d)", res);
    MPI_Comm_free(&s);
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 7, n - rank, &s));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, s, &res));
    CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "reversed split is similar (%d)", res);
    MPI_Comm_free(&s);

    /* split_type: every rank shares memory here */
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, s, &res));
    CHECK(res == MPI_CONGRUENT, "split_type(SHARED) is congruent to world (%d)", res);
    cu_check_works(s, 6);
    MPI_Comm_free(&s);
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                                 MPI_INFO_NULL, &s));
    if (rank % 2)
        CHECK(s == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) gives MPI_COMM_NULL");
    else
        MPI_Comm_free(&s);

    /* Comm_create with one group (the evens), then with disjoint groups (evens, odds) */
    MPI_Group wg, ge, go;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = {{0, n - 1, 2}};
    MPI_Group_range_incl(wg, 1, range, &ge);
    MPI_Group_range_excl(wg, 1, range, &go);
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, ge, &s));
    if (rank % 2) {
        CHECK(s == MPI_COMM_NULL, "odd ranks are not in the evens' communicator");
    } else {
        MPI_Comm_rank(s, &r);
        CHECK(r == rank / 2, "rank in evens %d", r);
        MPI_Group sg;
        MPI_Comm_group(s, &sg);
        MPI_Group_compare(sg, ge, &res);
        CHECK(res == MPI_IDENT, "Comm_create's group is the one passed (%d)", res);
        MPI_Group_free(&sg);
        cu_check_same_id(s);
        cu_check_works(s, 7);
        MPI_Comm_free(&s);
    }
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? go : ge, &s));
    CHECK(s != MPI_COMM_NULL, "every rank is in one of the disjoint groups");
    MPI_Comm_size(s, &size);
    CHECK(size == (rank % 2 ? n / 2 : (n + 1) / 2), "disjoint create: size %d", size);
    cu_check_same_id(s);
    cu_check_works(s, 8);
    { /* the two groups' communicators have different IDs */
        unsigned long long id = cu_id(s), other = 0;
        if (n > 1) {
            int peer = rank % 2 ? rank - 1 : (rank + 1 < n ? rank + 1 : MPI_PROC_NULL);
            MPI_Sendrecv(&id, 1, MPI_UNSIGNED_LONG_LONG, peer, 9, &other, 1, MPI_UNSIGNED_LONG_LONG,
                         peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (peer != MPI_PROC_NULL) CHECK(id != other, "disjoint groups share ID %llu", id);
        }
    }
    MPI_Comm_free(&s);
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &s));
    CHECK(s == MPI_COMM_NULL, "Comm_create(MPI_GROUP_EMPTY) gives MPI_COMM_NULL");

    /* Comm_create_group: the ranks other than 0 only (the parent's master stays out) */
    if (n > 1) {
        MPI_Group rest;
        MPI_Group_excl(wg, 1, (int[]){0}, &rest);
        if (rank > 0) {
            CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, rest, 42, &s));
            MPI_Comm_rank(s, &r);
            MPI_Comm_size(s, &size);
            CHECK(r == rank - 1 && size == n - 1, "create_group: rank %d of %d", r, size);
            cu_check_same_id(s);
            cu_check_works(s, 10);
            MPI_Comm_free(&s);
        } else {
            CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, rest, 42, &s)); /* not a member */
            CHECK(s == MPI_COMM_NULL, "a non-member gets MPI_COMM_NULL");
        }
        MPI_Group_free(&rest);
    }
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 0, &s));
    CHECK_RC(MPI_Comm_compare(s, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "create_group(world group) is congruent (%d)", res);
    cu_check_same_id(s);
    MPI_Comm_free(&s);
    MPI_Group_free(&ge);
    MPI_Group_free(&go);

    /* SELF */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &s));
    MPI_Comm_size(s, &size);
    CHECK(size == 1, "dup of SELF has size %d", size);
    CHECK_RC(MPI_Comm_compare(s, MPI_COMM_SELF, &res));
    CHECK(res == MPI_CONGRUENT, "dup(SELF) congruent to SELF");
    cu_check_works(s, 11);
    MPI_Comm_free(&s);

    /* attributes: copy callback (value + 1), delete callback, NULL copy, DUP_FN */
    int kv_plus, kv_null, kv_dupfn;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus_one, count_delete, &kv_plus, &copies));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv_null, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dupfn, NULL));
    CHECK_RC(MPI_Comm_set_attr(d, kv_plus, (void *)10L));
    CHECK_RC(MPI_Comm_set_attr(d, kv_null, (void *)20L));
    CHECK_RC(MPI_Comm_set_attr(d, kv_dupfn, (void *)30L));
    void *v;
    CHECK_RC(MPI_Comm_get_attr(d, kv_plus, &v, &flag));
    CHECK(flag && (long)v == 10, "get_attr: %ld", (long)v);
    CHECK_RC(MPI_Comm_dup(d, &d2));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    CHECK_RC(MPI_Comm_get_attr(d2, kv_plus, &v, &flag));
    CHECK(flag && (long)v == 11, "copied attribute %ld", (long)v);
    CHECK_RC(MPI_Comm_get_attr(d2, kv_null, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    CHECK_RC(MPI_Comm_get_attr(d2, kv_dupfn, &v, &flag));
    CHECK(flag && (long)v == 30, "MPI_COMM_DUP_FN copies the value (%ld)", (long)v);
    CHECK_RC(MPI_Comm_set_attr(d, kv_plus, (void *)12L)); /* replacing deletes the old value */
    CHECK(deletes == 1 && last_deleted == 10, "replace: deletes %d last %d", deletes, last_deleted);
    CHECK_RC(MPI_Comm_delete_attr(d, kv_null));
    CHECK(deletes == 2 && last_deleted == 20, "delete_attr: deletes %d", deletes);
    CHECK_RC(MPI_Comm_get_attr(d, kv_null, &v, &flag));
    CHECK(!flag, "deleted attribute is gone");
    CHECK_RC(MPI_Comm_free(&d2));
    CHECK(deletes == 3 && last_deleted == 11, "free deletes attributes (%d, %d)", deletes,
          last_deleted);
    CHECK_RC(MPI_Comm_free_keyval(&kv_plus));
    CHECK(kv_plus == MPI_KEYVAL_INVALID, "free_keyval resets the key");
    CHECK_RC(MPI_Comm_free(&d)); /* the freed key's attribute is still deleted */
    CHECK(deletes == 4 && last_deleted == 12, "free after free_keyval (%d, %d)", deletes,
          last_deleted);
    MPI_Comm_free_keyval(&kv_null);
    MPI_Comm_free_keyval(&kv_dupfn);
    int *tag_ub;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");

    /* hints: none understood; dup_with_info checks its info and duplicates, get_info gives an
     * empty info object, set_info checks its info */
    {
        MPI_Info hints, used;
        CHECK_RC(MPI_Info_create(&hints));
        CHECK_RC(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
        CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &d));
        int cmp;
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, d, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "dup_with_info: compare %d", cmp);
        int sum = 0;
        CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d));
        CHECK(sum == n * (n - 1) / 2, "allreduce on dup_with_info's communicator: %d", sum);
        CHECK_RC(MPI_Comm_set_info(d, hints));
        CHECK_RC(MPI_Comm_get_info(d, &used));
        int nkeys = -1;
        CHECK_RC(MPI_Info_get_nkeys(used, &nkeys));
        CHECK(nkeys == 0, "get_info: %d hints in use", nkeys);
        CHECK_RC(MPI_Info_free(&used));
        MPI_Info stale = hints;
        CHECK_RC(MPI_Info_free(&hints));
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_ERR(MPI_Comm_set_info(d, stale), MPI_ERR_INFO);
        CHECK_ERR(MPI_Comm_get_info(d, NULL), MPI_ERR_ARG);
        CHECK_RC(MPI_Comm_free(&d));
        CHECK_ERR(MPI_Comm_dup_with_info(MPI_COMM_WORLD, stale, &d), MPI_ERR_INFO);
        CHECK_ERR(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    /* the MPI-1 names of the attribute calls */
    int kv1, *ub1;
    CHECK_RC(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ub1, &flag));
    CHECK(flag && *ub1 == *tag_ub, "MPI_Attr_get(MPI_TAG_UB)");
    CHECK_RC(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv1, NULL));
    CHECK_RC(MPI_Attr_put(MPI_COMM_WORLD, kv1, (void *)42L));
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_RC(MPI_Attr_get(d, kv1, &v, &flag));
    CHECK(flag && (long)v == 42, "MPI_DUP_FN through MPI_Keyval_create: %ld", (long)v);
    CHECK_RC(MPI_Comm_free(&d));
    CHECK_RC(MPI_Attr_delete(MPI_COMM_WORLD, kv1));
    CHECK_RC(MPI_Attr_get(MPI_COMM_WORLD, kv1, &v, &flag));
    CHECK(!flag, "MPI_Attr_delete");
    CHECK_RC(MPI_Keyval_free(&kv1));
    CHECK(kv1 == MPI_KEYVAL_INVALID, "MPI_Keyval_free resets the key");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERR(MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Pcontrol(1));

    MPI_Group_free(&wg);
    cu_settle();
    uint64_t st[MPIX_ID_STATS];
    cu_stats(st);
    CHECK(st[0] == 2, "only WORLD and SELF are left (%llu handles)", (unsigned long long)st[0]);
    MPI_Finalize();
    return 0;
}
