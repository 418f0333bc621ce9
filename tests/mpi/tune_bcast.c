/* Self-tuning broadcasts (docs/tuning.md): CALLS broadcasts of BYTES from ROOT, each with other
 * data, checked on every rank, while the root's tuner tries trees; then a few of every other
 * kind (another root, a non-contiguous type, data larger than fits one message, a split
 * communicator) that take their own searches. Run under an emulated topology by tests/tune.sh,
 * which then reads the store.
 *   t_tune_bcast CALLS BYTES ROOT */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void check_bcast(MPI_Comm comm, int root, size_t bytes, unsigned seed) {
    int me;
    MPI_Comm_rank(comm, &me);
    unsigned char *b = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes; i++) b[i] = me == root ? (unsigned char)(seed * 31 + i * 7) : 0;
    CHECK(MPI_Bcast(b, (int)bytes, MPI_BYTE, root, comm) == MPI_SUCCESS, "call %u", seed);
    for (size_t i = 0; i < bytes; i++)
        if (b[i] != (unsigned char)(seed * 31 + i * 7)) {
            fprintf(stderr, "rank %d: call %u, byte %zu is %d\n", me, seed, i, b[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int calls = argc > 1 ? atoi(argv[1]) : 100;
    size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : 1024;
    int root = argc > 3 ? atoi(argv[3]) % n : 0;

    for (int i = 0; i < calls; i++) check_bcast(MPI_COMM_WORLD, root, bytes, (unsigned)i);

    /* another root, data in a second message, and a strided type */
    for (int i = 0; i < 12; i++) check_bcast(MPI_COMM_WORLD, n - 1, 40000, (unsigned)i);
    /* strided types: two elements of vector(blocks, 3, 5), copied behind the tree (100
     * blocks) and sent from the user's buffer as they are (4000) */
    for (int blocks = 100; blocks <= 4000; blocks += 3900) {
        MPI_Datatype vec;
        MPI_Type_vector(blocks, 3, 5, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int ext = (blocks - 1) * 5 + 3, len = 2 * ext + 2;
        int *v = calloc((size_t)len, sizeof(int));
        char *in = calloc((size_t)len, 1);
        for (int j = 0; j < 2; j++)
            for (int b = 0; b < blocks; b++)
                for (int k = 0; k < 3; k++) in[j * ext + b * 5 + k] = 1;
        for (int i = 0; i < 6; i++) {
            for (int k = 0; k < len; k++) v[k] = me == 1 % n ? k * (i + 1) : -1;
            CHECK(MPI_Bcast(v, 2, vec, 1 % n, MPI_COMM_WORLD) == MPI_SUCCESS, "vector %d", i);
            /* the elements in the vector's blocks arrive, the gaps keep what they had */
            for (int k = 0; k < len; k++) {
                int want = in[k] || me == 1 % n ? k * (i + 1) : -1;
                CHECK(v[k] == want, "vector of %d, call %d: int %d is %d, not %d", blocks, i, k,
                      v[k], want);
            }
        }
        free(v);
        free(in);
        MPI_Type_free(&vec);
    }

    /* halves of the world: their own locations, their own searches */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    for (int i = 0; i < 12; i++) check_bcast(half, 0, 100, (unsigned)i);
    MPI_Comm_free(&half);

    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("tune_bcast: %d calls of %zu bytes from %d checked\n", calls, bytes, root);
    MPI_Finalize();
    return 0;
}
