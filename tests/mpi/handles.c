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
 * ones of every kind) and small counts, from fixed seeds: collectives, point-to-point and
 * probes, completions of arrays of requests, datatypes and packing, communicators, groups,
 * attributes and keys, info objects, topologies and error handlers. Every call must return
 * MPI_SUCCESS or an error class, the process must not crash, and afterwards the predefined objects
 * still work and MPI_Finalize ends cleanly (the sanitizer build checks for reads of freed memory
 * and leaks). One rank only: the calls are local or on communicators of one process. */
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

/* ---- The sweep ------------------------------------------------------------------------------ */

static uint64_t rng;
static unsigned draw(unsigned n) {
    return (unsigned)tu_below(&rng, (int)n);
}

/* Handles seen, per kind: comm, datatype, op, request, group, errhandler, info, attribute
 * key, message. */
enum { K_COMM, K_TYPE, K_OP, K_REQ, K_GROUP, K_ERRH, K_INFO, K_KEY, K_MSG, NK };
static int seen[NK][64], nseen[NK];
static void keep(int k, int h) {
    if (nseen[k] < 64)
        seen[k][nseen[k]++] = h;
    else
        seen[k][draw(64)] = h;
}

/* A random value, or one shaped like a handle (kind, generation and slot bits) of any kind. */
static int made_up(void) {
    if (draw(2)) return (int)(draw(1u << 16) << 16 | draw(1u << 16));
    return (int)(draw(32) << 26 | draw(4) << 20 | draw(80));
}

/* A handle of kind k: one seen (perhaps freed since) or a made-up one. */
static int any_handle(int k) {
    return draw(2) && nseen[k] ? seen[k][draw((unsigned)nseen[k])] : made_up();
}

static int valid_class(int rc) {
    int cls = -1;
    if (rc == MPI_SUCCESS) return 1;
    return MPI_Error_class(rc, &cls) == MPI_SUCCESS && cls > MPI_SUCCESS && cls <= MPI_ERR_LASTCODE;
}

static void sweep(uint64_t seed, int calls) {
    /* (the middle of the buffers: made types may have negative strides) */
    static int sbuf[2048], rbuf[2048];
    int *sb = sbuf + 1024, *rb = rbuf + 1024;
    char packed[4096];
    int cnt[4] = {1, 1, 1, 1}, dsp[4] = {0, 1, 2, 3};
    rng = seed;
    keep(K_COMM, (int)(intptr_t)MPI_COMM_WORLD);
    keep(K_TYPE, (int)(intptr_t)MPI_INT);
    keep(K_OP, (int)(intptr_t)MPI_SUM);
    keep(K_ERRH, (int)(intptr_t)MPI_ERRORS_RETURN);
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
        MPI_Info ni = MPI_INFO_NULL;
        void *val;
        MPI_Comm nc = MPI_COMM_NULL;
        MPI_Datatype nt = MPI_DATATYPE_NULL;
        MPI_Group ng = MPI_GROUP_NULL;
        unsigned what = draw(44);
        switch (what) {
        case 0: rc = MPI_Bcast(sb, n, t, root, c); break;
        case 1: rc = MPI_Reduce(sb, rb, n, t, o, root, c); break;
        case 2: rc = MPI_Allreduce(sb, rb, n, t, o, c); break;
        case 3: rc = MPI_Gather(sb, n, t, rb, n, t, root, c); break;
        case 4: rc = MPI_Scatterv(sb, cnt, dsp, t, rb, n, t, root, c); break;
        case 5: rc = MPI_Exscan(sb, rb, n, t, o, c); break;
        case 6: rc = MPI_Reduce_local(sb, rb, n, t, o); break;
        case 7: rc = MPI_Iallreduce(sb, rb, n, t, o, c, &r); break;
        case 8: rc = MPI_Isend(sb, n, t, root, 0, c, &r); break;
        case 9: rc = MPI_Irecv(rb, n, t, root, (int)draw(3) - 1, c, &r); break;
        case 10: rc = MPI_Allreduce_init(sb, rb, n, t, o, c, MPI_INFO_NULL, &r); break;
        case 11: rc = MPI_Cancel(&r); break;
        case 12: rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE); break;
        case 13: rc = draw(2) ? MPI_Start(&r) : MPI_Request_free(&r); break;
        case 14: /* of MPI_INT or a made-up type only, so that the buffers stay large enough */
            rc = MPI_Type_contiguous(n, draw(2) ? MPI_INT : (MPI_Datatype)(intptr_t)made_up(), &nt);
            if (rc == MPI_SUCCESS && draw(2)) MPI_Type_commit(&nt);
            break;
        case 15: rc = MPI_Type_free(&t); break;
        case 16: rc = draw(2) ? MPI_Op_create(sum_fn, (int)draw(2), &o) : MPI_Op_free(&o); break;
        case 17: rc = draw(2) ? MPI_Comm_dup(c, &nc) : MPI_Comm_free(&c); break;
        case 18: rc = MPI_Comm_split(c, (int)draw(3) - 1, 0, &nc); break;
        case 19: rc = MPI_Comm_group(c, &ng); break;
        case 20:
            rc = MPI_Group_size(g, &size);
            if (draw(2)) rc = MPI_Group_free(&g);
            break;
        case 21: rc = MPI_Comm_create(c, g, &nc); break;
        case 22:
            rc = draw(2) ? MPI_Comm_create_errhandler(count_errors, &e)
                         : MPI_Comm_get_errhandler(c, &e);
            break;
        case 23: /* (never MPI_ERRORS_ARE_FATAL: the sweep's errors would end the job) */
            if (e == MPI_ERRORS_ARE_FATAL) e = MPI_ERRORS_RETURN;
            rc = draw(2) ? MPI_Errhandler_free(&e) : MPI_Comm_set_errhandler(c, e);
            break;
        case 24: rc = MPI_Comm_set_attr(c, key, sb); break;
        case 25: rc = MPI_Comm_get_attr(c, key, &val, &flag); break;
        case 26: rc = MPI_Comm_delete_attr(c, key); break;
        case 27:
            rc = draw(2) ? MPI_Comm_create_keyval(draw(2) ? copy_attr : MPI_COMM_NULL_COPY_FN,
                                                  MPI_COMM_NULL_DELETE_FN, &key, NULL)
                         : MPI_Comm_free_keyval(&key);
            break;
        case 28: rc = draw(2) ? MPI_Info_create(&ni) : MPI_Info_dup(in, &ni); break;
        case 29: rc = draw(2) ? MPI_Info_set(in, "k", "v") : MPI_Info_free(&in); break;
        case 30: rc = draw(2) ? MPI_Comm_get_info(c, &ni) : MPI_Comm_set_info(c, in); break;
        case 31: {
            int dims[2] = {a[0] + 1, 1}, periods[2] = {0, 1};
            rc = MPI_Cart_create(c, (int)draw(3), dims, periods, (int)draw(2), &nc);
            break;
        }
        case 32: rc = MPI_Group_incl(g, m, a, &ng); break;
        case 33: rc = MPI_Group_excl(g, m, a, &ng); break;
        case 34: rc = MPI_Group_union(g, (MPI_Group)(intptr_t)any_handle(K_GROUP), &ng); break;
        case 35: rc = MPI_Type_vector(n, a[1], a[2], MPI_INT, &nt); break;
        case 36: rc = MPI_Type_indexed(m, a + 1, a, MPI_INT, &nt); break;
        case 37: rc = draw(2) ? MPI_Type_commit(&t) : MPI_Type_size(t, &size); break;
        case 38:
            pos = 0;
            rc = MPI_Pack(sb, n, t, packed, (int)sizeof(packed), &pos, c);
            break;
        case 39: rc = MPI_Iprobe(root, (int)draw(3) - 1, c, &flag, &st); break;
        case 40:
            rc = MPI_Improbe(root, (int)draw(3) - 1, c, &flag, &msg, &st);
            if (rc == MPI_SUCCESS && !flag) msg = MPI_MESSAGE_NULL;
            break;
        case 41: rc = MPI_Mrecv(rb, n, t, &msg, &st); break;
        case 42: rc = MPI_Testall((int)draw(4), ra, &flag, MPI_STATUSES_IGNORE); break;
        default: rc = MPI_Testany((int)draw(4), ra, &size, &flag, &st); break;
        }
        CHECK(valid_class(rc), "sweep %llu call %d (kind %u): return code %d",
              (unsigned long long)seed, it, what, rc);
        if (rc != MPI_SUCCESS) continue;
        if (what >= 7 && what <= 10) keep(K_REQ, (int)(intptr_t)r);
        if (what == 16) keep(K_OP, (int)(intptr_t)o);
        if (nc != MPI_COMM_NULL) keep(K_COMM, (int)(intptr_t)nc);
        if (what == 22) keep(K_ERRH, (int)(intptr_t)e);
        if (what == 27) keep(K_KEY, key);
        if (ni != MPI_INFO_NULL) keep(K_INFO, (int)(intptr_t)ni);
        if (what == 40 && msg != MPI_MESSAGE_NULL) keep(K_MSG, (int)(intptr_t)msg);
        if (ng != MPI_GROUP_NULL) keep(K_GROUP, (int)(intptr_t)ng);
        if (nt != MPI_DATATYPE_NULL) keep(K_TYPE, (int)(intptr_t)nt);
    }
    /* the predefined objects still work */
    int one = 1, all = 0;
    CHECK_RC(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all == 1, "Allreduce after the sweep: %d", all);
    MPI_Group wg;
    int size;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_size(wg, &size));
    CHECK(size == 1, "world group size %d after the sweep", size);
    CHECK_RC(MPI_Group_free(&wg));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "sweep")) {
        int n;
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        CHECK(n == 1, "the sweep runs on one rank");
        /* (a made-up communicator may be MPI_COMM_SELF, whose handler is then any) */
        for (uint64_t seed = 1; seed <= 4; seed++) {
            sweep(seed * 0x9e3779b97f4a7c15ull, 50000);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        }
    } else {
        twice();
    }
    MPI_Finalize();
    return 0;
}
