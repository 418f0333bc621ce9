# Tests of the ckpt area: whole-job checkpoints (MPIX_Checkpoint, MPIX_Restart). The files
# live in $TMPDIR (else /tmp), named cohort-ckpt-test.PID.*, and are deleted at the end.

# The radix tree over rank sets of every shape, malformed trees, and the checks on a leaf's
# runs, without MPI.
cohort_unit_test(ckpt_format)

# Restores every rank's regions byte for byte, picks the closest image as the base, stores the
# shared bytes once, replaces a checkpoint atomically, on WORLD and on split halves.
cohort_mpi_test(ckpt_basic NP 1 2 3 4 5 8)
# Bad arguments, differing paths, files that are not checkpoints or do not fit, and a
# checkpoint cut short at every length and changed at every byte: a clear class on every
# rank, and the regions unchanged.
cohort_mpi_test(ckpt_errors NP 1 2 4)

# A rank that dies while the job checkpoints (at a dozen different moments) leaves the last
# complete checkpoint restorable; `cohort checkpoint` tells whole, cut and damaged files apart.
add_executable(t_ckpt_crash mpi/ckpt_crash.c)
target_link_libraries(t_ckpt_crash PRIVATE cohort)
target_compile_options(t_ckpt_crash PRIVATE -Wall -Wextra -Werror)
set_target_properties(t_ckpt_crash PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
foreach(s crash inspect)
  add_test(NAME ckpt.${s}
    COMMAND ${CMAKE_SOURCE_DIR}/tests/ckpt.sh ${MPIEXEC} $<TARGET_FILE:t_ckpt_crash>
            $<TARGET_FILE:cohort_tool> ${s})
  set_tests_properties(ckpt.${s} PROPERTIES TIMEOUT 300)
endforeach()
