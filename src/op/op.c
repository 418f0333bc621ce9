/* Reduction kernels and operator objects. Each (operator, basic type) pair the standard
 * allows has one loop, written as plain element-wise code over restrict pointers so that the
 * compiler vectorises it (a test checks this: tests/check-vectorized.sh). Signed integer
 * arithmetic wraps (the file is compiled with -fwrapv), as every MPI's does in practice. */
#include "op.h"

#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef void (*kernel)(const void *in, void *inout, size_t n);

#define OP_SUM(a, b)  ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))
#define OP_MAX(a, b)  ((a) > (b) ? (a) : (b))
#define OP_MIN(a, b)  ((a) < (b) ? (a) : (b))
#define OP_LAND(a, b) ((a) && (b))
#define OP_LOR(a, b)  ((a) || (b))
#define OP_LXOR(a, b) ((!(a)) != (!(b)))
#define OP_BAND(a, b) ((a) & (b))
#define OP_BOR(a, b)  ((a) | (b))
#define OP_BXOR(a, b) ((a) ^ (b))

/* inout = in op inout; `in` is the operand earlier in rank order. */
#define KERNEL(OPN, TN, T)                                                                         \
    static void k_##OPN##_##TN(const void *in_, void *io_, size_t n) {                             \
        const T *restrict a = in_;                                                                 \
        T *restrict b = io_;                                                                       \
        for (size_t i = 0; i < n; i++) b[i] = (T)OP_##OPN(a[i], b[i]);                             \
    }

#define INT_TYPES(X, OPN)                                                                          \
    X(OPN, schar, signed char)                                                                     \
    X(OPN, uchar, unsigned char)                                                                   \
    X(OPN, short, short)                                                                           \
    X(OPN, ushort, unsigned short)                                                                 \
    X(OPN, int, int)                                                                               \
    X(OPN, uint, unsigned)                                                                         \
    X(OPN, long, long)                                                                             \
    X(OPN, ulong, unsigned long)                                                                   \
    X(OPN, llong, long long)                                                                       \
    X(OPN, ullong, unsigned long long)                                                             \
    X(OPN, i8, int8_t)                                                                             \
    X(OPN, i16, int16_t)                                                                           \
    X(OPN, i32, int32_t)                                                                           \
    X(OPN, i64, int64_t)                                                                           \
    X(OPN, u8, uint8_t)                                                                            \
    X(OPN, u16, uint16_t)                                                                          \
    X(OPN, u32, uint32_t)                                                                          \
    X(OPN, u64, uint64_t)
#define FLOAT_TYPES(X, OPN)                                                                        \
    X(OPN, float, float)                                                                           \
    X(OPN, double, double)                                                                         \
    X(OPN, ldouble, long double)
#define COMPLEX_TYPES(X, OPN)                                                                      \
    X(OPN, cfloat, float _Complex)                                                                 \
    X(OPN, cdouble, double _Complex)                                                               \
    X(OPN, cldouble, long double _Complex)

INT_TYPES(KERNEL, SUM)
FLOAT_TYPES(KERNEL, SUM)
COMPLEX_TYPES(KERNEL, SUM)
INT_TYPES(KERNEL, PROD)
FLOAT_TYPES(KERNEL, PROD)
COMPLEX_TYPES(KERNEL, PROD)
INT_TYPES(KERNEL, MAX)
FLOAT_TYPES(KERNEL, MAX)
INT_TYPES(KERNEL, MIN)
FLOAT_TYPES(KERNEL, MIN)
INT_TYPES(KERNEL, LAND)
INT_TYPES(KERNEL, LOR)
INT_TYPES(KERNEL, LXOR)
INT_TYPES(KERNEL, BAND)
INT_TYPES(KERNEL, BOR)
INT_TYPES(KERNEL, BXOR)
KERNEL(LAND, bool, bool)
KERNEL(LOR, bool, bool)
KERNEL(LXOR, bool, bool)

/* MAXLOC/MINLOC on the pair types: the better value wins; on a tie, the smaller index. */
#define PAIR_KERNELS(TN, VT, IT)                                                                   \
    typedef struct {                                                                               \
        VT v;                                                                                      \
        IT i;                                                                                      \
    } pair_##TN;                                                                                   \
    static void k_MAXLOC_##TN(const void *in_, void *io_, size_t n) {                              \
        const pair_##TN *restrict a = in_;                                                         \
        pair_##TN *restrict b = io_;                                                               \
        for (size_t k = 0; k < n; k++) {                                                           \
            if (a[k].v > b[k].v) {                                                                 \
                b[k].v = a[k].v; /* members only: padding is not data */                           \
                b[k].i = a[k].i;                                                                   \
            } else if (a[k].v == b[k].v && a[k].i < b[k].i)                                        \
                b[k].i = a[k].i;                                                                   \
        }                                                                                          \
    }                                                                                              \
    static void k_MINLOC_##TN(const void *in_, void *io_, size_t n) {                              \
        const pair_##TN *restrict a = in_;                                                         \
        pair_##TN *restrict b = io_;                                                               \
        for (size_t k = 0; k < n; k++) {                                                           \
            if (a[k].v < b[k].v) {                                                                 \
                b[k].v = a[k].v;                                                                   \
                b[k].i = a[k].i;                                                                   \
            } else if (a[k].v == b[k].v && a[k].i < b[k].i)                                        \
                b[k].i = a[k].i;                                                                   \
        }                                                                                          \
    }
PAIR_KERNELS(float_int, float, int)
PAIR_KERNELS(double_int, double, int)
PAIR_KERNELS(long_int, long, int)
PAIR_KERNELS(2int, int, int)
PAIR_KERNELS(short_int, short, int)
PAIR_KERNELS(ldouble_int, long double, int)
PAIR_KERNELS(2real, float, float) /* Fortran's: the index has the value's type */
PAIR_KERNELS(2double, double, double)

enum { OPS = COHORT_OP_PREDEFINED_COUNT };
static kernel table[OPS][CO_B_COUNT_];

#define SET(OPN, TN, T) table[MPI_##OPN & 0xfffff][B_##TN] = k_##OPN##_##TN;

/* basic type ids by kernel type name */
enum {
    B_schar = CO_B_SCHAR,
    B_uchar = CO_B_UCHAR,
    B_short = CO_B_SHORT,
    B_ushort = CO_B_USHORT,
    B_int = CO_B_INT,
    B_uint = CO_B_UINT,
    B_long = CO_B_LONG,
    B_ulong = CO_B_ULONG,
    B_llong = CO_B_LLONG,
    B_ullong = CO_B_ULLONG,
    B_i8 = CO_B_INT8,
    B_i16 = CO_B_INT16,
    B_i32 = CO_B_INT32,
    B_i64 = CO_B_INT64,
    B_u8 = CO_B_UINT8,
    B_u16 = CO_B_UINT16,
    B_u32 = CO_B_UINT32,
    B_u64 = CO_B_UINT64,
    B_float = CO_B_FLOAT,
    B_double = CO_B_DOUBLE,
    B_ldouble = CO_B_LDOUBLE,
    B_cfloat = CO_B_CFLOAT,
    B_cdouble = CO_B_CDOUBLE,
    B_cldouble = CO_B_CLDOUBLE,
    B_bool = CO_B_BOOL,
    B_float_int = CO_B_FLOAT_INT,
    B_double_int = CO_B_DOUBLE_INT,
    B_long_int = CO_B_LONG_INT,
    B_2int = CO_B_2INT,
    B_short_int = CO_B_SHORT_INT,
    B_ldouble_int = CO_B_LDOUBLE_INT,
    B_2real = CO_B_2REAL,
    B_2double = CO_B_2DOUBLE
};

/* The standard's "multi-language types" (AINT, OFFSET, COUNT) take the kernels of the C
 * integer of the same width for MAX, MIN, SUM, PROD and the bitwise operators. MPI 3.1
 * defines the logical operators on C integers and logicals only, but Open MPI and MPICH
 * accept them on these types too, and programs written for them do so: Cohort accepts
 * them as well (docs/collectives.md, "Reduction operators"). */
static void alias(int to, int from) {
    static const int ops[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD, MPI_LAND,
                              MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        int o = ops[i] & 0xfffff;
        if (!table[o][to]) table[o][to] = table[o][from];
    }
}

static void build_table(void) {
    INT_TYPES(SET, SUM)
    FLOAT_TYPES(SET, SUM)
    COMPLEX_TYPES(SET, SUM)
    INT_TYPES(SET, PROD)
    FLOAT_TYPES(SET, PROD)
    COMPLEX_TYPES(SET, PROD)
    INT_TYPES(SET, MAX)
    FLOAT_TYPES(SET, MAX)
    INT_TYPES(SET, MIN)
    FLOAT_TYPES(SET, MIN)
    INT_TYPES(SET, LAND)
    INT_TYPES(SET, LOR)
    INT_TYPES(SET, LXOR)
    INT_TYPES(SET, BAND)
    INT_TYPES(SET, BOR)
    INT_TYPES(SET, BXOR)
    SET(LAND, bool, bool)
    SET(LOR, bool, bool)
    SET(LXOR, bool, bool)
    table[MPI_BAND & 0xfffff][CO_B_BYTE] = k_BAND_u8;
    table[MPI_BOR & 0xfffff][CO_B_BYTE] = k_BOR_u8;
    table[MPI_BXOR & 0xfffff][CO_B_BYTE] = k_BXOR_u8;
#define SETPAIR(TN)                                                                                \
    table[MPI_MAXLOC & 0xfffff][B_##TN] = k_MAXLOC_##TN;                                           \
    table[MPI_MINLOC & 0xfffff][B_##TN] = k_MINLOC_##TN;
    SETPAIR(float_int)
    SETPAIR(double_int)
    SETPAIR(long_int)
    SETPAIR(2int)
    SETPAIR(short_int)
    SETPAIR(ldouble_int)
    SETPAIR(2real)
    SETPAIR(2double)
    /* address-sized integers are C integers of the same width */
    alias(CO_B_AINT, sizeof(MPI_Aint) == sizeof(long) ? CO_B_LONG : CO_B_LLONG);
    alias(CO_B_OFFSET, CO_B_LLONG);
    alias(CO_B_COUNT, CO_B_LLONG);
}

co_op *co_op_get(MPI_Op h) {
    return co_htab_get(&co_st.ops, h);
}

int co_op_init(void) {
    co_st.ops.kind = COHORT_KIND_OP;
    build_table();
    for (int slot = 1; slot < OPS; slot++) {
        co_op *op = calloc(1, sizeof(*op));
        if (!op) return MPI_ERR_NO_MEM;
        op->handle = COHORT_OP(slot);
        op->refcount = 1;
        op->predefined = slot;
        op->commute = 1;
        co_htab_set(&co_st.ops, (unsigned)slot, op);
    }
    return MPI_SUCCESS;
}

void co_op_fini(void) {
    co_htab *t = &co_st.ops;
    for (uint32_t s = 1; s < t->next; s++) free(co_htab_at(t, s));
    co_htab_destroy(t);
}

void co_op_retain(co_op *op) {
    op->refcount++;
}

void co_op_release(co_op *op) {
    if (op->predefined || --op->refcount > 0) return;
    if (op->handle) co_htab_remove(&co_st.ops, op->handle);
    free(op);
}

int co_op_check(const co_op *op, const co_dtype *dt) {
    if (!op->predefined) return MPI_SUCCESS;
    if (dt->size == 0) return MPI_SUCCESS;
    if (dt->basic == CO_B_NONE || !table[op->predefined][dt->basic]) return MPI_ERR_OP;
    return MPI_SUCCESS;
}

#define is_pair co_basic_is_pair

void co_op_apply(const co_op *op, co_dtype *dt, const void *in, void *inout, size_t count) {
    if (count == 0 || dt->size == 0) return;
    if (!op->predefined) {
        MPI_Datatype h = dt->handle;
        co_st.in_user_op++;
        while (count) { /* the user function takes an int count */
            int len = count > 0x40000000 ? 0x40000000 : (int)count;
            op->fn((void *)in, inout, &len, &h);
            in = (const char *)in + (size_t)len * (size_t)co_dt_extent(dt);
            inout = (char *)inout + (size_t)len * (size_t)co_dt_extent(dt);
            count -= (size_t)len;
        }
        co_st.in_user_op--;
        return;
    }
    kernel k = table[op->predefined][dt->basic];
    size_t bsize = co_basic_size(dt->basic);
    if (dt->contig || (dt->predefined && is_pair(dt->basic))) {
        /* elements of one basic type, back to back (pairs at their natural stride) */
        size_t n = is_pair(dt->basic) && dt->predefined ? count : count * dt->size / bsize;
        k((const char *)in + dt->true_lb, (char *)inout + dt->true_lb, n);
        return;
    }
    if (!is_pair(dt->basic)) {
        /* runs never split a basic element, so each run is a short vector of them */
        MPI_Aint ext = co_dt_extent(dt);
        for (size_t e = 0; e < count; e++) {
            for (size_t s = 0; s < dt->nsegs; s++) {
                const co_dt_seg *g = &dt->segs[s];
                for (size_t r = 0; r < g->count; r++) {
                    MPI_Aint off = (MPI_Aint)e * ext + g->disp + (MPI_Aint)r * g->stride;
                    k((const char *)in + off, (char *)inout + off, g->len / bsize);
                }
            }
        }
        return;
    }
    /* A derived type of pairs: gather both operands into arrays of pairs, combine, scatter
     * the result back. Rare enough that clarity wins over speed. */
    co_dtype *pt = co_dt_get(co_dt_pair_handle(dt->basic));
    size_t npairs = count * dt->size / pt->size;
    size_t bytes = count * dt->size;
    char *pa = malloc(bytes), *pb = malloc(bytes);
    char *na = malloc(npairs * bsize), *nb = malloc(npairs * bsize);
    if (!pa || !pb || !na || !nb) co_fatal("out of memory in a reduction");
    co_dt_pack(dt, count, in, 0, pa, bytes);
    co_dt_pack(dt, count, inout, 0, pb, bytes);
    co_dt_unpack(pt, npairs, na, 0, pa, bytes);
    co_dt_unpack(pt, npairs, nb, 0, pb, bytes);
    k(na, nb, npairs);
    co_dt_pack(pt, npairs, nb, 0, pb, bytes);
    co_dt_unpack(dt, count, inout, 0, pb, bytes);
    free(pa);
    free(pb);
    free(na);
    free(nb);
}
