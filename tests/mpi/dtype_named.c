/* Fortran's and C++'s named datatypes in C, and MPI_Type_match_size: each has its standard
 * name, the size and extent of what it is stored as, the envelope of a named type, and
 * carries its values between ranks to a receiver that names the C type (and back); Fortran's
 * pairs are laid out with an index of the value's type and reduce as pairs inside derived
 * types too; the optional types Cohort lacks are MPI_DATATYPE_NULL; MPI_Type_match_size
 * returns the sized types and refuses what it has none of; and Fortran 90's parameterised
 * types (MPI_Type_create_f90_*) are the kinds gfortran would choose, made once. */
#include "testutil.h"

#include <complex.h>
#include <stdbool.h>

typedef struct {
    MPI_Datatype t;
    const char *name;
    int size;       /* and extent */
    MPI_Datatype c; /* the C type of its layout, for the exchange; NULL for the pairs */
} named;

static const named types[] = {
    {MPI_CHARACTER, "MPI_CHARACTER", 1, MPI_CHAR},
    {MPI_INTEGER, "MPI_INTEGER", 4, MPI_INT32_T},
    {MPI_REAL, "MPI_REAL", 4, MPI_FLOAT},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, MPI_DOUBLE},
    {MPI_COMPLEX, "MPI_COMPLEX", 8, MPI_C_FLOAT_COMPLEX},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, MPI_C_DOUBLE_COMPLEX},
    {MPI_LOGICAL, "MPI_LOGICAL", 4, MPI_INT32_T},
    {MPI_2INTEGER, "MPI_2INTEGER", 8, MPI_DATATYPE_NULL},
    {MPI_2REAL, "MPI_2REAL", 8, MPI_DATATYPE_NULL},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, MPI_DATATYPE_NULL},
    {MPI_INTEGER1, "MPI_INTEGER1", 1, MPI_INT8_T},
    {MPI_INTEGER2, "MPI_INTEGER2", 2, MPI_INT16_T},
    {MPI_INTEGER4, "MPI_INTEGER4", 4, MPI_INT32_T},
    {MPI_INTEGER8, "MPI_INTEGER8", 8, MPI_INT64_T},
    {MPI_REAL4, "MPI_REAL4", 4, MPI_FLOAT},
    {MPI_REAL8, "MPI_REAL8", 8, MPI_DOUBLE},
    {MPI_COMPLEX8, "MPI_COMPLEX8", 8, MPI_C_FLOAT_COMPLEX},
    {MPI_COMPLEX16, "MPI_COMPLEX16", 16, MPI_C_DOUBLE_COMPLEX},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, MPI_C_BOOL},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, MPI_C_FLOAT_COMPLEX},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, MPI_C_DOUBLE_COMPLEX},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", (int)sizeof(long double _Complex),
     MPI_C_LONG_DOUBLE_COMPLEX},
};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))

static void describe(const named *n) {
    char name[MPI_MAX_OBJECT_NAME];
    int len, size, ni, na, nt, comb;
    MPI_Aint lb, extent, tlb, textent;
    CHECK_RC(MPI_Type_get_name(n->t, name, &len));
    CHECK(!strcmp(name, n->name) && len == (int)strlen(n->name), "name %s, expected %s", name,
          n->name);
    CHECK_RC(MPI_Type_size(n->t, &size));
    CHECK_RC(MPI_Type_get_extent(n->t, &lb, &extent));
    CHECK_RC(MPI_Type_get_true_extent(n->t, &tlb, &textent));
    CHECK(size == n->size && lb == 0 && extent == n->size && tlb == 0 && textent == n->size,
          "%s: size %d, lb %ld, extent %ld, true %ld/%ld; expected %d", n->name, size, (long)lb,
          (long)extent, (long)tlb, (long)textent, n->size);
    CHECK_RC(MPI_Type_get_envelope(n->t, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && !ni && !na && !nt, "%s: envelope %d", n->name, comb);
    /* a duplicate is derived, and its contents name the type */
    MPI_Datatype d, inner;
    CHECK_RC(MPI_Type_dup(n->t, &d));
    CHECK_RC(MPI_Type_get_envelope(d, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_DUP && nt == 1, "%s: dup's envelope %d", n->name, comb);
    CHECK_RC(MPI_Type_get_contents(d, 0, 0, 1, NULL, NULL, &inner));
    CHECK(inner == n->t, "%s: dup's contents name another type", n->name);
    MPI_Type_free(&d);
    int pos = 0, psize;
    char packed[3 * 32];
    CHECK_RC(MPI_Pack_size(3, n->t, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 3 * n->size, "%s: pack size %d", n->name, psize);
    unsigned char in[3 * 32], out[3 * 32];
    for (int i = 0; i < 3 * n->size; i++) in[i] = (unsigned char)(i * 7 + 1);
    if (n->t == MPI_CXX_BOOL)
        for (int i = 0; i < 3; i++) in[i] = (unsigned char)(i % 2); /* bools are 0 or 1 */
    CHECK_RC(MPI_Pack(in, 3, n->t, packed, sizeof(packed), &pos, MPI_COMM_WORLD));
    CHECK(pos == 3 * n->size, "%s: packed %d bytes", n->name, pos);
    memset(out, 0, sizeof(out));
    pos = 0;
    CHECK_RC(MPI_Unpack(packed, sizeof(packed), &pos, out, 3, n->t, MPI_COMM_WORLD));
    /* pairs of float or double: compare members, not the bits of padding (there is none) */
    CHECK(!memcmp(in, out, (size_t)(3 * n->size)), "%s: pack and unpack", n->name);
}

/* Rank 0 sends three values as the named type, the last rank receives them as the C type it
 * is stored as and sends them back the other way. */
static void exchange(const named *n, int me, int np) {
    if (np < 2 || n->c == MPI_DATATYPE_NULL) return;
    unsigned char v[3 * 32], got[3 * 32];
    for (int i = 0; i < 3 * n->size; i++) v[i] = (unsigned char)(i * 13 + 5);
    if (n->t == MPI_CXX_BOOL)
        for (int i = 0; i < 3; i++) v[i] = (unsigned char)(i % 2);
    if (n->c == MPI_C_LONG_DOUBLE_COMPLEX) { /* padding bytes of long double are not data */
        long double _Complex z[3] = {1.5L + 2.0L * I, -3.25L, 7.0L * I};
        memcpy(v, z, sizeof(z));
    }
    int last = np - 1;
    memset(got, 0, sizeof(got));
    if (me == 0) {
        CHECK_RC(MPI_Send(v, 3, n->t, last, 1, MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(got, 3, n->t, last, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (me == last) {
        MPI_Status st;
        int count;
        CHECK_RC(MPI_Recv(got, 3, n->c, 0, 1, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Get_count(&st, n->c, &count));
        CHECK(count == 3, "%s: received %d", n->name, count);
        CHECK_RC(MPI_Send(got, 3, n->c, 0, 2, MPI_COMM_WORLD));
    }
    if (me == 0 || me == last) {
        if (n->c == MPI_C_LONG_DOUBLE_COMPLEX) {
            long double _Complex a[3], b[3];
            memcpy(a, v, sizeof(a));
            memcpy(b, got, sizeof(b));
            for (int i = 0; i < 3; i++) CHECK(a[i] == b[i], "%s: value %d", n->name, i);
        } else {
            CHECK(!memcmp(v, got, (size_t)(3 * n->size)), "%s: values changed in transit", n->name);
        }
    }
}

/* MINLOC over a vector of MPI_2REAL pairs (every other one): a derived type of pairs. */
static void derived_pairs(int me, int np) {
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_2REAL, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    struct {
        float v, i;
    } in[4], out[4];
    for (int k = 0; k < 4; k++) {
        in[k].v = (float)((me + k) % 3);
        in[k].i = (float)me - 0.5f;
        out[k].v = out[k].i = 99.0f;
    }
    CHECK_RC(MPI_Allreduce(in, out, 1, vec, MPI_MINLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 4; k += 2) { /* the smallest value, from the first rank with it */
        float best = 99.0f, idx = 0;
        for (int r = np - 1; r >= 0; r--)
            if ((float)((r + k) % 3) <= best) best = (float)((r + k) % 3), idx = (float)r - 0.5f;
        CHECK(out[k].v == best && out[k].i == idx, "derived MINLOC %d: %g/%g want %g/%g", k,
              out[k].v, out[k].i, best, idx);
    }
    CHECK(out[1].v == 99.0f && out[3].i == 99.0f, "the gaps of the vector were written");
    MPI_Type_free(&vec);
}

static void match_size(void) {
    static const struct {
        int cls, size;
        MPI_Datatype want;
    } ok[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
        {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, (int)sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_COMPLEX, (int)sizeof(long double _Complex), MPI_C_LONG_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int size;
        CHECK_RC(MPI_Type_match_size(ok[i].cls, ok[i].size, &t));
        CHECK(t == ok[i].want, "match_size(%d, %d)", ok[i].cls, ok[i].size);
        CHECK_RC(MPI_Type_size(t, &size));
        CHECK(size == ok[i].size, "match_size(%d, %d) has size %d", ok[i].cls, ok[i].size, size);
    }
    MPI_Datatype t;
    CHECK_ERR(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, -4, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(0, 4, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(7, 4, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, NULL), MPI_ERR_ARG);
}

/* Fortran 90's parameterised types: the kind SELECTED_*_KIND would choose, made once */
static void f90(int me, int np) {
    static const struct {
        int combiner, p, r, size;
    } ok[] = {
        {MPI_COMBINER_F90_INTEGER, 0, 2, 1},
        {MPI_COMBINER_F90_INTEGER, 0, 3, 2},
        {MPI_COMBINER_F90_INTEGER, 0, 9, 4},
        {MPI_COMBINER_F90_INTEGER, 0, 18, 8},
        {MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED, 4},
        {MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 37, 4},
        {MPI_COMBINER_F90_REAL, 7, 30, 8},
        {MPI_COMBINER_F90_REAL, 15, 307, 8},
        {MPI_COMBINER_F90_REAL, 6, 300, 8},
        {MPI_COMBINER_F90_REAL, 18, MPI_UNDEFINED, (int)sizeof(long double)},
        {MPI_COMBINER_F90_COMPLEX, 6, 37, 8},
        {MPI_COMBINER_F90_COMPLEX, 12, MPI_UNDEFINED, 16},
        {MPI_COMBINER_F90_COMPLEX, MPI_UNDEFINED, 1000, (int)sizeof(long double _Complex)},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        MPI_Datatype t, again;
        int c = ok[i].combiner, p = ok[i].p, r = ok[i].r;
        if (c == MPI_COMBINER_F90_INTEGER) {
            CHECK_RC(MPI_Type_create_f90_integer(r, &t));
            CHECK_RC(MPI_Type_create_f90_integer(r, &again));
        } else if (c == MPI_COMBINER_F90_REAL) {
            CHECK_RC(MPI_Type_create_f90_real(p, r, &t));
            CHECK_RC(MPI_Type_create_f90_real(p, r, &again));
        } else {
            CHECK_RC(MPI_Type_create_f90_complex(p, r, &t));
            CHECK_RC(MPI_Type_create_f90_complex(p, r, &again));
        }
        CHECK(t == again, "f90 %d (%d, %d): a new handle each call", c, p, r);
        int size, ni, na, nt, comb, ints[2] = {-1, -1};
        CHECK_RC(MPI_Type_size(t, &size));
        CHECK(size == ok[i].size, "f90 %d (%d, %d): size %d, want %d", c, p, r, size, ok[i].size);
        CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
        CHECK(comb == c && ni == (c == MPI_COMBINER_F90_INTEGER ? 1 : 2) && !na && !nt,
              "f90 %d (%d, %d): envelope %d %d/%d/%d", c, p, r, comb, ni, na, nt);
        CHECK_RC(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
        CHECK(c == MPI_COMBINER_F90_INTEGER ? ints[0] == r : ints[0] == p && ints[1] == r,
              "f90 %d (%d, %d): contents %d %d", c, p, r, ints[0], ints[1]);
        /* predefined: not freed, and returned as itself from a type built on it */
        MPI_Datatype keep = t, vec, inner;
        CHECK_ERR(MPI_Type_free(&keep), MPI_ERR_TYPE);
        CHECK_RC(MPI_Type_contiguous(3, t, &vec));
        CHECK_RC(MPI_Type_get_contents(vec, 1, 0, 1, ints, NULL, &inner));
        CHECK(inner == t, "f90 %d (%d, %d): contents of a type built on it", c, p, r);
        MPI_Type_free(&vec);
    }
    /* reductions on them work as on their base types */
    MPI_Datatype r8, i4;
    CHECK_RC(MPI_Type_create_f90_real(15, 307, &r8));
    CHECK_RC(MPI_Type_create_f90_integer(9, &i4));
    double x = me + 0.5, sx = 0;
    int32_t k = me + 1, sk = 0;
    CHECK_RC(MPI_Allreduce(&x, &sx, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    CHECK_RC(MPI_Allreduce(&k, &sk, 1, i4, MPI_MAX, MPI_COMM_WORLD));
    CHECK(sx == np * (np - 1) / 2.0 + 0.5 * np && sk == np, "f90 reductions: %g %d", sx, sk);
    /* what no kind gives, and bad arguments */
    MPI_Datatype t;
    CHECK_ERR(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_integer(-1, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_real(33, MPI_UNDEFINED, &t), MPI_ERR_ARG); /* quad */
    CHECK_ERR(MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_complex(-2, 10, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_f90_real(6, 37, NULL), MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 0; i < NTYPES; i++) {
        describe(&types[i]);
        exchange(&types[i], me, np);
        for (int k = 0; k < i; k++)
            CHECK(types[k].t != types[i].t, "%s and %s are one handle", types[k].name,
                  types[i].name);
    }
    /* optional types Cohort lacks */
    CHECK(MPI_REAL2 == MPI_DATATYPE_NULL && MPI_REAL16 == MPI_DATATYPE_NULL &&
              MPI_COMPLEX4 == MPI_DATATYPE_NULL && MPI_COMPLEX32 == MPI_DATATYPE_NULL &&
              MPI_INTEGER16 == MPI_DATATYPE_NULL,
          "an optional type without a layout here is not MPI_DATATYPE_NULL");
    derived_pairs(me, np);
    /* logical values reduce to .TRUE. (1) and .FALSE. (0) */
    int32_t l = me % 2, land = -1, lor = -1;
    CHECK_RC(MPI_Allreduce(&l, &land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK_RC(MPI_Allreduce(&l, &lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(land == 0 && lor == (np > 1), "LOGICAL: and %d or %d", land, lor); /* rank 0 false */
    /* a complex sum, as Fortran's DOUBLE COMPLEX */
    double _Complex z = (double)me + 1.0 * I, sum = 0;
    CHECK_RC(MPI_Allreduce(&z, &sum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(creal(sum) == np * (np - 1) / 2.0 && cimag(sum) == np, "DOUBLE_COMPLEX sum %g%+gi",
          creal(sum), cimag(sum));
    match_size();
    f90(me, np);
    MPI_Finalize();
    return 0;
}
