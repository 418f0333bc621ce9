/* Start-up and shut-down of the library: read the settings, attach to the job segment (or
 * make a one-rank job of our own when started without mpiexec), and bring the layers up in
 * order; MPI_Finalize takes them down in reverse. */
#include "cohort.h"
#include "../boot/boot.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cohort_state co_st;

static co_seg the_seg;

static int env_int(const char *name, int def) {
    const char *v = getenv(name);
    return v ? atoi(v) : def;
}

static int attach_segment(char *err, size_t errlen) {
    const char *fd_s = getenv("COHORT_JOB_FD");
    if (fd_s) {
        int fd = atoi(fd_s);
        if (co_seg_attach(fd, &the_seg, err, errlen)) return -1;
        close(fd);
        unsetenv("COHORT_JOB_FD"); /* children of this rank are not ranks */
        co_st.world_rank = env_int("COHORT_JOB_RANK", -1);
        co_st.appnum = env_int("COHORT_JOB_APPNUM", 0);
        co_st.world_size = the_seg.nranks;
        if (co_st.world_rank < 0 || co_st.world_rank >= co_st.world_size) {
            snprintf(err, errlen, "COHORT_JOB_RANK is missing or out of range");
            return -1;
        }
        co_st.launched = 1;
    } else {
        co_seg_params p = {1, co_st.cfg.shm_ring_cells, co_st.cfg.shm_data_bytes,
                           co_st.cfg.eager_limit, co_st.cfg.heap_slice};
        int fd = co_seg_create(&p, &the_seg, err, errlen);
        if (fd < 0) return -1;
        close(fd);
        co_st.world_rank = 0;
        co_st.world_size = 1;
    }
    co_st.proc = co_st.world_rank;
    co_st.seg = &the_seg;
    the_seg.ranks[co_st.proc].pid = (int32_t)getpid();
    return 0;
}

int co_init(int *argc, char ***argv, int required, int *provided) {
    (void)argc;
    (void)argv;
    char err[256];
    if (co_config_load(&co_st.cfg, err, sizeof(err))) {
        fprintf(stderr, "cohort: %s\n", err);
        return MPI_ERR_OTHER;
    }
    if (err[0]) co_log(CO_LOG_WARN, "%s", err);
    if (attach_segment(err, sizeof(err))) {
        fprintf(stderr, "cohort: cannot start: %s\n", err);
        return MPI_ERR_OTHER;
    }

    if (co_emu_init(err, sizeof(err))) {
        fprintf(stderr, "cohort: cannot start: %s\n", err);
        return MPI_ERR_OTHER;
    }

    cpu_set_t set;
    co_st.local_cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    int job_cpus = env_int("COHORT_JOB_NCPUS", (int)sysconf(_SC_NPROCESSORS_ONLN));
    if (job_cpus < 1) job_cpus = 1;
    co_st.oversubscribed = co_st.world_size > job_cpus;
    co_st.shm_spin = co_st.p2p_spin = (unsigned)co_st.cfg.spin_count; /* as set, when it is */
    if (co_st.cfg.spin_count <= 0) {
        co_st.cfg.spin_count = co_st.oversubscribed ? 16 : 20000;
        /* Collectives waiting on shared memory, and waits for the program's own
         * point-to-point requests, when ranks outnumber cores: with two ranks to a core the
         * one waited for may be running on the other core, so look twice; with more it most
         * likely waits for this core (docs/collectives.md, docs/runtime.md "Waiting"). */
        co_st.shm_spin = co_st.p2p_spin = !co_st.oversubscribed ? (unsigned)co_st.cfg.spin_count
                                          : co_st.world_size > 2 * job_cpus ? 0
                                                                            : 2;
    }
    if (gethostname(co_st.processor_name, sizeof(co_st.processor_name)) != 0)
        strcpy(co_st.processor_name, "localhost");
    co_st.processor_name[sizeof(co_st.processor_name) - 1] = 0;

    /* Calls are serialised by the caller at SERIALIZED and below; MULTIPLE would need locks
     * Cohort does not take, so it is never reported. */
    co_st.thread_level = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
    if (co_st.thread_level < MPI_THREAD_SINGLE) co_st.thread_level = MPI_THREAD_SINGLE;
    if (provided) *provided = co_st.thread_level;

    int rc;
    if ((rc = co_info_init()) || (rc = co_dtype_init()) || (rc = co_op_init()) ||
        (rc = co_p2p_init()) || (rc = co_comm_init()) || (rc = co_coll_init()) ||
        (rc = co_rma_init()) || (rc = co_io_init())) {
        /* No handler but the default (errors are fatal) can be in place yet, so this ends
         * the rank here: a program that ignores Init's return code would only fail later,
         * with a less clear error. */
        return co_error(NULL, "MPI_Init", rc, "initialisation failed");
    }
    if (co_st.launched && co_st.cfg.line_buffer) setvbuf(stdout, NULL, _IOLBF, 0);
    atomic_store(&co_st.seg->ranks[co_st.proc].world1, co_st.world_rank + 1);
    atomic_store(&co_st.seg->ranks[co_st.proc].state, CO_RANK_RUNNING);
    co_st.initialized = 1;
    return MPI_SUCCESS;
}

int co_finalize(void) {
    /* A delete callback's error does not stop the shut-down (the peers wait for this rank in
     * the barrier below); MPI_Finalize returns it at the end. */
    int cb_rc = co_comm_finalize_attrs();
    co_st.api_fn = "MPI_Finalize"; /* the callbacks may have called MPI */
    /* Finalize is collective: no rank leaves while a peer may still need it. Messages still
     * waiting for queue room go first: a later message (the barrier's) may find room and
     * overtake them, and a peer that has left never makes room again. */
    co_p2p_flush();
    /* From here on this rank sends nothing and calls nothing more but the barrier below: a
     * peer that waits for it in a collective it never made, or for a message it never sent
     * or received, can tell (co_seg_finalizing). */
    atomic_store_explicit(&co_st.seg->ranks[co_st.proc].state, CO_RANK_FINALIZING,
                          memory_order_release);
    char why[400];
    int rc = co_coll_final_barrier(co_st.world, why, sizeof(why));
    if (rc) return rc;
    /* collective calls that disagreed and yet returned success: an error (it may end the job,
     * as the handler says) while everything still works */
    int late_rc = why[0] ? co_error(NULL, "MPI_Finalize", MPI_ERR_OTHER, "%s", why) : MPI_SUCCESS;
    co_st.shutting_down = 1;
    co_io_fini();
    co_ckpt_fini();
    co_tune_fini();
    co_rma_fini();
    co_coll_fini();
    co_comm_fini();
    co_p2p_fini();
    co_op_fini();
    co_dtype_fini();
    co_emu_fini();
    /* info objects stay: MPI 4 lets programs use them after MPI_Finalize (info.c) */
    atomic_store(&co_st.seg->ranks[co_st.proc].state, CO_RANK_FINALIZED);
    co_seg_detach(co_st.seg);
    co_st.seg = NULL;
    co_st.finalized = 1;
    fflush(stdout);
    return cb_rc ? cb_rc : late_rc;
}
