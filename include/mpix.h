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

#undef COHORT_XFN

#ifdef __cplusplus
}
#endif

#endif /* COHORT_MPIX_H */
