/* A collective that one rank refuses (its own arguments fail the checks) while the others
 * make it, after which that rank calls MPI_Finalize: the others must not wait for it
 * forever. They get MPI_ERR_OTHER naming MPI_Finalize, or MPI_SUCCESS where the call did not
 * need the refusing rank (a broadcast from another root, say), and the job ends cleanly.
 *
 * Arguments: CASE RANK WARM. CASE is one of the names in `cases` below; RANK refuses (-1:
 * the last rank); WARM agreeing calls come first on the communicator (0: the refused call
 * is the communicator's first, during which its shared segment is set up).
 *
 * The case "leave" is the check the other way: no rank refuses, the root of a broadcast
 * leaves the call and calls MPI_Finalize at once while the others enter late; they must
 * still receive the data. The cases "elsewhere" and "order" have ranks wait on two
 * communicators at once, each for the other (see `elsewhere`). */
#include "coll_util.h"

enum { N = 4096 };
static int sb[N], rb[N * 8], cnt[8], dsp[8];

/* The call of case `name`, with a bad argument at the refusing rank; the class it gets there;
 * and whether every other rank needs it (so must see the error). */
static int run(const char *name, int bad, MPI_Comm c, int np, int *refused_cls, int *needed) {
    int n = bad ? -1 : 4;
    *needed = 1;
    *refused_cls = MPI_ERR_COUNT;
    if (!strcmp(name, "allreduce")) return MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, c);
    if (!strcmp(name, "allreduce_large")) /* large enough for segmented algorithms */
        return MPI_Allreduce(sb, rb, bad ? -1 : N, MPI_INT, MPI_SUM, c);
    if (!strcmp(name, "alltoall")) return MPI_Alltoall(sb, n, MPI_INT, rb, 4, MPI_INT, c);
    if (!strcmp(name, "barrier")) {
        *refused_cls = MPI_ERR_COMM;
        return MPI_Barrier(bad ? MPI_COMM_NULL : c);
    }
    if (!strcmp(name, "allgatherv")) { /* a send count larger than the rank's own block */
        *refused_cls = MPI_ERR_TRUNCATE;
        for (int i = 0; i < np; i++) cnt[i] = 4, dsp[i] = 4 * i;
        return MPI_Allgatherv(sb, bad ? 5 : 4, MPI_INT, rb, cnt, dsp, MPI_INT, c);
    }
    if (!strcmp(name, "bcast")) { /* only the refusing rank's subtree needs it */
        *needed = 0;
        return MPI_Bcast(sb, n, MPI_INT, 0, c);
    }
    if (!strcmp(name, "reduce")) {
        *needed = 0; /* the root needs everyone; a leaf of the tree only sends */
        return MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, 0, c);
    }
    fprintf(stderr, "coll_refused: unknown case %s\n", name);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return MPI_ERR_ARG;
}

static void leave(MPI_Comm c, int me) {
    /* 1 element (eager / shm), then 64 Ki ints (single copy or rendezvous, where the root
     * waits for its readers), each on a fresh broadcast after agreeing calls */
    for (int round = 0; round < 2; round++) {
        int n = round ? N : 1;
        for (int i = 0; i < n; i++) sb[i] = me == 0 ? 1000 + i : -1;
        if (me != 0) tu_sleep_ms(30); /* the root is already in MPI_Finalize when round 1 ends */
        CHECK_RC(MPI_Bcast(sb, n, MPI_INT, 0, c));
        for (int i = 0; i < n; i++) CHECK(sb[i] == 1000 + i, "element %d: %d", i, sb[i]);
    }
}

/* An error that says why the call was given up: found here, or learnt from the rank that
 * found it. */
static void check_reason(int rc, const char *why) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    msg[len] = 0;
    CHECK(cls == MPI_ERR_OTHER, "class %d, not MPI_ERR_OTHER: %s", cls, msg);
    CHECK(strstr(msg, "rank") &&
              (strstr(msg, why) || strstr(msg, "found that") || strstr(msg, "MPI_Finalize")),
          "the error does not say why: %s", msg);
}

/* Two communicators that the ranks wait in at once, each for the other. "elsewhere": rank
 * `who` refuses an Allreduce on c and goes on to a Barrier on MPI_COMM_WORLD, where the others
 * come only after the Allreduce. "order": rank `who` calls Allreduce on a second communicator
 * first, the others on c first; some rank must give up its call, and none may wait forever. */
static void elsewhere(const char *name, MPI_Comm c, int me, int who) {
    if (!strcmp(name, "elsewhere")) {
        int rc = MPI_Allreduce(sb, rb, me == who ? -1 : 1, MPI_INT, MPI_SUM, c);
        if (me == who)
            CHECK_ERR(rc, MPI_ERR_COUNT);
        else
            check_reason(rc, "different orders");
        (void)MPI_Barrier(MPI_COMM_WORLD); /* may fail where the detour was found */
        return;
    }
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(c, &d));
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Comm first = me == who ? d : c, second = me == who ? c : d;
    int rc1 = MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, first);
    if (rc1) check_reason(rc1, "different orders");
    int rc2 = MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, second);
    if (rc2) check_reason(rc2, "different orders");
    int failed = rc1 != MPI_SUCCESS, total = 0;
    CHECK_RC(MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total > 0, "no rank reported the calls in different orders");
    MPI_Comm_free(&d);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc == 4 && np <= 8, "usage: coll_refused CASE RANK WARM (at most 8 ranks)");
    const char *name = argv[1];
    int who = atoi(argv[2]), warm = atoi(argv[3]);
    if (who < 0) who = np - 1;
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    for (int i = 0; i < warm; i++) CHECK_RC(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, c));

    if (!strcmp(name, "leave")) {
        leave(c, me);
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(name, "elsewhere") || !strcmp(name, "order")) {
        elsewhere(name, c, me, who);
        MPI_Finalize();
        return 0;
    }
    int refused_cls, needed;
    int rc = run(name, me == who, c, np, &refused_cls, &needed);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (me == who) {
        CHECK(cls == refused_cls, "the refusing rank got class %d, not %d", cls, refused_cls);
        tu_sleep_ms(20); /* let the others wait in the call first */
    } else {
        CHECK(cls == MPI_ERR_OTHER || (!needed && cls == MPI_SUCCESS),
              "rank %d got class %d, not MPI_ERR_OTHER", me, cls);
        if (cls == MPI_ERR_OTHER) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            /* found here, or learnt from a rank that found it */
            CHECK(strstr(msg, "rank") && (strstr(msg, "MPI_Finalize") || strstr(msg, "found that")),
                  "the error names neither MPI_Finalize nor the rank that found it: %s", msg);
        }
        /* the communicator is broken after an abandoned call */
        if (cls == MPI_ERR_OTHER) CHECK_ERR(MPI_Barrier(c), MPI_ERR_OTHER);
    }
    MPI_Finalize();
    return 0;
}
