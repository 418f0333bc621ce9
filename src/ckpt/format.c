/* The checkpoint file (docs/checkpoint.md, "The file"): a 128-byte header, the base image as a
 * table of slices compressed with zstd, every leaf's differences compressed the same way, and
 * the radix tree last. Everything is checked before it is believed: the header, the base's
 * table and the tree by CRC-32, each compressed part by its CRC-32 before zstd sees it and by
 * its size after, each run against the image it patches. A file cut short or changed anywhere
 * gives an error class and a reason, so that restarts and `cohort checkpoint` can say what is
 * wrong instead of crashing. */
#include "ckpt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <zlib.h>
#include <zstd.h>

_Static_assert(sizeof(co_ckpt_header) == CO_CKPT_HEADER, "the header is 128 bytes");
_Static_assert(sizeof(co_ckpt_node) == 48, "a tree node is 48 bytes");
_Static_assert(sizeof(co_ckpt_frame) == 32, "a base table entry is 32 bytes");

#define HUGE_FROM ((size_t)2 << 20)

void *co_ckpt_alloc(size_t n) {
    if (n < HUGE_FROM) return malloc(n ? n : 1);
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, n, MADV_HUGEPAGE);
    return p;
}

void co_ckpt_free(void *p, size_t n) {
    if (!p) return;
    if (n < HUGE_FROM)
        free(p);
    else
        munmap(p, n);
}

int co_ckpt_fail(co_ckpt_err *e, int cls, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof(e->why), fmt, ap);
    va_end(ap);
    return e->cls = cls;
}

uint32_t co_ckpt_crc(const void *p, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    const Bytef *b = p;
    while (n) { /* zlib takes lengths as uInt */
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        c = crc32(c, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)c;
}

/* The nodes for ranks[lo, hi), preorder from *next; returns the subtree's root. The ranks
 * are sorted, so the highest bit in which the first and the last differ splits them. */
static uint32_t build(const uint32_t *ranks, uint32_t lo, uint32_t hi, co_ckpt_node *nodes,
                      uint32_t *next) {
    uint32_t me = (*next)++;
    memset(&nodes[me], 0, sizeof(nodes[me]));
    if (hi - lo == 1) {
        nodes[me].leaf = 1;
        nodes[me].key = ranks[lo];
        return me;
    }
    uint32_t bit = 31 - (uint32_t)__builtin_clz(ranks[lo] ^ ranks[hi - 1]);
    uint32_t mid = lo;
    while (!(ranks[mid] >> bit & 1)) mid++;
    nodes[me].key = bit;
    nodes[me].child[0] = build(ranks, lo, mid, nodes, next);
    nodes[me].child[1] = build(ranks, mid, hi, nodes, next);
    return me;
}

uint32_t co_ckpt_tree_build(const uint32_t *ranks, uint32_t n, co_ckpt_node *nodes) {
    uint32_t next = 0;
    if (n) build(ranks, 0, n, nodes, &next);
    return next;
}

int64_t co_ckpt_tree_find(const co_ckpt_node *nodes, uint32_t count, uint32_t rank) {
    if (!count) return -1;
    uint32_t i = 0;
    /* a child comes after its parent in preorder, and the bit tested falls on the way down,
     * so a walk takes at most 33 steps in a well-formed tree */
    for (int steps = 0; steps < 34; steps++) {
        const co_ckpt_node *n = &nodes[i];
        if (n->leaf) return n->key == rank ? (int64_t)i : -1;
        if (n->key > 31) return -2;
        uint32_t c = n->child[rank >> n->key & 1];
        if (c <= i || c >= count) return -2;
        i = c;
    }
    return -2;
}

static int read_at(int fd, void *buf, uint64_t len, uint64_t off, const char *what,
                   co_ckpt_err *e) {
    uint8_t *p = buf;
    while (len) {
        ssize_t k = pread(fd, p, len > (1u << 30) ? 1u << 30 : len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0)
            return co_ckpt_fail(e, MPI_ERR_IO, "reading %s failed: %s", what, strerror(errno));
        if (k == 0) return co_ckpt_fail(e, MPI_ERR_IO, "the file ends inside %s", what);
        p += k, off += (uint64_t)k, len -= (uint64_t)k;
    }
    return MPI_SUCCESS;
}

int co_ckpt_read_index(int fd, uint64_t size, co_ckpt_header *h, co_ckpt_node **nodes,
                       co_ckpt_err *e) {
    *nodes = NULL;
    if (size < CO_CKPT_HEADER)
        return co_ckpt_fail(e, size >= 8 ? MPI_ERR_IO : MPI_ERR_BAD_FILE,
                            "the file has %" PRIu64 " bytes, less than a checkpoint's header",
                            size);
    int rc = read_at(fd, h, CO_CKPT_HEADER, 0, "the header", e);
    if (rc) return rc;
    if (memcmp(h->magic, CO_CKPT_MAGIC, 8))
        return co_ckpt_fail(e, MPI_ERR_BAD_FILE, "not a Cohort checkpoint (no COHORTCK mark)");
    if (h->byte_order != 0x01020304)
        return co_ckpt_fail(e, MPI_ERR_BAD_FILE, "written by a machine of another byte order");
    if (co_ckpt_crc(h, offsetof(co_ckpt_header, header_crc)) != h->header_crc)
        return co_ckpt_fail(e, MPI_ERR_IO, "the header is damaged (CRC mismatch)");
    if (h->flags & ~CO_CKPT_SHUFFLED)
        return co_ckpt_fail(e, MPI_ERR_BAD_FILE, "unknown flags %#x", h->flags);
    if (h->version != CO_CKPT_VERSION)
        return co_ckpt_fail(e, MPI_ERR_BAD_FILE, "format version %u; this library reads %d",
                            h->version, CO_CKPT_VERSION);
    if (h->file_size != size)
        return co_ckpt_fail(e, MPI_ERR_IO,
                            "the file has %" PRIu64 " bytes; its header says %" PRIu64
                            " (cut short or appended to)",
                            size, h->file_size);
    if (!h->nranks || h->base_rank >= h->nranks || h->tree_nodes > 2 * (uint64_t)h->nranks ||
        !h->base_frames || h->base_frames > h->nranks || h->base_off < CO_CKPT_HEADER ||
        h->base_clen < h->base_frames * (uint64_t)sizeof(co_ckpt_frame) || h->base_clen > size ||
        h->base_off > size - h->base_clen || h->tree_off > size ||
        h->tree_off < h->base_off + h->base_clen ||
        (size - h->tree_off) / sizeof(co_ckpt_node) != h->tree_nodes ||
        (size - h->tree_off) % sizeof(co_ckpt_node))
        return co_ckpt_fail(e, MPI_ERR_IO, "the header's sizes and offsets do not fit the file");
    /* the base's table bounds the base's size before anyone allocates it */
    co_ckpt_frame *frames;
    if ((rc = co_ckpt_read_table(fd, h, &frames, e))) return rc;
    free(frames);
    if (!h->tree_nodes) return MPI_SUCCESS;
    size_t tb = (size_t)h->tree_nodes * sizeof(co_ckpt_node);
    co_ckpt_node *t = malloc(tb);
    if (!t) return co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory for the tree (%zu bytes)", tb);
    if ((rc = read_at(fd, t, tb, h->tree_off, "the tree", e))) {
        free(t);
        return rc;
    }
    if (co_ckpt_crc(t, tb) != h->tree_crc) {
        free(t);
        return co_ckpt_fail(e, MPI_ERR_IO, "the tree is damaged (CRC mismatch)");
    }
    for (uint32_t i = 0; i < h->tree_nodes; i++) {
        const co_ckpt_node *n = &t[i];
        int bad = n->leaf > 1 ||
                  (n->leaf ? n->key >= h->nranks || n->off < h->base_off + h->base_clen ||
                                 n->clen > h->tree_off || n->off > h->tree_off - n->clen
                           : n->key > 31 || n->child[0] <= i || n->child[1] <= i ||
                                 n->child[0] >= h->tree_nodes || n->child[1] >= h->tree_nodes);
        if (bad) {
            free(t);
            return co_ckpt_fail(e, MPI_ERR_IO, "node %u of the tree is malformed", i);
        }
    }
    *nodes = t;
    return MPI_SUCCESS;
}

/* Swaps the `mask` bytes of a (shifted down) with those of b: one step of a transpose. */
static inline void swap_blocks(uint64_t *a, uint64_t *b, int shift, uint64_t mask) {
    uint64_t t = ((*a >> shift) ^ *b) & mask;
    *b ^= t;
    *a ^= t << shift;
}

/* Transposes the 8 x 8 bytes of x[0..7] (byte j of x[i] to byte i of x[j]) in three rounds of
 * swaps between blocks: single bytes, pairs, then quadruples. */
static void transpose8(uint64_t x[8]) {
    const uint64_t m1 = 0x00FF00FF00FF00FFull, m2 = 0x0000FFFF0000FFFFull,
                   m4 = 0x00000000FFFFFFFFull;
    swap_blocks(&x[0], &x[1], 8, m1), swap_blocks(&x[2], &x[3], 8, m1);
    swap_blocks(&x[4], &x[5], 8, m1), swap_blocks(&x[6], &x[7], 8, m1);
    swap_blocks(&x[0], &x[2], 16, m2), swap_blocks(&x[1], &x[3], 16, m2);
    swap_blocks(&x[4], &x[6], 16, m2), swap_blocks(&x[5], &x[7], 16, m2);
    swap_blocks(&x[0], &x[4], 32, m4), swap_blocks(&x[1], &x[5], 32, m4);
    swap_blocks(&x[2], &x[6], 32, m4), swap_blocks(&x[3], &x[7], 32, m4);
}

void co_ckpt_shuffle(uint8_t *dst, const uint8_t *src, size_t k) {
    size_t w = k / 8, i = 0;
    for (; i + 8 <= w; i += 8) {
        uint64_t x[8];
        memcpy(x, src + 8 * i, 64);
        transpose8(x);
        for (size_t j = 0; j < 8; j++) memcpy(dst + j * w + i, &x[j], 8);
    }
    for (; i < w; i++)
        for (size_t j = 0; j < 8; j++) dst[j * w + i] = src[8 * i + j];
    memcpy(dst + 8 * w, src + 8 * w, k - 8 * w);
}

void co_ckpt_unshuffle(uint8_t *dst, const uint8_t *src, size_t k) {
    size_t w = k / 8, i = 0;
    for (; i + 8 <= w; i += 8) {
        uint64_t x[8];
        for (size_t j = 0; j < 8; j++) memcpy(&x[j], src + j * w + i, 8);
        transpose8(x);
        memcpy(dst + 8 * i, x, 64);
    }
    for (; i < w; i++)
        for (size_t j = 0; j < 8; j++) dst[8 * i + j] = src[j * w + i];
    memcpy(dst + 8 * w, src + 8 * w, k - 8 * w);
}

int co_ckpt_read_frame(int fd, uint64_t off, uint64_t clen, uint64_t rawlen, uint32_t crc,
                       int shuffled, const char *what, void *dst, co_ckpt_err *e) {
    void *c = co_ckpt_alloc(clen);
    int rc = MPI_SUCCESS;
    if (!c)
        return co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory to read %s (%" PRIu64 " bytes)", what,
                            clen);
    if ((rc = read_at(fd, c, clen, off, what, e))) goto out;
    if (co_ckpt_crc(c, clen) != crc) {
        rc = co_ckpt_fail(e, MPI_ERR_IO, "%s is damaged (CRC mismatch)", what);
        goto out;
    }
    /* the size the index gives must be the one zstd recorded */
    unsigned long long framed = ZSTD_getFrameContentSize(c, clen);
    if (framed != rawlen) {
        rc = co_ckpt_fail(e, MPI_ERR_IO, "%s holds %llu bytes; the index says %" PRIu64, what,
                          framed, rawlen);
        goto out;
    }
    size_t got = ZSTD_decompress(dst, rawlen, c, clen);
    if (ZSTD_isError(got) || got != rawlen) {
        rc = co_ckpt_fail(e, MPI_ERR_IO, "%s does not decompress to its %" PRIu64 " bytes (%s)",
                          what, rawlen, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size");
        goto out;
    }
    if (shuffled) {
        uint8_t *blk = malloc(CO_CKPT_BLOCK), *d = dst;
        if (!blk) {
            rc = co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory to read %s", what);
            goto out;
        }
        for (uint64_t at = 0; at < rawlen; at += CO_CKPT_BLOCK) {
            size_t k = rawlen - at < CO_CKPT_BLOCK ? rawlen - at : CO_CKPT_BLOCK;
            memcpy(blk, d + at, k);
            co_ckpt_unshuffle(d + at, blk, k);
        }
        free(blk);
    }
out:
    co_ckpt_free(c, clen);
    return rc;
}

int co_ckpt_read_blob(int fd, uint64_t off, uint64_t clen, uint64_t rawlen, uint32_t crc,
                      int shuffled, const char *what, void **out, co_ckpt_err *e) {
    *out = NULL;
    /* a size beyond what the compressed bytes can hold is refused before it is allocated */
    if (rawlen > clen * 65536 + 65536)
        return co_ckpt_fail(e, MPI_ERR_IO, "%s claims %" PRIu64 " bytes from %" PRIu64, what,
                            rawlen, clen);
    void *raw = co_ckpt_alloc(rawlen);
    if (!raw)
        return co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory to read %s (%" PRIu64 " bytes)", what,
                            rawlen);
    int rc = co_ckpt_read_frame(fd, off, clen, rawlen, crc, shuffled, what, raw, e);
    if (rc)
        co_ckpt_free(raw, rawlen);
    else
        *out = raw;
    return rc;
}

int co_ckpt_read_table(int fd, const co_ckpt_header *h, co_ckpt_frame **out, co_ckpt_err *e) {
    *out = NULL;
    size_t tb = h->base_frames * sizeof(co_ckpt_frame);
    co_ckpt_frame *t = malloc(tb);
    if (!t) return co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory for the base's table");
    int rc = read_at(fd, t, tb, h->base_off, "the base's table", e);
    if (!rc && co_ckpt_crc(t, tb) != h->base_crc)
        rc = co_ckpt_fail(e, MPI_ERR_IO, "the base's table is damaged (CRC mismatch)");
    /* the slices follow the table without gaps and add up to the base */
    uint64_t at = h->base_off + tb, raw = 0;
    for (uint32_t i = 0; !rc && i < h->base_frames; i++) {
        if (t[i].off != at || t[i].clen > h->base_off + h->base_clen - at ||
            t[i].rawlen > h->base_rawlen - raw || t[i].rawlen > t[i].clen * 65536 + 65536)
            rc = co_ckpt_fail(e, MPI_ERR_IO, "slice %u of the base is out of place", i);
        at += t[i].clen;
        raw += t[i].rawlen;
    }
    if (!rc && (at != h->base_off + h->base_clen || raw != h->base_rawlen))
        rc = co_ckpt_fail(e, MPI_ERR_IO, "the base's slices do not add up to the base");
    if (rc)
        free(t);
    else
        *out = t;
    return rc;
}

int co_ckpt_read_slice(int fd, const co_ckpt_header *h, const co_ckpt_frame *t, uint32_t i,
                       uint8_t *base, co_ckpt_err *e) {
    uint64_t raw = 0;
    for (uint32_t k = 0; k < i; k++) raw += t[k].rawlen;
    char what[48];
    snprintf(what, sizeof(what), "slice %u of the base", i);
    return co_ckpt_read_frame(fd, t[i].off, t[i].clen, t[i].rawlen, t[i].crc,
                              h->flags & CO_CKPT_SHUFFLED, what, base + raw, e);
}

int co_ckpt_read_base(int fd, const co_ckpt_header *h, void **out, co_ckpt_err *e) {
    *out = NULL;
    co_ckpt_frame *t;
    int rc = co_ckpt_read_table(fd, h, &t, e);
    if (rc) return rc;
    uint8_t *b = co_ckpt_alloc(h->base_rawlen);
    if (!b)
        rc = co_ckpt_fail(e, MPI_ERR_NO_MEM, "no memory for the base image (%" PRIu64 " bytes)",
                          h->base_rawlen);
    for (uint32_t i = 0; !rc && i < h->base_frames; i++) rc = co_ckpt_read_slice(fd, h, t, i, b, e);
    free(t);
    if (rc)
        co_ckpt_free(b, h->base_rawlen);
    else
        *out = b;
    return rc;
}

int co_ckpt_parse(const void *raw, uint64_t rawlen, int base, uint64_t base_len, co_ckpt_image *im,
                  co_ckpt_err *e) {
    const uint8_t *p = raw;
    memset(im, 0, sizeof(*im));
    const char *what = base ? "the base image" : "a rank's differences";
    if (rawlen < 8) return co_ckpt_fail(e, MPI_ERR_IO, "%s is too short", what);
    uint32_t nr, nruns;
    memcpy(&nr, p, 4);
    memcpy(&nruns, p + 4, 4);
    if (base && nruns) return co_ckpt_fail(e, MPI_ERR_IO, "%s has runs", what);
    uint64_t head = 8 + 8 * (uint64_t)nr + 16 * (uint64_t)nruns;
    if (head > rawlen) return co_ckpt_fail(e, MPI_ERR_IO, "%s is too short for its lists", what);
    im->nregions = nr, im->nruns = nruns;
    im->region_len = (const uint64_t *)(const void *)(p + 8);
    im->runs = (const uint64_t *)(const void *)(p + 8 + 8 * (uint64_t)nr);
    im->bytes = p + head;
    uint64_t len = 0;
    for (uint32_t i = 0; i < nr; i++) {
        if (im->region_len[i] > UINT64_MAX - len)
            return co_ckpt_fail(e, MPI_ERR_IO, "%s's region sizes overflow", what);
        len += im->region_len[i];
    }
    im->image_len = len;
    uint64_t data = rawlen - head;
    if (base) {
        if (data != len)
            return co_ckpt_fail(e, MPI_ERR_IO, "%s holds %" PRIu64 " bytes for %" PRIu64, what,
                                data, len);
        return MPI_SUCCESS;
    }
    /* runs ascend without overlapping, lie inside the image, and cover every byte beyond the
     * base's end; their bytes fill the rest exactly */
    uint64_t end = 0, sum = 0, covered = base_len < len ? base_len : len;
    for (uint32_t i = 0; i < nruns; i++) {
        uint64_t o = im->runs[2 * i], l = im->runs[2 * i + 1];
        if (!l || o < end || o > len || l > len - o)
            return co_ckpt_fail(e, MPI_ERR_IO, "run %u of %s is out of place", i, what);
        if (o > covered && o > end)
            return co_ckpt_fail(e, MPI_ERR_IO, "%s leaves bytes past the base's end unset", what);
        end = o + l;
        if (end > covered) covered = end;
        sum += l;
    }
    if (covered < len)
        return co_ckpt_fail(e, MPI_ERR_IO, "%s leaves bytes past the base's end unset", what);
    if (sum != data)
        return co_ckpt_fail(e, MPI_ERR_IO, "%s holds %" PRIu64 " bytes for runs of %" PRIu64, what,
                            data, sum);
    return MPI_SUCCESS;
}

int co_ckpt_inspect(const char *path, FILE *out, FILE *err) {
    co_ckpt_err e = {0, ""};
    co_ckpt_header h = {{0}};
    co_ckpt_node *t = NULL;
    void *base = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = MPI_SUCCESS;
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        fprintf(err, "cohort checkpoint: cannot open %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return 1;
    }
    if ((rc = co_ckpt_read_index(fd, (uint64_t)st.st_size, &h, &t, &e))) goto done;
    time_t when = (time_t)h.created;
    char stamp[64];
    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", localtime(&when));
    fprintf(out, "%s: Cohort checkpoint, format %u, written %s\n", path, h.version, stamp);
    fprintf(out, "  ranks             %u\n", h.nranks);
    fprintf(out, "  images            %" PRIu64 " bytes in all\n", h.image_bytes);
    fprintf(out, "  file              %" PRIu64 " bytes (%.1f%% of the images)\n", h.file_size,
            h.image_bytes ? 100.0 * (double)h.file_size / (double)h.image_bytes : 100.0);
    fprintf(out, "  base              rank %u: %" PRIu64 " bytes, %" PRIu64 " compressed\n",
            h.base_rank, h.base_rawlen, h.base_clen);
    fprintf(out, "  base slices       %u (compressed by as many ranks at once)%s\n", h.base_frames,
            h.flags & CO_CKPT_SHUFFLED ? ", shuffled" : "");
    if ((rc = co_ckpt_read_base(fd, &h, &base, &e))) goto done;
    co_ckpt_image bim, im;
    if ((rc = co_ckpt_parse(base, h.base_rawlen, 1, 0, &bim, &e))) goto done;
    fprintf(out, "  base regions      %u\n", bim.nregions);
    uint32_t leaves = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < h.tree_nodes; i++) leaves += t[i].leaf;
    fprintf(out, "  radix tree        %u nodes, %u leaves (ranks whose image differs)\n",
            h.tree_nodes, leaves);
    fprintf(out, "  same as the base  %u rank%s\n", h.nranks - leaves,
            h.nranks - leaves == 1 ? "" : "s");
    if (leaves) fprintf(out, "  rank  regions      image  runs   differing  compressed\n");
    total = (uint64_t)(h.nranks - leaves) * bim.image_len;
    for (uint32_t i = 0; i < h.tree_nodes; i++) {
        if (!t[i].leaf) continue;
        char what[48];
        snprintf(what, sizeof(what), "rank %u's differences", t[i].key);
        void *raw = NULL;
        if (co_ckpt_tree_find(t, h.tree_nodes, t[i].key) != i)
            rc = co_ckpt_fail(&e, MPI_ERR_IO, "the tree does not lead to rank %u's leaf", t[i].key);
        if (!rc)
            rc = co_ckpt_read_blob(fd, t[i].off, t[i].clen, t[i].rawlen, t[i].crc,
                                   h.flags & CO_CKPT_SHUFFLED, what, &raw, &e);
        if (!rc) rc = co_ckpt_parse(raw, t[i].rawlen, 0, bim.image_len, &im, &e);
        if (rc) {
            co_ckpt_free(raw, t[i].rawlen);
            goto done;
        }
        uint64_t diff = 0;
        for (uint32_t r = 0; r < im.nruns; r++) diff += im.runs[2 * r + 1];
        fprintf(out, "  %4u  %7u %10" PRIu64 " %5u %11" PRIu64 " %11" PRIu64 "\n", t[i].key,
                im.nregions, im.image_len, im.nruns, diff, t[i].clen);
        total += im.image_len;
        co_ckpt_free(raw, t[i].rawlen);
    }
    if (total != h.image_bytes)
        rc = co_ckpt_fail(&e, MPI_ERR_IO, "the images add up to %" PRIu64 " bytes, not %" PRIu64,
                          total, h.image_bytes);
done:
    co_ckpt_free(base, h.base_rawlen);
    free(t);
    close(fd);
    if (rc) {
        fflush(out);
        fprintf(err, "cohort checkpoint: %s: %s\n", path, e.why);
        return 1;
    }
    fprintf(out, "  every part checked: whole\n");
    return 0;
}
