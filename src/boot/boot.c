/* Creating, mapping and describing the job segment (see boot.h). The layout is computed once,
 * by whoever creates the segment, and recorded in its header, so that ranks never need to
 * agree on sizes by other means. */
#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PAGE 4096ull
static uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

static uint64_t pow2_floor(uint64_t v) {
    uint64_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

int co_seg_create(const co_seg_params *p, co_seg *seg, char *err, size_t errlen) {
    uint64_t n = (uint64_t)p->nranks;
    /* 0 (the default) picks the payload ring's size: 256 KiB while a receiver's rings together
     * stay under 1 MiB (up to 4 ranks), 128 KiB beyond (docs/runtime.md, "The job segment"). */
    uint64_t data = (uint64_t)p->data_bytes;
    if (!data) data = n <= 4 ? 256u << 10 : 128u << 10;
    /* Keep the memory a rank can receive into bounded as jobs grow: about 8 MiB of eager
     * payload space per receiver, however many senders there are. */
    if (n > 1) {
        uint64_t fair = (8ull << 20) / (n - 1);
        if (data > fair) data = fair;
    }
    if (data < 16384) data = 16384;
    data = pow2_floor(data); /* positions wrap with a mask */
    uint64_t cells = pow2_floor(p->ring_cells < 16 ? 16 : (uint64_t)p->ring_cells);
    uint64_t eager = (uint64_t)p->eager_limit;
    if (eager > data / 2) eager = data / 2;

    uint64_t off = PAGE; /* header */
    uint64_t off_ranks = off;
    off = round_up(off + n * sizeof(co_rank_ctl), PAGE);
    uint64_t off_ctl = off;
    off = round_up(off + n * n * 64, PAGE);
    uint64_t off_cells = off;
    off = round_up(off + n * n * cells * 64, PAGE);
    uint64_t off_data = off;
    off = round_up(off + n * n * data, PAGE);
    uint64_t off_rdv = off;
    off = round_up(off + n * CO_RDV_SLOTS * 64, PAGE);
    uint64_t off_heap = off;
    uint64_t slice = round_up((uint64_t)p->heap_slice, PAGE);
    off += n * slice;
    uint64_t off_notes = off; /* after the heap, which keeps its place */
    off = round_up(off + n * CO_SEG_NOTE, PAGE);

    int fd = memfd_create("cohort-job", 0);
    if (fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)off) != 0) {
        snprintf(err, errlen, "cannot size the job segment to %llu bytes: %s",
                 (unsigned long long)off, strerror(errno));
        close(fd);
        return -1;
    }
    void *base = mmap(NULL, off, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the job segment: %s", strerror(errno));
        close(fd);
        return -1;
    }
    co_seg_hdr *h = base;
    h->magic = CO_SEG_MAGIC;
    h->version = CO_SEG_VERSION;
    h->nranks = (uint32_t)n;
    h->size = off;
    h->off_ranks = off_ranks;
    h->off_ring_ctl = off_ctl;
    h->off_cells = off_cells;
    h->off_data = off_data;
    h->off_rdv = off_rdv;
    h->off_heap = off_heap;
    h->off_notes = off_notes;
    h->ring_cells = cells;
    h->data_bytes = data;
    h->eager_limit = eager;
    h->heap_slice = slice;
    h->job_id = (uint64_t)getpid();
    atomic_store(&h->abort_rank, -1);
    co_rank_ctl *r = (co_rank_ctl *)((char *)base + off_ranks);
    for (uint64_t i = 0; i < n; i++) r[i].cpu = -1;

    seg->base = base;
    seg->size = off;
    seg->nranks = (int)n;
    seg->hdr = h;
    seg->ranks = r;
    return fd;
}

int co_seg_attach(int fd, co_seg *seg, char *err, size_t errlen) {
    co_seg_hdr probe;
    if (pread(fd, &probe, sizeof(probe), 0) != (ssize_t)sizeof(probe) ||
        probe.magic != CO_SEG_MAGIC || probe.version != CO_SEG_VERSION) {
        snprintf(err, errlen,
                 "descriptor %d is not a Cohort job segment (was the program "
                 "started by another MPI's launcher?)",
                 fd);
        return -1;
    }
    void *base = mmap(NULL, probe.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the job segment: %s", strerror(errno));
        return -1;
    }
    seg->base = base;
    seg->size = probe.size;
    seg->hdr = base;
    seg->nranks = (int)probe.nranks;
    seg->ranks = (co_rank_ctl *)((char *)base + probe.off_ranks);
#ifdef PR_SET_PTRACER
    /* Peers copy large messages straight out of our memory (process_vm_readv); under Yama's
     * ptrace restrictions that needs our consent. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    return 0;
}

void co_seg_detach(co_seg *seg) {
    if (seg->base) munmap(seg->base, seg->size);
    memset(seg, 0, sizeof(*seg));
}

void co_seg_mark_abort(co_seg *seg, int rank, int code, int kind) {
    int32_t none = -1;
    if (rank >= 0 && rank < seg->nranks) {
        seg->ranks[rank].abort_code = code;
        seg->ranks[rank].abort_kind = kind;
        atomic_store(&seg->ranks[rank].state, CO_RANK_ABORTED);
    }
    if (atomic_compare_exchange_strong(&seg->hdr->abort_rank, &none, rank))
        atomic_store(&seg->hdr->abort_code, code);
}
