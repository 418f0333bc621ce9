/* Handles used wrongly.
 *
 * Freed once too often. Groups and error handlers are shared: a communicator keeps the object
 * its handle names, and MPI_Comm_group or MPI_Comm_get_errhandler hands the
 * program the same handle again. A user operator is kept by the calls that use it after
 * MPI_Op_free. In each case a free beyond what the program was given must be refused with the
 * handle's error class, and must not take away the reference that the communicator or the call
 * holds: the object keeps working after it (before, the extra free released it, and a later call
 * read freed memory). Also datatypes returned by MPI_Type_get_contents, which were refused already.
 *
 * Listed twice. A request twice in the array of MPI_Waitall or MPI_Testall is refused (it would
 * be completed, and freed, twice), and the request is still there to be completed.
 *
 * Used after MPI_Request_free. A request freed while active lives on until it completes, but
 * every call refuses its old handle (a wait that completed it freed it twice).
 *
 * With the argument `sweep`: random calls with random handles (valid ones, stale ones, made-up
 * ones of every kind) and small counts, from fixed seeds: blocking, nonblocking and persistent
 * collectives, point-to-point and probes, completions of arrays of requests, datatypes and
 * packing, communicators (split, create, intercommunicators, topologies), groups, attributes and
 * keys, info objects, neighbourhood collectives and error handlers. Every call must return
 * MPI_SUCCESS or an error class, the process must not crash or wait forever, at least one call in
 * 20 must succeed, and afterwards the predefined objects still work and MPI_Finalize ends cleanly
 * (the sanitizer build checks for reads of freed memory and leaks). On several ranks every rank
 * makes the same calls (see "The sweep" below): a rank left waiting by the others fails the test
 * through mpiexec's deadlock watch. HANDLES_SEED, HANDLES_SEEDS and HANDLES_CALLS choose the
 * seeds (from 1, 4 of them) and the calls per seed (50000); HANDLES_TRACE prints every call. */
#include "testutil.h"

static int handler_calls;
static void count_errors(MPI_Comm *c, int *err, ...) {
    (void)c, (void)err;
    handler_calls++;
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void twice(void) {
    int rank, n, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c)); /* a group of its own */

    /* a group handle given out twice may be freed twice, not a third time */
    MPI_Group g1, g2, g3;
    CHECK_RC(MPI_Comm_group(c, &g1));
    CHECK_RC(MPI_Comm_group(c, &g2));
    g3 = g1;
    CHECK_RC(MPI_Group_free(&g1));
    CHECK(g1 == MPI_GROUP_NULL, "MPI_Group_free left the handle");
    CHECK_RC(MPI_Group_size(g2, &size)); /* one reference left: still valid */
    CHECK_RC(MPI_Group_free(&g2));
    CHECK_ERR(MPI_Group_free(&g3), MPI_ERR_GROUP);
    CHECK_ERR(MPI_Group_size(g3, &size), MPI_ERR_GROUP);
    CHECK_RC(MPI_Comm_group(c, &g1)); /* the communicator's group is still there */
    CHECK_RC(MPI_Group_size(g1, &size));
    CHECK(size == (n + 1 - rank % 2) / 2, "group size %d", size);
    CHECK_RC(MPI_Group_free(&g1));

    /* an error handler: the program's handle goes with MPI_Errhandler_free, the
     * communicator keeps the handler */
    MPI_Errhandler e, stale;
    CHECK_RC(MPI_Comm_create_errhandler(count_errors, &e));
    CHECK_RC(MPI_Comm_set_errhandler(c, e));
    stale = e;
    CHECK_RC(MPI_Errhandler_free(&e));
    CHECK_ERR(MPI_Errhandler_free(&stale), MPI_ERR_ARG);
    CHECK_RC(MPI_Comm_get_errhandler(c, &e)); /* a handle again, for the same handler */
    stale = e;
    CHECK_RC(MPI_Errhandler_free(&e));
    CHECK_ERR(MPI_Errhandler_free(&stale), MPI_ERR_ARG);
    handler_calls = 0;
    int x = 0;
    CHECK(MPI_Send(&x, 1, MPI_INT, n + 5, 0, c) == MPI_ERR_RANK, "bad rank not reported");
    CHECK(handler_calls == 1, "the communicator's handler ran %d times", handler_calls);
    MPI_Errhandler predefined = MPI_ERRORS_RETURN; /* stays however often freed */
    CHECK_RC(MPI_Errhandler_free(&predefined));
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));

    /* a user operator kept by a persistent request after MPI_Op_free */
    MPI_Op op, op_stale;
    MPI_Request rq;
    int in = rank + 1, out = 0;
    CHECK_RC(MPI_Op_create(sum_fn, 1, &op));
    CHECK_RC(MPI_Allreduce_init(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
    op_stale = op;
    CHECK_RC(MPI_Op_free(&op));
    CHECK_ERR(MPI_Op_free(&op_stale), MPI_ERR_OP);
    CHECK_ERR(MPI_Allreduce(&in, &out, 1, MPI_INT, op_stale, MPI_COMM_WORLD), MPI_ERR_OP);
    for (int i = 0; i < 2; i++) {
        CHECK_RC(MPI_Start(&rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(out == n * (n + 1) / 2, "persistent Allreduce with the freed operator: %d", out);
    }
    CHECK_RC(MPI_Request_free(&rq));

    /* datatypes from MPI_Type_get_contents */
    MPI_Datatype inner, outer, got[1], got_stale;
    int ints[3];
    MPI_Aint addrs[1];
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &inner));
    CHECK_RC(MPI_Type_vector(2, 1, 2, inner, &outer));
    CHECK_RC(MPI_Type_get_contents(outer, 3, 0, 1, ints, addrs, got));
    got_stale = got[0];
    CHECK_RC(MPI_Type_free(&got[0]));
    CHECK_ERR(MPI_Type_free(&got_stale), MPI_ERR_TYPE);
    CHECK_RC(MPI_Type_free(&inner));
    CHECK_RC(MPI_Type_commit(&outer));
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, back[8] = {0};
    CHECK_RC(
        MPI_Sendrecv(buf, 1, outer, 0, 0, back, 1, outer, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(back[0] == 1 && back[1] == 2 && back[4] == 5 && back[5] == 6 && back[2] == 0,
          "vector of freed inner type moved wrong data");
    CHECK_RC(MPI_Type_free(&outer));

    /* a request listed twice */
    for (int all = 0; all < 2; all++) {
        MPI_Request two[3];
        int v = -1, flag = 0;
        CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &two[0]));
        CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_SELF));
        two[1] = MPI_REQUEST_NULL;
        two[2] = two[0];
        if (all)
            CHECK_ERR(MPI_Waitall(3, two, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        else
            CHECK_ERR(MPI_Testall(3, two, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        CHECK(two[0] != MPI_REQUEST_NULL && two[0] == two[2], "the refused call changed the array");
        CHECK_RC(MPI_Wait(&two[0], MPI_STATUS_IGNORE));
        CHECK(v == rank, "the receive got %d", v);
        CHECK_ERR(MPI_Wait(&two[2], MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    }

    /* a request freed while still active: the request lives on until it completes, but its
     * handle is gone (before, the handle still worked, and a wait that completed it freed it a
     * second time) */
    int v = -1, flag = 0;
    MPI_Request act, act_stale;
    CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &act));
    act_stale = act;
    CHECK_RC(MPI_Request_free(&act));
    CHECK(act == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    CHECK_ERR(MPI_Test(&act_stale, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Waitall(1, &act_stale, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Cancel(&act_stale), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Request_free(&act_stale), MPI_ERR_REQUEST);
    CHECK_ERR(MPI_Request_get_status(act_stale, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, 8, MPI_COMM_SELF)); /* completes the freed receive */
    CHECK(v == rank, "the freed receive got %d", v);
    CHECK_ERR(MPI_Wait(&act_stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);

    CHECK_RC(MPI_Barrier(c));
    CHECK_RC(MPI_Comm_free(&c));
}

static int copy_attr(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c, (void)k, (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- The sweep ------------------------------------------------------------------------------
 * Every rank draws the same calls from the same seed. On several ranks a call must then be made
 * alike everywhere, or the ranks would wait for each other in different calls, as an erroneous
 * program does (and the deadlock watch would end the job): a made-up handle that names an object
 * on some rank, or a stale one that names unlike objects on different ranks (a slot handed out
 * again once its generation wrapped round), is replaced by the null handle, objects are kept for
 * later calls only when the call succeeded on every rank that has the communicator, groups only
 * when they hold the same processes everywhere, counts and displacements agree between ranks,
 * rooted calls and point-to-point on intercommunicators take MPI_PROC_NULL, and no rank blocks in a
 * wait for a request that another rank may have completed or freed. A private duplicate of
 * MPI_COMM_WORLD, never drawn, keeps the ranks in step. */

static uint64_t rng;
static MPI_Comm priv;
static int nranks, world_rank, trace;
static unsigned draw(unsigned n) {
    return (unsigned)tu_below(&rng, (int)n);
}

/* Handles seen, per kind: comm, datatype, op, request, group, errhandler, info, attribute
 * key, message. */
enum { K_COMM, K_TYPE, K_OP, K_REQ, K_GROUP, K_ERRH, K_INFO, K_KEY, K_MSG, NK };
static int seen[NK][64], nseen[NK], nkept[NK];
static void keep(int k, int h) {
    if (nseen[k] < 64)
        seen[k][nseen[k]++] = h;
    else
        seen[k][nkept[k] % 64] = h;
    nkept[k]++;
}

/* A random value, or one shaped like a handle (kind, generation and slot bits) of any kind. */
static int made_up(void) {
    if (draw(2)) return (int)(draw(1u << 16) << 16 | draw(1u << 16));
    return (int)(draw(32) << 26 | draw(4) << 20 | draw(80));
}

/* The largest of v over the ranks. */
static int most(int v) {
    int all = v;
    if (nranks > 1) CHECK_RC(MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, priv));
    return all;
}

/* Whether every rank has the same v (one exchange: the largest of v and of -v). */
static int alike(int v) {
    int in[2] = {v, -v}, out[2] = {v, -v};
    if (nranks > 1) CHECK_RC(MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, priv));
    return out[0] == -out[1];
}

static int group_hash(MPI_Group g);

/* What handle h of kind k names here, asked without changing it: -1 for nothing, else a value
 * that two ranks share when they hold alike objects. */
static int fingerprint(int k, int h) {
    int x = 0, y = 0;
    MPI_Aint lb, extent;
    MPI_Group g;
    switch (k) {
    case K_COMM:
        if (MPI_Comm_group((MPI_Comm)(intptr_t)h, &g) != MPI_SUCCESS) return -1;
        x = group_hash(g);
        MPI_Group_free(&g);
        MPI_Comm_test_inter((MPI_Comm)(intptr_t)h, &y);
        return (int)(((unsigned)x * 2 + (unsigned)y) & 0x7fffffff);
    case K_TYPE:
        if (MPI_Type_size((MPI_Datatype)(intptr_t)h, &x) != MPI_SUCCESS) return -1;
        MPI_Type_get_extent((MPI_Datatype)(intptr_t)h, &lb, &extent);
        return (int)(((unsigned)x * 65599u + (unsigned)extent * 31u + (unsigned)lb) & 0x7fffffff);
    case K_OP: return MPI_Op_commutative((MPI_Op)(intptr_t)h, &x) == MPI_SUCCESS ? x : -1;
    case K_GROUP:
        return MPI_Group_size((MPI_Group)(intptr_t)h, &x) == MPI_SUCCESS
                   ? group_hash((MPI_Group)(intptr_t)h)
                   : -1;
    case K_REQ:
        return MPI_Request_get_status((MPI_Request)(intptr_t)h, &x, MPI_STATUS_IGNORE) ==
                       MPI_SUCCESS
                   ? 1
                   : -1;
    default: return -1;
    }
}

/* A handle of kind k: one seen (perhaps freed since) or a made-up one; never the sweep's own
 * communicator. On several ranks, the null handle where the ranks' handles would name unlike
 * objects: a made-up one that names an object on some rank, or a stale one whose slot was
 * handed out again (its generation wrapped round) on some ranks only. */
static int any_handle(int k) {
    static const int null[] = {(int)(intptr_t)MPI_COMM_NULL, (int)(intptr_t)MPI_DATATYPE_NULL,
                               (int)(intptr_t)MPI_OP_NULL, (int)(intptr_t)MPI_REQUEST_NULL,
                               (int)(intptr_t)MPI_GROUP_NULL};
    int was_seen = draw(2) && nseen[k];
    int h = was_seen ? seen[k][draw((unsigned)nseen[k])] : made_up();
    if (k == K_COMM && h == (int)(intptr_t)priv) return null[K_COMM];
    if (nranks == 1 || k > K_GROUP || (was_seen && k == K_REQ)) return h;
    int f = fingerprint(k, h);
    if (was_seen ? !alike(f) : most(f) >= 0) return null[k];
    return h;
}

static int valid_class(int rc) {
    int cls = -1;
    if (rc == MPI_SUCCESS) return 1;
    return MPI_Error_class(rc, &cls) == MPI_SUCCESS && cls > MPI_SUCCESS && cls <= MPI_ERR_LASTCODE;
}

/* A user operator safe on any datatype: XOR of the bytes of types without gaps. */
static void mix_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (MPI_Type_size(*t, &size) || MPI_Type_get_true_extent(*t, &lb, &extent) || lb ||
        extent != size)
        return;
    for (long i = 0; i < (long)*len * size; i++) ((char *)inout)[i] ^= ((char *)in)[i];
}

/* A hash of the world ranks of group g, the same on every rank that holds the same group. */
static int group_hash(MPI_Group g) {
    MPI_Group wg;
    int size = 0, in[64], out[64];
    unsigned h = 0;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_Group_size(g, &size);
    for (int i = 0; i < size && i < 64; i++) in[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(g, size < 64 ? size : 64, in, wg, out));
    for (int i = 0; i < size && i < 64; i++) h = h * 31 + (unsigned)out[i] + 1;
    CHECK_RC(MPI_Group_free(&wg));
    return (int)((h * 7 + (unsigned)size) & 0x7fffffff);
}

/* The count, displacement and type arrays of one call. A nonblocking call reads them until it
 * completes, which in the sweep may be never: for those calls they are copied and kept until
 * the end (after MPI_Finalize). */
typedef struct vargs {
    struct vargs *next;
    int cnt[8], dsp[8], bd[8];
    MPI_Aint ad[8];
    MPI_Datatype ta[8];
} vargs;
static vargs *held;
static vargs *hold(const vargs *v) {
    vargs *h = malloc(sizeof(*h));
    CHECK(h != NULL, "out of memory");
    *h = *v;
    h->next = held;
    held = h;
    return h;
}

static void sweep(uint64_t seed, int calls) {
    /* (the middle of the buffers: made types may have negative strides) */
    static int sbuf[4096], rbuf[4096];
    int *sb = sbuf + 2048, *rb = rbuf + 2048;
    char packed[4096];
    rng = seed;
    memset(nseen, 0, sizeof(nseen));
    memset(nkept, 0, sizeof(nkept));
    keep(K_COMM, (int)(intptr_t)MPI_COMM_WORLD);
    keep(K_TYPE, (int)(intptr_t)MPI_INT);
    keep(K_OP, (int)(intptr_t)MPI_SUM);
    keep(K_ERRH, (int)(intptr_t)MPI_ERRORS_RETURN);
    int succeeded = 0;
    for (int it = 0; it < calls; it++) {
        MPI_Comm c = (MPI_Comm)(intptr_t)any_handle(K_COMM);
        MPI_Datatype t = (MPI_Datatype)(intptr_t)any_handle(K_TYPE);
        MPI_Op o = (MPI_Op)(intptr_t)any_handle(K_OP);
        MPI_Request r = (MPI_Request)(intptr_t)any_handle(K_REQ);
        MPI_Group g = (MPI_Group)(intptr_t)any_handle(K_GROUP);
        MPI_Errhandler e = (MPI_Errhandler)(intptr_t)any_handle(K_ERRH);
        MPI_Info in = (MPI_Info)(intptr_t)any_handle(K_INFO);
        MPI_Message msg = (MPI_Message)(intptr_t)any_handle(K_MSG);
        MPI_Request ra[3] = {r, (MPI_Request)(intptr_t)any_handle(K_REQ), MPI_REQUEST_NULL};
        MPI_Status st;
        int key = any_handle(K_KEY), a[4] = {(int)draw(3) - 1, (int)draw(3), (int)draw(5) - 2, 2};
        int root = (int)draw(4) - 1, n = (int)draw(6) - 1, m = n > 3 ? 3 : n, flag, size, rc, pos;
        int tag = (int)draw(3) - 1, d1 = (int)draw(2), d2 = (int)draw(2);
        /* this rank's place in c; on an intercommunicator no root or partner (see above) */
        int csize = 0, crank = 0, inter = 0, nn = n < 0 ? 0 : n;
        if (MPI_Comm_size(c, &csize) == MPI_SUCCESS && csize > 0) {
            MPI_Comm_rank(c, &crank);
            MPI_Comm_test_inter(c, &inter);
        } else {
            csize = 0;
        }
        if (inter) root = MPI_PROC_NULL;
        int dest = root < 0 || !csize ? root : (crank + root) % csize;
        int src = root < 0 || !csize ? root : (crank - root % csize + csize) % csize;
        vargs va, *vh;
        MPI_Aint lb, ext;
        if (MPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS) ext = 4;
        for (int i = 0; i < 8; i++) {
            va.cnt[i] = n, va.dsp[i] = i * nn, va.ta[i] = t;
            va.bd[i] = (int)(i * nn * ext), va.ad[i] = va.bd[i];
        }
        int *cnt = va.cnt, *dsp = va.dsp, *bd = va.bd;
        MPI_Aint *ad = va.ad;
        MPI_Datatype *ta = va.ta;
        MPI_Info ni = MPI_INFO_NULL;
        void *val;
        MPI_Comm nc = MPI_COMM_NULL;
        MPI_Datatype nt = MPI_DATATYPE_NULL;
        MPI_Group ng = MPI_GROUP_NULL;
        int made = -1; /* the kind of handle the call makes, kept if it succeeds everywhere */
        unsigned what = draw(100);
        if (trace) {
            MPI_Group cg;
            int gsz, ch = -1, gh = -1;
            if (MPI_Comm_group(c, &cg) == MPI_SUCCESS) ch = group_hash(cg), MPI_Group_free(&cg);
            if (MPI_Group_size(g, &gsz) == MPI_SUCCESS) gh = group_hash(g);
            fprintf(stderr, "[%d] %d: kind %u comm %x (%x) group %x (%x) ...\n", world_rank, it,
                    what, (unsigned)(intptr_t)c, ch, (unsigned)(intptr_t)g, gh);
        }
        switch (what) {
        case 0: rc = MPI_Bcast(sb, n, t, root, c); break;
        case 1: rc = MPI_Reduce(sb, rb, n, t, o, root, c); break;
        case 2: rc = MPI_Allreduce(d1 ? MPI_IN_PLACE : sb, rb, n, t, o, c); break;
        case 3: rc = MPI_Gather(sb, n, t, rb, n, t, root, c); break;
        case 4: rc = MPI_Scatterv(sb, cnt, dsp, t, rb, n, t, root, c); break;
        case 5: rc = MPI_Exscan(sb, rb, n, t, o, c); break;
        case 6: rc = MPI_Reduce_local(sb, rb, n, t, o); break;
        case 7: rc = MPI_Iallreduce(sb, rb, n, t, o, c, &r), made = K_REQ; break;
        case 8: rc = MPI_Isend(sb, n, t, dest, tag < 0 ? 0 : tag, c, &r), made = K_REQ; break;
        case 9: rc = MPI_Irecv(rb, n, t, src, tag < 0 ? 1 : tag, c, &r), made = K_REQ; break;
        case 10:
            rc = MPI_Allreduce_init(sb, rb, n, t, o, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 11: rc = MPI_Cancel(&r); break;
        case 12: rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE); break;
        case 13: rc = d1 ? MPI_Start(&r) : MPI_Request_free(&r); break;
        case 14: /* of MPI_INT or a made-up type only, so that the buffers stay large enough */
            rc = MPI_Type_contiguous(n, d1 ? MPI_INT : (MPI_Datatype)(intptr_t)made_up(), &nt);
            if (rc == MPI_SUCCESS && d2) MPI_Type_commit(&nt);
            made = K_TYPE;
            break;
        case 15: rc = MPI_Type_free(&t); break;
        case 16:
            if (d1)
                rc = MPI_Op_create(mix_fn, d2, &o), made = K_OP;
            else
                rc = MPI_Op_free(&o);
            break;
        case 17:
            if (d1)
                rc = MPI_Comm_dup(c, &nc), made = K_COMM;
            else
                rc = MPI_Comm_free(&c);
            break;
        case 18: rc = MPI_Comm_split(c, (int)draw(3) - 1, d2, &nc), made = K_COMM; break;
        case 19: rc = MPI_Comm_group(c, &ng), made = K_GROUP; break;
        case 20:
            rc = MPI_Group_size(g, &size);
            if (d1) rc = MPI_Group_free(&g);
            break;
        case 21: rc = MPI_Comm_create(c, g, &nc), made = K_COMM; break;
        case 22:
            rc = d1 ? MPI_Comm_create_errhandler(count_errors, &e) : MPI_Comm_get_errhandler(c, &e);
            made = K_ERRH;
            break;
        case 23: /* (never MPI_ERRORS_ARE_FATAL: the sweep's errors would end the job) */
            if (e == MPI_ERRORS_ARE_FATAL) e = MPI_ERRORS_RETURN;
            rc = d1 ? MPI_Errhandler_free(&e) : MPI_Comm_set_errhandler(c, e);
            break;
        case 24: rc = MPI_Comm_set_attr(c, key, sb); break;
        case 25: rc = MPI_Comm_get_attr(c, key, &val, &flag); break;
        case 26: rc = MPI_Comm_delete_attr(c, key); break;
        case 27:
            if (d1)
                rc = MPI_Comm_create_keyval(d2 ? copy_attr : MPI_COMM_NULL_COPY_FN,
                                            MPI_COMM_NULL_DELETE_FN, &key, NULL),
                made = K_KEY;
            else
                rc = MPI_Comm_free_keyval(&key);
            break;
        case 28: rc = d1 ? MPI_Info_create(&ni) : MPI_Info_dup(in, &ni), made = K_INFO; break;
        case 29: rc = d1 ? MPI_Info_set(in, "k", "v") : MPI_Info_free(&in); break;
        case 30:
            if (d1)
                rc = MPI_Comm_get_info(c, &ni), made = K_INFO;
            else
                rc = MPI_Comm_set_info(c, in);
            break;
        case 31: {
            int dims[2] = {a[0] + 1, 1}, periods[2] = {0, 1};
            rc = MPI_Cart_create(c, (int)draw(3), dims, periods, d1, &nc), made = K_COMM;
            break;
        }
        case 32: rc = MPI_Group_incl(g, m, a, &ng), made = K_GROUP; break;
        case 33: rc = MPI_Group_excl(g, m, a, &ng), made = K_GROUP; break;
        case 34:
            rc = MPI_Group_union(g, (MPI_Group)(intptr_t)any_handle(K_GROUP), &ng);
            made = K_GROUP;
            break;
        case 35: rc = MPI_Type_vector(n, a[1], a[2], MPI_INT, &nt), made = K_TYPE; break;
        case 36: rc = MPI_Type_indexed(m, a + 1, a, MPI_INT, &nt), made = K_TYPE; break;
        case 37: rc = d1 ? MPI_Type_commit(&t) : MPI_Type_size(t, &size); break;
        case 38:
            pos = 0;
            rc = MPI_Pack(sb, n, t, packed, (int)sizeof(packed), &pos, c);
            break;
        case 39: rc = MPI_Iprobe(src, tag, c, &flag, &st); break;
        case 40:
            rc = MPI_Improbe(src, tag < 0 ? 1 : tag, c, &flag, &msg, &st), made = K_MSG;
            if (rc == MPI_SUCCESS && !flag) msg = MPI_MESSAGE_NULL;
            break;
        case 41: rc = MPI_Mrecv(rb, n, t, &msg, &st); break;
        case 42: rc = MPI_Testall((int)draw(4), ra, &flag, MPI_STATUSES_IGNORE); break;
        case 43: rc = MPI_Testany((int)draw(4), ra, &size, &flag, &st); break;
        case 44: rc = MPI_Allgather(d1 ? MPI_IN_PLACE : sb, n, t, rb, n, t, c); break;
        case 45: rc = MPI_Alltoall(d1 ? MPI_IN_PLACE : sb, n, t, rb, n, t, c); break;
        case 46: rc = MPI_Scan(d1 ? MPI_IN_PLACE : sb, rb, n, t, o, c); break;
        case 47: rc = MPI_Reduce_scatter_block(d1 ? MPI_IN_PLACE : sb, rb, n, t, o, c); break;
        case 48: rc = MPI_Reduce_scatter(sb, rb, cnt, t, o, c); break;
        case 49: rc = MPI_Barrier(c); break;
        case 50: rc = MPI_Ibarrier(c, &r), made = K_REQ; break;
        case 51: rc = MPI_Ibcast(sb, n, t, root, c, &r), made = K_REQ; break;
        case 52: rc = MPI_Igather(sb, n, t, rb, n, t, root, c, &r), made = K_REQ; break;
        case 53: rc = MPI_Ialltoall(sb, n, t, rb, n, t, c, &r), made = K_REQ; break;
        case 54: rc = MPI_Bcast_init(sb, n, t, root, c, MPI_INFO_NULL, &r), made = K_REQ; break;
        case 55:
            rc = MPI_Reduce_init(sb, rb, n, t, o, root, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 56: rc = MPI_Startall((int)draw(3), ra); break;
        case 57: /* the new communicator's handle is complete once the request is */
            rc = MPI_Comm_idup(c, &nc, &r);
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            made = K_COMM;
            break;
        case 58: rc = MPI_Sendrecv(sb, n, t, dest, 7, rb, n, t, src, 7, c, &st); break;
        case 59: rc = MPI_Allgatherv(sb, n, t, rb, cnt, dsp, t, c); break;
        case 60: rc = MPI_Alltoallv(sb, cnt, dsp, t, rb, cnt, dsp, t, c); break;
        case 61: rc = MPI_Gatherv(sb, n, t, rb, cnt, dsp, t, root, c); break;
        case 62: rc = MPI_Scatter(sb, n, t, rb, n, t, root, c); break;
        case 63: rc = MPI_Iscan(sb, rb, n, t, o, c, &r), made = K_REQ; break;
        case 64: rc = MPI_Ireduce_scatter_block(sb, rb, n, t, o, c, &r), made = K_REQ; break;
        case 65:
            rc = MPI_Comm_split_type(c, d1 ? MPI_COMM_TYPE_SHARED : (int)draw(3) - 1, 0,
                                     MPI_INFO_NULL, &nc);
            made = K_COMM;
            break;
        case 66: /* from halves of c, or with the leader's own arguments wrong */
            if (csize >= 2 && d1 && !inter) {
                MPI_Comm h;
                rc = MPI_Comm_split(c, crank % 2, 0, &h);
                if (rc == MPI_SUCCESS) {
                    rc = MPI_Intercomm_create(h, 0, c, crank % 2 ? 0 : 1, 5, &nc);
                    MPI_Comm_free(&h);
                }
            } else {
                int me;
                MPI_Comm_rank(MPI_COMM_WORLD, &me);
                rc = MPI_Intercomm_create(c, 0, priv, me, 5, &nc);
            }
            made = K_COMM;
            break;
        case 67: rc = MPI_Comm_compare(c, MPI_COMM_WORLD, &flag); break;
        case 68: rc = MPI_Op_commutative(o, &flag); break;
        case 69: rc = MPI_Type_dup(t, &nt), made = K_TYPE; break;
        case 70:
            rc = MPI_Gather_init(sb, n, t, rb, n, t, root, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 71:
            rc = MPI_Scatter_init(sb, n, t, rb, n, t, root, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 72:
            rc = MPI_Allgather_init(sb, n, t, rb, n, t, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 73:
            rc = MPI_Alltoall_init(sb, n, t, rb, n, t, c, MPI_INFO_NULL, &r), made = K_REQ;
            break;
        case 74: rc = MPI_Barrier_init(c, MPI_INFO_NULL, &r), made = K_REQ; break;
        case 75: rc = MPI_Scan_init(sb, rb, n, t, o, c, MPI_INFO_NULL, &r), made = K_REQ; break;
        case 76:
            rc = MPI_Reduce_scatter_block_init(sb, rb, n, t, o, c, MPI_INFO_NULL, &r);
            made = K_REQ;
            break;
        case 77: rc = MPI_Iallgather(sb, n, t, rb, n, t, c, &r), made = K_REQ; break;
        case 78:
            vh = hold(&va);
            rc = MPI_Igatherv(sb, n, t, rb, vh->cnt, vh->dsp, t, root, c, &r), made = K_REQ;
            break;
        case 79: rc = MPI_Iscatter(sb, n, t, rb, n, t, root, c, &r), made = K_REQ; break;
        case 80: rc = MPI_Ireduce(sb, rb, n, t, o, root, c, &r), made = K_REQ; break;
        case 81: rc = MPI_Iexscan(sb, rb, n, t, o, c, &r), made = K_REQ; break;
        case 82:
            vh = hold(&va);
            rc = MPI_Ialltoallw(sb, vh->cnt, vh->bd, vh->ta, rb, vh->cnt, vh->bd, vh->ta, c, &r);
            made = K_REQ;
            break;
        case 83: rc = MPI_Alltoallw(sb, cnt, bd, ta, rb, cnt, bd, ta, c); break;
        case 84: {
            int dims[2] = {0, 0}, periods[2] = {d1, d2};
            if (csize) MPI_Dims_create(csize, 2, dims);
            rc = MPI_Cart_create(c, 2, dims, periods, 0, &nc), made = K_COMM;
            break;
        }
        case 85: {
            int srcs[2] = {src, dest}, dsts[2] = {dest, src}, deg = m > 2 ? 2 : m;
            rc = MPI_Dist_graph_create_adjacent(c, deg, srcs, MPI_UNWEIGHTED, deg, dsts,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, d1, &nc);
            made = K_COMM;
            break;
        }
        case 86: rc = MPI_Neighbor_allgather(sb, n, t, rb, n, t, c); break;
        case 87: rc = MPI_Neighbor_alltoall(sb, n, t, rb, n, t, c); break;
        case 88:
            vh = hold(&va);
            rc = MPI_Ineighbor_alltoallv(sb, vh->cnt, vh->dsp, t, rb, vh->cnt, vh->dsp, t, c, &r);
            made = K_REQ;
            break;
        case 89: rc = MPI_Neighbor_alltoallw(sb, cnt, ad, ta, rb, cnt, ad, ta, c); break;
        case 90: rc = MPI_Intercomm_merge(c, d1, &nc), made = K_COMM; break;
        case 91: rc = MPI_Comm_create_group(c, g, tag < 0 ? 0 : tag, &nc), made = K_COMM; break;
        case 92: {
            int remain[2] = {d1, d2};
            rc = MPI_Cart_sub(c, remain, &nc), made = K_COMM;
            break;
        }
        case 93: rc = MPI_Sendrecv_replace(rb, n, t, dest, 8, src, 8, c, &st); break;
        case 94:
            rc = MPI_Isendrecv(sb, n, t, dest, 9, rb, n, t, src, 9, c, &r), made = K_REQ;
            break;
        case 95: { /* a graph of self-loops */
            int index[8] = {1, 2, 3, 4, 5, 6, 7, 8}, edges[8] = {0, 1, 2, 3, 4, 5, 6, 7};
            rc = MPI_Graph_create(c, csize < 8 ? csize : 8, index, edges, d1, &nc), made = K_COMM;
            break;
        }
        case 96: /* a wait every rank makes alike, on a request made just now */
            rc = MPI_Ibcast(sb, n, t, root, c, &r);
            if (rc == MPI_SUCCESS && d1) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            made = d1 ? -1 : K_REQ;
            break;
        case 97: rc = MPI_Ineighbor_allgather(sb, n, t, rb, n, t, c, &r), made = K_REQ; break;
        case 98: rc = MPI_Comm_split(c, crank % 2, d2, &nc), made = K_COMM; break;
        default: rc = MPI_Comm_remote_size(c, &size); break;
        }
        if (trace) /* every call, to compare the ranks' paths */
            fprintf(stderr, "[%d] %d: kind %u comm %x type %x group %x n %d root %d: rc %d\n",
                    world_rank, it, what, (unsigned)(intptr_t)c, (unsigned)(intptr_t)t,
                    (unsigned)(intptr_t)g, n, root, rc);
        CHECK(valid_class(rc), "sweep %llu call %d (kind %u): return code %d",
              (unsigned long long)seed, it, what, rc);
        /* kept if it succeeded on every rank that has c (the others keep the null handle
         * they got, which matches: they are not members) */
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        int ok = most(rc != MPI_SUCCESS && !(c == MPI_COMM_NULL && cls == MPI_ERR_COMM)) == 0;
        if (made == K_GROUP && ok && what == 19) {
            /* (communicators alike only in their handle have different groups) */
            ok = !most(c == MPI_COMM_NULL);
            int gh = ok ? group_hash(ng) : 0;
            ok = ok && alike(gh);
        }
        succeeded += rc == MPI_SUCCESS;
        if (!ok || made < 0) continue;
        int h = made == K_COMM    ? (int)(intptr_t)nc
                : made == K_TYPE  ? (int)(intptr_t)nt
                : made == K_OP    ? (int)(intptr_t)o
                : made == K_REQ   ? (int)(intptr_t)r
                : made == K_GROUP ? (int)(intptr_t)ng
                : made == K_ERRH  ? (int)(intptr_t)e
                : made == K_INFO  ? (int)(intptr_t)ni
                : made == K_KEY   ? key
                                  : (int)(intptr_t)msg;
        keep(made, h);
    }
    /* not a sweep of refusals only */
    CHECK(succeeded > calls / 20, "sweep %llu: %d of %d calls succeeded", (unsigned long long)seed,
          succeeded, calls);
    if (trace)
        printf("sweep %llu: %d of %d calls succeeded\n", (unsigned long long)seed, succeeded,
               calls);
    /* the predefined objects still work */
    int one = 1, all = 0, world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    CHECK_RC(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == world, "Allreduce after the sweep: %d", all);
    MPI_Group wg;
    int size;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_size(wg, &size));
    CHECK(size == world, "world group size %d after the sweep", size);
    CHECK_RC(MPI_Group_free(&wg));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "sweep")) {
        /* seeds and calls: HANDLES_SEED (first seed), HANDLES_SEEDS and HANDLES_CALLS */
        const char *s0 = getenv("HANDLES_SEED"), *ns = getenv("HANDLES_SEEDS"),
                   *nc = getenv("HANDLES_CALLS");
        uint64_t first = s0 ? strtoull(s0, NULL, 10) : 1;
        int seeds = ns ? atoi(ns) : 4, calls = nc ? atoi(nc) : 50000;
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        trace = getenv("HANDLES_TRACE") != NULL;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &priv));
        for (uint64_t seed = first; seed < first + (uint64_t)seeds; seed++) {
            sweep(seed * 0x9e3779b97f4a7c15ull, calls);
            /* (a made-up communicator may be MPI_COMM_SELF or WORLD, whose handler is then
             * any) */
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        }
        CHECK_RC(MPI_Comm_free(&priv));
    } else {
        twice();
    }
    MPI_Finalize();
    while (held) {
        vargs *v = held;
        held = v->next;
        free(v);
    }
    return 0;
}
