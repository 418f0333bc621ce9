/* A wait that no message can end, because the peer it waits for has called MPI_Finalize:
 * the call returns MPI_ERR_OTHER naming MPI_Finalize instead of waiting forever, and the job
 * ends cleanly. Rank 0 waits; the other ranks send what they were asked to, then finalize.
 * Messages they sent before must still arrive first, and a wait for a live rank must not be
 * cut short.
 *
 * Argument: the case (a name from `main` below). */
#include "testutil.h"

enum { BIG = 1 << 20, LATE = 24000 };
static char big[BIG];

/* rc must be MPI_ERR_OTHER with a message that names MPI_Finalize and `who`. */
static void check_finalized(int rc, const char *who) {
    char msg[MPI_MAX_ERROR_STRING];
    int cls = tu_error(rc, msg);
    CHECK(cls == MPI_ERR_OTHER, "expected MPI_ERR_OTHER, got rc %d class %d (%s)", rc, cls, msg);
    CHECK(strstr(msg, "MPI_Finalize") && strstr(msg, who), "message: %s", msg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(w, &me);
    MPI_Comm_size(w, &np);
    CHECK(argc == 2 && np >= 2, "usage: p2p_finalized CASE (at least 2 ranks)");
    const char *k = argv[1];
    int v = -1;
    MPI_Status st;
    MPI_Request r;

    if (!strcmp(k, "recv") || !strcmp(k, "wait") || !strcmp(k, "probe")) {
        /* rank 1 sends two messages, rank 0 takes three */
        if (me == 1)
            for (int i = 0; i < 2; i++) CHECK_RC(MPI_Send(&i, 1, MPI_INT, 0, 7, w));
        if (me == 0) {
            for (int i = 0; i < 2; i++) {
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 1, 7, w, &st));
                CHECK(v == i, "message %d: %d", i, v);
            }
            int rc;
            if (!strcmp(k, "recv")) {
                rc = MPI_Recv(&v, 1, MPI_INT, 1, 7, w, &st);
            } else if (!strcmp(k, "wait")) {
                CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, 1, MPI_ANY_TAG, w, &r));
                rc = MPI_Wait(&r, &st);
                CHECK(r == MPI_REQUEST_NULL, "the failed request is not freed");
            } else {
                rc = MPI_Probe(1, 7, w, &st);
            }
            check_finalized(rc, "rank 1");
        }
    } else if (!strcmp(k, "anysource")) {
        /* every other rank sends one message after a pause; rank 0 takes one more */
        if (me > 0) {
            tu_sleep_ms(10 * me);
            CHECK_RC(MPI_Send(&me, 1, MPI_INT, 0, me, w));
        } else {
            int seen = 0;
            for (int i = 1; i < np; i++) {
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, w, &st));
                CHECK(v == st.MPI_SOURCE && v == st.MPI_TAG, "got %d from %d", v, st.MPI_SOURCE);
                seen |= 1 << v;
            }
            CHECK(seen == ((1 << np) - 2), "senders seen: %x", seen);
            int idx = -1;
            CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, w, &r));
            check_finalized(MPI_Waitany(1, &r, &idx, &st), "every other rank");
            CHECK(idx == 0, "Waitany index %d", idx);
            /* with the others gone, a message rank 0 sends itself still arrives */
            MPI_Request rs;
            CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, w, &r));
            int one = 1;
            CHECK_RC(MPI_Isend(&one, 1, MPI_INT, 0, 99, w, &rs));
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_RC(MPI_Wait(&rs, MPI_STATUS_IGNORE));
            CHECK(v == 1, "self message %d", v);
        }
    } else if (!strcmp(k, "send") || !strcmp(k, "ssend")) {
        /* rank 1 sends a message rank 0 never receives: large (waits for the receiver), or
         * small and synchronous */
        if (me == 1) {
            int rc = !strcmp(k, "send") ? MPI_Send(big, BIG, MPI_CHAR, 0, 3, w)
                                        : MPI_Ssend(&v, 1, MPI_INT, 0, 3, w);
            check_finalized(rc, "rank 0");
        }
    } else if (!strcmp(k, "slow")) {
        /* the check the other way: rank 1 finalizes, rank 2 is slow but sends; rank 0's
         * receives from rank 2 (specific and any source) must complete */
        CHECK(np >= 3, "slow needs 3 ranks");
        if (me == 2) {
            tu_sleep_ms(200);
            CHECK_RC(MPI_Send(big, BIG, MPI_CHAR, 0, 4, w));
            tu_sleep_ms(200);
            CHECK_RC(MPI_Send(&me, 1, MPI_INT, 0, 5, w));
        }
        if (me == 0) {
            CHECK_RC(MPI_Recv(big, BIG, MPI_CHAR, 2, 4, w, &st));
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, w, &st));
            CHECK(v == 2 && st.MPI_SOURCE == 2, "got %d from %d", v, st.MPI_SOURCE);
        }
    } else if (!strcmp(k, "late") || !strcmp(k, "late_probe")) {
        /* rank 1 queues LATE small messages, then the one rank 0 probes for, and finalizes
         * while rank 0 is still taking them in. A probe that has waited long checks whether
         * rank 1 has finalized, and that check first takes in everything queued (up to 16K
         * messages from a rank), so the message it waits for often arrives inside the check;
         * it must be found then, not lost. (COHORT_SHM_RING_CELLS holds them all at once.) */
        if (me == 1) {
            for (int i = 0; i < LATE; i++) CHECK_RC(MPI_Send(&i, 1, MPI_INT, 0, 1, w));
            v = LATE;
            CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 2, w));
        }
        if (me == 0) {
            tu_sleep_ms(300); /* let rank 1 queue them all and finalize */
            if (!strcmp(k, "late")) {
                MPI_Message msg;
                CHECK_RC(MPI_Mprobe(1, 2, w, &msg, &st));
                CHECK_RC(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st));
            } else {
                CHECK_RC(MPI_Probe(1, 2, w, &st));
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 1, 2, w, &st));
            }
            CHECK(v == LATE && st.MPI_SOURCE == 1 && st.MPI_TAG == 2, "got %d from %d tag %d", v,
                  st.MPI_SOURCE, st.MPI_TAG);
            for (int i = 0; i < LATE; i++) {
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, 1, 1, w, &st));
                CHECK(v == i, "message %d: %d", i, v);
            }
        }
    } else {
        CHECK(0, "unknown case %s", k);
    }
    MPI_Finalize();
    return 0;
}
