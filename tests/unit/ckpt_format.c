/* Unit tests of the checkpoint format without MPI (src/ckpt/format.c): the radix tree over
 * rank sets of every shape finds each rank's leaf and no other, its node count is 2n - 1, and
 * a tree whose links loop or point outside it is reported instead of walked forever; the
 * shuffle of 8-byte words into byte planes puts every byte where the plain definition says and
 * its inverse undoes it, at every length; the parser of a leaf refuses runs that go backwards,
 * overlap, leave the image, or leave bytes past the base's end unset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/ckpt/ckpt.h"

static uint64_t next_random(uint64_t *s) {
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Every rank of a set finds its own leaf; ranks outside the set find none. */
static void check_set(const uint32_t *keys, uint32_t n, uint32_t universe) {
    co_ckpt_node *t = calloc(2 * (size_t)n + 1, sizeof(*t));
    assert_non_null(t);
    uint32_t count = co_ckpt_tree_build(keys, n, t);
    assert_int_equal(count, n ? 2 * n - 1 : 0);
    uint32_t k = 0;
    for (uint32_t r = 0; r < universe; r++) {
        int64_t i = co_ckpt_tree_find(t, count, r);
        if (k < n && keys[k] == r) {
            assert_true(i >= 0);
            assert_int_equal(t[i].leaf, 1);
            assert_int_equal(t[i].key, r);
            k++;
        } else {
            assert_int_equal(i, -1);
        }
    }
    free(t);
}

static void test_tree_shapes(void **state) {
    (void)state;
    check_set(NULL, 0, 8);
    uint32_t one[] = {5};
    check_set(one, 1, 16);
    uint32_t all[64];
    for (uint32_t n = 1; n <= 64; n++) {
        for (uint32_t i = 0; i < n; i++) all[i] = i;
        check_set(all, n, n + 3);
    }
    uint32_t far[] = {0, 1, 1u << 20, (1u << 31) + 7, 0xfffffffeu};
    check_set(far, 5, 64);
    assert_true(co_ckpt_tree_find((co_ckpt_node[9]){0}, 0, 0xfffffffeu) == -1);
}

static void test_tree_random(void **state) {
    (void)state;
    uint64_t seed = 12345;
    uint32_t keys[300];
    for (int round = 0; round < 200; round++) {
        uint32_t universe = 1 + (uint32_t)(next_random(&seed) % 300), n = 0;
        for (uint32_t r = 0; r < universe; r++)
            if (next_random(&seed) % 3 == 0) keys[n++] = r;
        check_set(keys, n, universe + 5);
    }
}

static void test_tree_malformed(void **state) {
    (void)state;
    uint32_t keys[] = {1, 2, 3, 6};
    co_ckpt_node t[7];
    uint32_t count = co_ckpt_tree_build(keys, 4, t);
    co_ckpt_node bad[7];
    memcpy(bad, t, sizeof(t));
    bad[0].child[1] = 0; /* a loop back to the root */
    assert_int_equal(co_ckpt_tree_find(bad, count, 6), -2);
    memcpy(bad, t, sizeof(t));
    bad[0].child[0] = 99; /* outside the tree */
    assert_int_equal(co_ckpt_tree_find(bad, count, 1), -2);
    memcpy(bad, t, sizeof(t));
    bad[0].key = 40; /* no such bit */
    assert_int_equal(co_ckpt_tree_find(bad, count, 1), -2);
}

/* A leaf's raw form: nregions, nruns, region sizes, runs, bytes. */
static size_t make_leaf(uint8_t *out, uint32_t nr, const uint64_t *lens, uint32_t nruns,
                        const uint64_t *runs) {
    uint32_t w[2] = {nr, nruns};
    memcpy(out, w, 8);
    memcpy(out + 8, lens, 8 * nr);
    if (nruns) memcpy(out + 8 + 8 * nr, runs, 16 * nruns);
    size_t n = 8 + 8 * nr + 16 * nruns;
    for (uint32_t i = 0; i < nruns; i++) {
        memset(out + n, 0x33, runs[2 * i + 1]);
        n += runs[2 * i + 1];
    }
    return n;
}

static void test_parse(void **state) {
    (void)state;
    uint8_t buf[4096];
    co_ckpt_image im;
    co_ckpt_err e;
    uint64_t lens[] = {100, 50};
    uint64_t good[] = {10, 5, 40, 20};
    size_t n = make_leaf(buf, 2, lens, 2, good);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 150, &im, &e), 0);
    assert_int_equal(im.image_len, 150);
    assert_int_equal(im.nruns, 2);
    /* one byte too many or too few */
    assert_int_equal(co_ckpt_parse(buf, n + 1, 0, 150, &im, &e), MPI_ERR_IO);
    assert_int_equal(co_ckpt_parse(buf, n - 1, 0, 150, &im, &e), MPI_ERR_IO);
    uint64_t back[] = {40, 5, 10, 20}; /* backwards */
    n = make_leaf(buf, 2, lens, 2, back);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 150, &im, &e), MPI_ERR_IO);
    uint64_t overlap[] = {10, 31, 40, 20};
    n = make_leaf(buf, 2, lens, 2, overlap);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 150, &im, &e), MPI_ERR_IO);
    uint64_t outside[] = {140, 20};
    n = make_leaf(buf, 2, lens, 1, outside);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 150, &im, &e), MPI_ERR_IO);
    uint64_t empty_run[] = {10, 0};
    n = make_leaf(buf, 2, lens, 1, empty_run);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 150, &im, &e), MPI_ERR_IO);
    /* the base has 120 bytes: 120..150 must be covered */
    uint64_t tail[] = {100, 50};
    n = make_leaf(buf, 2, lens, 1, tail);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 120, &im, &e), 0);
    uint64_t short_tail[] = {125, 25};
    n = make_leaf(buf, 2, lens, 1, short_tail);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 120, &im, &e), MPI_ERR_IO);
    uint64_t gap[] = {115, 10, 130, 20};
    n = make_leaf(buf, 2, lens, 2, gap);
    assert_int_equal(co_ckpt_parse(buf, n, 0, 120, &im, &e), MPI_ERR_IO);
    /* lists longer than the leaf */
    uint32_t w[2] = {1000, 0};
    memcpy(buf, w, 8);
    assert_int_equal(co_ckpt_parse(buf, 64, 0, 0, &im, &e), MPI_ERR_IO);
    /* a base has no runs and exactly its regions' bytes */
    n = make_leaf(buf, 2, lens, 0, NULL);
    memset(buf + n, 1, 150);
    assert_int_equal(co_ckpt_parse(buf, n + 150, 1, 0, &im, &e), 0);
    assert_int_equal(co_ckpt_parse(buf, n + 149, 1, 0, &im, &e), MPI_ERR_IO);
    n = make_leaf(buf, 2, lens, 1, good);
    assert_int_equal(co_ckpt_parse(buf, n, 1, 0, &im, &e), MPI_ERR_IO);
}

static void test_shuffle(void **state) {
    (void)state;
    uint64_t seed = 99;
    uint8_t src[1100], dst[1100], back[1100];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = (uint8_t)next_random(&seed);
    for (size_t k = 0; k <= sizeof(src); k++) {
        co_ckpt_shuffle(dst, src, k);
        size_t w = k / 8;
        for (size_t i = 0; i < w; i++)
            for (size_t j = 0; j < 8; j++) assert_int_equal(dst[j * w + i], src[8 * i + j]);
        for (size_t i = 8 * w; i < k; i++) assert_int_equal(dst[i], src[i]);
        co_ckpt_unshuffle(back, dst, k);
        assert_memory_equal(back, src, k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_shapes),    cmocka_unit_test(test_tree_random),
        cmocka_unit_test(test_tree_malformed), cmocka_unit_test(test_parse),
        cmocka_unit_test(test_shuffle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
