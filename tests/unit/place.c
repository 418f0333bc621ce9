/* Unit tests of rank placement (src/boot/place.c) on made-up machines: two packages of four
 * cores with two hardware threads each, numbered as Intel machines do (a core's threads n and
 * n+8) and as AMD machines do (threads next to each other), a CPU mask with holes, and the
 * machine the test runs on. They check the launchers' option syntax, where each rank is bound
 * for each mapping and binding level, the blocks of ranks that share a core when ranks
 * outnumber cores, and what is refused or left unbound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/boot/place.h"

static co_hwtopo topo;

/* 16 CPUs: package = (c % 8) / 4, core = c % 8; intel=0 numbers a core's threads 2k, 2k+1
 * (then core = c / 2, package = c / 8). L2 per core, L3 and NUMA node per package. */
static void machine(int intel) {
    memset(&topo, 0, sizeof(topo));
    topo.n = 16;
    for (int i = 0; i < 16; i++) {
        int core = intel ? i % 8 : i / 2, pkg = core / 4;
        topo.cpu[i] = i;
        topo.id[CO_LVL_HWTHREAD][i] = i;
        topo.id[CO_LVL_CORE][i] = core;
        topo.id[CO_LVL_L2][i] = core;
        topo.id[CO_LVL_L3][i] = pkg;
        topo.id[CO_LVL_NUMA][i] = pkg;
        topo.id[CO_LVL_PACKAGE][i] = pkg;
        topo.id[CO_LVL_MACHINE][i] = 0;
    }
}

static cpu_set_t sets[64];
static int bound[64];
static char err[256];

static int place(const co_place_opts *o, int n, const int *pe) {
    err[0] = 0;
    return co_place(&topo, o, n, pe, sets, bound, err, sizeof(err));
}

/* rank r's set, as a list */
static const char *of(int r) {
    static char buf[8][128];
    static int k;
    char *b = buf[k++ % 8];
    co_place_format(&sets[r], b, 128);
    return b;
}

static void opts(co_place_opts *o, const char *map, const char *bind) {
    co_place_defaults(o);
    if (map) assert_int_equal(co_place_parse_map(map, o, err, sizeof(err)), 0);
    if (bind) assert_int_equal(co_place_parse_bind(bind, o, err, sizeof(err)), 0);
}

static void parse_options(void **state) {
    (void)state;
    co_place_opts o;
    opts(&o, "ppr:2:socket:PE=3:NOOVERSUBSCRIBE", NULL);
    assert_int_equal(o.ppr, 2);
    assert_int_equal(o.map, CO_LVL_PACKAGE);
    assert_int_equal(o.pe, 3);
    assert_int_equal(o.nooversubscribe, 1);
    opts(&o, "L3CACHE:pe=2:OVERSUBSCRIBE:SPAN", "core:overload-allowed");
    assert_int_equal(o.map, CO_LVL_L3);
    assert_int_equal(o.nooversubscribe, 0);
    assert_int_equal(o.bind, CO_LVL_CORE);
    assert_int_equal(o.explicit_bind, 1);
    opts(&o, "hwthread", NULL);
    assert_int_equal(o.unit, CO_LVL_HWTHREAD);
    opts(&o, NULL, "hwthread:if-supported");
    assert_int_equal(o.unit, CO_LVL_HWTHREAD);
    assert_int_equal(o.bind, CO_LVL_HWTHREAD);
    opts(&o, NULL, "core:4"); /* MPICH: four cores each */
    assert_int_equal(o.pe, 4);
    opts(&o, "slot", "none");
    assert_int_equal(o.map, CO_LVL_MACHINE);
    assert_int_equal(o.bind, -1);
    assert_int_equal(o.explicit_bind, 0);
    static const char *const bad_map[] = {"ppr:0:core", "ppr:2",     "ppr:x:core", "ppr:2:bogus",
                                          "bogus",      "core:PE=0", "core:PE=x",  "core:WHAT",
                                          "",           "numa:PE="};
    for (size_t i = 0; i < sizeof(bad_map) / sizeof(bad_map[0]); i++) {
        co_place_defaults(&o);
        err[0] = 0;
        assert_int_equal(co_place_parse_map(bad_map[i], &o, err, sizeof(err)), -1);
        assert_true(strlen(err) > 10);
    }
    static const char *const bad_bind[] = {"socket:2",  "user:0+1,2+3", "slot",   "node",
                                           "none:core", "core:0",       "core:x", ""};
    for (size_t i = 0; i < sizeof(bad_bind) / sizeof(bad_bind[0]); i++) {
        co_place_defaults(&o);
        err[0] = 0;
        assert_int_equal(co_place_parse_bind(bad_bind[i], &o, err, sizeof(err)), -1);
        assert_true(strlen(err) > 10);
    }
}

static void cpu_lists(void **state) {
    (void)state;
    cpu_set_t s;
    char buf[64];
    assert_int_equal(co_place_parse_list("0-3,8,10-11\n", &s), 0);
    assert_int_equal(CPU_COUNT(&s), 7);
    co_place_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "0-3,8,10-11");
    assert_int_equal(co_place_parse_list("5", &s), 0);
    co_place_format(&s, buf, sizeof(buf));
    assert_string_equal(buf, "5");
    static const char *const bad[] = {"", "3-1", "a", "1,,2", "1-", "-1", "1 2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(co_place_parse_list(bad[i], &s), -1);
    /* a list too long for the buffer ends in "..." instead of overrunning it */
    CPU_ZERO(&s);
    for (int c = 0; c < 200; c += 2) CPU_SET(c, &s);
    co_place_format(&s, buf, sizeof(buf));
    assert_int_equal(strlen(buf), sizeof(buf) - 1);
    assert_string_equal(buf + sizeof(buf) - 4, "...");
}

static void cores_in_order(void **state) {
    (void)state;
    co_place_opts o;
    machine(1);
    opts(&o, NULL, NULL);
    assert_int_equal(place(&o, 4, NULL), 0);
    /* a core is both its threads; cores in the order of their first thread */
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "1,9");
    assert_string_equal(of(3), "3,11");
    for (int r = 0; r < 4; r++) assert_int_equal(bound[r], 1);
    machine(0);
    assert_int_equal(place(&o, 4, NULL), 0);
    assert_string_equal(of(0), "0-1");
    assert_string_equal(of(3), "6-7");
    /* hardware threads as the unit */
    opts(&o, "hwthread", NULL);
    assert_int_equal(place(&o, 3, NULL), 0);
    assert_string_equal(of(0), "0");
    assert_string_equal(of(2), "2");
    co_place_defaults(&o);
    o.unit = CO_LVL_HWTHREAD; /* --use-hwthread-cpus */
    assert_int_equal(place(&o, 16, NULL), 0);
    assert_string_equal(of(15), "15");
}

static void by_package(void **state) {
    (void)state;
    co_place_opts o;
    machine(1);
    opts(&o, "socket", NULL);
    assert_int_equal(place(&o, 4, NULL), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "4,12");
    assert_string_equal(of(2), "1,9");
    assert_string_equal(of(3), "5,13");
    /* bound to the package of the core each was mapped to */
    opts(&o, NULL, "socket");
    assert_int_equal(place(&o, 2, NULL), 0);
    assert_string_equal(of(0), "0-3,8-11");
    assert_string_equal(of(1), "0-3,8-11");
    opts(&o, "numa", "numa");
    assert_int_equal(place(&o, 2, NULL), 0);
    assert_string_equal(of(1), "4-7,12-15");
    /* more ranks than cores: still bound to packages, dealt in turn */
    opts(&o, "socket", "socket");
    assert_int_equal(place(&o, 12, NULL), 0);
    assert_string_equal(of(10), "0-3,8-11");
    assert_string_equal(of(11), "4-7,12-15");
    for (int r = 0; r < 12; r++) assert_int_equal(bound[r], 1);
}

static void cores_per_rank(void **state) {
    (void)state;
    co_place_opts o;
    machine(1);
    opts(&o, "core:PE=2", NULL);
    assert_int_equal(place(&o, 4, NULL), 0);
    assert_string_equal(of(0), "0-1,8-9");
    assert_string_equal(of(3), "6-7,14-15");
    /* in turn over packages, each rank's cores together in one */
    opts(&o, "socket:PE=3", NULL);
    assert_int_equal(place(&o, 2, NULL), 0);
    assert_string_equal(of(0), "0-2,8-10");
    assert_string_equal(of(1), "4-6,12-14");
    /* each rank its own count (OMP_NUM_THREADS per program) */
    co_place_defaults(&o);
    int pe[3] = {1, 3, 2};
    assert_int_equal(place(&o, 3, pe), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "1-3,9-11");
    assert_string_equal(of(2), "4-5,12-13");
    /* more cores than there are, but not hardware threads: threads */
    int many[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
    assert_int_equal(place(&o, 5, many), 0);
    assert_string_equal(of(0), "0-1");
    assert_string_equal(of(4), "8-9");
    /* too many for those too: left unbound, said only when asked for */
    assert_int_equal(place(&o, 9, many), 0);
    for (int r = 0; r < 9; r++) {
        assert_int_equal(bound[r], 0);
        assert_string_equal(of(r), "0-15");
    }
    opts(&o, "core:PE=2", NULL);
    assert_int_equal(place(&o, 5, NULL), 1);
    assert_non_null(strstr(err, "cannot give 5 ranks 2 cores each: there are 8"));
    assert_int_equal(bound[4], 0);
    opts(&o, NULL, "core");
    many[1] = 3;
    assert_int_equal(place(&o, 5, many), 1);
    assert_non_null(strstr(err, "the 11 cores they need: there are 8"));
}

static void oversubscribed(void **state) {
    (void)state;
    co_place_opts o;
    machine(1);
    co_place_defaults(&o);
    /* as many as hardware threads: a thread each */
    assert_int_equal(place(&o, 16, NULL), 0);
    assert_string_equal(of(1), "1");
    assert_string_equal(of(15), "15");
    /* more, evenly: a block of consecutive ranks per core */
    assert_int_equal(place(&o, 32, NULL), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(3), "0,8");
    assert_string_equal(of(4), "1,9");
    assert_string_equal(of(31), "7,15");
    /* more ranks than cores but not than hardware threads: a thread each */
    assert_int_equal(place(&o, 12, NULL), 0);
    assert_string_equal(of(0), "0");
    assert_string_equal(of(7), "7");
    assert_string_equal(of(8), "8");
    assert_string_equal(of(11), "11");
    /* more than that, unevenly: not bound; said when binding was asked for */
    assert_int_equal(place(&o, 20, NULL), 0);
    assert_int_equal(bound[0], 0);
    opts(&o, NULL, "core");
    assert_int_equal(place(&o, 12, NULL), 1);
    assert_non_null(strstr(err, "cannot bind 12 ranks evenly to 8 cores; not binding"));
    /* dealt over packages, evenly: ranks wrap round each package's cores, two to a core */
    opts(&o, "socket", NULL);
    assert_int_equal(place(&o, 32, NULL), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "4,12");
    assert_string_equal(of(8), "0,8");
    assert_string_equal(of(10), "1,9");
    assert_int_equal(bound[31], 1);
    /* two ranks to each core by ppr */
    opts(&o, "ppr:2:core", NULL);
    assert_int_equal(place(&o, 16, NULL), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "0,8");
    assert_string_equal(of(2), "1,9");
    /* unevenly over packages: not bound */
    opts(&o, "socket", NULL);
    assert_int_equal(place(&o, 20, NULL), 0);
    assert_int_equal(bound[0], 0);
    /* bound to larger objects regardless */
    opts(&o, NULL, "socket");
    assert_int_equal(place(&o, 12, NULL), 0);
    assert_string_equal(of(5), "4-7,12-15");
    assert_string_equal(of(9), "0-3,8-11");
    /* refused outright with NOOVERSUBSCRIBE */
    opts(&o, "core:NOOVERSUBSCRIBE", NULL);
    assert_int_equal(place(&o, 8, NULL), 0);
    assert_int_equal(place(&o, 9, NULL), -1);
    assert_non_null(strstr(err, "more cores than the 8"));
    /* --bind-to none */
    opts(&o, NULL, "none");
    assert_int_equal(place(&o, 2, NULL), 0);
    assert_int_equal(bound[0], 0);
    assert_string_equal(of(0), "0-15");
}

static void per_object(void **state) {
    (void)state;
    co_place_opts o;
    machine(1);
    opts(&o, "ppr:2:socket", NULL);
    assert_int_equal(place(&o, 4, NULL), 0);
    assert_string_equal(of(0), "0,8");
    assert_string_equal(of(1), "1,9");
    assert_string_equal(of(2), "4,12");
    assert_string_equal(of(3), "5,13");
    assert_int_equal(place(&o, 5, NULL), -1);
    assert_non_null(
        strstr(err, "--map-by ppr:2: the job has 2 packages here, so at most 4 ranks, not 5"));
    assert_int_equal(co_hwtopo_count(&topo, CO_LVL_PACKAGE), 2);
    assert_int_equal(co_hwtopo_count(&topo, CO_LVL_CORE), 8);
    assert_int_equal(co_hwtopo_count(&topo, CO_LVL_HWTHREAD), 16);
    /* per hardware thread: the unit follows */
    opts(&o, "ppr:1:hwthread", NULL);
    assert_int_equal(place(&o, 16, NULL), 0);
    assert_string_equal(of(8), "8");
    /* L3 caches shared by pairs of cores (AMD numbering) */
    machine(0);
    for (int i = 0; i < 16; i++) topo.id[CO_LVL_L3][i] = i / 4;
    opts(&o, "l3cache", NULL);
    assert_int_equal(place(&o, 3, NULL), 0);
    assert_string_equal(of(0), "0-1");
    assert_string_equal(of(1), "4-5");
    assert_string_equal(of(2), "8-9");
    opts(&o, NULL, "l3cache");
    assert_int_equal(place(&o, 3, NULL), 0);
    assert_string_equal(of(2), "4-7");
}

static void holes_in_mask(void **state) {
    (void)state;
    co_place_opts o;
    memset(&topo, 0, sizeof(topo));
    int cpus[3] = {2, 3, 5};
    topo.n = 3;
    for (int i = 0; i < 3; i++) {
        topo.cpu[i] = cpus[i];
        for (int l = 0; l < CO_LVL_COUNT; l++) topo.id[l][i] = l <= CO_LVL_L2 ? cpus[i] : 0;
    }
    co_place_defaults(&o);
    assert_int_equal(place(&o, 3, NULL), 0);
    assert_string_equal(of(0), "2");
    assert_string_equal(of(2), "5");
    assert_int_equal(place(&o, 6, NULL), 0);
    assert_string_equal(of(1), "2");
    assert_string_equal(of(2), "3");
    assert_int_equal(place(&o, 4, NULL), 0);
    assert_string_equal(of(3), "2-3,5"); /* not bound: all the job's CPUs */
}

static void this_machine(void **state) {
    (void)state;
    cpu_set_t allowed;
    assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    co_hwtopo_load(&topo, &allowed);
    assert_int_equal(topo.n, CPU_COUNT(&allowed));
    for (int i = 0; i < topo.n; i++) {
        assert_true(CPU_ISSET(topo.cpu[i], &allowed));
        assert_int_equal(topo.id[CO_LVL_HWTHREAD][i], topo.cpu[i]);
        assert_int_equal(topo.id[CO_LVL_MACHINE][i], 0);
        for (int l = 0; l < CO_LVL_COUNT; l++) assert_true(topo.id[l][i] >= 0);
        /* two CPUs of one core share every larger object */
        for (int k = 0; k < i; k++)
            if (topo.id[CO_LVL_CORE][k] == topo.id[CO_LVL_CORE][i])
                for (int l = CO_LVL_CORE; l < CO_LVL_COUNT; l++)
                    assert_int_equal(topo.id[l][k], topo.id[l][i]);
    }
    /* every rank of one per core gets CPUs of its own */
    co_place_opts o;
    co_place_defaults(&o);
    int cores = co_hwtopo_count(&topo, CO_LVL_CORE);
    int n = cores < 64 ? cores : 64;
    assert_int_equal(place(&o, n, NULL), 0);
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (int r = 0; r < n; r++) {
        cpu_set_t both;
        assert_int_equal(bound[r], 1);
        CPU_AND(&both, &seen, &sets[r]);
        assert_int_equal(CPU_COUNT(&both), 0);
        CPU_OR(&seen, &seen, &sets[r]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_options),  cmocka_unit_test(cpu_lists),
        cmocka_unit_test(cores_in_order), cmocka_unit_test(by_package),
        cmocka_unit_test(cores_per_rank), cmocka_unit_test(oversubscribed),
        cmocka_unit_test(per_object),     cmocka_unit_test(holes_in_mask),
        cmocka_unit_test(this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
