/* Handle tables: map the integer handles users hold to the objects behind them. Slots live in
 * chunks that never move, so pointers stay valid as a table grows; freed slots are reused
 * with a new generation so that a stale handle is reported instead of aliasing a new object.
 * Freed slots queue up, oldest reused first, and only once CO_HTAB_REST others wait behind
 * them: a slot then goes round its 64 generations only after some 4000 frees of its kind,
 * not 64, before a stale handle could name a newer object again. */
#include "cohort.h"

#include <stdlib.h>
#include <string.h>

static int htab_grow(co_htab *t) {
    if (t->nchunks * CO_HTAB_CHUNK >= CO_HTAB_MAX_SLOTS) return -1;
    void ***chunks = realloc(t->chunks, (t->nchunks + 1) * sizeof(*chunks));
    if (!chunks) return -1;
    t->chunks = chunks;
    uint8_t **gens = realloc(t->gens, (t->nchunks + 1) * sizeof(*gens));
    if (!gens) return -1;
    t->gens = gens;
    t->chunks[t->nchunks] = calloc(CO_HTAB_CHUNK, sizeof(void *));
    t->gens[t->nchunks] = calloc(CO_HTAB_CHUNK, 1);
    if (!t->chunks[t->nchunks] || !t->gens[t->nchunks]) return -1;
    t->nchunks++;
    return 0;
}

void co_htab_set(co_htab *t, unsigned slot, void *obj) {
    while (slot >= t->nchunks * CO_HTAB_CHUNK)
        if (htab_grow(t)) co_fatal("out of memory growing a handle table");
    t->chunks[slot / CO_HTAB_CHUNK][slot % CO_HTAB_CHUNK] = obj;
    if (slot >= t->next) t->next = slot + 1;
    if (obj) t->live++; /* a NULL reserves the slot (a predefined handle with no object) */
}

int co_htab_insert(co_htab *t, void *obj) {
    uint32_t slot;
    if (t->nfree > CO_HTAB_REST || (t->nfree && t->next >= CO_HTAB_MAX_SLOTS)) {
        slot = t->freelist[t->fhead];
        t->fhead = (t->fhead + 1) & (t->freecap - 1);
        t->nfree--;
    } else {
        if (t->next == 0) t->next = 1; /* slot 0 is the kind's NULL handle */
        slot = t->next;
        if (slot >= CO_HTAB_MAX_SLOTS) return 0; /* and nothing freed */
        if (slot >= t->nchunks * CO_HTAB_CHUNK && htab_grow(t)) return 0;
        t->next++;
    }
    t->chunks[slot / CO_HTAB_CHUNK][slot % CO_HTAB_CHUNK] = obj;
    t->live++;
    unsigned gen = t->gens[slot / CO_HTAB_CHUNK][slot % CO_HTAB_CHUNK];
    return CO_HANDLE_MAKE(t->kind, gen, slot);
}

void *co_htab_get(const co_htab *t, int handle) {
    if (CO_HANDLE_KIND(handle) != (unsigned)t->kind) return NULL;
    unsigned slot = CO_HANDLE_SLOT(handle);
    if (slot >= t->next) return NULL;
    unsigned c = slot / CO_HTAB_CHUNK, i = slot % CO_HTAB_CHUNK;
    if (t->gens[c][i] != CO_HANDLE_GEN(handle)) return NULL;
    return t->chunks[c][i];
}

void co_htab_remove(co_htab *t, int handle) {
    unsigned slot = CO_HANDLE_SLOT(handle);
    unsigned c = slot / CO_HTAB_CHUNK, i = slot % CO_HTAB_CHUNK;
    if (slot >= t->next || !t->chunks[c][i]) return;
    t->chunks[c][i] = NULL;
    t->gens[c][i] = (uint8_t)((t->gens[c][i] + 1) & 0x3f);
    t->live--;
    if (t->nfree == t->freecap) { /* grow the ring (a power of two), its oldest entry first */
        uint32_t cap = t->freecap ? t->freecap * 2 : 256;
        uint32_t *fl = malloc(cap * sizeof(*fl));
        if (!fl) return; /* the slot is simply never reused */
        for (uint32_t k = 0; k < t->nfree; k++)
            fl[k] = t->freelist[(t->fhead + k) & (t->freecap - 1)];
        free(t->freelist);
        t->freelist = fl;
        t->freecap = cap;
        t->fhead = 0;
    }
    t->freelist[(t->fhead + t->nfree++) & (t->freecap - 1)] = slot;
}

void co_htab_destroy(co_htab *t) {
    for (uint32_t c = 0; c < t->nchunks; c++) {
        free(t->chunks[c]);
        free(t->gens[c]);
    }
    free(t->chunks);
    free(t->gens);
    free(t->freelist);
    int kind = t->kind;
    memset(t, 0, sizeof(*t));
    t->kind = kind;
}
