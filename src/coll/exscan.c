/* MPI_Exscan: rank r receives the combination of operands 0..r-1 (rank 0's receive buffer
 * is left alone). The algorithms are Scan's (scan.c), selected and forced separately. */
#include "coll.h"

const co_coll_alg co_exscan_algs[] = {
    {"linear", 0,
     "a chain of messages: each rank receives the prefix from rank-1 and passes its own on "
     "(long vectors from 4 ranks on in pieces, pipelined)"},
    {"recursive_doubling", 0, "ceil(log2 N) rounds exchanging partial results"},
    {"shm", CO_ALG_SHM | CO_ALG_DENSE,
     "operands copied into shared buffers; rank r combines operands 0..r-1 itself"},
    {"cma", CO_ALG_CMA | CO_ALG_DENSE,
     "rank r reads operands 0..r-1 straight from the peers (process_vm_readv) and combines"},
    {"chain", CO_ALG_CMA | CO_ALG_DENSE,
     "pipelined chain: rank r reads rank r-1's prefix piece by piece (process_vm_readv) as its "
     "result and passes that combined with its operand on"},
};
CO_ALG_TABLE_CHECK(co_exscan_algs, CO_SCAN_NALGS);

int co_exscan(const void *sbuf, void *rbuf, size_t count, co_dtype *dt, co_op *op, co_comm *c) {
    return co_scan_run(sbuf, rbuf, count, dt, op, c, 1);
}
