/* Attribute life cycles that libraries rely on:
 * - MPI_Finalize first deletes MPI_COMM_SELF's attributes, newest first (MPI 3.1 section
 *   8.7.1), while MPI still works: a delete callback may communicate and free communicators,
 *   as libraries that hook their clean-up there do;
 * - a communicator's attributes are deleted newest first when it is freed;
 * - a key freed while attributes use it still serves them: get, set and delete work through
 *   it, and freeing it again is accepted until the last attribute goes; after that it is an
 *   invalid key (MPI_ERR_KEYVAL). */
#include "testutil.h"

#define NKEYS 5

static int order[NKEYS] = {3, 2, 0, 1, 4}; /* keys in the order they are set on SELF */
static int keys[NKEYS];
static int calls[4 * NKEYS];
static int ncalls;
static int lib_ok = -1; /* what the communicating callback found, -1 if it never ran */
static MPI_Comm lib_comm = MPI_COMM_NULL;

static int record_delete(MPI_Comm c, int keyval, void *val, void *extra) {
    (void)c;
    (void)keyval;
    (void)extra;
    if (ncalls < 4 * NKEYS) calls[ncalls] = (int)(long)val;
    ncalls++;
    return MPI_SUCCESS;
}

/* A library's clean-up: one more collective on its own communicator, then it frees it. */
static int library_delete(MPI_Comm c, int keyval, void *val, void *extra) {
    record_delete(c, keyval, val, extra);
    int finalized = 1, size = 0, sum = -1;
    MPI_Finalized(&finalized);
    MPI_Comm_size(lib_comm, &size);
    int rc = MPI_Allreduce(&size, &sum, 1, MPI_INT, MPI_SUM, lib_comm);
    int rc2 = MPI_Barrier(MPI_COMM_WORLD);
    int rc3 = MPI_Comm_free(&lib_comm);
    lib_ok = !finalized && rc == MPI_SUCCESS && sum == size * size && rc2 == MPI_SUCCESS &&
             rc3 == MPI_SUCCESS && lib_comm == MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* A callback that deletes its own attribute: it must find nothing left to delete. */
static int self_deleting(MPI_Comm c, int keyval, void *val, void *extra) {
    record_delete(c, keyval, val, extra);
    return MPI_Comm_delete_attr(c, keyval);
}

/* A failing callback at MPI_Finalize: the others still run, and MPI_Finalize says so. */
static int failing_delete(MPI_Comm c, int keyval, void *val, void *extra) {
    record_delete(c, keyval, val, extra);
    return MPI_ERR_OTHER;
}

/* MPI_COMM_WORLD's attribute, deleted at MPI_Finalize after SELF's, while MPI works. */
static int world_ok = -1;
static int world_delete(MPI_Comm c, int keyval, void *val, void *extra) {
    record_delete(c, keyval, val, extra);
    int one = 1, n = 0, size = 0;
    MPI_Comm_size(c, &size);
    world_ok = MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && n == size;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* newest first on MPI_Comm_free */
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int i = 0; i < NKEYS; i++)
        CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &keys[i], NULL));
    for (int i = 0; i < NKEYS; i++) CHECK_RC(MPI_Comm_set_attr(d, keys[order[i]], (void *)(long)i));
    CHECK_RC(MPI_Comm_free(&d));
    CHECK(ncalls == NKEYS, "Comm_free ran %d delete callbacks, not %d", ncalls, NKEYS);
    for (int i = 0; i < NKEYS; i++)
        CHECK(calls[i] == NKEYS - 1 - i, "Comm_free: delete %d was of the attribute set %d-th", i,
              calls[i]);
    ncalls = 0;

    /* a freed key still serves the attributes that use it */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int kv = keys[0], kv_copy = keys[0];
    CHECK_RC(MPI_Comm_set_attr(d, kv, (void *)7L));
    CHECK_RC(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    void *v = NULL;
    int flag = 0;
    CHECK_RC(MPI_Comm_get_attr(d, kv_copy, &v, &flag));
    CHECK(flag && (long)v == 7, "get through a freed key in use: flag %d value %ld", flag, (long)v);
    CHECK_RC(MPI_Comm_set_attr(d, kv_copy, (void *)8L)); /* replaces: deletes 7 */
    CHECK(ncalls == 1 && calls[0] == 7, "replacing through a freed key: %d calls", ncalls);
    int again = kv_copy;
    CHECK_RC(MPI_Comm_free_keyval(&again)); /* a second free while in use: accepted */
    CHECK_RC(MPI_Comm_delete_attr(d, kv_copy));
    CHECK(ncalls == 2 && calls[1] == 8, "deleting through a freed key: %d calls", ncalls);
    /* the last attribute is gone, so is the key */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    again = kv_copy;
    CHECK_ERR(MPI_Comm_free_keyval(&again), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_get_attr(d, kv_copy, &v, &flag), MPI_ERR_KEYVAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Comm_free(&d));
    ncalls = 0;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &keys[0], NULL));

    /* a callback that deletes its own attribute while its communicator is freed */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int selfkey;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_deleting, &selfkey, NULL));
    CHECK_RC(MPI_Comm_set_attr(d, selfkey, (void *)5L));
    CHECK_RC(MPI_Comm_free(&d));
    CHECK(ncalls == 1 && calls[0] == 5, "a self-deleting callback ran %d times", ncalls);
    CHECK_RC(MPI_Comm_free_keyval(&selfkey));
    ncalls = 0;

    /* MPI_COMM_SELF at MPI_Finalize: newest first. The library's attribute, set last, runs
     * first, while every rank is still in MPI_Finalize's first step; the oldest one fails, and
     * the others still run; WORLD's come after SELF's. */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &lib_comm));
    int libkey, failkey, worldkey;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, library_delete, &libkey, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &failkey, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, world_delete, &worldkey, NULL));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, worldkey, (void *)77L));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, failkey, (void *)99L));
    for (int i = 0; i < NKEYS; i++)
        CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, keys[order[i]], (void *)(long)i));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, libkey, (void *)(long)NKEYS));
    for (int i = 0; i < NKEYS; i++) CHECK_RC(MPI_Comm_free_keyval(&keys[i]));
    CHECK_RC(MPI_Comm_free_keyval(&libkey));
    CHECK_RC(MPI_Comm_free_keyval(&failkey));
    CHECK_RC(MPI_Comm_free_keyval(&worldkey));
    CHECK(ncalls == 0, "nothing deleted before MPI_Finalize");
    int frc = MPI_Finalize();

    /* MPI is gone: report by exit status. Expected: the library's (NKEYS), then SELF's others
     * newest first (NKEYS-1 .. 0), the failing one (99), then WORLD's (77). */
    int want[NKEYS + 3];
    for (int i = 0; i <= NKEYS; i++) want[i] = NKEYS - i;
    want[NKEYS + 1] = 99;
    want[NKEYS + 2] = 77;
    int bad = 0;
    if (frc != MPI_ERR_OTHER) {
        fprintf(stderr, "FAIL rank %d: MPI_Finalize returned %d, not the callback's error\n", rank,
                frc);
        bad = 1;
    }
    if (ncalls != NKEYS + 3) {
        fprintf(stderr, "FAIL rank %d: MPI_Finalize ran %d delete callbacks, not %d\n", rank,
                ncalls, NKEYS + 3);
        bad = 1;
    }
    if (world_ok != 1) {
        fprintf(stderr, "FAIL rank %d: MPI_COMM_WORLD's delete callback could not use MPI (%d)\n",
                rank, world_ok);
        bad = 1;
    }
    for (int i = 0; i < NKEYS + 3 && i < ncalls; i++)
        if (calls[i] != want[i]) {
            fprintf(stderr,
                    "FAIL rank %d: MPI_Finalize's delete %d was of the attribute set %d-th\n", rank,
                    i, calls[i]);
            bad = 1;
        }
    if (lib_ok != 1) {
        fprintf(stderr, "FAIL rank %d: the delete callback could not use MPI (%d)\n", rank, lib_ok);
        bad = 1;
    }
    return bad;
}
