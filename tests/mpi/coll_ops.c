/* Operator coverage against MPI 3.1 section 5.9.2: every predefined operator on every
 * predefined datatype is accepted exactly where the standard defines it (MAX/MIN: C
 * integers, floating point, AINT/OFFSET/COUNT; SUM/PROD: those and complex; LAND/LOR/LXOR:
 * C integers and C_BOOL, and AINT/OFFSET/COUNT as in Open MPI and MPICH; BAND/BOR/BXOR: C
 * integers, BYTE, AINT/OFFSET/COUNT; MAXLOC/MINLOC: the pair types) and refused with
 * MPI_ERR_OP elsewhere. Where accepted, Reduce_local and
 * Allreduce compute the right values (rank r contributes r+1 and 2r+3). Fortran's and C++'s
 * named types take the rules of the C types they are stored as (MPI_INTEGER and MPI_LOGICAL
 * those of a 4-byte C integer, MPI_CXX_BOOL C_BOOL's), and their pairs are pairs. */
#include "testutil.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

enum cls { C_INT, C_FLOAT, C_COMPLEX, C_BOOL, C_BYTE, C_MULTI, C_PAIR, C_OTHER };
typedef struct {
    MPI_Datatype t;
    const char *name;
    int cls;
    int is_signed;
} tinfo;

static const tinfo types[] = {
    {MPI_CHAR, "CHAR", C_OTHER, 1},
    {MPI_SIGNED_CHAR, "SIGNED_CHAR", C_INT, 1},
    {MPI_UNSIGNED_CHAR, "UNSIGNED_CHAR", C_INT, 0},
    {MPI_BYTE, "BYTE", C_BYTE, 0},
    {MPI_SHORT, "SHORT", C_INT, 1},
    {MPI_UNSIGNED_SHORT, "UNSIGNED_SHORT", C_INT, 0},
    {MPI_INT, "INT", C_INT, 1},
    {MPI_UNSIGNED, "UNSIGNED", C_INT, 0},
    {MPI_LONG, "LONG", C_INT, 1},
    {MPI_UNSIGNED_LONG, "UNSIGNED_LONG", C_INT, 0},
    {MPI_LONG_LONG_INT, "LONG_LONG_INT", C_INT, 1},
    {MPI_UNSIGNED_LONG_LONG, "UNSIGNED_LONG_LONG", C_INT, 0},
    {MPI_FLOAT, "FLOAT", C_FLOAT, 1},
    {MPI_DOUBLE, "DOUBLE", C_FLOAT, 1},
    {MPI_LONG_DOUBLE, "LONG_DOUBLE", C_FLOAT, 1},
    {MPI_WCHAR, "WCHAR", C_OTHER, 0},
    {MPI_C_BOOL, "C_BOOL", C_BOOL, 0},
    {MPI_INT8_T, "INT8_T", C_INT, 1},
    {MPI_INT16_T, "INT16_T", C_INT, 1},
    {MPI_INT32_T, "INT32_T", C_INT, 1},
    {MPI_INT64_T, "INT64_T", C_INT, 1},
    {MPI_UINT8_T, "UINT8_T", C_INT, 0},
    {MPI_UINT16_T, "UINT16_T", C_INT, 0},
    {MPI_UINT32_T, "UINT32_T", C_INT, 0},
    {MPI_UINT64_T, "UINT64_T", C_INT, 0},
    {MPI_C_FLOAT_COMPLEX, "C_FLOAT_COMPLEX", C_COMPLEX, 1},
    {MPI_C_DOUBLE_COMPLEX, "C_DOUBLE_COMPLEX", C_COMPLEX, 1},
    {MPI_C_LONG_DOUBLE_COMPLEX, "C_LONG_DOUBLE_COMPLEX", C_COMPLEX, 1},
    {MPI_AINT, "AINT", C_MULTI, 1},
    {MPI_OFFSET, "OFFSET", C_MULTI, 1},
    {MPI_COUNT, "COUNT", C_MULTI, 1},
    {MPI_PACKED, "PACKED", C_OTHER, 0},
    {MPI_FLOAT_INT, "FLOAT_INT", C_PAIR, 1},
    {MPI_DOUBLE_INT, "DOUBLE_INT", C_PAIR, 1},
    {MPI_LONG_INT, "LONG_INT", C_PAIR, 1},
    {MPI_2INT, "2INT", C_PAIR, 1},
    {MPI_SHORT_INT, "SHORT_INT", C_PAIR, 1},
    {MPI_LONG_DOUBLE_INT, "LONG_DOUBLE_INT", C_PAIR, 1},
    {MPI_CHARACTER, "CHARACTER", C_OTHER, 1},
    {MPI_INTEGER, "INTEGER", C_INT, 1},
    {MPI_REAL, "REAL", C_FLOAT, 1},
    {MPI_DOUBLE_PRECISION, "DOUBLE_PRECISION", C_FLOAT, 1},
    {MPI_COMPLEX, "COMPLEX", C_COMPLEX, 1},
    {MPI_DOUBLE_COMPLEX, "DOUBLE_COMPLEX", C_COMPLEX, 1},
    {MPI_LOGICAL, "LOGICAL", C_INT, 1},
    {MPI_2INTEGER, "2INTEGER", C_PAIR, 1},
    {MPI_2REAL, "2REAL", C_PAIR, 1},
    {MPI_2DOUBLE_PRECISION, "2DOUBLE_PRECISION", C_PAIR, 1},
    {MPI_INTEGER1, "INTEGER1", C_INT, 1},
    {MPI_INTEGER2, "INTEGER2", C_INT, 1},
    {MPI_INTEGER4, "INTEGER4", C_INT, 1},
    {MPI_INTEGER8, "INTEGER8", C_INT, 1},
    {MPI_REAL4, "REAL4", C_FLOAT, 1},
    {MPI_REAL8, "REAL8", C_FLOAT, 1},
    {MPI_COMPLEX8, "COMPLEX8", C_COMPLEX, 1},
    {MPI_COMPLEX16, "COMPLEX16", C_COMPLEX, 1},
    {MPI_CXX_BOOL, "CXX_BOOL", C_BOOL, 0},
    {MPI_CXX_FLOAT_COMPLEX, "CXX_FLOAT_COMPLEX", C_COMPLEX, 1},
    {MPI_CXX_DOUBLE_COMPLEX, "CXX_DOUBLE_COMPLEX", C_COMPLEX, 1},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "CXX_LONG_DOUBLE_COMPLEX", C_COMPLEX, 1},
};

/* The C type a Fortran or C++ named type is stored as (itself for the others). */
static MPI_Datatype canon(MPI_Datatype t) {
    static const MPI_Datatype as[][2] = {
        {MPI_INTEGER, MPI_INT32_T},
        {MPI_LOGICAL, MPI_INT32_T},
        {MPI_INTEGER1, MPI_INT8_T},
        {MPI_INTEGER2, MPI_INT16_T},
        {MPI_INTEGER4, MPI_INT32_T},
        {MPI_INTEGER8, MPI_INT64_T},
        {MPI_REAL, MPI_FLOAT},
        {MPI_REAL4, MPI_FLOAT},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE},
        {MPI_REAL8, MPI_DOUBLE},
        {MPI_COMPLEX, MPI_C_FLOAT_COMPLEX},
        {MPI_COMPLEX8, MPI_C_FLOAT_COMPLEX},
        {MPI_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX},
        {MPI_COMPLEX16, MPI_C_DOUBLE_COMPLEX},
        {MPI_CXX_BOOL, MPI_C_BOOL},
        {MPI_CXX_FLOAT_COMPLEX, MPI_C_FLOAT_COMPLEX},
        {MPI_CXX_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof(as) / sizeof(as[0]); i++)
        if (as[i][0] == t) return as[i][1];
    return t;
}

enum { SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC, REPLACE, NOOP };
static const MPI_Op ops[] = {MPI_SUM,    MPI_PROD,   MPI_MAX,     MPI_MIN,  MPI_LAND,
                             MPI_LOR,    MPI_LXOR,   MPI_BAND,    MPI_BOR,  MPI_BXOR,
                             MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
static const char *opnames[] = {"SUM",  "PROD", "MAX",  "MIN",    "LAND",   "LOR",     "LXOR",
                                "BAND", "BOR",  "BXOR", "MAXLOC", "MINLOC", "REPLACE", "NO_OP"};

static int allowed(int op, int cls) {
    switch (op) {
    case MAX:
    case MIN: return cls == C_INT || cls == C_FLOAT || cls == C_MULTI;
    case SUM:
    case PROD: return cls == C_INT || cls == C_FLOAT || cls == C_COMPLEX || cls == C_MULTI;
    case LAND:
    case LOR:
    case LXOR: return cls == C_INT || cls == C_BOOL || cls == C_MULTI;
    case BAND:
    case BOR:
    case BXOR: return cls == C_INT || cls == C_BYTE || cls == C_MULTI;
    case MAXLOC:
    case MINLOC: return cls == C_PAIR;
    default: return 0; /* REPLACE and NO_OP: one-sided only */
    }
}

/* Element i of a buffer of type t, as a long double (real part for complex). */
static long double get(MPI_Datatype t, const void *b, int i) {
    t = canon(t);
#define G(T) return (long double)((const T *)b)[i]
    if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T) G(int8_t);
    if (t == MPI_UNSIGNED_CHAR || t == MPI_BYTE || t == MPI_UINT8_T) G(uint8_t);
    if (t == MPI_SHORT || t == MPI_INT16_T) G(int16_t);
    if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T) G(uint16_t);
    if (t == MPI_INT || t == MPI_INT32_T) G(int32_t);
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T) G(uint32_t);
    if (t == MPI_LONG) G(long);
    if (t == MPI_UNSIGNED_LONG) G(unsigned long);
    if (t == MPI_LONG_LONG_INT || t == MPI_INT64_T || t == MPI_OFFSET || t == MPI_COUNT) G(int64_t);
    if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) G(uint64_t);
    if (t == MPI_AINT) G(MPI_Aint);
    if (t == MPI_FLOAT) G(float);
    if (t == MPI_DOUBLE) G(double);
    if (t == MPI_LONG_DOUBLE) G(long double);
    if (t == MPI_C_BOOL) G(bool);
    if (t == MPI_C_FLOAT_COMPLEX) return crealf(((const float _Complex *)b)[i]);
    if (t == MPI_C_DOUBLE_COMPLEX) return creal(((const double _Complex *)b)[i]);
    if (t == MPI_C_LONG_DOUBLE_COMPLEX) return creall(((const long double _Complex *)b)[i]);
#undef G
    return -1;
}

static void set(MPI_Datatype t, void *b, int i, long long v) {
    t = canon(t);
#define S(T) ((T *)b)[i] = (T)v
    if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T)
        S(int8_t);
    else if (t == MPI_UNSIGNED_CHAR || t == MPI_BYTE || t == MPI_UINT8_T)
        S(uint8_t);
    else if (t == MPI_SHORT || t == MPI_INT16_T)
        S(int16_t);
    else if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T)
        S(uint16_t);
    else if (t == MPI_INT || t == MPI_INT32_T)
        S(int32_t);
    else if (t == MPI_UNSIGNED || t == MPI_UINT32_T)
        S(uint32_t);
    else if (t == MPI_LONG)
        S(long);
    else if (t == MPI_UNSIGNED_LONG)
        S(unsigned long);
    else if (t == MPI_LONG_LONG_INT || t == MPI_INT64_T || t == MPI_OFFSET || t == MPI_COUNT)
        S(int64_t);
    else if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
        S(uint64_t);
    else if (t == MPI_AINT)
        S(MPI_Aint);
    else if (t == MPI_FLOAT)
        S(float);
    else if (t == MPI_DOUBLE)
        S(double);
    else if (t == MPI_LONG_DOUBLE)
        S(long double);
    else if (t == MPI_C_BOOL)
        S(bool);
    else if (t == MPI_C_FLOAT_COMPLEX)
        ((float _Complex *)b)[i] = (float)v + 1.0f * I;
    else if (t == MPI_C_DOUBLE_COMPLEX)
        ((double _Complex *)b)[i] = (double)v + 1.0 * I;
    else if (t == MPI_C_LONG_DOUBLE_COMPLEX)
        ((long double _Complex *)b)[i] = (long double)v + 1.0L * I;
#undef S
}

/* The value of `a op b` as the test computes it for rank values (r+1, 2r+3): small
 * positive integers, so every type holds them exactly. Complex numbers are v + i. */
static long double combine(int op, int cls, long double a, long double b, long double *im_a,
                           long double im_b) {
    switch (op) {
    case SUM:
        if (cls == C_COMPLEX) *im_a += im_b;
        return a + b;
    case PROD:
        if (cls == C_COMPLEX) {
            long double re = a * b - *im_a * im_b, im = a * im_b + *im_a * b;
            *im_a = im;
            return re;
        }
        return a * b;
    case MAX: return a > b ? a : b;
    case MIN: return a < b ? a : b;
    case LAND: return (a != 0) && (b != 0);
    case LOR: return (a != 0) || (b != 0);
    case LXOR: return (a != 0) != (b != 0);
    case BAND: return (long long)a & (long long)b;
    case BOR: return (long long)a | (long long)b;
    case BXOR: return (long long)a ^ (long long)b;
    }
    return 0;
}

static long double get_im(MPI_Datatype t, const void *b, int i) {
    t = canon(t);
    if (t == MPI_C_FLOAT_COMPLEX) return cimagf(((const float _Complex *)b)[i]);
    if (t == MPI_C_DOUBLE_COMPLEX) return cimag(((const double _Complex *)b)[i]);
    if (t == MPI_C_LONG_DOUBLE_COMPLEX) return cimagl(((const long double _Complex *)b)[i]);
    return 0;
}

static long long rank_value(int r, int i, int op) {
    if (op == PROD) /* products fit a signed char at up to 12 ranks (2^3 and 2^6) */
        return i ? 1 + (r < 3) : 1 + (r % 2 && r < 12);
    if (op == LAND || op == LOR || op == LXOR) return (r + i) % 3 != 0;
    return i ? 2 * r + 3 : r + 1;
}

static void check_pairs(MPI_Comm comm, int me, int np) {
    /* MAXLOC/MINLOC with ties: the smallest index wins */
    struct {
        double v;
        int i;
    } in[2], out[2];
    in[0].v = me % 2, in[0].i = np - me; /* ties among ranks of equal parity */
    in[1].v = -me, in[1].i = me;
    CHECK_RC(MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    int maxv = np > 1 ? 1 : 0, idx = np + 1;
    for (int r = 0; r < np; r++)
        if (r % 2 == maxv && np - r < idx) idx = np - r;
    CHECK(out[0].v == maxv && out[0].i == idx, "MAXLOC tie: %g/%d want %d/%d", out[0].v, out[0].i,
          maxv, idx);
    CHECK(out[1].v == 0 && out[1].i == 0, "MAXLOC: %g/%d", out[1].v, out[1].i);
    CHECK_RC(MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MINLOC, comm));
    CHECK(out[0].v == 0, "MINLOC tie value %g", out[0].v);
    int want = np + 1;
    for (int r = 0; r < np; r += 2)
        if (np - r < want) want = np - r;
    CHECK(out[0].i == want, "MINLOC tie index %d want %d", out[0].i, want);
    CHECK(out[1].v == -(np - 1) && out[1].i == np - 1, "MINLOC: %g/%d", out[1].v, out[1].i);

    /* Fortran's pairs, whose index has the value's type; the smallest index wins ties.
     * Negative indices here, which compare the other way round as integers of their bits. */
    int fidx = -(np - maxv), fwant = -np;
#define FORTRAN_PAIRS(T, TYPE)                                                                     \
    do {                                                                                           \
        struct {                                                                                   \
            T v, i;                                                                                \
        } fin[2], fout[2];                                                                         \
        fin[0].v = (T)(me % 2), fin[0].i = (T) - (np - me);                                        \
        fin[1].v = (T)-me, fin[1].i = (T)me;                                                       \
        CHECK_RC(MPI_Allreduce(fin, fout, 2, TYPE, MPI_MAXLOC, comm));                             \
        CHECK(fout[0].v == maxv && fout[0].i == fidx && fout[1].v == 0 && fout[1].i == 0,          \
              #TYPE " MAXLOC: %g/%g %g/%g", (double)fout[0].v, (double)fout[0].i,                  \
              (double)fout[1].v, (double)fout[1].i);                                               \
        CHECK_RC(MPI_Allreduce(fin, fout, 2, TYPE, MPI_MINLOC, comm));                             \
        CHECK(fout[0].v == 0 && fout[0].i == fwant && fout[1].v == -(np - 1) &&                    \
                  fout[1].i == np - 1,                                                             \
              #TYPE " MINLOC: %g/%g %g/%g", (double)fout[0].v, (double)fout[0].i,                  \
              (double)fout[1].v, (double)fout[1].i);                                               \
    } while (0)
    FORTRAN_PAIRS(float, MPI_2REAL);
    FORTRAN_PAIRS(double, MPI_2DOUBLE_PRECISION);
    FORTRAN_PAIRS(int, MPI_2INTEGER);
#undef FORTRAN_PAIRS
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    _Alignas(16) char a[64], b[64], r[64];
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        const tinfo *t = &types[ti];
        for (int op = 0; op <= NOOP; op++) {
            int ok = allowed(op, t->cls);
            memset(a, 0, sizeof(a)), memset(b, 0, sizeof(b));
            int rc = MPI_Reduce_local(a, b, 2, t->t, ops[op]);
            int cls = -1;
            if (rc) MPI_Error_class(rc, &cls);
            CHECK(ok ? rc == MPI_SUCCESS : cls == MPI_ERR_OP, "Reduce_local %s on %s: rc %d",
                  opnames[op], t->name, rc);
            rc = MPI_Allreduce(a, r, 2, t->t, ops[op], comm);
            cls = -1;
            if (rc) MPI_Error_class(rc, &cls);
            CHECK(ok ? rc == MPI_SUCCESS : cls == MPI_ERR_OP, "Allreduce %s on %s: rc %d",
                  opnames[op], t->name, rc);
            if (!ok || t->cls == C_PAIR) continue;
            /* values: Reduce_local of ranks 0 and 1's values, Allreduce over all ranks */
            for (int i = 0; i < 2; i++) {
                set(t->t, a, i, rank_value(0, i, op));
                set(t->t, b, i, rank_value(1, i, op));
            }
            CHECK_RC(MPI_Reduce_local(a, b, 2, t->t, ops[op]));
            for (int i = 0; i < 2; i++) {
                long double im = 1;
                long double want =
                    combine(op, t->cls, rank_value(0, i, op), rank_value(1, i, op), &im, 1);
                CHECK(get(t->t, b, i) == want &&
                          get_im(t->t, b, i) == (t->cls == C_COMPLEX ? im : 0),
                      "Reduce_local %s on %s element %d: %Lg want %Lg", opnames[op], t->name, i,
                      get(t->t, b, i), want);
            }
            for (int i = 0; i < 2; i++) set(t->t, a, i, rank_value(me, i, op));
            CHECK_RC(MPI_Allreduce(a, r, 2, t->t, ops[op], comm));
            for (int i = 0; i < 2; i++) {
                long double im = 1, want = rank_value(0, i, op);
                for (int q = 1; q < np; q++)
                    want = combine(op, t->cls, want, rank_value(q, i, op), &im, 1);
                if (t->cls == C_BOOL || (t->cls == C_INT && op >= LAND && op <= LXOR))
                    want = want != 0;
                CHECK(get(t->t, r, i) == want &&
                          get_im(t->t, r, i) == (t->cls == C_COMPLEX ? im : 0),
                      "Allreduce %s on %s element %d: %Lg want %Lg", opnames[op], t->name, i,
                      get(t->t, r, i), want);
            }
        }
    }
    check_pairs(comm, me, np);
    MPI_Finalize();
    return 0;
}
