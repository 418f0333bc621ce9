/* Files: the object behind MPI_File, its views and the data access calls (docs/io.md).
 *
 * Every rank of a job runs on one machine, so each member of a file's communicator opens the
 * file itself with open(2) and moves data with pread/pwrite at the offsets its view gives.
 * The page cache makes what one process writes visible to the others at once; MPI_File_sync
 * still calls fsync. The shared file pointer and the lock of atomic mode live in a small
 * window of allocated memory that every member maps (src/rma), so taking the next record is
 * one atomic addition. */
#ifndef CO_IO_H
#define CO_IO_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"
#include "../rma/rma.h"

/* The scratch buffers of a file (co_file_scratch): packing, external32, and collective
 * buffering's runs, metadata, data and domain. */
enum {
    CO_FS_PACK,
    CO_FS_OFF,
    CO_FS_LEN,
    CO_FS_DATA,
    CO_FS_SMETA,
    CO_FS_RMETA,
    CO_FS_RDATA,
    CO_FS_DOM,
    CO_FILE_SCRATCH
};

typedef struct co_file {
    int handle;
    co_comm *comm; /* the window's communicator: a duplicate of the one the file was opened on */
    co_win *win;   /* rank 0's 8 bytes: the shared file pointer; its control blocks: the lock */
    _Atomic int64_t *shared; /* the shared file pointer, in etypes of the view */
    int amode;
    int fd;
    char *path; /* as opened, for MPI_MODE_DELETE_ON_CLOSE */
    co_errhandler *errh;
    co_info *info;
    int atomic; /* MPI_File_set_atomicity */
    /* the view */
    MPI_Offset disp;
    co_dtype *etype, *ftype; /* retained */
    size_t esize;            /* etype's size (in the file: external32's for an external32 view) */
    int ext32;               /* the view's data representation is "external32" (else native) */
    char *sieve;             /* reads of many small runs read their span here (access.c) */
    /* buffers the accesses use, kept from one call to the next: fresh megabytes cost a page
     * fault per page, which on a virtual machine made a 1 MiB collective access through a
     * view of 64-byte blocks take 25 ms instead of a few */
    void *scratch[CO_FILE_SCRATCH];
    size_t scratch_len[CO_FILE_SCRATCH];
    int ft_contig;  /* the filetype is one run from its origin: no map needed */
    int all_contig; /* every member's is (known since MPI_File_set_view) */
    int all_dense;  /* every member's filetype holds data in a quarter of its extent or more */
    MPI_Offset pos; /* the individual file pointer, in etypes */
    /* a split collective begun and not yet ended (MPI_File_*_begin) */
    int split; /* 0: none; else the kind that began it (api_io.c) */
    const void *split_buf;
    co_status split_status;
} co_file;

co_file *co_file_get(MPI_File h); /* NULL if invalid (MPI_FILE_NULL included) */

/* Errors on a file go through its handler (MPI_ERRORS_RETURN unless the program set
 * another); f NULL: through MPI_FILE_NULL's, which new files inherit. */
int co_file_error(co_file *f, const char *fn, int cls, const char *fmt, ...) CO_PRINTF(4, 5);
co_errhandler **co_file_null_errh(void); /* MPI_FILE_NULL's handler slot */
/* The name to open for a file name the program gave: without a file system prefix such as
 * ROMIO's "ufs:" (every file is local). */
const char *co_file_local_path(const char *path);
/* The error class of an errno from open, pread, pwrite and the like. */
int co_file_errno_class(int err);

/* Collective over intracommunicator c (checked by the caller): open `path` with MPI amode
 * `amode` (checked), errors reported through MPI_FILE_NULL's handler, the same class on
 * every rank. */
int co_file_open(co_comm *c, const char *path, int amode, const co_info *info, const char *fn,
                 co_file **out);
int co_file_close(co_file *f, const char *fn); /* collective */
/* Collective: a new view (etype, ftype and datarep checked by the caller; ext32: the data
 * representation is "external32", whose filetype the caller has checked has no gaps and
 * whose etype's external32 size is esize); resets both file pointers. */
int co_file_set_view(co_file *f, MPI_Offset disp, co_dtype *etype, co_dtype *ftype, int ext32,
                     size_t esize, const char *fn);

/* Data access at `off` etypes into the view (access.c): moves count elements of dt at buf,
 * sets *bytes to what moved, in bytes of dt's (a read stops short at the end of the file).
 * An external32 view converts on the way. Errors through the file's handler. */
int co_file_rw(co_file *f, int write, MPI_Offset off, void *buf, size_t count, co_dtype *dt,
               size_t *bytes, const char *fn);
/* The blocking collective accesses (twophase.c): when the members' runs are small and
 * interleaved, each member moves one domain of the file for all (*handled set; *bytes and
 * errors as co_file_rw); otherwise *handled is 0 and nothing has moved. Collective. */
int co_file_rw_all(co_file *f, int write, MPI_Offset off, void *buf, size_t count, co_dtype *dt,
                   size_t *bytes, const char *fn, int *handled);
/* pread of len bytes at off until the end of the file (*moved), pwrite of all of them: 0 or
 * an errno. */
int co_file_pread(int fd, char *p, size_t len, int64_t off, size_t *moved);
int co_file_pwrite(int fd, char *p, size_t len, int64_t off);

/* The file runs of bytes [s, s+n) of the view's data stream, up to max of them (at most
 * CO_FILE_RUNS) from the first: byte offsets in the file and lengths, the lengths adding up to
 * at most n. Returns how many. */
#define CO_FILE_RUNS 256
int co_file_runs(co_file *f, uint64_t s, size_t n, int64_t *off, size_t *len, int max);
/* The absolute byte position in the file of view offset `off` (etypes). */
MPI_Offset co_file_byte_offset(co_file *f, MPI_Offset off);
/* The view offset (etypes) of the end of the file: the first etype the view places at or
 * beyond its last byte. */
MPI_Offset co_file_view_end(co_file *f, MPI_Offset fsize);

/* Whether each run of one element of type ft starts at or after the start of the one before:
 * 1 if so and none overlaps another, -1 if so but some overlap, 0 if not; for 0 and -1, *at
 * and *prev say where (bytes from the type's origin: the run and the start of the one before). */
int co_file_type_monotonic(const co_dtype *ft, size_t *at, size_t *prev);

/* Scratch buffer `slot` of f with room for len bytes (what it held is kept, as realloc keeps
 * it); the process ends when memory runs out. */
void *co_file_scratch(co_file *f, int slot, size_t len);

void co_file_lock(co_file *f); /* atomic mode: one access at a time over the file's members */
void co_file_unlock(co_file *f);

#endif /* CO_IO_H */
