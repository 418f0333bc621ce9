/* Groups and communicators: the objects behind MPI_Group and MPI_Comm (struct co_comm and
 * struct co_group live in core/cohort.h because every layer reads them). */
#ifndef CO_COMM_H
#define CO_COMM_H

#include "../core/cohort.h"

co_comm *co_comm_get(MPI_Comm h); /* NULL if invalid */
co_group *co_group_get(MPI_Group h);

co_group *co_group_new(int size); /* world[] to be filled by the caller; rank computed by
                                     co_group_finish */
void co_group_finish(co_group *g);
void co_group_retain(co_group *g);
void co_group_release(co_group *g);
int co_group_register(co_group *g);

/* A communicator over `local` (and `remote` for an intercommunicator) with ID `id`. */
co_comm *co_comm_create(co_group *local, co_group *remote, uint64_t id);
int co_comm_register(co_comm *c);
void co_comm_destroy(co_comm *c);

#endif /* CO_COMM_H */
