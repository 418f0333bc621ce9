/* Shared-memory transport: one single-producer/single-consumer queue per ordered pair of
 * ranks, plus the single-copy primitive for large messages. It moves cells and bytes and
 * knows nothing of matching; p2p gives every cell its meaning.
 *
 * A queue is a ring of 64-byte header cells and a ring of payload bytes. Every header cell
 * begins with a sequence word (the cell's absolute position + 1) that the producer stores
 * last, with release order, so the consumer polls a single cache line per queue and a
 * message of up to 32 bytes travels in that same line. Larger payloads sit contiguously in
 * the payload ring. The consumer's positions live in one line the producer reads only when
 * it believes the queue is full. */
#ifndef CO_SHM_H
#define CO_SHM_H

#include "../boot/boot.h"
#include "../core/cohort.h"

#include <string.h>
#include <sys/uio.h>

#define CO_CELL_INLINE_MAX  32
#define CO_CELL_FLAG_INLINE 0x1

typedef struct co_cell {
    _Atomic uint64_t seq;
    uint64_t ctx;
    int32_t src;
    int32_t tag;
    uint32_t len;
    uint16_t kind;
    uint16_t flags;
    union {
        unsigned char data[CO_CELL_INLINE_MAX];
        uint64_t w[4]; /* w[0]: payload position when not inline; w[1..3]: protocol words */
    } u;
} co_cell;

_Static_assert(sizeof(co_cell) == 64, "a cell is one cache line");

typedef struct co_shm_ctl {
    _Atomic uint64_t head;      /* consumer: next header cell to read */
    _Atomic uint64_t data_head; /* consumer: first payload byte still in use */
    char pad[48];
} co_shm_ctl;

typedef struct co_shm_out { /* producer's private view of one outgoing queue */
    co_cell *cells;
    char *data;
    co_shm_ctl *ctl;
    uint64_t tail, data_tail;
    uint64_t head_cache, data_head_cache;
    uint64_t mapped; /* payload bytes mapped into this process so far (co_shm_map) */
} co_shm_out;

typedef struct co_shm_in { /* consumer's private view of one incoming queue */
    co_cell *cells;
    char *data;
    co_shm_ctl *ctl;
    uint64_t head, data_head;
    uint64_t mapped; /* as co_shm_out's */
} co_shm_in;

typedef struct co_shm {
    co_seg *seg;
    int rank, nranks;
    uint64_t cell_mask, data_mask, data_bytes;
    co_shm_out *out; /* by destination */
    co_shm_in *in;   /* by source */
    int *active;     /* sources polled, in round-robin order */
    int nactive;
    int next_poll;
    int cma_ok; /* process_vm_readv works between our ranks */
} co_shm;

/* The handler returns nothing; the cell and its payload are released when it returns. */
typedef void (*co_shm_handler)(int src, const co_cell *cell, const void *payload);

int co_shm_init(co_shm *s, co_seg *seg, int rank, int use_cma, int populate);

/* On its first trip round a payload ring, each side maps the pages it is about to use
 * CO_SHM_MAP_WINDOW bytes at a time with one madvise (MADV_POPULATE_WRITE for the producer,
 * _READ for the consumer) instead of taking one page fault per page: on a virtual machine a
 * fault can cost ten times as much (docs/runtime.md, "Pages of the rings"). `end` is the
 * ring position that must be mapped; *mapped becomes UINT64_MAX once the whole ring is. */
#define CO_SHM_MAP_WINDOW 32768
void co_shm_map(const co_shm *s, char *ring, uint64_t *mapped, uint64_t end, int write);
void co_shm_fini(co_shm *s);

/* Reserve a cell (and `len` payload bytes) towards `dst`; NULL when the queue is full.
 * *payload points where the payload must be written (inside the cell if inline_ok and
 * len <= CO_CELL_INLINE_MAX). Fill the cell's fields, then co_shm_publish. */
static inline co_cell *co_shm_claim(co_shm *s, int dst, size_t len, int inline_ok, void **payload) {
    co_shm_out *o = &s->out[dst];
    if (o->tail - o->head_cache > s->cell_mask) {
        o->head_cache = atomic_load_explicit(&o->ctl->head, memory_order_acquire);
        if (o->tail - o->head_cache > s->cell_mask) return NULL;
    }
    co_cell *c = &o->cells[o->tail & s->cell_mask];
    if (inline_ok && len <= CO_CELL_INLINE_MAX) {
        c->flags = CO_CELL_FLAG_INLINE;
        *payload = c->u.data;
        return c;
    }
    c->flags = 0;
    if (len == 0) {
        *payload = NULL;
        c->u.w[0] = o->data_tail;
        return c;
    }
    uint64_t need = (len + 63) & ~(uint64_t)63;
    uint64_t pos = o->data_tail;
    uint64_t off = pos & s->data_mask;
    if (off + need > s->data_bytes) pos += s->data_bytes - off; /* never wrap a payload */
    if (pos + need - o->data_head_cache > s->data_bytes) {
        o->data_head_cache = atomic_load_explicit(&o->ctl->data_head, memory_order_acquire);
        if (pos + need - o->data_head_cache > s->data_bytes) return NULL;
    }
    c->u.w[0] = pos;
    *payload = o->data + (pos & s->data_mask);
    if (CO_UNLIKELY(pos + need > o->mapped)) co_shm_map(s, o->data, &o->mapped, pos + need, 1);
    return c;
}

static inline void co_shm_publish(co_shm *s, int dst, co_cell *c) {
    co_shm_out *o = &s->out[dst];
    if (!(c->flags & CO_CELL_FLAG_INLINE) && c->len)
        o->data_tail = c->u.w[0] + (((uint64_t)c->len + 63) & ~(uint64_t)63);
    uint64_t seq = ++o->tail;
    atomic_store_explicit(&c->seq, seq, memory_order_release);
}

/* Copies n bytes of a payload out of the payload ring into dst. A payload starts on a cache
 * line and takes whole lines, so its last line may be read whole: a copy whose last load
 * straddles two lines that the sender has just written (n above 64 and not a multiple of 64,
 * as memcpy's overlapping tail load does) waits for the two lines one after the other. A
 * 2-rank ping-pong of 65-127 bytes took 0.40 µs instead of 0.30 for 128 (docs/runtime.md). */
static inline void co_shm_copy_out(void *dst, const void *payload, size_t n) {
    size_t whole = n & ~(size_t)63;
    if (n <= 64 || whole == n) {
        memcpy(dst, payload, n);
        return;
    }
    memcpy(dst, payload, whole);
    _Alignas(64) unsigned char line[64];
    memcpy(line, (const char *)payload + whole, sizeof(line));
    memcpy((char *)dst + whole, line, n - whole);
}

/* Handle every message waiting in the incoming queues (a bounded number per queue). */
int co_shm_poll(co_shm *s, co_shm_handler h);

/* Single copy between our memory (local) and process pid's (remote), both described by
 * iovecs: read copies remote into local, write local into remote, until either side's list
 * ends; short copies and interruptions are continued. 0 or -errno (-EIO: no progress). */
int co_shm_cma_read(pid_t pid, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote);
int co_shm_cma_write(pid_t pid, const struct iovec *local, int nlocal, const struct iovec *remote,
                     int nremote);

/* What one small single-copy read costs on this machine, in nanoseconds: the least of 32
 * timed process_vm_readv calls of 64 bytes from this process (its fixed cost: the system
 * call, the lookup of the process and the pinning of its pages). 0 when the call fails. */
long co_shm_cma_probe_ns(void);

#endif /* CO_SHM_H */
