/* Collective operations. Each collective has one file here with several algorithms; they are
 * written against p2p requests on each communicator's collective context (comm->ctx | 1) and,
 * where all members share memory, against the communicator's shared-memory segment (cshm.c).
 * coll.c holds the registry of algorithms, the selection table and the helpers every file
 * shares. */
#ifndef CO_COLL_H
#define CO_COLL_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"
#include "../op/op.h"
#include "../p2p/p2p.h"
#include "../xport/shm_heap.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Tags of the collective context. Collectives on one communicator are called in the same
 * order everywhere and messages between two ranks are not overtaken, so these would suffice
 * (no algorithm receives from MPI_ANY_SOURCE); the blocking collectives add the call's number
 * to them all the same (co_coll_tag), for calls that some ranks skip. */
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
    CO_TAG_RSCATTER,
    CO_TAG_TUNE,                  /* a tuned broadcast's acknowledgements */
    CO_TAG_SWAP,                  /* a rank swap's markers (src/migrate) */
    CO_TAG_NBC = CO_COLL_TAG_NBC, /* and up: one per nonblocking collective call (nbc.c) */
};

static inline uint64_t co_coll_ctx(const co_comm *c) {
    return c->ctx | 1;
}

/* ---- Registry ----------------------------------------------------------------------------- */
enum co_coll_kind {
    CO_COLL_BARRIER,
    CO_COLL_BCAST,
    CO_COLL_REDUCE,
    CO_COLL_ALLREDUCE,
    CO_COLL_GATHER,
    CO_COLL_GATHERV,
    CO_COLL_SCATTER,
    CO_COLL_SCATTERV,
    CO_COLL_ALLGATHER,
    CO_COLL_ALLGATHERV,
    CO_COLL_ALLTOALL,
    CO_COLL_ALLTOALLV,
    CO_COLL_REDUCE_SCATTER,
    CO_COLL_REDUCE_SCATTER_BLOCK,
    CO_COLL_SCAN,
    CO_COLL_EXSCAN,
    CO_COLL_KINDS
};

/* What an algorithm needs; when a need is not met, selection falls back to the collective's
 * first algorithm, which works everywhere. */
enum {
    CO_ALG_SHM = 1,     /* the communicator's shared-memory segment */
    CO_ALG_COMMUTE = 2, /* a commutative operator */
    CO_ALG_DENSE = 4,   /* a datatype whose memory image is mostly data (see co_coll_dense) */
    CO_ALG_CMA = 8,     /* single copy between processes (process_vm_readv/writev) */
    CO_ALG_TABLE = 16,  /* single copy's table of one entry per rank fits a buffer (co_cma_fits) */
    CO_ALG_SLOTS = 32,  /* a buffer split into one slot per rank leaves each 64 bytes or more */
};

typedef struct co_coll_alg {
    const char *name;
    unsigned needs;
    const char *doc;
} co_coll_alg;

typedef struct co_coll_desc {
    const char *name;    /* "allreduce" */
    const char *setting; /* "ALLREDUCE_ALGORITHM" (COHORT_ prefix omitted) */
    size_t cfg_offset;   /* where that setting's value lives in co_config */
    const co_coll_alg *algs;
    int nalgs;
} co_coll_desc;

/* The registry: every collective and its algorithms, for selection and for `cohort info`. */
const co_coll_desc *co_coll_registry(int *n);
/* Checks the COHORT_<COLL>_ALGORITHM settings of `cfg`; 0, or -1 with a message in err. */
int co_coll_check_config(const co_config *cfg, char *err, size_t errlen);

/* Algorithm ids: the index in the collective's table (in the collective's file). */
enum { CO_BARRIER_DISSEMINATION, CO_BARRIER_COUNTER, CO_BARRIER_FLAG, CO_BARRIER_NALGS };
enum {
    CO_BCAST_BINOMIAL,
    CO_BCAST_SCATTER_ALLGATHER,
    CO_BCAST_SHM,
    CO_BCAST_CMA,
    CO_BCAST_TUNED,
    CO_BCAST_NALGS
};
enum {
    CO_REDUCE_BINOMIAL,
    CO_REDUCE_SCATTER_GATHER,
    CO_REDUCE_SHM,
    CO_REDUCE_CMA,
    CO_REDUCE_NALGS
};
enum {
    CO_ALLREDUCE_RECURSIVE_DOUBLING,
    CO_ALLREDUCE_REDUCE_BCAST,
    CO_ALLREDUCE_RING,
    CO_ALLREDUCE_SHM,
    CO_ALLREDUCE_CMA,
    CO_ALLREDUCE_NALGS
};
enum { CO_GATHER_LINEAR, CO_GATHER_BINOMIAL, CO_GATHER_SHM, CO_GATHER_CMA, CO_GATHER_NALGS };
enum { CO_GATHERV_LINEAR, CO_GATHERV_SEQUENTIAL, CO_GATHERV_CMA, CO_GATHERV_NALGS };
enum { CO_SCATTER_LINEAR, CO_SCATTER_BINOMIAL, CO_SCATTER_SHM, CO_SCATTER_CMA, CO_SCATTER_NALGS };
enum { CO_SCATTERV_LINEAR, CO_SCATTERV_SEQUENTIAL, CO_SCATTERV_CMA, CO_SCATTERV_NALGS };
enum {
    CO_ALLGATHER_RING,
    CO_ALLGATHER_BRUCK,
    CO_ALLGATHER_GATHER_BCAST,
    CO_ALLGATHER_SHM,
    CO_ALLGATHER_CMA,
    CO_ALLGATHER_LINEAR,
    CO_ALLGATHER_NALGS
};
enum {
    CO_ALLGATHERV_RING,
    CO_ALLGATHERV_GATHERV_BCAST,
    CO_ALLGATHERV_SHM,
    CO_ALLGATHERV_CMA,
    CO_ALLGATHERV_LINEAR,
    CO_ALLGATHERV_NALGS
};
enum {
    CO_ALLTOALL_PAIRWISE,
    CO_ALLTOALL_LINEAR,
    CO_ALLTOALL_BRUCK,
    CO_ALLTOALL_SHM,
    CO_ALLTOALL_CMA,
    CO_ALLTOALL_NALGS
};
enum { CO_ALLTOALLV_PAIRWISE, CO_ALLTOALLV_LINEAR, CO_ALLTOALLV_CMA, CO_ALLTOALLV_NALGS };
enum { CO_RSCAT_REDUCE_SCATTERV, CO_RSCAT_RING, CO_RSCAT_SHM, CO_RSCAT_CMA, CO_RSCAT_NALGS };
enum {
    CO_SCAN_LINEAR,
    CO_SCAN_RECURSIVE_DOUBLING,
    CO_SCAN_SHM,
    CO_SCAN_CMA,
    CO_SCAN_CHAIN,
    CO_SCAN_NALGS
};

/* In the file that defines an algorithm table: it lists every algorithm of the enum. */
#define CO_ALG_TABLE_CHECK(table, n)                                                               \
    _Static_assert(sizeof(table) / sizeof((table)[0]) == (n), #table " lists every algorithm");    \
    _Static_assert((n) < 15, #table ": algorithm numbers fit a call tag (CO_CSHM_TAG)")
extern const co_coll_alg co_barrier_algs[], co_bcast_algs[], co_reduce_algs[], co_allreduce_algs[],
    co_gather_algs[], co_gatherv_algs[], co_scatter_algs[], co_scatterv_algs[], co_allgather_algs[],
    co_allgatherv_algs[], co_alltoall_algs[], co_alltoallv_algs[], co_reduce_scatter_algs[],
    co_scan_algs[], co_exscan_algs[];

/* ---- Per-communicator and per-process state ------------------------------------------------ */
struct co_cshm;

/* What a collective call's ranks must agree on (see "Mismatched calls" below). */
typedef struct co_coll_sig {
    uint64_t call;  /* number of the call on its communicator, from 1 */
    uint64_t what;  /* op << 48 | kind << 32 | (uint32_t)root (root -1 for unrooted
                     * collectives; op: 0 none, a predefined operator's slot, 255 a user's) */
    uint64_t bytes; /* bytes per block (the vector for reductions; 0 for the v-variants) */
    uint64_t chain; /* hash of every signature so far: differs once any call disagreed */
} co_coll_sig;
#define CO_COLL_HIST 64 /* own signatures remembered per communicator */
/* how long a peer must stay in a call whose sizes differ from ours before we give it up */
#define CO_COLL_LAG_NS 100000000ull

/* A peer found in collective call `call` with sizes other than ours, first at `since` (ns;
 * coll.c, lagged_long). */
typedef struct co_coll_lag {
    uint64_t call, since;
} co_coll_lag;

typedef struct co_coll_comm {
    uint64_t barrier_epoch;         /* counter barriers entered on this communicator */
    uint64_t ibarrier_epoch;        /* MPI_Ibarrier calls run as counter barriers (nbc.c) */
    uint64_t ibarrier_done;         /* of those, how many have completed here */
    struct co_cshm *shm;            /* shared-memory segment, NULL until first needed */
    int shm_state;                  /* 0: not yet tried, 1: ready, -1: unavailable */
    int broken;                     /* error class of a disagreement found on it, 0 if none */
    uint64_t calls;                 /* collective calls made on it */
    unsigned tag_alg;               /* the algorithm the call in progress chose last, 0
                                       between calls (co_coll_tag) */
    uint64_t nbc_calls;             /* nonblocking ones (their tags, nbc.c) */
    uint64_t nbc_chain;             /* running hash of those calls' signatures (coll.c) */
    uint64_t nbc_shm_started;       /* of those, calls through the shared buffers (nbc.c) */
    uint64_t nbc_shm_finished;      /* of these, how many have finished here (in turn) */
    co_coll_sig hist[CO_COLL_HIST]; /* this rank's last calls, by call % CO_COLL_HIST */
    co_coll_lag *lag;               /* [size], allocated at the first such finding */
    char *tune_key;                 /* its ranks' locations, for the broadcast tuner */
    struct co_dtype *tune_pair;     /* a tuned broadcast's message type, until the call ends
                                       (one that was abandoned leaves it to the next, bcast.c) */
    char broken_msg[400];
} co_coll_comm;

/* The tag of a blocking collective's point-to-point messages on c: its CO_TAG_* (4 bits), the
 * algorithm the call chose last (co_coll_comm.tag_alg, 4 bits) and the low 20 bits of the
 * call's number on c (co_coll_comm.calls). A rank that skipped a call the others made (a count
 * of 0 where they pass more returns before any message) then waits for their messages of its
 * next call under another tag instead of taking those of the skipped one for them, and what a
 * failed call left unmatched stays out of the next 2^20 calls' way. Ranks whose counts differ
 * enough to choose different algorithms do not take each other's messages either: those of
 * two algorithms may have the same sizes by chance (an Alltoall by Bruck's packed blocks at 8
 * ranks and count k sends 4k bytes, what a linear one of count 4k expects), and a receive
 * matched so would report success with another call's data. Their waits end as a disagreement
 * instead ("Mismatched calls"). */
static inline int co_coll_tag(const co_comm *c, int base) {
    const co_coll_comm *cc = c->coll;
    return base | (cc ? (int)cc->tag_alg << 4 | (int)(cc->calls & 0xfffff) << 8 : 0);
}
_Static_assert(CO_TAG_TUNE < 16 && (0xfffff << 8 | 0xff) < CO_TAG_NBC, "collective tags overlap");

/* ---- Mismatched calls ------------------------------------------------------------------------
 * Every MPI collective call runs through co_coll_watched. Entering, a rank numbers the call on
 * its communicator and publishes the call's signature (collective, root, operator, bytes
 * per block, running hash) in its slot of the segment (co_cshm_sig). A rank that has waited
 * long inside the call (every CO_WAIT_CHECK_PASSES idle passes) compares its signatures with
 * what its peers published: ranks whose arguments disagree (counts, roots, operators, or
 * different collectives) may have chosen different algorithms and would wait for each other
 * forever. When it finds a disagreement, or a peer that found one, it abandons the call (a
 * jump back into co_coll_watched, which returns the error), and the communicator is broken:
 * later collectives on it fail at once. */
struct co_coll_call;

/* How a watched call ended without running to its end (co_coll_watched's *failed). */
enum { CO_CALL_RAN = 0, CO_CALL_BROKEN, CO_CALL_ABANDONED };
typedef int (*co_coll_body)(co_comm *c, const void *arg);
/* Runs body(c, arg) as collective call (kind, root, op, bytes) on c, watched for disagreements
 * between ranks; `bytes` is what every rank must agree on (0 for the v-variants), `op` the
 * reduction's operator (NULL for the other collectives). Returns
 * body's result, or the error class of a disagreement: *failed says which (CO_CALL_BROKEN: c
 * broke in an earlier call; CO_CALL_ABANDONED: in this one), the message is in
 * c->coll->broken_msg. A call that reports MPI_ERR_TRUNCATE or MPI_ERR_COUNT (the ranks'
 * counts disagree) quarantines c's ID. */
int co_coll_watched(co_comm *c, int kind, int root, const co_op *op, uint64_t bytes,
                    co_coll_body body, const void *arg, int *failed);
/* Abandons the collective call in progress with error class `cls` (the ranks' calls were
 * found to disagree); returns only if no watched call is in progress. */
void co_coll_fail(int cls, const char *fmt, ...) CO_PRINTF(2, 3);
/* The same, because process pid has ended (its peers then say so, not "disagree"). */
void co_coll_fail_ended(pid_t pid, const char *msg);
/* Breaks c outside a blocking call (a nonblocking one failed half-run, nbc.c): its later
 * blocking collectives fail at once with class cls and message msg. */
void co_coll_broken_by(co_comm *c, int cls, const char *msg);
/* The first part of a composite algorithm (a reduction, then a broadcast or a scatter of its
 * result) returned rc. If that is a size that differs, the result must not be passed on as
 * one to ranks that may have seen nothing wrong: when the second part (collective `next` of
 * `bytes`, as that collective picks its algorithm) goes by point-to-point messages, they
 * carry nothing
 * (co_st.coll_short) and the ranks after report it, leaving the communicator usable; through
 * shared memory, which has no such signal, the call is abandoned (they learn it from this
 * rank's broken word). */
void co_coll_part_failed(int rc, const char *part, co_comm *c, int next, size_t bytes);

/* A region of a rank's heap slice freed by its communicator but possibly still in use by
 * members that have not freed theirs yet. */
typedef struct co_cshm_zombie {
    struct co_cshm_zombie *next;
    uint64_t off, len;
    void *hdr; /* region header (release count) */
    int size;
} co_cshm_zombie;

#define CO_COLL_CACHE 6
typedef struct co_coll_block {
    void *p;
    size_t bytes;
} co_coll_block;

typedef struct co_coll_state {
    int forced[CO_COLL_KINDS]; /* algorithm forced by COHORT_<COLL>_ALGORITHM, or -1 */
    uint16_t first_rule[CO_COLL_KINDS], end_rule[CO_COLL_KINDS]; /* rules of each kind */
    int cma_costly;   /* COHORT_CMA_COST >= CO_CMA_COSTLY_NS: the table's `costly` rules apply */
    co_shm_heap heap; /* allocator of this rank's heap slice */
    co_cshm_zombie *zombies;
    co_coll_block cache[CO_COLL_CACHE]; /* large scratch blocks kept for reuse */
    struct co_coll_call *cur;           /* the call in progress (watched for mismatches), or NULL */
    int bodies;        /* watched calls whose body runs (co_coll_watched; nested ones count too) */
    pid_t cma_pids[8]; /* processes the call in progress copied from or into (co_cma_note) */
    int cma_n;         /* how many; -1: more than fit */
} co_coll_state;

co_coll_comm *co_coll_comm_of(co_comm *c);
/* Releases a communicator's collective state and its shared-memory segment; local, never
 * waits, harmless twice. Installed as co_st.coll_comm_free, which the communicator layer
 * calls when it destroys a communicator (it sits below this layer and cannot call here). */
void co_coll_comm_free(co_comm *c);

/* Algorithm for collective `kind` on `c` with `bytes` per block (the size every member
 * agrees on), operator `op` (NULL if none) and datatype `dt` (NULL if irrelevant). The same
 * arguments give the same answer on every rank, so the ranks agree without talking. May set
 * up the shared-memory segment (collectively, on every rank at the same call). */
int co_coll_pick(co_comm *c, int kind, size_t bytes, const co_op *op, const co_dtype *dt);
/* Every member of c is on this machine, so that the shared-memory algorithms, blocking and
 * nonblocking, may serve it. Always true while shared memory is the only transport, unless
 * links are emulated (their messages must go point to point to pay the links); the test
 * belongs here when a network transport arrives. */
int co_coll_all_local(const co_comm *c);
/* The selection table alone: the first rule whose limits hold for np members (sharing memory
 * or not), `bytes` per block and single-copy reads of cma_ns nanoseconds (COHORT_CMA_COST),
 * as if every algorithm could run; 0 when no rule holds. For tests and `cohort info`. */
int co_coll_table_pick(int kind, int np, size_t bytes, int shared, long cma_ns);
/* Single-copy reads are costly here (COHORT_CMA_COST >= CO_CMA_COSTLY_NS). */
int co_coll_cma_costly(void);

/* The send mode of the linear algorithms (every send and receive posted at once: Allgather(v),
 * Alltoall(v), and the single-copy Alltoallv's blocks sent as messages). With 2 and 3 ranks a
 * rendezvous shares each single copy between sender and reader; from 4 ranks on, where every rank
 * copies n - 1 blocks at once anyway, each reader copies whole blocks (CO_MODE_PULL), half as many
 * copies (docs/collectives.md, "Linear Allgather(v)", has the measurements). */
static inline int co_coll_linear_mode(const co_comm *c) {
    return c->size > 3 ? CO_MODE_PULL : CO_MODE_STD;
}

/* ---- Helpers ------------------------------------------------------------------------------- */

/* Scratch memory. Large blocks are kept for reuse between collectives: a fresh one costs a
 * page fault per 4 KiB on first touch, which for a 1 MiB reduction is more than the
 * reduction itself. co_coll_free takes what co_coll_alloc and co_coll_tmpbuf return. */
void *co_coll_alloc(size_t bytes);
void *co_coll_zalloc(size_t n, size_t size); /* zeroed, like calloc */
void co_coll_free(void *p);
/* The same cache for the nonblocking schedules' scratch memory, which outlives blocking calls:
 * these blocks are not among those an abandoned blocking call frees ("Mismatched calls"). */
void *co_coll_scratch(size_t bytes);
void co_coll_scratch_free(void *p);
/* A scratch buffer able to hold `count` elements of `dt` laid out as dt says; *base is what
 * to release (co_coll_free), the return value is what to pass as the buffer. */
void *co_coll_tmpbuf(co_dtype *dt, size_t count, void **base);

/* A peer's block of `got` bytes where this rank expects `want`: MPI_ERR_TRUNCATE if it is
 * larger, MPI_ERR_COUNT if it is smaller (the ranks' counts disagree), else MPI_SUCCESS. */
static inline int co_coll_sizes(uint64_t got, uint64_t want) {
    return got > want ? MPI_ERR_TRUNCATE : got < want ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* Typed local copy (sendbuf to recvbuf within one rank): MPI_ERR_TRUNCATE if the source
 * holds more bytes than the destination can take. */
int co_coll_copy(const void *src, size_t scount, co_dtype *sdt, void *dst, size_t rcount,
                 co_dtype *rdt);

/* Copy `count` elements of `dt` from one buffer to another of the same layout, touching
 * only the bytes the type covers. */
void co_coll_copy_same(const void *src, void *dst, size_t count, const co_dtype *dt);

/* A datatype whose memory image (count elements, gaps included) is at most twice its data
 * and whose elements do not overlap: shared-memory reductions copy such images raw. */
int co_coll_dense(const co_dtype *dt);
/* Bytes from the first to the last byte of `count` elements of dt. */
static inline size_t co_coll_span(const co_dtype *dt, size_t count) {
    if (!count) return 0;
    return (size_t)(dt->true_ub - dt->true_lb) + (count - 1) * (size_t)co_dt_extent(dt);
}

/* Address of element `i` of a buffer of dt (what to pass as a buffer for elements i..). */
static inline void *co_coll_elem(const void *buf, size_t i, const co_dtype *dt) {
    return (char *)buf + (MPI_Aint)i * co_dt_extent(dt);
}

/* A scan's vector of `count` elements as a chain of messages passes it on (Scan and Exscan's
 * linear algorithm, Iscan and Iexscan's schedule): from 4 ranks on in pieces of
 * COHORT_SCAN_PIECE bytes (at least one element), else whole. Every rank cuts it alike. */
typedef struct co_pieces {
    size_t each, n, count; /* elements a piece, pieces (at least 1), elements in all */
} co_pieces;
static inline co_pieces co_scan_pieces(size_t count, const co_dtype *dt, int nranks) {
    size_t piece = (size_t)co_st.cfg.scan_piece, each = count;
    if (piece && nranks > 3 && dt->size) each = CO_MAX(piece / dt->size, 1);
    if (each > count) each = count;
    co_pieces p = {each, each ? (count + each - 1) / each : 1, count};
    return p;
}
/* Piece k's elements and its address in buf. */
static inline size_t co_piece_count(const co_pieces *p, size_t k) {
    return k + 1 < p->n ? p->each : p->count - k * p->each;
}
static inline void *co_piece(const void *buf, const co_pieces *p, size_t k, const co_dtype *dt) {
    return co_coll_elem(buf, k * p->each, dt);
}

/* Combine n operand images in rank order: out = src[0] op src[1] op ... op src[n-1]; `out`
 * is a user buffer of dt (only its elements are written) and may be one of the sources. */
int co_coll_reduce_n(const co_op *op, co_dtype *dt, size_t count, const void *const *src, int n,
                     void *out);

/* An array for n operand pointers: `stack` (CO_COLL_SRCS entries) when that is enough, else
 * scratch memory (co_coll_free it when it is not `stack`). */
#define CO_COLL_SRCS 16
static inline const void **co_coll_srcs(int n, const void **stack) {
    if (n <= CO_COLL_SRCS) return stack;
    const void **p = co_coll_alloc((size_t)n * sizeof(*p));
    if (!p) co_fatal("out of memory in a reduction");
    return p;
}

/* Blocking wait on a batch of requests; the first error wins. */
int co_coll_waitall(int n, co_req **reqs);

/* ---- Shared-memory engine (cshm.c) --------------------------------------------------------- */
/* The segment of a communicator: a control block per rank (own cache lines) and data
 * buffers per rank, all in the heap slice of the communicator's rank 0. */
typedef struct co_cshm_ctl {
    _Atomic uint64_t step;  /* last step this rank completed (monotonic) */
    _Atomic uint64_t bytes; /* size of what it published (mismatch checks) */
    _Atomic uint64_t addr;  /* address of its user buffer (single-copy algorithms) */
    _Atomic uint64_t addr2;
    _Atomic uint64_t probe; /* set-up: its verdict on single copy (never reused) */
    _Atomic uint64_t pub;   /* step << 16 | call tag of what addr and bytes describe */
    char pad0[16];
    _Atomic uint64_t counter;  /* counter barrier: one add per arriving peer */
    _Atomic uint64_t icounter; /* the same for MPI_Ibarrier (nbc.c), counted apart */
    char pad1[48];
} co_cshm_ctl;

/* The signature of a rank's latest collective call (co_coll_watched): `call` is 0 while the
 * others are written; peers read it only after a long wait. Each rank's sits alone in
 * aligned pairs of cache lines, away from the lines peers poll and add to (a line that a
 * prefetcher drags along with a hot neighbour would cost its owner a miss on every call). */
typedef struct co_cshm_sig {
    _Atomic uint64_t call, what, bytes, chain;
    /* what and bytes of call - 1: a peer still in that call compares them with its own (a
     * rank that made it with a count of 0 has left it at once, and may wait nowhere) */
    _Atomic uint64_t prev_what, prev_bytes;
    /* the running hash of the nonblocking calls (co_coll_comm.nbc_chain), read by
     * MPI_Finalize only (coll.c, "MPI_Finalize's look back") */
    _Atomic uint64_t nbc_chain;
    char pad[8];
    /* call << 32 | class of a disagreement this rank found. In a line of its own: written
     * once, read by every peer after each call that copied from this rank (copied_from in
     * coll.c), where the line above changes with every call. */
    _Atomic uint64_t broken;
    /* The process whose end made this rank abandon that call (a single copy from or into it
     * found it gone), 0 for a disagreement; stored before the broken word. */
    _Atomic int32_t ended;
    char pad2[52];
    /* The call (cc->calls) in which this rank is writing into a peer's buffer by single copy
     * (co_cma_write), 0 otherwise. A rank that abandons that call waits until its peers'
     * words say otherwise before it leaves (coll.c, abandon). In a line of its own: written
     * around every single-copy write, read only by a rank that abandons a call. */
    _Atomic uint64_t writing;
    char pad3[120]; /* (to the end of an aligned pair of lines, see above) */
} co_cshm_sig;
_Static_assert(sizeof(co_cshm_sig) == 256 && offsetof(co_cshm_sig, broken) == 64 &&
                   offsetof(co_cshm_sig, writing) == 128,
               "a signature is two aligned pairs of cache lines, the broken and writing words "
               "alone in theirs");

typedef struct co_cshm_hdr {
    _Atomic int32_t released; /* members that freed the communicator */
    char pad[60];
} co_cshm_hdr;

#define CO_CSHM_NBUF 4

/* Every data buffer starts with this header. `seq` is the step the buffer's content belongs
 * to (shifted left by CO_CSHM_TAG_BITS) and the writer's call tag (co_cshm.tag), stored last
 * with release order: a reader polls it and finds up to 48 bytes of payload in the same cache
 * line (small collectives then cost one line transfer), and a reader whose own tag differs
 * knows the two ranks run different collectives or algorithms (co_coll_differ). `bytes` is
 * the writer's total size, so that a reader expecting another size reports the mismatch. */
typedef struct co_cshm_bufhdr {
    _Atomic uint64_t seq;
    uint64_t bytes;
} co_cshm_bufhdr;
#define CO_CSHM_HDR sizeof(co_cshm_bufhdr)

typedef struct co_cshm {
    int n, me;
    co_cshm_hdr *hdr;
    co_cshm_ctl *ctl; /* [n] */
    co_cshm_sig *sig; /* [n] */
    char *data;       /* n * NBUF * chunk */
    size_t chunk;     /* bytes per buffer, header included */
    uint64_t seq;     /* steps used so far on this communicator (the same on every rank) */
    uint64_t free_at[CO_CSHM_NBUF]; /* own buffer b is free once every step >= free_at[b] */
    uint64_t off;                   /* region offset in the master's heap slice */
    int owner;      /* this process was rank 0 at the set-up: the region is in its slice */
    size_t bytes;   /* region size */
    int cma;        /* single copy works between all members */
    int populated;  /* this process has mapped every page (co_cshm_populate) */
    pid_t *pids;    /* process of each rank */
    uint64_t *seen; /* a step each rank is known to have reached: spares reading its line */
    unsigned tag;   /* the running call: CO_CSHM_TAG */
} co_cshm;
/* A call tag: the low 7 bits of the call's number on the communicator (co_coll_comm.calls),
 * the collective + 1 and the algorithm + 1. The number makes a rank that skipped a call (count
 * 0 where the others pass more, which returns before any step) meet the others' data of
 * another call under another tag, instead of taking it for its own. */
#define CO_CSHM_TAG_BITS  16
#define CO_CSHM_TAG_MASK  ((1u << CO_CSHM_TAG_BITS) - 1)
#define CO_CSHM_TAG_CALLS 0x7fu /* the call number's bits */
#define CO_CSHM_TAG(kind, alg, call)                                                               \
    ((unsigned)((call)&CO_CSHM_TAG_CALLS) << 9 | (unsigned)((kind) + 1) << 4 |                     \
     (unsigned)((alg) + 1))
#define CO_CSHM_TAG_KIND(tag) ((int)((tag) >> 4 & 0x1f) - 1) /* -1 if none */
#define CO_CSHM_TAG_ALG(tag)  ((int)((tag)&0xf) - 1)
#define CO_CSHM_TAG_CALL(tag) ((unsigned)(tag) >> 9 & CO_CSHM_TAG_CALLS)

/* Rank q published data tagged `theirs` where this rank, in the same step, expects its own
 * tag: the calls disagree (another collective, or counts or settings that chose another
 * algorithm). Abandons the call with the matching error class (never returns). */
CO_NORETURN void co_coll_differ(int q, unsigned theirs, unsigned mine);

/* The communicator's segment, set up collectively on first use; NULL if unavailable. */
co_cshm *co_cshm_get(co_comm *c);
/* The payload bytes of a communicator segment's buffers: COHORT_COLL_SHM_CHUNK, at least 4 KiB
 * (so that a 256 KiB vector fits the four buffers of a one-step reduction). */
size_t co_cshm_full_cap(void);
/* Sets up the segment of lane (co_comm_lane of `of`), collectively over `of` (within one of
 * its watched calls, whose tags it takes), with buffers of rank 0's `cap` bytes (0: none);
 * NULL when rank 0 gave none or the heap slice has not half its room to spare for it. */
co_cshm *co_cshm_lane(co_comm *lane, co_comm *of, size_t cap);
static inline char *co_cshm_buf(const co_cshm *s, int rank, unsigned b) {
    return s->data + ((size_t)rank * CO_CSHM_NBUF + b) * s->chunk;
}
static inline char *co_cshm_data(const co_cshm *s, int rank, unsigned b) {
    return co_cshm_buf(s, rank, b) + CO_CSHM_HDR;
}
static inline size_t co_cshm_cap(const co_cshm *s) { /* payload bytes per buffer */
    return s->chunk - CO_CSHM_HDR;
}
/* Where in its buffer a payload of `len` bytes published as `step` starts. A payload of
 * CO_CSHM_SPREAD_MIN bytes or more that fits more than once moves on by its size every
 * second step, so that a buffer's lines are written again only after a few hundred KiB of
 * other payloads: writing lines that the reading core read a short while before costs more
 * (docs/collectives.md, "Spread payloads"). Writer and readers derive it from the size and
 * the step; a reader whose size differs reports that and uses nothing it read. */
#define CO_CSHM_SPREAD_MIN 2048u
/* The place within `room` bytes (the single-copy engine's inline blocks after its table). */
static inline size_t co_cshm_spread_in(size_t room, uint64_t step, size_t len) {
    if (len < CO_CSHM_SPREAD_MIN) return 0;
    size_t slot = (len + 63) & ~(size_t)63, k = room / slot;
    return k > 1 ? (size_t)(step / 2 % k) * slot : 0;
}
/* Maps every page of the region into this process at once, the first time a payload is
 * spread (which takes it round a whole buffer); once per communicator and process. Every
 * place that spreads `len` bytes calls co_cshm_spreading first. */
void co_cshm_populate(const co_cshm *s);
static inline void co_cshm_spreading(const co_cshm *s, size_t len) {
    if (CO_UNLIKELY(len >= CO_CSHM_SPREAD_MIN && !s->populated)) co_cshm_populate(s);
}
static inline size_t co_cshm_spread(const co_cshm *s, uint64_t step, size_t len) {
    co_cshm_spreading(s, len);
    return co_cshm_spread_in(co_cshm_cap(s), step, len);
}
/* Waiting: poll, run the progress engine, then yield (at once when ranks outnumber cores). */
uint64_t co_cshm_wait_word(const _Atomic uint64_t *w, uint64_t value); /* until *w >= value */
static inline void co_cshm_wait(const co_cshm *s, int rank, uint64_t step) {
    if (s->seen[rank] >= step) return;
    s->seen[rank] = co_cshm_wait_word(&s->ctl[rank].step, step);
}
void co_cshm_wait_all(const co_cshm *s, uint64_t step);
static inline void co_cshm_post(co_cshm *s, uint64_t step) {
    atomic_store_explicit(&s->ctl[s->me].step, step, memory_order_release);
}
/* Publishes this rank's running hash of nonblocking calls (co_coll_comm.nbc_chain). */
static inline void co_cshm_nb_publish(co_cshm *s, uint64_t chain) {
    atomic_store_explicit(&s->sig[s->me].nbc_chain, chain, memory_order_relaxed);
}
/* Elements of dt whose memory image fits one buffer: a round of the shared-memory reductions
 * (selection keeps them from types with larger elements). */
static inline size_t co_cshm_elems(const co_cshm *s, const co_dtype *dt) {
    size_t tex = (size_t)(dt->true_ub - dt->true_lb), cap = co_cshm_cap(s);
    if (cap < tex) co_fatal("shared-memory reduction chosen for an element larger than a buffer");
    return (cap - tex) / (size_t)co_dt_extent(dt) + 1;
}
/* The shared-memory reductions' round: elements [e0, e0+m) of every rank's operand, as raw
 * memory images (gaps included; dense types only). Publishes mine in own buffer b as `step`
 * (free again once every rank is past `free`); `spread`: at co_cshm_spread's place, for
 * callers that read images only through co_cshm_operands (with `spread` too). */
static inline void co_cshm_put_image(co_cshm *s, unsigned b, const void *in, size_t e0, size_t m,
                                     const co_dtype *dt, uint64_t step, uint64_t free, int spread);
/* A wide round: elements [r0, r0+m) of `in` as images in up to NBUF of my buffers, piece k
 * (per elements each) in buffer (g+k) % NBUF; returns the number of pieces. */
static inline size_t co_cshm_put_wide(co_cshm *s, uint64_t g, const void *in, size_t r0, size_t m,
                                      const co_dtype *dt, uint64_t step, uint64_t free, int spread);
/* The operands of such a round from element `from` on, as buffers to combine: mine from `in`,
 * ranks 0..last's from their buffer b once it holds `step`. A peer whose image is not as large
 * as mine (m elements) makes *rc MPI_ERR_TRUNCATE or MPI_ERR_COUNT (the counts disagree). */
static inline void co_cshm_operands(const co_cshm *s, unsigned b, uint64_t step, int last,
                                    const void *in, size_t e0, size_t m, size_t from,
                                    const co_dtype *dt, const void **src, int *rc, int spread);
/* Own buffer b for writing, once every rank is past the step at which its last readers
 * finish; returns its payload area. */
char *co_cshm_acquire(co_cshm *s, unsigned b);
/* The same without waiting: whether own buffer b is free for writing now. */
int co_cshm_free_now(co_cshm *s, unsigned b);
/* Publish own buffer b as step `step`: header size `bytes`, then its seq, then my step. The
 * buffer stays mine until every rank is past `free` (the step by which readers are done). */
void co_cshm_publish(co_cshm *s, unsigned b, uint64_t step, uint64_t bytes, uint64_t free);
/* The same under buffer tag `tag` (a nonblocking call's, not the running blocking call's),
 * without posting the step. */
void co_cshm_fill(co_cshm *s, unsigned b, uint64_t step, uint64_t bytes, uint64_t free,
                  unsigned tag);
/* Rank q's buffer b once it holds step `step` (or later); *bytes: the writer's size. A step
 * published under another tag than mine abandons the call (co_coll_differ), as does
 * co_cshm_next's. */
const char *co_cshm_read(const co_cshm *s, int q, unsigned b, uint64_t step, uint64_t *bytes);
/* The same without waiting: 1 and *bytes if buffer b of rank q holds step `step` (or later),
 * 0 if it holds an earlier one. */
int co_cshm_peek(const co_cshm *s, int q, unsigned b, uint64_t step, uint64_t *bytes);

/* The next rank (not marked in done[], which it then marks) whose buffer b holds step
 * `step`, waiting if none does yet. Readers take peers in the order they become ready: when
 * ranks outnumber cores, the one that ran first is usually not the next in rank order. */
int co_cshm_next(const co_cshm *s, unsigned b, uint64_t step, char *done, int *cursor);

typedef struct co_cshm_iter {
    char stack[128];
    char *done;
    int cursor;
} co_cshm_iter;
static inline void co_cshm_iter_init(co_cshm_iter *it, const co_cshm *s) {
    it->done = s->n <= 128 ? it->stack : co_coll_alloc((size_t)s->n);
    if (!it->done) co_fatal("out of memory");
    memset(it->done, 0, (size_t)s->n);
    it->done[s->me] = 1;
    it->cursor = s->me + 1 < s->n ? s->me + 1 : 0;
}
static inline void co_cshm_iter_fini(co_cshm_iter *it) {
    if (it->done != it->stack) co_coll_free(it->done);
}
/* Piece [off, off+len) of every peer q's block, from its buffer b (`slot` bytes into the
 * payload) once that holds `step`, into block q of rbuf (rcount of rdt per block), in the
 * order the peers become ready. A peer whose total differs from `bytes` sets *rc. */
void co_cshm_unpack_each(const co_cshm *s, unsigned b, uint64_t step, size_t slot, void *rbuf,
                         size_t rcount, co_dtype *rdt, size_t off, size_t len, uint64_t bytes,
                         int *rc);
/* for each peer q whose buffer b holds `step`, in the order they become ready */
#define CO_CSHM_EACH_READY(s, it, b, step, q)                                                      \
    for (int q; ((q) = co_cshm_next((s), (b), (step), (it)->done, &(it)->cursor)) >= 0;)

/* Two ranks sharing a single copy (one writes the head, the other reads the tail) gain only
 * above this many bytes; below, one side copies it all (a system call and a handshake
 * fewer). Measured for Bcast and Exscan: docs/collectives.md. */
#define CO_CMA_SPLIT_MIN (32 * 1024)

/* Single-copy reads costing this many nanoseconds or more (a process_vm_readv of 64 bytes,
 * COHORT_CMA_COST) make mid-size broadcasts cheaper through the shared buffers. They took
 * 1.2-1.8 µs on the later machine the table was measured on; on the earlier one a whole
 * two-rank single-copy Bcast of 8 KiB took 0.9 µs (docs/collectives.md, "Selection"). */
#define CO_CMA_COSTLY_NS 1000

/* Single copy between processes. A failure inside a collective call means the ranks' calls
 * disagree (a peer's address is not what this rank expects) and abandons the call
 * (co_coll_fail); elsewhere it is fatal. Each transfer notes the process (co_cma_note): a
 * watched call that made any checks, before it reports success, that none of those processes
 * abandoned the call meanwhile, since such a process may have returned and its user changed
 * the buffer while the copy ran (co_coll_watched). */
void co_cma_note(pid_t pid);
void co_cma_read(pid_t pid, void *local, const void *remote, size_t n);
/* Writes into the buffer of rank q of s. Within a watched call it first says so in this
 * rank's writing word, then checks that q has not abandoned the call: q, if it abandons the
 * call later, waits for the write to end before it returns (co_coll_write_begin). */
void co_cma_write(co_cshm *s, int q, const void *local, void *remote, size_t n);
uint64_t co_coll_write_begin(co_cshm *s, int q);
/* Called by the owner of a buffer before it publishes its address for peers' single-copy
 * reads or writes: with COHORT_CMA_HUGEPAGES=1, the 2 MiB pages wholly inside it are made
 * transparent huge pages (MADV_COLLAPSE) the second time they are exposed. The kernel pins
 * the pages of the process it copies from or into one by one, and huge ones pin much faster:
 * a process_vm_readv of 4 MiB took 180 µs from huge pages against 460; but making a page
 * huge costs 0.5-1 ms, hence off by default (docs/collectives.md). */
void co_cma_expose(const void *p, size_t n);
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1; older C library headers lack it */
#endif
/* The same read for one of cnt processes reading one buffer at once: in pieces (at least
 * CO_CMA_PIECE bytes, or a 32nd of the buffer), reader idx starting idx/cnt of the way in.
 * Readers that pin the same pages at the same moment slow each other down: a 4 MiB Bcast
 * at 4 ranks took 610 µs read whole, 290-340 spread (docs/collectives.md). */
#define CO_CMA_PIECE (64 * 1024)
void co_cma_read_spread(pid_t pid, void *local, const void *remote, size_t n, int idx, int cnt);
/* Internal broadcast that never selects (used by the segment set-up). */
int co_bcast_binomial(void *buf, size_t count, co_dtype *dt, int root, co_comm *c);

/* ---- Collectives (one file each) ----------------------------------------------------------- */
int co_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *c);
int co_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
              co_comm *c);
int co_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c);
int co_gather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
              co_dtype *rdt, int root, co_comm *c);
int co_gatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
               const int *displs, co_dtype *rdt, int root, co_comm *c);
int co_scatter(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
               co_dtype *rdt, int root, co_comm *c);
int co_scatterv(const void *sbuf, const int *scounts, const int *displs, co_dtype *sdt, void *rbuf,
                size_t rcount, co_dtype *rdt, int root, co_comm *c);
int co_allgather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                 co_dtype *rdt, co_comm *c);
int co_allgatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
                  const int *displs, co_dtype *rdt, co_comm *c);
int co_alltoall(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                co_dtype *rdt, co_comm *c);
int co_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, co_dtype *sdt,
                 void *rbuf, const int *rcounts, const int *rdispls, co_dtype *rdt, co_comm *c);
int co_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, co_dtype *dt, co_op *op,
                      co_comm *c);
int co_reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount, co_dtype *dt, co_op *op,
                            co_comm *c);
int co_scan(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c);
int co_exscan(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c);

/* base + off bytes, where base may be MPI_BOTTOM (NULL) and off an absolute address (the byte
 * displacements of the w-collectives), computed without arithmetic on a null pointer. */
static inline char *co_coll_at(const void *base, MPI_Aint off) {
    return (char *)((uintptr_t)base + (uintptr_t)off);
}

/* A collective call's arguments (root -1 for unrooted collectives). */
typedef struct co_coll_args {
    int kind, root;
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    co_dtype *sdt, *rdt;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    co_op *op;
    co_dtype *const *stypes, *const *rtypes; /* Alltoallw: a type per peer (displs in bytes) */
    const MPI_Aint *swdispls, *rwdispls;     /* Neighbor_alltoallw's byte displacements */
    int err; /* nonblocking: an error found at the call, reported at completion (the call runs:
              * a root whose own block does not fit leaves it out) */
} co_coll_args;
/* Runs collective call a (a co_coll_body: arg is a co_coll_args) without being watched: the
 * body of the MPI calls, and of co_coll_layer. */
int co_coll_dispatch(co_comm *c, const void *arg);
/* Whether a collective is called from outside any watched call (its body, or the segment's
 * set-up as it enters): by another layer (window creation and fences, files, checkpoints,
 * rank swaps), which then runs it through co_coll_layer so that it is watched as the
 * program's own calls are. */
static inline int co_coll_unwatched(void) {
    return CO_UNLIKELY(co_st.coll && !co_st.coll->bodies && !co_st.coll->cur);
}
/* ": " and why c's collectives broke (the message of the call that found it), or "" while
 * they work: for another layer's message about a collective of its own that failed. */
static inline const char *co_coll_broken_sep(const co_comm *c) {
    return c->coll && c->coll->broken ? ": " : "";
}
static inline const char *co_coll_broken_why(const co_comm *c) {
    return c->coll && c->coll->broken ? c->coll->broken_msg : "";
}
/* Another layer's collective call a on c, `bytes` per block as the MPI call would give
 * (0 for the v-variants), watched: on a communicator that an earlier disagreement broke it
 * fails at once, and a disagreement or a peer that found one ends it with that error class
 * (message in c->coll->broken_msg) instead of a wait that never ends. */
int co_coll_layer(co_comm *c, const co_coll_args *a, uint64_t bytes);
/* co_coll_layer for the collectives that move blocks (Gather, Scatter, Allgather, Alltoall). */
int co_coll_layer_move(co_comm *c, int kind, int root, const void *sbuf, size_t scount,
                       co_dtype *sdt, void *rbuf, size_t rcount, co_dtype *rdt, uint64_t bytes);
/* The same for any body (co_bcast_binomial's, which the registry does not name). */
int co_coll_layer_body(co_comm *c, int kind, int root, uint64_t bytes, co_coll_body body,
                       const void *arg);
/* Alltoallw is not in the registry: it has one way, every transfer posted at once (nbc.c,
 * which runs the blocking call too, on both kinds of communicator). */
#define CO_COLL_ALLTOALLW CO_COLL_KINDS
/* The neighbourhood collectives: not in the registry either; their schedules (nbc.c) run the
 * blocking calls too. The receive side follows the communicator's topology (in-neighbours),
 * the send side its out-neighbours; Neighbor_alltoallw's displacements are MPI_Aint (swdispls,
 * rwdispls). */
#define CO_COLL_NEIGHBOR_ALLGATHER  (CO_COLL_KINDS + 1)
#define CO_COLL_NEIGHBOR_ALLGATHERV (CO_COLL_KINDS + 2)
#define CO_COLL_NEIGHBOR_ALLTOALL   (CO_COLL_KINDS + 3)
#define CO_COLL_NEIGHBOR_ALLTOALLV  (CO_COLL_KINDS + 4)
#define CO_COLL_NEIGHBOR_ALLTOALLW  (CO_COLL_KINDS + 5)

/* The name of collective `kind` ("allreduce"), the ones outside the registry included
 * ("alltoallw", "neighbor_allgather"...). */
const char *co_coll_kind_name(int kind);
/* Takes nonblocking call a (its collective, root and operator) into cc's running hash of them
 * (co_coll_comm.nbc_chain), which MPI_Finalize compares between ranks. */
void co_coll_nb_record(co_coll_comm *cc, const co_coll_args *a);

/* Nonblocking collectives (nbc.c): starts call `a` on intracommunicator c as a schedule that
 * the progress engine advances; *out is its request (kind CO_REQ_COLL), which completes once
 * the schedule has run. MPI_SUCCESS, or MPI_ERR_NO_MEM when out of request handles. */
int co_nbc_start(co_comm *c, const co_coll_args *a, co_req **out);
/* A blocking neighbourhood collective (a->kind CO_COLL_NEIGHBOR_*) on c, which has a topology:
 * its transfers posted at once and waited for; the call's error class, or MPI_SUCCESS. */
int co_nbc_neighbor(co_comm *c, const co_coll_args *a);
/* MPI_Isendrecv (MPI 4) as a schedule: a receive and a send on c's point-to-point context
 * with the program's tags; the request (kind CO_REQ_COLL, mode CO_NBC_P2P) completes with the
 * receive's status. `own` is memory the schedule frees at its end (may be NULL). */
#define CO_NBC_P2P 1
int co_nbc_sendrecv(co_comm *c, const void *sbuf, size_t scount, co_dtype *sdt, int dest, int stag,
                    void *rbuf, size_t rcount, co_dtype *rdt, int source, int rtag, void *own,
                    co_req **out);
/* Persistent collectives (MPI 4, MPI_Bcast_init...): co_nbc_persistent prepares call `a` as an
 * inactive persistent request (kind CO_REQ_COLL) with its lane (NULL: none; nbc.c, "Persistent
 * collectives"), which it then owns, and takes the call's number on c as the nonblocking calls
 * do; co_nbc_restart runs it once more (r inactive). */
int co_nbc_persistent(co_comm *c, const co_coll_args *a, co_comm *lane, co_req **out);
/* Whether a nonblocking collective schedule is in flight at this process (a rank swap is
 * refused then). */
int co_nbc_active(void);

/* ---- Rank swaps (src/migrate) ---------------------------------------------------------------
 * After a swap has given this process's communicators new ranks (c->rank) and moved world
 * ranks between processes, every process calls this for each of its communicators with the
 * communicator ranks qa and qb that changed process (-1: not in c): the segment's own-rank
 * copy, its process table and what this process kept about its own buffers are brought up to
 * date. The segment's slots stay where they are: at a point where every rank has finished every
 * earlier call their contents agree (steps, counters) or are checked against the step before
 * use (published addresses), so the process that now holds rank qa just goes on with slot qa. */
void co_coll_renumber(co_comm *c, int qa, int qb);
/* The body of the watched call that an intracommunicator's persistent init call makes before
 * co_nbc_persistent (arg: a co_nbc_lane_args): sets *out to the request's lane, or leaves it
 * NULL (no lane: the runs go as messages). *out is set as soon as the lane exists, so that a
 * caller whose call was abandoned can free it (co_comm_lane_free). */
typedef struct co_nbc_lane_args {
    const co_coll_args *a;
    co_comm **out;
} co_nbc_lane_args;
int co_nbc_lane(co_comm *c, const void *arg);
void co_nbc_restart(co_req *r);
/* Whether a nonblocking call in flight on c uses c's shared-memory segment (a counter
 * MPI_Ibarrier, a call through the shared buffers). */
int co_nbc_uses_segment(const co_comm *c);
/* Waits until c's nonblocking calls through the shared buffers, if any are in flight, have
 * finished with them (before anything else takes the segment's later steps; nbc.c). */
void co_nbc_shm_drain(co_comm *c);
/* Installs the progress hook that advances the schedules; drops the schedules the program
 * never completed (MPI_Finalize). */
void co_nbc_init(void);
void co_nbc_fini(void);

/* Intercommunicators (inter.c): roots are MPI_ROOT, MPI_PROC_NULL or a remote rank, the
 * v-variants' arrays describe the other group's blocks; no MPI_IN_PLACE. */
int co_inter_barrier(co_comm *ic);
int co_inter_bcast(void *buf, size_t count, co_dtype *dt, int root, co_comm *ic);
int co_inter_reduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                    co_comm *ic);
int co_inter_allreduce(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op,
                       co_comm *ic);
int co_inter_gather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                    co_dtype *rdt, int root, co_comm *ic);
int co_inter_scatter(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                     co_dtype *rdt, int root, co_comm *ic);
int co_inter_allgather(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, size_t rcount,
                       co_dtype *rdt, co_comm *ic);
int co_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, co_dtype *dt,
                            co_op *op, co_comm *ic);
int co_inter_reduce_scatter_block(const void *sbuf, void *rbuf, size_t rcount, co_dtype *dt,
                                  co_op *op, co_comm *ic);

/* Shared pieces used by more than one collective. */
/* Reduce-scatter of `count` elements split in blocks cnt[i] at element offset dsp[i]: every
 * rank ends with block `rank` reduced, in `out` (a buffer for cnt[rank] elements). */
int co_rs_ring(const void *sbuf, void *out, const size_t *cnt, const size_t *dsp, size_t count,
               co_dtype *dt, co_op *op, co_comm *c);
int co_rs_shm(const void *sbuf, void *out, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c);
int co_rs_run(const void *sbuf, void *rbuf, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c, int kind);
int co_scan_run(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                int excl);
/* Single copy (cma.c, cma_reduce.c). */
int co_cma_fits(const co_cshm *s, int n);
int co_cma_gatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf, const int *rcounts,
                   const int *displs, co_dtype *rdt, int root, co_comm *c);
int co_cma_scatterv(const void *sbuf, const int *scounts, const int *displs, co_dtype *sdt,
                    void *rbuf, size_t rcount, co_dtype *rdt, int root, co_comm *c);
int co_cma_allgatherv(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c);
int co_cma_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, co_dtype *sdt,
                     void *rbuf, const int *rcounts, const int *rdispls, co_dtype *rdt, co_comm *c);
int co_rs_cma(const void *in, void *out, const size_t *cnt, const size_t *dsp, size_t count,
              co_dtype *dt, co_op *op, co_comm *c);
int co_reduce_cma(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                  co_comm *c);
int co_scan_cma(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                int excl);
int co_scan_chain(const void *in, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c,
                  int excl);
/* count elements in n blocks as even as possible (the first count % n one larger): block i
 * has cnt[i] elements from element dsp[i]. */
void co_coll_blocks(size_t count, int n, size_t *cnt, size_t *dsp);
/* n equal blocks of `count` elements: counts c[0..n), displacements c[n..2n) (block i at
 * i * count); co_coll_uniform puts them in *stack if n <= 64, else in scratch memory. */
void co_coll_uniform_fill(int n, size_t count, int *c);
int *co_coll_uniform(int n, size_t count, int *stack, int **displs);
/* The algorithm to run instead of `alg`, whose v-variant core takes int displacements, for n
 * blocks of `bytes` each: `alg` while the last block starts below element 2^31 (judged in
 * bytes, which every rank knows alike), else `safe`, which counts in size_t; the segment's
 * tag follows the change. */
int co_coll_uniform_alg(co_comm *c, int kind, int alg, size_t bytes, int safe);
/* Allgatherv through the shared buffers and with every transfer posted at once
 * (allgatherv.c; also Allgather's "shm" and "linear"). */
int co_allgatherv_shm(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c);
int co_allgatherv_linear(const void *sbuf, size_t scount, co_dtype *sdt, void *rbuf,
                         const int *rcounts, const int *displs, co_dtype *rdt, co_comm *c);
/* Combines elements [lo, hi) of a wide round (elements [r0, r0+m) that every rank put with
 * co_cshm_put_wide at `step`, with `spread` as here) over all ranks, in rank order, into
 * `out`: a typed buffer starting at element lo, or, when NULL (and not spread), my own copy
 * of those elements in my buffers (which no other rank may be reading). MPI_SUCCESS, or the
 * class of disagreeing sizes. */
int co_cshm_fold(co_cshm *s, uint64_t g, uint64_t step, const void *in, size_t r0, size_t m,
                 size_t lo, size_t hi, co_dtype *dt, co_op *op, const void **src, void *out,
                 int spread);
/* Shared-memory reduction engine for reduce (root >= 0) and allreduce (root < 0). */
int co_reduce_shm(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                  co_comm *c);

static inline void co_cshm_put_image(co_cshm *s, unsigned b, const void *in, size_t e0, size_t m,
                                     const co_dtype *dt, uint64_t step, uint64_t free, int spread) {
    char *d = co_cshm_acquire(s, b);
    size_t span = co_coll_span(dt, m);
    if (spread) d += co_cshm_spread(s, step, span);
    memcpy(d, (const char *)co_coll_elem(in, e0, dt) + dt->true_lb, span);
    co_cshm_publish(s, b, step, span, free);
}

static inline size_t co_cshm_put_wide(co_cshm *s, uint64_t g, const void *in, size_t r0, size_t m,
                                      const co_dtype *dt, uint64_t step, uint64_t free,
                                      int spread) {
    size_t per = co_cshm_elems(s, dt), pieces = (m + per - 1) / per;
    for (size_t k = 0; k < pieces; k++)
        co_cshm_put_image(s, (unsigned)((g + k) % CO_CSHM_NBUF), in, r0 + k * per,
                          CO_MIN(per, m - k * per), dt, step, free, spread);
    return pieces;
}

static inline void co_cshm_operands(const co_cshm *s, unsigned b, uint64_t step, int last,
                                    const void *in, size_t e0, size_t m, size_t from,
                                    const co_dtype *dt, const void **src, int *rc, int spread) {
    size_t span = co_coll_span(dt, m), at = spread ? co_cshm_spread(s, step, span) : 0;
    for (int q = 0; q <= last; q++) {
        if (q == s->me) {
            src[q] = co_coll_elem(in, from, dt);
            continue;
        }
        uint64_t qb;
        const char *img = co_cshm_read(s, q, b, step, &qb) + at;
        src[q] = img - dt->true_lb + (MPI_Aint)(from - e0) * co_dt_extent(dt);
        if (!*rc) *rc = co_coll_sizes(qb, span);
    }
}

#endif /* CO_COLL_H */
