/* MPI 4's hardware split types, checked against the machine's layout read here from sysfs:
 * MPI_COMM_TYPE_HW_GUIDED with a hardware thread, a core, a package and the shared memory
 * groups exactly the ranks inside one such object (MPI_COMM_NULL for a rank whose CPUs lie in
 * several), names are taken case apart, and no info, no key or a resource Cohort does not
 * know give MPI_COMM_NULL; MPI_COMM_TYPE_HW_UNGUIDED gives a strict subset with the level's
 * name in the info, grouped as the guided split of that level groups, or MPI_COMM_NULL
 * everywhere when no level divides the communicator. Run bound one rank per core, bound two
 * per core, and unbound (mpiexec's defaults at 2, 4 and 3 ranks on 2 cores). */
#include "testutil.h"

#include <sched.h>

#define KEYLEN 64

/* What sysfs says of one CPU at a level: a string equal for CPUs in one object */
static void cpu_key(int cpu, const char *level, char *key) {
    char path[128];
    const char *file = !strcmp(level, "core")      ? "topology/core_cpus_list"
                       : !strcmp(level, "package") ? "topology/physical_package_id"
                                                   : NULL;
    if (!file) { /* hwthread: the CPU; the shared memory: the machine */
        snprintf(key, KEYLEN, "%d", !strcmp(level, "hwthread") ? cpu : 0);
        return;
    }
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/%s", cpu, file);
    FILE *f = fopen(path, "r");
    if (!f && !strcmp(level, "core")) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 cpu);
        f = fopen(path, "r");
    }
    key[0] = 0;
    if (f) {
        if (!fgets(key, KEYLEN, f)) key[0] = 0;
        fclose(f);
    }
    if (!key[0]) /* no core described: the CPU is a core of its own */
        snprintf(key, KEYLEN, "%d", !strcmp(level, "core") ? cpu : 0);
}

/* This rank's object at a level: the key all its CPUs share, or "" */
static void my_key(const char *level, char *key) {
    cpu_set_t mine;
    CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0, "sched_getaffinity");
    char k[KEYLEN];
    key[0] = 0;
    int first = 1;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &mine)) continue;
        cpu_key(c, level, k);
        if (first)
            strcpy(key, k);
        else if (strcmp(key, k))
            key[0] = 0;
        if (!key[0]) return;
        first = 0;
    }
}

/* newcomm must hold exactly the world ranks whose key at `level` equals this rank's */
static void check_groups(MPI_Comm newcomm, const char *level, const char *what) {
    int wsize, wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    char mine[KEYLEN] = "", *all = malloc((size_t)wsize * KEYLEN);
    my_key(level, mine);
    CHECK_RC(MPI_Allgather(mine, KEYLEN, MPI_CHAR, all, KEYLEN, MPI_CHAR, MPI_COMM_WORLD));
    if (!mine[0]) {
        CHECK(newcomm == MPI_COMM_NULL, "%s %s: a communicator for a rank in several objects", what,
              level);
        free(all);
        return;
    }
    CHECK(newcomm != MPI_COMM_NULL, "%s %s: MPI_COMM_NULL for a rank inside one object", what,
          level);
    int same = 0, size, *members = malloc((size_t)wsize * sizeof(int));
    for (int r = 0; r < wsize; r++) same += !strcmp(all + (size_t)r * KEYLEN, mine);
    MPI_Comm_size(newcomm, &size);
    CHECK(size == same, "%s %s: %d ranks together, %d share the object", what, level, size, same);
    CHECK_RC(MPI_Allgather(&wrank, 1, MPI_INT, members, 1, MPI_INT, newcomm));
    for (int i = 0; i < size; i++)
        CHECK(!strcmp(all + (size_t)members[i] * KEYLEN, mine),
              "%s %s: world rank %d is in another object", what, level, members[i]);
    free(members);
    free(all);
}

static MPI_Comm guided(const char *value) {
    MPI_Info info;
    MPI_Comm c;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "mpi_hw_resource_type", value));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK_RC(MPI_Info_free(&info));
    return c;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    static const char *const levels[][2] = {
        {"hwthread", "hwthread"},  {"pu", "hwthread"},     {"core", "core"},
        {"CoRe", "core"},          {"package", "package"}, {"socket", "package"},
        {"mpi_shared_memory", ""}, {"machine", "machine"},
    };
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        MPI_Comm c = guided(levels[i][0]);
        check_groups(c, levels[i][1], levels[i][0]);
        if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
    /* nothing to split by: MPI_COMM_NULL everywhere */
    MPI_Comm c = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "no info: a communicator");
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "shmem_topo", "core"));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "no mpi_hw_resource_type: a communicator");
    CHECK_RC(MPI_Info_free(&info));
    c = guided("gpu");
    CHECK(c == MPI_COMM_NULL, "a GPU: a communicator");

    /* unguided: the largest level that divides the world, named in the info */
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    char level[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0, any = c != MPI_COMM_NULL, every = 0;
    CHECK_RC(MPI_Allreduce(&any, &every, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(every == 0 || every == wsize, "unguided: %d of %d ranks got a communicator", every,
          wsize);
    if (c != MPI_COMM_NULL) {
        int size;
        MPI_Comm_size(c, &size);
        CHECK(size < wsize, "unguided: not a strict subset (%d of %d)", size, wsize);
        CHECK_RC(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, level, &flag));
        CHECK(flag && level[0], "unguided: no mpi_hw_resource_type in the info");
        /* grouped as the guided split of that level */
        MPI_Comm g = guided(level);
        int cmp;
        CHECK(g != MPI_COMM_NULL, "unguided %s: the guided split gives MPI_COMM_NULL", level);
        CHECK_RC(MPI_Comm_compare(c, g, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "unguided %s: other groups than the guided split's", level);
        MPI_Comm_free(&g);
        if (!strcmp(level, "core") || !strcmp(level, "hwthread") || !strcmp(level, "package"))
            check_groups(c, level, "unguided");
        MPI_Comm_free(&c);
    } else {
        /* nothing divides: no level of those checked here has every rank inside one object
         * and two objects or more */
        static const char *const checked[] = {"package", "core", "hwthread"};
        char mine[KEYLEN], *all = malloc((size_t)wsize * KEYLEN);
        for (int l = 0; l < 3; l++) {
            my_key(checked[l], mine);
            CHECK_RC(MPI_Allgather(mine, KEYLEN, MPI_CHAR, all, KEYLEN, MPI_CHAR, MPI_COMM_WORLD));
            int inside = 1, distinct = 0;
            for (int r = 0; r < wsize; r++) {
                inside &= all[(size_t)r * KEYLEN] != 0;
                distinct |= strcmp(all + (size_t)r * KEYLEN, all) != 0;
            }
            CHECK(!(inside && distinct), "unguided: MPI_COMM_NULL, but %s divides the world",
                  checked[l]);
        }
        free(all);
    }
    CHECK_RC(MPI_Info_free(&info));
    /* a bad split type is still refused */
    int cls = 0, rc = MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "split type 99: class %d", cls);
    MPI_Finalize();
    return 0;
}
