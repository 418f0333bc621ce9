/* Bad input to the datatype calls and to communication with bad datatypes: each must return
 * a clear error class under MPI_ERRORS_RETURN, never crash, and leave the library usable. */
#include "testutil.h"

#include <limits.h>
#include <stdint.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype t = MPI_DATATYPE_NULL, vec, freed, uncommitted;
    int bl[2] = {1, 1}, dp[2] = {0, 2};
    MPI_Aint adp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};

    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    MPI_Type_contiguous(3, MPI_INT, &freed);
    MPI_Datatype stale = freed;
    MPI_Type_free(&freed);
    CHECK(freed == MPI_DATATYPE_NULL, "Type_free sets the handle to MPI_DATATYPE_NULL");

    /* negative counts */
    CHECK_ERR(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_hvector(-2, 1, 8, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_indexed(-1, bl, dp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_hindexed(-1, bl, adp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_indexed_block(-1, 1, dp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_hindexed_block(-1, 1, adp, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_struct(-1, bl, adp, types, &t), MPI_ERR_COUNT);

    /* negative blocklengths, NULL arrays, NULL result */
    CHECK_ERR(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_hvector(2, -1, 8, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_indexed(2, (int[]){1, -1}, dp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_hindexed(2, (int[]){-3, 1}, adp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_indexed_block(2, -1, dp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_hindexed_block(2, -1, adp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_struct(2, (int[]){1, -1}, adp, types, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_indexed(2, NULL, dp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_struct(2, bl, NULL, types, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_vector(2, 1, 1, MPI_INT, NULL), MPI_ERR_ARG);

    /* invalid old types: NULL, freed, never created */
    MPI_Datatype bogus = (MPI_Datatype)(MPI_INT + 12345);
    CHECK_ERR(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_contiguous(2, stale, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_contiguous(2, bogus, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_contiguous(2, MPI_COMM_WORLD, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_vector(2, 1, 2, stale, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_dup(stale, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_create_struct(2, bl, adp, (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL}, &t),
              MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_create_struct(2, bl, adp, (MPI_Datatype[]){stale, MPI_INT}, &t),
              MPI_ERR_TYPE);
    /* the MPI-1 names check the same way */
    CHECK_ERR(MPI_Type_hvector(-2, 1, 8, MPI_INT, &t), MPI_ERR_COUNT);
    {
        char msg[MPI_MAX_ERROR_STRING];
        int cls = tu_error(MPI_Type_hvector(2, 1, 8, stale, &t), msg);
        CHECK(cls == MPI_ERR_TYPE && strstr(msg, "MPI_Type_hvector"),
              "MPI_Type_hvector on a freed type: class %d, \"%s\"", cls, msg);
    }
    CHECK_ERR(MPI_Type_hindexed(2, (int[]){-3, 1}, adp, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_hindexed(2, bl, adp, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_struct(2, bl, NULL, types, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_struct(2, bl, adp, (MPI_Datatype[]){MPI_INT, stale}, &t), MPI_ERR_TYPE);
    CHECK(t == MPI_DATATYPE_NULL, "no type was created by a failed call");

    /* subarray arguments */
    int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 1};
    CHECK_ERR(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(-1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, (int[]){0, 5}, sub, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, (int[]){5, 3}, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, (int[]){0, 3}, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, sub, (int[]){3, 1}, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, sub, (int[]){-1, 1}, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, sub, st, 7, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, NULL, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DATATYPE_NULL, &t),
              MPI_ERR_TYPE);

    /* distributed array arguments: a 2x3 grid over a 6x9 array */
    {
        const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
        const int D = MPI_DISTRIBUTE_DFLT_DARG, O = MPI_ORDER_C;
        int g[2] = {6, 9}, di[2] = {B, C}, da[2] = {D, D}, ps[2] = {2, 3};
        CHECK_ERR(MPI_Type_create_darray(0, 0, 2, g, di, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG); /* size */
        CHECK_ERR(MPI_Type_create_darray(6, 6, 2, g, di, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG); /* rank */
        CHECK_ERR(MPI_Type_create_darray(6, -1, 2, g, di, da, ps, O, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 0, g, di, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG); /* ndims */
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, NULL, di, da, ps, O, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, NULL, O, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, ps, 7, MPI_INT, &t),
                  MPI_ERR_ARG); /* order */
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, (int[]){6, 0}, di, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, (int[]){2, 0}, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, (int[]){B, 5}, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, (int[]){D, 0}, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, (int[]){-7, D}, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        /* not distributed, yet 3 processes in that dimension */
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, (int[]){B, N}, da, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        /* blocks of 2 over 2 processes cannot hold 6 rows */
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, (int[]){2, D}, ps, O, MPI_INT, &t),
                  MPI_ERR_ARG);
        /* the grid holds 6 processes, not 4 (nor 12) */
        CHECK_ERR(MPI_Type_create_darray(4, 0, 2, g, di, da, ps, O, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(12, 0, 2, g, di, da, ps, O, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, ps, O, MPI_DATATYPE_NULL, &t),
                  MPI_ERR_TYPE);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, ps, O, stale, &t), MPI_ERR_TYPE);
        CHECK_ERR(MPI_Type_create_darray(6, 0, 2, g, di, da, ps, O, MPI_INT, NULL), MPI_ERR_ARG);
        /* a global array too large for MPI_Aint's byte offsets */
        int huge[3] = {1 << 30, 1 << 30, 1 << 30}, hd[3] = {C, C, C}, ha[3] = {D, D, D};
        CHECK_ERR(
            MPI_Type_create_darray(1, 0, 3, huge, hd, ha, (int[]){1, 1, 1}, O, MPI_DOUBLE, &t),
            MPI_ERR_COUNT);
        CHECK(t == MPI_DATATYPE_NULL, "no type was created by a failed call");
        /* and a good one: block darg that just covers, cyclic darg of 4, NONE with psize 1 */
        CHECK_RC(
            MPI_Type_create_darray(6, 5, 2, g, (int[]){B, C}, (int[]){3, 4}, ps, O, MPI_INT, &t));
        MPI_Type_free(&t);
        CHECK_RC(
            MPI_Type_create_darray(3, 2, 2, g, (int[]){N, B}, da, (int[]){1, 3}, O, MPI_INT, &t));
        MPI_Type_free(&t);
    }

    /* commit and free */
    CHECK_ERR(MPI_Type_commit(NULL), MPI_ERR_ARG);
    t = MPI_DATATYPE_NULL;
    CHECK_ERR(MPI_Type_commit(&t), MPI_ERR_TYPE);
    t = stale;
    CHECK_ERR(MPI_Type_commit(&t), MPI_ERR_TYPE);
    t = MPI_INT;
    CHECK_ERR(MPI_Type_free(&t), MPI_ERR_TYPE);
    CHECK(t == MPI_INT, "a failed free leaves the handle");
    t = MPI_DOUBLE_INT;
    CHECK_ERR(MPI_Type_free(&t), MPI_ERR_TYPE);
    t = MPI_DATATYPE_NULL;
    CHECK_ERR(MPI_Type_free(&t), MPI_ERR_TYPE);
    t = stale;
    CHECK_ERR(MPI_Type_free(&t), MPI_ERR_TYPE); /* double free */
    CHECK_ERR(MPI_Type_free(NULL), MPI_ERR_ARG);

    /* queries */
    int isz, ni, na, nt, comb, len;
    MPI_Aint lb, ext;
    MPI_Count csz;
    char name[MPI_MAX_OBJECT_NAME];
    CHECK_ERR(MPI_Type_size(MPI_DATATYPE_NULL, &isz), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_size(stale, &isz), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_size_x(bogus, &csz), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_extent(stale, &lb, &ext), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_extent(MPI_INT, NULL, &ext), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_get_true_extent(MPI_DATATYPE_NULL, &lb, &ext), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_extent(stale, &ext), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_envelope(stale, &ni, &na, &nt, &comb), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE);
    int ints[3];
    MPI_Datatype dts[1];
    CHECK_ERR(MPI_Type_get_contents(vec, 2, 0, 1, ints, NULL, dts), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_get_contents(vec, 3, 0, 0, ints, NULL, dts), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_get_name(stale, name, &len), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Type_get_name(MPI_INT, NULL, &len), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_set_name(vec, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Get_address(&isz, NULL), MPI_ERR_ARG);
    /* queries work on uncommitted types */
    CHECK_RC(MPI_Type_size(uncommitted, &isz));
    CHECK(isz == 2 * (int)sizeof(int), "size of an uncommitted type");

    /* communication with bad datatypes and counts */
    int buf[64] = {0};
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request req;
    CHECK_ERR(MPI_Send(buf, 1, uncommitted, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Recv(buf, 1, uncommitted, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_ERR_TYPE);
    CHECK_ERR(MPI_Isend(buf, 1, stale, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Irecv(buf, 1, stale, from, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Send(buf, -1, vec, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Recv(buf, -5, vec, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Sendrecv(buf, 1, vec, peer, 0, buf, 1, uncommitted, from, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
              MPI_ERR_TYPE);
    CHECK_ERR(MPI_Send_init(buf, 1, uncommitted, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    MPI_Status status = {0};
    CHECK_ERR(MPI_Get_count(&status, uncommitted, &isz), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Get_elements(&status, stale, &isz), MPI_ERR_TYPE);

    /* Pack / Unpack / Pack_size */
    char pk[256];
    int pos = 0;
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 0, "a failed Pack leaves position");
    pos = 250;
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = 300;
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = -1;
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    pos = 0;
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, -4, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, sizeof(pk), NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack(buf, -1, vec, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Pack(buf, 1, uncommitted, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Pack(buf, 1, stale, pk, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Pack(buf, 1, vec, pk, sizeof(pk), &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Pack(buf, 1, vec, NULL, sizeof(pk), &pos, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* the output overlapping the data: outbuf inside the vector's ints */
    pos = 0;
    CHECK_ERR(MPI_Pack(buf, 1, vec, (char *)buf + 4, 64, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    /* ... but packing into the holes of a sparse type only is fine */
    MPI_Datatype sparse;
    MPI_Type_vector(2, 1, 4, MPI_INT, &sparse); /* ints 0 and 4 */
    MPI_Type_commit(&sparse);
    pos = 0;
    CHECK_RC(MPI_Pack(buf, 1, sparse, (char *)(buf + 1), 8, &pos, MPI_COMM_WORLD));
    MPI_Type_free(&sparse);
    pos = 0;
    CHECK_RC(MPI_Pack(buf, 1, vec, pk, sizeof(pk), &pos, MPI_COMM_WORLD));
    int packed = pos;
    int out[16];
    pos = 0;
    CHECK_ERR(MPI_Unpack(pk, packed - 1, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = 8;
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = packed + 1;
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = 0;
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 2, vec, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = -2;
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_ARG);
    pos = 0;
    CHECK_ERR(MPI_Unpack(pk, -1, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, -1, vec, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 1, uncommitted, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Unpack(pk, packed, NULL, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK_ERR(MPI_Unpack(pk, packed, &pos, out, 1, vec, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Unpack(NULL, packed, &pos, out, 1, vec, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* overlapping Unpack: the packed bytes lie under the output's ints */
    memcpy(buf + 8, pk, (size_t)packed);
    pos = 0;
    CHECK_ERR(MPI_Unpack(buf + 8, packed, &pos, buf, 2, vec, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK_ERR(MPI_Unpack(buf + 8, packed, &pos, buf + 2, 1, vec, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK(pos == 0, "a failed Unpack leaves position");
    CHECK_ERR(MPI_Pack_size(-1, vec, MPI_COMM_WORLD, &isz), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Pack_size(1, vec, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_ERR(MPI_Pack_size(1, uncommitted, MPI_COMM_WORLD, &isz), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Pack_size(1, vec, MPI_COMM_NULL, &isz), MPI_ERR_COMM);
    MPI_Datatype big;
    MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &big);
    MPI_Type_commit(&big);
    CHECK_ERR(MPI_Pack_size(1 << 10, big, MPI_COMM_WORLD, &isz), MPI_ERR_COUNT);
    MPI_Type_free(&big);

    /* types whose size, bounds or extent would not fit in MPI_Aint; large but representable
     * ones are fine (counts up to INT_MAX for contiguous and vector) */
    MPI_Datatype huge, huger;
    CHECK_RC(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &huge)); /* 16 GiB: describable */
    MPI_Count hsz;
    CHECK_RC(MPI_Type_size_x(huge, &hsz));
    CHECK(hsz == (MPI_Count)INT_MAX * 8, "size of INT_MAX doubles: %lld", (long long)hsz);
    CHECK_ERR(MPI_Type_contiguous(INT_MAX, huge, &huger), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_vector(INT_MAX, INT_MAX, INT_MAX, huge, &huger), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_vector(2, 1, INT_MAX, huge, &huger), MPI_ERR_COUNT); /* stride*extent */
    int onebl = 1, bigdisp = INT_MAX;
    CHECK_ERR(MPI_Type_indexed(1, &onebl, &bigdisp, huge, &huger), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_hvector(INT_MAX, 1, (MPI_Aint)1 << 62, MPI_INT, &huger),
              MPI_ERR_COUNT);
    MPI_Aint far[2] = {0, PTRDIFF_MAX - 8}; /* the second copy ends past PTRDIFF_MAX */
    MPI_Datatype two[2] = {huge, huge};
    int twobl[2] = {1, 1};
    CHECK_ERR(MPI_Type_create_struct(2, twobl, far, two, &huger), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Type_create_resized(MPI_INT, ((MPI_Aint)1 << 62), ((MPI_Aint)1 << 62), &huger),
              MPI_ERR_COUNT);
    int sz3[3] = {INT_MAX, INT_MAX, INT_MAX}, sub3[3] = {1, 1, 1}, st3[3] = {0, 0, 0};
    CHECK_ERR(MPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &huger),
              MPI_ERR_COUNT);
    MPI_Type_commit(&huge);
    CHECK_ERR(MPI_Send(buf, INT_MAX, huge, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Type_free(&huge);
    /* more separate pieces than a flattened type may hold: refused, not ground through */
    MPI_Datatype pair, many;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    CHECK_ERR(MPI_Type_vector(1 << 27, 1, 3, pair, &many), MPI_ERR_NO_MEM);
    MPI_Type_free(&pair);

    /* the library still works: one message through the vector */
    for (int i = 0; i < 8; i++) buf[i] = rank * 100 + i;
    memset(out, 0, sizeof(out));
    CHECK_RC(MPI_Sendrecv(buf, 1, vec, peer, 3, out, 1, vec, from, 3, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(out[i] == (i % 2 ? 0 : from * 100 + i), "after errors: out[%d] = %d", i, out[i]);

    MPI_Type_free(&uncommitted);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
