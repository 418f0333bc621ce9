/* Entry points of the whole-job checkpoints (MPIX_Checkpoint*, MPIX_Restart; mpix.h and
 * docs/checkpoint.md): argument checks, then src/ckpt. */
#include "api.h"

#include "../ckpt/ckpt.h"

CO_WEAK(MPIX_Checkpoint_register, PMPIX_Checkpoint_register);
int PMPIX_Checkpoint_register(void *base, MPI_Aint size) {
    static const char fn[] = "MPIX_Checkpoint_register";
    CO_ENTER(fn);
    if (size < 0) return co_error(NULL, fn, MPI_ERR_SIZE, "negative size %ld", (long)size);
    if (!base && size) return co_error(NULL, fn, MPI_ERR_BUFFER, "base is NULL");
    return co_ckpt_register(base, (size_t)size, fn);
}

CO_WEAK(MPIX_Checkpoint_unregister, PMPIX_Checkpoint_unregister);
int PMPIX_Checkpoint_unregister(void *base) {
    static const char fn[] = "MPIX_Checkpoint_unregister";
    CO_ENTER(fn);
    return co_ckpt_unregister(base, fn);
}

/* The communicator and path of a checkpoint call; NULL with *rc set when they are wrong. */
static co_comm *ckpt_args(MPI_Comm comm, const char *path, const char *fn, int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (!c) return NULL;
    if (c->is_inter) {
        *rc = co_error(c, fn, MPI_ERR_COMM, "checkpoints are taken on intracommunicators");
        return NULL;
    }
    if (!path || !*path) {
        *rc = co_error(c, fn, MPI_ERR_ARG, path ? "path is empty" : "path is NULL");
        return NULL;
    }
    return c;
}

CO_WEAK(MPIX_Checkpoint, PMPIX_Checkpoint);
int PMPIX_Checkpoint(MPI_Comm comm, const char *path) {
    static const char fn[] = "MPIX_Checkpoint";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = ckpt_args(comm, path, fn, &rc);
    return c ? co_ckpt_write(c, path, fn) : rc;
}

CO_WEAK(MPIX_Restart, PMPIX_Restart);
int PMPIX_Restart(MPI_Comm comm, const char *path, int *restored) {
    static const char fn[] = "MPIX_Restart";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = ckpt_args(comm, path, fn, &rc);
    if (!c) return rc;
    if (!restored) return co_error(c, fn, MPI_ERR_ARG, "restored is NULL");
    return co_ckpt_restart(c, path, restored, fn);
}
