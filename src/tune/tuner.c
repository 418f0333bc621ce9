/* The search for a good broadcast tree, run by the root as the program broadcasts. It starts
 * from the best tree the store knows (else the flat tree) and the binomial tree, whichever is
 * faster (the binomial tree is the fixed default that a tuned tree must beat to be worth its
 * search; on links that differ little it is hard to beat), times each candidate over a few
 * calls (the fastest of them counts: a call slowed by a descheduled rank says nothing about
 * the tree), and proposes single-step transformations trans(a, b) of the best trees found so
 * far. A candidate joins the short list of best trees only when it beats the best by a
 * threshold, evicting the worst; a transformation that made a tree slower goes on the
 * bad-link list and is not proposed again. The search ends when every transformation of
 * every listed tree has been tried, or when many in a row brought nothing; the best tree is
 * then stored and later calls, and later runs, use it untimed. */
#include "tune.h"
#include "../xport/emu.h"

#include <stdlib.h>
#include <string.h>

enum {
    LIST = 4,         /* best trees kept */
    REPS = 3,         /* timed calls per candidate */
    BAD_MAX = 4096,   /* bad-link list entries kept (oldest dropped) */
    STALE_MIN = 32,   /* candidates in a row without improvement that end the search: n^2 */
    STALE_MAX = 1024, /* (a whole neighbourhood) but at least and at most these */
    ENUM_MAX = 65536  /* neighbourhoods up to this size are tried in a shuffled order of all
                         their moves; larger ones (over 256 ranks) by random draws */
};
#define THRESHOLD 0.05 /* a candidate must beat the best by 5% to count */

struct co_tune_ctx {
    struct co_tune_ctx *next;
    char *key;
    int root, cls, n;
    int *best[LIST];
    double best_us[LIST];
    int nbest;
    int *cand;          /* the tree being timed */
    int cand_src;       /* the listed tree it came from; -1, -2: the two starting trees */
    int cand_a, cand_b; /* the transformation that made it */
    double rep_us[REPS];
    int nreps;
    int src;         /* listed tree whose transformations are being tried */
    uint32_t *order; /* those transformations, a*n + b, in random order (NULL: drawn) */
    size_t norder, pos;
    int stale;
    uint64_t *bad;
    size_t nbad, bad_next;
    int converged;
    long trials;                 /* timed calls in this run */
    long base_trials, base_runs; /* the stored entry's, when there was one */
    uint64_t rng;
};

typedef struct co_tune_state {
    co_tune_ctx *ctxs;
} co_tune_state;

int co_tune_class(size_t bytes) {
    int k = 0;
    while (bytes) {
        k++;
        bytes >>= 1;
    }
    return k;
}

static uint64_t next_rand(co_tune_ctx *t) {
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return t->rng;
}

static void shuffle_moves(co_tune_ctx *t) {
    t->pos = 0;
    if (!t->order) return;
    for (size_t i = t->norder; i > 1; i--) {
        size_t j = (size_t)(next_rand(t) % i);
        uint32_t x = t->order[i - 1];
        t->order[i - 1] = t->order[j];
        t->order[j] = x;
    }
}

static int is_bad(const co_tune_ctx *t, uint64_t move) {
    for (size_t i = 0; i < t->nbad; i++)
        if (t->bad[i] == move) return 1;
    return 0;
}

static void add_bad(co_tune_ctx *t, uint64_t move) {
    if (is_bad(t, move)) return;
    if (t->nbad < BAD_MAX) {
        t->bad[t->nbad++] = move;
    } else {
        t->bad[t->bad_next] = move;
        t->bad_next = (t->bad_next + 1) % BAD_MAX;
    }
}

static void save(co_tune_ctx *const *list, int m);

static void converge(co_tune_ctx *t) {
    t->converged = 1;
    save(&t, 1); /* now: another program on the same ranks may start before this one ends */
}

/* The next transformation to time, of listed tree src onwards; converges when none is left. */
static void next_candidate(co_tune_ctx *t) {
    int n = t->n;
    int stale_max = n * n < STALE_MIN ? STALE_MIN : n * n > STALE_MAX ? STALE_MAX : n * n;
    while (t->stale < stale_max) {
        if (t->pos == t->norder) {
            if (++t->src >= t->nbest) break;
            shuffle_moves(t);
        }
        uint64_t moves = (uint64_t)n * (uint64_t)n;
        uint64_t m = t->order ? t->order[t->pos] : next_rand(t) % moves;
        t->pos++;
        int a = (int)(m / (uint64_t)n), b = (int)(m % (uint64_t)n);
        const int *from = t->best[t->src];
        if (!co_tree_can_move(from, n, t->root, a, b) || is_bad(t, m)) continue;
        memcpy(t->cand, from, (size_t)n * sizeof(int));
        co_tree_move(t->cand, n, a, b);
        t->cand_src = t->src;
        t->cand_a = a;
        t->cand_b = b;
        return;
    }
    converge(t);
}

/* Puts cand into the list by its time (a candidate that beat the best goes first), dropping
 * the worst when full, and starts over from the best. */
static void list_insert(co_tune_ctx *t, double us) {
    int at = 0;
    while (at < t->nbest && t->best_us[at] <= us) at++;
    if (at == LIST) return; /* (a starting tree slower than a full list: never) */
    int *slot = t->nbest == LIST ? t->best[LIST - 1] : t->best[t->nbest];
    if (t->nbest < LIST) t->nbest++;
    memmove(t->best + at + 1, t->best + at, (size_t)(t->nbest - 1 - at) * sizeof(int *));
    memmove(t->best_us + at + 1, t->best_us + at, (size_t)(t->nbest - 1 - at) * sizeof(double));
    memcpy(slot, t->cand, (size_t)t->n * sizeof(int));
    t->best[at] = slot;
    t->best_us[at] = us;
    t->src = 0;
    t->stale = 0;
    shuffle_moves(t);
}

static void ctx_free(co_tune_ctx *t) {
    free(t->key);
    free(t->cand);
    free(t->order);
    free(t->bad);
    for (int i = 0; i < LIST; i++) free(t->best[i]);
    free(t);
}

static co_tune_ctx *ctx_new(const char *key, int n, int root, int cls) {
    co_tune_ctx *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    size_t moves = (size_t)n * (size_t)n;
    t->key = strdup(key);
    t->cand = malloc((size_t)n * sizeof(int));
    if (moves <= ENUM_MAX) t->order = malloc(moves * sizeof(uint32_t));
    t->bad = malloc(BAD_MAX * sizeof(uint64_t));
    int ok = t->key && t->cand && (t->order || moves > ENUM_MAX) && t->bad;
    for (int i = 0; ok && i < LIST; i++) ok = (t->best[i] = malloc((size_t)n * sizeof(int))) != 0;
    if (!ok) {
        ctx_free(t);
        return NULL;
    }
    t->n = n;
    t->root = root;
    t->cls = cls;
    t->norder = t->order ? moves : 4 * STALE_MAX; /* draws per listed tree */
    for (size_t i = 0; t->order && i < moves; i++) t->order[i] = (uint32_t)i;
    t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)n << 40) ^ ((uint64_t)root << 20) ^ (uint64_t)cls;
    t->cand_src = -1;
    return t;
}

/* The starting tree: the stored one when the store has a valid one for these ranks, else the
 * flat tree. A stored tree whose search ended is used as it is (unless COHORT_TUNE_AGAIN). */
static void start(co_tune_ctx *t) {
    co_tree_flat(t->cand, t->n, t->root);
    char path[1024], err[256];
    const char *db = co_tune_db_path(co_st.cfg.tune_db, path, sizeof(path));
    if (!db) return;
    co_tune_row row;
    int rc = co_tune_store_get(db, t->key, t->root, t->cls, &row, err, sizeof(err));
    if (rc < 0) co_log(CO_LOG_WARN, "broadcast tuning: %s (starting from the flat tree)", err);
    if (rc <= 0) return;
    t->base_trials = row.trials;
    t->base_runs = row.runs;
    if (row.n == t->n && co_tree_parse(row.tree, t->cand, t->n, t->root) == 0) {
        if (row.converged && !co_st.cfg.tune_again) {
            memcpy(t->best[0], t->cand, (size_t)t->n * sizeof(int));
            t->best_us[0] = row.time_us;
            t->nbest = 1;
            t->converged = 1;
        }
    } else {
        co_log(CO_LOG_WARN,
               "broadcast tuning: the stored tree for root %d, class %d is not a "
               "tree of %d ranks; starting from the flat tree",
               t->root, t->cls, t->n);
        co_tree_flat(t->cand, t->n, t->root);
    }
    free(row.tree);
}

co_tune_ctx *co_tune_get(const char *key, int n, int root, size_t bytes) {
    if (!co_st.tune) {
        co_st.tune = calloc(1, sizeof(co_tune_state));
        if (!co_st.tune) return NULL;
    }
    int cls = co_tune_class(bytes);
    for (co_tune_ctx *t = co_st.tune->ctxs; t; t = t->next)
        if (t->n == n && t->root == root && t->cls == cls && !strcmp(t->key, key)) return t;
    co_tune_ctx *t = ctx_new(key, n, root, cls);
    if (!t) return NULL;
    start(t);
    t->next = co_st.tune->ctxs;
    co_st.tune->ctxs = t;
    return t;
}

const int *co_tune_next(co_tune_ctx *t, int *timed) {
    *timed = !t->converged;
    return t->converged ? t->best[0] : t->cand;
}

void co_tune_report(co_tune_ctx *t, uint64_t ns) {
    if (t->converged) return;
    t->trials++;
    t->rep_us[t->nreps++] = (double)ns / 1e3;
    if (t->nreps < REPS) return;
    t->nreps = 0;
    double us = t->rep_us[0];
    for (int i = 1; i < REPS; i++)
        if (t->rep_us[i] < us) us = t->rep_us[i];
    if (co_st.cfg.log_level >= CO_LOG_DEBUG) {
        char tree[256];
        co_tree_format(t->cand, t->n, tree, sizeof(tree));
        co_debug("bcast tuner: root %d, class %d: trans(%d, %d) of listed tree %d, parents %s: "
                 "%.1f us (best %.1f)",
                 t->root, t->cls, t->cand_a, t->cand_b, t->cand_src, tree, us,
                 t->nbest ? t->best_us[0] : 0.0);
    }
    if (t->cand_src < 0) { /* a starting tree */
        list_insert(t, us);
        if (t->cand_src == -1) {
            co_tree_binomial(t->cand, t->n, t->root);
            if (memcmp(t->cand, t->best[0], (size_t)t->n * sizeof(int))) {
                t->cand_src = -2; /* the binomial tree is timed next */
                return;
            }
        }
    } else if (us < t->best_us[0] * (1 - THRESHOLD)) {
        list_insert(t, us);
    } else {
        if (us > t->best_us[t->cand_src] * (1 + THRESHOLD))
            add_bad(t, (uint64_t)t->cand_a * (uint64_t)t->n + (uint64_t)t->cand_b);
        t->stale++;
    }
    next_candidate(t);
}

/* What the store is to hold of t (row->tree malloc'd); 0 if nothing: not one candidate was
 * timed to the end, or out of memory. */
static int ctx_row(const co_tune_ctx *t, co_tune_row *row) {
    size_t len = (size_t)t->n * 12 + 1;
    char *tree = t->nbest ? malloc(len) : NULL;
    if (!tree) return 0;
    co_tree_format(t->best[0], t->n, tree, len);
    *row = (co_tune_row){t->key,
                         t->root,
                         t->cls,
                         t->n,
                         tree,
                         t->best_us[0],
                         t->converged,
                         t->base_trials + t->trials,
                         t->base_runs + 1};
    return 1;
}

/* Writes the rows of the searches in list[0..m) in one transaction. */
static void save(co_tune_ctx *const *list, int m) {
    char path[1024], err[256];
    const char *db = co_tune_db_path(co_st.cfg.tune_db, path, sizeof(path));
    co_tune_row *rows = db && m ? malloc((size_t)m * sizeof(co_tune_row)) : NULL;
    if (!rows) return;
    int k = 0;
    for (int i = 0; i < m; i++) k += ctx_row(list[i], &rows[k]);
    if (k && co_tune_store_put(db, rows, k, err, sizeof(err)))
        co_log(CO_LOG_WARN, "broadcast tuning: %s (the trees found are not remembered)", err);
    for (int i = 0; i < k; i++) free(rows[i].tree);
    free(rows);
}

void co_tune_fini(void) {
    if (!co_st.tune) return;
    int m = 0;
    for (co_tune_ctx *t = co_st.tune->ctxs; t; t = t->next) m++;
    co_tune_ctx **list = malloc((size_t)(m ? m : 1) * sizeof(*list));
    m = 0;
    for (co_tune_ctx *t = co_st.tune->ctxs; t; t = t->next)
        if (list) list[m++] = t;
    if (list) save(list, m); /* (out of memory: nothing remembered) */
    free(list);
    for (co_tune_ctx *t = co_st.tune->ctxs, *next; t; t = next) {
        next = t->next;
        ctx_free(t);
    }
    free(co_st.tune);
    co_st.tune = NULL;
}

char *co_tune_key(const co_comm *c) {
    /* every rank of a job runs on this machine; under link emulation what tells ranks apart
     * is which emulated links join them: the topology's checksum and the ranks' process slots
     * (where a rank swap has put them) */
    size_t len = strlen(co_st.processor_name) + 64 + (co_st.emu ? (size_t)c->size * 11 : 0);
    char *key = malloc(len);
    if (!key) return NULL;
    size_t at = (size_t)snprintf(key, len, "%s*%d", co_st.processor_name, c->size);
    if (co_st.emu) {
        at += (size_t)snprintf(key + at, len - at, " emu:%08x ranks:", co_emu_checksum());
        for (int i = 0; i < c->size && at < len; i++)
            at += (size_t)snprintf(key + at, len - at, i ? ",%d" : "%d", co_proc_of(c->peers[i]));
    }
    return key;
}
