/* Windows: creation (the shared memory file and what the members tell each other), freeing,
 * errors. See rma.h for the model. */
#include "rma.h"

#include "../boot/boot.h"
#include "../coll/coll.h"
#include "../comm/comm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096u

static size_t round_page(size_t n) {
    return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

co_win *co_win_get(MPI_Win h) {
    return co_htab_get(&co_st.wins, h);
}

int co_win_error(co_win *w, const char *fn, int cls, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = co_error_v(w->errh, w->handle, fn, cls, fmt, ap);
    va_end(ap);
    return rc;
}

int co_rma_init(void) {
    co_st.wins.kind = COHORT_KIND_WIN;
    co_htab_set(&co_st.wins, 0, NULL); /* slot 0 is MPI_WIN_NULL */
    return MPI_SUCCESS;
}

/* The memory and the bookkeeping of w, on this rank only. */
static void win_release(co_win *w) {
    if (w->map) munmap(w->map, w->maplen);
    if (w->handle) co_htab_remove(&co_st.wins, w->handle);
    if (w->errh) co_errh_release(w->errh);
    if (w->info) co_info_free(w->info);
    free(w->peers);
    free(w->locked);
    free(w->started);
    free(w->start);
    free(w->regions);
    for (int i = 0; i < 3; i++) free(w->scratch[i]);
    free(w);
}

void co_rma_fini(void) {
    /* windows the program did not free: their attributes are dropped without callbacks (MPI
     * calls are over), their memory unmapped */
    for (uint32_t s = 1; s < co_st.wins.next; s++) {
        co_win *w = co_htab_at(&co_st.wins, s);
        if (!w) continue;
        co_attrs_drop(&w->attrs);
        win_release(w);
    }
    co_htab_destroy(&co_st.wins);
}

/* What each member tells the others at creation. */
enum { X_SIZE, X_UNIT, X_BASE, X_PROBE, X_WORDS };
static const uint64_t probe_magic = 0x636f686f72742d77ull; /* read by a peer's single copy */

/* Failures, combined over the members so that all return the same class. */
enum { F_NOMEM = 1, F_OPEN = 2, F_CMA = 4 };

int co_win_create(co_comm *c, int flavor, void *base, MPI_Aint size, int disp_unit,
                  const co_info *info, const char *fn, co_win **out) {
    int n = c->size, me = c->rank;
    co_dtype *u64 = co_dt_get(MPI_UINT64_T), *i32 = co_dt_get(MPI_INT);
    uint64_t mine[X_WORDS] = {(uint64_t)size, (uint64_t)disp_unit, (uint64_t)(uintptr_t)base,
                              (uint64_t)(uintptr_t)&probe_magic};
    uint64_t *all = malloc((size_t)n * X_WORDS * sizeof(uint64_t));
    co_win *w = calloc(1, sizeof(*w));
    if (!all || !w) co_fatal("out of memory creating a window");
    int rc = co_allgather(mine, X_WORDS, u64, all, X_WORDS, u64, c);
    if (rc) {
        free(all);
        free(w);
        return co_error(c, fn, rc, "exchanging the window's sizes failed%s%s",
                        co_coll_broken_sep(c), co_coll_broken_why(c));
    }
    const char *nc = info ? co_info_lookup(info, "alloc_shared_noncontig") : NULL;
    int contig = flavor == MPI_WIN_FLAVOR_SHARED && !(nc && !strcmp(nc, "true"));

    /* The file: the control blocks, then (allocate, shared) each member's memory, page
     * aligned, or back to back for a contiguous shared window. */
    size_t ctl_bytes = round_page((size_t)n * sizeof(co_win_ctl)), total = ctl_bytes;
    size_t *off = calloc((size_t)n, sizeof(size_t));
    if (!off) co_fatal("out of memory creating a window");
    int owns = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
    for (int q = 0; q < n && owns; q++) {
        off[q] = total;
        total += contig ? (size_t)all[q * X_WORDS + X_SIZE] : round_page(all[q * X_WORDS + X_SIZE]);
    }
    total = round_page(total);

    int fail = 0, fd = -1;
    char *map = NULL;
    if (me == 0) {
        fd = memfd_create("cohort-window", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)total) != 0) fail |= F_NOMEM;
    }
    int fdw = fail ? -1 : fd; /* -1 tells the others rank 0 has no file */
    if ((rc = co_bcast_binomial(&fdw, 1, i32, 0, c))) {
        if (fd >= 0) close(fd);
        free(all);
        free(off);
        free(w);
        return co_error(c, fn, rc, "telling the members the window's memory file failed%s%s",
                        co_coll_broken_sep(c), co_coll_broken_why(c));
    }
    if (fdw < 0) fail |= F_NOMEM;
    if (me != 0 && fdw >= 0) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d",
                 (int)co_st.seg->ranks[co_proc_of(c->local->world[0])].pid, fdw);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) fail |= F_OPEN;
    }
    if (fd >= 0 && !(fail & F_NOMEM)) {
        map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            map = NULL;
            fail |= F_NOMEM;
        }
    }
    if (me != 0 && fd >= 0) close(fd);
    /* Windows over the program's own memory are reached with single copies: try one from the
     * next member, so that every member learns whether they work before any is needed. */
    if (!owns && n > 1) {
        if (!co_st.cfg.cma) fail |= F_CMA;
        int q = (me + 1) % n;
        uint64_t v = 0;
        struct iovec l = {&v, sizeof(v)},
                     r = {(void *)(uintptr_t)all[q * X_WORDS + X_PROBE], sizeof(v)};
        pid_t pid = co_st.seg->ranks[co_proc_of(c->local->world[q])].pid;
        if (!(fail & F_CMA) &&
            (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(v) || v != probe_magic))
            fail |= F_CMA;
    }
    int anyfail = 0;
    rc = co_allreduce(&fail, &anyfail, 1, i32, co_op_get(MPI_BOR), c);
    if (me == 0 && fd >= 0) close(fd); /* every member has opened it (or failed to) */
    if (rc || anyfail) {
        if (map) munmap(map, total);
        free(all);
        free(off);
        free(w);
        if (rc) return co_error(c, fn, rc, "combining the members' set-up failed");
        if (anyfail & F_NOMEM)
            return co_error(c, fn, MPI_ERR_NO_MEM, "no shared memory for a window of %zu bytes",
                            total);
        if (anyfail & F_OPEN)
            return co_error(c, fn, MPI_ERR_OTHER,
                            "a member could not open the window's memory file through /proc");
        return co_error(c, fn, MPI_ERR_UNSUPPORTED_OPERATION,
                        "a window over the program's own memory needs single copies between "
                        "processes (process_vm_writev), which %s; MPI_Win_allocate works "
                        "without them",
                        co_st.cfg.cma ? "the system refuses here" : "COHORT_CMA=0 switches off");
    }

    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->rank = me;
    w->size = n;
    w->map = map;
    w->maplen = total;
    w->ctl = (co_win_ctl *)map;
    w->peers = calloc((size_t)n, sizeof(co_win_peer));
    w->locked = calloc((size_t)n, 1);
    w->started = calloc((size_t)n, 1);
    if (!w->peers || !w->locked || !w->started) co_fatal("out of memory creating a window");
    for (int q = 0; q < n; q++) {
        co_win_peer *p = &w->peers[q];
        p->size = (MPI_Aint)all[q * X_WORDS + X_SIZE];
        p->disp_unit = (int)all[q * X_WORDS + X_UNIT];
        p->pid = co_st.seg->ranks[co_proc_of(c->local->world[q])].pid;
        p->mapped = owns || q == me;
        if (owns)
            p->local = map + off[q];
        else if (flavor == MPI_WIN_FLAVOR_CREATE)
            p->remote = all[q * X_WORDS + X_BASE], p->local = q == me ? base : NULL;
        else /* dynamic: displacements are addresses */
            p->disp_unit = 1;
    }
    if (owns) /* no memory for size 0 */
        w->base = size ? w->peers[me].local : NULL;
    else
        w->base = flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    free(all);
    free(off);

    if ((rc = co_comm_dup_bare(c, fn, &w->comm))) {
        win_release(w);
        return rc;
    }
    co_errh_release(w->comm->errh);
    w->comm->errh = co_st.errh_return;
    co_st.errh_return->refcount++;
    w->errh = co_st.errh_fatal; /* MPI_ERRORS_ARE_FATAL, as for a new communicator */
    w->errh->refcount++;
    /* MPI_Win_get_info's copy: the hints given, and the standard's defaults of the two
     * that have one (what Cohort does meets every value of either, docs/rma.md) */
    w->info = info ? co_info_dup(info) : co_info_create();
    if (w->info && !co_info_lookup(w->info, "accumulate_ordering") &&
        co_info_set(w->info, "accumulate_ordering", "rar,raw,war,waw"))
        co_fatal("out of memory");
    if (w->info && !co_info_lookup(w->info, "accumulate_ops") &&
        co_info_set(w->info, "accumulate_ops", "same_op_no_op"))
        co_fatal("out of memory");
    w->handle = co_htab_insert(&co_st.wins, w);
    if (!w->handle || !w->info) {
        co_comm_free(w->comm, fn);
        win_release(w);
        return co_error(c, fn, MPI_ERR_NO_MEM, "out of window handles");
    }
    *out = w;
    return MPI_SUCCESS;
}

int co_win_free(co_win *w, const char *fn) {
    int rc = co_attrs_delete_all(&w->attrs, w->handle, 0);
    if (rc) return co_win_error(w, fn, rc, "an attribute delete callback failed (error %d)", rc);
    /* no member frees the memory while another may still reach into it */
    atomic_thread_fence(memory_order_seq_cst);
    rc = co_barrier(w->comm);
    if (rc) return co_win_error(w, fn, rc, "the members' barrier failed");
    co_comm_free(w->comm, fn);
    win_release(w);
    return MPI_SUCCESS;
}
