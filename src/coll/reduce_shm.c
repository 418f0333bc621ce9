/* The shared-memory reduction engine behind MPI_Reduce and MPI_Allreduce (and the two-rank
 * single-copy variants). Operands travel as raw memory images of the datatype (gaps
 * included), which is why the engine takes only dense types (co_coll_dense); results reach
 * user buffers through typed copies, so the bytes between elements are never written.
 *
 * Small vectors: every rank copies its operand into its buffers (one, or for a rooted
 * reduction up to all four; step g+1) and each rank that needs the result combines all N
 * operands itself, in rank order (step g+2).
 * Larger vectors go in rounds as wide as all four buffers (reduce_wide): three steps per
 * round, one synchronisation each, which is what costs most when ranks outnumber cores. */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* Up to this many bytes every rank that needs the result combines the whole vector (fewer
 * steps); above, the work is divided. A rooted reduction keeps the one-step form longer:
 * only the root combines, and the others leave as soon as their operand is in place.
 * Measured: docs/collectives.md. */
#define SMALL_BYTES_ALL    4096
#define SMALL_BYTES_ROOTED (256 * 1024)

/* Pointer to pass as the buffer of elements starting at e, within an image whose first
 * byte is element e0's first data byte. */
static inline char *img_elem(const char *img, size_t e, size_t e0, const co_dtype *dt) {
    return (char *)img - dt->true_lb + (MPI_Aint)(e - e0) * co_dt_extent(dt);
}

int co_cshm_fold(co_cshm *s, uint64_t g, uint64_t step, const void *in, size_t r0, size_t m,
                 size_t lo, size_t hi, co_dtype *dt, co_op *op, const void **src, void *out,
                 int spread) {
    int rc = MPI_SUCCESS;
    size_t per = co_cshm_elems(s, dt);
    if (lo >= hi) return rc;
    for (size_t k = lo > r0 ? (lo - r0) / per : 0; !rc && r0 + k * per < CO_MIN(hi, r0 + m); k++) {
        size_t e0 = r0 + k * per, pm = CO_MIN(per, r0 + m - e0);
        size_t a = CO_MAX(lo, e0), b = CO_MIN(hi, e0 + pm);
        unsigned bk = (unsigned)((g + k) % CO_CSHM_NBUF);
        co_cshm_operands(s, bk, step, s->n - 1, in, e0, pm, a, dt, src, &rc, spread);
        if (!rc)
            rc = co_coll_reduce_n(op, dt, b - a, src, s->n,
                                  out ? co_coll_elem(out, a - lo, dt)
                                      : img_elem(co_cshm_data(s, s->me, bk), a, e0, dt));
    }
    return rc;
}

/* Rounds as wide as all NBUF buffers: every rank copies up to NBUF pieces of its operand
 * (step h+1); rank r combines part r of the round from all N copies and writes it over its
 * own copy of that part, which no other rank reads (h+2); the ranks that need the result
 * copy every part out (h+3). Each rank divides the round by its own count: before a rank
 * copies part q out, it checks that q's last piece of the round is as large as its own,
 * so that counts that differ (by as little as one element) never pass parts that q combined
 * over other bounds, or not at all, for a result. */
static int reduce_wide(co_cshm *s, const void *in, void *rbuf, size_t count, co_dtype *dt,
                       co_op *op, int collect, const void **src) {
    int n = s->n, me = s->me, rc = MPI_SUCCESS;
    size_t per = co_cshm_elems(s, dt), W = per * CO_CSHM_NBUF;
    uint64_t g = s->seq;
    size_t rounds = (count + W - 1) / W;
    for (size_t j = 0; j < rounds; j++) {
        size_t r0 = j * W, rm = CO_MIN(W, count - r0);
        uint64_t h = g + 3 * j;
        size_t pieces = co_cshm_put_wide(s, g, in, r0, rm, dt, h + 1, h + 3, 0);
        size_t lo = r0 + rm * (size_t)me / (size_t)n, hi = r0 + rm * (size_t)(me + 1) / (size_t)n;
        if (!rc) rc = co_cshm_fold(s, g, h + 1, in, r0, rm, lo, hi, dt, op, src, NULL, 0);
        co_cshm_post(s, h + 2);
        if (collect) {
            for (int q = 0; q < n; q++) {
                size_t qlo = r0 + rm * (size_t)q / (size_t)n;
                size_t qhi = r0 + rm * (size_t)(q + 1) / (size_t)n;
                if (q != me) {
                    co_cshm_wait(s, q, h + 2);
                    /* (a buffer still holding an older step: q counted fewer pieces) */
                    unsigned bl = (unsigned)((g + pieces - 1) % CO_CSHM_NBUF);
                    uint64_t qb = UINT64_MAX;
                    co_cshm_peek(s, q, bl, h + 1, &qb);
                    int r = co_coll_sizes(qb, co_coll_span(dt, rm - (pieces - 1) * per));
                    if (r) {
                        if (!rc) rc = r;
                        continue;
                    }
                }
                for (size_t k = 0; k < pieces; k++) {
                    size_t e0 = r0 + k * per, m = CO_MIN(per, rm - k * per);
                    size_t a = CO_MAX(qlo, e0), b = CO_MIN(qhi, e0 + m);
                    if (a >= b) continue;
                    const char *d = co_cshm_data(s, q, (unsigned)((g + k) % CO_CSHM_NBUF));
                    co_coll_copy_same(img_elem(d, a, e0, dt), co_coll_elem(rbuf, a, dt), b - a, dt);
                }
            }
        }
        co_cshm_post(s, h + 3);
    }
    s->seq = g + 3 * rounds;
    return rc;
}

int co_reduce_shm(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, int root,
                  co_comm *c) {
    co_cshm *s = c->coll->shm;
    int n = s->n, me = s->me, all = root < 0, rc = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t per = co_cshm_elems(s, dt);
    uint64_t g = s->seq;
    const void *stack[CO_COLL_SRCS];
    const void **src = co_coll_srcs(n, stack);
    int collect = all || me == root;

    if (count * dt->size <= (all ? SMALL_BYTES_ALL : SMALL_BYTES_ROOTED) &&
        count <= per * CO_CSHM_NBUF) {
        /* one step, the vector in up to NBUF buffers at once */
        if (all || me != root) co_cshm_put_wide(s, g, in, 0, count, dt, g + 1, g + 2, all);
        if (collect) rc = co_cshm_fold(s, g, g + 1, in, 0, count, 0, count, dt, op, src, rbuf, all);
        co_cshm_post(s, g + 2);
        s->seq = g + 2;
        if (src != stack) co_coll_free(src);
        return rc;
    }

    rc = reduce_wide(s, in, rbuf, count, dt, op, collect, src);
    if (src != stack) co_coll_free(src);
    return rc;
}
