/* The external32 data representation (MPI 3.1 section 13.5.2) behind MPI_Pack_external and
 * MPI_Unpack_external: big-endian integers of fixed sizes, IEEE floating point, long double
 * as IEEE binary128. The typed data is gathered into its native packed form (co_dt_pack) in
 * chunks, and each chunk is converted element by element following the type signature; the
 * reverse converts into native packed form and scatters it (co_dt_unpack). A contiguous type
 * is its own native packed form: it is converted straight from (or into) the user's buffer,
 * without the chunk buffer. */
#include "dtype.h"

#include <float.h>
#include <string.h>
#include <wchar.h>

/* How a basic type is written: `parts` parts (2 for complex types) of `nat` bytes natively
 * and `ext` bytes in external32. */
enum ext_kind {
    EK_NONE = 0, /* external32 defines no representation for it */
    EK_COPY1,    /* one byte as it is */
    EK_BOOL,     /* one byte, 0 or 1 */
    EK_SINT,     /* two's complement, sign-extended or checked when the sizes differ */
    EK_UINT,     /* unsigned, zero-extended or checked */
    EK_IEEE,     /* IEEE binary32/binary64, native size equals external size */
    EK_LDOUBLE,  /* IEEE binary128 */
};

typedef struct ext_info {
    uint8_t kind;
    uint8_t ext;
    uint8_t parts;
    uint8_t nat;
} ext_info;

_Static_assert(FLT_RADIX == 2 && FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53 && sizeof(float) == 4 &&
                   sizeof(double) == 8,
               "external32 conversion assumes IEEE binary32 float and binary64 double");

/* long double: the x87 80-bit format (little-endian, explicit integer bit) or binary128
 * itself; any other format (binary64, double-double) is refused as MPI_ERR_TYPE. */
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384 && defined(__BYTE_ORDER__) &&                     \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define EXT_LD_X87  1
#define EXT_LD_KIND EK_LDOUBLE
#elif LDBL_MANT_DIG == 113 && LDBL_MAX_EXP == 16384 && defined(__BYTE_ORDER__)
#define EXT_LD_BINARY128 1
#define EXT_LD_KIND      EK_LDOUBLE
#else
#define EXT_LD_KIND EK_NONE
#endif

/* MPI 3.1 table 13.2, by basic type, with the native C type of each part (as in dtype.c's
 * table of basic types). The pair types appear in signatures as their two members, never as
 * themselves. */
static ext_info ext_table(int b) {
#define E(kind, ext, parts, T) ((ext_info){kind, ext, parts, sizeof(T)})
    switch (b) {
    case CO_B_CHAR:
    case CO_B_SCHAR:
    case CO_B_UCHAR:
    case CO_B_BYTE:
    case CO_B_PACKED:
    case CO_B_INT8:
    case CO_B_UINT8: return E(EK_COPY1, 1, 1, char);
    case CO_B_BOOL: return E(EK_BOOL, 1, 1, _Bool);
    case CO_B_SHORT: return E(EK_SINT, 2, 1, short);
    case CO_B_INT16: return E(EK_SINT, 2, 1, int16_t);
    case CO_B_USHORT: return E(EK_UINT, 2, 1, unsigned short);
    case CO_B_UINT16: return E(EK_UINT, 2, 1, uint16_t);
    case CO_B_INT: return E(EK_SINT, 4, 1, int);
    case CO_B_INT32: return E(EK_SINT, 4, 1, int32_t);
    case CO_B_LONG: return E(EK_SINT, 4, 1, long);
    case CO_B_UINT: return E(EK_UINT, 4, 1, unsigned);
    case CO_B_UINT32: return E(EK_UINT, 4, 1, uint32_t);
    case CO_B_ULONG: return E(EK_UINT, 4, 1, unsigned long);
    case CO_B_WCHAR: return E(WCHAR_MIN < 0 ? EK_SINT : EK_UINT, 4, 1, wchar_t);
    case CO_B_LLONG: return E(EK_SINT, 8, 1, long long);
    case CO_B_INT64: return E(EK_SINT, 8, 1, int64_t);
    case CO_B_AINT: return E(EK_SINT, 8, 1, MPI_Aint);
    case CO_B_OFFSET: return E(EK_SINT, 8, 1, MPI_Offset);
    case CO_B_COUNT: return E(EK_SINT, 8, 1, MPI_Count);
    case CO_B_ULLONG: return E(EK_UINT, 8, 1, unsigned long long);
    case CO_B_UINT64: return E(EK_UINT, 8, 1, uint64_t);
    case CO_B_FLOAT: return E(EK_IEEE, 4, 1, float);
    case CO_B_DOUBLE: return E(EK_IEEE, 8, 1, double);
    case CO_B_LDOUBLE: return E(EXT_LD_KIND, 16, 1, long double);
    case CO_B_CFLOAT: return E(EK_IEEE, 4, 2, float);
    case CO_B_CDOUBLE: return E(EK_IEEE, 8, 2, double);
    case CO_B_CLDOUBLE: return E(EXT_LD_KIND, 16, 2, long double);
    default: return E(EK_NONE, 0, 1, char);
    }
#undef E
}

/* The conversion of basic type b, or kind EK_NONE when there is none on this machine. */
static inline ext_info ext_of(int b) {
    ext_info e = ext_table(b), none = {EK_NONE, 0, 1, 1};
    if (e.kind == EK_NONE) return none;
    size_t ns = e.nat;
    /* the integer and IEEE paths load native values of 1, 2, 4 or 8 bytes */
    if ((e.kind == EK_SINT || e.kind == EK_UINT) && ns != 1 && ns != 2 && ns != 4 && ns != 8)
        return none;
    if (e.kind == EK_IEEE && ns != e.ext) return none;
    if ((e.kind == EK_COPY1 || e.kind == EK_BOOL) && ns != 1) return none;
    return e;
}

size_t co_ext_basic_size(int basic) {
    ext_info e = ext_of(basic);
    /* the native packed stream must hold what this file's table says it holds */
    if ((size_t)e.nat * e.parts != co_basic_size(basic)) return 0;
    return (size_t)e.ext * e.parts;
}

int co_ext_size(const co_dtype *dt, size_t *bytes, co_ext_fail *fail) {
    size_t total = 0;
    for (size_t i = 0; i < dt->nsig; i++) {
        size_t es = co_ext_basic_size(dt->sig[i].basic), part;
        if (!es) {
            fail->basic = dt->sig[i].basic;
            return MPI_ERR_TYPE;
        }
        if (__builtin_mul_overflow(es, dt->sig[i].count, &part) ||
            __builtin_add_overflow(total, part, &total) || total > (size_t)PTRDIFF_MAX) {
            fail->basic = CO_B_NONE;
            return MPI_ERR_COUNT;
        }
    }
    *bytes = total;
    return MPI_SUCCESS;
}

/* ---- Scalars --------------------------------------------------------------------------------
 */

static inline void put_be(unsigned char *p, uint64_t v, size_t n) {
    for (size_t i = n; i-- > 0; v >>= 8) p[i] = (unsigned char)v;
}

static inline uint64_t get_be(const unsigned char *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

/* A native unsigned integer of n bytes (1, 2, 4 or 8), and a signed one sign-extended. */
static inline uint64_t load_u(const unsigned char *p, size_t n) {
    switch (n) {
    case 1: return *p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static inline int64_t load_s(const unsigned char *p, size_t n) {
    switch (n) {
    case 1: return (int8_t)*p;
    case 2: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

/* Store the low n bytes of v as a native integer of n bytes. */
static inline void store_n(unsigned char *p, uint64_t v, size_t n) {
    switch (n) {
    case 1: *p = (unsigned char)v; break;
    case 2: {
        uint16_t w = (uint16_t)v;
        memcpy(p, &w, 2);
        break;
    }
    case 4: {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

/* Native to big-endian order and back: the same operation both ways. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAP16(x) __builtin_bswap16(x)
#define SWAP32(x) __builtin_bswap32(x)
#define SWAP64(x) __builtin_bswap64(x)
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SWAP16(x) (x)
#define SWAP32(x) (x)
#define SWAP64(x) (x)
#else
#error "external32 conversion needs the byte order (__BYTE_ORDER__)"
#endif

#define SWAP_LOOP(T, SWAP)                                                                         \
    for (size_t i = 0; i < m; i++) {                                                               \
        T v;                                                                                       \
        memcpy(&v, in + i * sizeof(T), sizeof(T));                                                 \
        v = SWAP(v);                                                                               \
        memcpy(out + i * sizeof(T), &v, sizeof(T));                                                \
    }

/* m values of `size` bytes between native and big-endian order. */
static void swap_be(const unsigned char *in, unsigned char *out, size_t m, size_t size) {
    switch (size) {
    case 1: memcpy(out, in, m); break;
    case 2: SWAP_LOOP(uint16_t, SWAP16) break;
    case 4: SWAP_LOOP(uint32_t, SWAP32) break;
    default: SWAP_LOOP(uint64_t, SWAP64) break;
    }
}

#define TOP_BIT   (UINT64_C(1) << 63)
#define QUIET_BIT (UINT64_C(1) << 62) /* the first fraction bit below the integer bit */
#define FRAC48    ((UINT64_C(1) << 48) - 1)

#if EXT_LD_X87
/* x87 extended to binary128: the same 15-bit exponent and bias. The 63 fraction bits below
 * the explicit integer bit go to the top of the 112-bit fraction; denormals keep their
 * exponent field 0 and scale, since both formats put the binary point at the same place. */
static void ld_out(const unsigned char *in, unsigned char *out) {
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t exp = se & 0x7fff, frac = mant & ~TOP_BIT;
    int integer = (mant & TOP_BIT) != 0;
    if (exp == 0 && integer) {
        exp = 1; /* a pseudo-denormal is the normal number of the least exponent */
    } else if (exp == 0x7fff && !integer) {
        frac = QUIET_BIT; /* pseudo-infinity and pseudo-NaN: invalid operands, as a NaN */
    } else if (exp != 0 && exp != 0x7fff && !integer) {
        exp = 0x7fff; /* an unnormal: an invalid operand too */
        frac = QUIET_BIT;
    }
    uint64_t hi = (uint64_t)(se >> 15) << 63 | exp << 48 | frac >> 15;
    put_be(out, hi, 8);
    put_be(out + 8, frac << 49, 8);
}

/* binary128 to x87: the fraction cut to 63 bits (towards zero), the integer bit set for
 * nonzero exponents. A NaN whose payload lies only in the bits cut off stays a NaN. */
static void ld_in(const unsigned char *in, unsigned char *out) {
    uint64_t hi = get_be(in, 8), lo = get_be(in + 8, 8);
    uint64_t exp = hi >> 48 & 0x7fff, frac = (hi & FRAC48) << 15 | lo >> 49;
    if (exp == 0x7fff && frac == 0 && ((hi & FRAC48) || lo)) frac = QUIET_BIT;
    uint64_t mant = exp ? TOP_BIT | frac : frac;
    uint16_t se = (uint16_t)((hi >> 63) << 15 | exp);
    memset(out, 0, sizeof(long double)); /* the padding after the 10 bytes */
    memcpy(out, &mant, 8);
    memcpy(out + 8, &se, 2);
}
#elif EXT_LD_BINARY128
/* binary128 already: only the byte order. */
static void ld_words(const unsigned char *p, uint64_t *hi, uint64_t *lo) {
    uint64_t w[2];
    memcpy(w, p, 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    *hi = w[1], *lo = w[0];
#else
    *hi = w[0], *lo = w[1];
#endif
}

static void ld_out(const unsigned char *in, unsigned char *out) {
    uint64_t hi, lo;
    ld_words(in, &hi, &lo);
    put_be(out, hi, 8);
    put_be(out + 8, lo, 8);
}

static void ld_in(const unsigned char *in, unsigned char *out) {
    uint64_t w[2];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w[1] = get_be(in, 8), w[0] = get_be(in + 8, 8);
#else
    w[0] = get_be(in, 8), w[1] = get_be(in + 8, 8);
#endif
    memset(out, 0, sizeof(long double));
    memcpy(out, w, 16);
}
#endif

/* Whether the signed or unsigned value v fits in n bytes. */
static int fits(uint64_t v, int is_signed, size_t n) {
    if (n >= 8) return 1;
    if (!is_signed) return v >> (8 * n) == 0;
    int64_t s = (int64_t)v, lim = INT64_C(1) << (8 * n - 1);
    return s >= -lim && s < lim;
}

static int conv_fail(co_ext_fail *fail, int b, int is_signed, uint64_t v) {
    fail->basic = b;
    fail->is_signed = is_signed;
    fail->value = v;
    return MPI_ERR_CONVERSION;
}

/* n elements of basic type b from native packed form at `in` to external32 at `out`. */
static inline int conv_out(ext_info e, int b, size_t n, const unsigned char *in, unsigned char *out,
                           co_ext_fail *fail) {
    size_t m = n * e.parts, es = e.ext, ns = e.nat;
    switch (e.kind) {
    case EK_COPY1: memcpy(out, in, m); break;
    case EK_BOOL:
        for (size_t i = 0; i < m; i++) out[i] = in[i] != 0;
        break;
    case EK_IEEE: swap_be(in, out, m, es); break;
    case EK_SINT:
    case EK_UINT: {
        int is_signed = e.kind == EK_SINT;
        if (ns == es) {
            swap_be(in, out, m, es);
            break;
        }
        for (size_t i = 0; i < m; i++) {
            uint64_t v = is_signed ? (uint64_t)load_s(in + i * ns, ns) : load_u(in + i * ns, ns);
            if (!fits(v, is_signed, es)) return conv_fail(fail, b, is_signed, v);
            put_be(out + i * es, v, es);
        }
        break;
    }
#if EXT_LD_X87 || EXT_LD_BINARY128
    case EK_LDOUBLE:
        for (size_t i = 0; i < m; i++) ld_out(in + i * ns, out + i * es);
        break;
#endif
    default: fail->basic = b; return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* n elements of basic type b from external32 at `in` to native packed form at `out`. */
static inline int conv_in(ext_info e, int b, size_t n, const unsigned char *in, unsigned char *out,
                          co_ext_fail *fail) {
    size_t m = n * e.parts, es = e.ext, ns = e.nat;
    switch (e.kind) {
    case EK_COPY1: memcpy(out, in, m); break;
    case EK_BOOL:
        for (size_t i = 0; i < m; i++) out[i] = in[i] != 0;
        break;
    case EK_IEEE: swap_be(in, out, m, es); break;
    case EK_SINT:
    case EK_UINT: {
        int is_signed = e.kind == EK_SINT;
        if (ns == es) {
            swap_be(in, out, m, es);
            break;
        }
        for (size_t i = 0; i < m; i++) {
            uint64_t v = get_be(in + i * es, es);
            if (is_signed && es < 8 && (v >> (8 * es - 1) & 1)) v |= UINT64_MAX << (8 * es);
            if (!fits(v, is_signed, ns)) return conv_fail(fail, b, is_signed, v);
            store_n(out + i * ns, v, ns);
        }
        break;
    }
#if EXT_LD_X87 || EXT_LD_BINARY128
    case EK_LDOUBLE:
        for (size_t i = 0; i < m; i++) ld_in(in + i * es, out + i * ns);
        break;
#endif
    default: fail->basic = b; return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

/* ---- Streams --------------------------------------------------------------------------------
 */

/* Native bytes gathered or scattered at a time for a non-contiguous type: small enough for
 * the stack, large enough that the per-chunk cost of co_dt_pack disappears. */
#define EXT_CHUNK 8192

/* Where the conversion stands in the signature: run `sig`, `done` elements of it converted.
 * It wraps round to run 0 at the end of every element. */
typedef struct sig_pos {
    size_t sig, done;
} sig_pos;

/* Convert whole basic elements, as many as `nat_len` native packed bytes hold: native at
 * `src` to external32 at `dst` when packing, external32 at `src` to native at `dst` when not.
 * Returns the native bytes done and adds the external32 bytes to *ext_done; stops early with
 * *rc set when a conversion fails. */
static size_t convert(const co_dt_sig *sig, size_t nsig, sig_pos *p, size_t nat_len,
                      const unsigned char *src, unsigned char *dst, int packing, size_t *ext_done,
                      int *rc, co_ext_fail *fail) {
    size_t used = 0, made = 0;
    while (used < nat_len) {
        const co_dt_sig *r = &sig[p->sig];
        ext_info e = ext_of(r->basic);
        size_t ns = (size_t)e.nat * e.parts, es = (size_t)e.ext * e.parts;
        size_t n = r->count - p->done;
        if (e.kind == EK_NONE) {
            fail->basic = r->basic;
            *rc = MPI_ERR_TYPE;
            break;
        }
        if (n > (nat_len - used) / ns) n = (nat_len - used) / ns;
        if (n == 0 && p->done < r->count) break; /* a partial element: left for the next chunk */
        *rc = packing ? conv_out(e, r->basic, n, src + used, dst + made, fail)
                      : conv_in(e, r->basic, n, src + made, dst + used, fail);
        if (*rc != MPI_SUCCESS) break;
        used += n * ns;
        made += n * es;
        p->done += n;
        if (p->done == r->count) {
            p->done = 0;
            if (++p->sig == nsig) p->sig = 0;
        }
    }
    *ext_done += made;
    return used;
}

/* The signature to follow: a type of one basic type (any predefined one but the pairs) as
 * one run of all its elements, so that they are converted in one loop, not one by one. */
static const co_dt_sig *stream_sig(const co_dtype *dt, size_t count, co_dt_sig *one, size_t *nsig) {
    *nsig = dt->nsig;
    if (dt->nsig != 1) return dt->sig;
    *one = (co_dt_sig){dt->sig[0].basic, dt->sig[0].count * count};
    return one;
}

int co_ext_pack(const co_dtype *dt, size_t count, const void *buf, void *out, co_ext_fail *fail) {
    unsigned char chunk[EXT_CHUNK];
    size_t total = count * dt->size, off = 0, made = 0, nsig;
    sig_pos p = {0, 0};
    co_dt_sig one;
    const co_dt_sig *sig = stream_sig(dt, count, &one, &nsig);
    int rc = MPI_SUCCESS;
    while (off < total && rc == MPI_SUCCESS) {
        const unsigned char *nat = chunk;
        size_t len = total - off;
        if (dt->contig) {
            nat = (const unsigned char *)((uintptr_t)buf + (uintptr_t)dt->true_lb + off);
        } else {
            if (len > sizeof(chunk)) len = sizeof(chunk);
            len = co_dt_pack(dt, count, buf, off, chunk, len);
        }
        size_t used =
            convert(sig, nsig, &p, len, nat, (unsigned char *)out + made, 1, &made, &rc, fail);
        if (used == 0 && rc == MPI_SUCCESS) return MPI_ERR_INTERN; /* no whole element: a bug */
        off += used;
    }
    return rc;
}

int co_ext_unpack(const co_dtype *dt, size_t count, void *buf, const void *in, co_ext_fail *fail) {
    unsigned char chunk[EXT_CHUNK];
    size_t total = count * dt->size, off = 0, read = 0, nsig;
    sig_pos p = {0, 0};
    co_dt_sig one;
    const co_dt_sig *sig = stream_sig(dt, count, &one, &nsig);
    int rc = MPI_SUCCESS;
    while (off < total && rc == MPI_SUCCESS) {
        unsigned char *nat = chunk;
        size_t len = total - off;
        if (dt->contig)
            nat = (unsigned char *)((uintptr_t)buf + (uintptr_t)dt->true_lb + off);
        else if (len > sizeof(chunk))
            len = sizeof(chunk);
        size_t used =
            convert(sig, nsig, &p, len, (const unsigned char *)in + read, nat, 0, &read, &rc, fail);
        if (used == 0 && rc == MPI_SUCCESS) return MPI_ERR_INTERN;
        /* what was converted lands in place even when a later element failed */
        if (!dt->contig && used) co_dt_unpack(dt, count, buf, off, chunk, used);
        off += used;
    }
    return rc;
}
