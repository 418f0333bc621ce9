/* Shared by the collective tests: the communicators to run on, a derived type, and
 * deterministic data so that every rank can compute the expected result of any collective
 * by itself. */
#ifndef COLL_UTIL_H
#define COLL_UTIL_H

#include "testutil.h"

#include <stdint.h>

#define MAXCOMMS 6

/* The communicators a test runs on: WORLD, SELF, a dup of WORLD, the two halves of a split
 * with reversed key order, and a split leaving out rank 0 (odd sizes from even ones).
 * Returns how many; `owned` marks which to free. */
static inline int cu_comms(MPI_Comm *comms, int *owned) {
    int n = 0, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comms[n] = MPI_COMM_WORLD, owned[n++] = 0;
    comms[n] = MPI_COMM_SELF, owned[n++] = 0;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comms[n]));
    owned[n++] = 1;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &comms[n]));
    owned[n++] = 1;
    MPI_Comm c;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, rank, &c));
    if (c != MPI_COMM_NULL) comms[n] = c, owned[n++] = 1;
    for (int i = 0; i < n; i++) MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    return n;
}

static inline void cu_free_comms(MPI_Comm *comms, const int *owned, int n) {
    for (int i = 0; i < n; i++)
        if (owned[i]) MPI_Comm_free(&comms[i]);
}

/* A value for element i of rank r's contribution, small enough that sums and products over
 * 8 ranks stay exact in every type used. */
static inline int cu_val(int r, size_t i, int salt) {
    return (int)((r * 7 + (int)(i % 1013) * 3 + salt) % 11) - 3;
}

/* Repeats the first `period` bytes of dst over all n of them (doubling copies, so that filling
 * megabytes costs a few memcpy calls instead of a division per byte). */
static inline void cu_repeat(char *dst, size_t n, size_t period) {
    for (size_t len = period; len < n; len *= 2)
        memcpy(dst + len, dst, len < n - len ? len : n - len);
}

/* Two send buffers of cu_val(r, i, salt) and two receive buffers of 0x5a ^ ((i + rsalt) % 251),
 * n bytes each: the tests that compare two ways of making a call start both alike. */
static inline void cu_fill_pairs(char *sa, char *sb, char *ra, char *rb, size_t n, int r, int salt,
                                 int rsalt) {
    size_t ps = n < 1013 ? n : 1013, pr = n < 251 ? n : 251;
    for (size_t i = 0; i < ps; i++) sa[i] = (char)cu_val(r, i, salt);
    for (size_t i = 0; i < pr; i++) ra[i] = (char)(0x5a ^ (int)((i + (size_t)rsalt) % 251));
    cu_repeat(sa, n, ps);
    cu_repeat(ra, n, pr);
    memcpy(sb, sa, n);
    memcpy(rb, ra, n);
}

/* Strided vector of doubles: 2 of every 3 doubles (a gap after each pair), 3 pairs per
 * element. */
static inline MPI_Datatype cu_vector_type(void) {
    MPI_Datatype t;
    CHECK_RC(MPI_Type_vector(3, 2, 3, MPI_DOUBLE, &t));
    CHECK_RC(MPI_Type_commit(&t));
    return t;
}

static inline void cu_type_free(MPI_Datatype *t) {
    if (*t != MPI_DATATYPE_NULL) MPI_Type_free(t);
}

#endif
