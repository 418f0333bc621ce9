/* File entry points (MPI-IO): argument checks, then src/io. Errors go through the file's
 * handler, and through MPI_FILE_NULL's for an invalid file handle, MPI_File_open and
 * MPI_File_delete; both are MPI_ERRORS_RETURN until the program sets another (docs/io.md). */
#include "api.h"
#include "../coll/coll.h"
#include "../io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static co_file *file_arg(const char *fn, MPI_File h, int *rc) {
    co_file *f = co_file_get(h);
    if (CO_UNLIKELY(!f))
        *rc = co_file_error(NULL, fn, MPI_ERR_FILE,
                            h == MPI_FILE_NULL ? "file is MPI_FILE_NULL"
                                               : "invalid file (closed or never opened)");
    return f;
}

#define FILE_ENTER(fn, h)                                                                          \
    CO_ENTER(fn);                                                                                  \
    int rc = MPI_SUCCESS;                                                                          \
    co_file *f = file_arg(fn, h, &rc);                                                             \
    if (!f) return rc

#define FILE_OUT(f, fn, p)                                                                         \
    do {                                                                                           \
        if (CO_UNLIKELY(!(p))) return co_file_error((f), (fn), MPI_ERR_ARG, "%s is NULL", #p);     \
    } while (0)

/* MPI_ERR_UNSUPPORTED_OPERATION for what a file opened MPI_MODE_SEQUENTIAL does not allow
 * (MPI 3.1 13.2.1 and 13.8): its individual file pointer and explicit offsets, seeking,
 * resizing. */
static int sequential(co_file *f, const char *fn) {
    if (!(f->amode & MPI_MODE_SEQUENTIAL)) return MPI_SUCCESS;
    return co_file_error(f, fn, MPI_ERR_UNSUPPORTED_OPERATION,
                         "the file was opened MPI_MODE_SEQUENTIAL: it is read and written in "
                         "order through the shared file pointer, without seeking");
}

/* A committed, valid datatype, reported through the file's handler. */
static co_dtype *type_arg(co_file *f, const char *fn, const char *what, MPI_Datatype h, int *rc) {
    co_dtype *dt = co_dt_get(h);
    if (dt && dt->committed && !dt->freed) return dt;
    *rc = co_file_error(f, fn, MPI_ERR_TYPE, "%s %s", what,
                        h == MPI_DATATYPE_NULL ? "is MPI_DATATYPE_NULL"
                        : !dt                  ? "is invalid (freed or never created)"
                        : dt->freed            ? "has been freed"
                                               : "has not been committed");
    return NULL;
}

/* ---- Opening and closing ------------------------------------------------------------------- */

#define AMODE_BITS                                                                                 \
    (MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |                         \
     MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL | MPI_MODE_APPEND |           \
     MPI_MODE_SEQUENTIAL)

static const char *amode_problem(int amode) {
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) + !!(amode & MPI_MODE_RDWR);
    if (amode & ~AMODE_BITS) return "it has bits no MPI_MODE_* constant has";
    if (rw != 1) return "it needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR";
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return "MPI_MODE_RDONLY does not go with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return "MPI_MODE_RDWR does not go with MPI_MODE_SEQUENTIAL";
    return NULL;
}

CO_WEAK(MPI_File_open, PMPI_File_open);
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    static const char fn[] = "MPI_File_open";
    CO_ENTER(fn);
    co_comm *c = co_comm_get(comm);
    if (!c)
        return co_file_error(NULL, fn, MPI_ERR_COMM,
                             comm == MPI_COMM_NULL
                                 ? "communicator is MPI_COMM_NULL"
                                 : "invalid communicator (freed or never created)");
    if (c->is_inter)
        return co_file_error(NULL, fn, MPI_ERR_COMM, "files are opened on intracommunicators");
    if (!fh) return co_file_error(NULL, fn, MPI_ERR_ARG, "fh is NULL");
    if (!filename) return co_file_error(NULL, fn, MPI_ERR_ARG, "filename is NULL");
    const char *why = amode_problem(amode);
    if (why) return co_file_error(NULL, fn, MPI_ERR_AMODE, "access mode %#x: %s", amode, why);
    co_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = co_info_get(info)))
        return co_file_error(NULL, fn, MPI_ERR_INFO, "invalid info object");
    co_file *f;
    int rc = co_file_open(c, filename, amode, in, fn, &f);
    if (rc) return rc;
    *fh = f->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_close, PMPI_File_close);
int PMPI_File_close(MPI_File *fh) {
    static const char fn[] = "MPI_File_close";
    CO_ENTER(fn);
    if (!fh) return co_file_error(NULL, fn, MPI_ERR_ARG, "fh is NULL");
    int rc = MPI_SUCCESS;
    co_file *f = file_arg(fn, *fh, &rc);
    if (!f) return rc;
    if (f->split)
        return co_file_error(f, fn, MPI_ERR_OTHER,
                             "a split collective begun on the file has not been ended");
    if ((rc = co_file_close(f, fn))) return rc;
    *fh = MPI_FILE_NULL;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_delete, PMPI_File_delete);
int PMPI_File_delete(const char *filename, MPI_Info info) {
    static const char fn[] = "MPI_File_delete";
    CO_ENTER(fn);
    if (!filename) return co_file_error(NULL, fn, MPI_ERR_ARG, "filename is NULL");
    if (info != MPI_INFO_NULL && !co_info_get(info))
        return co_file_error(NULL, fn, MPI_ERR_INFO, "invalid info object");
    const char *p = co_file_local_path(filename);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
        return co_file_error(NULL, fn, MPI_ERR_BAD_FILE, "%s is a directory", filename);
    if (unlink(p) != 0) {
        int e = errno;
        return co_file_error(NULL, fn, co_file_errno_class(e), "cannot delete %s: %s", filename,
                             strerror(e));
    }
    return MPI_SUCCESS;
}

/* ---- The file object ----------------------------------------------------------------------- */

/* Collective calls that change the file's size: rank 0 does it, then tells the others how it
 * went (which orders the change before their later accesses). */
static int resize(const char *fn, MPI_File fh, MPI_Offset size, int grow_only) {
    FILE_ENTER(fn, fh);
    if (size < 0) return co_file_error(f, fn, MPI_ERR_ARG, "negative size %lld", size);
    if (f->amode & MPI_MODE_RDONLY)
        return co_file_error(f, fn, MPI_ERR_READ_ONLY, "the file was opened MPI_MODE_RDONLY");
    if ((rc = sequential(f, fn))) return rc;
    int err = 0;
    /* every member's earlier writes come first */
    if ((rc = co_barrier(f->comm))) return co_file_error(f, fn, rc, "the members' barrier failed");
    if (f->comm->rank == 0) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            err = errno;
        else if (grow_only && st.st_size < size)
            err = posix_fallocate(f->fd, 0, (off_t)size);
        else if (!grow_only && ftruncate(f->fd, (off_t)size) != 0)
            err = errno;
    }
    if ((rc = co_bcast_binomial(&err, 1, co_dt_get(MPI_INT), 0, f->comm)))
        return co_file_error(f, fn, rc, "the members' broadcast failed");
    if (err)
        return co_file_error(f, fn, co_file_errno_class(err), "%s to %lld bytes failed: %s",
                             grow_only ? "preallocating" : "resizing", size, strerror(err));
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_set_size, PMPI_File_set_size);
int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
    return resize("MPI_File_set_size", fh, size, 0);
}

CO_WEAK(MPI_File_preallocate, PMPI_File_preallocate);
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    return resize("MPI_File_preallocate", fh, size, 1);
}

static int file_size(co_file *f, const char *fn, MPI_Offset *size) {
    struct stat st;
    if (fstat(f->fd, &st) != 0) {
        int e = errno;
        return co_file_error(f, fn, co_file_errno_class(e), "fstat failed: %s", strerror(e));
    }
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_size, PMPI_File_get_size);
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size) {
    static const char fn[] = "MPI_File_get_size";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, size);
    return file_size(f, fn, size);
}

CO_WEAK(MPI_File_get_group, PMPI_File_get_group);
int PMPI_File_get_group(MPI_File fh, MPI_Group *group) {
    static const char fn[] = "MPI_File_get_group";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, group);
    *group = co_group_handle_out(f->comm->local);
    if (*group == MPI_GROUP_NULL) return co_file_error(f, fn, MPI_ERR_NO_MEM, "out of handles");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_amode, PMPI_File_get_amode);
int PMPI_File_get_amode(MPI_File fh, int *amode) {
    static const char fn[] = "MPI_File_get_amode";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, amode);
    *amode = f->amode;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_set_info, PMPI_File_set_info);
int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
    static const char fn[] = "MPI_File_set_info";
    FILE_ENTER(fn, fh);
    if (info == MPI_INFO_NULL) return MPI_SUCCESS;
    co_info *in = co_info_get(info);
    if (!in) return co_file_error(f, fn, MPI_ERR_INFO, "invalid info object");
    /* no hint changes what Cohort does; they are kept for MPI_File_get_info */
    for (int i = 0; i < in->n; i++)
        if (co_info_set(f->info, in->kv[i].key, in->kv[i].val))
            return co_file_error(f, fn, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_info, PMPI_File_get_info);
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used) {
    static const char fn[] = "MPI_File_get_info";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, info_used);
    co_info *in = co_info_dup(f->info);
    if (!in) return co_file_error(f, fn, MPI_ERR_NO_MEM, "out of info objects");
    *info_used = in->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_set_atomicity, PMPI_File_set_atomicity);
int PMPI_File_set_atomicity(MPI_File fh, int flag) {
    static const char fn[] = "MPI_File_set_atomicity";
    FILE_ENTER(fn, fh);
    /* collective: accesses in the old mode end before any in the new one begins */
    if ((rc = co_barrier(f->comm))) return co_file_error(f, fn, rc, "the members' barrier failed");
    f->atomic = !!flag;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_atomicity, PMPI_File_get_atomicity);
int PMPI_File_get_atomicity(MPI_File fh, int *flag) {
    static const char fn[] = "MPI_File_get_atomicity";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, flag);
    *flag = f->atomic;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_sync, PMPI_File_sync);
int PMPI_File_sync(MPI_File fh) {
    static const char fn[] = "MPI_File_sync";
    FILE_ENTER(fn, fh);
    if (f->amode & MPI_MODE_RDONLY) return MPI_SUCCESS; /* nothing of this rank's to write */
    if (fsync(f->fd) != 0 && errno != EINVAL) {
        int e = errno;
        return co_file_error(f, fn, co_file_errno_class(e), "fsync failed: %s", strerror(e));
    }
    if ((rc = co_barrier(f->comm))) return co_file_error(f, fn, rc, "the members' barrier failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_type_extent, PMPI_File_get_type_extent);
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent) {
    static const char fn[] = "MPI_File_get_type_extent";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, extent);
    co_dtype *dt = co_dt_get(datatype);
    if (!dt || dt->freed) return co_file_error(f, fn, MPI_ERR_TYPE, "invalid datatype");
    size_t es = 0;
    co_ext_fail fail = {0};
    if (f->ext32 && !co_ext_size(dt, &es, &fail))
        *extent = (MPI_Aint)es; /* its data in external32 (types without gaps: docs/io.md) */
    else
        *extent = co_dt_extent(dt); /* "native": the file holds memory's representation */
    return MPI_SUCCESS;
}

/* ---- Views --------------------------------------------------------------------------------- */

static int datarep_ok(const char *d) {
    return !strcmp(d, "native") || !strcmp(d, "internal");
}

/* The runs of an etype or filetype must lie at non-negative displacements, none before the
 * one before it, and none overlapping another unless the file is opened for reading only
 * (MPI 3.1 13.3). MPI_ERR_IO, as ROMIO reports it. */
static int view_type_check(co_file *f, const char *fn, const char *what, co_dtype *t) {
    if (t->true_lb < 0 || t->lb < 0)
        return co_file_error(f, fn, MPI_ERR_IO, "the %s has negative displacements", what);
    size_t at = 0, prev = 0;
    int m = co_file_type_monotonic(t, &at, &prev);
    if (m == 0)
        return co_file_error(f, fn, MPI_ERR_IO,
                             "the %s's displacements are not monotonically nondecreasing (a "
                             "block at byte %zu follows one at %zu)",
                             what, at, prev);
    if (m < 0 && !(f->amode & MPI_MODE_RDONLY))
        return co_file_error(f, fn, MPI_ERR_IO,
                             "the %s has overlapping blocks (at byte %zu), which a file opened "
                             "for writing may not have",
                             what, at);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_set_view, PMPI_File_set_view);
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info) {
    static const char fn[] = "MPI_File_set_view";
    FILE_ENTER(fn, fh);
    co_dtype *et = type_arg(f, fn, "etype", etype, &rc), *ft;
    if (!et) return rc;
    if (!(ft = type_arg(f, fn, "filetype", filetype, &rc))) return rc;
    if (!datarep) return co_file_error(f, fn, MPI_ERR_ARG, "datarep is NULL");
    int ext32 = !strcmp(datarep, "external32");
    if (!datarep_ok(datarep) && !ext32)
        return co_file_error(f, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                             "data representation \"%s\": \"native\" (or its synonym "
                             "\"internal\") and \"external32\" are supported",
                             datarep);
    if (info != MPI_INFO_NULL && !co_info_get(info))
        return co_file_error(f, fn, MPI_ERR_INFO, "invalid info object");
    if (et->size == 0) return co_file_error(f, fn, MPI_ERR_TYPE, "the etype holds no data");
    if (ft->size == 0 || ft->size % et->size)
        return co_file_error(f, fn, MPI_ERR_TYPE,
                             "the filetype's %zu bytes are not a whole number of etypes "
                             "(%zu bytes each)",
                             ft->size, et->size);
    if ((rc = view_type_check(f, fn, "etype", et)) || (rc = view_type_check(f, fn, "filetype", ft)))
        return rc;
    size_t esize = et->size;
    if (ext32) {
        co_ext_fail fail = {0};
        if (!(ft->contig && ft->lb == 0 && ft->true_lb == 0 &&
              co_dt_extent(ft) == (MPI_Aint)ft->size))
            return co_file_error(f, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                                 "an \"external32\" view needs a filetype without gaps");
        if (co_ext_size(et, &esize, &fail))
            return co_file_error(f, fn, MPI_ERR_UNSUPPORTED_DATAREP,
                                 "the etype's %s has no external32 form",
                                 co_basic_name(fail.basic));
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(f->amode & MPI_MODE_SEQUENTIAL))
            return co_file_error(f, fn, MPI_ERR_ARG,
                                 "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL");
        disp = co_file_byte_offset(f, atomic_load(f->shared));
    } else if (disp < 0) {
        return co_file_error(f, fn, MPI_ERR_ARG, "negative displacement %lld", disp);
    } else if (f->amode & MPI_MODE_SEQUENTIAL) {
        return co_file_error(f, fn, MPI_ERR_ARG,
                             "a file opened MPI_MODE_SEQUENTIAL takes MPI_DISPLACEMENT_CURRENT "
                             "as its view's displacement");
    }
    return co_file_set_view(f, disp, et, ft, ext32, esize, fn);
}

/* A handle for a view's type: the predefined one itself, else a copy the program frees. */
static int view_type_out(co_dtype *dt, MPI_Datatype *out) {
    if (dt->predefined) {
        *out = dt->handle;
        return MPI_SUCCESS;
    }
    co_dtype *c = NULL;
    int rc = co_dt_copy_layout(dt, &c);
    if (!rc) {
        c->committed = 1;
        rc = co_dt_set_contents(c, dt->combiner, dt->nints, dt->ints, dt->naddrs, dt->addrs,
                                dt->ntypes, dt->types);
    }
    if (!rc) rc = co_dt_register(c);
    if (rc) {
        if (c) co_dt_destroy(c);
        return rc;
    }
    *out = c->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_view, PMPI_File_get_view);
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep) {
    static const char fn[] = "MPI_File_get_view";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, disp);
    FILE_OUT(f, fn, etype);
    FILE_OUT(f, fn, filetype);
    FILE_OUT(f, fn, datarep);
    if ((rc = view_type_out(f->etype, etype))) return co_file_error(f, fn, rc, "out of handles");
    if ((rc = view_type_out(f->ftype, filetype))) {
        if (!f->etype->predefined) PMPI_Type_free(etype);
        return co_file_error(f, fn, rc, "out of handles");
    }
    *disp = f->disp;
    strcpy(datarep, f->ext32 ? "external32" : "native");
    return MPI_SUCCESS;
}

/* ---- Data access --------------------------------------------------------------------------- */

enum { AT, INDIV, SHARED, ORDERED }; /* where an access starts */
enum { READ = 0, WRITE = 1 };

static int access_mode_check(co_file *f, const char *fn, int where, int write) {
    if (write && (f->amode & MPI_MODE_RDONLY))
        return co_file_error(f, fn, MPI_ERR_READ_ONLY, "writing to a file opened MPI_MODE_RDONLY");
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return co_file_error(f, fn, MPI_ERR_ACCESS, "reading a file opened MPI_MODE_WRONLY");
    if (where == AT || where == INDIV) return sequential(f, fn);
    return MPI_SUCCESS;
}

/* The checks every data access makes, then the access; *st gets what moved. */
static int do_access(co_file *f, const char *fn, int where, int write, int coll, MPI_Offset offset,
                     const void *buf, int count, MPI_Datatype type, co_status *st) {
    int rc = access_mode_check(f, fn, where, write);
    if (rc) return rc;
    if (count < 0) return co_file_error(f, fn, MPI_ERR_COUNT, "negative count %d", count);
    co_dtype *dt = co_dt_get(type);
    if (!(dt && dt->committed && !dt->freed) && !(type == MPI_DATATYPE_NULL && count == 0)) {
        type_arg(f, fn, "datatype", type, &rc);
        return rc;
    }
    if (!dt) dt = co_dt_get(MPI_BYTE);
    if (!buf && count > 0 && dt->size > 0 && dt->true_lb == 0)
        return co_file_error(f, fn, MPI_ERR_BUFFER, "buffer is NULL but count is %d", count);
    if (where == AT && offset < 0)
        return co_file_error(f, fn, MPI_ERR_ARG, "negative offset %lld", offset);
    size_t bytes = (size_t)count * dt->size, es = 0;
    co_ext_fail fail = {0};
    if (f->ext32 && !co_ext_size(dt, &es, &fail)) bytes = (size_t)count * es;
    if (bytes % f->esize)
        return co_file_error(f, fn, MPI_ERR_TYPE,
                             "%zu bytes are not a whole number of the view's etypes (%zu "
                             "bytes each)",
                             bytes, f->esize);
    MPI_Offset n = (MPI_Offset)(bytes / f->esize), off = offset;
    if (where == INDIV) {
        off = f->pos;
    } else if (where == SHARED) {
        off = atomic_fetch_add(f->shared, n);
    } else if (where == ORDERED) {
        /* every member's count, then rank 0 takes the whole stretch for them in rank order */
        co_comm *c = f->comm;
        co_dtype *i64 = co_dt_get(MPI_INT64_T);
        int64_t *all = malloc((size_t)c->size * sizeof(int64_t)), base = 0;
        if (!all) return co_file_error(f, fn, MPI_ERR_NO_MEM, "out of memory");
        rc = co_allgather(&n, 1, i64, all, 1, i64, c);
        int64_t total = 0, before = 0;
        for (int q = 0; q < c->size && !rc; q++) {
            if (q == c->rank) before = total;
            total += all[q];
        }
        free(all);
        if (!rc && c->rank == 0) base = atomic_fetch_add(f->shared, total);
        if (!rc) rc = co_bcast_binomial(&base, 1, i64, 0, c);
        if (rc) return co_file_error(f, fn, rc, "the members' exchange failed");
        off = base + before;
    }
    size_t moved = 0;
    int handled = 0;
    if (coll && (where == AT || where == INDIV))
        rc = co_file_rw_all(f, write, off, (void *)buf, (size_t)count, dt, &moved, fn, &handled);
    if (!handled) rc = co_file_rw(f, write, off, (void *)buf, (size_t)count, dt, &moved, fn);
    size_t fmoved = f->ext32 && dt->size ? moved / dt->size * es : moved;
    if (where == INDIV) f->pos = off + (MPI_Offset)(fmoved / f->esize);
    memset(st, 0, sizeof(*st));
    st->source = MPI_ANY_SOURCE;
    st->tag = MPI_ANY_TAG;
    st->bytes = moved;
    return rc;
}

/* coll: a blocking collective call, which may move the data of every member together. */
static int blocking(const char *fn, MPI_File fh, int where, int write, int coll, MPI_Offset offset,
                    const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
    FILE_ENTER(fn, fh);
    co_status st;
    rc = do_access(f, fn, where, write, coll, offset, buf, count, type, &st);
    if (!rc) co_api_status(status, &st);
    return rc;
}

/* The nonblocking forms: the access is done at the call, the request complete already. */
static int nonblocking(const char *fn, MPI_File fh, int where, int write, MPI_Offset offset,
                       const void *buf, int count, MPI_Datatype type, MPI_Request *request) {
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, request);
    co_status st;
    if ((rc = do_access(f, fn, where, write, 0, offset, buf, count, type, &st))) return rc;
    co_req *r = co_req_new(CO_REQ_COLL);
    if (!r) return co_file_error(f, fn, MPI_ERR_NO_MEM, "out of requests");
    r->complete = 1;
    r->status = st;
    *request = r->handle;
    return MPI_SUCCESS;
}

/* Split collectives: the access is done by the begin call, whose status the end call
 * returns. One may be in progress per file. */
static int split_begin(const char *fn, MPI_File fh, int where, int write, MPI_Offset offset,
                       const void *buf, int count, MPI_Datatype type) {
    FILE_ENTER(fn, fh);
    if (f->split)
        return co_file_error(f, fn, MPI_ERR_OTHER,
                             "a split collective is already in progress on the file");
    if ((rc = do_access(f, fn, where, write, 0, offset, buf, count, type, &f->split_status)))
        return rc;
    f->split = 1 + where * 2 + write;
    f->split_buf = buf;
    return MPI_SUCCESS;
}

static int split_end(const char *fn, MPI_File fh, int where, int write, const void *buf,
                     MPI_Status *status) {
    FILE_ENTER(fn, fh);
    if (f->split != 1 + where * 2 + write)
        return co_file_error(f, fn, MPI_ERR_OTHER,
                             f->split ? "the split collective in progress is another kind"
                                      : "no split collective is in progress on the file");
    if (buf != f->split_buf)
        return co_file_error(f, fn, MPI_ERR_BUFFER,
                             "the buffer is not the one the begin call was given");
    f->split = 0;
    co_api_status(status, &f->split_status);
    return MPI_SUCCESS;
}

#define RW_AT(NAME, WHERE, WRITE, COLL, CONST)                                                     \
    CO_WEAK(MPI_File_##NAME, PMPI_File_##NAME);                                                    \
    int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, CONST void *buf, int count,               \
                         MPI_Datatype datatype, MPI_Status *status) {                              \
        return blocking("MPI_File_" #NAME, fh, WHERE, WRITE, COLL, offset, buf, count, datatype,   \
                        status);                                                                   \
    }
RW_AT(read_at, AT, READ, 0, )
RW_AT(read_at_all, AT, READ, 1, )
RW_AT(write_at, AT, WRITE, 0, const)
RW_AT(write_at_all, AT, WRITE, 1, const)

#define IRW_AT(NAME, WHERE, WRITE, CONST)                                                          \
    CO_WEAK(MPI_File_##NAME, PMPI_File_##NAME);                                                    \
    int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, CONST void *buf, int count,               \
                         MPI_Datatype datatype, MPI_Request *request) {                            \
        return nonblocking("MPI_File_" #NAME, fh, WHERE, WRITE, offset, buf, count, datatype,      \
                           request);                                                               \
    }
IRW_AT(iread_at, AT, READ, )
IRW_AT(iread_at_all, AT, READ, )
IRW_AT(iwrite_at, AT, WRITE, const)
IRW_AT(iwrite_at_all, AT, WRITE, const)

#define RW(NAME, WHERE, WRITE, COLL, CONST)                                                        \
    CO_WEAK(MPI_File_##NAME, PMPI_File_##NAME);                                                    \
    int PMPI_File_##NAME(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype,           \
                         MPI_Status *status) {                                                     \
        return blocking("MPI_File_" #NAME, fh, WHERE, WRITE, COLL, 0, buf, count, datatype,        \
                        status);                                                                   \
    }
RW(read, INDIV, READ, 0, )
RW(read_all, INDIV, READ, 1, )
RW(write, INDIV, WRITE, 0, const)
RW(write_all, INDIV, WRITE, 1, const)
RW(read_shared, SHARED, READ, 0, )
RW(write_shared, SHARED, WRITE, 0, const)
RW(read_ordered, ORDERED, READ, 0, )
RW(write_ordered, ORDERED, WRITE, 0, const)

#define IRW(NAME, WHERE, WRITE, CONST)                                                             \
    CO_WEAK(MPI_File_##NAME, PMPI_File_##NAME);                                                    \
    int PMPI_File_##NAME(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype,           \
                         MPI_Request *request) {                                                   \
        return nonblocking("MPI_File_" #NAME, fh, WHERE, WRITE, 0, buf, count, datatype, request); \
    }
IRW(iread, INDIV, READ, )
IRW(iread_all, INDIV, READ, )
IRW(iwrite, INDIV, WRITE, const)
IRW(iwrite_all, INDIV, WRITE, const)
IRW(iread_shared, SHARED, READ, )
IRW(iwrite_shared, SHARED, WRITE, const)

#define SPLIT(NAME, WHERE, WRITE, CONST)                                                           \
    CO_WEAK(MPI_File_##NAME##_begin, PMPI_File_##NAME##_begin);                                    \
    int PMPI_File_##NAME##_begin(MPI_File fh, CONST void *buf, int count, MPI_Datatype datatype) { \
        return split_begin("MPI_File_" #NAME "_begin", fh, WHERE, WRITE, 0, buf, count, datatype); \
    }                                                                                              \
    CO_WEAK(MPI_File_##NAME##_end, PMPI_File_##NAME##_end);                                        \
    int PMPI_File_##NAME##_end(MPI_File fh, CONST void *buf, MPI_Status *status) {                 \
        return split_end("MPI_File_" #NAME "_end", fh, WHERE, WRITE, buf, status);                 \
    }
SPLIT(read_all, INDIV, READ, )
SPLIT(write_all, INDIV, WRITE, const)
SPLIT(read_ordered, ORDERED, READ, )
SPLIT(write_ordered, ORDERED, WRITE, const)

CO_WEAK(MPI_File_read_at_all_begin, PMPI_File_read_at_all_begin);
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype datatype) {
    return split_begin("MPI_File_read_at_all_begin", fh, AT, READ, offset, buf, count, datatype);
}

CO_WEAK(MPI_File_read_at_all_end, PMPI_File_read_at_all_end);
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    return split_end("MPI_File_read_at_all_end", fh, AT, READ, buf, status);
}

CO_WEAK(MPI_File_write_at_all_begin, PMPI_File_write_at_all_begin);
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype) {
    return split_begin("MPI_File_write_at_all_begin", fh, AT, WRITE, offset, buf, count, datatype);
}

CO_WEAK(MPI_File_write_at_all_end, PMPI_File_write_at_all_end);
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    return split_end("MPI_File_write_at_all_end", fh, AT, WRITE, buf, status);
}

/* ---- File pointers ------------------------------------------------------------------------- */

/* The new position for (offset, whence) from `cur`, or -1 when there is none. */
static MPI_Offset seek_to(co_file *f, MPI_Offset cur, MPI_Offset offset, int whence) {
    struct stat st;
    MPI_Offset base = -1;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END && fstat(f->fd, &st) == 0)
        base = co_file_view_end(f, (MPI_Offset)st.st_size);
    return base < 0 || base + offset < 0 ? -1 : base + offset;
}

/* Why seek_to found no position. */
static int seek_error(co_file *f, const char *fn, MPI_Offset offset, int whence) {
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return co_file_error(f, fn, MPI_ERR_ARG,
                             "whence %d is none of MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END",
                             whence);
    MPI_Offset size;
    int rc = whence == MPI_SEEK_END ? file_size(f, fn, &size) : MPI_SUCCESS;
    if (rc) return rc;
    return co_file_error(f, fn, MPI_ERR_ARG, "offset %lld from %s would be a negative position",
                         offset, whence == MPI_SEEK_END ? "the end" : "there");
}

CO_WEAK(MPI_File_seek, PMPI_File_seek);
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    static const char fn[] = "MPI_File_seek";
    FILE_ENTER(fn, fh);
    if ((rc = sequential(f, fn))) return rc;
    MPI_Offset p = seek_to(f, f->pos, offset, whence);
    if (p < 0) return seek_error(f, fn, offset, whence);
    f->pos = p;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_position, PMPI_File_get_position);
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset) {
    static const char fn[] = "MPI_File_get_position";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, offset);
    if ((rc = sequential(f, fn))) return rc;
    *offset = f->pos;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_byte_offset, PMPI_File_get_byte_offset);
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp) {
    static const char fn[] = "MPI_File_get_byte_offset";
    FILE_ENTER(fn, fh);
    FILE_OUT(f, fn, disp);
    if (offset < 0) return co_file_error(f, fn, MPI_ERR_ARG, "negative offset %lld", offset);
    *disp = co_file_byte_offset(f, offset);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_seek_shared, PMPI_File_seek_shared);
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    static const char fn[] = "MPI_File_seek_shared";
    FILE_ENTER(fn, fh);
    if ((rc = sequential(f, fn))) return rc;
    /* collective: every member's earlier shared accesses are done, rank 0 computes the new
     * position and tells the others, so that all return the same */
    if ((rc = co_barrier(f->comm))) return co_file_error(f, fn, rc, "the members' barrier failed");
    int64_t p = 0;
    if (f->comm->rank == 0) {
        p = seek_to(f, atomic_load(f->shared), offset, whence);
        if (p >= 0) atomic_store(f->shared, p);
    }
    if ((rc = co_bcast_binomial(&p, 1, co_dt_get(MPI_INT64_T), 0, f->comm)))
        return co_file_error(f, fn, rc, "the members' broadcast failed");
    return p < 0 ? seek_error(f, fn, offset, whence) : MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_position_shared, PMPI_File_get_position_shared);
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
    static const char fn[] = "MPI_File_get_position_shared";
    FILE_ENTER(fn, fh);
    if ((rc = sequential(f, fn))) return rc;
    FILE_OUT(f, fn, offset);
    *offset = atomic_load(f->shared);
    return MPI_SUCCESS;
}

/* ---- Error handlers ------------------------------------------------------------------------ */

CO_WEAK(MPI_File_create_errhandler, PMPI_File_create_errhandler);
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler) {
    /* the same function type: a handle is an int for every kind */
    return co_api_errh_create("MPI_File_create_errhandler",
                              (MPI_Comm_errhandler_function *)(void *)file_errhandler_fn,
                              errhandler);
}

/* MPI_FILE_NULL's handler slot, or the file's. */
static co_errhandler **errh_slot(const char *fn, MPI_File file, co_file **f, int *rc) {
    *f = NULL;
    if (file == MPI_FILE_NULL) return co_file_null_errh();
    if (!(*f = file_arg(fn, file, rc))) return NULL;
    return &(*f)->errh;
}

CO_WEAK(MPI_File_set_errhandler, PMPI_File_set_errhandler);
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
    static const char fn[] = "MPI_File_set_errhandler";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_file *f;
    co_errhandler **slot = errh_slot(fn, file, &f, &rc);
    if (!slot) return rc;
    if (co_api_errh_set(slot, errhandler))
        return co_file_error(f, fn, MPI_ERR_ARG, "invalid error handler");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_get_errhandler, PMPI_File_get_errhandler);
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler) {
    static const char fn[] = "MPI_File_get_errhandler";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_file *f;
    co_errhandler **slot = errh_slot(fn, file, &f, &rc);
    if (!slot) return rc;
    FILE_OUT(f, fn, errhandler);
    *errhandler = co_errh_handle_out(*slot);
    if (*errhandler == MPI_ERRHANDLER_NULL)
        return co_file_error(f, fn, MPI_ERR_NO_MEM, "too many error handlers");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_File_call_errhandler, PMPI_File_call_errhandler);
int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
    static const char fn[] = "MPI_File_call_errhandler";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_file *f;
    if (!errh_slot(fn, fh, &f, &rc)) return rc;
    co_file_error(f, fn, errorcode, "error raised by the application");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Register_datarep, PMPI_Register_datarep);
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    static const char fn[] = "MPI_Register_datarep";
    CO_ENTER(fn);
    (void)read_conversion_fn, (void)write_conversion_fn, (void)extra_state;
    if (!datarep || !dtype_file_extent_fn)
        return co_file_error(NULL, fn, MPI_ERR_ARG, "datarep or dtype_file_extent_fn is NULL");
    if (datarep_ok(datarep) || !strcmp(datarep, "external32"))
        return co_file_error(NULL, fn, MPI_ERR_DUP_DATAREP,
                             "\"%s\" is a predefined data representation", datarep);
    return co_file_error(NULL, fn, MPI_ERR_UNSUPPORTED_OPERATION,
                         "user data representations are not supported; files hold \"native\" "
                         "data (docs/io.md)");
}
