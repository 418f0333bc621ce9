/* Placement of ranks on the machine's CPUs (see place.h). */
#include "place.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void co_place_defaults(co_place_opts *o) {
    memset(o, 0, sizeof(*o));
    o->map = CO_LVL_MACHINE;
    o->unit = CO_LVL_CORE;
    o->bind = CO_PLACE_BIND_UNIT;
}

/* Whether [f, f+len) is `word`, case apart. */
static int is(const char *f, size_t len, const char *word) {
    return strlen(word) == len && !strncasecmp(f, word, len);
}

/* Every name of a level, and where it may be used: --bind-to, --map-by, and MPI 4's
 * mpi_hw_resource_type (hwloc's names, and the standard's mpi_shared_memory). */
enum { FOR_BIND = 1, FOR_MAP = 2, FOR_HW = 4, ANYWHERE = 7 };
static const struct {
    const char *name;
    int level, uses;
} level_names[] = {
    {"hwthread", CO_LVL_HWTHREAD, ANYWHERE}, {"pu", CO_LVL_HWTHREAD, FOR_HW},
    {"core", CO_LVL_CORE, ANYWHERE},         {"l1cache", CO_LVL_CORE, ANYWHERE}, /* one per core */
    {"l1ucache", CO_LVL_CORE, FOR_HW},       {"l1dcache", CO_LVL_CORE, FOR_HW},
    {"l1icache", CO_LVL_CORE, FOR_HW},       {"l2cache", CO_LVL_L2, ANYWHERE},
    {"l2ucache", CO_LVL_L2, FOR_HW},         {"l3cache", CO_LVL_L3, ANYWHERE},
    {"l3ucache", CO_LVL_L3, FOR_HW},         {"numa", CO_LVL_NUMA, ANYWHERE},
    {"numanode", CO_LVL_NUMA, FOR_HW},       {"socket", CO_LVL_PACKAGE, ANYWHERE},
    {"package", CO_LVL_PACKAGE, ANYWHERE},   {"slot", CO_LVL_MACHINE, FOR_MAP},
    {"node", CO_LVL_MACHINE, FOR_MAP},       {"board", CO_LVL_MACHINE, FOR_MAP},
    {"machine", CO_LVL_MACHINE, FOR_HW},     {"mpi_shared_memory", CO_LVL_MACHINE, FOR_HW},
};

static int level_for(const char *name, size_t len, int use) {
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
        if ((level_names[i].uses & use) && is(name, len, level_names[i].name))
            return level_names[i].level;
    return -1;
}

int co_place_level(const char *name, size_t len, int for_map) {
    return level_for(name, len, for_map ? FOR_MAP : FOR_BIND);
}

const char *co_place_level_name(int level) {
    static const char *const names[CO_LVL_COUNT] = {
        "hardware thread", "core", "L2 cache", "L3 cache", "NUMA node", "package", "machine"};
    return level >= 0 && level < CO_LVL_COUNT ? names[level] : "?";
}

/* A positive int filling exactly [s, s+len); 0 if it is anything else. */
static int positive(const char *s, size_t len) {
    long v = 0;
    if (!len || len > 9) return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    return (int)v;
}

/* The next ':'-separated field of *p: its start, and its length in *len. */
static const char *field(const char **p, size_t *len) {
    const char *s = *p;
    *len = strcspn(s, ":");
    *p = s[*len] ? s + *len + 1 : s + *len;
    return s;
}

int co_place_parse_map(const char *value, co_place_opts *o, char *err, size_t errlen) {
    const char *p = value;
    size_t len;
    const char *f = field(&p, &len);
    if (is(f, len, "ppr")) {
        const char *num = field(&p, &len);
        int ppr = positive(num, len);
        const char *lv = field(&p, &len);
        int level = co_place_level(lv, len, 1);
        if (!ppr || level < 0) {
            snprintf(err, errlen,
                     "--map-by ppr needs ppr:N:LEVEL, a positive N and a level (core, socket...), "
                     "not '%s'",
                     value);
            return -1;
        }
        o->ppr = ppr;
        o->map = level;
    } else {
        int level = co_place_level(f, len, 1);
        if (level < 0) {
            snprintf(err, errlen,
                     "--map-by: unknown '%.*s' (slot, hwthread, core, l2cache, l3cache, numa, "
                     "socket, package, node, or ppr:N:LEVEL)",
                     (int)len, f);
            return -1;
        }
        o->map = level;
    }
    if (o->map == CO_LVL_HWTHREAD) o->unit = CO_LVL_HWTHREAD;
    while (*p) {
        f = field(&p, &len);
        if (len > 3 && !strncasecmp(f, "PE=", 3)) { /* PE=N */
            if (!(o->pe = positive(f + 3, len - 3))) {
                snprintf(err, errlen, "--map-by: PE= needs a positive number, not '%.*s'", (int)len,
                         f);
                return -1;
            }
        } else if (is(f, len, "OVERSUBSCRIBE")) {
            o->nooversubscribe = 0;
        } else if (is(f, len, "NOOVERSUBSCRIBE")) {
            o->nooversubscribe = 1;
        } else if (is(f, len, "SPAN")) {
            /* spreading over several machines: there is one */
        } else {
            snprintf(err, errlen,
                     "--map-by: unknown modifier '%.*s' (PE=N, OVERSUBSCRIBE, NOOVERSUBSCRIBE, "
                     "SPAN)",
                     (int)len, f);
            return -1;
        }
    }
    return 0;
}

int co_place_parse_bind(const char *value, co_place_opts *o, char *err, size_t errlen) {
    const char *p = value;
    size_t len;
    const char *f = field(&p, &len);
    if (is(f, len, "none")) {
        o->bind = -1;
        o->explicit_bind = 0;
        if (*p) {
            snprintf(err, errlen, "--bind-to none takes no modifier ('%s')", value);
            return -1;
        }
        return 0;
    }
    int level = co_place_level(f, len, 0);
    if (level < 0) {
        snprintf(err, errlen,
                 "--bind-to: unknown '%.*s' (none, hwthread, core, l2cache, l3cache, numa, "
                 "socket, package)",
                 (int)len, f);
        return -1;
    }
    o->bind = level;
    o->explicit_bind = 1;
    if (level == CO_LVL_HWTHREAD) o->unit = CO_LVL_HWTHREAD;
    while (*p) {
        f = field(&p, &len);
        int n = positive(f, len);
        if (n && level <= CO_LVL_CORE) {
            o->pe = n; /* MPICH's core:N, N cores (or threads) each */
        } else if (is(f, len, "overload-allowed") || is(f, len, "if-supported")) {
            /* binding more ranks than units is left out anyway, and it is always supported */
        } else {
            snprintf(err, errlen,
                     "--bind-to: unknown modifier '%.*s' (a number of cores or hardware threads "
                     "each, overload-allowed, if-supported)",
                     (int)len, f);
            return -1;
        }
    }
    return 0;
}

/* ---- Reading the layout ----------------------------------------------------------------- */

int co_place_parse_list(const char *s, cpu_set_t *set) {
    CPU_ZERO(set);
    const char *p = s;
    int any = 0;
    for (;;) {
        p += strspn(p, " \t\n");
        if (!*p) return any ? 0 : -1;
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0) return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a) return -1;
            p = end;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) CPU_SET((int)c, set);
        any = 1;
        p += strspn(p, " \t\n");
        if (*p == ',') {
            p++;
        } else if (*p) {
            return -1;
        }
    }
}

static int read_small(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t got = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[got] = 0;
    return got ? 0 : -1;
}

/* The lowest CPU of a sysfs CPU list file, or -1. */
static int first_of(const char *path) {
    char buf[4096];
    cpu_set_t s;
    if (read_small(path, buf, sizeof(buf)) || co_place_parse_list(buf, &s)) return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s)) return c;
    return -1;
}

#define SYS_CPU "/sys/devices/system/cpu/cpu%d/"

void co_hwtopo_load(co_hwtopo *t, const cpu_set_t *allowed) {
    t->n = 0;
    for (int c = 0; c < CPU_SETSIZE && t->n < CO_PLACE_MAXCPU; c++)
        if (CPU_ISSET(c, allowed)) t->cpu[t->n++] = c;
    for (int l = 0; l < CO_LVL_COUNT; l++)
        for (int i = 0; i < t->n; i++) t->id[l][i] = -1;
    char path[256], buf[64];
    /* NUMA nodes list their CPUs */
    DIR *d = opendir("/sys/devices/system/node");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int node;
        char extra;
        if (sscanf(e->d_name, "node%d%c", &node, &extra) != 1 || node < 0) continue;
        char list[4096];
        cpu_set_t s;
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
        if (read_small(path, list, sizeof(list)) || co_place_parse_list(list, &s)) continue;
        for (int i = 0; i < t->n; i++)
            if (CPU_ISSET(t->cpu[i], &s)) t->id[CO_LVL_NUMA][i] = node;
    }
    if (d) closedir(d);
    for (int i = 0; i < t->n; i++) {
        int c = t->cpu[i];
        t->id[CO_LVL_HWTHREAD][i] = c;
        t->id[CO_LVL_MACHINE][i] = 0;
        snprintf(path, sizeof(path), SYS_CPU "topology/core_cpus_list", c);
        int core = first_of(path);
        if (core < 0) {
            snprintf(path, sizeof(path), SYS_CPU "topology/thread_siblings_list", c);
            core = first_of(path);
        }
        t->id[CO_LVL_CORE][i] = core >= 0 ? core : c;
        snprintf(path, sizeof(path), SYS_CPU "topology/physical_package_id", c);
        if (!read_small(path, buf, sizeof(buf))) t->id[CO_LVL_PACKAGE][i] = atoi(buf);
        for (int k = 0; k < 16; k++) {
            snprintf(path, sizeof(path), SYS_CPU "cache/index%d/level", c, k);
            if (read_small(path, buf, sizeof(buf))) break;
            int level = atoi(buf);
            if (level != 2 && level != 3) continue;
            snprintf(path, sizeof(path), SYS_CPU "cache/index%d/shared_cpu_list", c, k);
            int first = first_of(path);
            if (first >= 0) t->id[level == 2 ? CO_LVL_L2 : CO_LVL_L3][i] = first;
        }
    }
    /* what sysfs did not say: the next level up (ids offset so that they cannot meet the
     * level's own) */
    for (int l = CO_LVL_PACKAGE; l >= CO_LVL_L2; l--)
        for (int i = 0; i < t->n; i++)
            if (t->id[l][i] < 0) t->id[l][i] = (1 << 20) + t->id[l + 1][i];
}

int co_hwtopo_count(const co_hwtopo *t, int level) {
    int count = 0;
    for (int i = 0; i < t->n; i++) {
        int k = 0;
        while (k < i && t->id[level][k] != t->id[level][i]) k++;
        count += k == i;
    }
    return count;
}

/* ---- Placing ranks ---------------------------------------------------------------------- */

int co_place(const co_hwtopo *t, const co_place_opts *o, int n, const int *pe, cpu_set_t *set,
             int *bound, char *err, size_t errlen) {
    int unit = o->unit, map = o->map;
    int bind = o->bind == CO_PLACE_BIND_UNIT ? unit : o->bind;
    if (!t->n) bind = -1;                 /* nothing known to bind to */
    if (o->ppr && map < unit) unit = map; /* ppr:N:hwthread deals hardware threads */
    if (bind >= 0 && bind < unit) unit = bind;
    int nc = t->n > 0 ? t->n : 1;
    int *uof = calloc((size_t)nc, sizeof(int));    /* unit of each CPU */
    int *ufirst = calloc((size_t)nc, sizeof(int)); /* each unit's first CPU */
    int *uobj = calloc((size_t)nc, sizeof(int));   /* each unit's object */
    int *ostart = calloc((size_t)nc + 1, sizeof(int));
    int *ounits = calloc((size_t)nc, sizeof(int)); /* units, grouped by object */
    int *cur = calloc((size_t)nc, sizeof(int));    /* units taken from each object */
    int *use = calloc((size_t)nc, sizeof(int));    /* ranks on each unit */
    int *take = calloc((size_t)n, sizeof(int));    /* each rank's first unit (in ounits) */
    int *tobj = calloc((size_t)n, sizeof(int));    /* and its object */
    int rc = 0;
    if (!uof || !ufirst || !uobj || !ostart || !ounits || !cur || !use || (n && (!take || !tobj))) {
        snprintf(err, errlen, "out of memory placing the ranks");
        rc = -1;
        goto out;
    }
    /* units in the order of their first CPU */
    int nu = 0;
    for (int i = 0; i < t->n; i++) {
        int u = 0;
        while (u < nu && t->id[unit][ufirst[u]] != t->id[unit][i]) u++;
        if (u == nu) ufirst[nu++] = i;
        uof[i] = u;
    }
    /* objects of the mapping level in the order of their first unit; ranks go through them
     * in turn, or in order (one object) when that level is the unit's or finer */
    int grouped = o->ppr || (map > unit && map < CO_LVL_MACHINE);
    int nm = 0;
    int *okey = cur; /* borrowed until the counts below */
    for (int u = 0; u < nu; u++) {
        int key = grouped ? t->id[map][ufirst[u]] : 0;
        int m = 0;
        while (m < nm && okey[m] != key) m++;
        if (m == nm) okey[nm++] = key;
        uobj[u] = m;
    }
    memset(ostart, 0, ((size_t)nc + 1) * sizeof(int));
    for (int u = 0; u < nu; u++) ostart[uobj[u] + 1]++;
    for (int m = 0; m < nm; m++) ostart[m + 1] += ostart[m];
    memset(cur, 0, (size_t)nc * sizeof(int));
    for (int u = 0; u < nu; u++) ounits[ostart[uobj[u]] + cur[uobj[u]]++] = u;
    memset(cur, 0, (size_t)nc * sizeof(int));

#define PE(r) (o->pe ? o->pe : pe ? (pe[r] > 0 ? pe[r] : 1) : 1)
    if (o->ppr && (long)n > (long)o->ppr * nm) {
        snprintf(err, errlen,
                 "--map-by ppr:%d: the job has %d %s%s here, so at most %ld ranks, not %d", o->ppr,
                 nm, co_place_level_name(map), nm == 1 ? "" : "s", (long)o->ppr * nm, n);
        rc = -1;
        goto out;
    }
    int rr = 0, all_one = 1, all_same = 1;
    long total = 0;
    for (int r = 0; r < n; r++) {
        int need = PE(r), m;
        all_one &= need == 1;
        all_same &= need == PE(0);
        total += need;
        if (o->ppr) {
            m = r / o->ppr;
        } else {
            m = rr; /* the next object in turn that still has room, if any has */
            for (int k = 0; k < nm; k++) {
                int mm = (rr + k) % nm;
                if (ostart[mm + 1] - ostart[mm] - cur[mm] >= need) {
                    m = mm;
                    break;
                }
            }
            rr = (m + 1) % nm;
        }
        tobj[r] = m;
        take[r] = cur[m];
        cur[m] += need;
        int size = ostart[m + 1] - ostart[m];
        for (int k = 0; k < need && k < size; k++) use[ounits[ostart[m] + (take[r] + k) % size]]++;
        if (need > size) use[ounits[ostart[m]]] += need; /* counts as over */
    }
    int over = 0;
    for (int u = 0; u < nu; u++) over |= use[u] > 1;
    /* More ranks than cores but no more than hardware threads (SMT): each rank gets a thread
     * of its own rather than a share of a core, unless the user chose the unit, the binding,
     * the cores per rank or no oversubscription. */
    if (over && unit == CO_LVL_CORE && o->unit == CO_LVL_CORE && !o->ppr && !o->explicit_bind &&
        !o->pe && !o->nooversubscribe && bind == CO_LVL_CORE && total <= t->n && nu < t->n) {
        co_place_opts threads = *o;
        threads.unit = CO_LVL_HWTHREAD;
        rc = co_place(t, &threads, n, pe, set, bound, err, errlen);
        goto out;
    }
    if (over && o->nooversubscribe) {
        snprintf(err, errlen,
                 "NOOVERSUBSCRIBE: the ranks need more %ss than the %d this machine gives the job",
                 co_place_level_name(unit), nu);
        rc = -1;
        goto out;
    }
    /* More ranks than units: bound to units only when every unit holds as many ranks as
     * every other, since a unit with one rank more would hold back every collective
     * (docs/runtime.md); otherwise only binding to larger objects is done. In order (one
     * object to map over), a block of consecutive ranks shares each unit (ranks 0-1 the first
     * of 2 cores at 4 ranks), so that neighbours in rank order, which exchange most in
     * stencil codes, share a core; dealt over objects, they wrap round each object's units. */
    int even = over && all_one;
    for (int u = 0; even && u < nu; u++) even = use[u] == use[0];
    int block = even && nm == 1;
    int can_bind = bind >= 0 && (!over || even || bind > unit);
    for (int r = 0; r < n; r++) {
        CPU_ZERO(&set[r]);
        bound[r] = can_bind;
        if (!can_bind) {
            for (int i = 0; i < t->n; i++) CPU_SET(t->cpu[i], &set[r]);
            continue;
        }
        int m = tobj[r], size = ostart[m + 1] - ostart[m];
        int need = block ? 1 : PE(r);
        for (int k = 0; k < need && k < size; k++) {
            int u =
                block ? ounits[(int)((long)r * nu / n)] : ounits[ostart[m] + (take[r] + k) % size];
            for (int i = 0; i < t->n; i++) {
                int in = bind <= unit ? uof[i] == u : t->id[bind][i] == t->id[bind][ufirst[u]];
                if (in) CPU_SET(t->cpu[i], &set[r]);
            }
        }
    }
    if (bind >= 0 && !can_bind && (o->explicit_bind || o->pe)) {
        const char *what = unit == CO_LVL_HWTHREAD ? "hardware threads" : "cores";
        if (all_one)
            snprintf(err, errlen, "cannot bind %d ranks evenly to %d %s; not binding", n, nu, what);
        else if (all_same)
            snprintf(err, errlen, "cannot give %d ranks %d %s each: there are %d; not binding", n,
                     PE(0), what, nu);
        else
            snprintf(err, errlen,
                     "cannot give the ranks the %ld %s they need: there are %d; "
                     "not binding",
                     total, what, nu);
        rc = 1;
    }
#undef PE
out:
    free(uof);
    free(ufirst);
    free(uobj);
    free(ostart);
    free(ounits);
    free(cur);
    free(use);
    free(take);
    free(tobj);
    return rc;
}

void co_place_objects_of(const cpu_set_t *mine, int ids[CO_LVL_COUNT]) {
    static co_hwtopo topo;       /* 32 KiB: not on the stack */
    co_hwtopo_load(&topo, mine); /* ids name objects the same in every process */
    for (int l = 0; l < CO_LVL_COUNT; l++) {
        ids[l] = topo.n ? topo.id[l][0] : -1;
        for (int i = 1; i < topo.n && ids[l] >= 0; i++)
            if (topo.id[l][i] != ids[l]) ids[l] = -1;
    }
}

int co_place_resource_level(const char *name) {
    return name ? level_for(name, strlen(name), FOR_HW) : -1;
}

const char *co_place_resource_name(int level) {
    static const char *const names[CO_LVL_COUNT] = {"hwthread", "core",    "l2cache", "l3cache",
                                                    "numanode", "package", "machine"};
    return level >= 0 && level < CO_LVL_COUNT ? names[level] : "";
}

void co_place_format(const cpu_set_t *set, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set)) e++;
        int w = e > c ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", c, e)
                      : snprintf(buf + at, len - at, "%s%d", at ? "," : "", c);
        if (w < 0 || (size_t)w >= len - at) {
            if (len > 4) strcpy(buf + len - 4, "...");
            return;
        }
        at += (size_t)w;
        c = e;
    }
}
