/* Point-to-point entry points: argument checks, then requests from the p2p layer. Also the
 * completion calls (Wait/Test families), probes, status queries and persistent requests. */
#include "api.h"
#include "../coll/coll.h"

#include <stdio.h>
#include <stdlib.h>

/* Checks shared by every send and receive; returns the datatype or NULL with *rc set. */
static co_dtype *check_xfer(co_comm *c, const char *fn, const void *buf, int count,
                            MPI_Datatype type, int peer, int tag, int is_recv, int *rc) {
    co_dtype *dt = co_api_data(c, fn, buf, count, type, rc);
    if (!dt) return NULL;
    if ((*rc = co_api_rank(c, fn, peer, is_recv))) return NULL;
    if ((*rc = co_api_tag(c, fn, tag, is_recv))) return NULL;
    return dt;
}

/* A small contiguous standard send straight into the queue, when it fits: 1 if it went. */
static int sent_eagerly(const void *buf, int count, const co_dtype *dt, int dest, int tag,
                        co_comm *c, int mode) {
    return mode == CO_MODE_STD && dt->contig && dest != MPI_PROC_NULL &&
           co_send_eager_fast((const char *)buf + dt->true_lb, (size_t)count * dt->size, c, c->ctx,
                              dest, tag);
}

static int isend_common(const char *fn, const void *buf, int count, MPI_Datatype type, int dest,
                        int tag, MPI_Comm comm, int mode, MPI_Request *request) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_dtype *dt = check_xfer(c, fn, buf, count, type, dest, tag, 0, &rc);
    if (!dt) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    if (sent_eagerly(buf, count, dt, dest, tag, c, mode)) {
        *request = co_st.p2p->done_send->handle;
        return MPI_SUCCESS;
    }
    co_req *r;
    if ((rc = co_isend(buf, (size_t)count, dt, dest, tag, c, c->ctx, mode, &r)))
        return co_error(c, fn, rc, "cannot start the send");
    *request = r->handle;
    return MPI_SUCCESS;
}

/* A wait that failed because the job deadlocked (co_deadlock_due). */
static int deadlock_error(co_comm *c, const char *fn) {
    return co_error(c, fn, MPI_ERR_OTHER, "%s", co_deadlock_reason());
}

/* A probe that has waited long: whether it is to fail, and how (a deadlock, or no rank left
 * to send a match). The check takes in what is queued, which may hold the message: the probe
 * fails only if its next pass's look finds nothing. (A matched probe must not look twice: its
 * first look takes the message out of the queue.) */
static int probe_gone(co_comm *c, int source, int tag) {
    if (co_p2p_senders_gone(c, source)) return 1;
    if (CO_UNLIKELY(co_deadlock_due())) {
        char who[64];
        co_p2p_peer_tag(who, sizeof(who), source, tag);
        co_deadlock_claim("probe for a message from %s on %s", who, co_comm_label(c));
        return 2;
    }
    return 0;
}

/* A receive or probe that no message can match any more (co_p2p_wait_check,
 * co_p2p_senders_gone): s holds its source and tag. */
static int no_sender_error(co_comm *c, const char *fn, const co_status *s) {
    if (s->deadlock) return deadlock_error(c, fn);
    char tag[32];
    if (s->tag == MPI_ANY_TAG)
        snprintf(tag, sizeof(tag), "any tag");
    else
        snprintf(tag, sizeof(tag), "tag %d", s->tag);
    if (s->source == MPI_ANY_SOURCE)
        return co_error(c, fn, MPI_ERR_OTHER,
                        "no message (%s) can arrive from any source: every other rank has "
                        "called MPI_Finalize",
                        tag);
    return co_error(c, fn, MPI_ERR_OTHER,
                    "no message from rank %d (%s) can arrive: that rank has called "
                    "MPI_Finalize without sending a matching one",
                    s->source, tag);
}

/* A send whose receiver has called MPI_Finalize without receiving it (co_p2p_wait_check):
 * s holds its destination and tag. */
static int no_receiver_error(co_comm *c, const char *fn, const co_status *s) {
    return co_error(c, fn, MPI_ERR_OTHER,
                    "send to rank %d (tag %d) cannot complete: that rank has called "
                    "MPI_Finalize without receiving it",
                    s->source, s->tag);
}

/* Waits for send r and frees it; its status (error: co_p2p_wait_check failed it). */
static co_status send_wait(co_req *r) {
    co_progress_wait(r);
    co_status s = r->status;
    co_req_free(r);
    return s;
}

static int send_common(const char *fn, const void *buf, int count, MPI_Datatype type, int dest,
                       int tag, MPI_Comm comm, int mode) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_dtype *dt = check_xfer(c, fn, buf, count, type, dest, tag, 0, &rc);
    if (!dt) return rc;
    if (sent_eagerly(buf, count, dt, dest, tag, c, mode)) return MPI_SUCCESS;
    co_req *r;
    if ((rc = co_isend(buf, (size_t)count, dt, dest, tag, c, c->ctx, mode, &r)))
        return co_error(c, fn, rc, "cannot start the send");
    co_status s = send_wait(r);
    return s.error ? no_receiver_error(c, fn, &s) : MPI_SUCCESS;
}

CO_WEAK(MPI_Send, PMPI_Send);
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    return send_common("MPI_Send", buf, count, datatype, dest, tag, comm, CO_MODE_STD);
}

CO_WEAK(MPI_Ssend, PMPI_Ssend);
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    return send_common("MPI_Ssend", buf, count, datatype, dest, tag, comm, CO_MODE_SYNC);
}

CO_WEAK(MPI_Rsend, PMPI_Rsend);
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    return send_common("MPI_Rsend", buf, count, datatype, dest, tag, comm, CO_MODE_STD);
}

static void bsend_done(co_req *r) {
    (void)r;
    co_st.bsend_pending--;
}

/* Buffered sends copy the data at once and complete locally; the copy lives in a private
 * allocation rather than the attached buffer, whose size is still checked as MPI requires.
 * The caller has entered the call and looked up the communicator. */
static int bsend_go(const char *fn, const void *buf, size_t count, co_dtype *dt, int dest, int tag,
                    co_comm *c) {
    int rc;
    size_t need = count * dt->size + MPI_BSEND_OVERHEAD;
    if (!co_st.bsend_buf || need > (size_t)co_st.bsend_size)
        return co_error(c, fn, MPI_ERR_BUFFER,
                        "buffered send of %zu bytes needs an attached buffer of that size "
                        "(attached: %d bytes)",
                        need, co_st.bsend_buf ? co_st.bsend_size : 0);
    co_req *r;
    if ((rc = co_isend(buf, count, dt, dest, tag, c, c->ctx, CO_MODE_BUFFERED, &r)))
        return co_error(c, fn, rc, "cannot start the send");
    if (r->complete) {
        co_req_free(r);
    } else {
        co_st.bsend_pending++;
        r->on_complete = bsend_done;
        r->user_freed = 1;
    }
    return MPI_SUCCESS;
}

static int bsend_start(const char *fn, const void *buf, int count, MPI_Datatype type, int dest,
                       int tag, co_comm *c) {
    int rc = MPI_SUCCESS;
    co_dtype *dt = check_xfer(c, fn, buf, count, type, dest, tag, 0, &rc);
    return dt ? bsend_go(fn, buf, (size_t)count, dt, dest, tag, c) : rc;
}

CO_WEAK(MPI_Bsend, PMPI_Bsend);
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    static const char fn[] = "MPI_Bsend";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    return c ? bsend_start(fn, buf, count, datatype, dest, tag, c) : rc;
}

CO_WEAK(MPI_Ibsend, PMPI_Ibsend);
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request) {
    static const char fn[] = "MPI_Ibsend";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    /* the request the user gets is complete at once (the data is copied); it is made first,
     * so that a send is never started for a call that then fails */
    co_req *r = co_req_new(CO_REQ_SEND);
    if (!r) return co_error(c, fn, MPI_ERR_NO_MEM, "out of requests");
    rc = bsend_start(fn, buf, count, datatype, dest, tag, c);
    if (rc) {
        co_req_free(r);
        return rc;
    }
    co_req_set_comm(r, c);
    r->complete = 1;
    *request = r->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Buffer_attach, PMPI_Buffer_attach);
int PMPI_Buffer_attach(void *buffer, int size) {
    CO_ENTER("MPI_Buffer_attach");
    if (co_st.bsend_buf)
        return co_error(NULL, "MPI_Buffer_attach", MPI_ERR_BUFFER, "a buffer is already attached");
    if (size < 0 || (!buffer && size > 0))
        return co_error(NULL, "MPI_Buffer_attach", MPI_ERR_BUFFER, "invalid buffer or size %d",
                        size);
    co_st.bsend_buf = buffer ? buffer : (void *)&co_st;
    co_st.bsend_size = size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Buffer_detach, PMPI_Buffer_detach);
int PMPI_Buffer_detach(void *buffer_addr, int *size) {
    static const char fn[] = "MPI_Buffer_detach";
    CO_ENTER(fn);
    CO_API_OUT(NULL, fn, buffer_addr);
    CO_API_OUT(NULL, fn, size);
    while (co_st.bsend_pending) co_progress(); /* MPI: detach waits for buffered messages */
    *(void **)buffer_addr = co_st.bsend_buf == (void *)&co_st ? NULL : co_st.bsend_buf;
    *size = co_st.bsend_buf ? co_st.bsend_size : 0;
    co_st.bsend_buf = NULL;
    co_st.bsend_size = 0;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Isend, PMPI_Isend);
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request) {
    return isend_common("MPI_Isend", buf, count, datatype, dest, tag, comm, CO_MODE_STD, request);
}

CO_WEAK(MPI_Issend, PMPI_Issend);
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request) {
    return isend_common("MPI_Issend", buf, count, datatype, dest, tag, comm, CO_MODE_SYNC, request);
}

CO_WEAK(MPI_Irsend, PMPI_Irsend);
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request) {
    return isend_common("MPI_Irsend", buf, count, datatype, dest, tag, comm, CO_MODE_STD, request);
}

CO_WEAK(MPI_Irecv, PMPI_Irecv);
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request) {
    static const char fn[] = "MPI_Irecv";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_dtype *dt = check_xfer(c, fn, buf, count, datatype, source, tag, 1, &rc);
    if (!dt) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    co_req *r;
    if ((rc = co_irecv(buf, (size_t)count, dt, source, tag, c, c->ctx, &r)))
        return co_error(c, fn, rc, "cannot post the receive");
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The end of a blocking receive: wait for r, report its status, free it. */
static int recv_finish(co_comm *c, const char *fn, co_req *r, MPI_Status *status) {
    co_progress_wait(r);
    co_api_status(status, &r->status);
    int rc = r->status.error == MPI_ERR_OTHER ? no_sender_error(c, fn, &r->status)
             : r->status.error
                 ? co_error(c, fn, MPI_ERR_TRUNCATE,
                            "message from rank %d with tag %d truncated: receive buffer holds "
                            "%zu bytes",
                            r->status.source, r->status.tag, r->count * r->dt->size)
                 : MPI_SUCCESS;
    co_req_free(r);
    return rc;
}

CO_WEAK(MPI_Recv, PMPI_Recv);
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status) {
    static const char fn[] = "MPI_Recv";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_dtype *dt = check_xfer(c, fn, buf, count, datatype, source, tag, 1, &rc);
    if (!dt) return rc;
    co_req *r;
    if ((rc = co_irecv(buf, (size_t)count, dt, source, tag, c, c->ctx, &r)))
        return co_error(c, fn, rc, "cannot post the receive");
    return recv_finish(c, fn, r, status);
}

/* The arguments of MPI_(I)sendrecv: the communicator, or NULL with *rc set. */
static co_comm *sendrecv_args(const char *fn, const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                              MPI_Comm comm, co_dtype **sdt, co_dtype **rdt, int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (!c) return NULL;
    *sdt = check_xfer(c, fn, sendbuf, sendcount, sendtype, dest, sendtag, 0, rc);
    if (!*sdt) return NULL;
    *rdt = check_xfer(c, fn, recvbuf, recvcount, recvtype, source, recvtag, 1, rc);
    return *rdt ? c : NULL;
}

/* The arguments of MPI_(I)sendrecv_replace. */
static co_comm *replace_args(const char *fn, void *buf, int count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm, co_dtype **dt,
                             int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (!c) return NULL;
    *dt = check_xfer(c, fn, buf, count, datatype, dest, sendtag, 0, rc);
    if (!*dt) return NULL;
    if ((*rc = co_api_rank(c, fn, source, 1)) || (*rc = co_api_tag(c, fn, recvtag, 1))) return NULL;
    return c;
}

/* The replace forms send from a packed copy of the data, so that the receive can land in the
 * same buffer; NULL with *rc set when out of memory. */
static void *packed_copy(co_comm *c, const char *fn, const void *buf, int count, co_dtype *dt,
                         size_t *bytes, int *rc) {
    *bytes = (size_t)count * dt->size;
    void *tmp = malloc(*bytes ? *bytes : 1);
    if (!tmp) {
        *rc = co_error(c, fn, MPI_ERR_NO_MEM, "cannot allocate %zu bytes", *bytes);
        return NULL;
    }
    co_dt_pack(dt, (size_t)count, buf, 0, tmp, *bytes);
    return tmp;
}

CO_WEAK(MPI_Sendrecv, PMPI_Sendrecv);
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status) {
    static const char fn[] = "MPI_Sendrecv";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt;
    co_comm *c = sendrecv_args(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, &sdt, &rdt, &rc);
    if (!c) return rc;
    co_req *rr, *sr;
    if ((rc = co_irecv(recvbuf, (size_t)recvcount, rdt, source, recvtag, c, c->ctx, &rr)))
        return co_error(c, fn, rc, "cannot post the receive");
    if ((rc = co_isend(sendbuf, (size_t)sendcount, sdt, dest, sendtag, c, c->ctx, CO_MODE_STD,
                       &sr))) {
        co_recv_withdraw(rr);
        return co_error(c, fn, rc, "cannot start the send");
    }
    co_status ss = send_wait(sr);
    rc = recv_finish(c, fn, rr, status);
    return rc || !ss.error ? rc : no_receiver_error(c, fn, &ss);
}

CO_WEAK(MPI_Sendrecv_replace, PMPI_Sendrecv_replace);
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    static const char fn[] = "MPI_Sendrecv_replace";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt;
    co_comm *c =
        replace_args(fn, buf, count, datatype, dest, sendtag, source, recvtag, comm, &dt, &rc);
    if (!c) return rc;
    size_t bytes;
    void *tmp = packed_copy(c, fn, buf, count, dt, &bytes, &rc);
    if (!tmp) return rc;
    co_req *rr, *sr;
    if ((rc = co_irecv(buf, (size_t)count, dt, source, recvtag, c, c->ctx, &rr))) {
        free(tmp);
        return co_error(c, fn, rc, "cannot post the receive");
    }
    if ((rc = co_isend(tmp, bytes, co_dt_get(MPI_BYTE), dest, sendtag, c, c->ctx, CO_MODE_STD,
                       &sr))) {
        co_recv_withdraw(rr);
        free(tmp);
        return co_error(c, fn, rc, "cannot start the send");
    }
    co_status ss = send_wait(sr);
    free(tmp);
    rc = recv_finish(c, fn, rr, status);
    return rc || !ss.error ? rc : no_receiver_error(c, fn, &ss);
}

/* MPI 4.0: a send and a receive as one request, completing with the receive's status. */
CO_WEAK(MPI_Isendrecv, PMPI_Isendrecv);
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request) {
    static const char fn[] = "MPI_Isendrecv";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *sdt, *rdt;
    co_comm *c = sendrecv_args(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, &sdt, &rdt, &rc);
    if (!c) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    co_req *r;
    if ((rc = co_nbc_sendrecv(c, sendbuf, (size_t)sendcount, sdt, dest, sendtag, recvbuf,
                              (size_t)recvcount, rdt, source, recvtag, NULL, &r)))
        return co_error(c, fn, rc, "out of requests");
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The data to send is packed at the call; the receive then lands in the same buffer. */
CO_WEAK(MPI_Isendrecv_replace, PMPI_Isendrecv_replace);
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request) {
    static const char fn[] = "MPI_Isendrecv_replace";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt;
    co_comm *c =
        replace_args(fn, buf, count, datatype, dest, sendtag, source, recvtag, comm, &dt, &rc);
    if (!c) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    size_t bytes;
    void *tmp = packed_copy(c, fn, buf, count, dt, &bytes, &rc);
    if (!tmp) return rc;
    co_req *r;
    if ((rc = co_nbc_sendrecv(c, tmp, bytes, co_dt_get(MPI_BYTE), dest, sendtag, buf, (size_t)count,
                              dt, source, recvtag, tmp, &r)))
        return co_error(c, fn, rc, "out of requests");
    *request = r->handle;
    return MPI_SUCCESS;
}

/* ---- Completion ------------------------------------------------------------------------------ */

/* A request handle in a completion call: NULL handles and inactive persistent requests are
 * "empty"; *r is NULL for them. Returns an error class for an invalid handle. */
static int lookup(MPI_Request h, co_req **r) {
    *r = NULL;
    if (h == MPI_REQUEST_NULL) return MPI_SUCCESS;
    co_req *q = co_req_get(h);
    /* (user_freed: MPI_Request_free let go of the handle; the request lives on until it
     * completes, and a second release of it would free it twice) */
    if (!q || q->internal || q->user_freed) return MPI_ERR_REQUEST;
    if (q->persistent && !q->active && !q->complete) return MPI_SUCCESS;
    *r = q;
    return MPI_SUCCESS;
}

/* ---- Generalized requests (MPI 3.1 section 12.2) ----------------------------------------------
 * The program completes them (MPI_Grequest_complete); the completion call that returns one asks
 * its query function for the status and then calls its free function, and returns the first
 * error of the two. MPI_Request_free of one not yet complete calls only the free function, once
 * it completes; MPI_Cancel calls the cancel function. */
typedef struct co_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} co_greq;

/* Calls the free function once; its result. */
static int greq_release(co_req *r) {
    co_greq *g = r->cb_arg;
    if (!g || !g->free_fn) return MPI_SUCCESS;
    MPI_Grequest_free_function *f = g->free_fn;
    g->free_fn = NULL;
    return f(g->extra);
}

static void greq_on_free(co_req *r) {
    if (!co_st.shutting_down) greq_release(r); /* (one still held at MPI_Finalize: dropped) */
    free(r->cb_arg);
    r->cb_arg = NULL;
}

/* The status from the query function, into r->status (its result as the error). */
static void greq_query(co_req *r) {
    co_greq *g = r->cb_arg;
    MPI_Status st = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG};
    int rc = g->query ? g->query(g->extra, &st) : MPI_SUCCESS;
    r->status = (co_status){.source = st.MPI_SOURCE,
                            .tag = st.MPI_TAG,
                            .error = rc,
                            .cancelled = st.co_cancelled,
                            .bytes = st.co_bytes > 0 ? (size_t)st.co_bytes : 0};
}

CO_WEAK(MPI_Grequest_start, PMPI_Grequest_start);
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request) {
    static const char fn[] = "MPI_Grequest_start";
    CO_ENTER(fn);
    if (!request) return co_error(NULL, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    co_greq *g = malloc(sizeof(*g));
    co_req *r = g ? co_req_new(CO_REQ_GREQ) : NULL;
    if (!r) {
        free(g);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of requests");
    }
    *g = (co_greq){query_fn, free_fn, cancel_fn, extra_state};
    r->cb_arg = g;
    r->on_free = greq_on_free;
    r->active = 1;
    *request = r->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Grequest_complete, PMPI_Grequest_complete);
int PMPI_Grequest_complete(MPI_Request request) {
    static const char fn[] = "MPI_Grequest_complete";
    CO_ENTER(fn);
    co_req *r = co_req_get(request);
    if (!r || r->kind != CO_REQ_GREQ)
        return co_error(NULL, fn, MPI_ERR_REQUEST,
                        "0x%x is not a generalized request (or is no longer valid)",
                        (unsigned)request);
    if (r->complete) return co_error(NULL, fn, MPI_ERR_REQUEST, "the request is already complete");
    /* freed by the program already: it goes now, and the free function's error comes here */
    int rc = r->user_freed ? greq_release(r) : MPI_SUCCESS;
    co_req_complete(r);
    return rc ? co_error(NULL, fn, rc, "the generalized request's free function failed")
              : MPI_SUCCESS;
}

/* Take a completed request's status, release it (or leave a persistent one inactive). */
static int finish(MPI_Request *h, co_req *r, MPI_Status *st) {
    if (r->kind == CO_REQ_GREQ) {
        greq_query(r);
        co_api_status(st, &r->status);
        int err = r->status.error, ferr = greq_release(r);
        co_req_free(r);
        *h = MPI_REQUEST_NULL;
        return err ? err : ferr;
    }
    co_api_status(st, &r->status);
    if (r->shared) {
        *h = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    int err = r->status.error;
    if (r->persistent) {
        r->complete = 0;
        r->active = 0;
    } else {
        co_req_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

static int bad_request(const char *fn, MPI_Request h) {
    return co_error(NULL, fn, MPI_ERR_REQUEST, "invalid request handle 0x%x", (unsigned)h);
}

/* What a request did, for completion_error: 0 receive, 1 send, 2 nonblocking collective,
 * 3 generalized request. */
static int role(const co_req *r) {
    if (r->kind == CO_REQ_GREQ) return 3;
    if (r->kind == CO_REQ_COLL) return r->mode == CO_NBC_P2P ? 0 : 2; /* (Isendrecv: receive) */
    return co_req_is_send(r);
}

static int completion_error(const char *fn, co_comm *c, int err, const co_status *s, int send) {
    if (send == 3)
        return co_error(c, fn, err, "generalized request: its query or free function failed");
    if (send == 2) {
        if (err == MPI_ERR_TRUNCATE || err == MPI_ERR_COUNT)
            return co_error(c, fn, err,
                            "nonblocking collective: a block from another rank was %s than this "
                            "rank's count and type describe (counts or types differ between "
                            "processes)",
                            err == MPI_ERR_TRUNCATE ? "larger" : "smaller");
        if (err == MPI_ERR_OTHER && s->deadlock) return deadlock_error(c, fn);
        if (err == MPI_ERR_OTHER)
            return co_error(c, fn, err,
                            "nonblocking collective failed: the ranks' calls disagree (another "
                            "collective or algorithm at some rank) or a rank it needs has "
                            "called MPI_Finalize");
        return co_error(c, fn, err, "nonblocking collective failed");
    }
    if (err == MPI_ERR_OTHER) return send ? no_receiver_error(c, fn, s) : no_sender_error(c, fn, s);
    if (err == MPI_ERR_TRUNCATE)
        return co_error(c, fn, err, "message from rank %d with tag %d truncated", s->source,
                        s->tag);
    return co_error(c, fn, err, "request failed");
}

CO_WEAK(MPI_Wait, PMPI_Wait);
int PMPI_Wait(MPI_Request *request, MPI_Status *status) {
    static const char fn[] = "MPI_Wait";
    CO_ENTER(fn);
    co_req *r;
    if (!request || lookup(*request, &r)) return bad_request(fn, request ? *request : 0);
    if (!r) {
        co_api_status_empty(status);
        return MPI_SUCCESS;
    }
    co_progress_wait(r);
    co_comm *c = r->comm;
    co_status s = r->status;
    int send = role(r);
    int err = finish(request, r, status);
    return err ? completion_error(fn, c, err, &s, send) : MPI_SUCCESS;
}

CO_WEAK(MPI_Test, PMPI_Test);
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    static const char fn[] = "MPI_Test";
    CO_ENTER(fn);
    co_req *r;
    if (!request || lookup(*request, &r)) return bad_request(fn, request ? *request : 0);
    CO_API_OUT(r ? r->comm : NULL, fn, flag);
    if (!r) {
        *flag = 1;
        co_api_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->complete) co_progress();
    *flag = r->complete;
    if (!r->complete) {
        co_poll_missed();
        return MPI_SUCCESS;
    }
    co_comm *c = r->comm;
    co_status s = r->status;
    int send = role(r);
    int err = finish(request, r, status);
    return err ? completion_error(fn, c, err, &s, send) : MPI_SUCCESS;
}

/* Waitall and Testall share this: complete all (wait) or report whether all are done (test). */
static int all_common(const char *fn, int count, MPI_Request reqs[], MPI_Status sts[], int wait,
                      int *flag) {
    CO_ENTER(fn);
    if (count < 0) return co_error(NULL, fn, MPI_ERR_COUNT, "negative count %d", count);
    if (count && !reqs) return co_error(NULL, fn, MPI_ERR_REQUEST, "array_of_requests is NULL");
    if (!wait) CO_API_OUT(NULL, fn, flag);
    co_req *stack[64];
    co_req **rs = count <= 64 ? stack : malloc((size_t)count * sizeof(co_req *));
    if (!rs) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < count; i++) {
        if (lookup(reqs[i], &rs[i])) {
            if (rs != stack) free(rs);
            return bad_request(fn, reqs[i]);
        }
    }
    /* A request listed twice would be completed, and freed, twice. (Persistent requests stay,
     * and the one shared request of sends complete at once is every such send's handle.) */
    int twice = -1;
    for (int i = 0; i < count && twice < 0; i++) {
        if (!rs[i] || rs[i]->persistent || rs[i]->shared) continue;
        if (rs[i]->listed) twice = i;
        rs[i]->listed = 1;
    }
    for (int i = 0; i < count; i++)
        if (rs[i]) rs[i]->listed = 0;
    if (twice >= 0) {
        if (rs != stack) free(rs);
        return co_error(NULL, fn, MPI_ERR_REQUEST,
                        "request 0x%x is in array_of_requests more than once (entry %d)",
                        (unsigned)reqs[twice], twice);
    }
    int done = 1;
    if (wait) {
        for (int i = 0; i < count; i++)
            if (rs[i]) co_progress_wait(rs[i]);
    } else {
        co_progress();
        for (int i = 0; i < count && done; i++)
            if (rs[i] && !rs[i]->complete) done = 0;
        if (!done) co_poll_missed();
    }
    if (flag) *flag = done;
    int nerr = 0;
    co_comm *errcomm = NULL;
    if (done) {
        for (int i = 0; i < count; i++) {
            MPI_Status *st = co_api_status_ignored(sts) ? MPI_STATUS_IGNORE : &sts[i];
            if (!rs[i]) {
                co_api_status_empty(st);
                if (!co_api_status_ignored(st)) st->MPI_ERROR = MPI_SUCCESS;
                continue;
            }
            co_comm *c = rs[i]->comm;
            int err = finish(&reqs[i], rs[i], st);
            if (!co_api_status_ignored(st)) st->MPI_ERROR = err;
            if (err) {
                nerr++;
                if (!errcomm) errcomm = c;
            }
        }
    }
    if (rs != stack) free(rs);
    if (nerr)
        return co_error(errcomm, fn, MPI_ERR_IN_STATUS,
                        "%d of %d requests failed; see the statuses' MPI_ERROR", nerr, count);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Waitall, PMPI_Waitall);
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses) {
    return all_common("MPI_Waitall", count, array_of_requests, array_of_statuses, 1, NULL);
}

CO_WEAK(MPI_Testall, PMPI_Testall);
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status *array_of_statuses) {
    return all_common("MPI_Testall", count, array_of_requests, array_of_statuses, 0, flag);
}

/* Now and then in a wait on several requests: receives that nothing can match any more
 * complete with an error (co_p2p_wait_check). */
static void check_requests(const co_backoff *b, int count, const MPI_Request reqs[]) {
    if (!co_backoff_check_due(b)) return;
    for (int i = 0; i < count; i++) {
        co_req *r;
        if (lookup(reqs[i], &r) || !r) continue;
        co_p2p_wait_check(r);
        if (r->complete) return; /* that one ends the wait */
    }
}

/* Waitany/Testany: index of a completed request, or MPI_UNDEFINED if none is active. */
static int any_common(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                      MPI_Status *status, int wait) {
    CO_ENTER(fn);
    if (count < 0) return co_error(NULL, fn, MPI_ERR_COUNT, "negative count %d", count);
    if (count && !reqs) return co_error(NULL, fn, MPI_ERR_REQUEST, "array_of_requests is NULL");
    CO_API_OUT(NULL, fn, index);
    if (!wait) CO_API_OUT(NULL, fn, flag);
    co_backoff b = {0};
    for (;;) {
        int active = 0;
        for (int i = 0; i < count; i++) {
            co_req *r;
            if (lookup(reqs[i], &r)) return bad_request(fn, reqs[i]);
            if (!r) continue;
            active++;
            if (!r->complete) continue;
            *index = i;
            if (flag) *flag = 1;
            co_comm *c = r->comm;
            co_status s = r->status;
            int send = role(r);
            int err = finish(&reqs[i], r, status);
            return err ? completion_error(fn, c, err, &s, send) : MPI_SUCCESS;
        }
        if (!active) {
            *index = MPI_UNDEFINED;
            if (flag) *flag = 1;
            co_api_status_empty(status);
            return MPI_SUCCESS;
        }
        int ev = co_progress();
        if (!wait && b.idle++ > 0) { /* Testany: one progress pass, then report */
            *index = MPI_UNDEFINED;
            *flag = 0;
            co_poll_missed();
            return MPI_SUCCESS;
        }
        if (wait) {
            if (ev) {
                co_backoff_reset(&b);
            } else {
                co_backoff_idle(&b);
                check_requests(&b, count, reqs);
            }
        }
    }
}

CO_WEAK(MPI_Waitany, PMPI_Waitany);
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    return any_common("MPI_Waitany", count, array_of_requests, index, NULL, status, 1);
}

CO_WEAK(MPI_Testany, PMPI_Testany);
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status) {
    return any_common("MPI_Testany", count, array_of_requests, index, flag, status, 0);
}

static int some_common(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                       int indices[], MPI_Status sts[], int wait) {
    CO_ENTER(fn);
    if (incount < 0) return co_error(NULL, fn, MPI_ERR_COUNT, "negative count %d", incount);
    if (incount && !reqs) return co_error(NULL, fn, MPI_ERR_REQUEST, "array_of_requests is NULL");
    CO_API_OUT(NULL, fn, outcount);
    /* the indices are written only when a request completes: NULL is fine when none is active */
    for (int i = 0; i < incount && !indices; i++) {
        co_req *r;
        if (!lookup(reqs[i], &r) && r)
            return co_error(NULL, fn, MPI_ERR_ARG, "array_of_indices is NULL");
    }
    co_backoff b = {0};
    int first = 1;
    for (;;) {
        int active = 0, n = 0, nerr = 0;
        co_comm *errcomm = NULL;
        for (int i = 0; i < incount; i++) {
            co_req *r;
            if (lookup(reqs[i], &r)) return bad_request(fn, reqs[i]);
            if (!r) continue;
            active++;
            if (!r->complete) continue;
            MPI_Status *st = co_api_status_ignored(sts) ? MPI_STATUS_IGNORE : &sts[n];
            co_comm *c = r->comm;
            int err = finish(&reqs[i], r, st);
            if (!co_api_status_ignored(st)) st->MPI_ERROR = err;
            if (err && !nerr++) errcomm = c;
            indices[n++] = i;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (n || (!wait && !first)) {
            if (!n) co_poll_missed();
            *outcount = n;
            if (nerr)
                return co_error(errcomm, fn, MPI_ERR_IN_STATUS,
                                "%d requests failed; see the statuses' MPI_ERROR", nerr);
            return MPI_SUCCESS;
        }
        first = 0;
        if (co_progress()) {
            co_backoff_reset(&b);
        } else if (wait) {
            co_backoff_idle(&b);
            check_requests(&b, incount, reqs);
        }
    }
}

CO_WEAK(MPI_Waitsome, PMPI_Waitsome);
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses) {
    return some_common("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, 1);
}

CO_WEAK(MPI_Testsome, PMPI_Testsome);
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses) {
    return some_common("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, 0);
}

CO_WEAK(MPI_Request_free, PMPI_Request_free);
int PMPI_Request_free(MPI_Request *request) {
    static const char fn[] = "MPI_Request_free";
    CO_ENTER(fn);
    if (!request) return bad_request(fn, 0);
    co_req *r = co_req_get(*request);
    if (!r || r->internal || r->user_freed) return bad_request(fn, *request);
    if (r->kind == CO_REQ_COLL && r->mode != CO_NBC_P2P && !r->complete &&
        (r->active || !r->persistent)) /* MPI 3.1 section 5.12 */
        return co_error(r->comm, fn, MPI_ERR_REQUEST,
                        "the request of a nonblocking collective cannot be freed before it "
                        "completes (use MPI_Wait or MPI_Test)");
    int rc = MPI_SUCCESS;
    if (r->shared) {
        /* nothing to release */
    } else if (r->complete || (r->persistent && !r->active)) {
        if (r->kind == CO_REQ_GREQ) rc = greq_release(r); /* (its error comes back here) */
        co_req_free(r);
    } else {
        r->user_freed = 1;
        r->persistent = 0; /* an active persistent request goes away when it completes */
    }
    *request = MPI_REQUEST_NULL;
    return rc ? co_error(NULL, fn, rc, "the generalized request's free function failed")
              : MPI_SUCCESS;
}

CO_WEAK(MPI_Request_get_status, PMPI_Request_get_status);
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    static const char fn[] = "MPI_Request_get_status";
    CO_ENTER(fn);
    co_req *r;
    if (lookup(request, &r)) return bad_request(fn, request);
    CO_API_OUT(r ? r->comm : NULL, fn, flag);
    if (!r) {
        *flag = 1;
        co_api_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->complete) co_progress();
    *flag = r->complete;
    if (r->complete && r->kind == CO_REQ_GREQ) {
        greq_query(r);
        co_api_status(status, &r->status);
        if (r->status.error)
            return co_error(NULL, fn, r->status.error,
                            "the generalized request's query function failed");
        return MPI_SUCCESS;
    }
    if (r->complete)
        co_api_status(status, &r->status);
    else
        co_poll_missed();
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Cancel, PMPI_Cancel);
int PMPI_Cancel(MPI_Request *request) {
    static const char fn[] = "MPI_Cancel";
    CO_ENTER(fn);
    co_req *r;
    if (!request || lookup(*request, &r) || !r) return bad_request(fn, request ? *request : 0);
    if (r->kind == CO_REQ_GREQ) {
        co_greq *g = r->cb_arg;
        int rc = g->cancel ? g->cancel(g->extra, r->complete) : MPI_SUCCESS;
        return rc ? co_error(NULL, fn, rc, "the generalized request's cancel function failed")
                  : MPI_SUCCESS;
    }
    if (r->kind == CO_REQ_COLL && r->mode == CO_NBC_P2P)
        return MPI_SUCCESS;     /* MPI_Isendrecv: its send is never cancelled, so neither is it */
    if (r->kind == CO_REQ_COLL) /* MPI 3.1 section 5.12 */
        return co_error(r->comm, fn, MPI_ERR_REQUEST,
                        "a nonblocking collective cannot be cancelled");
    return co_req_cancel(r);
}

/* A status the call reads (or sets): a real one, not MPI_STATUS_IGNORE or NULL. */
static int status_arg(const char *fn, const MPI_Status *status) {
    if (CO_UNLIKELY(co_api_status_ignored(status)))
        return co_error(NULL, fn, MPI_ERR_ARG, "status is %s",
                        status ? "MPI_STATUS_IGNORE" : "NULL");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Test_cancelled, PMPI_Test_cancelled);
int PMPI_Test_cancelled(const MPI_Status *status, int *flag) {
    static const char fn[] = "MPI_Test_cancelled";
    CO_ENTER(fn);
    int rc = status_arg(fn, status);
    if (rc) return rc;
    CO_API_OUT(NULL, fn, flag);
    *flag = status->co_cancelled;
    return MPI_SUCCESS;
}

/* ---- Probes and status queries -------------------------------------------------------------- */

static int probe_common(const char *fn, int source, int tag, MPI_Comm comm, int *flag,
                        MPI_Status *status, int wait) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_rank(c, fn, source, 1)) || (rc = co_api_tag(c, fn, tag, 1))) return rc;
    if (!wait) CO_API_OUT(c, fn, flag);
    co_status s;
    int f = 0;
    co_backoff b = {0};
    int gone = 0;
    for (;;) {
        co_iprobe(source, tag, c, c->ctx, &f, &s);
        if (f || !wait) break;
        if (gone)
            return no_sender_error(
                c, fn, &(co_status){.source = source, .tag = tag, .deadlock = gone == 2});
        co_backoff_idle(&b);
        if (CO_UNLIKELY(co_backoff_check_due(&b))) gone = probe_gone(c, source, tag);
    }
    if (flag) *flag = f;
    if (f)
        co_api_status(status, &s);
    else
        co_poll_missed();
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Probe, PMPI_Probe);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    return probe_common("MPI_Probe", source, tag, comm, NULL, status, 1);
}

CO_WEAK(MPI_Iprobe, PMPI_Iprobe);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    return probe_common("MPI_Iprobe", source, tag, comm, flag, status, 0);
}

/* Matched probe: MPI_Mprobe/MPI_Improbe take the message out of the queue and hand back a
 * message handle; MPI_Mrecv/MPI_Imrecv receive exactly that message. Probing MPI_PROC_NULL
 * gives MPI_MESSAGE_NO_PROC, which receives nothing. An invalid message handle (including
 * MPI_MESSAGE_NULL and one already received) is MPI_ERR_REQUEST. */
static int mprobe_common(const char *fn, int source, int tag, MPI_Comm comm, int *flag,
                         MPI_Message *message, MPI_Status *status, int wait) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_rank(c, fn, source, 1)) || (rc = co_api_tag(c, fn, tag, 1))) return rc;
    if (!message || (!wait && !flag))
        return co_error(c, fn, MPI_ERR_ARG, "message or flag pointer is NULL");
    co_status s = {.source = MPI_PROC_NULL, .tag = MPI_ANY_TAG};
    co_msg *m = NULL;
    if (source != MPI_PROC_NULL) {
        co_backoff b = {0};
        int gone = 0;
        for (;;) {
            if ((rc = co_improbe(source, tag, c, c->ctx, &m, &s)))
                return co_error(c, fn, rc, "out of memory or message handles");
            if (m || !wait) break;
            if (gone)
                return no_sender_error(
                    c, fn, &(co_status){.source = source, .tag = tag, .deadlock = gone == 2});
            co_backoff_idle(&b);
            if (CO_UNLIKELY(co_backoff_check_due(&b))) gone = probe_gone(c, source, tag);
        }
    }
    int found = m || source == MPI_PROC_NULL;
    if (flag) *flag = found;
    if (!found) {
        co_poll_missed();
        return MPI_SUCCESS;
    }
    *message = m ? m->handle : MPI_MESSAGE_NO_PROC;
    co_api_status(status, &s);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Mprobe, PMPI_Mprobe);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    return mprobe_common("MPI_Mprobe", source, tag, comm, NULL, message, status, 1);
}

CO_WEAK(MPI_Improbe, PMPI_Improbe);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status) {
    return mprobe_common("MPI_Improbe", source, tag, comm, flag, message, status, 0);
}

static int mrecv_common(const char *fn, void *buf, int count, MPI_Datatype datatype,
                        MPI_Message *message, MPI_Status *status, MPI_Request *request,
                        int nonblocking) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if (nonblocking && !request)
        return co_error(NULL, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    if (!message) return co_error(NULL, fn, MPI_ERR_ARG, "message pointer is NULL");
    co_msg *m = NULL;
    co_comm *c = co_st.world;
    if (*message != MPI_MESSAGE_NO_PROC) {
        if (!(m = co_msg_get(*message)))
            return co_error(NULL, fn, MPI_ERR_REQUEST, "%s",
                            *message == MPI_MESSAGE_NULL
                                ? "message is MPI_MESSAGE_NULL"
                                : "invalid message handle (already received, or never probed)");
        c = m->comm;
    }
    co_dtype *dt = co_api_data(c, fn, buf, count, datatype, &rc);
    if (!dt) return rc;
    co_req *r;
    if (m)
        rc = co_imrecv(buf, (size_t)count, dt, m, &r);
    else /* MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL */
        rc = co_irecv(buf, (size_t)count, dt, MPI_PROC_NULL, 0, c, c->ctx, &r);
    if (rc) return co_error(c, fn, rc, "cannot start the receive");
    *message = MPI_MESSAGE_NULL;
    if (nonblocking) {
        *request = r->handle;
        return MPI_SUCCESS;
    }
    return recv_finish(c, fn, r, status);
}

CO_WEAK(MPI_Mrecv, PMPI_Mrecv);
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status) {
    return mrecv_common("MPI_Mrecv", buf, count, datatype, message, status, NULL, 0);
}

CO_WEAK(MPI_Imrecv, PMPI_Imrecv);
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request) {
    return mrecv_common("MPI_Imrecv", buf, count, datatype, message, NULL, request, 1);
}

CO_WEAK(MPI_Get_count, PMPI_Get_count);
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    static const char fn[] = "MPI_Get_count";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, 1, &rc);
    if (!dt) return rc;
    if ((rc = status_arg(fn, status))) return rc;
    CO_API_OUT(NULL, fn, count);
    size_t bytes = (size_t)status->co_bytes;
    if (dt->size == 0)
        *count = 0;
    else if (bytes % dt->size)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(bytes / dt->size);
    return MPI_SUCCESS;
}

static int elements(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                    MPI_Count *count) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, 1, &rc);
    if (!dt) return rc;
    if ((rc = status_arg(fn, status))) return rc;
    CO_API_OUT(NULL, fn, count);
    size_t bytes = (size_t)status->co_bytes;
    size_t n = co_dt_elements(dt, bytes);
    /* bytes that do not end on a basic element are not a valid element count */
    size_t check = 0;
    if (dt->size) {
        size_t full = bytes / dt->size;
        check = full * dt->size;
        size_t rem_elems = n - full * dt->sig_elems;
        for (size_t i = 0; i < dt->nsig && rem_elems; i++) {
            size_t k = CO_MIN(rem_elems, dt->sig[i].count);
            check += k * co_basic_size(dt->sig[i].basic);
            rem_elems -= k;
        }
    }
    *count = check == bytes ? (MPI_Count)n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Get_elements, PMPI_Get_elements);
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    MPI_Count n;
    int rc = elements("MPI_Get_elements", status, datatype, count ? &n : NULL);
    if (rc == MPI_SUCCESS) *count = (int)n;
    return rc;
}

CO_WEAK(MPI_Get_elements_x, PMPI_Get_elements_x);
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    return elements("MPI_Get_elements_x", status, datatype, count);
}

static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype,
                        long long count) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, 1, &rc);
    if (!dt) return rc;
    if ((rc = status_arg(fn, status))) return rc;
    size_t per = dt->sig_elems ? dt->size / dt->sig_elems : 0;
    long long bytes;
    if (count < 0 || __builtin_mul_overflow(count, (long long)per, &bytes))
        return co_error(NULL, fn, MPI_ERR_COUNT, "invalid count %lld", count);
    status->co_bytes = bytes;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Status_set_elements, PMPI_Status_set_elements);
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count) {
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}

CO_WEAK(MPI_Status_set_elements_x, PMPI_Status_set_elements_x);
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    return set_elements("MPI_Status_set_elements_x", status, datatype, (long long)count);
}

CO_WEAK(MPI_Status_set_cancelled, PMPI_Status_set_cancelled);
int PMPI_Status_set_cancelled(MPI_Status *status, int flag) {
    static const char fn[] = "MPI_Status_set_cancelled";
    CO_ENTER(fn);
    int rc = status_arg(fn, status);
    if (rc) return rc;
    status->co_cancelled = flag;
    return MPI_SUCCESS;
}

/* ---- Persistent requests --------------------------------------------------------------------- */

/* Persistent sends keep their mode: MPI_Start sends synchronously for MPI_Ssend_init, and
 * copies the data for MPI_Bsend_init (completing at once, as MPI_Ibsend does). */
static int persistent_init(const char *fn, void *buf, int count, MPI_Datatype type, int peer,
                           int tag, MPI_Comm comm, int is_recv, int mode, MPI_Request *request) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    co_dtype *dt = check_xfer(c, fn, buf, count, type, peer, tag, is_recv, &rc);
    if (!dt) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_REQUEST, "request pointer is NULL");
    co_req *r = co_req_prepare(is_recv ? CO_REQ_PRECV : CO_REQ_PSEND, buf, (size_t)count, dt, peer,
                               tag, c, c->ctx);
    if (!r) return co_error(c, fn, MPI_ERR_NO_MEM, "out of requests");
    r->persistent = 1;
    r->mode = (uint8_t)mode;
    *request = r->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Send_init, PMPI_Send_init);
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request) {
    return persistent_init("MPI_Send_init", (void *)buf, count, datatype, dest, tag, comm, 0,
                           CO_MODE_STD, request);
}

CO_WEAK(MPI_Ssend_init, PMPI_Ssend_init);
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request) {
    return persistent_init("MPI_Ssend_init", (void *)buf, count, datatype, dest, tag, comm, 0,
                           CO_MODE_SYNC, request);
}

CO_WEAK(MPI_Rsend_init, PMPI_Rsend_init);
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request) {
    return persistent_init("MPI_Rsend_init", (void *)buf, count, datatype, dest, tag, comm, 0,
                           CO_MODE_STD, request);
}

CO_WEAK(MPI_Bsend_init, PMPI_Bsend_init);
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request *request) {
    return persistent_init("MPI_Bsend_init", (void *)buf, count, datatype, dest, tag, comm, 0,
                           CO_MODE_BUFFERED, request);
}

CO_WEAK(MPI_Recv_init, PMPI_Recv_init);
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return persistent_init("MPI_Recv_init", buf, count, datatype, source, tag, comm, 1, CO_MODE_STD,
                           request);
}

CO_WEAK(MPI_Start, PMPI_Start);
int PMPI_Start(MPI_Request *request) {
    static const char fn[] = "MPI_Start";
    CO_ENTER(fn);
    co_req *r = request ? co_req_get(*request) : NULL;
    if (!r || !r->persistent) return bad_request(fn, request ? *request : 0);
    if (r->active || r->complete) /* (complete: not yet returned by a Wait or Test call) */
        return co_error(r->comm, fn, MPI_ERR_REQUEST,
                        "request is still active (complete it with MPI_Wait or MPI_Test first)");
    if (r->kind == CO_REQ_COLL) { /* a persistent collective (MPI 4) */
        co_nbc_restart(r);
        return MPI_SUCCESS;
    }
    if (r->kind == CO_REQ_PSEND && r->mode == CO_MODE_BUFFERED) {
        /* a detached buffered send of a copy; the user's request is complete at once */
        int rc = bsend_go(fn, r->buf, r->count, r->dt, r->peer, r->tag, r->comm);
        if (rc) return rc;
        r->status = (co_status){0};
        co_req_complete(r);
        return MPI_SUCCESS;
    }
    return r->kind == CO_REQ_PRECV ? co_recv_start(r) : co_send_start(r);
}

CO_WEAK(MPI_Startall, PMPI_Startall);
int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
    CO_ENTER("MPI_Startall");
    for (int i = 0; i < count; i++) {
        int rc = PMPI_Start(&array_of_requests[i]);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}
