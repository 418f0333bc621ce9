/* Unit tests of the communicator ID machinery without MPI: the ID set, the hash map, and the
 * tree of ID pools run as many simulated processes in one address space. The simulated
 * network keeps each ordered pair's messages in order (as the shared-memory queues do) but
 * delivers pairs in random order, so requests, grants, returns and free notices race the way
 * they can in a job: members announce frees before the master has made the lease, parents
 * are freed before their children, pools are asked while their owners go away, and a tiny
 * ID space makes the root reclaim. Every live communicator's ID is checked to be unique, and
 * at the end every ID must be back in the root pool with no pool object left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../../src/comm/idpool.h"
#include "../../src/comm/idset.h"
#include "../../src/comm/u64map.h"
#include "../../src/core/cohort.h"

/* ---- ID sets and maps ------------------------------------------------------------------------ */

static void test_idset(void **state) {
    (void)state;
    co_idset s = {0};
    co_idset_put_range(&s, 10, 20);
    co_idset_put_range(&s, 30, 40);
    assert_int_equal(s.count, 20);
    assert_int_equal(co_idset_take1(&s), 10);
    assert_int_equal(co_idset_take_run(&s, 10), 30); /* [11,20) is too short */
    assert_int_equal(s.count, 9);
    co_idset_put(&s, 10);
    assert_int_equal(co_idset_take1(&s), 10); /* returned singles come back first */
    co_idset_put(&s, 10);
    co_idset_put_range(&s, 20, 30);
    assert_int_equal(co_idset_take_run(&s, 20), 10); /* 10, [11,20), [20,30) coalesce */
    assert_int_equal(s.count, 0);
    assert_int_equal(co_idset_take1(&s), 0);
    for (uint64_t i = 100; i < 200; i += 2) co_idset_put(&s, i);
    for (uint64_t i = 101; i < 200; i += 2) co_idset_put(&s, i);
    co_idset_normalize(&s);
    assert_int_equal(s.nr, 1);
    assert_int_equal(s.r[0].lo, 100);
    assert_int_equal(s.r[0].hi, 200);
    co_idrange r[4];
    uint64_t got;
    assert_int_equal(co_idset_take_ranges(&s, 30, r, 4, &got), 1);
    assert_int_equal(got, 30);
    assert_true(co_idset_contains(&s, 150) && !co_idset_contains(&s, 100));
    co_idset_clear(&s);
}

/* The set against a plain bitmap, over a long random mix of operations; among them the
 * pattern of split and create (a run of n taken, all of it but one ID given back), which
 * fragments the set into many short ranges that later runs must skip. */
static void test_idset_model(void **state) {
    (void)state;
    enum { M = 4096 };
    static unsigned char free_[M]; /* free_[id]: id is in the set (ids 1..M-1) */
    static uint64_t stack[M];      /* singles returned since the last normalisation */
    size_t ns = 0;
    memset(free_, 0, sizeof(free_));
    co_idset s = {0};
    co_idset_put_range(&s, 1, M);
    for (int i = 1; i < M; i++) free_[i] = 1;
    uint64_t taken[M];
    size_t nt = 0;
    unsigned seed = 12345;
    for (int op = 0; op < 40000; op++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 16) % 8;
        if (k <= 2) { /* a run, most given back: base + (a random member) kept */
            uint64_t n = 2 + (seed >> 8) % 7, want = 0;
            for (uint64_t id = 1, len = 0; id < M && !want; id++) {
                len = free_[id] ? len + 1 : 0;
                if (len == n) want = id - n + 1;
            }
            uint64_t before = s.count;
            uint64_t got = co_idset_take_run(&s, n);
            if (before >= n) ns = 0; /* it normalised: the singles joined the ranges */
            assert_int_equal(got, want);
            if (!got) continue;
            uint64_t keep = got + (seed >> 4) % n;
            for (uint64_t id = got; id < got + n; id++) {
                free_[id] = 0;
                if (id == keep) {
                    taken[nt++] = id;
                } else {
                    co_idset_put(&s, id);
                    free_[id] = 1;
                    stack[ns++] = id;
                }
            }
        } else if (k == 3 && nt) { /* a communicator freed */
            size_t j = (seed >> 8) % nt;
            uint64_t id = taken[j];
            taken[j] = taken[--nt];
            co_idset_put(&s, id);
            free_[id] = 1;
            stack[ns++] = id;
        } else if (k == 4) { /* a dup: the last single returned, else the lowest */
            uint64_t want = 0;
            if (ns) {
                want = stack[--ns];
            } else {
                for (uint64_t id = 1; id < M && !want; id++)
                    if (free_[id]) want = id;
            }
            uint64_t got = co_idset_take1(&s);
            assert_int_equal(got, want);
            if (got) {
                free_[got] = 0;
                taken[nt++] = got;
            }
        } else if (k == 5 && nt > 8) { /* a batch lent out and back: ranges from the bottom */
            co_idrange r[3];
            uint64_t got, lo = 0;
            size_t nr = co_idset_take_ranges(&s, 5, r, 3, &got);
            ns = 0;
            for (size_t j = 0; j < nr; j++)
                for (uint64_t id = r[j].lo; id < r[j].hi; id++) {
                    while (!free_[++lo]) {
                    }
                    assert_int_equal(id, lo); /* the lowest free IDs, in order */
                }
            for (size_t j = 0; j < nr; j++) co_idset_put_range(&s, r[j].lo, r[j].hi);
        } else if (k == 6) {
            uint64_t id = 1 + (seed >> 8) % (M - 1);
            assert_int_equal(co_idset_contains(&s, id), free_[id]);
        } else {
            co_idset_normalize(&s);
            ns = 0;
        }
        uint64_t count = 0;
        for (int id = 1; id < M; id++) count += free_[id];
        assert_int_equal(s.count, count);
    }
    co_idset_clear(&s);
}

static void test_u64map(void **state) {
    (void)state;
    co_u64map m = {0};
    for (uint64_t k = 1; k <= 5000; k++) co_u64map_put(&m, k * 7919, k);
    for (uint64_t k = 1; k <= 5000; k += 2) assert_true(co_u64map_del(&m, k * 7919));
    for (uint64_t k = 1; k <= 5000; k++) {
        uint64_t *v = co_u64map_get(&m, k * 7919);
        if (k % 2)
            assert_null(v);
        else
            assert_true(v && *v == k);
    }
    assert_int_equal(m.n, 2500);
    co_u64map_clear(&m);
}

/* ---- A simulated job ---------------------------------------------------------------------------
 */

#define NP     6
#define MAXC   4096
#define SPACE0 1000

typedef struct smsg {
    struct smsg *next;
    int src, dst;
    uint64_t w[3];
    size_t len;
    char pl[];
} smsg;

typedef struct scomm {
    uint64_t id;
    int live;
    int master;
    int nmem;
    int mem[NP];
    co_idpool *pool; /* at the master (NULL until the lease is made) */
    int home_rank;   /* where its ID came from */
    uint64_t home_serial;
    co_idpool *delegate[NP]; /* delegate pools of members */
    int lease_pending;       /* the master has not made the lease yet */
    int freed[NP];           /* member i has freed (notice sent or released) */
} scomm;

static struct {
    co_idp *p[NP];
    smsg *qh[NP][NP], *qt[NP][NP];
    long inflight;
    scomm c[MAXC];
    int nc;
    unsigned seed;
    uint64_t space;
} J;

static unsigned rnd(void) {
    J.seed = J.seed * 1103515245u + 12345u;
    return (J.seed >> 8) & 0xffffff;
}

static void sim_send(void *arg, int dst, const uint64_t w[3], const void *pl, size_t len) {
    int src = (int)(intptr_t)arg;
    smsg *m = malloc(sizeof(*m) + len);
    assert_non_null(m);
    m->next = NULL;
    m->src = src;
    m->dst = dst;
    memcpy(m->w, w, sizeof(m->w));
    m->len = len;
    if (len) memcpy(m->pl, pl, len);
    if (J.qt[src][dst])
        J.qt[src][dst]->next = m;
    else
        J.qh[src][dst] = m;
    J.qt[src][dst] = m;
    J.inflight++;
}

/* Deliver one message from a random non-empty pair; 0 if the network is empty. */
static int deliver_one(void) {
    if (!J.inflight) return 0;
    int start = (int)(rnd() % (NP * NP));
    for (int k = 0; k < NP * NP; k++) {
        int i = (start + k) % (NP * NP), s = i / NP, d = i % NP;
        smsg *m = J.qh[s][d];
        if (!m) continue;
        J.qh[s][d] = m->next;
        if (!m->next) J.qt[s][d] = NULL;
        J.inflight--;
        co_idp_on_msg(J.p[d], s, m->w, m->pl, m->len);
        free(m);
        return 1;
    }
    return 0;
}

static void job_start(uint64_t space, uint64_t batch, unsigned seed) {
    memset(&J, 0, sizeof(J));
    J.seed = seed;
    J.space = space;
    co_st.cfg.log_level = CO_LOG_WARN;
    for (int r = 0; r < NP; r++) {
        J.p[r] = co_idp_create(r, 100, space, batch, 512, sim_send, (void *)(intptr_t)r, 1);
        assert_non_null(J.p[r]);
    }
    scomm *w = &J.c[J.nc++]; /* the world */
    w->id = 1;
    w->live = 1;
    w->master = 0;
    w->nmem = NP;
    for (int r = 0; r < NP; r++) w->mem[r] = r;
    w->pool = co_idp_root(J.p[0]);
}

static int is_live_id(uint64_t id) {
    for (int i = 0; i < J.nc; i++)
        if (J.c[i].live && J.c[i].id == id) return 1;
    return 0;
}

static int live_count(void) {
    int n = 0;
    for (int i = 0; i < J.nc; i++) n += J.c[i].live;
    return n;
}

static void make_lease(scomm *c) {
    c->pool = co_idp_lease(J.p[c->master], c->id, c->nmem, c->home_rank, c->home_serial);
    c->lease_pending = 0;
}

/* Take one ID from pool p, letting the network run (any process) while it waits. */
static int take_one(co_idpool *p, uint64_t *id) {
    int idle = 0;
    for (;;) {
        int rc = co_idpool_take(p, 1, id);
        if (rc == CO_IDP_OK) return 1;
        if (rc == CO_IDP_FAIL) return 0;
        assert_int_equal(rc, CO_IDP_WAIT);
        if (deliver_one()) {
            idle = 0;
            continue;
        }
        if (!idle++) continue; /* the answer may have come through this process's own queue */
        /* Nothing in flight: the request waits at a master that has not finished making a
         * communicator yet (a placeholder). That master catches up now. */
        int made = 0;
        for (int i = 0; i < J.nc && !made; i++)
            if (J.c[i].live && J.c[i].lease_pending) make_lease(&J.c[i]), made = 1;
        if (!made)
            for (int r = 0; r < NP; r++) co_idp_dump(J.p[r], stderr);
        assert_true(made);
    }
}

static scomm *pick_live(void) {
    for (;;) {
        scomm *c = &J.c[rnd() % (unsigned)J.nc];
        if (c->live) return c;
    }
}

/* A child of a random live communicator, made either by the parent's master (collective
 * creation) or by a member through its delegate pool (Comm_create_group). 0: out of IDs. */
static int create_child(int allow_delegate) {
    if (J.nc == MAXC) return 1;
    scomm *p = pick_live();
    if (p->lease_pending) make_lease(p);
    int via = p->master;
    co_idpool *pool = p->pool;
    if (allow_delegate && rnd() % 3 == 0) {
        via = p->mem[rnd() % (unsigned)p->nmem];
        if (via != p->master) {
            if (!p->delegate[via]) p->delegate[via] = co_idpool_new(J.p[via], p->master, 0, p->id);
            pool = p->delegate[via];
        }
    }
    uint64_t id;
    if (!take_one(pool, &id)) return 0;
    assert_false(is_live_id(id));
    assert_true(id >= 100 && id < 100 + J.space);
    scomm *c = &J.c[J.nc++];
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->live = 1;
    c->home_rank = via;
    c->home_serial = co_idpool_serial(pool);
    /* members: a random subset of processes that holds `via` when it made it */
    c->mem[c->nmem++] = via;
    for (int r = 0; r < NP; r++)
        if (r != via && rnd() % 2) c->mem[c->nmem++] = r;
    c->master = c->mem[rnd() % (unsigned)c->nmem];
    if (via == c->master && via == p->master && rnd() % 2)
        make_lease(c);
    else
        c->lease_pending = 1; /* made later: notices and requests may come first */
    return 1;
}

static void free_comm(scomm *c) {
    for (int i = 0; i < c->nmem; i++) {
        int r = c->mem[i];
        if (r == c->master) continue;
        if (c->delegate[r]) co_idpool_close(c->delegate[r]);
        uint64_t w[3] = {CO_IDP_W0(CO_IDP_OP_NOTICE, c->id), 0, 0};
        sim_send((void *)(intptr_t)r, c->master, w, NULL, 0);
        if (rnd() % 2) deliver_one();
    }
    if (c->lease_pending) make_lease(c);
    co_idpool_release(c->pool);
    c->live = 0;
}

/* With the network empty, every ID is in exactly one place: a live communicator or a pool. */
static void check_conservation(void) {
    for (uint64_t id = 100; id < 100 + J.space; id++) {
        int held = is_live_id(id);
        for (int r = 0; r < NP; r++) held += co_idp_holds(J.p[r], id);
        assert_int_equal(held, 1);
    }
}

static void drain(void) {
    while (deliver_one()) {
    }
}

static void job_end(void) {
    for (int i = 1; i < J.nc; i++)
        if (J.c[i].live) free_comm(&J.c[i]);
    for (int r = 1; r < NP; r++) /* the world's delegate pools go at the end of the job */
        if (J.c[0].delegate[r]) co_idpool_close(J.c[0].delegate[r]);
    drain();
    co_idp_stats s;
    for (int r = 0; r < NP; r++) {
        co_idp_get_stats(J.p[r], &s);
        assert_int_equal(s.pools, r == 0 ? 1 : 0);  /* only the root pool is left */
        assert_int_equal(s.leases, r == 0 ? 1 : 0); /* the world's */
        if (r == 0) {
            assert_int_equal(s.root_free, J.space); /* every ID came home */
            assert_int_equal(s.lent_ids, 0);
        }
    }
    for (int r = 0; r < NP; r++) co_idp_destroy(J.p[r]);
}

static void test_random_tree(void **state) {
    (void)state;
    for (unsigned seed = 1; seed <= 40; seed++) {
        job_start(SPACE0 * 1000, 1 + seed % 9, seed);
        for (int step = 0; step < 3000; step++) {
            unsigned op = rnd() % 10;
            if (op < 5 || live_count() < 3)
                assert_true(create_child(1));
            else if (op < 9) {
                scomm *c = pick_live();
                if (c->id != 1) free_comm(c);
            } else {
                for (int k = rnd() % 20; k > 0; k--) deliver_one();
            }
            if (J.nc == MAXC) break;
        }
        job_end();
    }
}

/* Deep chains: every level's master differs from its parent's, and batches are tiny, so a
 * request travels up many levels before an ID comes back down. */
static void test_deep_chain(void **state) {
    (void)state;
    job_start(SPACE0, 1, 7);
    scomm *p = &J.c[0];
    for (int level = 0; level < 24; level++) {
        uint64_t id;
        assert_true(take_one(p->pool, &id));
        scomm *c = &J.c[J.nc++];
        memset(c, 0, sizeof(*c));
        c->id = id;
        c->live = 1;
        c->home_rank = p->master;
        c->home_serial = co_idpool_serial(p->pool);
        c->master = (p->master + 1) % NP;
        c->mem[c->nmem++] = c->master;
        make_lease(c);
        p = c;
    }
    for (int i = 0; i < 50; i++) assert_true(create_child(0));
    job_end();
}

/* A tiny ID space: IDs sit idle in pools all over the tree, so the root must reclaim them;
 * creation may fail only when every ID really is in a live communicator. */
static void test_reclaim(void **state) {
    (void)state;
    for (unsigned seed = 1; seed <= 30; seed++) {
        uint64_t space = 40 + seed % 25;
        job_start(space, 4 + seed % 5, seed);
        int failures = 0;
        for (int step = 0; step < 2000; step++) {
            if (rnd() % 3) {
                /* frees complete (all notices in) before the attempt, or their IDs would
                 * rightly still count as in use */
                if (rnd() % 2) drain();
                int drained = !J.inflight;
                if (!create_child(1)) {
                    failures++;
                    drain();
                    check_conservation();
                    if (!drained) continue;
                    /* the only IDs not in the root are live communicators' */
                    assert_int_equal((uint64_t)live_count() - 1, space);
                }
            } else {
                scomm *c = pick_live();
                if (c->id != 1) free_comm(c);
            }
        }
        assert_true(failures > 0);
        co_idp_stats s;
        co_idp_get_stats(J.p[0], &s);
        assert_true(s.reclaims > 0);
        job_end();
    }
}

/* Several processes taking at once, each from its own pool (as ranks dup their SELF), while
 * the space is nearly used up: requests queue at the root during reclaim rounds, grants and
 * reclaim replies cross. After every quiet moment each ID must be in exactly one place. */
static void test_concurrent_takes(void **state) {
    (void)state;
    int total_fails = 0;
    for (unsigned seed = 1; seed <= 200; seed++) {
        uint64_t space = 30 + seed % 40;
        job_start(space, 1 + seed % 8, seed);
        co_idpool *pool[NP];
        uint64_t held[NP][128];
        int nheld[NP] = {0}, waiting[NP] = {0};
        for (int r = 0; r < NP; r++) pool[r] = co_idpool_new(J.p[r], 0, CO_IDP_ROOT_SERIAL, 0);
        int fails = 0;
        for (int step = 0; step < 4000; step++) {
            int r = (int)(rnd() % NP);
            unsigned op = rnd() % 8;
            if (waiting[r] || op < 4) { /* start or continue a take */
                uint64_t id;
                int rc = co_idpool_take(pool[r], 1, &id);
                waiting[r] = rc == CO_IDP_WAIT;
                if (rc == CO_IDP_OK) {
                    for (int q = 0; q < NP; q++)
                        for (int k = 0; k < nheld[q]; k++) assert_true(held[q][k] != id);
                    if (nheld[r] < 128)
                        held[r][nheld[r]++] = id;
                    else
                        co_idpool_put(pool[r], id);
                }
                if (rc == CO_IDP_FAIL) fails++;
            } else if (op < 6 && nheld[r]) { /* a free */
                int k = (int)(rnd() % (unsigned)nheld[r]);
                co_idpool_put(pool[r], held[r][k]);
                held[r][k] = held[r][--nheld[r]];
            } else {
                for (int k = rnd() % 6; k > 0; k--) deliver_one();
            }
            int quiet = !J.inflight;
            for (int q = 0; q < NP; q++) quiet &= !waiting[q];
            if (quiet) { /* every ID once: held by a process or idle in a pool */
                for (uint64_t id = 100; id < 100 + space; id++) {
                    int n = 0;
                    for (int q = 0; q < NP; q++) {
                        n += co_idp_holds(J.p[q], id);
                        for (int k = 0; k < nheld[q]; k++) n += held[q][k] == id;
                    }
                    if (n != 1)
                        fprintf(stderr, "seed %u step %d: ID %llu held %d times\n", seed, step,
                                (unsigned long long)id, n);
                    assert_int_equal(n, 1);
                }
            }
        }
        /* finish: wait out every take, give everything back */
        for (int busy = 1; busy;) {
            busy = 0;
            for (int r = 0; r < NP; r++) {
                if (!waiting[r]) continue;
                uint64_t id;
                int rc = co_idpool_take(pool[r], 1, &id);
                if (rc == CO_IDP_OK) co_idpool_put(pool[r], id);
                waiting[r] = rc == CO_IDP_WAIT;
                busy |= waiting[r];
            }
            if (busy && !deliver_one()) assert_true(0);
        }
        for (int r = 0; r < NP; r++) {
            while (nheld[r]) co_idpool_put(pool[r], held[r][--nheld[r]]);
            co_idpool_close(pool[r]);
        }
        total_fails += fails;
        job_end();
    }
    assert_true(total_fails > 0); /* the small spaces did run out, so that path was taken */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idset),
        cmocka_unit_test(test_idset_model),
        cmocka_unit_test(test_u64map),
        cmocka_unit_test(test_random_tree),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_concurrent_takes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
