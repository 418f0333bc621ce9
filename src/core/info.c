/* Info objects: ordered lists of (key, value) strings. MPI_INFO_ENV is predefined (slot 1)
 * and describes how the process was started; users cannot change or free it. Keys keep the
 * order of their first Info_set, which is the order Info_get_nthkey reports. */
#include "cohort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

co_info *co_info_create(void) {
    co_info *in = calloc(1, sizeof(*in));
    if (!in) return NULL;
    in->handle = co_htab_insert(&co_st.infos, in);
    if (!in->handle) {
        free(in);
        return NULL;
    }
    return in;
}

co_info *co_info_get(MPI_Info h) {
    return co_htab_get(&co_st.infos, h);
}

static int find(const co_info *in, const char *key) {
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->keys[i], key) == 0) return i;
    return -1;
}

const char *co_info_lookup(const co_info *in, const char *key) {
    int i = find(in, key);
    return i < 0 ? NULL : in->vals[i];
}

int co_info_set(co_info *in, const char *key, const char *value) {
    char *v = strdup(value);
    if (!v) return MPI_ERR_NO_MEM;
    int i = find(in, key);
    if (i >= 0) {
        free(in->vals[i]);
        in->vals[i] = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        char **k = realloc(in->keys, (size_t)cap * sizeof(*k));
        if (k) in->keys = k;
        char **vv = k ? realloc(in->vals, (size_t)cap * sizeof(*vv)) : NULL;
        if (!vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->vals = vv;
        in->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    in->keys[in->n] = k;
    in->vals[in->n++] = v;
    return MPI_SUCCESS;
}

int co_info_delete(co_info *in, const char *key) {
    int i = find(in, key);
    if (i < 0) return -1;
    free(in->keys[i]);
    free(in->vals[i]);
    memmove(in->keys + i, in->keys + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
    memmove(in->vals + i, in->vals + i + 1, (size_t)(in->n - i - 1) * sizeof(char *));
    in->n--;
    return 0;
}

co_info *co_info_dup(const co_info *in) {
    co_info *d = co_info_create();
    if (!d) return NULL;
    for (int i = 0; i < in->n; i++)
        if (co_info_set(d, in->keys[i], in->vals[i])) {
            co_info_free(d);
            return NULL;
        }
    return d;
}

static void info_destroy(co_info *in) {
    for (int i = 0; i < in->n; i++) {
        free(in->keys[i]);
        free(in->vals[i]);
    }
    free(in->keys);
    free(in->vals);
    free(in);
}

void co_info_free(co_info *in) {
    co_htab_remove(&co_st.infos, in->handle);
    info_destroy(in);
}

/* MPI_INFO_ENV: the command and its arguments (from /proc/self/cmdline), the number of
 * processes started and the thread level provided. */
static int info_env(co_info *env) {
    int rc = MPI_SUCCESS;
    char buf[8192];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    if (n) {
        size_t first = strlen(buf);
        for (size_t i = first + 1; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        if (n > 0 && buf[n - 1] == ' ') buf[n - 1] = 0;
        rc = co_info_set(env, "command", buf);
        if (!rc && first + 1 < n) rc = co_info_set(env, "argv", buf + first + 1);
    }
    char num[32];
    snprintf(num, sizeof(num), "%d", co_st.world_size);
    if (!rc) rc = co_info_set(env, "maxprocs", num);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int t = co_st.thread_level;
    if (!rc && t >= MPI_THREAD_SINGLE && t <= MPI_THREAD_MULTIPLE)
        rc = co_info_set(env, "thread_level", levels[t - MPI_THREAD_SINGLE]);
    return rc;
}

int co_info_init(void) {
    co_st.infos.kind = COHORT_KIND_INFO;
    co_info *env = calloc(1, sizeof(*env));
    if (!env) return MPI_ERR_NO_MEM;
    env->handle = MPI_INFO_ENV;
    co_htab_set(&co_st.infos, CO_HANDLE_SLOT(MPI_INFO_ENV), env);
    return info_env(env);
}

void co_info_fini(void) {
    co_htab *t = &co_st.infos;
    for (uint32_t s = 1; s < t->next; s++) {
        co_info *in = co_htab_at(t, s);
        if (in) info_destroy(in);
    }
    co_htab_destroy(t);
}
