/* Bootstrap: the job segment through which the ranks of one machine find each other. The
 * launcher (or a singleton process) creates it as an anonymous memfd, so no file ever exists
 * in /dev/shm; ranks inherit the descriptor, map it and close it. The segment holds a header,
 * one control block per rank, the per-pair message queues, rendezvous slots and a per-rank
 * shared heap. */
#ifndef CO_BOOT_H
#define CO_BOOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CO_SEG_MAGIC   0x31305452484f4f43ull /* "COOHRT01" */
#define CO_SEG_VERSION 2

enum co_rank_state {
    CO_RANK_NEW = 0,   /* not yet in MPI_Init */
    CO_RANK_RUNNING,   /* MPI_Init done */
    CO_RANK_FINALIZED, /* MPI_Finalize done */
    CO_RANK_ABORTED,   /* MPI_Abort or a fatal error */
    CO_RANK_FINALIZING /* in MPI_Finalize: its messages are sent, it makes no more calls */
};

enum co_abort_kind { CO_ABORT_CALLED = 1, CO_ABORT_FATAL_ERROR, CO_ABORT_INTERNAL };

typedef struct co_rank_ctl {
    _Atomic int32_t state;
    int32_t pid;
    int32_t abort_code;
    int32_t cpu;        /* core the launcher bound it to, or -1 */
    int32_t abort_kind; /* CO_ABORT_* */
    /* The collective call this rank has waited in long, if any (src/coll, "waits"): odd
     * `wait_gen` while it waits there, the communicator's ID, the call's number and kind. */
    _Atomic int32_t wait_kind;
    _Atomic uint64_t wait_gen;
    _Atomic uint64_t wait_comm;
    _Atomic uint64_t wait_call;
    /* The deadlock watch (src/core/progress.c, tools/mpiexec.c). `quiet`: a rank that has
     * waited long stores (stretch << 32 | checks) at every periodic check of a wait, where
     * `stretch` changes whenever it has done something since its last check. `dl_ack`: the
     * deadlock generation for which it has written where it waits (co_seg_note). */
    _Atomic uint64_t quiet;
    _Atomic uint32_t dl_ack;
    /* 1 + the world rank this process holds (its launch rank until a rank swap moves another
     * rank here, src/migrate); 0 before MPI_Init. mpiexec names ranks by it. */
    _Atomic int32_t world1;
} co_rank_ctl;
_Static_assert(sizeof(co_rank_ctl) == 64, "a rank's control block is one cache line");

typedef struct co_seg_hdr {
    uint64_t magic;
    uint32_t version;
    uint32_t nranks;
    uint64_t size;
    uint64_t off_ranks, off_ring_ctl, off_cells, off_data, off_rdv, off_heap;
    uint64_t ring_cells; /* header cells per ordered pair (power of two) */
    uint64_t data_bytes; /* payload bytes per ordered pair (power of two) */
    uint64_t eager_limit;
    uint64_t heap_slice;
    uint64_t job_id;
    _Atomic int32_t abort_rank; /* first rank that aborted, or -1 */
    _Atomic int32_t abort_code;
    uint64_t off_notes; /* CO_SEG_NOTE bytes per rank: where it waits, for mpiexec's report */
    /* mpiexec's deadlock watch: `dl_gen` counts the deadlocks it has declared; `dl_done` is
     * the generation whose report it has printed (the ranks then fail their waits). */
    _Atomic uint32_t dl_gen;
    _Atomic uint32_t dl_done;
} co_seg_hdr;

typedef struct co_seg {
    char *base;
    size_t size;
    int nranks;
    co_seg_hdr *hdr;
    co_rank_ctl *ranks;
} co_seg;

typedef struct co_seg_params {
    int nranks;
    long ring_cells;
    long data_bytes;
    long eager_limit;
    long heap_slice;
} co_seg_params;

/* Whether world rank w has entered MPI_Finalize (or finished it): it had sent its messages
 * before it said so, and sends nothing more but MPI_Finalize's barrier on MPI_COMM_WORLD's
 * collective context. What it stored before is visible once this says so. */
static inline int co_seg_state(const co_seg *seg, int w) {
    return atomic_load_explicit(&seg->ranks[w].state, memory_order_acquire);
}
static inline int co_seg_finalizing(const co_seg *seg, int w) {
    int st = co_seg_state(seg, w);
    return st == CO_RANK_FINALIZING || st == CO_RANK_FINALIZED;
}

/* Launcher side (mpiexec, or a singleton): create and initialise; returns the memfd. */
int co_seg_create(const co_seg_params *p, co_seg *seg, char *err, size_t errlen);
/* Rank side: map an inherited segment descriptor. */
int co_seg_attach(int fd, co_seg *seg, char *err, size_t errlen);
void co_seg_detach(co_seg *seg);
void co_seg_mark_abort(co_seg *seg, int rank, int code, int kind);

/* Rendezvous slots: each rank owns CO_RDV_SLOTS cache lines through which a large message's
 * sender and receiver share out the copy (see p2p.c). */
#define CO_RDV_SLOTS 1024
static inline void *co_seg_rdv_slot(const co_seg *seg, int rank, unsigned slot) {
    return seg->base + seg->hdr->off_rdv + ((uint64_t)rank * CO_RDV_SLOTS + slot) * 64;
}

#define CO_SEG_NOTE 192 /* a rank's note: "MPI_Xxx: " and where it waits */
static inline char *co_seg_note(const co_seg *seg, int rank) {
    return seg->base + seg->hdr->off_notes + (uint64_t)rank * CO_SEG_NOTE;
}

/* The halves of a rank's `quiet` word. */
static inline uint32_t co_quiet_stretch(uint64_t q) {
    return (uint32_t)(q >> 32);
}
static inline uint32_t co_quiet_checks(uint64_t q) {
    return (uint32_t)q;
}

static inline void *co_seg_at(const co_seg *seg, uint64_t off) {
    return seg->base + off;
}
static inline char *co_seg_heap(const co_seg *seg, int rank) {
    return seg->base + seg->hdr->off_heap + (uint64_t)rank * seg->hdr->heap_slice;
}

#endif /* CO_BOOT_H */
