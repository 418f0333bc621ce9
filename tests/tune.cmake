# Tests of the tune area: self-tuning broadcast trees and the link emulation they are tested
# under (docs/tuning.md).

# Tree checks, transformations, the preorder that travels with a message, and the store's
# text form, without MPI.
cohort_unit_test(tune_tree)
# The search against a model of a broadcast's time: it ends, within a bound, at the tree that
# avoids the slow links, no slower than the binomial tree where links are alike, and over 256
# ranks (moves drawn) too.
cohort_unit_test(tune_search)

# Broadcasts through trees the tuner changes from call to call, checked on every rank: at
# every size, with roots other than 0, strided types, data in a second message and split
# communicators (no emulation, nothing remembered).
cohort_mpi_test(tune_bcast NP 1 2 3 4 5 8 ENV COHORT_BCAST_ALGORITHM=tuned COHORT_TUNE_DB=none
  ARGS 60 1000 0)

# Under an emulated topology the search finds the tree that avoids the slow links, the store
# remembers it and the next run uses it without searching; a damaged store; a bad topology.
foreach(s search damaged topology)
  add_test(NAME tune.${s}
    COMMAND ${CMAKE_SOURCE_DIR}/tests/tune.sh ${MPIEXEC} $<TARGET_FILE:t_tune_bcast>
            $<TARGET_FILE:cohort_tool> ${s})
  set_tests_properties(tune.${s} PROPERTIES TIMEOUT 300)
endforeach()
