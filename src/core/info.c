/* Info objects: ordered lists of (key, value) strings. MPI_INFO_ENV is predefined (slot 1)
 * and describes how the process was started; users cannot change or free it. Keys keep the
 * order of their first Info_set, which is the order Info_get_nthkey reports. */
#include "cohort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static co_info_kv *find(const co_info *in, const char *key) {
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->kv[i].key, key) == 0) return &in->kv[i];
    return NULL;
}

const char *co_info_lookup(const co_info *in, const char *key) {
    const co_info_kv *e = find(in, key);
    return e ? e->val : NULL;
}

int co_info_set(co_info *in, const char *key, const char *value) {
    char *v = strdup(value);
    if (!v) return MPI_ERR_NO_MEM;
    co_info_kv *e = find(in, key);
    if (e) {
        free(e->val);
        e->val = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        co_info_kv *kv = realloc(in->kv, (size_t)cap * sizeof(*kv));
        if (!kv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->kv = kv;
        in->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    in->kv[in->n++] = (co_info_kv){k, v};
    return MPI_SUCCESS;
}

int co_info_delete(co_info *in, const char *key) {
    co_info_kv *e = find(in, key);
    if (!e) return -1;
    free(e->key);
    free(e->val);
    memmove(e, e + 1, (size_t)(in->kv + in->n - (e + 1)) * sizeof(*e));
    in->n--;
    return 0;
}

co_info *co_info_dup(const co_info *in) {
    co_info *d = co_info_create();
    if (!d) return NULL;
    for (int i = 0; i < in->n; i++)
        if (co_info_set(d, in->kv[i].key, in->kv[i].val)) {
            co_info_free(d);
            return NULL;
        }
    return d;
}

static void info_destroy(co_info *in) {
    for (int i = 0; i < in->n; i++) {
        free(in->kv[i].key);
        free(in->kv[i].val);
    }
    free(in->kv);
    free(in);
}

void co_info_free(co_info *in) {
    co_htab_remove(&co_st.infos, in->handle);
    info_destroy(in);
}

/* MPI_INFO_ENV: the command and its arguments (from /proc/self/cmdline), the number of
 * processes started with this command (its part's -n in `mpiexec a : b`), the working
 * directory and the thread level provided. */
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
        if (buf[n - 1] == ' ') buf[n - 1] = 0;
        rc = co_info_set(env, "command", buf);
        if (!rc && first + 1 < n) rc = co_info_set(env, "argv", buf + first + 1);
    }
    const char *part = getenv("COHORT_JOB_APPSIZE"); /* set by mpiexec */
    char num[32];
    snprintf(num, sizeof(num), "%d", part ? atoi(part) : co_st.world_size);
    if (!rc) rc = co_info_set(env, "maxprocs", num);
    char dir[MPI_MAX_INFO_VAL + 1];
    if (!rc && getcwd(dir, sizeof(dir))) rc = co_info_set(env, "wdir", dir);
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
