/* Cohort's extensions to MPI (MPIX_*): the capabilities that are Cohort's own. Included by
 * mpi.h; a program that wants to stay portable tests `#ifdef COHORT` before using them. */
#ifndef COHORT_MPIX_H
#define COHORT_MPIX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COHORT_XFN(ret, name, args)                                                                \
    COHORT_API ret MPIX_##name args;                                                               \
    COHORT_API ret PMPIX_##name args;

/* The job-unique 64-bit ID of a communicator (handed out by the tree of ID pools). */
COHORT_XFN(int, Comm_get_id, (MPI_Comm comm, uint64_t *id))

/* This process's view of the ID pools, for tests and tools: [0] communicator handles alive,
 * [1] pool objects, [2] communicators mastered here not yet freed by every member, [3] IDs
 * idle in this process's pools, [4] IDs they have lent out, [5] IDs in the root pool (world
 * rank 0), [6] pool requests sent, [7] reclaim rounds the root has run. */
#define MPIX_ID_STATS 8
COHORT_XFN(int, Comm_id_stats, (uint64_t values[MPIX_ID_STATS]))

/* Whole-job checkpoints (docs/checkpoint.md). A rank's image is the memory regions it has
 * registered, in the order it registered them. MPIX_Checkpoint (collective) writes every
 * member's image to one file: one base image and the others' differences from it, compressed.
 * It replaces the file only once the new checkpoint is complete. MPIX_Restart (collective)
 * sets *restored to 0 when there is no file at `path`; otherwise it fills every member's
 * registered regions with the image saved for its rank and sets *restored to 1. On any error
 * no member's regions change. */
COHORT_XFN(int, Checkpoint_register, (void *base, MPI_Aint size))
COHORT_XFN(int, Checkpoint_unregister, (void *base))
COHORT_XFN(int, Checkpoint, (MPI_Comm comm, const char *path))
COHORT_XFN(int, Restart, (MPI_Comm comm, const char *path, int *restored))

/* Rank swaps (docs/migration.md). Collective over an intracommunicator that holds every
 * process of the job: ranks rank_a and rank_b exchange their registered regions (those of
 * MPIX_Checkpoint_register, which must have the same sizes on both) and their identities.
 * Afterwards the process that held rank_a holds rank_b, in this and every other communicator,
 * with rank_b's regions, and the other way round; every message to either goes to where it
 * now lives. The two ranks must have nothing in flight and share every communicator of more
 * than one rank they belong to; the reasons a swap is refused are listed in the docs, and on
 * any of them nothing changes and every member returns the same error. */
COHORT_XFN(int, Swap_ranks, (MPI_Comm comm, int rank_a, int rank_b))

#undef COHORT_XFN

#ifdef __cplusplus
}
#endif

#endif /* COHORT_MPIX_H */
