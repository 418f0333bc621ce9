/* Self-tuning broadcast trees (capability 5): tree shapes and their wire form (tree.c), the
 * search that a broadcast's root runs over trees while it times its calls (tuner.c), and the
 * store that remembers the best tree per set of process locations, root and message size
 * across runs (store.c, SQLite). The broadcast itself, which carries each child's subtree
 * with the message, is in src/coll/bcast.c. docs/tuning.md describes all of it. */
#ifndef CO_TUNE_H
#define CO_TUNE_H

#include "../core/cohort.h"

#include <stdint.h>
#include <stdio.h>

/* ---- Trees (tree.c) --------------------------------------------------------------------------
 * A tree over n ranks is its parent array: parent[root] = -1, every other rank's parent is a
 * rank whose chain of parents ends at the root. */

/* Whether parent[0..n) is such a tree rooted at root. */
int co_tree_valid(const int *parent, int n, int root);
/* The flat tree: every rank a child of the root. */
void co_tree_flat(int *parent, int n, int root);
/* The binomial tree of the binomial broadcast: counted from the root, rank r's parent is r
 * with its lowest set bit cleared. */
void co_tree_binomial(int *parent, int n, int root);
/* Whether b lies in the subtree of a (a itself included). */
int co_tree_below(const int *parent, int n, int b, int a);
/* The single-step transformation trans(a, b), for a not the root and b another rank: when b
 * lies outside a's subtree, a moves with its subtree to become a child of b; when b lies
 * inside it, b takes a's place (b's children go to b's parent, then b hangs where a hung and
 * a below b), which lets a fast link replace a slow one in one step. co_tree_can_move says
 * whether trans(a, b) gives a tree other than parent; co_tree_move applies it. */
int co_tree_can_move(const int *parent, int n, int root, int a, int b);
void co_tree_move(int *parent, int n, int a, int b);
/* The tree in preorder as n (rank, subtree size) pairs, ent[2i] and ent[2i+1]; the root first
 * and each rank's children in the order it sends to them: larger subtrees first (they have
 * further to go), then by rank. Returns 0, or -1 when out of memory. */
int co_tree_preorder(const int *parent, int n, int root, uint32_t *ent);
/* Whether ent[0..2m) is a well-formed preorder of m distinct ranks below n, each subtree
 * size covering exactly its descendants: what a broadcast checks before it forwards. */
int co_tree_preorder_valid(const uint32_t *ent, int m, int n);
/* "-1 0 0 1": the parent array as text, and back (0, or -1 when s does not describe a
 * valid tree of n ranks rooted at root). */
void co_tree_format(const int *parent, int n, char *out, size_t len);
int co_tree_parse(const char *s, int *parent, int n, int root);

/* ---- The search (tuner.c) -------------------------------------------------------------------- */

typedef struct co_tune_ctx co_tune_ctx;

/* The size class of a message: classes are powers of two, class k holding sizes
 * [2^(k-1), 2^k). */
int co_tune_class(size_t bytes);
/* The search state for broadcasts of `bytes` from `root` over n ranks at the locations that
 * `key` names (co_tune_key), made at the first such call, from the store when it knows
 * them; NULL when out of memory. */
co_tune_ctx *co_tune_get(const char *key, int n, int root, size_t bytes);
/* The tree for the next call (a parent array of n), and whether the call is to be timed
 * (acknowledgements come back up the tree, and the root passes the time to
 * co_tune_report). */
const int *co_tune_next(co_tune_ctx *t, int *timed);
void co_tune_report(co_tune_ctx *t, uint64_t ns);
/* Saves what this run learned; at MPI_Finalize. */
void co_tune_fini(void);
/* The locations of c's ranks, in rank order, as the store's key (malloc'd). */
char *co_tune_key(const co_comm *c);

/* ---- The store (store.c) --------------------------------------------------------------------- */

typedef struct co_tune_row {
    const char *key; /* the ranks' locations (co_tune_key) */
    int root, cls, n;
    char *tree;     /* parent array as text (co_tree_format) */
    double time_us; /* the best tree's time when it was last measured */
    int converged;  /* the search ended: later runs use the tree without timing it */
    long trials;    /* timed calls spent on the search, over all runs */
    long runs;      /* runs that used the entry */
} co_tune_row;

/* The file the store lives in, for a COHORT_TUNE_DB of `setting`: the file it names, or the
 * default under the user's cache directory when empty; NULL when remembering is off. */
const char *co_tune_db_path(const char *setting, char *buf, size_t len);
/* Looks up (key, root, cls): 1 and *row filled (row->tree malloc'd), 0 if not there, -1 on
 * an error (err says which). */
int co_tune_store_get(const char *db, const char *key, int root, int cls, co_tune_row *row,
                      char *err, size_t errlen);
/* Inserts or replaces rows[0..m), in one transaction. */
int co_tune_store_put(const char *db, const co_tune_row *rows, int m, char *err, size_t errlen);
/* `cohort tune`: lists the store's entries; `cohort tune --forget`: empties it. */
int co_tune_list(const char *db, FILE *out, FILE *err);
int co_tune_forget(const char *db, FILE *out, FILE *err);

#endif /* CO_TUNE_H */
