/* Collective operations, written against p2p requests on each communicator's collective
 * context (comm->ctx | 1). Every collective has one file here. */
#ifndef CO_COLL_H
#define CO_COLL_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"
#include "../op/op.h"
#include "../p2p/p2p.h"

/* Tags of the collective context; collectives on one communicator are called in the same
 * order everywhere and messages between two ranks are not overtaken, so fixed tags suffice. */
enum {
    CO_TAG_BARRIER = 1,
    CO_TAG_BCAST,
    CO_TAG_REDUCE,
    CO_TAG_ALLREDUCE,
    CO_TAG_GATHER,
    CO_TAG_SCATTER,
    CO_TAG_ALLGATHER,
    CO_TAG_ALLTOALL,
    CO_TAG_SCAN,
    CO_TAG_COMM, /* communicator construction */
};

static inline uint64_t co_coll_ctx(const co_comm *c) {
    return c->ctx | 1;
}

/* A scratch buffer able to hold `count` elements of `dt` laid out as dt says; *base is what
 * to free, the return value is what to pass as the buffer. */
void *co_coll_tmpbuf(co_dtype *dt, size_t count, void **base);

int co_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *c);
int co_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
              co_comm *c);
int co_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c);

#endif /* CO_COLL_H */
