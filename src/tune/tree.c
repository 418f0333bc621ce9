/* Broadcast trees as parent arrays: checks, the single-step transformation the search applies,
 * the preorder that travels with a broadcast's message, and the text form the store keeps. */
#include "tune.h"

#include <stdlib.h>
#include <string.h>

int co_tree_valid(const int *parent, int n, int root) {
    if (n < 1 || root < 0 || root >= n || parent[root] != -1) return 0;
    for (int i = 0; i < n; i++) {
        if (i == root) continue;
        /* a chain from i longer than n ranks goes round a cycle */
        int r = i, steps = 0;
        while (r != root) {
            if (r < 0 || r >= n || ++steps > n) return 0;
            r = parent[r];
            if (r == -1) return 0;
        }
    }
    return 1;
}

void co_tree_flat(int *parent, int n, int root) {
    for (int i = 0; i < n; i++) parent[i] = i == root ? -1 : root;
}

void co_tree_binomial(int *parent, int n, int root) {
    for (int i = 0; i < n; i++) {
        int rel = (i - root + n) % n;
        parent[i] = rel == 0 ? -1 : ((rel & (rel - 1)) + root) % n;
    }
}

int co_tree_below(const int *parent, int n, int b, int a) {
    for (int r = b, steps = 0; r >= 0 && steps <= n; r = parent[r], steps++)
        if (r == a) return 1;
    return 0;
}

int co_tree_can_move(const int *parent, int n, int root, int a, int b) {
    return a != root && a != b && a >= 0 && a < n && b >= 0 && b < n &&
           (parent[a] != b || co_tree_below(parent, n, b, a));
}

void co_tree_move(int *parent, int n, int a, int b) {
    if (co_tree_below(parent, n, b, a)) {
        for (int i = 0; i < n; i++)
            if (parent[i] == b) parent[i] = parent[b];
        parent[b] = parent[a];
    }
    parent[a] = b;
}

/* Sorts kids[0..m) into sending order: larger subtrees first, then lower ranks (insertion
 * sort: a rank has few children, and they arrive in rank order). */
static void send_order(int *kids, int m, const int *size) {
    for (int i = 1; i < m; i++) {
        int k = kids[i], j = i;
        while (j > 0 &&
               (size[kids[j - 1]] < size[k] || (size[kids[j - 1]] == size[k] && kids[j - 1] > k))) {
            kids[j] = kids[j - 1];
            j--;
        }
        kids[j] = k;
    }
}

int co_tree_preorder(const int *parent, int n, int root, uint32_t *ent) {
    int *size = calloc((size_t)n, sizeof(int)), *kids = malloc((size_t)n * sizeof(int));
    int *first = malloc(((size_t)n + 1) * sizeof(int)), *stack = malloc((size_t)n * sizeof(int));
    int rc = -1;
    if (!size || !kids || !first || !stack) goto out;
    /* subtree sizes: every rank adds one to each rank on its way up */
    for (int i = 0; i < n; i++)
        for (int r = i; r != -1; r = parent[r]) size[r]++;
    /* children grouped by parent (counting sort), then each group in sending order */
    memset(first, 0, ((size_t)n + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        if (parent[i] >= 0) first[parent[i] + 1]++;
    for (int i = 0; i < n; i++) first[i + 1] += first[i];
    int *fill = stack; /* borrowed until the walk below */
    memcpy(fill, first, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        if (parent[i] >= 0) kids[fill[parent[i]]++] = i;
    for (int p = 0; p < n; p++) send_order(kids + first[p], first[p + 1] - first[p], size);
    /* preorder walk, children pushed in reverse so that the first is taken first */
    int top = 0, k = 0;
    stack[top++] = root;
    while (top) {
        int r = stack[--top];
        ent[2 * k] = (uint32_t)r;
        ent[2 * k + 1] = (uint32_t)size[r];
        k++;
        for (int j = first[r + 1] - 1; j >= first[r]; j--) stack[top++] = kids[j];
    }
    rc = k == n ? 0 : -1;
out:
    free(size);
    free(kids);
    free(first);
    free(stack);
    return rc;
}

int co_tree_preorder_valid(const uint32_t *ent, int m, int n) {
    if (m < 1 || m > n || ent[1] != (uint32_t)m) return 0;
    unsigned char *seen = calloc((size_t)n, 1);
    /* end[d]: where the subtree open at depth d ends; each entry must lie within all of them */
    size_t *end = malloc((size_t)m * sizeof(size_t));
    int ok = seen && end, depth = 0;
    for (int i = 0; ok && i < m; i++) {
        uint32_t r = ent[2 * i], sz = ent[2 * i + 1];
        while (depth > 0 && end[depth - 1] <= (size_t)i) depth--;
        if (r >= (uint32_t)n || seen[r] || sz < 1 || (size_t)i + sz > (size_t)m ||
            (depth > 0 && (size_t)i + sz > end[depth - 1])) {
            ok = 0;
            break;
        }
        seen[r] = 1;
        end[depth++] = (size_t)i + sz;
    }
    free(seen);
    free(end);
    return ok;
}

void co_tree_format(const int *parent, int n, char *out, size_t len) {
    size_t at = 0;
    if (len) out[0] = 0;
    for (int i = 0; i < n && at < len; i++) {
        int w = snprintf(out + at, len - at, i ? " %d" : "%d", parent[i]);
        if (w < 0) break;
        at += (size_t)w;
    }
}

int co_tree_parse(const char *s, int *parent, int n, int root) {
    for (int i = 0; i < n; i++) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < -1 || v >= n) return -1;
        parent[i] = (int)v;
        s = end;
    }
    while (*s == ' ') s++;
    return *s || !co_tree_valid(parent, n, root) ? -1 : 0;
}
