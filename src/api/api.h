/* Shared by the MPI_* entry points: argument checks that report through the right error
 * handler, and conversions between internal and user-visible objects. Each entry point is
 * defined as PMPI_x, with MPI_x a weak alias, so profiling tools can interpose. */
#ifndef CO_API_H
#define CO_API_H

#include "../core/cohort.h"
#include "../comm/comm.h"
#include "../dtype/dtype.h"
#include "../op/op.h"
#include "../p2p/p2p.h"

#include <string.h>

/* MPI_x as a weak alias of PMPI_x, placed before PMPI_x's definition. An alias attribute
 * rather than `#pragma weak`: clang turns a pragma alias into a local symbol when the library
 * is built with -fvisibility=hidden; the attribute keeps the declaration's default visibility
 * with GCC and clang alike. */
#define CO_WEAK(alias_, target_)                                                                   \
    extern __typeof__(target_) alias_ __attribute__((weak, alias(#target_)))

/* An info argument that may be MPI_INFO_NULL (api_info.c): MPI_ERR_INFO when invalid, reported
 * on c's error handler (MPI_COMM_WORLD's when c is NULL). */
int co_api_info_arg(co_comm *c, const char *fn, MPI_Info h);

/* Look up a group; on failure report MPI_ERR_GROUP through comm's handler (NULL: WORLD's). */
static inline co_group *co_api_group(co_comm *comm, const char *fn, MPI_Group h, int *rc) {
    co_group *g = co_group_get(h);
    if (CO_UNLIKELY(!g))
        *rc = co_error(comm, fn, MPI_ERR_GROUP,
                       h == MPI_GROUP_NULL ? "group is MPI_GROUP_NULL"
                                           : "invalid group (freed or never created)");
    return g;
}

/* The handle of a communicator a constructor returned (NULL: the rank is not a member). */
static inline MPI_Comm co_api_comm_out(const co_comm *c) {
    return c ? c->handle : MPI_COMM_NULL;
}

/* Error handlers, for communicators and windows alike (api_env.c): make one for a program's
 * function (MPI_*_create_errhandler, entering as `fn`), and put one in an object's slot
 * (MPI_ERR_ARG when the handle is invalid; the old handler loses the slot's reference). */
int co_api_errh_create(const char *fn, MPI_Comm_errhandler_function *function,
                       MPI_Errhandler *errhandler);
int co_api_errh_set(co_errhandler **slot, MPI_Errhandler errhandler);

/* Every entry point after MPI_Init: a call outside Init..Finalize is a fatal usage error. */
int co_api_not_initialized(const char *fn);
#define CO_ENTER(fn)                                                                               \
    do {                                                                                           \
        if (CO_UNLIKELY(!co_st.initialized || co_st.finalized)) return co_api_not_initialized(fn); \
        co_st.api_fn = fn;                                                                         \
        co_st.api_calls++;                                                                         \
    } while (0)

/* Look up a communicator; on failure report MPI_ERR_COMM on MPI_COMM_WORLD. */
static inline co_comm *co_api_comm(MPI_Comm h, const char *fn, int *rc) {
    co_comm *c = co_comm_get(h);
    if (CO_UNLIKELY(!c)) {
        *rc = co_error(NULL, fn, MPI_ERR_COMM,
                       h == MPI_COMM_NULL ? "communicator is MPI_COMM_NULL"
                                          : "invalid communicator (freed or never created)");
    }
    return c;
}

/* A datatype argument for `count` elements: MPI_DATATYPE_NULL is accepted with count 0. */
static inline co_dtype *co_api_dtype(co_comm *comm, const char *fn, MPI_Datatype h, long long count,
                                     int *rc) {
    co_dtype *dt = co_dt_get(h);
    if (CO_LIKELY(dt && dt->committed && !dt->freed)) return dt;
    if (h == MPI_DATATYPE_NULL && count == 0) return co_dt_get(MPI_BYTE);
    if (!dt)
        *rc = co_error(comm, fn, MPI_ERR_TYPE,
                       h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                              : "invalid datatype (freed or never created)");
    else if (dt->freed)
        *rc = co_error(comm, fn, MPI_ERR_TYPE, "datatype has been freed");
    else
        *rc = co_error(comm, fn, MPI_ERR_TYPE, "datatype %s has not been committed",
                       dt->name[0] ? dt->name : "(derived)");
    return NULL;
}

static inline int co_api_count(co_comm *comm, const char *fn, int count) {
    if (CO_UNLIKELY(count < 0))
        return co_error(comm, fn, MPI_ERR_COUNT, "negative count %d", count);
    return MPI_SUCCESS;
}

/* `count` is a long long: Reduce_scatter's vector may hold more than 2^31 - 1 elements. */
static inline int co_api_buf(co_comm *comm, const char *fn, const void *buf, long long count,
                             const co_dtype *dt) {
    /* NULL is MPI_BOTTOM, legitimate with absolute-address types (true_lb != 0) */
    if (CO_UNLIKELY(!buf && count > 0 && dt->size > 0 && dt->true_lb == 0))
        return co_error(comm, fn, MPI_ERR_BUFFER, "buffer is NULL but count is %lld", count);
    /* a count below 2^31 times the type's size can leave the address space only when the
     * size is 2^32 or more; Reduce_scatter's vector may be longer */
    if (CO_UNLIKELY((dt->size > 0xffffffffu || count > 0x7fffffff) && count > 0 && dt->size &&
                    (size_t)count > (size_t)PTRDIFF_MAX / dt->size))
        return co_error(comm, fn, MPI_ERR_COUNT,
                        "%lld elements of %zu bytes are more than an address space holds", count,
                        dt->size);
    return MPI_SUCCESS;
}

/* A buffer described by (buf, count, type): the count, the type (committed, not freed) and
 * the buffer for that many elements. NULL with *rc set when any is bad. */
static inline co_dtype *co_api_data(co_comm *comm, const char *fn, const void *buf, int count,
                                    MPI_Datatype type, int *rc) {
    if ((*rc = co_api_count(comm, fn, count))) return NULL;
    co_dtype *dt = co_api_dtype(comm, fn, type, count, rc);
    if (!dt) return NULL;
    if ((*rc = co_api_buf(comm, fn, buf, count, dt))) return NULL;
    return dt;
}

#define CO_TAG_UB 0x7fffffff
static inline int co_api_tag(co_comm *comm, const char *fn, int tag, int allow_any) {
    if (CO_LIKELY(tag >= 0) || (allow_any && tag == MPI_ANY_TAG)) return MPI_SUCCESS;
    return co_error(comm, fn, MPI_ERR_TAG, "invalid tag %d", tag);
}

/* A peer rank: 0..size-1 of the group messages go to, or PROC_NULL (and ANY_SOURCE). */
static inline int co_api_rank(co_comm *comm, const char *fn, int rank, int allow_any) {
    if (CO_LIKELY(rank >= 0 && rank < comm->npeers) || rank == MPI_PROC_NULL ||
        (allow_any && rank == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    return co_error(comm, fn, MPI_ERR_RANK, "invalid rank %d (communicator size %d)", rank,
                    comm->npeers);
}

/* An argument the call writes its result to must not be NULL: MPI_ERR_ARG through comm's
 * handler (NULL: WORLD's), naming the parameter. */
#define CO_API_OUT(comm, fn, p)                                                                    \
    do {                                                                                           \
        if (CO_UNLIKELY(!(p))) return co_error((comm), (fn), MPI_ERR_ARG, "%s is NULL", #p);       \
    } while (0)

/* A status the caller does not want: MPI_STATUS_IGNORE, or NULL. Open MPI defines
 * MPI_STATUS_IGNORE (and MPI_STATUSES_IGNORE) as NULL, so programs written for it may pass
 * NULL; Cohort takes it the same way. */
static inline int co_api_status_ignored(const MPI_Status *st) {
    return st == MPI_STATUS_IGNORE || !st;
}

static inline void co_api_status(MPI_Status *st, const co_status *s) {
    if (co_api_status_ignored(st)) return;
    st->MPI_SOURCE = s->source;
    st->MPI_TAG = s->tag;
    st->co_cancelled = s->cancelled;
    st->co_bytes = (long long)s->bytes;
}

static inline void co_api_status_empty(MPI_Status *st) {
    if (co_api_status_ignored(st)) return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->co_cancelled = 0;
    st->co_bytes = 0;
}

#endif /* CO_API_H */
