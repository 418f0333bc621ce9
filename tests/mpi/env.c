/* Environment calls: initialisation state, thread level, clocks, names, versions, the
 * predefined attributes, Alloc_mem, and rank/size on WORLD and SELF. Run with an argument
 * naming the thread level to request. */
#include "testutil.h"

#include <limits.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 0, "Initialized before Init");
    MPI_Finalized(&flag);
    CHECK(flag == 0, "Finalized before Init");
    int required = argc > 1 ? atoi(argv[1]) : MPI_THREAD_SINGLE, provided = -1;
    CHECK_RC(MPI_Init_thread(&argc, &argv, required, &provided));
    MPI_Initialized(&flag);
    CHECK(flag == 1, "Initialized after Init");
    /* Cohort serialises nothing itself: it never claims MULTIPLE */
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_SERIALIZED &&
              provided <= (required > MPI_THREAD_SINGLE ? required : MPI_THREAD_SINGLE),
          "provided %d for required %d", provided, required);
    int q;
    MPI_Query_thread(&q);
    CHECK(q == provided, "Query_thread %d vs %d", q, provided);

    int rank, size, r, s;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(rank >= 0 && rank < size, "rank %d size %d", rank, size);
    MPI_Comm_rank(MPI_COMM_SELF, &r);
    MPI_Comm_size(MPI_COMM_SELF, &s);
    CHECK(r == 0 && s == 1, "SELF rank %d size %d", r, s);
    const char *env_size = getenv("COHORT_JOB_SIZE");
    if (env_size) CHECK(atoi(env_size) == size, "size %d but launched with %s", size, env_size);

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 1e-3, "Wtick %g", tick);
    usleep(2000);
    double t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 1e-3, "Wtime did not advance over a 2 ms sleep: %g", t1 - t0);

    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    CHECK_RC(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && (int)strlen(name) == len, "processor name '%s' len %d", name, len);
    int v, sv;
    MPI_Get_version(&v, &sv);
    CHECK(v == 3 && sv == 1 && MPI_VERSION == 3 && MPI_SUBVERSION == 1, "version %d.%d", v, sv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);
    CHECK(strstr(lib, "Cohort") && len == (int)strlen(lib), "library version '%s'", lib);
#ifndef COHORT
    CHECK(0, "COHORT is not defined by mpi.h");
#endif

    int *val, found;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &found));
    CHECK(found && *val >= 32767, "TAG_UB");
    int tag_ub = *val;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &found));
    CHECK(found && (*val == 0 || *val == 1), "WTIME_IS_GLOBAL");
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &found));
    CHECK(found && *val >= size, "UNIVERSE_SIZE %d", found ? *val : -1);
    /* the largest tag works */
    int x = 5, y = 0;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, rank, tag_ub, &y, 1, MPI_INT, rank, tag_ub,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(y == 5, "tag_ub message");

    void *mem = NULL;
    CHECK_RC(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
    CHECK(mem != NULL, "Alloc_mem");
    memset(mem, 1, 1 << 20);
    CHECK_RC(MPI_Free_mem(mem));

    char cname[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_name(MPI_COMM_WORLD, cname, &len);
    CHECK(!strcmp(cname, "MPI_COMM_WORLD"), "world name '%s'", cname);

    CHECK_RC(MPI_Finalize());
    MPI_Finalized(&flag);
    CHECK(flag == 1, "Finalized after Finalize");
    MPI_Initialized(&flag);
    CHECK(flag == 1, "Initialized stays true after Finalize");
    return 0;
}
