/* Datatype entry points: the constructors, commit/free/dup, the queries (size, extent,
 * envelope, contents, name), addresses, Pack/Unpack and their external32 forms. Each checks
 * its arguments and hands the work to src/dtype. Errors without a communicator argument go to
 * MPI_COMM_WORLD's handler; Pack and Unpack use the communicator they are given. */
#include "api.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* A datatype argument of a constructor or a query: any live type, committed or not. */
static co_dtype *arg_type(const char *fn, MPI_Datatype h, int *rc) {
    co_dtype *dt = co_dt_get(h);
    if (CO_LIKELY(dt && !dt->freed)) return dt;
    if (!dt)
        *rc = co_error(NULL, fn, MPI_ERR_TYPE,
                       h == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                              : "invalid datatype 0x%x (freed or never created)",
                       (unsigned)h);
    else
        *rc = co_error(NULL, fn, MPI_ERR_TYPE, "datatype has been freed");
    return NULL;
}

/* The datatype argument of a query (size, extents, envelope, contents, name, attributes):
 * also a type the program has freed while a nonblocking or persistent call still holds it,
 * when a user reduction function of that call asks. The function is given the type's handle
 * and may well walk the elements with MPI_Type_get_extent; the call must complete normally
 * (MPI 3.1 section 4.1.9). */
static co_dtype *query_type(const char *fn, MPI_Datatype h, int *rc) {
    co_dtype *dt = co_dt_get(h);
    if (dt && dt->freed && co_st.in_user_op) return dt;
    return arg_type(fn, h, rc);
}

static int bad_arg(const char *fn, const char *what) {
    return co_error(NULL, fn, MPI_ERR_ARG, "%s", what);
}

/* `per_block`: 1 for the constructors whose Type_get_envelope reports integers and
 * addresses per block (indexed, struct), whose totals must fit an int; 0 for the others. */
static int check_count(const char *fn, int count, int per_block) {
    if (count < 0) return co_error(NULL, fn, MPI_ERR_COUNT, "negative count %d", count);
    if (per_block && count > (INT_MAX - 2) / 3)
        return co_error(NULL, fn, MPI_ERR_COUNT, "count %d is too large", count);
    return MPI_SUCCESS;
}

static int check_blocklen(const char *fn, int i, int blocklen) {
    if (blocklen >= 0) return MPI_SUCCESS;
    if (i < 0) return co_error(NULL, fn, MPI_ERR_ARG, "negative blocklength %d", blocklen);
    return co_error(NULL, fn, MPI_ERR_ARG, "negative blocklength %d in block %d", blocklen, i);
}

/* Give a freshly built type its envelope and a handle. */
static int publish(const char *fn, int rc, co_dtype *dt, int combiner, int nints, const int *ints,
                   int naddrs, const MPI_Aint *addrs, int ntypes, co_dtype *const *types,
                   MPI_Datatype *newtype) {
    if (rc == MPI_SUCCESS)
        rc = co_dt_set_contents(dt, combiner, nints, ints, naddrs, addrs, ntypes, types);
    if (rc == MPI_SUCCESS) rc = co_dt_register(dt);
    if (rc != MPI_SUCCESS) {
        if (dt) co_dt_destroy(dt);
        return co_error(NULL, fn, rc, "%s",
                        rc == MPI_ERR_COUNT
                            ? "the datatype's size, bounds or extent would not fit in MPI_Aint"
                            : "cannot build the datatype (out of memory, or more than 2^26 "
                              "separate pieces)");
    }
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* ---- Constructors -----------------------------------------------------------------------------
 */

CO_WEAK(MPI_Type_contiguous, PMPI_Type_contiguous);
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_contiguous";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = check_count(fn, count, 0))) return rc;
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    co_dtype *dt = NULL;
    rc = co_dt_contiguous((size_t)count, old, &dt);
    return publish(fn, rc, dt, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old, newtype);
}

static int vector_common(const char *fn, int count, int blocklength, MPI_Aint stride, int hv,
                         MPI_Datatype oldtype, MPI_Datatype *newtype) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = check_count(fn, count, 0)) || (rc = check_blocklen(fn, -1, blocklength))) return rc;
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    co_dtype *dt = NULL;
    MPI_Aint bytes = stride;
    if (!hv && __builtin_mul_overflow(stride, co_dt_extent(old), &bytes))
        rc = MPI_ERR_COUNT; /* stride times extent beyond MPI_Aint */
    else
        rc = co_dt_hvector((size_t)count, (size_t)blocklength, bytes, old, &dt);
    if (hv) {
        int ints[2] = {count, blocklength};
        return publish(fn, rc, dt, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &old, newtype);
    }
    int ints[3] = {count, blocklength, (int)stride};
    return publish(fn, rc, dt, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old, newtype);
}

CO_WEAK(MPI_Type_vector, PMPI_Type_vector);
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype) {
    return vector_common("MPI_Type_vector", count, blocklength, stride, 0, oldtype, newtype);
}

CO_WEAK(MPI_Type_create_hvector, PMPI_Type_create_hvector);
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype) {
    return vector_common("MPI_Type_create_hvector", count, blocklength, stride, 1, oldtype,
                         newtype);
}

/* The four indexed constructors. `blens` NULL: every block has `blen`; displacements come as
 * ints (in extents of oldtype) or as MPI_Aints (in bytes). */
static int indexed_common(const char *fn, int combiner, int count, const int *blens, int blen,
                          const int *idisps, const MPI_Aint *adisps, MPI_Datatype oldtype,
                          MPI_Datatype *newtype) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = check_count(fn, count, 1))) return rc;
    if (count > 0 && ((combiner != MPI_COMBINER_INDEXED_BLOCK &&
                       combiner != MPI_COMBINER_HINDEXED_BLOCK && !blens) ||
                      (!idisps && !adisps)))
        return bad_arg(fn, "an array argument is NULL");
    if (!blens && (rc = check_blocklen(fn, -1, blen))) return rc;
    for (int i = 0; blens && i < count; i++)
        if ((rc = check_blocklen(fn, i, blens[i]))) return rc;
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");

    MPI_Aint *bytes = malloc(((size_t)count + 1) * sizeof(MPI_Aint));
    int *ints = malloc(((size_t)count * 2 + 2) * sizeof(int));
    if (!bytes || !ints) {
        free(bytes);
        free(ints);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    }
    MPI_Aint ext = co_dt_extent(old);
    co_dtype *dt = NULL;
    for (int i = 0; i < count && !rc; i++) {
        bytes[i] = adisps ? adisps[i] : 0;
        if (idisps && __builtin_mul_overflow((MPI_Aint)idisps[i], ext, &bytes[i]))
            rc = MPI_ERR_COUNT; /* displacement times extent beyond MPI_Aint */
    }
    if (!rc) rc = co_dt_hindexed((size_t)count, blens, blen, bytes, old, &dt);

    /* the envelope: count, then blocklength(s), then int displacements if they were ints */
    int ni = 0;
    ints[ni++] = count;
    if (blens)
        for (int i = 0; i < count; i++) ints[ni++] = blens[i];
    else
        ints[ni++] = blen;
    if (idisps)
        for (int i = 0; i < count; i++) ints[ni++] = idisps[i];
    rc = publish(fn, rc, dt, combiner, ni, ints, adisps ? count : 0, adisps, 1, &old, newtype);
    free(bytes);
    free(ints);
    return rc;
}

CO_WEAK(MPI_Type_indexed, PMPI_Type_indexed);
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    return indexed_common("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                          array_of_displacements, NULL, oldtype, newtype);
}

CO_WEAK(MPI_Type_create_hindexed, PMPI_Type_create_hindexed);
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    return indexed_common("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                          array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype);
}

CO_WEAK(MPI_Type_create_indexed_block, PMPI_Type_create_indexed_block);
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed_common("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                          blocklength, array_of_displacements, NULL, oldtype, newtype);
}

CO_WEAK(MPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block);
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype) {
    return indexed_common("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                          NULL, blocklength, NULL, array_of_displacements, oldtype, newtype);
}

static int struct_common(const char *fn, int count, const int array_of_blocklengths[],
                         const MPI_Aint array_of_displacements[],
                         const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if ((rc = check_count(fn, count, 1))) return rc;
    if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types))
        return bad_arg(fn, "an array argument is NULL");
    for (int i = 0; i < count; i++)
        if ((rc = check_blocklen(fn, i, array_of_blocklengths[i]))) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    co_dtype **types = malloc(((size_t)count + 1) * sizeof(co_dtype *));
    int *ints = malloc(((size_t)count + 1) * sizeof(int));
    if (!types || !ints) {
        free(types);
        free(ints);
        return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0; i < count; i++) {
        types[i] = co_dt_get(array_of_types[i]);
        if (!types[i] || types[i]->freed) {
            const char *why = array_of_types[i] == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                              : types[i]                             ? "freed"
                                                                     : "invalid";
            free(types);
            free(ints);
            return co_error(NULL, fn, MPI_ERR_TYPE, "type %d of the struct is %s", i, why);
        }
    }
    co_dtype *dt = NULL;
    rc = co_dt_struct((size_t)count, array_of_blocklengths, array_of_displacements, types, &dt);
    ints[0] = count;
    for (int i = 0; i < count; i++) ints[i + 1] = array_of_blocklengths[i];
    rc = publish(fn, rc, dt, MPI_COMBINER_STRUCT, count + 1, ints, count, array_of_displacements,
                 count, types, newtype);
    free(types);
    free(ints);
    return rc;
}

CO_WEAK(MPI_Type_create_struct, PMPI_Type_create_struct);
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    return struct_common("MPI_Type_create_struct", count, array_of_blocklengths,
                         array_of_displacements, array_of_types, newtype);
}

/* The MPI-1 names of the three constructors above, removed in MPI 3.0 but still in old codes
 * (and in MPICH's test suite): the same types, the same combiners (the standard gives C's
 * MPI_TYPE_HVECTOR the combiner MPI_COMBINER_HVECTOR), errors under the old names. */
CO_WEAK(MPI_Type_hvector, PMPI_Type_hvector);
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    return vector_common("MPI_Type_hvector", count, blocklength, stride, 1, oldtype, newtype);
}

CO_WEAK(MPI_Type_hindexed, PMPI_Type_hindexed);
int PMPI_Type_hindexed(int count, const int array_of_blocklengths[],
                       const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype) {
    return indexed_common("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                          0, NULL, array_of_displacements, oldtype, newtype);
}

CO_WEAK(MPI_Type_struct, PMPI_Type_struct);
int PMPI_Type_struct(int count, const int array_of_blocklengths[],
                     const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                     MPI_Datatype *newtype) {
    return struct_common("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
                         array_of_types, newtype);
}

CO_WEAK(MPI_Type_create_subarray, PMPI_Type_create_subarray);
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_subarray";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if (ndims <= 0 || ndims > (INT_MAX - 2) / 3)
        return co_error(NULL, fn, MPI_ERR_ARG, "invalid number of dimensions %d", ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return bad_arg(fn, "an array argument is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    for (int i = 0; i < ndims; i++) {
        int n = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
        if (n <= 0)
            return co_error(NULL, fn, MPI_ERR_ARG, "size %d of dimension %d is not positive", n, i);
        if (sub <= 0 || sub > n)
            return co_error(NULL, fn, MPI_ERR_ARG, "subsize %d of dimension %d is outside 1..%d",
                            sub, i, n);
        if (st < 0 || st > n - sub)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "start %d of dimension %d is outside 0..%d (size %d, subsize %d)", st,
                            i, n - sub, n, sub);
    }
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    int *ints = malloc((3 * (size_t)ndims + 2) * sizeof(int));
    if (!ints) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    int ni = 0;
    ints[ni++] = ndims;
    for (int i = 0; i < ndims; i++) ints[ni++] = array_of_sizes[i];
    for (int i = 0; i < ndims; i++) ints[ni++] = array_of_subsizes[i];
    for (int i = 0; i < ndims; i++) ints[ni++] = array_of_starts[i];
    ints[ni++] = order;
    co_dtype *dt = NULL;
    rc = co_dt_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, old, &dt);
    rc = publish(fn, rc, dt, MPI_COMBINER_SUBARRAY, ni, ints, 0, NULL, 1, &old, newtype);
    free(ints);
    return rc;
}

CO_WEAK(MPI_Type_create_darray, PMPI_Type_create_darray);
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_darray";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if (size <= 0) return co_error(NULL, fn, MPI_ERR_ARG, "size %d is not positive", size);
    if (rank < 0 || rank >= size)
        return co_error(NULL, fn, MPI_ERR_ARG, "rank %d is outside 0..%d", rank, size - 1);
    if (ndims <= 0 || ndims > (INT_MAX - 4) / 4)
        return co_error(NULL, fn, MPI_ERR_ARG, "invalid number of dimensions %d", ndims);
    if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
        return bad_arg(fn, "an array argument is NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    long grid = 1;
    for (int i = 0; i < ndims; i++) {
        int g = array_of_gsizes[i], dist = array_of_distribs[i], darg = array_of_dargs[i],
            p = array_of_psizes[i];
        if (g <= 0)
            return co_error(NULL, fn, MPI_ERR_ARG, "global size %d of dimension %d is not positive",
                            g, i);
        if (p <= 0)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "process grid size %d of dimension %d is not positive", p, i);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC &&
            dist != MPI_DISTRIBUTE_NONE)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "invalid distribution %d of dimension %d (MPI_DISTRIBUTE_BLOCK, "
                            "_CYCLIC or _NONE)",
                            dist, i);
        if (darg <= 0 && darg != MPI_DISTRIBUTE_DFLT_DARG)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "distribution argument %d of dimension %d is neither positive nor "
                            "MPI_DISTRIBUTE_DFLT_DARG",
                            darg, i);
        if (dist == MPI_DISTRIBUTE_NONE && p != 1)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "dimension %d is not distributed (MPI_DISTRIBUTE_NONE) but has %d "
                            "processes in the grid, not 1",
                            i, p);
        if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG && (long)darg * p < g)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "blocks of %d in dimension %d over %d processes do not cover its %d "
                            "elements",
                            darg, i, p, g);
        grid *= p;
        if (grid > size) break;
    }
    if (grid != size)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "the process grid's sizes do not multiply to size %d", size);
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    int *ints = malloc((4 * (size_t)ndims + 4) * sizeof(int));
    if (!ints) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    int ni = 0;
    ints[ni++] = size;
    ints[ni++] = rank;
    ints[ni++] = ndims;
    const int *lists[] = {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes};
    for (int l = 0; l < 4; l++)
        for (int i = 0; i < ndims; i++) ints[ni++] = lists[l][i];
    ints[ni++] = order;
    co_dtype *dt = NULL;
    rc = co_dt_darray(rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                      array_of_psizes, order, old, &dt);
    rc = publish(fn, rc, dt, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1, &old, newtype);
    free(ints);
    return rc;
}

CO_WEAK(MPI_Type_create_resized, PMPI_Type_create_resized);
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_resized";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    co_dtype *dt = NULL;
    rc = co_dt_resized(old, lb, extent, &dt);
    MPI_Aint addrs[2] = {lb, extent};
    return publish(fn, rc, dt, MPI_COMBINER_RESIZED, 0, NULL, 2, addrs, 1, &old, newtype);
}

CO_WEAK(MPI_Type_dup, PMPI_Type_dup);
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_dup";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *old = arg_type(fn, oldtype, &rc);
    if (!old) return rc;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    co_dtype *dt = NULL;
    rc = co_dt_copy_layout(old, &dt);
    if (rc == MPI_SUCCESS) dt->committed = old->committed;
    if ((rc = publish(fn, rc, dt, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old, newtype))) return rc;
    /* the attributes, through their keys' copy callbacks */
    if ((rc = co_attrs_copy_all(old->attrs, old->handle, &dt->attrs, dt->handle))) {
        co_attrs_delete_all(&dt->attrs, dt->handle, 1);
        dt->freed = 1;
        co_dt_release(dt);
        *newtype = MPI_DATATYPE_NULL;
        return co_error(NULL, fn, rc, "an attribute copy callback failed (error %d)", rc);
    }
    return MPI_SUCCESS;
}

/* ---- Life cycle -------------------------------------------------------------------------------
 */

CO_WEAK(MPI_Type_commit, PMPI_Type_commit);
int PMPI_Type_commit(MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_commit";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if (!datatype) return bad_arg(fn, "datatype pointer is NULL");
    co_dtype *dt = arg_type(fn, *datatype, &rc);
    if (!dt) return rc;
    dt->committed = 1;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_free, PMPI_Type_free);
int PMPI_Type_free(MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_free";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    if (!datatype) return bad_arg(fn, "datatype pointer is NULL");
    co_dtype *dt = arg_type(fn, *datatype, &rc);
    if (!dt) return rc;
    if (dt->predefined)
        return co_error(NULL, fn, MPI_ERR_TYPE, "cannot free the predefined datatype %s", dt->name);
    /* Its attributes go first, newest first; a delete callback's error keeps the type. */
    if ((rc = co_attrs_delete_all(&dt->attrs, dt->handle, 0)))
        return co_error(NULL, fn, rc, "an attribute delete callback failed (error %d)", rc);
    /* Types built from this one and pending operations hold their own references. */
    dt->freed = 1;
    *datatype = MPI_DATATYPE_NULL;
    co_dt_release(dt);
    return MPI_SUCCESS;
}

/* ---- Queries ----------------------------------------------------------------------------------
 */

CO_WEAK(MPI_Type_size, PMPI_Type_size);
int PMPI_Type_size(MPI_Datatype datatype, int *size) {
    static const char fn[] = "MPI_Type_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!size) return bad_arg(fn, "size is NULL");
    *size = dt->size > INT_MAX ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}

/* ---- Fortran 90's parameterised types ------------------------------------------------------
 * MPI_Type_create_f90_integer/_real/_complex: the type of Fortran's SELECTED_INT_KIND(r) and
 * SELECTED_REAL_KIND(p, r) with gfortran's kinds (integers of 1, 2, 4 and 8 bytes; reals of
 * 4, 8 and 10, the last the x87 long double; REAL(16) and INTEGER(16) have no type here). Each
 * (combiner, p, r) is made once and returned again after: a predefined type, which cannot be
 * freed, whose envelope is the F90 combiner with its p and r. */
static int f90_type(const char *fn, int combiner, int p, int r, MPI_Datatype *newtype) {
    static struct f90_made {
        int combiner, p, r;
        MPI_Datatype h;
    } * made;
    static int nmade, capmade;
    if (!newtype) return bad_arg(fn, "newtype is NULL");
    int integer = combiner == MPI_COMBINER_F90_INTEGER;
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED) ||
        (p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (integer && r < 0))
        return co_error(NULL, fn, MPI_ERR_ARG,
                        integer ? "range %d: a decimal exponent range of 0 or more"
                                : "precision %d and range %d: each 0 or more, or MPI_UNDEFINED, "
                                  "not both MPI_UNDEFINED",
                        integer ? r : p, r);
    int need_p = p == MPI_UNDEFINED ? 0 : p, need_r = r == MPI_UNDEFINED ? 0 : r;
    static const struct {
        int p, r;
        MPI_Datatype real, complex;
    } reals[] = {
        {6, 37, MPI_REAL4, MPI_COMPLEX8},
        {15, 307, MPI_REAL8, MPI_COMPLEX16},
        {LDBL_DIG, LDBL_MAX_10_EXP, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
    };
    static const struct {
        int r;
        MPI_Datatype t;
    } ints[] = {{2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}};
    MPI_Datatype base = MPI_DATATYPE_NULL;
    if (integer) {
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]) && base == MPI_DATATYPE_NULL; i++)
            if (need_r <= ints[i].r) base = ints[i].t;
    } else {
        for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]) && base == MPI_DATATYPE_NULL; i++)
            if (need_p <= reals[i].p && need_r <= reals[i].r)
                base = combiner == MPI_COMBINER_F90_REAL ? reals[i].real : reals[i].complex;
    }
    if (base == MPI_DATATYPE_NULL) {
        if (integer)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "no integer type of a decimal range of %d here (at most 18)", r);
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "no %s type of precision %d and range %d here (at most %d and %d)",
                        combiner == MPI_COMBINER_F90_REAL ? "real" : "complex", need_p, need_r,
                        LDBL_DIG, LDBL_MAX_10_EXP);
    }
    for (int i = 0; i < nmade; i++)
        if (made[i].combiner == combiner && made[i].p == p && made[i].r == r &&
            co_dt_get(made[i].h)) {
            *newtype = made[i].h;
            return MPI_SUCCESS;
        }
    if (nmade == capmade) {
        int cap = capmade ? 2 * capmade : 8;
        struct f90_made *m = realloc(made, (size_t)cap * sizeof(*m));
        if (!m) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
        made = m;
        capmade = cap;
    }
    co_dtype *old = co_dt_get(base), *dt = NULL;
    int rc = co_dt_copy_layout(old, &dt);
    if (rc == MPI_SUCCESS) dt->committed = 1;
    int args[2] = {integer ? r : p, r};
    if ((rc = publish(fn, rc, dt, combiner, integer ? 1 : 2, args, 0, NULL, 0, NULL, newtype)))
        return rc;
    dt->predefined = 1;
    strcpy(dt->name, old->name);
    made[nmade++] = (struct f90_made){combiner, p, r, dt->handle};
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer);
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_f90_integer";
    CO_ENTER(fn);
    return f90_type(fn, MPI_COMBINER_F90_INTEGER, 0, r, newtype);
}

CO_WEAK(MPI_Type_create_f90_real, PMPI_Type_create_f90_real);
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_f90_real";
    CO_ENTER(fn);
    return f90_type(fn, MPI_COMBINER_F90_REAL, p, r, newtype);
}

CO_WEAK(MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex);
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_create_f90_complex";
    CO_ENTER(fn);
    return f90_type(fn, MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}

/* The named type of a class and size: Fortran's sized types, as the standard's examples
 * return, and the C types where Fortran has none here (REAL of long double's size, COMPLEX
 * of twice it). */
CO_WEAK(MPI_Type_match_size, PMPI_Type_match_size);
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_match_size";
    CO_ENTER(fn);
    if (!datatype) return bad_arg(fn, "datatype is NULL");
    static const struct {
        int cls, size;
        MPI_Datatype type;
    } match[] = {
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
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "typeclass %d is none of MPI_TYPECLASS_INTEGER, _REAL, _COMPLEX",
                        typeclass);
    for (size_t i = 0; i < sizeof(match) / sizeof(match[0]); i++)
        if (match[i].cls == typeclass && match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    return co_error(NULL, fn, MPI_ERR_ARG, "no %s type of %d bytes",
                    typeclass == MPI_TYPECLASS_INTEGER ? "integer"
                    : typeclass == MPI_TYPECLASS_REAL  ? "real"
                                                       : "complex",
                    size);
}

CO_WEAK(MPI_Type_size_x, PMPI_Type_size_x);
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size) {
    static const char fn[] = "MPI_Type_size_x";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!size) return bad_arg(fn, "size is NULL");
    *size = (MPI_Count)dt->size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_extent, PMPI_Type_get_extent);
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    static const char fn[] = "MPI_Type_get_extent";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!lb || !extent) return bad_arg(fn, "lb or extent is NULL");
    *lb = dt->lb;
    *extent = co_dt_extent(dt);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_extent_x, PMPI_Type_get_extent_x);
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    static const char fn[] = "MPI_Type_get_extent_x";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!lb || !extent) return bad_arg(fn, "lb or extent is NULL");
    *lb = dt->lb;
    *extent = co_dt_extent(dt);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_true_extent, PMPI_Type_get_true_extent);
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent) {
    static const char fn[] = "MPI_Type_get_true_extent";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!true_lb || !true_extent) return bad_arg(fn, "true_lb or true_extent is NULL");
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_true_extent_x, PMPI_Type_get_true_extent_x);
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent) {
    static const char fn[] = "MPI_Type_get_true_extent_x";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!true_lb || !true_extent) return bad_arg(fn, "true_lb or true_extent is NULL");
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}

/* Deprecated MPI-1 forms, still used by old codes. */
CO_WEAK(MPI_Type_extent, PMPI_Type_extent);
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent) {
    static const char fn[] = "MPI_Type_extent";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!extent) return bad_arg(fn, "extent is NULL");
    *extent = co_dt_extent(dt);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_lb, PMPI_Type_lb);
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement) {
    static const char fn[] = "MPI_Type_lb";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!displacement) return bad_arg(fn, "displacement is NULL");
    *displacement = dt->lb;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_ub, PMPI_Type_ub);
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement) {
    static const char fn[] = "MPI_Type_ub";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!displacement) return bad_arg(fn, "displacement is NULL");
    *displacement = dt->ub;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_envelope, PMPI_Type_get_envelope);
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner) {
    static const char fn[] = "MPI_Type_get_envelope";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return bad_arg(fn, "an output argument is NULL");
    *num_integers = dt->nints;
    *num_addresses = dt->naddrs;
    *num_datatypes = dt->ntypes;
    *combiner = dt->combiner;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_contents, PMPI_Type_get_contents);
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    static const char fn[] = "MPI_Type_get_contents";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (dt->combiner == MPI_COMBINER_NAMED)
        return co_error(NULL, fn, MPI_ERR_TYPE,
                        "%s is a predefined datatype: it has no contents (check the combiner "
                        "with MPI_Type_get_envelope first)",
                        dt->name);
    if (max_integers < dt->nints || max_addresses < dt->naddrs || max_datatypes < dt->ntypes)
        return co_error(NULL, fn, MPI_ERR_ARG,
                        "arrays too small: the type has %d integers, %d addresses and %d "
                        "datatypes (room given: %d, %d, %d)",
                        dt->nints, dt->naddrs, dt->ntypes, max_integers, max_addresses,
                        max_datatypes);
    if ((dt->nints && !array_of_integers) || (dt->naddrs && !array_of_addresses) ||
        (dt->ntypes && !array_of_datatypes))
        return bad_arg(fn, "an output array is NULL");
    /* Derived types come back as new handles the caller frees; predefined ones as they are. */
    for (int i = 0; i < dt->ntypes; i++) {
        co_dtype *t = dt->types[i], *c = NULL;
        if (t->predefined) {
            array_of_datatypes[i] = t->handle;
            continue;
        }
        rc = co_dt_copy_layout(t, &c);
        if (rc == MPI_SUCCESS) {
            c->committed = t->committed;
            rc = co_dt_set_contents(c, t->combiner, t->nints, t->ints, t->naddrs, t->addrs,
                                    t->ntypes, t->types);
        }
        if (rc == MPI_SUCCESS) rc = co_dt_register(c);
        if (rc != MPI_SUCCESS) {
            if (c) co_dt_destroy(c);
            for (int j = 0; j < i; j++) {
                co_dtype *made = co_dt_get(array_of_datatypes[j]);
                if (made && !made->predefined) co_dt_release(made);
            }
            return co_error(NULL, fn, rc, "out of memory");
        }
        array_of_datatypes[i] = c->handle;
    }
    if (dt->nints) memcpy(array_of_integers, dt->ints, (size_t)dt->nints * sizeof(int));
    if (dt->naddrs) memcpy(array_of_addresses, dt->addrs, (size_t)dt->naddrs * sizeof(MPI_Aint));
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_name, PMPI_Type_get_name);
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen) {
    static const char fn[] = "MPI_Type_get_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!type_name || !resultlen) return bad_arg(fn, "type_name or resultlen is NULL");
    size_t n = strnlen(dt->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, dt->name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_set_name, PMPI_Type_set_name);
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name) {
    static const char fn[] = "MPI_Type_set_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = arg_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!type_name) return bad_arg(fn, "type_name is NULL");
    /* longer names are truncated, as MPI allows */
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(dt->name, type_name, n);
    dt->name[n] = '\0';
    return MPI_SUCCESS;
}

/* ---- Addresses --------------------------------------------------------------------------------
 */

CO_WEAK(MPI_Get_address, PMPI_Get_address);
int PMPI_Get_address(const void *location, MPI_Aint *address) {
    CO_ENTER("MPI_Get_address");
    if (!address) return bad_arg("MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Address, PMPI_Address);
int PMPI_Address(void *location, MPI_Aint *address) {
    CO_ENTER("MPI_Address");
    if (!address) return bad_arg("MPI_Address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Address arithmetic in unsigned form: wrapping is defined, and addresses are unsigned. */
CO_WEAK(MPI_Aint_add, PMPI_Aint_add);
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

CO_WEAK(MPI_Aint_diff, PMPI_Aint_diff);
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---- Pack and Unpack --------------------------------------------------------------------------
 */

/* Whether any byte of (buf, count, dt) lies in [lo, hi): the bounding box first, then the
 * runs themselves, so that packing into a hole of the typed buffer stays legal. */
static int typed_overlaps(const co_dtype *dt, size_t count, const void *buf, const char *lo,
                          const char *hi) {
    if (count == 0 || dt->size == 0 || lo >= hi) return 0;
    MPI_Aint ext = co_dt_extent(dt), span = (MPI_Aint)(count - 1) * ext;
    const char *tlo = (const char *)buf + dt->true_lb + (span < 0 ? span : 0);
    const char *thi = (const char *)buf + dt->true_ub + (span > 0 ? span : 0);
    if (thi <= lo || tlo >= hi) return 0;
    struct iovec iov[64];
    size_t off = 0, total = count * dt->size;
    while (off < total) {
        size_t covered;
        int n = co_dt_iov(dt, count, buf, off, iov, 64, &covered);
        for (int i = 0; i < n; i++) {
            const char *a = iov[i].iov_base, *b = a + iov[i].iov_len;
            if (a < hi && b > lo) return 1;
        }
        if (!covered) break;
        off += covered;
    }
    return 0;
}

CO_WEAK(MPI_Pack, PMPI_Pack);
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm) {
    static const char fn[] = "MPI_Pack";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_count(c, fn, incount))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, incount, &rc);
    if (!dt) return rc;
    if ((rc = co_api_buf(c, fn, inbuf, incount, dt))) return rc;
    if (!position) return co_error(c, fn, MPI_ERR_ARG, "position is NULL");
    if (outsize < 0) return co_error(c, fn, MPI_ERR_ARG, "negative outsize %d", outsize);
    if (*position < 0) return co_error(c, fn, MPI_ERR_ARG, "negative position %d", *position);
    size_t bytes = (size_t)incount * dt->size;
    if (*position > outsize || bytes > (size_t)(outsize - *position))
        return co_error(c, fn, MPI_ERR_TRUNCATE,
                        "%zu packed bytes do not fit at position %d of a %d-byte buffer", bytes,
                        *position, outsize);
    if (bytes == 0) return MPI_SUCCESS;
    if (!outbuf) return co_error(c, fn, MPI_ERR_BUFFER, "outbuf is NULL");
    char *dst = (char *)outbuf + *position;
    if (typed_overlaps(dt, (size_t)incount, inbuf, dst, dst + bytes))
        return co_error(c, fn, MPI_ERR_ARG, "outbuf overlaps the data being packed");
    co_dt_pack(dt, (size_t)incount, inbuf, 0, dst, bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Unpack, PMPI_Unpack);
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
    static const char fn[] = "MPI_Unpack";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_count(c, fn, outcount))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, outcount, &rc);
    if (!dt) return rc;
    if ((rc = co_api_buf(c, fn, outbuf, outcount, dt))) return rc;
    if (!position) return co_error(c, fn, MPI_ERR_ARG, "position is NULL");
    if (insize < 0) return co_error(c, fn, MPI_ERR_ARG, "negative insize %d", insize);
    if (*position < 0) return co_error(c, fn, MPI_ERR_ARG, "negative position %d", *position);
    size_t bytes = (size_t)outcount * dt->size;
    if (*position > insize || bytes > (size_t)(insize - *position))
        return co_error(c, fn, MPI_ERR_TRUNCATE,
                        "unpacking %zu bytes at position %d runs past the %d-byte input", bytes,
                        *position, insize);
    if (bytes == 0) return MPI_SUCCESS;
    if (!inbuf) return co_error(c, fn, MPI_ERR_BUFFER, "inbuf is NULL");
    const char *src = (const char *)inbuf + *position;
    if (typed_overlaps(dt, (size_t)outcount, outbuf, src, src + bytes))
        return co_error(c, fn, MPI_ERR_ARG, "the output buffer overlaps the packed input");
    co_dt_unpack(dt, (size_t)outcount, outbuf, 0, src, bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Pack_size, PMPI_Pack_size);
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Pack_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = co_api_count(c, fn, incount))) return rc;
    co_dtype *dt = co_api_dtype(c, fn, datatype, incount, &rc);
    if (!dt) return rc;
    if (!size) return co_error(c, fn, MPI_ERR_ARG, "size is NULL");
    size_t bytes = (size_t)incount * dt->size;
    if (bytes > INT_MAX)
        return co_error(c, fn, MPI_ERR_COUNT, "%d elements pack into %zu bytes, more than an int",
                        incount, bytes);
    *size = (int)bytes;
    return MPI_SUCCESS;
}

/* ---- Pack and Unpack in external32 -----------------------------------------------------------
 * Portable packing (MPI 3.1 sections 4.2 and 13.5.2): the same checks as Pack and Unpack, with
 * MPI_Aint sizes and positions; errors go to MPI_COMM_WORLD's handler, there being no
 * communicator argument. The conversion is in src/dtype/dtype_external.c. */

static int check_datarep(const char *fn, const char *datarep) {
    if (!datarep) return bad_arg(fn, "datarep is NULL");
    if (strcmp(datarep, "external32") != 0)
        return co_error(NULL, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                        "data representation \"%.64s\" is not supported (only \"external32\")",
                        datarep);
    return MPI_SUCCESS;
}

/* Report a failed conversion of dt (packing: native to external32). */
static int ext_error(const char *fn, int rc, const co_ext_fail *f, int packing) {
    const char *name = co_basic_name(f->basic);
    switch (rc) {
    case MPI_ERR_TYPE:
        return co_error(NULL, fn, MPI_ERR_TYPE,
                        "the datatype holds %s, which has no external32 representation here", name);
    case MPI_ERR_COUNT:
        return co_error(NULL, fn, MPI_ERR_COUNT, "the external32 size would not fit in MPI_Aint");
    case MPI_ERR_CONVERSION: {
        char v[32];
        if (f->is_signed)
            snprintf(v, sizeof(v), "%lld", (long long)(int64_t)f->value);
        else
            snprintf(v, sizeof(v), "%llu", (unsigned long long)f->value);
        size_t ext = co_ext_basic_size(f->basic), nat = co_basic_size(f->basic);
        if (packing)
            return co_error(NULL, fn, MPI_ERR_CONVERSION,
                            "%s value %s does not fit in its %zu external32 bytes", name, v, ext);
        return co_error(NULL, fn, MPI_ERR_CONVERSION,
                        "external32 value %s does not fit in %s's %zu bytes here", v, name, nat);
    }
    default:
        return co_error(NULL, fn, MPI_ERR_INTERN, "external32 conversion failed (class %d)", rc);
    }
}

/* External32 bytes of count elements of dt. */
static int ext_bytes(const char *fn, const co_dtype *dt, int count, size_t *bytes) {
    co_ext_fail f = {0};
    size_t one = 0;
    int rc = co_ext_size(dt, &one, &f);
    if (rc != MPI_SUCCESS) return ext_error(fn, rc, &f, 1);
    if (__builtin_mul_overflow(one, (size_t)count, bytes) || *bytes > (size_t)PTRDIFF_MAX)
        return co_error(NULL, fn, MPI_ERR_COUNT,
                        "%d elements of %zu external32 bytes do not fit in MPI_Aint", count, one);
    return MPI_SUCCESS;
}

/* The checks Pack_external and Unpack_external share: the data representation, the count,
 * the type and the typed buffer, then the packed side (`size` bytes, *position into it),
 * which must hold the data's external32 bytes (returned in *bytes) and not overlap it.
 * *packed is the packed side's address at the position; NULL when there is nothing to do. */
static int ext_args(const char *fn, const char *datarep, int count, MPI_Datatype datatype,
                    const void *typed, const void *pbuf, MPI_Aint size, const MPI_Aint *position,
                    int packing, co_dtype **dt, size_t *bytes, char **packed) {
    *packed = NULL;
    int rc = check_datarep(fn, datarep);
    if (rc) return rc;
    if ((rc = co_api_count(NULL, fn, count))) return rc;
    if (!(*dt = co_api_dtype(NULL, fn, datatype, count, &rc))) return rc;
    if ((rc = co_api_buf(NULL, fn, typed, count, *dt))) return rc;
    if (!position) return bad_arg(fn, "position is NULL");
    const char *side = packing ? "outsize" : "insize";
    if (size < 0) return co_error(NULL, fn, MPI_ERR_ARG, "negative %s %lld", side, (long long)size);
    if (*position < 0)
        return co_error(NULL, fn, MPI_ERR_ARG, "negative position %lld", (long long)*position);
    if ((rc = ext_bytes(fn, *dt, count, bytes))) return rc;
    if (*position > size || *bytes > (size_t)(size - *position)) {
        if (packing)
            return co_error(NULL, fn, MPI_ERR_TRUNCATE,
                            "%zu packed bytes do not fit at position %lld of a %lld-byte buffer",
                            *bytes, (long long)*position, (long long)size);
        return co_error(NULL, fn, MPI_ERR_TRUNCATE,
                        "unpacking %zu bytes at position %lld runs past the %lld-byte input",
                        *bytes, (long long)*position, (long long)size);
    }
    if (*bytes == 0) return MPI_SUCCESS;
    if (!pbuf)
        return co_error(NULL, fn, MPI_ERR_BUFFER, "%s is NULL", packing ? "outbuf" : "inbuf");
    char *at = (char *)(uintptr_t)pbuf + *position;
    if (typed_overlaps(*dt, (size_t)count, typed, at, at + *bytes))
        return co_error(NULL, fn, MPI_ERR_ARG, "%s",
                        packing ? "outbuf overlaps the data being packed"
                                : "the output buffer overlaps the packed input");
    *packed = at;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Pack_external, PMPI_Pack_external);
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position) {
    static const char fn[] = "MPI_Pack_external";
    CO_ENTER(fn);
    co_dtype *dt = NULL;
    size_t bytes = 0;
    char *dst = NULL;
    int rc = ext_args(fn, datarep, incount, datatype, inbuf, outbuf, outsize, position, 1, &dt,
                      &bytes, &dst);
    if (rc || !dst) return rc;
    co_ext_fail f = {0};
    if ((rc = co_ext_pack(dt, (size_t)incount, inbuf, dst, &f))) return ext_error(fn, rc, &f, 1);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Unpack_external, PMPI_Unpack_external);
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype) {
    static const char fn[] = "MPI_Unpack_external";
    CO_ENTER(fn);
    co_dtype *dt = NULL;
    size_t bytes = 0;
    char *src = NULL;
    int rc = ext_args(fn, datarep, outcount, datatype, outbuf, inbuf, insize, position, 0, &dt,
                      &bytes, &src);
    if (rc || !src) return rc;
    co_ext_fail f = {0};
    if ((rc = co_ext_unpack(dt, (size_t)outcount, outbuf, src, &f)))
        return ext_error(fn, rc, &f, 0);
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Pack_external_size, PMPI_Pack_external_size);
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size) {
    static const char fn[] = "MPI_Pack_external_size";
    CO_ENTER(fn);
    int rc = check_datarep(fn, datarep);
    if (rc) return rc;
    if ((rc = co_api_count(NULL, fn, incount))) return rc;
    co_dtype *dt = co_api_dtype(NULL, fn, datatype, incount, &rc);
    if (!dt) return rc;
    if (!size) return bad_arg(fn, "size is NULL");
    size_t bytes = 0;
    if ((rc = ext_bytes(fn, dt, incount, &bytes))) return rc;
    *size = (MPI_Aint)bytes;
    return MPI_SUCCESS;
}

/* ---- Attributes ---------------------------------------------------------------------------
 * As on communicators (src/comm/attr.c), with keys of their own: a communicator's key is not
 * a datatype's, nor the other way round (MPI_ERR_KEYVAL). Predefined datatypes take
 * attributes too. */

static int type_key(const char *fn, int keyval) {
    if (co_keyval_kind(keyval) == CO_KV_TYPE) return MPI_SUCCESS;
    return co_error(NULL, fn, MPI_ERR_KEYVAL, "%d is not a datatype attribute key", keyval);
}

CO_WEAK(MPI_Type_create_keyval, PMPI_Type_create_keyval);
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state) {
    static const char fn[] = "MPI_Type_create_keyval";
    CO_ENTER(fn);
    if (!type_keyval) return bad_arg(fn, "type_keyval is NULL");
    int rc = co_keyval_create(type_copy_attr_fn, type_delete_attr_fn, extra_state, CO_KV_TYPE,
                              type_keyval);
    if (rc) return co_error(NULL, fn, rc, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_free_keyval, PMPI_Type_free_keyval);
int PMPI_Type_free_keyval(int *type_keyval) {
    static const char fn[] = "MPI_Type_free_keyval";
    CO_ENTER(fn);
    if (!type_keyval) return bad_arg(fn, "type_keyval is NULL");
    if (co_keyval_free(*type_keyval, CO_KV_TYPE))
        return co_error(NULL, fn, MPI_ERR_KEYVAL, "%d is not a datatype attribute key",
                        *type_keyval);
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_set_attr, PMPI_Type_set_attr);
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val) {
    static const char fn[] = "MPI_Type_set_attr";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = arg_type(fn, datatype, &rc);
    if (!dt) return rc;
    if ((rc = type_key(fn, type_keyval))) return rc;
    rc = co_attrs_set(&dt->attrs, dt->handle, type_keyval, attribute_val);
    if (rc) return co_error(NULL, fn, rc, "the delete callback of the old value failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_get_attr, PMPI_Type_get_attr);
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag) {
    static const char fn[] = "MPI_Type_get_attr";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = query_type(fn, datatype, &rc);
    if (!dt) return rc;
    if (!attribute_val || !flag) return bad_arg(fn, "attribute_val or flag is NULL");
    if ((rc = type_key(fn, type_keyval))) return rc;
    void *val = NULL;
    co_attrs_get(dt->attrs, type_keyval, &val, flag);
    if (*flag) *(void **)attribute_val = val;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Type_delete_attr, PMPI_Type_delete_attr);
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
    static const char fn[] = "MPI_Type_delete_attr";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_dtype *dt = arg_type(fn, datatype, &rc);
    if (!dt) return rc;
    if ((rc = type_key(fn, type_keyval))) return rc;
    rc = co_attrs_delete(&dt->attrs, dt->handle, type_keyval);
    if (rc == MPI_ERR_KEYVAL) return MPI_SUCCESS; /* nothing was set */
    if (rc) return co_error(NULL, fn, rc, "the attribute's delete callback failed");
    return MPI_SUCCESS;
}
