# Tests of the dtype area: constructors against reference layouts, datatypes in every
# point-to-point path (eager, single-copy rendezvous, pipelined copy with COHORT_CMA=0),
# Pack/Unpack, life cycle, and bad input.
cohort_mpi_test(dtype_layout NP 1)
cohort_mpi_test(dtype_p2p NP 1 2 4 8)
cohort_mpi_test(dtype_p2p NP 2 4 ENV COHORT_CMA=0 SUFFIX .nocma)
