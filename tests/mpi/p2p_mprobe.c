/* Matched probe: Mprobe/Improbe take a message out of the queue (a later Iprobe or Recv no
 * longer sees it), Mrecv/Imrecv receive exactly that message, small (eager) and large
 * (rendezvous) and through a derived datatype; order with plain receives; ANY_SOURCE with every
 * rank sending; truncation; MPI_PROC_NULL and MPI_MESSAGE_NO_PROC; and bad message handles. */
#include "testutil.h"

#define BIG (1 << 20)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Message msg;
    MPI_Status st;
    int flag, n;

    /* MPI_PROC_NULL: found at once, MPI_MESSAGE_NO_PROC receives nothing */
    CHECK_RC(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
          "Improbe(PROC_NULL): flag %d", flag);
    int x = 7;
    CHECK_RC(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && n == 0 && x == 7,
          "Mrecv(NO_PROC): source %d count %d", st.MPI_SOURCE, n);

    /* bad handles */
    msg = MPI_MESSAGE_NULL;
    CHECK_ERR(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
    msg = 12345;
    CHECK_ERR(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Improbe(size, 0, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_RANK);
    CHECK_ERR(MPI_Improbe(0, -5, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_TAG);
    CHECK_ERR(MPI_Improbe(0, 0, MPI_COMM_NULL, &flag, &msg, &st), MPI_ERR_COMM);

    /* nothing there */
    CHECK_RC(MPI_Improbe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(!flag, "Improbe found a message nobody sent");

    if (size >= 2) {
        int *big = malloc(BIG * sizeof(int)), *in = malloc(BIG * sizeof(int));
        CHECK(big && in, "out of memory");
        if (rank == 0) {
            int a = 1, b = 2;
            for (int i = 0; i < BIG; i++) big[i] = i ^ 0x5a5a;
            CHECK_RC(MPI_Send(&a, 1, MPI_INT, 1, 10, MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(&b, 1, MPI_INT, 1, 10, MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(big, BIG, MPI_INT, 1, 11, MPI_COMM_WORLD)); /* rendezvous */
            CHECK_RC(MPI_Send(big, 64, MPI_INT, 1, 12, MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(big, 8, MPI_INT, 1, 13, MPI_COMM_WORLD));
        } else if (rank == 1) {
            /* the first of two tag-10 messages is matched; a plain receive gets the second */
            CHECK_RC(MPI_Mprobe(0, 10, MPI_COMM_WORLD, &msg, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 10, "Mprobe status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
            int v = 0;
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &st));
            CHECK(v == 2, "plain Recv after Mprobe got %d, expected the second message", v);
            CHECK_RC(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
            CHECK(v == 1 && msg == MPI_MESSAGE_NULL, "Mrecv got %d", v);
            CHECK_ERR(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST); /* used up */

            /* large message: probe the size, receive it with Imrecv */
            CHECK_RC(MPI_Mprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &msg, &st));
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(n == BIG, "probed count %d", n);
            flag = 1;
            CHECK_RC(MPI_Iprobe(0, 11, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "a matched message is still visible to Iprobe");
            MPI_Request req;
            CHECK_RC(MPI_Imrecv(in, n, MPI_INT, &msg, &req));
            CHECK_RC(MPI_Wait(&req, &st));
            for (int i = 0; i < BIG; i++)
                if (in[i] != (i ^ 0x5a5a)) CHECK(0, "large message word %d = %d", i, in[i]);

            /* into a derived datatype: every other int */
            MPI_Datatype strided;
            MPI_Type_vector(64, 1, 2, MPI_INT, &strided);
            MPI_Type_commit(&strided);
            memset(in, 0, 128 * sizeof(int));
            do {
                CHECK_RC(MPI_Improbe(0, 12, MPI_COMM_WORLD, &flag, &msg, &st));
            } while (!flag);
            CHECK_RC(MPI_Mrecv(in, 1, strided, &msg, &st));
            for (int i = 0; i < 64; i++)
                CHECK(in[2 * i] == (i ^ 0x5a5a) && in[2 * i + 1] == 0, "strided word %d", i);
            MPI_Type_free(&strided);

            /* truncation: 8 ints into room for 4 */
            CHECK_RC(MPI_Mprobe(0, 13, MPI_COMM_WORLD, &msg, &st));
            CHECK_ERR(MPI_Mrecv(in, 4, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
        }
        free(big);
        free(in);
    }

    /* everyone sends to rank 0, which takes them in whatever order with ANY_SOURCE */
    if (rank != 0) {
        int v = rank * 3;
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 20, MPI_COMM_WORLD));
    } else {
        int seen = 0;
        for (int k = 1; k < size; k++) {
            CHECK_RC(MPI_Mprobe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &msg, &st));
            int src = st.MPI_SOURCE, v = -1;
            CHECK_RC(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
            CHECK(st.MPI_SOURCE == src && v == src * 3, "from %d got %d", src, v);
            CHECK(!(seen & (1 << src)), "rank %d twice", src);
            seen |= 1 << src;
        }
    }
    /* a message probed but never received is released at MPI_Finalize */
    int self = 5;
    MPI_Request sreq;
    CHECK_RC(MPI_Isend(&self, 1, MPI_INT, rank, 40, MPI_COMM_WORLD, &sreq));
    CHECK_RC(MPI_Mprobe(rank, 40, MPI_COMM_WORLD, &msg, &st));
    CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
