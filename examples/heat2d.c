/* 2-D heat diffusion on a square plate, decomposed into horizontal strips, one per rank.
 * Each step exchanges one halo row with each neighbour (MPI_Sendrecv), applies the explicit
 * five-point stencil, and every few steps agrees on the largest change (MPI_Allreduce). The
 * left edge is held hot; the program reports the temperature at the plate's centre, the
 * total heat, and how long the solve took.
 *
 * With -c FILE the job checkpoints its state to FILE every 1000 steps (-e to change) with
 * Cohort's MPIX_Checkpoint, and a job started with the same FILE resumes from the last
 * checkpoint (MPIX_Restart) and ends with the same figures as one that never stopped. -s STEP
 * stops the job after that step, as if it had failed there.
 *
 * With -w STEP, ranks 0 and N-1 (or two others whose strips have one size) swap processes after
 * that step with Cohort's MPIX_Swap_ranks, taking their strips of the plate with them (each
 * process then works on the other's strip), and the job ends with the same figures as one that
 * never swapped.
 *
 * Usage: heat2d [-c FILE [-e EVERY] [-s STEP]] [-w STEP] [N [steps]] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ckpt = NULL;
    int every = 1000, stop_at = 0, swap_at = 0, a = 1;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "-c"))
            ckpt = argv[a + 1];
        else if (!strcmp(argv[a], "-e"))
            every = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-s"))
            stop_at = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-w"))
            swap_at = atoi(argv[a + 1]);
        else
            break;
    }
    int n = argc > a ? atoi(argv[a]) : 512;
    int steps = argc > a + 1 ? atoi(argv[a + 1]) : 2000;
#ifndef COHORT
    if (ckpt || swap_at) {
        if (rank == 0) fprintf(stderr, "heat2d: -c and -w need Cohort's extensions\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#endif
    if (every < 1) every = 1;
    if (n < size) {
        if (rank == 0)
            fprintf(stderr, "heat2d: grid of %d rows is too small for %d ranks\n", n, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* rows [r0, r0+rows) of the n x n interior belong to this rank */
    int rows = n / size + (rank < n % size);
    int r0 = rank * (n / size) + (rank < n % size ? rank : n % size);
    int w = n + 2;
    double *u = calloc((size_t)(rows + 2) * w, sizeof(double));
    double *v = calloc((size_t)(rows + 2) * w, sizeof(double));
    if (!u || !v) MPI_Abort(MPI_COMM_WORLD, 3);
    for (int i = 0; i < rows + 2; i++) u[i * w] = v[i * w] = 100.0; /* hot left edge */
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    const double alpha = 0.24;
    double change = 0;
    int step, first = 1;
    /* what a checkpoint holds besides the two grids: where the solve stands */
    struct {
        int step, u_is_first;
        double change;
    } where = {0, 1, 0};
    double *const grid0 = u, *const grid1 = v;
#ifdef COHORT
    if (ckpt || swap_at) { /* the state a checkpoint saves and a swap moves */
        size_t bytes = (size_t)(rows + 2) * w * sizeof(double);
        MPIX_Checkpoint_register(&where, sizeof(where));
        MPIX_Checkpoint_register(grid0, (MPI_Aint)bytes);
        MPIX_Checkpoint_register(grid1, (MPI_Aint)bytes);
    }
    if (ckpt) {
        int restored = 0;
        MPIX_Restart(MPI_COMM_WORLD, ckpt, &restored);
        if (restored) {
            u = where.u_is_first ? grid0 : grid1;
            v = where.u_is_first ? grid1 : grid0;
            change = where.change;
            first = where.step + 1;
            if (rank == 0) printf("heat2d: resumed after step %d from %s\n", where.step, ckpt);
        }
    }
#endif

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (step = first; step <= steps; step++) {
        MPI_Sendrecv(&u[1 * w], w, MPI_DOUBLE, up, 0, &u[(rows + 1) * w], w, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[rows * w], w, MPI_DOUBLE, down, 1, &u[0], w, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double local = 0;
        for (int i = 1; i <= rows; i++)
            for (int j = 1; j <= n; j++) {
                double c = u[i * w + j];
                double nv = c + alpha * (u[(i - 1) * w + j] + u[(i + 1) * w + j] +
                                         u[i * w + j - 1] + u[i * w + j + 1] - 4 * c);
                v[i * w + j] = nv;
                if (fabs(nv - c) > local) local = fabs(nv - c);
            }
        double *t = u;
        u = v;
        v = t;
        if (step % 50 == 0) {
            MPI_Allreduce(&local, &change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (change < 1e-4) break;
        }
#ifdef COHORT
        if (ckpt && step % every == 0 && step < steps) {
            where.step = step;
            where.u_is_first = u == grid0;
            where.change = change;
            MPIX_Checkpoint(MPI_COMM_WORLD, ckpt);
        }
        if (step == swap_at && size > 1) {
            /* two ranks with strips of one size (a swap moves regions of equal sizes): the
             * first and the last, else two that both have a row more, or both not */
            int pa = 0, pb = size - 1, extra = n % size;
            if (extra == 1) pa = 1;
            if (extra >= 2) pb = extra - 1;
            if (pa >= pb) {
                if (rank == 0) printf("heat2d: no two ranks have strips of one size; no swap\n");
            } else {
                int before = (int)getpid(); /* rank pa's process */
                MPI_Bcast(&before, 1, MPI_INT, pa, MPI_COMM_WORLD);
                where.u_is_first = u == grid0; /* the rank's state: its grids, the current one */
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                int rc = MPIX_Swap_ranks(MPI_COMM_WORLD, pa, pb);
                if (rc != MPI_SUCCESS) {
                    char msg[MPI_MAX_ERROR_STRING];
                    int len;
                    MPI_Error_string(rc, msg, &len);
                    if (rank == 0) fprintf(stderr, "heat2d: %s\n", msg);
                    MPI_Abort(MPI_COMM_WORLD, 4);
                }
                /* this process may hold another rank now: its strip follows from the rank */
                MPI_Comm_rank(MPI_COMM_WORLD, &rank);
                rows = n / size + (rank < n % size);
                r0 = rank * (n / size) + (rank < n % size ? rank : n % size);
                up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
                down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
                u = where.u_is_first ? grid0 : grid1;
                v = where.u_is_first ? grid1 : grid0;
                if (rank == pa)
                    printf("heat2d: after step %d ranks %d and %d swapped processes with their "
                           "strips (rank %d: pid %d -> %d)\n",
                           step, pa, pb, pa, before, (int)getpid());
            }
        }
#endif
        if (step == stop_at) {
            if (rank == 0)
                printf("heat2d: stopped after step %d, as if the job had failed there\n", step);
            free(grid0);
            free(grid1);
            MPI_Finalize();
            return 0;
        }
    }
    double elapsed = MPI_Wtime() - t0;

    double heat = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= n; j++) heat += u[i * w + j];
    double total;
    MPI_Reduce(&heat, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    /* the centre cell lives on one rank; bring it to rank 0 */
    int cr = n / 2, owner = 0;
    for (int r = 0; r < size; r++) {
        int rr = n / size + (r < n % size), s = r * (n / size) + (r < n % size ? r : n % size);
        if (cr >= s && cr < s + rr) owner = r;
    }
    double centre = rank == owner ? u[(cr - r0 + 1) * w + n / 2 + 1] : 0;
    if (owner != 0) {
        if (rank == owner) MPI_Send(&centre, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Recv(&centre, 1, MPI_DOUBLE, owner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double tmax;
    MPI_Reduce(&elapsed, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("heat2d: %dx%d grid on %d ranks, %d steps\n", n, n, size,
               step > steps ? steps : step);
        printf("  centre temperature %.6f, total heat %.3f, last max change %.2e\n", centre, total,
               change);
        int done = (step > steps ? steps : step) - first + 1;
        printf("  solve time %.3f s (%.2f us per step)\n", tmax,
               tmax / (done > 0 ? done : 1) * 1e6);
    }
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
