/* Unit tests of core pieces, inside one process: handle tables (stale handles are caught),
 * the settings parser, the shared-memory queues (wrap-around, full queues, payload
 * integrity) driven as producer and consumer from the same process, and which of their
 * rings' pages are mapped ahead of use (/proc/self/pagemap), the message of a
 * single-copy read from a process that has ended, the measured cost of single-copy reads
 * in the collectives' selection table, huge pages for buffers that peers copy, and where
 * the collectives' spread payloads go in their buffers, and the heap slices' allocator. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/boot/boot.h"
#include "../../src/coll/coll.h"
#include "../../src/core/cohort.h"
#include "../../src/xport/shm.h"

static void htab_stale_handles(void **state) {
    (void)state;
    co_htab t = {.kind = COHORT_KIND_GROUP};
    int objs[3000];
    int h[3000];
    for (int i = 0; i < 3000; i++) {
        h[i] = co_htab_insert(&t, &objs[i]);
        assert_int_not_equal(h[i], 0);
        assert_int_equal(CO_HANDLE_KIND(h[i]), COHORT_KIND_GROUP);
    }
    for (int i = 0; i < 3000; i++) assert_ptr_equal(co_htab_get(&t, h[i]), &objs[i]);
    co_htab_remove(&t, h[5]);
    assert_null(co_htab_get(&t, h[5]));
    /* A freed slot rests until CO_HTAB_REST others were freed after it. */
    int again = co_htab_insert(&t, &objs[5]);
    assert_int_not_equal(CO_HANDLE_SLOT(again), CO_HANDLE_SLOT(h[5]));
    for (int i = 0; i < CO_HTAB_REST; i++) co_htab_remove(&t, h[100 + i]);
    int reused = co_htab_insert(&t, &objs[100]); /* the oldest freed slot, a new generation */
    assert_int_equal(CO_HANDLE_SLOT(reused), CO_HANDLE_SLOT(h[5]));
    assert_int_not_equal(reused, h[5]);
    assert_null(co_htab_get(&t, h[5]));
    assert_ptr_equal(co_htab_get(&t, again), &objs[5]);
    assert_ptr_equal(co_htab_get(&t, reused), &objs[100]);
    for (int i = 0; i < 10; i++) { /* then the others, in the order they were freed */
        co_htab_remove(&t, h[300 + i]);
        int x = co_htab_insert(&t, &objs[300 + i]);
        assert_int_equal(CO_HANDLE_SLOT(x), CO_HANDLE_SLOT(h[100 + i]));
    }
    assert_null(co_htab_get(&t, 0));
    assert_null(co_htab_get(&t, COHORT_HANDLE(COHORT_KIND_COMM, 1)));
    assert_null(co_htab_get(&t, COHORT_HANDLE(COHORT_KIND_GROUP, 999999)));
    assert_int_equal(t.live, 3000 - CO_HTAB_REST + 1);
    co_htab_destroy(&t);
}

/* One object made and freed over and over: a handle kept from the first round names no
 * object for (CO_HTAB_REST + 1) * 64 rounds, while the slots it goes through stay few. */
static void htab_stale_rest(void **state) {
    (void)state;
    co_htab t = {.kind = COHORT_KIND_COMM};
    int obj, first = co_htab_insert(&t, &obj), h = first, maxslot = 0;
    for (int round = 1; round < (CO_HTAB_REST + 1) * 64; round++) {
        co_htab_remove(&t, h);
        h = co_htab_insert(&t, &obj);
        assert_int_not_equal(h, first);
        assert_null(co_htab_get(&t, first));
        if ((int)CO_HANDLE_SLOT(h) > maxslot) maxslot = (int)CO_HANDLE_SLOT(h);
    }
    assert_int_equal(maxslot, CO_HTAB_REST + 1);
    co_htab_remove(&t, h); /* and the next round would alias it: the documented limit */
    assert_int_equal(co_htab_insert(&t, &obj), first);
    assert_int_equal(t.live, 1);
    co_htab_destroy(&t);
}

static void config_parsing(void **state) {
    (void)state;
    int ok;
    assert_int_equal(co_parse_size("16384", &ok), 16384);
    assert_true(ok);
    assert_int_equal(co_parse_size("64K", &ok), 65536);
    assert_int_equal(co_parse_size("2MiB", &ok), 2 << 20);
    assert_int_equal(co_parse_size("1g", &ok), 1 << 30);
    co_parse_size("12Q", &ok);
    assert_false(ok);
    co_parse_size("-5", &ok);
    assert_false(ok);
    co_parse_size("", &ok);
    assert_false(ok);

    co_config cfg;
    char err[256];
    setenv("COHORT_EAGER_LIMIT", "8K", 1);
    assert_int_equal(co_config_load(&cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.eager_limit, 8192);
    setenv("COHORT_EAGER_LIMIT", "lots", 1);
    assert_int_not_equal(co_config_load(&cfg, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "COHORT_EAGER_LIMIT"));
    unsetenv("COHORT_EAGER_LIMIT");
    setenv("COHORT_EAGRE_LIMIT", "1", 1); /* a typo is reported, not silently ignored */
    assert_int_equal(co_config_load(&cfg, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "COHORT_EAGRE_LIMIT"));
    unsetenv("COHORT_EAGRE_LIMIT");
    assert_int_equal(co_config_load(&cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.eager_limit, 16384);
    assert_string_equal(err, "");
}

static size_t received;
static uint64_t expect_seq;
static void check_cell(int src, const co_cell *c, const void *payload) {
    assert_int_equal(src, 0);
    assert_int_equal((uint64_t)c->tag, expect_seq);
    const unsigned char *p = payload;
    for (uint32_t i = 0; i < c->len; i++)
        assert_int_equal(p[i], (unsigned char)(expect_seq * 7 + i));
    received += c->len;
    expect_seq++;
}

/* The payload ring's size: 0 picks 256 KiB up to 4 ranks and 128 KiB beyond; a size given is
 * kept (rounded down to a power of two), and every choice stays under about 8 MiB of rings per
 * receiver, with the eager limit at most half a ring. */
static uint64_t ring_of(int nranks, long data, uint64_t *eager) {
    co_seg seg;
    char err[256];
    co_seg_params p = {nranks, 16, data, 16384, 4096};
    int fd = co_seg_create(&p, &seg, err, sizeof(err));
    assert_true(fd >= 0);
    uint64_t bytes = seg.hdr->data_bytes;
    *eager = seg.hdr->eager_limit;
    co_seg_detach(&seg);
    close(fd);
    return bytes;
}

static void shm_ring_sizes(void **state) {
    (void)state;
    uint64_t eager;
    assert_int_equal(ring_of(2, 0, &eager), 256u << 10);
    assert_int_equal(eager, 16384);
    assert_int_equal(ring_of(4, 0, &eager), 256u << 10);
    assert_int_equal(ring_of(5, 0, &eager), 128u << 10);
    assert_int_equal(ring_of(8, 0, &eager), 128u << 10);
    assert_int_equal(ring_of(2, 100000, &eager), 65536); /* a power of two below */
    assert_int_equal(ring_of(3, 1 << 20, &eager), 1u << 20);
    assert_int_equal(ring_of(129, 0, &eager), 65536); /* 8 MiB / 128 senders */
    assert_int_equal(ring_of(300, 0, &eager), 16384); /* 8 MiB / 299 rounded down */
    assert_int_equal(eager, 8192);
}

static void shm_queues(void **state) {
    (void)state;
    co_seg seg;
    char err[256];
    co_seg_params p = {2, 16, 16384, 4096, 4096};
    int fd = co_seg_create(&p, &seg, err, sizeof(err));
    assert_true(fd >= 0);
    co_shm a, b;
    assert_int_equal(co_shm_init(&a, &seg, 0, 0, 1), 0);
    assert_int_equal(co_shm_init(&b, &seg, 1, 0, 1), 0);
    assert_int_equal(a.out[1].mapped, 0); /* nothing mapped ahead before the first payload */
    assert_int_equal(b.in[0].mapped, 0);
    size_t sent = 0;
    uint64_t seq = 0;
    int fulls = 0;
    expect_seq = 0;
    received = 0;
    /* sizes cycle through inline, small and large payloads so both rings wrap many times */
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(round * 37) % 5000;
        if (round % 3 == 0) len %= 33;
        void *payload = NULL;
        co_cell *c = co_shm_claim(&a, 1, len, 1, &payload);
        if (!c) { /* full: the consumer drains, then the claim must succeed */
            fulls++;
            assert_true(co_shm_poll(&b, check_cell) > 0);
            c = co_shm_claim(&a, 1, len, 1, &payload);
            assert_non_null(c);
        }
        c->tag = (int32_t)seq;
        c->len = (uint32_t)len;
        c->kind = 1;
        for (size_t i = 0; i < len; i++)
            ((unsigned char *)payload)[i] = (unsigned char)(seq * 7 + i);
        co_shm_publish(&a, 1, c);
        sent += len;
        seq++;
    }
    while (co_shm_poll(&b, check_cell) > 0) {
    }
    assert_int_equal(expect_seq, seq);
    assert_int_equal(received, sent);
    assert_true(fulls > 0); /* the test did exercise full queues */
    assert_int_equal(co_shm_poll(&b, check_cell), 0);
    /* both sides went round the ring: all of it is mapped, and no more mapping is asked for */
    assert_true(a.out[1].mapped == UINT64_MAX && b.in[0].mapped == UINT64_MAX);
    co_shm_fini(&a);
    co_shm_fini(&b);
    assert_int_equal(co_shm_init(&a, &seg, 0, 0, 0), 0); /* COHORT_SHM_POPULATE=0 */
    assert_true(a.out[1].mapped == UINT64_MAX);
    co_shm_fini(&a);
    co_seg_detach(&seg);
    close(fd);
}

/* Whether the page holding p is mapped into this process (/proc/self/pagemap's present bit,
 * which needs no privilege); -1 when pagemap cannot be read. */
static int page_present(const void *p) {
    long pg = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0) return -1;
    uint64_t e = 0;
    off_t at = (off_t)((uintptr_t)p / (uintptr_t)pg * sizeof(e));
    ssize_t got = pread(fd, &e, sizeof(e), at);
    close(fd);
    return got == (ssize_t)sizeof(e) ? (int)(e >> 63) : -1;
}

/* The producer maps a fresh ring's pages a window ahead of its first payload
 * (co_shm_map): after one payload of 100 bytes the whole first window is mapped and the
 * page after it is not; with the setting off only what was written is. */
static void shm_ring_mapped(void **state) {
    if (page_present(&state) < 0) skip(); /* no pagemap here */
    for (int populate = 1; populate >= 0; populate--) {
        co_seg seg;
        char err[256];
        co_seg_params p = {2, 16, 262144, 4096, 4096};
        int fd = co_seg_create(&p, &seg, err, sizeof(err));
        assert_true(fd >= 0);
        co_shm a;
        assert_int_equal(co_shm_init(&a, &seg, 0, 0, populate), 0);
        long pg = sysconf(_SC_PAGESIZE);
        char *ring = a.out[1].data;
        assert_int_equal(page_present(ring + pg), 0); /* fresh: nothing mapped yet */
        void *payload = NULL;
        co_cell *c = co_shm_claim(&a, 1, 100, 0, &payload);
        assert_non_null(c);
        assert_ptr_equal(payload, ring);
        memset(payload, 1, 100);
        c->len = 100;
        co_shm_publish(&a, 1, c);
        assert_int_equal(page_present(ring), 1);
        assert_int_equal(page_present(ring + CO_SHM_MAP_WINDOW - pg), populate);
        assert_int_equal(page_present(ring + CO_SHM_MAP_WINDOW), 0);
        assert_true(a.out[1].mapped == (populate ? CO_SHM_MAP_WINDOW : UINT64_MAX));
        co_shm_fini(&a);
        co_seg_detach(&seg);
        close(fd);
    }
}

/* A rank that crashes or is killed while its peers copy from its memory: the reader must end
 * saying the process has ended, not blame the ranks' calls for disagreeing. */
static void cma_from_ended_process(void **state) {
    (void)state;
    pid_t gone = fork();
    assert_true(gone >= 0);
    if (gone == 0) _exit(0);
    assert_int_equal(waitpid(gone, NULL, 0), gone);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) {
        dup2(fds[1], 2);
        static char remote[64];
        char local[64];
        co_cma_read(gone, local, remote, sizeof(local));
        _exit(0); /* not reached: the failed read ends the process */
    }
    close(fds[1]);
    char out[2048];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(out) - 1 && (r = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(reader, &st, 0), reader);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
    assert_non_null(strstr(out, "process_vm_readv of process"));
    assert_non_null(strstr(out, "that process has ended"));
    assert_null(strstr(out, "disagree"));
}

/* The cost of a single-copy read is measured (mpiexec passes it to the ranks) and moves the
 * limit between the shared buffers and single copy (or messages) of Bcast, Gather,
 * Allgather(v) and Alltoall at every size of communicator, and of Scatter, Reduce,
 * Allreduce, Scan and Exscan at two ranks; nothing else. */
static void cma_cost_selection(void **state) {
    (void)state;
    long ns = co_shm_cma_probe_ns();
    assert_true(ns > 0 && ns < 1000000000L);
    const long cheap = 0, edge = CO_CMA_COSTLY_NS - 1, costly = CO_CMA_COSTLY_NS;
    const struct {
        int kind, np;
        size_t bytes;
        int shared;
        long ns;
        int want;
    } picks[] = {
        {CO_COLL_BCAST, 4, 4096, 1, cheap, CO_BCAST_SHM},
        {CO_COLL_BCAST, 4, 16384, 1, cheap, CO_BCAST_CMA},
        {CO_COLL_BCAST, 4, 16384, 1, edge, CO_BCAST_CMA},
        {CO_COLL_BCAST, 4, 8192, 1, edge, CO_BCAST_CMA},
        {CO_COLL_BCAST, 4, 8192, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 8, 8192, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 8, 262144, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 8, 262145, 1, costly, CO_BCAST_CMA},
        {CO_COLL_BCAST, 5, 65536, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 5, 262145, 1, costly, CO_BCAST_CMA},
        {CO_COLL_BCAST, 8, 8193, 1, cheap, CO_BCAST_CMA},
        {CO_COLL_BCAST, 4, 16384, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 2, 8192, 1, cheap, CO_BCAST_CMA},
        {CO_COLL_BCAST, 2, 8192, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 2, 262144, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 2, 262145, 1, costly, CO_BCAST_CMA},
        {CO_COLL_BCAST, 3, 4096, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 3, 8192, 1, cheap, CO_BCAST_CMA},
        {CO_COLL_BCAST, 3, 32768, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 4, 65536, 1, cheap, CO_BCAST_CMA},
        {CO_COLL_BCAST, 4, 4u << 20, 1, costly, CO_BCAST_SHM},
        {CO_COLL_BCAST, 4, (4u << 20) + 1, 1, costly, CO_BCAST_CMA},
        /* without shared memory the point-to-point rules apply, whatever the cost */
        {CO_COLL_BCAST, 4, 16384, 0, costly, CO_BCAST_BINOMIAL},
        /* two ranks: Allgather(v) and Alltoall through the shared buffers up to 16 KiB */
        {CO_COLL_ALLGATHER, 2, 8192, 1, cheap, CO_ALLGATHER_CMA},
        {CO_COLL_ALLGATHER, 2, 8192, 1, costly, CO_ALLGATHER_SHM},
        {CO_COLL_ALLGATHERV, 2, 16384, 1, costly, CO_ALLGATHERV_SHM},
        {CO_COLL_ALLTOALL, 2, 65536, 1, costly, CO_ALLTOALL_SHM},
        {CO_COLL_ALLTOALL, 2, 65537, 1, costly, CO_ALLTOALL_CMA},
        /* more ranks: Allgather(v) through the shared buffers at every size, Alltoall to
         * 128 KiB at 3 and 4 ranks and to 64 KiB from 5, Gather from 16 to 256 KiB */
        {CO_COLL_ALLGATHER, 4, 4u << 20, 1, cheap, CO_ALLGATHER_LINEAR},
        {CO_COLL_ALLGATHER, 4, 4u << 20, 1, costly, CO_ALLGATHER_SHM},
        {CO_COLL_ALLGATHERV, 8, 1u << 20, 1, costly, CO_ALLGATHERV_SHM},
        {CO_COLL_ALLGATHER, 3, (4u << 20) + 1, 1, costly, CO_ALLGATHER_LINEAR},
        {CO_COLL_ALLGATHER, 4, 64, 1, costly, CO_ALLGATHER_CMA},
        {CO_COLL_ALLTOALL, 4, 131072, 1, cheap, CO_ALLTOALL_LINEAR},
        {CO_COLL_ALLTOALL, 4, 131072, 1, costly, CO_ALLTOALL_SHM},
        {CO_COLL_ALLTOALL, 3, 131073, 1, costly, CO_ALLTOALL_LINEAR},
        {CO_COLL_ALLTOALL, 8, 65536, 1, costly, CO_ALLTOALL_SHM},
        {CO_COLL_ALLTOALL, 8, 65537, 1, costly, CO_ALLTOALL_LINEAR},
        {CO_COLL_GATHER, 4, 16384, 1, costly, CO_GATHER_LINEAR},
        {CO_COLL_GATHER, 4, 65536, 1, cheap, CO_GATHER_CMA},
        {CO_COLL_GATHER, 8, 262144, 1, costly, CO_GATHER_SHM},
        {CO_COLL_GATHER, 8, 262145, 1, costly, CO_GATHER_CMA},
        {CO_COLL_GATHER, 2, 262144, 1, costly, CO_GATHER_SHM},
        {CO_COLL_SCATTER, 2, 262144, 1, costly, CO_SCATTER_SHM},
        {CO_COLL_SCATTER, 2, 262145, 1, costly, CO_SCATTER_CMA},
        {CO_COLL_SCATTER, 4, 65536, 1, costly, CO_SCATTER_CMA},
        /* two-rank reductions: the reader folds from 8 KiB where reads are cheap */
        {CO_COLL_REDUCE, 2, 4096, 1, cheap, CO_REDUCE_SHM},
        {CO_COLL_REDUCE, 2, 8192, 1, cheap, CO_REDUCE_CMA},
        {CO_COLL_REDUCE, 2, 262144, 1, costly, CO_REDUCE_SHM},
        {CO_COLL_REDUCE, 2, 262145, 1, costly, CO_REDUCE_CMA},
        {CO_COLL_ALLREDUCE, 2, 8192, 1, cheap, CO_ALLREDUCE_CMA},
        {CO_COLL_ALLREDUCE, 2, 4u << 20, 1, cheap, CO_ALLREDUCE_CMA},
        {CO_COLL_ALLREDUCE, 2, 131072, 1, costly, CO_ALLREDUCE_SHM},
        {CO_COLL_ALLREDUCE, 2, 131073, 1, costly, CO_ALLREDUCE_CMA},
        {CO_COLL_SCAN, 2, 8192, 1, cheap, CO_SCAN_CHAIN},
        {CO_COLL_SCAN, 2, 4u << 20, 1, costly, CO_SCAN_SHM},
        {CO_COLL_SCAN, 2, (4u << 20) + 1, 1, costly, CO_SCAN_CHAIN},
        {CO_COLL_EXSCAN, 2, 8192, 1, cheap, CO_SCAN_CMA},
        {CO_COLL_EXSCAN, 2, 131072, 1, costly, CO_SCAN_SHM},
        {CO_COLL_EXSCAN, 2, 131073, 1, costly, CO_SCAN_CMA},
        /* two-rank Reduce_scatter(_block): the shared buffers to 256 KiB where reads are
         * costly, the ring of messages beyond and from 8 KiB where they are cheap */
        {CO_COLL_REDUCE_SCATTER, 2, 262144, 1, costly, CO_RSCAT_SHM},
        {CO_COLL_REDUCE_SCATTER_BLOCK, 2, 65536, 1, costly, CO_RSCAT_SHM},
        {CO_COLL_REDUCE_SCATTER, 2, 262145, 1, costly, CO_RSCAT_RING},
        {CO_COLL_REDUCE_SCATTER, 2, 16384, 1, cheap, CO_RSCAT_RING},
        /* long Exscan vectors: the pipelined chain of messages from 4 to 8 ranks */
        {CO_COLL_EXSCAN, 4, 262144, 1, cheap, CO_SCAN_SHM},
        {CO_COLL_EXSCAN, 4, 524288, 1, cheap, CO_SCAN_CHAIN},
        {CO_COLL_EXSCAN, 3, 524289, 1, cheap, CO_SCAN_CHAIN},
        {CO_COLL_EXSCAN, 4, 524289, 1, cheap, CO_SCAN_LINEAR},
        {CO_COLL_EXSCAN, 8, 4u << 20, 1, costly, CO_SCAN_LINEAR},
        {CO_COLL_EXSCAN, 9, 4u << 20, 1, cheap, CO_SCAN_CHAIN},
        {CO_COLL_SCAN, 4, 4u << 20, 1, cheap, CO_SCAN_CHAIN},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
        int got = co_coll_table_pick(picks[i].kind, picks[i].np, picks[i].bytes, picks[i].shared,
                                     picks[i].ns);
        if (got != picks[i].want) {
            print_error("pick %zu (collective %d, %d ranks, %zu bytes, %ld ns): algorithm %d, "
                        "not %d\n",
                        i, picks[i].kind, picks[i].np, picks[i].bytes, picks[i].ns, got,
                        picks[i].want);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
    /* and nothing else depends on it */
    for (size_t b = 1; b <= ((size_t)4 << 20); b *= 2)
        for (int np = 2; np <= 8; np++)
            for (int k = 0; k < CO_COLL_KINDS; k++) {
                int two = np == 2 &&
                          (k == CO_COLL_SCATTER || k == CO_COLL_REDUCE || k == CO_COLL_ALLREDUCE ||
                           k == CO_COLL_SCAN || k == CO_COLL_EXSCAN ||
                           k == CO_COLL_REDUCE_SCATTER || k == CO_COLL_REDUCE_SCATTER_BLOCK);
                int any = k == CO_COLL_BCAST || k == CO_COLL_GATHER || k == CO_COLL_ALLGATHER ||
                          k == CO_COLL_ALLGATHERV || k == CO_COLL_ALLTOALL;
                if (!any && !two)
                    assert_int_equal(co_coll_table_pick(k, np, b, 1, cheap),
                                     co_coll_table_pick(k, np, b, 1, costly));
            }
}

/* AnonHugePages (kB) of the mapping that holds p, from /proc/self/smaps. */
static long huge_kb(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    int in = 0;
    long kb = -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    }
    fclose(f);
    return kb;
}

static char *filled_region(size_t n) {
    char *r = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(r != MAP_FAILED);
    for (size_t i = 0; i < n; i++) r[i] = (char)(i * 7 + i / 4096);
    return r;
}

static int same_fill(const char *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (r[i] != (char)(i * 7 + i / 4096)) return 0;
    return 1;
}

static const char *thp_mode(void) {
    static char mode[128];
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    mode[0] = 0;
    if (f) {
        if (!fgets(mode, sizeof(mode), f)) mode[0] = 0;
        fclose(f);
    }
    return mode;
}

/* A buffer that peers copy from by single copy: its whole 2 MiB pages become huge pages the
 * second time, its contents stay, and COHORT_CMA_HUGEPAGES=0 leaves it alone. */
static void cma_expose_hugepages(void **state) {
    (void)state;
    const size_t n = 6u << 20;
    char *r = filled_region(n);
    co_st.cfg.cma_hugepages = 1;
    co_cma_expose(r + 1, n - 2);
    assert_true(huge_kb(r + (3u << 20)) <= 0 || strstr(thp_mode(), "[always]"));
    co_cma_expose(r + 1, n - 2); /* the second time: made huge */
    assert_true(same_fill(r, n));
    long kb = huge_kb(r + (3u << 20));
    if (kb < 2048) { /* only if this kernel cannot make huge pages at all */
        char *t = filled_region(4u << 20);
        char *a = (char *)(((uintptr_t)t + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
        int direct =
            madvise(a, 2u << 20, MADV_HUGEPAGE) == 0 && madvise(a, 2u << 20, MADV_COLLAPSE) == 0;
        munmap(t, 4u << 20);
        assert_false(direct);
        print_message("huge pages unavailable here: nothing to check\n");
    }
    munmap(r, n);
    if (!strstr(thp_mode(), "[always]")) { /* otherwise any fault may bring a huge page */
        r = filled_region(n);
        co_st.cfg.cma_hugepages = 0;
        for (int i = 0; i < 4; i++) co_cma_expose(r + 1, n - 2);
        assert_true(huge_kb(r + (3u << 20)) <= 0);
        assert_true(same_fill(r, n));
        munmap(r, n);
        co_st.cfg.cma_hugepages = 1;
    }
}

/* Spread payloads (co_cshm_spread_in): a payload of 2 KiB or more that fits a room more than
 * once starts at a multiple of 64 bytes, ends inside the room, stays put for two steps (the
 * steps of one call) and visits every place that fits; smaller payloads, and payloads that
 * fit only once, stay at the start. */
static void cshm_spread_places(void **state) {
    (void)state;
    static const size_t rooms[] = {65536 - 64, 65536 - 16, 8192, 4100, 3000};
    static const size_t lens[] = {0, 1, 63, 2047, 2048, 2049, 3073, 4096, 21616, 32768, 32769};
    for (size_t r = 0; r < sizeof rooms / sizeof *rooms; r++) {
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
            size_t room = rooms[r], len = lens[l], slot = (len + 63) & ~(size_t)63;
            size_t places = len < 2048 || room / slot < 2 ? 1 : room / slot;
            char seen[64] = {0};
            for (uint64_t step = 1; step < 400; step++) {
                size_t at = co_cshm_spread_in(room, step, len);
                assert_int_equal(at % 64, 0);
                assert_true(at == 0 || at + len <= room);
                assert_int_equal(at, co_cshm_spread_in(room, step ^ 1, len));
                assert_true(at / (slot ? slot : 1) < places);
                seen[at / (slot ? slot : 1)] = 1;
            }
            size_t visited = 0;
            for (size_t i = 0; i < sizeof seen; i++) visited += seen[i];
            assert_int_equal(visited, places);
        }
    }
}

/* The heap slices' allocator (shm_heap.c) on a shared mapping of 64 pages (so at most 8
 * pages of freed blocks keep theirs): a freed block keeps its pages and content for the next
 * block while the kept ones stay within that; past it a freed block's pages go (zeros
 * again); a block that fits only across kept and given-back ranges that touch is still
 * found, once the kept ranges give their pages back; freed ranges join again. */
static int all_bytes(const char *p, size_t n, char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static void shm_heap_kept_pages(void **state) {
    (void)state;
    const size_t pg = 4096, n = 64 * pg;
    char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    co_shm_heap h;
    assert_int_equal(co_shm_heap_init(&h, m, n), 0);
    assert_int_equal(h.keep, 8 * pg);
    uint64_t a = co_shm_heap_alloc(&h, 3 * pg - 100), b = co_shm_heap_alloc(&h, 5 * pg);
    assert_int_equal(a, 0);
    assert_int_equal(b, 3 * pg);
    memset(m + a, 'a', 3 * pg);
    memset(m + b, 'b', 5 * pg);
    co_shm_heap_free(&h, a, 3 * pg);
    assert_int_equal(h.kept, 3 * pg);
    co_shm_heap_free(&h, b, 5 * pg); /* 8 pages kept: still within */
    assert_int_equal(h.kept, 8 * pg);
    assert_int_equal(h.nfree, 2); /* [0, 8) kept, [8, 64) never used */
    uint64_t c = co_shm_heap_alloc(&h, 2 * pg);
    assert_int_equal(c, 0);
    assert_true(all_bytes(m + c, 2 * pg, 'a')); /* the same pages, not new ones */
    assert_int_equal(h.kept, 6 * pg);
    uint64_t d = co_shm_heap_alloc(&h, 40 * pg); /* from the untouched range */
    assert_int_equal(d, 8 * pg);
    memset(m + d, 'd', 40 * pg);
    co_shm_heap_free(&h, d, 40 * pg); /* 6 + 40 pages: more than kept, given back */
    assert_int_equal(h.kept, 6 * pg);
    assert_true(all_bytes(m + d, 40 * pg, 0));
    assert_true(all_bytes(m + 3 * pg, 5 * pg, 'b'));
    /* [2, 8) kept touches [8, 64) given back: 62 pages only when both are one again */
    uint64_t e = co_shm_heap_alloc(&h, 62 * pg);
    assert_int_equal(e, 2 * pg);
    assert_int_equal(h.kept, 0);
    assert_true(all_bytes(m + e, 62 * pg, 0)); /* the kept ones given back too */
    assert_int_equal(co_shm_heap_alloc(&h, pg), CO_SHM_HEAP_FAIL);
    co_shm_heap_free(&h, c, 2 * pg);
    co_shm_heap_free(&h, e, 62 * pg);
    assert_int_equal(h.kept, 2 * pg);
    assert_int_equal(h.nfree, 2);
    assert_int_equal(co_shm_heap_alloc(&h, 64 * pg), 0); /* joined */
    co_shm_heap_free(&h, 0, 64 * pg);
    assert_int_equal(h.nfree, 1);
    assert_int_equal(h.free[0].len, 64 * pg);
    co_shm_heap_fini(&h);
    munmap(m, n);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(htab_stale_handles),     cmocka_unit_test(htab_stale_rest),
        cmocka_unit_test(config_parsing),         cmocka_unit_test(shm_queues),
        cmocka_unit_test(shm_ring_mapped),        cmocka_unit_test(shm_ring_sizes),
        cmocka_unit_test(cma_from_ended_process), cmocka_unit_test(cma_cost_selection),
        cmocka_unit_test(cma_expose_hugepages),   cmocka_unit_test(cshm_spread_places),
        cmocka_unit_test(shm_heap_kept_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
