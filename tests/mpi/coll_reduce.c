/* Reductions: Reduce (every root), Allreduce, Reduce_scatter_block, Reduce_scatter, Scan and
 * Exscan, for every predefined operator on the types it is defined for, a commutative and a
 * non-commutative user operator, pair types (MAXLOC/MINLOC with ties), a strided derived
 * type when available, counts 0, 1, 7, about 10 KiB, more than 64 KiB and (up to 4 ranks) more
 * than 1 MiB per rank, in place and not, checked
 * element by element against a serial reference; bytes between elements of non-contiguous
 * types must survive untouched. Run with COHORT_*_ALGORITHM set to force algorithms. */
#include "coll_util.h"

#include <stdbool.h>

enum kind { K_INT, K_DOUBLE, K_BYTE, K_BOOL, K_DINT, K_2INT, K_VEC, NKINDS };
enum opid {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_MAXLOC,
    O_MINLOC,
    O_USUM,
    O_AFFINE
};
typedef struct {
    double v;
    int i;
} dint;
typedef struct {
    int v, i;
} iint;

static MPI_Datatype vec_type = MPI_DATATYPE_NULL;
static MPI_Op user_sum, user_affine;
#define GAP        0xa5
#define HUGE_BLOCK (1280u * 1024u) /* bytes per rank in run_huge */

static size_t ext_of(int k) {
    static const size_t e[] = {sizeof(int),  sizeof(double),    1, sizeof(bool), sizeof(dint),
                               sizeof(iint), 8 * sizeof(double)};
    return e[k];
}

static MPI_Datatype type_of(int k) {
    switch (k) {
    case K_INT: return MPI_INT;
    case K_DOUBLE: return MPI_DOUBLE;
    case K_BYTE: return MPI_BYTE;
    case K_BOOL: return MPI_C_BOOL;
    case K_DINT: return MPI_DOUBLE_INT;
    case K_2INT: return MPI_2INT;
    default: return vec_type;
    }
}

static MPI_Op mpi_op(int o) {
    static const MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MAX, MPI_MIN,  MPI_LAND,   MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    if (o == O_USUM) return user_sum;
    if (o == O_AFFINE) return user_affine;
    return ops[o];
}

static const int vec_data[6] = {0, 1, 3, 4, 6, 7}; /* the doubles of a vector element */

static void fill(int k, void *buf, size_t count, int r, int salt) {
    for (size_t i = 0; i < count; i++) {
        int v = cu_val(r, i, salt);
        char *e = (char *)buf + i * ext_of(k);
        switch (k) {
        case K_INT: *(int *)e = v; break;
        case K_DOUBLE: *(double *)e = v * 0.5; break;
        case K_BYTE: *(unsigned char *)e = (unsigned char)(v * 37 + r * 5 + (int)i); break;
        case K_BOOL: *(bool *)e = (v & 1) != 0; break;
        case K_DINT:
            ((dint *)e)->v = v;
            ((dint *)e)->i = (r * 3 + (int)i) % 5; /* repeated indices: ties to break */
            break;
        case K_2INT:
            ((iint *)e)->v = v;
            ((iint *)e)->i = salt == 99 ? v + r : (r * 3 + (int)i) % 5;
            break;
        case K_VEC:
            for (int j = 0; j < 6; j++) ((double *)e)[vec_data[j]] = v + j * 0.25;
            break;
        }
    }
}

#define BIN(T, op, a, b)                                                                           \
    do {                                                                                           \
        T x_ = *(const T *)(a), y_ = *(T *)(b);                                                    \
        *(T *)(b) = (T)(op);                                                                       \
        (void)x_;                                                                                  \
        (void)y_;                                                                                  \
    } while (0)

/* b = a op b for one element (a is the lower rank's operand) */
static void combine(int k, int o, const void *a, void *b) {
    if (k == K_VEC) {
        for (int j = 0; j < 6; j++)
            combine(K_DOUBLE, o, (const double *)a + vec_data[j], (double *)b + vec_data[j]);
        return;
    }
    if (k == K_DINT || k == K_2INT) {
        double av = k == K_DINT ? ((const dint *)a)->v : ((const iint *)a)->v;
        double bv = k == K_DINT ? ((dint *)b)->v : ((iint *)b)->v;
        int ai = k == K_DINT ? ((const dint *)a)->i : ((const iint *)a)->i;
        int *bi = k == K_DINT ? &((dint *)b)->i : &((iint *)b)->i;
        if (o == O_AFFINE) { /* (a1,b1) o (a2,b2) = (a1*a2, a1*b2 + b1), wrapping */
            iint *y = b;
            const iint *x = a;
            uint32_t p = (uint32_t)x->v * (uint32_t)y->v;
            uint32_t q = (uint32_t)x->v * (uint32_t)y->i + (uint32_t)x->i;
            y->v = (int)p;
            y->i = (int)q;
            return;
        }
        int take = o == O_MAXLOC ? av > bv : av < bv;
        if (take) {
            if (k == K_DINT)
                ((dint *)b)->v = av;
            else
                ((iint *)b)->v = (int)av;
            *bi = ai;
        } else if (av == bv && ai < *bi) {
            *bi = ai;
        }
        return;
    }
    switch (k) {
    case K_INT:
        switch (o) {
        case O_SUM:
        case O_USUM: BIN(int, x_ + y_, a, b); break;
        case O_PROD: BIN(int, x_ *y_, a, b); break;
        case O_MAX: BIN(int, x_ > y_ ? x_ : y_, a, b); break;
        case O_MIN: BIN(int, x_ < y_ ? x_ : y_, a, b); break;
        case O_LAND: BIN(int, x_ &&y_, a, b); break;
        case O_LOR: BIN(int, x_ || y_, a, b); break;
        case O_LXOR: BIN(int, !x_ != !y_, a, b); break;
        case O_BAND: BIN(int, x_ &y_, a, b); break;
        case O_BOR: BIN(int, x_ | y_, a, b); break;
        case O_BXOR: BIN(int, x_ ^ y_, a, b); break;
        }
        break;
    case K_DOUBLE:
        switch (o) {
        case O_SUM: BIN(double, x_ + y_, a, b); break;
        case O_PROD: BIN(double, x_ *y_, a, b); break;
        case O_MAX: BIN(double, x_ > y_ ? x_ : y_, a, b); break;
        case O_MIN: BIN(double, x_ < y_ ? x_ : y_, a, b); break;
        }
        break;
    case K_BYTE:
        switch (o) {
        case O_BAND: BIN(unsigned char, x_ &y_, a, b); break;
        case O_BOR: BIN(unsigned char, x_ | y_, a, b); break;
        case O_BXOR: BIN(unsigned char, x_ ^ y_, a, b); break;
        }
        break;
    case K_BOOL:
        switch (o) {
        case O_LAND: BIN(bool, x_ &&y_, a, b); break;
        case O_LOR: BIN(bool, x_ || y_, a, b); break;
        case O_LXOR: BIN(bool, x_ != y_, a, b); break;
        }
        break;
    }
}

static void user_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
    if (*dt != MPI_INT) abort();
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void user_affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
    if (*dt != MPI_2INT) abort();
    for (int i = 0; i < *len; i++) combine(K_2INT, O_AFFINE, (iint *)in + i, (iint *)inout + i);
}

/* Are the data bytes of element a and b equal? */
static int same(int k, const void *a, const void *b) {
    switch (k) {
    case K_DINT:
        return ((const dint *)a)->v == ((const dint *)b)->v &&
               ((const dint *)a)->i == ((const dint *)b)->i;
    case K_VEC:
        for (int j = 0; j < 6; j++)
            if (((const double *)a)[vec_data[j]] != ((const double *)b)[vec_data[j]]) return 0;
        return 1;
    case K_BOOL: return *(const bool *)a == *(const bool *)b;
    default: return !memcmp(a, b, ext_of(k));
    }
}

/* The bytes that are not data (pair padding, vector gaps) still hold GAP. */
static int gaps_intact(int k, const void *buf, size_t count) {
    for (size_t i = 0; i < count; i++) {
        const unsigned char *e = (const unsigned char *)buf + i * ext_of(k);
        if (k == K_DINT) {
            for (size_t j = offsetof(dint, i) + sizeof(int); j < sizeof(dint); j++)
                if (e[j] != GAP) return 0;
        } else if (k == K_VEC) {
            for (int g = 2; g <= 5; g += 3)
                for (size_t j = 0; j < sizeof(double); j++)
                    if (e[g * sizeof(double) + j] != GAP) return 0;
        }
    }
    return 1;
}

typedef struct {
    int kind, op, large;
} tcase;

static const tcase cases[] = {
    {K_INT, O_SUM, 0},     {K_INT, O_PROD, 0},    {K_INT, O_MAX, 0},     {K_INT, O_MIN, 0},
    {K_INT, O_LAND, 0},    {K_INT, O_LOR, 0},     {K_INT, O_LXOR, 0},    {K_INT, O_BAND, 0},
    {K_INT, O_BOR, 0},     {K_INT, O_BXOR, 0},    {K_INT, O_USUM, 0},    {K_DOUBLE, O_SUM, 1},
    {K_DOUBLE, O_PROD, 0}, {K_DOUBLE, O_MAX, 0},  {K_DOUBLE, O_MIN, 0},  {K_BYTE, O_BAND, 0},
    {K_BYTE, O_BOR, 0},    {K_BYTE, O_BXOR, 0},   {K_BOOL, O_LAND, 0},   {K_BOOL, O_LOR, 0},
    {K_BOOL, O_LXOR, 0},   {K_DINT, O_MAXLOC, 1}, {K_DINT, O_MINLOC, 0}, {K_2INT, O_MAXLOC, 0},
    {K_2INT, O_MINLOC, 0}, {K_2INT, O_AFFINE, 1}, {K_VEC, O_SUM, 1},     {K_VEC, O_MAX, 0},
};

static int me, np; /* in the communicator under test */
static MPI_Comm comm;
static char *sbuf, *rbuf, *ref, *tmp;
static size_t cap;

/* ref[i] = fold of ranks [lo, hi] in rank order (a is the lower operand) */
static void reference(const tcase *t, size_t count, int lo, int hi, int salt) {
    size_t e = ext_of(t->kind);
    fill(t->kind, ref, count, lo, salt);
    for (int q = lo + 1; q <= hi; q++) {
        fill(t->kind, tmp, count, q, salt);
        for (size_t i = 0; i < count; i++) {
            /* ref = ref op tmp: combine(b = a op b) with a = ref, b = tmp, then move back */
            combine(t->kind, t->op, ref + i * e, tmp + i * e);
            memcpy(ref + i * e, tmp + i * e, e);
        }
    }
}

static void check(const tcase *t, const char *what, const char *got, const char *want, size_t count,
                  int inplace) {
    size_t e = ext_of(t->kind);
    for (size_t i = 0; i < count; i++)
        CHECK(same(t->kind, got + i * e, want + i * e),
              "%s kind %d op %d count %zu inplace %d np %d: element %zu differs", what, t->kind,
              t->op, count, inplace, np, i);
    CHECK(gaps_intact(t->kind, got, count),
          "%s kind %d op %d count %zu inplace %d np %d: bytes between elements were written", what,
          t->kind, t->op, count, inplace, np);
}

static void prep(const tcase *t, size_t count, int salt) {
    size_t used = count * ext_of(t->kind) + 64; /* what the checks look at, and a margin */
    memset(sbuf, GAP, used < cap ? used : cap);
    memset(rbuf, GAP, used < cap ? used : cap);
    fill(t->kind, sbuf, count, me, salt);
}

static void run_case(const tcase *t, size_t count) {
    MPI_Datatype dt = type_of(t->kind);
    MPI_Op op = mpi_op(t->op);
    size_t e = ext_of(t->kind);
    int salt = t->op == O_AFFINE ? 99 : (int)count;
    int c = (int)count;
    for (int inplace = 0; inplace < 2; inplace++) {
        /* Allreduce */
        prep(t, count, salt);
        if (inplace) memcpy(rbuf, sbuf, count * e);
        CHECK_RC(MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, c, dt, op, comm));
        reference(t, count, 0, np - 1, salt);
        check(t, "Allreduce", rbuf, ref, count, inplace);
        /* Reduce at every root (the ends only for large vectors) */
        for (int root = 0; root < np; root++) {
            if (count > 100 && root != 0 && root != np - 1) continue;
            if (count > 1 && root != 0 && root != np - 1 && root != np / 2) continue;
            prep(t, count, salt);
            int ip = inplace && me == root;
            if (ip) memcpy(rbuf, sbuf, count * e);
            CHECK_RC(MPI_Reduce(ip ? MPI_IN_PLACE : sbuf, rbuf, c, dt, op, root, comm));
            if (me == root) check(t, "Reduce", rbuf, ref, count, ip);
        }
        /* Scan and Exscan */
        prep(t, count, salt);
        if (inplace) memcpy(rbuf, sbuf, count * e);
        CHECK_RC(MPI_Scan(inplace ? MPI_IN_PLACE : sbuf, rbuf, c, dt, op, comm));
        reference(t, count, 0, me, salt);
        check(t, "Scan", rbuf, ref, count, inplace);
        prep(t, count, salt);
        if (inplace) memcpy(rbuf, sbuf, count * e);
        CHECK_RC(MPI_Exscan(inplace ? MPI_IN_PLACE : sbuf, rbuf, c, dt, op, comm));
        if (me > 0) {
            reference(t, count, 0, me - 1, salt);
            check(t, "Exscan", rbuf, ref, count, inplace);
        }
        /* Reduce_scatter_block: blocks of `count` elements */
        if (count * (size_t)np * e <= cap) {
            size_t total = count * (size_t)np;
            prep(t, total, salt);
            if (inplace) memcpy(rbuf, sbuf, total * e);
            CHECK_RC(
                MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sbuf, rbuf, c, dt, op, comm));
            reference(t, total, 0, np - 1, salt);
            check(t, "Reduce_scatter_block", rbuf, ref + count * (size_t)me * e, count, inplace);
        }
        /* Reduce_scatter: uneven blocks around `count` */
        {
            int rc[64];
            size_t total = 0, mine = 0;
            for (int i = 0; i < np; i++) {
                rc[i] = (int)(count / 2) + (i % 3 == 1 ? (int)(count % 3) + 1 : 0);
                if (i < me) mine += (size_t)rc[i];
                total += (size_t)rc[i];
            }
            if (total * e <= cap) {
                prep(t, total, salt);
                if (inplace) memcpy(rbuf, sbuf, total * e);
                CHECK_RC(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : sbuf, rbuf, rc, dt, op, comm));
                reference(t, total, 0, np - 1, salt);
                check(t, "Reduce_scatter", rbuf, ref + mine * e, (size_t)rc[me], inplace);
            }
        }
    }
}

/* Vectors whose per-rank blocks pass 1 MiB, which the single-copy reductions fold piece by
 * piece: Allreduce, Reduce at the last rank and Reduce_scatter_block, up to 4 ranks (the
 * serial references cost too much beyond), a contiguous, a non-commutative and a strided
 * type. */
static void run_huge(void) {
    static const tcase huge[] = {{K_DOUBLE, O_SUM, 1}, {K_2INT, O_AFFINE, 1}, {K_VEC, O_SUM, 1}};
    if (np > 4) return;
    for (size_t k = 0; k < sizeof(huge) / sizeof(huge[0]); k++) {
        const tcase *t = &huge[k];
        MPI_Datatype dt = type_of(t->kind);
        MPI_Op op = mpi_op(t->op);
        size_t e = ext_of(t->kind), block = (HUGE_BLOCK / e) + 5, count = block * (size_t)np;
        int salt = 7;
        prep(t, count, salt);
        CHECK_RC(MPI_Allreduce(sbuf, rbuf, (int)count, dt, op, comm));
        reference(t, count, 0, np - 1, salt);
        check(t, "Allreduce (huge)", rbuf, ref, count, 0);
        prep(t, count, salt);
        CHECK_RC(MPI_Reduce(sbuf, rbuf, (int)count, dt, op, np - 1, comm));
        if (me == np - 1) check(t, "Reduce (huge)", rbuf, ref, count, 0);
        prep(t, count, salt);
        CHECK_RC(MPI_Reduce_scatter_block(sbuf, rbuf, (int)block, dt, op, comm));
        check(t, "Reduce_scatter_block (huge)", rbuf, ref + block * (size_t)me * e, block, 0);
    }
}

/* full: WORLD; the other communicators get the small counts only */
static void run(MPI_Comm c, int full) {
    comm = c;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const tcase *t = &cases[k];
        size_t large = (80 * 1024) / ext_of(t->kind) + 3; /* more than 64 KiB, odd-ish */
        /* the one-step shared-memory Reduce spreads a vector over several buffers: 80 KiB
         * with the default buffers, 10 KiB with v4's 4 KiB ones (80 KiB then goes in rounds) */
        /* 3 KiB: the one-step Allreduce's images move through the buffers from call to call
         * (co_cshm_spread) */
        size_t counts[] = {
            0, 1, 7, (3 * 1024) / ext_of(t->kind) + 1, (10 * 1024) / ext_of(t->kind) + 1, large};
        for (int j = 0; j < 6; j++) {
            if ((j >= 3 && (!t->large || !full)) || (j == 0 && !full)) continue;
            run_case(t, counts[j]);
        }
    }
    if (full) run_huge();
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    vec_type = cu_vector_type();
    CHECK_RC(MPI_Op_create(user_sum_fn, 1, &user_sum));
    CHECK_RC(MPI_Op_create(user_affine_fn, 0, &user_affine));
    int commute = -1;
    CHECK_RC(MPI_Op_commutative(user_affine, &commute));
    CHECK(commute == 0, "user_affine commutative %d", commute);
    CHECK_RC(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_SUM commutative %d", commute);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cap = (size_t)(size + 1) * 90 * 1024;
    if (cap < (size_t)(size + 1) * HUGE_BLOCK) cap = (size_t)(size + 1) * HUGE_BLOCK;
    sbuf = malloc(cap), rbuf = malloc(cap), ref = malloc(cap), tmp = malloc(cap);
    CHECK(sbuf && rbuf && ref && tmp, "malloc");
    MPI_Comm comms[MAXCOMMS];
    int owned[MAXCOMMS];
    int nc = cu_comms(comms, owned);
    for (int i = 0; i < nc; i++) run(comms[i], i == 0);
    cu_free_comms(comms, owned, nc);
    CHECK_RC(MPI_Op_free(&user_sum));
    CHECK_RC(MPI_Op_free(&user_affine));
    cu_type_free(&vec_type);
    free(sbuf), free(rbuf), free(ref), free(tmp);
    MPI_Finalize();
    return 0;
}
