/* Unit tests of the search (src/tune/tuner.c) without MPI, against a model of a broadcast's
 * time instead of a clock: each rank sends to its children one after another in the order the
 * broadcast uses, each send costing its link's latency, and the tree's time is its last
 * arrival. On links where the root reaches rank 1 quickly and every other rank slowly, the
 * search must end, within a bounded number of timed calls, at a tree in which the root sends to
 * rank 1 alone; with all links alike it must end no slower than the binomial tree it starts
 * from. Over 256 ranks the moves are drawn at random instead of enumerated, and the same must
 * hold. Nothing is stored (COHORT_TUNE_DB=none). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tune/tune.h"

typedef double (*lat_fn)(int from, int to);

static double slow_root(int from, int to) {
    int a = from < to ? from : to, b = from < to ? to : from;
    return a == 0 && b >= 2 ? 3000 : 50;
}

static double uniform(int from, int to) {
    (void)from;
    (void)to;
    return 50;
}

/* the model's time of tree `parent` rooted at root */
static double model(const int *parent, int n, int root, lat_fn lat) {
    uint32_t *ent = malloc((size_t)n * 8);
    double *clock = calloc((size_t)n, sizeof(double)), worst = 0;
    assert_int_equal(co_tree_preorder(parent, n, root, ent), 0);
    for (int i = 1; i < n; i++) { /* preorder: each parent before its children, in send order */
        int r = (int)ent[2 * i], p = parent[r];
        clock[p] += lat(p, r);
        clock[r] = clock[p];
        if (clock[r] > worst) worst = clock[r];
    }
    free(ent);
    free(clock);
    return worst;
}

/* Runs the search to its end; returns the final tree's model time, its tree in *out. */
static double search(int n, int root, lat_fn lat, long max_calls, int *out) {
    char key[64];
    snprintf(key, sizeof(key), "unit*%d %p", n, (void *)lat);
    co_tune_ctx *t = co_tune_get(key, n, root, 1000);
    assert_non_null(t);
    long calls = 0;
    for (;;) {
        int timed;
        const int *tree = co_tune_next(t, &timed);
        assert_true(co_tree_valid(tree, n, root));
        if (!timed) {
            memcpy(out, tree, (size_t)n * sizeof(int));
            return model(tree, n, root, lat);
        }
        assert_true(++calls <= max_calls);
        co_tune_report(t, (uint64_t)(model(tree, n, root, lat) * 1e3));
    }
}

static void setup_state(void) {
    strcpy(co_st.cfg.tune_db, "none");
}

static void test_slow_root(void **state) {
    (void)state;
    setup_state();
    for (int n = 3; n <= 40; n += n < 10 ? 1 : 10) {
        int *tree = malloc((size_t)n * sizeof(int));
        double best = search(n, 0, slow_root, 3L * 3 * (n * n + 64), tree);
        for (int r = 2; r < n; r++) assert_int_not_equal(tree[r], 0); /* no slow link used */
        assert_int_equal(tree[1], 0);
        assert_true(best < 3000);
        free(tree);
    }
}

static void test_uniform(void **state) {
    (void)state;
    setup_state();
    for (int n = 3; n <= 33; n += 5) {
        for (int root = 0; root < n; root += 7) {
            int *tree = malloc((size_t)n * sizeof(int)), *bin = malloc((size_t)n * sizeof(int));
            co_tree_binomial(bin, n, root);
            double got = search(n, root, uniform, 3L * 3 * (n * n + 64), tree);
            assert_true(got <= model(bin, n, root, uniform));
            free(tree);
            free(bin);
        }
    }
}

/* over 256 ranks: moves drawn, not enumerated; the search still ends, and improves */
static void test_many_ranks(void **state) {
    (void)state;
    setup_state();
    int n = 300, *tree = malloc((size_t)n * sizeof(int)), *bin = malloc((size_t)n * sizeof(int));
    co_tree_binomial(bin, n, 0);
    double got = search(n, 0, slow_root, 3L * 4 * 4096 * 8, tree);
    assert_true(got < model(bin, n, 0, slow_root) * 0.95);
    int slow = 0;
    for (int r = 2; r < n; r++) slow += tree[r] == 0;
    int bin_slow = 0;
    for (int r = 2; r < n; r++) bin_slow += bin[r] == 0;
    assert_true(slow < bin_slow);
    free(tree);
    free(bin);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_root),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_many_ranks),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    co_tune_fini();
    return rc;
}
