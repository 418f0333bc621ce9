/* Generalized requests: MPI_Grequest_start and MPI_Grequest_complete. The status comes from
 * the query function when a completion call returns the request, then the free function runs
 * (each once, in that order); MPI_Test says not complete before MPI_Grequest_complete;
 * MPI_Request_get_status asks the query function and leaves the request; MPI_Waitall and
 * MPI_Waitany over a mix with point-to-point requests; MPI_Request_free before completion
 * calls only the free function, at completion; MPI_Cancel calls the cancel function with the
 * completion state; errors from the query and free functions come back from the completion
 * call; bad arguments. */
#include "testutil.h"

#include <string.h>

typedef struct state {
    int queries, frees, cancels, last_complete;
    int query_rc, free_rc;
    int order; /* 1 once the free function ran after a query */
} state;

static int query(void *extra, MPI_Status *st) {
    state *s = extra;
    s->queries++;
    MPI_Status_set_elements(st, MPI_INT, 7);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 99;
    return s->query_rc;
}
static int release(void *extra) {
    state *s = extra;
    s->frees++;
    s->order = s->queries > 0;
    return s->free_rc;
}
static int cancel(void *extra, int complete) {
    state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Request rq;
    MPI_Status st;
    int flag, cnt;

    /* the usual life: start, not complete, complete, wait */
    state a = {0};
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &a, &rq));
    CHECK_RC(MPI_Test(&rq, &flag, &st));
    CHECK(!flag && rq != MPI_REQUEST_NULL && a.queries == 0, "incomplete: flag %d", flag);
    CHECK_RC(MPI_Request_get_status(rq, &flag, &st));
    CHECK(!flag, "get_status of an incomplete request: flag %d", flag);
    CHECK_RC(MPI_Cancel(&rq));
    CHECK(a.cancels == 1 && a.last_complete == 0, "cancel: %d calls, complete %d", a.cancels,
          a.last_complete);
    CHECK_RC(MPI_Grequest_complete(rq));
    CHECK_RC(MPI_Request_get_status(rq, &flag, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(flag && a.queries == 1 && a.frees == 0 && st.MPI_SOURCE == 3 && st.MPI_TAG == 99 &&
              cnt == 7,
          "get_status: flag %d queries %d frees %d source %d tag %d count %d", flag, a.queries,
          a.frees, st.MPI_SOURCE, st.MPI_TAG, cnt);
    CHECK_RC(MPI_Wait(&rq, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(rq == MPI_REQUEST_NULL && a.queries == 2 && a.frees == 1 && a.order && cnt == 7 &&
              st.MPI_TAG == 99,
          "wait: queries %d frees %d order %d count %d", a.queries, a.frees, a.order, cnt);

    /* Waitall over a generalized request and a real exchange; Waitany picks the complete one */
    state b = {0}, c = {0};
    int x = rank, y = -1;
    MPI_Request rs[3];
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &b, &rs[0]));
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, (rank + n - 1) % n, 5, MPI_COMM_WORLD, &rs[1]));
    CHECK_RC(MPI_Isend(&x, 1, MPI_INT, (rank + 1) % n, 5, MPI_COMM_WORLD, &rs[2]));
    CHECK_RC(MPI_Grequest_complete(rs[0]));
    MPI_Status sts[3];
    CHECK_RC(MPI_Waitall(3, rs, sts));
    CHECK(b.queries == 1 && b.frees == 1 && sts[0].MPI_TAG == 99 && y == (rank + n - 1) % n,
          "waitall: queries %d frees %d tag %d y %d", b.queries, b.frees, sts[0].MPI_TAG, y);
    MPI_Request two[2];
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &b, &two[0]));
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &c, &two[1]));
    CHECK_RC(MPI_Grequest_complete(two[1]));
    int idx = -1;
    CHECK_RC(MPI_Waitany(2, two, &idx, &st));
    CHECK(idx == 1 && c.frees == 1 && b.frees == 1, "waitany: index %d", idx);
    CHECK_RC(MPI_Cancel(&two[0]));
    CHECK_RC(MPI_Grequest_complete(two[0]));
    CHECK_RC(MPI_Cancel(&two[0]));
    CHECK(b.cancels == 2 && b.last_complete == 1, "cancel after completion: %d %d", b.cancels,
          b.last_complete);
    CHECK_RC(MPI_Wait(&two[0], &st));
    CHECK(b.frees == 2, "second free of b: %d", b.frees);

    /* freed before completion: no query, the free function at completion */
    state d = {0};
    MPI_Request keep;
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &d, &rq));
    keep = rq;
    CHECK_RC(MPI_Request_free(&rq));
    CHECK(rq == MPI_REQUEST_NULL && d.frees == 0, "freed early: frees %d", d.frees);
    CHECK_RC(MPI_Grequest_complete(keep));
    CHECK(d.frees == 1 && d.queries == 0, "freed early, completed: frees %d queries %d", d.frees,
          d.queries);

    /* errors from the callbacks come back from the completion call */
    state e = {.query_rc = MPI_ERR_OTHER};
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &e, &rq));
    CHECK_RC(MPI_Grequest_complete(rq));
    CHECK_ERR(MPI_Wait(&rq, &st), MPI_ERR_OTHER);
    CHECK(rq == MPI_REQUEST_NULL && e.frees == 1, "failed query: frees %d", e.frees);
    state f = {.free_rc = MPI_ERR_INTERN};
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &f, &rq));
    CHECK_RC(MPI_Grequest_complete(rq));
    flag = 0;
    CHECK_ERR(MPI_Test(&rq, &flag, &st), MPI_ERR_INTERN);

    /* ... and from the other calls that run them: MPI_Request_get_status (the query),
     * MPI_Request_free of a completed request and MPI_Grequest_complete of a freed one (the
     * free function) */
    state g = {.query_rc = MPI_ERR_OTHER, .free_rc = MPI_ERR_INTERN};
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &g, &rq));
    CHECK_RC(MPI_Grequest_complete(rq));
    CHECK_ERR(MPI_Request_get_status(rq, &flag, &st), MPI_ERR_OTHER);
    CHECK(flag && g.queries == 1, "get_status of a failing query: flag %d", flag);
    CHECK_ERR(MPI_Request_free(&rq), MPI_ERR_INTERN);
    CHECK(rq == MPI_REQUEST_NULL && g.frees == 1, "failing free: frees %d", g.frees);
    state h = {.free_rc = MPI_ERR_INTERN};
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &h, &rq));
    keep = rq;
    CHECK_RC(MPI_Request_free(&rq));
    CHECK_ERR(MPI_Grequest_complete(keep), MPI_ERR_INTERN);
    CHECK(h.frees == 1 && h.queries == 0, "failing free at completion: frees %d", h.frees);

    /* bad arguments */
    CHECK_ERR(MPI_Grequest_start(query, release, cancel, &a, NULL), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq));
    CHECK_ERR(MPI_Grequest_complete(rq), MPI_ERR_REQUEST); /* not a generalized request */
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Grequest_start(query, release, cancel, &a, &rq));
    CHECK_RC(MPI_Grequest_complete(rq));
    CHECK_ERR(MPI_Grequest_complete(rq), MPI_ERR_REQUEST); /* twice */
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Finalize();
    return 0;
}
