/* MPI_Pack / MPI_Unpack / MPI_Pack_size: several packs of different types into one buffer
 * with a running position and their unpacking in order; packed data sent as MPI_PACKED and
 * received as typed data (and the reverse); round trips at sizes from empty to megabytes. */
#include "dtype_ref.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    /* types: a column of doubles, a struct of int/double/char, a subarray of shorts */
    MPI_Datatype col, rec, sub;
    MPI_Type_vector(10, 1, 4, MPI_DOUBLE, &col);
    MPI_Type_create_struct(3, (int[]){2, 1, 3}, (MPI_Aint[]){0, 8, 16},
                           (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &rec);
    MPI_Type_create_subarray(2, (int[]){5, 6}, (int[]){3, 4}, (int[]){1, 1}, MPI_ORDER_FORTRAN,
                             MPI_SHORT, &sub);
    MPI_Type_commit(&col);
    MPI_Type_commit(&rec);
    MPI_Type_commit(&sub);

    double m[40];
    struct r {
        int a[2];
        double b;
        char c[3];
        char pad[5];
    } rs[4];
    short arr[30];
    int ints[5] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 40; i++) m[i] = rank + i * 0.5;
    memset(rs, 0, sizeof(rs));
    for (int i = 0; i < 4; i++) {
        rs[i].a[0] = i;
        rs[i].a[1] = -i;
        rs[i].b = i * 1.25;
        memcpy(rs[i].c, "pq", 3);
    }
    for (int i = 0; i < 30; i++) arr[i] = (short)(100 + i);

    /* pack five things in a row, then unpack them in the same order */
    int s1, s2, s3, s4, total = 0;
    MPI_Pack_size(1, col, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(4, rec, MPI_COMM_WORLD, &s2);
    MPI_Pack_size(1, sub, MPI_COMM_WORLD, &s3);
    MPI_Pack_size(5, MPI_INT, MPI_COMM_WORLD, &s4);
    CHECK(s1 == 80 && s2 == 4 * 19 && s3 == 24 && s4 == 20, "Pack_size %d %d %d %d", s1, s2, s3,
          s4);
    total = s1 + s2 + s3 + s4 + s1;
    char *pk = malloc((size_t)total);
    int pos = 0;
    CHECK_RC(MPI_Pack(m, 1, col, pk, total, &pos, MPI_COMM_WORLD));
    CHECK(pos == 80, "position after the column %d", pos);
    CHECK_RC(MPI_Pack(rs, 4, rec, pk, total, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(arr, 1, sub, pk, total, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(ints, 0, MPI_INT, pk, total, &pos, MPI_COMM_WORLD)); /* nothing */
    CHECK_RC(MPI_Pack(ints, 5, MPI_INT, pk, total, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(m + 1, 1, col, pk, total, &pos, MPI_COMM_WORLD));
    CHECK(pos == total, "position %d after all packs, expected %d", pos, total);
    /* the packed column is the doubles m[0], m[4], ... */
    for (int i = 0; i < 10; i++) {
        double v;
        memcpy(&v, pk + 8 * i, 8);
        CHECK(v == m[4 * i], "packed column element %d", i);
    }

    /* send it as MPI_PACKED; the receiver unpacks piece by piece */
    char *in = malloc((size_t)total);
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(pk, pos, MPI_PACKED, to, 1, in, total, MPI_PACKED, from, 1,
                          MPI_COMM_WORLD, &st));
    int got;
    MPI_Get_count(&st, MPI_PACKED, &got);
    CHECK(got == total, "received %d packed bytes", got);
    double m2[40];
    struct r rs2[4];
    short arr2[30];
    int ints2[5];
    for (int i = 0; i < 40; i++) m2[i] = -1;
    memset(rs2, 0x77, sizeof(rs2));
    memset(arr2, 0, sizeof(arr2));
    pos = 0;
    CHECK_RC(MPI_Unpack(in, total, &pos, m2, 1, col, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(in, total, &pos, rs2, 4, rec, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(in, total, &pos, arr2, 1, sub, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(in, total, &pos, ints2, 5, MPI_INT, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(in, total, &pos, m2 + 1, 1, col, MPI_COMM_WORLD));
    CHECK(pos == total, "unpack position %d", pos);
    for (int i = 0; i < 40; i++) {
        double want = i % 4 < 2 ? from + i * 0.5 : -1;
        CHECK(m2[i] == want, "m2[%d] = %g, expected %g", i, m2[i], want);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(rs2[i].a[0] == i && rs2[i].a[1] == -i && rs2[i].b == i * 1.25 &&
                  !memcmp(rs2[i].c, "pq", 3),
              "record %d", i);
        CHECK((unsigned char)rs2[i].pad[0] == 0x77, "record %d padding untouched", i);
    }
    for (int j = 0; j < 6; j++) /* Fortran order: index (i, j) at i + 5*j */
        for (int i = 0; i < 5; i++) {
            int inside = i >= 1 && i < 4 && j >= 1 && j < 5;
            CHECK(arr2[i + 5 * j] == (inside ? 100 + i + 5 * j : 0), "subarray (%d,%d)", i, j);
        }
    for (int i = 0; i < 5; i++) CHECK(ints2[i] == i + 1, "ints");

    /* typed send, packed receive, unpack; and packed send, typed receive */
    memset(in, 0, (size_t)total);
    CHECK_RC(MPI_Sendrecv(rs, 4, rec, to, 2, in, total, MPI_PACKED, from, 2, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_PACKED, &got);
    CHECK(got == s2, "typed message as packed bytes: %d", got);
    memset(rs2, 0, sizeof(rs2));
    pos = 0;
    CHECK_RC(MPI_Unpack(in, got, &pos, rs2, 4, rec, MPI_COMM_WORLD));
    CHECK(rs2[3].b == 3 * 1.25 && rs2[2].a[1] == -2, "typed -> packed -> unpack");
    pos = 0;
    CHECK_RC(MPI_Pack(arr, 1, sub, pk, total, &pos, MPI_COMM_WORLD));
    memset(arr2, 0, sizeof(arr2));
    CHECK_RC(MPI_Sendrecv(pk, pos, MPI_PACKED, to, 3, arr2, 1, sub, from, 3, MPI_COMM_WORLD, &st));
    CHECK(arr2[6] == 106 && arr2[0] == 0 && arr2[23] == 123 && arr2[24] == 0,
          "packed -> typed receive");

    /* large round trip through a strided layout: Pack then Unpack elsewhere */
    {
        int n = 1 << 18;
        MPI_Datatype big;
        MPI_Type_vector(n, 2, 3, MPI_INT, &big);
        MPI_Type_commit(&big);
        int *a = malloc(sizeof(int) * 3 * (size_t)n), *b = calloc(3 * (size_t)n, sizeof(int));
        for (int i = 0; i < 3 * n; i++) a[i] = i;
        int psz;
        MPI_Pack_size(1, big, MPI_COMM_WORLD, &psz);
        char *p = malloc((size_t)psz);
        pos = 0;
        CHECK_RC(MPI_Pack(a, 1, big, p, psz, &pos, MPI_COMM_WORLD));
        CHECK(pos == 8 * n, "big pack %d", pos);
        pos = 0;
        CHECK_RC(MPI_Unpack(p, psz, &pos, b, 1, big, MPI_COMM_WORLD));
        for (int i = 0; i < 3 * n; i++)
            CHECK(b[i] == (i % 3 == 2 ? 0 : i), "big round trip at %d: %d", i, b[i]);
        free(a);
        free(b);
        free(p);
        MPI_Type_free(&big);
    }

    /* empty packs need no buffers */
    pos = 0;
    CHECK_RC(MPI_Pack(NULL, 0, col, NULL, 0, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(NULL, 0, &pos, NULL, 0, col, MPI_COMM_WORLD));
    CHECK(pos == 0, "empty pack");

    free(pk);
    free(in);
    MPI_Type_free(&col);
    MPI_Type_free(&rec);
    MPI_Type_free(&sub);
    MPI_Finalize();
    return 0;
}
