/* Data movement: Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v) with contiguous
 * types, a non-contiguous predefined type (MPI_DOUBLE_INT: padding between elements), a
 * strided derived type when available, and different types of one signature on the two
 * sides (MPI_INT x 2k sent, MPI_2INT x k received); counts 0, 1, 7 and more than 64 KiB;
 * every root; in place and not; v-variants with uneven counts and holes between blocks.
 * Every received element names its source, destination and index, and nothing outside the
 * received elements may change. */
#include "coll_util.h"

enum kind { K_CHAR, K_INT, K_DINT, K_VEC, K_MIXED, NKINDS };
typedef struct {
    double v;
    int i;
} dint;

static MPI_Datatype vec_type = MPI_DATATYPE_NULL;
#define GAP 0xa5

static int me, np;
static MPI_Comm comm;
static char *sbuf, *rbuf, *want;
static size_t cap;

/* Sending and receiving type and element size per kind (they differ for K_MIXED: a send
 * element is one int, a receive element two). */
static MPI_Datatype stype(int k) {
    static const MPI_Datatype t[] = {MPI_CHAR, MPI_INT, MPI_DOUBLE_INT, 0, MPI_INT};
    return k == K_VEC ? vec_type : t[k];
}
static MPI_Datatype rtype(int k) {
    return k == K_MIXED ? MPI_2INT : stype(k);
}
static size_t sext(int k) {
    static const size_t e[] = {1, sizeof(int), sizeof(dint), 8 * sizeof(double), sizeof(int)};
    return e[k];
}
static size_t rext(int k) {
    return k == K_MIXED ? 2 * sizeof(int) : sext(k);
}
/* send elements per receive element */
static size_t ratio(int k) {
    return k == K_MIXED ? 2 : 1;
}

static int value(int src, int dst, size_t i) {
    return (int)((src * 131 + dst * 17 + (int)(i % 4093) * 7 + 3) % 251);
}

/* Writes the data of element i (in receive-element units for the layout of `k` as a
 * receiver when recv_side) with value base v; leaves padding and gaps alone. */
static void put(int k, char *e, int v, int recv_side) {
    switch (k) {
    case K_CHAR: *e = (char)v; break;
    case K_INT: *(int *)e = v; break;
    case K_DINT:
        ((dint *)e)->v = v + 0.5;
        ((dint *)e)->i = -v;
        break;
    case K_VEC: {
        static const int d[6] = {0, 1, 3, 4, 6, 7};
        for (int j = 0; j < 6; j++) ((double *)e)[d[j]] = v * 8 + j;
        break;
    }
    case K_MIXED:
        if (recv_side) {
            ((int *)e)[0] = v;
            ((int *)e)[1] = v + 1000;
        } else {
            *(int *)e = v; /* callers write the two halves separately */
        }
        break;
    }
}

/* Fills `count` receive-sized elements' worth of send data for (src -> dst) at buf. */
static void fill_send(int k, char *buf, size_t count, int src, int dst) {
    for (size_t i = 0; i < count; i++) {
        int v = value(src, dst, i);
        if (k == K_MIXED) {
            ((int *)buf)[2 * i] = v;
            ((int *)buf)[2 * i + 1] = v + 1000;
        } else {
            put(k, buf + i * sext(k), v, 0);
        }
    }
}

static void fill_want(int k, char *buf, size_t count, int src, int dst) {
    for (size_t i = 0; i < count; i++) put(k, buf + i * rext(k), value(src, dst, i), 1);
}

static void check_all(const char *what, int k, size_t count) {
    if (memcmp(rbuf, want, cap) == 0) return;
    for (size_t b = 0; b < cap; b++)
        CHECK(rbuf[b] == want[b], "%s kind %d count %zu np %d: byte %zu is %d, want %d", what, k,
              count, np, b, (unsigned char)rbuf[b], (unsigned char)want[b]);
}

/* Every root for the smallest counts; the ends (and the middle) otherwise, to keep the
 * test quick at 8 ranks on 2 cores. */
static int skip_root(int root, size_t count) {
    if (count <= 1) return 0;
    if (count > 100) return root != 0 && root != np - 1;
    return root != 0 && root != np - 1 && root != np / 2;
}

static void reset(void) {
    memset(sbuf, GAP, cap);
    memset(rbuf, GAP, cap);
    memset(want, GAP, cap);
}

static void t_bcast(int k, size_t count) {
    for (int root = 0; root < np; root++) {
        if (skip_root(root, count)) continue;
        reset();
        char *buf = me == root ? sbuf : rbuf;
        if (me == root) fill_send(k, sbuf, count, root, 0);
        int c = (int)(count * (me == root ? ratio(k) : 1));
        CHECK_RC(MPI_Bcast(buf, c, me == root ? stype(k) : rtype(k), root, comm));
        if (me != root) {
            fill_want(k, want, count, root, 0);
            check_all("Bcast", k, count);
        }
    }
}

static void t_gather(int k, size_t count, int inplace) {
    size_t blk = count * rext(k);
    for (int root = 0; root < np; root++) {
        if (skip_root(root, count)) continue;
        reset();
        fill_send(k, sbuf, count, me, root);
        int ip = inplace && me == root;
        if (me == root) {
            for (int q = 0; q < np; q++) fill_want(k, want + (size_t)q * blk, count, q, root);
            if (ip) fill_want(k, rbuf + (size_t)me * blk, count, me, root);
        }
        CHECK_RC(MPI_Gather(ip ? MPI_IN_PLACE : sbuf, (int)(count * ratio(k)), stype(k), rbuf,
                            (int)count, rtype(k), root, comm));
        if (me == root) check_all(ip ? "Gather in place" : "Gather", k, count);
    }
}

static void t_scatter(int k, size_t count, int inplace) {
    size_t sblk = count * ratio(k) * sext(k);
    for (int root = 0; root < np; root++) {
        if (skip_root(root, count)) continue;
        reset();
        int ip = inplace && me == root;
        if (me == root)
            for (int q = 0; q < np; q++) fill_send(k, sbuf + (size_t)q * sblk, count, root, q);
        if (!ip) fill_want(k, want, count, root, me);
        CHECK_RC(MPI_Scatter(sbuf, (int)(count * ratio(k)), stype(k), ip ? MPI_IN_PLACE : rbuf,
                             (int)count, rtype(k), root, comm));
        check_all(ip ? "Scatter in place" : "Scatter", k, count);
    }
}

static void t_allgather(int k, size_t count, int inplace) {
    size_t blk = count * rext(k);
    reset();
    fill_send(k, sbuf, count, me, -1);
    for (int q = 0; q < np; q++) fill_want(k, want + (size_t)q * blk, count, q, -1);
    if (inplace) fill_want(k, rbuf + (size_t)me * blk, count, me, -1);
    CHECK_RC(MPI_Allgather(inplace ? MPI_IN_PLACE : sbuf, (int)(count * ratio(k)), stype(k), rbuf,
                           (int)count, rtype(k), comm));
    check_all(inplace ? "Allgather in place" : "Allgather", k, count);
}

static void t_alltoall(int k, size_t count, int inplace) {
    size_t sblk = count * ratio(k) * sext(k), blk = count * rext(k);
    if (inplace && k == K_MIXED) return; /* in place there is only the receive type */
    reset();
    for (int q = 0; q < np; q++) {
        fill_send(k, sbuf + (size_t)q * sblk, count, me, q);
        fill_want(k, want + (size_t)q * blk, count, q, me);
        if (inplace) fill_want(k, rbuf + (size_t)q * blk, count, me, q);
    }
    CHECK_RC(MPI_Alltoall(inplace ? MPI_IN_PLACE : sbuf, (int)(count * ratio(k)), stype(k), rbuf,
                          (int)count, rtype(k), comm));
    check_all(inplace ? "Alltoall in place" : "Alltoall", k, count);
}

/* v-variants: rank q's block has count + q % 3 receive elements and starts one element
 * after the previous block ends (a hole that must stay untouched). */
static void vlayout(size_t count, int *cnt, int *dsp, int per_elem_ratio) {
    int off = 0;
    for (int q = 0; q < np; q++) {
        cnt[q] = (int)(count + (size_t)(q % 3)) * per_elem_ratio;
        dsp[q] = off;
        off += cnt[q] + per_elem_ratio;
    }
}

static void t_gatherv(int k, size_t count, int inplace) {
    int cnt[64], dsp[64];
    vlayout(count, cnt, dsp, 1);
    for (int root = 0; root < np; root++) {
        if (skip_root(root, count)) continue;
        reset();
        size_t mine = (size_t)cnt[me];
        fill_send(k, sbuf, mine, me, root);
        int ip = inplace && me == root;
        if (me == root) {
            for (int q = 0; q < np; q++)
                fill_want(k, want + (size_t)dsp[q] * rext(k), (size_t)cnt[q], q, root);
            if (ip) fill_want(k, rbuf + (size_t)dsp[me] * rext(k), mine, me, root);
        }
        CHECK_RC(MPI_Gatherv(ip ? MPI_IN_PLACE : sbuf, (int)(mine * ratio(k)), stype(k), rbuf, cnt,
                             dsp, rtype(k), root, comm));
        if (me == root) check_all("Gatherv", k, count);
    }
}

static void t_scatterv(int k, size_t count, int inplace) {
    int cnt[64], dsp[64];
    vlayout(count, cnt, dsp, (int)ratio(k));
    for (int root = 0; root < np; root++) {
        if (skip_root(root, count)) continue;
        reset();
        int ip = inplace && me == root;
        if (me == root)
            for (int q = 0; q < np; q++)
                fill_send(k, sbuf + (size_t)dsp[q] * sext(k), (size_t)cnt[q] / ratio(k), root, q);
        size_t mine = (size_t)cnt[me] / ratio(k);
        if (!ip) fill_want(k, want, mine, root, me);
        CHECK_RC(MPI_Scatterv(sbuf, cnt, dsp, stype(k), ip ? MPI_IN_PLACE : rbuf, (int)mine,
                              rtype(k), root, comm));
        check_all("Scatterv", k, count);
    }
}

static void t_allgatherv(int k, size_t count, int inplace) {
    int cnt[64], dsp[64];
    vlayout(count, cnt, dsp, 1);
    reset();
    size_t mine = (size_t)cnt[me];
    fill_send(k, sbuf, mine, me, -1);
    for (int q = 0; q < np; q++)
        fill_want(k, want + (size_t)dsp[q] * rext(k), (size_t)cnt[q], q, -1);
    if (inplace) fill_want(k, rbuf + (size_t)dsp[me] * rext(k), mine, me, -1);
    CHECK_RC(MPI_Allgatherv(inplace ? MPI_IN_PLACE : sbuf, (int)(mine * ratio(k)), stype(k), rbuf,
                            cnt, dsp, rtype(k), comm));
    check_all("Allgatherv", k, count);
}

static void t_alltoallv(int k, size_t count, int inplace) {
    if (inplace && k == K_MIXED) return;
    /* block for rank q: count + (me + q) % 3 elements, so sizes differ per pair */
    int sc[64], sd[64], rc[64], rd[64], so = 0, ro = 0;
    for (int q = 0; q < np; q++) {
        sc[q] = (int)(count + (size_t)((me + q) % 3)) * (int)ratio(k);
        sd[q] = so;
        so += sc[q] + 2 * (int)ratio(k);
        rc[q] = (int)(count + (size_t)((q + me) % 3));
        rd[q] = ro;
        ro += rc[q] + 1;
    }
    reset();
    for (int q = 0; q < np; q++) {
        fill_send(k, sbuf + (size_t)sd[q] * sext(k), (size_t)sc[q] / ratio(k), me, q);
        fill_want(k, want + (size_t)rd[q] * rext(k), (size_t)rc[q], q, me);
        if (inplace) fill_want(k, rbuf + (size_t)rd[q] * rext(k), (size_t)rc[q], me, q);
    }
    CHECK_RC(MPI_Alltoallv(inplace ? MPI_IN_PLACE : sbuf, sc, sd, stype(k), rbuf, rc, rd, rtype(k),
                           comm));
    check_all(inplace ? "Alltoallv in place" : "Alltoallv", k, count);
}

/* Buffers holding whole 2 MiB pages, which their owner makes huge pages before its peers
 * copy from or into them (COHORT_CMA_HUGEPAGES): a broadcast from the last rank, a gather to
 * it and an allgather, in bytes, checked whole. Buffers of their own: the others are small.
 * Run alone with COLL_MOVE=huge (tests/coll.cmake). */
static void t_huge(void) {
    const size_t bc = (5u << 20) + 3, gc = (2u << 20) + (3u << 19) + 5;
    char *b = malloc(bc), *s = malloc(gc), *r = malloc(gc * (size_t)np);
    CHECK(b && s && r, "malloc");
    int root = np - 1;
    for (size_t i = 0; i < bc; i++) b[i] = me == root ? (char)value(root, 0, i) : (char)GAP;
    CHECK_RC(MPI_Bcast(b, (int)bc, MPI_CHAR, root, comm));
    for (size_t i = 0; i < bc; i++)
        CHECK(b[i] == (char)value(root, 0, i), "huge Bcast np %d: byte %zu", np, i);
    for (int op = 0; op < 2; op++) { /* gather, allgather */
        for (size_t i = 0; i < gc; i++) s[i] = (char)value(me, 0, i);
        memset(r, GAP, gc * (size_t)np);
        if (op)
            CHECK_RC(MPI_Allgather(s, (int)gc, MPI_CHAR, r, (int)gc, MPI_CHAR, comm));
        else
            CHECK_RC(MPI_Gather(s, (int)gc, MPI_CHAR, r, (int)gc, MPI_CHAR, root, comm));
        if (op || me == root)
            for (int q = 0; q < np; q++)
                for (size_t i = 0; i < gc; i++)
                    CHECK(r[(size_t)q * gc + i] == (char)value(q, 0, i),
                          "huge %s np %d: byte %zu of rank %d", op ? "Allgather" : "Gather", np, i,
                          q);
    }
    free(b);
    free(s);
    free(r);
}

/* Alltoallv with blocks of 512 KiB and more between some pairs (with more than two ranks
 * they go as point-to-point messages, the others through the shared buffers or by single
 * copy), in bytes: mode 0 contiguous; 1 received into every other byte (a resized MPI_CHAR);
 * 2 in place, with the sizes symmetric as in place needs. Every byte is checked, and the gaps
 * of mode 1 must stay untouched. Then rank 0 expects one byte less of a large block than
 * rank 1 sends: an error there (see below which), and the communicator still works. */
static size_t huge_block(int from, int to, int mode) {
    if ((from + to) % 2 == 0) return 100 + (size_t)(from + to);
    if (mode == 2) return (512u << 10) + 1000u * (size_t)(from + to);
    return (512u << 10) + 1000u * (size_t)from + (size_t)to;
}

static void t_huge_alltoallv(void) {
    int sc[64], sd[64], rc[64], rd[64];
    size_t total = 0;
    for (int q = 0; q < np; q++) total += huge_block(q, me, 2) + huge_block(me, q, 0) + 64;
    char *s = malloc(total), *r = malloc(2 * total);
    CHECK(s && r, "malloc");
    MPI_Datatype every2;
    CHECK_RC(MPI_Type_create_resized(MPI_CHAR, 0, 2, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    for (int mode = 0; mode < 3; mode++) {
        int so = 0, ro = 0;
        for (int q = 0; q < np; q++) {
            sc[q] = (int)huge_block(me, q, mode), sd[q] = so, so += sc[q] + 3;
            rc[q] = (int)huge_block(q, me, mode), rd[q] = ro, ro += rc[q] + 5;
        }
        size_t stride = mode == 1 ? 2 : 1;
        memset(r, GAP, 2 * total);
        for (int q = 0; q < np; q++)
            for (int i = 0; i < sc[q]; i++)
                if (mode == 2)
                    r[(size_t)rd[q] + (size_t)i] = (char)value(me, q, (size_t)i);
                else
                    s[(size_t)sd[q] + (size_t)i] = (char)value(me, q, (size_t)i);
        CHECK_RC(MPI_Alltoallv(mode == 2 ? MPI_IN_PLACE : s, sc, sd, MPI_CHAR, r, rc, rd,
                               mode == 1 ? every2 : MPI_CHAR, comm));
        for (int q = 0; q < np; q++)
            for (int i = 0; i < rc[q]; i++) {
                size_t at = ((size_t)rd[q] + (size_t)i) * stride;
                CHECK(r[at] == (char)value(q, me, (size_t)i),
                      "huge Alltoallv mode %d np %d: byte %d from rank %d", mode, np, i, q);
                if (stride == 2)
                    CHECK(r[at + 1] == (char)GAP, "huge Alltoallv np %d: gap after byte %d of %d",
                          np, i, q);
            }
    }
    if (np > 1) {
        int so = 0, ro = 0;
        for (int q = 0; q < np; q++) {
            sc[q] = q == 0 && me == 1 ? 600 << 10 : 1, sd[q] = so, so += sc[q];
            rc[q] = q == 1 && me == 0 ? (600 << 10) - 1 : 1, rd[q] = ro, ro += rc[q];
        }
        int err = MPI_Alltoallv(s, sc, sd, MPI_CHAR, r, rc, rd, MPI_CHAR, comm), cls = err;
        if (err) MPI_Error_class(err, &cls);
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (err) MPI_Error_string(err, msg, &len);
        /* (a rank whose receive came short or long sends nothing more in that call, p2p.c:
         * with point-to-point algorithms the others can get MPI_ERR_COUNT, and so can rank 0
         * from them before it sees its own MPI_ERR_TRUNCATE) */
        CHECK(me == 0 ? cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT
                      : cls == MPI_SUCCESS || cls == MPI_ERR_COUNT,
              "Alltoallv with a large block too long for rank 0: rank %d got class %d (%s)", me,
              cls, msg);
        int one = 1, sum = 0;
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == np, "Allreduce after the truncated Alltoallv: %d", sum);
    }
    MPI_Type_free(&every2);
    free(s);
    free(r);
}

/* full: WORLD; the other communicators get the small counts only */
static void run(MPI_Comm c, int full) {
    comm = c;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    for (int k = 0; k < NKINDS; k++) {
        /* the other communicators: one contiguous and one gapped layout */
        if (!full && k != K_INT && k != K_VEC) continue;
        size_t large = (66 * 1024) / rext(k) + 1, mid = (20 * 1024) / rext(k) + 1;
        size_t small = (3 * 1024) / rext(k) + 1;
        size_t counts[] = {1, 7, 0, small, large, mid, 16 * 1024, 64 * 1024};
        /* blocks of 3 KiB: inline, and placed elsewhere in the shared buffer from call to
         * call (co_cshm_spread); large and middling blocks (over 16 KiB: single copy, or inline in
         * a shared buffer beside blocks that go by single copy): contiguous, padded and derived
         * layouts; and for bytes, blocks of exactly 16 KiB, inline or not depending on what a
         * single copy costs (COHORT_CMA_COST), and of exactly 64 KiB, which two ranks inline
         * where it is costly (a shared buffer's whole room beside its entry), the v-variants'
         * next blocks (one byte more) not */
        int nc = !full ? 2 : k == K_CHAR ? 8 : k == K_DINT || k == K_VEC ? 6 : 4;
        /* a broadcast long enough to be read in pieces (the single-copy readers split it,
         * each starting elsewhere), with a ragged last piece */
        if (full && (k == K_CHAR || k == K_VEC)) t_bcast(k, (size_t)np * 66 * 1024 / rext(k) + 3);
        for (int j = 0; j < nc; j++) {
            size_t count = counts[j];
            t_bcast(k, count);
            for (int ip = 0; ip < 2; ip++) {
                t_gather(k, count, ip);
                t_scatter(k, count, ip);
                t_allgather(k, count, ip);
                t_alltoall(k, count, ip);
                t_gatherv(k, count, ip);
                t_scatterv(k, count, ip);
                t_allgatherv(k, count, ip);
                t_alltoallv(k, count, ip);
            }
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    vec_type = cu_vector_type();
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cap = (size_t)size * (70 * 1024 + 3 * 64) * 2 + 4096;
    sbuf = malloc(cap), rbuf = malloc(cap), want = malloc(cap);
    CHECK(sbuf && rbuf && want, "malloc");
    MPI_Comm comms[MAXCOMMS];
    int owned[MAXCOMMS];
    int nc = cu_comms(comms, owned);
    const char *only = getenv("COLL_MOVE");
    if (only && !strcmp(only, "huge")) {
        comm = MPI_COMM_WORLD;
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &np);
        t_huge();
        t_huge_alltoallv();
    } else {
        for (int i = 0; i < nc; i++) run(comms[i], i == 0);
    }
    cu_free_comms(comms, owned, nc);
    cu_type_free(&vec_type);
    free(sbuf), free(rbuf), free(want);
    MPI_Finalize();
    return 0;
}
