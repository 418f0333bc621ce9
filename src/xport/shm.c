/* Shared-memory transport (see shm.h): queue set-up, polling, and the single-copy read. */
#include "shm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static size_t ring_index(const co_seg *seg, int dst, int src) {
    return (size_t)dst * (size_t)seg->nranks + (size_t)src;
}

int co_shm_init(co_shm *s, co_seg *seg, int rank, int use_cma, int populate) {
    memset(s, 0, sizeof(*s));
    co_seg_hdr *h = seg->hdr;
    s->seg = seg;
    s->rank = rank;
    s->nranks = seg->nranks;
    s->cell_mask = h->ring_cells - 1;
    s->data_bytes = h->data_bytes;
    s->data_mask = h->data_bytes - 1;
    s->out = calloc((size_t)s->nranks, sizeof(*s->out));
    s->in = calloc((size_t)s->nranks, sizeof(*s->in));
    s->active = calloc((size_t)s->nranks, sizeof(*s->active));
    if (!s->out || !s->in || !s->active) return -1;
    for (int p = 0; p < s->nranks; p++) {
        size_t ro = ring_index(seg, p, rank), ri = ring_index(seg, rank, p);
        s->out[p].cells = (co_cell *)co_seg_at(seg, h->off_cells + ro * h->ring_cells * 64);
        s->out[p].data = co_seg_at(seg, h->off_data + ro * h->data_bytes);
        s->out[p].ctl = (co_shm_ctl *)co_seg_at(seg, h->off_ring_ctl + ro * 64);
        s->in[p].cells = (co_cell *)co_seg_at(seg, h->off_cells + ri * h->ring_cells * 64);
        s->in[p].data = co_seg_at(seg, h->off_data + ri * h->data_bytes);
        s->in[p].ctl = (co_shm_ctl *)co_seg_at(seg, h->off_ring_ctl + ri * 64);
        if (p != rank) s->active[s->nactive++] = p;
        if (!populate) s->out[p].mapped = s->in[p].mapped = UINT64_MAX;
    }
    s->cma_ok = use_cma;
    return 0;
}

void co_shm_map(const co_shm *s, char *ring, uint64_t *mapped, uint64_t end, int write) {
    uint64_t from = *mapped,
             to = (end + CO_SHM_MAP_WINDOW - 1) & ~(uint64_t)(CO_SHM_MAP_WINDOW - 1);
    if (to >= s->data_bytes) { /* the rest of the ring; a later trip meets mapped pages */
        to = s->data_bytes;
        *mapped = UINT64_MAX;
    } else {
        *mapped = to;
    }
    if (to > from) co_map_pages(ring + from, to - from, write);
}

void co_shm_fini(co_shm *s) {
    free(s->out);
    free(s->in);
    free(s->active);
    memset(s, 0, sizeof(*s));
}

/* Up to `budget` messages from one queue. Consumption is published once per batch: each
 * store to the shared positions line costs the producer a cache miss when it next looks.
 * A large payload is handed back at once, though: consuming it (unpacking a fragment of a
 * pipelined copy) takes long, and its producer is likely waiting for the room. */
static int poll_one(co_shm *s, int src, co_shm_handler h, int budget) {
    co_shm_in *in = &s->in[src];
    int n = 0, unpublished = 0;
    while (n < budget) {
        co_cell *c = &in->cells[in->head & s->cell_mask];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != in->head + 1) break;
        const void *payload;
        uint64_t data_end = in->data_head;
        if (c->flags & CO_CELL_FLAG_INLINE) {
            payload = c->u.data;
        } else if (c->len) {
            payload = in->data + (c->u.w[0] & s->data_mask);
            data_end = c->u.w[0] + (((uint64_t)c->len + 63) & ~(uint64_t)63);
            if (CO_UNLIKELY(data_end > in->mapped))
                co_shm_map(s, in->data, &in->mapped, data_end, 0);
        } else {
            payload = NULL;
        }
        h(src, c, payload);
        int large = !(c->flags & CO_CELL_FLAG_INLINE) && c->len >= 4096;
        in->head++;
        in->data_head = data_end;
        n++;
        unpublished = !large;
        if (large) {
            atomic_store_explicit(&in->ctl->data_head, in->data_head, memory_order_release);
            atomic_store_explicit(&in->ctl->head, in->head, memory_order_release);
        }
    }
    if (unpublished) { /* what the loop consumed since its last store */
        atomic_store_explicit(&in->ctl->data_head, in->data_head, memory_order_release);
        atomic_store_explicit(&in->ctl->head, in->head, memory_order_release);
    }
    return n;
}

int co_shm_poll(co_shm *s, co_shm_handler h) {
    int total = 0, na = s->nactive;
    if (na == 0) return 0;
    int start = s->next_poll;
    for (int i = 0; i < na; i++) {
        int k = start + i;
        if (k >= na) k -= na;
        total += poll_one(s, s->active[k], h, 16);
    }
    s->next_poll = start + 1 >= na ? 0 : start + 1;
    return total;
}

/* Moves a cursor (entry *i, *off bytes into it) g bytes on, over empty entries too. */
static void iov_advance(const struct iovec *v, int n, int *i, size_t *off, size_t g) {
    while (*i < n && (g || v[*i].iov_len == *off)) {
        size_t left = v[*i].iov_len - *off;
        if (g < left) {
            *off += g;
            return;
        }
        g -= left;
        ++*i;
        *off = 0;
    }
}

/* Fills up to 64 entries of `out` with v from the cursor (i, off) on. */
static int iov_window(struct iovec *out, const struct iovec *v, int n, int i, size_t off) {
    int k = 0;
    for (; i < n && k < 64; i++, k++, off = 0) {
        out[k].iov_base = (char *)v[i].iov_base + off;
        out[k].iov_len = v[i].iov_len - off;
    }
    return k;
}

typedef ssize_t (*cma_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                          unsigned long, unsigned long);

/* process_vm_readv or _writev may stop short (at most IOV_MAX entries, about 2 GiB a call,
 * partial copies) or be interrupted: continue from where it stopped on both sides. */
static int cma_move(cma_fn fn, pid_t pid, const struct iovec *local, int nlocal,
                    const struct iovec *remote, int nremote) {
    struct iovec l[64], r[64];
    int li = 0, ri = 0;
    size_t loff = 0, roff = 0;
    iov_advance(local, nlocal, &li, &loff, 0);
    iov_advance(remote, nremote, &ri, &roff, 0);
    while (li < nlocal && ri < nremote) {
        int nl = iov_window(l, local, nlocal, li, loff),
            nr = iov_window(r, remote, nremote, ri, roff);
        ssize_t got = fn(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (got == 0) return -EIO;
        iov_advance(local, nlocal, &li, &loff, (size_t)got);
        iov_advance(remote, nremote, &ri, &roff, (size_t)got);
    }
    return 0;
}

int co_shm_cma_read(pid_t pid, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote) {
    return cma_move(process_vm_readv, pid, local, nlocal, remote, nremote);
}

int co_shm_cma_write(pid_t pid, const struct iovec *local, int nlocal, const struct iovec *remote,
                     int nremote) {
    return cma_move(process_vm_writev, pid, local, nlocal, remote, nremote);
}

long co_shm_cma_probe_ns(void) {
    static char from[64], to[64];
    struct iovec l = {to, sizeof(to)}, r = {from, sizeof(from)};
    pid_t me = getpid();
    long best = 0;
    for (int i = 0; i <= 32; i++) { /* the first call only warms up */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        ssize_t got = process_vm_readv(me, &l, 1, &r, 1, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (got != (ssize_t)sizeof(to)) return 0;
        long ns = (long)(b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
        if (ns < 1) ns = 1;
        if (i && (!best || ns < best)) best = ns;
    }
    return best;
}
