/* Info objects: ordered lists of (key, value) strings. MPI_INFO_ENV is predefined (slot 1)
 * and describes how the process was started; users cannot change or free it. Keys keep the
 * order of their first Info_set, which is the order Info_get_nthkey reports. As in MPI 4,
 * info objects work before MPI_Init and after MPI_Finalize too: the table is ready at its
 * first use, and MPI_Finalize leaves the objects alive. */
#include "cohort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The table, at its first use: slot 1 is MPI_INFO_ENV's, whether or not MPI_Init has come. */
static co_htab *table(void) {
    co_htab *t = &co_st.infos;
    if (!t->next) {
        t->kind = COHORT_KIND_INFO;
        co_htab_set(t, CO_HANDLE_SLOT(MPI_INFO_ENV), NULL);
    }
    return t;
}

co_info *co_info_create(void) {
    co_htab *t = table();
    co_info *in = calloc(1, sizeof(*in));
    if (!in) return NULL;
    in->handle = co_htab_insert(t, in);
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

/* How the process was started: the command and its arguments (argv when given, else
 * /proc/self/cmdline), the number of processes started with this command (its part's -n in
 * `mpiexec a : b`, from the launcher's variables, so the same before MPI_Init as after) and
 * the working directory. */
static int info_start(co_info *env, int argc, char **argv) {
    int rc = MPI_SUCCESS;
    char buf[8192];
    size_t n = 0;
    if (argc > 0 && argv && argv[0]) {
        for (int i = 0; i < argc && argv[i] && n + 1 < sizeof(buf); i++)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", argv[i]) + 1;
        if (n > sizeof(buf) - 1) n = sizeof(buf) - 1;
    } else {
        FILE *f = fopen("/proc/self/cmdline", "r");
        n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f) fclose(f);
    }
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
    const char *job = getenv("COHORT_JOB_SIZE");
    char num[32];
    snprintf(num, sizeof(num), "%d",
             part               ? atoi(part)
             : co_st.world_size ? co_st.world_size
             : job              ? atoi(job)
                                : 1);
    if (!rc) rc = co_info_set(env, "maxprocs", num);
    char dir[MPI_MAX_INFO_VAL + 1];
    if (!rc && getcwd(dir, sizeof(dir))) rc = co_info_set(env, "wdir", dir);
    return rc;
}

co_info *co_info_create_env(int argc, char **argv) {
    co_info *in = co_info_create();
    if (in && info_start(in, argc, argv)) {
        co_info_free(in);
        return NULL;
    }
    return in;
}

/* MPI_INFO_ENV: how the process was started, and the thread level provided. */
int co_info_init(void) {
    co_htab *t = table();
    co_info *env = calloc(1, sizeof(*env));
    if (!env) return MPI_ERR_NO_MEM;
    env->handle = MPI_INFO_ENV;
    co_htab_set(t, CO_HANDLE_SLOT(MPI_INFO_ENV), env);
    int rc = info_start(env, 0, NULL);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int level = co_st.thread_level;
    if (!rc && level >= MPI_THREAD_SINGLE && level <= MPI_THREAD_MULTIPLE)
        rc = co_info_set(env, "thread_level", levels[level - MPI_THREAD_SINGLE]);
    return rc;
}
