/* Attributes on datatypes: keys of their own (a communicator's key is refused on a datatype
 * and the other way round), values set, replaced, read and deleted, copied by MPI_Type_dup
 * through the copy callback (or MPI_TYPE_DUP_FN, or not at all with MPI_TYPE_NULL_COPY_FN),
 * deleted newest first by MPI_Type_free, failing callbacks, predefined datatypes, a key
 * freed while attributes still use it, and attributes still set at MPI_Finalize. */
#include "testutil.h"

static int copies, deletes, fail_copy, fail_delete;
static int deleted[16];
static MPI_Datatype copied_from;

static int copy_fn(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag) {
    (void)key;
    if (fail_copy) return MPI_ERR_OTHER;
    copies++;
    copied_from = old;
    *(void **)out = (void *)((char *)in + *(int *)extra); /* a new value: in + extra */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t, (void)key, (void)extra;
    if (fail_delete) return MPI_ERR_OTHER;
    if (deletes < 16) deleted[deletes] = (int)(intptr_t)val;
    deletes++;
    return MPI_SUCCESS;
}

static void *get(MPI_Datatype t, int key, int *flag) {
    void *v = NULL;
    CHECK_RC(MPI_Type_get_attr(t, key, &v, flag));
    return v;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int hundred = 100, k1, k2, k3, ck, flag;
    CHECK_RC(MPI_Type_create_keyval(copy_fn, delete_fn, &k1, &hundred));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_fn, &k2, NULL));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k3, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));

    MPI_Datatype t, d;
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &t));
    get(t, k1, &flag);
    CHECK(!flag, "an attribute before any was set");
    CHECK_RC(MPI_Type_set_attr(t, k1, (void *)1));
    CHECK_RC(MPI_Type_set_attr(t, k2, (void *)2));
    CHECK_RC(MPI_Type_set_attr(t, k3, (void *)3));
    CHECK(get(t, k1, &flag) == (void *)1 && flag, "k1");
    CHECK(get(t, k2, &flag) == (void *)2 && flag, "k2");
    CHECK(get(t, k3, &flag) == (void *)3 && flag, "k3");
    /* replacing a value deletes the old one */
    CHECK_RC(MPI_Type_set_attr(t, k2, (void *)22));
    CHECK(deletes == 1 && deleted[0] == 2, "replaced value: %d deletes", deletes);

    /* dup: k1 through its callback (value + 100), k2 as is, k3 not at all */
    CHECK_RC(MPI_Type_dup(t, &d));
    CHECK(copies == 1 && copied_from == t, "copy callback: %d calls", copies);
    CHECK(get(d, k1, &flag) == (void *)101 && flag, "k1 on the dup");
    CHECK(get(d, k2, &flag) == (void *)22 && flag, "k2 on the dup");
    get(d, k3, &flag);
    CHECK(!flag, "k3 was copied although its copy function is MPI_TYPE_NULL_COPY_FN");

    /* the wrong kind of key */
    CHECK_ERR(MPI_Type_set_attr(t, ck, NULL), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Type_get_attr(t, ck, &t, &flag), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, NULL), MPI_ERR_KEYVAL);
    int copy = k1;
    CHECK_ERR(MPI_Comm_free_keyval(&copy), MPI_ERR_KEYVAL);
    copy = ck;
    CHECK_ERR(MPI_Type_free_keyval(&copy), MPI_ERR_KEYVAL);
    CHECK_ERR(MPI_Type_set_attr(MPI_DATATYPE_NULL, k1, NULL), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_attr(t, k1, NULL, &flag), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_keyval(copy_fn, delete_fn, NULL, NULL), MPI_ERR_ARG);

    /* delete: the callback runs; deleting what is not set is fine */
    deletes = 0;
    CHECK_RC(MPI_Type_delete_attr(d, k2));
    CHECK(deletes == 1 && deleted[0] == 22, "delete_attr: %d deletes", deletes);
    CHECK_RC(MPI_Type_delete_attr(d, k2));
    CHECK(deletes == 1, "deleting an attribute not set called the callback");

    /* free: newest first (k1's 1, then k2's 22; k3 has no callback) */
    deletes = 0;
    CHECK_RC(MPI_Type_free(&t));
    CHECK(deletes == 2 && deleted[0] == 22 && deleted[1] == 1, "free: %d deletes, %d %d", deletes,
          deleted[0], deleted[1]);

    /* a failing delete callback keeps the type and its attribute */
    fail_delete = 1;
    CHECK_ERR(MPI_Type_free(&d), MPI_ERR_OTHER);
    CHECK(d != MPI_DATATYPE_NULL && get(d, k1, &flag) == (void *)101 && flag,
          "the type or its attribute went although the delete callback failed");
    fail_delete = 0;
    /* a failing copy callback: no new type */
    fail_copy = 1;
    MPI_Datatype e = MPI_INT;
    CHECK_ERR(MPI_Type_dup(d, &e), MPI_ERR_OTHER);
    CHECK(e == MPI_DATATYPE_NULL, "failed dup returned a type");
    fail_copy = 0;

    /* predefined datatypes take attributes too */
    CHECK_RC(MPI_Type_set_attr(MPI_DOUBLE, k2, (void *)7));
    CHECK(get(MPI_DOUBLE, k2, &flag) == (void *)7 && flag, "attribute on MPI_DOUBLE");
    deletes = 0;
    CHECK_RC(MPI_Type_delete_attr(MPI_DOUBLE, k2));
    CHECK(deletes == 1 && deleted[0] == 7, "delete on MPI_DOUBLE");

    /* a key freed while an attribute uses it still serves it, then is gone */
    int k1_copy = k1;
    CHECK_RC(MPI_Type_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID, "Type_free_keyval did not reset the key");
    CHECK(get(d, k1_copy, &flag) == (void *)101 && flag, "freed key's attribute");
    deletes = 0;
    CHECK_RC(MPI_Type_free(&d));
    CHECK(deletes == 1 && deleted[0] == 101, "freeing the type deleted %d attributes", deletes);
    CHECK_ERR(MPI_Type_get_attr(MPI_INT, k1_copy, &e, &flag), MPI_ERR_KEYVAL);

    CHECK_RC(MPI_Type_free_keyval(&k2));
    CHECK_RC(MPI_Type_free_keyval(&k3));
    CHECK_RC(MPI_Comm_free_keyval(&ck));

    /* attributes still set at MPI_Finalize, on a predefined type and on one the program never
     * frees: MPI_Finalize frees them (the sanitizer build's leak check would see them) without
     * running delete callbacks, which it owes only MPI_COMM_SELF's */
    int k4;
    MPI_Datatype kept;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &k4, NULL));
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &kept));
    CHECK_RC(MPI_Type_set_attr(MPI_INT, k4, (void *)7));
    CHECK_RC(MPI_Type_set_attr(kept, k4, (void *)8));
    deletes = 0;
    CHECK_RC(MPI_Finalize());
    CHECK(deletes == 0, "MPI_Finalize ran %d datatype delete callbacks", deletes);
    return 0;
}
