# Tests of the dtype area: constructors against reference layouts, datatypes in every
# point-to-point path (eager, single-copy rendezvous, pipelined copy with COHORT_CMA=0),
# Pack/Unpack, life cycle, and bad input.
cohort_mpi_test(dtype_layout NP 1)
cohort_mpi_test(dtype_p2p NP 1 2 4 8)
cohort_mpi_test(dtype_p2p NP 2 4 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(dtype_errors NP 1 2)
cohort_mpi_test(dtype_life NP 1 2 4)
cohort_mpi_test(dtype_life NP 2 ENV COHORT_CMA=0 SUFFIX .nocma)
cohort_mpi_test(dtype_pack NP 1 2 4)
# every large non-contiguous message read run to run with process_vm_readv
cohort_mpi_test(dtype_p2p NP 2 ENV COHORT_CMA_MIN_RUN=1 SUFFIX .cmaiov)
cohort_mpi_test(dtype_life NP 2 ENV COHORT_CMA_MIN_RUN=1 SUFFIX .cmaiov)

# Unit tests of the flattened representation (internal functions, static library).
if(PkgConfig_FOUND)
  pkg_check_modules(CMOCKA QUIET cmocka)
endif()
if(CMOCKA_FOUND)
  add_executable(u_dtype unit/dtype_unit.c)
  target_include_directories(u_dtype PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMOCKA_INCLUDE_DIRS})
  target_link_libraries(u_dtype PRIVATE cohort_static ${CMOCKA_LIBRARIES})
  target_compile_options(u_dtype PRIVATE -Wall -Wextra -Werror)
  set_target_properties(u_dtype PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME unit.dtype COMMAND u_dtype)
endif()
