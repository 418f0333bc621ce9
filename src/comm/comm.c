/* Communicator and group objects: construction, reference counting, and the two predefined
 * communicators. MPI_COMM_WORLD has ID 1; each process's MPI_COMM_SELF gets 2 + its world
 * rank, so that no two communicators in the job share an ID even among the SELFs. */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

co_comm *co_comm_get(MPI_Comm h) {
    return co_htab_get(&co_st.comms, h);
}
co_group *co_group_get(MPI_Group h) {
    return co_htab_get(&co_st.groups, h);
}

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
    if (g->handle) co_htab_remove(&co_st.groups, g->handle);
    free(g->world);
    free(g);
}

int co_group_register(co_group *g) {
    g->handle = co_htab_insert(&co_st.groups, g);
    return g->handle ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

co_comm *co_comm_create(co_group *local, co_group *remote, uint64_t id) {
    co_comm *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->refcount = 1;
    c->local = local;
    co_group_retain(local);
    c->rank = local->rank;
    c->size = local->size;
    if (remote) {
        c->is_inter = 1;
        c->remote = remote;
        co_group_retain(remote);
        c->peers = remote->world;
        c->npeers = remote->size;
    } else {
        c->peers = local->world;
        c->npeers = local->size;
    }
    c->id = id;
    c->ctx = id << 1;
    c->errh = co_st.errh_fatal;
    c->errh->refcount++;
    return c;
}

int co_comm_register(co_comm *c) {
    c->handle = co_htab_insert(&co_st.comms, c);
    return c->handle ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void co_comm_destroy(co_comm *c) {
    if (c->handle) co_htab_remove(&co_st.comms, c->handle);
    co_group_release(c->local);
    co_group_release(c->remote);
    if (c->errh && --c->errh->refcount == 0 && !c->errh->builtin) {
        co_htab_remove(&co_st.errhs, c->errh->handle);
        free(c->errh);
    }
    free(c);
}

static co_errhandler *builtin_errh(int slot) {
    co_errhandler *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->handle = COHORT_HANDLE(COHORT_KIND_ERRHANDLER, slot);
    e->refcount = 1;
    e->builtin = slot;
    co_htab_set(&co_st.errhs, (unsigned)slot, e);
    return e;
}

int co_comm_init(void) {
    co_st.comms.kind = COHORT_KIND_COMM;
    co_st.groups.kind = COHORT_KIND_GROUP;
    co_st.errhs.kind = COHORT_KIND_ERRHANDLER;
    co_st.infos.kind = COHORT_KIND_INFO;
    co_st.errh_fatal = builtin_errh(1);
    co_st.errh_return = builtin_errh(2);
    if (!co_st.errh_fatal || !co_st.errh_return) return MPI_ERR_NO_MEM;

    co_group *empty = co_group_new(0);
    co_group *wg = co_group_new(co_st.world_size);
    co_group *sg = co_group_new(1);
    if (!empty || !wg || !sg) return MPI_ERR_NO_MEM;
    for (int i = 0; i < co_st.world_size; i++) wg->world[i] = i;
    sg->world[0] = co_st.world_rank;
    co_group_finish(wg);
    co_group_finish(sg);
    empty->handle = MPI_GROUP_EMPTY;
    co_htab_set(&co_st.groups, 1, empty);

    co_st.world = co_comm_create(wg, NULL, 1);
    co_st.self = co_comm_create(sg, NULL, 2 + (uint64_t)co_st.world_rank);
    co_group_release(wg);
    co_group_release(sg);
    if (!co_st.world || !co_st.self) return MPI_ERR_NO_MEM;
    co_st.world->handle = MPI_COMM_WORLD;
    co_st.self->handle = MPI_COMM_SELF;
    strcpy(co_st.world->name, "MPI_COMM_WORLD");
    strcpy(co_st.self->name, "MPI_COMM_SELF");
    co_htab_set(&co_st.comms, 1, co_st.world);
    co_htab_set(&co_st.comms, 2, co_st.self);
    return MPI_SUCCESS;
}

void co_comm_fini(void) {
    co_htab *t = &co_st.comms;
    for (uint32_t s = 1; s < t->next; s++) {
        co_comm *c = t->chunks[s / CO_HTAB_CHUNK][s % CO_HTAB_CHUNK];
        if (c) {
            c->handle = 0;
            co_comm_destroy(c);
        }
    }
    co_htab_destroy(t);
    t = &co_st.groups;
    for (uint32_t s = 1; s < t->next; s++) {
        co_group *g = t->chunks[s / CO_HTAB_CHUNK][s % CO_HTAB_CHUNK];
        if (g) {
            free(g->world);
            free(g);
        }
    }
    co_htab_destroy(t);
    t = &co_st.errhs;
    for (uint32_t s = 1; s < t->next; s++) free(t->chunks[s / CO_HTAB_CHUNK][s % CO_HTAB_CHUNK]);
    co_htab_destroy(t);
    co_st.world = co_st.self = NULL;
}
