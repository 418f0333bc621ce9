# Tests of the io area: MPI-IO, the MPI_File_* calls (MPI 3.1 chapter 13). The files the
# tests make live in $TMPDIR (else /tmp), named cohort-io-test.PID.*, and are deleted at the end.

# Open modes, explicit offsets, individual and shared file pointers, interleaved and subarray
# views, nonblocking and split collective accesses, sizes, the file's properties, a file per
# half of a split communicator, a few MiB a rank: against values computed in the test.
cohort_mpi_test(io_basic NP 1 2 3 4 8)
# Bad arguments, access modes, missing files and calls the open mode forbids give the right
# error class, through MPI_ERRORS_RETURN and user file error handlers; the file then still
# works.
cohort_mpi_test(io_errors NP 1 2 4)
