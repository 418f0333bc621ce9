# Tests of the comm area: communicators, groups, topologies, attributes and the tree of ID
# pools.

# The pool state machine, ID sets and maps, with simulated processes (cmocka).
cohort_unit_test(comm_idpool)

# Every call against expected results, bad arguments included.
cohort_mpi_test(comm_group NP 1 2 4 8)
cohort_mpi_test(comm_basic NP 1 2 4 8)
cohort_mpi_test(comm_split_hw NP 1 2 3 4)
cohort_mpi_test(comm_attr_end NP 1 3)
cohort_mpi_test(comm_inter NP 1 2 4 8)
cohort_mpi_test(comm_cart NP 1 2 4 8)
cohort_mpi_test(comm_errors NP 1 2 4 8)
# handles freed once too often (groups, error handlers, operators, datatypes) or used after
# MPI_Request_free, and random calls with random, stale and made-up handles: on one rank, and
# the same calls on every rank of several (scripts/soak --test handles draws more seeds)
cohort_mpi_test(handles NP 1 2 4)
cohort_mpi_test(handles NP 1 ARGS sweep SUFFIX .sweep)
cohort_mpi_test(handles NP 2 3 4 8 ARGS sweep ENV HANDLES_CALLS=20000 SUFFIX .sweep)
cohort_mpi_test(comm_unique NP 1 2 4 8)
cohort_mpi_test(comm_cycles NP 1 2 4 8)
cohort_mpi_test(comm_many NP 1 2 4 8)
cohort_mpi_test(comm_nest NP 1 2 4 8)
cohort_mpi_test(comm_nest NP 2 4 8 ENV COHORT_ID_BATCH=1 SUFFIX _batch1)
# The world's master blocked in MPI_Recv while the others create (and pools ask it for IDs);
# small batches make every pool ask often, a small ID space makes the root reclaim.
cohort_mpi_test(comm_cgroup NP 1 2 4 8)
cohort_mpi_test(comm_cgroup NP 2 4 8 ENV COHORT_ID_BATCH=1 SUFFIX _batch1)
cohort_mpi_test(comm_cgroup NP 2 ENV COHORT_ID_SPACE=70 COHORT_ID_BATCH=8 SUFFIX _space)
cohort_mpi_test(comm_cgroup NP 4 ENV COHORT_ID_SPACE=200 COHORT_ID_BATCH=8 SUFFIX _space)
cohort_mpi_test(comm_cgroup NP 8 ENV COHORT_ID_SPACE=320 COHORT_ID_BATCH=8 SUFFIX _space)
cohort_mpi_test(comm_reclaim NP 1 2 4 8 ENV COHORT_ID_SPACE=64 COHORT_ID_BATCH=8)
cohort_mpi_test(comm_idup NP 1 2 3 4 8)
# communicators freed just before MPI_Finalize, while their master finalizes (it once crashed
# or hung there); with few queue cells the master's returns to rank 0 do not fit
cohort_mpi_test(comm_fini NP 1 2 4)
cohort_mpi_test(comm_fini NP 3 4 8 ENV COHORT_SHM_RING_CELLS=16 SUFFIX .cells16)
