/* MPI_Info_*: argument checks, then the store in core/info.c. Errors go to MPI_COMM_WORLD's
 * handler. Keys longer than MPI_MAX_INFO_KEY and values longer than MPI_MAX_INFO_VAL are
 * refused (MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE); so are empty keys. */
#include "api.h"

/* Info calls work at any time, before MPI_Init and after MPI_Finalize too, as MPI 4 allows;
 * an error outside them is fatal (no communicator holds a handler). */
#define INFO_ENTER(fn)                                                                             \
    do {                                                                                           \
        co_st.api_fn = fn;                                                                         \
        co_st.api_calls++;                                                                         \
    } while (0)

static int bad(const char *fn, int cls, const char *why) {
    return co_error(NULL, fn, cls, "%s", why);
}

/* A valid info handle; MPI_INFO_ENV only when `writable` is 0. */
static co_info *arg_info(const char *fn, MPI_Info h, int writable, int *rc) {
    co_info *in = co_info_get(h);
    if (CO_UNLIKELY(!in)) {
        *rc = co_error(NULL, fn, MPI_ERR_INFO, "%s",
                       h == MPI_INFO_NULL ? "info is MPI_INFO_NULL"
                                          : "invalid info object (freed or never created)");
        return NULL;
    }
    if (writable && h == MPI_INFO_ENV) {
        *rc = co_error(NULL, fn, MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed or freed");
        return NULL;
    }
    return in;
}

static int arg_key(const char *fn, const char *key) {
    if (!key) return bad(fn, MPI_ERR_ARG, "key is NULL");
    size_t n = strlen(key);
    if (n == 0) return bad(fn, MPI_ERR_INFO_KEY, "key is empty");
    if (n > MPI_MAX_INFO_KEY)
        return co_error(NULL, fn, MPI_ERR_INFO_KEY,
                        "key of %zu characters (MPI_MAX_INFO_KEY is %d)", n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

/* The (info, key) pair most calls take. */
static co_info *info_and_key(const char *fn, MPI_Info h, const char *key, int writable, int *rc) {
    co_info *in = arg_info(fn, h, writable, rc);
    if (in && (*rc = arg_key(fn, key))) return NULL;
    return in;
}

int co_api_info_arg(co_comm *c, const char *fn, MPI_Info h) {
    if (h == MPI_INFO_NULL || co_info_get(h)) return MPI_SUCCESS;
    return co_error(c, fn, MPI_ERR_INFO, "invalid info object (freed or never created)");
}

CO_WEAK(MPI_Info_create, PMPI_Info_create);
int PMPI_Info_create(MPI_Info *info) {
    static const char fn[] = "MPI_Info_create";
    INFO_ENTER(fn);
    if (!info) return bad(fn, MPI_ERR_ARG, "info is NULL");
    co_info *in = co_info_create();
    if (!in) return bad(fn, MPI_ERR_NO_MEM, "out of memory or info handles");
    *info = in->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_create_env, PMPI_Info_create_env);
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info) {
    static const char fn[] = "MPI_Info_create_env";
    INFO_ENTER(fn);
    if (!info) return bad(fn, MPI_ERR_ARG, "info is NULL");
    if (argc < 0) return bad(fn, MPI_ERR_ARG, "argc is negative");
    co_info *in = co_info_create_env(argc, argv);
    if (!in) return bad(fn, MPI_ERR_NO_MEM, "out of memory or info handles");
    *info = in->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_set, PMPI_Info_set);
int PMPI_Info_set(MPI_Info info, const char *key, const char *value) {
    static const char fn[] = "MPI_Info_set";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = info_and_key(fn, info, key, 1, &rc);
    if (!in) return rc;
    if (!value) return bad(fn, MPI_ERR_ARG, "value is NULL");
    size_t n = strlen(value);
    if (n > MPI_MAX_INFO_VAL)
        return co_error(NULL, fn, MPI_ERR_INFO_VALUE,
                        "value of %zu characters (MPI_MAX_INFO_VAL is %d)", n, MPI_MAX_INFO_VAL);
    if (co_info_set(in, key, value)) return bad(fn, MPI_ERR_NO_MEM, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_get, PMPI_Info_get);
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) {
    static const char fn[] = "MPI_Info_get";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = info_and_key(fn, info, key, 0, &rc);
    if (!in) return rc;
    if (valuelen < 0) return bad(fn, MPI_ERR_ARG, "valuelen is negative");
    if (!value || !flag) return bad(fn, MPI_ERR_ARG, "value or flag is NULL");
    const char *v = co_info_lookup(in, key);
    *flag = v != NULL;
    if (v) { /* at most valuelen characters, then the terminator */
        size_t n = strlen(v), m = n < (size_t)valuelen ? n : (size_t)valuelen;
        memcpy(value, v, m);
        value[m] = 0;
    }
    return MPI_SUCCESS;
}

/* MPI 4.0: *buflen in, the room in value; out, the value's length plus its terminator. A value
 * longer than the room is cut to buflen - 1 characters; with buflen 0, value is not touched. */
CO_WEAK(MPI_Info_get_string, PMPI_Info_get_string);
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag) {
    static const char fn[] = "MPI_Info_get_string";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = info_and_key(fn, info, key, 0, &rc);
    if (!in) return rc;
    if (!buflen || !flag) return bad(fn, MPI_ERR_ARG, "buflen or flag is NULL");
    if (*buflen < 0) return bad(fn, MPI_ERR_ARG, "buflen is negative");
    if (*buflen > 0 && !value) return bad(fn, MPI_ERR_ARG, "value is NULL");
    const char *v = co_info_lookup(in, key);
    *flag = v != NULL;
    if (!v) return MPI_SUCCESS;
    size_t n = strlen(v);
    if (*buflen > 0) {
        size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, v, m);
        value[m] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_get_valuelen, PMPI_Info_get_valuelen);
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag) {
    static const char fn[] = "MPI_Info_get_valuelen";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = info_and_key(fn, info, key, 0, &rc);
    if (!in) return rc;
    if (!valuelen || !flag) return bad(fn, MPI_ERR_ARG, "valuelen or flag is NULL");
    const char *v = co_info_lookup(in, key);
    *flag = v != NULL;
    if (v) *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_delete, PMPI_Info_delete);
int PMPI_Info_delete(MPI_Info info, const char *key) {
    static const char fn[] = "MPI_Info_delete";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = info_and_key(fn, info, key, 1, &rc);
    if (!in) return rc;
    if (co_info_delete(in, key))
        return co_error(NULL, fn, MPI_ERR_INFO_NOKEY, "no key \"%s\" in the info object", key);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_get_nkeys, PMPI_Info_get_nkeys);
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys) {
    static const char fn[] = "MPI_Info_get_nkeys";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = arg_info(fn, info, 0, &rc);
    if (!in) return rc;
    if (!nkeys) return bad(fn, MPI_ERR_ARG, "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_get_nthkey, PMPI_Info_get_nthkey);
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key) {
    static const char fn[] = "MPI_Info_get_nthkey";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = arg_info(fn, info, 0, &rc);
    if (!in) return rc;
    if (n < 0 || n >= in->n)
        return co_error(NULL, fn, MPI_ERR_ARG, "n = %d but the info object has %d keys", n, in->n);
    if (!key) return bad(fn, MPI_ERR_ARG, "key is NULL");
    strcpy(key, in->kv[n].key); /* at most MPI_MAX_INFO_KEY characters, checked by Info_set */
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_dup, PMPI_Info_dup);
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo) {
    static const char fn[] = "MPI_Info_dup";
    INFO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_info *in = arg_info(fn, info, 0, &rc);
    if (!in) return rc;
    if (!newinfo) return bad(fn, MPI_ERR_ARG, "newinfo is NULL");
    co_info *d = co_info_dup(in);
    if (!d) return bad(fn, MPI_ERR_NO_MEM, "out of memory or info handles");
    *newinfo = d->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Info_free, PMPI_Info_free);
int PMPI_Info_free(MPI_Info *info) {
    static const char fn[] = "MPI_Info_free";
    INFO_ENTER(fn);
    if (!info) return bad(fn, MPI_ERR_ARG, "info is NULL");
    int rc = MPI_SUCCESS;
    co_info *in = arg_info(fn, *info, 1, &rc);
    if (!in) return rc;
    co_info_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
