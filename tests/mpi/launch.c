/* A program whose ranks misbehave on request, for the launcher tests (tests/launcher.sh):
 *   launch MODE [RANK [ARG]]
 * MODE: ok, segv, exit, abort, nofinalize, fataltag, hang, deadlock, nbcdiffer, rootdiffer,
 * stdin, env, spam, affinity, sleep, collsegv (RANK dies by SIGSEGV after ARG rounds of
 * collectives while the others go on with them: small ones through the shared segment, large
 * ones copied straight from its memory), appnum (prints MPI_APPNUM, the working directory,
 * ARG, what the ranks of its program and of the whole job add up to, on communicators split
 * by MPI_APPNUM, and MPI_INFO_ENV's maxprocs and wdir). */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "ok";
    int who = argc > 2 ? atoi(argv[2]) : 0;
    const char *arg = argc > 3 ? argv[3] : "";
    if (!strcmp(mode, "sleep")) { /* no MPI at all: a plain process under mpiexec */
        printf("pid %d\n", (int)getpid());
        fflush(stdout);
        for (;;) pause();
    }
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("pid %d rank %d\n", (int)getpid(), rank);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "ok")) {
        printf("hello from %d of %d\n", rank, size);
    } else if (!strcmp(mode, "segv") || !strcmp(mode, "exit") || !strcmp(mode, "nofinalize")) {
        if (rank == who) {
            if (mode[0] == 's') raise(SIGSEGV);
            if (mode[0] == 'e') exit(atoi(arg));
            return 0; /* leaves without MPI_Finalize */
        }
        if (mode[0] != 'n') /* the others wait in a receive that never completes */
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "collsegv")) {
        enum { BIG = 1 << 18 };
        int rounds = atoi(arg);
        float *a = malloc(BIG * sizeof(float)), *b = malloc(BIG * sizeof(float));
        if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 99); /* not a crash the test could mistake */
        for (int i = 0; i < BIG; i++) a[i] = (float)i;
        for (int k = 0;; k++) {
            if (rank == who && k == rounds) raise(SIGSEGV);
            MPI_Allreduce(&k, &x, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MPI_Bcast(a, BIG, MPI_FLOAT, k % size, MPI_COMM_WORLD);
            MPI_Allreduce(a, b, BIG, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Alltoall(a, BIG / size, MPI_FLOAT, b, BIG / size, MPI_FLOAT, MPI_COMM_WORLD);
        }
    } else if (!strcmp(mode, "abort")) {
        if (rank == who) MPI_Abort(MPI_COMM_WORLD, atoi(arg));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "fataltag")) {
        if (rank == who) MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "hang")) {
        /* rank 0 never sends (it sleeps outside MPI), the others wait for it: a hang, but not
         * a deadlock the watch could call one */
        if (rank == 0)
            for (;;) pause();
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "deadlock")) {
        /* every rank sends a message above the eager limit to the next without receiving */
        char *buf = calloc(1 << 20, 1);
        if (!buf) MPI_Abort(MPI_COMM_WORLD, 99);
        MPI_Send(buf, 1 << 20, MPI_CHAR, (rank + 1) % size, 0, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "nbcdiffer")) {
        /* odd ranks start another nonblocking collective than even ones, both of `who` ints
         * (4 if not given) */
        int n = who > 0 ? who : 4;
        int *in = calloc((size_t)n, sizeof(int)),
            *out = calloc((size_t)n * (size_t)size, sizeof(int));
        MPI_Request r;
        if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 99);
        if (rank % 2)
            MPI_Iallgather(in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD, &r);
        else
            MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (!strcmp(mode, "rootdiffer")) {
        /* the last rank names itself the root of a small broadcast, the others rank 0: every
         * rank may finish it without waiting, and MPI_Finalize reports it */
        int v[4] = {rank, rank, rank, rank};
        MPI_Bcast(v, 4, MPI_INT, rank == size - 1 ? size - 1 : 0, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "stdin")) {
        char buf[4096];
        long lines = 0, bytes = 0;
        ssize_t n;
        while ((n = read(0, buf, sizeof(buf))) > 0) {
            bytes += n;
            for (ssize_t i = 0; i < n; i++) lines += buf[i] == '\n';
        }
        printf("rank %d stdin lines=%ld bytes=%ld\n", rank, lines, bytes);
    } else if (!strcmp(mode, "env")) {
        const char *v = getenv(arg);
        printf("rank %d %s=%s\n", rank, arg, v ? v : "(unset)");
    } else if (!strcmp(mode, "spam")) {
        char payload[201];
        memset(payload, 'a' + rank % 26, 200);
        payload[200] = 0;
        for (int i = 0; i < who; i++) printf("rank=%d line=%d %s\n", rank, i, payload);
    } else if (!strcmp(mode, "affinity")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof(set), &set);
        int first = 0;
        while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set)) first++;
        printf("rank %d cpus=%d\n", rank, CPU_COUNT(&set));
        printf("rank %d first=%d\n", rank, first);
        /* the set as mpiexec --report-bindings writes it: 0-3,8 */
        char list[4096];
        size_t at = 0;
        for (int c = 0; c < CPU_SETSIZE && at + 32 < sizeof(list); c++) {
            if (!CPU_ISSET(c, &set)) continue;
            int e = c;
            while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) e++;
            at += (size_t)(e > c ? sprintf(list + at, "%s%d-%d", at ? "," : "", c, e)
                                 : sprintf(list + at, "%s%d", at ? "," : "", c));
            c = e;
        }
        list[at] = 0;
        printf("rank %d list=%s\n", rank, list);
    } else if (!strcmp(mode, "appnum")) {
        int *app = NULL, flag = 0, sum = 0, mine = 0, n = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
        if (!flag || !app) MPI_Abort(MPI_COMM_WORLD, 98);
        MPI_Allreduce(app, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Comm part;
        MPI_Comm_split(MPI_COMM_WORLD, *app, rank, &part);
        MPI_Allreduce(&rank, &mine, 1, MPI_INT, MPI_SUM, part);
        MPI_Comm_size(part, &n);
        char dir[PATH_MAX], maxprocs[MPI_MAX_INFO_VAL + 1] = "-", wdir[MPI_MAX_INFO_VAL + 1] = "-";
        if (!getcwd(dir, sizeof(dir))) strcpy(dir, "?");
        MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, maxprocs, &flag);
        MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL, wdir, &flag);
        printf("rank %d of %d app %d arg %s dir %s appsum %d part size %d ranksum %d maxprocs %s "
               "wdir %s\n",
               rank, size, *app, arg, dir, sum, n, mine, maxprocs, wdir);
        MPI_Comm_free(&part);
    }
    MPI_Finalize();
    return 0;
}
