/* Placement: where mpiexec puts each rank. The machine's layout as Linux describes it in sysfs
 * (hardware threads, cores, second- and third-level caches, NUMA nodes, packages), the
 * placement options of Open MPI's and MPICH's launchers parsed into one form, and the mapping
 * of ranks onto the layout with the CPU set each rank is bound to (docs/runtime.md,
 * "Placement"). Everything but co_hwtopo_load is pure, so the unit tests give it made-up
 * machines. */
#ifndef CO_PLACE_H
#define CO_PLACE_H

#include <sched.h>
#include <stddef.h>

/* Levels of the layout, finest first. A level's objects are the sets of CPUs that share one
 * of its things (a core, a cache, a package); the machine is one object. */
enum co_level {
    CO_LVL_HWTHREAD,
    CO_LVL_CORE,
    CO_LVL_L2,
    CO_LVL_L3,
    CO_LVL_NUMA,
    CO_LVL_PACKAGE,
    CO_LVL_MACHINE,
    CO_LVL_COUNT
};

#define CO_PLACE_MAXCPU CPU_SETSIZE

typedef struct co_hwtopo {
    int n;                    /* CPUs the job may use */
    int cpu[CO_PLACE_MAXCPU]; /* their numbers, ascending */
    /* id[level][i]: which object of that level holds the i-th CPU (ids compare only within
     * a level) */
    int id[CO_LVL_COUNT][CO_PLACE_MAXCPU];
} co_hwtopo;

typedef struct co_place_opts {
    int map;             /* level whose objects take ranks in turn; CO_LVL_MACHINE: in order */
    int ppr;             /* ranks per object of `map` (Open MPI's ppr:N:level), 0: not given */
    int unit;            /* what one processing element is: CO_LVL_CORE or CO_LVL_HWTHREAD */
    int pe;              /* units per rank, 0: not given (then each rank's own, see co_place) */
    int bind;            /* level each rank is bound to, -1: not bound, or CO_PLACE_BIND_UNIT */
    int explicit_bind;   /* the user asked to bind: say so when it cannot be done */
    int nooversubscribe; /* refuse more units than the machine has */
} co_place_opts;

#define CO_PLACE_BIND_UNIT (-2) /* bind to the unit, whichever it turns out to be */

/* The options' defaults: ranks in order, one core each, bound to it. */
void co_place_defaults(co_place_opts *o);

/* A level's name as the launchers spell it (hwthread, core, l1cache, l2cache, l3cache, numa,
 * socket, package, and for `map` also slot, node and board); -1 if unknown. */
int co_place_level(const char *name, size_t len, int for_map);
const char *co_place_level_name(int level);

/* `--map-by VALUE` (LEVEL or ppr:N:LEVEL, then :PE=n, :OVERSUBSCRIBE, :NOOVERSUBSCRIBE,
 * :SPAN) and `--bind-to VALUE` (none or LEVEL, then :N for N cores or hardware threads each,
 * :overload-allowed, :if-supported) into o; 0, or -1 with the reason in err. */
int co_place_parse_map(const char *value, co_place_opts *o, char *err, size_t errlen);
int co_place_parse_bind(const char *value, co_place_opts *o, char *err, size_t errlen);

/* The CPUs in `allowed` and their objects, read from /sys/devices/system; a level that sysfs
 * does not describe takes the objects of the next level up (the next down for cores). */
void co_hwtopo_load(co_hwtopo *t, const cpu_set_t *allowed);

/* How many objects of a level hold the job's CPUs. */
int co_hwtopo_count(const co_hwtopo *t, int level);

/* Places n ranks. Rank r takes o->pe units, or pe[r] when o->pe is 0 (pe may then be NULL
 * for one each). Fills set[r] and bound[r] (0: not bound, set[r] then all CPUs of the job).
 * Returns 0; 1 when binding was asked for explicitly but could not be done, with why in err;
 * -1 when the request cannot be met at all (ppr too small, or too few units with
 * NOOVERSUBSCRIBE), with why in err. */
int co_place(const co_hwtopo *t, const co_place_opts *o, int n, const int *pe, cpu_set_t *set,
             int *bound, char *err, size_t errlen);

/* The object of each level that holds every CPU of `mine` (all the CPUs a process may run
 * on), as an id that is the same in every process of the machine, or -1 where its CPUs lie
 * in several objects of that level (an unbound process spans every core). */
void co_place_objects_of(const cpu_set_t *mine, int ids[CO_LVL_COUNT]);

/* MPI 4's names of hardware resources (mpi_hw_resource_type) for the levels: the value
 * "mpi_shared_memory", the machine and hwloc's names (package, numanode, l3cache, core,
 * pu...), case apart; -1 for a name of something else (a GPU, a network). */
int co_place_resource_level(const char *name);
const char *co_place_resource_name(int level);

/* A CPU set as a list ("0-3,8"). */
void co_place_format(const cpu_set_t *set, char *buf, size_t len);

/* Parses a CPU list ("0-3,8") into set; 0, or -1 if it is not one. */
int co_place_parse_list(const char *s, cpu_set_t *set);

#endif
