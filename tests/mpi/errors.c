/* Error handling: with MPI_ERRORS_RETURN every bad argument comes back as the right error
 * class; Error_string/Error_class; user error handlers are called with the error code;
 * handlers can be queried, replaced and freed; error classes and codes the program adds. */
#include "testutil.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void my_handler(MPI_Comm *comm, int *code, ...) {
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler is not ERRORS_ARE_FATAL");
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int buf[16] = {0};
    MPI_Request req;
    MPI_Status st;
    int peer = (rank + 1) % size;
    /* tags */
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, peer, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_ERR(MPI_Irecv(buf, 1, MPI_INT, peer, -7, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    /* ranks */
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, -4, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_ERR(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
    /* counts and buffers */
    CHECK_ERR(MPI_Send(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Recv(buf, -3, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Send(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* datatypes */
    CHECK_ERR(MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Send(buf, 1, (MPI_Datatype)12345, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Send(buf, 1, MPI_COMM_WORLD, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int count;
    CHECK_ERR(MPI_Get_count(&st, MPI_DATATYPE_NULL, &count), MPI_ERR_TYPE);
    /* communicators: reported through MPI_COMM_WORLD's handler */
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)777), MPI_ERR_COMM);
    CHECK_ERR(MPI_Comm_rank(MPI_COMM_NULL, &count), MPI_ERR_COMM);
    CHECK_ERR(MPI_Barrier(MPI_INT), MPI_ERR_COMM);
    /* requests */
    MPI_Request bogus = (MPI_Request)0x14000123;
    CHECK_ERR(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    MPI_Request nullreq = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Wait(&nullreq, &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "empty status");
    /* a request used after it completed is stale */
    int x = 1;
    CHECK_RC(MPI_Isend(&x, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &req));
    MPI_Request copy = req;
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_ERR(MPI_Wait(&copy, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    /* a buffered send that fails sends nothing: without a buffer, and with one but no
     * request to return */
    int flag = 1;
    CHECK_ERR(MPI_Ibsend(&x, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &req), MPI_ERR_BUFFER);
    static char bbuf[1024];
    CHECK_RC(MPI_Buffer_attach(bbuf, (int)sizeof(bbuf)));
    CHECK_ERR(MPI_Ibsend(&x, 1, MPI_INT, 0, 4, MPI_COMM_SELF, NULL), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Iprobe(0, 4, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a failed MPI_Ibsend sent its message");
    CHECK_RC(MPI_Ibsend(&x, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    void *detached;
    int dsize;
    CHECK_RC(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == bbuf && dsize == (int)sizeof(bbuf), "detach returned %p, %d", detached,
          dsize);
    /* collectives: roots and ops */
    CHECK_ERR(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Bcast(buf, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Reduce(buf, buf + 8, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(buf, buf + 8, 1, MPI_INT, (MPI_Op)4242, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(buf, buf + 8, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(buf, buf + 8, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    /* errhandler argument */
    CHECK_ERR(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)99), MPI_ERR_ARG);

    /* Error_class and Error_string for every class */
    char s1[MPI_MAX_ERROR_STRING], s2[MPI_MAX_ERROR_STRING];
    int len;
    for (int c = 0; c <= MPI_ERR_RMA_FLAVOR; c++) {
        int cls;
        CHECK_RC(MPI_Error_class(c, &cls));
        CHECK(cls == c, "class of %d is %d", c, cls);
        CHECK_RC(MPI_Error_string(c, s1, &len));
        CHECK(len > 0 && len == (int)strlen(s1), "string of %d", c);
        if (c > 0) {
            MPI_Error_string(c - 1, s2, &len);
            CHECK(strcmp(s1, s2) != 0, "classes %d and %d share a string", c - 1, c);
        }
    }
    MPI_Error_string(MPI_ERR_TAG, s1, &len);
    CHECK(strstr(s1, "MPI_ERR_TAG") && strstr(s1, "tag"), "tag error string '%s'", s1);
    /* with MPI_ERRORS_RETURN the string also gives the reason of this process's latest error
     * of the class: here the Irecv with tag -7 above */
    CHECK(strstr(s1, "MPI_Irecv") && strstr(s1, "-7"), "tag error string '%s'", s1);
    MPI_Error_string(MPI_ERR_QUOTA, s1, &len); /* never raised here: the class's text alone */
    CHECK(strcmp(s1, "MPI_ERR_QUOTA: quota exceeded") == 0, "quota error string '%s'", s1);
    CHECK_ERR(MPI_Error_string(-3, s1, &len), MPI_ERR_ARG);

    /* a user handler sees the code and the communicator */
    MPI_Errhandler mine;
    CHECK_RC(MPI_Comm_create_errhandler(my_handler, &mine));
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, mine));
    int rc = MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_SELF);
    CHECK(rc == MPI_ERR_TAG && handler_calls == 1 && handler_code == MPI_ERR_TAG &&
              handler_comm == MPI_COMM_SELF,
          "user handler: rc %d calls %d code %d", rc, handler_calls, handler_code);
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "Comm_call_errhandler");
    MPI_Errhandler got;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
    CHECK(got == mine, "get_errhandler returned another handler");
    CHECK_RC(MPI_Errhandler_free(&got));
    CHECK_RC(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL, "Errhandler_free did not null the handle");
    /* still attached to SELF, so still called */
    MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_SELF);
    CHECK(handler_calls == 3, "handler freed while still in use");
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* the same through the MPI-1 names */
    CHECK_RC(MPI_Errhandler_create(my_handler, &mine));
    CHECK_RC(MPI_Errhandler_set(MPI_COMM_SELF, mine));
    rc = MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_SELF);
    CHECK(rc == MPI_ERR_TAG && handler_calls == 4 && handler_code == MPI_ERR_TAG,
          "MPI-1 user handler: rc %d calls %d code %d", rc, handler_calls, handler_code);
    CHECK_RC(MPI_Errhandler_get(MPI_COMM_SELF, &got));
    CHECK(got == mine, "MPI_Errhandler_get returned another handler");
    CHECK_RC(MPI_Errhandler_free(&got));
    CHECK_RC(MPI_Errhandler_free(&mine));
    CHECK_RC(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRHANDLER_NULL) == MPI_ERR_ARG,
          "MPI_Errhandler_set(MPI_ERRHANDLER_NULL)");
    {
        char msg[MPI_MAX_ERROR_STRING];
        int cls = tu_error(MPI_Errhandler_get(MPI_COMM_SELF, NULL), msg);
        CHECK(cls == MPI_ERR_ARG && strstr(msg, "MPI_Errhandler_get"),
              "MPI_Errhandler_get(NULL): class %d, \"%s\"", cls, msg);
    }

    /* classes and codes the program adds: numbers past MPI_ERR_LASTCODE (and the attribute
     * MPI_LASTUSEDCODE) that MPI_Error_class maps back, their strings, handlers called with
     * them, and the bad calls */
    {
        int *last, flag, c1, c2, k1, k2, k3, cls;
        CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        CHECK(flag && *last == MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d before any added", *last);
        CHECK_RC(MPI_Add_error_class(&c1));
        CHECK_RC(MPI_Add_error_code(c1, &k1));
        CHECK_RC(MPI_Add_error_code(MPI_ERR_OTHER, &k2));
        CHECK_RC(MPI_Add_error_class(&c2));
        CHECK_RC(MPI_Add_error_code(c2, &k3));
        CHECK(c1 > MPI_ERR_LASTCODE && k1 > c1 && k2 > k1 && c2 > k2 && k3 > c2,
              "added numbers %d %d %d %d %d", c1, k1, k2, c2, k3);
        CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        CHECK(*last == k3, "MPI_LASTUSEDCODE %d, expected %d", *last, k3);
        const int codes[] = {c1, k1, k2, c2, k3}, classes[] = {c1, c1, MPI_ERR_OTHER, c2, c2};
        for (int i = 0; i < 5; i++) {
            CHECK_RC(MPI_Error_class(codes[i], &cls));
            CHECK(cls == classes[i], "class of %d is %d, expected %d", codes[i], cls, classes[i]);
        }
        CHECK_RC(MPI_Error_string(k1, s1, &len));
        CHECK(len == 0 && s1[0] == 0, "added code without a string: \"%s\"", s1);
        CHECK_RC(MPI_Add_error_string(k1, "the widget is broken"));
        CHECK_RC(MPI_Add_error_string(c2, "class two"));
        CHECK_RC(MPI_Add_error_string(k1, "the widget is broken again")); /* replaced */
        CHECK_RC(MPI_Error_string(k1, s1, &len));
        CHECK(strcmp(s1, "the widget is broken again") == 0 && len == (int)strlen(s1),
              "string of added code: \"%s\"", s1);
        CHECK_RC(MPI_Error_string(c2, s1, &len));
        CHECK(strcmp(s1, "class two") == 0, "string of added class: \"%s\"", s1);
        CHECK_ERR(MPI_Add_error_string(MPI_ERR_TAG, "mine"), MPI_ERR_ARG); /* predefined */
        CHECK_ERR(MPI_Add_error_string(k3 + 1000, "none"), MPI_ERR_ARG);
        CHECK_ERR(MPI_Add_error_string(k1, NULL), MPI_ERR_ARG);
        char longer[MPI_MAX_ERROR_STRING + 8];
        memset(longer, 'x', sizeof(longer) - 1);
        longer[sizeof(longer) - 1] = 0;
        CHECK_ERR(MPI_Add_error_string(k1, longer), MPI_ERR_ARG);
        CHECK_ERR(MPI_Add_error_code(k1, &k2), MPI_ERR_ARG);        /* a code, not a class */
        CHECK_ERR(MPI_Add_error_code(k3 + 1000, &k2), MPI_ERR_ARG); /* nothing */
        CHECK_ERR(MPI_Add_error_code(c1, NULL), MPI_ERR_ARG);
        CHECK_ERR(MPI_Add_error_class(NULL), MPI_ERR_ARG);
        CHECK_ERR(MPI_Error_class(k3 + 1, &cls), MPI_ERR_ARG);
        /* a handler gets the added code, and MPI_Comm_call_errhandler returns */
        MPI_Errhandler h;
        CHECK_RC(MPI_Comm_create_errhandler(my_handler, &h));
        CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, h));
        int before = handler_calls;
        CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, k1));
        CHECK(handler_calls == before + 1 && handler_code == k1, "handler got code %d, not %d",
              handler_code, k1);
        CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        CHECK_RC(MPI_Errhandler_free(&h));
        CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_SELF, k1)); /* ERRORS_RETURN: nothing */
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
