/* Collectives whose buffers hold more than 2^31 - 1 elements, though every count fits an int.
 * Reduce_scatter and Reduce_scatter_block: each rank sends a vector of
 * 2^31 + 64 bytes (MPI_UINT8_T, MPI_SUM) and gets a block of the result: with
 * Reduce_scatter_block, a block of TOTAL / n; with Reduce_scatter, unequal ones.
 * The arguments name the cases to run, in order:
 *   block    MPI_Reduce_scatter_block
 *   v        MPI_Reduce_scatter, blocks of unequal size
 *   inplace  MPI_Reduce_scatter with MPI_IN_PLACE (the vector lies in the receive buffer)
 *   nb       MPI_Ireduce_scatter, blocks of unequal size
 *   inter    on an intercommunicator the same counts are refused with MPI_ERR_COUNT
 * and the collectives of equal blocks, 3 ranks or more, with blocks of (2^31 + 64) / (n - 1)
 * bytes, so that the last starts past element 2^31 - 1 of the whole buffer:
 *   allgather, iallgather   in place
 *   gather, igather         rank 0 the root, in place there
 *   scatter, iscatter       rank 0 the root, in place there
 *   alltoall, ialltoall     not in place: 7 GiB per rank
 * tests/coll.cmake runs them with algorithms forced too. The job needs about 5 GiB per rank
 * (7 with Alltoall); with less memory available it is skipped (exit status 77). */
#include "testutil.h"

#include <stdint.h>

#define TOTAL (((size_t)1 << 31) + 64)
#define GUARD 64

/* byte i of rank r's vector, and the sum of that byte over n ranks */
static uint8_t operand(size_t i, int r) {
    return (uint8_t)(i * 7 + (size_t)r * 13 + 1);
}

static uint8_t expected(size_t i, int n) {
    return (uint8_t)((size_t)n * (i * 7 + 1) + 13 * (size_t)(n * (n - 1) / 2));
}

/* A block of operand(j, key): a rank's vector (key: the rank), or a block of the equal-block
 * cases (the key names sender and receiver). */
static void fill_block(uint8_t *p, size_t len, int key) {
    for (size_t j = 0; j < len; j++) p[j] = operand(j, key);
}

static void check_block(const char *what, const uint8_t *p, size_t len, int key) {
    for (size_t j = 0; j < len; j++)
        if (p[j] != operand(j, key))
            CHECK(0, "%s: element %zu of block %d is %d, expected %d", what, j, key, p[j],
                  operand(j, key));
}

static void check_guard(const char *what, const uint8_t *p) {
    for (size_t j = 0; j < GUARD; j++)
        CHECK(p[j] == 0xa5, "%s: byte %zu past the buffer was overwritten", what, j);
}

/* The result block starting at element `from` of the vector, and the guard bytes after the
 * receive buffer (which ends `end` bytes after out). */
static void verify(const char *what, const uint8_t *out, size_t from, size_t len, size_t end,
                   int n) {
    for (size_t j = 0; j < len; j++)
        if (out[j] != expected(from + j, n))
            CHECK(0, "%s: element %zu of the block (vector element %zu) is %d, expected %d", what,
                  j, from + j, out[j], expected(from + j, n));
    check_guard(what, out + end);
}

/* One collective of equal blocks (the cases listed above). */
static void uniform_case(const char *c, int me, int n) {
    CHECK(n >= 3, "%s needs 3 ranks or more", c);
    size_t b = TOTAL / (size_t)(n - 1), all = b * (size_t)n;
    int nb = c[0] == 'i', root = 0, cnt = (int)b;
    const char *what = c + nb;
    MPI_Request r = MPI_REQUEST_NULL;
    int a2a = strcmp(what, "alltoall") == 0;
    int whole = a2a || strcmp(what, "allgather") == 0 || me == root;
    uint8_t *buf = tu_big_malloc((whole ? all : b) + GUARD),
            *sbuf = a2a ? tu_big_malloc(all) : NULL;
    CHECK(buf && (!a2a || sbuf), "%s: out of memory", c);
    memset(buf + (whole ? all : b), 0xa5, GUARD);
    if (a2a) { /* block q of rank r: key r * n + q */
        for (int q = 0; q < n; q++) fill_block(sbuf + b * (size_t)q, b, me * n + q);
        memset(buf, 0, all);
        CHECK_RC(
            nb ? MPI_Ialltoall(sbuf, cnt, MPI_UINT8_T, buf, cnt, MPI_UINT8_T, MPI_COMM_WORLD, &r)
               : MPI_Alltoall(sbuf, cnt, MPI_UINT8_T, buf, cnt, MPI_UINT8_T, MPI_COMM_WORLD));
    } else if (strcmp(what, "allgather") == 0) {
        fill_block(buf + b * (size_t)me, b, me);
        CHECK_RC(nb ? MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, cnt, MPI_UINT8_T,
                                     MPI_COMM_WORLD, &r)
                    : MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, cnt, MPI_UINT8_T,
                                    MPI_COMM_WORLD));
    } else if (strcmp(what, "gather") == 0) {
        fill_block(me == root ? buf + b * (size_t)me : buf, b, me);
        const void *sb = me == root ? MPI_IN_PLACE : buf;
        CHECK_RC(
            nb ? MPI_Igather(sb, cnt, MPI_UINT8_T, buf, cnt, MPI_UINT8_T, root, MPI_COMM_WORLD, &r)
               : MPI_Gather(sb, cnt, MPI_UINT8_T, buf, cnt, MPI_UINT8_T, root, MPI_COMM_WORLD));
    } else if (strcmp(what, "scatter") == 0) {
        if (me == root)
            for (int q = 0; q < n; q++) fill_block(buf + b * (size_t)q, b, q);
        else
            memset(buf, 0, b);
        void *rb = me == root ? MPI_IN_PLACE : buf;
        CHECK_RC(
            nb ? MPI_Iscatter(buf, cnt, MPI_UINT8_T, rb, cnt, MPI_UINT8_T, root, MPI_COMM_WORLD, &r)
               : MPI_Scatter(buf, cnt, MPI_UINT8_T, rb, cnt, MPI_UINT8_T, root, MPI_COMM_WORLD));
    } else {
        CHECK(0, "unknown case %s", c);
    }
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (whole)
        for (int q = 0; q < n; q++) check_block(c, buf + b * (size_t)q, b, a2a ? q * n + me : q);
    else
        check_block(c, buf, b, me);
    check_guard(c, buf + (whole ? all : b));
    free(buf);
    free(sbuf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int big = 0, rs = 0, a2a = 0; /* cases with large buffers; Reduce_scatter; Alltoall */
    for (int a = 1; a < argc; a++) {
        big |= strcmp(argv[a], "inter") != 0;
        a2a |= strstr(argv[a], "alltoall") != NULL;
        rs |= strcmp(argv[a], "inter") && !strstr(argv[a], "gather") &&
              !strstr(argv[a], "scatter") && !strstr(argv[a], "alltoall");
    }
    /* a vector, a receive buffer as large (in place), and the algorithms' scratch */
    if (big) tu_need_memory((long long)n * (a2a ? 7 : 5) << 20);

    int *counts = malloc(sizeof(int) * (size_t)n);
    size_t *displs = malloc(sizeof(size_t) * (size_t)n);
    uint8_t *vec = rs ? tu_big_malloc(TOTAL) : NULL,
            *out = rs ? tu_big_malloc(TOTAL + GUARD) : NULL;
    CHECK(counts && displs && (!rs || (vec && out)), "out of memory");
    /* unequal blocks; from 3 ranks on the last is short, so that it starts past element
     * 2^31 - 1 (an int displacement would overflow) */
    if (n == 2) {
        counts[0] = (int)(TOTAL / 2 - 8);
        counts[1] = (int)(TOTAL / 2 + 8);
    } else {
        for (int i = 0; i < n - 1; i++) counts[i] = (int)((TOTAL - 32) / (size_t)(n - 1));
        counts[0] += (int)((TOTAL - 32) % (size_t)(n - 1));
        counts[n - 1] = 32;
    }
    for (int i = 0; i < n; i++) displs[i] = i ? displs[i - 1] + (size_t)counts[i - 1] : 0;
    int block = (int)(TOTAL / (size_t)n);
    CHECK((size_t)block * (size_t)n > 0x7fffffff, "the blocks add up to %zu elements only",
          (size_t)block * (size_t)n);

    for (int a = 1; a < argc; a++) {
        const char *c = argv[a];
        size_t len = strcmp(c, "block") == 0 ? (size_t)block : (size_t)counts[me];
        size_t from = strcmp(c, "block") == 0 ? (size_t)block * (size_t)me : displs[me];
        if (strstr(c, "gather") || strstr(c, "scatter") || strstr(c, "alltoall")) {
            uniform_case(c, me, n);
            continue;
        }
        if (strcmp(c, "inter") == 0) {
            MPI_Comm half, inter;
            CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
            CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 7, &inter));
            MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
            int lsize;
            MPI_Comm_size(half, &lsize);
            int *maxed = malloc(sizeof(int) * (size_t)lsize);
            CHECK(maxed, "out of memory");
            for (int i = 0; i < lsize; i++) maxed[i] = 0x7fffffff;
            uint8_t small[4], small2[4];
            CHECK(lsize > 1, "inter: each group needs 2 ranks (run with 4)");
            /* refused before any buffer is touched */
            char msg[MPI_MAX_ERROR_STRING];
            int rc = MPI_Reduce_scatter(small, small2, maxed, MPI_UINT8_T, MPI_SUM, inter);
            CHECK(tu_error(rc, msg) == MPI_ERR_COUNT, "inter: rc %d (%s)", rc, msg);
            CHECK(strstr(msg, "intercommunicator"), "inter: message \"%s\"", msg);
            CHECK_ERR(
                MPI_Reduce_scatter_block(small, small2, 0x7fffffff, MPI_UINT8_T, MPI_SUM, inter),
                MPI_ERR_COUNT);
            free(maxed);
            MPI_Comm_free(&inter);
            MPI_Comm_free(&half);
            continue;
        }
        memset(out, 0xa5, TOTAL + GUARD);
        if (strcmp(c, "inplace") == 0) { /* (the guard follows the whole vector) */
            fill_block(out, TOTAL, me);
            CHECK_RC(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_UINT8_T, MPI_SUM,
                                        MPI_COMM_WORLD));
            /* the result is at the start; the rest of the vector is undefined, but the
             * guard after it is the program's */
            verify(c, out, from, len, TOTAL, n);
            continue;
        }
        fill_block(vec, TOTAL, me);
        if (strcmp(c, "block") == 0) {
            CHECK_RC(
                MPI_Reduce_scatter_block(vec, out, block, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD));
        } else if (strcmp(c, "v") == 0) {
            CHECK_RC(MPI_Reduce_scatter(vec, out, counts, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD));
        } else if (strcmp(c, "nb") == 0) {
            MPI_Request r;
            CHECK_RC(
                MPI_Ireduce_scatter(vec, out, counts, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            CHECK(0, "unknown case %s", c);
        }
        verify(c, out, from, len, len, n);
        check_block(c, vec, TOTAL, me); /* the send buffer is unchanged */
    }
    free(vec), free(out), free(counts), free(displs);
    MPI_Finalize();
    return 0;
}
