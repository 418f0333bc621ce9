/* Intercommunicators: Intercomm_create from two halves of the world (and from even/odd ranks
 * with other leaders), point-to-point across them, remote size and group, Comm_dup of an
 * intercommunicator, Intercomm_merge with every choice of `high`, and the bad arguments. */
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
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);

    cu_expect_clean();
    MPI_Finalize();
    return 0;
}
