/* MPIX_Swap_ranks refused: bad arguments, members naming different pairs, regions that differ,
 * and everything that keeps a rank from moving (a message not yet received, small or large, a
 * request in flight, a communicator that holds one rank of the pair and not the other, an
 * intercommunicator across the pair, a window, a persistent collective, a distributed graph).
 * Every member returns the same error class, and nothing has changed: ranks, regions and
 * processes. Once the obstacle is gone the same swap succeeds, and its undoing too. */
#include "testutil.h"

#include <mpi.h>

typedef struct state {
    int id;
    double v[64];
} state;

static state st;
static int n;
static int *pid0;

/* Nothing has moved: every rank is in its first process, with its own state. */
static void unchanged(const char *what) {
    int rank, me = (int)getpid(), *pid = malloc((size_t)n * sizeof(int));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(st.id == rank, "%s: state of rank %d on rank %d", what, st.id, rank);
    for (int i = 0; i < 64; i++) CHECK(st.v[i] == rank + i * 0.25, "%s: v[%d]", what, i);
    CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, pid, 1, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < n; q++) CHECK(pid[q] == pid0[q], "%s: rank %d moved", what, q);
    free(pid);
}

/* Every member gets class cls from the swap, and nothing changes. */
static void refused(MPI_Comm c, int a, int b, int cls, const char *what) {
    CHECK_ERR(MPIX_Swap_ranks(c, a, b), cls);
    unchanged(what);
}

/* The swap succeeds, moves what it should, and is undone. */
static void works(int a, int b, const char *what) {
    int rank, after;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
    MPI_Comm_rank(MPI_COMM_WORLD, &after);
    CHECK(after == (rank == a   ? b
                    : rank == b ? a
                                : rank),
          "%s: rank %d became %d", what, rank, after);
    CHECK(st.id == after, "%s: state of rank %d on rank %d", what, st.id, after);
    CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
    unchanged(what);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    st.id = rank;
    for (int i = 0; i < 64; i++) st.v[i] = rank + i * 0.25;
    CHECK_RC(MPIX_Checkpoint_register(&st, sizeof(st)));
    pid0 = malloc((size_t)n * sizeof(int));
    int me = (int)getpid();
    CHECK_RC(MPI_Allgather(&me, 1, MPI_INT, pid0, 1, MPI_INT, MPI_COMM_WORLD));
    int a = 0, b = n - 1, third = n >= 3 ? 1 : -1;

    /* arguments, checked by each rank alone */
    refused(MPI_COMM_WORLD, -1, 0, MPI_ERR_RANK, "rank_a -1");
    refused(MPI_COMM_WORLD, 0, n, MPI_ERR_RANK, "rank_b = size");
    CHECK_ERR(MPIX_Swap_ranks(MPI_COMM_NULL, 0, 0), MPI_ERR_COMM);
    if (n > 1) {
        CHECK_ERR(MPIX_Swap_ranks(MPI_COMM_SELF, 0, 0), MPI_ERR_COMM); /* not every process */
        MPI_Comm half;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank < n / 2, rank, &half));
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        refused(half, 0, 0, MPI_ERR_COMM, "half the processes");
        MPI_Comm_free(&half);
    }
    works(a, a, "a rank with itself");
    if (n == 1) goto done;

    /* members that name different pairs */
    if (third >= 0) refused(MPI_COMM_WORLD, 0, rank == 0 ? 1 : 2, MPI_ERR_ARG, "different pairs");

    /* regions that differ: in size, then in shape with the same size */
    int extra[3];
    if (rank == b) CHECK_RC(MPIX_Checkpoint_register(extra, sizeof(extra)));
    refused(MPI_COMM_WORLD, a, b, MPI_ERR_SIZE, "more regions");
    if (rank == b) CHECK_RC(MPIX_Checkpoint_unregister(extra));
    char two[32];
    if (rank == a || rank == b) {
        CHECK_RC(MPIX_Checkpoint_register(two, rank == a ? 16 : 8));
        CHECK_RC(MPIX_Checkpoint_register(two + 16, rank == a ? 16 : 24));
    }
    refused(MPI_COMM_WORLD, a, b, MPI_ERR_SIZE, "regions of other sizes");
    if (rank == a || rank == b) {
        CHECK_RC(MPIX_Checkpoint_unregister(two));
        CHECK_RC(MPIX_Checkpoint_unregister(two + 16));
    }
    works(a, b, "after the regions");

    /* a message to rank a not yet received: small, then large */
    if (third >= 0) {
        for (int large = 0; large < 2; large++) {
            int cnt = large ? 1 << 18 : 4, *buf = malloc((size_t)cnt * sizeof(int));
            MPI_Request r = MPI_REQUEST_NULL;
            for (int i = 0; i < cnt; i++) buf[i] = i ^ 0x5a5a;
            if (rank == third) CHECK_RC(MPI_Isend(buf, cnt, MPI_INT, a, 5, MPI_COMM_WORLD, &r));
            refused(MPI_COMM_WORLD, a, b, MPI_ERR_PENDING, large ? "large message" : "message");
            if (rank == a) {
                memset(buf, 0, (size_t)cnt * sizeof(int));
                CHECK_RC(MPI_Recv(buf, cnt, MPI_INT, third, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (int i = 0; i < cnt; i++) CHECK(buf[i] == (i ^ 0x5a5a), "message [%d]", i);
            }
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            works(a, b, "after the message");
            free(buf);
        }
    }

    /* a request in flight at rank b */
    {
        int x;
        MPI_Request r = MPI_REQUEST_NULL;
        if (rank == b) CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r));
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_PENDING, "request");
        if (rank == b) {
            CHECK_RC(MPI_Cancel(&r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        works(a, b, "after the request");
    }

    /* communicators: one that holds a and not b; one rank alone (allowed); an
     * intercommunicator with a and b on different sides */
    if (third >= 0) {
        MPI_Comm part, alone;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank == a || rank == third, rank, &part));
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_COMM, "communicator with a and not b");
        MPI_Comm_free(&part);
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone));
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        int r1, w = -1, zero = 0, now;
        MPI_Comm_rank(alone, &r1);
        MPI_Comm_rank(MPI_COMM_WORLD, &now);
        MPI_Group ga, gw;
        MPI_Comm_group(alone, &ga);
        MPI_Comm_group(MPI_COMM_WORLD, &gw);
        CHECK_RC(MPI_Group_translate_ranks(ga, 1, &zero, gw, &w));
        CHECK(r1 == 0 && w == now, "one-rank communicator: rank %d, world rank %d of %d", r1, w,
              now);
        MPI_Group_free(&ga);
        MPI_Group_free(&gw);
        CHECK_RC(MPI_Barrier(alone));
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        unchanged("one-rank communicator");
        MPI_Comm_free(&alone);
    }
    {
        MPI_Comm side, inter;
        int left = rank < n / 2;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, left, rank, &side));
        CHECK_RC(MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, left ? n / 2 : 0, 7, &inter));
        MPI_Comm_free(&side);
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_COMM, "intercommunicator across the pair");
        MPI_Comm_free(&inter);
    }

    /* a window; a persistent collective; a distributed graph */
    {
        MPI_Win w;
        CHECK_RC(MPI_Win_create(st.v, sizeof(st.v), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_WIN, "window");
        MPI_Win_free(&w);
        MPI_Request r;
        CHECK_RC(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_REQUEST, "persistent collective");
        MPI_Request_free(&r);
        MPI_Comm g;
        int to = (rank + 1) % n, from = (rank + n - 1) % n;
        CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, MPI_UNWEIGHTED, 1, &to,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
        refused(MPI_COMM_WORLD, a, b, MPI_ERR_TOPOLOGY, "distributed graph");
        MPI_Comm_free(&g);
        works(a, b, "after the window, the request and the graph");
    }

    /* the other ranks' images may have any size: only the pair's must match */
    {
        size_t mine = rank == a || rank == b ? 1000 : 37 * (size_t)(rank + 1);
        unsigned char *x = malloc(mine);
        for (size_t i = 0; i < mine; i++) x[i] = (unsigned char)(i + (size_t)rank);
        CHECK_RC(MPIX_Checkpoint_register(x, mine));
        int now;
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        MPI_Comm_rank(MPI_COMM_WORLD, &now);
        for (size_t i = 0; i < mine; i++)
            CHECK(x[i] == (unsigned char)(i + (size_t)now), "other sizes: byte %zu", i);
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        CHECK_RC(MPIX_Checkpoint_unregister(x));
        unchanged("other ranks' images of other sizes");
        free(x);
    }

    /* an image larger than one round of the exchange (4 MiB), in regions that chunks straddle */
    {
        size_t nb = (9u << 20) / sizeof(int) + 3;
        int *big = malloc(nb * sizeof(int)), now;
        char odd[5] = {(char)rank, 1, 2, 3, (char)~rank};
        for (size_t i = 0; i < nb; i++) big[i] = (int)(i * 7) ^ rank;
        CHECK_RC(MPIX_Checkpoint_register(odd, sizeof(odd)));
        CHECK_RC(MPIX_Checkpoint_register(big, nb * sizeof(int)));
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        MPI_Comm_rank(MPI_COMM_WORLD, &now);
        for (size_t i = 0; i < nb; i++) CHECK(big[i] == ((int)(i * 7) ^ now), "big[%zu]", i);
        CHECK(odd[0] == (char)now && odd[4] == (char)~now, "odd region");
        CHECK_RC(MPIX_Swap_ranks(MPI_COMM_WORLD, a, b));
        CHECK_RC(MPIX_Checkpoint_unregister(big));
        CHECK_RC(MPIX_Checkpoint_unregister(odd));
        unchanged("large image");
        free(big);
    }

done:
    /* the message names the pair and the reason */
    if (n >= 2) {
        int x;
        MPI_Request r = MPI_REQUEST_NULL;
        if (rank == b) CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &r));
        int rc = MPIX_Swap_ranks(MPI_COMM_WORLD, a, b);
        char msg[MPI_MAX_ERROR_STRING];
        tu_error(rc, msg);
        CHECK(strstr(msg, "cannot swap ranks 0 and") && strstr(msg, "in flight"), "message: %s",
              msg);
        if (rank == b) {
            CHECK_RC(MPI_Cancel(&r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
    }
    unchanged("the end");
    free(pid0);
    if (rank == 0) printf("swap_errors: passed at %d ranks\n", n);
    MPI_Finalize();
    return 0;
}
