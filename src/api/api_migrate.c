/* Entry point of rank swaps (MPIX_Swap_ranks; mpix.h and docs/migration.md): argument checks,
 * then src/migrate. */
#include "api.h"

#include "../migrate/migrate.h"

CO_WEAK(MPIX_Swap_ranks, PMPIX_Swap_ranks);
int PMPIX_Swap_ranks(MPI_Comm comm, int rank_a, int rank_b) {
    static const char fn[] = "MPIX_Swap_ranks";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (c->is_inter)
        return co_error(c, fn, MPI_ERR_COMM, "ranks are swapped on intracommunicators");
    if (c->size != co_st.world_size)
        return co_error(c, fn, MPI_ERR_COMM,
                        "a swap changes where ranks live for every process, so the "
                        "communicator must hold all %d processes of the job (it holds %d)",
                        co_st.world_size, c->size);
    if (rank_a < 0 || rank_a >= c->size)
        return co_error(c, fn, MPI_ERR_RANK, "invalid rank_a %d (the communicator has %d ranks)",
                        rank_a, c->size);
    if (rank_b < 0 || rank_b >= c->size)
        return co_error(c, fn, MPI_ERR_RANK, "invalid rank_b %d (the communicator has %d ranks)",
                        rank_b, c->size);
    return co_swap_ranks(c, rank_a, rank_b, fn);
}
