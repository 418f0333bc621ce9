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
# Every reason a swap is refused, on purpose: the same class on every member, nothing changed,
# and the swap made once the obstacle is gone.
cohort_mpi_test(swap_errors NP 1 2 3 4 8)

# A rank killed at a dozen moments of a run of swaps: the job ends with its death reported and
# never hangs (tests/swap.sh).
add_executable(t_swap_crash mpi/swap_crash.c)
target_link_libraries(t_swap_crash PRIVATE cohort)
target_compile_options(t_swap_crash PRIVATE -Wall -Wextra -Werror)
set_target_properties(t_swap_crash PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_test(NAME swap.crash
  COMMAND ${CMAKE_SOURCE_DIR}/tests/swap.sh ${MPIEXEC} $<TARGET_FILE:t_swap_crash>)
set_tests_properties(swap.crash PROPERTIES TIMEOUT 300)
