/* Group objects: ordered lists of world ranks, shared by reference between communicators and
 * the handles users hold. A group gets a handle only when a user is given one. */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

co_group *co_group_new(int size) {
    co_group *g = calloc(1, sizeof(*g));
    if (!g) return NULL;
    g->world = malloc((size_t)(size > 0 ? size : 1) * sizeof(int));
    if (!g->world) {
        free(g);
        return NULL;
    }
    g->size = size;
    g->refcount = 1;
    g->rank = MPI_UNDEFINED;
    g->all_next = co_st.all_groups;
    if (g->all_next) g->all_next->all_prev = g;
    co_st.all_groups = g;
    return g;
}

void co_group_finish(co_group *g) {
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == co_st.world_rank) {
            g->rank = i;
            break;
        }
}

void co_group_retain(co_group *g) {
    g->refcount++;
}

void co_group_release(co_group *g) {
    if (!g || --g->refcount > 0) return;
    if (g->handle == MPI_GROUP_EMPTY) { /* predefined: lives until MPI_Finalize */
        g->refcount = 1;
        return;
    }
    if (g->handle) co_htab_remove(&co_st.groups, g->handle);
    co_group_free(g);
}

void co_group_free(co_group *g) {
    if (g->all_prev)
        g->all_prev->all_next = g->all_next;
    else
        co_st.all_groups = g->all_next;
    if (g->all_next) g->all_next->all_prev = g->all_prev;
    free(g->world);
    free(g);
}

int co_group_register(co_group *g) {
    g->handle = co_htab_insert(&co_st.groups, g);
    return g->handle ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

MPI_Group co_group_handle_out(co_group *g) {
    if (!g->handle && co_group_register(g)) return MPI_GROUP_NULL;
    if (g->handle != MPI_GROUP_EMPTY) g->user_refs++; /* (predefined: its handle stays) */
    co_group_retain(g);
    return g->handle;
}

void co_group_handle_free(co_group *g) {
    if (g->handle != MPI_GROUP_EMPTY && --g->user_refs == 0) {
        co_htab_remove(&co_st.groups, g->handle);
        g->handle = 0;
    }
    co_group_release(g); /* MPI_GROUP_EMPTY is predefined and stays */
}

co_group *co_group_from_world(int n, const int *world) {
    co_group *g = co_group_new(n);
    if (!g) return NULL;
    if (n > 0) memcpy(g->world, world, (size_t)n * sizeof(int));
    co_group_finish(g);
    return g;
}

int *co_group_rank_table(const co_group *g) {
    int *t = malloc((size_t)co_st.world_size * sizeof(int));
    if (!t) return NULL;
    memset(t, 0xff, (size_t)co_st.world_size * sizeof(int));
    for (int i = 0; i < g->size; i++) t[g->world[i]] = i;
    return t;
}

int co_group_compare(const co_group *a, const co_group *b) {
    if (a == b) return MPI_IDENT;
    if (a->size != b->size) return MPI_UNEQUAL;
    if (!memcmp(a->world, b->world, (size_t)a->size * sizeof(int))) return MPI_IDENT;
    int *t = co_group_rank_table(a);
    if (!t) co_fatal("out of memory comparing groups");
    int same = 1;
    for (int i = 0; i < b->size && same; i++) same = t[b->world[i]] >= 0;
    free(t);
    return same ? MPI_SIMILAR : MPI_UNEQUAL;
}

uint32_t co_group_hash(const co_group *g) {
    uint32_t h = 2166136261u ^ (uint32_t)g->size; /* FNV-1a over the world ranks */
    for (int i = 0; i < g->size; i++) {
        uint32_t w = (uint32_t)g->world[i];
        for (int k = 0; k < 4; k++) {
            h ^= (w >> (8 * k)) & 0xff;
            h *= 16777619u;
        }
    }
    return h;
}
