/* mpiexec: starts the ranks of a job on this machine and watches over them. It creates the
 * job segment (an anonymous memfd the ranks inherit), forks one process per rank, forwards
 * their output line by line (optionally tagged with the rank) and standard input to rank 0,
 * and ends the whole job as soon as one rank fails, saying which rank failed and how.
 * `mpiexec -n 1 a : -n 4 b` starts several programs as one job (MPMD): the parts take
 * consecutive ranks of one MPI_COMM_WORLD, and MPI_APPNUM tells a rank which part it is. */
#include "../src/boot/boot.h"
#include "../src/boot/place.h"
#include "../src/core/cohort.h"
#include "../src/xport/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BUF 65536
#define GRACE_MS     1000

typedef struct stream {
    int fd;  /* read end, -1 when closed */
    int out; /* 1 or 2: where the lines go */
    char *buf;
    size_t len;
} stream;

typedef struct rank_proc {
    pid_t pid;
    int running;
    int status;
    stream streams[2]; /* stdout, stderr */
} rank_proc;

/* One part of the command line between colons: a program, its ranks and its own options. */
typedef struct app {
    int n;        /* ranks */
    int n_given;  /* -n was given */
    int first;    /* its first rank */
    char **argv;  /* program and its arguments (NULL-terminated) */
    char **xvars; /* -x and -env: VAR=VALUE, or VAR to pass on */
    int nx;
    const char *wdir; /* -wdir: where its ranks start, NULL: mpiexec's own */
} app;

typedef struct job {
    int n; /* ranks in all */
    app *apps;
    int napps;
    int tag_output;
    double timeout;
    co_place_opts place; /* --map-by, --bind-to, --cpus-per-rank... (src/boot/place.h) */
    int report_bindings;
    int ppn;         /* -ppn, --npernode: ranks per machine, 0: not given */
    cpu_set_t *sets; /* where each rank is bound, when bound[rank] */
    int *bound;
    char **xvars; /* -genv, for every part; also the storage of all VAR=VALUE strings */
    int nx;
    co_seg seg;
    int seg_fd;
    rank_proc *ranks;
    int stdin_fd; /* write end to rank 0, -1 if closed */
    char inbuf[65536];
    size_t inlen;
    int failed; /* a rank failed: exit code decided */
    int exit_code;
    int killing; /* SIGTERM sent at kill_started */
    uint64_t kill_started;
    int killed_hard;
    /* the deadlock watch (watch_deadlock) */
    long deadlock_ms;      /* 0: off */
    uint64_t *dl_base;     /* each rank's quiet word when the window began */
    int *dl_bstate;        /* and its state (dl_state) */
    uint64_t dl_since;     /* when the window began */
    uint32_t dl_gen;       /* deadlocks declared */
    uint64_t dl_report_by; /* declared: print the report by then at the latest; 0: not yet */
} job;

static uint64_t now_ms(void) {
    return co_now_ns() / 1000000u;
}

/* ---- Deadlocks --------------------------------------------------------------------------------
 * Every rank that waits long in an MPI call stores its quiet word at each periodic check of
 * the wait (src/core/progress.c): a stretch number that changes whenever the rank has done
 * something since its last check, and a count of checks. The job is deadlocked when, over a
 * window of COHORT_DEADLOCK_MS, no rank's stretch changed and every running rank's checks
 * went up by two or more: after the window began, each one looked at everything it waits for
 * at least once and found nothing, and none of them wrote anything another could find (in
 * shared memory nothing is in flight that a look would miss). Ranks that have finished
 * MPI_Finalize, or exited, count as waiting for nothing; at least one rank must wait. */

/* A rank's state for the watch: its MPI state, or -1 once it has exited. */
static int dl_state(const job *j, int r) {
    return j->ranks[r].running ? atomic_load(&j->seg.ranks[r].state) : -1;
}

/* Whether a rank in state st (dl_state) is done with MPI: it waits for nothing. */
static int dl_done_with_mpi(int st) {
    return st < 0 || st == CO_RANK_FINALIZED;
}

static void dl_restart(job *j, uint64_t now) {
    for (int r = 0; r < j->n; r++) {
        j->dl_bstate[r] = dl_state(j, r);
        j->dl_base[r] = atomic_load_explicit(&j->seg.ranks[r].quiet, memory_order_acquire);
    }
    j->dl_since = now;
}

/* "rank 3", or "rank 3 (launched as rank 1)" for a process that a rank swap gave another
 * world rank than its launch rank (docs/migration.md). */
static const char *rank_name(job *j, int slot, char *buf, size_t len) {
    int w = j->seg.ranks
                ? atomic_load_explicit(&j->seg.ranks[slot].world1, memory_order_acquire) - 1
                : -1;
    if (w < 0 || w == slot)
        snprintf(buf, len, "rank %d", slot);
    else
        snprintf(buf, len, "rank %d (launched as rank %d)", w, slot);
    return buf;
}

static void dl_report(job *j) {
    fflush(stdout);
    fprintf(stderr,
            "mpiexec: deadlock: every rank has waited %ld ms in MPI calls that none of the "
            "others will complete; where each waits:\n",
            j->deadlock_ms);
    for (int r = 0; r < j->n; r++) {
        int st = dl_state(j, r);
        char name[64];
        rank_name(j, r, name, sizeof(name));
        if (dl_done_with_mpi(st))
            fprintf(stderr, "mpiexec:   %s: %s\n", name,
                    st < 0 ? "has exited" : "has finished MPI_Finalize");
        else if (atomic_load_explicit(&j->seg.ranks[r].dl_ack, memory_order_acquire) == j->dl_gen)
            fprintf(stderr, "mpiexec:   %s: %.*s\n", name, CO_SEG_NOTE, co_seg_note(&j->seg, r));
        else
            fprintf(stderr, "mpiexec:   %s: (did not say)\n", name);
    }
    fflush(stderr);
    atomic_store_explicit(&j->seg.hdr->dl_done, j->dl_gen, memory_order_release);
    j->dl_report_by = 0;
}

/* Called on every turn of the event loop (at least every DL_TICK_MS). */
#define DL_TICK_MS 50
static void watch_deadlock(job *j) {
    if (!j->deadlock_ms || j->killing || !j->dl_base || !j->dl_bstate) return;
    uint64_t now = now_ms();
    if (j->dl_report_by) { /* declared: report once every waiting rank has said where it waits */
        int all = 1;
        for (int r = 0; r < j->n && all; r++)
            if (!dl_done_with_mpi(dl_state(j, r)) &&
                atomic_load_explicit(&j->seg.ranks[r].dl_ack, memory_order_acquire) != j->dl_gen)
                all = 0;
        if (all || now >= j->dl_report_by) {
            dl_report(j);
            dl_restart(j, now);
        }
        return;
    }
    int waiting = 0, quiet = 1;
    for (int r = 0; r < j->n; r++) {
        int st = dl_state(j, r);
        uint64_t q = atomic_load_explicit(&j->seg.ranks[r].quiet, memory_order_acquire);
        /* a rank that has done something since the window began: finished MPI_Finalize or
         * exited, too, for it may have sent or entered a call on its way */
        if (st != j->dl_bstate[r] || co_quiet_stretch(q) != co_quiet_stretch(j->dl_base[r]) ||
            st == CO_RANK_NEW || st == CO_RANK_ABORTED) {
            dl_restart(j, now);
            return;
        }
        if (dl_done_with_mpi(st)) continue; /* since before the window */
        if (co_quiet_checks(q) < co_quiet_checks(j->dl_base[r]) + 2u) quiet = 0;
        waiting++;
    }
    if (!waiting || !quiet || now - j->dl_since < (uint64_t)j->deadlock_ms) return;
    j->dl_gen++;
    j->dl_report_by = now + 2000;
    atomic_store_explicit(&j->seg.hdr->dl_gen, j->dl_gen, memory_order_release);
}

/* About 31 years: anything larger is a mistake, and its milliseconds must fit an int64_t. */
#define MAX_TIMEOUT 1e9

/* A number of seconds from 0 to MAX_TIMEOUT in v; -1 if v is anything else. */
static int seconds(const char *v, double *t) {
    char *end;
    *t = strtod(v, &end);
    return end == v || *end || !(*t >= 0 && *t <= MAX_TIMEOUT) ? -1 : 0;
}

static void usage(FILE *f) {
    fprintf(f, "usage: mpiexec -n N [options] program [args...] [: -n M [options] program2 "
               "[args...]]...\n"
               "  -n, -np N            number of ranks (default 1)\n"
               "  --tag-output         prefix every output line with [rank]\n"
               "  --timeout S          end the job after S seconds (exit status 124); without\n"
               "                       it, MPIEXEC_TIMEOUT in the environment, if set\n"
               "  --bind-to LEVEL      bind each rank to its core (the default when ranks <= "
               "cores,\n"
               "                       or when they divide evenly: consecutive ranks share one),\n"
               "                       or its hwthread, l2cache, l3cache, numa node or socket;\n"
               "                       none: not at all\n"
               "  --map-by LEVEL[:PE=N] deal ranks in order (slot, core: the default) or in turn\n"
               "                       over l2cache, l3cache, numa, socket; ppr:N:LEVEL puts N\n"
               "                       on each; PE=N gives each rank N cores\n"
               "  --cpus-per-rank N    the same as PE=N (default: OMP_NUM_THREADS, if set)\n"
               "  --report-bindings    say where each rank is bound, on stderr\n"
               "  --use-hwthread-cpus, --nooversubscribe, --rank-by LEVEL: as in Open MPI\n"
               "  -ppn N               ranks per machine: with no -n, N ranks\n"
               "  -x VAR[=VALUE]       set (or pass on) an environment variable for the ranks\n"
               "  -env VAR VALUE       the same as -x VAR=VALUE\n"
               "  -genv VAR VALUE      the same, for the ranks of every program\n"
               "  -wdir DIR            start the ranks in DIR\n"
               "  -host H[,H...], -hostfile FILE\n"
               "                       accepted when every host named is this machine\n"
               "  --version            print the version\n"
               "Programs separated by ':' run as one job, with consecutive ranks; -n, -x, -env\n"
               "and -wdir apply to their own program, the other options to the whole job.\n"
               "Ranks inherit the environment. Settings: see `cohort info`.\n");
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* our own output is gone: nothing sensible left to do */
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Emit one line (without its newline), tagged if asked. */
static void emit_line(job *j, int rank, int out, const char *p, size_t n) {
    char tag[32];
    if (j->tag_output) {
        int t = snprintf(tag, sizeof(tag), "[%d] ", rank);
        char *line = malloc((size_t)t + n + 1);
        if (!line) return;
        memcpy(line, tag, (size_t)t);
        memcpy(line + t, p, n);
        line[(size_t)t + n] = '\n';
        write_all(out, line, (size_t)t + n + 1);
        free(line);
    } else {
        /* one write per line keeps lines whole even when several ranks print at once */
        char *line = malloc(n + 1);
        if (!line) return;
        memcpy(line, p, n);
        line[n] = '\n';
        write_all(out, line, n + 1);
        free(line);
    }
}

/* Read what a rank wrote; forward each complete line. At EOF, flush a last partial line. */
static void pump(job *j, int rank, stream *s) {
    char chunk[16384];
    ssize_t r = read(s->fd, chunk, sizeof(chunk));
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (r <= 0) {
        if (s->len) emit_line(j, rank, s->out, s->buf, s->len);
        s->len = 0;
        close(s->fd);
        s->fd = -1;
        return;
    }
    char *nb = realloc(s->buf, s->len + (size_t)r);
    if (!nb) return;
    s->buf = nb;
    memcpy(s->buf + s->len, chunk, (size_t)r);
    s->len += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++) {
        if (s->buf[i] == '\n') {
            emit_line(j, rank, s->out, s->buf + start, i - start);
            start = i + 1;
        }
    }
    if (s->len - start >= LINE_MAX_BUF) { /* a huge line without newline: pass it on */
        emit_line(j, rank, s->out, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

static void kill_all(job *j, int sig) {
    for (int i = 0; i < j->n; i++)
        if (j->ranks[i].running && j->ranks[i].pid > 0) kill(j->ranks[i].pid, sig);
}

static void start_killing(job *j) {
    if (j->killing) return;
    j->killing = 1;
    j->kill_started = now_ms();
    kill_all(j, SIGTERM);
}

/* Decide what a rank's end means. The first failure sets mpiexec's exit status and ends the
 * rest of the job; ranks we ended ourselves are not failures of their own. */
static void rank_exited(job *j, int rank, int status) {
    rank_proc *p = &j->ranks[rank];
    p->running = 0;
    p->status = status;
    if (j->failed && j->killing) return;
    int state = atomic_load(&j->seg.ranks[rank].state);
    char what[256];
    int code = 0;
    if (state == CO_RANK_ABORTED) {
        code = j->seg.ranks[rank].abort_code;
        int kind = j->seg.ranks[rank].abort_kind;
        if (kind == CO_ABORT_CALLED)
            snprintf(what, sizeof(what), "called MPI_Abort with error code %d", code);
        else if (kind == CO_ABORT_FATAL_ERROR)
            snprintf(what, sizeof(what), "stopped by a fatal MPI error (%s)",
                     co_error_class_name(code));
        else
            snprintf(what, sizeof(what), "stopped by an internal error");
        if (code == 0) code = 1;
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(what, sizeof(what), "killed by signal %d (%s)", sig, strsignal(sig));
        code = 128 + sig;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        code = WEXITSTATUS(status);
        snprintf(what, sizeof(what), "exited with status %d", code);
    } else if (state == CO_RANK_RUNNING) {
        code = 1;
        snprintf(what, sizeof(what), "exited without calling MPI_Finalize");
    } else if (state == CO_RANK_FINALIZING) {
        code = 1;
        snprintf(what, sizeof(what), "exited before MPI_Finalize had finished");
    } else {
        return; /* a clean exit */
    }
    if (j->failed) return;
    j->failed = 1;
    j->exit_code = code > 255 ? 255 : code;
    fflush(stdout);
    char name[64];
    fprintf(stderr, "mpiexec: %s (pid %d) %s\n", rank_name(j, rank, name, sizeof(name)),
            (int)p->pid, what);
    int others = 0;
    for (int i = 0; i < j->n; i++) others += j->ranks[i].running;
    if (others)
        fprintf(stderr, "mpiexec: ending the other %d rank%s\n", others, others == 1 ? "" : "s");
    start_killing(j);
}

static const app *app_of(const job *j, int rank) {
    int a = 0;
    while (a + 1 < j->napps && rank >= j->apps[a + 1].first) a++;
    return &j->apps[a];
}

/* The threads a rank's OpenMP runtime will start (the first number of OMP_NUM_THREADS, as the
 * rank will see it), or 1: what it needs cores for. */
static int omp_threads(const job *j, const app *ap) {
    const char *v = NULL;
    for (int pass = 0; pass < 2 && !v; pass++) {
        char **vars = pass ? j->xvars : ap->xvars;
        int n = pass ? j->nx : ap->nx;
        for (int i = n - 1; i >= 0 && !v; i--)
            if (!strncmp(vars[i], "OMP_NUM_THREADS=", 16)) v = vars[i] + 16;
    }
    if (!v) v = getenv("OMP_NUM_THREADS");
    long t = v ? strtol(v, NULL, 10) : 1;
    return t >= 1 && t <= CO_PLACE_MAXCPU ? (int)t : 1;
}

/* Where each rank goes (docs/runtime.md, "Placement"): into j->sets and j->bound; -1 if the
 * placement asked for cannot be made (said). */
static int place_ranks(job *j, const co_config *cfg, int *ncpus) {
    static co_hwtopo topo;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
        CPU_ZERO(&allowed);
        CPU_SET(0, &allowed);
    }
    co_hwtopo_load(&topo, &allowed);
    *ncpus = topo.n > 0 ? topo.n : 1;
    if (!cfg->bind && j->place.bind == CO_PLACE_BIND_UNIT) j->place.bind = -1; /* COHORT_BIND=0 */
    if (j->place.ppr && j->napps == 1 && !j->apps[0].n_given && !j->ppn)
        j->n = j->apps[0].n = j->place.ppr * co_hwtopo_count(&topo, j->place.map);
    j->sets = malloc((size_t)j->n * sizeof(cpu_set_t));
    j->bound = malloc((size_t)j->n * sizeof(int));
    int *pe = malloc((size_t)j->n * sizeof(int));
    if (!j->sets || !j->bound || !pe) {
        fprintf(stderr, "mpiexec: out of memory for %d ranks\n", j->n);
        free(pe);
        return -1;
    }
    for (int r = 0; r < j->n; r++) pe[r] = omp_threads(j, app_of(j, r));
    char err[256];
    int rc = co_place(&topo, &j->place, j->n, pe, j->sets, j->bound, err, sizeof(err));
    free(pe);
    if (rc) fprintf(stderr, "mpiexec: %s\n", err);
    if (rc < 0) return -1;
    for (int r = 0; j->report_bindings && r < j->n; r++) {
        char list[512];
        co_place_format(&j->sets[r], list, sizeof(list));
        fprintf(stderr, "mpiexec: rank %d %s CPU%s %s\n", r,
                j->bound[r] ? "bound to" : "not bound:", CPU_COUNT(&j->sets[r]) == 1 ? "" : "s",
                list);
    }
    return 0;
}

static void set_vars(char **vars, int n) {
    for (int i = 0; i < n; i++) {
        char *eq = strchr(vars[i], '=');
        if (eq) {
            *eq = 0;
            setenv(vars[i], eq + 1, 1);
            *eq = '=';
        }
    }
}

static void child(job *j, int rank, int fds[3], int ncpus, pid_t launcher) {
    const app *ap = app_of(j, rank);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127); /* mpiexec died before we got here */
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    dup2(fds[0], 0);
    dup2(fds[1], 1);
    dup2(fds[2], 2);
    char v[32];
    snprintf(v, sizeof(v), "%d", j->seg_fd);
    setenv("COHORT_JOB_FD", v, 1);
    snprintf(v, sizeof(v), "%d", rank);
    setenv("COHORT_JOB_RANK", v, 1);
    snprintf(v, sizeof(v), "%d", j->n);
    setenv("COHORT_JOB_SIZE", v, 1);
    snprintf(v, sizeof(v), "%d", ncpus);
    setenv("COHORT_JOB_NCPUS", v, 1);
    snprintf(v, sizeof(v), "%d", (int)(ap - j->apps));
    setenv("COHORT_JOB_APPNUM", v, 1);
    snprintf(v, sizeof(v), "%d", ap->n);
    setenv("COHORT_JOB_APPSIZE", v, 1);
    set_vars(j->xvars, j->nx);   /* -genv */
    set_vars(ap->xvars, ap->nx); /* then the program's own */
    if (j->bound[rank]) {
        sched_setaffinity(0, sizeof(cpu_set_t), &j->sets[rank]);
        int first = 0;
        while (!CPU_ISSET(first, &j->sets[rank])) first++;
        j->seg.ranks[rank].cpu = first;
    }
    if (ap->wdir && chdir(ap->wdir)) {
        fprintf(stderr, "mpiexec: rank %d cannot start in '%s': %s\n", rank, ap->wdir,
                strerror(errno));
        _exit(127);
    }
    execvp(ap->argv[0], ap->argv);
    fprintf(stderr, "mpiexec: cannot run '%s': %s\n", ap->argv[0], strerror(errno));
    _exit(127);
}

/* Hosts: Cohort runs a job on this machine only, so -host and a host file are accepted when
 * every host they name is this machine (scripts written for other MPIs often give
 * `-host localhost` or a host file), and refused with a clear message otherwise. A name may
 * carry a slot count (`name:4`, `name slots=4`): it is ignored, since ranks may always
 * outnumber cores here. */
static int host_is_here(const char *name, size_t len) {
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    size_t mylen = strlen(me), myshort = strcspn(me, ".");
    return (len == 9 && !strncmp(name, "localhost", 9)) ||
           (len >= 4 && !strncmp(name, "127.", 4)) || (len == 3 && !strncmp(name, "::1", 3)) ||
           (mylen && len == mylen && !strncmp(name, me, len)) ||
           (myshort && len == myshort && !strncmp(name, me, len));
}

static int hosts_ok(const char *opt, const char *list) {
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        size_t name = len;
        const char *colon = memchr(p, ':', len);
        if (colon && strncmp(p, "::1", 3)) name = (size_t)(colon - p); /* name:slots */
        if (!name || !host_is_here(p, name)) {
            fprintf(stderr,
                    "mpiexec: %s: host '%.*s' is not this machine; Cohort runs a job on one "
                    "machine\n",
                    opt, (int)name, p);
            return 0;
        }
        p += len;
        if (*p == ',') p++;
    }
    return 1;
}

static int hostfile_ok(const char *opt, const char *path) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        if (path)
            fprintf(stderr, "mpiexec: %s needs a readable host file ('%s': %s)\n", opt, path,
                    strerror(errno));
        else
            fprintf(stderr, "mpiexec: %s needs a host file\n", opt);
        return 0;
    }
    char line[1024];
    int ok = 1, lineno = 0;
    while (ok && fgets(line, sizeof(line), f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        size_t len = strcspn(p, " \t\r\n#");
        if (!len) continue; /* empty, or a comment */
        p[len] = 0;
        char where[1100];
        snprintf(where, sizeof(where), "%s (%s, line %d)", opt, path, lineno);
        ok = hosts_ok(where, p);
    }
    fclose(f);
    return ok;
}

/* -x and -env in one part of several set a variable for that part's ranks only; a COHORT_*
 * setting must be alike on every rank (the collectives choose their algorithms from them). */
static int local_var_ok(const job *j, const char *opt, const char *var) {
    if (j->napps < 2 || strncmp(var, "COHORT_", 7)) return 1;
    int len = (int)strcspn(var, "=");
    fprintf(stderr,
            "mpiexec: %s %.*s: with several programs, Cohort's settings must be the same for "
            "every rank; give it with -genv or in the environment\n",
            opt, len, var);
    return 0;
}

/* The positive number an option takes into *out; -1 if val is none (said, `what` per unit). */
static int positive_arg(const char *opt, const char *val, int *out, const char *what) {
    char *end;
    long v = val ? strtol(val, &end, 10) : 0;
    if (!val || *end || v < 1 || v > INT_MAX) {
        fprintf(stderr, "mpiexec: %s needs a positive number of %s\n", opt, what);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* The options of one part, from argv[*pi] up to its program; -1 on an error (said). */
static int parse_options(job *j, app *ap, int argc, char **argv, int *pi, char **xtext) {
    int i = *pi;
    for (; i < argc && argv[i]; i++) {
        const char *a = argv[i];
        if (a[0] != '-') break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-c")) {
            if (positive_arg(a, val, &ap->n, "ranks")) return -1;
            ap->n_given = 1;
            i++;
        } else if (!strcmp(a, "--tag-output") || !strcmp(a, "-tag-output") || !strcmp(a, "-l")) {
            j->tag_output = 1;
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "-timeout")) {
            if (!val || seconds(val, &j->timeout) || j->timeout == 0) {
                fprintf(stderr,
                        "mpiexec: --timeout needs a positive number of seconds (at most "
                        "%.0f)\n",
                        MAX_TIMEOUT);
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--bind-to") || !strcmp(a, "-bind-to") || !strcmp(a, "--map-by") ||
                   !strcmp(a, "-map-by")) {
            char perr[256];
            int bind = a[strspn(a, "-")] == 'b';
            if (!val) {
                fprintf(stderr, "mpiexec: %s needs a value (see --help)\n", a);
                return -1;
            }
            if (bind ? co_place_parse_bind(val, &j->place, perr, sizeof(perr))
                     : co_place_parse_map(val, &j->place, perr, sizeof(perr))) {
                fprintf(stderr, "mpiexec: %s\n", perr);
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--rank-by") || !strcmp(a, "-rank-by")) {
            /* ranks are numbered in the order they are mapped (docs/runtime.md) */
            if (!val || co_place_level(val, strcspn(val, ":"), 1) < 0) {
                fprintf(stderr,
                        "mpiexec: %s needs a level (slot, hwthread, core, l2cache, l3cache, "
                        "numa, socket, package, node)\n",
                        a);
                return -1;
            }
            i++;
        } else if (!strcmp(a, "--cpus-per-rank") || !strcmp(a, "--cpus-per-proc") ||
                   !strcmp(a, "-cpus-per-rank") || !strcmp(a, "-cpus-per-proc")) {
            if (positive_arg(a, val, &j->place.pe, "cores")) return -1;
            i++;
        } else if (!strcmp(a, "--use-hwthread-cpus")) {
            j->place.unit = CO_LVL_HWTHREAD;
        } else if (!strcmp(a, "--nooversubscribe")) {
            j->place.nooversubscribe = 1;
        } else if (!strcmp(a, "--report-bindings") || !strcmp(a, "-report-bindings")) {
            j->report_bindings = 1;
        } else if (!strcmp(a, "-ppn") || !strcmp(a, "--ppn") || !strcmp(a, "-perhost") ||
                   !strcmp(a, "--npernode") || !strcmp(a, "-npernode") || !strcmp(a, "-N")) {
            if (positive_arg(a, val, &j->ppn, "ranks")) return -1;
            i++;
        } else if (!strcmp(a, "-x")) {
            if (!val) {
                fprintf(stderr, "mpiexec: -x needs VAR or VAR=VALUE\n");
                return -1;
            }
            if (!local_var_ok(j, a, val)) return -1;
            ap->xvars[ap->nx++] = argv[++i];
        } else if (!strcmp(a, "-genv") || !strcmp(a, "-env")) { /* MPICH's -x NAME=VALUE */
            if (i + 2 >= argc || !argv[i + 1] || !argv[i + 2] || !argv[i + 1][0] ||
                strchr(argv[i + 1], '=')) {
                fprintf(stderr, "mpiexec: %s needs a NAME and a VALUE\n", a);
                return -1;
            }
            int every_part = !strcmp(a, "-genv");
            if (!every_part && !local_var_ok(j, a, argv[i + 1])) return -1;
            char **list = every_part ? &j->xvars[j->nx++] : &ap->xvars[ap->nx++];
            *list = *xtext;
            *xtext += sprintf(*xtext, "%s=%s", argv[i + 1], argv[i + 2]) + 1;
            i += 2;
        } else if (!strcmp(a, "-wdir") || !strcmp(a, "--wdir") || !strcmp(a, "-wd")) {
            struct stat st;
            if (!val || stat(val, &st) || !S_ISDIR(st.st_mode)) {
                if (val)
                    fprintf(stderr, "mpiexec: %s needs a directory ('%s' is not one)\n", a, val);
                else
                    fprintf(stderr, "mpiexec: %s needs a directory\n", a);
                return -1;
            }
            ap->wdir = argv[++i];
        } else if (!strcmp(a, "-host") || !strcmp(a, "--host") || !strcmp(a, "-H") ||
                   !strcmp(a, "-hosts")) {
            if (!val || !*val) {
                fprintf(stderr, "mpiexec: %s needs a host name\n", a);
                return -1;
            }
            if (!hosts_ok(a, val)) return -1;
            i++;
        } else if (!strcmp(a, "-hostfile") || !strcmp(a, "--hostfile") ||
                   !strcmp(a, "-machinefile") || !strcmp(a, "--machinefile") || !strcmp(a, "-f")) {
            if (!hostfile_ok(a, val)) return -1;
            i++;
        } else if (!strcmp(a, "--oversubscribe") || !strcmp(a, "--allow-run-as-root")) {
            /* accepted for compatibility: always allowed here */
        } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("mpiexec (Cohort) %s\n", COHORT_VERSION_STRING);
            exit(0);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "mpiexec: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
    }
    *pi = i;
    return 0;
}

static int parse_args(job *j, int argc, char **argv) {
    co_place_defaults(&j->place);
    j->napps = 1;
    for (int k = 1; k < argc; k++) j->napps += !strcmp(argv[k], ":");
    j->apps = calloc((size_t)j->napps, sizeof(app));
    /* every list of variables (-genv's, each part's) has room for all arguments, then comes
     * room for the NAME=VALUE strings that -genv and -env build (each fits in the two
     * arguments it comes from) */
    size_t text = 0;
    for (int k = 0; k < argc; k++) text += strlen(argv[k]) + 1;
    j->xvars = calloc(1, (size_t)(j->napps + 1) * (size_t)argc * sizeof(char *) + text);
    if (!j->apps || !j->xvars) {
        fprintf(stderr, "mpiexec: out of memory\n");
        return -1;
    }
    char *xtext = (char *)(j->xvars + (size_t)(j->napps + 1) * (size_t)argc);
    int i = 1;
    for (int a = 0; a < j->napps; a++) {
        app *ap = &j->apps[a];
        ap->n = 1;
        ap->xvars = j->xvars + (size_t)(a + 1) * (size_t)argc;
        int end = i;
        while (end < argc && strcmp(argv[end], ":")) end++;
        if (end < argc) argv[end] = NULL; /* ends this part's arguments */
        if (parse_options(j, ap, end, argv, &i, &xtext)) return -1;
        if (i >= end) {
            if (j->napps > 1)
                fprintf(stderr,
                        "mpiexec: no program given in part %d of %d (parts are "
                        "separated by ':')\n",
                        a + 1, j->napps);
            else
                fprintf(stderr, "mpiexec: no program given\n");
            usage(stderr);
            return -1;
        }
        ap->argv = argv + i;
        ap->first = j->n;
        if (ap->n > INT_MAX - j->n) {
            fprintf(stderr, "mpiexec: too many ranks\n");
            return -1;
        }
        j->n += ap->n;
        i = end + 1;
    }
    if (j->ppn && j->napps == 1 && !j->apps[0].n_given) {
        j->n = j->apps[0].n = j->ppn; /* -ppn N alone: N ranks on the one machine */
    } else if (j->ppn && j->n > j->ppn) {
        fprintf(stderr,
                "mpiexec: -ppn %d: %d ranks would need %d machines; Cohort runs a job on one "
                "machine\n",
                j->ppn, j->n, (int)(((long)j->n + j->ppn - 1) / j->ppn));
        return -1;
    }
    return 0;
}

/* `mpiexec -n N valgrind prog`: memcheck cannot see a peer's process_vm_writev into a rank and
 * reports that data as uninitialised, so single copy goes off for such a job (for all its
 * programs: every rank must choose alike) unless the user has chosen COHORT_CMA (in the
 * environment, with -genv, or with -x or -env when there is one program). */
static int sets_cma(char **vars, int n) {
    for (int i = 0; i < n; i++)
        if (!strncmp(vars[i], "COHORT_CMA", 10) && (vars[i][10] == '=' || !vars[i][10])) return 1;
    return 0;
}
static int valgrind_job(const job *j) {
    if (getenv("COHORT_CMA") || sets_cma(j->xvars, j->nx)) return 0;
    int any = 0;
    for (int a = 0; a < j->napps; a++) {
        const app *ap = &j->apps[a];
        const char *base = strrchr(ap->argv[0], '/');
        if (sets_cma(ap->xvars, ap->nx)) return 0;
        any |= !strcmp(base ? base + 1 : ap->argv[0], "valgrind");
    }
    return any;
}

/* MPIEXEC_TIMEOUT, which Open MPI's and MPICH's launchers read too, when no --timeout was
 * given. Empty or 0 means no limit, as there; -1 if it is anything else but a positive number
 * of seconds. */
static int env_timeout(job *j) {
    const char *v = getenv("MPIEXEC_TIMEOUT");
    if (j->timeout > 0 || !v || !*v) return 0;
    double t;
    if (seconds(v, &t)) {
        fprintf(stderr,
                "mpiexec: MPIEXEC_TIMEOUT='%s' is not a number of seconds from 0 (no limit) to "
                "%.0f\n",
                v, MAX_TIMEOUT);
        return -1;
    }
    j->timeout = t;
    return 0;
}

int main(int argc, char **argv) {
    job J = {0}, *j = &J;
    int bad = parse_args(j, argc, argv);
    if (!bad) bad = env_timeout(j);
    char err[256];
    co_config cfg;
    if (!bad && valgrind_job(j)) setenv("COHORT_CMA", "0", 1);
    if (!bad && co_config_load(&cfg, err, sizeof(err))) {
        fprintf(stderr, "mpiexec: %s\n", err);
        bad = 1;
    }
    int ncpus = 1;
    if (!bad && place_ranks(j, &cfg, &ncpus)) bad = 1;
    if (bad) {
        free(j->xvars);
        free(j->apps);
        free(j->sets);
        free(j->bound);
        return 2;
    }
    /* What a single-copy read costs here decides some of the collectives' choices, which
     * every rank must make alike: measure it once for the whole job (about 50 µs), unless
     * the user has set it. */
    if (j->n > 1 && cfg.cma && !getenv("COHORT_CMA_COST")) {
        long ns = co_shm_cma_probe_ns();
        if (ns > 0) {
            char v[32];
            snprintf(v, sizeof(v), "%ld", ns);
            setenv("COHORT_CMA_COST", v, 1);
        }
    }
    co_seg_params sp = {j->n, cfg.shm_ring_cells, cfg.shm_data_bytes, cfg.eager_limit,
                        cfg.heap_slice};
    j->seg_fd = co_seg_create(&sp, &j->seg, err, sizeof(err));
    if (j->seg_fd < 0) {
        fprintf(stderr, "mpiexec: %s\n", err);
        return 2;
    }

    /* Signals arrive through a signalfd so that the event loop sees them in order. */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);

    j->ranks = calloc((size_t)j->n, sizeof(rank_proc));
    if (!j->ranks || sfd < 0) {
        fprintf(stderr, "mpiexec: out of resources\n");
        return 2;
    }
    j->stdin_fd = -1;
    pid_t self = getpid();
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < j->n; r++) {
        int out[2], errp[2], in[2] = {-1, -1};
        if (pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
            fprintf(stderr, "mpiexec: pipe: %s\n", strerror(errno));
            start_killing(j);
            j->failed = 1;
            j->exit_code = 2;
            break;
        }
        int child_in;
        if (r == 0) {
            if (pipe2(in, O_CLOEXEC)) in[0] = in[1] = -1;
            child_in = in[0];
        } else {
            child_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
        pid_t pid = fork();
        if (pid == 0) {
            int fds[3] = {child_in, out[1], errp[1]};
            child(j, r, fds, ncpus, self);
        }
        close(out[1]);
        close(errp[1]);
        if (child_in >= 0) close(child_in);
        if (pid < 0) {
            fprintf(stderr, "mpiexec: fork: %s\n", strerror(errno));
            close(out[0]);
            close(errp[0]);
            if (in[1] >= 0) close(in[1]);
            j->failed = 1;
            j->exit_code = 2;
            start_killing(j);
            break;
        }
        if (r == 0) {
            j->stdin_fd = in[1];
            if (j->stdin_fd >= 0) fcntl(j->stdin_fd, F_SETFL, O_NONBLOCK);
        }
        j->ranks[r].pid = pid;
        j->ranks[r].running = 1;
        j->ranks[r].streams[0] = (stream){out[0], 1, NULL, 0};
        j->ranks[r].streams[1] = (stream){errp[0], 2, NULL, 0};
    }
    close(j->seg_fd); /* the ranks have their own copies */

    int stdin_open = j->stdin_fd >= 0;
    uint64_t start = now_ms();
    j->deadlock_ms = cfg.deadlock_ms > 0 ? cfg.deadlock_ms : 0;
    if (j->deadlock_ms) {
        j->dl_base = calloc((size_t)j->n, sizeof(*j->dl_base));
        j->dl_bstate = calloc((size_t)j->n, sizeof(*j->dl_bstate));
        if (j->dl_base && j->dl_bstate) dl_restart(j, start);
    }
    struct pollfd *pf = calloc((size_t)j->n * 2 + 3, sizeof(*pf));
    int signalled = 0;
    uint64_t drain_deadline = 0;

    for (;;) {
        int running = 0, open_streams = 0;
        for (int r = 0; r < j->n; r++) {
            running += j->ranks[r].running;
            open_streams += (j->ranks[r].streams[0].fd >= 0) + (j->ranks[r].streams[1].fd >= 0);
        }
        if (!running) {
            /* Output still buffered in pipes arrives promptly; a grandchild that keeps a
             * pipe open must not keep mpiexec alive forever. */
            if (!open_streams) break;
            if (!drain_deadline)
                drain_deadline = now_ms() + 500;
            else if (now_ms() > drain_deadline)
                break;
        }
        int np = 0;
        pf[np++] = (struct pollfd){sfd, POLLIN, 0};
        int stdin_slot = -1, rank0_slot = -1;
        if (stdin_open && j->stdin_fd >= 0) {
            if (j->inlen == 0) {
                stdin_slot = np;
                pf[np++] = (struct pollfd){0, POLLIN, 0};
            } else {
                rank0_slot = np;
                pf[np++] = (struct pollfd){j->stdin_fd, POLLOUT, 0};
            }
        }
        int first_stream = np;
        for (int r = 0; r < j->n; r++)
            for (int k = 0; k < 2; k++)
                pf[np++] = (struct pollfd){j->ranks[r].streams[k].fd, POLLIN, 0};

        watch_deadlock(j);
        int wait_ms = j->deadlock_ms ? DL_TICK_MS : 200;
        if (j->timeout > 0 && !j->killing) {
            int64_t left = (int64_t)(j->timeout * 1000) - (int64_t)(now_ms() - start);
            if (left <= 0) {
                fflush(stdout);
                fprintf(stderr, "mpiexec: job timed out after %g seconds; ending %d rank%s\n",
                        j->timeout, running, running == 1 ? "" : "s");
                if (!j->failed) {
                    j->failed = 1;
                    j->exit_code = 124;
                }
                start_killing(j);
                continue;
            }
            if (left < wait_ms) wait_ms = (int)left;
        }
        if (j->killing && !j->killed_hard) {
            uint64_t since = now_ms() - j->kill_started;
            if (since >= GRACE_MS) {
                kill_all(j, SIGKILL);
                j->killed_hard = 1;
            } else if ((int)(GRACE_MS - since) < wait_ms) {
                wait_ms = (int)(GRACE_MS - since);
            }
        }
        int pr = poll(pf, (nfds_t)np, wait_ms);
        if (pr < 0 && errno != EINTR) break;
        if (pr <= 0) continue;

        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGCHLD) {
                    int status;
                    pid_t pid;
                    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                        for (int r = 0; r < j->n; r++)
                            if (j->ranks[r].pid == pid) rank_exited(j, r, status);
                } else {
                    if (!signalled) {
                        signalled = (int)si.ssi_signo;
                        fprintf(stderr, "mpiexec: received signal %d (%s); ending the job\n",
                                signalled, strsignal(signalled));
                        if (!j->failed) {
                            j->failed = 1;
                            j->exit_code = 128 + signalled;
                        }
                        start_killing(j);
                    } else {
                        kill_all(j, SIGKILL); /* a second signal: no more grace */
                        j->killed_hard = 1;
                    }
                }
            }
        }
        if (stdin_slot >= 0 && (pf[stdin_slot].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(0, j->inbuf, sizeof(j->inbuf));
            if (r > 0) {
                j->inlen = (size_t)r;
            } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(j->stdin_fd);
                j->stdin_fd = -1;
                stdin_open = 0;
            }
        }
        if (rank0_slot >= 0 && (pf[rank0_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(j->stdin_fd, j->inbuf, j->inlen);
            if (w > 0) {
                memmove(j->inbuf, j->inbuf + w, j->inlen - (size_t)w);
                j->inlen -= (size_t)w;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) { /* rank 0 closed stdin */
                close(j->stdin_fd);
                j->stdin_fd = -1;
                stdin_open = 0;
            }
        }
        for (int r = 0, k = first_stream; r < j->n; r++)
            for (int s = 0; s < 2; s++, k++)
                if (pf[k].fd >= 0 && (pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                    pump(j, r, &j->ranks[r].streams[s]);
    }
    free(pf);
    for (int r = 0; r < j->n; r++)
        for (int s = 0; s < 2; s++) {
            if (j->ranks[r].streams[s].fd >= 0) close(j->ranks[r].streams[s].fd);
            free(j->ranks[r].streams[s].buf);
        }
    if (j->stdin_fd >= 0) close(j->stdin_fd);
    co_seg_detach(&j->seg);
    free(j->ranks);
    free(j->xvars);
    free(j->apps);
    free(j->dl_base);
    free(j->dl_bstate);
    free(j->sets);
    free(j->bound);
    return j->failed ? j->exit_code : 0;
}
