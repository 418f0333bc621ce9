/* Collective calls whose arguments disagree between ranks: one rank gives another count
 * (slightly different, or different enough that the ranks would choose different
 * algorithms), or calls another collective. Every case must end, never hang: a count
 * disagreement with an error class (MPI_ERR_TRUNCATE, MPI_ERR_COUNT or MPI_ERR_OTHER) at
 * one rank at least, and a rank that receives fewer bytes than its count must not report
 * success. Each case runs on a fresh duplicate of MPI_COMM_WORLD (a disagreement may leave
 * it unusable), whose next collectives must end too. Another collective on one rank is
 * reported only if some rank comes to wait for it (there or in a later call), so that case
 * only has to end. Runs under every algorithm variant (tests/coll.cmake).
 *
 * With MISMATCH_SLOW_READER=r it runs one case only, in which rank r is slow to copy: a
 * broadcast's root (rank 0) leaves the call with an error (another rank skipped it) and
 * overwrites its buffer while rank r has yet to read it by single copy. Rank r must then
 * report an error, not success with the next call's data. The delay comes from this
 * program's own process_vm_readv, which the library calls in place of the C library's.
 * MISMATCH_SLOW_WRITER=r is the other way round: a gather's root (rank 0) leaves the call
 * with an error (another rank skipped it) while rank r has yet to write its block into the
 * root's buffer (process_vm_writev, delayed the same way). The root's buffer must not
 * change after its call has returned. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "coll_util.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int slow_once; /* delay this rank's next large single-copy transfer by 300 ms */

static void maybe_slow(const struct iovec *local, unsigned long nlocal) {
    size_t len = 0;
    for (unsigned long i = 0; i < nlocal; i++) len += local[i].iov_len;
    if (slow_once && len >= 4096) { /* (not the set-up's probe of a few bytes) */
        slow_once = 0;
        struct timespec t = {0, 300 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
                         const struct iovec *remote, unsigned long nremote, unsigned long flags) {
    maybe_slow(local, nlocal);
    return syscall(SYS_process_vm_readv, pid, local, nlocal, remote, nremote, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nlocal,
                          const struct iovec *remote, unsigned long nremote, unsigned long flags) {
    maybe_slow(local, nlocal);
    return syscall(SYS_process_vm_writev, pid, local, nlocal, remote, nremote, flags);
}

#define BIG (1 << 17) /* ints: 512 KiB, above every size threshold of the selection table */

enum { BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, RSB, SCAN, EXSCAN, NKIND };
static const char *const names[NKIND] = {
    "Bcast",   "Reduce",    "Allreduce", "Gather",
    "Scatter", "Allgather", "Alltoall",  "Reduce_scatter_block",
    "Scan",    "Exscan"};

static int me, np;
static char io_path[64]; /* run_case's file, named after rank 0's process */
static int *sb, *rb;

static int call(int kind, MPI_Comm c, int n) {
    switch (kind) {
    case BCAST: return MPI_Bcast(sb, n, MPI_INT, 0, c);
    case REDUCE: return MPI_Reduce(sb, rb, n, MPI_INT, MPI_SUM, 0, c);
    case ALLREDUCE: return MPI_Allreduce(sb, rb, n, MPI_INT, MPI_SUM, c);
    case GATHER: return MPI_Gather(sb, n, MPI_INT, rb, n, MPI_INT, 0, c);
    case SCATTER: return MPI_Scatter(sb, n, MPI_INT, rb, n, MPI_INT, 0, c);
    case ALLGATHER: return MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, c);
    case ALLTOALL: return MPI_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, c);
    case RSB: return MPI_Reduce_scatter_block(sb, rb, n, MPI_INT, MPI_SUM, c);
    case SCAN: return MPI_Scan(sb, rb, n, MPI_INT, MPI_SUM, c);
    default: return MPI_Exscan(sb, rb, n, MPI_INT, MPI_SUM, c);
    }
}

static int class_of(int rc) {
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

static int allowed(int cls) {
    return cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT ||
           cls == MPI_ERR_OTHER;
}

/* Everyone calls `kind` with count n, except rank `odd`, which calls `odd_kind` with count
 * odd_n. `short_side`: a rank whose count disagrees with what it receives and that must
 * report it (one that receives fewer bytes must always: data it expects is missing), or -1.
 * `warm`: rounds of agreeing calls of `kind` with both counts (and warm_n, if not 0) first,
 * so that the buffers the algorithms share hold what earlier calls published (a rank must
 * not take that for the data of the disagreeing call). */
static void run_case(int kind, int n, int odd, int odd_kind, int odd_n, int short_side, int warm,
                     int warm_n) {
    int must_err = kind == odd_kind;
    char what[160];
    snprintf(what, sizeof(what), "%s count %d, rank %d: %s count %d%s", names[kind], n, odd,
             names[odd_kind], odd_n, warm ? " (after agreeing calls)" : "");
    MPI_Comm d;
    if (getenv("MISMATCH_TRACE")) fprintf(stderr, "rank %d: %s\n", me, what);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int i = 0; i < warm; i++) {
        CHECK_RC(call(kind, d, n));
        CHECK_RC(call(kind, d, odd_n));
        if (warm_n) CHECK_RC(call(kind, d, warm_n));
    }
    int cls = class_of(me == odd ? call(odd_kind, d, odd_n) : call(kind, d, n));
    CHECK(allowed(cls), "%s: error class %d", what, cls);
    CHECK(me != short_side || cls != MPI_SUCCESS, "%s: a receive of another size reported success",
          what);
    int err = cls != MPI_SUCCESS, any = 0;
    CHECK_RC(MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(any || !must_err, "%s: no rank reported an error", what);
    /* a collective of another layer first (MPI_File_open broadcasts how the open went before
     * any collective chooses an algorithm): it ends, and on every rank alike */
    MPI_File f = MPI_FILE_NULL;
    cls = class_of(MPI_File_open(
        d, io_path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &f));
    CHECK(allowed(cls), "%s: file open afterwards: error class %d", what, cls);
    int opened = cls == MPI_SUCCESS, all_opened = 0, none_opened = 0;
    CHECK_RC(MPI_Allreduce(&opened, &all_opened, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    CHECK_RC(MPI_Allreduce(&opened, &none_opened, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(all_opened || !none_opened, "%s: file open afterwards succeeded on some ranks only",
          what);
    if (all_opened) CHECK_RC(MPI_File_close(&f));
    /* (a failed open may leave rank 0's file behind; every rank is past the open by now) */
    if (me == 0) remove(io_path);
    /* the communicator's next collectives end (with an error where it is broken) */
    cls = class_of(MPI_Barrier(d));
    CHECK(allowed(cls), "%s: barrier afterwards: error class %d", what, cls);
    int one = 1, sum = 0;
    cls = class_of(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK(allowed(cls), "%s: allreduce afterwards: error class %d", what, cls);
    CHECK(cls != MPI_SUCCESS || sum == np, "%s: allreduce afterwards: sum %d", what, sum);
    CHECK_RC(MPI_Comm_free(&d));
}

/* Element i of rank r's send buffer in call `salt` (data_case). */
static int val(int r, long i, int salt) {
    return salt * 100000 + r * 1000 + (int)(i % 997);
}

/* What element i of this rank's receive buffer holds after a correct call of `kind` with
 * count c in which every rank sent val(rank, ., salt) (roots are rank 0); 0 where nothing is
 * defined (Exscan at rank 0). */
static long expect(int kind, long i, int c, int salt) {
    long sum = 0;
    switch (kind) {
    case BCAST: return val(0, i, salt);
    case GATHER:
    case ALLGATHER: return val((int)(i / c), i % c, salt);
    case SCATTER: return val(0, (long)me * c + i, salt);
    case ALLTOALL: return val((int)(i / c), (long)me * c + i % c, salt);
    case RSB:
        for (int r = 0; r < np; r++) sum += val(r, (long)me * c + i, salt);
        return sum;
    case SCAN:
    case EXSCAN:
        for (int r = 0; r < me + (kind == SCAN); r++) sum += val(r, i, salt);
        return sum;
    default:
        for (int r = 0; r < np; r++) sum += val(r, i, salt);
        return sum;
    }
}

/* How many elements of this rank's receive buffer a call of `kind` with count c fills. */
static long filled(int kind, int c) {
    switch (kind) {
    case BCAST: return me == 0 ? 0 : c; /* (the root's buffer is its send buffer) */
    case REDUCE:
    case GATHER: return me == 0 ? (long)c * (kind == GATHER ? np : 1) : 0;
    case ALLGATHER:
    case ALLTOALL: return (long)c * np;
    case EXSCAN: return me == 0 ? 0 : c;
    default: return c;
    }
}

/* Everyone calls `kind` with count n, except rank `odd` with odd_n (0: it skips the call
 * altogether, as a count of 0 does); then everyone calls it again with count n and new data.
 * In both calls a rank that reports success must hold the right result for its own count:
 * neither another call's data (a rank that skipped one call meeting the others' data of the
 * next) nor a part combined over other bounds (counts one element apart). */
static int slow_rank = -1; /* MISMATCH_SLOW_READER or MISMATCH_SLOW_WRITER */
static int slow_writes;    /* MISMATCH_SLOW_WRITER: check that a failed call's buffer stays */

static void data_case(int kind, int n, int odd, int odd_n) {
    char what[128];
    snprintf(what, sizeof(what), "%s count %d, rank %d: count %d", names[kind], n, odd, odd_n);
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int salt = 1; salt <= 2; salt++) {
        int mine = salt == 1 && me == odd ? odd_n : n;
        for (long i = 0; i < (long)mine * np; i++) sb[i] = val(me, i, salt), rb[i] = -1;
        if (kind == BCAST && me != 0)
            for (long i = 0; i < mine; i++) sb[i] = -1;
        slow_once = salt == 1 && me == slow_rank;
        int rc = call(kind, d, mine);
        slow_once = 0;
        CHECK(allowed(class_of(rc)), "%s: call %d: error class %d", what, salt, class_of(rc));
        if (rc != MPI_SUCCESS && slow_writes && salt == 1) {
            /* the call is over here: a peer's late write must not land in this buffer */
            for (long i = 0; i < (long)mine * np; i++) rb[i] = -7;
            tu_sleep_ms(500);
            long changed = 0;
            for (long i = 0; i < (long)mine * np; i++) changed += rb[i] != -7;
            CHECK(changed == 0,
                  "%s: %ld elements of the receive buffer changed after the call "
                  "returned an error",
                  what, changed);
        }
        if (rc != MPI_SUCCESS) continue;
        const int *got = kind == BCAST ? sb : rb;
        for (long i = 0; i < filled(kind, mine); i++)
            CHECK(got[i] == expect(kind, i, mine, salt),
                  "%s: call %d succeeded with element %ld = %d, not %ld", what, salt, i, got[i],
                  expect(kind, i, mine, salt));
    }
    CHECK_RC(MPI_Comm_free(&d));
}

/* Gather and Bcast of n ints whose roots differ: the last rank names root 1, the others root
 * 0. A rank that reports success must hold what its own root sent (Gather: at a root in its
 * own view, every rank's block; two single-copy roots used to return MPI_SUCCESS with a
 * block missing, or a reader copied another reader's buffer). */
static void roots_case(int kind, int n) {
    if (np < 3) return;
    int root = me == np - 1 ? 1 : 0;
    char what[96];
    snprintf(what, sizeof(what), "%s of %d ints, rank %d naming root 1", names[kind], n, np - 1);
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (long i = 0; i < (long)n * np; i++) sb[i] = val(me, i, 3), rb[i] = -1;
    int rc = kind == GATHER ? MPI_Gather(sb, n, MPI_INT, rb, n, MPI_INT, root, d)
                            : MPI_Bcast(sb, n, MPI_INT, root, d);
    CHECK(allowed(class_of(rc)) || class_of(rc) == MPI_ERR_ROOT, "%s: error class %d", what,
          class_of(rc));
    if (rc == MPI_SUCCESS && kind == GATHER && me == root)
        for (long i = 0; i < (long)n * np; i++)
            CHECK(rb[i] == val((int)(i / n), i % n, 3), "%s: success with element %ld = %d", what,
                  i, rb[i]);
    if (rc == MPI_SUCCESS && kind == BCAST && me != root)
        for (long i = 0; i < n; i++)
            CHECK(sb[i] == val(root, i, 3), "%s: success with element %ld = %d", what, i, sb[i]);
    CHECK_RC(MPI_Comm_free(&d));
}

/* A reduction whose operator differs: rank 0 (the root) passes MPI_PROD, the others MPI_SUM
 * (MPICH's errors/coll/reduceop). The call itself may end everywhere without a wait, so the
 * error can come one call late: rank 0 then stays away for 300 ms with its signature of the
 * reduction still published, and the others, waiting for it in an Allreduce, find the
 * operators apart. Every other rank must get an error in one of the two calls (MPI_ERR_OP, or
 * MPI_ERR_OTHER when the difference turned up in the running hash of earlier calls); rank 0
 * may find their operands of the Allreduce published and finish it with success. Before
 * signatures carried the operator, both calls succeeded everywhere. */
static void ops_case(int kind) {
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Op op = me == 0 ? MPI_PROD : MPI_SUM;
    for (int i = 0; i < 10; i++) sb[i] = me + 1;
    int rc = kind == REDUCE ? MPI_Reduce(sb, rb, 10, MPI_INT, op, 0, d)
                            : MPI_Allreduce(sb, rb, 10, MPI_INT, op, d);
    int cls = class_of(rc);
    if (cls == MPI_SUCCESS) {
        if (me == 0) tu_sleep_ms(300);
        int one = 1, sum = 0;
        cls = class_of(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    }
    CHECK(cls == MPI_ERR_OP || cls == MPI_ERR_OTHER || (me == 0 && cls == MPI_SUCCESS),
          "%s with MPI_PROD at rank 0 and MPI_SUM elsewhere, then an Allreduce: class %d",
          names[kind], cls);
    CHECK_RC(MPI_Comm_free(&d));
}

/* Whether this rank receives fewer bytes than its count says when every rank calls `kind`
 * with count a except rank odd, with b (roots are rank 0; the reductions are left out: what
 * they combine is not a receive). */
static int is_short(int kind, int a, int b, int odd) {
    int mine = me == odd ? b : a, root = odd == 0 ? b : a;
    switch (kind) {
    case BCAST:
    case SCATTER: return me != 0 && mine > root;
    case GATHER: return me == 0 && (odd == 0 ? a < b : b < a);
    case ALLGATHER:
    case ALLTOALL: return me == odd ? a < b : b < a;
    default: return 0;
    }
}

/* Disagreements drawn at random (the same on every rank): a collective, two counts from a
 * list around the selection table's limits, the rank that differs, and how many rounds of
 * agreeing calls of both counts (and a third) come first. COLL_MISMATCH_SEED changes the
 * draw. */
static void random_cases(int trials) {
    static const int counts[] = {1,    4,    12,   16,   32,   128,  129,   256,
                                 1024, 1025, 2048, 4096, 4097, 8192, 16384, 65536};
    const int nc = (int)(sizeof(counts) / sizeof(counts[0]));
    const char *e = getenv("COLL_MISMATCH_SEED");
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (e ? strtoull(e, NULL, 10) : 1);
#define DRAW(n) (x ^= x << 13, x ^= x >> 7, x ^= x << 17, (int)(x % (uint64_t)(n)))
    for (int t = 0; t < trials; t++) {
        int k = DRAW(NKIND), a = counts[DRAW(nc)], b = counts[DRAW(nc)];
        int odd = DRAW(np), warm = DRAW(3), third = counts[DRAW(nc)];
        if (a != b) run_case(k, a, odd, k, b, is_short(k, a, b, odd) ? me : -1, warm, third);
    }
#undef DRAW
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) {
        MPI_Finalize();
        return 0;
    }
    int pid0 = (int)getpid();
    CHECK_RC(MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(io_path, sizeof(io_path), "/tmp/cohort-coll-mismatch-%d", pid0);
    size_t cap = (size_t)BIG * 2 * (size_t)np;
    sb = calloc(cap, sizeof(int));
    rb = calloc(cap, sizeof(int));
    CHECK(sb && rb, "out of memory");
    int last = np - 1;
    const char *reader = getenv("MISMATCH_SLOW_READER"), *writer = getenv("MISMATCH_SLOW_WRITER");
    if ((reader || writer) && np >= 3) { /* one case only, see the top */
        slow_rank = atoi(reader ? reader : writer);
        slow_writes = !reader;
        data_case(reader ? BCAST : GATHER, reader ? 3000 : 8192, last, 0);
        MPI_Finalize();
        return 0;
    }
    for (int k = 0; k < NKIND; k++) {
        /* a non-root rank gives more, then less (small counts: same algorithm everywhere) */
        int sc = k == BCAST || k == SCATTER;
        run_case(k, 2, last, k, 4, -1, 0, 0);
        run_case(k, 4, last, k, 2, sc ? last : -1, 0, 0);
        /* counts different enough for different algorithms, both ways; on a fresh
         * communicator and on one whose buffers earlier calls of both algorithms used */
        for (int warm = 0; warm <= 2; warm += 2) {
            run_case(k, 16, last, k, BIG, sc ? last : -1, warm, 0);
            run_case(k, BIG, last, k, 16, sc ? last : -1, warm, 0);
            run_case(k, 16, 0, k, BIG, -1, warm, 0); /* truncated: forwarded trees hide it */
            run_case(k, BIG, 0, k, 16, sc ? last : -1, warm, 0);
        }
        /* the root (rank 0) gives another count than everyone else */
        run_case(k, 4, 0, k, 2, -1, 0, 0);
        /* another collective */
        run_case(k, 4, last, (k + 1) % NKIND, 4, -1, 0, 0);
    }
    /* a count of 0 on one rank only; counts one element apart (parts of a divided vector) */
    for (int k = 0; k < NKIND; k++)
        for (int odd = 0; odd < np; odd += last) {
            data_case(k, 4, odd, 0);
            data_case(k, 3000, odd, 0);
            data_case(k, BIG / 2, odd, BIG / 2 - 1);
        }
    roots_case(GATHER, 5000);
    roots_case(BCAST, 70000);
    ops_case(REDUCE);
    ops_case(ALLREDUCE);
    random_cases(40);
    int one = 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == np, "sum %d", sum);
    /* a disagreement on MPI_COMM_WORLD itself (algorithms that differ): MPI_Finalize must
     * still end on every rank */
    int cls = class_of(MPI_Bcast(sb, me == last ? BIG : 16, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(allowed(cls), "Bcast on MPI_COMM_WORLD: error class %d", cls);
    CHECK(me != last || cls != MPI_SUCCESS, "Bcast on MPI_COMM_WORLD: a short receive succeeded");
    MPI_Finalize();
    free(sb);
    free(rb);
    return 0;
}
