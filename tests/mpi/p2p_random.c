/* Random sequences of point-to-point messages. The fixed tests check one feature at a time;
 * here every rank draws the same plan from one seed, epoch after epoch:
 * - messages between any two ranks (a rank to itself too) on WORLD, a dup, the halves of a
 *   split whose ranks run backwards, and the intercommunicator between those halves;
 * - tags 0-2, lengths from 0 to a million ints (inline, eager, rendezvous, single copy), and
 *   four send types of one type signature (contiguous, two strides, pairs with a hole);
 * - for each communicator and receiver, how it receives: by source and tag, by source with
 *   MPI_ANY_TAG, with MPI_ANY_SOURCE and a tag, or with both wildcards;
 * - how each message is sent: MPI_Send, Ssend, Bsend, their I- and persistent forms, or Rsend
 *   in all three forms for messages whose receive is posted before the epoch begins.
 * Each rank then goes through the plan in order and chooses on its own:
 * - whether to send a message to itself and receive it in one MPI_Sendrecv;
 * - how to receive: Recv, Irecv, Recv_init, Probe or an Iprobe loop then Recv, Mprobe or an
 *   Improbe loop then Mrecv or Imrecv, into one of two receive types;
 * - when and how to complete what it started: Wait, Test, Waitany, Testany, Waitsome,
 *   Testsome, Testall, Waitall.
 * Now and then a rank sleeps, and a receive that nothing matches is posted among the traffic
 * and then cancelled.
 *
 * A rank waits only where no correct MPI can deadlock: a send is waited for once its
 * receiver has posted every receive that could take it. Wildcard receives only ever meet
 * messages of their own epoch (a barrier separates epochs), so any way the messages may match
 * leaves a receive for each.
 *
 * Every message received is checked: its source, tag and count against the status, every
 * element (each carries its epoch and place in the plan), the receive buffer's gaps and tail
 * left alone, each message received once. Non-overtaking is checked too: a receive must not
 * get a message while an earlier one from the same sender, which it also matches, is still
 * unmatched and later goes to a receive posted after it. A send buffer is overwritten as soon
 * as its send completes (a Bsend's when the call returns), so a send that reads it afterwards
 * shows as wrong data.
 *
 * P2P_RANDOM_SEED and P2P_RANDOM_EPOCHS choose the plan; a failure names both. */
#include "testutil.h"

enum {
    EPOCHS = 40,
    MAXMSG = 128,
    NTAG = 3,
    CANCEL_TAG = 77,
    SENT = 0x7f7f7f7f,
    SLACK = 7,
    MAXLEN = 1100000,
    BSEND_CAP = 16 << 20, /* bytes buffered sends may hold in one epoch */
    MAXOPS = 4 * MAXMSG,
};

static uint64_t rng;       /* the plan, alike on every rank */
static uint64_t local_rng; /* this rank's own choices */
static int below(int n) {
    return tu_below(&rng, n);
}
static int mine(int n) {
    return tu_below(&local_rng, n);
}

/* How a receiver takes its messages on one communicator in one epoch. */
enum { SPECIFIC, ANYTAG, ANYSRC, ANYANY };
static const char *const mode_names[] = {"source and tag", "MPI_ANY_TAG", "MPI_ANY_SOURCE",
                                         "both wildcards"};
enum {
    SEND,
    SSEND,
    BSEND,
    RSEND,
    ISEND,
    ISSEND,
    IBSEND,
    IRSEND,
    PSEND,
    PSSEND,
    PBSEND,
    PRSEND,
    SENDRECV_S
};
static const char *const send_names[] = {
    "MPI_Send",       "MPI_Ssend",      "MPI_Bsend",   "MPI_Rsend",     "MPI_Isend",
    "MPI_Issend",     "MPI_Ibsend",     "MPI_Irsend",  "MPI_Send_init", "MPI_Ssend_init",
    "MPI_Bsend_init", "MPI_Rsend_init", "MPI_Sendrecv"};
enum { RECV, IRECV, PRECV, PROBE, IPROBE, MPROBE, IMPROBE, NRECV, SENDRECV = NRECV };
static const char *const recv_names[] = {"MPI_Recv",    "MPI_Irecv",   "MPI_Recv_init",
                                         "MPI_Probe",   "MPI_Iprobe",  "MPI_Mprobe",
                                         "MPI_Improbe", "MPI_Sendrecv"};

typedef struct {
    int comm, src, dst; /* src and dst: ranks in WORLD */
    int csrc, cdst;     /* the same in the communicator */
    int tag, len, stype, ready;
    int safe;  /* the position from which waiting for its send cannot deadlock */
    int got;   /* received (the receiver's bookkeeping) */
    int skind; /* how it is sent */
} msg_t;

/* A receive, in the order this rank posted them (a probe counts as posted when called). */
typedef struct {
    int comm, psrc, ptag, kind, rtype;
    int msg;      /* the message it got, -1 before */
    int inferred; /* a message of length 0: which one it was is inferred, not read */
} rec_t;

/* Something started and not yet completed. */
typedef struct {
    MPI_Request rq;
    int send, persistent, msg, rec, cancel, gone;
    int *buf;
    size_t ints;
} op_t;

static int me, np;
static long seed, epoch;
static MPI_Comm comms[4];
static int ncomm; /* 3, or 4 with the intercommunicator (2 ranks or more) */
static MPI_Datatype stypes[4], rtypes[2];
static msg_t plan[MAXMSG];
static int nmsg, modes[4][1024];
static rec_t recs[MAXMSG + 8];
static int nrec;
static op_t ops[MAXOPS];
static int nops;
static int done_upto; /* positions of the plan this rank has gone through */

static int val(int idx, int k) {
    if (k == 0) return (int)(epoch * MAXMSG + idx);
    return (int)(((long)idx * 7919 + (long)k * 31 + epoch * 104729) % 1000003);
}

/* Where int k of a message lies, in ints, for send type t (0: contiguous, 1: every second int,
 * 2: every third, 3: pairs of ints three apart, pairs four apart) or receive type t (0, 1). */
static size_t off(int t, size_t k) {
    switch (t) {
    case 1: return 2 * k;
    case 2: return 3 * k;
    case 3: return (k / 2) * 4 + (k % 2) * 3;
    default: return k;
    }
}
static size_t span(int t, size_t n) {
    return n ? off(t, n - 1) + 1 : 0;
}

static int *alloc_ints(size_t n) {
    int *b = malloc((n ? n : 1) * sizeof(int));
    CHECK(b, "out of memory (%zu ints)", n);
    return b;
}

static const char *where(void) {
    static char s[96];
    snprintf(s, sizeof s, "seed %ld epoch %ld", seed, epoch);
    return s;
}

/* Communicator ranks: WORLD and the dup as WORLD; the split (colour w % 2, key np - w)
 * numbers each half backwards; the intercommunicator between the halves keeps the split's
 * numbering in each group. */
static int crank(int comm, int w) {
    if (comm < 2) return w;
    int c = w % 2, members = (np - c + 1) / 2;
    return members - 1 - w / 2;
}

/* The pattern this rank receives message i with. */
static void pattern(const msg_t *m, int *psrc, int *ptag) {
    int mode = modes[m->comm][m->dst];
    *psrc = mode == SPECIFIC || mode == ANYTAG ? m->csrc : MPI_ANY_SOURCE;
    *ptag = mode == SPECIFIC || mode == ANYSRC ? m->tag : MPI_ANY_TAG;
}
static int matches(const msg_t *m, int comm, int psrc, int ptag) {
    return m->comm == comm && (psrc == MPI_ANY_SOURCE || psrc == m->csrc) &&
           (ptag == MPI_ANY_TAG || ptag == m->tag);
}

static int draw_len(void) {
    int r = below(100);
    if (r < 20) return below(5);
    if (r < 50) return 5 + below(500);
    if (r < 72) return 500 + below(6000); /* the eager limit lies in here */
    if (r < 90) return 6000 + below(70000);
    if (r < 98) return 70000 + below(250000);
    return 300000 + below(MAXLEN - 300000);
}

static void draw_plan(void) {
    nmsg = 1 + below(4 + 6 * np < MAXMSG ? 4 + 6 * np : MAXMSG);
    for (int c = 0; c < ncomm; c++)
        for (int d = 0; d < np; d++) {
            int r = below(20);
            modes[c][d] = r < 8 ? SPECIFIC : r < 12 ? ANYTAG : r < 17 ? ANYSRC : ANYANY;
        }
    for (int i = 0; i < nmsg; i++) {
        msg_t *m = &plan[i];
        memset(m, 0, sizeof *m);
        m->comm = below(ncomm);
        m->src = below(np);
        if (m->comm < 2) {
            m->dst = below(np);
        } else { /* the same half (split), the other half (intercommunicator) */
            int c = (m->src + (m->comm == 3)) % 2;
            m->dst = c + 2 * below((np - c + 1) / 2);
        }
        m->csrc = crank(m->comm, m->src);
        m->cdst = crank(m->comm, m->dst);
        m->tag = below(NTAG);
        m->stype = below(4);
        m->len = draw_len();
        if (m->stype == 3) m->len &= ~1;
        /* a ready send: only the first of its source, tag and receiver in the epoch, received
         * by source and tag, so that the receive posted before the epoch takes it */
        int first = 1;
        for (int j = 0; j < i; j++)
            if (plan[j].comm == m->comm && plan[j].src == m->src && plan[j].dst == m->dst &&
                plan[j].tag == m->tag)
                first = 0;
        m->ready = first && modes[m->comm][m->dst] == SPECIFIC && below(4) == 0;
    }
    /* From which position waiting for a send is safe: a receiver that takes only one
     * sender's messages in a class posts the receive for message i by position i; one that
     * takes several senders' has posted a receive for each of them only by the class's last. */
    for (int i = 0; i < nmsg; i++) {
        msg_t *m = &plan[i];
        int psrc, ptag;
        pattern(m, &psrc, &ptag);
        m->safe = i;
        if (psrc == MPI_ANY_SOURCE)
            for (int j = i + 1; j < nmsg; j++)
                if (plan[j].dst == m->dst && matches(&plan[j], m->comm, psrc, ptag)) m->safe = j;
    }
    /* How each is sent: blocking only where the receive that takes it is surely posted by
     * then; buffered while the sender's share of the attached buffer lasts. */
    static long bsend_used[1024];
    memset(bsend_used, 0, sizeof bsend_used);
    for (int i = 0; i < nmsg; i++) {
        msg_t *m = &plan[i];
        int blocking = m->safe <= i && (m->dst != m->src || m->ready), kind;
        if (m->ready) {
            static const int r[] = {RSEND, IRSEND, PRSEND};
            kind = r[blocking ? below(3) : 1 + below(2)];
        } else {
            static const int k[] = {BSEND,  ISEND,  ISSEND, IBSEND, PSEND,
                                    PSSEND, PBSEND, SEND,   SSEND};
            kind = k[below(blocking ? 9 : 7)];
        }
        long need = (long)m->len * (long)sizeof(int) + MPI_BSEND_OVERHEAD;
        if (kind == BSEND || kind == IBSEND || kind == PBSEND) {
            if (bsend_used[m->src] + need > BSEND_CAP)
                kind = kind == BSEND ? ISEND : kind == IBSEND ? ISSEND : PSEND;
            else
                bsend_used[m->src] += need;
        }
        m->skind = kind;
    }
}

static void check_recv(int r, int *buf, size_t ints, const MPI_Status *st) {
    rec_t *rc = &recs[r];
    int count = -1;
    CHECK_RC(MPI_Get_count(st, MPI_INT, &count));
    const char *how = recv_names[rc->kind];
    CHECK(count >= 0 && count != MPI_UNDEFINED, "%s: %s got count %d", where(), how, count);
    CHECK((rc->psrc == MPI_ANY_SOURCE || st->MPI_SOURCE == rc->psrc) &&
              (rc->ptag == MPI_ANY_TAG || st->MPI_TAG == rc->ptag),
          "%s: %s for source %d tag %d on comm %d got source %d tag %d", where(), how, rc->psrc,
          rc->ptag, rc->comm, st->MPI_SOURCE, st->MPI_TAG);
    int idx = -1;
    if (count > 0) {
        int id = buf[off(rc->rtype, 0)];
        CHECK(id >= epoch * MAXMSG && id < epoch * MAXMSG + nmsg,
              "%s: %s (comm %d, source %d tag %d, %d ints) holds message id %d, not one of this "
              "epoch's",
              where(), how, rc->comm, st->MPI_SOURCE, st->MPI_TAG, count, id);
        idx = id - (int)(epoch * MAXMSG);
    } else { /* which empty message it was: the earliest not yet received */
        for (int i = 0; i < nmsg && idx < 0; i++)
            if (plan[i].dst == me && !plan[i].got && plan[i].len == 0 &&
                matches(&plan[i], rc->comm, st->MPI_SOURCE, st->MPI_TAG))
                idx = i;
        CHECK(idx >= 0, "%s: %s (comm %d) got an empty message from %d tag %d that was not sent",
              where(), how, rc->comm, st->MPI_SOURCE, st->MPI_TAG);
        rc->inferred = 1;
    }
    msg_t *m = &plan[idx];
    CHECK(m->dst == me && m->comm == rc->comm && m->csrc == st->MPI_SOURCE &&
              m->tag == st->MPI_TAG && m->len == count && !m->got,
          "%s: %s (receiving by %s) got message %d (comm %d, %d -> %d, tag %d, %d ints%s) as "
          "comm %d, source %d, tag %d, %d ints",
          where(), how, mode_names[modes[rc->comm][me]], idx, m->comm, m->src, m->dst, m->tag,
          m->len, m->got ? ", already received" : "", rc->comm, st->MPI_SOURCE, st->MPI_TAG, count);
    m->got = 1;
    rc->msg = idx;
    int stride = rc->rtype ? 2 : 1;
    for (size_t i = 0; i < ints; i++) {
        int data = i % (size_t)stride == 0 && i / (size_t)stride < (size_t)count;
        int want = data ? val(idx, (int)(i / (size_t)stride)) : SENT;
        CHECK(buf[i] == want,
              "%s: %s of message %d (%d -> %d on comm %d, tag %d, %d ints, sent by %s, send "
              "type %d, receive type %d): int %zu is %d, expected %d",
              where(), how, idx, m->src, m->dst, m->comm, m->tag, m->len, send_names[m->skind],
              m->stype, rc->rtype, i, buf[i], want);
    }
}

static int new_rec(int comm, int psrc, int ptag, int kind, int rtype) {
    CHECK(nrec < MAXMSG + 8, "too many receives");
    recs[nrec] = (rec_t){comm, psrc, ptag, kind, rtype, -1, 0};
    return nrec++;
}

static op_t *new_op(void) {
    CHECK(nops < MAXOPS, "too many requests");
    op_t *o = &ops[nops++];
    memset(o, 0, sizeof *o);
    o->rq = MPI_REQUEST_NULL;
    o->rec = o->msg = -1;
    return o;
}

/* A receive buffer for up to n ints of receive type t, its gaps and tail set to SENT. */
static int *recv_buf(int t, int n, size_t *ints) {
    *ints = span(t, (size_t)n) + SLACK;
    int *b = alloc_ints(*ints);
    for (size_t i = 0; i < *ints; i++) b[i] = SENT;
    return b;
}

static void finish(op_t *o, const MPI_Status *st) {
    if (o->cancel) {
        int flag = 0;
        CHECK_RC(MPI_Test_cancelled(st, &flag));
        CHECK(flag, "%s: a receive for tag %d that nothing matches was not cancelled", where(),
              CANCEL_TAG);
    } else if (o->send) {
        for (size_t i = 0; i < o->ints; i++) o->buf[i] = -77; /* a late reader sees this */
    } else {
        check_recv(o->rec, o->buf, o->ints, st);
    }
    if (o->persistent) CHECK_RC(MPI_Request_free(&o->rq));
    free(o->buf);
    o->gone = 1;
}

/* Drops the finished operations from ops[]. */
static void compact(void) {
    int k = 0;
    for (int i = 0; i < nops; i++)
        if (!ops[i].gone) ops[k++] = ops[i];
    nops = k;
}

/* Which started operations may be waited for now: a send once its receiver has posted every
 * receive that may take it, a receive once the position of its message has been passed (a
 * ready send's receive is posted before the epoch, long before its message is sent). */
static int waitable(const op_t *o) {
    if (o->cancel) return 0;
    return (o->send ? plan[o->msg].safe : o->msg) < done_upto;
}

/* Completes some of the started operations, in a way this rank draws. all: every one. */
static void complete(int all) {
    MPI_Request rq[MAXOPS];
    MPI_Status st[MAXOPS];
    int n = 0, out[MAXOPS], cnt = 0, k = -1, flag = 0;
    op_t *sel[MAXOPS];
    for (int i = 0; i < nops; i++)
        if (all ? !ops[i].cancel : waitable(&ops[i])) sel[n] = &ops[i], rq[n++] = ops[i].rq;
    if (n == 0) return;
    int how = all ? 7 + mine(2) : mine(8);
    switch (how) {
    case 0: /* MPI_Wait on one */
        k = mine(n);
        CHECK_RC(MPI_Wait(&rq[k], &st[0]));
        finish(sel[k], &st[0]);
        break;
    case 1: /* MPI_Test on one, once */
        k = mine(n);
        CHECK_RC(MPI_Test(&rq[k], &flag, &st[0]));
        if (flag) finish(sel[k], &st[0]);
        break;
    case 2:
        CHECK_RC(MPI_Waitany(n, rq, &k, &st[0]));
        CHECK(k >= 0 && k < n, "%s: MPI_Waitany gave index %d of %d", where(), k, n);
        finish(sel[k], &st[0]);
        break;
    case 3:
        CHECK_RC(MPI_Testany(n, rq, &k, &flag, &st[0]));
        if (flag) {
            CHECK(k >= 0 && k < n, "%s: MPI_Testany gave index %d of %d", where(), k, n);
            finish(sel[k], &st[0]);
        }
        break;
    case 4:
    case 5:
        if (how == 4)
            CHECK_RC(MPI_Testsome(n, rq, &cnt, out, st));
        else
            CHECK_RC(MPI_Waitsome(n, rq, &cnt, out, st));
        CHECK(cnt != MPI_UNDEFINED && cnt >= 0 && cnt <= n, "%s: %d completed of %d", where(), cnt,
              n);
        for (int i = 0; i < cnt; i++) finish(sel[out[i]], &st[i]);
        break;
    case 6:
    case 7:
        if (how == 6) {
            CHECK_RC(MPI_Testall(n, rq, &flag, st));
        } else {
            CHECK_RC(MPI_Waitall(n, rq, st));
            flag = 1;
        }
        for (int i = 0; flag && i < n; i++) finish(sel[i], &st[i]);
        break;
    default: /* one by one, MPI_Testany until each is done */
        while (n > 0) {
            CHECK_RC(MPI_Testany(n, rq, &k, &flag, &st[0]));
            if (!flag) continue;
            finish(sel[k], &st[0]);
            sel[k] = sel[n - 1], rq[k] = rq[n - 1], n--;
        }
        break;
    }
    compact();
}

/* Message i's send buffer, of *ints ints, holding *count elements of its send type. */
static int *send_buf(int i, int *count, size_t *ints) {
    const msg_t *m = &plan[i];
    int t = m->stype;
    *count = t == 3 ? m->len / 2 : m->len;
    *ints = span(t, (size_t)m->len);
    int *b = alloc_ints(*ints);
    for (size_t k = 0; k < *ints; k++) b[k] = -1; /* the holes: never sent */
    for (int k = 0; k < m->len; k++) b[off(t, (size_t)k)] = val(i, k);
    return b;
}

static void do_send(int i) {
    msg_t *m = &plan[i];
    MPI_Comm c = comms[m->comm];
    int t = m->stype, count;
    size_t ints;
    int *b = send_buf(i, &count, &ints);
    int kind = m->skind;
    MPI_Datatype dt = stypes[t];
    MPI_Request rq = MPI_REQUEST_NULL;
    switch (kind) {
    case SEND: CHECK_RC(MPI_Send(b, count, dt, m->cdst, m->tag, c)); break;
    case SSEND: CHECK_RC(MPI_Ssend(b, count, dt, m->cdst, m->tag, c)); break;
    case BSEND: CHECK_RC(MPI_Bsend(b, count, dt, m->cdst, m->tag, c)); break;
    case RSEND: CHECK_RC(MPI_Rsend(b, count, dt, m->cdst, m->tag, c)); break;
    case ISEND: CHECK_RC(MPI_Isend(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case ISSEND: CHECK_RC(MPI_Issend(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case IBSEND: CHECK_RC(MPI_Ibsend(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case IRSEND: CHECK_RC(MPI_Irsend(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case PSEND: CHECK_RC(MPI_Send_init(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case PSSEND: CHECK_RC(MPI_Ssend_init(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case PBSEND: CHECK_RC(MPI_Bsend_init(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    case PRSEND: CHECK_RC(MPI_Rsend_init(b, count, dt, m->cdst, m->tag, c, &rq)); break;
    }
    if (kind >= PSEND) CHECK_RC(MPI_Start(&rq));
    if (kind < ISEND) { /* done: the buffer is the program's again */
        for (size_t k = 0; k < ints; k++) b[k] = -77;
        free(b);
        return;
    }
    op_t *o = new_op();
    o->rq = rq, o->send = 1, o->persistent = kind >= PSEND, o->msg = i, o->buf = b;
    o->ints = ints;
}

/* The largest message that a receive with this pattern may get. */
static int class_max(const msg_t *m, int psrc, int ptag) {
    int n = 0;
    for (int j = 0; j < nmsg; j++)
        if (plan[j].dst == me && matches(&plan[j], m->comm, psrc, ptag) && plan[j].len > n)
            n = plan[j].len;
    return n;
}

/* Posts a nonblocking receive for message i by its pattern. */
static void post_irecv(int i, int persistent) {
    msg_t *m = &plan[i];
    int psrc, ptag, rtype = mine(2);
    pattern(m, &psrc, &ptag);
    op_t *o = new_op();
    o->msg = i;
    o->rec = new_rec(m->comm, psrc, ptag, persistent ? PRECV : IRECV, rtype);
    int n = class_max(m, psrc, ptag) + mine(SLACK);
    o->buf = recv_buf(rtype, n, &o->ints);
    if (persistent) {
        CHECK_RC(MPI_Recv_init(o->buf, n, rtypes[rtype], psrc, ptag, comms[m->comm], &o->rq));
        CHECK_RC(MPI_Start(&o->rq));
        o->persistent = 1;
    } else {
        CHECK_RC(MPI_Irecv(o->buf, n, rtypes[rtype], psrc, ptag, comms[m->comm], &o->rq));
    }
}

/* Receives message i, or with sendrecv sends it to oneself and receives in one MPI_Sendrecv. */
static void do_recv(int i, int sendrecv) {
    msg_t *m = &plan[i];
    MPI_Comm c = comms[m->comm];
    int kind = sendrecv ? SENDRECV : mine(NRECV);
    if (kind == IRECV || kind == PRECV) {
        post_irecv(i, kind == PRECV);
        return;
    }
    int psrc, ptag, rtype = mine(2), flag = 0, n;
    pattern(m, &psrc, &ptag);
    int r = new_rec(m->comm, psrc, ptag, kind, rtype);
    size_t ints;
    int *b;
    MPI_Status st, st2;
    MPI_Message msg = MPI_MESSAGE_NULL;
    switch (kind) {
    case RECV:
        n = class_max(m, psrc, ptag) + mine(SLACK);
        b = recv_buf(rtype, n, &ints);
        CHECK_RC(MPI_Recv(b, n, rtypes[rtype], psrc, ptag, c, &st));
        break;
    case SENDRECV: {
        int scount;
        size_t sints;
        int *sb = send_buf(i, &scount, &sints);
        m->skind = SENDRECV_S;
        n = class_max(m, psrc, ptag) + mine(SLACK);
        b = recv_buf(rtype, n, &ints);
        CHECK_RC(MPI_Sendrecv(sb, scount, stypes[m->stype], m->cdst, m->tag, b, n, rtypes[rtype],
                              psrc, ptag, c, &st));
        for (size_t k = 0; k < sints; k++) sb[k] = -77;
        free(sb);
        break;
    }
    case PROBE:
    case IPROBE:
        if (kind == PROBE)
            CHECK_RC(MPI_Probe(psrc, ptag, c, &st));
        else
            while (!flag) CHECK_RC(MPI_Iprobe(psrc, ptag, c, &flag, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
        int room = n + mine(SLACK);
        b = recv_buf(rtype, room, &ints);
        CHECK_RC(MPI_Recv(b, room, rtypes[rtype], st.MPI_SOURCE, st.MPI_TAG, c, &st2));
        {
            int n2 = -1;
            CHECK_RC(MPI_Get_count(&st2, MPI_INT, &n2));
            CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG && n2 == n,
                  "%s: %s saw %d ints from %d tag %d, the receive after it got %d from %d tag %d",
                  where(), recv_names[kind], n, st.MPI_SOURCE, st.MPI_TAG, n2, st2.MPI_SOURCE,
                  st2.MPI_TAG);
        }
        st = st2;
        break;
    default: /* MPROBE, IMPROBE */
        if (kind == MPROBE)
            CHECK_RC(MPI_Mprobe(psrc, ptag, c, &msg, &st));
        else
            while (!flag) CHECK_RC(MPI_Improbe(psrc, ptag, c, &flag, &msg, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
        n += mine(SLACK);
        b = recv_buf(rtype, n, &ints);
        if (mine(2)) {
            op_t *o = new_op();
            o->msg = i, o->rec = r, o->buf = b, o->ints = ints;
            CHECK_RC(MPI_Imrecv(b, n, rtypes[rtype], &msg, &o->rq));
            return;
        }
        CHECK_RC(MPI_Mrecv(b, n, rtypes[rtype], &msg, &st));
        break;
    }
    check_recv(r, b, ints, &st);
    free(b);
}

/* A receive must not get a message while an earlier one from the same sender that it also
 * matches is still unmatched (and goes to a receive posted after it). */
static void check_order(void) {
    for (int a = 0; a < nrec; a++) {
        if (recs[a].inferred) continue;
        const msg_t *ma = &plan[recs[a].msg];
        for (int b = a + 1; b < nrec; b++) {
            if (recs[b].inferred || recs[b].msg > recs[a].msg) continue;
            const msg_t *mb = &plan[recs[b].msg];
            CHECK(!(mb->csrc == ma->csrc && matches(mb, recs[a].comm, recs[a].psrc, recs[a].ptag)),
                  "%s: message %d overtook message %d (both %d -> %d on comm %d, tags %d and %d): "
                  "%s for source %d tag %d, posted before %s, got the later one",
                  where(), recs[a].msg, recs[b].msg, ma->src, ma->dst, ma->comm, ma->tag, mb->tag,
                  recv_names[recs[a].kind], recs[a].psrc, recs[a].ptag, recv_names[recs[b].kind]);
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np <= 1024, "at most 1024 ranks");
    const char *e = getenv("P2P_RANDOM_SEED");
    seed = e ? atol(e) : 1;
    e = getenv("P2P_RANDOM_EPOCHS");
    long epochs = e ? atol(e) : EPOCHS;
    rng = (uint64_t)seed * 0x2545f4914f6cdd1dull + (uint64_t)np;
    local_rng = rng ^ ((uint64_t)(me + 1) << 32);

    comms[0] = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &comms[2]));
    ncomm = 3;
    if (np > 1) { /* local leaders: rank 0 of each half, the half's highest WORLD rank */
        int other = (me + 1) % 2, leader = other + 2 * ((np - other + 1) / 2 - 1);
        CHECK_RC(MPI_Intercomm_create(comms[2], 0, MPI_COMM_WORLD, leader, 99, &comms[3]));
        ncomm = 4;
    }
    for (int c = 1; c < ncomm; c++) {
        int r;
        MPI_Comm_rank(comms[c], &r);
        CHECK(r == crank(c, me), "comm %d: rank %d, expected %d", c, r, crank(c, me));
    }
    stypes[0] = rtypes[0] = MPI_INT;
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stypes[1]));
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &stypes[2]));
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &stypes[3]));
    for (int t = 1; t < 4; t++) CHECK_RC(MPI_Type_commit(&stypes[t]));
    rtypes[1] = stypes[1];
    int bsize = BSEND_CAP + 4096;
    void *battach = malloc((size_t)bsize);
    CHECK(battach, "out of memory");
    CHECK_RC(MPI_Buffer_attach(battach, bsize));

    long sent = 0, bytes = 0;
    for (epoch = 0; epoch < epochs; epoch++) {
        draw_plan();
        nrec = 0;
        done_upto = 0;
        /* the receives that ready sends need, posted before anyone sends */
        for (int i = 0; i < nmsg; i++)
            if (plan[i].ready && plan[i].dst == me) post_irecv(i, mine(2));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        int cancel_at = mine(4) == 0 ? mine(nmsg) : -1;
        for (int i = 0; i < nmsg; i++) {
            if (mine(40) == 0) tu_sleep_ms(mine(3));
            if (i == cancel_at) {
                op_t *o = new_op();
                int cc = mine(ncomm);
                o->cancel = 1;
                o->buf = alloc_ints(4);
                CHECK_RC(
                    MPI_Irecv(o->buf, 4, MPI_INT, MPI_ANY_SOURCE, CANCEL_TAG, comms[cc], &o->rq));
            }
            const msg_t *m = &plan[i];
            if (m->src == me) sent++, bytes += 4L * m->len;
            /* to oneself, when the receive at this position is sure to take it: now and
             * then both in one MPI_Sendrecv */
            if (m->src == me && m->dst == me && !m->ready && m->safe == i && mine(3) == 0) {
                do_recv(i, 1);
            } else {
                if (m->src == me) do_send(i);
                if (m->dst == me && !m->ready) do_recv(i, 0);
            }
            done_upto = i + 1;
            if (mine(3) == 0) complete(0);
        }
        for (int i = 0; i < nops; i++)
            if (ops[i].cancel) {
                MPI_Status st;
                CHECK_RC(MPI_Cancel(&ops[i].rq));
                CHECK_RC(MPI_Wait(&ops[i].rq, &st));
                finish(&ops[i], &st);
                compact();
                break;
            }
        complete(1);
        CHECK(nops == 0, "%s: %d operations left", where(), nops);
        for (int i = 0; i < nmsg; i++)
            CHECK(plan[i].dst != me || plan[i].got, "%s: message %d (%d -> %d) never arrived",
                  where(), i, plan[i].src, plan[i].dst);
        check_order();
    }
    void *bp;
    int bs;
    CHECK_RC(MPI_Buffer_detach(&bp, &bs));
    CHECK(bp == battach && bs == bsize, "MPI_Buffer_detach gave back %p (%d bytes)", bp, bs);
    free(battach);
    long all[2], here[2] = {sent, bytes};
    CHECK_RC(MPI_Reduce(here, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0)
        printf("p2p_random: %ld epochs, %ld messages, %ld MB, seed %ld, %d ranks: ok\n", epochs,
               all[0], all[1] >> 20, seed, np);
    for (int t = 1; t < 4; t++) MPI_Type_free(&stypes[t]);
    for (int c = ncomm - 1; c > 0; c--) MPI_Comm_free(&comms[c]);
    MPI_Finalize();
    return 0;
}
