/* Info objects: create, set (override keeps the key's place), get with truncation,
 * get_valuelen, nkeys/nthkey in insertion order, delete, dup (independent copy), free;
 * MPI_INFO_ENV (read-only, maxprocs = job size, a command); info arguments of Alloc_mem and
 * Comm_split_type; and the bad input: NULL and freed handles, keys and values too long,
 * empty keys, missing keys, nthkey out of range, changing or freeing MPI_INFO_ENV. */
#include "testutil.h"

/* info's value of key, or "" */
static const char *value(MPI_Info info, const char *key) {
    static char val[4][MPI_MAX_INFO_VAL + 1];
    static int k;
    char *v = val[k++ % 4];
    int flag = 0;
    CHECK_RC(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (!flag) v[0] = 0;
    return v;
}

/* What MPI_Info_create_env gives: the same at any time (MPI 4) */
static void same_env(MPI_Info a, MPI_Info b) {
    static const char *const keys[] = {"command", "argv", "maxprocs", "wdir"};
    for (int i = 0; i < 4; i++)
        CHECK(strcmp(value(a, keys[i]), value(b, keys[i])) == 0, "%s: '%s' against '%s'", keys[i],
              value(a, keys[i]), value(b, keys[i]));
}

int main(int argc, char **argv) {
    /* Info objects before MPI_Init, as MPI 4 allows: they must keep their keys through it,
     * and not take MPI_INFO_ENV's handle */
    MPI_Info early, early_env, early_dup;
    CHECK_RC(MPI_Info_create(&early));
    CHECK_RC(MPI_Info_set(early, "made", "before"));
    CHECK_RC(MPI_Info_dup(early, &early_dup));
    CHECK_RC(MPI_Info_create_env(argc, argv, &early_env));
    CHECK(early != MPI_INFO_ENV && early_env != MPI_INFO_ENV && early_dup != MPI_INFO_ENV,
          "an info made before MPI_Init took MPI_INFO_ENV's handle");
    CHECK(strstr(value(early_env, "command"), "info") != NULL, "command '%s'",
          value(early_env, "command"));
    CHECK(value(early_env, "wdir")[0] == '/', "wdir '%s'", value(early_env, "wdir"));
    CHECK(strcmp(value(early_env, "thread_level"), "") == 0, "a thread level before MPI_Init");
    /* the arguments given are the command's */
    char *args[] = {"/bin/prog", "a", "b c", NULL};
    MPI_Info given;
    CHECK_RC(MPI_Info_create_env(3, args, &given));
    CHECK(strcmp(value(given, "command"), "/bin/prog") == 0, "command '%s'",
          value(given, "command"));
    CHECK(strcmp(value(given, "argv"), "a b c") == 0, "argv '%s'", value(given, "argv"));
    CHECK_RC(MPI_Info_free(&given));

    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(strcmp(value(early, "made"), "before") == 0, "early info lost its key");
    CHECK(strcmp(value(early_dup, "made"), "before") == 0, "early copy lost its key");
    CHECK(atoi(value(early_env, "maxprocs")) == size, "maxprocs %s before MPI_Init, size %d",
          value(early_env, "maxprocs"), size);
    same_env(early_env, MPI_INFO_ENV);
    MPI_Info now_env;
    CHECK_RC(MPI_Info_create_env(0, NULL, &now_env));
    same_env(early_env, now_env);
    CHECK_ERR(MPI_Info_create_env(-1, NULL, &now_env), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_create_env(0, NULL, NULL), MPI_ERR_ARG);

    MPI_Info info, copy;
    CHECK_RC(MPI_Info_create(&info));
    int n = -1, flag = -1, len = -1;
    CHECK_RC(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);
    CHECK_RC(MPI_Info_set(info, "alpha", "1"));
    CHECK_RC(MPI_Info_set(info, "beta", "two"));
    CHECK_RC(MPI_Info_set(info, "gamma", "three3"));
    CHECK_RC(MPI_Info_set(info, "alpha", "uno")); /* override: alpha stays first */
    CHECK_RC(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "%d keys after 4 sets of 3 keys", n);
    const char *order[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        CHECK_RC(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0, "key %d is %s, expected %s", i, key, order[i]);
    }
    char val[MPI_MAX_INFO_VAL + 1];
    CHECK_RC(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "uno") == 0, "alpha = %s (flag %d)", val, flag);
    CHECK_RC(MPI_Info_get_valuelen(info, "gamma", &len, &flag));
    CHECK(flag && len == 6, "valuelen of gamma %d (flag %d)", len, flag);
    memset(val, 'x', sizeof(val));
    CHECK_RC(MPI_Info_get(info, "gamma", 3, val, &flag)); /* truncated to 3 characters */
    CHECK(flag && strcmp(val, "thr") == 0, "truncated gamma = %s", val);
    strcpy(val, "unchanged");
    CHECK_RC(MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(!flag && strcmp(val, "unchanged") == 0, "missing key: flag %d value %s", flag, val);
    CHECK_RC(MPI_Info_get_valuelen(info, "delta", &len, &flag));
    CHECK(!flag, "valuelen of a missing key");
    /* MPI_Info_get_string (MPI 4): the length with its terminator comes back; a short
     * buffer gets a cut, terminated value; a buffer length of 0 only asks */
    int blen = 0;
    CHECK_RC(MPI_Info_get_string(info, "gamma", &blen, NULL, &flag));
    CHECK(flag && blen == 7, "get_string length of gamma %d (flag %d)", blen, flag);
    memset(val, 'x', sizeof(val));
    blen = 4;
    CHECK_RC(MPI_Info_get_string(info, "gamma", &blen, val, &flag));
    CHECK(flag && blen == 7 && strcmp(val, "thr") == 0, "get_string cut: %s (%d)", val, blen);
    blen = (int)sizeof(val);
    CHECK_RC(MPI_Info_get_string(info, "gamma", &blen, val, &flag));
    CHECK(flag && blen == 7 && strcmp(val, "three3") == 0, "get_string: %s (%d)", val, blen);
    blen = 5;
    CHECK_RC(MPI_Info_get_string(info, "delta", &blen, val, &flag));
    CHECK(!flag && blen == 5, "get_string of a missing key: flag %d buflen %d", flag, blen);
    blen = -1;
    CHECK_ERR(MPI_Info_get_string(info, "gamma", &blen, val, &flag), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_get_string(info, "gamma", NULL, val, &flag), MPI_ERR_ARG);

    CHECK_RC(MPI_Info_dup(info, &copy));
    CHECK_RC(MPI_Info_delete(info, "beta"));
    CHECK_RC(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "%d keys after delete", n);
    char key[MPI_MAX_INFO_KEY + 1];
    CHECK_RC(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "gamma") == 0, "key 1 after delete is %s", key);
    CHECK_RC(MPI_Info_get_nkeys(copy, &n));
    CHECK(n == 3, "the copy changed with the original: %d keys", n);
    CHECK_RC(MPI_Info_get(copy, "beta", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "two") == 0, "copy beta = %s", val);

    /* longest key and value allowed, and one more */
    char longkey[MPI_MAX_INFO_KEY + 2], longval[MPI_MAX_INFO_VAL + 2];
    memset(longkey, 'k', sizeof(longkey));
    memset(longval, 'v', sizeof(longval));
    longkey[MPI_MAX_INFO_KEY] = 0;
    longval[MPI_MAX_INFO_VAL] = 0;
    CHECK_RC(MPI_Info_set(info, longkey, longval));
    CHECK_RC(MPI_Info_get_valuelen(info, longkey, &len, &flag));
    CHECK(flag && len == MPI_MAX_INFO_VAL, "longest value: %d", len);
    longkey[MPI_MAX_INFO_KEY] = 'k';
    longkey[MPI_MAX_INFO_KEY + 1] = 0;
    CHECK_ERR(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
    longval[MPI_MAX_INFO_VAL] = 'v';
    longval[MPI_MAX_INFO_VAL + 1] = 0;
    CHECK_ERR(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    CHECK_ERR(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    CHECK_ERR(MPI_Info_set(info, NULL, "x"), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_set(info, "k", NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_delete(info, "no-such-key"), MPI_ERR_INFO_NOKEY);
    CHECK_ERR(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_get(info, "alpha", -1, val, &flag), MPI_ERR_ARG);
    CHECK_ERR(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    CHECK_ERR(MPI_Info_set(12345, "k", "v"), MPI_ERR_INFO);

    /* MPI_INFO_ENV */
    CHECK_RC(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && atoi(val) == size, "MPI_INFO_ENV maxprocs %s, size %d", flag ? val : "-", size);
    CHECK_RC(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strstr(val, "info") != NULL, "MPI_INFO_ENV command %s", flag ? val : "-");
    CHECK_RC(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_SINGLE") == 0, "thread_level %s", flag ? val : "-");
    CHECK_ERR(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    CHECK_ERR(MPI_Info_free(&env), MPI_ERR_INFO);
    MPI_Info envcopy;
    CHECK_RC(MPI_Info_dup(MPI_INFO_ENV, &envcopy)); /* a copy of it may change */
    CHECK_RC(MPI_Info_set(envcopy, "maxprocs", "0"));
    CHECK_RC(MPI_Info_free(&envcopy));

    /* info arguments elsewhere */
    void *mem = NULL;
    CHECK_RC(MPI_Alloc_mem(64, info, &mem));
    CHECK_RC(MPI_Free_mem(mem));
    CHECK_RC(MPI_Alloc_mem(64, MPI_INFO_NULL, &mem));
    CHECK_RC(MPI_Free_mem(mem));
    MPI_Comm shared;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, info, &shared));
    int ss;
    MPI_Comm_size(shared, &ss);
    CHECK(ss == size, "shared communicator of %d", ss);
    MPI_Comm_free(&shared);

    /* freeing: the handle becomes MPI_INFO_NULL and the old value is rejected */
    MPI_Info old = info;
    CHECK_RC(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "freed info is not MPI_INFO_NULL");
    CHECK_ERR(MPI_Info_get_nkeys(old, &n), MPI_ERR_INFO);
    CHECK_ERR(MPI_Alloc_mem(64, old, &mem), MPI_ERR_INFO);
    CHECK_ERR(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, old, &shared),
              MPI_ERR_INFO);
    CHECK_RC(MPI_Info_free(&copy));

    /* many objects: handles are reused without growth */
    for (int i = 0; i < 10000; i++) {
        MPI_Info t;
        CHECK_RC(MPI_Info_create(&t));
        CHECK_RC(MPI_Info_set(t, "k", "v"));
        CHECK_RC(MPI_Info_free(&t));
    }
    MPI_Finalize();

    /* and after MPI_Finalize */
    CHECK(strcmp(value(early, "made"), "before") == 0, "early info lost its key at Finalize");
    CHECK_RC(MPI_Info_set(early, "made", "after"));
    CHECK(strcmp(value(early, "made"), "after") == 0, "set after MPI_Finalize");
    MPI_Info late_env;
    CHECK_RC(MPI_Info_create_env(argc, argv, &late_env));
    same_env(early_env, late_env);
    same_env(now_env, late_env);
    MPI_Info all[] = {early, early_dup, early_env, now_env, late_env};
    for (int i = 0; i < 5; i++) {
        CHECK_RC(MPI_Info_free(&all[i]));
        CHECK(all[i] == MPI_INFO_NULL, "freed info %d is not MPI_INFO_NULL", i);
    }
    return 0;
}
