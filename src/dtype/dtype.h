/* Datatypes: the object behind MPI_Datatype and the engine that moves typed data.
 *
 * A committed type is flattened into segments: each segment is `count` runs of `len` bytes,
 * the i-th at `disp + i*stride` from the element's origin; an element's segments repeat every
 * `extent` bytes. One segment describes a whole matrix column, so packing it is a tight
 * strided loop, not an interpretation of the type tree. Runs are merged when they touch.
 * Separately, the type signature (`sig`: runs of one basic type) serves element counts and
 * reductions. */
#ifndef CO_DTYPE_H
#define CO_DTYPE_H

#include "../core/cohort.h"

#include <sys/uio.h>

/* Basic element types: the alphabet of type signatures and of reduction kernels. Up to
 * CO_B_LDOUBLE_INT they are numbered like the predefined datatype handle slots of mpi.h
 * (dtype.c checks this); the named types of later slots are mostly other names for these
 * (MPI_INTEGER is CO_B_INT32), except Fortran's pairs. */
enum co_basic {
    CO_B_NONE = 0,
    CO_B_CHAR,
    CO_B_SCHAR,
    CO_B_UCHAR,
    CO_B_BYTE,
    CO_B_SHORT,
    CO_B_USHORT,
    CO_B_INT,
    CO_B_UINT,
    CO_B_LONG,
    CO_B_ULONG,
    CO_B_LLONG,
    CO_B_ULLONG,
    CO_B_FLOAT,
    CO_B_DOUBLE,
    CO_B_LDOUBLE,
    CO_B_WCHAR,
    CO_B_BOOL,
    CO_B_INT8,
    CO_B_INT16,
    CO_B_INT32,
    CO_B_INT64,
    CO_B_UINT8,
    CO_B_UINT16,
    CO_B_UINT32,
    CO_B_UINT64,
    CO_B_CFLOAT,
    CO_B_CDOUBLE,
    CO_B_CLDOUBLE,
    CO_B_AINT,
    CO_B_OFFSET,
    CO_B_COUNT,
    CO_B_PACKED,
    /* pair types used by MINLOC/MAXLOC are basic for reductions */
    CO_B_FLOAT_INT,
    CO_B_DOUBLE_INT,
    CO_B_LONG_INT,
    CO_B_2INT,
    CO_B_SHORT_INT,
    CO_B_LDOUBLE_INT,
    CO_B_2REAL, /* Fortran's pairs, whose index has the value's type */
    CO_B_2DOUBLE,
    CO_B_COUNT_
};

typedef struct co_dt_seg {
    MPI_Aint disp;   /* offset of the first run from the element origin */
    size_t len;      /* bytes per run */
    size_t count;    /* runs */
    MPI_Aint stride; /* between runs */
} co_dt_seg;

typedef struct co_dt_sig {
    uint16_t basic; /* enum co_basic */
    size_t count;   /* consecutive elements of that basic type */
} co_dt_sig;

struct co_dtype {
    int handle;
    int refcount; /* the user handle plus types built from this one and pending operations */
    int predefined;
    int committed;
    int freed;       /* the user freed it; the object lives on while refcount > 0 */
    size_t size;     /* bytes of data in one element */
    MPI_Aint lb, ub; /* extent = ub - lb */
    MPI_Aint true_lb, true_ub;
    int has_lb, has_ub; /* lb/ub set explicitly (MPI_LB/MPI_UB markers, resized, subarray) */
    int contig;         /* count elements form one run of count*size bytes at buf + true_lb */
    uint16_t basic;     /* the single predefined element type of every element, or CO_B_NONE */
    uint16_t align;     /* alignment of the most aligned member (for struct extents) */
    size_t nsegs;
    co_dt_seg *segs;
    size_t *seg_pos; /* packed offset of each segment within an element (nsegs + 1), or NULL */
    size_t nruns;    /* runs in one element: what a copy loop or an iovec list pays for */
    size_t nsig;
    co_dt_sig *sig;
    size_t sig_elems; /* basic elements in one element */
    int combiner;
    /* MPI_Type_get_contents: the constructor's arguments, copied */
    int nints, naddrs, ntypes;
    int *ints;
    MPI_Aint *addrs;
    co_dtype **types; /* retained */
    char name[MPI_MAX_OBJECT_NAME];
    struct co_attr *attrs; /* MPI_Type_set_attr's (kept by src/comm/attr.c) */
};

static inline MPI_Aint co_dt_extent(const co_dtype *dt) {
    return dt->ub - dt->lb;
}

co_dtype *co_dt_get(MPI_Datatype h); /* NULL if invalid */
/* A MINLOC/MAXLOC pair type: value and index (inline: the reductions ask at every call). */
static inline int co_basic_is_pair(int b) {
    return (b >= CO_B_FLOAT_INT && b <= CO_B_LDOUBLE_INT) || b == CO_B_2REAL || b == CO_B_2DOUBLE;
}
size_t co_basic_size(int basic);
const char *co_basic_name(int basic);
int co_dt_pair_handle(int basic); /* the named datatype of a pair basic type */

/* Copy bytes [offset, offset+len) of the packed form of (buf, count, dt) to out, or from in
 * back into place. Return the bytes moved (less than len only at the end of the data). */
size_t co_dt_pack(const co_dtype *dt, size_t count, const void *buf, size_t offset, void *out,
                  size_t len);
size_t co_dt_unpack(const co_dtype *dt, size_t count, void *buf, size_t offset, const void *in,
                    size_t len);
/* Describe bytes [offset, ...) of (buf, count, dt) as up to max iovecs; returns how many were
 * written and sets *covered to the bytes they span. */
int co_dt_iov(const co_dtype *dt, size_t count, const void *buf, size_t offset, struct iovec *iov,
              int max, size_t *covered);
/* Basic elements contained in the first `bytes` of packed data (MPI_Get_elements). */
size_t co_dt_elements(const co_dtype *dt, size_t bytes);
/* Mean bytes per run (SIZE_MAX for a contiguous type): decides between iovec and copy loops. */
size_t co_dt_avg_run(const co_dtype *dt);

/* A layout sent to another process, so that it can read our data in place: the segments of
 * one element, how many elements and where. `nsegs == 0` with `contig == 0` means "too many
 * segments to describe; stream the packed bytes instead". */
typedef struct co_dt_wire {
    uint64_t base; /* address of the buffer (what the user passed) */
    uint64_t count;
    int64_t extent;
    uint64_t size;
    int64_t true_lb;
    uint32_t nsegs;
    uint32_t contig;
    co_dt_seg segs[];
} co_dt_wire;
#define CO_DT_WIRE_MAX_SEGS 126 /* a description stays under 4 KiB */
/* Bytes needed to describe (buf, count, dt); writes it if out != NULL. */
size_t co_dt_wire_write(const co_dtype *dt, size_t count, const void *buf, co_dt_wire *out);
/* A read-only view of a received description, usable with co_dt_iov (not registered). */
void co_dt_wire_view(const co_dt_wire *w, co_dtype *view);

/* Reference counting for types held by requests and derived types. */
static inline void co_dt_retain(co_dtype *dt) {
    if (!dt->predefined) dt->refcount++;
}
void co_dt_release(co_dtype *dt);

/* Derived-type construction helpers used by the constructors in dtype_create.c. */
co_dtype *co_dt_new(int combiner);
int co_dt_register(co_dtype *dt);   /* gives it a handle; MPI_SUCCESS or an error class */
void co_dt_normalize(co_dtype *dt); /* merge touching segments and signature runs */
void co_dt_destroy(co_dtype *dt);   /* free an object that was never registered */
/* Fold `next` into `prev` if the runs of both, in order, form one segment; 1 if it did. */
int co_dt_seg_merge(co_dt_seg *prev, const co_dt_seg *next);

/* Constructors (dtype_create.c). Arguments are already checked by the caller. Each returns
 * MPI_SUCCESS or MPI_ERR_NO_MEM and, in *out, a new unregistered type holding the layout;
 * the caller records the envelope (co_dt_set_contents) and registers it. Displacements and
 * strides are in bytes. `blocklens` NULL means `blocklen` for every block. */
int co_dt_contiguous(size_t count, const co_dtype *old, co_dtype **out);
int co_dt_hvector(size_t count, size_t blocklen, MPI_Aint stride, const co_dtype *old,
                  co_dtype **out);
int co_dt_hindexed(size_t count, const int *blocklens, int blocklen, const MPI_Aint *disps,
                   const co_dtype *old, co_dtype **out);
int co_dt_struct(size_t count, const int *blocklens, const MPI_Aint *disps, co_dtype *const *types,
                 co_dtype **out);
int co_dt_subarray(int ndims, const int *sizes, const int *subsizes, const int *starts, int order,
                   const co_dtype *old, co_dtype **out);
/* The arguments are checked by the caller (psizes multiply to size, rank below it, a block
 * darg covers its dimension, MPI_DISTRIBUTE_NONE only with psize 1). */
int co_dt_darray(int rank, int ndims, const int *gsizes, const int *distribs, const int *dargs,
                 const int *psizes, int order, const co_dtype *old, co_dtype **out);
int co_dt_resized(const co_dtype *old, MPI_Aint lb, MPI_Aint extent, co_dtype **out);
/* Same layout, bounds and (for a clone) envelope; dup's envelope is set by the caller. */
int co_dt_copy_layout(const co_dtype *old, co_dtype **out);
/* Record the constructor's arguments for Type_get_envelope/get_contents; retains `types`. */
int co_dt_set_contents(co_dtype *dt, int combiner, int nints, const int *ints, int naddrs,
                       const MPI_Aint *addrs, int ntypes, co_dtype *const *types);

/* The external32 representation (dtype_external.c; MPI_Pack_external and friends). */
typedef struct co_ext_fail {
    int basic;      /* the basic type that failed (CO_B_NONE: the size overflowed) */
    int is_signed;  /* MPI_ERR_CONVERSION: how to print value */
    uint64_t value; /* MPI_ERR_CONVERSION: the value that does not fit (two's complement) */
} co_ext_fail;
/* External32 bytes of one element of basic type `basic`, 0 if external32 has none for it. */
size_t co_ext_basic_size(int basic);
/* External32 bytes of one element of dt: MPI_SUCCESS, MPI_ERR_TYPE (fail->basic has no
 * external32 form) or MPI_ERR_COUNT (more than PTRDIFF_MAX). */
int co_ext_size(const co_dtype *dt, size_t *bytes, co_ext_fail *fail);
/* Convert (buf, count, dt) to external32 at out, which holds count times co_ext_size bytes,
 * or the reverse. MPI_SUCCESS, or MPI_ERR_CONVERSION (a value that does not fit the other
 * side's size; what came before it has been converted) or MPI_ERR_TYPE, with fail set. */
int co_ext_pack(const co_dtype *dt, size_t count, const void *buf, void *out, co_ext_fail *fail);
int co_ext_unpack(const co_dtype *dt, size_t count, void *buf, const void *in, co_ext_fail *fail);

#endif /* CO_DTYPE_H */
