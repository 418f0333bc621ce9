/* Whole-job checkpoints (MPIX_Checkpoint, MPIX_Restart; docs/checkpoint.md). Each rank
 * registers four regions: 128 KiB of random bytes that every rank shares but for a few 4 KiB
 * blocks of its own, a small struct of its own, a region whose size depends on the rank, and
 * an empty one. Checked against values computed here:
 * - MPIX_Restart finds nothing at a new path and leaves the regions alone;
 * - after a checkpoint and a scrambling, MPIX_Restart gives every rank its own bytes back;
 * - the base is the image closest to the others: the one rank (np/2) whose shared region has
 *   no blocks of its own (rank 0 at 1 and 2 ranks, where every image is as close as another);
 * - the file holds the shared bytes about once: far less than the images added up;
 * - a second checkpoint replaces the first and leaves no temporary file;
 * - images that are all alike make a tree without leaves;
 * - 300 small regions per rank, some shared and some a rank's own, come back byte for byte;
 * - each half of a split communicator checkpoints to a file of its own. */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#define SHARED (128 * 1024)
#define BLOCK  4096

static int me, np;
static char base_path[PATH_MAX - 64];

typedef struct {
    int rank, step;
    double value;
    char name[40];
} own_state;

static unsigned char shared_region[SHARED];
static own_state own;
static unsigned char *sized; /* (rank + 1) * 1000 bytes */
static size_t sized_len;
static char empty[1];

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The rank whose shared region has no blocks of its own. */
static int pure_rank(void) {
    return np / 2;
}

/* Blocks 4r .. 4r + (1 + r % 3) - 1 of the shared region are rank r's own (none for the pure
 * rank); the sets of two ranks never meet. */
static int own_block(int r, int b) {
    if (r == pure_rank()) return 0;
    return b >= 4 * r && b < 4 * r + 1 + r % 3;
}

static unsigned char expect_shared(int r, size_t i) {
    uint64_t v = mix(i / 8) >> (8 * (i % 8));
    if (own_block(r, (int)(i / BLOCK))) v = mix(i * 7919 + (uint64_t)r + 1);
    return (unsigned char)v;
}

static void fill(int step) {
    for (size_t i = 0; i < SHARED; i++) shared_region[i] = expect_shared(me, i);
    memset(&own, 0, sizeof(own));
    own.rank = me;
    own.step = step;
    own.value = me * 1.5 + step;
    snprintf(own.name, sizeof(own.name), "rank %d at step %d", me, step);
    for (size_t i = 0; i < sized_len; i++)
        sized[i] = (unsigned char)(mix(i + 77 * (size_t)me) >> 3);
}

static void scramble(void) {
    memset(shared_region, 0x5a, SHARED);
    memset(&own, 0x5a, sizeof(own));
    memset(sized, 0x5a, sized_len);
}

static void verify(int step, const char *when) {
    for (size_t i = 0; i < SHARED; i++)
        CHECK(shared_region[i] == expect_shared(me, i), "%s: shared byte %zu", when, i);
    CHECK(own.rank == me && own.step == step && own.value == me * 1.5 + step,
          "%s: own state (rank %d step %d)", when, own.rank, own.step);
    char name[40];
    snprintf(name, sizeof(name), "rank %d at step %d", me, step);
    CHECK(!strcmp(own.name, name), "%s: name '%s'", when, own.name);
    for (size_t i = 0; i < sized_len; i++)
        CHECK(sized[i] == (unsigned char)(mix(i + 77 * (size_t)me) >> 3), "%s: sized byte %zu",
              when, i);
}

static void path(char *out, const char *tag) {
    snprintf(out, PATH_MAX, "%s.%s", base_path, tag);
}

/* A field of the header (docs/checkpoint.md, "The file"), read on rank 0. */
static uint32_t header_u32(const char *p, int off) {
    uint32_t v = 0;
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0, "open %s", p);
    CHECK(pread(fd, &v, 4, off) == 4, "reading the header of %s", p);
    close(fd);
    return v;
}

static long long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) ? -1 : (long long)st.st_size;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tu_tmp_name(base_path, (int)sizeof(base_path), "ckpt");
    char p1[PATH_MAX], p2[PATH_MAX], tmp[PATH_MAX + 8];
    path(p1, "ck");
    snprintf(tmp, sizeof(tmp), "%s.tmp", p1);

    sized_len = (size_t)(me + 1) * 1000;
    sized = malloc(sized_len);
    CHECK(sized, "malloc");
    CHECK_RC(MPIX_Checkpoint_register(shared_region, SHARED));
    CHECK_RC(MPIX_Checkpoint_register(&own, sizeof(own)));
    CHECK_RC(MPIX_Checkpoint_register(sized, (MPI_Aint)sized_len));
    CHECK_RC(MPIX_Checkpoint_register(empty, 0));

    /* nothing at the path yet */
    fill(1);
    int restored = -1;
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, p1, &restored));
    CHECK(restored == 0, "a restart without a checkpoint restored %d", restored);
    verify(1, "after a restart that found nothing");

    /* checkpoint, scramble, restart */
    CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, p1));
    scramble();
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, p1, &restored));
    CHECK(restored == 1, "restored %d", restored);
    verify(1, "after the first restart");
    if (me == 0) {
        int want = np <= 2 ? 0 : pure_rank();
        uint32_t b = header_u32(p1, 20);
        CHECK(b == (uint32_t)want, "base rank %u, expected %d", b, want);
        long long size = file_size(p1);
        long long images = 0;
        for (int r = 0; r < np; r++) images += SHARED + (long long)sizeof(own) + (r + 1) * 1000;
        /* the base once, and per rank its own blocks (up to 3), its struct and its sized
         * region, with room for the metadata */
        long long bound = SHARED + 4096 + (long long)np * (3 * BLOCK + 9000 + 1024);
        CHECK(size > 0 && size <= bound, "checkpoint of %lld bytes, expected at most %lld", size,
              bound);
        CHECK(np < 4 || size * 2 < images, "%lld bytes for images of %lld", size, images);
        CHECK(file_size(tmp) < 0, "the temporary file is left");
        printf("ckpt_basic: %d ranks, images %lld bytes, checkpoint %lld bytes\n", np, images,
               size);
    }

    /* a second checkpoint replaces the first */
    fill(2);
    CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, p1));
    scramble();
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, p1, &restored));
    CHECK(restored == 1, "restored %d", restored);
    verify(2, "after the second restart");
    if (me == 0) CHECK(file_size(tmp) < 0, "the temporary file is left");

    /* images all alike: no leaves */
    CHECK_RC(MPIX_Checkpoint_unregister(&own));
    CHECK_RC(MPIX_Checkpoint_unregister(sized));
    unsigned char *alike = malloc(SHARED);
    CHECK(alike, "malloc");
    for (size_t i = 0; i < SHARED; i++) alike[i] = (unsigned char)(mix(i) >> 5);
    CHECK_RC(MPIX_Checkpoint_unregister(shared_region));
    CHECK_RC(MPIX_Checkpoint_register(alike, SHARED));
    path(p2, "alike");
    CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, p2));
    memset(alike, 0, SHARED);
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, p2, &restored));
    CHECK(restored == 1, "restored %d", restored);
    for (size_t i = 0; i < SHARED; i++)
        CHECK(alike[i] == (unsigned char)(mix(i) >> 5), "alike byte %zu", i);
    if (me == 0) {
        CHECK(header_u32(p2, 64) == 0, "alike images: %u tree nodes", header_u32(p2, 64));
        CHECK(header_u32(p2, 20) == 0, "alike images: base rank %u", header_u32(p2, 20));
        unlink(p2);
    }

    /* many small regions (they travel in one broadcast from the base's owner) */
    enum { MANY = 300 };
    static unsigned char many[MANY * 64];
    CHECK_RC(MPIX_Checkpoint_unregister(alike));
    for (int i = 0; i < MANY; i++) {
        for (int k = 0; k < 40; k++)
            many[i * 64 + k] = (unsigned char)(i % 3 ? i * 7 + k : i * 7 + k + me);
        CHECK_RC(MPIX_Checkpoint_register(&many[i * 64], 8 + (i % 5) * 8));
    }
    path(p2, "many");
    CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, p2));
    memset(many, 0xee, sizeof(many));
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, p2, &restored));
    CHECK(restored == 1, "restored %d", restored);
    for (int i = 0; i < MANY; i++)
        for (int k = 0; k < 64; k++) {
            unsigned char want =
                k >= 8 + (i % 5) * 8 ? 0xee : (unsigned char)(i % 3 ? i * 7 + k : i * 7 + k + me);
            CHECK(many[i * 64 + k] == want, "many regions: region %d byte %d", i, k);
        }
    for (int i = 0; i < MANY; i++) CHECK_RC(MPIX_Checkpoint_unregister(&many[i * 64]));
    CHECK_RC(MPIX_Checkpoint_register(alike, SHARED));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p2);

    /* each half of a split communicator: a file of its own */
    MPI_Comm half;
    int color = me % 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, me, &half));
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    path(p2, color ? "odd" : "even");
    for (size_t i = 0; i < SHARED; i++) alike[i] = (unsigned char)(me * 31 + i % 251);
    CHECK_RC(MPIX_Checkpoint(half, p2));
    memset(alike, 0, SHARED);
    CHECK_RC(MPIX_Restart(half, p2, &restored));
    CHECK(restored == 1, "restored %d", restored);
    for (size_t i = 0; i < SHARED; i++)
        CHECK(alike[i] == (unsigned char)(me * 31 + i % 251), "half: byte %zu", i);
    int hr;
    MPI_Comm_rank(half, &hr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (hr == 0) unlink(p2);
    MPI_Comm_free(&half);
    CHECK_RC(MPIX_Checkpoint_unregister(alike));
    CHECK_RC(MPIX_Checkpoint_unregister(empty));
    free(alike);

    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) unlink(p1);
    free(sized);
    MPI_Finalize();
    return 0;
}
