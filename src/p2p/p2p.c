/* Point-to-point engine (see p2p.h): request life cycle, matching of incoming messages
 * against posted receives, the unexpected-message queue, and the send protocols. */
#include "p2p.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define P         (co_st.p2p)
#define IOV_BATCH 256

/* ---- Requests --------------------------------------------------------------------------- */

co_req *co_req_new(int kind) {
    co_req *r = P->free_reqs;
    if (r) {
        P->free_reqs = r->next;
    } else {
        r = malloc(sizeof(*r));
        if (!r) return NULL;
    }
    memset(r, 0, sizeof(*r));
    r->handle = co_htab_insert(&co_st.reqs, r);
    if (!r->handle) {
        free(r);
        return NULL;
    }
    r->kind = (uint8_t)kind;
    return r;
}

void co_req_free(co_req *r) {
    if (r->dt) co_dt_release(r->dt);
    free(r->tmp);
    co_htab_remove(&co_st.reqs, r->handle);
    r->handle = 0;
    r->next = P->free_reqs;
    P->free_reqs = r;
}

void co_req_complete(co_req *r) {
    r->complete = 1;
    r->active = 0;
    if (r->tmp) { /* a packed or buffered copy of a send's data */
        free(r->tmp);
        r->tmp = NULL;
    }
    if (r->on_complete) r->on_complete(r);
    if (r->user_freed && !r->persistent) co_req_free(r);
}

/* ---- Unexpected messages ------------------------------------------------------------------ */

static co_umsg *umsg_new(void) {
    co_umsg *u = P->free_umsgs;
    if (u)
        P->free_umsgs = u->next;
    else if (!(u = malloc(sizeof(*u))))
        co_fatal("out of memory for an unexpected message");
    u->next = NULL;
    u->data = NULL;
    u->local_req = NULL;
    return u;
}

static void umsg_free(co_umsg *u) {
    if (u->data && u->data != u->small) free(u->data);
    u->next = P->free_umsgs;
    P->free_umsgs = u;
}

static inline int req_matches(const co_req *r, uint64_t ctx, int src, int tag) {
    return r->ctx == ctx && (r->peer == src || r->peer == MPI_ANY_SOURCE) &&
           (r->tag == tag || r->tag == MPI_ANY_TAG);
}

static co_req *posted_take(uint64_t ctx, int src, int tag) {
    for (co_req *r = P->posted_head; r; r = r->next) {
        if (!req_matches(r, ctx, src, tag)) continue;
        if (r->prev)
            r->prev->next = r->next;
        else
            P->posted_head = r->next;
        if (r->next)
            r->next->prev = r->prev;
        else
            P->posted_tail = r->prev;
        r->next = r->prev = NULL;
        return r;
    }
    return NULL;
}

static void posted_append(co_req *r) {
    r->next = NULL;
    r->prev = P->posted_tail;
    if (P->posted_tail)
        P->posted_tail->next = r;
    else
        P->posted_head = r;
    P->posted_tail = r;
}

static void unexp_append(co_umsg *u) {
    if (P->unexp_tail)
        P->unexp_tail->next = u;
    else
        P->unexp_head = u;
    P->unexp_tail = u;
}

static co_umsg *unexp_find(uint64_t ctx, int src, int tag, co_umsg **prev_out) {
    co_umsg *prev = NULL;
    for (co_umsg *u = P->unexp_head; u; prev = u, u = u->next) {
        if (u->ctx == ctx && (src == MPI_ANY_SOURCE || u->src == src) &&
            (tag == MPI_ANY_TAG || u->tag == tag)) {
            if (prev_out) *prev_out = prev;
            return u;
        }
    }
    return NULL;
}

static void unexp_unlink(co_umsg *u, co_umsg *prev) {
    if (prev)
        prev->next = u->next;
    else
        P->unexp_head = u->next;
    if (P->unexp_tail == u) P->unexp_tail = prev;
    u->next = NULL;
}

/* ---- Outgoing queue access ----------------------------------------------------------------- */

static void pending_ctl_push(int dst, uint16_t kind, int32_t tag, const uint64_t w[3],
                             const void *payload, size_t len) {
    co_pending_ctl *c = malloc(sizeof(*c) + len);
    if (!c) co_fatal("out of memory queueing a control message");
    c->next = NULL;
    c->dst = dst;
    c->kind = kind;
    c->tag = tag;
    memcpy(c->w, w, sizeof(c->w));
    c->len = len;
    if (len) memcpy(c->payload, payload, len);
    if (P->ctl_tail)
        P->ctl_tail->next = c;
    else
        P->ctl_head = c;
    P->ctl_tail = c;
    P->npending++;
}

/* A message for the protocol or for an upper layer: no matching, never blocks. */
static int ctl_try(int dst, uint16_t kind, int32_t tag, const uint64_t w[3], const void *payload,
                   size_t len) {
    void *dst_payload;
    co_cell *c = co_shm_claim(&P->shm, dst, len, 0, &dst_payload);
    if (!c) return -1;
    c->ctx = 0;
    c->src = co_st.world_rank;
    c->tag = tag;
    c->len = (uint32_t)len;
    c->kind = kind;
    c->u.w[1] = w[0];
    c->u.w[2] = w[1];
    c->u.w[3] = w[2];
    if (len) memcpy(dst_payload, payload, len);
    co_shm_publish(&P->shm, dst, c);
    return 0;
}

static void ctl_send(int dst, uint16_t kind, int32_t tag, const uint64_t w[3], const void *payload,
                     size_t len) {
    if (P->ctl_head || ctl_try(dst, kind, tag, w, payload, len))
        pending_ctl_push(dst, kind, tag, w, payload, len);
}

void co_ctrl_register(int type, co_ctrl_handler h) {
    P->ctrl[type] = h;
}

int co_ctrl_send(int dst_world, int type, const uint64_t w[3], const void *payload, size_t len) {
    if (len > P->eager_limit) return MPI_ERR_INTERN;
    ctl_send(dst_world, CO_MSG_CTRL, type, w, payload, len);
    return MPI_SUCCESS;
}

/* ---- Receiving --------------------------------------------------------------------------------
 */

static void recv_set_status(co_req *r, int src, int tag, size_t bytes) {
    size_t cap = r->count * r->dt->size;
    r->status.source = src;
    r->status.tag = tag;
    r->status.bytes = bytes > cap ? cap : bytes;
    r->status.error = bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

static void deliver_eager(co_req *r, int src, int tag, const void *data, size_t bytes) {
    recv_set_status(r, src, tag, bytes);
    if (r->status.bytes) co_dt_unpack(r->dt, r->count, r->buf, 0, data, r->status.bytes);
    co_req_complete(r);
}

/* ---- Rendezvous: how the receiver moves a large message ------------------------------------
 * The RTS tells where the sender's data is: an address (contiguous data) or a description of
 * its layout (co_dt_wire). Knowing both layouts, the receiver picks:
 *   - both contiguous: one process_vm_readv;
 *   - runs of at least COHORT_CMA_MIN_RUN bytes on both sides: process_vm_readv from the sender's
 *     runs straight into ours: one copy, no staging;
 *   - anything finer: ask the sender (CTS) to pack fragments straight into the shared queue
 *     while we unpack the ones already there. Two copies, but made by two processes at once,
 *     and no staging of the whole message.
 * process_vm_readv pins the pages of every remote run separately, so below that the pipelined
 * copy is faster (measurements in docs/datatypes.md). */

/* Cut an iovec list to its first `n` bytes; returns the new length. */
static int iov_trim(struct iovec *iov, int k, size_t n) {
    size_t sum = 0;
    for (int i = 0; i < k; i++) {
        if (sum + iov[i].iov_len >= n) {
            iov[i].iov_len = n - sum;
            return iov[i].iov_len ? i + 1 : i;
        }
        sum += iov[i].iov_len;
    }
    return k;
}

/* Copy the first n packed bytes of the remote (rbuf, rcount, rdt) into (r->buf, r->count,
 * r->dt), run to run. */
static int cma_iov_read(co_req *r, pid_t pid, const co_dtype *rdt, size_t rcount, const void *rbuf,
                        size_t n) {
    struct iovec liov[IOV_BATCH], riov[IOV_BATCH];
    size_t off = 0;
    while (off < n) {
        size_t lcov, rcov;
        int nl = co_dt_iov(r->dt, r->count, r->buf, off, liov, IOV_BATCH, &lcov);
        int nr = co_dt_iov(rdt, rcount, rbuf, off, riov, IOV_BATCH, &rcov);
        size_t take = CO_MIN(CO_MIN(lcov, rcov), n - off);
        if (!take) return -EIO;
        nl = iov_trim(liov, nl, take);
        nr = iov_trim(riov, nr, take);
        int rc = co_shm_cma_read(pid, liov, nl, riov, nr);
        if (rc) return rc;
        off += take;
    }
    return 0;
}

/* Read the message with process_vm_readv if that is the better way: returns 0 when done,
 * 1 when the sender should stream it instead, or -errno. */
static int cma_receive(co_req *r, pid_t pid, uint64_t addr, const co_dt_wire *w, size_t n) {
    if (n == 0) return 0;
    if (!w && r->dt->contig) {
        struct iovec l = {(char *)r->buf + r->dt->true_lb, n};
        struct iovec rm = {(void *)(uintptr_t)addr, n};
        return co_shm_cma_read(pid, &l, 1, &rm, 1);
    }
    size_t min_run = (size_t)co_st.cfg.cma_min_run;
    if (co_dt_avg_run(r->dt) < min_run) return 1;
    if (!w) return cma_iov_read(r, pid, co_dt_get(MPI_BYTE), n, (void *)(uintptr_t)addr, n);
    if (!w->contig && w->nsegs == 0) return 1; /* layout too irregular to describe */
    co_dtype view;
    co_dt_wire_view(w, &view);
    if (co_dt_avg_run(&view) < min_run) return 1;
    return cma_iov_read(r, pid, &view, w->count, (void *)(uintptr_t)w->base, n);
}

static void deliver_rts(co_req *r, int src, int tag, int src_world, uint64_t cookie, uint64_t addr,
                        size_t bytes, const co_dt_wire *w) {
    recv_set_status(r, src, tag, bytes);
    r->matched = 1;
    uint64_t wd[3] = {cookie, 0, 0};
    if (P->shm.cma_ok) {
        pid_t pid = co_st.seg->ranks[src_world].pid;
        int rc = cma_receive(r, pid, addr, w, r->status.bytes);
        if (rc == 0) {
            ctl_send(src_world, CO_MSG_FIN, 0, wd, NULL, 0);
            co_req_complete(r);
            return;
        }
        if (rc < 0) {
            co_log(CO_LOG_INFO,
                   "process_vm_readv from rank %d failed (%s); large messages now "
                   "use the pipelined copy",
                   src_world, strerror(-rc));
            P->shm.cma_ok = 0;
        }
    }
    /* Pipelined copy: ask the sender to stream fragments to this request. */
    r->bytes = bytes;
    r->done_bytes = 0;
    wd[1] = (uint64_t)(uint32_t)r->handle;
    ctl_send(src_world, CO_MSG_CTS, 0, wd, NULL, 0);
}

static void deliver_umsg(co_req *r, co_umsg *u) {
    switch (u->kind) {
    case CO_MSG_EAGER: deliver_eager(r, u->src, u->tag, u->data, u->bytes); break;
    case CO_MSG_EAGER_SYNC: {
        uint64_t w[3] = {u->cookie, 0, 0};
        ctl_send(u->src_world, CO_MSG_ACK, 0, w, NULL, 0);
        deliver_eager(r, u->src, u->tag, u->data, u->bytes);
        break;
    }
    case CO_MSG_RTS:
        deliver_rts(r, u->src, u->tag, u->src_world, u->cookie, u->addr, u->bytes, u->data);
        break;
    case 0: { /* synchronous send to ourselves: copy typed to typed, then release the sender */
        co_req *s = u->local_req;
        recv_set_status(r, u->src, u->tag, u->bytes);
        size_t n = r->status.bytes;
        if (n) {
            void *tmp = s->dt->contig ? (char *)s->buf + s->dt->true_lb : malloc(n);
            if (!tmp) co_fatal("out of memory");
            if (!s->dt->contig) co_dt_pack(s->dt, s->count, s->buf, 0, tmp, n);
            co_dt_unpack(r->dt, r->count, r->buf, 0, tmp, n);
            if (!s->dt->contig) free(tmp);
        }
        co_req_complete(s);
        co_req_complete(r);
        break;
    }
    }
}

static void on_cell(int src_world, const co_cell *c, const void *payload) {
    switch (c->kind) {
    case CO_MSG_EAGER:
    case CO_MSG_EAGER_SYNC:
    case CO_MSG_RTS: {
        co_req *r = posted_take(c->ctx, c->src, c->tag);
        if (r) {
            if (c->kind == CO_MSG_RTS) {
                deliver_rts(r, c->src, c->tag, src_world, c->u.w[1], c->u.w[2], c->u.w[3],
                            c->len ? payload : NULL);
            } else {
                if (c->kind == CO_MSG_EAGER_SYNC) {
                    uint64_t w[3] = {c->u.w[1], 0, 0};
                    ctl_send(src_world, CO_MSG_ACK, 0, w, NULL, 0);
                }
                deliver_eager(r, c->src, c->tag, payload, c->len);
            }
            return;
        }
        co_umsg *u = umsg_new();
        u->ctx = c->ctx;
        u->src = c->src;
        u->tag = c->tag;
        u->src_world = src_world;
        u->kind = c->kind;
        u->cookie = c->u.w[1];
        u->bytes = c->kind == CO_MSG_RTS ? c->u.w[3] : c->len;
        if (c->kind == CO_MSG_RTS) u->addr = c->u.w[2];
        if (c->len) { /* eager payload, or the sender's layout for an RTS */
            u->data = c->len <= sizeof(u->small) ? u->small : malloc(c->len);
            if (!u->data) co_fatal("out of memory buffering an unexpected message");
            memcpy(u->data, payload, c->len);
        }
        unexp_append(u);
        return;
    }
    case CO_MSG_ACK:
    case CO_MSG_FIN: {
        co_req *s = co_req_get((int)(uint32_t)c->u.w[1]);
        if (s) co_req_complete(s);
        return;
    }
    case CO_MSG_CTS: {
        co_req *s = co_req_get((int)(uint32_t)c->u.w[1]);
        if (!s) return;
        s->remote_cookie = c->u.w[2];
        s->done_bytes = 0;
        s->next = P->streaming;
        P->streaming = s;
        P->npending++;
        return;
    }
    case CO_MSG_FRAG: {
        co_req *r = co_req_get((int)(uint32_t)c->u.w[1]);
        if (!r) return;
        size_t off = c->u.w[2];
        size_t cap = r->status.bytes;
        if (off < cap)
            co_dt_unpack(r->dt, r->count, r->buf, off, payload, CO_MIN(c->len, cap - off));
        r->done_bytes += c->len;
        if (r->done_bytes >= r->bytes) co_req_complete(r);
        return;
    }
    case CO_MSG_CTRL:
        if (c->tag >= 0 && c->tag < CO_CTRL_MAX && P->ctrl[c->tag]) {
            uint64_t w[3] = {c->u.w[1], c->u.w[2], c->u.w[3]};
            P->ctrl[c->tag](src_world, w, payload, c->len);
        }
        return;
    default: co_fatal("corrupt message kind %u from rank %d", c->kind, src_world);
    }
}

/* ---- Sending ----------------------------------------------------------------------------------
 */

static void pend_push(co_req *r) {
    int d = r->peer_world;
    r->next = NULL;
    r->pending = 1;
    if (P->pend_tail[d])
        P->pend_tail[d]->next = r;
    else
        P->pend_head[d] = r;
    P->pend_tail[d] = r;
    P->npending++;
}

/* Try to put the message (or its RTS) into the queue; 0 on success, -1 if no room. */
static int send_try(co_req *r) {
    co_shm *s = &P->shm;
    size_t bytes = r->bytes;
    int dst = r->peer_world;
    void *payload;
    if (bytes <= P->eager_limit) {
        int sync = r->mode == CO_MODE_SYNC;
        co_cell *c = co_shm_claim(s, dst, bytes, !sync, &payload);
        if (!c) return -1;
        c->ctx = r->ctx;
        c->src = r->comm->rank;
        c->tag = r->tag;
        c->len = (uint32_t)bytes;
        c->kind = sync ? CO_MSG_EAGER_SYNC : CO_MSG_EAGER;
        if (sync) c->u.w[1] = (uint64_t)(uint32_t)r->handle;
        if (bytes) {
            if (r->tmp)
                memcpy(payload, r->tmp, bytes);
            else
                co_dt_pack(r->dt, r->count, r->buf, 0, payload, bytes);
        }
        co_shm_publish(s, dst, c);
        if (!sync) co_req_complete(r);
        return 0;
    }
    /* Non-contiguous data is not staged: the RTS carries its layout, and the receiver reads
     * it in place or asks for a stream of fragments packed straight into the queue. */
    int described = !r->tmp && !r->dt->contig;
    size_t wlen = described ? co_dt_wire_write(r->dt, r->count, r->buf, NULL) : 0;
    co_cell *c = co_shm_claim(s, dst, wlen, 0, &payload);
    if (!c) return -1;
    if (described) co_dt_wire_write(r->dt, r->count, r->buf, payload);
    c->ctx = r->ctx;
    c->src = r->comm->rank;
    c->tag = r->tag;
    c->len = (uint32_t)wlen;
    c->kind = CO_MSG_RTS;
    c->u.w[1] = (uint64_t)(uint32_t)r->handle;
    c->u.w[2] = (uint64_t)(uintptr_t)(r->tmp ? r->tmp : (char *)r->buf + r->dt->true_lb);
    c->u.w[3] = bytes;
    co_shm_publish(s, dst, c);
    return 0;
}

/* A send to ourselves never touches a queue. Standard mode copies (so that Send-then-Recv on
 * one rank works); synchronous mode waits for the matching receive. */
static void send_local(co_req *r) {
    co_umsg *u = umsg_new();
    u->ctx = r->ctx;
    u->src = r->comm->rank;
    u->tag = r->tag;
    u->src_world = co_st.world_rank;
    u->bytes = r->bytes;
    if (r->mode == CO_MODE_SYNC) {
        u->kind = 0;
        u->local_req = r;
    } else {
        u->kind = CO_MSG_EAGER;
        if (r->bytes) {
            u->data = r->bytes <= sizeof(u->small) ? u->small : malloc(r->bytes);
            if (!u->data) co_fatal("out of memory copying a message to self");
            if (r->tmp)
                memcpy(u->data, r->tmp, r->bytes);
            else
                co_dt_pack(r->dt, r->count, r->buf, 0, u->data, r->bytes);
        }
    }
    co_req *rr = posted_take(u->ctx, u->src, u->tag);
    if (rr) {
        deliver_umsg(rr, u);
        umsg_free(u);
    } else {
        unexp_append(u);
    }
    if (r->mode != CO_MODE_SYNC) co_req_complete(r);
}

int co_send_start(co_req *r) {
    r->complete = 0;
    r->active = 1;
    r->status = (co_status){0};
    if (r->peer == MPI_PROC_NULL) {
        r->status.source = MPI_PROC_NULL;
        r->status.tag = MPI_ANY_TAG;
        co_req_complete(r);
        return MPI_SUCCESS;
    }
    r->peer_world = r->comm->peers[r->peer];
    r->bytes = r->count * r->dt->size;
    if (r->mode == CO_MODE_BUFFERED && r->bytes && !r->tmp) {
        /* buffered: the user may reuse the buffer at once, so send from a copy */
        r->tmp = malloc(r->bytes);
        if (!r->tmp) return MPI_ERR_NO_MEM;
        co_dt_pack(r->dt, r->count, r->buf, 0, r->tmp, r->bytes);
    }
    if (r->peer_world == co_st.world_rank) {
        send_local(r);
        return MPI_SUCCESS;
    }
    if (P->pend_head[r->peer_world] || send_try(r)) pend_push(r);
    return MPI_SUCCESS;
}

int co_send_eager_fast(const void *buf, size_t bytes, co_comm *comm, int dest, int tag) {
    int dw = comm->peers[dest];
    if (bytes > P->eager_limit || dw == co_st.world_rank || P->pend_head[dw]) return 0;
    void *payload;
    co_cell *c = co_shm_claim(&P->shm, dw, bytes, 1, &payload);
    if (!c) return 0;
    c->ctx = comm->ctx;
    c->src = comm->rank;
    c->tag = tag;
    c->len = (uint32_t)bytes;
    c->kind = CO_MSG_EAGER;
    memcpy(payload, buf, bytes);
    co_shm_publish(&P->shm, dw, c);
    return 1;
}

int co_isend(const void *buf, size_t count, co_dtype *dt, int dest, int tag, co_comm *comm,
             uint64_t ctx, int mode, co_req **out) {
    co_req *r = co_req_new(CO_REQ_SEND);
    if (!r) return MPI_ERR_NO_MEM;
    r->comm = comm;
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    co_dt_retain(dt);
    r->peer = dest;
    r->tag = tag;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
    *out = r;
    return co_send_start(r);
}

/* ---- Receiving: posting -----------------------------------------------------------------------
 */

int co_recv_start(co_req *r) {
    r->complete = 0;
    r->active = 1;
    r->matched = 0;
    r->status = (co_status){0};
    if (r->peer == MPI_PROC_NULL) {
        r->status.source = MPI_PROC_NULL;
        r->status.tag = MPI_ANY_TAG;
        co_req_complete(r);
        return MPI_SUCCESS;
    }
    co_umsg *prev;
    co_umsg *u = unexp_find(r->ctx, r->peer, r->tag, &prev);
    if (u) {
        unexp_unlink(u, prev);
        r->matched = 1;
        deliver_umsg(r, u);
        umsg_free(u);
        return MPI_SUCCESS;
    }
    posted_append(r);
    return MPI_SUCCESS;
}

int co_irecv(void *buf, size_t count, co_dtype *dt, int src, int tag, co_comm *comm, uint64_t ctx,
             co_req **out) {
    co_req *r = co_req_new(CO_REQ_RECV);
    if (!r) return MPI_ERR_NO_MEM;
    r->comm = comm;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    co_dt_retain(dt);
    r->peer = src;
    r->tag = tag;
    r->ctx = ctx;
    *out = r;
    return co_recv_start(r);
}

int co_iprobe(int src, int tag, co_comm *comm, uint64_t ctx, int *flag, co_status *st) {
    (void)comm;
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        *st = (co_status){.source = MPI_PROC_NULL, .tag = MPI_ANY_TAG};
        return MPI_SUCCESS;
    }
    co_umsg *u = unexp_find(ctx, src, tag, NULL);
    if (!u) {
        co_progress();
        u = unexp_find(ctx, src, tag, NULL);
    }
    *flag = u != NULL;
    if (u) *st = (co_status){.source = u->src, .tag = u->tag, .bytes = u->bytes};
    return MPI_SUCCESS;
}

int co_req_cancel(co_req *r) {
    if (r->complete) return MPI_SUCCESS;
    if (r->kind == CO_REQ_RECV || r->kind == CO_REQ_PRECV) {
        if (r->matched) return MPI_SUCCESS;
        for (co_req *q = P->posted_head; q; q = q->next) {
            if (q != r) continue;
            if (r->prev)
                r->prev->next = r->next;
            else
                P->posted_head = r->next;
            if (r->next)
                r->next->prev = r->prev;
            else
                P->posted_tail = r->prev;
            r->next = r->prev = NULL;
            r->status.cancelled = 1;
            r->status.source = MPI_ANY_SOURCE;
            r->status.tag = MPI_ANY_TAG;
            co_req_complete(r);
            break;
        }
    }
    /* Sends are not cancelled: once queued they may already be matched remotely. */
    return MPI_SUCCESS;
}

/* ---- Progress of queued work ------------------------------------------------------------------
 */

static int flush_pending(void) {
    int n = 0;
    while (P->ctl_head) {
        co_pending_ctl *c = P->ctl_head;
        if (ctl_try(c->dst, c->kind, c->tag, c->w, c->payload, c->len)) break;
        P->ctl_head = c->next;
        if (!P->ctl_head) P->ctl_tail = NULL;
        free(c);
        P->npending--;
        n++;
    }
    for (int d = 0; d < co_st.world_size; d++) {
        while (P->pend_head[d]) {
            co_req *r = P->pend_head[d];
            co_req *next = r->next;
            r->pending = 0;
            r->next = NULL;
            if (send_try(r)) {
                r->pending = 1;
                r->next = next;
                break;
            }
            P->pend_head[d] = next;
            if (!next) P->pend_tail[d] = NULL;
            P->npending--;
            n++;
        }
    }
    co_req **pp = &P->streaming;
    while (*pp) {
        co_req *s = *pp;
        const char *src = s->tmp ? s->tmp : (char *)s->buf + s->dt->true_lb;
        int packed = !s->tmp && !s->dt->contig;
        size_t chunk = P->frag_size;
        while (s->done_bytes < s->bytes) {
            size_t len = CO_MIN(chunk, s->bytes - s->done_bytes);
            void *payload;
            co_cell *c = co_shm_claim(&P->shm, s->peer_world, len, 0, &payload);
            if (!c) break;
            c->ctx = 0;
            c->src = co_st.world_rank;
            c->tag = 0;
            c->len = (uint32_t)len;
            c->kind = CO_MSG_FRAG;
            c->u.w[1] = s->remote_cookie;
            c->u.w[2] = s->done_bytes;
            if (packed) /* gather straight into the queue: no staging copy */
                co_dt_pack(s->dt, s->count, s->buf, s->done_bytes, payload, len);
            else
                memcpy(payload, src + s->done_bytes, len);
            co_shm_publish(&P->shm, s->peer_world, c);
            s->done_bytes += len;
            n++;
        }
        if (s->done_bytes >= s->bytes) {
            *pp = s->next;
            s->next = NULL;
            P->npending--;
            co_req_complete(s);
        } else {
            pp = &s->next;
        }
    }
    return n;
}

int co_progress(void) {
    if (P->depth) return 0;
    P->depth++;
    int n = co_shm_poll(&P->shm, on_cell);
    if (P->npending) n += flush_pending();
    if (co_st.coll_progress) n += co_st.coll_progress();
    P->depth--;
    return n;
}

/* ---- Blocking helpers -------------------------------------------------------------------------
 */

int co_send(const void *buf, size_t count, co_dtype *dt, int dest, int tag, co_comm *comm,
            uint64_t ctx) {
    co_req *r;
    int rc = co_isend(buf, count, dt, dest, tag, comm, ctx, CO_MODE_STD, &r);
    if (rc) return rc;
    co_progress_wait(r);
    co_req_free(r);
    return MPI_SUCCESS;
}

int co_recv(void *buf, size_t count, co_dtype *dt, int src, int tag, co_comm *comm, uint64_t ctx,
            co_status *st) {
    co_req *r;
    int rc = co_irecv(buf, count, dt, src, tag, comm, ctx, &r);
    if (rc) return rc;
    co_progress_wait(r);
    rc = r->status.error;
    if (st) *st = r->status;
    co_req_free(r);
    return rc;
}

int co_sendrecv(const void *sbuf, size_t scount, co_dtype *sdt, int dest, int stag, void *rbuf,
                size_t rcount, co_dtype *rdt, int src, int rtag, co_comm *comm, uint64_t ctx,
                co_status *st) {
    co_req *r[2];
    int rc = co_irecv(rbuf, rcount, rdt, src, rtag, comm, ctx, &r[1]);
    if (rc) return rc;
    rc = co_isend(sbuf, scount, sdt, dest, stag, comm, ctx, CO_MODE_STD, &r[0]);
    if (rc) return rc;
    co_progress_wait(r[0]);
    co_progress_wait(r[1]);
    rc = r[1]->status.error;
    if (st) *st = r[1]->status;
    co_req_free(r[0]);
    co_req_free(r[1]);
    return rc;
}

int co_waitall_internal(int n, co_req **reqs) {
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) continue;
        co_progress_wait(reqs[i]);
        if (reqs[i]->status.error && !rc) rc = reqs[i]->status.error;
        co_req_free(reqs[i]);
        reqs[i] = NULL;
    }
    return rc;
}

/* ---- Set-up -----------------------------------------------------------------------------------
 */

int co_p2p_init(void) {
    P = calloc(1, sizeof(*P));
    if (!P) return MPI_ERR_NO_MEM;
    co_st.reqs.kind = COHORT_KIND_REQUEST;
    if (co_shm_init(&P->shm, co_st.seg, co_st.world_rank, co_st.cfg.cma)) return MPI_ERR_NO_MEM;
    P->eager_limit = co_st.seg->hdr->eager_limit;
    /* Fragments of the pipelined copy: a quarter of the queue's payload space keeps several in
     * flight, so sender and receiver copy at the same time. */
    P->frag_size = CO_MAX(co_st.seg->hdr->data_bytes / 4, 4096);
    if (P->frag_size > co_st.seg->hdr->data_bytes) P->frag_size = co_st.seg->hdr->data_bytes;
    P->pend_head = calloc((size_t)co_st.world_size, sizeof(co_req *));
    P->pend_tail = calloc((size_t)co_st.world_size, sizeof(co_req *));
    if (!P->pend_head || !P->pend_tail) return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

void co_p2p_fini(void) {
    if (!P) return;
    while (P->npending) co_progress(); /* peers may be waiting for these */
    while (P->unexp_head) {
        co_umsg *u = P->unexp_head;
        P->unexp_head = u->next;
        umsg_free(u);
    }
    while (P->free_umsgs) {
        co_umsg *u = P->free_umsgs;
        P->free_umsgs = u->next;
        free(u);
    }
    for (uint32_t s = 1; s < co_st.reqs.next; s++) {
        co_req *r = co_st.reqs.chunks[s / CO_HTAB_CHUNK][s % CO_HTAB_CHUNK];
        if (r) {
            free(r->tmp);
            free(r);
        }
    }
    while (P->free_reqs) {
        co_req *r = P->free_reqs;
        P->free_reqs = r->next;
        free(r);
    }
    co_htab_destroy(&co_st.reqs);
    free(P->pend_head);
    free(P->pend_tail);
    co_shm_fini(&P->shm);
    free(P);
    P = NULL;
}
