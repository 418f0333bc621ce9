# Point-to-point, environment, errors and launcher tests.
cohort_mpi_test(p2p_basic NP 1 2 4 8)
