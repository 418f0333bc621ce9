/* Collective buffering ("two-phase" access) for the blocking collective calls
 * (MPI_File_write_all, read_all, write_at_all, read_at_all): when the members' accesses are
 * many small runs interleaved in one stretch of the file (the usual result of views that tile
 * a shared array), the stretch is cut into one domain per member, every member sends each
 * domain's owner the runs it has there, and each owner moves its whole domain with one pwrite
 * (reading it first where the runs leave holes) or one pread, then sends the readers their
 * runs back. One system call per domain instead of one per run. */
#include "io.h"

#include "../coll/coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SMALL_RUN  ((int64_t)64 << 10) /* mean run below which collective buffering pays */
#define MAX_DOMAIN ((int64_t)256 << 20)

typedef struct runs {
    co_file *f;         /* whose scratch buffers hold the arrays */
    int64_t *off, *len; /* file byte offsets and lengths, ascending */
    size_t n, cap;
} runs;

static void push(runs *r, int64_t off, int64_t len) {
    if (r->n && r->off[r->n - 1] + r->len[r->n - 1] == off) {
        r->len[r->n - 1] += len;
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->off = co_file_scratch(r->f, CO_FS_OFF, r->cap * sizeof(int64_t));
        r->len = co_file_scratch(r->f, CO_FS_LEN, r->cap * sizeof(int64_t));
    }
    r->off[r->n] = off;
    r->len[r->n] = len;
    r->n++;
}

/* The file runs of bytes [s, s+n) of the view's data stream. */
static void view_runs(co_file *f, uint64_t s, size_t n, runs *r) {
    int64_t off[CO_FILE_RUNS];
    size_t len[CO_FILE_RUNS], done = 0;
    while (done < n) {
        int k = co_file_runs(f, s + done, n - done, off, len, CO_FILE_RUNS);
        if (k <= 0) break;
        for (int i = 0; i < k; i++) {
            push(r, off[i], (int64_t)len[i]);
            done += len[i];
        }
    }
}

enum { I_LO, I_HI, I_RUNS, I_BYTES, I_WORDS };

/* Pieces of the runs for owner q's domain [dlo, dhi): appended to meta (offset, length
 * pairs); returns the bytes. *at walks the runs (ascending), *part is how far into run *at. */
static int64_t cut(const runs *r, size_t *at, int64_t *part, int64_t dhi, int64_t *meta,
                   int *npieces) {
    int64_t bytes = 0;
    int k = 0;
    while (*at < r->n) {
        int64_t o = r->off[*at] + *part, l = r->len[*at] - *part;
        if (o >= dhi) break;
        int64_t take = o + l <= dhi ? l : dhi - o;
        if (meta) meta[2 * k] = o, meta[2 * k + 1] = take;
        k++;
        bytes += take;
        if (take == l)
            (*at)++, *part = 0;
        else
            *part += take;
    }
    *npieces = k;
    return bytes;
}

int co_file_rw_all(co_file *f, int write, MPI_Offset off, void *buf, size_t count, co_dtype *dt,
                   size_t *bytes, const char *fn, int *handled) {
    co_comm *c = f->comm;
    int n = c->size;
    *handled = 0;
    /* with every member's view one run, each access is one run: nothing to gain; a read
     * through views whose filetypes hold at least a quarter data is quicker sieved by each
     * member on its own (access.c): 1 MiB through 64-byte blocks at 2 ranks took 280 us so,
     * 440 together */
    if (n < 2 || f->atomic || f->ext32 || f->all_contig || (!write && f->all_dense))
        return MPI_SUCCESS;
    size_t total = count * dt->size;
    runs r = {f, NULL, NULL, 0, 0};
    int64_t mine[I_WORDS] = {INT64_MAX, 0, 0, (int64_t)total};
    view_runs(f, (uint64_t)off * f->esize, total, &r);
    if (r.n) {
        mine[I_LO] = r.off[0];
        mine[I_HI] = r.off[r.n - 1] + r.len[r.n - 1];
        mine[I_RUNS] = (int64_t)r.n;
    }
    co_dtype *i64 = co_dt_get(MPI_INT64_T), *i32 = co_dt_get(MPI_INT);
    int64_t *all = malloc((size_t)n * I_WORDS * sizeof(int64_t));
    if (!all) co_fatal("out of memory planning a collective file access");
    int rc = co_allgather(mine, I_WORDS, i64, all, I_WORDS, i64, c);
    if (rc) {
        free(all);
        return co_file_error(f, fn, rc, "the members' exchange failed");
    }
    /* Whether it pays, decided alike on every member from what all have said: at least two
     * members move data, in more than four runs each and runs small on average, packed into a
     * stretch not much longer than the data, with domains of bounded size and exchanges that
     * int counts can describe. */
    int64_t glo = INT64_MAX, ghi = 0, nruns = 0, nbytes = 0, most = 0;
    int active = 0;
    for (int q = 0; q < n; q++) {
        int64_t *a = &all[q * I_WORDS];
        if (!a[I_BYTES]) continue;
        active++;
        glo = a[I_LO] < glo ? a[I_LO] : glo;
        ghi = a[I_HI] > ghi ? a[I_HI] : ghi;
        nruns += a[I_RUNS];
        nbytes += a[I_BYTES];
        most = a[I_BYTES] > most ? a[I_BYTES] : most;
    }
    free(all);
    int64_t dsize = active ? ((ghi - glo + n - 1) / n + 4095) / 4096 * 4096 : 0;
    if (active < 2 || nruns < 4 * active || nbytes / nruns >= SMALL_RUN || ghi - glo > 4 * nbytes ||
        dsize > MAX_DOMAIN || most > INT32_MAX / 2 || nruns > INT32_MAX / 4) {
        return MPI_SUCCESS;
    }
    *handled = 1;

    /* what a read gets: its runs up to the end of the file */
    size_t got = total;
    if (!write) {
        struct stat st;
        int64_t fsize = fstat(f->fd, &st) == 0 ? (int64_t)st.st_size : 0;
        got = 0;
        for (size_t i = 0; i < r.n; i++) {
            if (r.off[i] + r.len[i] <= fsize) {
                got += (size_t)r.len[i];
                continue;
            }
            if (r.off[i] < fsize) got += (size_t)(fsize - r.off[i]);
            break;
        }
    }

    /* This member's data in run order: its own buffer when contiguous (and, for a read, all
     * there to be read: the bytes past the end arrive as zeros, which the program's buffer
     * must not get), else a packed copy */
    int own = !dt->contig || got < total;
    char *data = own ? NULL : (char *)buf + dt->true_lb;
    if (own && total) data = co_file_scratch(f, CO_FS_DATA, total);
    if (write && own && total) co_dt_pack(dt, count, buf, 0, data, total);

    /* Phase one: who sends whom how many pieces and bytes */
    int *cnt = calloc((size_t)n * 12, sizeof(int));
    if (!cnt) co_fatal("out of memory");
    int *spieces = cnt, *rpieces = cnt + n, *sbytes = cnt + 2 * n, *rbytes = cnt + 3 * n;
    int *smeta_d = cnt + 4 * n, *rmeta_d = cnt + 5 * n, *sdata_d = cnt + 6 * n,
        *rdata_d = cnt + 7 * n;
    size_t at = 0;
    int64_t part = 0;
    int pieces_total = 0;
    for (int q = 0; q < n; q++) {
        int k = 0;
        sbytes[q] = (int)cut(&r, &at, &part, glo + (int64_t)(q + 1) * dsize, NULL, &k);
        spieces[q] = k;
        pieces_total += k;
    }
    int64_t *smeta = co_file_scratch(f, CO_FS_SMETA, ((size_t)pieces_total * 2 + 1) * 8);
    at = 0, part = 0;
    for (int q = 0, m = 0, d = 0; q < n; q++) {
        int k = 0;
        cut(&r, &at, &part, glo + (int64_t)(q + 1) * dsize, smeta + 2 * m, &k);
        smeta_d[q] = 2 * m;
        sdata_d[q] = d;
        m += k;
        d += sbytes[q];
        spieces[q] *= 2; /* int64 words of metadata */
    }
    int *sendc = cnt + 8 * n, *recvc = cnt + 10 * n; /* (pieces, bytes) pairs */
    for (int q = 0; q < n; q++) sendc[2 * q] = spieces[q], sendc[2 * q + 1] = sbytes[q];
    if (!(rc = co_alltoall(sendc, 2, i32, recvc, 2, i32, c))) {
        int mw = 0, db = 0;
        for (int q = 0; q < n; q++) {
            rpieces[q] = recvc[2 * q];
            rbytes[q] = recvc[2 * q + 1];
            rmeta_d[q] = mw;
            rdata_d[q] = db;
            mw += rpieces[q];
            db += rbytes[q];
        }
        int64_t *rmeta = co_file_scratch(f, CO_FS_RMETA, ((size_t)mw + 1) * sizeof(int64_t));
        char *rdata = co_file_scratch(f, CO_FS_RDATA, (size_t)db + 1);
        rc = co_alltoallv(smeta, spieces, smeta_d, i64, rmeta, rpieces, rmeta_d, i64, c);
        if (!rc && write)
            rc = co_alltoallv(data, sbytes, sdata_d, co_dt_get(MPI_BYTE), rdata, rbytes, rdata_d,
                              co_dt_get(MPI_BYTE), c);
        /* Phase two: this member's domain, from the first byte asked to the last */
        int err = 0;
        if (!rc && mw) {
            int64_t lo = INT64_MAX, hi = 0, asked = 0;
            for (int i = 0; i < mw; i += 2) {
                lo = rmeta[i] < lo ? rmeta[i] : lo;
                hi = rmeta[i] + rmeta[i + 1] > hi ? rmeta[i] + rmeta[i + 1] : hi;
                asked += rmeta[i + 1];
            }
            char *dom = co_file_scratch(f, CO_FS_DOM, (size_t)(hi - lo));
            size_t m = 0;
            /* a write that leaves holes keeps what the file has there; a read past the end
             * finds zeros (its reader counts only what lies before the end) */
            if (!write || asked < hi - lo) {
                err = co_file_pread(f->fd, dom, (size_t)(hi - lo), lo, &m);
                memset(dom + m, 0, (size_t)(hi - lo) - m);
            }
            char *p = rdata;
            for (int i = 0; i < mw; i += 2) {
                if (write)
                    memcpy(dom + (rmeta[i] - lo), p, (size_t)rmeta[i + 1]);
                else
                    memcpy(p, dom + (rmeta[i] - lo), (size_t)rmeta[i + 1]);
                p += rmeta[i + 1];
            }
            if (write && !err) err = co_file_pwrite(f->fd, dom, (size_t)(hi - lo), lo);
        }
        if (!rc && !write) /* the runs back to their readers */
            rc = co_alltoallv(rdata, rbytes, rdata_d, co_dt_get(MPI_BYTE), data, sbytes, sdata_d,
                              co_dt_get(MPI_BYTE), c);
        /* every member learns whether some domain failed */
        int cls = err ? co_file_errno_class(err) : 0, worst = 0;
        if (!rc) rc = co_allreduce(&cls, &worst, 1, i32, co_op_get(MPI_MAX), c);
        if (!rc && worst)
            rc = co_file_error(f, fn, worst, "%s a domain of a collective access failed%s%s",
                               write ? "writing" : "reading", err ? ": " : " on another member",
                               err ? strerror(err) : "");
        else if (rc)
            rc = co_file_error(f, fn, rc, "the members' exchange failed");
    } else {
        rc = co_file_error(f, fn, rc, "the members' exchange failed");
    }
    if (!write && own && got) co_dt_unpack(dt, count, buf, 0, data, got);
    free(cnt);
    *bytes = write ? total : got;
    return rc;
}
