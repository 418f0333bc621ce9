/* Writing and restoring checkpoints (docs/checkpoint.md). Writing: every member hashes sampled
 * blocks of its image, the members pick the image with the fewest differing samples from all
 * the others as the base, and the base's owner broadcasts it straight from its regions. Then
 * every member compresses a slice of the base (the first ones, one slice per MiB at most) and
 * its own differences from the base, streamed from its regions through one block-sized buffer;
 * rank 0 lays the file out, every member writes its parts into a temporary file, and rank 0
 * adds the base's table, the tree and the header and renames the file over the old checkpoint,
 * which stays whole until then. Restoring: rank 0 checks the header and the tree and passes
 * them on; every member reads the base and its own leaf and checks them against its regions;
 * only when every member has succeeded do the regions change. Every failure is agreed on, so
 * all members return the same class and reason. */
#include "ckpt.h"

#include "../coll/coll.h"
#include "../io/io.h"
#include "../op/op.h"
#include "../rma/rma.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

struct co_ckpt_state {
    co_ckpt_region *r;
    size_t n, cap;
};

#define SAMPLE_BLOCK 4096 /* bytes per sampled block */
#define SAMPLES      64   /* blocks sampled per image */
#define DIFF_CHUNK   64   /* differences are found a cache line at a time */

static struct co_ckpt_state *state(void) {
    if (!co_st.ckpt && !(co_st.ckpt = calloc(1, sizeof(*co_st.ckpt))))
        co_fatal("out of memory registering a checkpoint region");
    return co_st.ckpt;
}

int co_ckpt_register(void *base, size_t size, const char *fn) {
    struct co_ckpt_state *s = state();
    uint8_t *b = base;
    for (size_t i = 0; i < s->n; i++)
        if (b < s->r[i].base + s->r[i].size && s->r[i].base < b + size)
            return co_error(NULL, fn, MPI_ERR_ARG,
                            "region %p (%zu bytes) overlaps region %zu (%p, %zu bytes)", base, size,
                            i, (void *)s->r[i].base, s->r[i].size);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        co_ckpt_region *r = realloc(s->r, cap * sizeof(*r));
        if (!r) return co_error(NULL, fn, MPI_ERR_NO_MEM, "no memory for another region");
        s->r = r, s->cap = cap;
    }
    s->r[s->n++] = (co_ckpt_region){b, size};
    return MPI_SUCCESS;
}

int co_ckpt_unregister(void *base, const char *fn) {
    struct co_ckpt_state *s = state();
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].base == base) {
            memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1) * sizeof(s->r[0]));
            s->n--;
            return MPI_SUCCESS;
        }
    return co_error(NULL, fn, MPI_ERR_ARG, "no region registered at %p", base);
}

const co_ckpt_region *co_ckpt_regions(size_t *n) {
    *n = co_st.ckpt ? co_st.ckpt->n : 0;
    return co_st.ckpt ? co_st.ckpt->r : NULL;
}

void co_ckpt_fini(void) {
    if (!co_st.ckpt) return;
    free(co_st.ckpt->r);
    free(co_st.ckpt);
    co_st.ckpt = NULL;
}

static uint64_t name_hash(const char *p) {
    uint64_t h = 1469598103934665603ull;
    for (; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h;
}

/* Every member learns whether one failed: the first that did (lowest rank), its class and its
 * reason, which every member then reports. `mine` is this member's error (cls 0: none). */
static int agree(co_comm *c, co_ckpt_err *mine, const char *path, const char *fn) {
    int v = mine->cls ? c->rank * 256 + mine->cls : INT32_MAX, first = INT32_MAX;
    int rc = co_allreduce(&v, &first, 1, co_dt_get(MPI_INT), co_op_get(MPI_MIN), c);
    if (rc) return co_error(c, fn, rc, "combining the members' outcomes failed");
    if (first == INT32_MAX) return MPI_SUCCESS;
    co_ckpt_err e = *mine;
    if ((rc = co_bcast_binomial(e.why, sizeof(e.why), co_dt_get(MPI_CHAR), first / 256, c)))
        return co_error(c, fn, rc, "passing on rank %d's error failed", first / 256);
    e.why[sizeof(e.why) - 1] = 0;
    if (c->size == 1) return co_error(c, fn, first % 256, "checkpoint %s: %s", path, e.why);
    return co_error(c, fn, first % 256, "checkpoint %s: %s (found by rank %d)", path, e.why,
                    first / 256);
}

/* ---- Images without copies ----------------------------------------------------------------- */

/* Where each region starts in the image (s->n + 1 entries, the last the image's length). */
static uint64_t *region_starts(const struct co_ckpt_state *s) {
    uint64_t *st = malloc((s->n + 1) * sizeof(*st));
    if (!st) co_fatal("out of memory taking a checkpoint");
    st[0] = 0;
    for (size_t i = 0; i < s->n; i++) st[i + 1] = st[i] + s->r[i].size;
    return st;
}

/* Calls fn for the pieces of image bytes [off, off + len): the region memory, its image
 * offset and its length. *cur is a region index to start looking from (pieces are asked for
 * in ascending order). */
typedef void (*piece_fn)(void *ctx, uint8_t *mem, uint64_t at, uint64_t n);
static void for_pieces(const struct co_ckpt_state *s, const uint64_t *st, size_t *cur, uint64_t off,
                       uint64_t len, piece_fn fn, void *ctx) {
    size_t i = *cur;
    while (i < s->n && st[i + 1] <= off) i++;
    while (len && i < s->n) {
        uint64_t in = off - st[i], k = st[i + 1] - off < len ? st[i + 1] - off : len;
        if (k) fn(ctx, s->r[i].base + in, off, k);
        off += k, len -= k;
        if (off == st[i + 1]) i++;
    }
    *cur = i;
}

static void crc_piece(void *ctx, uint8_t *mem, uint64_t at, uint64_t n) {
    (void)at;
    uLong *c = ctx;
    while (n) {
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        *c = crc32(*c, mem, k);
        mem += k, n -= k;
    }
}

/* How many of the n bytes from image offset `at` lie below `limit` (the base's end). */
static inline uint64_t below(uint64_t at, uint64_t n, uint64_t limit) {
    return at >= limit ? 0 : limit - at < n ? limit - at : n;
}

static void xor_into(uint8_t *dst, const uint8_t *src, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) dst[i] ^= src[i];
}

/* ---- Writing ------------------------------------------------------------------------------- */

/* What every member tells the others before the base is chosen. */
typedef struct {
    uint64_t len, path, nregions, nsamples;
    uint32_t sample[SAMPLES];
} card;

typedef struct {
    uint64_t *v; /* offset, length pairs */
    uint64_t n, cap, bytes;
    int nomem;
} runs;

static void runs_add(runs *r, uint64_t off, uint64_t len) {
    if (r->n && r->v[2 * r->n - 2] + r->v[2 * r->n - 1] == off) {
        r->v[2 * r->n - 1] += len;
        r->bytes += len;
        return;
    }
    if (r->n == r->cap) {
        uint64_t cap = r->cap ? 2 * r->cap : 64;
        uint64_t *v = realloc(r->v, cap * 2 * sizeof(*v));
        if (!v) {
            r->nomem = 1;
            return;
        }
        r->v = v, r->cap = cap;
    }
    r->v[2 * r->n] = off, r->v[2 * r->n + 1] = len;
    r->n++;
    r->bytes += len;
}

/* The runs in which a piece of the image (`len` bytes at image offset `at`) differs from the
 * base, a cache line at a time, trimmed to the bytes that differ at their ends; what lies past
 * the base's end is one run. */
typedef struct {
    runs *r;
    const uint8_t *base;
    uint64_t blen;
} diff_ctx;

static void diff_piece(void *vctx, uint8_t *img, uint64_t at, uint64_t len) {
    diff_ctx *d = vctx;
    const uint8_t *base = d->base + at;
    uint64_t common = below(at, len, d->blen);
    for (uint64_t off = 0; off < common; off += DIFF_CHUNK) {
        uint64_t k = common - off < DIFF_CHUNK ? common - off : DIFF_CHUNK;
        if (!memcmp(img + off, base + off, k)) continue;
        uint64_t s = off, e = off + k;
        while (img[s] == base[s]) s++;
        /* the run goes on through the following lines that differ too */
        while (e < common) {
            uint64_t k2 = common - e < DIFF_CHUNK ? common - e : DIFF_CHUNK;
            if (!memcmp(img + e, base + e, k2)) break;
            e += k2;
        }
        off = e - DIFF_CHUNK; /* the loop steps past e */
        while (img[e - 1] == base[e - 1]) e--;
        runs_add(d->r, at + s, e - s);
    }
    if (len > common) runs_add(d->r, at + common, len - common);
}

/* A zstd frame compressed as its bytes come, a block at a time (shuffled first when the
 * checkpoint is: CO_CKPT_SHUFFLED), into a buffer that holds the worst case. */
typedef struct {
    ZSTD_CCtx *cc;
    uint8_t *out;
    size_t cap, pos;
    uint8_t *stage, *shuf; /* CO_CKPT_BLOCK bytes each, shared by the sinks of one call */
    size_t fill;
    int shuffle;
    co_ckpt_err *e;
} zsink;

static int zs_open(zsink *z, ZSTD_CCtx *cc, uint64_t rawlen, const zsink *like, co_ckpt_err *e) {
    z->cc = cc;
    z->e = e;
    z->pos = z->fill = 0;
    z->stage = like->stage, z->shuf = like->shuf, z->shuffle = like->shuffle;
    z->cap = ZSTD_compressBound(rawlen);
    if (!(z->out = co_ckpt_alloc(z->cap)))
        return co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory to compress %" PRIu64 " bytes", rawlen);
    ZSTD_CCtx_reset(cc, ZSTD_reset_session_only);
    ZSTD_CCtx_setPledgedSrcSize(cc, rawlen); /* recorded in the frame: restarts check it */
    return MPI_SUCCESS;
}

static void zs_flush(zsink *z, ZSTD_EndDirective end) {
    const uint8_t *src = z->stage;
    if (z->shuffle && z->fill) {
        co_ckpt_shuffle(z->shuf, z->stage, z->fill);
        src = z->shuf;
    }
    ZSTD_inBuffer in = {src, z->fill, 0};
    ZSTD_outBuffer o = {z->out, z->cap, z->pos};
    size_t left;
    do {
        left = ZSTD_compressStream2(z->cc, &o, &in, end);
        if (ZSTD_isError(left)) {
            co_ckpt_fail(z->e, MPI_ERR_INTERN, "compression failed: %s", ZSTD_getErrorName(left));
            return;
        }
    } while (end == ZSTD_e_end ? left != 0 : in.pos < in.size);
    z->pos = o.pos;
    z->fill = 0;
}

/* n bytes from p into the frame; the first nxor of them XOR the bytes at x */
static void zs_write(zsink *z, const uint8_t *p, uint64_t n, const uint8_t *x, uint64_t nxor) {
    while (n && !z->e->cls) {
        size_t k = CO_CKPT_BLOCK - z->fill < n ? CO_CKPT_BLOCK - z->fill : n;
        memcpy(z->stage + z->fill, p, k);
        if (nxor) {
            uint64_t kx = nxor < k ? nxor : k;
            xor_into(z->stage + z->fill, x, kx);
            x += kx, nxor -= kx;
        }
        z->fill += k, p += k, n -= k;
        if (z->fill == CO_CKPT_BLOCK) zs_flush(z, ZSTD_e_continue);
    }
}

static void zs_close(zsink *z) {
    if (!z->e->cls) zs_flush(z, ZSTD_e_end);
}

static void zs_put(void *vz, uint8_t *p, uint64_t at, uint64_t n) {
    (void)at;
    zs_write(vz, p, n, NULL, 0);
}

/* A leaf's run bytes: the image XOR the base within the base, the image past it. Close
 * values (the same field at a neighbouring place or time) share their high bytes, which then
 * compress to almost nothing. */
typedef struct {
    zsink *z;
    const uint8_t *base;
    uint64_t blen;
} leaf_ctx;

static void leaf_piece(void *vctx, uint8_t *img, uint64_t at, uint64_t n) {
    leaf_ctx *l = vctx;
    zs_write(l->z, img, n, l->base + at, below(at, n, l->blen));
}

static int write_at(int fd, const void *buf, uint64_t len, uint64_t off, co_ckpt_err *e) {
    const uint8_t *p = buf;
    while (len) {
        ssize_t k = pwrite(fd, p, len > (1u << 30) ? 1u << 30 : len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0)
            return co_ckpt_fail(e, co_file_errno_class(errno), "writing the checkpoint failed: %s",
                                strerror(errno));
        p += k, off += (uint64_t)k, len -= (uint64_t)k;
    }
    return MPI_SUCCESS;
}

/* The directory entry of a renamed file lasts only once its directory is synced. */
static void sync_dir(const char *path) {
    char *d = strdup(path);
    if (!d) return;
    int fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
}

/* Per member, what rank 0 learns for the layout: whether it has a leaf, the leaf's compressed
 * and raw sizes and CRC, and the same of its slice of the base. */
enum { P_LEAF, P_LCLEN, P_LRAW, P_LCRC, P_SCLEN, P_SRAW, P_SCRC, P_WORDS };
#define SLICE_MIN    ((uint64_t)1 << 20) /* bytes of the base per slice at least */
#define MANY_REGIONS 64                  /* more regions than this travel in one broadcast */

static void gather_piece(void *ctx, uint8_t *mem, uint64_t at, uint64_t n) {
    memcpy((uint8_t *)ctx + at, mem, n);
}

int co_ckpt_write(co_comm *c, const char *path, const char *fn) {
    struct co_ckpt_state *s = state();
    int me = c->rank, n = c->size, rc, fd = -1;
    co_ckpt_err e = {0, ""};
    const char *p = co_file_local_path(path);
    size_t plen = strlen(p), nr = s->n, cur;
    uint64_t *st = region_starts(s), len = st[nr];
    char *tmp = malloc(plen + 8);
    card *cards = malloc((size_t)n * sizeof(card));
    uint64_t *dist = malloc((size_t)n * sizeof(uint64_t)), *parts = NULL, place[3] = {0, 0, 0};
    uint8_t *base = NULL, *bhdr = NULL;
    uint64_t base_alloc = 0, gathered_len = 0;
    uint8_t *gathered = NULL; /* the base's owner's regions in one piece (many regions) */
    zsink slice = {0}, leaf = {0}, sinks = {0};
    runs r = {0};
    co_ckpt_node *tree = NULL;
    co_ckpt_frame *table = NULL;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    if (!tmp || !cards || !dist || !cc) co_fatal("out of memory taking a checkpoint");
    memcpy(tmp, p, plen);
    memcpy(tmp + plen, ".tmp", 5);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, (int)co_st.cfg.ckpt_level);
    sinks.shuffle = co_st.cfg.ckpt_shuffle;
    sinks.stage = malloc(CO_CKPT_BLOCK);
    sinks.shuf = malloc(CO_CKPT_BLOCK);
    if (!sinks.stage || !sinks.shuf) co_fatal("out of memory taking a checkpoint");

    /* the shortest image bounds the sampled blocks, so that every member samples the same */
    uint64_t shortest = 0;
    if ((rc = co_allreduce(&len, &shortest, 1, co_dt_get(MPI_UINT64_T), co_op_get(MPI_MIN), c)))
        goto coll_failed;
    card mine = {len, name_hash(p), nr, 0, {0}};
    uint64_t blocks = (shortest + SAMPLE_BLOCK - 1) / SAMPLE_BLOCK;
    mine.nsamples = blocks < SAMPLES ? blocks : SAMPLES;
    cur = 0;
    for (uint64_t j = 0; j < mine.nsamples; j++) {
        uint64_t at = j * blocks / mine.nsamples * SAMPLE_BLOCK;
        uLong crc = crc32(0L, Z_NULL, 0);
        for_pieces(s, st, &cur, at, shortest - at < SAMPLE_BLOCK ? shortest - at : SAMPLE_BLOCK,
                   crc_piece, &crc);
        mine.sample[j] = (uint32_t)crc;
    }
    if ((rc = co_allgather(&mine, sizeof(card), co_dt_get(MPI_BYTE), cards, sizeof(card),
                           co_dt_get(MPI_BYTE), c)))
        goto coll_failed;
    for (int i = 1; i < n; i++)
        if (cards[i].path != cards[0].path) {
            co_ckpt_fail(&e, MPI_ERR_NOT_SAME,
                         "the members passed different paths (rank %d's differs from rank 0's)", i);
            break;
        }
    /* the base: the image closest to all the others; the lowest rank among equals */
    uint64_t d = 0;
    for (int i = 0; i < n; i++) {
        uint64_t diff = 0;
        for (uint64_t j = 0; j < mine.nsamples; j++) diff += cards[i].sample[j] != mine.sample[j];
        d += diff * SAMPLE_BLOCK + (cards[i].len > len ? cards[i].len - len : len - cards[i].len);
    }
    if ((rc = co_allgather(&d, 1, co_dt_get(MPI_UINT64_T), dist, 1, co_dt_get(MPI_UINT64_T), c)))
        goto coll_failed;
    if ((rc = agree(c, &e, p, fn))) goto out;
    int b = 0;
    for (int i = 1; i < n; i++)
        if (dist[i] < dist[b]) b = i;
    uint64_t blen = cards[b].len, bnr = cards[b].nregions, bhead = 8 + 8 * bnr, braw = bhead + blen;

    /* the base's raw form (its region sizes, then its bytes) from its owner to everyone: the
     * owner sends from its regions, the others receive into one buffer */
    if (me == b) {
        if (!(bhdr = malloc(bhead))) co_fatal("out of memory taking a checkpoint");
        uint32_t w[2] = {(uint32_t)nr, 0};
        memcpy(bhdr, w, 8);
        for (size_t i = 0; i < nr; i++) memcpy(bhdr + 8 + 8 * i, &s->r[i].size, 8);
        /* many regions: the owner gathers them, so that one broadcast carries them all */
        if (nr > MANY_REGIONS && !(gathered = co_ckpt_alloc(gathered_len = blen)))
            co_ckpt_fail(&e, MPI_ERR_NO_MEM, "no memory to gather %zu regions (%" PRIu64 " bytes)",
                         nr, blen);
    } else if (!(base = co_ckpt_alloc(base_alloc = braw))) {
        co_ckpt_fail(&e, MPI_ERR_NO_MEM, "no memory for the base image (%" PRIu64 " bytes)", braw);
    }
    if ((rc = agree(c, &e, p, fn))) goto out;
    if ((rc = co_bcast(me == b ? bhdr : base, bhead, co_dt_get(MPI_BYTE), b, c))) goto coll_failed;
    if (bnr <= MANY_REGIONS) {
        for (uint64_t i = 0, at = bhead; i < bnr; i++) {
            uint64_t l;
            memcpy(&l, (me == b ? bhdr : base) + 8 + 8 * i, 8);
            if (l &&
                (rc = co_bcast(me == b ? s->r[i].base : base + at, l, co_dt_get(MPI_BYTE), b, c)))
                goto coll_failed;
            at += l;
        }
    } else {
        uint8_t *all = me == b ? gathered : base + bhead;
        cur = 0;
        if (me == b) for_pieces(s, st, &cur, 0, blen, gather_piece, all);
        if ((rc = co_bcast(all, blen, co_dt_get(MPI_BYTE), b, c))) goto coll_failed;
    }

    /* a slice of the base, compressed by each of the first members at once */
    uint64_t ns = (braw + SLICE_MIN - 1) / SLICE_MIN;
    ns = ns < 1 ? 1 : ns > (uint64_t)n ? (uint64_t)n : ns;
    if ((uint64_t)me < ns) {
        uint64_t from = (uint64_t)me * braw / ns, to = ((uint64_t)me + 1) * braw / ns;
        if (!zs_open(&slice, cc, to - from, &sinks, &e)) {
            if (me != b) {
                zs_write(&slice, base + from, to - from, NULL, 0);
            } else {
                /* the owner's raw form: the header, then its regions */
                if (from < bhead)
                    zs_write(&slice, bhdr + from, (to < bhead ? to : bhead) - from, NULL, 0);
                cur = 0;
                if (to > bhead) {
                    uint64_t a = from > bhead ? from - bhead : 0;
                    for_pieces(s, st, &cur, a, to - bhead - a, zs_put, &slice);
                }
            }
            zs_close(&slice);
        }
    }

    /* the leaf: this member's differences from the base, unless it has none */
    if (me != b && !e.cls) {
        int same = nr == bnr;
        for (size_t i = 0; same && i < nr; i++) same = !memcmp(base + 8 + 8 * i, &s->r[i].size, 8);
        diff_ctx dc = {&r, base + bhead, blen};
        cur = 0;
        for_pieces(s, st, &cur, 0, len, diff_piece, &dc);
        if (r.nomem) co_ckpt_fail(&e, MPI_ERR_NO_MEM, "no memory for the list of differences");
        uint64_t raw = 8 + 8 * nr + 16 * r.n + r.bytes;
        if (!e.cls && (!same || r.n) && !zs_open(&leaf, cc, raw, &sinks, &e)) {
            uint32_t w[2] = {(uint32_t)nr, (uint32_t)r.n};
            zs_write(&leaf, (const uint8_t *)w, 8, NULL, 0);
            for (size_t i = 0; i < nr; i++)
                zs_write(&leaf, (const uint8_t *)&s->r[i].size, 8, NULL, 0);
            zs_write(&leaf, (const uint8_t *)r.v, 16 * r.n, NULL, 0);
            leaf_ctx lc = {&leaf, base + bhead, blen};
            cur = 0;
            for (uint64_t i = 0; i < r.n && !e.cls; i++)
                for_pieces(s, st, &cur, r.v[2 * i], r.v[2 * i + 1], leaf_piece, &lc);
            zs_close(&leaf);
        }
    }
    if ((rc = agree(c, &e, p, fn))) goto out;

    /* rank 0 lays the file out: header, the base's table and slices, leaves in rank order,
     * tree */
    uint64_t mypart[P_WORDS] = {
        leaf.out != NULL,
        leaf.pos,
        leaf.out ? (uint64_t)ZSTD_getFrameContentSize(leaf.out, leaf.pos) : 0,
        leaf.out ? co_ckpt_crc(leaf.out, leaf.pos) : 0,
        slice.pos,
        slice.out ? (uint64_t)ZSTD_getFrameContentSize(slice.out, slice.pos) : 0,
        slice.out ? co_ckpt_crc(slice.out, slice.pos) : 0};
    if (me == 0 && !(parts = malloc((size_t)n * P_WORDS * sizeof(uint64_t))))
        co_fatal("out of memory laying out a checkpoint");
    if ((rc = co_gather(mypart, P_WORDS, co_dt_get(MPI_UINT64_T), parts, P_WORDS,
                        co_dt_get(MPI_UINT64_T), 0, c)))
        goto coll_failed;
    uint64_t *offs = NULL;
    co_ckpt_header h;
    memset(&h, 0, sizeof(h));
    uint32_t nodes = 0;
    if (me == 0) {
        offs = calloc((size_t)n * 3, sizeof(uint64_t));
        uint32_t *keys = malloc((size_t)n * sizeof(uint32_t)), nk = 0;
        tree = malloc((size_t)(2 * n) * sizeof(co_ckpt_node));
        table = calloc(ns, sizeof(co_ckpt_frame));
        if (!offs || !keys || !tree || !table) co_fatal("out of memory laying out a checkpoint");
        memcpy(h.magic, CO_CKPT_MAGIC, 8);
        h.version = CO_CKPT_VERSION;
        h.byte_order = 0x01020304;
        h.nranks = (uint32_t)n;
        h.base_rank = (uint32_t)b;
        h.base_off = CO_CKPT_HEADER;
        h.base_frames = (uint32_t)ns;
        h.flags = sinks.shuffle ? CO_CKPT_SHUFFLED : 0;
        h.base_rawlen = braw;
        uint64_t at = h.base_off + ns * sizeof(co_ckpt_frame);
        for (uint64_t i = 0; i < ns; i++) {
            const uint64_t *pp = &parts[i * P_WORDS];
            table[i] = (co_ckpt_frame){at, pp[P_SCLEN], pp[P_SRAW], (uint32_t)pp[P_SCRC], 0};
            offs[3 * i] = at;
            at += pp[P_SCLEN];
        }
        h.base_clen = at - h.base_off;
        h.base_crc = co_ckpt_crc(table, ns * sizeof(co_ckpt_frame));
        for (int i = 0; i < n; i++) {
            h.image_bytes += cards[i].len;
            if (!parts[i * P_WORDS + P_LEAF]) continue;
            keys[nk++] = (uint32_t)i;
            offs[3 * i + 1] = at;
            at += parts[i * P_WORDS + P_LCLEN];
        }
        nodes = co_ckpt_tree_build(keys, nk, tree);
        for (uint32_t i = 0; i < nodes; i++) {
            if (!tree[i].leaf) continue;
            const uint64_t *pp = &parts[tree[i].key * P_WORDS];
            tree[i].off = offs[3 * tree[i].key + 1];
            tree[i].clen = pp[P_LCLEN];
            tree[i].rawlen = pp[P_LRAW];
            tree[i].crc = (uint32_t)pp[P_LCRC];
        }
        h.tree_off = at;
        h.tree_nodes = nodes;
        h.tree_crc = co_ckpt_crc(tree, nodes * sizeof(co_ckpt_node));
        h.file_size = at + nodes * sizeof(co_ckpt_node);
        h.created = (uint64_t)time(NULL);
        h.header_crc = co_ckpt_crc(&h, offsetof(co_ckpt_header, header_crc));
        free(keys);
        /* the temporary file; a checkpoint at `path` stays as it is until the rename */
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int cls = fd < 0 ? co_file_errno_class(errno) : 0;
        if (fd < 0) co_ckpt_fail(&e, cls, "cannot create %s: %s", tmp, strerror(errno));
        for (int i = 0; i < n; i++) offs[3 * i + 2] = (uint64_t)cls;
    }
    if ((rc =
             co_scatter(offs, 3, co_dt_get(MPI_UINT64_T), place, 3, co_dt_get(MPI_UINT64_T), 0, c)))
        goto coll_failed;
    free(offs);
    if (!place[2] && (slice.out || leaf.out)) {
        int wfd = me == 0 ? fd : open(tmp, O_WRONLY | O_CLOEXEC);
        if (wfd < 0) {
            co_ckpt_fail(&e, co_file_errno_class(errno), "cannot open %s: %s", tmp,
                         strerror(errno));
        } else {
            if (slice.out) write_at(wfd, slice.out, slice.pos, place[0], &e);
            if (leaf.out && !e.cls) write_at(wfd, leaf.out, leaf.pos, place[1], &e);
            if (wfd != fd) close(wfd);
        }
    }
    if ((rc = agree(c, &e, p, fn))) goto out;

    /* rank 0 finishes the file: the base's table and the tree, then the header, then the
     * rename */
    if (me == 0) {
        if (!write_at(fd, table, ns * sizeof(co_ckpt_frame), h.base_off, &e) &&
            !write_at(fd, tree, nodes * sizeof(co_ckpt_node), h.tree_off, &e) &&
            !write_at(fd, &h, sizeof(h), 0, &e)) {
            if (fsync(fd))
                co_ckpt_fail(&e, co_file_errno_class(errno), "syncing %s failed: %s", tmp,
                             strerror(errno));
            else if (rename(tmp, p))
                co_ckpt_fail(&e, co_file_errno_class(errno), "renaming %s to it failed: %s", tmp,
                             strerror(errno));
            else
                sync_dir(p);
        }
        close(fd);
        fd = -1;
    }
    rc = agree(c, &e, p, fn);
    goto out;

coll_failed:
    rc = co_error(c, fn, rc, "a collective step of the checkpoint failed");
out:
    if (fd >= 0) close(fd);
    if (rc && me == 0) unlink(tmp);
    co_ckpt_free(base, base_alloc);
    co_ckpt_free(gathered, gathered_len);
    co_ckpt_free(slice.out, slice.cap);
    co_ckpt_free(leaf.out, leaf.cap);
    ZSTD_freeCCtx(cc);
    free(sinks.stage);
    free(sinks.shuf);
    free(bhdr);
    free(r.v);
    free(tree);
    free(table);
    free(parts);
    free(dist);
    free(cards);
    free(tmp);
    free(st);
    return rc;
}

/* ---- Restoring ----------------------------------------------------------------------------- */

/* What rank 0 tells the members after reading the index. */
typedef struct {
    int32_t cls; /* 0: a checkpoint to restore; -1: none at the path; else the error's class */
    char why[256];
    uint64_t path;
    co_ckpt_header h;
} index_msg;

static void copy_piece(void *ctx, uint8_t *mem, uint64_t at, uint64_t n) {
    memcpy(mem, (const uint8_t *)ctx + at, n);
}

/* A run's bytes into the regions: XOR within the base, as they are past it. */
typedef struct {
    const uint8_t *src; /* the run's bytes; src[0] is image offset `start` */
    uint64_t start, common;
} run_ctx;

static void run_piece(void *vctx, uint8_t *mem, uint64_t at, uint64_t n) {
    run_ctx *r = vctx;
    const uint8_t *q = r->src + (at - r->start);
    uint64_t in = below(at, n, r->common);
    xor_into(mem, q, in);
    memcpy(mem + in, q + in, n - in);
}

int co_ckpt_restart(co_comm *c, const char *path, int *restored, const char *fn) {
    struct co_ckpt_state *s = state();
    int me = c->rank, rc, fd = -1;
    const char *p = co_file_local_path(path);
    co_ckpt_err e = {0, ""};
    index_msg *m = calloc(1, sizeof(*m));
    co_ckpt_node *tree = NULL;
    co_ckpt_frame *table = NULL;
    co_win *win = NULL;
    uint8_t *lraw = NULL;
    uint64_t lraw_len = 0;
    int64_t leaf = -1;
    if (!m) co_fatal("out of memory restoring a checkpoint");
    *restored = 0;

    if (me == 0) {
        struct stat sb;
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
            m->cls = -1;
        } else if (fd < 0 || fstat(fd, &sb)) {
            m->cls =
                co_ckpt_fail(&e, co_file_errno_class(errno), "cannot open it: %s", strerror(errno));
        } else if (S_ISDIR(sb.st_mode)) {
            m->cls = co_ckpt_fail(&e, MPI_ERR_BAD_FILE, "it is a directory");
        } else {
            m->cls = co_ckpt_read_index(fd, (uint64_t)sb.st_size, &m->h, &tree, &e);
            if (!m->cls && m->h.nranks != (uint32_t)c->size)
                m->cls =
                    co_ckpt_fail(&e, MPI_ERR_SIZE, "written by %u ranks; the communicator has %d",
                                 m->h.nranks, c->size);
        }
        if (m->cls > 0) memcpy(m->why, e.why, sizeof(m->why));
        m->path = name_hash(p);
    }
    if ((rc = co_bcast_binomial(m, sizeof(*m), co_dt_get(MPI_BYTE), 0, c))) goto coll_failed;
    /* a different path on some member outranks what rank 0 found */
    if (m->path != name_hash(p))
        co_ckpt_fail(&e, MPI_ERR_NOT_SAME,
                     "the members passed different paths (this one differs from rank 0's)");
    else if (me != 0 && m->cls > 0)
        co_ckpt_fail(&e, m->cls, "%s", m->why);
    const co_ckpt_header *h = &m->h;
    co_ckpt_image bim = {0}, lim;
    const co_ckpt_image *im = &bim;
    if (m->cls) goto agreed; /* nothing to restore, or rank 0 could not read the index */
    if (h->tree_nodes) {
        size_t tb = h->tree_nodes * sizeof(co_ckpt_node);
        if (me != 0 && !(tree = malloc(tb))) co_fatal("out of memory restoring a checkpoint");
        if ((rc = co_bcast_binomial(tree, tb, co_dt_get(MPI_BYTE), 0, c))) goto coll_failed;
    }
    /* The base is decompressed once, into memory that every member maps, each of the first
     * members decompressing one slice. */
    if ((rc = co_win_create(c, MPI_WIN_FLAVOR_SHARED, NULL, me == 0 ? (MPI_Aint)h->base_rawlen : 0,
                            1, NULL, fn, &win)))
        goto out;
    uint8_t *base = (uint8_t *)win->peers[0].local;

    /* every member reads its slice of the base and its own leaf */
    if (!e.cls && me != 0 && (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
        co_ckpt_fail(&e, co_file_errno_class(errno), "cannot open it: %s", strerror(errno));
    if (!e.cls) co_ckpt_read_table(fd, h, &table, &e);
    if (!e.cls && (uint32_t)me < h->base_frames)
        co_ckpt_read_slice(fd, h, table, (uint32_t)me, base, &e);
    if (!e.cls) {
        leaf = co_ckpt_tree_find(tree, h->tree_nodes, (uint32_t)me);
        if (leaf == -2) {
            co_ckpt_fail(&e, MPI_ERR_IO, "the tree is malformed on the way to rank %d", me);
        } else if (leaf >= 0) {
            const co_ckpt_node *l = &tree[leaf];
            char what[48];
            snprintf(what, sizeof(what), "rank %d's differences", me);
            lraw_len = l->rawlen;
            co_ckpt_read_blob(fd, l->off, l->clen, l->rawlen, l->crc, h->flags & CO_CKPT_SHUFFLED,
                              what, (void **)&lraw, &e);
        }
    }
    /* the whole base is there once every member is done; then the parts are checked against
     * one another and against the regions this member registered */
    if ((rc = agree(c, &e, p, fn))) goto out;
    if (!co_ckpt_parse(base, h->base_rawlen, 1, 0, &bim, &e) && leaf >= 0 &&
        !co_ckpt_parse(lraw, lraw_len, 0, bim.image_len, &lim, &e))
        im = &lim;
    if (!e.cls) {
        if (im->nregions != s->n)
            co_ckpt_fail(&e, MPI_ERR_ARG, "rank %d's image has %u regions; %zu are registered", me,
                         im->nregions, s->n);
        for (size_t i = 0; !e.cls && i < s->n; i++)
            if (im->region_len[i] != s->r[i].size)
                co_ckpt_fail(&e, MPI_ERR_ARG,
                             "region %zu of rank %d's image has %" PRIu64
                             " bytes; the one registered has %zu",
                             i, me, im->region_len[i], s->r[i].size);
    }
agreed:
    /* nothing below can fail: the regions change only once every member is ready */
    if ((rc = agree(c, &e, p, fn))) goto out;
    if (m->cls == 0) {
        uint64_t *st = region_starts(s),
                 common = bim.image_len < st[s->n] ? bim.image_len : st[s->n];
        size_t cur = 0;
        for_pieces(s, st, &cur, 0, common, copy_piece, (void *)bim.bytes);
        const uint8_t *q = im->bytes;
        cur = 0;
        for (uint32_t i = 0; im != &bim && i < im->nruns; i++) {
            run_ctx rr = {q, im->runs[2 * i], common};
            for_pieces(s, st, &cur, im->runs[2 * i], im->runs[2 * i + 1], run_piece, &rr);
            q += im->runs[2 * i + 1];
        }
        free(st);
        *restored = 1;
    }
    goto out;

coll_failed:
    rc = co_error(c, fn, rc, "a collective step of the restart failed");
out:
    if (win) {
        /* the base's memory goes once every member has copied from it */
        int frc = co_win_free(win, fn);
        if (!rc) rc = frc;
    }
    if (fd >= 0) close(fd);
    co_ckpt_free(lraw, lraw_len);
    free(table);
    free(tree);
    free(m);
    return rc;
}
