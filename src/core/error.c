/* Error reporting: class names and texts, dispatch to a communicator's error handler, and the
 * job abort that ERRORS_ARE_FATAL and MPI_Abort end in. Codes returned to users are the error
 * classes themselves, so `rc == MPI_ERR_TAG` works as well as MPI_Error_class; the detailed
 * reason goes into the message the fatal handler prints, and is kept per class so that
 * MPI_Error_string can give it when the call returned instead. */
#include "cohort.h"
#include "../boot/boot.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    const char *text;
} classes[] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid reduction operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal error"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "invalid access mode"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assert argument"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base address"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION", "data conversion error"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP", "data representation already defined"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "file in use"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "info key too long"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "info key not defined"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "info value too long"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info object"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "I/O error"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid attribute key"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "arguments differ between processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "not enough space"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "no such file"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port name"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to a window"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong synchronisation of RMA calls"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "error spawning processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
                                     "unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "operation not supported"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "target memory outside the window"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "invalid tool interface use"},
};

/* The reason of the most recent error of each class raised on this process ("" if none). */
static char last_reason[CO_ARRAY_LEN(classes)][640]; /* MPI_Error_string cuts it short */

/* ---- Classes and codes the program adds (MPI_Add_error_class, _code, _string) -------------
 * They are numbered from MPI_ERR_LASTCODE + 1 on, classes and codes alike (a class is also a
 * code of itself); user[i] describes number MPI_ERR_LASTCODE + 1 + i. They last as long as the
 * process: MPI offers no way to remove them. */
typedef struct user_code {
    int cls;    /* its class (itself for a class) */
    char *text; /* MPI_Add_error_string's, or NULL */
} user_code;
static user_code *user;
static int nuser, user_cap;

static user_code *user_at(int code) {
    int i = code - MPI_ERR_LASTCODE - 1;
    return i >= 0 && i < nuser ? &user[i] : NULL;
}

static int user_add(int cls) {
    if (nuser == user_cap) {
        int cap = user_cap ? 2 * user_cap : 16;
        user_code *u = realloc(user, (size_t)cap * sizeof(*u));
        if (!u) return -1;
        user = u;
        user_cap = cap;
    }
    int code = MPI_ERR_LASTCODE + 1 + nuser;
    user[nuser++] = (user_code){cls < 0 ? code : cls, NULL};
    return code;
}

int co_error_add_class(void) {
    return user_add(-1);
}

int co_error_add_code(int cls) {
    return user_add(cls);
}

int co_error_code_class(int code) {
    if (code >= 0 && code <= MPI_ERR_LASTCODE) return co_error_class_text(code) ? code : -1;
    const user_code *u = user_at(code);
    return u ? u->cls : -1;
}

int co_error_set_text(int code, const char *text) {
    user_code *u = user_at(code);
    if (!u) return -1;
    char *t = strdup(text);
    if (!t) return -1;
    free(u->text);
    u->text = t;
    return 0;
}

const char *co_error_user_text(int code) {
    const user_code *u = user_at(code);
    return u ? (u->text ? u->text : "") : NULL;
}

int co_error_last_used(void) {
    return MPI_ERR_LASTCODE + nuser;
}

const char *co_error_last_reason(int cls) {
    if (cls <= 0 || (size_t)cls >= CO_ARRAY_LEN(classes)) return "";
    return last_reason[cls];
}

const char *co_error_class_name(int cls) {
    if (cls < 0 || (size_t)cls >= CO_ARRAY_LEN(classes) || !classes[cls].name)
        return "MPI_ERR_UNKNOWN";
    return classes[cls].name;
}

const char *co_error_class_text(int cls) {
    if (cls < 0 || (size_t)cls >= CO_ARRAY_LEN(classes) || !classes[cls].text) return NULL;
    return classes[cls].text;
}

void co_abort_job(int code, int kind, const char *msg) {
    fflush(stdout);
    if (msg) fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    if (code == 0) code = 1; /* an abort never reports success */
    if (co_st.seg) co_seg_mark_abort(co_st.seg, co_st.proc, code, kind);
    _exit(code & 0xff ? code & 0xff : 1);
}

void co_fatal(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char line[1200];
    snprintf(line, sizeof(line), "cohort(rank %d) fatal: %s", co_st.world_rank, msg);
    co_abort_job(MPI_ERR_INTERN, CO_ABORT_INTERNAL, line);
}

int co_error(co_comm *comm, const char *fn, int cls, const char *fmt, ...) {
    co_errhandler *eh = comm ? comm->errh : (co_st.world ? co_st.world->errh : NULL);
    va_list ap;
    va_start(ap, fmt);
    int rc = co_error_v(eh, comm ? comm->handle : MPI_COMM_WORLD, fn, cls, fmt, ap);
    va_end(ap);
    return rc;
}

int co_error_v(co_errhandler *eh, int handle, const char *fn, int cls, const char *fmt,
               va_list ap) {
    if (!eh) eh = co_st.errh_fatal;
    char reason[600];
    vsnprintf(reason, sizeof(reason), fmt, ap);
    if (cls > 0 && (size_t)cls < CO_ARRAY_LEN(classes))
        snprintf(last_reason[cls], sizeof(last_reason[cls]), "%s: %s", fn, reason);
    if (eh && eh->builtin == 2) return cls;
    if (eh && eh->builtin == 0 && eh->fn && !co_st.in_error_handler) {
        int h = handle, code = cls;
        co_st.in_error_handler = 1;
        eh->fn(&h, &code);
        co_st.in_error_handler = 0;
        return code; /* the handler may change what the call returns (MPI 3.1 8.3.1) */
    }
    char msg[800];
    const char *user_text = co_error_user_text(cls);
    if (user_text) /* a code the program added: its text, or its number */
        snprintf(msg, sizeof(msg), "%s(rank %d): %s (error code %d%s%s)", fn, co_st.world_rank,
                 reason, cls, *user_text ? ": " : "", user_text);
    else
        snprintf(msg, sizeof(msg), "%s(rank %d): %s (%s)", fn, co_st.world_rank, reason,
                 co_error_class_name(cls));
    co_abort_job(cls, CO_ABORT_FATAL_ERROR, msg);
}
