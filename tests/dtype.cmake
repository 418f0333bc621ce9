# Tests of the dtype area: constructors against reference layouts, datatypes in every
# point-to-point path (eager, single-copy rendezvous, pipelined copy with COHORT_CMA=0),
# Pack/Unpack (native and external32), life cycle, and bad input.
cohort_mpi_test(dtype_layout NP 1 2)
cohort_mpi_test(dtype_p2p NP 1 2 4 8)
cohort_mpi_test(dtype_p2p NP 2 4 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(dtype_errors NP 1 2 4)
cohort_mpi_test(dtype_life NP 1 2 4 8)
cohort_mpi_test(dtype_life NP 2 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(dtype_pack NP 1 2 4 8)
# MPI_Pack_external and friends: external32 bytes of every basic type, round trips
cohort_mpi_test(dtype_external NP 1)
cohort_mpi_test(dtype_named NP 1 2 3)
# every large non-contiguous message read run to run with process_vm_readv
cohort_mpi_test(dtype_p2p NP 2 ENV COHORT_CMA_MIN_RUN=1 SUFFIX .cmaiov)
cohort_mpi_test(dtype_life NP 2 ENV COHORT_CMA_MIN_RUN=1 SUFFIX .cmaiov)

# Unit tests of the flattened representation (internal functions, static library).
cohort_unit_test(dtype)
cohort_mpi_test(dtype_attr NP 1)
