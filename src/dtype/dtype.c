/* The datatype engine: predefined types, the flattened segment form, and the copy loops that
 * pack, unpack and describe typed data (see dtype.h). */
#include "dtype.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef struct {
    float v;
    int i;
} pair_float_int;
typedef struct {
    double v;
    int i;
} pair_double_int;
typedef struct {
    long v;
    int i;
} pair_long_int;
typedef struct {
    int v;
    int i;
} pair_2int;
typedef struct {
    short v;
    int i;
} pair_short_int;
typedef struct {
    long double v;
    int i;
} pair_ldouble_int;
typedef struct {
    float v, i;
} pair_2real;
typedef struct {
    double v, i;
} pair_2double;

static const struct basic_info {
    const char *name;
    size_t size;
    size_t align;
} basics[CO_B_COUNT_] = {
    [CO_B_CHAR] = {"MPI_CHAR", sizeof(char), _Alignof(char)},
    [CO_B_SCHAR] = {"MPI_SIGNED_CHAR", sizeof(signed char), _Alignof(signed char)},
    [CO_B_UCHAR] = {"MPI_UNSIGNED_CHAR", sizeof(unsigned char), _Alignof(unsigned char)},
    [CO_B_BYTE] = {"MPI_BYTE", 1, 1},
    [CO_B_SHORT] = {"MPI_SHORT", sizeof(short), _Alignof(short)},
    [CO_B_USHORT] = {"MPI_UNSIGNED_SHORT", sizeof(unsigned short), _Alignof(unsigned short)},
    [CO_B_INT] = {"MPI_INT", sizeof(int), _Alignof(int)},
    [CO_B_UINT] = {"MPI_UNSIGNED", sizeof(unsigned), _Alignof(unsigned)},
    [CO_B_LONG] = {"MPI_LONG", sizeof(long), _Alignof(long)},
    [CO_B_ULONG] = {"MPI_UNSIGNED_LONG", sizeof(unsigned long), _Alignof(unsigned long)},
    [CO_B_LLONG] = {"MPI_LONG_LONG_INT", sizeof(long long), _Alignof(long long)},
    [CO_B_ULLONG] = {"MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long),
                     _Alignof(unsigned long long)},
    [CO_B_FLOAT] = {"MPI_FLOAT", sizeof(float), _Alignof(float)},
    [CO_B_DOUBLE] = {"MPI_DOUBLE", sizeof(double), _Alignof(double)},
    [CO_B_LDOUBLE] = {"MPI_LONG_DOUBLE", sizeof(long double), _Alignof(long double)},
    [CO_B_WCHAR] = {"MPI_WCHAR", sizeof(wchar_t), _Alignof(wchar_t)},
    [CO_B_BOOL] = {"MPI_C_BOOL", sizeof(_Bool), _Alignof(_Bool)},
    [CO_B_INT8] = {"MPI_INT8_T", 1, 1},
    [CO_B_INT16] = {"MPI_INT16_T", 2, 2},
    [CO_B_INT32] = {"MPI_INT32_T", 4, 4},
    [CO_B_INT64] = {"MPI_INT64_T", 8, _Alignof(int64_t)},
    [CO_B_UINT8] = {"MPI_UINT8_T", 1, 1},
    [CO_B_UINT16] = {"MPI_UINT16_T", 2, 2},
    [CO_B_UINT32] = {"MPI_UINT32_T", 4, 4},
    [CO_B_UINT64] = {"MPI_UINT64_T", 8, _Alignof(uint64_t)},
    [CO_B_CFLOAT] = {"MPI_C_FLOAT_COMPLEX", sizeof(float _Complex), _Alignof(float _Complex)},
    [CO_B_CDOUBLE] = {"MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex), _Alignof(double _Complex)},
    [CO_B_CLDOUBLE] = {"MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex),
                       _Alignof(long double _Complex)},
    [CO_B_AINT] = {"MPI_AINT", sizeof(MPI_Aint), _Alignof(MPI_Aint)},
    [CO_B_OFFSET] = {"MPI_OFFSET", sizeof(MPI_Offset), _Alignof(MPI_Offset)},
    [CO_B_COUNT] = {"MPI_COUNT", sizeof(MPI_Count), _Alignof(MPI_Count)},
    [CO_B_PACKED] = {"MPI_PACKED", 1, 1},
    [CO_B_FLOAT_INT] = {"MPI_FLOAT_INT", sizeof(pair_float_int), _Alignof(pair_float_int)},
    [CO_B_DOUBLE_INT] = {"MPI_DOUBLE_INT", sizeof(pair_double_int), _Alignof(pair_double_int)},
    [CO_B_LONG_INT] = {"MPI_LONG_INT", sizeof(pair_long_int), _Alignof(pair_long_int)},
    [CO_B_2INT] = {"MPI_2INT", sizeof(pair_2int), _Alignof(pair_2int)},
    [CO_B_SHORT_INT] = {"MPI_SHORT_INT", sizeof(pair_short_int), _Alignof(pair_short_int)},
    [CO_B_LDOUBLE_INT] = {"MPI_LONG_DOUBLE_INT", sizeof(pair_ldouble_int),
                          _Alignof(pair_ldouble_int)},
    [CO_B_2REAL] = {"MPI_2REAL", sizeof(pair_2real), _Alignof(pair_2real)},
    [CO_B_2DOUBLE] = {"MPI_2DOUBLE_PRECISION", sizeof(pair_2double), _Alignof(pair_2double)},
};

size_t co_basic_size(int b) {
    return b > 0 && b < CO_B_COUNT_ ? basics[b].size : 0;
}
const char *co_basic_name(int b) {
    return b > 0 && b < CO_B_COUNT_ ? basics[b].name : "?";
}

/* Handle slot -> basic type: the basic-type enum follows mpi.h's slot numbers up to slot 38,
 * so such a slot is its own basic type. MPI_UB and MPI_LB (slots 39, 40) are the deprecated
 * zero-size markers; they exist so old code compiles. Fortran's and C++'s named types
 * (slots 41 on) are C basic types under their own names, but for Fortran's pairs. */
_Static_assert(CO_B_CHAR == 1 && CO_B_INT == 7 && CO_B_DOUBLE == 14 && CO_B_UINT64 == 25 &&
                   CO_B_PACKED == 32 && CO_B_FLOAT_INT == 33 && CO_B_LDOUBLE_INT == 38,
               "basic types must follow the datatype handle slots of mpi.h");
#define FIRST_NAMED 41
static const struct {
    const char *name;
    int basic;
} named[COHORT_DT_PREDEFINED_COUNT - FIRST_NAMED] = {
    {"MPI_CHARACTER", CO_B_CHAR},
    {"MPI_INTEGER", CO_B_INT32},
    {"MPI_REAL", CO_B_FLOAT},
    {"MPI_DOUBLE_PRECISION", CO_B_DOUBLE},
    {"MPI_COMPLEX", CO_B_CFLOAT},
    {"MPI_DOUBLE_COMPLEX", CO_B_CDOUBLE},
    {"MPI_LOGICAL", CO_B_INT32},
    {"MPI_2INTEGER", CO_B_2INT},
    {"MPI_2REAL", CO_B_2REAL},
    {"MPI_2DOUBLE_PRECISION", CO_B_2DOUBLE},
    {"MPI_INTEGER1", CO_B_INT8},
    {"MPI_INTEGER2", CO_B_INT16},
    {"MPI_INTEGER4", CO_B_INT32},
    {"MPI_INTEGER8", CO_B_INT64},
    {"MPI_REAL4", CO_B_FLOAT},
    {"MPI_REAL8", CO_B_DOUBLE},
    {"MPI_COMPLEX8", CO_B_CFLOAT},
    {"MPI_COMPLEX16", CO_B_CDOUBLE},
    {"MPI_CXX_BOOL", CO_B_BOOL}, /* C++'s bool is C's _Bool in the x86-64 and Arm ABIs */
    {"MPI_CXX_FLOAT_COMPLEX", CO_B_CFLOAT},
    {"MPI_CXX_DOUBLE_COMPLEX", CO_B_CDOUBLE},
    {"MPI_CXX_LONG_DOUBLE_COMPLEX", CO_B_CLDOUBLE},
};
_Static_assert(sizeof(int) == 4 && sizeof(float) == 4 && sizeof(double) == 8,
               "Fortran's INTEGER, LOGICAL, REAL and DOUBLE PRECISION are taken as 4, 4, 4, 8");
static int slot_basic(int slot) {
    if (slot >= FIRST_NAMED) return named[slot - FIRST_NAMED].basic;
    return slot <= CO_B_LDOUBLE_INT ? slot : CO_B_NONE;
}

int co_dt_pair_handle(int b) {
    if (b == CO_B_2REAL) return MPI_2REAL;
    if (b == CO_B_2DOUBLE) return MPI_2DOUBLE_PRECISION;
    return COHORT_DT(b); /* the C pairs' slots are their basic types */
}

/* The value and index members of each pair type: two segments and a two-run signature. */
static void pair_layout(int b, co_dt_seg segs[2], co_dt_sig sig[2]) {
#define PAIR(T, VB, IB)                                                                            \
    segs[0] = (co_dt_seg){offsetof(T, v), sizeof(((T *)0)->v), 1, 0};                              \
    segs[1] = (co_dt_seg){offsetof(T, i), sizeof(((T *)0)->i), 1, 0};                              \
    sig[0] = (co_dt_sig){VB, 1};                                                                   \
    sig[1] = (co_dt_sig){IB, 1};
    switch (b) {
    case CO_B_FLOAT_INT: PAIR(pair_float_int, CO_B_FLOAT, CO_B_INT) break;
    case CO_B_DOUBLE_INT: PAIR(pair_double_int, CO_B_DOUBLE, CO_B_INT) break;
    case CO_B_LONG_INT: PAIR(pair_long_int, CO_B_LONG, CO_B_INT) break;
    case CO_B_2INT: PAIR(pair_2int, CO_B_INT, CO_B_INT) break;
    case CO_B_SHORT_INT: PAIR(pair_short_int, CO_B_SHORT, CO_B_INT) break;
    case CO_B_LDOUBLE_INT: PAIR(pair_ldouble_int, CO_B_LDOUBLE, CO_B_INT) break;
    case CO_B_2REAL: PAIR(pair_2real, CO_B_FLOAT, CO_B_FLOAT) break;
    case CO_B_2DOUBLE: PAIR(pair_2double, CO_B_DOUBLE, CO_B_DOUBLE) break;
    default: break;
    }
#undef PAIR
}

int co_dtype_init(void) {
    co_st.dtypes.kind = COHORT_KIND_DATATYPE;
    for (int slot = 1; slot < COHORT_DT_PREDEFINED_COUNT; slot++) {
        co_dtype *dt = calloc(1, sizeof(*dt));
        if (!dt) return MPI_ERR_NO_MEM;
        int b = slot_basic(slot);
        dt->handle = COHORT_DT(slot);
        dt->refcount = 1;
        dt->predefined = 1;
        dt->committed = 1;
        dt->combiner = MPI_COMBINER_NAMED;
        dt->basic = (uint16_t)b;
        if (b == 0) { /* MPI_UB / MPI_LB */
            strcpy(dt->name, slot == 39 ? "MPI_UB" : "MPI_LB");
            dt->contig = 1;
            dt->has_ub = slot == 39;
            dt->has_lb = slot == 40;
            co_htab_set(&co_st.dtypes, (unsigned)slot, dt);
            continue;
        }
        strcpy(dt->name, slot >= FIRST_NAMED ? named[slot - FIRST_NAMED].name : basics[b].name);
        dt->align = (uint16_t)basics[b].align;
        dt->ub = (MPI_Aint)basics[b].size;
        if (co_basic_is_pair(b)) {
            dt->segs = calloc(2, sizeof(co_dt_seg));
            dt->sig = calloc(2, sizeof(co_dt_sig));
            if (!dt->segs || !dt->sig) return MPI_ERR_NO_MEM;
            pair_layout(b, dt->segs, dt->sig);
            dt->nsegs = 2;
            dt->nsig = 2;
            dt->sig_elems = 2;
            dt->size = dt->segs[0].len + dt->segs[1].len;
            dt->true_lb = 0;
            dt->true_ub = dt->segs[1].disp + (MPI_Aint)dt->segs[1].len;
            co_dt_normalize(dt); /* 2INT and FLOAT_INT are one run */
        } else {
            dt->segs = calloc(1, sizeof(co_dt_seg));
            dt->sig = calloc(1, sizeof(co_dt_sig));
            if (!dt->segs || !dt->sig) return MPI_ERR_NO_MEM;
            dt->segs[0] = (co_dt_seg){0, basics[b].size, 1, 0};
            dt->sig[0] = (co_dt_sig){(uint16_t)b, 1};
            dt->nsegs = dt->nsig = dt->sig_elems = dt->nruns = 1;
            dt->size = basics[b].size;
            dt->true_ub = dt->ub;
            dt->contig = 1;
        }
        co_htab_set(&co_st.dtypes, (unsigned)slot, dt);
    }
    return MPI_SUCCESS;
}

static void dt_free(co_dtype *dt) {
    free(dt->segs);
    free(dt->seg_pos);
    free(dt->sig);
    free(dt->ints);
    free(dt->addrs);
    free(dt->types);
    free(dt);
}

void co_dtype_fini(void) {
    co_htab *t = &co_st.dtypes;
    for (uint32_t s = 1; s < t->next; s++) {
        co_dtype *dt = co_htab_at(t, s);
        if (dt) dt_free(dt);
    }
    co_htab_destroy(t);
}

co_dtype *co_dt_get(MPI_Datatype h) {
    return co_htab_get(&co_st.dtypes, h);
}

co_dtype *co_dt_new(int combiner) {
    co_dtype *dt = calloc(1, sizeof(*dt));
    if (!dt) return NULL;
    dt->refcount = 1;
    dt->combiner = combiner;
    return dt;
}

int co_dt_register(co_dtype *dt) {
    dt->handle = co_htab_insert(&co_st.dtypes, dt);
    if (!dt->handle) return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

void co_dt_destroy(co_dtype *dt) {
    for (int i = 0; i < dt->ntypes; i++)
        if (dt->types[i]) co_dt_release(dt->types[i]);
    dt_free(dt);
}

void co_dt_release(co_dtype *dt) {
    if (dt->predefined) return;
    if (--dt->refcount > 0) return;
    if (dt->handle) co_htab_remove(&co_st.dtypes, dt->handle);
    co_dt_destroy(dt);
}

int co_dt_seg_merge(co_dt_seg *p, const co_dt_seg *s) {
    if (p->count == 1 && s->count == 1 && p->disp + (MPI_Aint)p->len == s->disp) {
        p->len += s->len; /* two runs that touch */
        return 1;
    }
    if (p->len != s->len) return 0;
    if (p->count > 1 && p->disp + (MPI_Aint)p->count * p->stride == s->disp &&
        (s->count == 1 || s->stride == p->stride)) {
        p->count += s->count; /* the same stride continues */
        return 1;
    }
    if (p->count == 1 && s->count == 1) { /* two equal runs start a strided segment */
        p->stride = s->disp - p->disp;
        p->count = 2;
        return 1;
    }
    if (p->count == 1 && s->count > 1 && s->disp - p->disp == s->stride) {
        p->stride = s->stride;
        p->count = s->count + 1;
        return 1;
    }
    return 0;
}

/* Runs that touch become one run: the form every copy loop handles best. */
static void seg_fold(co_dt_seg *s) {
    if (s->count > 1 && s->stride == (MPI_Aint)s->len) {
        s->len *= s->count;
        s->count = 1;
    }
    if (s->count == 1) s->stride = 0;
}

/* Merge segments whose runs continue each other and signature runs of one basic type, then
 * derive what the copy loops need (prefix offsets, run count, contiguity). Idempotent. */
void co_dt_normalize(co_dtype *dt) {
    size_t n = 0;
    for (size_t i = 0; i < dt->nsegs; i++) {
        co_dt_seg s = dt->segs[i];
        if (s.len == 0 || s.count == 0) continue;
        seg_fold(&s);
        if (n > 0 && co_dt_seg_merge(&dt->segs[n - 1], &s)) {
            seg_fold(&dt->segs[n - 1]);
            /* a fold may let the segment before absorb this one */
            while (n > 1 && co_dt_seg_merge(&dt->segs[n - 2], &dt->segs[n - 1])) {
                seg_fold(&dt->segs[n - 2]);
                n--;
            }
            continue;
        }
        dt->segs[n++] = s;
    }
    dt->nsegs = n;
    size_t m = 0;
    for (size_t i = 0; i < dt->nsig; i++) {
        if (dt->sig[i].count == 0) continue;
        if (m > 0 && dt->sig[m - 1].basic == dt->sig[i].basic)
            dt->sig[m - 1].count += dt->sig[i].count;
        else
            dt->sig[m++] = dt->sig[i];
    }
    dt->nsig = m;
    free(dt->seg_pos);
    dt->seg_pos = NULL;
    dt->nruns = 0;
    for (size_t i = 0; i < n; i++) dt->nruns += dt->segs[i].count;
    if (n > 8 && (dt->seg_pos = malloc((n + 1) * sizeof(size_t)))) {
        size_t pos = 0;
        for (size_t i = 0; i < n; i++) {
            dt->seg_pos[i] = pos;
            pos += dt->segs[i].len * dt->segs[i].count;
        }
        dt->seg_pos[n] = pos;
    }
    dt->contig =
        (n == 0) || (n == 1 && dt->segs[0].count == 1 && dt->segs[0].len == dt->size &&
                     dt->segs[0].disp == dt->true_lb && (MPI_Aint)dt->size == dt->ub - dt->lb);
}

size_t co_dt_avg_run(const co_dtype *dt) {
    if (dt->contig) return SIZE_MAX;
    return dt->nruns ? dt->size / dt->nruns : SIZE_MAX;
}

/* ---- The copy loops ------------------------------------------------------------------------ */

/* `count` runs of `len` bytes, `stride` apart on the typed side, contiguous on the packed
 * side. Fixed small lengths get their own loops so that a matrix column of doubles is a
 * strided load/store loop instead of a memcpy call per element. */
static inline void runs_pack(char *out, const char *src, size_t len, size_t count,
                             MPI_Aint stride) {
    switch (len) {
    case 4:
        for (size_t i = 0; i < count; i++) memcpy(out + i * 4, src + (MPI_Aint)i * stride, 4);
        return;
    case 8:
        for (size_t i = 0; i < count; i++) memcpy(out + i * 8, src + (MPI_Aint)i * stride, 8);
        return;
    case 16:
        for (size_t i = 0; i < count; i++) memcpy(out + i * 16, src + (MPI_Aint)i * stride, 16);
        return;
    default:
        for (size_t i = 0; i < count; i++) memcpy(out + i * len, src + (MPI_Aint)i * stride, len);
    }
}

static inline void runs_unpack(char *dst, const char *in, size_t len, size_t count, MPI_Aint stride,
                               int far) {
    /* Short runs far apart each land on their own cache line, and the hardware prefetcher
     * stops at every page boundary: when the data is too large to be in cache (`far`), ask
     * for the lines to be written a little ahead. In cache it would only cost time. */
    if (far && len <= 16 && (stride >= 64 || stride <= -64) && count > 64) {
        size_t i = 0;
        for (; i + 16 < count; i++) {
            __builtin_prefetch(dst + (MPI_Aint)(i + 16) * stride, 1);
            memcpy(dst + (MPI_Aint)i * stride, in + i * len, len);
        }
        for (; i < count; i++) memcpy(dst + (MPI_Aint)i * stride, in + i * len, len);
        return;
    }
    switch (len) {
    case 4:
        for (size_t i = 0; i < count; i++) memcpy(dst + (MPI_Aint)i * stride, in + i * 4, 4);
        return;
    case 8:
        for (size_t i = 0; i < count; i++) memcpy(dst + (MPI_Aint)i * stride, in + i * 8, 8);
        return;
    case 16:
        for (size_t i = 0; i < count; i++) memcpy(dst + (MPI_Aint)i * stride, in + i * 16, 16);
        return;
    default:
        for (size_t i = 0; i < count; i++) memcpy(dst + (MPI_Aint)i * stride, in + i * len, len);
    }
}

/* Typed data spanning more than this is assumed not to be in cache (runs_unpack). */
#define FAR_BYTES (8u << 20)

typedef struct cursor {
    size_t elem, seg, run, byte;
} cursor;

/* Position of packed byte `offset` in the segment walk. */
static void seek(const co_dtype *dt, size_t offset, cursor *c) {
    c->elem = offset / dt->size;
    size_t rem = offset % dt->size;
    if (dt->seg_pos) { /* last segment starting at or before rem */
        size_t lo = 0, hi = dt->nsegs;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (dt->seg_pos[mid] <= rem)
                lo = mid;
            else
                hi = mid;
        }
        c->seg = lo;
        rem -= dt->seg_pos[lo];
    } else {
        c->seg = 0;
        while (c->seg < dt->nsegs && rem >= dt->segs[c->seg].len * dt->segs[c->seg].count) {
            rem -= dt->segs[c->seg].len * dt->segs[c->seg].count;
            c->seg++;
        }
    }
    if (c->seg < dt->nsegs) {
        c->run = rem / dt->segs[c->seg].len;
        c->byte = rem % dt->segs[c->seg].len;
    } else {
        c->run = c->byte = 0;
    }
}

static size_t walk(const co_dtype *dt, size_t count, char *typed, size_t offset, char *packed,
                   size_t len, int to_packed) {
    size_t total = count * dt->size;
    if (offset >= total || len == 0) return 0;
    if (len > total - offset) len = total - offset;
    if (dt->contig) {
        if (to_packed)
            memcpy(packed, typed + dt->true_lb + offset, len);
        else
            memcpy(typed + dt->true_lb + offset, packed, len);
        return len;
    }
    MPI_Aint span = (MPI_Aint)(count - 1) * co_dt_extent(dt);
    int far = (size_t)(span < 0 ? -span : span) + (size_t)(dt->true_ub - dt->true_lb) >= FAR_BYTES;
    cursor c;
    seek(dt, offset, &c);
    size_t left = len;
    MPI_Aint extent = co_dt_extent(dt);
    for (; c.elem < count; c.elem++, c.seg = 0) {
        char *base = typed + (MPI_Aint)c.elem * extent;
        for (; c.seg < dt->nsegs; c.seg++, c.run = 0) {
            const co_dt_seg *s = &dt->segs[c.seg];
            if (c.byte) { /* finish a run we stopped inside */
                size_t n = CO_MIN(s->len - c.byte, left);
                char *p = base + s->disp + (MPI_Aint)c.run * s->stride + c.byte;
                if (to_packed)
                    memcpy(packed, p, n);
                else
                    memcpy(p, packed, n);
                packed += n;
                left -= n;
                if (!left) return len;
                c.run++;
                c.byte = 0;
            }
            size_t whole = CO_MIN(s->count - c.run, left / s->len);
            if (whole) {
                char *p = base + s->disp + (MPI_Aint)c.run * s->stride;
                if (to_packed)
                    runs_pack(packed, p, s->len, whole, s->stride);
                else
                    runs_unpack(p, packed, s->len, whole, s->stride, far);
                packed += whole * s->len;
                left -= whole * s->len;
                c.run += whole;
            }
            if (c.run < s->count) { /* the window ends inside this run */
                if (left) {
                    char *p = base + s->disp + (MPI_Aint)c.run * s->stride;
                    if (to_packed)
                        memcpy(packed, p, left);
                    else
                        memcpy(p, packed, left);
                }
                return len;
            }
            if (!left) return len;
        }
    }
    return len - left;
}

size_t co_dt_pack(const co_dtype *dt, size_t count, const void *buf, size_t offset, void *out,
                  size_t len) {
    return walk(dt, count, (char *)buf, offset, out, len, 1);
}

size_t co_dt_unpack(const co_dtype *dt, size_t count, void *buf, size_t offset, const void *in,
                    size_t len) {
    return walk(dt, count, buf, offset, (char *)in, len, 0);
}

int co_dt_iov(const co_dtype *dt, size_t count, const void *buf, size_t offset, struct iovec *iov,
              int max, size_t *covered) {
    size_t total = count * dt->size;
    *covered = 0;
    if (offset >= total || max <= 0) return 0;
    if (dt->contig) {
        iov[0].iov_base = (char *)buf + dt->true_lb + offset;
        iov[0].iov_len = total - offset;
        *covered = total - offset;
        return 1;
    }
    cursor c;
    seek(dt, offset, &c);
    int n = 0;
    MPI_Aint extent = co_dt_extent(dt);
    for (; c.elem < count; c.elem++, c.seg = 0) {
        char *base = (char *)buf + (MPI_Aint)c.elem * extent;
        for (; c.seg < dt->nsegs; c.seg++, c.run = 0) {
            const co_dt_seg *s = &dt->segs[c.seg];
            for (; c.run < s->count; c.run++, c.byte = 0) {
                char *p = base + s->disp + (MPI_Aint)c.run * s->stride + c.byte;
                size_t l = s->len - c.byte;
                if (n > 0 && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
                    iov[n - 1].iov_len += l;
                } else {
                    if (n == max) return n;
                    iov[n].iov_base = p;
                    iov[n].iov_len = l;
                    n++;
                }
                *covered += l;
            }
        }
    }
    return n;
}

size_t co_dt_elements(const co_dtype *dt, size_t bytes) {
    if (dt->size == 0) return 0;
    size_t full = bytes / dt->size, rem = bytes % dt->size;
    size_t n = full * dt->sig_elems;
    for (size_t i = 0; i < dt->nsig && rem; i++) {
        size_t bs = co_basic_size(dt->sig[i].basic);
        size_t run = bs * dt->sig[i].count;
        if (rem >= run) {
            n += dt->sig[i].count;
            rem -= run;
        } else {
            n += rem / bs;
            rem = 0;
        }
    }
    return n;
}

size_t co_dt_wire_write(const co_dtype *dt, size_t count, const void *buf, co_dt_wire *out) {
    size_t nsegs = dt->contig || dt->nsegs > CO_DT_WIRE_MAX_SEGS ? 0 : dt->nsegs;
    size_t len = sizeof(co_dt_wire) + nsegs * sizeof(co_dt_seg);
    if (!out) return len;
    out->base = (uint64_t)(uintptr_t)buf;
    out->count = count;
    out->extent = co_dt_extent(dt);
    out->size = dt->size;
    out->true_lb = dt->true_lb;
    out->nsegs = (uint32_t)nsegs;
    out->contig = (uint32_t)dt->contig;
    if (nsegs) memcpy(out->segs, dt->segs, nsegs * sizeof(co_dt_seg));
    return len;
}

void co_dt_wire_view(const co_dt_wire *w, co_dtype *v) {
    memset(v, 0, sizeof(*v));
    v->predefined = 1; /* never retained or released */
    v->committed = 1;
    v->size = w->size;
    v->lb = 0;
    v->ub = w->extent;
    v->true_lb = w->true_lb;
    v->contig = (int)w->contig;
    v->nsegs = w->nsegs;
    v->segs = (co_dt_seg *)w->segs;
    for (size_t i = 0; i < v->nsegs; i++) v->nruns += v->segs[i].count;
}
