/* The ID pool state machine (see idpool.h and docs/communicators.md).
 *
 * Every pool keeps the IDs it holds free, how many it has lent out (to child communicators
 * and to borrower pools), who borrowed, and the requests it could not serve yet. All its IDs
 * come from one upstream pool and go back only there, so a pool can always tell what is
 * outstanding and an orphan (whose communicator is gone) can stay until its loans are back.
 * Messages to a pool of this same process go through a local queue that is drained when the
 * outermost call into this module returns, so no handler ever re-enters a pool that is in the
 * middle of an update. */
#include "idpool.h"

#include "u64map.h"
#include "../core/cohort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GRANT_FAIL = 1, RETURN_RECLAIM_REPLY = 2 };

typedef struct msg_req {
    uint64_t to_serial, to_comm, from_serial, need, want;
} msg_req;

typedef struct msg_ids { /* GRANT and RETURN; co_idrange[nr] follow */
    uint64_t to_serial, from_serial;
    uint32_t flags, nr;
} msg_ids;

typedef struct msg_reclaim {
    uint64_t to_serial, from_serial;
} msg_reclaim;

typedef struct idreq {
    struct idreq *next;
    int rank;
    uint64_t serial, need, want;
} idreq;

#define LMSG_SMALL 64

typedef struct lmsg { /* a message to ourselves */
    struct lmsg *next;
    uint64_t w[3];
    size_t len;
    char *payload; /* small: points at inline */
    char inline_[LMSG_SMALL];
} lmsg;

struct co_idpool {
    co_idp *st;
    co_idpool *prev, *next; /* every live pool of this process */
    uint64_t serial;        /* 0 until first needed */
    uint64_t lease_id;      /* communicator whose lease this is (0: none) */
    int members_left;
    int up_rank; /* -1 at the root */
    uint64_t up_serial, up_comm;
    uint8_t open;       /* owner alive */
    uint8_t asked;      /* a REQ upstream is in flight */
    uint8_t local_fail; /* the local taker's demand failed */
    uint8_t is_root;
    uint8_t reclaiming;   /* root: a reclaim round is running */
    uint8_t placeholder;  /* lease announced by members before the master made it */
    int rc_owe;           /* reclaim replies owed upstream */
    int rc_expect;        /* reclaim replies still expected from borrowers */
    uint64_t rc_gathered; /* root: IDs the current reclaim round brought back */
    co_idset free;
    uint64_t lent;
    uint64_t local_need; /* IDs the local taker is waiting for */
    uint64_t q_need;
    idreq *q_head, *q_tail;
    co_u64map borrowers; /* rank << 40 | serial -> IDs lent to that pool */
};

struct co_idp {
    int rank;
    uint64_t batch;
    size_t maxr; /* ranges per message */
    co_idp_send_fn send;
    void *arg;
    uint64_t next_serial;
    co_u64map pools;  /* serial -> pool */
    co_u64map leases; /* communicator ID -> pool */
    co_idpool *root;
    co_idpool *all;
    co_idpool *spare; /* freed pool objects, reused (linked by next) */
    lmsg *spare_msgs; /* small local messages, reused */
    uint64_t npools;
    int depth;
    lmsg *lq_head, *lq_tail;
    uint64_t requests, reclaims;
    co_idrange *rbuf; /* maxr ranges of scratch */
};

static void pool_update(co_idpool *p);
static void dispatch(co_idp *st, int src, const uint64_t w[3], const void *pl, size_t len);

#define BORROWER_KEY(rank, serial) (((uint64_t)(rank) << 40) | (serial))

/* ---- Sending ----------------------------------------------------------------------------- */

static void idp_send_w(co_idp *st, int dst, const uint64_t w[3], const void *payload, size_t len) {
    if (dst != st->rank) {
        st->send(st->arg, dst, w, payload, len);
        return;
    }
    lmsg *m = st->spare_msgs;
    if (m)
        st->spare_msgs = m->next;
    else if (!(m = malloc(sizeof(*m))))
        co_fatal("out of memory queueing an ID pool message");
    m->next = NULL;
    memcpy(m->w, w, sizeof(m->w));
    m->len = len;
    m->payload = len <= LMSG_SMALL ? m->inline_ : malloc(len);
    if (!m->payload) co_fatal("out of memory queueing an ID pool message");
    if (len) memcpy(m->payload, payload, len);
    if (st->lq_tail)
        st->lq_tail->next = m;
    else
        st->lq_head = m;
    st->lq_tail = m;
}

static void idp_send(co_idp *st, int dst, unsigned op, const void *payload, size_t len) {
    uint64_t w[3] = {CO_IDP_W0(op, 0), 0, 0};
    idp_send_w(st, dst, w, payload, len);
}

static void enter(co_idp *st) {
    st->depth++;
}

static void leave(co_idp *st) {
    if (st->depth > 1) {
        st->depth--;
        return;
    }
    while (st->lq_head) {
        lmsg *m = st->lq_head;
        st->lq_head = m->next;
        if (!st->lq_head) st->lq_tail = NULL;
        dispatch(st, st->rank, m->w, m->payload, m->len);
        if (m->payload != m->inline_) free(m->payload);
        m->next = st->spare_msgs;
        st->spare_msgs = m;
    }
    st->depth--;
}

/* n IDs (or fewer if the pool holds fewer) as RETURN or GRANT messages of at most maxr
 * ranges each; `flags` travel on the last one. Returns the IDs sent. */
static uint64_t send_ids(co_idpool *p, int dst, unsigned op, uint64_t to_serial, uint64_t n,
                         uint32_t flags) {
    co_idp *st = p->st;
    uint64_t sent = 0;
    size_t bytes = sizeof(msg_ids) + st->maxr * sizeof(co_idrange);
    char *buf = malloc(bytes);
    if (!buf) co_fatal("out of memory sending IDs");
    for (;;) {
        uint64_t got = 0;
        size_t nr = co_idset_take_ranges(&p->free, n - sent, (co_idrange *)(buf + sizeof(msg_ids)),
                                         st->maxr, &got);
        sent += got;
        int last = sent == n || got == 0;
        msg_ids m = {to_serial, co_idpool_serial(p), last ? flags : 0, (uint32_t)nr};
        memcpy(buf, &m, sizeof(m));
        if (nr || (last && flags)) idp_send(st, dst, op, buf, sizeof(m) + nr * sizeof(co_idrange));
        if (last) break;
    }
    free(buf);
    return sent;
}

/* ---- Pool objects ------------------------------------------------------------------------ */

uint64_t co_idpool_serial(co_idpool *p) {
    if (!p->serial) {
        p->serial = ++p->st->next_serial;
        co_u64map_put(&p->st->pools, p->serial, (uint64_t)(uintptr_t)p);
    }
    return p->serial;
}

static co_idpool *pool_alloc(co_idp *st) {
    co_idpool *p = st->spare;
    if (p)
        st->spare = p->next;
    else if (!(p = malloc(sizeof(*p))))
        co_fatal("out of memory creating an ID pool");
    memset(p, 0, sizeof(*p));
    p->st = st;
    p->next = st->all;
    if (st->all) st->all->prev = p;
    st->all = p;
    st->npools++;
    return p;
}

static void pool_free(co_idpool *p) {
    co_idp *st = p->st;
    if (p->serial) co_u64map_del(&st->pools, p->serial);
    if (p->lease_id) co_u64map_del(&st->leases, p->lease_id);
    co_idset_clear(&p->free);
    co_u64map_clear(&p->borrowers);
    while (p->q_head) {
        idreq *q = p->q_head;
        p->q_head = q->next;
        free(q);
    }
    if (p->prev)
        p->prev->next = p->next;
    else
        st->all = p->next;
    if (p->next) p->next->prev = p->prev;
    st->npools--;
    p->next = st->spare;
    st->spare = p;
}

co_idpool *co_idpool_new(co_idp *st, int up_rank, uint64_t up_serial, uint64_t up_comm) {
    co_idpool *p = pool_alloc(st);
    p->open = 1;
    p->up_rank = up_rank;
    p->up_serial = up_serial;
    p->up_comm = up_comm;
    return p;
}

static co_idpool *pool_by_comm(co_idp *st, uint64_t id);

static co_idpool *placeholder_for(co_idp *st, uint64_t id) {
    co_idpool *p = pool_by_comm(st, id);
    if (p) return p;
    p = pool_alloc(st);
    p->placeholder = 1;
    p->lease_id = id;
    co_u64map_put(&st->leases, id, (uint64_t)(uintptr_t)p);
    return p;
}

co_idpool *co_idp_lease(co_idp *st, uint64_t id, int members, int up_rank, uint64_t up_serial) {
    enter(st);
    co_idpool *p = placeholder_for(st, id);
    p->placeholder = 0;
    p->open = 1;
    p->up_rank = up_rank;
    p->up_serial = up_serial;
    p->members_left += members; /* minus the early notices */
    pool_update(p);             /* requests that came early */
    leave(st);
    return p;
}

static co_idpool *pool_by_serial(co_idp *st, uint64_t serial) {
    uint64_t *v = serial ? co_u64map_get(&st->pools, serial) : NULL;
    return v ? (co_idpool *)(uintptr_t)*v : NULL;
}

static co_idpool *pool_by_comm(co_idp *st, uint64_t id) {
    uint64_t *v = co_u64map_get(&st->leases, id);
    return v ? (co_idpool *)(uintptr_t)*v : NULL;
}

/* ---- Serving, asking, reclaiming, giving back --------------------------------------------- */

static void grant_to(co_idpool *p, int rank, uint64_t serial, uint64_t n) {
    uint64_t sent = send_ids(p, rank, CO_IDP_OP_GRANT, serial, n, 0);
    p->lent += sent;
    uint64_t key = BORROWER_KEY(rank, serial);
    uint64_t *v = co_u64map_get(&p->borrowers, key);
    if (v)
        *v += sent;
    else
        co_u64map_put(&p->borrowers, key, sent);
}

/* Every waiting request fails: the root ran a reclaim round and still had too few IDs. */
static void fail_all(co_idpool *p) {
    while (p->q_head) {
        idreq *q = p->q_head;
        p->q_head = q->next;
        msg_ids m = {q->serial, co_idpool_serial(p), GRANT_FAIL, 0};
        idp_send(p->st, q->rank, CO_IDP_OP_GRANT, &m, sizeof(m));
        free(q);
    }
    p->q_tail = NULL;
    p->q_need = 0;
    if (p->local_need > p->free.count) p->local_fail = 1;
    p->local_need = 0;
}

/* Ask every borrower for its unused IDs; the answers come back as RETURNs flagged as reclaim
 * replies, each sent only once the borrower's own borrowers have answered. */
static int send_reclaims(co_idpool *p) {
    int n = 0;
    for (size_t i = 0; i < p->borrowers.cap; i++) {
        uint64_t k = p->borrowers.keys ? p->borrowers.keys[i] : 0;
        if (!k) continue;
        msg_reclaim m = {k & ((1ull << 40) - 1), co_idpool_serial(p)};
        idp_send(p->st, (int)(k >> 40), CO_IDP_OP_RECLAIM, &m, sizeof(m));
        n++;
    }
    p->rc_expect += n;
    return n;
}

static void pool_update(co_idpool *p) {
    co_idp *st = p->st;
    if (p->placeholder) return; /* no upstream known yet: wait for the master */
    /* Serve waiting requests in order, keeping back what the local taker waits for. */
    while (p->q_head) {
        idreq *q = p->q_head;
        uint64_t reserve = CO_MIN(p->local_need, p->free.count);
        uint64_t avail = p->free.count - reserve;
        if (avail == 0 || avail < q->need) break;
        /* Extra IDs (a batch for later) only when every request behind this one can still
         * have what it needs: under pressure nobody hoards. */
        uint64_t others = p->q_need - q->need, give = q->need;
        if (avail > q->need + others) give = CO_MIN(q->want, avail - others);
        grant_to(p, q->rank, q->serial, give);
        p->q_head = q->next;
        if (!p->q_head) p->q_tail = NULL;
        p->q_need -= q->need;
        free(q);
    }
    uint64_t demand = p->local_need + p->q_need;
    if (p->is_root) {
        /* A round that brought IDs back but not enough (others were served meanwhile, IDs
         * were moving) is followed by another; only a round that finds nothing fails. */
        if (p->reclaiming && p->rc_expect == 0) {
            p->reclaiming = 0;
            if (demand > p->free.count && !p->rc_gathered) fail_all(p);
        }
        if (demand > p->free.count && !p->reclaiming && (p->q_head || p->local_need)) {
            st->reclaims++;
            p->reclaiming = 1;
            p->rc_gathered = 0;
            if (send_reclaims(p) == 0) {
                p->reclaiming = 0;
                fail_all(p);
            }
        }
    } else if (demand > p->free.count && !p->asked) {
        uint64_t need = demand - p->free.count;
        uint64_t want = p->open ? need + st->batch : need; /* an orphan only relays */
        msg_req m = {p->up_serial, p->up_comm, co_idpool_serial(p), need, want};
        idp_send(st, p->up_rank, CO_IDP_OP_REQ, &m, sizeof(m));
        p->asked = 1;
        st->requests++;
    }
    demand = p->local_need + p->q_need;
    uint64_t keep = CO_MIN(demand, p->free.count);
    if (p->rc_owe && p->rc_expect == 0) {
        send_ids(p, p->up_rank, CO_IDP_OP_RETURN, p->up_serial, p->free.count - keep,
                 RETURN_RECLAIM_REPLY);
        for (; p->rc_owe > 1; p->rc_owe--) {
            msg_ids m = {p->up_serial, co_idpool_serial(p), RETURN_RECLAIM_REPLY, 0};
            idp_send(st, p->up_rank, CO_IDP_OP_RETURN, &m, sizeof(m));
        }
        p->rc_owe = 0;
    }
    /* Surplus goes home: everything from a pool whose owner is gone, and from a live one
     * what exceeds a few batches (so that pools do not hoard what others may need). */
    if (!p->is_root && p->up_serial) {
        if (!p->open && p->free.count > keep)
            send_ids(p, p->up_rank, CO_IDP_OP_RETURN, p->up_serial, p->free.count - keep, 0);
        else if (p->open && p->free.count > keep + 4 * st->batch)
            send_ids(p, p->up_rank, CO_IDP_OP_RETURN, p->up_serial,
                     p->free.count - keep - 2 * st->batch, 0);
    }
    if (!p->open && !p->is_root && !p->lease_id && p->lent == 0 && p->free.count == 0 &&
        !p->q_head && !p->asked && !p->rc_owe && p->rc_expect == 0 && !p->local_need &&
        !p->local_fail)
        pool_free(p);
}

/* ---- Local operations -------------------------------------------------------------------- */

static int take_common(co_idpool *p, uint64_t n, uint64_t *ids, uint64_t *base) {
    co_idp *st = p->st;
    int rc;
    enter(st);
    if (p->free.count >= n) {
        if (base) {
            *base = co_idset_take_run(&p->free, n);
            rc = *base ? CO_IDP_OK : CO_IDP_NORUN;
        } else {
            for (uint64_t i = 0; i < n; i++) ids[i] = co_idset_take1(&p->free);
            rc = CO_IDP_OK;
        }
        if (rc == CO_IDP_OK) p->lent += n;
        p->local_need = 0;
        p->local_fail = 0;
    } else if (p->local_fail) {
        p->local_fail = 0;
        p->local_need = 0;
        rc = CO_IDP_FAIL;
    } else {
        p->local_need = n;
        pool_update(p);
        rc = CO_IDP_WAIT;
    }
    leave(st);
    return rc;
}

int co_idpool_take(co_idpool *p, uint64_t n, uint64_t *ids) {
    return take_common(p, n, ids, NULL);
}

int co_idpool_take_run(co_idpool *p, uint64_t n, uint64_t *base) {
    return take_common(p, n, NULL, base);
}

void co_idpool_cancel(co_idpool *p) {
    p->local_need = 0; /* a request already on its way still brings IDs: they stay here */
    p->local_fail = 0;
}

void co_idpool_put(co_idpool *p, uint64_t id) {
    co_idpool_put_run(p, id, id + 1);
}

void co_idpool_put_run(co_idpool *p, uint64_t lo, uint64_t hi) {
    co_idp *st = p->st;
    enter(st);
    if (hi == lo + 1)
        co_idset_put(&p->free, lo);
    else
        co_idset_put_range(&p->free, lo, hi);
    p->lent -= hi - lo;
    pool_update(p);
    leave(st);
}

static void lease_release(co_idpool *p) {
    if (--p->members_left > 0 || p->placeholder) return;
    co_idp *st = p->st;
    uint64_t id = p->lease_id;
    co_u64map_del(&st->leases, id);
    p->lease_id = 0;
    p->local_need = 0; /* a reservation that was never completed */
    p->local_fail = 0;
    /* The communicator's own ID goes home (a loan to a communicator, not to a pool), in the
     * message's words: no payload to fetch. */
    uint64_t w[3] = {CO_IDP_W0(CO_IDP_OP_RETURN1, id), p->up_serial, 0};
    idp_send_w(st, p->up_rank, w, NULL, 0);
    p->open = 0;
    pool_update(p);
}

void co_idpool_release(co_idpool *p) {
    co_idp *st = p->st;
    enter(st);
    lease_release(p);
    leave(st);
}

void co_idpool_close(co_idpool *p) {
    co_idp *st = p->st;
    enter(st);
    p->open = 0;
    p->local_need = 0;
    p->local_fail = 0;
    pool_update(p);
    leave(st);
}

/* ---- Incoming messages -------------------------------------------------------------------- */

static void on_req(co_idp *st, int src, const msg_req *m) {
    /* By communicator: a member may ask before the master has made the lease. */
    co_idpool *p =
        m->to_serial ? pool_by_serial(st, m->to_serial) : placeholder_for(st, m->to_comm);
    if (!p) { /* cannot happen while the protocol holds; answer rather than leave it hanging */
        co_log(CO_LOG_WARN, "ID request from rank %d for an unknown pool (serial %llu, comm %llu)",
               src, (unsigned long long)m->to_serial, (unsigned long long)m->to_comm);
        msg_ids g = {m->from_serial, 0, GRANT_FAIL, 0};
        idp_send(st, src, CO_IDP_OP_GRANT, &g, sizeof(g));
        return;
    }
    idreq *q = malloc(sizeof(*q));
    if (!q) co_fatal("out of memory queueing an ID request");
    *q = (idreq){NULL, src, m->from_serial, m->need ? m->need : 1, m->want};
    if (q->want < q->need) q->want = q->need;
    if (p->q_tail)
        p->q_tail->next = q;
    else
        p->q_head = q;
    p->q_tail = q;
    p->q_need += q->need;
    pool_update(p);
}

static void put_ranges(co_idpool *p, const co_idrange *r, uint32_t nr, uint64_t *n) {
    *n = 0;
    for (uint32_t i = 0; i < nr; i++) {
        if (r[i].hi == r[i].lo + 1)
            co_idset_put(&p->free, r[i].lo);
        else
            co_idset_put_range(&p->free, r[i].lo, r[i].hi);
        *n += r[i].hi - r[i].lo;
    }
}

static void on_grant(co_idp *st, int src, const msg_ids *m, const co_idrange *r) {
    co_idpool *p = pool_by_serial(st, m->to_serial);
    if (!p) { /* the requester is gone: send the IDs straight back */
        if (m->nr) {
            size_t len = sizeof(*m) + m->nr * sizeof(*r);
            char *buf = malloc(len);
            if (!buf) co_fatal("out of memory returning IDs");
            msg_ids b = {m->from_serial, m->to_serial, 0, m->nr};
            memcpy(buf, &b, sizeof(b));
            memcpy(buf + sizeof(b), r, m->nr * sizeof(*r));
            idp_send(st, src, CO_IDP_OP_RETURN, buf, len);
            free(buf);
        }
        return;
    }
    p->asked = 0;
    if (!p->up_serial && m->from_serial) p->up_serial = m->from_serial;
    if (m->flags & GRANT_FAIL) {
        fail_all(p);
    } else {
        uint64_t n;
        put_ranges(p, r, m->nr, &n);
    }
    pool_update(p);
}

static void on_return(co_idp *st, int src, const msg_ids *m, const co_idrange *r) {
    co_idpool *p = pool_by_serial(st, m->to_serial);
    if (!p) {
        if (m->nr)
            co_log(CO_LOG_WARN, "communicator IDs returned by rank %d to an unknown pool %llu", src,
                   (unsigned long long)m->to_serial);
        return;
    }
    uint64_t n;
    put_ranges(p, r, m->nr, &n);
    p->lent -= n;
    if (m->from_serial) {
        uint64_t key = BORROWER_KEY(src, m->from_serial);
        uint64_t *v = co_u64map_get(&p->borrowers, key);
        if (v && *v > n)
            *v -= n;
        else if (v)
            co_u64map_del(&p->borrowers, key);
    }
    if ((m->flags & RETURN_RECLAIM_REPLY) && p->rc_expect) p->rc_expect--;
    if (p->reclaiming) p->rc_gathered += n;
    pool_update(p);
}

static void on_reclaim(co_idp *st, int src, const msg_reclaim *m) {
    co_idpool *p = pool_by_serial(st, m->to_serial);
    if (!p) {
        msg_ids g = {m->from_serial, m->to_serial, RETURN_RECLAIM_REPLY, 0};
        idp_send(st, src, CO_IDP_OP_RETURN, &g, sizeof(g));
        return;
    }
    p->rc_owe++;
    send_reclaims(p);
    pool_update(p);
}

static void dispatch(co_idp *st, int src, const uint64_t w[3], const void *pl, size_t len) {
    switch (CO_IDP_OP(w[0])) {
    case CO_IDP_OP_NOTICE:
        /* The master may not have made the lease yet: a placeholder counts the notice. */
        lease_release(placeholder_for(st, CO_IDP_ARG(w[0])));
        break;
    case CO_IDP_OP_REQ:
        if (len >= sizeof(msg_req)) on_req(st, src, pl);
        break;
    case CO_IDP_OP_RETURN1: {
        msg_ids m = {w[1], 0, 0, 1};
        co_idrange r = {CO_IDP_ARG(w[0]), CO_IDP_ARG(w[0]) + 1};
        on_return(st, src, &m, &r);
        break;
    }
    case CO_IDP_OP_GRANT:
    case CO_IDP_OP_RETURN: {
        if (len < sizeof(msg_ids)) break;
        msg_ids m;
        memcpy(&m, pl, sizeof(m));
        if (len < sizeof(m) + m.nr * sizeof(co_idrange)) break;
        co_idrange *r = NULL;
        if (m.nr) {
            r = st->rbuf;
            if (m.nr > st->maxr) {
                r = malloc(m.nr * sizeof(*r));
                if (!r) co_fatal("out of memory receiving IDs");
            }
            memcpy(r, (const char *)pl + sizeof(m), m.nr * sizeof(*r));
        }
        if (CO_IDP_OP(w[0]) == CO_IDP_OP_GRANT)
            on_grant(st, src, &m, r);
        else
            on_return(st, src, &m, r);
        if (r && r != st->rbuf) free(r);
        break;
    }
    case CO_IDP_OP_RECLAIM:
        if (len >= sizeof(msg_reclaim)) {
            msg_reclaim m;
            memcpy(&m, pl, sizeof(m));
            on_reclaim(st, src, &m);
        }
        break;
    default: co_log(CO_LOG_WARN, "unknown ID pool message %u from rank %d", CO_IDP_OP(w[0]), src);
    }
}

void co_idp_on_msg(co_idp *st, int src, const uint64_t w[3], const void *payload, size_t len) {
    enter(st);
    dispatch(st, src, w, payload, len);
    leave(st);
}

/* ---- The process's state ------------------------------------------------------------------ */

co_idp *co_idp_create(int rank, uint64_t first, uint64_t count, uint64_t batch, size_t max_payload,
                      co_idp_send_fn send, void *arg, uint64_t root_comm) {
    co_idp *st = calloc(1, sizeof(*st));
    if (!st) return NULL;
    st->rank = rank;
    st->batch = batch ? batch : 1;
    st->maxr = (max_payload - sizeof(msg_ids)) / sizeof(co_idrange);
    if (st->maxr > 256) st->maxr = 256;
    if (st->maxr < 1) st->maxr = 1;
    st->rbuf = malloc(st->maxr * sizeof(co_idrange));
    st->send = send;
    st->arg = arg;
    if (!st->rbuf) {
        free(st);
        return NULL;
    }
    if (rank == 0) {
        co_idpool *p = co_idpool_new(st, -1, 0, 0);
        p->is_root = 1;
        co_idpool_serial(p); /* CO_IDP_ROOT_SERIAL: the first serial of rank 0 */
        if (count) co_idset_put_range(&p->free, first, first + count);
        p->lease_id = root_comm; /* never released */
        p->members_left = 1;
        co_u64map_put(&st->leases, root_comm, (uint64_t)(uintptr_t)p);
        st->root = p;
    }
    return st;
}

co_idpool *co_idp_root(co_idp *st) {
    return st->root;
}

void co_idp_destroy(co_idp *st) {
    if (!st) return;
    while (st->all) {
        co_idpool *p = st->all;
        p->lease_id = 0;
        pool_free(p);
    }
    while (st->spare) {
        co_idpool *p = st->spare;
        st->spare = p->next;
        free(p);
    }
    while (st->lq_head) {
        lmsg *m = st->lq_head;
        st->lq_head = m->next;
        if (m->payload != m->inline_) free(m->payload);
        free(m);
    }
    while (st->spare_msgs) {
        lmsg *m = st->spare_msgs;
        st->spare_msgs = m->next;
        free(m);
    }
    co_u64map_clear(&st->pools);
    co_u64map_clear(&st->leases);
    free(st->rbuf);
    free(st);
}

void co_idp_get_stats(co_idp *st, co_idp_stats *out) {
    memset(out, 0, sizeof(*out));
    out->pools = st->npools;
    out->leases = st->leases.n;
    for (co_idpool *p = st->all; p; p = p->next) {
        out->free_ids += p->free.count;
        out->lent_ids += p->lent;
    }
    if (st->root) out->root_free = st->root->free.count;
    out->requests = st->requests;
    out->reclaims = st->reclaims;
}

void co_idp_dump(co_idp *st, FILE *f) {
    for (co_idpool *p = st->all; p; p = p->next)
        fprintf(f,
                "rank %d pool %llu lease %llu members %d up %d/%llu/%llu open %d asked %d ph %d "
                "root %d free %llu lent %llu need %llu qneed %llu rc %d/%d\n",
                st->rank, (unsigned long long)p->serial, (unsigned long long)p->lease_id,
                p->members_left, p->up_rank, (unsigned long long)p->up_serial,
                (unsigned long long)p->up_comm, p->open, p->asked, p->placeholder, p->is_root,
                (unsigned long long)p->free.count, (unsigned long long)p->lent,
                (unsigned long long)p->local_need, (unsigned long long)p->q_need, p->rc_owe,
                p->rc_expect);
}

int co_idp_holds(co_idp *st, uint64_t id) {
    for (co_idpool *p = st->all; p; p = p->next)
        if (co_idset_contains(&p->free, id)) return 1;
    return 0;
}
