/* Point-to-point messaging: requests, the matching engine and the eager/rendezvous protocols
 * over the shared-memory transport. Every other layer that moves data (collectives,
 * communicator creation) does so through the functions declared here, on its own context.
 *
 * Protocols (the `kind` of a transport cell):
 *   EAGER       payload travels in the queue; the send completes at once.
 *   EAGER_SYNC  same, but the receiver answers ACK when the message is matched (Ssend).
 *   RTS         large message: the receiver chooses, from both layouts, the cooperative
 *               single copy through the rendezvous slot the RTS names, or a CTS asking the
 *               sender to stream FRAGs through the queue (p2p.c, "Large messages").
 *   CTRL        a message for a layer above p2p (ID pools ...), dispatched by type. */
#ifndef CO_P2P_H
#define CO_P2P_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"
#include "../xport/emu.h"
#include "../xport/shm.h"

enum co_msg_kind {
    CO_MSG_EAGER = 1,
    CO_MSG_EAGER_SYNC,
    CO_MSG_RTS,
    CO_MSG_ACK,
    CO_MSG_CTS,
    CO_MSG_FRAG,
    CO_MSG_CTRL,
};

/* Upper-layer control messages. The handler runs inside the progress engine: it must not
 * wait; it may send (co_ctrl_send never blocks). */
typedef void (*co_ctrl_handler)(int src_proc, const uint64_t w[3], const void *payload, size_t len);
enum { CO_CTRL_IDPOOL = 0, CO_CTRL_MAX = 8 };
void co_ctrl_register(int type, co_ctrl_handler h);
int co_ctrl_send(int dst_proc, int type, const uint64_t w[3], const void *payload, size_t len);

/* An unexpected message: arrived before a matching receive was posted. */
typedef struct co_umsg {
    struct co_umsg *next;
    uint64_t ctx;
    int src, tag;
    int src_proc;
    uint16_t kind;
    size_t bytes;
    void *data;        /* eager payload copy, or an RTS's slot and sender layout (p2p.c) */
    uint64_t cookie;   /* sender's request (sync eager, RTS) */
    uint64_t addr;     /* RTS: sender's address */
    unsigned rdv_slot; /* RTS: sender's rendezvous slot + 1, 0 if none */
    co_req *local_req; /* a send to ourselves in synchronous mode */
    char small[64];    /* small payloads avoid a malloc */
} co_umsg;

typedef struct co_pending_ctl {
    struct co_pending_ctl *next;
    int dst;
    uint16_t kind;
    int32_t tag;
    uint64_t w[3];
    size_t len;
    char payload[];
} co_pending_ctl;

struct co_p2p_state {
    co_shm shm;
    co_req *posted_head, *posted_tail;
    co_umsg *unexp_head, *unexp_tail;
    co_req **pend_head, **pend_tail; /* per destination: sends waiting for queue room */
    co_pending_ctl *ctl_head, *ctl_tail;
    co_req *streaming;             /* fallback rendezvous sends pushing fragments */
    co_req *rdv_sends, *rdv_recvs; /* large messages being copied through rendezvous slots */
    int nrdv;
    uint16_t *rdv_free; /* our free rendezvous slots */
    int nrdv_free;
    int npending;
    co_req *free_reqs;
    co_umsg *free_umsgs;
    co_ctrl_handler ctrl[CO_CTRL_MAX];
    int depth; /* progress re-entrance guard */
    uint64_t eager_limit;
    uint64_t frag_size; /* pipelined rendezvous: bytes per fragment */
    /* Returned by MPI_Isend when a small message went straight into a queue: the send is
     * complete, so every such request can share one handle, which completion calls never free
     * (as for MPI_REQUEST_NULL, but Wait/Test report it complete with an empty status). */
    co_req *done_send;
};

co_req *co_req_new(int kind);
static inline int co_req_is_send(const co_req *r) {
    return r->kind == CO_REQ_SEND || r->kind == CO_REQ_PSEND;
}
void co_req_free(co_req *r);
/* A request uses c until it is freed (MPI_Comm_free waits for that to destroy c). */
static inline void co_req_set_comm(co_req *r, co_comm *c) {
    r->comm = c;
    if (c) c->refcount++;
}
void co_req_complete(co_req *r);
static inline co_req *co_req_get(MPI_Request h) {
    return co_htab_get(&co_st.reqs, h);
}

/* A request of `kind` (CO_REQ_SEND, _RECV, _PSEND, _PRECV) on comm for (buf, count, dt),
 * peer and tag, not started yet; NULL when out of requests. */
co_req *co_req_prepare(int kind, const void *buf, size_t count, co_dtype *dt, int peer, int tag,
                       co_comm *comm, uint64_t ctx);
/* Start a send or receive on `comm`; `ctx` is comm->ctx (point-to-point) or comm->ctx|1.
 * A receive on a collective context (ctx|1) expects exactly its count: a shorter message
 * completes it with MPI_ERR_COUNT (the ranks' counts disagree), a longer one with
 * MPI_ERR_TRUNCATE. Both leave nothing behind when they fail: *out is then NULL, which
 * co_waitall_internal skips. */
int co_isend(const void *buf, size_t count, co_dtype *dt, int dest, int tag, co_comm *comm,
             uint64_t ctx, int mode, co_req **out);
int co_irecv(void *buf, size_t count, co_dtype *dt, int src, int tag, co_comm *comm, uint64_t ctx,
             co_req **out);
/* "rank 3 (tag 5)", "any source (any tag)": a peer and tag, for messages. */
void co_p2p_peer_tag(char *out, size_t len, int peer, int tag);
/* Whether no message from `src` (a rank of c or MPI_ANY_SOURCE) can arrive on c any more:
 * every rank that could send it has called MPI_Finalize, and what they sent before has been
 * taken in (a probe or receive that still finds nothing never will). */
int co_p2p_senders_gone(const co_comm *c, int src);
/* A small contiguous standard-mode send straight into the queue, without a request (to this
 * rank itself: straight into a receive already posted, at any size): 1 if it went, 0 if the
 * caller must take the general path. `buf` points at the first byte; `ctx` as for co_isend. */
int co_send_eager_fast(const void *buf, size_t bytes, co_comm *comm, uint64_t ctx, int dest,
                       int tag);
/* (Re)start a prepared request: persistent requests use this on every MPI_Start. */
int co_send_start(co_req *r);
int co_recv_start(co_req *r);
int co_iprobe(int src, int tag, co_comm *comm, uint64_t ctx, int *flag, co_status *st);
int co_req_cancel(co_req *r);
/* Takes back a receive posted by a call that then failed, and frees it: cancelled if nothing
 * has matched it, else waited for, so that nothing lands in its buffer after the call. */
void co_recv_withdraw(co_req *r);
/* Cancels and frees every posted receive on `ctx` with a tag below `below_tag` not yet
 * matched, and releases the other requests on it with such tags (now, or when they complete):
 * what a collective that was abandoned (its ranks' calls disagreed) leaves behind, and not
 * what nonblocking collectives in flight on the same context still wait for. */
void co_p2p_abandon(uint64_t ctx, int below_tag);
/* Drops the messages that arrived on contexts ctx and ctx|1 and were never received: the
 * communicator is gone (its context may be given to a new one, which must not see them). */
void co_p2p_purge(uint64_t ctx);

/* Matched probe. A message taken by co_improbe leaves the unexpected queue, so no other
 * receive can match it; it lives behind an MPI_Message handle until co_imrecv receives it. */
typedef struct co_msg {
    int handle;
    co_comm *comm;
    co_umsg *u;
} co_msg;
/* The first message matching (src, tag) on ctx, taken out of the queue (NULL if none after
 * one progress pass), as a message object with a handle; *st describes it. */
int co_improbe(int src, int tag, co_comm *comm, uint64_t ctx, co_msg **out, co_status *st);
static inline co_msg *co_msg_get(MPI_Message h) {
    return co_htab_get(&co_st.msgs, h);
}
/* Receive message m into (buf, count, dt) as a request that completes like any receive;
 * m is consumed and its handle released. */
int co_imrecv(void *buf, size_t count, co_dtype *dt, co_msg *m, co_req **out);

/* Blocking helpers for layers above (collectives, communicator set-up). */
int co_send(const void *buf, size_t count, co_dtype *dt, int dest, int tag, co_comm *comm,
            uint64_t ctx);
int co_recv(void *buf, size_t count, co_dtype *dt, int src, int tag, co_comm *comm, uint64_t ctx,
            co_status *st);
int co_sendrecv(const void *sbuf, size_t scount, co_dtype *sdt, int dest, int stag, void *rbuf,
                size_t rcount, co_dtype *rdt, int src, int rtag, co_comm *comm, uint64_t ctx,
                co_status *st);
int co_waitall_internal(int n, co_req **reqs);

#endif /* CO_P2P_H */
