/* Data access through a view: the bytes a call moves form a stretch of the view's data
 * stream (etypes from an offset); the filetype, tiled from the displacement, maps that
 * stretch to runs of file bytes, each moved with one pread or pwrite. Memory that is not one
 * run is packed (or unpacked) in pieces of CHUNK bytes on the way. */
#include "io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK ((size_t)4 << 20)

/* The filetype's runs come from the datatype engine as addresses from this made-up origin:
 * an address minus VBASE is a byte offset from the view's displacement. */
#define VBASE ((uintptr_t)1 << 46)

/* pread/pwrite of all len bytes at off; returns 0 or an errno, *moved what moved (a read
 * stops at the end of the file). */
static int move(int fd, int write, char *p, size_t len, off_t off, size_t *moved) {
    size_t done = 0;
    while (done < len) {
        ssize_t k = write ? pwrite(fd, p + done, len - done, off + (off_t)done)
                          : pread(fd, p + done, len - done, off + (off_t)done);
        if (k < 0) {
            if (errno == EINTR) continue;
            *moved = done;
            return errno;
        }
        if (k == 0) break; /* end of file (a read) */
        done += (size_t)k;
    }
    *moved = done;
    return 0;
}

int co_file_runs(co_file *f, uint64_t s, size_t n, int64_t *off, size_t *len, int max) {
    if (!n || max <= 0) return 0;
    if (f->ft_contig) {
        off[0] = f->disp + (int64_t)s;
        len[0] = n;
        return 1;
    }
    struct iovec iov[CO_FILE_RUNS];
    size_t covered = 0, tiles = (size_t)((s + n) / f->ftype->size) + 1, done = 0;
    if (max > CO_FILE_RUNS) max = CO_FILE_RUNS;
    int k = co_dt_iov(f->ftype, tiles, (void *)VBASE, (size_t)s, iov, max, &covered), i = 0;
    for (; i < k && done < n; i++) {
        off[i] = f->disp + (int64_t)((uintptr_t)iov[i].iov_base - VBASE);
        len[i] = iov[i].iov_len < n - done ? iov[i].iov_len : n - done;
        done += len[i];
    }
    return i;
}

/* A read of many small runs close together reads their whole span at once into this buffer
 * and copies them out ("data sieving"): one system call instead of one per run. Writes do
 * not, as writing the span back would need every other writer locked out of its holes. */
#define SIEVE ((size_t)1 << 20)

/* Runs off/len[0..k) read through one pread of their span into f's sieve buffer; *moved
 * what was copied to p (less at the end of the file). Returns 0, an errno, or -1 when
 * sieving does not pay (the caller reads run by run). */
static int sieve_read(co_file *f, const int64_t *off, const size_t *len, int k, char *p,
                      size_t *moved) {
    size_t data = 0;
    for (int i = 0; i < k; i++) data += len[i];
    size_t span = (size_t)(off[k - 1] + (int64_t)len[k - 1] - off[0]);
    if (k < 2 || span > SIEVE || span > 4 * data) return -1;
    if (!f->sieve && !(f->sieve = malloc(SIEVE))) return -1;
    size_t got = 0, done = 0;
    int err = move(f->fd, 0, f->sieve, span, (off_t)off[0], &got);
    for (int i = 0; i < k; i++) {
        size_t at = (size_t)(off[i] - off[0]), l = len[i];
        if (at >= got) break;
        if (at + l > got) l = got - at;
        memcpy(p + done, f->sieve + at, l);
        done += l;
    }
    *moved = done;
    return err;
}

/* Bytes [s, s+n) of the view's data stream, to or from p. */
static int stream(co_file *f, int write, uint64_t s, char *p, size_t n, size_t *moved) {
    int64_t off[CO_FILE_RUNS];
    size_t len[CO_FILE_RUNS], done = 0;
    while (done < n) {
        int k = co_file_runs(f, s + done, n - done, off, len, CO_FILE_RUNS);
        if (k <= 0) break;
        size_t want = 0, m = 0;
        for (int i = 0; i < k; i++) want += len[i];
        int err = write ? -1 : sieve_read(f, off, len, k, p + done, &m);
        if (err < 0) { /* run by run */
            err = 0;
            for (int i = 0; i < k; i++) {
                size_t r = 0;
                err = move(f->fd, write, p + done + m, len[i], (off_t)off[i], &r);
                m += r;
                if (err || r < len[i]) break;
            }
        }
        done += m;
        if (err || m < want) {
            *moved = done;
            return err;
        }
    }
    *moved = done;
    return 0;
}

/* An external32 view (whose filetype has no gaps): the whole access is converted in one
 * buffer, and a read that stops short converts the whole elements it got. */
static int rw_ext32(co_file *f, int write, MPI_Offset off, void *buf, size_t count, co_dtype *dt,
                    size_t *bytes, const char *fn) {
    co_ext_fail fail = {0};
    size_t es = 0, m = 0;
    int rc = co_ext_size(dt, &es, &fail);
    if (rc)
        return co_file_error(f, fn, rc, "%s has no external32 form",
                             rc == MPI_ERR_TYPE ? co_basic_name(fail.basic) : "the data");
    size_t total = count * es;
    char *tmp = co_file_scratch(f, CO_FS_PACK, total ? total : 1);
    if (write && (rc = co_ext_pack(dt, count, buf, tmp, &fail)))
        return co_file_error(f, fn, rc, "a %s value does not fit its external32 form",
                             co_basic_name(fail.basic));
    if (f->atomic) co_file_lock(f);
    int err = stream(f, write, (uint64_t)off * f->esize, tmp, total, &m);
    if (f->atomic) co_file_unlock(f);
    size_t whole = es ? m / es : count;
    if (!write && (rc = co_ext_unpack(dt, whole, buf, tmp, &fail)))
        return co_file_error(f, fn, rc, "an external32 %s value does not fit memory's form",
                             co_basic_name(fail.basic));
    *bytes = whole * dt->size;
    if (err)
        return co_file_error(f, fn, co_file_errno_class(err), "%s of %zu bytes failed: %s",
                             write ? "writing" : "reading", total, strerror(err));
    return MPI_SUCCESS;
}

int co_file_rw(co_file *f, int write, MPI_Offset off, void *buf, size_t count, co_dtype *dt,
               size_t *bytes, const char *fn) {
    size_t total = count * dt->size, done = 0;
    *bytes = 0;
    if (!total) return MPI_SUCCESS;
    if (f->ext32) return rw_ext32(f, write, off, buf, count, dt, bytes, fn);
    uint64_t s = (uint64_t)off * f->esize;
    char *tmp = dt->contig ? NULL : co_file_scratch(f, CO_FS_PACK, total < CHUNK ? total : CHUNK);
    if (f->atomic) co_file_lock(f);
    int err = 0;
    while (done < total) {
        size_t n = tmp ? (total - done < CHUNK ? total - done : CHUNK) : total, m = 0;
        char *p = tmp ? tmp : (char *)buf + dt->true_lb;
        if (write && tmp) co_dt_pack(dt, count, buf, done, tmp, n);
        err = stream(f, write, s + done, p, n, &m);
        if (!write && tmp) co_dt_unpack(dt, count, buf, done, tmp, m);
        done += m;
        if (err || m < n) break;
    }
    if (f->atomic) co_file_unlock(f);
    *bytes = done;
    if (err)
        return co_file_error(f, fn, co_file_errno_class(err), "%s of %zu bytes failed: %s",
                             write ? "writing" : "reading", total, strerror(err));
    return MPI_SUCCESS;
}

MPI_Offset co_file_byte_offset(co_file *f, MPI_Offset off) {
    int64_t at;
    size_t len;
    return co_file_runs(f, (uint64_t)off * f->esize, 1, &at, &len, 1) ? at : f->disp;
}

MPI_Offset co_file_view_end(co_file *f, MPI_Offset fsize) {
    if (fsize <= f->disp) return 0;
    if (f->ft_contig) return (fsize - f->disp + (MPI_Offset)f->esize - 1) / (MPI_Offset)f->esize;
    /* the first etype whose position is at or beyond the end: positions grow with the
     * offset (filetypes are monotonic), so search */
    MPI_Offset lo = 0, hi = 1;
    while (co_file_byte_offset(f, hi) < fsize) lo = hi, hi *= 2;
    while (lo < hi) {
        MPI_Offset mid = lo + (hi - lo) / 2;
        if (co_file_byte_offset(f, mid) < fsize)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int co_file_type_monotonic(const co_dtype *ft, size_t *at, size_t *prev) {
    struct iovec iov[CO_FILE_RUNS];
    uintptr_t start = VBASE, end = VBASE;
    int overlap = 0;
    for (size_t pos = 0; pos < ft->size;) {
        size_t covered = 0;
        int k = co_dt_iov(ft, 1, (void *)VBASE, pos, iov, CO_FILE_RUNS, &covered);
        if (k <= 0) break;
        for (int i = 0; i < k; i++) {
            uintptr_t b = (uintptr_t)iov[i].iov_base;
            if (b < start || (b < end && !overlap)) {
                *at = (size_t)(b - VBASE);
                *prev = (size_t)(start - VBASE);
                if (b < start) return 0;
                overlap = 1;
            }
            start = b;
            if (b + iov[i].iov_len > end) end = b + iov[i].iov_len;
        }
        pos += covered;
    }
    return overlap ? -1 : 1;
}

int co_file_pread(int fd, char *p, size_t len, int64_t off, size_t *moved) {
    return move(fd, 0, p, len, (off_t)off, moved);
}

int co_file_pwrite(int fd, char *p, size_t len, int64_t off) {
    size_t m = 0;
    return move(fd, 1, p, len, (off_t)off, &m);
}
