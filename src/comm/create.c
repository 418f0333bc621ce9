/* The creation collectives: Comm_dup, Comm_split, Comm_create, Comm_create_group, the first n
 * ranks (Cartesian topologies), Intercomm_create and Intercomm_merge. Each is built so that
 * the exchange is as small as the call allows:
 *   dup, first-n   one round of the ID stream, which members rarely wait for (comm.c);
 *   split, create  one allgather of (color, key), with the master's reserved run of IDs in
 *                  its own entry, so every member computes every new communicator's ID;
 *   create_group   the group's master takes an ID from its (delegate) pool, which asks the
 *                  parent's master's pool through control messages when empty, and
 *                  broadcasts it inside the group: the parent's master takes no part.
 * Arguments only one process can see to be wrong (a negative color, a group that is not a
 * subset) travel in the exchange, so every process returns the same error class instead of
 * leaving the others waiting. */
#include "comm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Small collectives over p2p ------------------------------------------------------------- */

/* Bruck's allgather: ceil(log2 n) rounds for any n. */
int co_comm_allgather(co_comm *c, const void *mine, void *all, size_t blk) {
    int n = c->size, r = c->rank;
    if (n == 1) {
        memcpy(all, mine, blk);
        return MPI_SUCCESS;
    }
    char small[2048];
    char *tmp = (size_t)n * blk <= sizeof(small) ? small : malloc((size_t)n * blk);
    if (!tmp) return MPI_ERR_NO_MEM;
    memcpy(tmp, mine, blk);
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int have = 1, rc = MPI_SUCCESS;
    for (int dist = 1; dist < n && !rc; dist <<= 1) {
        int cnt = CO_MIN(dist, n - dist);
        int to = (r - dist + n) % n, from = (r + dist) % n;
        rc = co_sendrecv(tmp, (size_t)cnt * blk, byte, to, CO_TAG_COMM, tmp + (size_t)have * blk,
                         (size_t)cnt * blk, byte, from, CO_TAG_COMM, c, co_coll_ctx(c), NULL);
        have += cnt;
    }
    for (int i = 0; i < n && !rc; i++)
        memcpy((char *)all + (size_t)((r + i) % n) * blk, tmp + (size_t)i * blk, blk);
    if (tmp != small) free(tmp);
    return rc;
}

int co_comm_bcast_list(co_comm *c, uint64_t ctx, int tag, const int *ranks, int n, int me,
                       void *buf, size_t len) {
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int mask = 1;
    while (mask < n) {
        if (me & mask) {
            int rc = co_recv(buf, len, byte, ranks[me - mask], tag, c, ctx, NULL);
            if (rc) return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (me + mask >= n) continue;
        int rc = co_send(buf, len, byte, ranks[me + mask], tag, c, ctx);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int co_comm_bcast(co_comm *c, int root, void *buf, size_t len) {
    int n = c->size;
    if (n == 1) return MPI_SUCCESS;
    int *ranks = malloc((size_t)n * sizeof(int));
    if (!ranks) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) ranks[i] = (root + i) % n;
    int rc = co_comm_bcast_list(c, co_coll_ctx(c), CO_TAG_COMM, ranks, n, (c->rank - root + n) % n,
                                buf, len);
    free(ranks);
    return rc;
}

/* ---- dup and the first n ranks -------------------------------------------------------------- */

int co_comm_first_n(co_comm *c, int n, const char *fn, co_comm **out) {
    uint64_t id, serial;
    *out = NULL;
    if (co_comm_stream_id(c, &id, &serial))
        return co_error(c, fn, MPI_ERR_OTHER, "no communicator ID left (all %s in use)",
                        "2^60 or COHORT_ID_SPACE");
    /* The ID came from c's master's pool, whose serial only the master knows. When a rank
     * swap has taken the master's rank out of the first n, the process that holds rank 0
     * becomes the new communicator's master and learns the serial from it. */
    int master = c->master_proc, mrank = -1;
    for (int q = 0; q < c->size && mrank < 0; q++)
        if (co_proc_of(c->local->world[q]) == master) mrank = q;
    if (mrank >= n) {
        int rc = co_comm_bcast(c, mrank, &serial, sizeof(serial));
        if (rc) co_fatal("communicator creation exchange failed (%s)", co_error_class_name(rc));
        master = -1;
    }
    if (c->rank >= n) return MPI_SUCCESS;
    co_group *g = c->local;
    if (n < c->size) {
        if (!(g = co_group_from_world(n, c->local->world)))
            co_fatal("out of memory creating a group");
    } else {
        co_group_retain(g);
    }
    int rc = co_comm_new_child(c, g, NULL, id, c->master_proc, serial, master, out);
    co_group_release(g);
    if (rc) return co_error(c, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}

int co_comm_dup(co_comm *c, const char *fn, co_comm **out) {
    int rc = co_comm_dup_bare(c, fn, out);
    if (rc) return rc;
    co_comm *n = *out;
    *out = NULL;
    if (c->topo && !(n->topo = co_topo_dup(c->topo))) co_fatal("out of memory");
    rc = co_attr_copy_all(c, n);
    if (rc) {
        co_comm_free(n, fn);
        return co_error(c, fn, rc, "an attribute copy callback failed (error %d)", rc);
    }
    *out = n;
    return MPI_SUCCESS;
}

int co_comm_dup_bare(co_comm *c, const char *fn, co_comm **out) {
    uint64_t id, serial;
    *out = NULL;
    if (co_comm_stream_id(c, &id, &serial))
        return co_error(c, fn, MPI_ERR_OTHER, "no communicator ID left (all %s in use)",
                        "2^60 or COHORT_ID_SPACE");
    co_comm *n;
    /* same group, same master (after a rank swap not always the holder of rank 0) */
    int rc =
        co_comm_new_child(c, c->local, c->remote, id, c->master_proc, serial, c->master_proc, &n);
    if (rc) return co_error(c, fn, rc, "out of communicator handles");
    *out = n;
    return MPI_SUCCESS;
}

/* ---- idup ------------------------------------------------------------------------------------
 * A member whose ID stream needs the master's message of this round (the parent's first
 * creation, or a member running ahead of its master) cannot make the communicator before that
 * message comes: the call is kept in a list, in the order of the calls, and the progress
 * engine completes it once the message is there. The attributes are copied at the call. */

typedef struct idup_call {
    struct idup_call *next;
    co_comm *parent;
    struct co_attr *attrs; /* copied at the call */
    co_errhandler *errh;   /* the parent's at the call (held), which the child inherits */
    MPI_Comm *out;
    co_req *req; /* NULL: the call failed at once; its round is taken and the child freed */
} idup_call;

#define IDUPS (co_st.cm->idups)

/* Takes c's round (c's stream must be ready) and makes the new communicator: for the
 * request r, which then completes; without one, only to free it again at once, as a failed
 * MPI_Comm_dup does (the round and the master's lease must count every member). */
static void idup_finish(co_comm *c, struct co_attr *attrs, co_errhandler *errh, MPI_Comm *out,
                        co_req *r) {
    uint64_t id, serial;
    co_comm *n = NULL;
    int rc = co_comm_stream_round(c, &id, &serial) ? MPI_ERR_OTHER : MPI_SUCCESS;
    if (!rc)
        rc = co_comm_new_child(c, c->local, c->remote, id, c->master_proc, serial, c->master_proc,
                               &n);
    if (!rc && c->topo && !(n->topo = co_topo_dup(c->topo))) co_fatal("out of memory");
    if (!rc && n->errh != errh) { /* the handler of the parent at the call */
        co_errhandler *was = n->errh;
        n->errh = errh;
        errh->refcount++;
        co_errh_release(was);
    }
    co_errh_release(errh);
    if (rc || !r) {
        co_attrs_delete_all(&attrs, MPI_COMM_NULL, 1);
        if (n) co_comm_free(n, "MPI_Comm_idup");
        n = NULL;
    } else {
        n->attrs = attrs;
    }
    if (!r) return;
    *out = n ? n->handle : MPI_COMM_NULL;
    r->status = (co_status){.source = MPI_ANY_SOURCE, .tag = MPI_ANY_TAG, .error = rc};
    co_req_complete(r);
}

int co_comm_idup(co_comm *c, const char *fn, MPI_Comm *out, co_req *r) {
    struct co_attr *attrs = NULL;
    int rc = r ? co_attrs_copy_all(c->attrs, c->handle, &attrs, MPI_COMM_NULL) : MPI_ERR_NO_MEM;
    if (rc) { /* the call fails here, but its round is still this rank's to take */
        co_attrs_delete_all(&attrs, MPI_COMM_NULL, 1);
        r = NULL;
    }
    c->errh->refcount++;
    if (!c->idup_pending && co_comm_stream_ready(c)) {
        idup_finish(c, attrs, c->errh, out, r);
    } else {
        idup_call *k = malloc(sizeof(*k));
        if (!k) co_fatal("out of memory");
        *k = (idup_call){NULL, c, attrs, c->errh, out, r};
        idup_call **pp = &IDUPS;
        while (*pp) pp = &(*pp)->next; /* (a few at most) */
        *pp = k;
        c->idup_pending++;
    }
    if (rc == MPI_ERR_NO_MEM) return co_error(c, fn, rc, "out of request handles");
    if (rc) return co_error(c, fn, rc, "an attribute copy callback failed (error %d)", rc);
    return MPI_SUCCESS;
}

/* One call at a time, from the head again after each: finishing one may run MPI calls (a
 * failed one's free), which may come back here. */
int co_comm_idup_progress(void) {
    int n = 0;
    for (;;) {
        idup_call **pp = &IDUPS, *k = NULL;
        for (; *pp; pp = &(*pp)->next) {
            int first = 1; /* the oldest pending call on its parent */
            for (idup_call *e = IDUPS; e != *pp; e = e->next)
                if (e->parent == (*pp)->parent) first = 0;
            if (first && co_comm_stream_ready((*pp)->parent)) {
                k = *pp;
                break;
            }
        }
        if (!k) return n;
        *pp = k->next;
        k->parent->idup_pending--;
        idup_finish(k->parent, k->attrs, k->errh, k->out, k->req);
        free(k);
        n++;
    }
}

void co_comm_idup_drain(co_comm *c) {
    if (!c->idup_pending) return;
    co_backoff b = {0};
    while (c->idup_pending) {
        if (co_progress() + co_comm_idup_progress())
            co_backoff_reset(&b);
        else
            co_backoff_idle(&b);
    }
}

/* ---- split and create ------------------------------------------------------------------------ */

/* 32 bytes, so that a two-process exchange travels inside the queue's cell. */
typedef struct split_ent {
    int32_t color, key;
    uint32_t check;  /* create: hash of the group the process passed */
    int32_t gsize;   /* create: its size; negative: minus an error class this process found
                        in its own arguments */
    uint64_t base;   /* master: first of `size` consecutive IDs reserved, 0 if none */
    uint64_t serial; /* master: the pool they come from */
} split_ent;
_Static_assert(sizeof(split_ent) == 32, "fits a cell's inline payload");

typedef struct member {
    int color, key, rank;
} member;

static int cmp_member(const void *a, const void *b) {
    const member *x = a, *y = b;
    if (x->color != y->color) return x->color < y->color ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The common part of split (g == NULL) and create (g: the group this process passed). */
static int split_common(co_comm *c, int color, int key, co_group *g, int my_err,
                        const char *my_reason, const char *fn, co_comm **out) {
    int n = c->size, master = c->rank == 0;
    *out = NULL;
    split_ent mine = {color, key, 0, -my_err, 0, 0};
    if (g && !my_err) {
        mine.check = co_group_hash(g);
        mine.gsize = g->size;
    }
    co_idpool *pool = NULL;
    if (master) {
        pool = co_comm_pool(c);
        mine.serial = co_idpool_serial(pool);
        if (co_comm_take_run(pool, (uint64_t)n, &mine.base) && mine.gsize >= 0)
            mine.gsize = -MPI_ERR_OTHER;
    }
    /* one scratch block: the exchange, the sorted members, the used-ID marks */
    size_t bytes = (size_t)n * (sizeof(split_ent) + sizeof(member) + 1);
    _Alignas(16) char small[2048];
    char *scratch = bytes <= sizeof(small) ? small : malloc(bytes);
    if (!scratch) co_fatal("out of memory splitting a communicator");
    split_ent *all = (split_ent *)scratch;
    member *m = (member *)(all + n);
    char *used = (char *)(m + n);
    int rc = co_comm_allgather(c, &mine, all, sizeof(mine));
    if (rc) co_fatal("communicator creation exchange failed (%s)", co_error_class_name(rc));

    int err = 0, err_rank = -1, nm = 0;
    for (int i = 0; i < n && !err; i++)
        if (all[i].gsize < 0) err = -all[i].gsize, err_rank = i;
    for (int i = 0; i < n; i++)
        if (all[i].color != MPI_UNDEFINED) m[nm++] = (member){all[i].color, all[i].key, i};
    qsort(m, (size_t)nm, sizeof(*m), cmp_member);

    /* Groups: runs of one color. Create checks that all members passed the same group. */
    int ngroups = 0, my_first = -1, my_count = 0, my_index = -1, my_low = 0, inconsistent = 0;
    memset(used, 0, (unsigned)n); /* used[r]: a group's ID is base + r */
    for (int s = 0, e; s < nm && !err; s = e, ngroups++) {
        int low = m[s].rank;
        for (e = s; e < nm && m[e].color == m[s].color; e++)
            if (m[e].rank < low) low = m[e].rank;
        for (int k = s; g && k < e; k++) {
            const split_ent *x = &all[m[k].rank];
            if (x->check != all[m[s].rank].check || x->gsize != e - s || m[k].key != k - s)
                inconsistent = 1;
        }
        used[low] = 1;
        if (color != MPI_UNDEFINED && m[s].color == color) {
            my_first = s;
            my_count = e - s;
            my_index = ngroups;
            my_low = low;
        }
    }
    if (!err && inconsistent) err = MPI_ERR_GROUP;

    /* IDs: base + lowest rank of each group, or, without a run, a second round. */
    uint64_t base = all[0].base, serial = all[0].serial, my_id = 0;
    if (!err && base) {
        my_id = base + (uint64_t)my_low;
    } else if (!err && ngroups) {
        uint64_t *ids = calloc((size_t)ngroups, sizeof(*ids));
        if (!ids) co_fatal("out of memory splitting a communicator");
        if (master && co_comm_take_ids(pool, (uint64_t)ngroups, ids))
            memset(ids, 0, (size_t)ngroups * sizeof(*ids));
        rc = co_comm_bcast(c, 0, ids, (size_t)ngroups * sizeof(*ids));
        if (rc) co_fatal("communicator creation exchange failed (%s)", co_error_class_name(rc));
        if (!ids[0]) err = MPI_ERR_OTHER;
        if (my_index >= 0) my_id = ids[my_index];
        free(ids);
    }
    if (master && base) { /* the reserved IDs no group uses go back at once */
        for (int i = 0; i < n; i++)
            if (err || !used[i]) co_idpool_put(pool, base + (uint64_t)i);
    }

    if (scratch != small && (err || my_first < 0)) free(scratch);
    if (err) {
        if (err == my_err) return co_error(c, fn, err, "%s", my_reason);
        if (err == MPI_ERR_OTHER)
            return co_error(c, fn, err,
                            "no communicator ID left (all 2^60 or COHORT_ID_SPACE "
                            "in use)");
        if (err_rank >= 0)
            return co_error(c, fn, err, "rank %d passed an invalid %s", err_rank,
                            g ? "group" : "color");
        return co_error(c, fn, err, "the processes passed different groups");
    }
    if (my_first < 0) return MPI_SUCCESS; /* MPI_UNDEFINED, or not in any group */
    co_group *ng;
    if (g) {
        ng = g;
        co_group_retain(ng);
    } else {
        ng = co_group_new(my_count);
        if (!ng) co_fatal("out of memory creating a group");
        for (int k = 0; k < my_count; k++) ng->world[k] = c->local->world[m[my_first + k].rank];
        co_group_finish(ng);
    }
    if (scratch != small) free(scratch);
    /* the IDs came from the pool of the process that holds rank 0 now */
    rc = co_comm_new_child(c, ng, NULL, my_id, co_proc_of(c->local->world[0]), serial, -1, out);
    co_group_release(ng);
    if (rc) return co_error(c, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}

/* ---- split and create on intercommunicators ---------------------------------------------------
 * Each group gathers its members' (color, key) on its local communicator. The leaders (rank 0
 * of each group) swap the two tables over the intercommunicator, and the master's side takes
 * one ID per color present in both groups, in increasing order of color, and sends them along.
 * Each leader broadcasts what it received in its group. Every process then knows both tables
 * and computes both sides of its new communicator; a color missing from either group gives
 * MPI_COMM_NULL. */

/* The members of `all` (n entries) with `color`, in order of key, then rank. */
static int ic_members(const split_ent *all, int n, int color, member *m) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (all[i].color == color) m[k++] = (member){color, all[i].key, i};
    qsort(m, (size_t)k, sizeof(*m), cmp_member);
    return k;
}

static int ic_has_color(const split_ent *all, int n, int color) {
    for (int i = 0; i < n; i++)
        if (all[i].color == color) return 1;
    return 0;
}

/* Colors present in both tables, in increasing order, into out (room for na); their number. */
static int ic_common_colors(const split_ent *a, int na, const split_ent *b, int nb, int *out) {
    int k = 0;
    for (int i = 0; i < na; i++) {
        int col = a[i].color;
        if (col == MPI_UNDEFINED || !ic_has_color(b, nb, col)) continue;
        int j = 0;
        while (j < k && out[j] < col) j++;
        if (j < k && out[j] == col) continue;
        memmove(out + j + 1, out + j, (size_t)(k - j) * sizeof(int));
        out[j] = col;
        k++;
    }
    return k;
}

/* The first error a table shows: a member's own (gsize < 0), or, for create, members of one
 * color that passed different groups. *who: the member, or -1 for disagreeing groups. */
static int ic_table_error(const split_ent *all, int n, int create, member *m, int *who) {
    for (int i = 0; i < n; i++)
        if (all[i].gsize < 0) {
            *who = i;
            return -all[i].gsize;
        }
    *who = -1;
    if (!create) return 0;
    int k = ic_members(all, n, 0, m);
    for (int i = 0; i < k; i++) {
        const split_ent *x = &all[m[i].rank];
        if (x->check != all[m[0].rank].check || x->gsize != k || m[i].key != i)
            return MPI_ERR_GROUP;
    }
    return 0;
}

static co_group *ic_group(const member *m, int k, const co_group *of) {
    co_group *g = co_group_new(k);
    if (!g) co_fatal("out of memory creating a group");
    for (int i = 0; i < k; i++) g->world[i] = of->world[m[i].rank];
    co_group_finish(g);
    return g;
}

/* The process whose pool gives an intercommunicator's children their IDs: the one that holds
 * rank 0 of the side with the master, now (a rank swap may have moved it since the
 * master's pool was made, and it then takes the IDs from a delegate pool of its own). */
static int ic_taker(const co_comm *ic) {
    return co_proc_of(CO_MIN(ic->local->world[0], ic->remote->world[0]));
}

static int ic_split(co_comm *ic, int color, int key, co_group *g, int my_err, const char *my_reason,
                    const char *fn, co_comm **out) {
    *out = NULL;
    int nl = ic->size, nr = ic->remote->size, nmin = CO_MIN(nl, nr);
    int a_side = ic->local->world[0] < ic->remote->world[0]; /* holds the master */
    split_ent mine = {color, key, 0, -my_err, 0, 0};
    if (g && !my_err) {
        mine.check = co_group_hash(g);
        mine.gsize = g->size;
    }
    size_t bytes = (size_t)(nl + nr) * sizeof(split_ent) + (size_t)(nmin + 2) * sizeof(uint64_t) +
                   (size_t)(nl + nr) * sizeof(member) + (size_t)nmin * sizeof(int);
    char *scratch = malloc(bytes);
    if (!scratch) co_fatal("out of memory splitting an intercommunicator");
    split_ent *loc = (split_ent *)scratch, *rem = loc + nl;
    uint64_t *ids = (uint64_t *)(rem + nr); /* serial, then one ID per common color (0: none) */
    member *m = (member *)(ids + nmin + 2);
    int *colors = (int *)(m + nl + nr);
    memset(ids, 0, (size_t)(nmin + 2) * sizeof(uint64_t));

    int rc = co_comm_allgather(ic->local_comm, &mine, loc, sizeof(mine));
    if (!rc && ic->rank == 0) {
        co_dtype *byte = co_dt_get(MPI_BYTE);
        uint64_t ctx = co_coll_ctx(ic);
        size_t lb = (size_t)nl * sizeof(split_ent), rb = (size_t)nr * sizeof(split_ent);
        if (a_side) {
            rc = co_recv(rem, rb, byte, 0, CO_TAG_COMM, ic, ctx, NULL);
            if (!rc) rc = co_send(loc, lb, byte, 0, CO_TAG_COMM, ic, ctx);
            int who, ncol = ic_common_colors(loc, nl, rem, nr, colors);
            int bad = ic_table_error(loc, nl, g != NULL, m, &who) ||
                      ic_table_error(rem, nr, g != NULL, m, &who);
            if (!rc && ncol && !bad) {
                co_idpool *pool = co_comm_pool(ic);
                ids[0] = co_idpool_serial(pool);
                if (co_comm_take_ids(pool, (uint64_t)ncol, ids + 2)) ids[1] = 1; /* none left */
            }
            /* (always the same size: a collective context's receive expects exactly its count) */
            if (!rc)
                rc = co_send(ids, (size_t)(nmin + 2) * sizeof(uint64_t), byte, 0, CO_TAG_COMM, ic,
                             ctx);
        } else {
            rc = co_send(loc, lb, byte, 0, CO_TAG_COMM, ic, ctx);
            if (!rc) rc = co_recv(rem, rb, byte, 0, CO_TAG_COMM, ic, ctx, NULL);
            if (!rc)
                rc = co_recv(ids, (size_t)(nmin + 2) * sizeof(uint64_t), byte, 0, CO_TAG_COMM, ic,
                             ctx, NULL);
        }
    }
    if (!rc) rc = co_comm_bcast(ic->local_comm, 0, rem, (size_t)nr * sizeof(split_ent));
    if (!rc) rc = co_comm_bcast(ic->local_comm, 0, ids, (size_t)(nmin + 2) * sizeof(uint64_t));
    if (rc) co_fatal("communicator creation exchange failed (%s)", co_error_class_name(rc));

    /* The same verdict everywhere: the master's group's table first. */
    const split_ent *ta = a_side ? loc : rem, *tb = a_side ? rem : loc;
    int na = a_side ? nl : nr, nb = a_side ? nr : nl, who, err, err_side = 0;
    if ((err = ic_table_error(ta, na, g != NULL, m, &who))) {
        err_side = a_side ? 0 : 1;
    } else if ((err = ic_table_error(tb, nb, g != NULL, m, &who))) {
        err_side = a_side ? 1 : 0;
    }
    int ncol = ic_common_colors(loc, nl, rem, nr, colors);
    if (!err && ncol && ids[1]) err = MPI_ERR_OTHER;
    int idx = -1;
    for (int i = 0; i < ncol && color != MPI_UNDEFINED; i++)
        if (colors[i] == color) idx = i;
    co_group *lg = NULL, *rg = NULL;
    if (!err && idx >= 0) {
        lg = ic_group(m, ic_members(loc, nl, color, m), ic->local);
        rg = ic_group(m, ic_members(rem, nr, color, m), ic->remote);
    }
    uint64_t id = idx >= 0 ? ids[2 + idx] : 0, serial = ids[0];
    free(scratch);
    if (err) {
        if (err == my_err && !err_side && who == ic->rank)
            return co_error(ic, fn, err, "%s", my_reason);
        if (err == MPI_ERR_OTHER && who < 0)
            return co_error(ic, fn, err,
                            "no communicator ID left (all 2^60 or COHORT_ID_SPACE in use)");
        if (who >= 0)
            return co_error(ic, fn, err, "rank %d of the %s group passed an invalid %s", who,
                            err_side ? "remote" : "local", g ? "group" : "color");
        return co_error(ic, fn, err, "the processes of the %s group passed different groups",
                        err_side ? "remote" : "local");
    }
    if (idx < 0) return MPI_SUCCESS; /* MPI_UNDEFINED, or the color is not in the other group */
    rc = co_comm_new_child(ic, lg, rg, id, ic_taker(ic), serial, -1, out);
    co_group_release(lg);
    co_group_release(rg);
    if (rc) return co_error(ic, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}

int co_comm_split(co_comm *c, int color, int key, int err, const char *reason, const char *fn,
                  co_comm **out) {
    char buf[96];
    if (!err && color < 0 && color != MPI_UNDEFINED) {
        snprintf(buf, sizeof(buf), "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
        err = MPI_ERR_ARG;
        reason = buf;
    }
    if (c->is_inter)
        return ic_split(c, err ? MPI_UNDEFINED : color, key, NULL, err, reason, fn, out);
    return split_common(c, err ? MPI_UNDEFINED : color, key, NULL, err, reason, fn, out);
}

int co_comm_create_from(co_comm *c, co_group *g, const char *fn, co_comm **out) {
    /* color: the parent rank of the group's first member; key: rank in the group */
    int color = MPI_UNDEFINED, key = 0, err = 0;
    int *tab = co_group_rank_table(c->local);
    if (!tab) co_fatal("out of memory");
    for (int i = 0; i < g->size; i++)
        if (tab[g->world[i]] < 0) err = MPI_ERR_GROUP;
    if (!err && g->rank != MPI_UNDEFINED) {
        color = c->is_inter ? 0 : tab[g->world[0]]; /* inter: the one color both sides use */
        key = g->rank;
    }
    free(tab);
    const char *reason = c->is_inter ? "group is not a subset of the communicator's local group"
                                     : "group is not a subset of the communicator's group";
    if (c->is_inter) return ic_split(c, color, key, g, err, reason, fn, out);
    return split_common(c, color, key, g, err, reason, fn, out);
}

/* ---- create_group ------------------------------------------------------------------------------
 */

typedef struct cgroup_msg {
    uint64_t id, serial;
    int32_t home_rank;
    uint32_t check;
    int32_t size, pad;
} cgroup_msg;

int co_comm_create_group(co_comm *c, co_group *g, int tag, const char *fn, co_comm **out) {
    *out = NULL;
    /* the group's members as ranks of c (the parent's ranks are world ranks for the world and
     * its congruent copies: no table needed then) */
    int small[64], *ranks = g->size <= 64 ? small : malloc((size_t)g->size * sizeof(int));
    if (!ranks) co_fatal("out of memory");
    int identity = c->size == co_st.world_size;
    for (int i = 0; identity && i < c->size; i++) identity = c->local->world[i] == i;
    int *tab = identity ? NULL : co_group_rank_table(c->local);
    if (!identity && !tab) co_fatal("out of memory");
    int bad = -1;
    for (int i = 0; i < g->size; i++)
        if ((ranks[i] = tab ? tab[g->world[i]] : g->world[i]) < 0 && bad < 0) bad = g->world[i];
    free(tab);
    if (bad >= 0) {
        if (ranks != small) free(ranks);
        return co_error(c, fn, MPI_ERR_GROUP,
                        "group is not a subset of the communicator's group (world rank %d)", bad);
    }
    if (g->rank == MPI_UNDEFINED) {
        if (ranks != small) free(ranks);
        return MPI_SUCCESS; /* not a member: a local call returning MPI_COMM_NULL */
    }
    cgroup_msg msg = {0, 0, 0, 0, 0, 0};
    if (g->rank == 0) {
        /* The parent's master need not be here: its pool, or this process's delegate pool
         * for the parent (which asks the master's pool through control messages), pays. */
        co_idpool *pool = co_comm_pool(c);
        if (co_comm_take_ids(pool, 1, &msg.id)) msg.id = 0;
        msg.serial = co_idpool_serial(pool);
        msg.home_rank = co_st.proc;
        msg.check = co_group_hash(g);
        msg.size = g->size;
    }
    int rc = co_comm_bcast_list(c, co_hidden_ctx(c->id, CO_HIDDEN_CGROUP), tag, ranks, g->size,
                                g->rank, &msg, sizeof(msg));
    if (ranks != small) free(ranks);
    if (rc) co_fatal("communicator creation exchange failed (%s)", co_error_class_name(rc));
    if (msg.check != co_group_hash(g) || msg.size != g->size)
        return co_error(c, fn, MPI_ERR_GROUP, "the group's members passed different groups");
    if (!msg.id)
        return co_error(c, fn, MPI_ERR_OTHER,
                        "no communicator ID left (all 2^60 or COHORT_ID_SPACE in use)");
    rc = co_comm_new_child(c, g, NULL, msg.id, msg.home_rank, msg.serial, -1, out);
    if (rc) return co_error(c, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}

/* ---- Intercommunicators ------------------------------------------------------------------------
 */

typedef struct icreate_hdr {
    int32_t size, err, refused; /* refused: err is the leader's verdict on its arguments */
} icreate_hdr;

int co_intercomm_create(co_comm *l, int local_leader, co_comm *peer, int remote_leader, int tag,
                        int refused, const char *why, const char *fn, co_comm **out) {
    *out = NULL;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    icreate_hdr h = {0, refused, refused != MPI_SUCCESS};
    int *remote = NULL, rc;
    uint64_t pctx = peer ? co_hidden_ctx(peer->id, CO_HIDDEN_ICREATE) : 0;
    if (l->rank == local_leader && !h.refused) {
        icreate_hdr mine = {l->size, 0, 0};
        rc = co_sendrecv(&mine, sizeof(mine), byte, remote_leader, tag, &h, sizeof(h), byte,
                         remote_leader, tag, peer, pctx, NULL);
        if (rc) co_fatal("intercommunicator creation exchange failed");
        remote = malloc((size_t)h.size * sizeof(int));
        if (!remote) co_fatal("out of memory");
        rc = co_sendrecv(l->local->world, (size_t)l->size * sizeof(int), byte, remote_leader, tag,
                         remote, (size_t)h.size * sizeof(int), byte, remote_leader, tag, peer, pctx,
                         NULL);
        if (rc) co_fatal("intercommunicator creation exchange failed");
        int *tab = co_group_rank_table(l->local);
        if (!tab) co_fatal("out of memory");
        for (int i = 0; i < h.size; i++)
            if (tab[remote[i]] >= 0) h.err = MPI_ERR_GROUP;
        free(tab);
    }
    if ((rc = co_comm_bcast(l, local_leader, &h, sizeof(h))))
        co_fatal("intercommunicator creation exchange failed");
    if (h.refused) {
        if (l->rank == local_leader) return co_error(l, fn, h.err, "%s", why);
        return co_error(l, fn, h.err,
                        "the local leader (rank %d) refused its peer_comm or remote_leader",
                        local_leader);
    }
    if (l->rank != local_leader && !(remote = malloc((size_t)h.size * sizeof(int))))
        co_fatal("out of memory");
    if ((rc = co_comm_bcast(l, local_leader, remote, (size_t)h.size * sizeof(int))))
        co_fatal("intercommunicator creation exchange failed");
    if (h.err) {
        free(remote);
        return co_error(l, fn, h.err, "the local and remote groups overlap");
    }
    /* The side whose first process has the lower world rank holds the new communicator's
     * master (co_comm_create), so it takes the ID, from its local communicator. */
    int allocate = l->local->world[0] < remote[0];
    /* the ID and the master: l's, which alone knows the serial of the pool the ID came from */
    uint64_t idm[2] = {0, (uint64_t)l->master_proc}, serial = 0;
    if (allocate) {
        if (co_comm_stream_id(l, &idm[0], &serial)) idm[0] = 0;
        if (l->rank == local_leader &&
            (rc = co_send(idm, sizeof(idm), byte, remote_leader, tag, peer, pctx)))
            co_fatal("intercommunicator creation exchange failed");
    } else {
        if (l->rank == local_leader &&
            (rc = co_recv(idm, sizeof(idm), byte, remote_leader, tag, peer, pctx, NULL)))
            co_fatal("intercommunicator creation exchange failed");
        if ((rc = co_comm_bcast(l, local_leader, idm, sizeof(idm))))
            co_fatal("intercommunicator creation exchange failed");
    }
    uint64_t id = idm[0];
    if (!id) {
        free(remote);
        return co_error(l, fn, MPI_ERR_OTHER,
                        "no communicator ID left (all 2^60 or COHORT_ID_SPACE in use)");
    }
    co_group *rg = co_group_from_world(h.size, remote);
    free(remote);
    if (!rg) co_fatal("out of memory");
    rc = co_comm_new_child(l, l->local, rg, id, (int)idm[1], serial, (int)idm[1], out);
    co_group_release(rg);
    if (rc) return co_error(l, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}

typedef struct merge_msg {
    uint64_t id, serial;
    int32_t high_a, high_b; /* a: the side holding the master */
} merge_msg;

int co_intercomm_merge(co_comm *ic, int high, const char *fn, co_comm **out) {
    *out = NULL;
    co_dtype *byte = co_dt_get(MPI_BYTE);
    int a_side = ic->local->world[0] < ic->remote->world[0];
    uint64_t ctx = co_coll_ctx(ic);
    merge_msg m = {0, 0, 0, 0};
    int32_t h = high ? 1 : 0, rc = MPI_SUCCESS;
    if (ic->rank == 0) {
        if (a_side) {
            co_idpool *pool = co_comm_pool(ic);
            if (co_comm_take_ids(pool, 1, &m.id)) m.id = 0;
            m.serial = co_idpool_serial(pool);
            m.high_a = h;
            rc = co_recv(&m.high_b, sizeof(m.high_b), byte, 0, CO_TAG_COMM, ic, ctx, NULL);
            if (!rc) rc = co_send(&m, sizeof(m), byte, 0, CO_TAG_COMM, ic, ctx);
        } else {
            rc = co_send(&h, sizeof(h), byte, 0, CO_TAG_COMM, ic, ctx);
            if (!rc) rc = co_recv(&m, sizeof(m), byte, 0, CO_TAG_COMM, ic, ctx, NULL);
        }
        if (rc) co_fatal("intercommunicator merge exchange failed");
    }
    if ((rc = co_comm_bcast(ic->local_comm, 0, &m, sizeof(m))))
        co_fatal("intercommunicator merge exchange failed");
    if (!m.id)
        return co_error(ic, fn, MPI_ERR_OTHER,
                        "no communicator ID left (all 2^60 or COHORT_ID_SPACE in use)");
    /* The group that passed high = false comes first; on a tie, the master's side. */
    int a_first = m.high_a == m.high_b ? 1 : !m.high_a;
    co_group *ga = a_side ? ic->local : ic->remote, *gb = a_side ? ic->remote : ic->local;
    co_group *first = a_first ? ga : gb, *second = a_first ? gb : ga;
    co_group *g = co_group_new(first->size + second->size);
    if (!g) co_fatal("out of memory");
    memcpy(g->world, first->world, (size_t)first->size * sizeof(int));
    memcpy(g->world + first->size, second->world, (size_t)second->size * sizeof(int));
    co_group_finish(g);
    rc = co_comm_new_child(ic, g, NULL, m.id, ic_taker(ic), m.serial, -1, out);
    co_group_release(g);
    if (rc) return co_error(ic, fn, rc, "out of communicator handles");
    return MPI_SUCCESS;
}
