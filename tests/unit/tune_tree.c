/* Unit tests of broadcast trees without MPI (src/tune/tree.c): the validity check refuses
 * cycles, a wrong root and ranks out of range, and accepts the flat and binomial trees; trans(a, b)
 * is allowed exactly when it gives another tree; the preorder that travels with a message lists
 * every rank once, each followed by its subtree, larger subtrees first, and the check a receiver
 * applies accepts it and refuses every damaged one tried; the text form reads back what it wrote
 * and refuses what is not a tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tune/tune.h"

static uint64_t next_random(uint64_t *s) {
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* a random tree: each rank but the root hangs below one placed before it */
static void random_tree(int *parent, int n, int root, uint64_t *s) {
    int *order = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) order[i] = i;
    order[0] = root;
    order[root] = 0;
    for (int i = n - 1; i > 1; i--) {
        int j = 1 + (int)(next_random(s) % (uint64_t)i);
        int x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    parent[root] = -1;
    for (int i = 1; i < n; i++) parent[order[i]] = order[next_random(s) % (uint64_t)i];
    free(order);
}

static void test_valid(void **state) {
    (void)state;
    int p[5];
    co_tree_flat(p, 5, 2);
    assert_true(co_tree_valid(p, 5, 2));
    assert_false(co_tree_valid(p, 5, 0)); /* another root */
    int cycle[5] = {-1, 2, 3, 1, 0};      /* 1 -> 2 -> 3 -> 1 */
    assert_false(co_tree_valid(cycle, 5, 0));
    int self[3] = {-1, 1, 0};
    assert_false(co_tree_valid(self, 3, 0));
    int out[3] = {-1, 7, 0};
    assert_false(co_tree_valid(out, 3, 0));
    int two_roots[3] = {-1, -1, 0};
    assert_false(co_tree_valid(two_roots, 3, 0));
    int chain[4] = {-1, 0, 1, 2};
    assert_true(co_tree_valid(chain, 4, 0));
    /* the binomial tree: 8 ranks from root 0 is the textbook one, and from every root of
     * every size it is a tree whose ranks, counted from the root, hang below the rank with
     * their lowest set bit cleared */
    int b8[8], want8[8] = {-1, 0, 0, 2, 0, 4, 4, 6};
    co_tree_binomial(b8, 8, 0);
    assert_memory_equal(b8, want8, sizeof(b8));
    for (int n = 1; n <= 33; n++)
        for (int root = 0; root < n; root++) {
            int b[33];
            co_tree_binomial(b, n, root);
            assert_true(co_tree_valid(b, n, root));
            for (int i = 0; i < n; i++) {
                int rel = (i - root + n) % n;
                if (rel) assert_int_equal((b[i] - root + n) % n, rel & (rel - 1));
            }
        }
}

/* trans(a, b) is allowed for every a but the root and every other b but a's parent, and then
 * gives another tree, with a below b: a's subtree moved whole when b lay outside it; when b
 * lay inside, b in a's place and b's children handed to b's parent. */
static void test_moves(void **state) {
    (void)state;
    uint64_t s = 1;
    for (int rep = 0; rep < 200; rep++) {
        int n = 1 + (int)(next_random(&s) % 12), root = (int)(next_random(&s) % (uint64_t)n);
        int p[12], q[12];
        random_tree(p, n, root, &s);
        assert_true(co_tree_valid(p, n, root));
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                int inside = co_tree_below(p, n, b, a);
                int allowed = a != root && a != b && (p[a] != b || inside);
                assert_int_equal(co_tree_can_move(p, n, root, a, b), allowed);
                if (!allowed) continue;
                memcpy(q, p, sizeof(p));
                co_tree_move(q, n, a, b);
                assert_true(co_tree_valid(q, n, root));
                assert_memory_not_equal(p, q, (size_t)n * sizeof(int));
                assert_int_equal(q[a], b);
                for (int i = 0; i < n; i++) {
                    if (i == a) continue;
                    int want = p[i];
                    if (inside && i == b) want = p[a];
                    if (inside && i != b && p[i] == b) want = p[b];
                    assert_int_equal(q[i], want);
                }
            }
    }
}

/* Each rank once; each entry's size is 1 + its children's sizes, and its children follow it
 * in sending order; the receiver's check accepts it, and every subtree of it. */
static void test_preorder(void **state) {
    (void)state;
    uint64_t s = 7;
    for (int rep = 0; rep < 300; rep++) {
        int n = 1 + (int)(next_random(&s) % 40), root = (int)(next_random(&s) % (uint64_t)n);
        int p[40];
        uint32_t ent[80];
        random_tree(p, n, root, &s);
        assert_int_equal(co_tree_preorder(p, n, root, ent), 0);
        assert_int_equal(ent[0], (uint32_t)root);
        assert_int_equal(ent[1], (uint32_t)n);
        int seen[40] = {0};
        for (int i = 0; i < n; i++) {
            int r = (int)ent[2 * i];
            assert_false(seen[r]++);
            /* the subtree's entries are r's descendants, and its children come in order */
            uint32_t sz = ent[2 * i + 1], prev_sz = UINT32_MAX;
            int prev = -1;
            for (uint32_t j = (uint32_t)i + 1; j < (uint32_t)i + sz; j += ent[2 * j + 1]) {
                int k = (int)ent[2 * j];
                assert_int_equal(p[k], r);
                assert_true(ent[2 * j + 1] < prev_sz || (ent[2 * j + 1] == prev_sz && k > prev));
                prev_sz = ent[2 * j + 1];
                prev = k;
            }
            for (uint32_t j = (uint32_t)i + 1; j < (uint32_t)i + sz; j++)
                assert_true(co_tree_below(p, n, (int)ent[2 * j], r));
            assert_true(co_tree_preorder_valid(ent + 2 * i, (int)sz, n));
        }
    }
}

/* what a damaged message may hold: each is refused */
/* The entries from i on as one subtree, read the plain recursive way: the index past it, or -1
 * when its size is 0, runs past `end`, or its children do not fill it exactly. */
static int subtree_end(const uint32_t *ent, int i, int end) {
    uint32_t sz = ent[2 * i + 1];
    if (sz < 1 || (uint32_t)(end - i) < sz) return -1;
    int j = i + 1, stop = i + (int)sz;
    while (j < stop)
        if ((j = subtree_end(ent, j, stop)) < 0) return -1;
    return j;
}

/* What a receiver must accept: m entries of distinct ranks below n, the first covering them
 * all, sizes that nest exactly. */
static int reference_valid(const uint32_t *ent, int m, int n) {
    int seen[16] = {0};
    for (int k = 0; k < m; k++)
        if (ent[2 * k] >= (uint32_t)n || seen[ent[2 * k]]++) return 0;
    return ent[1] == (uint32_t)m && subtree_end(ent, 0, m) == m;
}

static void test_preorder_damaged(void **state) {
    (void)state;
    int p[6] = {-1, 0, 0, 1, 1, 2};
    uint32_t ent[12], bad[12];
    assert_int_equal(co_tree_preorder(p, 6, 0, ent), 0);
    assert_true(co_tree_preorder_valid(ent, 6, 6));
    /* every entry changed to every small value, and every pair of sizes: the check agrees
     * with the recursive reading (a change may still be another valid tree) */
    int refused = 0;
    for (int i = 0; i < 12; i++)
        for (uint32_t v = 0; v < 9; v++) {
            memcpy(bad, ent, sizeof(ent));
            bad[i] = v;
            int want = reference_valid(bad, 6, 6);
            assert_int_equal(co_tree_preorder_valid(bad, 6, 6), want);
            refused += !want;
        }
    for (int i = 1; i < 12; i += 2)
        for (int j = i + 2; j < 12; j += 2)
            for (uint32_t v = 1; v < 7; v++)
                for (uint32_t w = 1; w < 7; w++) {
                    memcpy(bad, ent, sizeof(ent));
                    bad[i] = v;
                    bad[j] = w;
                    assert_int_equal(co_tree_preorder_valid(bad, 6, 6), reference_valid(bad, 6, 6));
                }
    assert_true(refused > 0);
    uint32_t dup[6] = {0, 3, 1, 1, 1, 1};
    assert_false(co_tree_preorder_valid(dup, 3, 6));
    uint32_t over[6] = {0, 3, 1, 3, 2, 1}; /* a child's subtree ends past its parent's */
    assert_false(co_tree_preorder_valid(over, 3, 6));
    uint32_t zero[4] = {0, 2, 1, 0};
    assert_false(co_tree_preorder_valid(zero, 2, 6));
    uint32_t rank_out[4] = {0, 2, 6, 1};
    assert_false(co_tree_preorder_valid(rank_out, 2, 6));
    assert_false(co_tree_preorder_valid(ent, 7, 6)); /* more entries than ranks */
}

static void test_text(void **state) {
    (void)state;
    uint64_t s = 3;
    char buf[512];
    for (int rep = 0; rep < 100; rep++) {
        int n = 1 + (int)(next_random(&s) % 30), root = (int)(next_random(&s) % (uint64_t)n);
        int p[30], q[30];
        random_tree(p, n, root, &s);
        co_tree_format(p, n, buf, sizeof(buf));
        assert_int_equal(co_tree_parse(buf, q, n, root), 0);
        assert_memory_equal(p, q, (size_t)n * sizeof(int));
        if (n > 1) assert_int_not_equal(co_tree_parse(buf, q, n - 1, root), 0);
    }
    int q[4];
    assert_int_equal(co_tree_parse("-1 0 0 1", q, 4, 0), 0);
    assert_int_not_equal(co_tree_parse("-1 0 0 1 2", q, 4, 0), 0); /* one too many */
    assert_int_not_equal(co_tree_parse("-1 0 0", q, 4, 0), 0);     /* one too few */
    assert_int_not_equal(co_tree_parse("-1 2 3 1", q, 4, 0), 0);   /* a cycle */
    assert_int_not_equal(co_tree_parse("-1 0 x 1", q, 4, 0), 0);
    assert_int_not_equal(co_tree_parse("0 -1 0 1", q, 4, 0), 0); /* rooted elsewhere */
    assert_int_not_equal(co_tree_parse("-1 0 9 1", q, 4, 0), 0);
    assert_int_not_equal(co_tree_parse("", q, 4, 0), 0);
}

static void test_class(void **state) {
    (void)state;
    assert_int_equal(co_tune_class(0), 0);
    assert_int_equal(co_tune_class(1), 1);
    assert_int_equal(co_tune_class(2), 2);
    assert_int_equal(co_tune_class(3), 2);
    assert_int_equal(co_tune_class(4), 3);
    assert_int_equal(co_tune_class(1023), 10);
    assert_int_equal(co_tune_class(1024), 11);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),    cmocka_unit_test(test_moves),
        cmocka_unit_test(test_preorder), cmocka_unit_test(test_preorder_damaged),
        cmocka_unit_test(test_text),     cmocka_unit_test(test_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
