/* Handle conversion (MPI_*_c2f / MPI_*_f2c) and MPI_Status_set_elements(_x): every kind of
 * handle, predefined, created and null, comes back from a round trip as itself and still
 * works; element counts set on a status read back through MPI_Get_elements(_x) and
 * MPI_Get_count, and bad counts are refused. */
#include "testutil.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* communicators: a round trip gives the same handle, and it works */
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm comms[] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL, d};
    for (int i = 0; i < 4; i++) {
        MPI_Fint f = MPI_Comm_c2f(comms[i]);
        CHECK(MPI_Comm_f2c(f) == comms[i] && PMPI_Comm_f2c(PMPI_Comm_c2f(comms[i])) == comms[i],
              "communicator %d: round trip", i);
    }
    int one = 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_Comm_f2c(MPI_Comm_c2f(d))));
    CHECK(sum == size, "allreduce on a converted communicator: %d", sum);

    /* the other kinds */
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE_INT, MPI_DATATYPE_NULL, vec};
    for (int i = 0; i < 4; i++)
        CHECK(MPI_Type_f2c(MPI_Type_c2f(types[i])) == types[i], "datatype %d: round trip", i);
    int tsize = 0;
    CHECK_RC(MPI_Type_size(MPI_Type_f2c(MPI_Type_c2f(vec)), &tsize));
    CHECK(tsize == 2 * (int)sizeof(int), "size of a converted datatype: %d", tsize);
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(d, &g));
    MPI_Group groups[] = {g, MPI_GROUP_EMPTY, MPI_GROUP_NULL};
    for (int i = 0; i < 3; i++)
        CHECK(MPI_Group_f2c(MPI_Group_c2f(groups[i])) == groups[i], "group %d: round trip", i);
    MPI_Op ops[] = {MPI_SUM, MPI_MAXLOC, MPI_OP_NULL};
    for (int i = 0; i < 3; i++)
        CHECK(MPI_Op_f2c(MPI_Op_c2f(ops[i])) == ops[i], "op %d: round trip", i);
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    MPI_Info infos[] = {info, MPI_INFO_ENV, MPI_INFO_NULL};
    for (int i = 0; i < 3; i++)
        CHECK(MPI_Info_f2c(MPI_Info_c2f(infos[i])) == infos[i], "info %d: round trip", i);
    MPI_Errhandler ehs[] = {MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL, MPI_ERRHANDLER_NULL};
    for (int i = 0; i < 3; i++)
        CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(ehs[i])) == ehs[i], "errhandler %d", i);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "window");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "file");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL &&
              MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
          "null messages");

    /* requests and messages: a converted handle completes the operation */
    int to = (rank + 1) % size, from = (rank - 1 + size) % size, in = -1;
    MPI_Request r;
    CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, from, 7, d, &r));
    MPI_Request r2 = MPI_Request_f2c(MPI_Request_c2f(r));
    CHECK(r2 == r, "request: round trip");
    CHECK_RC(MPI_Send(&rank, 1, MPI_INT, to, 7, d));
    CHECK_RC(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    CHECK(in == from && r2 == MPI_REQUEST_NULL, "receive through a converted request: %d", in);
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "null request");
    CHECK_RC(MPI_Send(&rank, 1, MPI_INT, to, 8, d));
    MPI_Message m;
    CHECK_RC(MPI_Mprobe(from, 8, d, &m, MPI_STATUS_IGNORE));
    MPI_Message m2 = MPI_Message_f2c(MPI_Message_c2f(m));
    CHECK(m2 == m, "message: round trip");
    CHECK_RC(MPI_Mrecv(&in, 1, MPI_INT, &m2, MPI_STATUS_IGNORE));
    CHECK(in == from && m2 == MPI_MESSAGE_NULL, "matched receive through a converted handle");

    /* element counts on a status */
    MPI_Status st;
    int n = -1;
    MPI_Count nx = -1;
    CHECK_RC(MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)5));
    CHECK_RC(MPI_Get_elements_x(&st, MPI_INT, &nx));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(nx == 5 && n == 5, "set_elements_x 5: %lld elements, count %d", (long long)nx, n);
    CHECK_RC(MPI_Status_set_elements_x(&st, vec, (MPI_Count)3)); /* 3 ints: 1.5 vectors */
    CHECK_RC(MPI_Get_elements(&st, vec, &n));
    CHECK(n == 3, "elements of the vector type: %d", n);
    CHECK_RC(MPI_Get_count(&st, vec, &n));
    CHECK(n == MPI_UNDEFINED, "count of 3 ints in vectors of 2: %d", n);
    CHECK_RC(MPI_Status_set_elements(&st, MPI_DOUBLE, 2));
    CHECK_RC(MPI_Get_elements_x(&st, MPI_DOUBLE, &nx));
    CHECK(nx == 2, "set_elements 2 doubles: %lld", (long long)nx);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERR(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)-4), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)1 << 62), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Status_set_elements_x(MPI_STATUS_IGNORE, MPI_INT, 1), MPI_ERR_ARG);
    CHECK_ERR(MPI_Status_set_elements_x(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    CHECK_RC(MPI_Info_free(&info));
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Type_free(&vec));
    CHECK_RC(MPI_Comm_free(&d));
    MPI_Finalize();
    return 0;
}
