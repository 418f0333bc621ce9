/* Functions present at link time for the libraries that reference them (benchmark and test
 * helpers), not implemented yet: each raises MPI_ERR_UNSUPPORTED_OPERATION through the
 * error handler of MPI_COMM_WORLD (or of the communicator it is given). */
#include "api.h"

#define UNSUPPORTED(fn) return co_error(NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION, "not implemented")
#define UNSUPPORTED_ON(fn, comm)                                                                   \
    do {                                                                                           \
        CO_ENTER(fn);                                                                              \
        return co_error(co_comm_get(comm), fn, MPI_ERR_UNSUPPORTED_OPERATION, "not implemented");  \
    } while (0)

CO_WEAK(MPI_Win_create, PMPI_Win_create);
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win) {
    (void)base, (void)size, (void)disp_unit, (void)info, (void)win;
    UNSUPPORTED_ON("MPI_Win_create", comm);
}

CO_WEAK(MPI_Win_allocate, PMPI_Win_allocate);
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win) {
    (void)size, (void)disp_unit, (void)info, (void)baseptr, (void)win;
    UNSUPPORTED_ON("MPI_Win_allocate", comm);
}

CO_WEAK(MPI_Win_allocate_shared, PMPI_Win_allocate_shared);
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win) {
    (void)size, (void)disp_unit, (void)info, (void)baseptr, (void)win;
    UNSUPPORTED_ON("MPI_Win_allocate_shared", comm);
}

CO_WEAK(MPI_Win_create_dynamic, PMPI_Win_create_dynamic);
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    (void)info, (void)win;
    UNSUPPORTED_ON("MPI_Win_create_dynamic", comm);
}

/* Window operations: no window can exist, so every handle is invalid. */
#define WIN_FN(name, params, uses)                                                                 \
    CO_WEAK(MPI_##name, PMPI_##name);                                                              \
    int PMPI_##name params {                                                                       \
        uses;                                                                                      \
        CO_ENTER("MPI_" #name);                                                                    \
        UNSUPPORTED("MPI_" #name);                                                                 \
    }

WIN_FN(Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr),
       (void)win;
       (void)rank; (void)size; (void)disp_unit; (void)baseptr)
WIN_FN(Win_attach, (MPI_Win win, void *base, MPI_Aint size), (void)win; (void)base; (void)size)
WIN_FN(Win_detach, (MPI_Win win, const void *base), (void)win; (void)base)
WIN_FN(Win_free, (MPI_Win * win), (void)win)
WIN_FN(Win_fence, (int assert, MPI_Win win), (void)assert; (void)win)
WIN_FN(Win_lock, (int lock_type, int rank, int assert, MPI_Win win), (void)lock_type; (void)rank;
       (void)assert; (void)win)
WIN_FN(Win_unlock, (int rank, MPI_Win win), (void)rank; (void)win)
WIN_FN(Win_lock_all, (int assert, MPI_Win win), (void)assert; (void)win)
WIN_FN(Win_unlock_all, (MPI_Win win), (void)win)
WIN_FN(Win_flush, (int rank, MPI_Win win), (void)rank; (void)win)
WIN_FN(Win_flush_all, (MPI_Win win), (void)win)
WIN_FN(Win_flush_local, (int rank, MPI_Win win), (void)rank; (void)win)
WIN_FN(Win_flush_local_all, (MPI_Win win), (void)win)
WIN_FN(Win_sync, (MPI_Win win), (void)win)
WIN_FN(Win_post, (MPI_Group group, int assert, MPI_Win win), (void)group; (void)assert; (void)win)
WIN_FN(Win_start, (MPI_Group group, int assert, MPI_Win win), (void)group; (void)assert; (void)win)
WIN_FN(Win_complete, (MPI_Win win), (void)win)
WIN_FN(Win_wait, (MPI_Win win), (void)win)
WIN_FN(Put,
       (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
       (void)origin_addr;
       (void)origin_count; (void)origin_datatype; (void)target_rank; (void)target_disp;
       (void)target_count; (void)target_datatype; (void)win)
WIN_FN(Get,
       (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
       (void)origin_addr;
       (void)origin_count; (void)origin_datatype; (void)target_rank; (void)target_disp;
       (void)target_count; (void)target_datatype; (void)win)
WIN_FN(Accumulate,
       (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
        MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
        MPI_Win win),
       (void)origin_addr;
       (void)origin_count; (void)origin_datatype; (void)target_rank; (void)target_disp;
       (void)target_count; (void)target_datatype; (void)op; (void)win)
WIN_FN(Get_accumulate,
       (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win),
       (void)origin_addr;
       (void)origin_count; (void)origin_datatype; (void)result_addr; (void)result_count;
       (void)result_datatype; (void)target_rank; (void)target_disp; (void)target_count;
       (void)target_datatype; (void)op; (void)win)
WIN_FN(Fetch_and_op,
       (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
        MPI_Aint target_disp, MPI_Op op, MPI_Win win),
       (void)origin_addr;
       (void)result_addr; (void)datatype; (void)target_rank; (void)target_disp; (void)op; (void)win)
WIN_FN(Compare_and_swap,
       (const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
        int target_rank, MPI_Aint target_disp, MPI_Win win),
       (void)origin_addr;
       (void)compare_addr; (void)result_addr; (void)datatype; (void)target_rank; (void)target_disp;
       (void)win)
