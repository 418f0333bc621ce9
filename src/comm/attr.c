/* User attributes on communicators and datatypes: keys made by MPI_Comm_create_keyval (or
 * MPI_Type_create_keyval: a key serves one kind of object), values set per object, copied by
 * MPI_Comm_dup (MPI_Type_dup) through the key's copy callback and deleted through its delete
 * callback when they are replaced, deleted or their object is freed (newest first). A key
 * freed while attributes still use it stays alive, and still serves get, set and delete, until
 * the last of them goes; freeing it again meanwhile is accepted, as in MPICH. The lists are
 * kept here for both kinds (co_attrs_*); the callbacks take the object's handle, an int for
 * both, so one pointer type holds either kind's. */
#include "comm.h"

#include <stdlib.h>

/* User keys are numbered from here; smaller values are the predefined attributes. */
#define KEYVAL_BASE 64

struct co_keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int kind;  /* CO_KV_COMM or CO_KV_TYPE */
    int refs;  /* the user's handle (until freed) plus one per attribute */
    int freed; /* MPI_Comm_free_keyval was called */
};

struct co_attr {
    struct co_attr *next;
    int keyval;
    void *val;
};

static struct co_keyval *kv_get(int keyval) {
    int i = keyval - KEYVAL_BASE;
    if (i < 0 || i >= co_st.cm->nkeyvals) return NULL;
    return co_st.cm->keyvals[i];
}

static void kv_unref(int keyval) {
    struct co_keyval *k = kv_get(keyval);
    if (k && --k->refs == 0) {
        free(k);
        co_st.cm->keyvals[keyval - KEYVAL_BASE] = NULL;
    }
}

int co_keyval_create(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                     void *extra, int kind, int *keyval) {
    struct co_comm_state *cm = co_st.cm;
    int i = 0;
    while (i < cm->nkeyvals && cm->keyvals[i]) i++;
    if (i == cm->nkeyvals) {
        struct co_keyval **k = realloc(cm->keyvals, (size_t)(i + 16) * sizeof(*k));
        if (!k) return MPI_ERR_NO_MEM;
        for (int j = i; j < i + 16; j++) k[j] = NULL;
        cm->keyvals = k;
        cm->nkeyvals = i + 16;
    }
    struct co_keyval *k = calloc(1, sizeof(*k));
    if (!k) return MPI_ERR_NO_MEM;
    k->copy = copy;
    k->del = del;
    k->extra = extra;
    k->kind = kind;
    k->refs = 1;
    cm->keyvals[i] = k;
    *keyval = KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

int co_keyval_valid(int keyval) {
    return co_keyval_kind(keyval) == CO_KV_COMM;
}

int co_keyval_kind(int keyval) {
    const struct co_keyval *k = kv_get(keyval);
    return k ? k->kind : -1;
}

int co_keyval_free(int keyval, int kind) {
    struct co_keyval *k = kv_get(keyval);
    if (!k || k->kind != kind) return MPI_ERR_KEYVAL;
    if (k->freed) return MPI_SUCCESS; /* freed before, still used by attributes */
    k->freed = 1;
    kv_unref(keyval);
    return MPI_SUCCESS;
}

static struct co_attr **attr_find(struct co_attr **list, int keyval) {
    struct co_attr **pp = list;
    while (*pp && (*pp)->keyval != keyval) pp = &(*pp)->next;
    return pp;
}

static int attr_call_delete(int handle, struct co_attr *a) {
    struct co_keyval *k = kv_get(a->keyval);
    if (!k || k->del == MPI_COMM_NULL_DELETE_FN) return MPI_SUCCESS;
    return k->del(handle, a->keyval, a->val, k->extra);
}

int co_attrs_set(struct co_attr **list, int handle, int keyval, void *val) {
    struct co_attr **pp = attr_find(list, keyval);
    if (*pp) {
        int rc = attr_call_delete(handle, *pp);
        if (rc) return rc;
        (*pp)->val = val;
        return MPI_SUCCESS;
    }
    struct co_attr *a = malloc(sizeof(*a));
    if (!a) return MPI_ERR_NO_MEM;
    a->next = NULL;
    a->keyval = keyval;
    a->val = val;
    *pp = a; /* at the end: copies on dup keep the order attributes were set in */
    kv_get(keyval)->refs++;
    return MPI_SUCCESS;
}

int co_attrs_get(struct co_attr *list, int keyval, void **val, int *flag) {
    struct co_attr *a = *attr_find(&list, keyval);
    *flag = a != NULL;
    if (a) *val = a->val;
    return MPI_SUCCESS;
}

int co_attrs_delete(struct co_attr **list, int handle, int keyval) {
    struct co_attr **pp = attr_find(list, keyval);
    struct co_attr *a = *pp;
    if (!a) return MPI_ERR_KEYVAL;
    int rc = attr_call_delete(handle, a);
    if (rc) return rc;
    *pp = a->next;
    kv_unref(keyval);
    free(a);
    return MPI_SUCCESS;
}

int co_attrs_copy_all(struct co_attr *from, int from_handle, struct co_attr **to, int to_handle) {
    for (struct co_attr *a = from; a; a = a->next) {
        struct co_keyval *k = kv_get(a->keyval);
        if (!k || k->copy == MPI_COMM_NULL_COPY_FN) continue;
        void *out = NULL;
        int flag = 0;
        if (k->copy == MPI_COMM_DUP_FN) {
            out = a->val;
            flag = 1;
        } else {
            int rc = k->copy(from_handle, a->keyval, k->extra, a->val, &out, &flag);
            if (rc) return rc;
        }
        if (flag) {
            int rc = co_attrs_set(to, to_handle, a->keyval, out);
            if (rc) return rc;
        }
    }
    return MPI_SUCCESS;
}

static struct co_attr *attr_reverse(struct co_attr *a) {
    struct co_attr *r = NULL;
    while (a) {
        struct co_attr *next = a->next;
        a->next = r;
        r = a;
        a = next;
    }
    return r;
}

/* Newest first: MPI 3.1 (section 8.7.1) asks it of MPI_COMM_SELF at MPI_Finalize, and
 * Comm_free does the same. Each attribute leaves the list before its callback runs, so a
 * callback that deletes its own attribute finds nothing left to delete. On a callback's
 * error that attribute and the older ones stay, in their order, unless `all` asks to go on
 * (MPI_Finalize); the first error is returned. */
int co_attrs_delete_all(struct co_attr **list, int handle, int all) {
    *list = attr_reverse(*list);
    int first = MPI_SUCCESS;
    while (*list) {
        struct co_attr *a = *list;
        *list = a->next;
        int rc = attr_call_delete(handle, a);
        if (rc && !all) {
            a->next = *list;
            *list = attr_reverse(a);
            return rc;
        }
        if (rc && !first) first = rc;
        kv_unref(a->keyval);
        free(a);
    }
    return first;
}

void co_attrs_drop(struct co_attr **list) {
    while (*list) {
        struct co_attr *a = *list;
        *list = a->next;
        kv_unref(a->keyval);
        free(a);
    }
}

void co_attr_fini(void) {
    struct co_comm_state *cm = co_st.cm;
    for (int i = 0; i < cm->nkeyvals; i++) free(cm->keyvals[i]);
    free(cm->keyvals);
    cm->keyvals = NULL;
    cm->nkeyvals = 0;
}
