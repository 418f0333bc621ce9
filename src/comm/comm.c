/* Communicator objects and their link to the tree of ID pools: construction and destruction,
 * the two predefined communicators, the control-message handler of the layer, the ID stream
 * and the free protocol. MPI_COMM_WORLD has ID 1; each process's MPI_COMM_SELF gets 2 + its
 * world rank, so that no two communicators in the job share an ID even among the SELFs; the
 * root pool at world rank 0 owns every ID above those.
 *
 * The ID stream. A dup-like creation (one new communicator, same master) would need one
 * message from the master to every member. Instead the master reserves, with every such
 * creation, the ID of the next one, and sends both in one control message. Members use the
 * reservation they already hold and receive the master's message of this round only at the
 * next round (or when freeing the parent), by which time it has long arrived: no member ever
 * waits for the master on this path, except at a parent's first creation. */
#include "comm_int.h"

#include "u64map.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CM (co_st.cm)

typedef struct co_smsg {         /* a stream message waiting to be consumed */
    struct co_smsg *next, *tail; /* tail: valid in the first message of a queue */
    uint64_t cur, nxt;
} co_smsg;

co_comm *co_comm_get(MPI_Comm h) {
    return co_htab_get(&co_st.comms, h);
}
co_group *co_group_get(MPI_Group h) {
    return co_htab_get(&co_st.groups, h);
}

/* ---- Objects ------------------------------------------------------------------------------ */

co_comm *co_comm_create(co_group *local, co_group *remote, uint64_t id) {
    co_comm *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->refcount = 1;
    c->local = local;
    co_group_retain(local);
    c->rank = local->rank;
    c->size = local->size;
    if (remote) {
        c->is_inter = 1;
        c->remote = remote;
        co_group_retain(remote);
        c->peers = remote->world;
        c->npeers = remote->size;
    } else {
        c->peers = local->world;
        c->npeers = local->size;
    }
    c->id = id;
    c->ctx = id << 1;
    int master = remote ? CO_MIN(local->world[0], remote->world[0]) : local->world[0];
    c->master_proc = co_proc_of(master);
    c->all_next = co_st.all_comms;
    if (c->all_next) c->all_next->all_prev = c;
    co_st.all_comms = c;
    c->errh = co_st.errh_fatal;
    c->errh->refcount++;
    return c;
}

int co_comm_register(co_comm *c) {
    c->handle = co_htab_insert(&co_st.comms, c);
    return c->handle ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* purge: drop the messages still queued for c's contexts (not for a lane, whose contexts
 * are its communicator's) */
static void destroy(co_comm *c, int purge) {
    if (co_st.coll_comm_free) co_st.coll_comm_free(c); /* its collective segment */
    if (co_st.p2p && purge) co_p2p_purge(c->ctx);
    if (c->handle) co_htab_remove(&co_st.comms, c->handle);
    if (c->local_comm) co_comm_destroy(c->local_comm);
    co_topo_free(c->topo);
    co_group_release(c->local);
    co_group_release(c->remote);
    co_errh_release(c->errh);
    if (c->all_prev)
        c->all_prev->all_next = c->all_next;
    else
        co_st.all_comms = c->all_next;
    if (c->all_next) c->all_next->all_prev = c->all_prev;
    free(c);
}

void co_comm_destroy(co_comm *c) {
    destroy(c, 1);
}

co_comm *co_comm_lane(co_comm *c) {
    co_comm *l = co_comm_create(c->local, NULL, c->id);
    if (!l) return NULL;
    l->ctx = c->ctx;
    memcpy(l->name, c->name, sizeof(l->name));
    return l;
}

void co_comm_lane_free(co_comm *l) {
    destroy(l, 0);
}

void co_errh_release(co_errhandler *e) {
    if (!e || --e->refcount > 0 || e->builtin) return; /* the predefined ones stay */
    if (e->handle) co_htab_remove(&co_st.errhs, e->handle);
    free(e);
}

MPI_Errhandler co_errh_handle_out(co_errhandler *e) {
    if (!e->handle && !(e->handle = co_htab_insert(&co_st.errhs, e))) return MPI_ERRHANDLER_NULL;
    e->refcount++;
    e->user_refs++;
    return e->handle;
}

void co_errh_handle_free(co_errhandler *e) {
    if (!e->builtin && --e->user_refs == 0) {
        co_htab_remove(&co_st.errhs, e->handle);
        e->handle = 0;
    }
    co_errh_release(e);
}

static co_errhandler *builtin_errh(int slot) {
    co_errhandler *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->handle = COHORT_HANDLE(COHORT_KIND_ERRHANDLER, slot);
    e->refcount = 1;
    e->builtin = slot;
    co_htab_set(&co_st.errhs, (unsigned)slot, e);
    return e;
}

/* ---- Control messages ---------------------------------------------------------------------- */

static void idp_send(void *arg, int dst, const uint64_t w[3], const void *payload, size_t len) {
    (void)arg;
    if (co_ctrl_send(dst, CO_CTRL_IDPOOL, w, payload, len))
        co_fatal("ID pool message of %zu bytes to rank %d could not be sent", len, dst);
}

static co_smsg *smsg_new(void) {
    co_smsg *m = CM->spare_msgs;
    if (m)
        CM->spare_msgs = m->next;
    else if (!(m = malloc(sizeof(*m))))
        co_fatal("out of memory for a communicator stream message");
    m->next = m->tail = NULL;
    return m;
}

static void on_ctrl(int src_proc, const uint64_t w[3], const void *payload, size_t len) {
    if (CO_IDP_OP(w[0]) != CO_IDP_OP_STREAM) {
        co_idp_on_msg(CM->idp, src_proc, w, payload, len);
        return;
    }
    /* A stream message may come before this member has finished creating the communicator
     * it belongs to, so it is queued by ID, not attached to an object. */
    co_smsg *m = smsg_new();
    m->cur = w[1];
    m->nxt = w[2];
    uint64_t id = CO_IDP_ARG(w[0]);
    uint64_t *v = co_u64map_get(CM->inbox, id);
    if (!v) {
        m->tail = m;
        co_u64map_put(CM->inbox, id, (uint64_t)(uintptr_t)m);
        return;
    }
    co_smsg *head = (co_smsg *)(uintptr_t)*v;
    head->tail->next = m;
    head->tail = m;
}

/* The oldest stream message of communicator id, waiting for it if need be. */
static void stream_recv(uint64_t id, uint64_t *cur, uint64_t *nxt) {
    co_backoff b = {0};
    uint64_t *v;
    while (!(v = co_u64map_get(CM->inbox, id))) {
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
    co_smsg *m = (co_smsg *)(uintptr_t)*v;
    *cur = m->cur;
    *nxt = m->nxt;
    if (m->next) {
        m->next->tail = m->tail;
        *v = (uint64_t)(uintptr_t)m->next;
    } else {
        co_u64map_del(CM->inbox, id);
    }
    m->next = CM->spare_msgs;
    CM->spare_msgs = m;
}

/* ---- Pools ---------------------------------------------------------------------------------- */

co_idpool *co_comm_pool(co_comm *c) {
    if (c->pool) return c->pool;
    int master = c->master_proc;
    if (master == co_st.proc || c == co_st.world)
        c->pool = co_idpool_new(CM->idp, 0, CO_IDP_ROOT_SERIAL, 0); /* SELF; WORLD's delegates */
    else
        c->pool = co_idpool_new(CM->idp, master, 0, c->id);
    return c->pool;
}

static int take_wait(co_idpool *p, uint64_t n, uint64_t *ids, uint64_t *base) {
    co_backoff b = {0};
    for (;;) {
        int rc = base ? co_idpool_take_run(p, n, base) : co_idpool_take(p, n, ids);
        if (rc == CO_IDP_OK) return MPI_SUCCESS;
        if (rc == CO_IDP_NORUN) {
            *base = 0;
            return MPI_SUCCESS;
        }
        if (rc == CO_IDP_FAIL) return MPI_ERR_OTHER;
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}

int co_comm_take_ids(co_idpool *p, uint64_t n, uint64_t *ids) {
    return take_wait(p, n, ids, NULL);
}

int co_comm_take_run(co_idpool *p, uint64_t n, uint64_t *base) {
    return take_wait(p, n, NULL, base);
}

/* Control messages towards a member whose queue is full wait in p2p's list; a master that
 * creates communicators in a tight loop must not pile them up without bound, so it lets the
 * members drain their queues first. */
static void stream_flow_control(void) {
    co_backoff b = {0};
    while (co_st.p2p->ctl_head) {
        if (co_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}

int co_comm_stream_ready(const co_comm *c) {
    if (c->master_proc == co_st.proc) return 1;
    uint64_t *v = co_u64map_get(CM->inbox, c->id);
    const co_smsg *m = v ? (const co_smsg *)(uintptr_t)*v : NULL;
    if (c->stream_pending) /* that message first, then its reservation or the next one */
        return m && (m->nxt != 0 || m->next != NULL);
    return c->stream_next != 0 || m != NULL;
}

int co_comm_stream_id(co_comm *c, uint64_t *id, uint64_t *home_serial) {
    co_comm_idup_drain(c); /* rounds are taken in the order of the calls */
    return co_comm_stream_round(c, id, home_serial);
}

int co_comm_stream_round(co_comm *c, uint64_t *id, uint64_t *home_serial) {
    uint64_t cur, nxt;
    if (c->master_proc != co_st.proc) {
        if (c->stream_pending) { /* the previous round's message: our next reservation */
            stream_recv(c->id, &cur, &nxt);
            c->stream_next = nxt;
            c->stream_pending = 0;
        }
        if (c->stream_next) {
            *id = c->stream_next;
            c->stream_next = 0;
            c->stream_pending = 1;
        } else { /* no reservation: this round's message carries the ID */
            stream_recv(c->id, &cur, &nxt);
            *id = cur;
            c->stream_next = nxt;
        }
        *home_serial = 0;
        return *id ? MPI_SUCCESS : MPI_ERR_OTHER;
    }
    co_idpool *p = co_comm_pool(c);
    int rc = MPI_SUCCESS;
    if (c->stream_next) {
        *id = c->stream_next;
        cur = 0; /* every member holds the same reservation */
    } else {
        rc = co_comm_take_ids(p, 1, id);
        if (rc) *id = 0;
        cur = *id;
    }
    /* Reserve the next round's ID without waiting: if the pool must ask upstream, the
     * request is on its way and the next round waits for it only if it is still out. */
    nxt = 0;
    if (*id && co_idpool_take(p, 1, &nxt) != CO_IDP_OK) {
        nxt = 0;
        co_idpool_cancel(p);
    }
    int n = co_comm_members(c);
    if (n > 1) {
        uint64_t w[3] = {CO_IDP_W0(CO_IDP_OP_STREAM, c->id), cur, nxt};
        stream_flow_control();
        for (int i = 0; i < c->size; i++)
            if (co_proc_of(c->local->world[i]) != co_st.proc)
                co_ctrl_send(co_proc_of(c->local->world[i]), CO_CTRL_IDPOOL, w, NULL, 0);
        if (c->is_inter)
            for (int i = 0; i < c->remote->size; i++)
                co_ctrl_send(co_proc_of(c->remote->world[i]), CO_CTRL_IDPOOL, w, NULL, 0);
    }
    c->stream_next = nxt;
    *home_serial = co_idpool_serial(p);
    return rc;
}

/* ---- New communicators ------------------------------------------------------------------------
 */

/* An intercommunicator's local group as an intracommunicator of its own, on a hidden context:
 * the creation calls (and collectives) need to talk inside one group. It has no handle and no
 * ID of its own. */
static co_comm *local_view(co_comm *ic) {
    co_comm *l = co_comm_create(ic->local, NULL, ic->id);
    if (!l) return NULL;
    l->ctx = co_hidden_ctx(ic->id, CO_HIDDEN_LOCAL);
    return l;
}

/* The member's part of freeing: its stream, pools and the notice to the master. */
static void release_protocol(co_comm *c) {
    if (c->stream_pending) { /* the master's last stream message must not linger */
        uint64_t cur, nxt;
        stream_recv(c->id, &cur, &nxt);
        c->stream_pending = 0;
    }
    /* (an intercommunicator whose step inside a group broke: its messages may be in flight) */
    if (c->quarantined || (c->local_comm && c->local_comm->quarantined)) {
        /* no notice, no release: the ID stays taken */
        if (c->pool) co_idpool_close(c->pool);
        c->pool = NULL;
        return;
    }
    int master = c->master_proc;
    if (master == co_st.proc) {
        if (c->stream_next) co_idpool_put(c->pool, c->stream_next);
        c->stream_next = 0;
        co_idpool_release(c->pool); /* may complete the lease: c->pool is gone then */
        co_progress();              /* read members' notices as we go (see co_comm_new_child) */
    } else {
        if (c->pool) co_idpool_close(c->pool); /* a delegate pool */
        uint64_t w[3] = {CO_IDP_W0(CO_IDP_OP_NOTICE, c->id), 0, 0};
        co_ctrl_send(master, CO_CTRL_IDPOOL, w, NULL, 0);
        if (co_st.p2p->ctl_head) co_progress(); /* queues full: push what fits now */
    }
    c->pool = NULL;
}

static void sweep_zombies(void);

int co_comm_new_child(co_comm *parent, co_group *local, co_group *remote, uint64_t id,
                      int home_rank, uint64_t home_serial, int master, co_comm **out) {
    /* freed communicators whose last requests have gone since give their IDs back here too,
     * not only at the next MPI_Comm_free (a program may only create from now on) */
    if (CM->nzombies) sweep_zombies();
    co_comm *c = co_comm_create(local, remote, id);
    if (!c) co_fatal("out of memory creating a communicator");
    if (parent->errh != c->errh) {
        c->errh->refcount--;
        c->errh = parent->errh;
        c->errh->refcount++;
    }
    if (master >= 0) c->master_proc = master;
    if (remote && !(c->local_comm = local_view(c))) co_fatal("out of memory");
    if (c->master_proc == co_st.proc) {
        c->pool = co_idp_lease(CM->idp, id, co_comm_members(c), home_rank, home_serial);
        /* A master that creates in a loop may never have to wait (the ID stream), so it would
         * never read the free notices its members send: one pass per creation drains up to
         * 16 messages per member, more than the one notice each member sends per creation. */
        co_progress();
    }
    if (co_comm_register(c)) {
        release_protocol(c);
        co_comm_destroy(c);
        *out = NULL;
        return MPI_ERR_NO_MEM;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* Requests or probed messages still refer to c (pending operations complete normally after
 * MPI_Comm_free, and their completion reads the communicator): each holds a reference. */
static int comm_in_use(const co_comm *c) {
    return c->refcount > 1 || (c->local_comm && c->local_comm->refcount > 1);
}

/* Freed communicators whose requests have all gone are destroyed now. */
static void sweep_zombies(void) {
    for (int i = 0; i < CM->nzombies;) {
        if (comm_in_use(CM->zombies[i])) {
            i++;
            continue;
        }
        co_comm *z = CM->zombies[i]; /* out of the list first: releasing it may come back here */
        CM->zombies[i] = CM->zombies[--CM->nzombies];
        release_protocol(z);
        co_comm_destroy(z);
    }
}

int co_comm_free(co_comm *c, const char *fn) {
    co_comm_idup_drain(c); /* its stream messages are theirs */
    int rc = co_attr_delete_all(c, 0);
    if (rc) return co_error(c, fn, rc, "an attribute delete callback failed (error %d)", rc);
    if (CM->nzombies) sweep_zombies();
    if (!comm_in_use(c)) {
        release_protocol(c);
        co_comm_destroy(c);
        return MPI_SUCCESS;
    }
    /* The handle goes now; the object stays until its requests are freed, and so does its ID
     * (release_protocol runs in sweep_zombies): the requests still send and receive on its
     * contexts (a nonblocking collective posts new transfers until it ends), and a new
     * communicator given the same ID would meet their messages, or lose its own when the old
     * object's unreceived ones are purged. */
    co_htab_remove(&co_st.comms, c->handle);
    c->handle = 0;
    if (co_st.coll_comm_freed) co_st.coll_comm_freed(c); /* its collective segment */
    if (CM->nzombies == CM->capzombies) {
        int cap = CM->capzombies ? 2 * CM->capzombies : 16;
        co_comm **z = realloc(CM->zombies, (size_t)cap * sizeof(*z));
        if (!z) co_fatal("out of memory freeing a communicator");
        CM->zombies = z;
        CM->capzombies = cap;
    }
    CM->zombies[CM->nzombies++] = c;
    return MPI_SUCCESS;
}

/* ---- Set-up ------------------------------------------------------------------------------------
 */

int co_comm_init(void) {
    co_st.comms.kind = COHORT_KIND_COMM;
    co_st.groups.kind = COHORT_KIND_GROUP;
    co_st.errhs.kind = COHORT_KIND_ERRHANDLER;
    co_st.errh_fatal = builtin_errh(1);
    co_st.errh_return = builtin_errh(2);
    if (!co_st.errh_fatal || !co_st.errh_return) return MPI_ERR_NO_MEM;

    CM = calloc(1, sizeof(*CM));
    if (!CM || !(CM->inbox = calloc(1, sizeof(co_u64map)))) return MPI_ERR_NO_MEM;
    uint64_t first = 2 + (uint64_t)co_st.world_size;
    uint64_t space = CO_ID_LIMIT - first;
    if (co_st.cfg.id_space > 0 && (uint64_t)co_st.cfg.id_space < space)
        space = (uint64_t)co_st.cfg.id_space;
    size_t maxp = co_st.p2p->eager_limit < 4096 ? co_st.p2p->eager_limit : 4096;
    CM->idp = co_idp_create(co_st.proc, first, space,
                            co_st.cfg.id_batch > 0 ? (uint64_t)co_st.cfg.id_batch : 1, maxp,
                            idp_send, NULL, 1);
    if (!CM->idp) return MPI_ERR_NO_MEM;
    co_ctrl_register(CO_CTRL_IDPOOL, on_ctrl);

    co_group *empty = co_group_new(0);
    co_group *wg = co_group_new(co_st.world_size);
    co_group *sg = co_group_new(1);
    if (!empty || !wg || !sg) return MPI_ERR_NO_MEM;
    for (int i = 0; i < co_st.world_size; i++) wg->world[i] = i;
    sg->world[0] = co_st.world_rank;
    co_group_finish(wg);
    co_group_finish(sg);
    empty->handle = MPI_GROUP_EMPTY;
    co_htab_set(&co_st.groups, 1, empty);

    co_st.world = co_comm_create(wg, NULL, 1);
    co_st.self = co_comm_create(sg, NULL, 2 + (uint64_t)co_st.proc);
    co_group_release(wg);
    co_group_release(sg);
    if (!co_st.world || !co_st.self) return MPI_ERR_NO_MEM;
    co_st.world->handle = MPI_COMM_WORLD;
    co_st.self->handle = MPI_COMM_SELF;
    strcpy(co_st.world->name, "MPI_COMM_WORLD");
    strcpy(co_st.self->name, "MPI_COMM_SELF");
    co_htab_set(&co_st.comms, 1, co_st.world);
    co_htab_set(&co_st.comms, 2, co_st.self);
    co_st.world->pool = co_idp_root(CM->idp); /* NULL except at rank 0 */
    return MPI_SUCCESS;
}

/* MPI 3.1 section 8.7.1: MPI_Finalize first does the equivalent of freeing MPI_COMM_SELF,
 * so that its attributes' delete callbacks run, newest first, while MPI still works fully.
 * Libraries hook their clean-up there, and it may communicate. MPI_COMM_WORLD's attributes
 * follow, for the same reason, then SELF's again in case those callbacks set new ones.
 * Every callback runs even if one fails; the first error is returned. */
int co_comm_finalize_attrs(void) {
    int rc = MPI_SUCCESS, r;
    co_comm *order[] = {co_st.self, co_st.world, co_st.self};
    for (int i = 0; i < 3; i++)
        if (order[i] && (r = co_attr_delete_all(order[i], 1)) && !rc) rc = r;
    return rc;
}

void co_comm_fini(void) {
    /* freed communicators kept alive by requests never completed: before the groups and
     * error handlers they refer to */
    if (CM) {
        for (int i = 0; i < CM->nzombies; i++) co_comm_destroy(CM->zombies[i]);
        CM->nzombies = 0;
    }
    co_htab *t = &co_st.comms;
    for (uint32_t s = 1; s < t->next; s++) {
        co_comm *c = co_htab_at(t, s);
        if (c) {
            c->handle = 0;
            co_attr_delete_all(c, 1);
            co_comm_destroy(c);
        }
    }
    co_htab_destroy(t);
    t = &co_st.groups;
    for (uint32_t s = 1; s < t->next; s++) {
        co_group *g = co_htab_at(t, s);
        if (g) co_group_free(g);
    }
    co_htab_destroy(t);
    t = &co_st.errhs;
    for (uint32_t s = 1; s < t->next; s++) free(co_htab_at(t, s));
    co_htab_destroy(t);
    co_st.world = co_st.self = NULL;
    if (CM) {
        /* ID pool and stream messages that arrive from here on (notices members sent right
         * before their own MPI_Finalize, taken in while p2p sends its last queued messages)
         * would find no pools and no inbox: they are dropped */
        co_ctrl_register(CO_CTRL_IDPOOL, NULL);
        free(CM->zombies);
        co_idp_destroy(CM->idp);
        co_u64map *in = CM->inbox;
        for (size_t i = 0; in && i < in->cap; i++) {
            if (!in->keys[i]) continue;
            for (co_smsg *m = (co_smsg *)(uintptr_t)in->vals[i], *n; m; m = n) {
                n = m->next;
                free(m);
            }
        }
        if (in) co_u64map_clear(in);
        free(in);
        while (CM->spare_msgs) {
            co_smsg *m = CM->spare_msgs;
            CM->spare_msgs = m->next;
            free(m);
        }
        /* attributes of datatypes still alive at MPI_Finalize (the predefined ones, or ones the
         * program never freed): freed without their delete callbacks, which MPI_Finalize does
         * not run for datatypes */
        co_htab *dts = &co_st.dtypes;
        for (uint32_t s = 1; s < dts->next; s++) {
            co_dtype *dt = co_htab_at(dts, s);
            if (dt) co_attrs_drop(&dt->attrs);
        }
        co_attr_fini();
        free(CM);
        CM = NULL;
    }
}
