/* `cohort`: the command-line companion of the library. `cohort info` prints the version, how
 * this copy was built, the transports this machine offers, every COHORT_* setting with its
 * current value, default and meaning, straight from the library's settings table, and every
 * collective's algorithms from the library's registry. `cohort checkpoint FILE` says what a
 * checkpoint holds and checks every part of it. `cohort tune` lists the broadcast trees the
 * tuner remembers, `cohort tune --forget` forgets them. */
#include "../src/core/cohort.h"
#include "../src/ckpt/ckpt.h"
#include "../src/tune/tune.h"
#include "../src/coll/coll.h"
#include "../src/xport/shm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: cohort <command>\n"
            "  info                 version, build, transports and settings\n"
            "  checkpoint FILE      what a checkpoint (MPIX_Checkpoint) holds; checks it "
            "whole\n"
            "  tune [--forget]      the broadcast trees remembered across runs (COHORT_TUNE_DB); "
            "forgets them\n"
            "  settings-markdown    the settings table as Markdown (for the README)\n"
            "  version              the version\n");
}

/* Can a process read a sibling's memory with process_vm_readv here? (Yama, seccomp and
 * container policies can forbid it; Cohort then pipelines large messages instead.) */
static const char *probe_cma(int *ok) {
    static char value = 42;
    *ok = 0;
    char got = 0;
    pid_t pid = fork();
    if (pid == 0) {
        pause();
        _exit(0);
    }
    if (pid < 0) return "unknown";
    struct iovec l = {&got, 1}, r = {&value, 1};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (n == 1 && got == 42) {
        *ok = 1;
        return "available";
    }
    static char msg[96];
    snprintf(msg, sizeof(msg), "not permitted (%s): pipelined copies are used", strerror(e));
    return msg;
}

static void print_settings(const co_config *cfg, int markdown) {
    if (markdown) {
        printf("| Variable | Default | Meaning |\n|---|---|---|\n");
        for (size_t i = 0; i < co_settings_count; i++)
            printf("| `COHORT_%s` | `%s` | %s |\n", co_settings[i].name, co_settings[i].def,
                   co_settings[i].doc);
        return;
    }
    for (size_t i = 0; i < co_settings_count; i++) {
        char val[128];
        co_config_format(cfg, &co_settings[i], val, sizeof(val));
        printf("  COHORT_%-22s = %-10s (default %s)\n      %s\n", co_settings[i].name, val,
               co_settings[i].def, co_settings[i].doc);
    }
}

/* Every collective, the setting that forces its algorithm, and its algorithms (straight from
 * the library's registry; the first one runs everywhere and is the fallback). */
static void print_collectives(const co_config *cfg) {
    int n;
    const co_coll_desc *d = co_coll_registry(&n);
    printf("Collective algorithms (COHORT_<COLLECTIVE>_ALGORITHM=<name> forces one):\n");
    for (int k = 0; k < n; k++) {
        const char *cur = (const char *)cfg + d[k].cfg_offset;
        printf("  %-21s COHORT_%s = %s\n", d[k].name, d[k].setting, cur);
        for (int a = 0; a < d[k].nalgs; a++) {
            const co_coll_alg *al = &d[k].algs[a];
            printf("      %-19s %s%s%s\n", al->name, al->doc,
                   (al->needs & CO_ALG_COMMUTE) ? " [commutative operators]" : "",
                   (al->needs & (CO_ALG_SHM | CO_ALG_CMA)) ? " [shared memory]" : "");
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("Cohort %s (MPI %d.%d)\n", COHORT_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
        return 0;
    }
    if (!strcmp(cmd, "settings-markdown")) {
        print_settings(NULL, 1);
        return 0;
    }
    if (!strcmp(cmd, "info")) {
        co_config cfg;
        char err[256];
        int rc = co_config_load(&cfg, err, sizeof(err));
        printf("Cohort %s, MPI %d.%d\n", COHORT_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
        printf("Build: %s, C compiler %s, %s\n", COHORT_BUILD_TYPE, __VERSION__,
               sizeof(void *) == 8 ? "64-bit" : "32-bit");
        printf("Thread support: up to MPI_THREAD_SERIALIZED\n");
        printf("Transports:\n");
        printf("  shm   shared memory between the ranks of one machine: per-pair queues, "
               "eager limit %ld bytes\n",
               cfg.eager_limit);
        int cma_ok;
        printf("  cma   single-copy large messages (process_vm_readv): %s\n", probe_cma(&cma_ok));
        long ns = cma_ok ? co_shm_cma_probe_ns() : 0;
        if (ns > 0) { /* and what the selection table makes of it */
            size_t shm_max = 0;
            for (size_t b = 1; b <= ((size_t)4 << 20); b *= 2)
                if (co_coll_table_pick(CO_COLL_BCAST, 8, b, 1, ns) == CO_BCAST_SHM) shm_max = b;
            printf("        a 64-byte read takes %ld ns here (%s; mpiexec measures it for every "
                   "job: COHORT_CMA_COST), so a broadcast among 8 ranks goes through shared "
                   "buffers up to %zu KiB\n",
                   ns, ns >= CO_CMA_COSTLY_NS ? "costly" : "cheap", shm_max / 1024);
        }
        if (rc || err[0]) printf("Warning: %s\n", err);
        char cerr[512];
        if (co_coll_check_config(&cfg, cerr, sizeof(cerr))) {
            printf("Error: %s\n", cerr);
            rc = -1;
        }
        printf("Settings (environment variables):\n");
        print_settings(&cfg, 0);
        print_collectives(&cfg);
        return rc ? 1 : 0;
    }
    if (!strcmp(cmd, "checkpoint")) {
        if (argc != 3) {
            fprintf(stderr, "usage: cohort checkpoint FILE\n");
            return 2;
        }
        return co_ckpt_inspect(argv[2], stdout, stderr);
    }
    if (!strcmp(cmd, "tune")) {
        int forget = argc == 3 && !strcmp(argv[2], "--forget");
        if (argc > 3 || (argc == 3 && !forget)) {
            fprintf(stderr, "usage: cohort tune [--forget]\n");
            return 2;
        }
        co_config cfg;
        char err[256], path[1024];
        co_config_load(&cfg, err, sizeof(err));
        const char *db = co_tune_db_path(cfg.tune_db, path, sizeof(path));
        if (!db) {
            printf("broadcast trees are not remembered (COHORT_TUNE_DB=none, or no home "
                   "directory)\n");
            return 0;
        }
        return forget ? co_tune_forget(db, stdout, stderr) : co_tune_list(db, stdout, stderr);
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "cohort: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
