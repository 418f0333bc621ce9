/* Rank swaps (capability 4, docs/migration.md): two ranks exchange their state, the regions
 * each registered with MPIX_Checkpoint_register, by three allreduces with bitwise XOR, and
 * their identities: afterwards the process that held rank a holds rank b in every
 * communicator and the other way round, and every process sends to each rank where it now
 * lives. Above coll (the allreduces) and ckpt (the registered regions). */
#ifndef CO_MIGRATE_H
#define CO_MIGRATE_H

#include "../core/cohort.h"

/* Collective over intracommunicator c, which holds every process of the job: swaps ranks a
 * and b of c (valid ranks; a == b changes nothing). Every member learns of any reason the
 * swap cannot be made, and then nothing has changed anywhere. */
int co_swap_ranks(co_comm *c, int a, int b, const char *fn);

#endif /* CO_MIGRATE_H */
