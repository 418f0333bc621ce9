/* Whole-job checkpoints (capability 3, docs/checkpoint.md): each rank's image is the memory
 * regions the program registered, in the order it registered them. A checkpoint stores one
 * base image, the one closest to the others by sampled block hashes, compressed, and for every
 * other rank only its differences from the base, found through a binary radix tree keyed by
 * the bits of the rank. A restart walks the tree to the rank's leaf and rebuilds its image;
 * every rank does so at once. Above coll (the base travels by broadcast) and io (the errno
 * classes). */
#ifndef CO_CKPT_H
#define CO_CKPT_H

#include "../core/cohort.h"

#include <stdio.h>

/* ---- Registered regions (ckpt.c) --------------------------------------------------------- */

typedef struct co_ckpt_region {
    uint8_t *base;
    size_t size;
} co_ckpt_region;

/* Adds [base, base + size) to this rank's image; MPI_ERR_ARG when it overlaps a region
 * registered before. Reported on MPI_COMM_WORLD's handler. */
int co_ckpt_register(void *base, size_t size, const char *fn);
/* Removes the region that starts at base; MPI_ERR_ARG when there is none. */
int co_ckpt_unregister(void *base, const char *fn);
/* Collective over intracommunicator c: writes the members' images to `path`, replacing the
 * checkpoint there only once the new one is complete. */
int co_ckpt_write(co_comm *c, const char *path, const char *fn);
/* Collective over intracommunicator c: *restored = 0 when there is no checkpoint at `path`;
 * else every member's registered regions get the image saved for its rank and *restored = 1.
 * On an error no member's regions have changed. */
int co_ckpt_restart(co_comm *c, const char *path, int *restored, const char *fn);
/* The registered regions in the order of registration (*n of them): a rank's image, and what
 * a rank swap moves (src/migrate). */
const co_ckpt_region *co_ckpt_regions(size_t *n);
void co_ckpt_fini(void);

/* ---- The file format (format.c) ---------------------------------------------------------- */

#define CO_CKPT_MAGIC   "COHORTCK"
#define CO_CKPT_VERSION 1
#define CO_CKPT_HEADER  128 /* bytes; the base image follows */
/* Every compressed part was shuffled before compression, in blocks of CO_CKPT_BLOCK bytes
 * counted from the part's start: byte j of each 8-byte word of a block went to plane j, the
 * block's tail (under 8 bytes) as it was. Numbers that are close (a field's doubles, counters)
 * share their high bytes, and planes of equal bytes compress to almost nothing. */
#define CO_CKPT_SHUFFLED 1u
#define CO_CKPT_BLOCK    (256 * 1024)

typedef struct co_ckpt_header {
    char magic[8];
    uint32_t version;
    uint32_t byte_order; /* 0x01020304 as written by the machine that wrote the file */
    uint32_t nranks;
    uint32_t base_rank;
    uint64_t base_off, base_clen, base_rawlen;
    uint32_t base_crc, tree_crc;
    uint64_t tree_off;
    uint32_t tree_nodes;  /* 0: every rank's image is the base */
    uint32_t flags;       /* CO_CKPT_SHUFFLED */
    uint64_t image_bytes; /* the images' sizes added up, uncompressed */
    uint64_t created;     /* seconds since 1970 */
    uint64_t file_size;
    uint32_t base_frames; /* the base is compressed in this many slices, one per rank at most */
    uint8_t spare[CO_CKPT_HEADER - 104];
    uint32_t header_crc; /* of the bytes before it */
} co_ckpt_header;

/* The base's table, at base_off (its CRC is the header's base_crc): one entry per slice of the
 * base's raw form, in order; the compressed slices follow the table one after the other. */
typedef struct co_ckpt_frame {
    uint64_t off, clen, rawlen;
    uint32_t crc, spare;
} co_ckpt_frame;

/* A node of the radix tree, 48 bytes in the file. An inner node tests bit `bit` of the rank
 * and goes to child[0] or child[1]; a leaf holds one rank's differences: `clen` compressed
 * bytes at `off` that decompress to `rawlen`, with CRC-32 `crc`. Node 0 is the root. */
typedef struct co_ckpt_node {
    uint32_t leaf; /* 1: leaf, 0: inner */
    uint32_t key;  /* leaf: the rank; inner: the bit tested */
    uint32_t child[2];
    uint64_t off, clen, rawlen;
    uint32_t crc, spare;
} co_ckpt_node;

/* An error found in a checkpoint file or its use: an MPI error class and why. */
typedef struct co_ckpt_err {
    int cls;
    char why[256];
} co_ckpt_err;
int co_ckpt_fail(co_ckpt_err *e, int cls, const char *fmt, ...) CO_PRINTF(3, 4);

uint32_t co_ckpt_crc(const void *p, size_t n);
/* The tree over `n` distinct ranks, sorted ascending, as at most 2n - 1 nodes written to
 * `nodes` (leaves' off/clen/rawlen/crc left 0, filled by the caller); returns the count. */
uint32_t co_ckpt_tree_build(const uint32_t *ranks, uint32_t n, co_ckpt_node *nodes);
/* The leaf of `rank`, or -1 when the tree has none (the rank's image is the base). A tree that
 * loops or points outside itself gives -2. */
int64_t co_ckpt_tree_find(const co_ckpt_node *nodes, uint32_t count, uint32_t rank);
/* Reads and checks the header and the tree of an open checkpoint (`size`: the file's size).
 * *nodes is malloc'd (NULL when the tree is empty). MPI_SUCCESS or the error's class. */
int co_ckpt_read_index(int fd, uint64_t size, co_ckpt_header *h, co_ckpt_node **nodes,
                       co_ckpt_err *e);
/* Reads `clen` bytes at `off`, checks their CRC and decompresses them into `dst`, which must
 * come out exactly `rawlen` bytes long. */
int co_ckpt_read_frame(int fd, uint64_t off, uint64_t clen, uint64_t rawlen, uint32_t crc,
                       int shuffled, const char *what, void *dst, co_ckpt_err *e);
/* The same into a buffer of its own (co_ckpt_alloc'd, `rawlen` bytes; free with co_ckpt_free). */
int co_ckpt_read_blob(int fd, uint64_t off, uint64_t clen, uint64_t rawlen, uint32_t crc,
                      int shuffled, const char *what, void **out, co_ckpt_err *e);
/* The shuffle of CO_CKPT_SHUFFLED for one block of k bytes, and its inverse. */
void co_ckpt_shuffle(uint8_t *dst, const uint8_t *src, size_t k);
void co_ckpt_unshuffle(uint8_t *dst, const uint8_t *src, size_t k);
/* The base's table, checked (malloc'd); one slice of the base into its place in `base`. */
int co_ckpt_read_table(int fd, const co_ckpt_header *h, co_ckpt_frame **out, co_ckpt_err *e);
int co_ckpt_read_slice(int fd, const co_ckpt_header *h, const co_ckpt_frame *t, uint32_t i,
                       uint8_t *base, co_ckpt_err *e);
/* The base's raw form, from its table and slices, into a co_ckpt_alloc'd buffer of
 * h->base_rawlen bytes. */
int co_ckpt_read_base(int fd, const co_ckpt_header *h, void **out, co_ckpt_err *e);
/* Buffers the size of an image: from 2 MiB on mapped with transparent huge pages, whose
 * faults cost a fraction of small pages' on a virtual machine. NULL when out of memory. */
void *co_ckpt_alloc(size_t n);
void co_ckpt_free(void *p, size_t n);

/* A leaf's or the base's raw contents: the region sizes, then (leaves only) runs of
 * differences from the base. Parsed views into a decompressed buffer. */
typedef struct co_ckpt_image {
    uint32_t nregions, nruns;
    const uint64_t *region_len;
    const uint64_t *runs; /* nruns pairs: offset, length */
    const uint8_t *bytes; /* the runs' bytes one after the other (the base: the image) */
    uint64_t image_len;   /* the regions' sizes added up */
} co_ckpt_image;
/* Checks and parses a decompressed base (base != 0) or leaf; for a leaf, base_len is the base
 * image's length, which runs may pass only where the image is longer. */
int co_ckpt_parse(const void *raw, uint64_t rawlen, int base, uint64_t base_len, co_ckpt_image *im,
                  co_ckpt_err *e);

/* `cohort checkpoint FILE`: prints on `out` what the file holds and checks every part of it;
 * 0 when it is whole, else 1 with the reason on `err`. */
int co_ckpt_inspect(const char *path, FILE *out, FILE *err);

#endif /* CO_CKPT_H */
