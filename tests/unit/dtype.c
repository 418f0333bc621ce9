/* Unit tests of the flattened datatype form (src/dtype): that regular layouts become few
 * strided segments (a column is one segment, an N x N subarray one segment of N runs), that
 * normalisation merges what it should and is idempotent, that packing from any offset
 * matches a slice of the full pack (the seek used by fragments), and that the layout
 * description sent in a rendezvous describes the same bytes as the type itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/dtype/dtype.h"

static co_dtype *D(MPI_Datatype h) {
    return co_dt_get(h);
}

static int setup(void **state) {
    (void)state;
    return co_dtype_init();
}

static int teardown(void **state) {
    (void)state;
    co_dtype_fini();
    return 0;
}

static void column_is_one_segment(void **state) {
    (void)state;
    co_dtype *t;
    assert_int_equal(co_dt_hvector(100000, 1, 128, D(MPI_DOUBLE), &t), MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].count, 100000);
    assert_int_equal(t->segs[0].len, 8);
    assert_int_equal(t->segs[0].stride, 128);
    assert_int_equal(t->nsig, 1);
    assert_int_equal(t->sig[0].count, 100000);
    assert_false(t->contig);
    co_dt_destroy(t);
    /* blocks that touch fold into one contiguous run */
    assert_int_equal(co_dt_hvector(50, 4, 32, D(MPI_DOUBLE), &t), MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].len, 50 * 32);
    assert_true(t->contig);
    co_dt_destroy(t);
}

static void subarrays_are_compact(void **state) {
    (void)state;
    co_dtype *t;
    int sizes[3] = {300, 200, 100}, subs[3] = {50, 60, 70}, starts[3] = {10, 20, 30};
    /* 2-D: N rows of N doubles inside an M x M matrix: one segment of N runs */
    assert_int_equal(
        co_dt_subarray(2, sizes + 1, subs + 1, starts + 1, MPI_ORDER_C, D(MPI_DOUBLE), &t),
        MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].count, 60);
    assert_int_equal(t->segs[0].len, 70 * 8);
    assert_int_equal(t->segs[0].stride, 100 * 8);
    assert_int_equal(t->segs[0].disp, (20 * 100 + 30) * 8);
    assert_int_equal(t->lb, 0);
    assert_int_equal(t->ub, 200 * 100 * 8);
    co_dt_destroy(t);
    /* Fortran order: the first dimension is the fastest */
    assert_int_equal(
        co_dt_subarray(2, sizes + 1, subs + 1, starts + 1, MPI_ORDER_FORTRAN, D(MPI_DOUBLE), &t),
        MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].count, 70);
    assert_int_equal(t->segs[0].len, 60 * 8);
    assert_int_equal(t->segs[0].stride, 200 * 8);
    co_dt_destroy(t);
    /* 3-D: one segment per plane */
    assert_int_equal(co_dt_subarray(3, sizes, subs, starts, MPI_ORDER_C, D(MPI_FLOAT), &t),
                     MPI_SUCCESS);
    assert_int_equal(t->nsegs, 50);
    assert_int_equal(t->nruns, 50 * 60);
    assert_int_equal(t->size, 50 * 60 * 70 * 4);
    co_dt_destroy(t);
    /* a full-width subarray is one contiguous run */
    int full[2] = {40, 30}, zero[2] = {0, 0}, rows[2] = {10, 30}, st[2] = {5, 0};
    assert_int_equal(co_dt_subarray(2, full, rows, st, MPI_ORDER_C, D(MPI_INT), &t), MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].count, 1);
    assert_int_equal(t->segs[0].len, 10 * 30 * 4);
    co_dt_destroy(t);
    assert_int_equal(co_dt_subarray(2, full, full, zero, MPI_ORDER_C, D(MPI_INT), &t), MPI_SUCCESS);
    assert_true(t->contig);
    co_dt_destroy(t);
}

static void merging(void **state) {
    (void)state;
    co_dtype *t, *u;
    /* indexed blocks of equal length at equal gaps become one strided segment */
    int bl[6] = {2, 2, 2, 2, 2, 2};
    MPI_Aint dp[6] = {0, 40, 80, 120, 160, 200};
    assert_int_equal(co_dt_hindexed(6, bl, 0, dp, D(MPI_INT), &t), MPI_SUCCESS);
    assert_int_equal(t->nsegs, 1);
    assert_int_equal(t->segs[0].count, 6);
    assert_int_equal(t->segs[0].stride, 40);
    co_dt_destroy(t);
    /* copies of a strided segment that continue its stride extend it */
    assert_int_equal(co_dt_hvector(2, 1, 16, D(MPI_DOUBLE), &t), MPI_SUCCESS); /* 0, 16 */
    assert_int_equal(co_dt_hvector(3, 1, 32, t, &u), MPI_SUCCESS);             /* 0,16,32,...,80 */
    assert_int_equal(u->nsegs, 1);
    assert_int_equal(u->segs[0].count, 6);
    co_dt_destroy(u);
    /* a resized double with holes, repeated: one strided segment */
    co_dtype *r;
    assert_int_equal(co_dt_resized(D(MPI_DOUBLE), 0, 24, &r), MPI_SUCCESS);
    assert_int_equal(co_dt_contiguous(1000, r, &u), MPI_SUCCESS);
    assert_int_equal(u->nsegs, 1);
    assert_int_equal(u->segs[0].stride, 24);
    assert_int_equal(co_dt_extent(u), 24000);
    co_dt_destroy(u);
    co_dt_destroy(r);
    co_dt_destroy(t);
    /* struct {int, int} is contiguous; the pair MPI_DOUBLE_INT is one 12-byte run */
    co_dtype *types[2] = {D(MPI_INT), D(MPI_INT)};
    int b2[2] = {1, 1};
    MPI_Aint d2[2] = {0, 4};
    assert_int_equal(co_dt_struct(2, b2, d2, types, &t), MPI_SUCCESS);
    assert_true(t->contig);
    co_dt_destroy(t);
    co_dtype *di = D(MPI_DOUBLE_INT);
    assert_int_equal(di->nsegs, 1);
    assert_int_equal(di->segs[0].len, 12);
    assert_false(di->contig);
    assert_int_equal(di->basic, CO_B_DOUBLE_INT);
    /* normalising again changes nothing */
    assert_int_equal(co_dt_hvector(7, 3, 40, D(MPI_SHORT), &t), MPI_SUCCESS);
    co_dt_seg before = t->segs[0];
    size_t n = t->nsegs;
    co_dt_normalize(t);
    assert_int_equal(t->nsegs, n);
    assert_memory_equal(&before, &t->segs[0], sizeof(before));
    co_dt_destroy(t);
}

/* A type with many segments (an irregular indexed type): packing any window must equal the
 * same window of the full pack; exercises the binary search over segment offsets. */
static void pack_windows(void **state) {
    (void)state;
    enum { NB = 200 };
    int bl[NB];
    MPI_Aint dp[NB];
    MPI_Aint at = 0;
    for (int i = 0; i < NB; i++) {
        bl[i] = 1 + (i * 7) % 5;
        dp[i] = at;
        at += (bl[i] + 1 + i % 3) * 4;
    }
    co_dtype *t;
    assert_int_equal(co_dt_hindexed(NB, bl, 0, dp, D(MPI_INT), &t), MPI_SUCCESS);
    assert_true(t->nsegs > 8);
    assert_non_null(t->seg_pos);
    size_t count = 3, total = count * t->size;
    char *src = malloc((size_t)co_dt_extent(t) * count + 64);
    for (size_t i = 0; i < (size_t)co_dt_extent(t) * count; i++) src[i] = (char)(i * 31 + 7);
    char *full = malloc(total), *part = malloc(total);
    assert_int_equal(co_dt_pack(t, count, src, 0, full, total), total);
    for (size_t off = 0; off < total; off += 37) {
        size_t len = total - off < 101 ? total - off : 101;
        assert_int_equal(co_dt_pack(t, count, src, off, part, len), len);
        assert_memory_equal(part, full + off, len);
    }
    /* unpack windows in a scrambled order rebuild the data */
    char *dst = calloc((size_t)co_dt_extent(t) * count + 64, 1);
    for (size_t k = 0; k < 2; k++)
        for (size_t off = k * 53; off < total; off += 106)
            co_dt_unpack(t, count, dst, off, full + off, total - off < 53 ? total - off : 53);
    assert_int_equal(co_dt_pack(t, count, dst, 0, part, total), total);
    assert_memory_equal(part, full, total);
    /* element counting inside an element */
    assert_int_equal(co_dt_elements(t, t->size + 8), t->sig_elems + 2);
    free(src);
    free(full);
    free(part);
    free(dst);
    co_dt_destroy(t);
}

/* The rendezvous description: iovecs from the wire view equal those from the type. */
static void wire_round_trip(void **state) {
    (void)state;
    co_dtype *t;
    assert_int_equal(co_dt_hvector(64, 3, -40, D(MPI_INT), &t), MPI_SUCCESS);
    char buf[8];
    size_t len = co_dt_wire_write(t, 5, buf, NULL);
    co_dt_wire *w = malloc(len);
    assert_int_equal(co_dt_wire_write(t, 5, buf, w), len);
    co_dtype view;
    co_dt_wire_view(w, &view);
    struct iovec a[512], b[512];
    size_t ca, cb;
    for (size_t off = 0; off < 5 * t->size; off += 100) {
        int na = co_dt_iov(t, 5, buf, off, a, 512, &ca);
        int nb = co_dt_iov(&view, w->count, (void *)(uintptr_t)w->base, off, b, 512, &cb);
        assert_int_equal(na, nb);
        assert_int_equal(ca, cb);
        assert_memory_equal(a, b, (size_t)na * sizeof(struct iovec));
    }
    assert_int_equal(co_dt_avg_run(&view), co_dt_avg_run(t));
    free(w);
    co_dt_destroy(t);
    /* too many segments: the description says "stream it" */
    enum { NB = CO_DT_WIRE_MAX_SEGS + 5 };
    int bl[NB];
    MPI_Aint dp[NB];
    for (int i = 0; i < NB; i++) {
        bl[i] = 1 + i % 2;
        dp[i] = i * 64;
    }
    assert_int_equal(co_dt_hindexed(NB, bl, 0, dp, D(MPI_INT), &t), MPI_SUCCESS);
    assert_true(t->nsegs > CO_DT_WIRE_MAX_SEGS);
    len = co_dt_wire_write(t, 1, buf, NULL);
    assert_int_equal(len, sizeof(co_dt_wire));
    w = malloc(len);
    co_dt_wire_write(t, 1, buf, w);
    assert_int_equal(w->nsegs, 0);
    assert_int_equal(w->contig, 0);
    free(w);
    co_dt_destroy(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(column_is_one_segment),
        cmocka_unit_test(subarrays_are_compact),
        cmocka_unit_test(merging),
        cmocka_unit_test(pack_windows),
        cmocka_unit_test(wire_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
