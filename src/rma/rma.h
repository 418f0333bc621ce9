/* One-sided communication: the object behind MPI_Win, its synchronisation and the RMA
 * operations (docs/rma.md).
 *
 * Every rank of a job runs on one machine, so an origin does each operation itself, at the
 * call: it writes or reads the target's memory directly when that memory is mapped into its
 * own address space (MPI_Win_allocate, MPI_Win_allocate_shared, and its own window), and with
 * a single copy (process_vm_writev/readv) when it is the program's own memory in another
 * process (MPI_Win_create, MPI_Win_create_dynamic). An operation is therefore complete, at the
 * origin and at the target, when its call returns; epochs only order the processes.
 *
 * Each window has a control block per rank in a memory file that every member maps (rank 0
 * makes it, the others open it through /proc): a lock word (passive target) and a mutex that
 * makes accumulate operations on that rank's memory atomic with respect to each other. */
#ifndef CO_RMA_H
#define CO_RMA_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"
#include "../op/op.h"

typedef struct co_win_ctl {
    _Atomic uint64_t lock; /* CO_WIN_EXCL, waiting exclusive lockers, shared holders (sync.c) */
    _Atomic uint32_t acc;  /* accumulate mutex: 1 while held */
    char pad[CO_CACHELINE - sizeof(uint64_t) - sizeof(uint32_t)];
} co_win_ctl;
_Static_assert(sizeof(co_win_ctl) == CO_CACHELINE, "a control block is one cache line");
#define CO_WIN_EXCL (UINT64_C(1) << 63)

typedef struct co_win_peer {
    int mapped;      /* reached through local (else with single copies) */
    char *local;     /* the rank's window in this process's mapping (dynamic: 0, addresses) */
    uint64_t remote; /* its window's address in its own process (single copy) */
    MPI_Aint size;
    int disp_unit;
    pid_t pid;
} co_win_peer;

typedef struct co_win_region { /* memory attached to a dynamic window */
    char *base;
    MPI_Aint size;
} co_win_region;

enum { CO_FENCE_NONE = 0, CO_FENCE_OPEN, CO_FENCE_USED }; /* fence epoch: none, open, with ops */

typedef struct co_win {
    int handle;
    int flavor;    /* MPI_WIN_FLAVOR_* */
    co_comm *comm; /* a duplicate of the creation communicator: its group and PSCW messages */
    int rank, size;
    co_errhandler *errh;
    char name[MPI_MAX_OBJECT_NAME];
    struct co_attr *attrs;
    co_info *info;
    void *base; /* this rank's window (MPI_WIN_BASE) */
    MPI_Aint wsize;
    int disp_unit;
    int model;          /* MPI_WIN_UNIFIED (MPI_WIN_MODEL's value) */
    co_win_peer *peers; /* [size] */
    co_win_ctl *ctl;    /* [size] */
    char *map;          /* the shared memory file's mapping in this process */
    size_t maplen;
    /* epochs of this rank */
    int fence;
    int *start; /* PSCW access epoch: the targets (window ranks), NULL when none */
    int nstart;
    uint8_t *started;     /* [size]: 1 for the targets of the access epoch */
    int post;             /* PSCW exposure epoch: open (1) */
    int npost, post_done; /* its origins, and those whose MPI_Win_complete has come */
    uint8_t *locked;      /* [size]: the lock this rank holds on each target (0: none) */
    int nlocked;
    int lock_all; /* MPI_Win_lock_all is in force (1; 2: with MPI_MODE_NOCHECK) */
    co_win_region *regions;
    int nregions, capregions;
    /* buffers the operations pack into, kept from one operation to the next: a fresh
     * allocation of megabytes costs a page fault per page, which on a virtual machine made a
     * 4 MiB accumulate take 60 ms instead of 8 (docs/rma.md) */
    void *scratch[3];
    size_t scratch_len[3];
} co_win;

#define CO_WIN_LOCK_NOCHECK 3 /* locked[] value: lock given with MPI_MODE_NOCHECK */

co_win *co_win_get(MPI_Win h); /* NULL if invalid */

/* Creation, collective over intracommunicator c (which the caller has checked). `size` and
 * `base` are this rank's; for MPI_WIN_FLAVOR_ALLOCATE/SHARED the window's memory is made here
 * and *base set. Errors are reported through c's handler; every rank returns the same class. */
int co_win_create(co_comm *c, int flavor, void *base, MPI_Aint size, int disp_unit,
                  const co_info *info, const char *fn, co_win **out);
/* MPI_Win_free's part after the checks: collective. */
int co_win_free(co_win *w, const char *fn);

/* Errors on a window go through its error handler; the function gets the window's handle. */
int co_win_error(co_win *w, const char *fn, int cls, const char *fmt, ...) CO_PRINTF(4, 5);

/* Synchronisation (sync.c). Each checks the epoch state it needs and reports through the
 * window's handler. */
int co_win_fence(co_win *w, int mode, const char *fn);
int co_win_post(co_win *w, const int *ranks, int n, int mode, const char *fn);
/* takes ranks (malloc'd: the access epoch keeps it, a failure frees it) */
int co_win_start(co_win *w, int *ranks, int n, int mode, const char *fn);
int co_win_complete(co_win *w, const char *fn);
int co_win_wait(co_win *w, int *flag, const char *fn); /* flag NULL: block (Win_wait) */
int co_win_lock(co_win *w, int type, int rank, int mode, const char *fn);
int co_win_unlock(co_win *w, int rank, const char *fn);
int co_win_lock_all(co_win *w, int mode, const char *fn);
int co_win_unlock_all(co_win *w, const char *fn);
/* Whether this rank may access target t now (an access epoch covers it). */
int co_win_can_access(co_win *w, int t);
void co_win_acc_lock(co_win *w, int t);
void co_win_acc_unlock(co_win *w, int t);

/* Operations (ops.c), arguments checked. MPI_ERR_RMA_RANGE when the target bytes leave its
 * window; errors reported through the window's handler. */
typedef struct co_rma_side { /* one buffer of an operation */
    void *buf;
    size_t count;
    co_dtype *dt;
} co_rma_side;
enum { CO_RMA_PUT, CO_RMA_GET, CO_RMA_ACC, CO_RMA_GET_ACC, CO_RMA_CAS };
/* origin: what goes to the target (PUT, ACC, GET_ACC; the new value of CAS); result: what
 * comes back (GET's origin buffer, GET_ACC's and CAS's result); compare: CAS's. */
int co_rma_op(co_win *w, int kind, const co_rma_side *origin, const co_rma_side *result,
              const void *compare, int target, MPI_Aint disp, const co_rma_side *tgt, co_op *op,
              const char *fn);

#endif /* CO_RMA_H */
