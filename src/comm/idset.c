/* ID sets (see idset.h). A double insertion of one ID would mean two live communicators could
 * get it, so normalising checks for overlap and stops the job if it ever finds one. */
#include "idset.h"

#include "../core/cohort.h"

#include <stdlib.h>
#include <string.h>

/* Single IDs kept apart before they are merged into the ranges on their own. */
#define LOOSE_MAX 65536

static void grow_ranges(co_idset *s, size_t need) {
    if (need <= s->capr) return;
    size_t cap = s->capr ? s->capr * 2 : 8;
    while (cap < need) cap *= 2;
    co_idrange *r = realloc(s->r, cap * sizeof(*r));
    if (!r) co_fatal("out of memory in a communicator ID pool");
    s->r = r;
    s->capr = cap;
}

void co_idset_clear(co_idset *s) {
    free(s->r);
    free(s->loose);
    memset(s, 0, sizeof(*s));
}

/* First range whose hi > id (binary search). */
static size_t range_after(const co_idset *s, uint64_t id) {
    size_t lo = 0, hi = s->nr;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->r[mid].hi <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* [lo, hi) into the ranges, merged with its neighbours; the count is the caller's. */
static void insert_range(co_idset *s, uint64_t lo, uint64_t hi) {
    size_t i = range_after(s, lo); /* ranges before i end at or before lo */
    if (i < s->nr && s->r[i].lo < hi)
        co_fatal("communicator ID pool: IDs [%llu, %llu) returned twice", (unsigned long long)lo,
                 (unsigned long long)hi);
    int join_left = i > 0 && s->r[i - 1].hi == lo;
    int join_right = i < s->nr && s->r[i].lo == hi;
    size_t changed = join_left ? i - 1 : i; /* ranges before it stay as they were */
    if (s->fit_from > changed) s->fit_from = changed;
    if (join_left && join_right) {
        s->r[i - 1].hi = s->r[i].hi;
        memmove(&s->r[i], &s->r[i + 1], (s->nr - i - 1) * sizeof(*s->r));
        s->nr--;
    } else if (join_left) {
        s->r[i - 1].hi = hi;
    } else if (join_right) {
        s->r[i].lo = lo;
    } else {
        grow_ranges(s, s->nr + 1);
        memmove(&s->r[i + 1], &s->r[i], (s->nr - i) * sizeof(*s->r));
        s->r[i] = (co_idrange){lo, hi};
        s->nr++;
    }
}

void co_idset_put_range(co_idset *s, uint64_t lo, uint64_t hi) {
    if (lo >= hi) return;
    insert_range(s, lo, hi);
    s->count += hi - lo;
}

void co_idset_put(co_idset *s, uint64_t id) {
    if (s->nl == s->capl) {
        if (s->nl >= LOOSE_MAX) co_idset_normalize(s);
        if (s->nl == s->capl) {
            size_t cap = s->capl ? s->capl * 2 : 16;
            uint64_t *l = realloc(s->loose, cap * sizeof(*l));
            if (!l) co_fatal("out of memory in a communicator ID pool");
            s->loose = l;
            s->capl = cap;
        }
    }
    s->loose[s->nl++] = id;
    s->count++;
}

uint64_t co_idset_take1(co_idset *s) {
    if (s->nl) {
        s->count--;
        return s->loose[--s->nl];
    }
    if (!s->nr) return 0;
    uint64_t id = s->r[0].lo++;
    if (s->r[0].lo == s->r[0].hi) {
        memmove(&s->r[0], &s->r[1], (s->nr - 1) * sizeof(*s->r));
        s->nr--;
        if (s->fit_from) s->fit_from--;
    }
    s->count--;
    return id;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void co_idset_normalize(co_idset *s) {
    if (!s->nl) return;
    if (s->nl <= 16) { /* the common case: a few singles, each found by a binary search */
        for (size_t i = 0; i < s->nl; i++) insert_range(s, s->loose[i], s->loose[i] + 1);
        s->nl = 0;
        return;
    }
    qsort(s->loose, s->nl, sizeof(uint64_t), cmp_u64);
    /* Turn the sorted singles into runs, then merge the two sorted range lists. */
    size_t nruns = 0;
    for (size_t i = 0; i < s->nl; i++) {
        if (i && s->loose[i] == s->loose[i - 1])
            co_fatal("communicator ID pool: ID %llu returned twice",
                     (unsigned long long)s->loose[i]);
        if (!i || s->loose[i] != s->loose[i - 1] + 1) nruns++;
    }
    co_idrange *runs = malloc(nruns * sizeof(*runs));
    size_t cap = s->nr + nruns;
    co_idrange *out = malloc(cap * sizeof(*out));
    if (!runs || !out) co_fatal("out of memory in a communicator ID pool");
    size_t k = 0;
    for (size_t i = 0; i < s->nl; i++) {
        if (!i || s->loose[i] != s->loose[i - 1] + 1)
            runs[k++] = (co_idrange){s->loose[i], s->loose[i] + 1};
        else
            runs[k - 1].hi++;
    }
    size_t a = 0, b = 0, n = 0;
    while (a < s->nr || b < nruns) {
        co_idrange x;
        if (b == nruns || (a < s->nr && s->r[a].lo < runs[b].lo))
            x = s->r[a++];
        else
            x = runs[b++];
        if (n && out[n - 1].hi > x.lo)
            co_fatal("communicator ID pool: ID %llu returned twice", (unsigned long long)x.lo);
        if (n && out[n - 1].hi == x.lo)
            out[n - 1].hi = x.hi;
        else
            out[n++] = x;
    }
    free(runs);
    free(s->r);
    s->r = out;
    s->nr = n;
    s->capr = cap;
    s->nl = 0;
    s->fit_from = 0;
}

uint64_t co_idset_take_run(co_idset *s, uint64_t n) {
    if (n == 0 || s->count < n) return 0;
    if (n == 1) return co_idset_take1(s);
    /* Returned singles first join the ranges, so that the lowest fitting run is reused
     * rather than a fresh one cut from the large range at the end. */
    co_idset_normalize(s);
    size_t i = n >= s->fit_len ? s->fit_from : 0;
    while (i < s->nr && s->r[i].hi - s->r[i].lo < n) i++;
    s->fit_from = i; /* every range before i is shorter than n */
    s->fit_len = n;
    if (i < s->nr) {
        uint64_t base = s->r[i].lo;
        s->r[i].lo += n;
        if (s->r[i].lo == s->r[i].hi) {
            memmove(&s->r[i], &s->r[i + 1], (s->nr - i - 1) * sizeof(*s->r));
            s->nr--;
        }
        s->count -= n;
        return base;
    }
    return 0;
}

size_t co_idset_take_ranges(co_idset *s, uint64_t n, co_idrange *out, size_t maxr, uint64_t *got) {
    co_idset_normalize(s);
    size_t k = 0;
    uint64_t have = 0;
    while (k < maxr && have < n && s->nr) {
        co_idrange *r = &s->r[0];
        uint64_t take = r->hi - r->lo;
        if (take > n - have) take = n - have;
        out[k++] = (co_idrange){r->lo, r->lo + take};
        r->lo += take;
        have += take;
        if (r->lo == r->hi) {
            memmove(&s->r[0], &s->r[1], (s->nr - 1) * sizeof(*s->r));
            s->nr--;
        }
    }
    s->count -= have;
    s->fit_from = 0;
    *got = have;
    return k;
}

int co_idset_contains(co_idset *s, uint64_t id) {
    for (size_t i = 0; i < s->nl; i++)
        if (s->loose[i] == id) return 1;
    size_t i = range_after(s, id);
    return i < s->nr && s->r[i].lo <= id;
}
