/* Files: opening and closing, the view, errors. See io.h for the model. */
#include "io.h"

#include "../coll/coll.h"
#include "../comm/comm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static co_htab files;
static co_errhandler *null_errh; /* MPI_FILE_NULL's: MPI_ERRORS_RETURN until the program sets one */

co_file *co_file_get(MPI_File h) {
    return co_htab_get(&files, h);
}

co_errhandler **co_file_null_errh(void) {
    return &null_errh;
}

int co_file_error(co_file *f, const char *fn, int cls, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = co_error_v(f ? f->errh : null_errh, f ? f->handle : MPI_FILE_NULL, fn, cls, fmt, ap);
    va_end(ap);
    return rc;
}

int co_file_errno_class(int err) {
    switch (err) {
    case ENOENT:
    case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

int co_io_init(void) {
    files.kind = COHORT_KIND_FILE;
    co_htab_set(&files, 0, NULL); /* slot 0 is MPI_FILE_NULL */
    null_errh = co_st.errh_return;
    null_errh->refcount++;
    return MPI_SUCCESS;
}

static void file_release(co_file *f) {
    if (f->fd >= 0) close(f->fd);
    if (f->handle) co_htab_remove(&files, f->handle);
    if (f->errh) co_errh_release(f->errh);
    if (f->info) co_info_free(f->info);
    if (f->etype) co_dt_release(f->etype);
    if (f->ftype) co_dt_release(f->ftype);
    free(f->path);
    free(f->sieve);
    for (int i = 0; i < CO_FILE_SCRATCH; i++) free(f->scratch[i]);
    free(f);
}

void co_io_fini(void) {
    /* files the program left open: closed here (their windows go with src/rma's fini) */
    for (uint32_t s = 1; s < files.next; s++) {
        co_file *f = co_htab_at(&files, s);
        if (f) file_release(f);
    }
    co_htab_destroy(&files);
    co_errh_release(null_errh);
    null_errh = NULL;
}

/* ROMIO's file names may name the file system first ("ufs:/tmp/x"); every file here is a
 * local one, so a known prefix is dropped. */
const char *co_file_local_path(const char *path) {
    static const char *const fs[] = {"ufs:", "nfs:", "xfs:", "lustre:", "gpfs:", "pvfs2:"};
    for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
        if (!strncmp(path, fs[i], strlen(fs[i]))) return path + strlen(fs[i]);
    return path;
}

static uint64_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void view_default(co_file *f) {
    f->disp = 0;
    f->etype = co_dt_get(MPI_BYTE);
    f->ftype = co_dt_get(MPI_BYTE);
    co_dt_retain(f->etype);
    co_dt_retain(f->ftype);
    f->esize = 1;
    f->ft_contig = 1;
    f->all_contig = 1;
    f->all_dense = 1;
    f->pos = 0;
}

/* What rank 0 tells the others before they open: its amode and name (to check they are the
 * same) and how its own open went. */
enum { H_AMODE, H_NAME, H_CLASS, H_WORDS };

int co_file_open(co_comm *c, const char *path, int amode, const co_info *info, const char *fn,
                 co_file **out) {
    int me = c->rank;
    const char *p = co_file_local_path(path);
    int flags = O_CLOEXEC;
    flags |= amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    int fd = -1, cls = MPI_SUCCESS, err = 0;
    uint64_t h[H_WORDS] = {(uint64_t)amode, name_hash(path), 0};
    /* rank 0 creates the file, so that MPI_MODE_EXCL fails on no other rank */
    if (me == 0) {
        int cflags = (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        fd = open(p, flags | cflags, 0666);
        if (fd < 0) err = errno, cls = co_file_errno_class(errno);
        h[H_CLASS] = (uint64_t)cls;
    }
    int rc = co_bcast_binomial(h, H_WORDS, co_dt_get(MPI_UINT64_T), 0, c);
    if (rc)
        return co_file_error(NULL, fn, rc, "telling the members how the open went failed%s%s",
                             co_coll_broken_sep(c), co_coll_broken_why(c));
    if (me != 0) {
        if (h[H_AMODE] != (uint64_t)amode || h[H_NAME] != name_hash(path))
            cls = MPI_ERR_NOT_SAME;
        else if (h[H_CLASS] == MPI_SUCCESS) {
            fd = open(p, flags);
            if (fd < 0) err = errno, cls = co_file_errno_class(errno);
        }
    }
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) cls = MPI_ERR_BAD_FILE;
    /* the first rank that failed, and its class */
    int mine = cls ? me * 256 + cls : INT_MAX, first = INT_MAX;
    if ((rc = co_allreduce(&mine, &first, 1, co_dt_get(MPI_INT), co_op_get(MPI_MIN), c))) {
        if (fd >= 0) close(fd);
        return co_file_error(NULL, fn, rc, "combining the members' opens failed%s%s",
                             co_coll_broken_sep(c), co_coll_broken_why(c));
    }
    if (first != INT_MAX) {
        if (fd >= 0) close(fd);
        int r = first / 256;
        cls = first % 256;
        if (cls == MPI_ERR_NOT_SAME)
            return co_file_error(NULL, fn, cls,
                                 "the members passed different file names or access modes "
                                 "(rank %d differs from rank 0)",
                                 r);
        if (r == me && err)
            return co_file_error(NULL, fn, cls, "cannot open %s: %s", path, strerror(err));
        if (r == me) return co_file_error(NULL, fn, cls, "%s is a directory", path);
        return co_file_error(NULL, fn, cls, "rank %d of the communicator could not open %s", r,
                             path);
    }

    co_file *f = calloc(1, sizeof(*f));
    if (!f || !(f->path = strdup(p))) co_fatal("out of memory opening a file");
    f->fd = fd;
    f->amode = amode;
    view_default(f);
    /* the shared file pointer: 8 bytes of rank 0's in a window every member maps */
    if ((rc = co_win_create(c, MPI_WIN_FLAVOR_SHARED, NULL, me == 0 ? 8 : 0, 1, NULL, fn,
                            &f->win))) {
        file_release(f);
        return rc;
    }
    f->comm = f->win->comm;
    f->shared = (_Atomic int64_t *)(void *)f->win->peers[0].local;
    if (amode & MPI_MODE_APPEND) {
        /* both file pointers start at the end; no member takes a record before rank 0 has
         * placed the shared one there */
        off_t end = lseek(fd, 0, SEEK_END);
        f->pos = end > 0 ? end : 0;
        if (me == 0) atomic_store(f->shared, f->pos);
        if ((rc = co_barrier(f->comm))) {
            co_win_free(f->win, fn);
            file_release(f);
            return co_file_error(NULL, fn, rc, "the members' barrier failed");
        }
    }
    f->errh = null_errh; /* new files take MPI_FILE_NULL's handler */
    f->errh->refcount++;
    f->info = info ? co_info_dup(info) : co_info_create();
    f->handle = co_htab_insert(&files, f);
    if (!f->handle || !f->info) {
        co_win_free(f->win, fn);
        file_release(f);
        return co_file_error(NULL, fn, MPI_ERR_NO_MEM, "out of file handles");
    }
    *out = f;
    return MPI_SUCCESS;
}

int co_file_close(co_file *f, const char *fn) {
    int del = (f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->comm->rank == 0;
    char *path = del ? strdup(f->path) : NULL;
    close(f->fd);
    f->fd = -1;
    /* freeing the window waits for every member: each has closed the file by then */
    int rc = co_win_free(f->win, fn);
    file_release(f);
    if (rc) {
        free(path);
        return co_file_error(NULL, fn, rc, "the members' barrier failed");
    }
    if (path && unlink(path) != 0 && errno != ENOENT) {
        int e = errno;
        rc = co_file_error(NULL, fn, co_file_errno_class(e), "deleting %s on close: %s", path,
                           strerror(e));
    }
    free(path);
    return rc;
}

int co_file_set_view(co_file *f, MPI_Offset disp, co_dtype *etype, co_dtype *ftype, int ext32,
                     size_t esize, const char *fn) {
    /* every member is done with the old view before the shared pointer goes back to 0; on
     * the way they learn whether every view is one run (collective calls then never gather
     * their members' runs, twophase.c) */
    int mine[2] = {ftype->contig && ftype->true_lb == 0 && ftype->lb == 0 &&
                       co_dt_extent(ftype) == (MPI_Aint)ftype->size,
                   (uint64_t)co_dt_extent(ftype) <= 4 * (uint64_t)ftype->size},
        every[2] = {0, 0};
    int rc = co_allreduce(mine, every, 2, co_dt_get(MPI_INT), co_op_get(MPI_MIN), f->comm);
    if (rc) return co_file_error(f, fn, rc, "the members' exchange failed");
    co_dt_retain(etype);
    co_dt_retain(ftype);
    co_dt_release(f->etype);
    co_dt_release(f->ftype);
    f->disp = disp;
    f->etype = etype;
    f->ftype = ftype;
    f->esize = esize;
    f->ext32 = ext32;
    f->ft_contig = mine[0];
    f->all_contig = every[0];
    f->all_dense = every[1];
    f->pos = 0;
    if (f->comm->rank == 0) atomic_store(f->shared, 0);
    if ((rc = co_barrier(f->comm))) return co_file_error(f, fn, rc, "the members' barrier failed");
    return MPI_SUCCESS;
}

void co_file_lock(co_file *f) {
    co_win_acc_lock(f->win, 0);
}

void co_file_unlock(co_file *f) {
    co_win_acc_unlock(f->win, 0);
}

void *co_file_scratch(co_file *f, int slot, size_t len) {
    if (len <= f->scratch_len[slot]) return f->scratch[slot];
    size_t cap = len > 2 * f->scratch_len[slot] ? len : 2 * f->scratch_len[slot];
    void *p = realloc(f->scratch[slot], cap);
    if (!p) co_fatal("out of memory for a %zu-byte file buffer", cap);
    f->scratch[slot] = p;
    f->scratch_len[slot] = cap;
    return p;
}
