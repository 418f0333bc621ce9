/* Point-to-point engine (see p2p.h): request life cycle, matching of incoming messages
 * against posted receives, the unexpected-message queue, and the send protocols. */
#include "p2p.h"

#include <errno.h>
#include <stdio.h>
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
    if (r->on_free) r->on_free(r);
    if (r->dt) co_dt_release(r->dt);
    if (r->comm) r->comm->refcount--;
    free(r->tmp);
    co_htab_remove(&co_st.reqs, r->handle);
    r->handle = 0;
    r->next = P->free_reqs;
    P->free_reqs = r;
}

void co_req_complete(co_req *r) {
    co_poll_active();
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

static void posted_unlink(co_req *r) {
    if (r->prev)
        r->prev->next = r->next;
    else
        P->posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        P->posted_tail = r->prev;
    r->next = r->prev = NULL;
}

static co_req *posted_take(uint64_t ctx, int src, int tag) {
    for (co_req *r = P->posted_head; r; r = r->next) {
        if (!req_matches(r, ctx, src, tag)) continue;
        posted_unlink(r);
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
    c->src = co_st.proc;
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

int co_ctrl_send(int dst_proc, int type, const uint64_t w[3], const void *payload, size_t len) {
    if (len > P->eager_limit) return MPI_ERR_INTERN;
    ctl_send(dst_proc, CO_MSG_CTRL, type, w, payload, len);
    return MPI_SUCCESS;
}

/* ---- Receiving --------------------------------------------------------------------------------
 */

static void recv_set_status(co_req *r, int src, int tag, size_t bytes) {
    size_t cap = r->count * r->dt->size;
    r->status.source = src;
    r->status.tag = tag;
    r->status.bytes = bytes > cap ? cap : bytes;
    /* collective traffic (ctx|1) carries exactly what the receiver expects unless the ranks'
     * counts disagree */
    r->status.error = bytes > cap                   ? MPI_ERR_TRUNCATE
                      : bytes < cap && (r->ctx & 1) ? MPI_ERR_COUNT
                                                    : MPI_SUCCESS;
    if (CO_UNLIKELY(r->status.error) && (r->ctx & 1) && r->tag < CO_COLL_TAG_NBC &&
        co_st.coll_short == 0)
        co_st.coll_short = 1; /* a blocking collective's: see co_isend */
}

/* Completes receive r with an eager message's bytes at data. `queued`: data is a payload still
 * in the queue, which a contiguous receive reads by whole lines (co_shm_copy_out). */
static void deliver_eager(co_req *r, int src, int tag, const void *data, size_t bytes, int queued) {
    recv_set_status(r, src, tag, bytes);
    size_t n = r->status.bytes;
    if (n && queued && r->dt->contig)
        co_shm_copy_out((char *)r->buf + r->dt->true_lb, data, n);
    else if (n)
        co_dt_unpack(r->dt, r->count, r->buf, 0, data, n);
    co_req_complete(r);
}

/* ---- Large messages -------------------------------------------------------------------------
 * The RTS says where the sender's data is (a contiguous address, or a description of a
 * non-contiguous layout, co_dt_wire) and names a rendezvous slot: one cache line in the job
 * segment. The receiver, knowing both layouts, picks how the bytes move:
 *   - the cooperative single copy, when the runs are long enough (single_copy_pays): the slot
 *     records how many bytes to move (the receiver may truncate) and, if the receiver is
 *     contiguous, its buffer's address; both sides then take chunks with an atomic fetch-add
 *     and copy them run to run, the receiver reading (process_vm_readv) and the sender writing
 *     (process_vm_writev, only into a contiguous buffer). Two cores share one copy, and a
 *     sender busy outside MPI simply leaves every chunk to the receiver;
 *   - anything finer: the receiver refuses the slot and answers CTS, and the sender packs
 *     fragments straight into the shared queue while the receiver unpacks the ones already
 *     there: two copies, made by two processes at once, with no staging of the whole message.
 * Cross-process copies pin the pages of every remote run separately, so on short runs the
 * pipelined copy is faster (measurements in docs/datatypes.md). */
typedef struct co_rdv {
    _Atomic uint64_t next;  /* first byte no side has claimed yet */
    _Atomic uint64_t done;  /* bytes copied */
    _Atomic uint64_t raddr; /* receiver's contiguous buffer, 0 if the sender must not write */
    uint64_t limit;         /* bytes to move */
    uint64_t chunk;
    _Atomic uint32_t state;
    uint32_t pull; /* set by the sender before its RTS: it leaves the whole copy to the receiver */
} co_rdv;
_Static_assert(sizeof(co_rdv) <= 64, "a rendezvous slot is one cache line");

enum { RDV_POSTED = 1, RDV_GO, RDV_RECV_DONE, RDV_ABORT };

static void list_remove(co_req **head, co_req *r) {
    for (co_req **pp = head; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            r->next = NULL;
            return;
        }
}

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

/* Copy packed bytes [off, end) of the remote (rbuf, rcount, rdt) into (r->buf, r->count,
 * r->dt), run to run. */
static int cma_iov_read(co_req *r, pid_t pid, const co_dtype *rdt, size_t rcount, const void *rbuf,
                        size_t off, size_t end) {
    struct iovec liov[IOV_BATCH], riov[IOV_BATCH];
    while (off < end) {
        size_t lcov, rcov;
        int nl = co_dt_iov(r->dt, r->count, r->buf, off, liov, IOV_BATCH, &lcov);
        int nr = co_dt_iov(rdt, rcount, rbuf, off, riov, IOV_BATCH, &rcov);
        size_t take = CO_MIN(CO_MIN(lcov, rcov), end - off);
        if (!take) return -EIO;
        nl = iov_trim(liov, nl, take);
        nr = iov_trim(riov, nr, take);
        int rc = co_shm_cma_read(pid, liov, nl, riov, nr);
        if (rc) return rc;
        off += take;
    }
    return 0;
}

/* Read packed bytes [off, off+n) of the sender's data into our layout. The sender's layout
 * is its description, kept in r->tmp while the copy lasts, or plain bytes at remote_addr. */
static int read_window(co_req *r, pid_t pid, size_t off, size_t n) {
    if (!r->tmp) {
        if (r->dt->contig) {
            struct iovec l = {(char *)r->buf + r->dt->true_lb + off, n};
            struct iovec rm = {(void *)(uintptr_t)(r->remote_addr + off), n};
            return co_shm_cma_read(pid, &l, 1, &rm, 1);
        }
        return cma_iov_read(r, pid, co_dt_get(MPI_BYTE), r->bytes,
                            (void *)(uintptr_t)r->remote_addr, off, off + n);
    }
    const co_dt_wire *w = r->tmp;
    co_dtype view;
    co_dt_wire_view(w, &view);
    return cma_iov_read(r, pid, &view, w->count, (void *)(uintptr_t)w->base, off, off + n);
}

/* Write packed bytes [off, off+n) of our data into the receiver's contiguous buffer. */
static int write_window(co_req *s, uint64_t raddr, size_t off, size_t n) {
    pid_t pid = co_st.seg->ranks[s->peer_proc].pid;
    if (s->tmp || s->dt->contig) {
        const char *src = s->tmp ? s->tmp : (char *)s->buf + s->dt->true_lb;
        struct iovec l = {(char *)src + off, n};
        struct iovec rm = {(void *)(uintptr_t)(raddr + off), n};
        return co_shm_cma_write(pid, &l, 1, &rm, 1);
    }
    struct iovec liov[IOV_BATCH];
    for (size_t end = off + n; off < end;) {
        size_t cov;
        int nl = co_dt_iov(s->dt, s->count, s->buf, off, liov, IOV_BATCH, &cov);
        size_t take = CO_MIN(cov, end - off);
        if (!take) return -EIO;
        nl = iov_trim(liov, nl, take);
        struct iovec rm = {(void *)(uintptr_t)(raddr + off), take};
        int rc = co_shm_cma_write(pid, liov, nl, &rm, 1);
        if (rc) return rc;
        off += take;
    }
    return 0;
}

/* Whether the single copy pays for this pair of layouts (w: the sender's, NULL when it is
 * contiguous); if not, the pipelined copy does the job. Every run costs a cross-process copy
 * some fixed work, remote runs (page pinning) about three times more than local ones, and a
 * contiguous receive buffer lets the sender take half of the copy. Hence, with T =
 * COHORT_CMA_MIN_RUN: our runs must be at least T/2 long, the sender's at least T, or T/8
 * when we are contiguous (measurements in docs/datatypes.md). */
static int single_copy_pays(const co_req *r, const co_dt_wire *w) {
    if (!w && r->dt->contig) return 1;
    size_t t = (size_t)co_st.cfg.cma_min_run;
    if (co_dt_avg_run(r->dt) < t / 2) return 0;
    size_t remote = SIZE_MAX;
    if (w) {
        if (!w->contig && w->nsegs == 0) return 0; /* layout too irregular to describe */
        co_dtype view;
        co_dt_wire_view(w, &view);
        remote = co_dt_avg_run(&view);
    }
    return remote >= (r->dt->contig ? t / 8 : t);
}

static void cma_failed(int peer, int rc) {
    co_log(CO_LOG_INFO,
           "cross-process copy with rank %d failed (%s); large messages now stream through "
           "shared memory",
           peer, strerror(-rc));
    P->shm.cma_ok = 0;
}

/* Claim and copy chunks until none is left; returns chunks copied, or -1 on a copy error
 * (the transfer then falls back to streaming through the queue). */
static int rdv_share(co_rdv *d, co_req *r, int sender, uint64_t raddr) {
    int n = 0;
    pid_t pid = co_st.seg->ranks[r->peer_proc].pid;
    for (;;) {
        uint64_t off = atomic_fetch_add_explicit(&d->next, d->chunk, memory_order_relaxed);
        if (off >= d->limit) return n;
        size_t len = (size_t)CO_MIN(d->chunk, d->limit - off);
        int rc = sender ? write_window(r, raddr, off, len) : read_window(r, pid, off, len);
        if (rc) {
            cma_failed(co_world_of(r->peer_proc), rc);
            atomic_store_explicit(&d->state, RDV_ABORT, memory_order_release);
            return -1;
        }
        atomic_fetch_add_explicit(&d->done, len, memory_order_release);
        n++;
    }
}

/* Pipelined copy: ask the sender to stream fragments to this request. */
static void recv_stream(co_req *r) {
    r->done_bytes = 0;
    r->rdv = NULL;
    uint64_t w[3] = {r->remote_cookie, (uint64_t)(uint32_t)r->handle, 0};
    ctl_send(r->peer_proc, CO_MSG_CTS, 0, w, NULL, 0);
}

/* Whether the sender of a large message from process `proc` will leave its whole copy to this
 * rank. A sender does when it waits for a message from us (`exchanging`, below), as in an
 * exchange, where this rank has a large message of its own in flight to it (unless the ranks
 * outnumber the cores, where the sender takes its half). The copy is then one call instead of
 * two halves: a Sendrecv of 256 KiB between 2 ranks took 13.2-13.6 instead of 16.2-16.8 µs.
 * A sender in CO_MODE_PULL says so in the slot (`pull`), whatever the number of ranks. */
static int sender_leaves_copy(const co_rdv *d, int proc) {
    if (d->pull) return 1;
    if (co_st.oversubscribed) return 0;
    for (const co_req *s = P->rdv_sends; s; s = s->next)
        if (s->peer_proc == proc) return 1;
    return 0;
}

static void deliver_rts(co_req *r, int src, int tag, int src_proc, uint64_t cookie, uint64_t addr,
                        size_t bytes, unsigned slot, const co_dt_wire *w) {
    recv_set_status(r, src, tag, bytes);
    r->matched = 1;
    r->bytes = bytes;
    r->peer_proc = src_proc;
    r->remote_addr = addr;
    r->remote_cookie = cookie;
    size_t n = r->status.bytes;
    if (!slot) { /* the sender cannot use cross-process copies */
        recv_stream(r);
        return;
    }
    co_rdv *d = co_seg_rdv_slot(co_st.seg, src_proc, slot - 1);
    size_t wlen = w ? sizeof(co_dt_wire) + w->nsegs * sizeof(co_dt_seg) : 0;
    if (!P->shm.cma_ok || !single_copy_pays(r, w) || (w && !(r->tmp = malloc(wlen)))) {
        atomic_store_explicit(&d->state, RDV_ABORT, memory_order_release);
        recv_stream(r);
        return;
    }
    if (w) memcpy(r->tmp, w, wlen); /* read_window needs it after the RTS is gone */
    d->limit = n;
    /* Halves: each cross-process copy call pins pages and walks page tables, so fewer,
     * larger calls win; measured 1 MiB streaming: 49-58 GB/s with halves, 36-42 with
     * eighths, 29 with sixteenths; and halves of every size, not only from 64 KiB, took
     * a ping-pong of 20-48 KiB 20-40% less time (docs/runtime.md). */
    size_t chunk = (sender_leaves_copy(d, src_proc) ? n + 4095 : n / 2 + 4095) & ~(size_t)4095;
    d->chunk = CO_MAX(chunk, 4096u);
    atomic_store_explicit(
        &d->raddr, r->dt->contig ? (uint64_t)(uintptr_t)((char *)r->buf + r->dt->true_lb) : 0,
        memory_order_relaxed);
    atomic_store_explicit(&d->state, RDV_GO, memory_order_release);
    r->rdv = d;
    r->next = P->rdv_recvs;
    P->rdv_recvs = r;
    P->nrdv++;
}

static void rdv_send_release(co_req *s) {
    list_remove(&P->rdv_sends, s);
    P->nrdv--;
    P->rdv_free[P->nrdv_free++] = (uint16_t)s->rdv_slot;
    s->rdv = NULL;
    s->rdv_slot = -1;
}

/* Whether this rank waits for a message from the reader of send s, posted or being copied, as
 * in an exchange with a neighbour (asked once, when the reader starts): each side then makes the
 * single copy of the message it receives, whole, instead of half of each message both ways (twice
 * the system calls and page pinning, both cores busy either way). A halo exchange of 2 messages
 * each way between 2 ranks took 10.3 instead of 11.7 µs at 64 KiB and 124 instead of 139 at 1 MiB,
 * while ping-pong and streaming, whose senders receive nothing meanwhile, kept their halves. With
 * more ranks than cores the halves stay: there it measured mixed (4 ranks, 2-D grid of 1 MiB:
 * 565 against 498 µs; ring 1135 against 1214 at 4 MiB). Only the first 64 posted receives are
 * looked at. */
static int exchanging(const co_req *s) {
    if (co_st.oversubscribed) return 0;
    for (const co_req *r = P->rdv_recvs; r; r = r->next)
        if (r->peer_proc == s->peer_proc) return 1;
    int k = 0;
    for (const co_req *r = P->posted_head; r && k < 64; r = r->next, k++)
        if (r->peer >= 0 && co_proc_of(r->comm->peers[r->peer]) == s->peer_proc) return 1;
    return 0;
}

/* Drive every large message in flight: copy our share, notice the end. */
static int rdv_progress(void) {
    int n = 0;
    for (co_req **pp = &P->rdv_recvs; *pp;) { /* unlinks through pp: no second search */
        co_req *r = *pp;
        co_rdv *d = r->rdv;
        if (atomic_load_explicit(&d->state, memory_order_acquire) != RDV_ABORT)
            n += rdv_share(d, r, 0, 0) > 0;
        uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire);
        int aborted = st == RDV_ABORT;
        if (!aborted && atomic_load_explicit(&d->done, memory_order_acquire) < d->limit) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        r->next = NULL;
        P->nrdv--;
        n++;
        if (aborted) {
            recv_stream(r);
        } else {
            atomic_store_explicit(&d->state, RDV_RECV_DONE, memory_order_release);
            co_req_complete(r);
        }
    }
    co_req *s = P->rdv_sends;
    while (s) {
        co_req *next = s->next;
        co_rdv *d = s->rdv;
        uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire);
        if (st == RDV_GO) {
            uint64_t raddr = atomic_load_explicit(&d->raddr, memory_order_relaxed);
            if (!s->rdv_whole) s->rdv_whole = s->mode == CO_MODE_PULL || exchanging(s) ? 2 : 1;
            if (raddr && s->rdv_whole == 1) n += rdv_share(d, s, 1, raddr) > 0;
            st = atomic_load_explicit(&d->state, memory_order_acquire);
        }
        if (st == RDV_RECV_DONE || st == RDV_ABORT) {
            rdv_send_release(s);
            if (st == RDV_RECV_DONE) co_req_complete(s); /* else a CTS follows */
            n++;
        }
        s = next;
    }
    return n;
}

/* An RTS without payload (contiguous data) has its slot in w[0]; one with a payload (the
 * transport uses w[0] for the payload's position) starts the payload with it, followed by the
 * sender's layout. */
#define RTS_HDR sizeof(uint64_t)
static unsigned rts_slot(const co_cell *c, const void *payload) {
    if (!c->len) return (unsigned)c->u.w[0];
    uint64_t slot;
    memcpy(&slot, payload, sizeof(slot));
    return (unsigned)slot;
}
static const co_dt_wire *rts_layout(const co_cell *c, const void *payload) {
    return c->len ? (const co_dt_wire *)((const char *)payload + RTS_HDR) : NULL;
}

/* Receive r takes send s, both of this rank, straight from s's buffer (packed first only when
 * it is not contiguous). Completes r, not s. */
static void deliver_local(co_req *r, const co_req *s) {
    const void *data = s->tmp;
    void *own = NULL;
    if (!data && s->dt->contig) {
        data = (const char *)s->buf + s->dt->true_lb;
    } else if (!data && s->bytes) {
        data = own = malloc(s->bytes);
        if (!own) co_fatal("out of memory copying a message to self");
        co_dt_pack(s->dt, s->count, s->buf, 0, own, s->bytes);
    }
    deliver_eager(r, s->comm->rank, s->tag, data, s->bytes, 0);
    free(own);
}

static void deliver_umsg(co_req *r, co_umsg *u) {
    switch (u->kind) {
    case CO_MSG_EAGER: deliver_eager(r, u->src, u->tag, u->data, u->bytes, 0); break;
    case CO_MSG_EAGER_SYNC: {
        uint64_t w[3] = {u->cookie, 0, 0};
        ctl_send(u->src_proc, CO_MSG_ACK, 0, w, NULL, 0);
        deliver_eager(r, u->src, u->tag, u->data, u->bytes, 0);
        break;
    }
    case CO_MSG_RTS:
        deliver_rts(r, u->src, u->tag, u->src_proc, u->cookie, u->addr, u->bytes, u->rdv_slot,
                    u->data ? (const co_dt_wire *)((char *)u->data + RTS_HDR) : NULL);
        break;
    case 0: /* synchronous send to ourselves: copy typed to typed, then release the sender */
        deliver_local(r, u->local_req);
        co_req_complete(u->local_req);
        break;
    }
}

static void on_cell(int src_proc, const co_cell *c, const void *payload) {
    switch (c->kind) {
    case CO_MSG_EAGER:
    case CO_MSG_EAGER_SYNC:
    case CO_MSG_RTS: {
        co_req *r = posted_take(c->ctx, c->src, c->tag);
        if (r) {
            if (c->kind == CO_MSG_RTS) {
                deliver_rts(r, c->src, c->tag, src_proc, c->u.w[1], c->u.w[2], c->u.w[3],
                            rts_slot(c, payload), rts_layout(c, payload));
            } else {
                if (c->kind == CO_MSG_EAGER_SYNC) {
                    uint64_t w[3] = {c->u.w[1], 0, 0};
                    ctl_send(src_proc, CO_MSG_ACK, 0, w, NULL, 0);
                }
                deliver_eager(r, c->src, c->tag, payload, c->len, 1);
            }
            return;
        }
        co_umsg *u = umsg_new();
        u->ctx = c->ctx;
        u->src = c->src;
        u->tag = c->tag;
        u->src_proc = src_proc;
        u->kind = c->kind;
        u->cookie = c->u.w[1];
        u->bytes = c->kind == CO_MSG_RTS ? c->u.w[3] : c->len;
        if (c->kind == CO_MSG_RTS) {
            u->addr = c->u.w[2];
            u->rdv_slot = rts_slot(c, payload);
        }
        if (c->len) { /* eager payload, or the slot and layout of an RTS */
            u->data = c->len <= sizeof(u->small) ? u->small : malloc(c->len);
            if (!u->data) co_fatal("out of memory buffering an unexpected message");
            co_shm_copy_out(u->data, payload, c->len);
        }
        unexp_append(u);
        return;
    }
    case CO_MSG_ACK: {
        co_req *s = co_req_get((int)(uint32_t)c->u.w[1]);
        if (s) co_req_complete(s);
        return;
    }
    case CO_MSG_CTS: {
        co_req *s = co_req_get((int)(uint32_t)c->u.w[1]);
        if (!s) return;
        if (s->rdv) rdv_send_release(s); /* the receiver gave up on the shared copy */
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
            P->ctrl[c->tag](src_proc, w, payload, c->len);
        }
        return;
    default: co_fatal("corrupt message kind %u from rank %d", c->kind, co_world_of(src_proc));
    }
}

/* ---- Sending ----------------------------------------------------------------------------------
 */

static void pend_push(co_req *r) {
    int d = r->peer_proc;
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
    int dst = r->peer_proc;
    void *payload;
    if (bytes <= P->eager_limit && r->mode != CO_MODE_RNDV) {
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
    int slot = -1;
    if (s->cma_ok) {
        if (!P->nrdv_free) return -1; /* all slots busy: wait like for a full queue */
        slot = P->rdv_free[P->nrdv_free - 1];
    }
    /* Non-contiguous data is not staged: the RTS carries its layout, after the slot number
     * (see rts_slot), and the receiver copies in place or asks for a stream of fragments
     * packed straight into the queue. */
    int described = !r->tmp && !r->dt->contig;
    size_t plen = described ? RTS_HDR + co_dt_wire_write(r->dt, r->count, r->buf, NULL) : 0;
    co_cell *c = co_shm_claim(s, dst, plen, 0, &payload);
    if (!c) return -1;
    if (described) {
        uint64_t sl = (uint64_t)(slot + 1);
        memcpy(payload, &sl, sizeof(sl));
        co_dt_wire_write(r->dt, r->count, r->buf, (co_dt_wire *)((char *)payload + RTS_HDR));
    }
    if (slot >= 0) {
        P->nrdv_free--;
        co_rdv *d = co_seg_rdv_slot(co_st.seg, co_st.proc, (unsigned)slot);
        atomic_store_explicit(&d->next, 0, memory_order_relaxed);
        atomic_store_explicit(&d->done, 0, memory_order_relaxed);
        atomic_store_explicit(&d->raddr, 0, memory_order_relaxed);
        d->pull = r->mode == CO_MODE_PULL;
        atomic_store_explicit(&d->state, RDV_POSTED, memory_order_relaxed);
        r->rdv = d;
        r->rdv_slot = slot;
        r->next = P->rdv_sends;
        P->rdv_sends = r;
        P->nrdv++;
    }
    c->ctx = r->ctx;
    c->src = r->comm->rank;
    c->tag = r->tag;
    c->len = (uint32_t)plen;
    c->kind = CO_MSG_RTS;
    if (!plen) c->u.w[0] = (uint64_t)(slot + 1); /* without payload w[0] is ours */
    c->u.w[1] = (uint64_t)(uint32_t)r->handle;
    c->u.w[2] = (uint64_t)(uintptr_t)(r->tmp ? r->tmp : (char *)r->buf + r->dt->true_lb);
    c->u.w[3] = bytes;
    co_shm_publish(s, dst, c);
    return 0;
}

/* A send to ourselves never touches a queue. When the receive is already posted, the data go
 * straight from the send buffer to the receive buffer (one copy; a halo exchange in a
 * dimension of one rank posts its receives first). Otherwise standard mode copies (so that
 * Send-then-Recv on one rank works); synchronous mode waits for the matching receive. */
static void send_local(co_req *r) {
    int src = r->comm->rank;
    co_req *rr = posted_take(r->ctx, src, r->tag);
    if (rr && r->mode != CO_MODE_SYNC) {
        deliver_local(rr, r);
        co_req_complete(r);
        return;
    }
    co_umsg *u = umsg_new();
    u->ctx = r->ctx;
    u->src = src;
    u->tag = r->tag;
    u->src_proc = co_st.proc;
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
    if (rr) {
        deliver_umsg(rr, u);
        umsg_free(u);
    } else {
        unexp_append(u);
    }
    if (r->mode != CO_MODE_SYNC) co_req_complete(r);
}

int co_send_start(co_req *r) {
    co_poll_active();
    r->complete = 0;
    r->active = 1;
    r->rdv_whole = 0;
    r->status = (co_status){0};
    if (r->peer == MPI_PROC_NULL) {
        r->status.source = MPI_PROC_NULL;
        r->status.tag = MPI_ANY_TAG;
        co_req_complete(r);
        return MPI_SUCCESS;
    }
    r->peer_proc = co_proc_of(r->comm->peers[r->peer]);
    r->bytes = r->count * r->dt->size;
    if (r->mode == CO_MODE_BUFFERED && r->bytes && !r->tmp) {
        /* buffered: the user may reuse the buffer at once, so send from a copy */
        r->tmp = malloc(r->bytes);
        if (!r->tmp) return MPI_ERR_NO_MEM;
        co_dt_pack(r->dt, r->count, r->buf, 0, r->tmp, r->bytes);
    }
    if (r->peer_proc == co_st.proc) {
        send_local(r);
        return MPI_SUCCESS;
    }
    co_emu_send(r->peer_proc, r->bytes);
    if (P->pend_head[r->peer_proc] || send_try(r)) pend_push(r);
    return MPI_SUCCESS;
}

int co_send_eager_fast(const void *buf, size_t bytes, co_comm *comm, uint64_t ctx, int dest,
                       int tag) {
    int dw = co_proc_of(comm->peers[dest]);
    if (dw == co_st.proc) { /* to oneself: straight into a posted receive, at any size */
        co_req *rr = posted_take(ctx, comm->rank, tag);
        if (!rr) return 0;
        co_poll_active();
        deliver_eager(rr, comm->rank, tag, buf, bytes, 0);
        return 1;
    }
    /* (under link emulation every send takes the general path, which pays the link) */
    if (bytes > P->eager_limit || P->pend_head[dw] || co_st.emu) return 0;
    void *payload;
    co_cell *c = co_shm_claim(&P->shm, dw, bytes, 1, &payload);
    if (!c) return 0;
    c->ctx = ctx;
    c->src = comm->rank;
    c->tag = tag;
    c->len = (uint32_t)bytes;
    c->kind = CO_MSG_EAGER;
    if (bytes) memcpy(payload, buf, bytes); /* (an empty send may pass a NULL buffer) */
    co_shm_publish(&P->shm, dw, c);
    co_poll_active();
    return 1;
}

co_req *co_req_prepare(int kind, const void *buf, size_t count, co_dtype *dt, int peer, int tag,
                       co_comm *comm, uint64_t ctx) {
    co_req *r = co_req_new(kind);
    if (!r) return NULL;
    co_req_set_comm(r, comm);
    r->buf = (void *)buf;
    r->count = count;
    r->dt = dt;
    co_dt_retain(dt);
    r->peer = peer;
    r->tag = tag;
    r->ctx = ctx;
    return r;
}

int co_isend(const void *buf, size_t count, co_dtype *dt, int dest, int tag, co_comm *comm,
             uint64_t ctx, int mode, co_req **out) {
    *out = NULL;
    /* In a blocking collective, after a receive of the wrong size, what this rank passes on
     * may be wrong: it sends nothing, and the receiver reports MPI_ERR_COUNT in turn. */
    if (CO_UNLIKELY(co_st.coll_short > 0) && (ctx & 1) && tag < CO_COLL_TAG_NBC) count = 0;
    co_req *r = co_req_prepare(CO_REQ_SEND, buf, count, dt, dest, tag, comm, ctx);
    if (!r) return MPI_ERR_NO_MEM;
    r->mode = (uint8_t)mode;
    int rc = co_send_start(r);
    if (rc) {
        co_req_free(r); /* nothing was queued */
        r = NULL;
    }
    *out = r;
    return rc;
}

/* ---- Receiving: posting -----------------------------------------------------------------------
 */

/* r takes unexpected message u (already out of the queue). */
static void recv_take(co_req *r, co_umsg *u) {
    r->matched = 1;
    deliver_umsg(r, u);
    umsg_free(u);
}

/* The first unexpected message matching (src, tag) on ctx, after one progress pass if none
 * is there yet; *prev for unexp_unlink. */
static co_umsg *unexp_probe(uint64_t ctx, int src, int tag, co_umsg **prev) {
    co_umsg *u = unexp_find(ctx, src, tag, prev);
    if (u) return u;
    co_progress();
    return unexp_find(ctx, src, tag, prev);
}

int co_recv_start(co_req *r) {
    co_poll_active();
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
        recv_take(r, u);
        return MPI_SUCCESS;
    }
    posted_append(r);
    return MPI_SUCCESS;
}

int co_irecv(void *buf, size_t count, co_dtype *dt, int src, int tag, co_comm *comm, uint64_t ctx,
             co_req **out) {
    *out = NULL;
    co_req *r = co_req_prepare(CO_REQ_RECV, buf, count, dt, src, tag, comm, ctx);
    if (!r) return MPI_ERR_NO_MEM;
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
    co_umsg *prev;
    co_umsg *u = unexp_probe(ctx, src, tag, &prev);
    *flag = u != NULL;
    if (u) {
        *st = (co_status){.source = u->src, .tag = u->tag, .bytes = u->bytes};
        co_poll_active();
    }
    return MPI_SUCCESS;
}

int co_improbe(int src, int tag, co_comm *comm, uint64_t ctx, co_msg **out, co_status *st) {
    *out = NULL;
    co_umsg *prev;
    co_umsg *u = unexp_probe(ctx, src, tag, &prev);
    if (!u) return MPI_SUCCESS;
    co_msg *m = malloc(sizeof(*m));
    if (!m) return MPI_ERR_NO_MEM;
    m->handle = co_htab_insert(&co_st.msgs, m);
    if (!m->handle) {
        free(m);
        return MPI_ERR_NO_MEM;
    }
    unexp_unlink(u, prev);
    m->comm = comm;
    comm->refcount++; /* handed on to the receive (co_imrecv) */
    m->u = u;
    *st = (co_status){.source = u->src, .tag = u->tag, .bytes = u->bytes};
    *out = m;
    co_poll_active();
    return MPI_SUCCESS;
}

int co_imrecv(void *buf, size_t count, co_dtype *dt, co_msg *m, co_req **out) {
    co_umsg *u = m->u;
    co_req *r = co_req_prepare(CO_REQ_RECV, buf, count, dt, u->src, u->tag, m->comm, u->ctx);
    if (!r) return MPI_ERR_NO_MEM;
    m->comm->refcount--; /* the request holds it now */
    r->active = 1;
    *out = r;
    co_htab_remove(&co_st.msgs, m->handle);
    free(m);
    recv_take(r, u);
    return MPI_SUCCESS;
}

/* A posted receive taken off the queue, complete and marked cancelled. */
static void cancel_posted(co_req *r) {
    posted_unlink(r);
    r->status.cancelled = 1;
    r->status.source = MPI_ANY_SOURCE;
    r->status.tag = MPI_ANY_TAG;
    co_req_complete(r);
}

int co_req_cancel(co_req *r) {
    if (r->complete) return MPI_SUCCESS;
    if (r->kind == CO_REQ_RECV || r->kind == CO_REQ_PRECV) {
        if (r->matched) return MPI_SUCCESS;
        for (co_req *q = P->posted_head; q; q = q->next)
            if (q == r) {
                cancel_posted(r);
                break;
            }
    }
    /* Sends are not cancelled: once queued they may already be matched remotely. */
    return MPI_SUCCESS;
}

void co_recv_withdraw(co_req *r) {
    co_req_cancel(r);
    co_progress_wait(r);
    co_req_free(r);
}

void co_p2p_purge(uint64_t ctx) {
    co_umsg **pp = &P->unexp_head, *last = NULL;
    while (*pp) {
        co_umsg *u = *pp;
        if ((u->ctx | 1) == (ctx | 1)) {
            *pp = u->next;
            umsg_free(u);
        } else {
            last = u;
            pp = &u->next;
        }
    }
    P->unexp_tail = last;
}

void co_p2p_abandon(uint64_t ctx, int below_tag) {
    co_req *r = P->posted_head;
    while (r) {
        co_req *next = r->next;
        if (r->ctx == ctx && r->tag < below_tag) { /* in the queue, so not matched yet */
            cancel_posted(r);
            co_req_free(r);
        }
        r = next;
    }
    /* The call's other requests: nothing will wait for them any more, and each holds its
     * communicator, which would then never be destroyed (nor its shared-memory segment
     * given back). Those done go now, those still moving data once they are done. */
    co_htab *t = &co_st.reqs;
    for (uint32_t i = 1; i < t->next; i++) {
        co_req *q = co_htab_at(t, i);
        if (!q || q->ctx != ctx || q->tag >= below_tag || q->shared || q->persistent ||
            q->user_freed)
            continue;
        if (q->complete)
            co_req_free(q);
        else
            q->user_freed = 1;
    }
}

/* ---- Receives that nothing can match ---------------------------------------------------- */

/* Whether every rank of c that could still send to this rank from `src` (a rank, or
 * MPI_ANY_SOURCE) has called MPI_Finalize. */
static int no_sender_left(const co_comm *c, int src) {
    if (src != MPI_ANY_SOURCE) return co_seg_finalizing(co_st.seg, co_proc_of(c->peers[src]));
    int others = 0;
    for (int i = 0; i < c->npeers; i++) {
        if (c->peers[i] == co_st.world_rank) continue; /* we wait here, so we send nothing */
        if (!co_seg_finalizing(co_st.seg, co_proc_of(c->peers[i]))) return 0;
        others++;
    }
    return others > 0;
}

/* Takes in what peers left in the queues; 0 if there is still more (ask again later). */
static int drained(void) {
    for (int i = 0; i < 1024; i++)
        if (!co_progress()) return 1;
    return 0;
}

int co_p2p_senders_gone(const co_comm *c, int src) {
    return src != MPI_PROC_NULL && no_sender_left(c, src) && drained();
}

static int streaming(const co_req *r) {
    for (const co_req *s = P->streaming; s; s = s->next)
        if (s == r) return 1;
    return 0;
}

/* A send that waits for its receiver to match it (a large message, or a synchronous one) when
 * that receiver has called MPI_Finalize: it never will. A send still waiting for queue room
 * is not one (a finalizing rank keeps reading its queues), nor one whose data is moving. */
static int send_unreceivable(const co_req *r) {
    return co_req_is_send(r) && !r->pending && r->peer_proc != co_st.proc &&
           co_seg_finalizing(co_st.seg, r->peer_proc) && drained() && !r->complete &&
           !streaming(r) &&
           (!r->rdv || /* a receiver that matched it (a rank finalizing with a receive still
                          open, which MPI forbids) has moved its slot on */
            atomic_load_explicit(&((co_rdv *)r->rdv)->state, memory_order_acquire) == RDV_POSTED);
}

void co_p2p_peer_tag(char *out, size_t len, int peer, int tag) {
    char t[24];
    if (tag == MPI_ANY_TAG)
        snprintf(t, sizeof(t), "any tag");
    else
        snprintf(t, sizeof(t), "tag %d", tag);
    if (peer == MPI_ANY_SOURCE)
        snprintf(out, len, "any source (%s)", t);
    else
        snprintf(out, len, "rank %d (%s)", peer, t);
}

/* Ends wait r with MPI_ERR_OTHER (status.deadlock says why: a deadlock, or a peer that has
 * called MPI_Finalize). */
static void fail_wait(co_req *r, int deadlock) {
    r->status.source = r->peer;
    r->status.tag = r->tag;
    r->status.error = MPI_ERR_OTHER;
    r->status.deadlock = deadlock;
    co_req_complete(r);
}

/* The job has deadlocked (co_deadlock_due) and r is what this rank waits for. A receive that
 * no message has matched fails; a send ends the job, since its receiver might still match it
 * later and it cannot be taken back. A request whose data is moving is not part of a
 * deadlock: the wait's next check ends the job instead. */
static void deadlock_fail(co_req *r, int recv) {
    if (recv ? r->matched : streaming(r)) return;
    char who[64];
    co_p2p_peer_tag(who, sizeof(who), r->peer, r->tag);
    if (recv) {
        co_deadlock_claim("receive from %s on %s", who, co_comm_label(r->comm));
        posted_unlink(r);
        fail_wait(r, 1);
        return;
    }
    co_deadlock_claim("send to %s on %s, %s", who, co_comm_label(r->comm),
                      r->pending ? "which waits for room in that rank's queue"
                                 : "which no receive there has matched");
    co_deadlock_end();
}

void co_p2p_wait_check(co_req *r) {
    if (r->kind == CO_REQ_COLL) { /* a schedule's: its transfers say */
        if (!r->complete && co_st.sched_wait_check) co_st.sched_wait_check(r);
        return;
    }
    /* user traffic only: collective traffic has its own check (src/coll), and MPI_Finalize's
     * barrier still talks on MPI_COMM_WORLD's collective context */
    if (r->complete || !r->active || !r->comm || r->ctx != r->comm->ctx) return;
    int recv = r->kind == CO_REQ_RECV || r->kind == CO_REQ_PRECV;
    if (recv ? r->matched || !co_p2p_senders_gone(r->comm, r->peer) : !send_unreceivable(r)) {
        if (CO_UNLIKELY(co_deadlock_due())) deadlock_fail(r, recv);
        return;
    }
    if (recv) {
        if (r->complete || r->matched) return; /* what was taken in matched it */
        posted_unlink(r);
    } else if (r->rdv) { /* its slot is not handed out again: the RTS naming it is still queued */
        list_remove(&P->rdv_sends, r);
        P->nrdv--;
        r->rdv = NULL;
        r->rdv_slot = -1;
    }
    fail_wait(r, 0);
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
            co_cell *c = co_shm_claim(&P->shm, s->peer_proc, len, 0, &payload);
            if (!c) break;
            c->ctx = 0;
            c->src = co_st.proc;
            c->tag = 0;
            c->len = (uint32_t)len;
            c->kind = CO_MSG_FRAG;
            c->u.w[1] = s->remote_cookie;
            c->u.w[2] = s->done_bytes;
            if (packed) /* gather straight into the queue: no staging copy */
                co_dt_pack(s->dt, s->count, s->buf, s->done_bytes, payload, len);
            else
                memcpy(payload, src + s->done_bytes, len);
            co_shm_publish(&P->shm, s->peer_proc, c);
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
    if (P->nrdv) n += rdv_progress();
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
    if (rc) {
        co_recv_withdraw(r[1]);
        return rc;
    }
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

void co_p2p_flush(void) {
    co_backoff b = {0};
    while (P->npending) {
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}

/* ---- Set-up -----------------------------------------------------------------------------------
 */

int co_p2p_init(void) {
    P = calloc(1, sizeof(*P));
    if (!P) return MPI_ERR_NO_MEM;
    co_st.reqs.kind = COHORT_KIND_REQUEST;
    co_st.msgs.kind = COHORT_KIND_MESSAGE;
    co_htab_set(&co_st.msgs, 1, NULL); /* slot 1 is MPI_MESSAGE_NO_PROC, never an object */
    if (co_shm_init(&P->shm, co_st.seg, co_st.proc, co_st.cfg.cma, co_st.cfg.shm_populate))
        return MPI_ERR_NO_MEM;
    P->eager_limit = co_st.seg->hdr->eager_limit;
    /* Fragments of the pipelined copy: a quarter of the queue's payload space keeps several in
     * flight, so sender and receiver copy at the same time; at most 32 KiB (64 KiB fragments
     * measured 8% slower, docs/datatypes.md). */
    P->frag_size = CO_MAX(CO_MIN(co_st.seg->hdr->data_bytes / 4, 32768), 4096);
    if (P->frag_size > co_st.seg->hdr->data_bytes) P->frag_size = co_st.seg->hdr->data_bytes;
    P->pend_head = calloc((size_t)co_st.world_size, sizeof(co_req *));
    P->pend_tail = calloc((size_t)co_st.world_size, sizeof(co_req *));
    P->rdv_free = malloc(CO_RDV_SLOTS * sizeof(uint16_t));
    if (!P->pend_head || !P->pend_tail || !P->rdv_free) return MPI_ERR_NO_MEM;
    for (int i = 0; i < CO_RDV_SLOTS; i++) P->rdv_free[i] = (uint16_t)(CO_RDV_SLOTS - 1 - i);
    P->nrdv_free = CO_RDV_SLOTS;
    P->done_send = co_req_new(CO_REQ_SEND);
    if (!P->done_send) return MPI_ERR_NO_MEM;
    P->done_send->complete = 1;
    P->done_send->shared = 1;
    P->done_send->status.source = MPI_ANY_SOURCE;
    P->done_send->status.tag = MPI_ANY_TAG;
    return MPI_SUCCESS;
}

/* At MPI_Finalize: what is still queued for a rank that has finished MPI_Finalize (it reads no
 * more, and its queue may be full) is dropped; the requests stay, for co_p2p_fini to free. */
static int gone(int w) {
    return co_seg_state(co_st.seg, w) == CO_RANK_FINALIZED;
}
static void drop_for_gone(void) {
    co_pending_ctl **pc = &P->ctl_head, *last = NULL;
    while (*pc) {
        co_pending_ctl *c = *pc;
        if (gone(c->dst)) {
            *pc = c->next;
            free(c);
            P->npending--;
        } else {
            last = c;
            pc = &c->next;
        }
    }
    P->ctl_tail = last;
    for (int d = 0; d < co_st.world_size; d++) {
        if (!P->pend_head[d] || !gone(d)) continue;
        for (co_req *r = P->pend_head[d], *next; r; r = next) {
            next = r->next;
            r->pending = 0;
            r->next = NULL;
            P->npending--;
        }
        P->pend_head[d] = P->pend_tail[d] = NULL;
    }
    for (co_req **pp = &P->streaming; *pp;) {
        co_req *r = *pp;
        if (gone(r->peer_proc)) {
            *pp = r->next;
            r->next = NULL;
            P->npending--;
        } else {
            pp = &r->next;
        }
    }
}

void co_p2p_fini(void) {
    if (!P) return;
    co_backoff b = {0};
    while (P->npending) { /* peers may be waiting for these */
        drop_for_gone();
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
    while (P->unexp_head) {
        co_umsg *u = P->unexp_head;
        P->unexp_head = u->next;
        umsg_free(u);
    }
    for (uint32_t s = 2; s < co_st.msgs.next; s++) { /* probed, never received */
        co_msg *m = co_htab_at(&co_st.msgs, s);
        if (m) {
            umsg_free(m->u);
            free(m);
        }
    }
    co_htab_destroy(&co_st.msgs);
    while (P->free_umsgs) {
        co_umsg *u = P->free_umsgs;
        P->free_umsgs = u->next;
        free(u);
    }
    for (uint32_t s = 1; s < co_st.reqs.next; s++) {
        co_req *r = co_htab_at(&co_st.reqs, s);
        if (r) {
            if (r->on_free) r->on_free(r); /* (before the datatype and operator layers go) */
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
    free(P->rdv_free);
    co_shm_fini(&P->shm);
    free(P);
    P = NULL;
}
