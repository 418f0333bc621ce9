/* Derived-datatype constructors: each one turns its arguments into the flattened form of
 * dtype.h (segments of strided runs, a signature, bounds). Everything is built from one
 * operation, "n copies of a type, `stride` bytes apart, at `disp`", which keeps a copy of a
 * single-run type as one strided segment: a matrix column or a 2-D subarray of doubles is
 * one segment however many rows it has. Bounds follow MPI 3.1: explicit lb/ub markers
 * (MPI_LB/MPI_UB, resized, subarray) are sticky and win over the data's bounds; a struct's
 * extent is padded to the alignment of its most aligned member unless its ub is explicit. */
#include "dtype.h"

#include <stdlib.h>
#include <string.h>

/* Segments beyond this in one type are refused: flattening something that large means the
 * type describes millions of irregular pieces, and the memory would be the user's surprise. */
#define MAX_SEGS (1u << 26)

typedef struct builder {
    co_dt_seg *segs;
    size_t nsegs, segcap;
    co_dt_sig *sig;
    size_t nsig, sigcap;
    size_t size, sig_elems;
    int have_data;
    MPI_Aint true_lb, true_ub;
    uint16_t align;
    int basic;    /* -1 until the first member with data */
    int failed;   /* out of memory, or more than MAX_SEGS pieces */
    int overflow; /* a size, bound or displacement beyond what MPI_Aint holds */
} builder;

static void b_init(builder *b) {
    memset(b, 0, sizeof(*b));
    b->basic = -1;
}

static void b_discard(builder *b) {
    free(b->segs);
    free(b->sig);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 4;
    while (n < need) n *= 2;
    void *p = realloc(*arr, n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

static void seg_push(builder *b, co_dt_seg s) {
    if (b->failed || s.len == 0 || s.count == 0) return;
    if (s.count > 1 && s.stride == (MPI_Aint)s.len) {
        s.len *= s.count;
        s.count = 1;
    }
    if (s.count == 1) s.stride = 0;
    if (b->nsegs && co_dt_seg_merge(&b->segs[b->nsegs - 1], &s)) {
        co_dt_seg *p = &b->segs[b->nsegs - 1];
        if (p->count > 1 && p->stride == (MPI_Aint)p->len) {
            p->len *= p->count;
            p->count = 1;
            p->stride = 0;
        }
        return;
    }
    if (b->nsegs >= MAX_SEGS || grow((void **)&b->segs, &b->segcap, b->nsegs + 1, sizeof(s))) {
        b->failed = 1;
        return;
    }
    b->segs[b->nsegs++] = s;
}

static void sig_push(builder *b, uint16_t basic, size_t count) {
    if (b->failed || count == 0) return;
    if (b->nsig && b->sig[b->nsig - 1].basic == basic) {
        b->sig[b->nsig - 1].count += count;
        return;
    }
    if (b->nsig >= MAX_SEGS || grow((void **)&b->sig, &b->sigcap, b->nsig + 1, sizeof(co_dt_sig))) {
        b->failed = 1;
        return;
    }
    b->sig[b->nsig++] = (co_dt_sig){basic, count};
}

/* Checked arithmetic: *ovf is set when a result does not fit. */
static MPI_Aint add_aint(MPI_Aint a, MPI_Aint b, int *ovf) {
    MPI_Aint r;
    if (__builtin_add_overflow(a, b, &r)) *ovf = 1;
    return r;
}
static MPI_Aint span(size_t n, MPI_Aint stride, int *ovf) { /* (n-1)*stride */
    MPI_Aint r;
    if (n == 0) return 0;
    if (n - 1 > (size_t)PTRDIFF_MAX || __builtin_mul_overflow((MPI_Aint)(n - 1), stride, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}
static size_t mul_size(size_t a, size_t b, int *ovf) {
    size_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > (size_t)PTRDIFF_MAX) *ovf = 1;
    return r;
}

/* Append n copies of `old`, the j-th at disp + j*stride, to the type being built. */
static void b_copies(builder *b, const co_dtype *old, MPI_Aint disp, size_t n, MPI_Aint stride) {
    if (n == 0 || old->size == 0 || b->failed || b->overflow) return;
    if (old->nsegs > 1 && n > MAX_SEGS / old->nsegs) {
        b->failed = 1;
        return;
    }
    int *ovf = &b->overflow;
    b->size = (size_t)add_aint((MPI_Aint)b->size, (MPI_Aint)mul_size(n, old->size, ovf), ovf);
    b->sig_elems =
        (size_t)add_aint((MPI_Aint)b->sig_elems, (MPI_Aint)mul_size(n, old->sig_elems, ovf), ovf);
    MPI_Aint sp = span(n, stride, ovf); /* how far the last copy lies from the first */
    MPI_Aint lo = add_aint(add_aint(disp, old->true_lb, ovf), CO_MIN(sp, 0), ovf);
    MPI_Aint hi = add_aint(add_aint(disp, old->true_ub, ovf), CO_MAX(sp, 0), ovf);
    if (*ovf) return;
    if (!b->have_data || lo < b->true_lb) b->true_lb = lo;
    if (!b->have_data || hi > b->true_ub) b->true_ub = hi;
    b->have_data = 1;
    if (old->align > b->align) b->align = old->align;
    if (b->basic == -1)
        b->basic = old->basic;
    else if (b->basic != old->basic)
        b->basic = CO_B_NONE;

    if (old->nsegs == 1) {
        co_dt_seg s = old->segs[0];
        s.disp += disp;
        if (s.count == 1 && n > 1) { /* copies of one run: one strided segment */
            s.count = n;
            s.stride = stride;
            seg_push(b, s);
        } else if (n == 1 || stride == (MPI_Aint)s.count * s.stride) { /* the stride goes on */
            s.count *= n;
            seg_push(b, s);
        } else if (n > MAX_SEGS) {
            b->failed = 1;
        } else {
            for (size_t j = 0; j < n; j++, s.disp += stride) seg_push(b, s);
        }
    } else {
        for (size_t j = 0; j < n; j++) {
            for (size_t i = 0; i < old->nsegs; i++) {
                co_dt_seg s = old->segs[i];
                s.disp += disp + (MPI_Aint)j * stride;
                seg_push(b, s);
            }
        }
    }
    if (old->nsig == 1) {
        sig_push(b, old->sig[0].basic, n * old->sig[0].count);
    } else if (n > MAX_SEGS / old->nsig) {
        b->failed = 1;
    } else {
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < old->nsig; i++)
                sig_push(b, old->sig[i].basic, old->sig[i].count);
    }
}

/* Why a build failed: MPI_ERR_COUNT when a size or bound does not fit MPI_Aint, else
 * MPI_ERR_NO_MEM (out of memory, or more than MAX_SEGS pieces). */
static int b_status(const builder *b) {
    return b->overflow ? MPI_ERR_COUNT : MPI_ERR_NO_MEM;
}

/* Move what was built into a new unregistered type whose lb/ub the caller already knows. */
static co_dtype *b_finish(builder *b, MPI_Aint lb, MPI_Aint ub, int has_lb, int has_ub) {
    co_dtype *dt = b->failed || b->overflow ? NULL : co_dt_new(0);
    if (!dt) {
        b_discard(b);
        return NULL;
    }
    dt->segs = b->segs;
    dt->nsegs = b->nsegs;
    dt->sig = b->sig;
    dt->nsig = b->nsig;
    dt->size = b->size;
    dt->sig_elems = b->sig_elems;
    dt->true_lb = b->have_data ? b->true_lb : 0;
    dt->true_ub = b->have_data ? b->true_ub : 0;
    dt->align = b->align;
    dt->basic = (uint16_t)(b->basic < 0 ? CO_B_NONE : b->basic);
    dt->lb = lb;
    dt->ub = ub;
    dt->has_lb = has_lb;
    dt->has_ub = has_ub;
    co_dt_normalize(dt);
    return dt;
}

/* ---- Bounds ---------------------------------------------------------------------------------
 * A type's lb/ub come from the copies of its members: explicit markers if any member carries
 * one, otherwise the members' own bounds. A member with no data and no markers (count 0, an
 * empty type) has no entries in the type map, so it does not count. */
typedef struct bounds {
    int any, has_lb, has_ub, overflow;
    MPI_Aint lb, ub, xlb, xub;
} bounds;

static void bounds_add(bounds *bd, const co_dtype *old, MPI_Aint disp, size_t n, MPI_Aint stride,
                       size_t n2, MPI_Aint stride2) {
    if (n == 0 || n2 == 0) return;
    if (old->size == 0 && !old->has_lb && !old->has_ub) return;
    int *ovf = &bd->overflow;
    MPI_Aint s1 = span(n, stride, ovf), s2 = span(n2, stride2, ovf);
    MPI_Aint lo =
        add_aint(add_aint(disp, old->lb, ovf), add_aint(CO_MIN(s1, 0), CO_MIN(s2, 0), ovf), ovf);
    MPI_Aint hi =
        add_aint(add_aint(disp, old->ub, ovf), add_aint(CO_MAX(s1, 0), CO_MAX(s2, 0), ovf), ovf);
    if (*ovf) return;
    if (!bd->any || lo < bd->lb) bd->lb = lo;
    if (!bd->any || hi > bd->ub) bd->ub = hi;
    bd->any = 1;
    if (old->has_lb && (!bd->has_lb || lo < bd->xlb)) bd->xlb = lo;
    if (old->has_ub && (!bd->has_ub || hi > bd->xub)) bd->xub = hi;
    bd->has_lb |= old->has_lb;
    bd->has_ub |= old->has_ub;
}

/* The type's lb and ub from its members' (explicit markers win); returns the extent, and
 * marks the build as overflowed if any bound or the extent does not fit. */
static MPI_Aint bounds_resolve(builder *b, const bounds *bd, MPI_Aint *lb, MPI_Aint *ub) {
    b->overflow |= bd->overflow;
    *lb = bd->has_lb ? bd->xlb : bd->any ? bd->lb : 0;
    *ub = bd->has_ub ? bd->xub : bd->any ? bd->ub : 0;
    MPI_Aint ext = 0;
    if (__builtin_sub_overflow(*ub, *lb, &ext)) b->overflow = 1;
    return ext;
}

static co_dtype *finish_bounds(builder *b, const bounds *bd) {
    MPI_Aint lb, ub;
    bounds_resolve(b, bd, &lb, &ub);
    return b_finish(b, lb, ub, bd->has_lb, bd->has_ub);
}

/* ---- Constructors ---------------------------------------------------------------------------- */

int co_dt_contiguous(size_t count, const co_dtype *old, co_dtype **out) {
    return co_dt_hvector(count, 1, co_dt_extent(old), old, out);
}

int co_dt_hvector(size_t count, size_t blocklen, MPI_Aint stride, const co_dtype *old,
                  co_dtype **out) {
    MPI_Aint ext = co_dt_extent(old);
    builder b;
    b_init(&b);
    /* one block of `blocklen` copies first, then `count` copies of that block */
    b_copies(&b, old, 0, blocklen, ext);
    co_dtype *block = b_finish(&b, 0, 0, 0, 0);
    if (!block) return b_status(&b);
    b_init(&b);
    b_copies(&b, block, 0, count, stride);
    co_dt_destroy(block);
    bounds bd = {0};
    bounds_add(&bd, old, 0, blocklen, ext, count, stride);
    return (*out = finish_bounds(&b, &bd)) ? MPI_SUCCESS : b_status(&b);
}

int co_dt_hindexed(size_t count, const int *blocklens, int blocklen, const MPI_Aint *disps,
                   const co_dtype *old, co_dtype **out) {
    MPI_Aint ext = co_dt_extent(old);
    builder b;
    b_init(&b);
    bounds bd = {0};
    for (size_t i = 0; i < count; i++) {
        size_t n = (size_t)(blocklens ? blocklens[i] : blocklen);
        b_copies(&b, old, disps[i], n, ext);
        bounds_add(&bd, old, disps[i], n, ext, 1, 0);
    }
    return (*out = finish_bounds(&b, &bd)) ? MPI_SUCCESS : b_status(&b);
}

int co_dt_struct(size_t count, const int *blocklens, const MPI_Aint *disps, co_dtype *const *types,
                 co_dtype **out) {
    builder b;
    b_init(&b);
    bounds bd = {0};
    for (size_t i = 0; i < count; i++) {
        MPI_Aint ext = co_dt_extent(types[i]);
        b_copies(&b, types[i], disps[i], (size_t)blocklens[i], ext);
        bounds_add(&bd, types[i], disps[i], (size_t)blocklens[i], ext, 1, 0);
    }
    MPI_Aint lb, ub, ext = bounds_resolve(&b, &bd, &lb, &ub);
    if (!b.overflow && !bd.has_ub && b.align > 1) { /* the epsilon of MPI 3.1 section 4.1.6 */
        MPI_Aint a = b.align;
        MPI_Aint r = ((ext % a) + a) % a;
        if (r) ub = add_aint(ub, a - r, &b.overflow);
    }
    return (*out = b_finish(&b, lb, ub, bd.has_lb, bd.has_ub)) ? MPI_SUCCESS : b_status(&b);
}

int co_dt_subarray(int ndims, const int *sizes, const int *subsizes, const int *starts, int order,
                   const co_dtype *old, co_dtype **out) {
    MPI_Aint ext = co_dt_extent(old);
    /* Walk the dimensions from the fastest-varying one outwards, wrapping the previous level
     * in `subsizes[d]` copies `stride[d]` apart. */
    co_dtype *level = NULL;
    MPI_Aint stride = ext, offset = 0;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        builder b;
        b_init(&b);
        b_copies(&b, level ? level : old, 0, (size_t)subsizes[d], stride);
        co_dtype *next = b_finish(&b, 0, 0, 0, 0);
        if (level) co_dt_destroy(level);
        if (!next) return b_status(&b);
        level = next;
        MPI_Aint step;
        if (__builtin_mul_overflow((MPI_Aint)starts[d], stride, &step) ||
            __builtin_add_overflow(offset, step, &offset) ||
            __builtin_mul_overflow(stride, (MPI_Aint)sizes[d], &stride)) {
            co_dt_destroy(level);
            return MPI_ERR_COUNT;
        }
    }
    builder b;
    b_init(&b);
    b_copies(&b, level, offset, 1, 0);
    co_dt_destroy(level);
    /* MPI defines the result as resized to the whole array: lb 0, extent = all of it */
    if (!(*out = b_finish(&b, 0, stride, 1, 1))) return b_status(&b);
    (*out)->align = old->align;
    return MPI_SUCCESS;
}

int co_dt_darray(int rank, int ndims, const int *gsizes, const int *distribs, const int *dargs,
                 const int *psizes, int order, const co_dtype *old, co_dtype **out) {
    MPI_Aint ext = co_dt_extent(old);
    /* The process grid is row-major whatever the array's order (MPI 3.1 section 4.1.4). */
    int *coord = malloc((size_t)ndims * sizeof(int));
    if (!coord) return MPI_ERR_NO_MEM;
    for (int d = ndims - 1, r = rank; d >= 0; d--) {
        coord[d] = r % psizes[d];
        r /= psizes[d];
    }
    /* From the fastest-varying dimension outwards: in dimension d this process owns blocks of
     * `bs` indices, the j-th starting at (coord + j*psize)*bs (a cyclic deal; a block
     * distribution is one deal of ceil(gsize/psize)). Each level holds copies of the level
     * inside it, `stride` bytes (one index of d) apart: the full blocks as copies of one block
     * a deal apart, then the last block if it is cut short. */
    co_dtype *level = NULL;
    MPI_Aint stride = ext;
    int rc = MPI_SUCCESS;
    for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        long g = gsizes[d], p = psizes[d], bs;
        if (distribs[d] == MPI_DISTRIBUTE_NONE)
            bs = g; /* (p is 1) */
        else if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG)
            bs = dargs[d];
        else
            bs = distribs[d] == MPI_DISTRIBUTE_BLOCK ? (g + p - 1) / p : 1;
        long first = coord[d] * bs, deal = p * bs;
        long nfull = first + bs <= g ? (g - first - bs) / deal + 1 : 0;
        long last = first + nfull * deal, lastlen = last < g ? g - last : 0;
        const co_dtype *inner = level ? level : old;
        builder b;
        b_init(&b);
        MPI_Aint at, step;
        if (nfull) {
            builder bb;
            b_init(&bb);
            b_copies(&bb, inner, 0, (size_t)bs, stride);
            co_dtype *block = b_finish(&bb, 0, 0, 0, 0);
            if (!block) {
                b.failed = bb.failed;
                b.overflow = bb.overflow;
            } else {
                if (__builtin_mul_overflow((MPI_Aint)first, stride, &at) ||
                    __builtin_mul_overflow((MPI_Aint)deal, stride, &step))
                    b.overflow = 1;
                else
                    b_copies(&b, block, at, (size_t)nfull, step);
                co_dt_destroy(block);
            }
        }
        if (lastlen) {
            if (__builtin_mul_overflow((MPI_Aint)last, stride, &at))
                b.overflow = 1;
            else
                b_copies(&b, inner, at, (size_t)lastlen, stride);
        }
        co_dtype *next = b_finish(&b, 0, 0, 0, 0);
        if (level) co_dt_destroy(level);
        level = next;
        if (!next)
            rc = b_status(&b);
        else if (__builtin_mul_overflow(stride, (MPI_Aint)g, &stride))
            rc = MPI_ERR_COUNT;
    }
    free(coord);
    if (rc) {
        if (level) co_dt_destroy(level);
        return rc;
    }
    builder b;
    b_init(&b);
    b_copies(&b, level, 0, 1, 0);
    co_dt_destroy(level);
    /* like a subarray: lb 0, extent the whole global array */
    if (!(*out = b_finish(&b, 0, stride, 1, 1))) return b_status(&b);
    (*out)->align = old->align;
    return MPI_SUCCESS;
}

int co_dt_copy_layout(const co_dtype *old, co_dtype **out) {
    co_dtype *dt = co_dt_new(0);
    if (!dt) return MPI_ERR_NO_MEM;
    dt->segs = malloc((old->nsegs ? old->nsegs : 1) * sizeof(co_dt_seg));
    dt->sig = malloc((old->nsig ? old->nsig : 1) * sizeof(co_dt_sig));
    if (!dt->segs || !dt->sig) {
        co_dt_destroy(dt);
        return MPI_ERR_NO_MEM;
    }
    if (old->nsegs) memcpy(dt->segs, old->segs, old->nsegs * sizeof(co_dt_seg));
    if (old->nsig) memcpy(dt->sig, old->sig, old->nsig * sizeof(co_dt_sig)); /* (none: NULL) */
    dt->nsegs = old->nsegs;
    dt->nsig = old->nsig;
    dt->size = old->size;
    dt->sig_elems = old->sig_elems;
    dt->lb = old->lb;
    dt->ub = old->ub;
    dt->has_lb = old->has_lb;
    dt->has_ub = old->has_ub;
    dt->true_lb = old->true_lb;
    dt->true_ub = old->true_ub;
    dt->basic = old->basic;
    dt->align = old->align;
    co_dt_normalize(dt);
    *out = dt;
    return MPI_SUCCESS;
}

int co_dt_resized(const co_dtype *old, MPI_Aint lb, MPI_Aint extent, co_dtype **out) {
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub)) return MPI_ERR_COUNT;
    int rc = co_dt_copy_layout(old, out);
    if (rc) return rc;
    (*out)->lb = lb;
    (*out)->ub = ub;
    (*out)->has_lb = (*out)->has_ub = 1;
    co_dt_normalize(*out); /* contiguity depends on the extent */
    return MPI_SUCCESS;
}

int co_dt_set_contents(co_dtype *dt, int combiner, int nints, const int *ints, int naddrs,
                       const MPI_Aint *addrs, int ntypes, co_dtype *const *types) {
    dt->combiner = combiner;
    dt->ints = nints ? malloc((size_t)nints * sizeof(int)) : NULL;
    dt->addrs = naddrs ? malloc((size_t)naddrs * sizeof(MPI_Aint)) : NULL;
    dt->types = ntypes ? malloc((size_t)ntypes * sizeof(co_dtype *)) : NULL;
    if ((nints && !dt->ints) || (naddrs && !dt->addrs) || (ntypes && !dt->types))
        return MPI_ERR_NO_MEM;
    if (nints) memcpy(dt->ints, ints, (size_t)nints * sizeof(int));
    if (naddrs) memcpy(dt->addrs, addrs, (size_t)naddrs * sizeof(MPI_Aint));
    for (int i = 0; i < ntypes; i++) {
        dt->types[i] = types[i];
        co_dt_retain(types[i]);
    }
    dt->nints = nints;
    dt->naddrs = naddrs;
    dt->ntypes = ntypes;
    return MPI_SUCCESS;
}
