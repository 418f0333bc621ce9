/* Environment entry points: initialisation and finalisation, abort, clocks, versions, memory,
 * and error handlers and strings. */
#include "api.h"
#include "../boot/boot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int co_api_not_initialized(const char *fn) {
    char msg[256];
    snprintf(msg, sizeof(msg), "%s: called %s MPI_Init (MPI_ERR_OTHER)", fn,
             co_st.finalized ? "after MPI_Finalize, outside" : "before");
    co_abort_job(MPI_ERR_OTHER, CO_ABORT_FATAL_ERROR, msg);
}

CO_WEAK(MPI_Init, PMPI_Init);
int PMPI_Init(int *argc, char ***argv) {
    if (co_st.initialized || co_st.finalized)
        return co_error(NULL, "MPI_Init", MPI_ERR_OTHER, "MPI_Init called twice");
    int provided;
    return co_init(argc, argv, MPI_THREAD_SINGLE, &provided);
}

CO_WEAK(MPI_Init_thread, PMPI_Init_thread);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    if (co_st.initialized || co_st.finalized)
        return co_error(NULL, "MPI_Init_thread", MPI_ERR_OTHER, "MPI_Init called twice");
    return co_init(argc, argv, required, provided);
}

CO_WEAK(MPI_Initialized, PMPI_Initialized);
int PMPI_Initialized(int *flag) {
    CO_API_OUT(NULL, "MPI_Initialized", flag);
    *flag = co_st.initialized;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Finalized, PMPI_Finalized);
int PMPI_Finalized(int *flag) {
    CO_API_OUT(NULL, "MPI_Finalized", flag);
    *flag = co_st.finalized;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Finalize, PMPI_Finalize);
int PMPI_Finalize(void) {
    CO_ENTER("MPI_Finalize");
    return co_finalize();
}

CO_WEAK(MPI_Query_thread, PMPI_Query_thread);
int PMPI_Query_thread(int *provided) {
    CO_ENTER("MPI_Query_thread");
    CO_API_OUT(NULL, "MPI_Query_thread", provided);
    *provided = co_st.thread_level;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Is_thread_main, PMPI_Is_thread_main);
int PMPI_Is_thread_main(int *flag) {
    CO_ENTER("MPI_Is_thread_main");
    CO_API_OUT(NULL, "MPI_Is_thread_main", flag);
    *flag = 1;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Abort, PMPI_Abort);
int PMPI_Abort(MPI_Comm comm, int errorcode) {
    (void)comm; /* every rank of the job ends, whatever the communicator */
    char msg[160];
    snprintf(msg, sizeof(msg), "MPI_Abort(rank %d): aborting the job with code %d",
             co_st.world_rank, errorcode);
    co_abort_job(errorcode, CO_ABORT_CALLED, co_st.cfg.log_level >= CO_LOG_INFO ? msg : NULL);
}

CO_WEAK(MPI_Wtime, PMPI_Wtime);
double PMPI_Wtime(void) {
    return co_wtime();
}

CO_WEAK(MPI_Wtick, PMPI_Wtick);
double PMPI_Wtick(void) {
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

CO_WEAK(MPI_Get_processor_name, PMPI_Get_processor_name);
int PMPI_Get_processor_name(char *name, int *resultlen) {
    CO_ENTER("MPI_Get_processor_name");
    CO_API_OUT(NULL, "MPI_Get_processor_name", name);
    CO_API_OUT(NULL, "MPI_Get_processor_name", resultlen);
    strcpy(name, co_st.processor_name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Get_version, PMPI_Get_version);
int PMPI_Get_version(int *version, int *subversion) {
    CO_API_OUT(NULL, "MPI_Get_version", version);
    CO_API_OUT(NULL, "MPI_Get_version", subversion);
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Get_library_version, PMPI_Get_library_version);
int PMPI_Get_library_version(char *version, int *resultlen) {
    CO_API_OUT(NULL, "MPI_Get_library_version", version);
    CO_API_OUT(NULL, "MPI_Get_library_version", resultlen);
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Cohort %s (MPI %d.%d), shared-memory transport", COHORT_VERSION_STRING,
                     MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

/* Profiling control: nothing to do unless a profiling library replaces MPI_Pcontrol. */
CO_WEAK(MPI_Pcontrol, PMPI_Pcontrol);
int PMPI_Pcontrol(const int level, ...) {
    (void)level;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Alloc_mem, PMPI_Alloc_mem);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    CO_ENTER("MPI_Alloc_mem");
    int rc = co_api_info_arg(NULL, "MPI_Alloc_mem", info); /* checked; no hints are understood */
    if (rc) return rc;
    if (!baseptr) return co_error(NULL, "MPI_Alloc_mem", MPI_ERR_ARG, "baseptr is NULL");
    if (size < 0)
        return co_error(NULL, "MPI_Alloc_mem", MPI_ERR_SIZE, "negative size %ld", (long)size);
    void *p = NULL;
    if (posix_memalign(&p, CO_CACHELINE, size ? (size_t)size : 1))
        return co_error(NULL, "MPI_Alloc_mem", MPI_ERR_NO_MEM, "cannot allocate %ld bytes",
                        (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Free_mem, PMPI_Free_mem);
int PMPI_Free_mem(void *base) {
    CO_ENTER("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}

/* ---- Errors ---------------------------------------------------------------------------------- */

CO_WEAK(MPI_Error_class, PMPI_Error_class);
int PMPI_Error_class(int errorcode, int *errorclass) {
    int cls = co_error_code_class(errorcode);
    if (cls < 0)
        return co_error(NULL, "MPI_Error_class", MPI_ERR_ARG, "invalid error code %d", errorcode);
    CO_API_OUT(NULL, "MPI_Error_class", errorclass);
    *errorclass = cls;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Add_error_class, PMPI_Add_error_class);
int PMPI_Add_error_class(int *errorclass) {
    static const char fn[] = "MPI_Add_error_class";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, errorclass);
    int cls = co_error_add_class();
    if (cls < 0) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    *errorclass = cls;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Add_error_code, PMPI_Add_error_code);
int PMPI_Add_error_code(int errorclass, int *errorcode) {
    static const char fn[] = "MPI_Add_error_code";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, errorcode);
    if (errorclass == MPI_SUCCESS || co_error_code_class(errorclass) != errorclass)
        return co_error(NULL, fn, MPI_ERR_ARG, "%d is not an error class", errorclass);
    int code = co_error_add_code(errorclass);
    if (code < 0) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    *errorcode = code;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Add_error_string, PMPI_Add_error_string);
int PMPI_Add_error_string(int errorcode, const char *string) {
    static const char fn[] = "MPI_Add_error_string";
    CO_ENTER(fn);
    if (!string) return co_error(NULL, fn, MPI_ERR_ARG, "string is NULL");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return co_error(NULL, fn, MPI_ERR_ARG, "string longer than MPI_MAX_ERROR_STRING - 1 (%d)",
                        MPI_MAX_ERROR_STRING - 1);
    if (errorcode <= MPI_ERR_LASTCODE)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "error code %d is predefined (only added classes and codes take a string)",
                        errorcode);
    if (co_error_set_text(errorcode, string))
        return co_error(NULL, fn, MPI_ERR_ARG, "invalid error code %d", errorcode);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Error_string, PMPI_Error_string);
int PMPI_Error_string(int errorcode, char *string, int *resultlen) {
    const char *user_text = co_error_user_text(errorcode);
    if (user_text) { /* a class or code the program added: its string, "" if none */
        CO_API_OUT(NULL, "MPI_Error_string", string);
        CO_API_OUT(NULL, "MPI_Error_string", resultlen);
        int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", user_text);
        *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
        return MPI_SUCCESS;
    }
    const char *text = co_error_class_text(errorcode);
    if (!text)
        return co_error(NULL, "MPI_Error_string", MPI_ERR_ARG, "invalid error code %d", errorcode);
    CO_API_OUT(NULL, "MPI_Error_string", string);
    CO_API_OUT(NULL, "MPI_Error_string", resultlen);
    /* the class's text, and the reason of this process's latest error of the class, which is
     * where the code just returned came from when the call returned instead of aborting */
    const char *name = co_error_class_name(errorcode), *last = co_error_last_reason(errorcode);
    int n = *last ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s (latest on this process: %s)",
                             name, text, last)
                  : snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", name, text);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

static co_errhandler *errh_get(MPI_Errhandler h) {
    return co_htab_get(&co_st.errhs, h);
}

int co_api_errh_set(co_errhandler **slot, MPI_Errhandler errhandler) {
    co_errhandler *e = errh_get(errhandler);
    if (!e) return MPI_ERR_ARG;
    e->refcount++;
    co_errhandler *old = *slot;
    *slot = e;
    co_errh_release(old);
    return MPI_SUCCESS;
}

static int set_errhandler(const char *fn, MPI_Comm comm, MPI_Errhandler errhandler) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (co_api_errh_set(&c->errh, errhandler))
        return co_error(c, fn, MPI_ERR_ARG, "invalid error handler");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_set_errhandler, PMPI_Comm_set_errhandler);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    return set_errhandler("MPI_Comm_set_errhandler", comm, errhandler);
}

static int get_errhandler(const char *fn, MPI_Comm comm, MPI_Errhandler *errhandler) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    CO_API_OUT(c, fn, errhandler);
    *errhandler = co_errh_handle_out(c->errh); /* the user frees it */
    if (*errhandler == MPI_ERRHANDLER_NULL)
        return co_error(c, fn, MPI_ERR_NO_MEM, "too many error handlers");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    return get_errhandler("MPI_Comm_get_errhandler", comm, errhandler);
}

int co_api_errh_create(const char *fn, MPI_Comm_errhandler_function *function,
                       MPI_Errhandler *errhandler) {
    CO_ENTER(fn);
    if (!function) return co_error(NULL, fn, MPI_ERR_ARG, "function is NULL");
    CO_API_OUT(NULL, fn, errhandler);
    co_errhandler *e = calloc(1, sizeof(*e));
    if (!e) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    e->fn = function;
    *errhandler = co_errh_handle_out(e); /* the only reference, the program's */
    if (*errhandler == MPI_ERRHANDLER_NULL) {
        free(e);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "too many error handlers");
    }
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_create_errhandler, PMPI_Comm_create_errhandler);
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
                                MPI_Errhandler *errhandler) {
    return co_api_errh_create("MPI_Comm_create_errhandler", function, errhandler);
}

/* The MPI-1 names of the three calls above, removed in MPI 3.0 but still in old codes. */
CO_WEAK(MPI_Errhandler_create, PMPI_Errhandler_create);
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler) {
    return co_api_errh_create("MPI_Errhandler_create", function, errhandler);
}

CO_WEAK(MPI_Errhandler_set, PMPI_Errhandler_set);
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
    return set_errhandler("MPI_Errhandler_set", comm, errhandler);
}

CO_WEAK(MPI_Errhandler_get, PMPI_Errhandler_get);
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler) {
    return get_errhandler("MPI_Errhandler_get", comm, errhandler);
}

CO_WEAK(MPI_Errhandler_free, PMPI_Errhandler_free);
int PMPI_Errhandler_free(MPI_Errhandler *errhandler) {
    static const char fn[] = "MPI_Errhandler_free";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, errhandler);
    co_errhandler *e = errh_get(*errhandler);
    if (!e) return co_error(NULL, fn, MPI_ERR_ARG, "invalid error handler");
    co_errh_handle_free(e);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_call_errhandler, PMPI_Comm_call_errhandler);
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    static const char fn[] = "MPI_Comm_call_errhandler";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_error(c, fn, errorcode, "error raised by the application");
    return MPI_SUCCESS;
}

/* ---- Handle conversion --------------------------------------------------------------------
 * Cohort's handles are integers and mean the same in C and Fortran, so the conversions are the
 * identity: a handle converted and back is the same handle, NULL handles included. They check
 * nothing, as the standard's conversions do not. */
#define CO_HANDLE_CONV(NAME, TYPE)                                                                 \
    CO_WEAK(MPI_##NAME##_c2f, PMPI_##NAME##_c2f);                                                  \
    MPI_Fint PMPI_##NAME##_c2f(TYPE handle) {                                                      \
        return (MPI_Fint)handle;                                                                   \
    }                                                                                              \
    CO_WEAK(MPI_##NAME##_f2c, PMPI_##NAME##_f2c);                                                  \
    TYPE PMPI_##NAME##_f2c(MPI_Fint handle) {                                                      \
        return (TYPE)handle;                                                                       \
    }
CO_HANDLE_CONV(Comm, MPI_Comm)
CO_HANDLE_CONV(Type, MPI_Datatype)
CO_HANDLE_CONV(Group, MPI_Group)
CO_HANDLE_CONV(Request, MPI_Request)
CO_HANDLE_CONV(Op, MPI_Op)
CO_HANDLE_CONV(Info, MPI_Info)
CO_HANDLE_CONV(Errhandler, MPI_Errhandler)
CO_HANDLE_CONV(Message, MPI_Message)
CO_HANDLE_CONV(Win, MPI_Win)
CO_HANDLE_CONV(File, MPI_File)
