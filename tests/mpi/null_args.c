/* NULL where a call writes its result, or reads a status: a clear error (MPI_ERR_ARG, or
 * MPI_ERR_REQUEST for request pointers), never a crash; and NULL as an output status is taken
 * as MPI_STATUS_IGNORE, as programs written for Open MPI (where the two are the same) expect. Each
 * case runs on MPI_COMM_SELF, so the program runs at any size. */
#include "testutil.h"

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
}

/* The error class of rc and whether its message names `what`. */
static void expect(int rc, int cls, const char *what, const char *call) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int got = rc == MPI_SUCCESS ? MPI_SUCCESS : tu_error(rc, msg);
    CHECK(got == cls, "%s: expected class %d, got rc %d class %d", call, cls, rc, got);
    CHECK(strstr(msg, what), "%s: message does not name %s: %s", call, what, msg);
}
#define EXPECT(call, cls, what) expect((call), (cls), (what), #call)

/* A message to this rank on MPI_COMM_SELF with tag `tag` and value v. */
static void post(int v, int tag) {
    CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_SELF));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm self = MPI_COMM_SELF;
    int x = 0, flag = 0, idx[1] = {0};
    MPI_Request rq = MPI_REQUEST_NULL, rqs[1] = {MPI_REQUEST_NULL};
    MPI_Status st;
    char name[MPI_MAX_PROCESSOR_NAME];

    /* requests */
    EXPECT(MPI_Send_init(&x, 1, MPI_INT, 0, 1, self, NULL), MPI_ERR_REQUEST, "request");
    EXPECT(MPI_Recv_init(&x, 1, MPI_INT, 0, 1, self, NULL), MPI_ERR_REQUEST, "request");
    EXPECT(MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "array_of_requests");
    EXPECT(MPI_Waitany(1, NULL, idx, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "array_of_requests");
    EXPECT(MPI_Testsome(1, NULL, &x, idx, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST,
           "array_of_requests");
    /* flags, indices and counts the completion calls write */
    EXPECT(MPI_Test(&rq, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Testall(1, rqs, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Waitany(1, rqs, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "index");
    EXPECT(MPI_Testany(1, rqs, NULL, &flag, MPI_STATUS_IGNORE), MPI_ERR_ARG, "index");
    EXPECT(MPI_Testany(1, rqs, idx, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Waitsome(1, rqs, NULL, idx, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "outcount");
    EXPECT(MPI_Testsome(1, rqs, NULL, idx, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "outcount");
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 5, self, &rqs[0])); /* the indices of an active one */
    EXPECT(MPI_Testsome(1, rqs, &flag, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "indices");
    EXPECT(MPI_Waitsome(1, rqs, &flag, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "indices");
    CHECK_RC(MPI_Cancel(&rqs[0]));
    CHECK_RC(MPI_Wait(&rqs[0], &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the receive was not cancelled");
    EXPECT(MPI_Request_get_status(MPI_REQUEST_NULL, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Iprobe(0, 1, self, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG, "flag");
    /* statuses the call reads */
    post(5, 2);
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 2, self, &st));
    EXPECT(MPI_Get_count(&st, MPI_INT, NULL), MPI_ERR_ARG, "count");
    EXPECT(MPI_Get_count(NULL, MPI_INT, &x), MPI_ERR_ARG, "status is NULL");
    EXPECT(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &x), MPI_ERR_ARG, "MPI_STATUS_IGNORE");
    EXPECT(MPI_Get_elements(&st, MPI_INT, NULL), MPI_ERR_ARG, "count");
    EXPECT(MPI_Get_elements_x(NULL, MPI_INT, NULL), MPI_ERR_ARG, "status");
    EXPECT(MPI_Test_cancelled(&st, NULL), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG, "status");
    EXPECT(MPI_Status_set_elements(NULL, MPI_INT, 1), MPI_ERR_ARG, "status");
    EXPECT(MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1), MPI_ERR_ARG, "status");
    int count = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 1, "count %d after the failed calls", count);
    /* environment and error handling */
    EXPECT(MPI_Initialized(NULL), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Finalized(NULL), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Query_thread(NULL), MPI_ERR_ARG, "provided");
    EXPECT(MPI_Is_thread_main(NULL), MPI_ERR_ARG, "flag");
    EXPECT(MPI_Get_processor_name(name, NULL), MPI_ERR_ARG, "resultlen");
    EXPECT(MPI_Get_processor_name(NULL, &x), MPI_ERR_ARG, "name");
    EXPECT(MPI_Get_version(NULL, &x), MPI_ERR_ARG, "version");
    EXPECT(MPI_Get_library_version(name, NULL), MPI_ERR_ARG, "resultlen");
    EXPECT(MPI_Error_class(MPI_ERR_COMM, NULL), MPI_ERR_ARG, "errorclass");
    EXPECT(MPI_Error_string(MPI_ERR_COMM, NULL, &x), MPI_ERR_ARG, "string");
    EXPECT(MPI_Comm_get_errhandler(self, NULL), MPI_ERR_ARG, "errhandler");
    EXPECT(MPI_Comm_create_errhandler(handler, NULL), MPI_ERR_ARG, "errhandler");
    EXPECT(MPI_Errhandler_free(NULL), MPI_ERR_ARG, "errhandler");
    void *addr;
    EXPECT(MPI_Buffer_detach(NULL, &x), MPI_ERR_ARG, "buffer_addr");
    EXPECT(MPI_Buffer_detach(&addr, NULL), MPI_ERR_ARG, "size");

    /* NULL as an output status: ignored, and the call does its work */
    post(11, 3);
    x = 0;
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 3, self, NULL));
    CHECK(x == 11, "MPI_Recv with a NULL status received %d", x);
    post(12, 3);
    CHECK_RC(MPI_Probe(0, 3, self, NULL));
    CHECK_RC(MPI_Iprobe(0, 3, self, &flag, NULL));
    CHECK(flag, "MPI_Iprobe with a NULL status did not find the message");
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 3, self, &rq));
    CHECK_RC(MPI_Wait(&rq, NULL));
    CHECK(x == 12 && rq == MPI_REQUEST_NULL, "MPI_Wait with a NULL status: %d", x);
    CHECK_RC(MPI_Wait(&rq, NULL)); /* on MPI_REQUEST_NULL */
    post(13, 3);
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 3, self, &rqs[0]));
    CHECK_RC(MPI_Waitall(1, rqs, NULL));
    CHECK(x == 13, "MPI_Waitall with NULL statuses received %d", x);
    post(14, 3);
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 3, self, &rq));
    flag = 0;
    while (!flag) CHECK_RC(MPI_Test(&rq, &flag, NULL));
    CHECK(x == 14, "MPI_Test with a NULL status received %d", x);
    post(15, 3);
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 3, self, &rqs[0]));
    CHECK_RC(MPI_Waitany(1, rqs, idx, NULL));
    CHECK(x == 15 && idx[0] == 0, "MPI_Waitany with a NULL status: %d at %d", x, idx[0]);
    post(16, 3);
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, 0, 3, self, &rqs[0]));
    int out = 0;
    CHECK_RC(MPI_Waitsome(1, rqs, &out, idx, NULL));
    CHECK(x == 16 && out == 1, "MPI_Waitsome with NULL statuses: %d, %d done", x, out);
    int y = 0;
    x = 17;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, 0, 4, &y, 1, MPI_INT, 0, 4, self, NULL));
    CHECK(y == 17, "MPI_Sendrecv with a NULL status received %d", y);

    /* nothing is left behind: no message waits, and collectives still work */
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, self, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message was left on MPI_COMM_SELF");
    int one = 1, sum = 0, size;
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "allreduce gave %d", sum);
    MPI_Finalize();
    return 0;
}
