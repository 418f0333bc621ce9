/* One-sided communication against values computed here: the four window flavours
 * (Win_create with disp_unit 1 and sizeof(int) and a rank of size 0, Win_allocate written by
 * its owner, Win_allocate_shared with Win_shared_query and direct loads and stores,
 * Win_create_dynamic with attach and detach); fence epochs with Put, Get and Accumulate
 * (SUM, MAX, REPLACE, BXOR, MAXLOC on MPI_2INT), derived types on either side, count 0,
 * MPI_PROC_NULL and assert flags; post/start/complete/wait and Win_test; passive target with
 * exclusive and shared locks, lock_all and the flushes, Fetch_and_op counters, concurrent
 * Accumulates, a Compare_and_swap spin lock, Get_accumulate; Rput, Rget, Raccumulate,
 * Rget_accumulate; window attributes, group, name, user keyvals and info; many windows
 * created and freed. Runs at any number of ranks. */
#include "testutil.h"

#include <dirent.h>

static int me, np, left, right;

static int val(int r, int k) {
    return r * 1000 + k;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The predefined attributes of win, its group and its name. base is not checked where size
 * is 0 (except for MPI_Win_create, which keeps what it was given), nor for dynamic
 * windows, whose base is MPI_BOTTOM. */
static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp, int flavor) {
    void *b = NULL;
    MPI_Aint *sz = NULL;
    int *du = NULL, *fl = NULL, *model = NULL, flag = 0, res;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag, "MPI_WIN_BASE is set");
    if (flavor != MPI_WIN_FLAVOR_DYNAMIC && (size > 0 || flavor == MPI_WIN_FLAVOR_CREATE))
        CHECK(b == base, "MPI_WIN_BASE %p, expected %p", b, base);
    flag = 0;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == size, "MPI_WIN_SIZE %ld, expected %ld", flag ? (long)*sz : -1L,
          (long)size);
    flag = 0;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && *du == disp, "MPI_WIN_DISP_UNIT %d, expected %d", flag ? *du : -1, disp);
    flag = 0;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && *fl == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", flag ? *fl : -1, flavor);
    flag = 0;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", flag ? *model : -1);

    MPI_Group wg, cg;
    CHECK_RC(MPI_Win_get_group(win, &wg));
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    CHECK_RC(MPI_Group_compare(wg, cg, &res));
    CHECK(res == MPI_IDENT, "the window's group compares %d to the communicator's", res);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
}

/* MPI_Win_create over user memory: ints with disp_unit sizeof(int), then bytes with
 * disp_unit 1 where the last rank gives size 0 (and is still an origin). */
static void test_create(void) {
    enum { N = 16 };
    int buf[N], src[4], got[4];
    for (int k = 0; k < N; k++) buf[k] = val(me, k);
    for (int k = 0; k < 4; k++) src[k] = -(me * 10 + k) - 1, got[k] = -99;
    MPI_Win win;
    CHECK_RC(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL, "a window");
    check_attrs(win, buf, sizeof buf, sizeof(int), MPI_WIN_FLAVOR_CREATE);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, 4, MPI_INT, right, 8, 4, MPI_INT, win));
    CHECK_RC(MPI_Get(got, 4, MPI_INT, left, 2, 4, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int k = 0; k < 4; k++)
        CHECK(got[k] == val(left, 2 + k), "create: Get int %d is %d, expected %d", k, got[k],
              val(left, 2 + k));
    for (int k = 0; k < N; k++) {
        int e = k >= 8 && k < 12 ? -(left * 10 + k - 8) - 1 : val(me, k);
        CHECK(buf[k] == e, "create: int %d is %d, expected %d", k, buf[k], e);
    }
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");

    /* bytes, disp_unit 1: every rank writes 5 bytes at an odd offset of every rank that has
     * memory, and an int at byte 60 of its right neighbour */
    enum { B = 64 };
    int zero = np > 1 ? np - 1 : -1;
    unsigned char bytes[B], exp[B], rd[B];
    for (int i = 0; i < B; i++) bytes[i] = (unsigned char)(tu_pattern(me, me, i) ^ 0x5a);
    CHECK_RC(MPI_Win_create(me == zero ? NULL : bytes, me == zero ? 0 : B, 1, MPI_INFO_NULL,
                            MPI_COMM_WORLD, &win));
    check_attrs(win, me == zero ? NULL : bytes, me == zero ? 0 : B, 1, MPI_WIN_FLAVOR_CREATE);
    unsigned char five[8][5];
    CHECK_RC(MPI_Win_fence(0, win));
    for (int t = 0; t < np; t++) {
        if (t == zero) continue;
        for (int i = 0; i < 5; i++) five[t][i] = tu_pattern(me, t, (size_t)i);
        CHECK_RC(MPI_Put(five[t], 5, MPI_UNSIGNED_CHAR, t, 1 + 7 * me, 5, MPI_UNSIGNED_CHAR, win));
    }
    int word = val(me, right);
    if (right != zero) CHECK_RC(MPI_Put(&word, 1, MPI_INT, right, 60, 1, MPI_INT, win));
    if (zero >= 0) /* nothing to a rank without memory */
        CHECK_RC(MPI_Put(src, 0, MPI_INT, zero, 0, 0, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    /* what rank t holds now, and a Get of all of it from the next rank with memory */
    int from = right == zero ? (right + 1) % np : right;
    memset(rd, 0, sizeof rd);
    CHECK_RC(MPI_Get(rd, B, MPI_UNSIGNED_CHAR, from, 0, B, MPI_UNSIGNED_CHAR, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int pass = 0; pass < 2; pass++) {
        int t = pass == 0 ? me : from;
        if (t == zero) continue;
        for (int i = 0; i < B; i++) exp[i] = (unsigned char)(tu_pattern(t, t, i) ^ 0x5a);
        for (int r = 0; r < np; r++)
            for (int i = 0; i < 5; i++) exp[1 + 7 * r + i] = tu_pattern(r, t, (size_t)i);
        int l = (t - 1 + np) % np, w = val(l, t);
        memcpy(exp + 60, &w, sizeof w);
        const unsigned char *have = pass == 0 ? bytes : rd;
        for (int i = 0; i < B; i++)
            CHECK(have[i] == exp[i], "create, disp_unit 1: rank %d byte %d is %d, expected %d", t,
                  i, have[i], exp[i]);
    }
    CHECK_RC(MPI_Win_free(&win));
}

/* MPI_Win_allocate: memory of a different size at every rank, written by its owner. */
static void test_allocate(void) {
    int n = 8 + 4 * me, rn = 8 + 4 * right;
    int *base = NULL, *got = malloc(sizeof(int) * (size_t)rn);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate((MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL, "allocate gives memory");
    check_attrs(win, base, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
    for (int k = 0; k < n; k++) base[k] = val(me, k);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Get(got, rn, MPI_INT, right, 0, rn, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int k = 0; k < rn; k++)
        CHECK(got[k] == val(right, k), "allocate: Get int %d is %d, expected %d", k, got[k],
              val(right, k));
    int v = -me - 1; /* the last int of the right neighbour's window */
    CHECK_RC(MPI_Put(&v, 1, MPI_INT, right, rn - 1, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int k = 0; k < n; k++) {
        int e = k == n - 1 ? -left - 1 : val(me, k);
        CHECK(base[k] == e, "allocate: int %d is %d, expected %d", k, base[k], e);
    }
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
    free(got);
}

static int shared_ints(int r) {
    return np > 1 && r == 0 ? 0 : 4 * r + 4;
}

/* MPI_Win_allocate_shared, where rank 0 has no memory (at 2 ranks and more): every rank's
 * segment through Win_shared_query, MPI_PROC_NULL for the first with memory; stores into the
 * right neighbour's segment seen by everyone after Win_sync and a barrier; an Accumulate. */
static void test_shared(void) {
    int *mine = NULL, *seg[8], du, first = np > 1 ? 1 : 0;
    MPI_Aint ssz;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate_shared((MPI_Aint)(shared_ints(me) * sizeof(int)), sizeof(int),
                                     MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    check_attrs(win, mine, (MPI_Aint)(shared_ints(me) * sizeof(int)), sizeof(int),
                MPI_WIN_FLAVOR_SHARED);
    for (int r = 0; r < np; r++) {
        seg[r] = NULL, ssz = -1, du = -1;
        CHECK_RC(MPI_Win_shared_query(win, r, &ssz, &du, &seg[r]));
        CHECK(ssz == (MPI_Aint)(shared_ints(r) * sizeof(int)) && du == (int)sizeof(int),
              "shared_query(%d): size %ld disp_unit %d", r, (long)ssz, du);
        if (shared_ints(r) > 0) CHECK(seg[r] != NULL, "shared_query(%d) gives memory", r);
        if (r == me && shared_ints(r) > 0) CHECK(seg[r] == mine, "my own segment");
        if (r > first) /* contiguous by default */
            CHECK(seg[r] == seg[r - 1] + shared_ints(r - 1), "segment %d at %p, %d after %p", r,
                  (void *)seg[r], shared_ints(r - 1), (void *)seg[r - 1]);
    }
    int *p = NULL;
    ssz = -1;
    CHECK_RC(MPI_Win_shared_query(win, MPI_PROC_NULL, &ssz, &du, &p));
    CHECK(p == seg[first] && ssz == (MPI_Aint)(shared_ints(first) * sizeof(int)),
          "shared_query(MPI_PROC_NULL): %p size %ld, expected rank %d's %p", (void *)p, (long)ssz,
          first, (void *)seg[first]);

    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < shared_ints(right); k++) seg[right][k] = val(me, k);
    CHECK_RC(MPI_Win_sync(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_sync(win));
    for (int r = 0; r < np; r++)
        for (int k = 0; k < shared_ints(r); k++) {
            int e = val((r - 1 + np) % np, k);
            CHECK(seg[r][k] == e, "shared: rank %d int %d is %d, expected %d", r, k, seg[r][k], e);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    int add = me + 1;
    CHECK_RC(MPI_Accumulate(&add, 1, MPI_INT, first, 1, 1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Win_flush(first, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_sync(win));
    int e = val((first - 1 + np) % np, 1) + np * (np + 1) / 2;
    CHECK(seg[first][1] == e, "shared: accumulated %d, expected %d", seg[first][1], e);
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
}

/* MPI_Win_create_dynamic with two attached blocks addressed through MPI_Get_address. */
static void test_dynamic(void) {
    MPI_Win win;
    CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, NULL, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    int *a = malloc(8 * sizeof(int)), *b = malloc(6 * sizeof(int)), got[5], src[2];
    for (int k = 0; k < 8; k++) a[k] = val(me, k);
    for (int k = 0; k < 6; k++) b[k] = val(me, 100 + k);
    CHECK_RC(MPI_Win_attach(win, a, 8 * sizeof(int)));
    CHECK_RC(MPI_Win_attach(win, b, 6 * sizeof(int)));
    MPI_Aint mine[2], *all = malloc(sizeof(MPI_Aint) * 2 * (size_t)np);
    MPI_Get_address(a, &mine[0]);
    MPI_Get_address(b, &mine[1]);
    MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++) src[k] = -(me * 10 + k) - 1;
    int add = me + 1;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(src, 2, MPI_INT, right, MPI_Aint_add(all[2 * right], 4 * sizeof(int)), 2,
                     MPI_INT, win));
    CHECK_RC(MPI_Get(got, 5, MPI_INT, left, all[2 * left + 1], 5, MPI_INT, win));
    for (int t = 0; t < np; t++)
        CHECK_RC(MPI_Accumulate(&add, 1, MPI_INT, t, MPI_Aint_add(all[2 * t + 1], 5 * sizeof(int)),
                                1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int k = 0; k < 8; k++) {
        int e = k == 4 || k == 5 ? -(left * 10 + k - 4) - 1 : val(me, k);
        CHECK(a[k] == e, "dynamic: a[%d] is %d, expected %d", k, a[k], e);
    }
    for (int k = 0; k < 5; k++)
        CHECK(got[k] == val(left, 100 + k), "dynamic: Get %d is %d", k, got[k]);
    CHECK(b[5] == val(me, 105) + np * (np + 1) / 2, "dynamic: accumulated %d", b[5]);
    /* one block detached, the other still reached */
    CHECK_RC(MPI_Win_detach(win, b));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Get(got, 3, MPI_INT, right, MPI_Aint_add(all[2 * right], 3 * sizeof(int)), 3,
                     MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int k = 0; k < 3; k++) {
        int e = k == 1 || k == 2 ? -(me * 10 + k - 1) - 1 : val(right, 3);
        CHECK(got[k] == e, "dynamic after detach: Get %d is %d, expected %d", k, got[k], e);
    }
    CHECK_RC(MPI_Win_detach(win, a));
    CHECK_RC(MPI_Win_free(&win));
    free(a);
    free(b);
    free(all);
}

/* A window of `bytes` at every rank: from MPI_Win_allocate (own), or MPI_Win_create over
 * memory of the test's (whose operations go by single copy between processes), freed by
 * free_win. */
static void *created;
static void make_win(MPI_Aint bytes, int unit, int own, void *base, MPI_Win *win) {
    if (own) {
        CHECK_RC(MPI_Win_allocate(bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, base, win));
        return;
    }
    created = malloc((size_t)bytes);
    CHECK(created != NULL, "out of memory");
    CHECK_RC(MPI_Win_create(created, bytes, unit, MPI_INFO_NULL, MPI_COMM_WORLD, win));
    *(void **)base = created;
}

static void free_win(MPI_Win *win) {
    CHECK_RC(MPI_Win_free(win));
    free(created);
    created = NULL;
}

/* Fence epochs on a window of 64 ints: the accumulate operators, derived types on either
 * side with their gaps left alone, count 0, MPI_PROC_NULL, and assert flags. */
static void test_fence(int own) {
    enum { W = 64 };
    int *w = NULL, e[W];
    MPI_Win win;
    make_win(W * sizeof(int), sizeof(int), own, &w, &win);
    for (int k = 0; k < W; k++) w[k] = e[k] = val(me, k);
    for (int k = 4; k < 8; k++) w[k] = e[k] = -3; /* MAX at 4..7 */
    for (int j = 0; j < 4; j++) {                 /* MAXLOC pairs at 16..23 */
        w[16 + 2 * j] = e[16 + 2 * j] = (me * 3 + j) % 4;
        w[17 + 2 * j] = e[17 + 2 * j] = 100 + me;
    }
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    int sum[4], mx[4], rep[4], bx[4], ml[8];
    for (int k = 0; k < 4; k++) {
        sum[k] = (me + 1) * (k + 1);
        mx[k] = (me * 5 + k * 3) % 11 - 5;
        rep[k] = -val(me, k);
        bx[k] = ((1 << me) * (k + 1)) ^ 0x5a;
        ml[2 * k] = (me * 5 + k * 3) % 4, ml[2 * k + 1] = me;
    }
    for (int t = 0; t < np; t++) {
        CHECK_RC(MPI_Accumulate(sum, 4, MPI_INT, t, 0, 4, MPI_INT, MPI_SUM, win));
        CHECK_RC(MPI_Accumulate(mx, 4, MPI_INT, t, 4, 4, MPI_INT, MPI_MAX, win));
        CHECK_RC(MPI_Accumulate(bx, 4, MPI_INT, t, 12, 4, MPI_INT, MPI_BXOR, win));
        CHECK_RC(MPI_Accumulate(ml, 4, MPI_2INT, t, 16, 4, MPI_2INT, MPI_MAXLOC, win));
    }
    CHECK_RC(MPI_Accumulate(rep, 4, MPI_INT, right, 8, 4, MPI_INT, MPI_REPLACE, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int r = 0; r < np; r++)
        for (int k = 0; k < 4; k++) {
            int m = (r * 5 + k * 3) % 11 - 5, v = (r * 5 + k * 3) % 4;
            e[k] += (r + 1) * (k + 1);
            if (m > e[4 + k]) e[4 + k] = m;
            e[12 + k] ^= ((1 << r) * (k + 1)) ^ 0x5a;
            if (v > e[16 + 2 * k] || (v == e[16 + 2 * k] && r < e[17 + 2 * k]))
                e[16 + 2 * k] = v, e[17 + 2 * k] = r;
        }
    for (int k = 0; k < 4; k++) e[8 + k] = -val(left, k);
    for (int k = 0; k < W; k++)
        CHECK(w[k] == e[k], "fence, accumulate: int %d is %d, expected %d", k, w[k], e[k]);
    MPI_Barrier(MPI_COMM_WORLD); /* checked before the next epoch writes here */

    /* derived types: an origin vector to contiguous ints at 24..27, contiguous ints to a
     * target vector at 28..34, an indexed target at 36..45, and a resized type stepping 3
     * ints at 46..55 accumulated by everyone */
    MPI_Datatype vec3, vec2, idx, res3;
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec3);
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec2);
    int bl[3] = {2, 1, 3}, dl[3] = {0, 4, 7};
    MPI_Type_indexed(3, bl, dl, MPI_INT, &idx);
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &res3);
    MPI_Type_commit(&vec3);
    MPI_Type_commit(&vec2);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&res3);
    int strided[12], four[4], six[6], acc[4];
    for (int i = 0; i < 12; i++) strided[i] = -1000 * (me + 1) - i;
    for (int i = 0; i < 4; i++) four[i] = -2000 * (me + 1) - i, acc[i] = (me + 1) * 10 + i;
    for (int i = 0; i < 6; i++) six[i] = -3000 * (me + 1) - i;
    CHECK_RC(MPI_Put(strided, 1, vec3, right, 24, 4, MPI_INT, win));
    CHECK_RC(MPI_Put(four, 4, MPI_INT, right, 28, 1, vec2, win));
    CHECK_RC(MPI_Put(six, 6, MPI_INT, right, 36, 1, idx, win));
    for (int t = 0; t < np; t++)
        CHECK_RC(MPI_Accumulate(acc, 4, MPI_INT, t, 46, 4, res3, MPI_SUM, win));
    /* count 0 and MPI_PROC_NULL change nothing; a Get from MPI_PROC_NULL leaves its buffer */
    int probe[4] = {7, 7, 7, 7};
    CHECK_RC(MPI_Put(four, 0, MPI_INT, right, 56, 0, MPI_INT, win));
    CHECK_RC(MPI_Put(four, 0, vec2, right, 56, 0, vec2, win));
    CHECK_RC(MPI_Accumulate(four, 0, MPI_INT, right, 58, 0, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Get(probe, 0, MPI_INT, right, 60, 0, MPI_INT, win));
    CHECK_RC(MPI_Put(four, 4, MPI_INT, MPI_PROC_NULL, 56, 4, MPI_INT, win));
    CHECK_RC(MPI_Accumulate(four, 4, MPI_INT, MPI_PROC_NULL, 56, 4, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Get(probe, 4, MPI_INT, MPI_PROC_NULL, 56, 4, MPI_INT, win));
    /* no local stores since the last fence, and no Put or Accumulate in the next epoch */
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int i = 0; i < 4; i++) CHECK(probe[i] == 7, "Get from MPI_PROC_NULL wrote %d", probe[i]);
    for (int i = 0; i < 4; i++) e[24 + i] = -1000 * (left + 1) - 3 * i;
    for (int i = 0; i < 4; i++) e[28 + 2 * i] = -2000 * (left + 1) - i;
    for (int i = 0, j = 0; i < 3; i++)
        for (int b = 0; b < bl[i]; b++) e[36 + dl[i] + b] = -3000 * (left + 1) - j++;
    for (int r = 0; r < np; r++)
        for (int i = 0; i < 4; i++) e[46 + 3 * i] += (r + 1) * 10 + i;
    for (int k = 0; k < W; k++)
        CHECK(w[k] == e[k], "fence, derived types: int %d is %d, expected %d", k, w[k], e[k]);

    /* Get with derived types on both sides: the left neighbour's target vector at 28.. into
     * every third int here */
    int dst[12];
    for (int i = 0; i < 12; i++) dst[i] = -7;
    CHECK_RC(MPI_Get(dst, 4, res3, left, 28, 1, vec2, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    int ll = (left - 1 + np) % np;
    for (int i = 0; i < 12; i++) {
        int x = i % 3 == 0 ? -2000 * (ll + 1) - i / 3 : -7;
        CHECK(dst[i] == x, "Get with derived types: int %d is %d, expected %d", i, dst[i], x);
    }
    /* an epoch with nothing before or after it, then a read-only one */
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT | MPI_MODE_NOSTORE, win));
    int g[2] = {0, 0};
    CHECK_RC(MPI_Get(g, 2, MPI_INT, right, 8, 2, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    CHECK(g[0] == -val(me, 0) && g[1] == -val(me, 1), "read-only epoch: %d %d", g[0], g[1]);
    MPI_Type_free(&vec3);
    MPI_Type_free(&vec2);
    MPI_Type_free(&idx);
    MPI_Type_free(&res3);
    free_win(&win);
}

static MPI_Group neighbours(void) {
    int ranks[2] = {left, right}, n = left == right ? 1 : 2;
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_incl(wg, n, ranks, &g);
    MPI_Group_free(&wg);
    return g;
}

/* Post/start/complete/wait with the neighbours, then with Win_test polled to completion,
 * then every rank accessing rank 0. */
static void test_pscw(void) {
    int w[4], e[4];
    for (int k = 0; k < 4; k++) w[k] = e[k] = val(me, k);
    MPI_Win win;
    CHECK_RC(MPI_Win_create(w, sizeof w, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group nb = neighbours();
    int a = val(me, 50), b = val(me, 60), got = -1;
    CHECK_RC(MPI_Win_post(nb, 0, win));
    CHECK_RC(MPI_Win_start(nb, 0, win));
    CHECK_RC(MPI_Put(&a, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(MPI_Put(&b, 1, MPI_INT, left, 1, 1, MPI_INT, win));
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, right, 3, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_complete(win));
    CHECK_RC(MPI_Win_wait(win));
    e[0] = val(left, 50), e[1] = val(right, 60);
    CHECK(got == val(right, 3), "pscw: Get %d", got);
    for (int k = 0; k < 4; k++)
        CHECK(w[k] == e[k], "pscw: int %d is %d, expected %d", k, w[k], e[k]);

    /* the neighbours add to slot 2; the exposure ends by polling MPI_Win_test */
    int add = me + 1, flag = 0, polls = 0;
    CHECK_RC(MPI_Win_post(nb, 0, win));
    CHECK_RC(MPI_Win_start(nb, 0, win));
    CHECK_RC(MPI_Accumulate(&add, 1, MPI_INT, left, 2, 1, MPI_INT, MPI_SUM, win));
    if (right != left)
        CHECK_RC(MPI_Accumulate(&add, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Win_complete(win));
    while (!flag) {
        CHECK_RC(MPI_Win_test(win, &flag));
        polls++;
    }
    e[2] += left + 1 + (right != left ? right + 1 : 0);
    CHECK(w[2] == e[2], "pscw with Win_test: %d, expected %d (after %d polls)", w[2], e[2], polls);
    MPI_Group_free(&nb);

    /* everyone else adds to rank 0's slot 3 */
    if (np > 1) {
        MPI_Group wg, g;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        int zero = 0;
        if (me == 0) {
            MPI_Group_excl(wg, 1, &zero, &g);
            CHECK_RC(MPI_Win_post(g, 0, win));
            CHECK_RC(MPI_Win_wait(win));
            e[3] += (np - 1) * (np + 2) / 2; /* 2 + 3 + ... + np */
            CHECK(w[3] == e[3], "pscw to rank 0: %d, expected %d", w[3], e[3]);
        } else {
            MPI_Group_incl(wg, 1, &zero, &g);
            CHECK_RC(MPI_Win_start(g, 0, win));
            CHECK_RC(MPI_Accumulate(&add, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win));
            CHECK_RC(MPI_Win_complete(win));
        }
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
    }
    CHECK_RC(MPI_Win_free(&win));
}

/* Exclusive and shared locks, lock_all with the flushes. */
static void test_lock(int own) {
    enum { W = 16 };
    long *w = NULL;
    MPI_Win win;
    make_win(W * sizeof(long), sizeof(long), own, &w, &win);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (int k = 0; k < W; k++) w[k] = val(me, k);
    CHECK_RC(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);

    long two[2] = {-(me * 10L) - 1, -(me * 10L) - 2}, got[4];
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_RC(MPI_Put(two, 2, MPI_LONG, right, 0, 2, MPI_LONG, win));
    CHECK_RC(MPI_Win_unlock(right, win));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win));
    CHECK_RC(MPI_Get(got, 4, MPI_LONG, left, 4, 4, MPI_LONG, win));
    CHECK_RC(MPI_Win_unlock(left, win));
    for (int k = 0; k < 4; k++) CHECK(got[k] == val(left, 4 + k), "lock: Get %d is %ld", k, got[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    CHECK(w[0] == -(left * 10L) - 1 && w[1] == -(left * 10L) - 2, "lock: Put gave %ld %ld", w[0],
          w[1]);
    CHECK_RC(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* lock_all: a Put then a Get of the same place after a flush; buffers reused after the
     * local flushes */
    long mine = me, back = -1, buf, three[3] = {-1, -1, -1};
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_RC(MPI_Put(&mine, 1, MPI_LONG, right, 8, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush(right, win));
    CHECK_RC(MPI_Get(&back, 1, MPI_LONG, right, 8, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush(right, win));
    CHECK(back == me, "lock_all: read back %ld after flush, expected %d", back, me);
    buf = 1000 + me;
    CHECK_RC(MPI_Put(&buf, 1, MPI_LONG, left, 9, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_local(left, win));
    buf = 2000 + me;
    CHECK_RC(MPI_Put(&buf, 1, MPI_LONG, left, 10, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_local_all(win));
    buf = 3000 + me;
    CHECK_RC(MPI_Put(&buf, 1, MPI_LONG, left, 11, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_all(win));
    CHECK_RC(MPI_Get(three, 3, MPI_LONG, left, 9, 3, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_all(win));
    for (int k = 0; k < 3; k++)
        CHECK(three[k] == 1000 * (k + 1) + me, "lock_all: read back %ld at %d", three[k], 9 + k);
    CHECK_RC(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    CHECK(w[8] == left, "lock_all: Put gave %ld", w[8]);
    for (int k = 0; k < 3; k++)
        CHECK(w[9 + k] == 1000 * (k + 1) + right, "lock_all: int %d is %ld", 9 + k, w[9 + k]);
    CHECK_RC(MPI_Win_unlock(me, win));
    free_win(&win);
}

/* Atomics on rank 0's memory from every rank at once. */
static void test_atomics(int own) {
    enum { N = 200, A = 16, R = 5, M = 10 };
    long *w = NULL;
    MPI_Win win;
    /* 0: Fetch_and_op counter, 1: spin lock word, 2: counter under it, 3: Get_accumulate
     * bits, 4..4+A: Accumulate sums (at every rank) */
    make_win((4 + A) * sizeof(long), sizeof(long), own, &w, &win);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    for (int k = 0; k < 4 + A; k++) w[k] = 0;
    CHECK_RC(MPI_Win_unlock(me, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* N Fetch_and_op(SUM, 1) from every rank: every value fetched once, in order per rank */
    long one = 1, got[N];
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, 0, MPI_SUM, win));
    CHECK_RC(MPI_Win_unlock(0, win));
    for (int i = 1; i < N; i++)
        CHECK(got[i] > got[i - 1], "fetch_and_op: fetched %ld after %ld", got[i], got[i - 1]);
    long *all = me == 0 ? malloc(sizeof(long) * N * (size_t)np) : NULL;
    MPI_Gather(got, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
        long final = -1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Fetch_and_op(NULL, &final, MPI_LONG, 0, 0, MPI_NO_OP, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK(final == (long)np * N, "fetch_and_op: counter %ld, expected %d", final, np * N);
        qsort(all, (size_t)np * N, sizeof(long), cmp_long);
        for (long i = 0; i < (long)np * N; i++)
            CHECK(all[i] == i, "fetch_and_op: fetched values not distinct near %ld", i);
        free(all);
    }

    /* R rounds of Accumulate(SUM) from every rank to every rank under shared locks */
    long src[A];
    for (int round = 0; round < R; round++) {
        for (int k = 0; k < A; k++) src[k] = (me + 1L) * (k + 1) + round;
        for (int i = 1; i <= np; i++) {
            int t = (me + i) % np;
            CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            CHECK_RC(MPI_Accumulate(src, A, MPI_LONG, t, 4, A, MPI_LONG, MPI_SUM, win));
            CHECK_RC(MPI_Win_unlock(t, win));
        }
    }

    /* a spin lock taken with Compare_and_swap under shared locks guards a Get, then a Put
     * of the counter under separate exclusive locks */
    long id = me + 1, zero = 0, old, cnt;
    for (int i = 0; i < M; i++) {
        do {
            CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            CHECK_RC(MPI_Compare_and_swap(&id, &zero, &old, MPI_LONG, 0, 1, win));
            CHECK_RC(MPI_Win_unlock(0, win));
            CHECK(old >= 0 && old <= np, "spin lock word %ld", old);
        } while (old != 0);
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Get(&cnt, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        cnt++;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Put(&cnt, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Fetch_and_op(&zero, &old, MPI_LONG, 0, 1, MPI_REPLACE, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK(old == id, "spin lock held by %ld while mine", old);
    }

    /* Get_accumulate(SUM) of one bit per rank: the values fetched chain up to all bits */
    long bit = 1L << me, before = -1, now = -1;
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_RC(MPI_Get_accumulate(&bit, 1, MPI_LONG, &before, 1, MPI_LONG, 0, 3, 1, MPI_LONG, MPI_SUM,
                                win));
    CHECK_RC(MPI_Win_flush(0, win));
    CHECK(before >= 0 && !(before & bit) && before < (1L << np), "get_accumulate fetched %lx",
          before);
    CHECK_RC(MPI_Win_unlock_all(win));
    long *bef = malloc(sizeof(long) * (size_t)np);
    MPI_Allgather(&before, 1, MPI_LONG, bef, 1, MPI_LONG, MPI_COMM_WORLD);
    /* by the number of bits, each fetched value is the one before plus that rank's bit */
    for (int nbits = 0, cur = 0; nbits < np; nbits++) {
        int who = -1;
        for (int r = 0; r < np; r++)
            if (bef[r] == cur) who = r;
        CHECK(who >= 0, "get_accumulate: no rank fetched %x", cur);
        cur |= 1 << who;
    }
    free(bef);
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_RC(MPI_Get_accumulate(NULL, 0, MPI_LONG, &now, 1, MPI_LONG, 0, 3, 1, MPI_LONG, MPI_NO_OP,
                                win));
    CHECK_RC(MPI_Win_flush_all(win));
    CHECK(now == (1L << np) - 1, "get_accumulate(NO_OP) read %lx", now);

    /* the Accumulate sums at this rank and the counter under the spin lock */
    MPI_Barrier(MPI_COMM_WORLD);
    long sums[A], cnt0 = -1;
    CHECK_RC(MPI_Get_accumulate(NULL, 0, MPI_LONG, sums, A, MPI_LONG, me, 4, A, MPI_LONG, MPI_NO_OP,
                                win));
    CHECK_RC(MPI_Get(&cnt0, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_unlock_all(win));
    for (int k = 0; k < A; k++) {
        long e = 0;
        for (int r = 0; r < np; r++)
            for (int round = 0; round < R; round++) e += (r + 1L) * (k + 1) + round;
        CHECK(sums[k] == e, "accumulate: sum %d is %ld, expected %ld", k, sums[k], e);
    }
    CHECK(cnt0 == (long)np * M, "spin lock: counter %ld, expected %d", cnt0, np * M);
    free_win(&win);
}

/* Request-based operations inside lock_all (with MPI_MODE_NOCHECK). */
static void test_requests(void) {
    enum { W = 16 };
    int *w = NULL;
    MPI_Win win;
    CHECK_RC(
        MPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    CHECK_RC(MPI_Win_lock_all(MPI_MODE_NOCHECK, win)); /* only shared locks here */
    for (int k = 0; k < W; k++) w[k] = val(me, k);
    w[13] = 0;
    CHECK_RC(MPI_Win_sync(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_sync(win));
    int got[8], put[4], one = 1, bit = 1 << me, old = -1;
    MPI_Request rq[4];
    for (int k = 0; k < 4; k++) put[k] = -val(me, k) - 1;
    CHECK_RC(MPI_Rget(got, 8, MPI_INT, right, 0, 8, MPI_INT, win, &rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL, "Wait frees the request");
    for (int k = 0; k < 8; k++) CHECK(got[k] == val(right, k), "Rget %d is %d", k, got[k]);
    CHECK_RC(MPI_Rput(put, 4, MPI_INT, right, 8, 4, MPI_INT, win, &rq[0]));
    CHECK_RC(MPI_Raccumulate(&one, 1, MPI_INT, left, 12, 1, MPI_INT, MPI_SUM, win, &rq[1]));
    CHECK_RC(MPI_Rget_accumulate(&bit, 1, MPI_INT, &old, 1, MPI_INT, 0, 13, 1, MPI_INT, MPI_SUM,
                                 win, &rq[2]));
    CHECK_RC(MPI_Raccumulate(&one, 1, MPI_INT, right, 12, 1, MPI_INT, MPI_SUM, win, &rq[3]));
    CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(old >= 0 && !(old & bit) && old < (1 << np), "Rget_accumulate fetched %x", old);
    CHECK_RC(MPI_Win_flush_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_sync(win));
    for (int k = 0; k < 4; k++)
        CHECK(w[8 + k] == -val(left, k) - 1, "Rput: int %d is %d", 8 + k, w[8 + k]);
    CHECK(w[12] == val(me, 12) + 2, "Raccumulate: %d, expected %d", w[12], val(me, 12) + 2);
    if (me == 0) CHECK(w[13] == (1 << np) - 1, "Rget_accumulate: %x", w[13]);
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
}

static int deletes;
static void *deleted;

static int count_delete(MPI_Win win, int keyval, void *val, void *extra) {
    (void)win, (void)keyval;
    CHECK(extra == &deletes, "extra_state passed through");
    deletes++;
    deleted = val;
    return MPI_SUCCESS;
}

/* Names, user attributes with a delete callback (run by delete_attr and by Win_free, also
 * after the keyval is freed), info. */
static void test_attrs(void) {
    int mem[4];
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1, flag = 0, kv, kv2;
    CHECK_RC(MPI_Win_get_name(win, name, &len));
    CHECK(len == (int)strlen(name), "name length %d for '%s'", len, name);
    CHECK_RC(MPI_Win_set_name(win, "my window"));
    CHECK_RC(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, "my window") && len == 9, "name '%s' (%d)", name, len);

    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv, &deletes));
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &kv2, &deletes));
    void *v = NULL;
    CHECK_RC(MPI_Win_get_attr(win, kv, &v, &flag));
    CHECK(!flag, "no value before set_attr");
    CHECK_RC(MPI_Win_set_attr(win, kv, &mem[1]));
    CHECK_RC(MPI_Win_get_attr(win, kv, &v, &flag));
    CHECK(flag && v == &mem[1], "get_attr gives %p, expected %p", v, (void *)&mem[1]);
    CHECK_RC(MPI_Win_set_attr(win, kv, &mem[2])); /* replaces: deletes the old value */
    CHECK(deletes == 1 && deleted == &mem[1], "replacing deletes (%d)", deletes);
    CHECK_RC(MPI_Win_delete_attr(win, kv));
    CHECK(deletes == 2 && deleted == &mem[2], "delete_attr runs the callback (%d)", deletes);
    CHECK_RC(MPI_Win_get_attr(win, kv, &v, &flag));
    CHECK(!flag, "no value after delete_attr");
    CHECK_RC(MPI_Win_set_attr(win, kv, &mem[3]));
    CHECK_RC(MPI_Win_set_attr(win, kv2, &mem[0]));
    CHECK_RC(MPI_Win_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free_keyval sets MPI_KEYVAL_INVALID");

    MPI_Info info, set;
    CHECK_RC(MPI_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL, "get_info gives an info");
    MPI_Info_free(&info);
    MPI_Info_create(&set);
    MPI_Info_set(set, "cohort_test_key", "1");
    CHECK_RC(MPI_Win_set_info(win, set));
    MPI_Info_free(&set);
    CHECK_RC(MPI_Win_get_info(win, &info));
    MPI_Info_free(&info);

    CHECK(deletes == 2, "no delete before Win_free (%d)", deletes);
    CHECK_RC(MPI_Win_free(&win));
    CHECK(deletes == 4, "Win_free deletes both attributes (%d)", deletes);
    CHECK_RC(MPI_Win_free_keyval(&kv2));
}

/* The number of this process's memory mappings, or of its open files. */
static int count_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, c;
    while (f && (c = getc(f)) != EOF) n += c == '\n';
    if (f) fclose(f);
    return n;
}

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    while (d && readdir(d)) n++;
    if (d) closedir(d);
    return n;
}

/* Many windows of every flavour created and freed, each used once; what they mapped and
 * opened goes with them (a few mappings of slack for the allocator). */
static void test_many(void) {
    int maps = 0, fds = 0;
    for (int i = 0; i < 200; i++) {
        if (i == 8) maps = count_maps(), fds = count_fds();
        MPI_Win win;
        int *p = NULL, mem[2], v = -1, f = i % 4;
        MPI_Aint sz = (MPI_Aint)(2 * sizeof(int));
        if (f == 0)
            CHECK_RC(
                MPI_Win_allocate_shared(sz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win));
        else if (f == 1)
            CHECK_RC(MPI_Win_allocate(sz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win));
        else if (f == 2)
            CHECK_RC(MPI_Win_create(p = mem, sz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        else {
            CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            CHECK_RC(MPI_Win_attach(win, p = mem, sz));
        }
        p[0] = val(me, i), p[1] = 0;
        MPI_Aint at = 0, *all = malloc(sizeof(MPI_Aint) * (size_t)np);
        MPI_Get_address(p, &at);
        MPI_Allgather(&at, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT, right, f == 3 ? all[right] : 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_fence(0, win));
        CHECK(v == val(right, i), "window %d: Get %d", i, v);
        free(all);
        if (f == 3) CHECK_RC(MPI_Win_detach(win, mem));
        CHECK_RC(MPI_Win_free(&win));
        CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
    }
    int maps2 = count_maps(), fds2 = count_fds();
    CHECK(maps2 <= maps + 8 && fds2 <= fds,
          "192 windows later: %d mappings (%d before), %d files "
          "(%d before)",
          maps2, maps, fds2, fds);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np <= 8, "at most 8 ranks");
    left = (me - 1 + np) % np, right = (me + 1) % np;
    test_create();
    test_allocate();
    test_shared();
    test_dynamic();
    test_fence(1);
    test_fence(0);
    test_pscw();
    test_lock(1);
    test_lock(0);
    test_atomics(1);
    test_atomics(0);
    test_requests();
    test_attrs();
    test_many();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("rma_basic: %d ranks ok\n", np);
    MPI_Finalize();
    return 0;
}
