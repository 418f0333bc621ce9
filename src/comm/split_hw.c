/* MPI 4's hardware split types: MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED groups the
 * ranks that run inside one object of the level the info names (a package, a core...), and
 * MPI_COMM_TYPE_HW_UNGUIDED picks the largest level that divides the communicator. A rank's
 * object is the one that holds every CPU it may run on (src/boot/place.c reads the layout);
 * an unbound rank is inside the machine and the package only when there is one. */
#include "comm_int.h"
#include "../boot/place.h"

int co_comm_split_hw(co_comm *c, int unguided, int level, int key, const char *fn, co_comm **out,
                     int *chosen) {
    int ids[CO_LVL_COUNT];
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof(mine), &mine)) CPU_ZERO(&mine); /* then in nothing */
    co_place_objects_of(&mine, ids);
    *chosen = -1;
    if (unguided) {
        /* the coarsest level below the machine at which every rank is inside one object
         * and the objects are at least two, so that each group is a strict subset */
        int *all = malloc((size_t)c->size * sizeof(ids));
        if (!all) co_fatal("out of memory");
        int rc = co_comm_allgather(c, ids, all, sizeof(ids));
        if (rc) co_fatal("communicator split exchange failed (%s)", co_error_class_name(rc));
        for (int l = CO_LVL_MACHINE - 1; l >= 0 && *chosen < 0; l--) {
            int inside = 1, distinct = 0;
            for (int r = 0; r < c->size && inside; r++) {
                inside = all[r * CO_LVL_COUNT + l] >= 0;
                distinct |= all[r * CO_LVL_COUNT + l] != all[l];
            }
            if (inside && distinct) *chosen = l;
        }
        free(all);
    } else if (level >= 0 && ids[level] >= 0) {
        *chosen = level;
    }
    return co_comm_split(c, *chosen >= 0 ? ids[*chosen] : MPI_UNDEFINED, key, 0, NULL, fn, out);
}
