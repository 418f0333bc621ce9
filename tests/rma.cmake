# Tests of the rma area: one-sided communication (windows, epochs, RMA operations).

# The four window flavours, fence, post/start/complete/wait and passive target epochs, the
# accumulate operators and atomics, request-based operations, attributes: against values
# computed in the test.
cohort_mpi_test(rma_basic NP 1 2 3 4 8)
# Bad arguments and calls outside their epoch give the right error class; the window then
# still works.
cohort_mpi_test(rma_errors NP 1 2 4)
# Without single copies between processes: windows over the program's memory are refused
# clearly, allocated windows work.
cohort_mpi_test(rma_nocma NP 1 2 4 ENV COHORT_CMA=0)
