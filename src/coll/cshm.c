/* The shared-memory collective engine: a segment per communicator, set up on first use in
 * the heap slice of the communicator's rank 0 (every rank maps the whole job segment, so an
 * offset is all the others need). It holds one control block per rank, whose `step` word
 * that rank alone writes and everyone else polls, and CO_CSHM_NBUF data buffers per rank.
 *
 * Steps: every shared-memory collective uses a fixed number of steps (known to every rank
 * from its arguments), numbered from a per-communicator sequence that all ranks advance
 * alike; a rank posts the last step it has completed. Waiting for "rank q reached step x"
 * is the only synchronisation, and since steps never go back no flag is ever reset. A rank
 * reuses one of its buffers only after every rank is past the step at which that buffer's
 * readers finish (free_at), so a fast rank can run several collectives ahead. */
#include "coll.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define CMA_MAGIC 0x636f686f72742121ull

static uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

/* After co_st.shm_spin idle passes give the CPU away (when ranks outnumber cores, by default
 * two passes or none: the rank we wait for most likely waits for our core). */
static void idle_pass(co_backoff *b) {
    if (co_progress())
        co_backoff_reset(b);
    else if (b->idle >= co_st.shm_spin)
        co_backoff_yield(b);
    else
        co_backoff_idle(b);
}

uint64_t co_cshm_wait_word(const _Atomic uint64_t *w, uint64_t value) {
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    if (v >= value) return v;
    co_backoff b = {0};
    while ((v = atomic_load_explicit(w, memory_order_acquire)) < value) idle_pass(&b);
    return v;
}

void co_cshm_wait_all(const co_cshm *s, uint64_t step) {
    for (int q = 0; q < s->n; q++) co_cshm_wait(s, q, step);
}

/* The step in header word v (noted in seen[q]). A word at or past the awaited step was
 * written in this call (a writer reuses a buffer only once its readers are done with it), so
 * its tag must be mine; an earlier, stale one may carry any tag. */
static inline uint64_t header_step(const co_cshm *s, int q, uint64_t v, uint64_t step) {
    uint64_t st = v >> CO_CSHM_TAG_BITS;
    if (st > s->seen[q]) s->seen[q] = st;
    unsigned tag = (unsigned)(v & CO_CSHM_TAG_MASK);
    if (st >= step && CO_UNLIKELY(tag != s->tag)) co_coll_differ(q, tag, s->tag);
    return st;
}

static inline int buf_ready(const co_cshm *s, int q, unsigned b, uint64_t step) {
    const co_cshm_bufhdr *h = (const co_cshm_bufhdr *)co_cshm_buf(s, q, b);
    return header_step(s, q, atomic_load_explicit(&h->seq, memory_order_acquire), step) >= step;
}

int co_cshm_next(const co_cshm *s, unsigned b, uint64_t step, char *done, int *cursor) {
    int n = s->n;
    co_backoff bo = {0};
    for (;;) {
        int pending = 0;
        for (int k = 0; k < n; k++) {
            int q = *cursor + k < n ? *cursor + k : *cursor + k - n;
            if (done[q]) continue;
            pending = 1;
            if (buf_ready(s, q, b, step)) {
                done[q] = 1;
                *cursor = q + 1 < n ? q + 1 : 0;
                return q;
            }
        }
        if (!pending) return -1;
        idle_pass(&bo);
    }
}

void co_cshm_unpack_each(const co_cshm *s, unsigned b, uint64_t step, size_t slot, void *rbuf,
                         size_t rcount, co_dtype *rdt, size_t off, size_t len, uint64_t bytes,
                         int *rc) {
    size_t rext = (size_t)co_dt_extent(rdt) * rcount;
    co_cshm_iter it;
    co_cshm_iter_init(&it, s);
    CO_CSHM_EACH_READY(s, &it, b, step, q) {
        uint64_t qb;
        const char *d = co_cshm_read(s, q, b, step, &qb);
        if (!*rc) *rc = co_coll_sizes(qb, bytes);
        co_dt_unpack(rdt, rcount, (char *)rbuf + rext * (size_t)q, off, d + slot, len);
    }
    co_cshm_iter_fini(&it);
}

char *co_cshm_acquire(co_cshm *s, unsigned b) {
    co_cshm_wait_all(s, s->free_at[b]);
    return co_cshm_data(s, s->me, b);
}

int co_cshm_free_now(co_cshm *s, unsigned b) {
    for (int q = 0; q < s->n; q++) {
        if (s->seen[q] >= s->free_at[b]) continue;
        uint64_t v = atomic_load_explicit(&s->ctl[q].step, memory_order_acquire);
        if (v < s->free_at[b]) return 0;
        s->seen[q] = v;
    }
    return 1;
}

void co_cshm_fill(co_cshm *s, unsigned b, uint64_t step, uint64_t bytes, uint64_t free,
                  unsigned tag) {
    co_cshm_bufhdr *h = (co_cshm_bufhdr *)co_cshm_buf(s, s->me, b);
    h->bytes = bytes;
    atomic_store_explicit(&h->seq, step << CO_CSHM_TAG_BITS | tag, memory_order_release);
    s->free_at[b] = free;
}

void co_cshm_publish(co_cshm *s, unsigned b, uint64_t step, uint64_t bytes, uint64_t free) {
    co_cshm_fill(s, b, step, bytes, free, s->tag);
    co_cshm_post(s, step);
}

const char *co_cshm_read(const co_cshm *s, int q, unsigned b, uint64_t step, uint64_t *bytes) {
    co_cshm_bufhdr *h = (co_cshm_bufhdr *)co_cshm_buf(s, q, b);
    /* q published a step, so it reached it (header_step notes it in seen[q]) */
    header_step(s, q, co_cshm_wait_word(&h->seq, step << CO_CSHM_TAG_BITS), step);
    if (bytes) *bytes = h->bytes;
    return (const char *)h + CO_CSHM_HDR;
}

int co_cshm_peek(const co_cshm *s, int q, unsigned b, uint64_t step, uint64_t *bytes) {
    const co_cshm_bufhdr *h = (const co_cshm_bufhdr *)co_cshm_buf(s, q, b);
    if (header_step(s, q, atomic_load_explicit(&h->seq, memory_order_acquire), step) < step)
        return 0;
    *bytes = h->bytes;
    return 1;
}

static void cma_fail(const char *what, pid_t pid, int err) {
    if (err == ESRCH) { /* the peer is gone (crashed or killed): say so, not "disagree" */
        char msg[128];
        snprintf(msg, sizeof(msg), "%s of process %d failed: that process has ended", what,
                 (int)pid);
        co_coll_fail_ended(pid, msg);
        co_fatal("%s", msg);
    }
    /* inside a collective call, a bad address means the ranks' calls disagree: the call is
     * abandoned (coll.c); elsewhere it is an internal error */
    co_coll_fail(MPI_ERR_OTHER,
                 "%s of process %d failed (%s): the ranks' calls of this collective disagree "
                 "(different collectives, roots or counts)",
                 what, (int)pid, strerror(err));
    co_fatal("%s of process %d failed (%s); set COHORT_CMA=0 to avoid single-copy transfers", what,
             (int)pid, strerror(err));
}

void co_cma_note(pid_t pid) {
    co_coll_state *S = co_st.coll;
    if (!S || S->cma_n < 0) return;
    for (int i = 0; i < S->cma_n; i++)
        if (S->cma_pids[i] == pid) return;
    if (S->cma_n == (int)CO_ARRAY_LEN(S->cma_pids))
        S->cma_n = -1;
    else
        S->cma_pids[S->cma_n++] = pid;
}

void co_cma_read(pid_t pid, void *local, const void *remote, size_t n) {
    co_cma_note(pid);
    struct iovec l = {local, n}, r = {(void *)remote, n};
    int e = n ? co_shm_cma_read(pid, &l, 1, &r, 1) : 0;
    if (e) cma_fail("process_vm_readv", pid, -e);
}

#define HUGE_SHIFT 21   /* 2 MiB pages */
#define HUGE_SEEN  1024 /* pages remembered (open addressing); beyond, nothing more is done */
#define HUGE_AFTER 2    /* a page is made huge the second time it is exposed */

void co_cma_expose(const void *p, size_t n) {
    static uintptr_t seen[HUGE_SEEN];
    static unsigned char uses[HUGE_SEEN];
    static int nseen;
    if (!co_st.cfg.cma_hugepages) return;
    uintptr_t lo = ((uintptr_t)p + (1u << HUGE_SHIFT) - 1) >> HUGE_SHIFT,
              hi = ((uintptr_t)p + n) >> HUGE_SHIFT;
    for (uintptr_t pg = lo; pg < hi; pg++) {
        size_t h = (size_t)(pg * 0x9e3779b97f4a7c15ull >> 54) % HUGE_SEEN;
        while (seen[h] && seen[h] != pg) h = (h + 1) % HUGE_SEEN;
        if (!seen[h]) {
            if (nseen >= HUGE_SEEN / 2) return;
            seen[h] = pg;
            nseen++;
        }
        /* Making a page huge costs a copy of it (0.5-1 ms here), which only pays when the
         * buffer is used again and again: wait for its second use, then try once. Failures
         * (no huge page free, THP switched off, an odd mapping) leave the page as it was. */
        if (uses[h] >= HUGE_AFTER || ++uses[h] < HUGE_AFTER) continue;
        void *a = (void *)(pg << HUGE_SHIFT);
        if (madvise(a, (size_t)1 << HUGE_SHIFT, MADV_HUGEPAGE) == 0)
            (void)madvise(a, (size_t)1 << HUGE_SHIFT, MADV_COLLAPSE);
    }
}

void co_cma_read_spread(pid_t pid, void *local, const void *remote, size_t n, int idx, int cnt) {
    size_t piece = CO_MAX(CO_CMA_PIECE, n / 32);
    if (cnt < 2 || n < 2 * piece) {
        co_cma_read(pid, local, remote, n);
        return;
    }
    size_t np = (n + piece - 1) / piece, first = np * (size_t)idx / (size_t)cnt;
    for (size_t k = 0; k < np; k++) {
        size_t i = first + k < np ? first + k : first + k - np, off = i * piece;
        co_cma_read(pid, (char *)local + off, (const char *)remote + off, CO_MIN(piece, n - off));
    }
}

void co_cma_write(co_cshm *s, int q, const void *local, void *remote, size_t n) {
    pid_t pid = s->pids[q];
    co_cma_note(pid);
    uint64_t guarded = co_coll_write_begin(s, q);
    struct iovec l = {(void *)local, n}, r = {remote, n};
    int e = n ? co_shm_cma_write(pid, &l, 1, &r, 1) : 0;
    if (e) cma_fail("process_vm_writev", pid, -e);
    if (guarded) atomic_store_explicit(&s->sig[s->me].writing, 0, memory_order_release);
}

size_t co_cshm_full_cap(void) {
    return round_up((uint64_t)CO_MAX(co_st.cfg.coll_shm_chunk, 4096) + CO_CSHM_HDR, CO_CACHELINE) -
           CO_CSHM_HDR;
}

static uint64_t heap_free(const co_shm_heap *h) {
    uint64_t f = 0;
    for (size_t i = 0; i < h->nfree; i++) f += h->free[i].len;
    return f;
}

/* Spread payloads (co_cshm_spread) go round a whole buffer in its first 64 steps, reaching a
 * new page of it at nearly every step, in the writer and in every reader. On a virtual
 * machine a page fault can cost ten times what the same page costs mapped by madvise
 * (docs/collectives.md, "Pages of the segment"), so the first such payload maps the whole
 * region into this process in one system call per area: my control words and buffers for
 * writing, the others' buffers for reading. The flag only records this process's page
 * tables. Kernels older than 5.14 refuse the advice; the pages then come by faults. */
void co_cshm_populate(const co_cshm *cs) {
    co_cshm *s = (co_cshm *)cs;
    s->populated = 1;
    if (!co_st.cfg.coll_populate) return;
    size_t ctl_bytes = (size_t)(s->data - (char *)s->hdr);
    size_t own = CO_CSHM_NBUF * s->chunk, mine = (size_t)s->me * own;
    co_map_pages(s->hdr, ctl_bytes, 1);
    co_map_pages(s->data, mine, 0);
    co_map_pages(s->data + mine + own, s->bytes - ctl_bytes - mine - own, 0);
    co_map_pages(s->data + mine, own, 1);
}

/* Set-up, collective over c: rank 0 allocates and broadcasts the offset (or failure) and the
 * buffers' size, `cap` bytes of payload each (0: none, the set-up fails); then everyone
 * probes single-copy reads from rank 0 and the verdicts are combined through the segment
 * itself, so that every rank takes the same algorithms afterwards. A lane's segment (`of`:
 * the lane's communicator, which carries the broadcast; NULL for c's own) is made only while
 * the heap slice keeps half its room for communicators. */
static co_cshm *setup(co_comm *c, size_t cap, co_comm *of) {
    co_coll_state *S = co_st.coll;
    int n = c->size;
    size_t chunk = round_up((uint64_t)cap + CO_CSHM_HDR, CO_CACHELINE);
    size_t sig_at = round_up(sizeof(co_cshm_hdr) + (size_t)n * sizeof(co_cshm_ctl), 128);
    size_t ctl_bytes = round_up(sig_at + (size_t)n * sizeof(co_cshm_sig), 4096);
    size_t bytes = ctl_bytes + (size_t)n * CO_CSHM_NBUF * chunk;
    int master = co_proc_of(c->local->world[0]); /* its process slot */
    char *slice = co_seg_heap(co_st.seg, master);
    uint64_t off = CO_SHM_HEAP_FAIL;
    if (c->rank == 0 && cap && (!of || heap_free(&S->heap) >= bytes + S->heap.size / 2)) {
        off = co_shm_heap_alloc(&S->heap, bytes);
        if (off != CO_SHM_HEAP_FAIL) {
            char *base = slice + off;
            memset(base, 0, ctl_bytes);
            /* a reused region may hold old steps in its buffer headers, which would pass
             * for published ones */
            for (size_t k = 0; k < (size_t)n * CO_CSHM_NBUF; k++)
                memset(base + ctl_bytes + k * chunk, 0, CO_CSHM_HDR);
            co_cshm_ctl *ctl0 = (co_cshm_ctl *)(base + sizeof(co_cshm_hdr));
            atomic_store(&ctl0->addr2, CMA_MAGIC);
            atomic_store(&ctl0->addr, (uint64_t)(uintptr_t)&ctl0->addr2);
        } else if (!of) {
            co_log(CO_LOG_INFO,
                   "no room for a %zu-byte collective segment in the heap slice "
                   "(COHORT_HEAP_SLICE); communicator %s uses point-to-point collectives",
                   bytes, c->name);
        }
    }
    co_dtype *u64 = co_dt_get(MPI_UINT64_T);
    uint64_t got[2] = {off, chunk};
    if (co_bcast_binomial(got, 2, u64, 0, of ? of : c)) return NULL;
    off = got[0], chunk = got[1], bytes = ctl_bytes + (size_t)n * CO_CSHM_NBUF * chunk;
    if (off == CO_SHM_HEAP_FAIL) return NULL;
    co_cshm *s = calloc(1, sizeof(*s));
    if (!s) co_fatal("out of memory");
    s->pids = malloc((size_t)n * sizeof(pid_t));
    s->seen = calloc((size_t)n, sizeof(uint64_t));
    if (!s->pids || !s->seen) co_fatal("out of memory");
    s->n = n;
    s->me = c->rank;
    s->owner = c->rank == 0;
    s->off = off;
    s->bytes = bytes;
    s->chunk = chunk;
    char *base = slice + off;
    s->hdr = (co_cshm_hdr *)base;
    s->ctl = (co_cshm_ctl *)(base + sizeof(co_cshm_hdr));
    s->sig = (co_cshm_sig *)(base + sig_at);
    s->data = base + ctl_bytes;
    s->pids[0] = co_st.seg->ranks[master].pid; /* rank 0 is past MPI_Init: it sent `off` */
    uint64_t ok = co_st.cfg.cma ? 1 : 2;
    if (c->rank != 0 && ok == 1) {
        uint64_t v = 0;
        const void *remote = (const void *)(uintptr_t)atomic_load(&s->ctl[0].addr);
        struct iovec l = {&v, sizeof(v)}, r = {(void *)remote, sizeof(v)};
        if (process_vm_readv(s->pids[0], &l, 1, &r, 1, 0) != (ssize_t)sizeof(v) || v != CMA_MAGIC)
            ok = 2;
    }
    if (c->rank != 0) atomic_store(&s->ctl[s->me].probe, ok);
    co_coll_comm_of(c)->shm = s; /* freed with the communicator if the wait is abandoned */
    co_cshm_post(s, 1);
    co_cshm_wait_all(s, 1);
    /* everyone is past MPI_Init now, so every pid is published */
    for (int q = 0; q < n; q++) s->pids[q] = co_st.seg->ranks[co_proc_of(c->local->world[q])].pid;
    s->cma = ok == 1;
    for (int q = 1; q < n; q++)
        if (atomic_load(&s->ctl[q].probe) != 1) s->cma = 0;
    s->seq = 1;
    return s;
}

co_cshm *co_cshm_get(co_comm *c) {
    co_coll_comm *cc = co_coll_comm_of(c);
    if (CO_LIKELY(cc->shm_state > 0)) return cc->shm;
    if (cc->shm_state < 0) return NULL;
    cc->shm = setup(c, co_cshm_full_cap(), NULL);
    cc->shm_state = cc->shm ? 1 : -1;
    if (cc->shm) co_cshm_nb_publish(cc->shm, cc->nbc_chain); /* (calls made before it) */
    return cc->shm;
}

co_cshm *co_cshm_lane(co_comm *lane, co_comm *of, size_t cap) {
    co_coll_comm *cc = co_coll_comm_of(lane);
    cc->shm = setup(lane, cap, of);
    cc->shm_state = cc->shm ? 1 : -1;
    return cc->shm;
}
