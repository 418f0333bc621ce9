# Tests of the coll area. Each collective test runs at sizes 1, 2, 3, 4, 5 and 8 with the
# automatic choice and then with every algorithm forced: each "variant" below forces one
# algorithm of every collective (an algorithm that cannot run, e.g. a commutative-only one
# with a non-commutative operator, falls back to the automatic choice), and together the
# variants name every algorithm in the registry (tests/coll_registry checks that).
set(COLL_NP 1 2 3 4 5 8)

set(COLL_V0
  COHORT_BARRIER_ALGORITHM=dissemination COHORT_BCAST_ALGORITHM=binomial
  COHORT_REDUCE_ALGORITHM=binomial COHORT_ALLREDUCE_ALGORITHM=recursive_doubling
  COHORT_GATHER_ALGORITHM=linear COHORT_GATHERV_ALGORITHM=linear
  COHORT_SCATTER_ALGORITHM=linear COHORT_SCATTERV_ALGORITHM=linear
  COHORT_ALLGATHER_ALGORITHM=ring COHORT_ALLGATHERV_ALGORITHM=ring
  COHORT_ALLTOALL_ALGORITHM=pairwise COHORT_ALLTOALLV_ALGORITHM=pairwise
  COHORT_REDUCE_SCATTER_ALGORITHM=reduce_scatterv
  COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=reduce_scatterv
  COHORT_SCAN_ALGORITHM=linear COHORT_EXSCAN_ALGORITHM=linear)
set(COLL_V1
  COHORT_BARRIER_ALGORITHM=counter COHORT_BCAST_ALGORITHM=scatter_allgather
  COHORT_REDUCE_ALGORITHM=scatter_gather COHORT_ALLREDUCE_ALGORITHM=reduce_bcast
  COHORT_GATHER_ALGORITHM=binomial COHORT_GATHERV_ALGORITHM=sequential
  COHORT_SCATTER_ALGORITHM=binomial COHORT_SCATTERV_ALGORITHM=sequential
  COHORT_ALLGATHER_ALGORITHM=bruck COHORT_ALLGATHERV_ALGORITHM=gatherv_bcast
  COHORT_ALLTOALL_ALGORITHM=linear COHORT_ALLTOALLV_ALGORITHM=linear
  COHORT_REDUCE_SCATTER_ALGORITHM=ring COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=ring
  COHORT_SCAN_ALGORITHM=recursive_doubling COHORT_EXSCAN_ALGORITHM=recursive_doubling)
set(COLL_V2
  COHORT_BARRIER_ALGORITHM=flag COHORT_BCAST_ALGORITHM=shm COHORT_REDUCE_ALGORITHM=shm
  COHORT_ALLREDUCE_ALGORITHM=ring COHORT_GATHER_ALGORITHM=shm COHORT_SCATTER_ALGORITHM=shm
  COHORT_ALLGATHER_ALGORITHM=gather_bcast COHORT_ALLGATHERV_ALGORITHM=shm
  COHORT_ALLTOALL_ALGORITHM=bruck COHORT_REDUCE_SCATTER_ALGORITHM=shm
  COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=shm COHORT_SCAN_ALGORITHM=shm
  COHORT_EXSCAN_ALGORITHM=shm)
# the remaining shared-memory ones, the chain scan and the self-tuning broadcast (whose trees
# change from call to call; nothing remembered); then all of them with small buffers (many
# rounds)
set(COLL_V3 COHORT_BCAST_ALGORITHM=tuned COHORT_TUNE_DB=none
  COHORT_ALLREDUCE_ALGORITHM=shm COHORT_ALLGATHER_ALGORITHM=linear
  COHORT_ALLGATHERV_ALGORITHM=linear
  COHORT_ALLTOALL_ALGORITHM=shm COHORT_SCAN_ALGORITHM=chain COHORT_EXSCAN_ALGORITHM=chain)
set(COLL_V4
  COHORT_COLL_SHM_CHUNK=4K COHORT_BARRIER_ALGORITHM=counter COHORT_BCAST_ALGORITHM=shm
  COHORT_REDUCE_ALGORITHM=shm COHORT_ALLREDUCE_ALGORITHM=shm COHORT_GATHER_ALGORITHM=shm
  COHORT_SCATTER_ALGORITHM=shm COHORT_ALLGATHER_ALGORITHM=shm COHORT_ALLGATHERV_ALGORITHM=shm
  COHORT_ALLTOALL_ALGORITHM=shm COHORT_REDUCE_SCATTER_ALGORITHM=shm
  COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=shm COHORT_SCAN_ALGORITHM=shm
  COHORT_EXSCAN_ALGORITHM=shm)
# every single-copy algorithm; and without single copy, where they fall back
set(COLL_CMA
  COHORT_BCAST_ALGORITHM=cma COHORT_REDUCE_ALGORITHM=cma COHORT_ALLREDUCE_ALGORITHM=cma
  COHORT_GATHER_ALGORITHM=cma COHORT_GATHERV_ALGORITHM=cma COHORT_SCATTER_ALGORITHM=cma
  COHORT_SCATTERV_ALGORITHM=cma COHORT_ALLGATHER_ALGORITHM=cma COHORT_ALLGATHERV_ALGORITHM=cma
  COHORT_ALLTOALL_ALGORITHM=cma COHORT_ALLTOALLV_ALGORITHM=cma
  COHORT_REDUCE_SCATTER_ALGORITHM=cma COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=cma
  COHORT_SCAN_ALGORITHM=cma COHORT_EXSCAN_ALGORITHM=cma)
set(COLL_V5 COHORT_CMA=0 ${COLL_CMA})
set(COLL_V6 ${COLL_CMA})

foreach(t coll_reduce coll_move coll_barrier)
  cohort_mpi_test(${t} NP ${COLL_NP})
  foreach(v 0 1 2 3 4 5 6)
    cohort_mpi_test(${t} NP ${COLL_NP} ENV ${COLL_V${v}} SUFFIX .v${v})
  endforeach()
endforeach()
# Scan and Exscan by messages (linear) in pieces of 100 bytes (a few elements), not one
cohort_mpi_test(coll_reduce NP 4 5 8 ENV ${COLL_V0} COHORT_SCAN_PIECE=100 SUFFIX .v0.pieces)
foreach(v 0 1 2 3 4 5 6)
  cohort_mpi_test(coll_errors NP 2 ENV ${COLL_V${v}} SUFFIX .v${v})
endforeach()
cohort_mpi_test(coll_errors NP 1 2 3 4)
# above 17 ranks the flag barrier gathers arrivals up a radix-8 tree instead of reading them all
cohort_mpi_test(coll_barrier NP 18 ENV COHORT_BARRIER_ALGORITHM=flag SUFFIX .tree)
cohort_mpi_test(coll_mismatch NP 2 3 4 8)
# collective calls that disagreed without any rank waiting: MPI_Finalize reports them
foreach(c roots dup extra scatter iroots late clean)
  cohort_mpi_test(coll_final NP 1 2 3 4 8 ARGS ${c} SUFFIX .${c})
endforeach()
# a broadcast reader slowed down (300 ms) while the root leaves the call with an error
cohort_mpi_test(coll_mismatch NP 4 ENV COHORT_BCAST_ALGORITHM=cma MISMATCH_SLOW_READER=1
  SUFFIX .slow)
# a gather's writer slowed down (300 ms) while the root leaves the call with an error
cohort_mpi_test(coll_mismatch NP 4 ENV COHORT_GATHER_ALGORITHM=cma MISMATCH_SLOW_WRITER=1
  SUFFIX .slow_writer)
# a rank that refuses a call for its own arguments and then calls MPI_Finalize: on the
# communicator's first call (its segment's set-up) and after others, by point-to-point and by
# shared-memory algorithms; and a root that finalizes while its readers are still to come
foreach(c allgatherv:-1:0 allreduce:0:0 barrier:1:3 alltoall:-1:3 allreduce_large:0:3 bcast:-1:3
    reduce:1:0 leave:0:0 leave:0:3 elsewhere:1:0 elsewhere:-1:3 order:0:2 order:-1:0)
  string(REPLACE ":" ";" a ${c})
  list(GET a 0 case)
  string(REPLACE ":" "_" sfx ${c})
  string(REPLACE "-" "m" sfx ${sfx})
  cohort_mpi_test(coll_refused NP 2 3 8 ARGS ${a} SUFFIX .${sfx})
  foreach(v 0 4)
    cohort_mpi_test(coll_refused NP 4 ARGS ${a} ENV ${COLL_V${v}} SUFFIX .${sfx}.v${v})
  endforeach()
endforeach()
foreach(v 0 1 2 3 4 5 6)
  cohort_mpi_test(coll_mismatch NP 2 4 ENV ${COLL_V${v}} SUFFIX .v${v})
endforeach()
# Ranks apart (link emulation with free links): the selection table for ranks that do not
# share memory, messages only, with the automatic choice; its algorithms change at other sizes
# than the shared table's, so counts that disagree choose other pairs of algorithms
set(COLL_APART COHORT_EMU_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/emu-apart.topo COHORT_TUNE_DB=none)
foreach(t coll_reduce coll_move coll_barrier)
  cohort_mpi_test(${t} NP 3 4 8 ENV ${COLL_APART} SUFFIX .apart)
endforeach()
cohort_mpi_test(coll_mismatch NP 4 8 ENV ${COLL_APART} SUFFIX .apart)
cohort_mpi_test(coll_random NP 3 4 8 ENV ${COLL_APART} COLL_RANDOM_NB=1 COLL_RANDOM_SEED=21
  SUFFIX .nb.apart)
# the choices that depend on what a single copy costs (measured by mpiexec), both ways whatever
# this machine measures: with the automatic choice and with single copy forced
foreach(cost 1 100000)
  cohort_mpi_test(coll_move NP 2 3 4 8 ENV COHORT_CMA_COST=${cost} SUFFIX .cost${cost})
  cohort_mpi_test(coll_move NP 2 4 ENV COHORT_CMA_COST=${cost} ${COLL_CMA} SUFFIX .cma.cost${cost})
endforeach()
# buffers with whole 2 MiB pages, made huge pages or not, by every engine and by single copy
cohort_mpi_test(coll_move NP 2 4 ENV COLL_MOVE=huge SUFFIX .huge)
cohort_mpi_test(coll_move NP 1 2 3 4 8 ENV COLL_MOVE=huge COHORT_CMA_HUGEPAGES=1 SUFFIX .huge.on)
cohort_mpi_test(coll_move NP 2 4 ENV COLL_MOVE=huge COHORT_CMA_HUGEPAGES=1 ${COLL_CMA}
  SUFFIX .huge.on.cma)
cohort_mpi_test(coll_move NP 2 4 ENV COLL_MOVE=huge COHORT_CMA=0 SUFFIX .huge.nocma)
cohort_mpi_test(coll_ops NP ${COLL_NP})
# The segment's pages are mapped at the first spread payload (tests/mpi/coll_pages.c); the
# second run shows that the fault count sees the faults without it.
cohort_mpi_test(coll_pages NP 2 4 ENV COLL_PAGES=on COHORT_BCAST_ALGORITHM=shm)
cohort_mpi_test(coll_pages NP 2 ENV COLL_PAGES=off COHORT_COLL_POPULATE=0 COHORT_BCAST_ALGORITHM=shm
                SUFFIX .off)
# a Gatherv block too large for 4 KiB buffers, with the root late and rank 1 reusing its
# buffers for a broadcast meanwhile
cohort_mpi_test(coll_overrun NP 2 ENV COHORT_COLL_SHM_CHUNK=4K COHORT_BCAST_ALGORITHM=shm
  COHORT_GATHERV_ALGORITHM=cma)
# Alltoallv spilling inline blocks into more of its buffers while the root of the next
# broadcasts reuses them (tests/mpi/coll_spill.c)
cohort_mpi_test(coll_spill NP 3 4 8 ENV COHORT_COLL_SHM_CHUNK=8K COHORT_ALLTOALLV_ALGORITHM=cma
  COHORT_BCAST_ALGORITHM=shm)
add_test(NAME coll.vectorized
  COMMAND ${CMAKE_SOURCE_DIR}/tests/check-vectorized.sh ${CMAKE_C_COMPILER} ${CMAKE_SOURCE_DIR})
set_tests_properties(coll.vectorized PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
add_test(NAME coll.registry
  COMMAND ${CMAKE_SOURCE_DIR}/tests/coll-registry.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(coll.registry PROPERTIES TIMEOUT 60)
# random sequences of every collective on four communicators at once, with late ranks and
# pending wildcard receives: with the table, every algorithm family, and small buffers
cohort_mpi_test(coll_random NP 1 2 3 4 5 8)
foreach(v 0 1 4 6)
  cohort_mpi_test(coll_random NP 3 4 ENV ${COLL_V${v}} COLL_RANDOM_SEED=${v}${v} SUFFIX .v${v})
endforeach()
# single copy with 8 KiB buffers: Alltoall(v) spills inline blocks into one to three more of its
# buffers (and sends the rest by single copy)
cohort_mpi_test(coll_random NP 3 5 8 ENV COHORT_COLL_SHM_CHUNK=8K ${COLL_CMA} COLL_RANDOM_SEED=7
  SUFFIX .cma8k)
# blocking, nonblocking and persistent calls mixed, up to four in flight on any communicators,
# each rank completing them in an order of its own
cohort_mpi_test(coll_random NP 2 3 4 5 8 ENV COLL_RANDOM_NB=1 COLL_RANDOM_SEED=11 SUFFIX .nb)
cohort_mpi_test(coll_random NP 4 8 ENV COLL_RANDOM_NB=1 COLL_RANDOM_SEED=12 COHORT_COLL_SHM_CHUNK=8K
  ${COLL_CMA} SUFFIX .nb.cma8k)
# intercommunicators: each group's steps run the intracommunicator algorithms
cohort_mpi_test(coll_inter NP 2 3 4 5 8)
foreach(v 1 2 4)
  cohort_mpi_test(coll_inter NP 5 ENV ${COLL_V${v}} SUFFIX .v${v})
endforeach()
# nonblocking collectives, against the blocking ones
cohort_mpi_test(coll_nbc NP 1 2 3 4 5 8)
# Iscan and Iexscan (and their persistent forms) by messages in pieces of 100 bytes (a few
# elements), not one: with 4 KiB buffers, in which the tests' longer vectors do not fit
cohort_mpi_test(coll_nbc NP 4 5 ENV COHORT_SCAN_PIECE=100 COHORT_COLL_SHM_CHUNK=4K SUFFIX .pieces)
cohort_mpi_test(coll_persist NP 4 ENV COHORT_SCAN_PIECE=100 COHORT_COLL_SHM_CHUNK=4K
  SUFFIX .pieces)
# small nonblocking calls through the shared buffers, against serial references; with 4 KiB
# buffers too, where fewer calls fit (Iscatterv's slots not at all)
cohort_mpi_test(coll_nbc_shm NP 1 2 3 4 5 8)
cohort_mpi_test(coll_nbc_shm NP 3 8 ENV COHORT_COLL_SHM_CHUNK=4K SUFFIX .4k)
# Ibcast's two schedules: flat up to 8 ranks (each half of a split), binomial beyond
cohort_mpi_test(coll_ibcast NP 2 3 9 12)
cohort_mpi_test(coll_persist NP 1 2 3 4 5 8)
# Buffers of more than 2^31 - 1 elements (tests/mpi/coll_bigvec.c; 5 GiB a rank, Alltoall 7;
# skipped, exit status 77, where less memory is available). Reduce_scatter(_block)'s vector:
# the automatic choice at 2 and 3 ranks, each algorithm forced at 3 (where a block starts past
# element 2^31 - 1). Allgather, Gather, Scatter and Alltoall at 3 ranks, blocking and not, with
# the automatic choice and with single copy forced (whose cores take int displacements). Under
# the sanitizers, which make each run take minutes, only what has a step of its own for such
# buffers: reduce_scatterv and the nonblocking schedules. On an intercommunicator,
# Reduce_scatter's long vectors are refused.
set(BIGVEC_TESTS mpi.coll_bigvec.np2 mpi.coll_bigvec.np3 mpi.coll_bigvec.uniform.np3)
cohort_mpi_test(coll_bigvec NP 2 3 ARGS block v inplace nb)
set(BIGVEC_ALGS reduce_scatterv ring shm cma)
if(CMAKE_C_FLAGS MATCHES "sanitize")
  set(BIGVEC_ALGS reduce_scatterv)
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform ARGS iallgather igather iscatter)
else()
  # in three jobs (8-28 s each where a page fault costs 12 µs; before the test's buffers
  # asked for huge pages, tu_big_malloc, the eight cases took over 240 s together there)
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform ARGS allgather gather scatter)
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform_a2a ARGS alltoall)
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform_nb ARGS iallgather igather iscatter ialltoall)
  list(APPEND BIGVEC_TESTS mpi.coll_bigvec.uniform_a2a.np3 mpi.coll_bigvec.uniform_nb.np3)
  # single copy forced, in two jobs likewise (the four took 204 s together without huge pages)
  set(BIGVEC_CMA COHORT_ALLGATHER_ALGORITHM=cma COHORT_GATHER_ALGORITHM=cma
      COHORT_SCATTER_ALGORITHM=cma COHORT_ALLTOALL_ALGORITHM=cma)
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform_cma ARGS allgather gather scatter
    ENV ${BIGVEC_CMA})
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .uniform_cma_a2a ARGS alltoall ENV ${BIGVEC_CMA})
  list(APPEND BIGVEC_TESTS mpi.coll_bigvec.uniform_cma.np3 mpi.coll_bigvec.uniform_cma_a2a.np3)
endif()
foreach(alg ${BIGVEC_ALGS})
  cohort_mpi_test(coll_bigvec NP 3 SUFFIX .${alg} ARGS v inplace
    ENV COHORT_REDUCE_SCATTER_ALGORITHM=${alg} COHORT_REDUCE_SCATTER_BLOCK_ALGORITHM=${alg})
  list(APPEND BIGVEC_TESTS mpi.coll_bigvec.${alg}.np3)
endforeach()
set_tests_properties(${BIGVEC_TESTS} PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
cohort_mpi_test(coll_bigvec NP 4 SUFFIX .inter ARGS inter)
# topologies and the neighbourhood collectives
cohort_mpi_test(coll_neighbor NP 1 2 3 4 5 8)
