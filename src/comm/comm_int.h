/* Internals shared by the files of the communicator layer: the glue between communicators
 * and their ID pools, the ID stream, the hidden match contexts, and the small collectives the
 * creation calls are built from. */
#ifndef CO_COMM_INT_H
#define CO_COMM_INT_H

#include "comm.h"
#include "idpool.h"
#include "../coll/coll.h"
#include "../p2p/p2p.h"

/* Match contexts no user or collective traffic uses: the top bit set, the ID shifted by two,
 * and a selector. User contexts are id << 1 and collective ones id << 1 | 1, both below 2^61,
 * so these never meet them, and they are unique among live communicators as IDs are. */
enum {
    CO_HIDDEN_CGROUP = 0, /* Comm_create_group traffic on the parent (the user's tag) */
    CO_HIDDEN_ICREATE,    /* Intercomm_create: the leaders, on the peer communicator */
    CO_HIDDEN_LOCAL,      /* an intercommunicator's local group (and LOCAL|1 its collectives) */
};
static inline uint64_t co_hidden_ctx(uint64_t id, unsigned sel) {
    return (1ull << 63) | (id << 2) | sel;
}

/* This process's pool for the children of c: the lease pool at c's master, a delegate pool
 * elsewhere (made on first use, for Comm_create_group), the root pool for WORLD at rank 0. */
co_idpool *co_comm_pool(co_comm *c);
/* Take IDs from p, making progress while it asks upstream: MPI_SUCCESS, or MPI_ERR_OTHER when
 * the whole ID space is in use. */
int co_comm_take_ids(co_idpool *p, uint64_t n, uint64_t *ids);
/* n consecutive IDs; *base = 0 when the pool holds n IDs but not in one run. */
int co_comm_take_run(co_idpool *p, uint64_t n, uint64_t *base);
/* One round of c's ID stream (every member calls it): the ID for a new communicator whose
 * master is c's master, which also learns the serial of the pool it came from. */
int co_comm_stream_id(co_comm *c, uint64_t *id, uint64_t *home_serial);
/* The same round without first completing the pending MPI_Comm_idup calls on c (create.c
 * completes them with it); it waits if the round's message has not arrived. */
int co_comm_stream_round(co_comm *c, uint64_t *id, uint64_t *home_serial);
/* Whether c's next round would not wait for a message from the master. */
int co_comm_stream_ready(const co_comm *c);

/* Build, register and (at its master) lease a new communicator whose ID came from pool
 * `home_serial` at process `home_rank`. Its master is process `master`, which must be a member
 * and know home_serial, or with -1 the process that holds its rank 0 (co_comm_create).
 * Attributes, topology and name are the caller's. */
int co_comm_new_child(co_comm *parent, co_group *local, co_group *remote, uint64_t id,
                      int home_rank, uint64_t home_serial, int master, co_comm **out);

/* Collectives of the creation calls, on c's collective context with tag CO_TAG_COMM. */
int co_comm_allgather(co_comm *c, const void *mine, void *all, size_t blk);
int co_comm_bcast(co_comm *c, int root, void *buf, size_t len);
/* Binomial broadcast from ranks[0] to ranks[0..n) of c (me: my index), on context ctx. */
int co_comm_bcast_list(co_comm *c, uint64_t ctx, int tag, const int *ranks, int n, int me,
                       void *buf, size_t len);

#endif /* CO_COMM_INT_H */
