# Tests of the migrate area: rank swaps (MPIX_Swap_ranks).

# A sequence of swaps (rank 0 among them, and ranks with themselves), each followed by checks
# of ranks, state, processes, point-to-point traffic across the swap, collectives on several
# communicators and new communicators; then every swap undone. Variant v1 forces the
# shared-memory algorithms (the counter barrier, shm broadcast and allreduce), v2 the
# single-copy ones and the flag barrier, v3 messages only (dissemination, binomial).
cohort_mpi_test(swap_basic NP 1 2 3 4 5 8)
cohort_mpi_test(swap_basic NP 3 8 SUFFIX .v1
  ENV COHORT_BARRIER_ALGORITHM=counter COHORT_BCAST_ALGORITHM=shm COHORT_ALLREDUCE_ALGORITHM=shm
      COHORT_GATHER_ALGORITHM=shm COHORT_ALLGATHER_ALGORITHM=shm)
cohort_mpi_test(swap_basic NP 3 8 SUFFIX .v2
  ENV COHORT_BARRIER_ALGORITHM=flag COHORT_BCAST_ALGORITHM=cma COHORT_ALLREDUCE_ALGORITHM=cma
      COHORT_ALLGATHER_ALGORITHM=cma)
cohort_mpi_test(swap_basic NP 3 8 SUFFIX .v3
  ENV COHORT_BARRIER_ALGORITHM=dissemination COHORT_BCAST_ALGORITHM=binomial
      COHORT_ALLREDUCE_ALGORITHM=recursive_doubling)
