/* Bad input to the checkpoint calls (docs/checkpoint.md, "Errors") gets a clear error class on
 * every rank, never a crash or a hang, and a failed restart changes no region:
 * - registering NULL, a negative size or an overlapping region; unregistering what is not
 *   registered;
 * - MPI_COMM_NULL, an intercommunicator, a NULL or empty path, a NULL flag;
 * - paths that differ between the ranks, a directory that does not exist, a directory;
 * - a file that is not a checkpoint, one of another format version, one written by a
 *   communicator of another size, regions that do not match the image saved;
 * - headers whose CRC is right but whose version, sizes or offsets are not, and trees whose
 *   CRC is right but that loop or point past the end of the file;
 * - a valid checkpoint cut short at every length from 0 to its whole size less one, and with
 *   each of its bytes changed in turn: every one is refused (MPI_ERR_IO, or MPI_ERR_BAD_FILE
 *   where the mark or the version is hit), and the regions keep their bytes. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

static int me, np;
static char base_path[PATH_MAX - 64];
static unsigned char a[1500], b[96];

static void path(char *out, const char *tag) {
    snprintf(out, PATH_MAX, "%s.%s", base_path, tag);
}

static void fill(void) {
    for (size_t i = 0; i < sizeof(a); i++) a[i] = (unsigned char)(i * 13 + (i % 200 == 0 ? me : 0));
    for (size_t i = 0; i < sizeof(b); i++) b[i] = (unsigned char)(me * 7 + i);
}

static void sentinel(void) {
    memset(a, 0xa5, sizeof(a));
    memset(b, 0xa5, sizeof(b));
}

static void untouched(const char *when) {
    for (size_t i = 0; i < sizeof(a); i++)
        CHECK(a[i] == 0xa5, "%s: region a changed at %zu", when, i);
    for (size_t i = 0; i < sizeof(b); i++)
        CHECK(b[i] == 0xa5, "%s: region b changed at %zu", when, i);
}

/* CRC-32 (the zlib polynomial), to forge headers whose CRC is right */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static int class_of(int rc) {
    int cls = -1;
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Every rank got the same class. */
static void same_everywhere(int cls, const char *what) {
    int lo, hi;
    MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "%s: the ranks got different classes (%d to %d)", what, lo, hi);
}

static unsigned char *slurp(const char *p, long *len) {
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0, "open %s", p);
    struct stat st;
    CHECK(!fstat(fd, &st), "stat");
    unsigned char *buf = malloc((size_t)st.st_size);
    CHECK(buf && read(fd, buf, (size_t)st.st_size) == st.st_size, "read %s", p);
    close(fd);
    *len = (long)st.st_size;
    return buf;
}

static void put(const char *p, const unsigned char *buf, long len) {
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "create %s", p);
    CHECK(write(fd, buf, (size_t)len) == len, "write %s", p);
    close(fd);
}

/* A restart of `p` fails on every rank with class c1 or c2, and leaves the regions alone. */
static void refused(const char *p, int c1, int c2, const char *what, long at) {
    sentinel();
    int restored = -1;
    int cls = class_of(MPIX_Restart(MPI_COMM_WORLD, p, &restored));
    CHECK(cls == c1 || cls == c2, "%s %ld: class %d, expected %d or %d", what, at, cls, c1, c2);
    char when[64];
    snprintf(when, sizeof(when), "%s %ld", what, at);
    untouched(when);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tu_tmp_name(base_path, (int)sizeof(base_path), "ckpt");
    char good[PATH_MAX], bad[PATH_MAX], other[PATH_MAX];
    path(good, "good");
    path(bad, "bad");
    int restored = 0;

    /* registration */
    CHECK_ERR(MPIX_Checkpoint_register(NULL, 10), MPI_ERR_BUFFER);
    CHECK_ERR(MPIX_Checkpoint_register(a, -1), MPI_ERR_SIZE);
    CHECK_RC(MPIX_Checkpoint_register(a, sizeof(a)));
    CHECK_ERR(MPIX_Checkpoint_register(a + 100, 10), MPI_ERR_ARG);
    CHECK_ERR(MPIX_Checkpoint_register(a, sizeof(a)), MPI_ERR_ARG);
    CHECK_RC(MPIX_Checkpoint_register(b, sizeof(b)));
    CHECK_ERR(MPIX_Checkpoint_unregister(a + 1), MPI_ERR_ARG);
    CHECK_ERR(MPIX_Checkpoint_unregister(NULL), MPI_ERR_ARG);

    /* arguments */
    CHECK_ERR(MPIX_Checkpoint(MPI_COMM_NULL, good), MPI_ERR_COMM);
    CHECK_ERR(MPIX_Checkpoint(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPIX_Checkpoint(MPI_COMM_WORLD, ""), MPI_ERR_ARG);
    CHECK_ERR(MPIX_Restart(MPI_COMM_NULL, good, &restored), MPI_ERR_COMM);
    CHECK_ERR(MPIX_Restart(MPI_COMM_WORLD, good, NULL), MPI_ERR_ARG);
    if (np >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 5, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK_ERR(MPIX_Checkpoint(inter, good), MPI_ERR_COMM);
        CHECK_ERR(MPIX_Restart(inter, good, &restored), MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        /* paths that differ */
        path(other, me == np - 1 ? "other" : "good");
        int cls = class_of(MPIX_Checkpoint(MPI_COMM_WORLD, other));
        CHECK(cls == MPI_ERR_NOT_SAME, "differing paths: class %d", cls);
        same_everywhere(cls, "differing paths");
        if (me == 0) CHECK(access(good, F_OK) != 0, "a refused checkpoint made a file");
    }
    /* where no file can be made */
    snprintf(other, sizeof(other), "%s.nodir/ck", base_path);
    int cls = class_of(MPIX_Checkpoint(MPI_COMM_WORLD, other));
    CHECK(cls == MPI_ERR_NO_SUCH_FILE, "missing directory: class %d", cls);
    same_everywhere(cls, "missing directory");
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, other, &restored));
    CHECK(restored == 0, "a missing directory holds no checkpoint");
    path(other, "dir");
    if (me == 0) CHECK(!mkdir(other, 0755), "mkdir %s", other);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_ERR(MPIX_Restart(MPI_COMM_WORLD, other, &restored), MPI_ERR_BAD_FILE);
    cls = class_of(MPIX_Checkpoint(MPI_COMM_WORLD, other));
    CHECK(cls != MPI_SUCCESS, "a checkpoint over a directory succeeded");
    same_everywhere(cls, "a checkpoint over a directory");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) rmdir(other);

    /* a file that is not a checkpoint */
    if (me == 0) put(bad, (const unsigned char *)"this is not a checkpoint, only some text\n", 41);
    MPI_Barrier(MPI_COMM_WORLD);
    refused(bad, MPI_ERR_BAD_FILE, MPI_ERR_IO, "a text file", 0);

    /* a valid checkpoint, then uses it does not fit */
    fill();
    CHECK_RC(MPIX_Checkpoint(MPI_COMM_WORLD, good));
    long len = 0;
    unsigned char *img = NULL;
    if (me == 0) img = slurp(good, &len);
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (np >= 2) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, me < np / 2, me, &half);
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        sentinel();
        cls = class_of(MPIX_Restart(half, good, &restored));
        CHECK(cls == MPI_ERR_SIZE, "restart on %d ranks: class %d", np / 2, cls);
        untouched("a communicator of another size");
        MPI_Comm_free(&half);
    }
    unsigned char extra[8];
    CHECK_RC(MPIX_Checkpoint_register(extra, sizeof(extra)));
    refused(good, MPI_ERR_ARG, MPI_ERR_ARG, "an extra region", 0);
    CHECK_RC(MPIX_Checkpoint_unregister(extra));
    CHECK_RC(MPIX_Checkpoint_unregister(b));
    CHECK_RC(MPIX_Checkpoint_register(b, sizeof(b) - 1));
    refused(good, MPI_ERR_ARG, MPI_ERR_ARG, "a region of another size", 0);
    CHECK_RC(MPIX_Checkpoint_unregister(b));
    CHECK_RC(MPIX_Checkpoint_register(b, sizeof(b)));
    sentinel();
    CHECK_RC(MPIX_Restart(MPI_COMM_WORLD, good, &restored));
    CHECK(restored == 1, "the good checkpoint restores");

    /* headers forged with a right CRC (docs/checkpoint.md, "The file": the CRC covers the
     * first 124 bytes) */
    struct {
        int off, width;
        uint64_t value;
        int cls;
        const char *what;
    } forged[] = {
        {8, 4, 2, MPI_ERR_BAD_FILE, "format version 2"},
        {16, 4, 0, MPI_ERR_IO, "no ranks"},
        {20, 4, 1000000, MPI_ERR_IO, "a base rank past the ranks"},
        {32, 8, 1ull << 40, MPI_ERR_IO, "a base larger than the file"},
        {40, 8, 1ull << 60, MPI_ERR_IO, "a base 2^60 bytes long once decompressed"},
        {56, 8, 8, MPI_ERR_IO, "a tree inside the header"},
        {64, 4, 0xffffffffu, MPI_ERR_IO, "4 billion tree nodes"},
        {88, 8, 1, MPI_ERR_IO, "a file size of 1"},
    };
    for (size_t k = 0; k < sizeof(forged) / sizeof(forged[0]); k++) {
        if (me == 0) {
            unsigned char *f = malloc((size_t)len);
            CHECK(f, "malloc");
            memcpy(f, img, (size_t)len);
            memcpy(f + forged[k].off, &forged[k].value, (size_t)forged[k].width);
            uint32_t crc = crc32_of(f, 124);
            memcpy(f + 124, &crc, 4);
            put(bad, f, len);
            free(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        refused(bad, forged[k].cls, forged[k].cls, forged[k].what, 0);
    }

    /* trees forged with right CRCs: a leaf's part past the end of numbers, an inner node that
     * points back at itself */
    uint32_t nodes = 0;
    uint64_t tree_off = 0;
    if (me == 0) {
        memcpy(&tree_off, img + 56, 8);
        memcpy(&nodes, img + 64, 4);
    }
    MPI_Bcast(&nodes, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    for (int kind = 0; kind < 2 && nodes > 1; kind++) {
        if (me == 0) {
            unsigned char *f = malloc((size_t)len);
            CHECK(f, "malloc");
            memcpy(f, img, (size_t)len);
            unsigned char *root = f + tree_off, *leaf = NULL;
            for (uint32_t i = 0; i < nodes && !leaf; i++)
                if (f[tree_off + 48 * i] == 1) leaf = f + tree_off + 48 * i;
            CHECK(leaf && root[0] == 0, "the tree has a leaf and an inner root");
            if (kind == 0) {
                uint64_t off = UINT64_MAX - 10;
                memcpy(leaf + 16, &off, 8);
            } else {
                uint32_t self = 0;
                memcpy(root + 8, &self, 4);
            }
            uint32_t crc = crc32_of(f + tree_off, 48 * (size_t)nodes);
            memcpy(f + 52, &crc, 4);
            crc = crc32_of(f, 124);
            memcpy(f + 124, &crc, 4);
            put(bad, f, len);
            free(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        refused(bad, MPI_ERR_IO, MPI_ERR_IO, kind ? "a tree that loops" : "a leaf past 2^64", 0);
    }

    /* cut short at every length */
    for (long cut = 0; cut < len; cut++) {
        if (me == 0) put(bad, img, cut);
        MPI_Barrier(MPI_COMM_WORLD);
        refused(bad, MPI_ERR_IO, cut < 8 ? MPI_ERR_BAD_FILE : MPI_ERR_IO, "cut at", cut);
    }
    /* each byte changed in turn */
    for (long at = 0; at < len; at++) {
        if (me == 0) {
            img[at] ^= 0x10;
            put(bad, img, len);
            img[at] ^= 0x10;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        refused(bad, MPI_ERR_IO, MPI_ERR_BAD_FILE, "byte changed at", at);
    }
    /* one byte more */
    if (me == 0) {
        put(bad, img, len);
        int fd = open(bad, O_WRONLY | O_APPEND);
        CHECK(fd >= 0 && write(fd, "x", 1) == 1, "append");
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refused(bad, MPI_ERR_IO, MPI_ERR_IO, "a byte appended", 0);
    if (me == 0)
        printf("ckpt_errors: %d ranks, a checkpoint of %ld bytes refused %ld ways\n", np, len,
               2 * len + 1);

    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unlink(good);
        unlink(bad);
        free(img);
    }
    MPI_Finalize();
    return 0;
}
