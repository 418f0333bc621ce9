# Point-to-point, environment, errors and launcher tests.
cohort_mpi_test(p2p_basic NP 1 2 4 8)
cohort_mpi_test(p2p_semantics NP 1 2 4 8)
cohort_mpi_test(p2p_basic NP 2 4 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(p2p_semantics NP 2 4 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(p2p_semantics NP 3 ENV COHORT_EAGER_LIMIT=64 COHORT_SHM_RING_CELLS=16 SUFFIX .tinyqueues)
# polling calls that yield at every miss, and never, with more ranks than cores
cohort_mpi_test(p2p_semantics NP 4 ENV COHORT_POLL_YIELD_US=0 SUFFIX .pollyield0)
cohort_mpi_test(p2p_semantics NP 4 ENV COHORT_POLL_YIELD_US=-1 SUFFIX .pollnoyield)
# a message of more than 4 GiB: each half of the single copy takes several system calls
# (10 GiB in all; skipped, exit status 77, where less is available)
cohort_mpi_test(p2p_bigmsg NP 2 ENV COHORT_LOG_LEVEL=2)
set_tests_properties(mpi.p2p_bigmsg.np2 PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
  FAIL_REGULAR_EXPRESSION "cross-process copy with rank [0-9]+ failed|mpiexec: deadlock")
cohort_mpi_test(env NP 1 2 4 8)
cohort_mpi_test(env NP 2 ARGS 3 SUFFIX .multiple)
cohort_mpi_test(info NP 1 2 4)
cohort_mpi_test(p2p_mprobe NP 1 2 4 8)
cohort_mpi_test(p2p_mprobe NP 2 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(errors NP 1 2 4 8)
# NULL result pointers are errors; NULL output statuses are MPI_STATUS_IGNORE
cohort_mpi_test(null_args NP 1 3)
# Fortran handle conversion and status element counts.
cohort_mpi_test(fint NP 1 3)
# waits on a rank that has called MPI_Finalize end with an error instead of hanging
foreach(k recv wait probe anysource send ssend)
  cohort_mpi_test(p2p_finalized NP 2 4 ARGS ${k} SUFFIX .${k})
endforeach()
cohort_mpi_test(p2p_finalized NP 2 ARGS send ENV COHORT_CMA=0 SUFFIX .send.nocma)
cohort_mpi_test(p2p_finalized NP 3 8 ARGS slow SUFFIX .slow)
# a probe whose message comes in with the check that its sender has finalized (24000 messages
# queued ahead of it, all in the ring at once)
foreach(k late late_probe)
  cohort_mpi_test(p2p_finalized NP 2 ARGS ${k} ENV COHORT_SHM_RING_CELLS=65536 SUFFIX .${k})
endforeach()
# a deadlock (every rank waits, none can go on) fails the waits; a slow job is not one
foreach(k recv probe waitall coll nbc refuse)
  cohort_mpi_test(deadlock NP 2 3 8 ARGS ${k} ENV COHORT_DEADLOCK_MS=300 SUFFIX .${k} DEADLOCKS)
endforeach()
cohort_mpi_test(deadlock NP 3 ARGS slow ENV COHORT_DEADLOCK_MS=300 SUFFIX .slow)
cohort_mpi_test(deadlock NP 1 2 ARGS self ENV COHORT_DEADLOCK_MS=300 SUFFIX .self DEADLOCKS)
# started without mpiexec (a singleton), the process watches itself
add_test(NAME mpi.deadlock.self.singleton COMMAND t_deadlock self)
set_tests_properties(mpi.deadlock.self.singleton PROPERTIES TIMEOUT 60
  ENVIRONMENT COHORT_DEADLOCK_MS=300)

# Launcher behaviour (tests/launcher.sh): failures end the job with the right status and
# message, output and input forwarding, environment, several programs in one job, binding,
# and nothing left behind.
add_executable(t_launch mpi/launch.c)
target_link_libraries(t_launch PRIVATE cohort)
set_target_properties(t_launch PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
foreach(s ok segv collsegv exit abort nofinalize fataltag timeout deadlock nbcdiffer rootdiffer nowatch
          killed interrupted badprog
          badargs stdin env mpmd hosts tagoutput lines binding placement)
  add_test(NAME launcher.${s}
    COMMAND ${CMAKE_SOURCE_DIR}/tests/launcher.sh ${MPIEXEC} $<TARGET_FILE:t_launch> ${s})
  set_tests_properties(launcher.${s} PROPERTIES TIMEOUT 60)
endforeach()
cohort_mpi_test(p2p_types NP 1 2 3 4 8)
cohort_mpi_test(p2p_types NP 2 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(p2p_isendrecv NP 1 2 3 4 8)
cohort_mpi_test(p2p_isendrecv NP 2 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(p2p_isendrecv NP 2 ARGS deadlock ENV COHORT_DEADLOCK_MS=300 SUFFIX .deadlock DEADLOCKS)
cohort_mpi_test(p2p_greq NP 1 2 4)
# random plans of messages: every send mode, blocking, nonblocking and persistent, wildcards,
# probes, lengths across the eager and single-copy limits, completed in orders each rank draws
cohort_mpi_test(p2p_random NP 1 2 3 4 5 8)
cohort_mpi_test(p2p_random NP 2 4 ENV COHORT_CMA=0 P2P_RANDOM_SEED=2 SUFFIX .nocma)
# small rings, few header cells and a small eager limit: queues fill and wrap all the time
cohort_mpi_test(p2p_random NP 3 8 ENV COHORT_SHM_DATA_BYTES=16K COHORT_EAGER_LIMIT=64
  COHORT_SHM_RING_CELLS=16 P2P_RANDOM_SEED=3 SUFFIX .tinyqueues)
# strided types taken by single copy too, a run of 4 bytes at a time
cohort_mpi_test(p2p_random NP 2 5 ENV COHORT_CMA_MIN_RUN=8 P2P_RANDOM_SEED=4 SUFFIX .shortruns)
cohort_mpi_test(p2p_random NP 4 ENV COHORT_POLL_YIELD_US=0 P2P_RANDOM_SEED=5 SUFFIX .pollyield0)
