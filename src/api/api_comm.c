/* Communicator queries: rank, size, names, attributes and IDs. */
#include "api.h"

#include <limits.h>
#include <string.h>

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank) {
    static const char fn[] = "MPI_Comm_rank";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Comm_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag) {
    static const char fn[] = "MPI_Comm_test_inter";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Comm_remote_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!c->is_inter) return co_error(c, fn, MPI_ERR_COMM, "not an intercommunicator");
    *size = c->remote->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name) {
    static const char fn[] = "MPI_Comm_set_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!comm_name) return co_error(c, fn, MPI_ERR_ARG, "name is NULL");
    strncpy(c->name, comm_name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen) {
    static const char fn[] = "MPI_Comm_get_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    strcpy(comm_name, c->name);
    *resultlen = (int)strlen(c->name);
    return MPI_SUCCESS;
}

/* The predefined attributes; values are addresses of ints, as the standard requires. */
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag) {
    static const char fn[] = "MPI_Comm_get_attr";
    static int tag_ub = INT_MAX, wtime_global = 0, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static int universe, appnum = 0, lastcode = MPI_ERR_LASTCODE;
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    universe = co_st.world_size;
    int *v = NULL;
    switch (comm_keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_APPNUM: v = &appnum; break;
    case MPI_LASTUSEDCODE: v = &lastcode; break;
    default: break;
    }
    if (!v) {
        if (comm_keyval == MPI_KEYVAL_INVALID)
            return co_error(c, fn, MPI_ERR_KEYVAL, "invalid attribute key");
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

#pragma weak MPIX_Comm_get_id = PMPIX_Comm_get_id
int PMPIX_Comm_get_id(MPI_Comm comm, uint64_t *id) {
    static const char fn[] = "MPIX_Comm_get_id";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    *id = c->id;
    return MPI_SUCCESS;
}
