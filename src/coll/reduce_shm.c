/* The shared-memory reduction engine behind MPI_Reduce and MPI_Allreduce (and the two-rank
 * single-copy variants). Operands travel as raw memory images of the datatype (gaps
 * included), which is why the engine takes only dense types (co_coll_dense); results reach
 * user buffers through typed copies, so the bytes between elements are never written.
 *
 * Small vectors: every rank copies its operand into one of its buffers (step g+1) and each
 * rank that needs the result combines all N operands itself, in rank order (step g+2).
 * Larger vectors go in rounds of one buffer each: in round k every rank copies its piece
 * (step h+1), rank r combines part r of the piece from all N buffers into its result buffer
 * (h+2), and the ranks that need the result copy every part out (h+3). Rounds pipeline: a
 * rank may copy its next piece while others still collect the last one. */
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
        size_t pieces = (count + per - 1) / per;
        for (size_t k = 0; k < pieces && (all || me != root); k++)
            co_cshm_put_image(s, (unsigned)((g + k) % CO_CSHM_NBUF), in, k * per,
                              CO_MIN(per, count - k * per), dt, g + 1, g + 2);
        for (size_t k = 0; k < pieces && collect && !rc; k++) {
            size_t e0 = k * per, m = CO_MIN(per, count - e0);
            co_cshm_operands(s, (unsigned)((g + k) % CO_CSHM_NBUF), g + 1, n - 1, in, e0, m, e0, dt,
                             src, &rc);
            if (!rc) rc = co_coll_reduce_n(op, dt, m, src, n, co_coll_elem(rbuf, e0, dt));
        }
        co_cshm_post(s, g + 2);
        s->seq = g + 2;
        if (src != stack) co_coll_free(src);
        return rc;
    }

    size_t rounds = (count + per - 1) / per;
    for (size_t k = 0; k < rounds; k++) {
        size_t e0 = k * per, m = CO_MIN(per, count - e0);
        uint64_t h = g + 3 * k;
        unsigned bi = (unsigned)((g + 2 * k) % CO_CSHM_NBUF),
                 br = (unsigned)((g + 2 * k + 1) % CO_CSHM_NBUF);
        co_cshm_put_image(s, bi, in, e0, m, dt, h + 1, h + 2);
        size_t lo = e0 + m * (size_t)me / (size_t)n, hi = e0 + m * (size_t)(me + 1) / (size_t)n;
        char *res = co_cshm_acquire(s, br);
        if (hi > lo) {
            co_cshm_operands(s, bi, h + 1, n - 1, in, e0, m, lo, dt, src, &rc);
            if (!rc) rc = co_coll_reduce_n(op, dt, hi - lo, src, n, img_elem(res, lo, e0, dt));
        }
        co_cshm_publish(s, br, h + 2, 0, h + 3);
        if (collect) {
            for (int q = 0; q < n; q++) {
                size_t qlo = e0 + m * (size_t)q / (size_t)n;
                size_t qhi = e0 + m * (size_t)(q + 1) / (size_t)n;
                if (qhi == qlo) continue;
                const char *r = q == me ? res : co_cshm_read(s, q, br, h + 2, NULL);
                co_coll_copy_same(img_elem(r, qlo, e0, dt), co_coll_elem(rbuf, qlo, dt), qhi - qlo,
                                  dt);
            }
        }
        co_cshm_post(s, h + 3);
    }
    s->seq = g + 3 * rounds;
    if (src != stack) co_coll_free(src);
    return rc;
}
