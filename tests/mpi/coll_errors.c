/* Bad arguments to collectives get a clear error class: null and invalid communicators,
 * invalid roots, negative counts, null types, null/freed/undefined/one-sided-only operators,
 * MPI_IN_PLACE where the standard does not allow it, aliased buffers, and mismatched counts
 * (locally, and between two ranks). Checks that only
 * fail at some ranks are made only there (the others would wait for them); the
 * communicator must keep working afterwards. */
#include "coll_util.h"

#include <time.h>

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)in, (void)inout, (void)len, (void)dt;
}

/* Rank `who` arrives 20 ms late: long enough for a waiting peer to compare signatures, well
 * short of the 100 ms after which a peer whose sizes differ counts as stuck. */
static void late(int me, int who) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    if (me == who) nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int me, np;
    MPI_Comm_rank(w, &me);
    MPI_Comm_size(w, &np);
    int sb[64] = {0}, rb[64 * 64], cnt[64], dsp[64];
    for (int i = 0; i < 64; i++) cnt[i] = 1, dsp[i] = i;
    MPI_Comm bad = (MPI_Comm)0x7654321;

    /* communicators */
    CHECK_ERR(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Barrier(bad), MPI_ERR_COMM);
    CHECK_ERR(MPI_Bcast(sb, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Reduce(sb, rb, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Gatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Scatter(sb, 1, MPI_INT, rb, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Allgatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, bad), MPI_ERR_COMM);
    CHECK_ERR(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, bad), MPI_ERR_COMM);
    CHECK_ERR(MPI_Reduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Reduce_scatter_block(sb, rb, 1, MPI_INT, MPI_SUM, bad), MPI_ERR_COMM);
    CHECK_ERR(MPI_Scan(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_ERR(MPI_Exscan(sb, rb, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    { /* a freed communicator */
        MPI_Comm d, stale;
        CHECK_RC(MPI_Comm_dup(w, &d));
        CHECK_RC(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, d)); /* sets up its segment */
        stale = d;
        CHECK_RC(MPI_Comm_free(&d));
        CHECK_ERR(MPI_Barrier(stale), MPI_ERR_COMM);
        CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_SUM, stale), MPI_ERR_COMM);
    }

    /* roots */
    CHECK_ERR(MPI_Bcast(sb, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Bcast(sb, 1, MPI_INT, np, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Reduce(sb, rb, 1, MPI_INT, MPI_SUM, np, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, -2, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Gatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, np + 5, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Scatter(sb, 1, MPI_INT, rb, 1, MPI_INT, np, w), MPI_ERR_ROOT);
    CHECK_ERR(MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, 1, MPI_INT, MPI_ROOT, w), MPI_ERR_ROOT);

    /* counts */
    CHECK_ERR(MPI_Bcast(sb, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Allreduce(sb, rb, -3, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Reduce(sb, rb, -1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Gather(sb, -1, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Allgather(sb, 1, MPI_INT, rb, -1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Scan(sb, rb, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Exscan(sb, rb, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Reduce_scatter_block(sb, rb, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    cnt[np - 1] = -1;
    CHECK_ERR(MPI_Reduce_scatter(sb, rb, cnt, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Allgatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, w), MPI_ERR_COUNT);
    CHECK_ERR(MPI_Alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, w), MPI_ERR_COUNT);
    if (me == 0) {
        CHECK_ERR(MPI_Gatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, 0, w), MPI_ERR_COUNT);
        CHECK_ERR(MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_COUNT);
    }
    cnt[np - 1] = 1;

    /* types */
    CHECK_ERR(MPI_Bcast(sb, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_DATATYPE_NULL, MPI_SUM, w), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Allgather(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, w), MPI_ERR_TYPE);
    CHECK_ERR(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, (MPI_Datatype)0x1234567, w), MPI_ERR_TYPE);
    /* with a count of 0, MPI_DATATYPE_NULL is a correct argument: there is nothing to move or
     * combine, so no operator is refused for it either */
    {
        MPI_Datatype dn = MPI_DATATYPE_NULL;
        int z0[64] = {0};
        MPI_Request zr;
        CHECK_RC(MPI_Bcast(sb, 0, dn, 0, w));
        CHECK_RC(MPI_Allreduce(sb, rb, 0, dn, MPI_SUM, w));
        CHECK_RC(MPI_Reduce(sb, rb, 0, dn, MPI_PROD, 0, w));
        CHECK_RC(MPI_Scan(sb, rb, 0, dn, MPI_MAX, w));
        CHECK_RC(MPI_Exscan(sb, rb, 0, dn, MPI_BAND, w));
        CHECK_RC(MPI_Reduce_scatter_block(sb, rb, 0, dn, MPI_SUM, w));
        CHECK_RC(MPI_Reduce_scatter(sb, rb, z0, dn, MPI_MAXLOC, w));
        CHECK_RC(MPI_Reduce_local(sb, rb, 0, dn, MPI_LOR));
        /* the v-variants, where every count of a side is 0 (a root that refused its side
         * while the others went ahead left them waiting); the same with a count left is
         * refused on every rank that passes it */
        CHECK_RC(MPI_Gatherv(sb, 0, dn, rb, z0, z0, dn, np - 1, w));
        CHECK_RC(MPI_Scatterv(sb, z0, z0, dn, rb, 0, dn, 0, w));
        CHECK_RC(MPI_Allgatherv(sb, 0, dn, rb, z0, z0, dn, w));
        CHECK_RC(MPI_Alltoallv(sb, z0, z0, dn, rb, z0, z0, dn, w));
        CHECK_RC(MPI_Igatherv(sb, 0, dn, rb, z0, z0, dn, 0, w, &zr));
        CHECK_RC(MPI_Wait(&zr, MPI_STATUS_IGNORE));
        z0[np - 1] = 1;
        CHECK_ERR(MPI_Alltoallv(sb, z0, z0, MPI_INT, rb, z0, z0, dn, w), MPI_ERR_TYPE);
        z0[np - 1] = 0;
        CHECK_RC(MPI_Iallreduce(sb, rb, 0, dn, MPI_SUM, w, &zr));
        CHECK_RC(MPI_Wait(&zr, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Ireduce(sb, rb, 0, dn, MPI_SUM, np - 1, w, &zr));
        CHECK_RC(MPI_Wait(&zr, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Allreduce_init(sb, rb, 0, dn, MPI_MIN, w, MPI_INFO_NULL, &zr));
        for (int i = 0; i < 2; i++) {
            CHECK_RC(MPI_Start(&zr));
            CHECK_RC(MPI_Wait(&zr, MPI_STATUS_IGNORE));
        }
        CHECK_RC(MPI_Request_free(&zr));
    }

    /* operators */
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Reduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, 0, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_MAXLOC, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_DOUBLE_INT, MPI_SUM, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Scan(sb, rb, 1, MPI_FLOAT, MPI_LXOR, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Exscan(sb, rb, 1, MPI_CHAR, MPI_SUM, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Reduce_scatter(sb, rb, cnt, MPI_INT, MPI_NO_OP, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Reduce_scatter_block(sb, rb, 1, MPI_C_BOOL, MPI_MAX, w), MPI_ERR_OP);
    CHECK_ERR(MPI_Reduce_local(sb, rb, 1, MPI_FLOAT, MPI_BOR), MPI_ERR_OP);
    {
        MPI_Op op, stale;
        CHECK_RC(MPI_Op_create(user_fn, 1, &op));
        stale = op;
        CHECK_RC(MPI_Op_free(&op));
        CHECK(op == MPI_OP_NULL, "Op_free did not reset the handle");
        CHECK_ERR(MPI_Allreduce(sb, rb, 1, MPI_INT, stale, w), MPI_ERR_OP);
        CHECK_ERR(MPI_Reduce_local(sb, rb, 1, MPI_INT, stale), MPI_ERR_OP);
        CHECK_ERR(MPI_Op_free(&stale), MPI_ERR_OP);
        MPI_Op sum = MPI_SUM;
        CHECK_ERR(MPI_Op_free(&sum), MPI_ERR_OP);
        int commute;
        CHECK_ERR(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);
        CHECK_ERR(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    }

    /* buffers and MPI_IN_PLACE */
    CHECK_ERR(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Bcast(NULL, 4, MPI_INT, 0, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Allreduce(sb, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Allreduce(rb, rb, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Allreduce(NULL, rb, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Allgather(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Alltoall(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Scan(sb, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Reduce_scatter_block(sb, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    CHECK_ERR(MPI_Reduce_local(MPI_IN_PLACE, rb, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    if (me != 0) { /* MPI_IN_PLACE is for the root only */
        CHECK_ERR(MPI_Reduce(MPI_IN_PLACE, rb, 1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Scatter(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    } else {
        CHECK_ERR(MPI_Gather(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Scatter(MPI_IN_PLACE, 1, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Reduce(rb, rb, 1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_BUFFER);
        /* the same buffer for both sides at the root (a non-root's other side is ignored) */
        int one[] = {1, 1, 1, 1, 1, 1, 1, 1}, zero[8] = {0};
        CHECK_ERR(MPI_Gather(rb, 1, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Scatter(rb, 1, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Gatherv(rb, 1, MPI_INT, rb, one, zero, MPI_INT, 0, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Scatterv(rb, one, zero, MPI_INT, rb, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    }
    {
        int one[] = {1, 1, 1, 1, 1, 1, 1, 1}, zero[8] = {0}, nothing[8] = {0};
        CHECK_ERR(MPI_Allgather(rb, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Alltoall(rb, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Allgatherv(rb, 1, MPI_INT, rb, one, zero, MPI_INT, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Alltoallv(rb, one, zero, MPI_INT, rb, one, zero, MPI_INT, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Reduce_local(rb, rb, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
        /* a rank's own block of the receive buffer as its send buffer (MPI_IN_PLACE meant) */
        int dsp[8];
        for (int i = 0; i < 8; i++) dsp[i] = 2 * i;
        CHECK_ERR(MPI_Allgather(rb + me, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Allgatherv(rb + 2 * me, 1, MPI_INT, rb, one, dsp, MPI_INT, w),
                  MPI_ERR_BUFFER);
        CHECK_ERR(MPI_Alltoall(rb + me, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
        if (me == 0) { /* the root's own block (only the root calls: it fails alone) */
            int dsp2[8];
            for (int i = 0; i < 8; i++) dsp2[i] = 2 * i + 2;
            CHECK_ERR(MPI_Gatherv(rb + 2, 1, MPI_INT, rb, one, dsp2, MPI_INT, 0, w),
                      MPI_ERR_BUFFER);
            CHECK_ERR(MPI_Scatterv(rb, one, dsp2, MPI_INT, rb + 2, 1, MPI_INT, 0, w),
                      MPI_ERR_BUFFER);
        }
        /* nothing sent: no aliasing, and every rank makes the call */
        CHECK_RC(MPI_Alltoallv(rb, nothing, zero, MPI_INT, rb, nothing, zero, MPI_INT, w));
        CHECK_RC(MPI_Reduce_local(rb, rb, 0, MPI_INT, MPI_SUM));
    }

    /* mismatched counts seen locally: my block does not fit my own receive block. Allgather
     * refuses at once (every rank sees it here); Alltoall runs, and every rank gets more than
     * it expects; at the root of Gather and Scatter only the root's own block is too large:
     * the root reports it, the others complete, and the communicator stays usable */
    CHECK_ERR(MPI_Allgather(sb, 2, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_TRUNCATE);
    CHECK_ERR(MPI_Alltoall(sb, 2, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_TRUNCATE);
    CHECK_ERR(MPI_Allgather(sb, 1, MPI_DOUBLE, rb, 1, MPI_INT, w), MPI_ERR_TRUNCATE);
    for (int i = 0; i < 64; i++) sb[i] = 100 + i, rb[i] = -1;
    int grc = MPI_Gather(sb, me == 0 ? 3 : 2, MPI_INT, rb, 2, MPI_INT, 0, w);
    if (me == 0) {
        CHECK_ERR(grc, MPI_ERR_TRUNCATE);
        CHECK(rb[0] == -1 && rb[1] == -1, "the root's own misfit block was written: %d %d", rb[0],
              rb[1]);
        for (int r = 1; r < np; r++)
            CHECK(rb[2 * r] == 100 && rb[2 * r + 1] == 101, "gather from %d: %d %d", r, rb[2 * r],
                  rb[2 * r + 1]);
    } else {
        CHECK_RC(grc);
    }
    for (int i = 0; i < 64; i++) rb[i] = -1;
    grc = MPI_Scatter(sb, 3, MPI_INT, rb, me == 0 ? 2 : 3, MPI_INT, 0, w);
    if (me == 0) {
        CHECK_ERR(grc, MPI_ERR_TRUNCATE);
    } else {
        CHECK_RC(grc);
        CHECK(rb[0] == 100 + 3 * me && rb[2] == 102 + 3 * me, "scatter to %d: %d %d", me, rb[0],
              rb[2]);
    }
    /* nothing to receive: the own block is refused on every rank, at once */
    CHECK_ERR(MPI_Alltoall(sb, 1, MPI_INT, rb, 0, MPI_INT, w), MPI_ERR_TRUNCATE);
    /* the nonblocking root: the same, with the error at completion; then a correct call gets
     * its own data, not what the failed one left behind */
    for (int i = 0; i < 64; i++) sb[i] = 10 * me + i, rb[i] = -1;
    MPI_Request nrq;
    CHECK_RC(MPI_Igather(sb, me == 0 ? 3 : 2, MPI_INT, rb, 2, MPI_INT, 0, w, &nrq));
    grc = MPI_Wait(&nrq, MPI_STATUS_IGNORE);
    if (me == 0)
        CHECK_ERR(grc, MPI_ERR_TRUNCATE);
    else
        CHECK_RC(grc);
    for (int i = 0; i < 64; i++) sb[i] = 1000 + 10 * me + i, rb[i] = -1;
    CHECK_RC(MPI_Igather(sb, 2, MPI_INT, rb, 2, MPI_INT, 0, w, &nrq));
    CHECK_RC(MPI_Wait(&nrq, MPI_STATUS_IGNORE));
    if (me == 0)
        for (int r = 0; r < np; r++)
            CHECK(rb[2 * r] == 1000 + 10 * r, "Igather after a misfit: from %d got %d", r,
                  rb[2 * r]);
    /* MPI_BOTTOM as both buffers, with absolute addresses in the types: not the same memory */
    int mine = 7 + me, *all = malloc(sizeof(int) * (size_t)np);
    MPI_Aint a1, a2;
    MPI_Datatype t1, t2;
    int one1 = 1;
    CHECK_RC(MPI_Get_address(&mine, &a1));
    CHECK_RC(MPI_Get_address(all, &a2));
    CHECK_RC(MPI_Type_create_hindexed(1, &one1, &a1, MPI_INT, &t1));
    CHECK_RC(MPI_Type_commit(&t1));
    CHECK_RC(MPI_Type_contiguous(1, MPI_INT, &t2));
    CHECK_RC(MPI_Type_commit(&t2));
    MPI_Datatype t3;
    CHECK_RC(MPI_Type_create_hindexed(1, (int[]){np}, &a2, MPI_INT, &t3));
    CHECK_RC(MPI_Type_commit(&t3));
    CHECK_RC(MPI_Allgather(MPI_BOTTOM, 1, t1, all, 1, MPI_INT, w));
    for (int r = 0; r < np; r++) CHECK(all[r] == 7 + r, "Allgather from MPI_BOTTOM: %d", all[r]);
    if (np == 1) {
        all[0] = -1;
        CHECK_RC(MPI_Gather(MPI_BOTTOM, 1, t1, MPI_BOTTOM, 1, t3, 0, w));
        CHECK(all[0] == 7, "Gather between MPI_BOTTOMs: %d", all[0]);
    }
    MPI_Type_free(&t1), MPI_Type_free(&t2), MPI_Type_free(&t3);
    free(all);
    int total = 0;
    CHECK_RC(MPI_Allreduce(&me, &total, 1, MPI_INT, MPI_SUM, w));
    CHECK(total == np * (np - 1) / 2, "allreduce after the misfits: %d", total);

    /* mismatched counts between two ranks: a rank that receives more than it expects gets
     * MPI_ERR_TRUNCATE, one that receives less MPI_ERR_COUNT (tests/mpi/coll_mismatch.c has
     * every collective, and counts far enough apart for different algorithms); first with both
     * ranks on time, then with one rank or the other arriving late at every call, so that its peer
     * waits long in the call (or in the next one) and compares signatures: a difference in
     * counts alone must still be left to the data path, which reports it and keeps the
     * communicator usable (slow = -1: nobody late) */
    for (int slow = -1; np == 2 && slow < 2; slow++) {
        for (int i = 0; i < 64; i++) sb[i] = i;
        /* the root of a broadcast may see the mismatch too (scatter_allgather has it
         * receive pieces back), but need not */
        late(me, slow);
        int rc = MPI_Bcast(sb, me == 0 ? 4 : 2, MPI_INT, 0, w);
        if (me == 1)
            CHECK_ERR(rc, MPI_ERR_TRUNCATE);
        else if (rc != MPI_SUCCESS)
            CHECK_ERR(rc, MPI_ERR_COUNT);
        late(me, slow);
        rc = MPI_Gather(sb, me == 1 ? 4 : 2, MPI_INT, rb, 2, MPI_INT, 0, w);
        if (me == 0)
            CHECK_ERR(rc, MPI_ERR_TRUNCATE);
        else
            CHECK_RC(rc);
        late(me, slow);
        rc = MPI_Scatter(sb, 4, MPI_INT, rb, me == 0 ? 4 : 2, MPI_INT, 0, w);
        if (me == 1)
            CHECK_ERR(rc, MPI_ERR_TRUNCATE);
        else
            CHECK_RC(rc);
        /* both ways at once: rank 1 receives more than it expects, rank 0 less. By
         * point-to-point messages rank 1 may get MPI_ERR_COUNT instead: a rank whose receive
         * came out wrong sends nothing more in the call (p2p.c), and rank 0's receive may
         * complete before its send starts. */
        for (int k = 0; k < 2; k++) {
            late(me, slow);
            rc = k == 0
                     ? MPI_Allgather(sb, me == 0 ? 4 : 2, MPI_INT, rb, me == 0 ? 4 : 2, MPI_INT, w)
                     : MPI_Alltoall(sb, me == 0 ? 4 : 2, MPI_INT, rb, me == 0 ? 4 : 2, MPI_INT, w);
            char msg[MPI_MAX_ERROR_STRING];
            int cls = tu_error(rc, msg);
            CHECK(cls == MPI_ERR_COUNT || (me == 1 && cls == MPI_ERR_TRUNCATE),
                  "%s of 4 and 2 ints: rank %d got error class %d (%s)",
                  k ? "Alltoall" : "Allgather", me, cls, msg);
        }
        /* a reader expecting more than the root sends */
        late(me, slow);
        rc = MPI_Bcast(sb, me == 0 ? 2 : 4, MPI_INT, 0, w);
        if (me == 1)
            CHECK_ERR(rc, MPI_ERR_COUNT);
        else if (rc != MPI_SUCCESS)
            CHECK_ERR(rc, MPI_ERR_TRUNCATE);
    }
    /* reductions whose counts differ */
    if (np == 2) {
        int rc = MPI_Allreduce(sb, rb, me == 0 ? 2 : 3, MPI_INT, MPI_SUM, w);
        CHECK(rc != MPI_SUCCESS, "Allreduce with counts 2 and 3 succeeded");
    }

    /* arguments the standard calls not significant at the other ranks are ignored there, even
     * NULL arrays and MPI_IN_PLACE as a Reduce's receive buffer */
    {
        int x = 40 + me, got[64], red = -1, one8[64], dsp8[64];
        for (int i = 0; i < np; i++) one8[i] = 1, dsp8[i] = np - 1 - i;
        for (int nb = 0; nb < 2; nb++) {
            MPI_Request q = MPI_REQUEST_NULL;
            for (int i = 0; i < np; i++) got[i] = -1;
            if (me == 0)
                CHECK_RC(nb ? MPI_Igatherv(&x, 1, MPI_INT, got, one8, dsp8, MPI_INT, 0, w, &q)
                            : MPI_Gatherv(&x, 1, MPI_INT, got, one8, dsp8, MPI_INT, 0, w));
            else
                CHECK_RC(nb ? MPI_Igatherv(&x, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, w, &q)
                            : MPI_Gatherv(&x, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, w));
            CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE));
            for (int r = 0; me == 0 && r < np; r++)
                CHECK(got[np - 1 - r] == 40 + r, "Gatherv with NULL arrays elsewhere: %d",
                      got[np - 1 - r]);
            int y = -1;
            if (me == 0)
                CHECK_RC(nb ? MPI_Iscatterv(got, one8, dsp8, MPI_INT, &y, 1, MPI_INT, 0, w, &q)
                            : MPI_Scatterv(got, one8, dsp8, MPI_INT, &y, 1, MPI_INT, 0, w));
            else
                CHECK_RC(nb ? MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, &y, 1, MPI_INT, 0, w, &q)
                            : MPI_Scatterv(NULL, NULL, NULL, MPI_INT, &y, 1, MPI_INT, 0, w));
            CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE));
            CHECK(y == 40 + me, "Scatterv with NULL arrays elsewhere: %d", y);
        }
        CHECK_RC(MPI_Reduce(&x, me == 0 ? &red : MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, 0, w));
        CHECK(me != 0 || red == 40 * np + np * (np - 1) / 2, "Reduce, MPI_IN_PLACE elsewhere: %d",
              red);
    }

    /* the communicator still works, also when one rank waits long for the other */
    int one = 1, sum = 0;
    late(me, np - 1);
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, w));
    CHECK(sum == np, "sum %d after the errors", sum);
    CHECK_RC(MPI_Barrier(w));
    MPI_Finalize();
    return 0;
}
