/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with "external32": the
 * exact bytes of known values of every basic type (big-endian, IEEE, long double as binary128),
 * round trips of derived types and of a large array, long double special values, integers
 * too wide for external32 (MPI_ERR_CONVERSION), and bad arguments. */
#include "testutil.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

static const char ext32[] = "external32";

static void hex(char *s, const unsigned char *p, size_t n) {
    s[0] = 0;
    for (size_t i = 0; i < n && i < 64; i++) sprintf(s + 3 * i, "%02X ", p[i]);
}

/* Pack one element of t at v: the size must be n, the bytes `want`; unpack them into out. */
static void check_bytes(const void *v, MPI_Datatype t, const char *name, const unsigned char *want,
                        size_t n, void *out) {
    MPI_Aint size = -1, pos = 0;
    CHECK_RC(MPI_Pack_external_size(ext32, 1, t, &size));
    CHECK(size == (MPI_Aint)n, "%s: Pack_external_size %ld, expected %zu", name, (long)size, n);
    unsigned char buf[64 + 8];
    memset(buf, 0xee, sizeof(buf));
    CHECK_RC(MPI_Pack_external(ext32, v, 1, t, buf, (MPI_Aint)sizeof(buf), &pos));
    CHECK(pos == (MPI_Aint)n, "%s: position %ld after packing, expected %zu", name, (long)pos, n);
    char got[200], exp[200];
    hex(got, buf, n);
    hex(exp, want, n);
    CHECK(memcmp(buf, want, n) == 0, "%s: packed %s, expected %s", name, got, exp);
    CHECK(buf[n] == 0xee, "%s: wrote past its %zu bytes", name, n);
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, buf, (MPI_Aint)n, &pos, out, 1, t));
    CHECK(pos == (MPI_Aint)n, "%s: position %ld after unpacking", name, (long)pos);
}

/* A scalar without padding: the bytes, and the round trip bit for bit. */
#define SCALAR(T, t, value, ...)                                                                   \
    do {                                                                                           \
        T in_ = (value), out_;                                                                     \
        memset(&out_, 0x5a, sizeof(out_));                                                         \
        static const unsigned char want_[] = {__VA_ARGS__};                                        \
        check_bytes(&in_, t, #t " " #value, want_, sizeof(want_), &out_);                          \
        CHECK(memcmp(&in_, &out_, sizeof(T)) == 0, "%s %s: round trip differs", #t, #value);       \
    } while (0)

/* Whether long double is a format external32 converts (x87 extended or binary128). */
#define LD_OK (LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113)

/* The meaningful bytes of a long double (the x87 format has 6 bytes of padding). */
#define LD_BYTES (LDBL_MANT_DIG == 64 ? 10 : sizeof(long double))

static int same_ld(long double a, long double b) {
    return memcmp(&a, &b, LD_BYTES) == 0;
}

static void basic_types(void) {
    SCALAR(char, MPI_CHAR, 'A', 0x41);
    SCALAR(signed char, MPI_SIGNED_CHAR, -2, 0xfe);
    SCALAR(unsigned char, MPI_UNSIGNED_CHAR, 200, 0xc8);
    SCALAR(unsigned char, MPI_BYTE, 0xab, 0xab);
    SCALAR(unsigned char, MPI_PACKED, 0x7f, 0x7f);
    SCALAR(short, MPI_SHORT, -2, 0xff, 0xfe);
    SCALAR(unsigned short, MPI_UNSIGNED_SHORT, 0xbeef, 0xbe, 0xef);
    SCALAR(int, MPI_INT, 0x01020304, 0x01, 0x02, 0x03, 0x04);
    SCALAR(int, MPI_INT, -2, 0xff, 0xff, 0xff, 0xfe);
    SCALAR(unsigned, MPI_UNSIGNED, 0xdeadbeefu, 0xde, 0xad, 0xbe, 0xef);
    SCALAR(long, MPI_LONG, -5, 0xff, 0xff, 0xff, 0xfb);
    SCALAR(long, MPI_LONG, 0x7fffffffL, 0x7f, 0xff, 0xff, 0xff);
    SCALAR(long, MPI_LONG, -0x7fffffffL - 1, 0x80, 0x00, 0x00, 0x00);
    SCALAR(unsigned long, MPI_UNSIGNED_LONG, 4000000000ul, 0xee, 0x6b, 0x28, 0x00);
    SCALAR(unsigned long, MPI_UNSIGNED_LONG, 0xfffffffful, 0xff, 0xff, 0xff, 0xff);
    SCALAR(long long, MPI_LONG_LONG, 0x0102030405060708ll, 1, 2, 3, 4, 5, 6, 7, 8);
    SCALAR(long long, MPI_LONG_LONG_INT, -3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd);
    SCALAR(unsigned long long, MPI_UNSIGNED_LONG_LONG, 0xfedcba9876543210ull, 0xfe, 0xdc, 0xba,
           0x98, 0x76, 0x54, 0x32, 0x10);
    SCALAR(float, MPI_FLOAT, 1.0f, 0x3f, 0x80, 0x00, 0x00);
    SCALAR(float, MPI_FLOAT, -2.5f, 0xc0, 0x20, 0x00, 0x00);
    SCALAR(double, MPI_DOUBLE, 1.0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0);
    SCALAR(double, MPI_DOUBLE, -0.1, 0xbf, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a);
    SCALAR(wchar_t, MPI_WCHAR, L'\x20ac', 0x00, 0x00, 0x20, 0xac);
    SCALAR(_Bool, MPI_C_BOOL, true, 0x01);
    SCALAR(_Bool, MPI_C_BOOL, false, 0x00);
    SCALAR(int8_t, MPI_INT8_T, -1, 0xff);
    SCALAR(int16_t, MPI_INT16_T, 0x1234, 0x12, 0x34);
    SCALAR(int32_t, MPI_INT32_T, -0x12345678, 0xed, 0xcb, 0xa9, 0x88);
    SCALAR(int64_t, MPI_INT64_T, -1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    SCALAR(uint8_t, MPI_UINT8_T, 0x99, 0x99);
    SCALAR(uint16_t, MPI_UINT16_T, 0xa1b2, 0xa1, 0xb2);
    SCALAR(uint32_t, MPI_UINT32_T, 0xa1b2c3d4u, 0xa1, 0xb2, 0xc3, 0xd4);
    SCALAR(uint64_t, MPI_UINT64_T, 0x8000000000000001ull, 0x80, 0, 0, 0, 0, 0, 0, 0x01);
    SCALAR(MPI_Aint, MPI_AINT, -2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe);
    SCALAR(MPI_Offset, MPI_OFFSET, 0x100000000ll, 0, 0, 0, 0x01, 0, 0, 0, 0);
    SCALAR(MPI_Count, MPI_COUNT, 7, 0, 0, 0, 0, 0, 0, 0, 7);
    SCALAR(float _Complex, MPI_C_FLOAT_COMPLEX, 1.0f + 2.0f * I, 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0);
    SCALAR(double _Complex, MPI_C_DOUBLE_COMPLEX, -1.0 + 0.5 * I, 0xbf, 0xf0, 0, 0, 0, 0, 0, 0,
           0x3f, 0xe0, 0, 0, 0, 0, 0, 0);

    if (!LD_OK) {
        /* a long double format external32 cannot be converted from: refused cleanly */
        long double x = 1;
        unsigned char b[16];
        MPI_Aint pos = 0;
        CHECK_ERR(MPI_Pack_external(ext32, &x, 1, MPI_LONG_DOUBLE, b, 16, &pos), MPI_ERR_TYPE);
    } else {
        /* long double: IEEE binary128 */
        static const unsigned char one[16] = {0x3f, 0xff}, m25[16] = {0xc0, 0x00, 0x40};
        long double in = 1.0L, out = 0;
        check_bytes(&in, MPI_LONG_DOUBLE, "long double 1.0", one, 16, &out);
        CHECK(out == 1.0L, "long double 1.0 came back as %Lg", out);
        in = -2.5L;
        check_bytes(&in, MPI_LONG_DOUBLE, "long double -2.5", m25, 16, &out);
        CHECK(out == -2.5L, "long double -2.5 came back as %Lg", out);
        long double _Complex z = 1.0L - 2.5L * I, zo = 0;
        unsigned char zb[32] = {0x3f, 0xff};
        memcpy(zb + 16, m25, 16);
        check_bytes(&z, MPI_C_LONG_DOUBLE_COMPLEX, "long double complex", zb, 32, &zo);
        CHECK(zo == z, "long double complex round trip");
    }

    /* pair types: value then index, no padding */
    {
        struct {
            float v;
            int i;
        } in = {1.0f, 7}, out = {0, 0};
        static const unsigned char want[] = {0x3f, 0x80, 0, 0, 0, 0, 0, 7};
        check_bytes(&in, MPI_FLOAT_INT, "MPI_FLOAT_INT", want, 8, &out);
        CHECK(out.v == 1.0f && out.i == 7, "MPI_FLOAT_INT round trip");
    }
    {
        struct {
            double v;
            int i;
        } in = {1.0, -1}, out = {0, 0};
        static const unsigned char want[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
        check_bytes(&in, MPI_DOUBLE_INT, "MPI_DOUBLE_INT", want, 12, &out);
        CHECK(out.v == 1.0 && out.i == -1, "MPI_DOUBLE_INT round trip");
    }
    {
        struct {
            long v;
            int i;
        } in = {-5, 3}, out = {0, 0};
        static const unsigned char want[] = {0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 3};
        check_bytes(&in, MPI_LONG_INT, "MPI_LONG_INT", want, 8, &out);
        CHECK(out.v == -5 && out.i == 3, "MPI_LONG_INT round trip");
    }
    {
        int in[2] = {1, 2}, out[2] = {0, 0};
        static const unsigned char want[] = {0, 0, 0, 1, 0, 0, 0, 2};
        check_bytes(in, MPI_2INT, "MPI_2INT", want, 8, out);
        CHECK(out[0] == 1 && out[1] == 2, "MPI_2INT round trip");
    }
    {
        struct {
            short v;
            int i;
        } in = {-2, 0x01020304}, out = {0, 0};
        static const unsigned char want[] = {0xff, 0xfe, 1, 2, 3, 4};
        check_bytes(&in, MPI_SHORT_INT, "MPI_SHORT_INT", want, 6, &out);
        CHECK(out.v == -2 && out.i == 0x01020304, "MPI_SHORT_INT round trip");
    }
    if (LD_OK) {
        struct {
            long double v;
            int i;
        } in = {1.0L, 9}, out = {0, 0};
        static const unsigned char want[20] = {0x3f, 0xff, [19] = 9};
        check_bytes(&in, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", want, 20, &out);
        CHECK(out.v == 1.0L && out.i == 9, "MPI_LONG_DOUBLE_INT round trip");
    }
}

/* Long double values that must come back bit for bit, and (x87 only) their binary128 bytes. */
static void long_double_specials(void) {
    if (!LD_OK) return;
    long double v[10];
    memset(v, 0, sizeof(v)); /* the padding of the x87 values, for the bytes compared below */
    v[0] = 0.0L;
    v[1] = -0.0L;
    v[2] = (long double)INFINITY;
    v[3] = -(long double)INFINITY;
    v[4] = (long double)NAN;
    v[5] = LDBL_TRUE_MIN;
    v[6] = LDBL_MAX;
    v[7] = -LDBL_MIN;
    v[8] = 1.0L / 3;
    v[9] = -LDBL_TRUE_MIN * 12345;
    unsigned char b[10 * 16];
    long double out[10];
    MPI_Aint pos = 0;
    CHECK_RC(MPI_Pack_external(ext32, v, 10, MPI_LONG_DOUBLE, b, sizeof(b), &pos));
    CHECK(pos == 160, "10 long doubles packed into %ld bytes", (long)pos);
    memset(out, 0x33, sizeof(out));
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, b, sizeof(b), &pos, out, 10, MPI_LONG_DOUBLE));
    for (int i = 0; i < 10; i++)
        CHECK(same_ld(v[i], out[i]), "long double special %d (%Lg) came back as %Lg", i, v[i],
              out[i]);
    CHECK(isnan(out[4]) && signbit(out[1]) && !signbit(out[0]) && isinf(out[3]) && out[3] < 0,
          "special values keep their kind");

    if (LDBL_MANT_DIG != 64) return;
    /* binary128 bytes: infinity, the least x87 denormal (2^-16445 is bit 49 of the fraction),
     * the greatest finite value (63 fraction bits of ones) */
    static const unsigned char inf[16] = {0x7f, 0xff}, ninf[16] = {0xff, 0xff},
                               tmin[16] = {[9] = 0x02}, max[16] = {0x7f, 0xfe, 0xff, 0xff, 0xff,
                                                                   0xff, 0xff, 0xff, 0xff, 0xfe},
                               mzero[16] = {0x80};
    char got[200];
    hex(got, b + 2 * 16, 16);
    CHECK(!memcmp(b + 2 * 16, inf, 16), "+inf as %s", got);
    hex(got, b + 3 * 16, 16);
    CHECK(!memcmp(b + 3 * 16, ninf, 16), "-inf as %s", got);
    hex(got, b + 5 * 16, 16);
    CHECK(!memcmp(b + 5 * 16, tmin, 16), "least denormal as %s", got);
    hex(got, b + 6 * 16, 16);
    CHECK(!memcmp(b + 6 * 16, max, 16), "LDBL_MAX as %s", got);
    hex(got, b + 1 * 16, 16);
    CHECK(!memcmp(b + 1 * 16, mzero, 16), "-0 as %s", got);
    CHECK(b[4 * 16] == 0x7f && b[4 * 16 + 1] == 0xff && (b[4 * 16 + 2] & 0x80),
          "NaN is a quiet binary128 NaN");

    /* x87 encodings arithmetic never makes: a pseudo-denormal (exponent 0, integer bit set) is
     * the least normal number; an unnormal (integer bit clear) is an invalid operand, a NaN */
    unsigned char x87[2][16] = {{[7] = 0x80}, {[7] = 0x40, [8] = 0x00, [9] = 0x40}};
    static const unsigned char least_normal[16] = {0x00, 0x01}, qnan[16] = {0x7f, 0xff, 0x80};
    unsigned char w[32];
    pos = 0;
    CHECK_RC(MPI_Pack_external(ext32, x87, 2, MPI_LONG_DOUBLE, w, sizeof(w), &pos));
    hex(got, w, 16);
    CHECK(!memcmp(w, least_normal, 16), "pseudo-denormal as %s", got);
    hex(got, w + 16, 16);
    CHECK(!memcmp(w + 16, qnan, 16), "unnormal as %s", got);

    /* binary128 values with more precision than x87 holds: the fraction is cut to 63 bits; a
     * NaN whose payload is only in the bits cut stays a NaN; a denormal below the least x87
     * denormal becomes zero */
    unsigned char q[3 * 16] = {0x3f,        0xff,        [15] = 0x01, /* 1 + 2^-112 */
                               [16] = 0x7f, [17] = 0xff, [31] = 0x01, /* NaN, payload 1 */
                               [32] = 0x80, [47] = 0x01};             /* -2^-16494 */
    long double r[3];
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, q, sizeof(q), &pos, r, 3, MPI_LONG_DOUBLE));
    CHECK(r[0] == 1.0L, "1 + 2^-112 unpacked as %La", r[0]);
    CHECK(isnan(r[1]), "NaN with a low payload unpacked as %Lg", r[1]);
    CHECK(r[2] == 0 && signbit(r[2]), "-2^-16494 unpacked as %Lg", r[2]);
}

/* Pack (buf, count, t) and unpack it into out: size, position, and the bytes' length. */
static void round_trip(const void *buf, int count, MPI_Datatype t, void *out, MPI_Aint want_size,
                       const char *name) {
    MPI_Aint size = -1, pos = 0;
    CHECK_RC(MPI_Pack_external_size(ext32, count, t, &size));
    CHECK(size == want_size, "%s: Pack_external_size %ld, expected %ld", name, (long)size,
          (long)want_size);
    unsigned char *p = malloc((size_t)size + 1);
    CHECK(p != NULL, "out of memory");
    CHECK_RC(MPI_Pack_external(ext32, buf, count, t, p, size, &pos));
    CHECK(pos == size, "%s: position %ld after packing %ld bytes", name, (long)pos, (long)size);
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, p, size, &pos, out, count, t));
    CHECK(pos == size, "%s: position %ld after unpacking", name, (long)pos);
    free(p);
}

struct padded {
    char c;
    double d;
    short s;
    long l;
};

struct mixed {
    long double ld;
    unsigned long ul;
    _Bool b;
    float _Complex fc;
    int16_t i16;
    uint64_t u64;
    wchar_t w;
    signed char sc[3];
    struct {
        long double v;
        int i;
    } ldi;
};

static void derived_types(void) {
    /* vector: 5 blocks of 2 ints, stride 3 */
    {
        MPI_Datatype t;
        MPI_Type_vector(5, 2, 3, MPI_INT, &t);
        MPI_Type_commit(&t);
        int a[15], b[15];
        for (int i = 0; i < 15; i++) a[i] = i * 1000003 - 7000000, b[i] = 0;
        round_trip(a, 1, t, b, 40, "vector");
        for (int i = 0; i < 15; i++)
            CHECK(b[i] == (i % 3 == 2 ? 0 : a[i]), "vector element %d: %d", i, b[i]);
        /* the first packed int is a[0] big-endian */
        unsigned char p[40];
        MPI_Aint pos = 0;
        CHECK_RC(MPI_Pack_external(ext32, a, 1, t, p, 40, &pos));
        uint32_t u = (uint32_t)a[3];
        CHECK(p[8] == u >> 24 && p[9] == (u >> 16 & 0xff) && p[10] == (u >> 8 & 0xff) &&
                  p[11] == (u & 0xff),
              "third packed int is a[3]");
        MPI_Type_free(&t);
    }
    /* indexed doubles */
    {
        MPI_Datatype t;
        MPI_Type_indexed(3, (int[]){1, 3, 2}, (int[]){0, 4, 9}, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        double a[12], b[12];
        for (int i = 0; i < 12; i++) a[i] = i * 1.5 - 4, b[i] = -99;
        round_trip(a, 1, t, b, 48, "indexed");
        for (int i = 0; i < 12; i++) {
            int in = i == 0 || (i >= 4 && i < 7) || (i >= 9 && i < 11);
            CHECK(b[i] == (in ? a[i] : -99), "indexed element %d: %g", i, b[i]);
        }
        MPI_Type_free(&t);
    }
    /* struct with padding: 1 + 8 + 2 + 4 external bytes an element */
    {
        MPI_Datatype t;
        MPI_Type_create_struct(4, (int[]){1, 1, 1, 1},
                               (MPI_Aint[]){offsetof(struct padded, c), offsetof(struct padded, d),
                                            offsetof(struct padded, s), offsetof(struct padded, l)},
                               (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_LONG}, &t);
        MPI_Type_commit(&t);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(ext == sizeof(struct padded), "struct extent %ld", (long)ext);
        struct padded a[7], b[7];
        memset(b, 0, sizeof(b));
        for (int i = 0; i < 7; i++)
            a[i] = (struct padded){(char)('a' + i), i / 7.0, (short)(-300 * i), -100000L * i};
        round_trip(a, 7, t, b, 7 * 15, "padded struct");
        for (int i = 0; i < 7; i++)
            CHECK(b[i].c == a[i].c && b[i].d == a[i].d && b[i].s == a[i].s && b[i].l == a[i].l,
                  "padded struct element %d", i);
        MPI_Type_free(&t);
    }
    /* resized: the first int of each {int, float} */
    {
        struct xy {
            int x;
            float y;
        } a[6], b[6];
        MPI_Datatype t;
        MPI_Type_create_resized(MPI_INT, 0, sizeof(struct xy), &t);
        MPI_Type_commit(&t);
        for (int i = 0; i < 6; i++) a[i] = (struct xy){i - 3, 0.5f * i}, b[i] = (struct xy){0, -1};
        round_trip(a, 6, t, b, 24, "resized");
        for (int i = 0; i < 6; i++)
            CHECK(b[i].x == a[i].x && b[i].y == -1, "resized element %d", i);
        MPI_Type_free(&t);
    }
    /* a struct of mixed types, many elements, so that chunks end inside elements */
    if (LD_OK) {
        MPI_Datatype s, t;
        MPI_Aint base = 0;
        struct mixed probe;
        MPI_Aint d[9];
        MPI_Get_address(&probe, &base);
        MPI_Get_address(&probe.ld, &d[0]);
        MPI_Get_address(&probe.ul, &d[1]);
        MPI_Get_address(&probe.b, &d[2]);
        MPI_Get_address(&probe.fc, &d[3]);
        MPI_Get_address(&probe.i16, &d[4]);
        MPI_Get_address(&probe.u64, &d[5]);
        MPI_Get_address(&probe.w, &d[6]);
        MPI_Get_address(&probe.sc, &d[7]);
        MPI_Get_address(&probe.ldi, &d[8]);
        for (int i = 0; i < 9; i++) d[i] -= base;
        MPI_Type_create_struct(9, (int[]){1, 1, 1, 1, 1, 1, 1, 3, 1}, d,
                               (MPI_Datatype[]){MPI_LONG_DOUBLE, MPI_UNSIGNED_LONG, MPI_C_BOOL,
                                                MPI_C_FLOAT_COMPLEX, MPI_INT16_T, MPI_UINT64_T,
                                                MPI_WCHAR, MPI_SIGNED_CHAR, MPI_LONG_DOUBLE_INT},
                               &s);
        /* the C struct's size, whatever alignment the MPI struct's extent was rounded to */
        MPI_Type_create_resized(s, 0, sizeof(struct mixed), &t);
        MPI_Type_free(&s);
        MPI_Type_commit(&t);
        int n = 1000;
        MPI_Aint one = 16 + 4 + 1 + 8 + 2 + 8 + 4 + 3 + 20;
        struct mixed *a = calloc((size_t)n, sizeof(*a)), *b = calloc((size_t)n, sizeof(*b));
        CHECK(a && b, "out of memory");
        for (int i = 0; i < n; i++) {
            a[i].ld = i / 3.0L - 100;
            a[i].ul = 4000000000ul - (unsigned long)i;
            a[i].b = i % 3 == 0;
            a[i].fc = (float)i + (float)-i * I;
            a[i].i16 = (int16_t)(i * 37 - 20000);
            a[i].u64 = 0xf000000000000000ull + (uint64_t)i;
            a[i].w = (wchar_t)(0x10000 + i);
            a[i].sc[0] = (signed char)-i, a[i].sc[1] = (signed char)i, a[i].sc[2] = 5;
            a[i].ldi.v = -(long double)i * 1e300L;
            a[i].ldi.i = i;
        }
        round_trip(a, n, t, b, one * n, "mixed struct");
        for (int i = 0; i < n; i++)
            CHECK(b[i].ld == a[i].ld && b[i].ul == a[i].ul && b[i].b == a[i].b &&
                      b[i].fc == a[i].fc && b[i].i16 == a[i].i16 && b[i].u64 == a[i].u64 &&
                      b[i].w == a[i].w && !memcmp(b[i].sc, a[i].sc, 3) &&
                      b[i].ldi.v == a[i].ldi.v && b[i].ldi.i == a[i].ldi.i,
                  "mixed struct element %d", i);
        /* the same through a vector of every other element */
        MPI_Datatype v;
        MPI_Type_create_resized(t, 0, 2 * (MPI_Aint)sizeof(struct mixed), &v);
        MPI_Type_commit(&v);
        memset(b, 0, (size_t)n * sizeof(*b));
        round_trip(a, n / 2, v, b, one * (n / 2), "every other mixed struct");
        for (int i = 0; i < n; i++)
            CHECK(i % 2 ? b[i].ul == 0 && b[i].ldi.i == 0
                        : b[i].ld == a[i].ld && b[i].ul == a[i].ul && b[i].w == a[i].w &&
                              b[i].ldi.v == a[i].ldi.v,
                  "every other mixed struct element %d", i);
        free(a);
        free(b);
        MPI_Type_free(&t);
        MPI_Type_free(&v);
    }
    /* several packs in a row with a running position, unpacked in order */
    {
        int i3[3] = {1, -2, 3}, o3[3];
        double d2[2] = {2.5, -8}, o2[2];
        short s = -9, os;
        unsigned char p[64];
        MPI_Aint pos = 0;
        CHECK_RC(MPI_Pack_external(ext32, i3, 3, MPI_INT, p, sizeof(p), &pos));
        CHECK_RC(MPI_Pack_external(ext32, d2, 2, MPI_DOUBLE, p, sizeof(p), &pos));
        CHECK_RC(MPI_Pack_external(ext32, &s, 1, MPI_SHORT, p, sizeof(p), &pos));
        CHECK(pos == 12 + 16 + 2, "running position %ld", (long)pos);
        CHECK(p[12] == 0x40 && p[13] == 0x04 && p[28] == 0xff && p[29] == 0xf7, "packed order");
        MPI_Aint end = pos;
        pos = 0;
        CHECK_RC(MPI_Unpack_external(ext32, p, end, &pos, o3, 3, MPI_INT));
        CHECK_RC(MPI_Unpack_external(ext32, p, end, &pos, o2, 2, MPI_DOUBLE));
        CHECK_RC(MPI_Unpack_external(ext32, p, end, &pos, &os, 1, MPI_SHORT));
        CHECK(pos == end && o3[0] == 1 && o3[1] == -2 && o3[2] == 3 && o2[0] == 2.5 &&
                  o2[1] == -8 && os == -9,
              "running unpack");
    }
}

static void conversions(void) {
    unsigned char p[16];
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Aint pos;
    if (sizeof(long) > 4) {
        long big[2] = {1, (long)1 << 40};
        pos = 0;
        int rc = MPI_Pack_external(ext32, big, 2, MPI_LONG, p, sizeof(p), &pos);
        CHECK(tu_error(rc, msg) == MPI_ERR_CONVERSION, "long 2^40: rc %d (%s)", rc, msg);
        CHECK(strstr(msg, "1099511627776") && strstr(msg, "MPI_LONG"),
              "the message names the value and the type: %s", msg);
        CHECK(pos == 0, "position moved on a failed pack: %ld", (long)pos);
        long small = -0x7fffffffL - 2;
        CHECK_ERR(MPI_Pack_external(ext32, &small, 1, MPI_LONG, p, sizeof(p), &pos),
                  MPI_ERR_CONVERSION);
        unsigned long ubig = 0x100000000ul;
        rc = MPI_Pack_external(ext32, &ubig, 1, MPI_UNSIGNED_LONG, p, sizeof(p), &pos);
        CHECK(tu_error(rc, msg) == MPI_ERR_CONVERSION, "unsigned long 2^32: rc %d", rc);
        CHECK(strstr(msg, "4294967296") && strstr(msg, "MPI_UNSIGNED_LONG"), "message: %s", msg);
        /* inside a derived type too */
        MPI_Datatype t;
        MPI_Type_contiguous(3, MPI_LONG_INT, &t);
        MPI_Type_commit(&t);
        struct {
            long v;
            int i;
        } li[3] = {{1, 1}, {2, 2}, {-((long)1 << 33), 3}};
        unsigned char q[32];
        CHECK_ERR(MPI_Pack_external(ext32, li, 1, t, q, sizeof(q), &pos), MPI_ERR_CONVERSION);
        MPI_Type_free(&t);
    }
    /* unpacking extends: signed values by their sign, unsigned ones with zeros */
    static const unsigned char neg[4] = {0xff, 0xff, 0xff, 0xfb}, all[4] = {0xff, 0xff, 0xff, 0xff};
    long l = 0;
    unsigned long ul = 0;
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, neg, 4, &pos, &l, 1, MPI_LONG));
    CHECK(l == -5, "FF FF FF FB unpacked as long %ld", l);
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, all, 4, &pos, &ul, 1, MPI_UNSIGNED_LONG));
    CHECK(ul == 0xfffffffful, "FF FF FF FF unpacked as unsigned long %lu", ul);
    /* a bool byte other than 0 and 1 is true */
    static const unsigned char two = 2;
    _Bool bo = 0;
    pos = 0;
    CHECK_RC(MPI_Unpack_external(ext32, &two, 1, &pos, &bo, 1, MPI_C_BOOL));
    unsigned char braw;
    memcpy(&braw, &bo, 1);
    CHECK(braw == 1, "bool byte 2 unpacked as %d", braw);
}

static void bad_arguments(void) {
    int v[4] = {1, 2, 3, 4}, o[4];
    unsigned char p[32];
    MPI_Aint pos = 0, size;
    /* truncation: 16 bytes into 15, or at position 4 of 19 */
    CHECK_ERR(MPI_Pack_external(ext32, v, 4, MPI_INT, p, 15, &pos), MPI_ERR_TRUNCATE);
    pos = 4;
    CHECK_ERR(MPI_Pack_external(ext32, v, 4, MPI_INT, p, 19, &pos), MPI_ERR_TRUNCATE);
    CHECK(pos == 4, "position moved on truncation");
    pos = 20;
    CHECK_ERR(MPI_Pack_external(ext32, v, 1, MPI_INT, p, 19, &pos), MPI_ERR_TRUNCATE);
    pos = 0;
    CHECK_RC(MPI_Pack_external(ext32, v, 4, MPI_INT, p, 16, &pos));
    pos = 0;
    CHECK_ERR(MPI_Unpack_external(ext32, p, 15, &pos, o, 4, MPI_INT), MPI_ERR_TRUNCATE);
    pos = 2;
    CHECK_ERR(MPI_Unpack_external(ext32, p, 16, &pos, o, 4, MPI_INT), MPI_ERR_TRUNCATE);
    pos = 17;
    CHECK_ERR(MPI_Unpack_external(ext32, p, 16, &pos, o, 0, MPI_INT), MPI_ERR_TRUNCATE);
    /* data representations */
    const char *reps[] = {"native", "bogus", "internal", "external32 ", "EXTERNAL32", ""};
    for (int i = 0; i < 6; i++) {
        pos = 0;
        CHECK_ERR(MPI_Pack_external(reps[i], v, 1, MPI_INT, p, 32, &pos),
                  MPI_ERR_UNSUPPORTED_DATAREP);
        CHECK_ERR(MPI_Unpack_external(reps[i], p, 32, &pos, o, 1, MPI_INT),
                  MPI_ERR_UNSUPPORTED_DATAREP);
        CHECK_ERR(MPI_Pack_external_size(reps[i], 1, MPI_INT, &size), MPI_ERR_UNSUPPORTED_DATAREP);
    }
    pos = 0;
    CHECK_ERR(MPI_Pack_external(NULL, v, 1, MPI_INT, p, 32, &pos), MPI_ERR_ARG);
    CHECK_ERR(MPI_Unpack_external(NULL, p, 32, &pos, o, 1, MPI_INT), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack_external_size(NULL, 1, MPI_INT, &size), MPI_ERR_ARG);
    /* counts */
    CHECK_ERR(MPI_Pack_external(ext32, v, -1, MPI_INT, p, 32, &pos), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Unpack_external(ext32, p, 32, &pos, o, -1, MPI_INT), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Pack_external_size(ext32, -1, MPI_INT, &size), MPI_ERR_COUNT);
    /* types: null, uncommitted, freed */
    MPI_Datatype unc, freed;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    MPI_Type_contiguous(2, MPI_INT, &freed);
    MPI_Type_commit(&freed);
    MPI_Datatype gone = freed;
    MPI_Type_free(&freed);
    MPI_Datatype bad[3] = {MPI_DATATYPE_NULL, unc, gone};
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(MPI_Pack_external(ext32, v, 1, bad[i], p, 32, &pos), MPI_ERR_TYPE);
        CHECK_ERR(MPI_Unpack_external(ext32, p, 32, &pos, o, 1, bad[i]), MPI_ERR_TYPE);
        CHECK_ERR(MPI_Pack_external_size(ext32, 1, bad[i], &size), MPI_ERR_TYPE);
    }
    MPI_Type_free(&unc);
    /* other arguments */
    CHECK_ERR(MPI_Pack_external(ext32, v, 1, MPI_INT, p, 32, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Unpack_external(ext32, p, 32, NULL, o, 1, MPI_INT), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack_external_size(ext32, 1, MPI_INT, NULL), MPI_ERR_ARG);
    pos = 0;
    CHECK_ERR(MPI_Pack_external(ext32, v, 1, MPI_INT, p, -1, &pos), MPI_ERR_ARG);
    pos = -1;
    CHECK_ERR(MPI_Pack_external(ext32, v, 1, MPI_INT, p, 32, &pos), MPI_ERR_ARG);
    CHECK_ERR(MPI_Unpack_external(ext32, p, 32, &pos, o, 1, MPI_INT), MPI_ERR_ARG);
    pos = 0;
    CHECK_ERR(MPI_Pack_external(ext32, v, 2, MPI_INT, (char *)v + 4, 8, &pos), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack_external(ext32, v, 1, MPI_INT, NULL, 32, &pos), MPI_ERR_BUFFER);
    /* count 0: nothing moves, no buffers needed, MPI_DATATYPE_NULL allowed */
    pos = 3;
    CHECK_RC(MPI_Pack_external(ext32, NULL, 0, MPI_INT, NULL, 3, &pos));
    CHECK_RC(MPI_Unpack_external(ext32, NULL, 3, &pos, NULL, 0, MPI_DOUBLE));
    CHECK_RC(MPI_Pack_external(ext32, NULL, 0, MPI_DATATYPE_NULL, NULL, 3, &pos));
    CHECK(pos == 3, "count 0 moved the position to %ld", (long)pos);
    CHECK_RC(MPI_Pack_external_size(ext32, 0, MPI_LONG_DOUBLE, &size));
    CHECK(size == 0, "Pack_external_size of nothing is %ld", (long)size);
    /* the library still works */
    pos = 0;
    CHECK_RC(MPI_Pack_external(ext32, v, 4, MPI_INT, p, 32, &pos));
    CHECK(pos == 16 && p[15] == 4, "pack after errors");
}

static void large(void) {
    int n = 1000000;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    CHECK(a && b, "out of memory");
    for (int i = 0; i < n; i++) a[i] = i * 0.25 - 12345.5, b[i] = 0;
    round_trip(a, n, MPI_DOUBLE, b, 8 * (MPI_Aint)n, "a million doubles");
    for (int i = 0; i < n; i++) CHECK(a[i] == b[i], "double %d: %g, expected %g", i, b[i], a[i]);
    /* strided: every other double of the first half of a, through the chunked path */
    MPI_Datatype t;
    MPI_Type_vector(n / 2, 1, 2, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    memset(b, 0, sizeof(double) * (size_t)n);
    round_trip(a, 1, t, b, 8 * (MPI_Aint)(n / 2), "half a million strided doubles");
    for (int i = 0; i < n; i++) CHECK(b[i] == (i % 2 ? 0 : a[i]), "strided double %d: %g", i, b[i]);
    MPI_Type_free(&t);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    basic_types();
    long_double_specials();
    derived_types();
    conversions();
    bad_arguments();
    large();
    MPI_Finalize();
    return 0;
}
