/* RMA operations: put, get, the accumulates and compare-and-swap, each done by the origin at
 * its call (rma.h). The origin's data travels packed: the target's side is unpacked into (or
 * packed from) the target's layout in place when its memory is mapped here, else moved with
 * single copies along the iovecs of that layout. Accumulates hold the target's mutex from the
 * read to the write, which makes them atomic with respect to each other per target. */
#include "rma.h"

#include "../xport/shm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The predefined type of basic type b (the element type of an accumulate). */
static co_dtype *basic_dt(int b) {
    return co_dt_get(b >= CO_B_2REAL ? co_dt_pair_handle(b) : COHORT_DT(b));
}

/* Bytes [lo, hi) of (count, dt) relative to its buffer; 0 when it holds no data. */
static int span(const co_rma_side *s, MPI_Aint *lo, MPI_Aint *hi) {
    if (!s->count || !s->dt->size) return 0;
    MPI_Aint ext = co_dt_extent(s->dt), last = (MPI_Aint)(s->count - 1) * ext;
    *lo = s->dt->true_lb + (ext < 0 ? last : 0);
    *hi = s->dt->true_ub + (ext < 0 ? 0 : last);
    return 1;
}

/* Where displacement disp of target t lies: *local (mapped) or *remote (single copy). */
static int place(co_win *w, int t, MPI_Aint disp, const co_rma_side *tgt, const char *fn,
                 char **local, uint64_t *remote) {
    co_win_peer *p = &w->peers[t];
    MPI_Aint off, lo, hi;
    if (__builtin_mul_overflow(disp, (MPI_Aint)p->disp_unit, &off))
        return co_win_error(w, fn, MPI_ERR_RMA_RANGE, "displacement %ld overflows", (long)disp);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        if (disp < 0)
            return co_win_error(w, fn, MPI_ERR_RMA_RANGE, "negative displacement %ld", (long)disp);
        if (span(tgt, &lo, &hi) && (off + lo < 0 || off + hi > p->size))
            return co_win_error(w, fn, MPI_ERR_RMA_RANGE,
                                "bytes %ld to %ld of rank %d's window are outside it (%ld bytes)",
                                (long)(off + lo), (long)(off + hi), t, (long)p->size);
    }
    *local = p->local + off;
    *remote = p->remote + (uint64_t)off;
    return MPI_SUCCESS;
}

/* Moves `bytes` packed bytes between p and the target's layout: write (into the target) or
 * read. 0, or -errno of a single copy. */
static int move(co_win *w, int t, char *local, uint64_t remote, const co_rma_side *tgt, void *p,
                size_t bytes, int write) {
    co_win_peer *pe = &w->peers[t];
    if (pe->mapped) {
        char *at = local + tgt->dt->true_lb;
        if (tgt->dt->contig) /* the pack engine's own walk costs more than a small copy */
            memcpy(write ? at : p, write ? p : at, bytes);
        else if (write)
            co_dt_unpack(tgt->dt, tgt->count, local, 0, p, bytes);
        else
            co_dt_pack(tgt->dt, tgt->count, local, 0, p, bytes);
        return 0;
    }
    struct iovec iov[64];
    size_t off = 0;
    while (off < bytes) {
        size_t cov = 0;
        int k = co_dt_iov(tgt->dt, tgt->count, (void *)(uintptr_t)remote, off, iov, 64, &cov);
        if (k <= 0 || !cov) return -EIO;
        struct iovec l = {(char *)p + off, cov};
        int e = write ? co_shm_cma_write(pe->pid, &l, 1, iov, k)
                      : co_shm_cma_read(pe->pid, &l, 1, iov, k);
        if (e) return e;
        off += cov;
    }
    return 0;
}

enum { S_ORIGIN, S_RESULT, S_TARGET }; /* the window's scratch buffers */

/* Scratch buffer i of w with room for `bytes`, its pages mapped in one go when it grows. */
static void *scratch(co_win *w, int i, size_t bytes) {
    if (w->scratch_len[i] < bytes) {
        size_t len = CO_MAX(bytes, 2 * w->scratch_len[i]);
        free(w->scratch[i]);
        if (!(w->scratch[i] = malloc(len))) co_fatal("out of memory in an RMA operation");
        co_map_pages(w->scratch[i], len, 1);
        w->scratch_len[i] = len;
    }
    return w->scratch[i];
}

/* inout = in op inout over `bytes` packed bytes of elements of predefined type bt. */
static void combine(co_op *op, co_dtype *bt, const void *in, void *inout, size_t bytes) {
    size_t n = bytes / bt->size, ext = (size_t)co_dt_extent(bt);
    if (ext == bt->size) {
        co_op_apply(op, bt, in, inout, n);
        return;
    }
    /* a pair type with padding: the kernels take it at its natural stride */
    char *a = malloc(n * ext), *c = malloc(n * ext);
    if (!a || !c) co_fatal("out of memory in an accumulate");
    co_dt_unpack(bt, n, a, 0, in, bytes);
    co_dt_unpack(bt, n, c, 0, inout, bytes);
    co_op_apply(op, bt, a, c, n);
    co_dt_pack(bt, n, c, 0, inout, bytes);
    free(a);
    free(c);
}

/* The packed bytes of a side: in place when contiguous, else packed into scratch buffer i. */
static void *packed(co_win *w, const co_rma_side *s, size_t bytes, int i) {
    if (s->dt->contig) return (char *)s->buf + s->dt->true_lb;
    void *p = scratch(w, i, bytes);
    co_dt_pack(s->dt, s->count, s->buf, 0, p, bytes);
    return p;
}

/* A buffer for bytes that end up in side s: s's own memory when contiguous (*copy 0), else
 * scratch buffer i (*copy 1: landed() unpacks it). */
static void *landing(co_win *w, const co_rma_side *s, size_t bytes, int i, int *copy) {
    *copy = !s->dt->contig;
    return *copy ? scratch(w, i, bytes) : (char *)s->buf + s->dt->true_lb;
}

static void landed(const co_rma_side *s, const void *p, int copy, size_t bytes) {
    if (copy) co_dt_unpack(s->dt, s->count, s->buf, 0, p, bytes);
}

/* An accumulate's write, under the target's mutex: P replaces the target's bytes, or is
 * combined with them in place, or with a copy of them (`now`: read already, else read here)
 * that is then written back. */
static int update(co_win *w, int t, char *local, uint64_t remote, const co_rma_side *tgt,
                  const void *P, size_t tbytes, co_op *op, co_dtype *bt, int in_place,
                  const void *now) {
    if (op->handle == MPI_REPLACE) return move(w, t, local, remote, tgt, (void *)P, tbytes, 1);
    if (in_place) {
        co_op_apply(op, bt, P, local + tgt->dt->true_lb, tbytes / bt->size);
        return 0;
    }
    void *T = scratch(w, S_TARGET, tbytes);
    int e;
    if (now)
        memcpy(T, now, tbytes);
    else if ((e = move(w, t, local, remote, tgt, T, tbytes, 0)))
        return e;
    combine(op, bt, P, T, tbytes);
    return move(w, t, local, remote, tgt, T, tbytes, 1);
}

int co_rma_op(co_win *w, int kind, const co_rma_side *origin, const co_rma_side *result,
              const void *compare, int target, MPI_Aint disp, const co_rma_side *tgt, co_op *op,
              const char *fn) {
    if (target == MPI_PROC_NULL) return MPI_SUCCESS;
    if (!co_win_can_access(w, target))
        return co_win_error(w, fn, MPI_ERR_RMA_SYNC,
                            "no access epoch covers rank %d (MPI_Win_fence, MPI_Win_start or "
                            "MPI_Win_lock first)",
                            target);
    if (w->fence == CO_FENCE_OPEN) w->fence = CO_FENCE_USED;
    size_t tbytes = tgt->count * tgt->dt->size;
    int noop = op && op->handle == MPI_NO_OP;
    if (origin && !noop && origin->count * origin->dt->size != tbytes)
        return co_win_error(w, fn, MPI_ERR_COUNT,
                            "the origin has %zu bytes, the target's datatype and count %zu",
                            origin->count * origin->dt->size, tbytes);
    if (result && result->count * result->dt->size != tbytes)
        return co_win_error(w, fn, MPI_ERR_COUNT,
                            "the result buffer has %zu bytes, the target's datatype and count %zu",
                            result->count * result->dt->size, tbytes);
    char *local = NULL;
    uint64_t remote = 0;
    int rc = place(w, target, disp, tgt, fn, &local, &remote);
    if (rc) return rc;
    if (!tbytes) return MPI_SUCCESS;

    void *R = NULL;
    const void *P = origin && !noop ? packed(w, origin, tbytes, S_ORIGIN) : NULL;
    int e = 0, copy = 0, acc = kind != CO_RMA_PUT && kind != CO_RMA_GET;
    /* an accumulate straight on the target's memory: mapped here, contiguous, and elements
     * without padding (the kernels' stride) */
    co_dtype *bt = acc && op ? basic_dt(tgt->dt->basic) : NULL;
    int in_place =
        bt && w->peers[target].mapped && tgt->dt->contig && (size_t)co_dt_extent(bt) == bt->size;
    if (acc) co_win_acc_lock(w, target);
    if (result) { /* what comes back is the target's bytes before any update */
        R = landing(w, result, tbytes, S_RESULT, &copy);
        e = move(w, target, local, remote, tgt, R, tbytes, 0);
    }
    switch (e ? -1 : kind) {
    case CO_RMA_PUT: e = move(w, target, local, remote, tgt, (void *)P, tbytes, 1); break;
    case CO_RMA_ACC:
    case CO_RMA_GET_ACC:
        if (!noop) e = update(w, target, local, remote, tgt, P, tbytes, op, bt, in_place, R);
        break;
    case CO_RMA_CAS:
        if (!memcmp(R, compare, tbytes))
            e = move(w, target, local, remote, tgt, (void *)P, tbytes, 1);
        break;
    }
    if (!e && result) landed(result, R, copy, tbytes);
    if (acc) co_win_acc_unlock(w, target);
    if (e == -EFAULT)
        return co_win_error(w, fn, MPI_ERR_RMA_RANGE,
                            "address %#lx of rank %d is not memory of its window",
                            (unsigned long)remote, target);
    if (e)
        return co_win_error(w, fn, MPI_ERR_OTHER, "single copy with rank %d failed: %s", target,
                            strerror(-e));
    return MPI_SUCCESS;
}
