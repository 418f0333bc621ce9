/* Group calls: queries, comparison, set operations and subsets. Groups are local objects, so
 * none of these talk to other processes; an empty result is MPI_GROUP_EMPTY. */
#include "api.h"

#include <stdlib.h>

/* Hand a freshly built group (n members in world[]) to the user; world is freed. */
static int group_out(const char *fn, int *world, int n, MPI_Group *out) {
    if (n == 0) {
        free(world);
        *out = co_group_handle_out(co_group_get(MPI_GROUP_EMPTY));
        return MPI_SUCCESS;
    }
    co_group *g = co_group_from_world(n, world);
    free(world);
    if (!g) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    *out = co_group_handle_out(g);
    co_group_release(g); /* the handle holds the only reference now */
    if (*out == MPI_GROUP_NULL) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of group handles");
    return MPI_SUCCESS;
}

static int *ints(int n) {
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!p) co_fatal("out of memory");
    return p;
}

CO_WEAK(MPI_Group_size, PMPI_Group_size);
int PMPI_Group_size(MPI_Group group, int *size) {
    static const char fn[] = "MPI_Group_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_group *g = co_api_group(NULL, fn, group, &rc);
    if (!g) return rc;
    if (!size) return co_error(NULL, fn, MPI_ERR_ARG, "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Group_rank, PMPI_Group_rank);
int PMPI_Group_rank(MPI_Group group, int *rank) {
    static const char fn[] = "MPI_Group_rank";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_group *g = co_api_group(NULL, fn, group, &rc);
    if (!g) return rc;
    if (!rank) return co_error(NULL, fn, MPI_ERR_ARG, "rank is NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Group_translate_ranks, PMPI_Group_translate_ranks);
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
    static const char fn[] = "MPI_Group_translate_ranks";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_group *a = co_api_group(NULL, fn, group1, &rc), *b;
    if (!a) return rc;
    if (!(b = co_api_group(NULL, fn, group2, &rc))) return rc;
    if (n < 0) return co_error(NULL, fn, MPI_ERR_ARG, "negative n %d", n);
    if (n > 0 && (!ranks1 || !ranks2)) return co_error(NULL, fn, MPI_ERR_ARG, "ranks is NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return co_error(NULL, fn, MPI_ERR_RANK, "invalid rank %d in ranks1[%d] (group size %d)",
                            ranks1[i], i, a->size);
    int *tab = co_group_rank_table(b);
    if (!tab) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
        } else {
            int r = tab[a->world[ranks1[i]]];
            ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
        }
    }
    free(tab);
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Group_compare, PMPI_Group_compare);
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result) {
    static const char fn[] = "MPI_Group_compare";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_group *a = co_api_group(NULL, fn, group1, &rc), *b;
    if (!a) return rc;
    if (!(b = co_api_group(NULL, fn, group2, &rc))) return rc;
    if (!result) return co_error(NULL, fn, MPI_ERR_ARG, "result is NULL");
    *result = co_group_compare(a, b);
    return MPI_SUCCESS;
}

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *fn) {
    int rc = MPI_SUCCESS;
    co_group *a = co_api_group(NULL, fn, group1, &rc), *b;
    if (!a) return rc;
    if (!(b = co_api_group(NULL, fn, group2, &rc))) return rc;
    if (!newgroup) return co_error(NULL, fn, MPI_ERR_ARG, "newgroup is NULL");
    int *in_b = co_group_rank_table(b);
    if (!in_b) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    int *w = ints(a->size + b->size), n = 0;
    for (int i = 0; i < a->size; i++) {
        int member = in_b[a->world[i]] >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == member) w[n++] = a->world[i];
    }
    if (op == SET_UNION) {
        int *in_a = co_group_rank_table(a);
        if (!in_a) co_fatal("out of memory");
        for (int i = 0; i < b->size; i++)
            if (in_a[b->world[i]] < 0) w[n++] = b->world[i];
        free(in_a);
    }
    free(in_b);
    return group_out(fn, w, n, newgroup);
}

CO_WEAK(MPI_Group_union, PMPI_Group_union);
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_union");
    return set_op(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}

CO_WEAK(MPI_Group_intersection, PMPI_Group_intersection);
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_intersection");
    return set_op(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}

CO_WEAK(MPI_Group_difference, PMPI_Group_difference);
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_difference");
    return set_op(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}

/* ranks[0..n) must be valid and distinct ranks of g; seen[] marks them (size g->size). */
static int check_ranks(co_group *g, int n, const int ranks[], char *seen, const char *fn) {
    if (n < 0) return co_error(NULL, fn, MPI_ERR_ARG, "negative n %d", n);
    if (n > g->size)
        return co_error(NULL, fn, MPI_ERR_ARG, "n %d exceeds the group size %d", n, g->size);
    if (n > 0 && !ranks) return co_error(NULL, fn, MPI_ERR_ARG, "ranks is NULL");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return co_error(NULL, fn, MPI_ERR_RANK, "invalid rank %d in ranks[%d] (group size %d)",
                            ranks[i], i, g->size);
        if (seen[ranks[i]])
            return co_error(NULL, fn, MPI_ERR_RANK, "rank %d appears twice in ranks", ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int excl,
                     const char *fn) {
    int rc = MPI_SUCCESS;
    co_group *g = co_api_group(NULL, fn, group, &rc);
    if (!g) return rc;
    if (!newgroup) return co_error(NULL, fn, MPI_ERR_ARG, "newgroup is NULL");
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!seen) return co_error(NULL, fn, MPI_ERR_NO_MEM, "out of memory");
    if ((rc = check_ranks(g, n, ranks, seen, fn))) {
        free(seen);
        return rc;
    }
    int *w = ints(g->size), k = 0;
    if (excl) {
        for (int i = 0; i < g->size; i++)
            if (!seen[i]) w[k++] = g->world[i];
    } else {
        for (int i = 0; i < n; i++) w[k++] = g->world[ranks[i]];
    }
    free(seen);
    return group_out(fn, w, k, newgroup);
}

CO_WEAK(MPI_Group_incl, PMPI_Group_incl);
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_incl");
    return incl_excl(group, n, ranks, newgroup, 0, "MPI_Group_incl");
}

CO_WEAK(MPI_Group_excl, PMPI_Group_excl);
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_excl");
    return incl_excl(group, n, ranks, newgroup, 1, "MPI_Group_excl");
}

/* Expand (first, last, stride) triplets into the list of ranks they name, checked. */
static int expand_ranges(co_group *g, int n, int ranges[][3], int **out, int *count,
                         const char *fn) {
    if (n < 0) return co_error(NULL, fn, MPI_ERR_ARG, "negative n %d", n);
    if (n > 0 && !ranges) return co_error(NULL, fn, MPI_ERR_ARG, "ranges is NULL");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) return co_error(NULL, fn, MPI_ERR_ARG, "stride 0 in ranges[%d]", i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return co_error(NULL, fn, MPI_ERR_RANK,
                            "ranges[%d] = (%d, %d, %d) names a rank outside the group (size %d)", i,
                            first, last, stride, g->size);
        long steps = ((long)last - first) / stride;
        if (steps >= 0) total += steps + 1;
        if (total > g->size)
            return co_error(NULL, fn, MPI_ERR_RANK, "ranges name more ranks than the group has");
    }
    int *r = ints((int)total), k = 0;
    char *seen = calloc((size_t)g->size + 1, 1);
    if (!seen) co_fatal("out of memory");
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long steps = ((long)last - first) / stride;
        for (long s = 0; s <= steps; s++) {
            int x = first + (int)(s * stride);
            if (seen[x]) {
                free(seen);
                free(r);
                return co_error(NULL, fn, MPI_ERR_RANK, "rank %d appears twice in ranges", x);
            }
            seen[x] = 1;
            r[k++] = x;
        }
    }
    free(seen);
    *out = r;
    *count = k;
    return MPI_SUCCESS;
}

static int range_incl_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl,
                           const char *fn) {
    int rc = MPI_SUCCESS;
    co_group *g = co_api_group(NULL, fn, group, &rc);
    if (!g) return rc;
    if (!newgroup) return co_error(NULL, fn, MPI_ERR_ARG, "newgroup is NULL");
    int *r = NULL, k = 0;
    if ((rc = expand_ranges(g, n, ranges, &r, &k, fn))) return rc;
    int *w = ints(g->size), m = 0;
    if (excl) {
        char *drop = calloc((size_t)g->size + 1, 1);
        if (!drop) co_fatal("out of memory");
        for (int i = 0; i < k; i++) drop[r[i]] = 1;
        for (int i = 0; i < g->size; i++)
            if (!drop[i]) w[m++] = g->world[i];
        free(drop);
    } else {
        for (int i = 0; i < k; i++) w[m++] = g->world[r[i]];
    }
    free(r);
    return group_out(fn, w, m, newgroup);
}

CO_WEAK(MPI_Group_range_incl, PMPI_Group_range_incl);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_range_incl");
    return range_incl_excl(group, n, ranges, newgroup, 0, "MPI_Group_range_incl");
}

CO_WEAK(MPI_Group_range_excl, PMPI_Group_range_excl);
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    CO_ENTER("MPI_Group_range_excl");
    return range_incl_excl(group, n, ranges, newgroup, 1, "MPI_Group_range_excl");
}

CO_WEAK(MPI_Group_free, PMPI_Group_free);
int PMPI_Group_free(MPI_Group *group) {
    static const char fn[] = "MPI_Group_free";
    CO_ENTER(fn);
    if (!group) return co_error(NULL, fn, MPI_ERR_ARG, "group is NULL");
    int rc = MPI_SUCCESS;
    co_group *g = co_api_group(NULL, fn, *group, &rc);
    if (!g) return rc;
    co_group_handle_free(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
