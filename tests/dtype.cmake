# Tests of the dtype area: constructors against reference layouts, datatypes in every
# point-to-point path (eager, single-copy rendezvous, pipelined copy with COHORT_CMA=0),
# Pack/Unpack, life cycle, and bad input.
cohort_mpi_test(dtype_layout NP 1)
