/* Intercommunicators: Intercomm_create from two halves of the world (and from even/odd ranks
 * with other leaders), point-to-point across them, remote size and group, Comm_dup of an
 * intercommunicator, Intercomm_merge with every choice of `high`, Comm_split and Comm_create
 * of an intercommunicator, and the bad arguments. */
#include "comm_util.h"

static void check_remote(MPI_Comm ic, int rsize, const int *rworld) {
    int flag, size;
    CHECK_RC(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "an intercommunicator");
    CHECK_RC(MPI_Comm_remote_size(ic, &size));
    CHECK(size == rsize, "remote size %d, expected %d", size, rsize);
    MPI_Group rg, wg;
    CHECK_RC(MPI_Comm_remote_group(ic, &rg));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < rsize; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        CHECK(w == rworld[i], "remote rank %d is world %d, expected %d", i, w, rworld[i]);
    }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
}

/* Local rank i sends to remote rank i % rsize; everyone receives what is addressed to it. */
static void check_p2p(MPI_Comm ic, int tag) {
    int r, lsize, rsize, wr;
    MPI_Comm_rank(ic, &r);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Request rq;
    CHECK_RC(MPI_Isend(&wr, 1, MPI_INT, r % rsize, tag, ic, &rq));
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int src = 0; src < rsize; src++) {
        if (src % lsize != r) continue;
        int got, w;
        MPI_Status st;
        CHECK_RC(MPI_Recv(&got, 1, MPI_INT, src, tag, ic, &st));
        MPI_Group_translate_ranks(rg, 1, &src, wg, &w);
        CHECK(st.MPI_SOURCE == src && got == w, "from remote %d: source %d value %d", src,
              st.MPI_SOURCE, got);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
}

static void check_merge(MPI_Comm ic, int high, int low_first_expected, const int *lo, int nlo,
                        const int *hi, int nhi) {
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(ic, high, &m));
    int size, r, wr;
    MPI_Comm_size(m, &size);
    MPI_Comm_rank(m, &r);
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    CHECK(size == nlo + nhi, "merged size %d", size);
    int order[64], k = 0;
    const int *a = low_first_expected ? lo : hi, *b = low_first_expected ? hi : lo;
    int na = low_first_expected ? nlo : nhi, nb = low_first_expected ? nhi : nlo;
    for (int i = 0; i < na; i++) order[k++] = a[i];
    for (int i = 0; i < nb; i++) order[k++] = b[i];
    CHECK(order[r] == wr, "merged rank %d holds world %d, expected %d", r, wr, order[r]);
    cu_check_same_id(m);
    cu_check_works(m, 21);
    MPI_Comm_free(&m);
}

/* World ranks of a group of ic (remote: its remote group), in rank order. */
static int group_world(MPI_Comm ic, int remote, int *w) {
    MPI_Group g, wg;
    if (remote)
        MPI_Comm_remote_group(ic, &g);
    else
        MPI_Comm_group(ic, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int n, idx[64];
    MPI_Group_size(g, &n);
    for (int i = 0; i < n; i++) idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, wg, w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return n;
}

/* An intercommunicator made from ic whose groups should be lw (nl) here and rw (nr) there:
 * its groups, point-to-point across, one ID on both sides, a collective. */
static void check_sub(MPI_Comm sub, const int *lw, int nl, const int *rw, int nr, int tag) {
    int wr, size, r, got[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(sub, &size);
    MPI_Comm_rank(sub, &r);
    CHECK(size == nl && lw[r] == wr, "local part: rank %d of %d (expected %d)", r, size, nl);
    CHECK(group_world(sub, 0, got) == nl, "local group size");
    for (int i = 0; i < nl; i++) CHECK(got[i] == lw[i], "local rank %d is world %d", i, got[i]);
    check_remote(sub, nr, rw);
    check_p2p(sub, tag);
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(sub, 0, &m));
    cu_check_id_over(sub, m);
    MPI_Comm_free(&m);
    CHECK_RC(MPI_Barrier(sub));
}

static int cmp_desc(const void *a, const void *b) {
    return *(const int *)b - *(const int *)a;
}

/* Comm_split of ic: color world rank % 3 (the last world rank passes MPI_UNDEFINED), key minus
 * the world rank, so each new intercommunicator joins one color's processes of both sides in
 * descending world rank; a color only one side has gives MPI_COMM_NULL. */
static void check_split(MPI_Comm ic, int n) {
    int wr, lw[64], rw[64], el[64], er[64], ne = 0, nre = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    int color = wr == n - 1 ? MPI_UNDEFINED : wr % 3;
    int nl = group_world(ic, 0, lw), nr = group_world(ic, 1, rw);
    for (int i = 0; i < nl; i++)
        if (lw[i] != n - 1 && lw[i] % 3 == color) el[ne++] = lw[i];
    for (int i = 0; i < nr; i++)
        if (rw[i] != n - 1 && rw[i] % 3 == color) er[nre++] = rw[i];
    qsort(el, (size_t)ne, sizeof(int), cmp_desc);
    qsort(er, (size_t)nre, sizeof(int), cmp_desc);
    MPI_Comm sub;
    CHECK_RC(MPI_Comm_split(ic, color, -wr, &sub));
    if (color == MPI_UNDEFINED || nre == 0) {
        CHECK(sub == MPI_COMM_NULL, "color %d (%d remote members): expected MPI_COMM_NULL", color,
              nre);
        return;
    }
    CHECK(sub != MPI_COMM_NULL, "color %d: no communicator", color);
    check_sub(sub, el, ne, er, nre, 31);
    MPI_Comm_free(&sub);
}

/* Comm_create of ic: each side passes its local group without its rank 0 (the whole group if
 * that is alone); then one side passes the empty group, which leaves everyone without one. */
static void check_create(MPI_Comm ic) {
    int lw[64], rw[64], r;
    int nl = group_world(ic, 0, lw), nr = group_world(ic, 1, rw);
    MPI_Comm_rank(ic, &r);
    MPI_Group lg, g;
    MPI_Comm_group(ic, &lg);
    int zero = 0;
    if (nl > 1)
        MPI_Group_excl(lg, 1, &zero, &g);
    else
        MPI_Group_incl(lg, 1, &zero, &g);
    MPI_Comm sub;
    CHECK_RC(MPI_Comm_create(ic, g, &sub));
    if (nl > 1 && r == 0) {
        CHECK(sub == MPI_COMM_NULL, "a process outside its group got a communicator");
    } else {
        CHECK(sub != MPI_COMM_NULL, "no communicator");
        check_sub(sub, nl > 1 ? lw + 1 : lw, nl > 1 ? nl - 1 : 1, nr > 1 ? rw + 1 : rw,
                  nr > 1 ? nr - 1 : 1, 33);
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&g);
    /* the side holding world rank 0 passes the empty group */
    int has0 = lw[0] == 0;
    CHECK_RC(MPI_Comm_create(ic, has0 ? MPI_GROUP_EMPTY : lg, &sub));
    CHECK(sub == MPI_COMM_NULL, "the other side's group was empty: expected MPI_COMM_NULL");
    MPI_Group_free(&lg);
}

/* Bad arguments of one process or one side reach every process of both sides. */
static void check_split_errors(MPI_Comm ic) {
    int wr, lw[64], rw[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    group_world(ic, 0, lw);
    group_world(ic, 1, rw);
    MPI_Comm sub = MPI_COMM_SELF;
    CHECK_ERR(MPI_Comm_split(ic, wr == 0 ? -5 : 0, 0, &sub), MPI_ERR_ARG);
    CHECK(sub == MPI_COMM_NULL, "a failed split returns MPI_COMM_NULL");
    MPI_Group lg, wg;
    MPI_Comm_group(ic, &lg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    /* the side without world rank 0 passes the world's group: not a subset of its own */
    int has0 = lw[0] == 0;
    CHECK_ERR(MPI_Comm_create(ic, has0 ? lg : wg, &sub), MPI_ERR_GROUP);
    /* (and the intercommunicator still works) */
    check_p2p(ic, 35);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);
    CHECK_ERR(MPI_Comm_split(ic, 0, 0, NULL), MPI_ERR_ARG);
    (void)rw;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm ic, ic2, local;
    CHECK_ERR(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &ic), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_remote_group(MPI_COMM_WORLD, (MPI_Group *)&ic), MPI_ERR_COMM);
    CHECK_ERR(MPI_Intercomm_create(MPI_COMM_WORLD, n, MPI_COMM_WORLD, 0, 1, &ic), MPI_ERR_RANK);
    CHECK_ERR(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, -1, &ic), MPI_ERR_TAG);
    if (n < 2) {
        MPI_Finalize();
        return 0;
    }

    /* halves: [0, h) and [h, n) */
    int h = n / 2, low = rank < h, lo[64], hi[64], nlo = h, nhi = n - h;
    for (int i = 0; i < nlo; i++) lo[i] = i;
    for (int i = 0; i < nhi; i++) hi[i] = h + i;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    /* peer_comm and remote_leader count only at the local leader: when it refuses them, the
     * rest of its group fails with the same class rather than waiting for it */
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    ic = MPI_COMM_WORLD;
    CHECK_ERR(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, n, 7, &ic), MPI_ERR_RANK);
    CHECK(ic == MPI_COMM_NULL, "no intercommunicator after a refused call");
    CHECK_ERR(MPI_Intercomm_create(local, 0, MPI_COMM_NULL, 0, 7, &ic), MPI_ERR_COMM);
    CHECK_ERR(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? 0 : h, 7, &ic), MPI_ERR_RANK);
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? h : 0, 7, &ic));
    int size, r;
    MPI_Comm_size(ic, &size);
    MPI_Comm_rank(ic, &r);
    CHECK(size == (low ? nlo : nhi) && r == (low ? rank : rank - h), "local part %d of %d", r,
          size);
    check_remote(ic, low ? nhi : nlo, low ? hi : lo);
    cu_check_id_over(ic, MPI_COMM_WORLD); /* every world rank is on one side */
    check_p2p(ic, 5);
    int res;
    CHECK_ERR(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &ic2), MPI_ERR_COMM);

    /* dup of an intercommunicator */
    CHECK_RC(MPI_Comm_dup(ic, &ic2));
    check_remote(ic2, low ? nhi : nlo, low ? hi : lo);
    CHECK_RC(MPI_Comm_compare(ic, ic2, &res));
    CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
    CHECK(cu_id(ic2) != cu_id(ic), "the dup has its own ID");
    check_p2p(ic2, 6);
    MPI_Comm_free(&ic2);

    /* merges: low side first when it says high = 0, the other way round, and on a tie the
     * side holding world rank 0 */
    check_merge(ic, low ? 0 : 1, 1, lo, nlo, hi, nhi);
    check_merge(ic, low ? 1 : 0, 0, lo, nlo, hi, nhi);
    check_merge(ic, 0, 1, lo, nlo, hi, nhi);
    check_merge(ic, 1, 1, lo, nlo, hi, nhi);
    check_split(ic, n);
    check_create(ic);
    check_split_errors(ic);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);

    /* evens and odds, leaders other than rank 0 where possible */
    int even = rank % 2 == 0, ne = (n + 1) / 2, no = n / 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, even, rank, &local));
    int lleader = (even ? ne : no) > 1 ? 1 : 0;
    int rleader_world = even ? (no > 1 ? 3 : 1) : (ne > 1 ? 2 : 0);
    CHECK_RC(MPI_Intercomm_create(local, lleader, MPI_COMM_WORLD, rleader_world, 9, &ic));
    int ev[64], od[64];
    for (int i = 0; i < ne; i++) ev[i] = 2 * i;
    for (int i = 0; i < no; i++) od[i] = 2 * i + 1;
    check_remote(ic, even ? no : ne, even ? od : ev);
    cu_check_id_over(ic, MPI_COMM_WORLD); /* every world rank is on one side */
    check_p2p(ic, 11);
    check_merge(ic, !even, 1, ev, ne, od, no);
    check_split(ic, n);
    check_create(ic);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);

    cu_expect_clean();
    MPI_Finalize();
    return 0;
}
