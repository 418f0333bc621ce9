/*
 * io: MPI-IO throughput/latency. Every rank of MPI_COMM_WORLD takes part in every case. Each
 * case uses one file, opened once (MPI_MODE_CREATE | MPI_MODE_RDWR) on MPI_COMM_WORLD and
 * reused by all its sizes, in the directory named by the environment variable TMPDIR (default
 * /tmp), named io_bench.<pid>.<case> after rank 0's process id (broadcast, so every rank opens
 * the same name and concurrent jobs do not collide), and deleted (MPI_File_delete by rank 0)
 * when the case is done. SIZE is per rank.
 *
 * Cases (-c selects some; sizes default 4 KiB, 64 KiB, 1 MiB, 16 MiB, the view cases only up to
 * 1 MiB, -V):
 *   write_at_all  MPI_File_write_at_all of SIZE bytes (MPI_BYTE) at offset rank x SIZE: the
 *                 ranks' blocks lie one after the other.
 *   read_at_all   the same with MPI_File_read_at_all, from a file written before the timed
 *                 loops (independent MPI_File_write_at).
 *   write_view    a file view that interleaves the ranks in blocks of 64 bytes: etype MPI_BYTE,
 *                 filetype a contiguous block of 64 bytes resized to an extent of 64 x nprocs,
 *                 displacement rank x 64. Per iteration MPI_File_seek(0, MPI_SEEK_SET) and
 *                 MPI_File_write_all of SIZE bytes, so every iteration writes the same
 *                 nprocs x SIZE bytes of the file. SIZE is rounded up to a multiple of 64.
 *                 Sizes above -V (default 1 MiB; 0 = no limit) are skipped in both view cases:
 *                 16 MiB per rank is 262144 runs of 64 bytes per rank per call, and one such
 *                 call took Open MPI 4.1.4 0.2-1.3 s at 2 ranks, up to 3 s at 4, on 2 cores
 *                 (MPICH 0.05-0.9 s, Cohort 7-12 ms at 2 ranks); a data point costs at least
 *                 three calls.
 *   read_view     the same with MPI_File_read_all, from a file written before the timed loops.
 *   write_shared  MPI_File_write_shared of one 64-byte record per call (size 64 only). Before
 *                 each timed run (outside it) the shared file pointer goes back to 0 with
 *                 MPI_File_seek_shared, so the file stays at most as long as one run wrote.
 *   open_close    MPI_File_open (MPI_MODE_CREATE | MPI_MODE_RDWR) + MPI_File_close of one file
 *                 on MPI_COMM_WORLD; size 0.
 * The value is the time per call (write_shared, open_close: per pair) in microseconds: every
 * timed run starts with MPI_Barrier (not timed), each rank times its own loop, and the maximum
 * over the ranks is reported (the time until the last rank was done; MPI_Allreduce after the
 * loop). Writes go to the page cache: nothing calls MPI_File_sync (it would wait for the disk).
 * Between a write and a read by another rank there is an MPI_Barrier; all ranks run on one
 * machine, and all three MPIs move the data with pread/pwrite at the call, so that is enough.
 *
 * Results are checked outside the timed loops: after each data point of a write case, every
 * rank reads (MPI_File_read_at, default view) the file bytes that the next rank's block covers
 * (rank + 1 mod nprocs; together every byte written) and compares each byte with the pattern
 * its writer wrote; after a read case, every byte each rank read. The pattern is a hash of the
 * data point, the writing rank and the byte's index in that rank's data, so bytes left from
 * an earlier data point or put at the wrong place are found. write_shared: rank 0 reads every
 * record the last timed run wrote and checks that each rank's records 0..n-1 of that run are
 * there exactly once, each whole, and that the shared pointer is at their end. open_close:
 * every rank opens the file once more and checks its size (0) and access mode. A wrong result
 * is printed on standard error ("io: WRONG ...") instead of its RESULT line, the remaining data
 * points still run, and the program exits with status 1. Any MPI error in a file call prints
 * the case, size and error string and aborts: a file error handler set on each file after it
 * is opened, and a check of the return code of MPI_File_open, MPI_File_close and
 * MPI_File_delete. The handler is not set on MPI_FILE_NULL for the files to inherit: MPICH
 * 4.0.2's ROMIO gives a file that handler without taking a reference to it, and its
 * MPI_File_close drops one, so the third file closed fails an assertion ("ref_count >= 0",
 * errhan_impl.c). MPI_File_set_errhandler on the open file takes a reference of its own.
 *
 * Output: RESULT io <case> <size> <usec> us <iterations>
 */
#include "bench_common.h"

#include <stdint.h>
#include <unistd.h>

enum { WRITE_AT_ALL, READ_AT_ALL, WRITE_VIEW, READ_VIEW, WRITE_SHARED, OPEN_CLOSE, NCASES };
static const char *const case_names[NCASES] = {"write_at_all", "read_at_all",  "write_view",
                                               "read_view",    "write_shared", "open_close"};

#define BLOCK  64 /* bytes per rank per block of the interleaving view */
#define RECORD 64 /* bytes of one write_shared record */
#define AMODE  (MPI_MODE_CREATE | MPI_MODE_RDWR)

typedef struct {
    MPI_File fh;
    MPI_Datatype filetype; /* the interleaving filetype (view cases) */
    unsigned char *buf;    /* what is written, or where a read lands */
    unsigned char *chk;    /* read back for the checks */
    long size;             /* bytes per rank per call */
    int cse, rank, np, tag;
    const char *name; /* the case's file */
    long calls;       /* timed runs (kernel calls) in this data point */
    long last;        /* iterations of the last of them */
    int count;        /* bytes the last access of the last run moved (MPI_Get_count) */
    int64_t rec[RECORD / 8];
} io_ctx;

/* what the file error handler reports */
static const char *cur_case = "setup";
static long cur_size;

/* Prints the error (`call`: the call that returned it, or NULL) and aborts the job. */
static void fail(const char *call, int code) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    fprintf(stderr, "io: rank %d: MPI error in case %s, size %ld%s%s: %s\n", bench_rank(), cur_case,
            cur_size, call ? ", " : "", call ? call : "", msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* the error handler of every file */
static void file_error(MPI_File *fh, int *code, ...) {
    (void)fh;
    fail(NULL, *code);
}

/* Return codes of MPI_File_open, MPI_File_close and MPI_File_delete (MPI_FILE_NULL's handler
 * stays MPI_ERRORS_RETURN; the header says why). */
static void must(int rc, const char *call) {
    if (rc != MPI_SUCCESS) fail(call, rc);
}

static MPI_Errhandler file_eh;

static void open_file(const char *name, MPI_File *fh) {
    must(MPI_File_open(MPI_COMM_WORLD, name, AMODE, MPI_INFO_NULL, fh), "MPI_File_open");
    MPI_File_set_errhandler(*fh, file_eh);
}

/* The byte that rank `owner` writes at index k of its data in data point `tag`. */
static inline unsigned char pattern(int tag, int owner, long k) {
    uint32_t x = (uint32_t)k * 2654435761u + (uint32_t)owner * 40503u + (uint32_t)tag * 0x9e3779b9u;
    return (unsigned char)((x >> 24) ^ (x >> 11));
}

/* The byte expected at file offset `off` (default view) after a write of the case. */
static unsigned char file_byte(const io_ctx *c, long off) {
    if (c->cse == WRITE_VIEW || c->cse == READ_VIEW) {
        long blk = off / BLOCK;
        return pattern(c->tag, (int)(blk % c->np), blk / c->np * BLOCK + off % BLOCK);
    }
    return pattern(c->tag, (int)(off / c->size), off % c->size);
}

static double io_kernel(void *vctx, long iters) {
    io_ctx *c = vctx;
    int n = (int)c->size;
    MPI_Offset at = (MPI_Offset)c->rank * c->size;
    MPI_Status st;
    if (c->cse == WRITE_SHARED) {
        MPI_File_seek_shared(c->fh, 0, MPI_SEEK_SET);
        c->rec[1] = c->calls;
    }
    c->calls++;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    switch (c->cse) {
    case WRITE_AT_ALL:
        for (long i = 0; i < iters; i++) MPI_File_write_at_all(c->fh, at, c->buf, n, MPI_BYTE, &st);
        break;
    case READ_AT_ALL:
        for (long i = 0; i < iters; i++) MPI_File_read_at_all(c->fh, at, c->buf, n, MPI_BYTE, &st);
        break;
    case WRITE_VIEW:
        for (long i = 0; i < iters; i++) {
            MPI_File_seek(c->fh, 0, MPI_SEEK_SET);
            MPI_File_write_all(c->fh, c->buf, n, MPI_BYTE, &st);
        }
        break;
    case READ_VIEW:
        for (long i = 0; i < iters; i++) {
            MPI_File_seek(c->fh, 0, MPI_SEEK_SET);
            MPI_File_read_all(c->fh, c->buf, n, MPI_BYTE, &st);
        }
        break;
    case WRITE_SHARED:
        for (long i = 0; i < iters; i++) {
            c->rec[3] = i;
            c->rec[7] = i ^ c->rec[4];
            MPI_File_write_shared(c->fh, c->rec, RECORD, MPI_BYTE, &st);
        }
        break;
    case OPEN_CLOSE:
        for (long i = 0; i < iters; i++) {
            MPI_File f;
            must(MPI_File_open(MPI_COMM_WORLD, c->name, AMODE, MPI_INFO_NULL, &f), "MPI_File_open");
            must(MPI_File_close(&f), "MPI_File_close");
        }
        break;
    }
    double t = MPI_Wtime() - t0, tmax;
    if (c->cse != OPEN_CLOSE && iters > 0) MPI_Get_count(&st, MPI_BYTE, &c->count);
    c->last = iters;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void set_view(io_ctx *c, int interleaved) {
    if (interleaved)
        MPI_File_set_view(c->fh, (MPI_Offset)c->rank * BLOCK, MPI_BYTE, c->filetype, "native",
                          MPI_INFO_NULL);
    else
        MPI_File_set_view(c->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
}

/* Write cases: reads the next rank's block of the file and compares every byte. */
static int check_file(io_ctx *c) {
    int next = (c->rank + 1) % c->np, got = -1;
    long base = (long)next * c->size;
    MPI_Status st;
    memset(c->chk, 0, (size_t)c->size);
    MPI_File_read_at(c->fh, base, c->chk, (int)c->size, MPI_BYTE, &st);
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != (int)c->size) {
        fprintf(stderr, "io: WRONG %s size %ld: rank %d read %d bytes at offset %ld, not %ld\n",
                case_names[c->cse], c->size, c->rank, got, base, c->size);
        return 1;
    }
    for (long j = 0; j < c->size; j++) {
        unsigned char want = file_byte(c, base + j);
        if (c->chk[j] != want) {
            fprintf(stderr, "io: WRONG %s size %ld: file byte %ld is 0x%02x, expected 0x%02x\n",
                    case_names[c->cse], c->size, base + j, c->chk[j], want);
            return 1;
        }
    }
    return 0;
}

/* write_shared: rank 0 checks the records of the last timed run. */
static int check_shared(io_ctx *c) {
    long per = c->last, total = per * c->np;
    MPI_Offset pos = -1;
    MPI_File_get_position_shared(c->fh, &pos);
    if (c->rank != 0) return 0;
    if (pos != (MPI_Offset)(total * RECORD)) {
        fprintf(stderr,
                "io: WRONG write_shared: shared pointer at %lld after %ld records, not %ld\n",
                (long long)pos, total, total * RECORD);
        return 1;
    }
    int64_t *r = bench_alloc((size_t)(total * RECORD));
    unsigned char *seen = bench_alloc((size_t)total);
    memset(seen, 0, (size_t)total);
    int wrong = 0;
    for (long done = 0; done < total * RECORD && !wrong;) {
        long chunk = total * RECORD - done;
        if (chunk > (1L << 30)) chunk = 1L << 30;
        MPI_Status st;
        int got = -1;
        MPI_File_read_at(c->fh, done, (char *)r + done, (int)chunk, MPI_BYTE, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != (int)chunk) {
            fprintf(stderr, "io: WRONG write_shared: read %d bytes at offset %ld, not %ld\n", got,
                    done, chunk);
            wrong = 1;
        }
        done += chunk;
    }
    for (long k = 0; k < total && !wrong; k++) {
        const int64_t *v = r + k * (RECORD / 8);
        int64_t key = (int64_t)c->tag * 1000003 + v[2];
        int ok = v[0] == c->tag && v[1] == c->calls - 1 && v[2] >= 0 && v[2] < c->np && v[3] >= 0 &&
                 v[3] < per && v[4] == key && v[5] == ~key && v[6] == 0x5eed5eed5eedLL &&
                 v[7] == (v[3] ^ key);
        if (!ok) {
            fprintf(stderr,
                    "io: WRONG write_shared: record %ld (file offset %ld) is %lld %lld %lld %lld "
                    "%lld %lld %lld %lld; data point %d, run %ld, %ld records per rank\n",
                    k, k * RECORD, (long long)v[0], (long long)v[1], (long long)v[2],
                    (long long)v[3], (long long)v[4], (long long)v[5], (long long)v[6],
                    (long long)v[7], c->tag, c->calls - 1, per);
            wrong = 1;
        } else if (seen[v[2] * per + v[3]]++) {
            fprintf(stderr, "io: WRONG write_shared: record %lld of rank %lld is there twice\n",
                    (long long)v[3], (long long)v[2]);
            wrong = 1;
        }
    }
    free(r);
    free(seen);
    return wrong;
}

/* open_close: the file is still empty and opens with the mode asked for. */
static int check_open(io_ctx *c) {
    MPI_File f;
    MPI_Offset sz = -1;
    int amode = 0;
    open_file(c->name, &f);
    MPI_File_get_size(f, &sz);
    MPI_File_get_amode(f, &amode);
    must(MPI_File_close(&f), "MPI_File_close");
    if (sz != 0 || amode != AMODE) {
        fprintf(stderr, "io: WRONG open_close: rank %d sees size %lld, mode %d (want 0, %d)\n",
                c->rank, (long long)sz, amode, AMODE);
        return 1;
    }
    return 0;
}

/* One data point of one case: prepare, measure, check. Returns 1 if it was wrong. */
static int run_point(const bench_opts *o, io_ctx *c, long *iters, double *t) {
    int wrong = 0, view = c->cse == WRITE_VIEW || c->cse == READ_VIEW;
    c->calls = c->last = 0;
    c->count = -1;
    if (c->cse == WRITE_AT_ALL || c->cse == WRITE_VIEW) {
        for (long j = 0; j < c->size; j++) c->buf[j] = pattern(c->tag, c->rank, j);
    } else if (c->cse == READ_AT_ALL || c->cse == READ_VIEW) {
        /* this rank's block of the file as the write case would leave it */
        long base = (long)c->rank * c->size;
        for (long j = 0; j < c->size; j++) c->buf[j] = file_byte(c, base + j);
        MPI_File_write_at(c->fh, base, c->buf, (int)c->size, MPI_BYTE, MPI_STATUS_IGNORE);
        memset(c->buf, 0, (size_t)c->size);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (c->cse == WRITE_SHARED) {
        int64_t key = (int64_t)c->tag * 1000003 + c->rank;
        int64_t rec[RECORD / 8] = {c->tag, 0, c->rank, 0, key, ~key, 0x5eed5eed5eedLL, 0};
        memcpy(c->rec, rec, sizeof rec);
    }
    if (view) set_view(c, 1);
    *t = bench_measure(o, io_kernel, c, 0, MPI_COMM_WORLD, iters);
    if (view) set_view(c, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    switch (c->cse) {
    case WRITE_AT_ALL:
    case WRITE_VIEW: wrong = check_file(c); break;
    case READ_AT_ALL:
    case READ_VIEW:
        if (c->count != (int)c->size) {
            fprintf(stderr, "io: WRONG %s size %ld: rank %d's read got %d bytes\n",
                    case_names[c->cse], c->size, c->rank, c->count);
            wrong = 1;
            break;
        }
        for (long j = 0; j < c->size; j++) {
            unsigned char want = pattern(c->tag, c->rank, j);
            if (c->buf[j] != want) {
                fprintf(stderr,
                        "io: WRONG %s size %ld: rank %d's byte %ld is 0x%02x, expected 0x%02x\n",
                        case_names[c->cse], c->size, c->rank, j, c->buf[j], want);
                wrong = 1;
                break;
            }
        }
        break;
    case WRITE_SHARED: wrong = check_shared(c); break;
    case OPEN_CLOSE: wrong = check_open(c); break;
    }
    int any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench_opts o;
    bench_defaults(&o, 4096, 16L << 20, 16);
    bench_set_list(&o, "4K,64K,1M,16M");
    int mask = (1 << NCASES) - 1;
    long view_max = 1L << 20;
    const char *what = "MPI-IO time per call (us, maximum over the ranks), SIZE bytes per rank: "
                       "write_at_all read_at_all write_view read_view write_shared open_close. "
                       "Files in $TMPDIR (default /tmp).";
    const char *extra = "  -c LIST    cases, e.g. write_at_all,open_close (default: all)\n"
                        "  -V SIZE    largest size of write_view and read_view (default 1M; "
                        "0: no limit)\n";
    for (int i = 1; i < argc; i++) {
        int r = bench_common_opt(&o, argc, argv, &i);
        if (r == 0 && strcmp(argv[i], "-h") == 0) bench_usage_exit(argv[0], what, extra, 0);
        if (r == 0 && strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            mask = bench_parse_cases(argv[++i], case_names, NCASES);
            r = mask > 0 ? 1 : -1;
        }
        if (r == 0 && strcmp(argv[i], "-V") == 0 && i + 1 < argc) {
            view_max = bench_parse_size(argv[++i]);
            r = view_max >= 0 ? 1 : -1;
        }
        if (r <= 0) bench_usage_exit(argv[0], what, extra, 2);
    }

    long sizes[BENCH_MAX_SIZES];
    int ns = bench_sizes(&o, sizes);
    long maxsize = bench_max_of(sizes, ns);
    maxsize = (maxsize + BLOCK - 1) / BLOCK * BLOCK;
    if (maxsize < BLOCK) maxsize = BLOCK;
    if (maxsize > (1L << 30)) {
        if (bench_rank() == 0) fprintf(stderr, "io: sizes are limited to 1 GiB per rank\n");
        MPI_Finalize();
        return 2;
    }

    io_ctx c;
    memset(&c, 0, sizeof c);
    c.rank = bench_rank();
    c.np = bench_nprocs();
    c.buf = bench_alloc((size_t)maxsize);
    c.chk = bench_alloc((size_t)maxsize);
    MPI_File_create_errhandler(file_error, &file_eh);
    MPI_Datatype block;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * c.np, &c.filetype);
    MPI_Type_commit(&c.filetype);
    MPI_Type_free(&block);

    /* rank 0's directory and process id name the files */
    char dir[1024] = "/tmp";
    long pid = (long)getpid();
    if (c.rank == 0) {
        const char *env = getenv("TMPDIR");
        if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    }
    MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (c.rank == 0) printf("# io np=%d target=%.0fms dir=%s\n", c.np, o.target_s * 1e3, dir);

    int wrong = 0, point = 0;
    for (int cse = 0; cse < NCASES; cse++) {
        if (!(mask & (1 << cse))) continue;
        char name[1200];
        snprintf(name, sizeof name, "%s/io_bench.%ld.%s", dir, pid, case_names[cse]);
        c.cse = cse;
        c.name = name;
        cur_case = case_names[cse];
        cur_size = 0;
        if (cse != OPEN_CLOSE) MPI_File_open(MPI_COMM_WORLD, name, AMODE, MPI_INFO_NULL, &c.fh);
        long last = -1;
        for (int k = 0; k < ns; k++) {
            long size = sizes[k];
            if (cse == WRITE_VIEW || cse == READ_VIEW)
                size = size < BLOCK ? BLOCK : (size + BLOCK - 1) / BLOCK * BLOCK;
            if ((cse == WRITE_VIEW || cse == READ_VIEW) && view_max > 0 && size > view_max)
                continue;
            if (cse == WRITE_SHARED) size = RECORD;
            if (cse == OPEN_CLOSE) size = 0;
            if (size == last) continue;
            last = size;
            c.size = cur_size = size;
            c.tag = 1 + point++;
            long iters;
            double t;
            if (run_point(&o, &c, &iters, &t)) {
                wrong = 1;
                continue;
            }
            bench_result("io", cur_case, size, t * 1e6 / (double)iters, "us", iters);
        }
        cur_size = 0;
        if (cse != OPEN_CLOSE) must(MPI_File_close(&c.fh), "MPI_File_close");
        MPI_Barrier(MPI_COMM_WORLD);
        if (c.rank == 0) must(MPI_File_delete(name, MPI_INFO_NULL), "MPI_File_delete");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    cur_case = "teardown";
    MPI_Type_free(&c.filetype);
    MPI_Errhandler_free(&file_eh);
    free(c.buf);
    free(c.chk);
    MPI_Finalize();
    return wrong;
}
