/* Groups and communicators: the objects behind MPI_Group and MPI_Comm (struct co_comm and
 * struct co_group live in core/cohort.h because every layer reads them), their construction
 * (the creation collectives, which hand out IDs from the tree of ID pools), attributes and
 * Cartesian topologies. The creation functions report errors themselves, through the
 * parent's error handler, naming the MPI function `fn`, and return the error code. */
#ifndef CO_COMM_H
#define CO_COMM_H

#include "../core/cohort.h"

co_comm *co_comm_get(MPI_Comm h); /* NULL if invalid */
co_group *co_group_get(MPI_Group h);

/* ---- Groups (group.c) ------------------------------------------------------------------- */
co_group *co_group_new(int size); /* world[] to be filled by the caller; rank computed by
                                     co_group_finish */
void co_group_finish(co_group *g);
void co_group_retain(co_group *g);
void co_group_release(co_group *g);
/* Frees g whatever its references (MPI_Finalize; co_group_release when the last goes). */
void co_group_free(co_group *g);
int co_group_register(co_group *g);
/* A handle the user owns (and frees with MPI_Group_free) for g, which gains a reference. */
MPI_Group co_group_handle_out(co_group *g);
/* MPI_Group_free: the program gives back one of the references it holds through g's handle. */
void co_group_handle_free(co_group *g);
co_group *co_group_from_world(int n, const int *world);     /* NULL: out of memory */
int co_group_compare(const co_group *a, const co_group *b); /* MPI_IDENT/SIMILAR/UNEQUAL */
/* rank in g of world rank w, or MPI_UNDEFINED, through a table built once per call site */
int *co_group_rank_table(const co_group *g); /* world rank -> rank in g or -1; free() it */
uint32_t co_group_hash(const co_group *g);

/* ---- Error handlers (comm.c) ---------------------------------------------------------------- */
/* Drops a reference to e; a handler the program made goes with the last (co_errhandler). */
void co_errh_release(co_errhandler *e);
/* A handle the program owns (and frees with MPI_Errhandler_free) for e, which gains a reference;
 * MPI_ERRHANDLER_NULL when no handle is left. */
MPI_Errhandler co_errh_handle_out(co_errhandler *e);
/* MPI_Errhandler_free: the program gives back one of the references it holds through e's
 * handle (the predefined handlers stay). */
void co_errh_handle_free(co_errhandler *e);

/* ---- Communicators (comm.c, create.c) ------------------------------------------------------ */
/* A communicator over `local` (and `remote` for an intercommunicator) with ID `id`. */
co_comm *co_comm_create(co_group *local, co_group *remote, uint64_t id);
int co_comm_register(co_comm *c);
void co_comm_destroy(co_comm *c);

/* Processes in the communicator (both groups of an intercommunicator). Its master, who holds
 * its ID pool (c->master_proc), is rank 0 of the group whose rank 0 has the lower world rank,
 * where that rank was when the communicator was made: a later rank swap moves no pool. */
static inline int co_comm_members(const co_comm *c) {
    return c->size + (c->is_inter ? c->remote->size : 0);
}

int co_comm_dup(co_comm *c, const char *fn, co_comm **out);
/* The same without the attributes and the topology (a window's own communicator, src/rma:
 * the program's copy callbacks must not see it). */
int co_comm_dup_bare(co_comm *c, const char *fn, co_comm **out);
/* A lane of intracommunicator c: a hidden communicator over c's group, made without any
 * exchange, with no handle and no ID of its own. Its traffic goes on c's contexts (its callers
 * keep their tags apart from c's), its collective state is its own. Freed by
 * co_comm_lane_free, which leaves c's queued messages alone. NULL when out of memory. */
co_comm *co_comm_lane(co_comm *c);
void co_comm_lane_free(co_comm *l);
/* MPI_Comm_idup: the attributes are copied now; the new communicator is made now if c's ID
 * stream need not wait for the master, else in the progress engine once the master's message
 * has come (after the earlier pending ones on c). Then *out gets its handle and request r
 * (CO_REQ_COLL, active, holding c) completes, with error MPI_ERR_OTHER when no ID was left.
 * Returns a copy callback's error (nothing started then). */
int co_comm_idup(co_comm *c, const char *fn, MPI_Comm *out, co_req *r);
/* Completes the pending MPI_Comm_idup calls that can complete; the number completed. */
int co_comm_idup_progress(void);
/* Waits until no MPI_Comm_idup on c is pending (before anything else takes c's stream). */
void co_comm_idup_drain(co_comm *c);
/* err/reason: an error the caller found in this process's own arguments (0: none); it is
 * reported by every process, as is an invalid color. */
int co_comm_split(co_comm *c, int color, int key, int err, const char *reason, const char *fn,
                  co_comm **out);
/* MPI_Comm_split_type's hardware types (split_hw.c): the group of ranks inside one object of
 * `level` (a CO_LVL_* of src/boot/place.h; -1: none, MPI_COMM_NULL), or with `unguided` of
 * the largest level that divides c, returned in *chosen (-1: none divides it). */
int co_comm_split_hw(co_comm *c, int unguided, int level, int key, const char *fn, co_comm **out,
                     int *chosen);
int co_comm_create_from(co_comm *c, co_group *g, const char *fn, co_comm **out);
int co_comm_create_group(co_comm *c, co_group *g, int tag, const char *fn, co_comm **out);
/* The first `n` ranks of intracommunicator c, which all call it; others get NULL. One round
 * of the ID stream, no exchange (Cartesian topologies use it). */
int co_comm_first_n(co_comm *c, int n, const char *fn, co_comm **out);
/* `refused`/`why`: at the local leader, the error class and message of its own arguments
 * (peer_comm, remote_leader), 0 if they are valid; the leader then tells its local group,
 * which fails with the same class instead of waiting for it. */
int co_intercomm_create(co_comm *local, int local_leader, co_comm *peer, int remote_leader, int tag,
                        int refused, const char *why, const char *fn, co_comm **out);
int co_intercomm_merge(co_comm *ic, int high, const char *fn, co_comm **out);
/* MPI_Comm_free: attribute callbacks, then the member's part of the free protocol. */
int co_comm_free(co_comm *c, const char *fn);

/* ---- Attributes (attr.c) ------------------------------------------------------------------ */
enum { CO_KV_COMM, CO_KV_TYPE, CO_KV_WIN }; /* what a key's attributes hang on */
int co_keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                     void *extra, int kind, int *keyval);
int co_keyval_free(int keyval, int kind); /* MPI_SUCCESS or MPI_ERR_KEYVAL */
int co_keyval_valid(int keyval);          /* a live communicator key */
int co_keyval_kind(int keyval);           /* CO_KV_*, or -1 if no live key */
/* An object's attribute list (`handle` is what its callbacks get): set (calls the delete
 * callback of a value it replaces), get, delete (MPI_ERR_KEYVAL if none was set), copy every
 * one through its copy callback (dup: a copy callback's error), delete every one (free: a
 * delete callback's error; `all` goes on after one, keeping none). */
int co_attrs_set(struct co_attr **list, int handle, int keyval, void *val);
int co_attrs_get(struct co_attr *list, int keyval, void **val, int *flag);
int co_attrs_delete(struct co_attr **list, int handle, int keyval);
int co_attrs_copy_all(struct co_attr *from, int from_handle, struct co_attr **to, int to_handle);
int co_attrs_delete_all(struct co_attr **list, int handle, int all);
static inline int co_attr_set(co_comm *c, int keyval, void *val) {
    return co_attrs_set(&c->attrs, c->handle, keyval, val);
}
static inline int co_attr_get(co_comm *c, int keyval, void **val, int *flag) {
    return co_attrs_get(c->attrs, keyval, val, flag);
}
static inline int co_attr_delete(co_comm *c, int keyval) {
    return co_attrs_delete(&c->attrs, c->handle, keyval);
}
static inline int co_attr_copy_all(co_comm *from, co_comm *to) { /* Comm_dup */
    return co_attrs_copy_all(from->attrs, from->handle, &to->attrs, to->handle);
}
static inline int co_attr_delete_all(co_comm *c, int all) { /* Comm_free */
    return co_attrs_delete_all(&c->attrs, c->handle, all);
}
/* Frees every attribute of a list without calling the delete callbacks. */
void co_attrs_drop(struct co_attr **list);
void co_attr_fini(void);

/* ---- Cartesian topology (topo.c) ----------------------------------------------------------- */
struct co_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int ndims;
    int *dims, *periods;
    /* MPI_GRAPH: the whole graph as MPI_Graph_create got it */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: this process's edges; weights NULL when unweighted */
    int indeg, outdeg, weighted;
    int *in, *inw, *out, *outw;
    /* co_topo_neighbors' answer for nb_rank (nb: in-neighbours, then out-neighbours) */
    int nb_rank, nb_in, nb_out;
    int *nb;
};
struct co_topo *co_topo_cart_new(int ndims, const int *dims, const int *periods);
struct co_topo *co_topo_graph_new(int nnodes, const int *index, const int *edges);
/* inw and outw may be NULL (unweighted) */
struct co_topo *co_topo_dist_new(int indeg, const int *in, const int *inw, int outdeg,
                                 const int *out, const int *outw);
struct co_topo *co_topo_dup(const struct co_topo *t);
/* The neighbours of `rank` for the neighbourhood collectives, in the standard's order: receive
 * block i comes from (*in)[i], send block j goes to (*out)[j] (MPI_PROC_NULL for a Cartesian
 * neighbour off the grid). The lists belong to t, which keeps them for the next call about the
 * same rank (every collective asks about the communicator's own); valid until t is freed or
 * asked about another rank. NULL for *in when out of memory. */
void co_topo_neighbors(struct co_topo *t, int rank, const int **in, int *nin, const int **out,
                       int *nout);
void co_topo_free(struct co_topo *t);
void co_cart_coords(const struct co_topo *t, int rank, int *coords);
int co_cart_rank(const struct co_topo *t, const int *coords); /* -1: out of range */

/* ---- Layer state (comm.c) ------------------------------------------------------------------ */
struct co_idp;
struct co_keyval;
struct co_comm_state {
    struct co_idp *idp;
    struct co_u64map *inbox; /* stream messages by communicator ID */
    struct co_smsg *spare_msgs;
    struct co_keyval **keyvals;
    int nkeyvals;
    co_comm **zombies; /* freed, but requests still refer to them */
    int nzombies, capzombies;
    struct idup_call *idups; /* pending MPI_Comm_idup calls, oldest first (create.c) */
};

static inline int co_comm_idup_any(void) { /* some are pending */
    return co_st.cm->idups != NULL;
}

#endif /* CO_COMM_H */
