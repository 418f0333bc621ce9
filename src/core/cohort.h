/* The internal umbrella header: the types every layer shares (objects behind MPI handles,
 * requests, the one process-wide state struct) and the core services (errors, settings,
 * progress, logging). Layers include this and their own folder's header, nothing above. */
#ifndef CO_COHORT_H
#define CO_COHORT_H

#include "mpi.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CO_LIKELY(x)    __builtin_expect(!!(x), 1)
#define CO_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define CO_CACHELINE    64
#define CO_ALIGNED      __attribute__((aligned(CO_CACHELINE)))
#define CO_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define CO_NORETURN     __attribute__((noreturn))
#define CO_MIN(a, b)    ((a) < (b) ? (a) : (b))
#define CO_MAX(a, b)    ((a) > (b) ? (a) : (b))
#define CO_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Tags of the collective context (src/coll/coll.h): those of the blocking collectives lie
 * below this one, the nonblocking ones' from it up */
#define CO_COLL_TAG_NBC (1 << 28)

/* ---- Handles --------------------------------------------------------------------------------
 * A handle is kind(5 bits) << 26 | generation(6 bits) << 20 | slot(20 bits). The generation
 * changes each time a slot is reused, so that a stale handle to a freed object is caught. */
#define CO_HANDLE_KIND(h)               (((unsigned)(h) >> 26) & 0x1f)
#define CO_HANDLE_GEN(h)                (((unsigned)(h) >> 20) & 0x3f)
#define CO_HANDLE_SLOT(h)               ((unsigned)(h)&0xfffff)
#define CO_HANDLE_MAKE(kind, gen, slot) ((int)(((kind) << 26) | ((gen) << 20) | (slot)))
#define CO_HTAB_CHUNK                   1024
#define CO_HTAB_MAX_SLOTS               0x100000
#define CO_HTAB_REST                    64 /* freed slots that rest before one is reused */

typedef struct co_htab {
    int kind;
    void ***chunks;     /* chunk c, entry i: object pointer of slot c*CHUNK+i (NULL: free) */
    uint8_t **gens;     /* generation of each slot */
    uint32_t nchunks;   /* chunks allocated */
    uint32_t next;      /* first never-used slot */
    uint32_t *freelist; /* ring of freed slots, oldest at fhead */
    uint32_t fhead, nfree, freecap;
    uint32_t live; /* objects currently in the table */
} co_htab;

int co_htab_insert(co_htab *t, void *obj);              /* new handle, or 0 if full */
void co_htab_set(co_htab *t, unsigned slot, void *obj); /* predefined objects */
void *co_htab_get(const co_htab *t, int handle);        /* NULL if stale or invalid */
void co_htab_remove(co_htab *t, int handle);
void co_htab_destroy(co_htab *t);
/* The object in slot `slot` (below t->next), or NULL: for walking a whole table. */
static inline void *co_htab_at(const co_htab *t, uint32_t slot) {
    return t->chunks[slot / CO_HTAB_CHUNK][slot % CO_HTAB_CHUNK];
}

/* Info objects (info.c). */
typedef struct co_info_kv {
    char *key, *val;
} co_info_kv;
typedef struct co_info {
    int handle;
    int n, cap;
    co_info_kv *kv; /* in the order of each key's first Info_set */
} co_info;
int co_info_init(void);                             /* MPI_INFO_ENV, at MPI_Init */
co_info *co_info_create(void);                      /* empty; NULL when out of memory or handles */
co_info *co_info_create_env(int argc, char **argv); /* MPI_Info_create_env's */
co_info *co_info_get(MPI_Info h);
const char *co_info_lookup(const co_info *in, const char *key);
int co_info_set(co_info *in, const char *key, const char *value);
int co_info_delete(co_info *in, const char *key); /* -1: no such key */
co_info *co_info_dup(const co_info *in);
void co_info_free(co_info *in);

/* ---- Objects --------------------------------------------------------------------------------- */
typedef struct co_dtype co_dtype; /* src/dtype/dtype.h */
typedef struct co_op co_op;       /* src/op/op.h */
typedef struct co_comm co_comm;   /* src/comm/comm.h */
typedef struct co_group co_group;
typedef struct co_req co_req;

/* Error handlers and groups are shared: the communicators that use one and every handle the
 * program holds for it each count in refcount. One handle value serves all of the program's
 * references, and user_refs counts those: the handle goes (and is an error to use) once the
 * program has freed as many as it was given, even while communicators keep the object, so that
 * freeing a handle once too often is refused instead of taking a communicator's reference. */
typedef struct co_errhandler {
    int handle; /* 0 while the program holds none */
    int refcount;
    int user_refs;
    int builtin; /* 1: ERRORS_ARE_FATAL, 2: ERRORS_RETURN, 0: user function */
    MPI_Comm_errhandler_function *fn;
} co_errhandler;

/* ---- Groups and communicators (shared by p2p, coll and comm) -------------------------------- */
struct co_group {
    int handle; /* 0 while the program holds none (MPI_GROUP_EMPTY's stays) */
    int refcount;
    int user_refs; /* see co_errhandler */
    int size;
    int rank;                      /* this process's rank in the group, or MPI_UNDEFINED */
    int *world;                    /* group rank -> world rank */
    co_group *all_prev, *all_next; /* every group of this process (co_st.all_groups) */
};

struct co_idpool;
struct co_topo;
struct co_coll_comm;
struct co_attr;

struct co_comm {
    int handle;
    int refcount;   /* 1 for the handle, plus one per request or probed message using it */
    int rank, size; /* in the local group */
    int is_inter;
    co_group *local;
    co_group *remote; /* intercommunicators: the other side */
    const int *peers; /* world rank of each rank that sends address (remote group if inter) */
    int npeers;
    int master_proc; /* process slot of its master (who holds its ID pool), fixed at creation */
    co_comm *all_prev, *all_next; /* every communicator of this process (co_st.all_comms) */
    uint64_t id;                  /* job-unique, from the tree of ID pools */
    uint64_t ctx; /* match context of point-to-point traffic; ctx|1 is collective traffic */
    co_errhandler *errh;
    char name[MPI_MAX_OBJECT_NAME];
    struct co_topo *topo;
    struct co_idpool *pool;
    uint32_t coll_seq;
    /* A collective on it found the ranks disagreeing: messages of it may still arrive, so
     * its ID (hence its contexts) is never given to another communicator. */
    int quarantined;
    struct co_coll_comm *coll;
    struct co_attr *attrs;
    /* communicator layer (src/comm): the ID stream and intercommunicator helpers */
    uint64_t stream_next; /* ID reserved for the next dup-like creation on this communicator */
    int stream_pending;   /* a stream message from the master is still to be received */
    co_comm *local_comm;  /* intercommunicator: its local group as a hidden intracommunicator */
    int idup_pending;     /* MPI_Comm_idup calls on it waiting for the master's stream message */
};

/* A communicator's name for messages. */
static inline const char *co_comm_label(const co_comm *c) {
    return c->name[0] ? c->name : "an unnamed communicator";
}

/* ---- Requests -------------------------------------------------------------------------------- */
enum co_req_kind {
    CO_REQ_SEND = 1,
    CO_REQ_RECV,
    CO_REQ_COLL,
    CO_REQ_PSEND,
    CO_REQ_PRECV,
    CO_REQ_GREQ /* a generalized request (MPI_Grequest_start), completed by the program */
};
/* CO_MODE_RNDV: standard mode, but by rendezvous whatever the size (collectives' own sends,
 * where both processes sharing the copy beats the eager copy through the queue).
 * CO_MODE_PULL: standard mode, but a rendezvous leaves the whole single copy to the receiver
 * (a root handing one buffer to several readers at once, which would otherwise copy its share
 * of every reader's copy in turn). */
enum co_send_mode {
    CO_MODE_STD = 0,
    CO_MODE_SYNC,
    CO_MODE_READY,
    CO_MODE_BUFFERED,
    CO_MODE_RNDV,
    CO_MODE_PULL
};

typedef struct co_status {
    int source, tag, error;
    int cancelled;
    int deadlock; /* error is MPI_ERR_OTHER because the job deadlocked (co_deadlock_due) */
    size_t bytes;
} co_status;

struct co_req {
    int handle;
    uint8_t kind;
    uint8_t complete;   /* set when the operation finished (status valid) */
    uint8_t user_freed; /* MPI_Request_free was called: release on completion */
    uint8_t persistent; /* Send_init/Recv_init: survives completion until freed */
    uint8_t active;     /* persistent requests: started and not yet completed */
    uint8_t mode;       /* send mode (co_send_mode) */
    uint8_t internal;   /* owned by a layer (collectives), never seen by the user */
    uint8_t matched;    /* receive: matched to a message; no longer cancellable */
    uint8_t shared;     /* the one shared "completed send" request: never freed */
    uint8_t rdv_whole;  /* send: its reader copies it whole (0: not decided yet, 1: no, 2: yes) */
    uint8_t listed;     /* MPI_Waitall/Testall: seen in the array already (reset before return) */
    co_comm *comm;
    void *buf;
    size_t count;
    co_dtype *dt;
    int peer; /* rank in comm (destination or source, may be ANY_SOURCE) */
    int tag;
    uint64_t ctx;
    co_status status;
    /* send side */
    int peer_proc;     /* the peer's process slot (co_proc_of of its world rank) */
    void *tmp;         /* send: buffered-send copy; receive: the sender's layout (p2p.c) */
    size_t bytes;      /* total packed bytes of the message */
    size_t done_bytes; /* fallback rendezvous: bytes moved so far */
    uint64_t remote_cookie;
    int pending; /* queued in a pending-send list (ring was full) */
    /* large messages: the shared rendezvous slot both sides copy through (p2p.c) */
    void *rdv;
    int rdv_slot;         /* sender: index of its slot, -1 if none */
    uint64_t remote_addr; /* receiver: the sender's contiguous data */
    /* queue links (posted-receive queue, pending sends) */
    co_req *next, *prev;
    /* completion hook for layers that build on requests */
    void (*on_complete)(co_req *r);
    void *cb_arg;
    void (*on_free)(co_req *r); /* releases what the layer keeps in cb_arg */
};

/* ---- Settings (src/core/config.c) ------------------------------------------------------------
 * One table; `cohort info` and the README's list are generated from it. */
typedef enum { CO_CFG_INT, CO_CFG_SIZE, CO_CFG_BOOL, CO_CFG_STR } co_cfg_type;

typedef struct co_config {
    long eager_limit;
    long shm_ring_cells;
    long shm_data_bytes;
    long heap_slice;
    int cma;
    long cma_min_run;
    long spin_count;
    long poll_yield_us;
    int log_level;
    int line_buffer;
    int bind;
    char barrier_algorithm[32];
    char bcast_algorithm[32];
    char reduce_algorithm[32];
    char allreduce_algorithm[32];
    char gather_algorithm[32];
    char gatherv_algorithm[32];
    char scatter_algorithm[32];
    char scatterv_algorithm[32];
    char allgather_algorithm[32];
    char allgatherv_algorithm[32];
    char alltoall_algorithm[32];
    char alltoallv_algorithm[32];
    char reduce_scatter_algorithm[32];
    char reduce_scatter_block_algorithm[32];
    char scan_algorithm[32];
    char exscan_algorithm[32];
    long coll_shm_chunk;
    int coll_populate;
    int shm_populate;
    long nbc_allreduce_split;
    long scan_piece;
    long id_batch;
    long id_space;
    long cma_cost;
    int cma_hugepages;
    long deadlock_ms;
    long ckpt_level;
    int ckpt_shuffle;
    char emu_topology[512];
    int bcast_tune;
    char tune_db[512];
    int tune_again;
} co_config;

typedef struct co_setting {
    const char *name; /* without the COHORT_ prefix */
    co_cfg_type type;
    const char *def;
    size_t offset;
    size_t size; /* for strings */
    const char *doc;
} co_setting;

extern const co_setting co_settings[];
extern const size_t co_settings_count;
int co_config_load(co_config *cfg, char *err, size_t errlen);
void co_config_format(const co_config *cfg, const co_setting *s, char *out, size_t len);
long co_parse_size(const char *s, int *ok);

/* ---- Logging -------------------------------------------------------------------------------- */
enum { CO_LOG_ERROR = 0, CO_LOG_WARN, CO_LOG_INFO, CO_LOG_DEBUG };
void co_log(int level, const char *fmt, ...) CO_PRINTF(2, 3);
#define co_debug(...)                                                                              \
    do {                                                                                           \
        if (CO_UNLIKELY(co_st.cfg.log_level >= CO_LOG_DEBUG)) co_log(CO_LOG_DEBUG, __VA_ARGS__);   \
    } while (0)

/* ---- Errors (src/core/error.c) ----------------------------------------------------------------
 */
/* Reports an error of class `cls` raised by MPI function `fn` through `comm`'s error handler
 * (MPI_COMM_WORLD's if comm is NULL) and returns the error code for the caller to return. */
int co_error(co_comm *comm, const char *fn, int cls, const char *fmt, ...) CO_PRINTF(4, 5);
/* The same through error handler eh (NULL: ERRORS_ARE_FATAL), whose function gets `handle`
 * (a communicator's, or a window's: src/rma). */
int co_error_v(co_errhandler *eh, int handle, const char *fn, int cls, const char *fmt, va_list ap);
const char *co_error_class_name(int cls);
const char *co_error_class_text(int cls);
/* "MPI_Xxx: reason" of the latest error of class cls raised on this process, or "". */
const char *co_error_last_reason(int cls);
/* Error classes and codes added by the program (numbers above MPI_ERR_LASTCODE): a new class,
 * a new code of class cls (which the caller has checked is a class: co_error_code_class(cls)
 * == cls), the class of any code (-1 if none), a code's text (set: 0, or -1 if not an added
 * code; get: NULL if not an added code, "" if it has none) and the last number used. Adding
 * returns -1 when out of memory. */
int co_error_add_class(void);
int co_error_add_code(int cls);
int co_error_code_class(int code);
int co_error_set_text(int code, const char *text);
const char *co_error_user_text(int code);
int co_error_last_used(void);
/* Ends the job: `kind` (CO_ABORT_* in boot.h) tells mpiexec what happened. */
CO_NORETURN void co_abort_job(int code, int kind, const char *msg);
CO_NORETURN void co_fatal(const char *fmt, ...) CO_PRINTF(1, 2);

/* ---- Progress (src/core/progress.c) -----------------------------------------------------------
 */
int co_progress(void);            /* one pass over every transport; returns events handled */
void co_progress_wait(co_req *r); /* progress until r completes */
/* The same; p2p: idle passes before yielding as for the program's own point-to-point
 * requests (co_st.p2p_spin, what co_progress_wait takes for them) rather than
 * COHORT_SPIN_COUNT's. */
void co_progress_wait_as(co_req *r, int p2p);
/* Run by a wait on r now and then (every CO_WAIT_CHECK_PASSES idle passes): a user receive
 * that no message can match any more, since its source (or, for MPI_ANY_SOURCE, every other
 * rank) has called MPI_Finalize, or a send waiting for a receiver that has, completes with
 * MPI_ERR_OTHER (src/p2p). */
void co_p2p_wait_check(co_req *r);
void co_progress_wait_flag(const volatile int *flag, int value); /* until *flag >= value */

/* Deadlocks (docs/runtime.md, "Deadlocks"). A rank that has waited long says so in its control
 * block at every periodic check; when every rank of the job has waited through the same
 * checks without doing anything, mpiexec declares a deadlock. Each wait's own periodic check
 * then asks co_deadlock_due, says where it waits with co_deadlock_claim (which returns once
 * mpiexec has printed the list of all ranks) and fails with MPI_ERR_OTHER; a wait without
 * such a check ends the job at its next one. Later waits within the same MPI call fail at
 * their first check. */
int co_deadlock_due(void);
void co_deadlock_claim(const char *fmt, ...) CO_PRINTF(1, 2);
/* The error message of a wait failed by a deadlock, with where this rank waits. */
const char *co_deadlock_reason(void);
/* Said by a wait's check that will act once some time has passed, not on what the other
 * ranks do: the deadlock watch must not take the wait for a quiet one meanwhile. */
void co_wait_timed(void);
/* Ends the job for a deadlock, saying where this rank waits (after co_deadlock_claim). */
CO_NORETURN void co_deadlock_end(void);

typedef struct co_backoff {
    unsigned idle;       /* idle passes since the wait last found something to do */
    unsigned checked_at; /* the pass that ran the last periodic check (0: none since then) */
    uint64_t check_ns;   /* a yielding wait's next check by the clock (0: not set yet) */
    int p2p; /* a wait for the program's own point-to-point requests: co_st.p2p_spin passes */
} co_backoff;
void co_backoff_idle(co_backoff *b); /* called after a pass that found nothing to do */
/* An idle pass that yields at once (ranks outnumber cores), with the same periodic check. */
void co_backoff_yield(co_backoff *b);
/* A nonblocking call (MPI_Test, MPI_Iprobe...) found nothing. When ranks outnumber cores and
 * such calls have found nothing for COHORT_POLL_YIELD_US, with no request started or
 * completed in between, the CPU goes to whoever this rank may be waiting for, as a blocking
 * wait's idle pass does (docs/runtime.md, "Waiting"). */
void co_poll_missed(void);
#define CO_WAIT_CHECK_PASSES 1024u
/* A wait that yields also checks this often, whatever its pass count: on a loaded machine
 * 1024 yields can take seconds (each may hand the core over for a whole time slice). */
#define CO_WAIT_CHECK_NS 10000000ull
static inline void co_backoff_reset(co_backoff *b) {
    *b = (co_backoff){.p2p = b->p2p};
}
/* Whether r is the program's own point-to-point request (not a collective's). */
static inline int co_req_user_p2p(const co_req *r) {
    return r->kind != CO_REQ_COLL && r->kind != CO_REQ_GREQ && !r->internal && !(r->ctx & 1);
}
/* Whether the idle pass just made (co_backoff_idle or _yield) ran the wait's periodic check:
 * the caller's own check of what it waits for must run on the same pass, since the deadlock
 * watch takes a second check without an answer for a wait that has none. */
static inline int co_backoff_check_due(const co_backoff *b) {
    return b->checked_at && b->checked_at == b->idle;
}
static inline void co_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* ---- Timers and pages ------------------------------------------------------------------------ */
double co_wtime(void);
uint64_t co_now_ns(void);
/* Map the pages over [p, p+len) into this process now, for writing or for reading, with one
 * madvise (MADV_POPULATE_WRITE/READ) instead of a page fault per page at first touch. A
 * kernel that refuses the advice (before 5.14) leaves them to be faulted in. */
void co_map_pages(const void *p, size_t len, int write);

/* ---- The one process-wide state ------------------------------------------------------------- */
struct co_seg;
struct co_p2p_state;
struct co_coll_state;
struct co_comm_state;
struct co_ckpt_state;
struct co_emu;
struct co_tune_state;

#define CO_DEADLOCK_WHERE 160 /* bytes of co_deadlock_claim's text */

struct cohort_state {
    int initialized; /* MPI_Init has completed */
    int finalized;
    int shutting_down; /* MPI_Finalize releases what is left: no program callbacks any more */
    int thread_level;
    int world_rank, world_size;
    /* This process's slot in the job: its launch rank, where its queues, control block and
     * shared heap are. World ranks are identities that MPIX_Swap_ranks can exchange between
     * two processes (src/migrate); slots never change. */
    int proc;
    int *proc_of;        /* world rank -> slot; NULL while every rank is at its own slot */
    int *world_of;       /* slot -> world rank (NULL with proc_of) */
    int appnum;          /* which program of an MPMD job (`mpiexec a : b`) this rank runs */
    int local_cpus;      /* CPUs in this process's affinity mask */
    int oversubscribed;  /* more ranks on this node than CPUs: yield early */
    uint64_t poll_since; /* when nonblocking calls began to find nothing (0: they did not) */
    unsigned shm_spin;   /* idle passes before a collective waiting on shared memory yields
                            (cfg.spin_count, but fewer by default when ranks outnumber CPUs) */
    unsigned p2p_spin;   /* the same for a wait on the program's point-to-point requests */
    int launched;        /* started by mpiexec (not a singleton) */
    co_config cfg;
    struct co_seg *seg;
    co_htab comms, groups, dtypes, ops, reqs, errhs, infos, msgs, wins;
    struct co_p2p_state *p2p;
    struct co_coll_state *coll;
    struct co_ckpt_state *ckpt; /* checkpoint regions (src/ckpt) */
    struct co_emu *emu;         /* emulated links, NULL unless COHORT_EMU_TOPOLOGY (src/xport) */
    struct co_tune_state *tune; /* broadcast tree searches of this run (src/tune) */
    struct co_comm_state *cm;   /* communicator layer: ID pools, attribute keys */
    co_comm *world, *self;
    /* every group and communicator object, hidden ones included (a rank swap renumbers them) */
    co_group *all_groups;
    co_comm *all_comms;
    co_errhandler *errh_fatal, *errh_return;
    int in_error_handler;
    /* a user reduction function is running (co_op_apply): the datatype handle it was given
     * may be one the program has freed since it started a nonblocking or persistent call,
     * and the type queries still answer for it */
    int in_user_op;
    /* a receive of a blocking collective (collective context, tag below CO_COLL_TAG_NBC) got
     * another size than its count: this rank's later sends in the call carry nothing, so that
     * the ranks after it report the mismatch too instead of taking what it could not get for
     * data (p2p.c). 0: armed, src/coll sets it at every collective call's start; -1: off,
     * outside collective calls (communicator construction expects its own sizes) and while an
     * algorithm that passes a shortfall on in its own way runs (bcast.c) */
    int coll_short;
    const char *api_fn; /* the MPI function this rank is in (CO_ENTER), for deadlock reports */
    uint64_t api_calls; /* MPI calls made so far (CO_ENTER) */
    /* the deadlock watch (progress.c): this rank's stretch and check counts; the deadlock
     * generation it has answered, the one it is answering, and the MPI call that failed */
    uint32_t quiet_stretch, quiet_checks;
    uint32_t dl_seen, dl_pending, dl_stretch;
    uint64_t dl_call;
    uint32_t dl_self_stretch; /* a singleton's watch: its current quiet stretch, */
    uint64_t dl_self_since;   /* and when it began */
    char dl_where[CO_DEADLOCK_WHERE];
    void *bsend_buf; /* MPI_Buffer_attach */
    int bsend_size;
    int bsend_pending; /* buffered sends not yet delivered */
    char processor_name[MPI_MAX_PROCESSOR_NAME];
    /* hooks that upper layers install for the progress engine */
    int (*coll_progress)(void);
    /* installed by src/coll: releases a communicator's collective state; the communicator
     * layer calls it (if set) when it destroys a communicator */
    void (*coll_comm_free)(co_comm *c);
    /* installed by src/coll: the program has freed a communicator that requests still use
     * (it is destroyed later); what no later call can need goes now */
    void (*coll_comm_freed)(co_comm *c);
    /* installed by src/coll: called now and then (every CO_WAIT_CHECK_PASSES idle passes) by a
     * rank that has waited long, to find ranks whose collective calls disagree */
    void (*wait_check)(void);
    /* installed by src/coll: a long wait on a schedule's request (MPI_Isendrecv) checks the
     * point-to-point transfers the schedule waits for, as a wait on them would */
    void (*sched_wait_check)(co_req *r);
};

extern struct cohort_state co_st;

/* The slot of the process that holds world rank w now, and the world rank held at slot p. */
static inline int co_proc_of(int w) {
    return co_st.proc_of ? co_st.proc_of[w] : w;
}
static inline int co_world_of(int p) {
    return co_st.world_of ? co_st.world_of[p] : p;
}

/* A request started or completed: a run of nonblocking calls that found nothing ends. */
static inline void co_poll_active(void) {
    co_st.poll_since = 0;
}

/* Initialisation steps of each layer, in the order co_init calls them */
int co_init(int *argc, char ***argv, int required, int *provided);
int co_finalize(void);
int co_dtype_init(void);
void co_dtype_fini(void);
int co_op_init(void);
void co_op_fini(void);
int co_comm_init(void);
int co_comm_finalize_attrs(void); /* MPI_Finalize's first step: SELF's and WORLD's attributes */
void co_comm_fini(void);
int co_p2p_init(void);
void co_p2p_fini(void);
/* Progress until no outgoing message waits for queue room (MPI_Finalize, before its barrier:
 * a peer that has passed the barrier no longer drains its queues). */
void co_p2p_flush(void);
int co_coll_init(void);
void co_coll_fini(void);
int co_rma_init(void);
void co_rma_fini(void); /* windows the program never freed: their memory goes */
int co_io_init(void);
void co_io_fini(void);   /* files the program never closed: closed */
void co_ckpt_fini(void); /* the registered checkpoint regions are forgotten */
void co_tune_fini(void); /* what the broadcast tuner learned is stored (src/tune) */
int co_emu_init(char *err, size_t errlen); /* emulated links (src/xport/emu.h) */
void co_emu_fini(void);
int co_barrier(co_comm *comm);
/* src/coll: MPI_Finalize's barrier, watched like a user's collective call (a rank that waits
 * for a peer whose collectives broke down stops waiting); skipped on a world whose collectives
 * broke down (coll.h, "Mismatched calls"), where the ranks may disagree on its barriers. After
 * it, each communicator's signatures are compared with the peers' (src/coll/coll.c,
 * "MPI_Finalize's look back"): a disagreement that no call reported is described in why
 * (empty if none). */
int co_coll_final_barrier(co_comm *world, char *why, size_t len);

#endif /* CO_COHORT_H */
