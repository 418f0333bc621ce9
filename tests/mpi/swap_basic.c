/* MPIX_Swap_ranks: ranks exchange their registered regions and identities. After every swap
 * in a sequence (pairs that include rank 0, the master of MPI_COMM_WORLD's ID pool, and a
 * rank with itself): each process's rank and state agree, the processes of the two ranks have
 * changed places (their pids), point-to-point traffic (small, large, any source, messages sent
 * before the swap and received after it, in order) and collectives reach the right ranks on
 * MPI_COMM_WORLD, a duplicate, a Cartesian communicator and MPI_COMM_SELF, and new
 * communicators can still be made and freed. Runs at every size, under several algorithms
 * (the test's variants in tests/CMakeLists.txt). */
#include "testutil.h"

#include <mpi.h>

#define NV  1000  /* doubles of the first region */
#define BIG 40000 /* ints of a large message (rendezvous) */
#define PRE 3     /* messages sent before a swap and received after it */

typedef struct state {
    int id;    /* the rank this state belongs to */
    int steps; /* swaps it has been through */
    double v[NV];
} state;

static state st;
static int tail[37]; /* a second region, of an odd size */

static double val(int id, int i) {
    return id * 1000.0 + i * 0.5;
}

static void check_state(int rank, int steps) {
    CHECK(st.id == rank, "state of rank %d found on rank %d", st.id, rank);
    CHECK(st.steps == steps, "state has %d steps, expected %d", st.steps, steps);
    for (int i = 0; i < NV; i++)
        CHECK(st.v[i] == val(rank, i), "rank %d v[%d] = %g", rank, i, st.v[i]);
    for (int i = 0; i < 37; i++) CHECK(tail[i] == rank * 37 + i, "rank %d tail[%d]", rank, i);
}

/* Traffic on communicator c (whose ranks are MPI_COMM_WORLD's, in some order) after a swap. */
static void traffic(MPI_Comm c, int *big) {
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int right = (r + 1) % n, left = (r + n - 1) % n, got = -1;
    MPI_Status s;
    CHECK_RC(MPI_Sendrecv(&r, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, c, &s));
    CHECK(got == left && s.MPI_SOURCE == left, "ring: got %d from %d, expected %d", got,
          s.MPI_SOURCE, left);
    /* any source */
    if (r == 0) {
        for (int k = 1; k < n; k++) {
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 8, c, &s));
            CHECK(got == s.MPI_SOURCE, "any source: %d from %d", got, s.MPI_SOURCE);
        }
    } else {
        CHECK_RC(MPI_Send(&r, 1, MPI_INT, 0, 8, c));
    }
    /* large messages: the reader copies from the sender's process */
    for (int i = 0; i < BIG; i++) big[i] = r * 7 + i;
    int *in = malloc(BIG * sizeof(int));
    CHECK_RC(MPI_Sendrecv(big, BIG, MPI_INT, right, 9, in, BIG, MPI_INT, left, 9, c, &s));
    for (int i = 0; i < BIG; i += 997) CHECK(in[i] == left * 7 + i, "large message from %d", left);
    free(in);
    /* collectives */
    int sum = 0, *all = malloc((size_t)n * sizeof(int));
    CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce %d", sum);
    CHECK_RC(MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int q = 0; q < n; q++) CHECK(all[q] == q, "allgather[%d] = %d", q, all[q]);
    for (int root = 0; root < n; root++) {
        int v = r == root ? 1000 + root : -1;
        CHECK_RC(MPI_Bcast(&v, 1, MPI_INT, root, c));
        CHECK(v == 1000 + root, "bcast from %d: %d", root, v);
        big[0] = r == root ? root : -1;
        big[BIG - 1] = r == root ? -root : 1;
        CHECK_RC(MPI_Bcast(big, BIG, MPI_INT, root, c));
        CHECK(big[0] == root && big[BIG - 1] == -root, "large bcast from %d", root);
        CHECK_RC(MPI_Gather(&r, 1, MPI_INT, all, 1, MPI_INT, root, c));
        if (r == root)
            for (int q = 0; q < n; q++)
                CHECK(all[q] == q, "gather at %d: [%d] = %d", root, q, all[q]);
    }
    CHECK_RC(MPI_Barrier(c));
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    st.id = rank;
    for (int i = 0; i < NV; i++) st.v[i] = val(rank, i);
    for (int i = 0; i < 37; i++) tail[i] = rank * 37 + i;
    CHECK_RC(MPIX_Checkpoint_register(&st, sizeof(st)));
    CHECK_RC(MPIX_Checkpoint_register(tail, sizeof(tail)));

    MPI_Comm dup, cart;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int dims[1] = {n}, periods[1] = {1};
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    MPI_Group wgroup, sgroup;
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    MPI_Comm_group(MPI_COMM_SELF, &sgroup);

    int *pid = malloc((size_t)n * sizeof(int)), *pid0 = malloc((size_t)n * sizeof(int));
    int *big = malloc(BIG * sizeof(int));
    int me = (int)getpid();
    CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, pid0, 1, MPI_INT, MPI_COMM_WORLD));

    int nswaps = n == 1 ? 2 : 3 * n + 2;
    for (int s = 0; s < nswaps; s++) {
        int a = s == 0 ? 0 : (s * 7 + 1) % n, b = s == 0 ? n - 1 : (s * 3) % n;
        CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, pid, 1, MPI_INT, MPI_COMM_WORLD));
        /* messages from every rank to the next, sent now and received after the swap, and
         * more sent after it: they arrive from the same rank, in order */
        int to = (rank + 1) % n, from = (rank + n - 1) % n;
        for (int k = 0; k < PRE; k++)
            if (n > 1 && rank != a && rank != b && to != a && to != b)
                CHECK_RC(MPI_Send(&k, 1, MPI_INT, to, 20, MPI_COMM_WORLD));
        /* and from rank a to a third rank: some before the swap (from a's old process), some
         * after it (from its new one) */
        int third = 0;
        while (third < n && (third == a || third == b)) third++;
        if (rank == a && a != b && third < n)
            for (int k = 0; k < PRE; k++)
                CHECK_RC(MPI_Send(&k, 1, MPI_INT, third, 21, MPI_COMM_WORLD));
        /* receives the third rank posts before the swap, from rank b and from any source,
         * which rank b and rank a send after it from their new processes */
        MPI_Request pre[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int got[2] = {-1, -1};
        if (rank == third && a != b && third < n) {
            CHECK_RC(MPI_Irecv(&got[0], 1, MPI_INT, b, 22, MPI_COMM_WORLD, &pre[0]));
            CHECK_RC(MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 23, MPI_COMM_WORLD, &pre[1]));
        }
        int old = rank;
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        int expect = old == a ? b : old == b ? a : old;
        CHECK(rank == expect, "swap %d (%d, %d): rank %d became %d", s, a, b, old, rank);
        st.steps++; /* every rank's state counts the swaps */
        check_state(rank, s + 1);
        int *now = malloc((size_t)n * sizeof(int));
        CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, now, 1, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < n; q++) {
            int was = q == a ? b : q == b ? a : q;
            CHECK(now[q] == pid[was], "swap %d: rank %d is in process %d, expected %d", s, q,
                  now[q], pid[was]);
        }
        free(now);
        if (rank == a && a != b && third < n)
            for (int k = PRE; k < 2 * PRE; k++)
                CHECK_RC(MPI_Send(&k, 1, MPI_INT, third, 21, MPI_COMM_WORLD));
        if ((rank == a || rank == b) && a != b && third < n)
            CHECK_RC(MPI_Send(&rank, 1, MPI_INT, third, rank == b ? 22 : 23, MPI_COMM_WORLD));
        if (rank == third && a != b) {
            MPI_Status ps[2];
            CHECK_RC(MPI_Waitall(2, pre, ps));
            CHECK(got[0] == b && ps[0].MPI_SOURCE == b, "posted receive from %d got %d from %d", b,
                  got[0], ps[0].MPI_SOURCE);
            CHECK(got[1] == a && ps[1].MPI_SOURCE == a, "any-source receive got %d from %d", got[1],
                  ps[1].MPI_SOURCE);
        }
        if (rank == third && a != b)
            for (int k = 0; k < 2 * PRE; k++) {
                int v = -1;
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, a, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(v == k, "message %d of rank %d across its swap came as %d", k, a, v);
            }
        /* the pre-swap messages between ranks outside the swap */
        for (int k = 0; k < PRE; k++)
            if (n > 1 && from != a && from != b && rank != a && rank != b) {
                int v = -1;
                MPI_Status ms;
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, from, 20, MPI_COMM_WORLD, &ms));
                CHECK(v == k && ms.MPI_SOURCE == from, "pre-swap message %d from %d: %d", k, from,
                      v);
            }
        int r2;
        MPI_Comm_rank(dup, &r2);
        CHECK(r2 == rank, "duplicate: rank %d, world rank %d", r2, rank);
        int coord = -1;
        MPI_Comm_rank(cart, &r2);
        CHECK_RC(MPI_Cart_coords(cart, r2, 1, &coord));
        CHECK(r2 == rank && coord == rank, "cart: rank %d coord %d", r2, coord);
        int zero = 0, w = -1;
        CHECK_RC(MPI_Group_translate_ranks(sgroup, 1, &zero, wgroup, &w));
        CHECK(w == rank, "MPI_COMM_SELF's group holds world rank %d, expected %d", w, rank);
        MPI_Group g2;
        MPI_Comm_group(MPI_COMM_SELF, &g2);
        CHECK_RC(MPI_Group_translate_ranks(g2, 1, &zero, wgroup, &w));
        CHECK(w == rank, "MPI_COMM_SELF's group (new handle) holds world rank %d", w);
        MPI_Group_free(&g2);
        traffic(MPI_COMM_WORLD, big);
        traffic(dup, big);
        traffic(cart, big);
        /* a Cartesian communicator on the first half of the ranks (made from the ID stream of
         * MPI_COMM_WORLD's master, whose rank may be outside that half after a swap), and a
         * duplicate of it (whose IDs come from the pool of its own master) */
        {
            int half = n > 1 ? n / 2 : 1, hdims[1] = {half}, hper[1] = {0};
            MPI_Comm hc, hd;
            CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, hdims, hper, 0, &hc));
            CHECK((rank < half) == (hc != MPI_COMM_NULL), "rank %d: half-size cart", rank);
            if (hc != MPI_COMM_NULL) {
                CHECK_RC(MPI_Comm_dup(hc, &hd));
                int hr, sum = 0;
                MPI_Comm_rank(hd, &hr);
                CHECK(hr == rank, "half-size cart's duplicate: rank %d of world rank %d", hr, rank);
                CHECK_RC(MPI_Allreduce(&hr, &sum, 1, MPI_INT, MPI_SUM, hd));
                CHECK(sum == half * (half - 1) / 2, "half-size cart: sum %d", sum);
                MPI_Comm_free(&hd);
                MPI_Comm_free(&hc);
            }
        }
        /* an intercommunicator between the halves, its duplicate, split and merger */
        if (n > 1) {
            int left = rank < n / 2;
            MPI_Comm side, ic, icd, ics, merged;
            CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, left, rank, &side));
            CHECK_RC(MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, left ? n / 2 : 0, 30, &ic));
            CHECK_RC(MPI_Comm_dup(ic, &icd));
            CHECK_RC(MPI_Comm_split(icd, 0, rank, &ics));
            CHECK_RC(MPI_Intercomm_merge(ics, !left, &merged));
            int mr, rs;
            MPI_Comm_rank(merged, &mr);
            MPI_Comm_remote_size(ics, &rs);
            CHECK(mr == rank && rs == (left ? n - n / 2 : n / 2), "merged: rank %d of world %d", mr,
                  rank);
            traffic(merged, big);
            MPI_Comm_free(&merged);
            MPI_Comm_free(&ics);
            MPI_Comm_free(&icd);
            MPI_Comm_free(&ic);
            MPI_Comm_free(&side);
        }
        /* new communicators: their IDs come from pools that stay with their processes */
        for (int k = 0; k < 4; k++) {
            MPI_Comm d, h;
            CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
            CHECK_RC(MPI_Comm_split(d, rank % 2, n - rank, &h));
            uint64_t id = 0, lo = 0, hi = 0;
            CHECK_RC(MPIX_Comm_get_id(d, &id));
            CHECK_RC(MPI_Allreduce(&id, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD));
            CHECK_RC(MPI_Allreduce(&id, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD));
            CHECK(lo == hi, "a new communicator has IDs %llu..%llu", (unsigned long long)lo,
                  (unsigned long long)hi);
            int hr, hn;
            MPI_Comm_rank(h, &hr);
            MPI_Comm_size(h, &hn);
            int above = 0, same = 0; /* key n - rank orders the ranks of a colour downwards */
            for (int q = 0; q < n; q++)
                if (q % 2 == rank % 2) same++, above += q > rank;
            CHECK(hr == above && hn == same, "split: rank %d of %d, expected %d of %d", hr, hn,
                  above, same);
            traffic(h, big);
            MPI_Comm_free(&h);
            MPI_Comm_free(&d);
        }
    }
    /* swapping every pair back in reverse order restores the first placement */
    for (int s = nswaps - 1; s >= 0; s--) {
        int a = s == 0 ? 0 : (s * 7 + 1) % n, b = s == 0 ? n - 1 : (s * 3) % n;
        CHECK_RC(MPIX_Swap_ranks(dup, a, b));
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, pid, 1, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < n; q++) CHECK(pid[q] == pid0[q], "rank %d did not come back", q);
    check_state(rank, nswaps);
    MPI_Group_free(&wgroup);
    MPI_Group_free(&sgroup);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&dup);
    free(pid), free(pid0), free(big);
    if (rank == 0) printf("swap_basic: %d swaps at %d ranks passed\n", 2 * nswaps, n);
    MPI_Finalize();
    return 0;
}
