/* The settings table: every tunable is one COHORT_* environment variable declared here once,
 * with its type, default and meaning. The library reads them at MPI_Init; `cohort info` and
 * the README's settings list are generated from this same table. */
#include "cohort.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CFG(field) offsetof(co_config, field), sizeof(((co_config *)0)->field)

const co_setting co_settings[] = {
    {"EAGER_LIMIT", CO_CFG_SIZE, "16384", CFG(eager_limit),
     "largest message (bytes) sent eagerly through the shared-memory rings; larger ones use "
     "rendezvous and a single copy"},
    {"SHM_RING_CELLS", CO_CFG_INT, "256", CFG(shm_ring_cells),
     "64-byte header cells in each ordered pair's shared-memory queue (power of two)"},
    {"SHM_DATA_BYTES", CO_CFG_SIZE, "0", CFG(shm_data_bytes),
     "bytes of eager payload space in each ordered pair's shared-memory queue; 0 picks 256K "
     "up to 4 ranks, 128K beyond"},
    {"SHM_POPULATE", CO_CFG_BOOL, "1", CFG(shm_populate),
     "1: on their first trip round a pair's payload ring, sender and receiver map its pages 32 "
     "KiB at a time (madvise MADV_POPULATE_WRITE/READ) instead of one page fault at a time; 0: "
     "fault them in as they are used"},
    {"HEAP_SLICE", CO_CFG_SIZE, "64M", CFG(heap_slice),
     "bytes of the job segment reserved per rank for shared collective buffers (sparse)"},
    {"CMA", CO_CFG_BOOL, "1", CFG(cma),
     "copy large messages with one process_vm_readv; 0 forces the pipelined copy through "
     "shared buffers (mpiexec sets 0 for a job run under valgrind)"},
    {"CMA_MIN_RUN", CO_CFG_SIZE, "8K", CFG(cma_min_run),
     "large non-contiguous messages are copied in place, run to run, when the sender's runs are "
     "this long (an eighth of it into a contiguous buffer) and the receiver's half of it; "
     "finer layouts use the pipelined copy"},
    {"CMA_COST", CO_CFG_INT, "0", CFG(cma_cost),
     "nanoseconds a small single-copy read takes on this machine; mpiexec measures it and "
     "passes it to the ranks. From 1000 on, more mid-size blocks of the collectives go through "
     "the shared buffers instead (docs/collectives.md); 0: not known, taken as cheap"},
    {"CMA_HUGEPAGES", CO_CFG_BOOL, "0", CFG(cma_hugepages),
     "1: when peers copy from or into a collective's large buffer by single copy for the "
     "second time, make the 2 MiB pages wholly inside it transparent huge pages (madvise "
     "MADV_COLLAPSE), which the kernel pins faster; pays only for buffers used many times"},
    {"DEADLOCK_MS", CO_CFG_INT, "1000", CFG(deadlock_ms),
     "mpiexec declares a deadlock once every rank has waited this many milliseconds in MPI "
     "calls that none of the others will complete (a process started without mpiexec, once "
     "it has): it lists where each rank waits and the calls fail (MPI_ERR_OTHER; a blocked "
     "send ends the job); 0 turns the watch off"},
    {"SPIN_COUNT", CO_CFG_INT, "0", CFG(spin_count),
     "idle progress passes before a waiting rank yields the CPU; 0 picks one from the number "
     "of ranks per core"},
    {"POLL_YIELD_US", CO_CFG_INT, "5", CFG(poll_yield_us),
     "when ranks outnumber cores: once MPI_Test, MPI_Iprobe and the other nonblocking calls "
     "have found nothing for this many microseconds (with no request started or completed "
     "meanwhile), one of them yields the CPU, and again after as many more; 0 yields at every "
     "such call, as Open MPI does, and a negative value never"},
    {"CKPT_LEVEL", CO_CFG_INT, "1", CFG(ckpt_level),
     "zstd compression level of checkpoints (MPIX_Checkpoint, docs/checkpoint.md): 1 is the "
     "quickest that compresses numbers well, 19 the smallest; negative levels are quicker "
     "still"},
    {"CKPT_SHUFFLE", CO_CFG_BOOL, "1", CFG(ckpt_shuffle),
     "1: checkpoints split the bytes of each 8-byte word into planes before compressing, "
     "which shrinks arrays of doubles and integers; 0: compress the bytes as they are"},
    {"EMU_TOPOLOGY", CO_CFG_STR, "", CFG(emu_topology),
     "a file of emulated links: every point-to-point message from rank a to rank b waits the "
     "link's latency plus its size over its bandwidth (docs/tuning.md); collectives then "
     "take point-to-point algorithms. Empty: no emulation"},
    {"BCAST_TUNE", CO_CFG_BOOL, "1", CFG(bcast_tune),
     "1: MPI_Bcast on communicators whose ranks do not all share memory (today: under "
     "COHORT_EMU_TOPOLOGY) uses self-tuning trees, remembered in COHORT_TUNE_DB"},
    {"TUNE_DB", CO_CFG_STR, "", CFG(tune_db),
     "the file that remembers the best broadcast trees across runs (SQLite); empty: "
     "$XDG_CACHE_HOME/cohort/tune.db or ~/.cache/cohort/tune.db; none: remember nothing"},
    {"TUNE_AGAIN", CO_CFG_BOOL, "0", CFG(tune_again),
     "1: search again from a remembered broadcast tree whose search had ended"},
    {"LOG_LEVEL", CO_CFG_INT, "1", CFG(log_level),
     "diagnostics on stderr: 0 errors, 1 warnings, 2 info, 3 debug"},
    {"LINE_BUFFER", CO_CFG_BOOL, "1", CFG(line_buffer),
     "make stdout line-buffered in ranks started by mpiexec, so output arrives promptly"},
    {"BIND", CO_CFG_BOOL, "1", CFG(bind),
     "mpiexec binds each rank to its cores (by default one, or as many as OMP_NUM_THREADS "
     "asks for) when they fit in the job's cores, or when the ranks divide evenly among the "
     "cores (a block of consecutive ranks to each); `--bind-to` and `--map-by` say more "
     "(docs/runtime.md, \"Placement\")"},
    {"BARRIER_ALGORITHM", CO_CFG_STR, "auto", CFG(barrier_algorithm),
     "force a barrier algorithm (see `cohort info`); auto uses the selection table"},
    {"BCAST_ALGORITHM", CO_CFG_STR, "auto", CFG(bcast_algorithm),
     "force a broadcast algorithm; auto uses the selection table"},
    {"REDUCE_ALGORITHM", CO_CFG_STR, "auto", CFG(reduce_algorithm),
     "force a reduce algorithm; auto uses the selection table"},
    {"ALLREDUCE_ALGORITHM", CO_CFG_STR, "auto", CFG(allreduce_algorithm),
     "force an allreduce algorithm; auto uses the selection table"},
    {"GATHER_ALGORITHM", CO_CFG_STR, "auto", CFG(gather_algorithm),
     "force a gather algorithm; auto uses the selection table"},
    {"GATHERV_ALGORITHM", CO_CFG_STR, "auto", CFG(gatherv_algorithm),
     "force a gatherv algorithm; auto uses the selection table"},
    {"SCATTER_ALGORITHM", CO_CFG_STR, "auto", CFG(scatter_algorithm),
     "force a scatter algorithm; auto uses the selection table"},
    {"SCATTERV_ALGORITHM", CO_CFG_STR, "auto", CFG(scatterv_algorithm),
     "force a scatterv algorithm; auto uses the selection table"},
    {"ALLGATHER_ALGORITHM", CO_CFG_STR, "auto", CFG(allgather_algorithm),
     "force an allgather algorithm; auto uses the selection table"},
    {"ALLGATHERV_ALGORITHM", CO_CFG_STR, "auto", CFG(allgatherv_algorithm),
     "force an allgatherv algorithm; auto uses the selection table"},
    {"ALLTOALL_ALGORITHM", CO_CFG_STR, "auto", CFG(alltoall_algorithm),
     "force an alltoall algorithm; auto uses the selection table"},
    {"ALLTOALLV_ALGORITHM", CO_CFG_STR, "auto", CFG(alltoallv_algorithm),
     "force an alltoallv algorithm; auto uses the selection table"},
    {"REDUCE_SCATTER_ALGORITHM", CO_CFG_STR, "auto", CFG(reduce_scatter_algorithm),
     "force a reduce_scatter algorithm; auto uses the selection table"},
    {"REDUCE_SCATTER_BLOCK_ALGORITHM", CO_CFG_STR, "auto", CFG(reduce_scatter_block_algorithm),
     "force a reduce_scatter_block algorithm; auto uses the selection table"},
    {"SCAN_ALGORITHM", CO_CFG_STR, "auto", CFG(scan_algorithm),
     "force a scan algorithm; auto uses the selection table"},
    {"EXSCAN_ALGORITHM", CO_CFG_STR, "auto", CFG(exscan_algorithm),
     "force an exscan algorithm; auto uses the selection table"},
    {"SCAN_PIECE", CO_CFG_SIZE, "256K", CFG(scan_piece),
     "from 4 ranks on, MPI_Scan and MPI_Exscan by messages (algorithm linear), MPI_Iscan and "
     "MPI_Iexscan by messages and their persistent forms: vectors longer than this many bytes "
     "go down the chain of ranks in pieces of this size (0: whole)"},
    {"COLL_SHM_CHUNK", CO_CFG_SIZE, "64K", CFG(coll_shm_chunk),
     "bytes per data buffer of a communicator's shared-memory collective segment (each rank "
     "has 4); large collectives are pipelined through them in pieces of this size"},
    {"COLL_POPULATE", CO_CFG_BOOL, "1", CFG(coll_populate),
     "1: the first time a collective spreads a payload of 2 KiB or more through a "
     "communicator's shared buffers, map all of them into the rank in one system call per area "
     "(madvise MADV_POPULATE_READ/WRITE) instead of one page fault at a time; 0: fault them in "
     "as they are used"},
    {"NBC_ALLREDUCE_SPLIT", CO_CFG_SIZE, "64K", CFG(nbc_allreduce_split),
     "MPI_Iallreduce and MPI_Allreduce_init from 4 ranks on: vectors of at least this many "
     "bytes are reduce-scattered by recursive halving, then allgathered by recursive "
     "doubling; shorter ones are combined whole by recursive doubling"},
    {"ID_BATCH", CO_CFG_INT, "64", CFG(id_batch),
     "communicator IDs a master's pool asks for beyond its immediate need, so that later "
     "children are served locally"},
    {"ID_SPACE", CO_CFG_SIZE, "0", CFG(id_space),
     "communicator IDs the root pool owns (0: all 2^60 of them); small values exercise "
     "reclaiming in tests"},
};
const size_t co_settings_count = CO_ARRAY_LEN(co_settings);

long co_parse_size(const char *s, int *ok) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    *ok = 0;
    if (end == s || errno || v < 0) return 0;
    long long mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mul = 1024LL;
        end++;
        break;
    case 'M':
        mul = 1024LL * 1024;
        end++;
        break;
    case 'G':
        mul = 1024LL * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b') end++;
    if (*end == 'B') end++;
    if (*end) return 0;
    *ok = 1;
    return (long)(v * mul);
}

static int parse_bool(const char *s, int *ok) {
    *ok = 1;
    if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on"))
        return 1;
    if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off"))
        return 0;
    *ok = 0;
    return 0;
}

static int set_value(co_config *cfg, const co_setting *s, const char *val) {
    char *p = (char *)cfg + s->offset;
    int ok = 1;
    switch (s->type) {
    case CO_CFG_INT: {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 0);
        if (end == val || *end || errno) return -1;
        if (s->size == sizeof(int))
            *(int *)p = (int)v;
        else
            *(long *)p = v;
        break;
    }
    case CO_CFG_SIZE: {
        long v = co_parse_size(val, &ok);
        if (!ok) return -1;
        *(long *)p = v;
        break;
    }
    case CO_CFG_BOOL: {
        int v = parse_bool(val, &ok);
        if (!ok) return -1;
        *(int *)p = v;
        break;
    }
    case CO_CFG_STR:
        if (strlen(val) >= s->size) return -1;
        strcpy(p, val);
        break;
    }
    return 0;
}

/* Defaults first, then the environment; an unknown COHORT_* variable is most likely a typo,
 * so it is reported rather than silently ignored (COHORT_JOB_* is the launcher's protocol). */
int co_config_load(co_config *cfg, char *err, size_t errlen) {
    extern char **environ;
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < co_settings_count; i++)
        if (set_value(cfg, &co_settings[i], co_settings[i].def)) abort();
    err[0] = 0;
    int rc = 0;
    for (size_t i = 0; i < co_settings_count; i++) {
        char name[64];
        snprintf(name, sizeof(name), "COHORT_%s", co_settings[i].name);
        const char *v = getenv(name);
        if (v && set_value(cfg, &co_settings[i], v)) {
            snprintf(err, errlen, "invalid value '%s' for %s", v, name);
            rc = -1;
        }
    }
    for (char **e = environ; e && *e && !rc; e++) {
        /* COHORT_JOB_*: the launcher's protocol; COHORT_CC/CXX: the compiler wrappers' */
        if (strncmp(*e, "COHORT_", 7) || !strncmp(*e, "COHORT_JOB_", 11) ||
            !strncmp(*e, "COHORT_CC=", 10) || !strncmp(*e, "COHORT_CXX=", 11))
            continue;
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) - 7 : strlen(*e) - 7;
        int known = 0;
        for (size_t i = 0; i < co_settings_count && !known; i++)
            known = strlen(co_settings[i].name) == n && !strncmp(co_settings[i].name, *e + 7, n);
        if (!known) snprintf(err, errlen, "unknown setting %.*s ignored", (int)(n + 7), *e);
    }
    return rc;
}

void co_config_format(const co_config *cfg, const co_setting *s, char *out, size_t len) {
    const char *p = (const char *)cfg + s->offset;
    switch (s->type) {
    case CO_CFG_INT:
        if (s->size == sizeof(int))
            snprintf(out, len, "%d", *(const int *)p);
        else
            snprintf(out, len, "%ld", *(const long *)p);
        break;
    case CO_CFG_SIZE: snprintf(out, len, "%ld", *(const long *)p); break;
    case CO_CFG_BOOL: snprintf(out, len, "%d", *(const int *)p); break;
    case CO_CFG_STR: snprintf(out, len, "%s", p); break;
    }
}
