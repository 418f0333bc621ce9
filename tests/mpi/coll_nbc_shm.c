/* Small nonblocking collectives through the communicator's shared buffers (nbc.c, "Shared-memory
 * schedules"): Iallreduce, Iallgather, Ialltoall, Ireduce_scatter_block, Iscan, Iexscan,
 * Iallgatherv and Ireduce_scatter (a count per rank), Ialltoallv, and at every root Igatherv and
 * Iscatterv (those three with small blocks inline and large ones as messages), Ibcast, Iscatter,
 * Igather and Ireduce, against serial references: counts on both sides of the size limit, in place
 * and not, a strided type (Iallgather; the send side of Igatherv and Ialltoallv), a
 * non-commutative operator (rank order), many calls in a row so that every buffer is reused; a
 * second call in flight (it waits for the first), a blocking collective (then one rank reads late
 * while the others run on) and an MPI_Ibarrier between start and completion, ranks that come late,
 * completion by MPI_Test; then the errors: counts that differ (MPI_ERR_TRUNCATE on the rank that
 * expects less, MPI_ERR_COUNT on the others; a root that gets a larger block) and ranks that call
 * different collectives at the same place (MPI_ERR_OTHER), after which the communicator still
 * works; and most of it again on the halves of a split with reversed key order. */
#include "coll_util.h"

#include <stdint.h>
#include <unistd.h>

static int me, np;

/* Affine maps t -> a*t + b (mod 2^32), composed: associative, not commutative. */
typedef struct aff {
    uint32_t a, b;
} aff;
static void aff_op(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) {
        aff p = ((aff *)in)[i], *q = &((aff *)inout)[i];
        *q = (aff){p.a * q->a, p.a * q->b + p.b}; /* in after inout: p(q(t)) */
    }
}
static aff aff_val(int rank, int i, int salt) {
    return (aff){(uint32_t)(2 * (rank + i + salt) + 1), (uint32_t)(rank * 7 + i + salt)};
}

/* Element i of ranks 0..upto-1's operands combined in rank order (upto >= 1). */
static aff aff_prefix(int upto, int i, int salt) {
    aff acc = aff_val(0, i, salt);
    for (int q = 1; q < upto; q++) {
        aff x = aff_val(q, i, salt);
        int one = 1;
        aff_op(&acc, &x, &one, NULL);
        acc = x;
    }
    return acc;
}

static int val(int rank, int i, int salt) {
    return (rank + 1) * 1000 + i * 3 + salt;
}

static void complete(MPI_Request *rq, int by_test) {
    if (!by_test) {
        CHECK_RC(MPI_Wait(rq, MPI_STATUS_IGNORE));
        return;
    }
    int flag = 0;
    while (!flag) CHECK_RC(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
}

/* One Iallreduce (sum of ints, count k), one Iallgather and one Ialltoall (k ints per block),
 * each started while the one before is in flight; `mode` puts a blocking Bcast, an Ibarrier or a
 * late rank between start and completion. */
static void round_trip(MPI_Comm c, int k, int salt, int mode, int inplace) {
    int *s = malloc(sizeof(int) * (size_t)k), *r = malloc(sizeof(int) * (size_t)k);
    int *g = malloc(sizeof(int) * (size_t)k * (size_t)np);
    int *ts = malloc(sizeof(int) * (size_t)k * (size_t)np);
    int *tr = malloc(sizeof(int) * (size_t)k * (size_t)np);
    CHECK(s && r && g && ts && tr, "malloc");
    for (int i = 0; i < k; i++) s[i] = r[i] = val(me, i, salt);
    for (int i = 0; i < k * np; i++) g[i] = tr[i] = -1;
    for (int q = 0; q < np; q++) /* block q of my Ialltoall: for rank q */
        for (int i = 0; i < k; i++) ts[q * k + i] = val(me, i, salt + 7 * q);
    if (inplace) {
        for (int i = 0; i < k; i++) g[me * k + i] = val(me, i, salt);
        memcpy(tr, ts, sizeof(int) * (size_t)k * (size_t)np);
    }
    MPI_Request rq[4];
    if (mode == 2 && me == (salt % np)) usleep(2000); /* one rank late */
    CHECK_RC(MPI_Iallreduce(inplace ? MPI_IN_PLACE : s, r, k, MPI_INT, MPI_SUM, c, &rq[0]));
    CHECK_RC(MPI_Iallgather(inplace ? MPI_IN_PLACE : s, k, MPI_INT, g, k, MPI_INT, c, &rq[1]));
    CHECK_RC(MPI_Ialltoall(inplace ? MPI_IN_PLACE : ts, k, MPI_INT, tr, k, MPI_INT, c, &rq[3]));
    int x = me == 0 ? salt : -1;
    if (mode == 1) { /* then one rank reads late: the others run on into the next calls */
        CHECK_RC(MPI_Bcast(&x, 1, MPI_INT, 0, c));
        if (me == (salt % np)) usleep(3000);
    }
    if (mode == 3) {
        CHECK_RC(MPI_Ibarrier(c, &rq[2]));
        complete(&rq[2], salt & 1);
    }
    complete(&rq[1], salt & 1);
    complete(&rq[3], salt & 2);
    complete(&rq[0], !(salt & 1));
    if (mode == 1) CHECK(x == salt, "Bcast between start and wait: %d", x);
    for (int i = 0; i < k; i++) {
        long want = 0;
        for (int q = 0; q < np; q++) want += val(q, i, salt);
        CHECK(r[i] == (int)want, "Iallreduce k %d mode %d in place %d: [%d] = %d, want %ld", k,
              mode, inplace, i, r[i], want);
    }
    for (int q = 0; q < np; q++)
        for (int i = 0; i < k; i++)
            CHECK(g[q * k + i] == val(q, i, salt),
                  "Iallgather k %d mode %d in place %d: block %d [%d] = %d", k, mode, inplace, q, i,
                  g[q * k + i]);
    for (int q = 0; q < np; q++)
        for (int i = 0; i < k; i++)
            CHECK(tr[q * k + i] == val(q, i, salt + 7 * me),
                  "Ialltoall k %d mode %d in place %d: block %d [%d] = %d", k, mode, inplace, q, i,
                  tr[q * k + i]);
    free(s), free(r), free(g), free(ts), free(tr);
}

/* The non-commutative operator and a strided type (every other int of a vector). */
static void ordered_and_strided(MPI_Comm c, int k, int salt) {
    MPI_Datatype at, every2;
    CHECK_RC(MPI_Type_contiguous(2, MPI_UINT32_T, &at));
    CHECK_RC(MPI_Type_commit(&at));
    MPI_Op op;
    CHECK_RC(MPI_Op_create(aff_op, 0, &op));
    aff *s = malloc(sizeof(aff) * (size_t)k), *r = malloc(sizeof(aff) * (size_t)k);
    CHECK(s && r, "malloc");
    for (int i = 0; i < k; i++) s[i] = aff_val(me, i, salt);
    MPI_Request rq;
    CHECK_RC(MPI_Iallreduce(s, r, k, at, op, c, &rq));
    complete(&rq, salt & 1);
    for (int i = 0; i < k; i++) {
        aff acc = aff_prefix(np, i, salt);
        CHECK(r[i].a == acc.a && r[i].b == acc.b, "ordered Iallreduce k %d: [%d] differs", k, i);
    }
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&at));
    free(s), free(r);

    CHECK_RC(MPI_Type_vector(k, 1, 2, MPI_INT, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    int *v = malloc(sizeof(int) * 2 * (size_t)k), *g = malloc(sizeof(int) * 2 * (size_t)k * np);
    CHECK(v && g, "malloc");
    for (int i = 0; i < 2 * k; i++) v[i] = i % 2 ? -7 : val(me, i / 2, salt);
    for (int i = 0; i < 2 * k * np; i++) g[i] = -9;
    MPI_Aint lb, ext;
    CHECK_RC(MPI_Type_get_extent(every2, &lb, &ext));
    MPI_Datatype rt;
    CHECK_RC(MPI_Type_create_resized(every2, 0, 2 * (MPI_Aint)k * (MPI_Aint)sizeof(int), &rt));
    CHECK_RC(MPI_Type_commit(&rt));
    CHECK_RC(MPI_Iallgather(v, 1, every2, g, 1, rt, c, &rq));
    complete(&rq, !(salt & 1));
    for (int q = 0; q < np; q++)
        for (int i = 0; i < 2 * k; i++) {
            int want = i % 2 ? -9 : val(q, i / 2, salt);
            CHECK(g[q * 2 * k + i] == want, "strided Iallgather k %d: block %d [%d] = %d", k, q, i,
                  g[q * 2 * k + i]);
        }
    CHECK_RC(MPI_Type_free(&rt));
    CHECK_RC(MPI_Type_free(&every2));
    free(v), free(g);
}

/* The rooted calls and Ireduce_scatter_block, every root, in place and not: Ibcast, Iscatter,
 * Igather and Ireduce (sum) of k ints per block, then Ireduce_scatter_block of k ints. */
static void rooted(MPI_Comm c, int k, int salt, int inplace) {
    size_t all = (size_t)k * (size_t)np;
    int *s = malloc(sizeof(int) * all), *r = malloc(sizeof(int) * all);
    CHECK(s && r, "malloc");
    for (int root = 0; root < np; root++, salt++) {
        int am = me == root, ip = inplace && am;
        MPI_Request rq;
        /* Ibcast */
        for (int i = 0; i < k; i++) r[i] = am ? val(root, i, salt) : -1;
        CHECK_RC(MPI_Ibcast(r, k, MPI_INT, root, c, &rq));
        complete(&rq, salt & 1);
        for (int i = 0; i < k; i++)
            CHECK(r[i] == val(root, i, salt), "Ibcast k %d root %d: [%d] = %d", k, root, i, r[i]);
        /* Iscatter: block q for rank q */
        for (size_t i = 0; i < all; i++) s[i] = val(root, (int)i, salt), r[i] = -1;
        if (ip) memcpy(r, s, sizeof(int) * all);
        CHECK_RC(MPI_Iscatter(s, k, MPI_INT, ip ? MPI_IN_PLACE : r, k, MPI_INT, root, c, &rq));
        complete(&rq, !(salt & 1));
        for (int i = 0; i < k; i++) {
            int want = val(root, me * k + i, salt);
            int got = ip ? r[me * k + i] : r[i];
            CHECK(got == want, "Iscatter k %d root %d in place %d: [%d] = %d", k, root, ip, i, got);
        }
        /* Igather */
        for (int i = 0; i < k; i++) s[i] = val(me, i, salt);
        for (size_t i = 0; i < all; i++) r[i] = -1;
        if (ip) memcpy(r + me * k, s, sizeof(int) * (size_t)k);
        CHECK_RC(MPI_Igather(ip ? MPI_IN_PLACE : s, k, MPI_INT, r, k, MPI_INT, root, c, &rq));
        complete(&rq, salt & 2);
        if (am)
            for (int q = 0; q < np; q++)
                for (int i = 0; i < k; i++)
                    CHECK(r[q * k + i] == val(q, i, salt),
                          "Igather k %d root %d: block %d [%d] = %d", k, root, q, i, r[q * k + i]);
        /* Ireduce */
        for (int i = 0; i < k; i++) s[i] = r[i] = val(me, i, salt);
        CHECK_RC(MPI_Ireduce(ip ? MPI_IN_PLACE : s, r, k, MPI_INT, MPI_SUM, root, c, &rq));
        complete(&rq, !(salt & 2));
        if (am)
            for (int i = 0; i < k; i++) {
                long want = 0;
                for (int q = 0; q < np; q++) want += val(q, i, salt);
                CHECK(r[i] == (int)want, "Ireduce k %d root %d: [%d] = %d, want %ld", k, root, i,
                      r[i], want);
            }
    }
    /* Ireduce_scatter_block: my block of the sum */
    for (size_t i = 0; i < all; i++) s[i] = r[i] = val(me, (int)i, salt);
    MPI_Request rq;
    CHECK_RC(MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, k, MPI_INT, MPI_SUM, c, &rq));
    complete(&rq, salt & 1);
    for (int i = 0; i < k; i++) {
        long want = 0;
        for (int q = 0; q < np; q++) want += val(q, me * k + i, salt);
        CHECK(r[i] == (int)want, "Ireduce_scatter_block k %d in place %d: [%d] = %d, want %ld", k,
              inplace, i, r[i], want);
    }
    free(s), free(r);
}

/* The calls with a count per rank: Iallgatherv of blocks of different sizes (rank 1's empty),
 * placed in reverse rank order with a gap after each, and Ireduce_scatter (sum) with counts
 * that make, in place, a rank's result overlap its own operand's part shifted (rank 1: one
 * element after the start) and one rank's part empty. */
static void varied(MPI_Comm c, int k, int salt, int inplace) {
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    CHECK(cnt && dsp, "malloc");
    size_t all = 0;
    for (int q = np - 1; q >= 0; q--) { /* Iallgatherv: reverse order, gaps of one */
        cnt[q] = q == 1 ? 0 : k + q;
        dsp[q] = (int)all;
        all += (size_t)cnt[q] + 1;
    }
    int *s = malloc(sizeof(int) * (all + 1)), *g = malloc(sizeof(int) * (all + 1));
    CHECK(s && g, "malloc");
    for (int i = 0; i < cnt[me]; i++) s[i] = val(me, i, salt);
    for (size_t i = 0; i < all; i++) g[i] = -5;
    if (inplace)
        for (int i = 0; i < cnt[me]; i++) g[dsp[me] + i] = val(me, i, salt);
    MPI_Request rq;
    CHECK_RC(MPI_Iallgatherv(inplace ? MPI_IN_PLACE : s, cnt[me], MPI_INT, g, cnt, dsp, MPI_INT, c,
                             &rq));
    complete(&rq, salt & 1);
    for (int q = 0; q < np; q++) {
        for (int i = 0; i < cnt[q]; i++)
            CHECK(g[dsp[q] + i] == val(q, i, salt),
                  "Iallgatherv k %d in place %d: block %d [%d] = %d", k, inplace, q, i,
                  g[dsp[q] + i]);
        CHECK(g[dsp[q] + cnt[q]] == -5, "Iallgatherv k %d: gap after block %d written", k, q);
    }
    free(s), free(g);

    size_t total = 0; /* Ireduce_scatter */
    for (int q = 0; q < np; q++) total += (size_t)(cnt[q] = q == 0 ? 1 : q == 2 ? 0 : k + 2 * q);
    s = malloc(sizeof(int) * total), g = malloc(sizeof(int) * total);
    CHECK(s && g, "malloc");
    for (size_t i = 0; i < total; i++) s[i] = g[i] = val(me, (int)i, salt);
    CHECK_RC(MPI_Ireduce_scatter(inplace ? MPI_IN_PLACE : s, g, cnt, MPI_INT, MPI_SUM, c, &rq));
    complete(&rq, !(salt & 1));
    size_t e0 = 0;
    for (int q = 0; q < me; q++) e0 += (size_t)cnt[q];
    for (int i = 0; i < cnt[me]; i++) {
        long want = 0;
        for (int q = 0; q < np; q++) want += val(q, (int)e0 + i, salt);
        CHECK(g[i] == (int)want, "Ireduce_scatter k %d in place %d: [%d] = %d, want %ld", k,
              inplace, i, g[i], want);
    }
    free(s), free(g), free(cnt), free(dsp);
}

/* Iscan and Iexscan (sum of k ints), in place and not, and Iscan with the non-commutative
 * operator (the prefix in rank order). */
static void scans(MPI_Comm c, int k, int salt, int inplace) {
    int *s = malloc(sizeof(int) * (size_t)k), *r = malloc(sizeof(int) * (size_t)k);
    aff *as = malloc(sizeof(aff) * (size_t)k), *ar = malloc(sizeof(aff) * (size_t)k);
    CHECK(s && r && as && ar, "malloc");
    MPI_Request rq;
    for (int ex = 0; ex < 2; ex++) {
        for (int i = 0; i < k; i++) s[i] = r[i] = val(me, i, salt + ex);
        if (ex)
            CHECK_RC(MPI_Iexscan(inplace ? MPI_IN_PLACE : s, r, k, MPI_INT, MPI_SUM, c, &rq));
        else
            CHECK_RC(MPI_Iscan(inplace ? MPI_IN_PLACE : s, r, k, MPI_INT, MPI_SUM, c, &rq));
        complete(&rq, salt & 1);
        for (int i = 0; i < k && (!ex || me > 0); i++) {
            long want = 0;
            for (int q = 0; q < me + !ex; q++) want += val(q, i, salt + ex);
            CHECK(r[i] == (int)want, "%s k %d in place %d: [%d] = %d, want %ld",
                  ex ? "Iexscan" : "Iscan", k, inplace, i, r[i], want);
        }
    }
    MPI_Datatype at;
    CHECK_RC(MPI_Type_contiguous(2, MPI_UINT32_T, &at));
    CHECK_RC(MPI_Type_commit(&at));
    MPI_Op op;
    CHECK_RC(MPI_Op_create(aff_op, 0, &op));
    for (int i = 0; i < k; i++) as[i] = ar[i] = aff_val(me, i, salt);
    CHECK_RC(MPI_Iscan(inplace ? MPI_IN_PLACE : as, ar, k, at, op, c, &rq));
    complete(&rq, !(salt & 1));
    for (int i = 0; i < k; i++) {
        aff acc = aff_prefix(me + 1, i, salt);
        CHECK(ar[i].a == acc.a && ar[i].b == acc.b, "ordered Iscan k %d: [%d] differs", k, i);
    }
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&at));
    free(s), free(r), free(as), free(ar);
}

/* Blocks of rank `from` for rank `to` in the rooted and all-to-all calls with a count per rank:
 * small ones (inline in the writer's table) mixed with ones of k ints (as messages once the
 * room for inline blocks is used up). */
static int vcount(int from, int to, int k) {
    return (from + to) % 2 ? k : 1 + from + to;
}

/* Igatherv and Iscatterv at every root (in place there or not) and Ialltoallv, blocks of
 * vcount, in reverse rank order with a gap of one after each. */
static void varied_rooted(MPI_Comm c, int k, int salt, int inplace) {
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    int *rcnt = malloc(sizeof(int) * (size_t)np), *rdsp = malloc(sizeof(int) * (size_t)np);
    CHECK(cnt && dsp && rcnt && rdsp, "malloc");
    size_t most = 0;
    for (int q = 0; q < np; q++) most += (size_t)(2 * k + 2 * np + 2);
    int *s = malloc(sizeof(int) * most), *r = malloc(sizeof(int) * most);
    CHECK(s && r, "malloc");
    MPI_Request rq;
    for (int root = 0; root < np; root++, salt++) {
        int am = me == root, ip = inplace && am;
        size_t all = 0;
        for (int q = np - 1; q >= 0; q--) { /* the root's layout, block q from/for rank q */
            cnt[q] = vcount(q, root, k);
            dsp[q] = (int)all;
            all += (size_t)cnt[q] + 1;
        }
        /* Igatherv */
        int mine = vcount(me, root, k);
        for (int i = 0; i < mine; i++) s[i] = val(me, i, salt);
        for (size_t i = 0; i < all; i++) r[i] = -3;
        if (ip) memcpy(r + dsp[me], s, sizeof(int) * (size_t)mine);
        CHECK_RC(
            MPI_Igatherv(ip ? MPI_IN_PLACE : s, mine, MPI_INT, r, cnt, dsp, MPI_INT, root, c, &rq));
        complete(&rq, salt & 1);
        if (am)
            for (int q = 0; q < np; q++) {
                for (int i = 0; i < cnt[q]; i++)
                    CHECK(r[dsp[q] + i] == val(q, i, salt),
                          "Igatherv k %d root %d in place %d: block %d [%d] = %d", k, root, ip, q,
                          i, r[dsp[q] + i]);
                CHECK(r[dsp[q] + cnt[q]] == -3, "Igatherv k %d: gap after block %d written", k, q);
            }
        /* Iscatterv */
        for (int q = 0; q < np; q++)
            for (int i = 0; i < cnt[q] + 1; i++)
                s[dsp[q] + i] = i < cnt[q] ? val(root, i, salt + 7 * q) : -4;
        for (size_t i = 0; i < all; i++) r[i] = -3;
        if (ip) memcpy(r, s, sizeof(int) * all);
        CHECK_RC(MPI_Iscatterv(s, cnt, dsp, MPI_INT, ip ? MPI_IN_PLACE : r, mine, MPI_INT, root, c,
                               &rq));
        complete(&rq, !(salt & 1));
        for (int i = 0; i < mine; i++) {
            int got = ip ? r[dsp[me] + i] : r[i];
            CHECK(got == val(root, i, salt + 7 * me),
                  "Iscatterv k %d root %d in place %d: [%d] = %d", k, root, ip, i, got);
        }
        if (!ip) CHECK(r[mine] == -3, "Iscatterv k %d root %d: past my block written", k, root);
    }
    /* Ialltoallv: I send vcount(me, q) to q, receive vcount(q, me) from q */
    size_t sall = 0, rall = 0;
    for (int q = np - 1; q >= 0; q--) {
        cnt[q] = vcount(me, q, k), dsp[q] = (int)sall, sall += (size_t)cnt[q] + 1;
        rcnt[q] = vcount(q, me, k), rdsp[q] = (int)rall, rall += (size_t)rcnt[q] + 1;
    }
    for (int q = 0; q < np; q++)
        for (int i = 0; i < cnt[q]; i++) s[dsp[q] + i] = val(me, i, salt + 7 * q);
    for (size_t i = 0; i < rall; i++) r[i] = -3;
    CHECK_RC(MPI_Ialltoallv(s, cnt, dsp, MPI_INT, r, rcnt, rdsp, MPI_INT, c, &rq));
    complete(&rq, salt & 2);
    for (int q = 0; q < np; q++) {
        for (int i = 0; i < rcnt[q]; i++)
            CHECK(r[rdsp[q] + i] == val(q, i, salt + 7 * me), "Ialltoallv k %d: block %d [%d] = %d",
                  k, q, i, r[rdsp[q] + i]);
        CHECK(r[rdsp[q] + rcnt[q]] == -3, "Ialltoallv k %d: gap after block %d written", k, q);
    }
    free(s), free(r), free(cnt), free(dsp), free(rcnt), free(rdsp);
}

/* Igatherv and Ialltoallv whose send type is strided (every other int of a vector: packed into
 * the table or sent as a message) and whose receive side is plain ints, k per block. */
static void strided_v(MPI_Comm c, int k, int salt) {
    MPI_Datatype every2;
    CHECK_RC(MPI_Type_vector(k, 1, 2, MPI_INT, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    MPI_Aint lb, ext;
    CHECK_RC(MPI_Type_get_extent(every2, &lb, &ext));
    MPI_Datatype st; /* blocks of 2k ints apart, for Ialltoallv's send displacements */
    CHECK_RC(MPI_Type_create_resized(every2, 0, 2 * (MPI_Aint)k * (MPI_Aint)sizeof(int), &st));
    CHECK_RC(MPI_Type_commit(&st));
    int *v = malloc(sizeof(int) * 2 * (size_t)k * (size_t)np),
        *r = malloc(sizeof(int) * (size_t)k * (size_t)np);
    int *one = malloc(sizeof(int) * (size_t)np), *cnt = malloc(sizeof(int) * (size_t)np),
        *dsp = malloc(sizeof(int) * (size_t)np), *sdsp = malloc(sizeof(int) * (size_t)np);
    CHECK(v && r && one && cnt && dsp && sdsp, "malloc");
    for (int q = 0; q < np; q++) one[q] = 1, sdsp[q] = q, cnt[q] = k, dsp[q] = k * q;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < 2 * k; i++)
            v[q * 2 * k + i] = i % 2 ? -7 : val(me, i / 2, salt + 7 * q);
    MPI_Request rq;
    int root = salt % np;
    for (int i = 0; i < k * np; i++) r[i] = -1;
    CHECK_RC(MPI_Igatherv(v, 1, every2, r, cnt, dsp, MPI_INT, root, c, &rq));
    complete(&rq, salt & 1);
    if (me == root)
        for (int q = 0; q < np; q++)
            for (int i = 0; i < k; i++)
                CHECK(r[q * k + i] == val(q, i, salt), "strided Igatherv k %d: block %d [%d] = %d",
                      k, q, i, r[q * k + i]);
    for (int i = 0; i < k * np; i++) r[i] = -1;
    CHECK_RC(MPI_Ialltoallv(v, one, sdsp, st, r, cnt, dsp, MPI_INT, c, &rq));
    complete(&rq, !(salt & 1));
    for (int q = 0; q < np; q++)
        for (int i = 0; i < k; i++)
            CHECK(r[q * k + i] == val(q, i, salt + 7 * me),
                  "strided Ialltoallv k %d: block %d [%d] = %d", k, q, i, r[q * k + i]);
    CHECK_RC(MPI_Type_free(&st));
    CHECK_RC(MPI_Type_free(&every2));
    free(v), free(r), free(one), free(cnt), free(dsp), free(sdsp);
}

static void errors(MPI_Comm c) {
    int s[100] = {0}, r[16 * 64];
    MPI_Request rq;
    /* rank 0 reduces 10 ints, the others 11 */
    int k = me == 0 ? 10 : 11, rc, cls;
    CHECK_RC(MPI_Iallreduce(s, r, k, MPI_INT, MPI_SUM, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == (me == 0 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT), "Iallreduce of %d ints: class %d", k,
          cls);
    /* rank 0 gathers blocks of 3 ints, the others of 2 */
    k = me == 0 ? 3 : 2;
    CHECK_RC(MPI_Iallgather(s, k, MPI_INT, r, k, MPI_INT, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == (me == 0 ? MPI_ERR_COUNT : MPI_ERR_TRUNCATE), "Iallgather of %d ints: class %d", k,
          cls);
    CHECK_RC(MPI_Ialltoall(s, k, MPI_INT, r, k, MPI_INT, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == (me == 0 ? MPI_ERR_COUNT : MPI_ERR_TRUNCATE), "Ialltoall of %d ints: class %d", k,
          cls);
    /* rank 0 calls Iallreduce where the others call Iallgather */
    if (me == 0)
        CHECK_RC(MPI_Iallreduce(s, r, 1, MPI_INT, MPI_SUM, c, &rq));
    else
        CHECK_RC(MPI_Iallgather(s, 1, MPI_INT, r, 1, MPI_INT, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "Iallreduce against Iallgather: class %d", cls);
    /* rank 1 sends 3 ints to a root that expects 2 from everyone */
    CHECK_RC(MPI_Igather(s, me == 1 ? 3 : 2, MPI_INT, r, 2, MPI_INT, 0, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(me == 0 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS, "Igather of 3 ints: class %d",
          cls);
    /* rank 1 sends 2 ints where everyone's counts say 3 (a larger block is refused at the call) */
    int cnt[64], dsp[64];
    for (int q = 0; q < np; q++) cnt[q] = 3, dsp[q] = 3 * q;
    CHECK_RC(MPI_Iallgatherv(s, me == 1 ? 2 : 3, MPI_INT, r, cnt, dsp, MPI_INT, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(me == 1 ? rc == MPI_SUCCESS : cls == MPI_ERR_COUNT,
          "Iallgatherv with rank 1 sending 2 ints: class %d", cls);
    /* Ialltoallv: rank 1 sends rank 0 one int less than rank 0 expects (inline) */
    for (int q = 0; q < np; q++) cnt[q] = 3, dsp[q] = 3 * q;
    int scnt[64];
    for (int q = 0; q < np; q++) scnt[q] = me == 1 && q == 0 ? 2 : 3;
    CHECK_RC(MPI_Ialltoallv(s, scnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(me == 0 ? cls == MPI_ERR_COUNT : rc == MPI_SUCCESS,
          "Ialltoallv with a block of 2 ints for 3: class %d", cls);
    /* Igatherv: rank 1 sends 90 ints (a message) where the root expects 2 (inline) */
    for (int q = 0; q < np; q++) cnt[q] = 2, dsp[q] = 2 * q;
    CHECK_RC(MPI_Igatherv(s, me == 1 ? 90 : 2, MPI_INT, r, cnt, dsp, MPI_INT, 0, c, &rq));
    rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(me == 0 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS,
          "Igatherv with a block of 90 ints for 2: class %d", cls);
    /* the communicator still works */
    round_trip(c, 5, 99, 0, 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &np);
    CHECK_RC(MPI_Barrier(c)); /* sets up the segment: from here on the small calls take it */
    /* 1024 ints: the limit between two ranks; 16384: 64 KiB, what a buffer holds */
    static const int ks[] = {1, 7, 300, 1024, 1025, 2000, 5000, 16384, 16400};
    int salt = 0;
    for (int rep = 0; rep < 4; rep++)
        for (size_t j = 0; j < sizeof ks / sizeof *ks; j++)
            for (int mode = 0; mode < 4; mode++)
                for (int ip = 0; ip < 2; ip++) round_trip(c, ks[j], salt++, mode, ip);
    for (size_t j = 0; j < 4; j++) ordered_and_strided(c, ks[j], salt++);
    for (int rep = 0; rep < 2; rep++)
        for (size_t j = 0; j < sizeof ks / sizeof *ks; j++)
            for (int ip = 0; ip < 2; ip++, salt += np) rooted(c, ks[j], salt, ip);
    for (int rep = 0; rep < 2; rep++)
        for (size_t j = 0; j < sizeof ks / sizeof *ks; j++)
            for (int ip = 0; ip < 2; ip++, salt += np) {
                varied(c, ks[j], salt, ip);
                scans(c, ks[j], salt, ip);
                varied_rooted(c, ks[j], salt, ip);
            }
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) strided_v(c, ks[j], salt++);
    if (np > 1) errors(c);
    CHECK_RC(MPI_Comm_free(&c));
    /* the halves of a split with reversed key order: ranks of the segment other than the world's */
    int wme = me, wnp = np;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wme % 2, -wme, &c));
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &np);
    CHECK_RC(MPI_Barrier(c));
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j += 2)
        for (int ip = 0; ip < 2; ip++, salt += np) {
            round_trip(c, ks[j], salt, ip, ip);
            rooted(c, ks[j], salt, ip);
            varied(c, ks[j], salt, ip);
            scans(c, ks[j], salt, ip);
            varied_rooted(c, ks[j], salt, ip);
        }
    CHECK_RC(MPI_Comm_free(&c));
    me = wme, np = wnp;
    MPI_Finalize();
    return 0;
}
