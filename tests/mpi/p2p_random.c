/* Random sequences of point-to-point messages. The fixed tests check one feature at a time;
 * here every rank draws the same plan from one seed, epoch after epoch:
 * - messages between any two ranks (a rank to itself too) on WORLD, a dup, the halves of a
 *   split whose ranks run backwards, the intercommunicator between those halves, and the
 *   intracommunicator that MPI_Intercomm_merge makes of it;
 * - tags 0-2, lengths from 0 to a million ints (inline, eager, rendezvous, single copy), and
 *   four send types of one type signature (contiguous, two strides, pairs with a hole);
 * - for each communicator and receiver, how it receives: by source and tag, by source with
 *   MPI_ANY_TAG, with MPI_ANY_SOURCE and a tag, or with both wildcards;
 * - how each message is sent: MPI_Send, Ssend, Bsend, their I- and persistent forms, or Rsend
 *   in all three forms for messages whose receive is posted before the epoch begins;
 * - pairs: a message that goes straight back the way the one before came, both ranks sending
 *   and receiving in one MPI_Sendrecv or MPI_Sendrecv_replace, or in their nonblocking forms
 *   (MPI 4.0; P2P_RANDOM_ISENDRECV=0 leaves them out);
 * - repeats: a message of the shape of an earlier one, sent the same way when that was a
 *   persistent Send_init, Ssend_init or Bsend_init.
 * Each rank then goes through the plan in order and chooses on its own:
 * - whether to send a message to itself and receive it in one MPI_Sendrecv;
 * - how to receive: Recv, Irecv, Recv_init, Probe or an Iprobe loop then Recv, Mprobe or an
 *   Improbe loop then Mrecv or Imrecv, into one of two receive types;
 * - whether to start a persistent request at once or later with others in one MPI_Startall,
 *   and whether to keep it once completed, to start it again for a later message of the same
 *   shape or a later receive of the same pattern (P2P_RANDOM_BSEND_RESTART=0: not for
 *   Bsend_init's);
 * - when and how to complete what it started: Wait, Test, Waitany, Testany, Waitsome,
 *   Testsome, Testall, Waitall, or MPI_Request_get_status until done, then Wait.
 * Now and then a rank sleeps, a receive that nothing matches is posted among the traffic and
 * then cancelled, and a call on MPI_PROC_NULL (P2P_RANDOM_NULL=0 leaves those out).
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
    SENDRECV_S,  /* to oneself, or one of a pair */
    SENDRECV_R,  /* one of a pair, by MPI_Sendrecv_replace */
    ISENDRECV_S, /* one of a pair, by the MPI 4.0 nonblocking forms */
    ISENDRECV_R
};
static const char *const send_names[] = {"MPI_Send",       "MPI_Ssend",
                                         "MPI_Bsend",      "MPI_Rsend",
                                         "MPI_Isend",      "MPI_Issend",
                                         "MPI_Ibsend",     "MPI_Irsend",
                                         "MPI_Send_init",  "MPI_Ssend_init",
                                         "MPI_Bsend_init", "MPI_Rsend_init",
                                         "MPI_Sendrecv",   "MPI_Sendrecv_replace",
                                         "MPI_Isendrecv",  "MPI_Isendrecv_replace"};
enum {
    RECV,
    IRECV,
    PRECV,
    PROBE,
    IPROBE,
    MPROBE,
    IMPROBE,
    NRECV,
    SENDRECV = NRECV, /* the receives of pairs and of messages to oneself, named as sent */
    REPLACE,
    ISENDRECV,
    IREPLACE
};
static const char *const recv_names[] = {"MPI_Recv",
                                         "MPI_Irecv",
                                         "MPI_Recv_init",
                                         "MPI_Probe",
                                         "MPI_Iprobe",
                                         "MPI_Mprobe",
                                         "MPI_Improbe",
                                         "MPI_Sendrecv",
                                         "MPI_Sendrecv_replace",
                                         "MPI_Isendrecv",
                                         "MPI_Isendrecv_replace"};
/* MPI_Isendrecv(_replace) came with MPI 4.0; Cohort has them while it says 3.1 */
#if defined(COHORT) || MPI_VERSION >= 4
#define HAVE_ISENDRECV 1
#else
#define HAVE_ISENDRECV 0
#endif

typedef struct {
    int comm, src, dst; /* src and dst: ranks in WORLD */
    int csrc, cdst;     /* the same in the communicator */
    int tag, len, stype, ready;
    int safe;  /* the position from which waiting for its send cannot deadlock */
    int got;   /* received (the receiver's bookkeeping) */
    int skind; /* how it is sent */
    int pair;  /* 1: sent with the next message, which goes back, in one MPI_Sendrecv(_replace)
                * on each side; 2: that next message */
    int like;  /* 1 + the earlier message whose shape this one repeats, or 0 */
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
    int null;    /* to or from MPI_PROC_NULL */
    int replace; /* a side of a pair by MPI_(I)sendrecv_replace: it sent message msg - 1 or msg */
    int *sbuf;   /* a side of a pair by MPI_(I)sendrecv: what it sent */
    size_t sints;
    int count; /* a receive: the count it was posted with */
    int *buf;
    size_t ints;
} op_t;

static int me, np;
static long seed, epoch;
static MPI_Comm comms[5];
static int ncomm; /* 3, or 5 with the intercommunicator and its merger (2 ranks or more) */
static MPI_Datatype stypes[4], rtypes[2];
static msg_t plan[MAXMSG];
static int nmsg, modes[5][1024];
static rec_t recs[MAXMSG + 8];
static int nrec;
static op_t ops[MAXOPS];
static int nops;
static int done_upto;                 /* positions of the plan this rank has gone through */
static int pending[MAXOPS], npending; /* ops whose persistent request awaits MPI_Startall */
/* What the run did, for its last line: sides of pairs, of them replacing and nonblocking;
 * MPI_Startall of several requests; restarts; MPI_Request_get_status loops; MPI_PROC_NULL */
enum { N_PAIR, N_REPLACE, N_ISENDRECV, N_STARTALL, N_RESTART, N_GETSTATUS, N_NULL, NCOUNT };
static long counts[NCOUNT];
static int with_null = 1;          /* P2P_RANDOM_NULL=0: no calls on MPI_PROC_NULL */
static int with_isendrecv = 1;     /* P2P_RANDOM_ISENDRECV=0: pairs only by the blocking calls */
static int with_bsend_restart = 1; /* P2P_RANDOM_BSEND_RESTART=0: MPI_Bsend_init's requests are
                                    * started once only */

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

/* An MPI call that fails names the plan and the place in it, and the communicator. */
static void on_error(MPI_Comm *c, int *code, ...) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, idx = -1;
    for (int i = 0; i < ncomm; i++)
        if (comms[i] == *c) idx = i;
    MPI_Error_string(*code, s, &len);
    fprintf(stderr, "FAIL rank %d: %s, position %d of %d: a call on comm %d failed: %s\n", me,
            where(), done_upto, nmsg, idx, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Communicator ranks: WORLD and the dup as WORLD; the split (colour w % 2, key np - w)
 * numbers each half backwards; the intercommunicator between the halves keeps the split's
 * numbering in each group; merging it (the odd half high) puts the even half first. */
static int crank(int comm, int w) {
    if (comm < 2) return w;
    int c = w % 2, members = (np - c + 1) / 2;
    if (comm == 4) return (c ? (np + 1) / 2 : 0) + crank(2, w);
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

/* Whether rank w receives by source on communicator c (a pair's messages need that). */
static int by_source(int c, int w) {
    return modes[c][w] == SPECIFIC || modes[c][w] == ANYTAG;
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
        /* Now and then the message goes back the way the one before came, and both ranks
         * send and receive in one call. The receive of a pair takes only its partner's
         * messages, so it can take nothing but the message meant for it. */
        msg_t *p = i ? &plan[i - 1] : NULL;
        if (p && !p->pair && !p->ready && p->src != p->dst && by_source(p->comm, p->src) &&
            by_source(p->comm, p->dst) && below(4) == 0) {
            p->pair = 1, m->pair = 2;
            m->comm = p->comm, m->src = p->dst, m->dst = p->src;
        } else {
            m->comm = below(ncomm);
            m->src = below(np);
            if (m->comm < 2 || m->comm == 4) {
                m->dst = below(np);
            } else { /* the same half (split), the other half (intercommunicator) */
                int c = (m->src + (m->comm == 3)) % 2;
                m->dst = c + 2 * below((np - c + 1) / 2);
            }
        }
        m->csrc = crank(m->comm, m->src);
        m->cdst = crank(m->comm, m->dst);
        m->tag = below(NTAG);
        m->stype = below(4);
        m->len = draw_len();
        if (m->stype == 3) m->len &= ~1;
        if (!m->pair && i > 0 && below(6) == 0) { /* the shape of an earlier one, as programs
                                                   * repeat their exchanges */
            const msg_t *k = &plan[below(i)];
            m->like = 1 + (int)(k - plan);
            m->comm = k->comm, m->src = k->src, m->dst = k->dst, m->csrc = k->csrc;
            m->cdst = k->cdst, m->tag = k->tag, m->stype = k->stype, m->len = k->len;
        }
        /* a ready send: only the first of its source, tag and receiver in the epoch, received
         * by source and tag, so that the receive posted before the epoch takes it */
        int first = 1;
        for (int j = 0; j < i; j++)
            if (plan[j].comm == m->comm && plan[j].src == m->src && plan[j].dst == m->dst &&
                plan[j].tag == m->tag)
                first = 0;
        m->ready = !m->pair && first && modes[m->comm][m->dst] == SPECIFIC && below(4) == 0;
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
        if (m->pair) { /* MPI_Sendrecv_replace when the buffer can hold what comes back */
            const msg_t *back = &plan[m->pair == 1 ? i + 1 : i - 1];
            int nb = below(2) && with_isendrecv;
            m->skind = m->stype < 2 && back->len <= m->len && below(2) ? SENDRECV_R : SENDRECV_S;
            if (nb) m->skind += ISENDRECV_S - SENDRECV_S;
            continue;
        }
        int blocking = m->safe <= i && (m->dst != m->src || m->ready), kind;
        int like = m->like ? plan[m->like - 1].skind : -1;
        if (like == PSEND || like == PSSEND || like == PBSEND) {
            kind = like; /* so that the sender may start the same request again */
        } else if (m->ready) {
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

/* Persistent requests that completed and wait to be started again for a later message of the
 * same shape in the epoch: a send with the same destination, tag, send type, length and
 * kind; a receive with the same communicator, source and tag (so the same largest message),
 * into the same receive type. */
typedef struct {
    MPI_Request rq;
    int *buf;
    size_t ints;
    int send, comm, peer, tag, type, count, kind;
} pooled_t;
static pooled_t pool[MAXOPS];
static int npool;

/* A pooled request for this shape (count: the length of a send, the least count a receive
 * must have been posted with), or -1. */
static int pooled(int send, int comm, int peer, int tag, int type, int count, int kind) {
    for (int i = 0; i < npool; i++) {
        const pooled_t *q = &pool[i];
        if (q->send == send && q->comm == comm && q->peer == peer && q->tag == tag &&
            (send ? q->type == type && q->count == count && q->kind == kind : q->count >= count))
            return i;
    }
    return -1;
}

/* Takes pooled request k into o, to be started again. */
static void take(op_t *o, int k) {
    const pooled_t *q = &pool[k];
    o->rq = q->rq, o->buf = q->buf, o->ints = q->ints, o->count = q->count;
    o->persistent = 1;
    pool[k] = pool[--npool];
    counts[N_RESTART]++;
}

static void pool_free(void) {
    for (int i = 0; i < npool; i++) {
        CHECK_RC(MPI_Request_free(&pool[i].rq));
        free(pool[i].buf);
    }
    npool = 0;
}

static const char *completed_by = ""; /* the call that completed a request */

/* After MPI_(I)sendrecv_replace, past what came in, the buffer must still hold what went out;
 * then those places are set as check_recv() expects them. */
static void replace_tail(const op_t *o, const MPI_Status *st) {
    int s = plan[o->msg].src == me ? o->msg : o->msg - 1, t = plan[s].stype, len = plan[s].len;
    int n = -1;
    const char *how = recv_names[recs[o->rec].kind];
    CHECK_RC(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n >= 0 && n <= len, "%s: %s of %d ints got a count of %d", where(), how, len, n);
    for (int k = n; k < len; k++) {
        size_t at = off(t, (size_t)k);
        CHECK(o->buf[at] == val(s, k),
              "%s: %s sent message %d (%d ints) and got %d ints, but changed int %d past them",
              where(), how, s, len, n, k);
        o->buf[at] = SENT;
    }
}

/* The status of a receive from MPI_PROC_NULL, and its buffer, which it must leave alone. */
static void check_null(const MPI_Status *st, const int *buf, const char *how) {
    int n = -1;
    CHECK_RC(MPI_Get_count(st, MPI_INT, &n));
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: %s from MPI_PROC_NULL gave source %d, tag %d, count %d%s%s", where(), how,
          st->MPI_SOURCE, st->MPI_TAG, n, *completed_by ? ", completed by " : "", completed_by);
    for (int i = 0; buf && i < 4; i++)
        CHECK(buf[i] == SENT, "%s: %s from MPI_PROC_NULL wrote int %d", where(), how, i);
}

static void finish(op_t *o, const MPI_Status *st) {
    if (o->null) {
        if (!o->send) check_null(st, o->buf, o->persistent ? "MPI_Recv_init" : "MPI_Irecv");
    } else if (o->cancel) {
        int flag = 0;
        CHECK_RC(MPI_Test_cancelled(st, &flag));
        CHECK(flag, "%s: a receive for tag %d that nothing matches was not cancelled", where(),
              CANCEL_TAG);
    } else if (o->send) {
        for (size_t i = 0; i < o->ints; i++) o->buf[i] = -77; /* a late reader sees this */
    } else {
        if (o->replace) replace_tail(o, st);
        check_recv(o->rec, o->buf, o->ints, st);
        if (o->sbuf) {
            for (size_t i = 0; i < o->sints; i++) o->sbuf[i] = -77;
            free(o->sbuf);
        }
    }
    o->gone = 1;
    if (o->persistent && !o->null && mine(4) &&
        (with_bsend_restart || !o->send || plan[o->msg].skind != PBSEND)) { /* to start again */
        const msg_t *m = &plan[o->msg];
        const rec_t *rc = o->send ? NULL : &recs[o->rec];
        pool[npool++] = o->send ? (pooled_t){o->rq,   o->buf, o->ints,  1,      m->comm,
                                             m->cdst, m->tag, m->stype, m->len, m->skind}
                                : (pooled_t){o->rq,    o->buf,   o->ints,   0,        rc->comm,
                                             rc->psrc, rc->ptag, rc->rtype, o->count, PRECV};
        return;
    }
    if (o->persistent) CHECK_RC(MPI_Request_free(&o->rq));
    free(o->buf);
}

/* Drops the finished operations from ops[]. */
static void compact(void) {
    CHECK(npending == 0, "operations not started yet would move");
    int k = 0;
    for (int i = 0; i < nops; i++)
        if (!ops[i].gone) ops[k++] = ops[i];
    nops = k;
}

/* Which started operations may be waited for now: a send once its receiver has posted every
 * receive that may take it, a receive once the position of its message has been passed (a
 * ready send's receive is posted before the epoch, long before its message is sent). */
static int waitable(const op_t *o) {
    if (o->null) return 1;
    if (o->cancel) return 0;
    return (o->send ? plan[o->msg].safe : o->msg) < done_upto;
}

/* Starts the persistent requests put off by start(), in one MPI_Startall (or MPI_Start). */
static void flush_starts(void) {
    if (npending == 0) return;
    MPI_Request rq[MAXOPS];
    for (int i = 0; i < npending; i++) rq[i] = ops[pending[i]].rq;
    if (npending == 1 && mine(2))
        CHECK_RC(MPI_Start(&rq[0]));
    else
        CHECK_RC(MPI_Startall(npending, rq));
    counts[N_STARTALL] += npending > 1;
    for (int i = 0; i < npending; i++) ops[pending[i]].rq = rq[i];
    npending = 0;
}

/* Starts the persistent request of o now, or puts it off to start with others in one
 * MPI_Startall. That may start them in any order, so two receives on one communicator, or two
 * sends to one rank on one communicator, never share one. Whatever this rank does next that
 * could wait, or that could match or be matched before a request put off, starts them first. */
static void start(op_t *o) {
    if (mine(3) == 0) {
        flush_starts();
        CHECK_RC(MPI_Start(&o->rq));
        return;
    }
    const msg_t *m = &plan[o->msg];
    for (int i = 0; i < npending; i++) {
        const op_t *q = &ops[pending[i]];
        const msg_t *n = &plan[q->msg];
        if (q->send == o->send && n->comm == m->comm && (!o->send || n->cdst == m->cdst)) {
            flush_starts();
            break;
        }
    }
    pending[npending++] = (int)(o - ops);
}

/* Completes some of the started operations, in a way this rank draws. all: every one. */
static void complete(int all) {
    MPI_Request rq[MAXOPS];
    MPI_Status st[MAXOPS];
    int n = 0, out[MAXOPS], cnt = 0, k = -1, flag = 0;
    op_t *sel[MAXOPS];
    flush_starts();
    for (int i = 0; i < nops; i++)
        if (all ? !ops[i].cancel : waitable(&ops[i])) sel[n] = &ops[i], rq[n++] = ops[i].rq;
    if (n == 0) return;
    int how = all ? (mine(2) ? 7 : 9) : mine(9);
    static const char *const how_names[] = {"MPI_Wait",
                                            "MPI_Test",
                                            "MPI_Waitany",
                                            "MPI_Testany",
                                            "MPI_Testsome",
                                            "MPI_Waitsome",
                                            "MPI_Testall",
                                            "MPI_Waitall",
                                            "MPI_Request_get_status and MPI_Wait",
                                            "MPI_Testany, one by one"};
    completed_by = how_names[how];
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
    case 8: /* MPI_Request_get_status until it is done, then MPI_Wait, which must agree */
        k = mine(n);
        counts[N_GETSTATUS]++;
        do CHECK_RC(MPI_Request_get_status(rq[k], &flag, &st[1]));
        while (!flag);
        CHECK_RC(MPI_Wait(&rq[k], &st[0]));
        if (!sel[k]->send) {
            int n0 = -1, n1 = -2;
            CHECK_RC(MPI_Get_count(&st[0], MPI_INT, &n0));
            CHECK_RC(MPI_Get_count(&st[1], MPI_INT, &n1));
            CHECK(
                st[0].MPI_SOURCE == st[1].MPI_SOURCE && st[0].MPI_TAG == st[1].MPI_TAG && n0 == n1,
                "%s: MPI_Request_get_status said source %d tag %d count %d, MPI_Wait after "
                "it source %d tag %d count %d",
                where(), st[1].MPI_SOURCE, st[1].MPI_TAG, n1, st[0].MPI_SOURCE, st[0].MPI_TAG, n0);
        }
        finish(sel[k], &st[0]);
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
    int k = kind >= PSEND ? pooled(1, m->comm, m->cdst, m->tag, t, m->len, kind) : -1;
    if (k >= 0) { /* the request of an earlier message of this shape, with the new data */
        op_t *o = new_op();
        take(o, k);
        CHECK(o->ints == ints, "a pooled send buffer of %zu ints for %zu", o->ints, ints);
        memcpy(o->buf, b, ints * sizeof(int));
        free(b);
        o->send = 1, o->msg = i;
        start(o);
        return;
    }
    if (kind < PSEND) flush_starts();
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
    if (kind < ISEND) { /* done: the buffer is the program's again */
        for (size_t k = 0; k < ints; k++) b[k] = -77;
        free(b);
        return;
    }
    op_t *o = new_op();
    o->rq = rq, o->send = 1, o->persistent = kind >= PSEND, o->msg = i, o->buf = b;
    o->ints = ints;
    if (o->persistent) start(o);
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
    int k = persistent ? pooled(0, m->comm, psrc, ptag, 0, class_max(m, psrc, ptag), PRECV) : -1;
    if (k >= 0) { /* the request of an earlier receive with this pattern */
        o->rec = new_rec(m->comm, psrc, ptag, PRECV, pool[k].type);
        take(o, k);
        for (size_t j = 0; j < o->ints; j++) o->buf[j] = SENT;
        start(o);
        return;
    }
    o->rec = new_rec(m->comm, psrc, ptag, persistent ? PRECV : IRECV, rtype);
    int n = class_max(m, psrc, ptag) + mine(SLACK);
    o->count = n;
    o->buf = recv_buf(rtype, n, &o->ints);
    if (persistent) {
        CHECK_RC(MPI_Recv_init(o->buf, n, rtypes[rtype], psrc, ptag, comms[m->comm], &o->rq));
        o->persistent = 1;
        start(o);
    } else {
        flush_starts();
        CHECK_RC(MPI_Irecv(o->buf, n, rtypes[rtype], psrc, ptag, comms[m->comm], &o->rq));
    }
}

/* Receives message i, or with sendrecv sends it to oneself and receives in one MPI_Sendrecv. */
static void do_recv(int i, int sendrecv) {
    msg_t *m = &plan[i];
    MPI_Comm c = comms[m->comm];
    int kind = sendrecv ? SENDRECV : mine(NRECV), psrc, ptag;
    pattern(m, &psrc, &ptag);
    if (kind != SENDRECV && mine(2) &&
        pooled(0, m->comm, psrc, ptag, 0, class_max(m, psrc, ptag), PRECV) >= 0)
        kind = PRECV; /* a persistent receive with this pattern is there to start again */
    if (kind == IRECV || kind == PRECV) {
        post_irecv(i, kind == PRECV);
        return;
    }
    int rtype = mine(2), flag = 0, n;
    flush_starts();
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

/* This rank's side of the pair that begins with message first: it sends its message and
 * receives the other in one MPI_Sendrecv, MPI_Sendrecv_replace or their nonblocking forms,
 * which are completed with the rest once the pair's place in the plan is passed. */
static void do_pair(int first) {
    int s = plan[first].src == me ? first : first + 1, r = s == first ? first + 1 : first;
    const msg_t *ms = &plan[s], *mr = &plan[r];
    MPI_Comm c = comms[ms->comm];
    int psrc, ptag, kind = ms->skind, t = ms->stype;
    int nb = kind == ISENDRECV_S || kind == ISENDRECV_R;
    pattern(mr, &psrc, &ptag);
    flush_starts();
    op_t *o = new_op();
    o->msg = first + 1;
    o->replace = kind == SENDRECV_R || kind == ISENDRECV_R;
    counts[N_PAIR]++;
    counts[N_REPLACE] += o->replace;
    counts[N_ISENDRECV] += nb;
    MPI_Status st;
    if (o->replace) { /* what goes out is in the buffer that what comes in fills */
        o->rec = new_rec(mr->comm, psrc, ptag, nb ? IREPLACE : REPLACE, t);
        o->buf = recv_buf(t, ms->len, &o->ints);
        for (int k = 0; k < ms->len; k++) o->buf[off(t, (size_t)k)] = val(s, k);
#if HAVE_ISENDRECV
        if (nb)
            CHECK_RC(MPI_Isendrecv_replace(o->buf, ms->len, stypes[t], ms->cdst, ms->tag, psrc,
                                           ptag, c, &o->rq));
        else
#endif
            CHECK_RC(MPI_Sendrecv_replace(o->buf, ms->len, stypes[t], ms->cdst, ms->tag, psrc, ptag,
                                          c, &st));
    } else {
        int scount, rtype = mine(2);
        o->rec = new_rec(mr->comm, psrc, ptag, nb ? ISENDRECV : SENDRECV, rtype);
        o->sbuf = send_buf(s, &scount, &o->sints);
        int n = class_max(mr, psrc, ptag) + mine(SLACK);
        o->buf = recv_buf(rtype, n, &o->ints);
#if HAVE_ISENDRECV
        if (nb)
            CHECK_RC(MPI_Isendrecv(o->sbuf, scount, stypes[t], ms->cdst, ms->tag, o->buf, n,
                                   rtypes[rtype], psrc, ptag, c, &o->rq));
        else
#endif
            CHECK_RC(MPI_Sendrecv(o->sbuf, scount, stypes[t], ms->cdst, ms->tag, o->buf, n,
                                  rtypes[rtype], psrc, ptag, c, &st));
    }
    if (!nb) {
        completed_by = "";
        finish(o, &st);
        compact();
    }
}

/* Now and then an operation on MPI_PROC_NULL, which must complete at once, move nothing and
 * leave the receive buffer alone. */
static void proc_null_op(void) {
    MPI_Comm c = comms[mine(ncomm)];
    int buf[4] = {SENT, SENT, SENT, SENT}, flag = 0, kind = mine(7);
    MPI_Status st;
    const char *how = "";
    counts[N_NULL]++;
    switch (kind) {
    case 0: CHECK_RC(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 0, c)); return;
    case 1:
        how = "MPI_Recv";
        CHECK_RC(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, mine(2) ? 1 : MPI_ANY_TAG, c, &st));
        break;
    case 2: {
        int out[2] = {1, 2};
        how = "MPI_Sendrecv";
        CHECK_RC(MPI_Sendrecv(out, 2, MPI_INT, MPI_PROC_NULL, 0, buf, 4, MPI_INT, MPI_PROC_NULL, 0,
                              c, &st));
        break;
    }
    case 3:
        how = "MPI_Iprobe";
        CHECK_RC(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, c, &flag, &st));
        CHECK(flag, "%s: MPI_Iprobe of MPI_PROC_NULL found nothing", where());
        break;
    default: { /* MPI_Isend, MPI_Irecv, MPI_Recv_init, completed with the rest */
        op_t *o = new_op();
        o->null = 1, o->send = kind == 4, o->persistent = kind == 6;
        o->buf = alloc_ints(4);
        for (int i = 0; i < 4; i++) o->buf[i] = SENT;
        if (kind == 4)
            CHECK_RC(MPI_Isend(o->buf, 4, MPI_INT, MPI_PROC_NULL, 2, c, &o->rq));
        else if (kind == 5)
            CHECK_RC(MPI_Irecv(o->buf, 4, MPI_INT, MPI_PROC_NULL, 2, c, &o->rq));
        else
            CHECK_RC(MPI_Recv_init(o->buf, 4, MPI_INT, MPI_PROC_NULL, 2, c, &o->rq));
        if (kind == 6) CHECK_RC(MPI_Start(&o->rq));
        return;
    }
    }
    check_null(&st, buf, how);
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
    e = getenv("P2P_RANDOM_NULL");
    with_null = !e || atoi(e) != 0;
    e = getenv("P2P_RANDOM_BSEND_RESTART");
    with_bsend_restart = !e || atoi(e) != 0;
    e = getenv("P2P_RANDOM_ISENDRECV");
    with_isendrecv = HAVE_ISENDRECV && (!e || atoi(e) != 0);
    rng = (uint64_t)seed * 0x2545f4914f6cdd1dull + (uint64_t)np;
    local_rng = rng ^ ((uint64_t)(me + 1) << 32);

    comms[0] = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, np - me, &comms[2]));
    ncomm = 3;
    if (np > 1) { /* local leaders: rank 0 of each half, the half's highest WORLD rank */
        int other = (me + 1) % 2, leader = other + 2 * ((np - other + 1) / 2 - 1);
        CHECK_RC(MPI_Intercomm_create(comms[2], 0, MPI_COMM_WORLD, leader, 99, &comms[3]));
        CHECK_RC(MPI_Intercomm_merge(comms[3], me % 2, &comms[4]));
        ncomm = 5;
    }
    MPI_Errhandler eh;
    CHECK_RC(MPI_Comm_create_errhandler(on_error, &eh));
    for (int c = 0; c < ncomm; c++) CHECK_RC(MPI_Comm_set_errhandler(comms[c], eh));
    CHECK_RC(MPI_Errhandler_free(&eh));
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
        flush_starts();
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
            if (with_null && mine(25) == 0) proc_null_op();
            const msg_t *m = &plan[i];
            if (m->src == me) sent++, bytes += 4L * m->len;
            if (m->pair == 1) {
                /* both ranks wait for the message back */
            } else if (m->pair == 2) {
                if (m->src == me || m->dst == me) do_pair(i - 1);
            } else if (m->src == me && m->dst == me && !m->ready && m->safe == i && mine(3) == 0) {
                /* to oneself, when the receive at this position is sure to take it: now and
                 * then both in one MPI_Sendrecv */
                do_recv(i, 1);
            } else {
                if (m->src == me) do_send(i);
                if (m->dst == me && !m->ready) do_recv(i, 0);
            }
            done_upto = i + 1;
            if (mine(3) == 0) complete(0);
        }
        flush_starts();
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
        pool_free();
    }
    void *bp;
    int bs;
    CHECK_RC(MPI_Buffer_detach(&bp, &bs));
    CHECK(bp == battach && bs == bsize, "MPI_Buffer_detach gave back %p (%d bytes)", bp, bs);
    free(battach);
    long all[2 + NCOUNT], here[2 + NCOUNT] = {sent, bytes};
    memcpy(here + 2, counts, sizeof counts);
    CHECK_RC(MPI_Reduce(here, all, 2 + NCOUNT, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0)
        printf("p2p_random: %ld epochs, %ld messages, %ld MB, seed %ld, %d ranks: ok (%ld "
               "sides of pairs, %ld of them replacing, %ld nonblocking; %ld MPI_Startall of "
               "several; %ld persistent requests started again; %ld MPI_Request_get_status "
               "loops; %ld calls on MPI_PROC_NULL)\n",
               epochs, all[0], all[1] >> 20, seed, np, all[2 + N_PAIR], all[2 + N_REPLACE],
               all[2 + N_ISENDRECV], all[2 + N_STARTALL], all[2 + N_RESTART], all[2 + N_GETSTATUS],
               all[2 + N_NULL]);
    for (int t = 1; t < 4; t++) MPI_Type_free(&stypes[t]);
    for (int c = ncomm - 1; c > 0; c--) MPI_Comm_free(&comms[c]);
    MPI_Finalize();
    return 0;
}
