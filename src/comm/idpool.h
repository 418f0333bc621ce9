/* The tree of communicator ID pools (docs/communicators.md). Every process holds one co_idp:
 * the pools it keeps for the communicators it is master of (and delegate pools for those it
 * creates children of without being their master), indexed by serial and by communicator ID.
 * World rank 0 also holds the root pool, which owns the whole ID space at start.
 *
 * The module is a state machine: it never waits and never touches the network itself. It
 * sends through a callback and is fed incoming messages by co_idp_on_msg, so the progress
 * engine can answer requests while this process is blocked in any other MPI call, and the
 * unit tests can run many simulated processes in one address space.
 *
 * Messages between pools (w[0] >> 60 is the operation):
 *   REQ      a pool asks its upstream pool for IDs (need at least, want preferably)
 *   GRANT    the answer: ranges of IDs, or a failure when the whole space is in use
 *   RETURN   IDs going home: surplus, or a reclaim reply (RETURN1: a freed communicator's ID)
 *   RECLAIM  the root (then each pool, down the tree) asks borrowers for unused IDs
 *   NOTICE   a member freed a communicator (to the communicator's master: the lease)
 *   STREAM   not a pool message: reserved IDs for the communicator layer (comm.c) */
#ifndef CO_IDPOOL_H
#define CO_IDPOOL_H

#include "idset.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    CO_IDP_OP_STREAM = 1,
    CO_IDP_OP_NOTICE,
    CO_IDP_OP_REQ,
    CO_IDP_OP_GRANT,
    CO_IDP_OP_RETURN,
    CO_IDP_OP_RECLAIM,
    CO_IDP_OP_RETURN1, /* one ID, in the words (w[0]: the ID, w[1]: the pool's serial) */
};
#define CO_IDP_OP(w0)      ((unsigned)((w0) >> 60))
#define CO_IDP_ARG(w0)     ((w0) & ((1ull << 60) - 1))
#define CO_IDP_W0(op, arg) (((uint64_t)(op) << 60) | (arg))

/* IDs are below 2^60, so that id << 3 still fits in a 64-bit match context. */
#define CO_ID_LIMIT        (1ull << 60)
#define CO_IDP_ROOT_SERIAL 1

typedef void (*co_idp_send_fn)(void *arg, int dst, const uint64_t w[3], const void *payload,
                               size_t len);

typedef struct co_idp co_idp;
typedef struct co_idpool co_idpool;

/* The state of process `rank`. Rank 0 creates the root pool holding [first, first + count),
 * the pool of communicator `root_comm` (MPI_COMM_WORLD).
 * `batch` is how many IDs a pool asks for beyond its immediate need; `max_payload` bounds
 * the bytes of one message. */
co_idp *co_idp_create(int rank, uint64_t first, uint64_t count, uint64_t batch, size_t max_payload,
                      co_idp_send_fn send, void *arg, uint64_t root_comm);
void co_idp_destroy(co_idp *st);
void co_idp_on_msg(co_idp *st, int src, const uint64_t w[3], const void *payload, size_t len);
co_idpool *co_idp_root(co_idp *st); /* NULL except at rank 0 */

/* A pool for the children of one communicator at this process. Its IDs come from, and go
 * back to, pool `up_serial` at process `up_rank`; when that serial is not known yet (a
 * delegate pool), requests name the communicator `up_comm` instead, whose master's pool
 * answers and tells its serial. */
co_idpool *co_idpool_new(co_idp *st, int up_rank, uint64_t up_serial, uint64_t up_comm);
/* The pool of communicator `id`, mastered here, with `members` processes, whose ID came from
 * pool `up_serial` at `up_rank`. Requests and free notices that name `id` find it; they may
 * have arrived before this call (members can finish a creation call before its master), in
 * which case they were kept and now take effect. When every member has freed the
 * communicator (co_idpool_release here, NOTICE from the others), its ID goes back upstream
 * and the pool closes. */
co_idpool *co_idp_lease(co_idp *st, uint64_t id, int members, int up_rank, uint64_t up_serial);
void co_idpool_release(co_idpool *p);
/* A pool without a lease whose owner went away: its IDs go home, it lives on only until
 * everything it lent has come back. */
void co_idpool_close(co_idpool *p);
/* The pool's serial (assigned on first use): children record (rank, serial) as their home. */
uint64_t co_idpool_serial(co_idpool *p);

enum { CO_IDP_OK = 0, CO_IDP_WAIT, CO_IDP_FAIL, CO_IDP_NORUN };
/* Take n IDs. WAIT: the pool asked upstream; make progress and call again (with the same n)
 * until OK, or FAIL when the whole ID space is in use. */
int co_idpool_take(co_idpool *p, uint64_t n, uint64_t *ids);
/* Take n consecutive IDs: as co_idpool_take, plus NORUN when the pool holds n IDs but not in
 * one run (take them one by one instead). */
int co_idpool_take_run(co_idpool *p, uint64_t n, uint64_t *base);
/* Give up a take that returned WAIT (a reservation made in passing): a later FAIL of its
 * request must not fail the next take, which asks afresh. */
void co_idpool_cancel(co_idpool *p);
/* IDs taken here and not used after all. */
void co_idpool_put(co_idpool *p, uint64_t id);
void co_idpool_put_run(co_idpool *p, uint64_t lo, uint64_t hi);

typedef struct co_idp_stats {
    uint64_t pools;     /* pool objects alive at this process */
    uint64_t leases;    /* communicators mastered here and not yet freed by all members */
    uint64_t free_ids;  /* IDs idle in this process's pools */
    uint64_t lent_ids;  /* IDs this process's pools have lent and not got back */
    uint64_t root_free; /* rank 0: IDs in the root pool */
    uint64_t requests;  /* REQ messages this process has sent */
    uint64_t reclaims;  /* reclaim rounds the root has run */
} co_idp_stats;
void co_idp_get_stats(co_idp *st, co_idp_stats *out);
void co_idp_dump(co_idp *st, FILE *f);     /* every pool, one line each (debugging) */
int co_idp_holds(co_idp *st, uint64_t id); /* id is idle in one of st's pools */

#endif /* CO_IDPOOL_H */
