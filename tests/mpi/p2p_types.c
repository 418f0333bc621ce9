/* Every predefined datatype through point-to-point, eager and rendezvous sizes: a ring where
 * each rank sends typed values to the next and checks what it received from the previous. */
#include "testutil.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

#define PAIR(name, VT)                                                                             \
    typedef struct {                                                                               \
        VT v;                                                                                      \
        int i;                                                                                     \
    } name;
PAIR(p_float_int, float)
PAIR(p_double_int, double)
PAIR(p_long_int, long)
PAIR(p_2int, int)
PAIR(p_short_int, short)
PAIR(p_ldouble_int, long double)

static int rank, size;

/* Fill/check element i of a scalar type from a value derived from (origin, i). */
#define SCALAR_CASE(MPIT, T)                                                                       \
    do {                                                                                           \
        T *s = malloc(n * sizeof(T)), *r = malloc(n * sizeof(T));                                  \
        for (size_t i = 0; i < n; i++) s[i] = (T)((rank * 7 + i) % 100);                           \
        memset(r, 0, n * sizeof(T));                                                               \
        CHECK_RC(                                                                                  \
            MPI_Sendrecv(s, (int)n, MPIT, to, 1, r, (int)n, MPIT, from, 1, MPI_COMM_WORLD, &st));  \
        for (size_t i = 0; i < n; i++)                                                             \
            CHECK(r[i] == (T)((from * 7 + i) % 100), "%s element %zu of %zu", #MPIT, i, n);        \
        int c;                                                                                     \
        MPI_Get_count(&st, MPIT, &c);                                                              \
        CHECK((size_t)c == n, "%s count %d", #MPIT, c);                                            \
        free(s);                                                                                   \
        free(r);                                                                                   \
    } while (0)

#define PAIR_CASE(MPIT, PT)                                                                        \
    do {                                                                                           \
        PT *s = calloc(n, sizeof(PT)), *r = calloc(n, sizeof(PT));                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            s[i].v = (int)((rank * 3 + i) % 50);                                                   \
            s[i].i = (int)(rank + i);                                                              \
        }                                                                                          \
        CHECK_RC(                                                                                  \
            MPI_Sendrecv(s, (int)n, MPIT, to, 2, r, (int)n, MPIT, from, 2, MPI_COMM_WORLD, &st));  \
        for (size_t i = 0; i < n; i++)                                                             \
            CHECK(r[i].v == (int)((from * 3 + i) % 50) && r[i].i == (int)(from + i),               \
                  "%s element %zu", #MPIT, i);                                                     \
        int c, e;                                                                                  \
        MPI_Get_count(&st, MPIT, &c);                                                              \
        MPI_Get_elements(&st, MPIT, &e);                                                           \
        CHECK((size_t)c == n && (size_t)e == 2 * n, "%s count %d elements %d", #MPIT, c, e);       \
        free(s);                                                                                   \
        free(r);                                                                                   \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Status st;
    static const size_t counts[] = {1, 7, 3000, 70001};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        size_t n = counts[k];
        SCALAR_CASE(MPI_CHAR, char);
        SCALAR_CASE(MPI_SIGNED_CHAR, signed char);
        SCALAR_CASE(MPI_UNSIGNED_CHAR, unsigned char);
        SCALAR_CASE(MPI_BYTE, unsigned char);
        SCALAR_CASE(MPI_SHORT, short);
        SCALAR_CASE(MPI_UNSIGNED_SHORT, unsigned short);
        SCALAR_CASE(MPI_INT, int);
        SCALAR_CASE(MPI_UNSIGNED, unsigned);
        SCALAR_CASE(MPI_LONG, long);
        SCALAR_CASE(MPI_UNSIGNED_LONG, unsigned long);
        SCALAR_CASE(MPI_LONG_LONG_INT, long long);
        SCALAR_CASE(MPI_UNSIGNED_LONG_LONG, unsigned long long);
        SCALAR_CASE(MPI_FLOAT, float);
        SCALAR_CASE(MPI_DOUBLE, double);
        SCALAR_CASE(MPI_LONG_DOUBLE, long double);
        SCALAR_CASE(MPI_WCHAR, wchar_t);
        SCALAR_CASE(MPI_C_BOOL, bool);
        SCALAR_CASE(MPI_INT8_T, int8_t);
        SCALAR_CASE(MPI_INT16_T, int16_t);
        SCALAR_CASE(MPI_INT32_T, int32_t);
        SCALAR_CASE(MPI_INT64_T, int64_t);
        SCALAR_CASE(MPI_UINT8_T, uint8_t);
        SCALAR_CASE(MPI_UINT16_T, uint16_t);
        SCALAR_CASE(MPI_UINT32_T, uint32_t);
        SCALAR_CASE(MPI_UINT64_T, uint64_t);
        SCALAR_CASE(MPI_C_FLOAT_COMPLEX, float _Complex);
        SCALAR_CASE(MPI_C_DOUBLE_COMPLEX, double _Complex);
        SCALAR_CASE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
        SCALAR_CASE(MPI_AINT, MPI_Aint);
        SCALAR_CASE(MPI_OFFSET, MPI_Offset);
        SCALAR_CASE(MPI_COUNT, MPI_Count);
        SCALAR_CASE(MPI_PACKED, unsigned char);
        PAIR_CASE(MPI_FLOAT_INT, p_float_int);
        PAIR_CASE(MPI_DOUBLE_INT, p_double_int);
        PAIR_CASE(MPI_LONG_INT, p_long_int);
        PAIR_CASE(MPI_2INT, p_2int);
        PAIR_CASE(MPI_SHORT_INT, p_short_int);
        PAIR_CASE(MPI_LONG_DOUBLE_INT, p_ldouble_int);
    }
    /* a pair type received as a partial element: Get_count is UNDEFINED, Get_elements 1 */
    {
        p_double_int r;
        double d = 2.5;
        CHECK_RC(MPI_Sendrecv(&d, 1, MPI_DOUBLE, rank, 3, &r, 1, MPI_DOUBLE_INT, rank, 3,
                              MPI_COMM_WORLD, &st));
        int c, e;
        MPI_Get_count(&st, MPI_DOUBLE_INT, &c);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &e);
        CHECK(c == MPI_UNDEFINED && e == 1 && r.v == 2.5, "partial pair: count %d elements %d", c,
              e);
    }
    MPI_Finalize();
    return 0;
}
