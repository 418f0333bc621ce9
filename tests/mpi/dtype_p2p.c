/* Derived datatypes in point-to-point: N doubles sent with one layout and received with
 * another, for every pair of a dozen layouts (contiguous, matrix column, blocks, negative
 * stride, irregular indexed, indexed_block, resized struct, subarrays in C and Fortran
 * order, resized elements, long runs, descending hindexed), at sizes that take the inline,
 * eager, rendezvous and large rendezvous paths. Each transfer rotates through the calls
 * (Irecv before Isend, unexpected message with Probe, Sendrecv, Issend, Sendrecv_replace,
 * persistent requests, Bsend) and checks every element and that nothing outside the layout
 * was written. Also: partial receives with Get_count/Get_elements, truncation, a struct of
 * mixed types received into a different struct layout, and every predefined type. Run it
 * with COHORT_CMA=0 as well to cover the pipelined copy. */
#include "dtype_ref.h"

#include <malloc.h>
#include <stddef.h>

enum {
    L_CONTIG,
    L_COLUMN,
    L_BLOCKS,
    L_NEGSTRIDE,
    L_INDEXED,
    L_IBLOCK,
    L_STRUCT,
    L_SUB_C,
    L_SUB_F,
    L_RESIZED,
    L_LONGRUNS,
    L_DESCENDING,
    L_COUNT
};

static const char *lname[L_COUNT] = {"contig",     "column",  "blocks",   "negstride",
                                     "indexed",    "iblock",  "struct",   "subarray-C",
                                     "subarray-F", "resized", "longruns", "descending"};

typedef struct {
    MPI_Datatype t;
    int count;
    ref_map m;   /* one element of t */
    ref_map all; /* all `count` elements: one entry per double, in order */
    char *mem;   /* buffer covering the layout, with a margin */
    char *base;  /* what is passed to MPI */
    size_t memlen;
} layout;

static ref_map rdbl;

/* Build layout `id` for n doubles (n is a multiple of 8). */
static layout make(int id, int n) {
    layout L = {0};
    L.count = 1;
    switch (id) {
    case L_CONTIG:
        L.t = MPI_DOUBLE;
        L.count = n;
        L.m = ref_basic(8);
        break;
    case L_COLUMN:
        MPI_Type_vector(n, 1, 3, MPI_DOUBLE, &L.t);
        L.m = ref_vector(n, 1, 3, &rdbl);
        break;
    case L_BLOCKS:
        MPI_Type_vector(n / 4, 4, 7, MPI_DOUBLE, &L.t);
        L.m = ref_vector(n / 4, 4, 7, &rdbl);
        break;
    case L_NEGSTRIDE:
        MPI_Type_create_hvector(n, 1, -16, MPI_DOUBLE, &L.t);
        L.m = ref_hvector(n, 1, -16, &rdbl);
        break;
    case L_INDEXED: { /* blocks of 1, 3, 2, 5, 1, ... doubles with gaps of 1..3 */
        int *bl = calloc((size_t)n, sizeof(int)), *dp = calloc((size_t)n, sizeof(int));
        MPI_Aint *dpb = malloc(sizeof(MPI_Aint) * (size_t)n);
        int k = 0, left = n, at = 0;
        static const int pat[] = {1, 3, 2, 5};
        while (left > 0) {
            int b = pat[k % 4] < left ? pat[k % 4] : left;
            bl[k] = b;
            dp[k] = at;
            dpb[k] = (MPI_Aint)at * 8;
            at += b + 1 + k % 3;
            left -= b;
            k++;
        }
        MPI_Type_indexed(k, bl, dp, MPI_DOUBLE, &L.t);
        L.m = ref_hindexed(k, bl, dpb, &rdbl);
        free(bl);
        free(dp);
        free(dpb);
        break;
    }
    case L_IBLOCK: {
        int *dp = calloc((size_t)(n / 2), sizeof(int));
        MPI_Aint *dpb = malloc(sizeof(MPI_Aint) * (size_t)(n / 2));
        int *bl = malloc(sizeof(int) * (size_t)(n / 2));
        for (int i = 0; i < n / 2; i++) {
            dp[i] = 5 * i;
            dpb[i] = 40 * (MPI_Aint)i;
            bl[i] = 2;
        }
        MPI_Type_create_indexed_block(n / 2, 2, dp, MPI_DOUBLE, &L.t);
        L.m = ref_hindexed(n / 2, bl, dpb, &rdbl);
        free(dp);
        free(dpb);
        free(bl);
        break;
    }
    case L_STRUCT: { /* two doubles 24 bytes apart in a 40-byte record */
        MPI_Datatype s;
        MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 24},
                               (MPI_Datatype[]){MPI_DOUBLE, MPI_DOUBLE}, &s);
        MPI_Type_create_resized(s, 0, 40, &L.t);
        MPI_Type_free(&s);
        ref_map r = ref_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 24}, (ref_map[]){rdbl, rdbl}, 8);
        L.m = ref_resized(&r, 0, 40);
        ref_free(&r);
        L.count = n / 2;
        break;
    }
    case L_SUB_C:
    case L_SUB_F: {
        int ord = id == L_SUB_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        int sizes[2], subs[2], starts[2];
        /* n/8 rows of 8 in a larger array (in Fortran order the roles swap) */
        sizes[0] = ord == MPI_ORDER_C ? n / 8 + 2 : 11;
        sizes[1] = ord == MPI_ORDER_C ? 11 : n / 8 + 2;
        subs[0] = ord == MPI_ORDER_C ? n / 8 : 8;
        subs[1] = ord == MPI_ORDER_C ? 8 : n / 8;
        starts[0] = 1;
        starts[1] = 2;
        MPI_Type_create_subarray(2, sizes, subs, starts, ord, MPI_DOUBLE, &L.t);
        L.m = ref_subarray(2, sizes, subs, starts, ord, &rdbl);
        break;
    }
    case L_RESIZED:
        MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &L.t);
        L.m = ref_resized(&rdbl, 0, 16);
        L.count = n;
        break;
    case L_LONGRUNS: /* four long runs with gaps: the single-copy path when large */
        MPI_Type_vector(4, n / 4, n / 4 + 8, MPI_DOUBLE, &L.t);
        L.m = ref_vector(4, n / 4, n / 4 + 8, &rdbl);
        break;
    case L_DESCENDING: { /* blocks of 8 at decreasing addresses */
        int nb = n / 8;
        int *bl = calloc((size_t)nb, sizeof(int));
        MPI_Aint *dp = calloc((size_t)nb, sizeof(MPI_Aint));
        for (int i = 0; i < nb; i++) {
            bl[i] = 8;
            dp[i] = (MPI_Aint)(nb - 1 - i) * 80;
        }
        MPI_Type_create_hindexed(nb, bl, dp, MPI_DOUBLE, &L.t);
        L.m = ref_hindexed(nb, bl, dp, &rdbl);
        free(bl);
        free(dp);
        break;
    }
    }
    if (L.t != MPI_DOUBLE) MPI_Type_commit(&L.t);
    /* the reference of all elements, and a buffer that covers them with a margin */
    for (int c = 0; c < L.count; c++)
        for (int i = 0; i < L.m.n; i++)
            ref_push(&L.all, (MPI_Aint)c * ref_extent(&L.m) + L.m.e[i].disp, 8);
    MPI_Aint lo, hi;
    ref_span(&L.m, L.count, &lo, &hi);
    L.memlen = (size_t)(hi - lo) + 128;
    L.mem = malloc(L.memlen);
    CHECK(L.mem != NULL, "malloc");
    L.base = L.mem + 64 - lo;
    CHECK(L.all.n == n, "layout %s holds %d doubles, not %d", lname[id], L.all.n, n);
    return L;
}

static void unmake(layout *L) {
    if (L->t != MPI_DOUBLE) MPI_Type_free(&L->t);
    ref_free(&L->m);
    ref_free(&L->all);
    free(L->mem);
}

static double value(int src, int k, int salt) {
    return src * 1e7 + k + salt * 0.25;
}

static void fill(layout *L, int src, int salt) {
    memset(L->mem, 0x5a, L->memlen);
    for (int k = 0; k < L->all.n; k++) {
        double v = value(src, k, salt);
        memcpy(L->base + L->all.e[k].disp, &v, 8);
    }
}

static void clear(layout *L) {
    memset(L->mem, 0xa5, L->memlen);
}

/* The first `got` elements hold the sender's values; the rest of the buffer is untouched. */
static void verify(layout *L, int src, int salt, int got, const char *what) {
    unsigned char *hit = calloc(L->memlen, 1);
    CHECK(hit != NULL, "calloc");
    for (int k = 0; k < L->all.n; k++) {
        size_t off = (size_t)(L->base - L->mem + L->all.e[k].disp);
        if (k < got) {
            double v;
            memcpy(&v, L->mem + off, 8);
            CHECK(v == value(src, k, salt), "%s: element %d is %g, expected %g", what, k, v,
                  value(src, k, salt));
            memset(hit + off, 1, 8);
        }
    }
    for (size_t i = 0; i < L->memlen; i++)
        CHECK(hit[i] || (unsigned char)L->mem[i] == 0xa5, "%s: byte %zu outside the data written",
              what, i);
    free(hit);
}

static int rank, size;

/* One transfer from each rank to the next: send layout a, receive layout b, mode m. */
static void transfer(int a, int b, int n, int mode, int salt) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    layout S = make(a, n), R = make(b, n);
    char what[128];
    snprintf(what, sizeof(what), "%d doubles %s -> %s mode %d", n, lname[a], lname[b], mode);
    fill(&S, rank, salt);
    clear(&R);
    MPI_Status st;
    MPI_Request rq[2];
    int tag = 100 + mode;
    switch (mode) {
    case 0: /* receive posted first */
        CHECK_RC(MPI_Irecv(R.base, R.count, R.t, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Isend(S.base, S.count, S.t, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&rq[0], &st));
        break;
    case 1: { /* unexpected: the message (or its RTS) waits until probed and received */
        CHECK_RC(MPI_Isend(S.base, S.count, S.t, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Probe(from, tag, MPI_COMM_WORLD, &st));
        int c;
        CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &c));
        CHECK(c == n, "%s: probe count %d", what, c);
        CHECK_RC(MPI_Recv(R.base, R.count, R.t, from, tag, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    }
    case 2:
        CHECK_RC(MPI_Sendrecv(S.base, S.count, S.t, to, tag, R.base, R.count, R.t, from, tag,
                              MPI_COMM_WORLD, &st));
        break;
    case 3: /* synchronous */
        CHECK_RC(MPI_Issend(S.base, S.count, S.t, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Recv(R.base, R.count, R.t, from, tag, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    case 4: /* persistent */
        CHECK_RC(MPI_Recv_init(R.base, R.count, R.t, from, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Send_init(S.base, S.count, S.t, to, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Startall(2, rq));
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&rq[0], &st));
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        break;
    case 5: { /* buffered */
        int need;
        MPI_Pack_size(S.count, S.t, MPI_COMM_WORLD, &need);
        need += MPI_BSEND_OVERHEAD;
        char *bb = malloc((size_t)need);
        CHECK_RC(MPI_Buffer_attach(bb, need));
        CHECK_RC(MPI_Bsend(S.base, S.count, S.t, to, tag, MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(R.base, R.count, R.t, from, tag, MPI_COMM_WORLD, &st));
        void *det;
        int dsz;
        CHECK_RC(MPI_Buffer_detach(&det, &dsz));
        free(bb);
        break;
    }
    }
    int c, e;
    CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &c));
    CHECK_RC(MPI_Get_elements(&st, R.t, &e));
    CHECK(c == n && e == n, "%s: count %d elements %d", what, c, e);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s: status", what);
    CHECK_RC(MPI_Get_count(&st, R.t, &c));
    CHECK(c == R.count, "%s: Get_count in receive type %d", what, c);
    verify(&R, from, salt, n, what);
    unmake(&S);
    unmake(&R);
}

/* Sendrecv_replace through a layout: the data comes back into the same places. */
static void replace(int a, int n) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    layout L = make(a, n);
    fill(&L, rank, 3);
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv_replace(L.base, L.count, L.t, to, 9, from, 9, MPI_COMM_WORLD, &st));
    for (int k = 0; k < L.all.n; k++) {
        double v;
        memcpy(&v, L.base + L.all.e[k].disp, 8);
        CHECK(v == value(from, k, 3), "replace %s: element %d", lname[a], k);
    }
    unmake(&L);
}

/* A message shorter than the receive buffer: Get_count/Get_elements and the bytes written. */
static void partial(int b, int n, int sent) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    layout S = make(L_CONTIG, n), R = make(b, n);
    fill(&S, rank, 1);
    clear(&R);
    MPI_Status st;
    char what[96];
    snprintf(what, sizeof(what), "partial %d of %d into %s", sent, n, lname[b]);
    CHECK_RC(MPI_Sendrecv(S.base, sent, MPI_DOUBLE, to, 5, R.base, R.count, R.t, from, 5,
                          MPI_COMM_WORLD, &st));
    int c, e;
    CHECK_RC(MPI_Get_elements(&st, R.t, &e));
    CHECK(e == sent, "%s: Get_elements %d", what, e);
    CHECK_RC(MPI_Get_count(&st, R.t, &c));
    int per = n / R.count; /* doubles per element of R.t */
    CHECK(c == (sent % per ? MPI_UNDEFINED : sent / per), "%s: Get_count %d", what, c);
    MPI_Count ex;
    CHECK_RC(MPI_Get_elements_x(&st, R.t, &ex));
    CHECK(ex == sent, "%s: Get_elements_x", what);
    verify(&R, from, 1, sent, what);
    unmake(&S);
    unmake(&R);
}

/* More data than the receive layout holds: MPI_ERR_TRUNCATE, and no crash. */
static void truncation(int b, int n) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    layout S = make(L_CONTIG, 2 * n), R = make(b, n);
    fill(&S, rank, 1);
    clear(&R);
    MPI_Request rq;
    CHECK_RC(MPI_Isend(S.base, S.count, S.t, to, 6, MPI_COMM_WORLD, &rq));
    MPI_Status st;
    int rc = MPI_Recv(R.base, R.count, R.t, from, 6, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive into %s gave class %d", lname[b], cls);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    verify(&R, from, 1, n, "truncated receive"); /* what fits is delivered */
    unmake(&S);
    unmake(&R);
}

/* Mixed basic types: an array of padded C structs received into a packed layout. */
typedef struct {
    int a;
    double b;
    char c[3];
} rec;

static void mixed(int m) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Datatype padded, packed, tail;
    MPI_Type_create_struct(3, (int[]){1, 1, 3},
                           (MPI_Aint[]){offsetof(rec, a), offsetof(rec, b), offsetof(rec, c)},
                           (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &padded);
    MPI_Type_commit(&padded);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(padded, &lb, &ext);
    CHECK(ext == sizeof(rec), "struct extent %ld, sizeof %zu", (long)ext, sizeof(rec));
    MPI_Datatype unpadded;
    MPI_Type_create_struct(3, (int[]){1, 1, 3}, (MPI_Aint[]){0, 4, 12},
                           (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &unpadded);
    MPI_Type_get_extent(unpadded, &lb, &ext);
    CHECK(ext == 16, "struct extent %ld: 15 bytes padded to the double's alignment", (long)ext);
    MPI_Type_create_resized(unpadded, 0, 15, &packed); /* records back to back */
    MPI_Type_free(&unpadded);
    MPI_Type_commit(&packed);
    rec *s = calloc((size_t)m, sizeof(rec));
    char *r = malloc((size_t)m * 15 + 8);
    for (int i = 0; i < m; i++) {
        s[i].a = rank * 1000 + i;
        s[i].b = i + 0.5;
        memcpy(s[i].c, "xyz", 3);
        s[i].c[2] = (char)('a' + i % 26);
    }
    memset(r, 0, (size_t)m * 15 + 8);
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(s, m, padded, to, 7, r, m, packed, from, 7, MPI_COMM_WORLD, &st));
    for (int i = 0; i < m; i++) {
        int a;
        double b;
        memcpy(&a, r + 15 * i, 4);
        memcpy(&b, r + 15 * i + 4, 8);
        CHECK(a == from * 1000 + i && b == i + 0.5 && r[15 * i + 12] == 'x' &&
                  r[15 * i + 14] == (char)('a' + i % 26),
              "mixed struct %d of %d", i, m);
    }
    /* a partial element: two records, then an int and a double of a third */
    MPI_Type_create_struct(3, (int[]){2, 1, 1},
                           (MPI_Aint[]){0, 2 * sizeof(rec), 2 * sizeof(rec) + offsetof(rec, b)},
                           (MPI_Datatype[]){padded, MPI_INT, MPI_DOUBLE}, &tail);
    MPI_Type_commit(&tail);
    CHECK_RC(MPI_Sendrecv(s, 1, tail, to, 8, r, m, packed, from, 8, MPI_COMM_WORLD, &st));
    int c, e;
    MPI_Get_count(&st, packed, &c);
    MPI_Get_elements(&st, packed, &e);
    CHECK(c == MPI_UNDEFINED && e == 2 * 5 + 2, "partial struct: count %d elements %d", c, e);
    MPI_Get_elements(&st, MPI_CHAR, &e);
    CHECK(e == 2 * 15 + 12, "bytes as chars %d", e);
    free(s);
    free(r);
    MPI_Type_free(&tail);
    MPI_Type_free(&padded);
    MPI_Type_free(&packed);
}

/* Every predefined type, sent as 7 elements; pair types compare their members only. */
static void predefined(void) {
    struct pt {
        MPI_Datatype t;
        size_t size;             /* extent in C */
        size_t off2, len1, len2; /* pair types: where the int is; value length */
    };
#define PAIR(T, V) sizeof(T), offsetof(T, i), sizeof(((T *)0)->v), sizeof(int)
    typedef struct {
        float v;
        int i;
    } fi;
    typedef struct {
        double v;
        int i;
    } di;
    typedef struct {
        long v;
        int i;
    } li;
    typedef struct {
        int v;
        int i;
    } ii;
    typedef struct {
        short v;
        int i;
    } si;
    typedef struct {
        long double v;
        int i;
    } ldi;
    struct pt types[] = {
        {MPI_CHAR, 1, 0, 0, 0},
        {MPI_SIGNED_CHAR, 1, 0, 0, 0},
        {MPI_UNSIGNED_CHAR, 1, 0, 0, 0},
        {MPI_BYTE, 1, 0, 0, 0},
        {MPI_SHORT, sizeof(short), 0, 0, 0},
        {MPI_UNSIGNED_SHORT, sizeof(short), 0, 0, 0},
        {MPI_INT, sizeof(int), 0, 0, 0},
        {MPI_UNSIGNED, sizeof(int), 0, 0, 0},
        {MPI_LONG, sizeof(long), 0, 0, 0},
        {MPI_UNSIGNED_LONG, sizeof(long), 0, 0, 0},
        {MPI_LONG_LONG_INT, sizeof(long long), 0, 0, 0},
        {MPI_UNSIGNED_LONG_LONG, sizeof(long long), 0, 0, 0},
        {MPI_FLOAT, sizeof(float), 0, 0, 0},
        {MPI_DOUBLE, sizeof(double), 0, 0, 0},
        {MPI_LONG_DOUBLE, sizeof(long double), 0, 0, 0},
        {MPI_WCHAR, sizeof(wchar_t), 0, 0, 0},
        {MPI_C_BOOL, sizeof(_Bool), 0, 0, 0},
        {MPI_INT8_T, 1, 0, 0, 0},
        {MPI_INT16_T, 2, 0, 0, 0},
        {MPI_INT32_T, 4, 0, 0, 0},
        {MPI_INT64_T, 8, 0, 0, 0},
        {MPI_UINT8_T, 1, 0, 0, 0},
        {MPI_UINT16_T, 2, 0, 0, 0},
        {MPI_UINT32_T, 4, 0, 0, 0},
        {MPI_UINT64_T, 8, 0, 0, 0},
        {MPI_C_FLOAT_COMPLEX, sizeof(float _Complex), 0, 0, 0},
        {MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex), 0, 0, 0},
        {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), 0, 0, 0},
        {MPI_AINT, sizeof(MPI_Aint), 0, 0, 0},
        {MPI_OFFSET, sizeof(MPI_Offset), 0, 0, 0},
        {MPI_COUNT, sizeof(MPI_Count), 0, 0, 0},
        {MPI_PACKED, 1, 0, 0, 0},
        {MPI_FLOAT_INT, PAIR(fi, float)},
        {MPI_DOUBLE_INT, PAIR(di, double)},
        {MPI_LONG_INT, PAIR(li, long)},
        {MPI_2INT, PAIR(ii, int)},
        {MPI_SHORT_INT, PAIR(si, short)},
        {MPI_LONG_DOUBLE_INT, PAIR(ldi, long double)},
    };
#undef PAIR
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
        struct pt *p = &types[k];
        MPI_Aint lb, ext;
        int tsize;
        MPI_Type_get_extent(p->t, &lb, &ext);
        MPI_Type_size(p->t, &tsize);
        CHECK(lb == 0 && (size_t)ext == p->size, "type %zu: extent %ld, expected %zu", k, (long)ext,
              p->size);
        size_t data = p->len1 ? p->len1 + p->len2 : p->size;
        CHECK((size_t)tsize == data, "type %zu: size %d, expected %zu", k, tsize, data);
        int n = 7;
        unsigned char *s = malloc(p->size * (size_t)n), *r = malloc(p->size * (size_t)n);
        for (size_t i = 0; i < p->size * (size_t)n; i++) s[i] = tu_pattern(rank, to, i);
        memset(r, 0, p->size * (size_t)n);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(s, n, p->t, to, 11, r, n, p->t, from, 11, MPI_COMM_WORLD, &st));
        int c;
        MPI_Get_count(&st, p->t, &c);
        CHECK(c == n, "type %zu: count %d", k, c);
        for (int e = 0; e < n; e++) {
            unsigned char *re = r + (size_t)e * p->size;
            size_t base = (size_t)e * p->size;
            if (!p->len1) {
                for (size_t i = 0; i < p->size; i++)
                    CHECK(re[i] == tu_pattern(from, rank, base + i), "type %zu byte %zu", k, i);
            } else {
                for (size_t i = 0; i < p->len1; i++)
                    CHECK(re[i] == tu_pattern(from, rank, base + i), "pair %zu value byte %zu", k,
                          i);
                for (size_t i = p->off2; i < p->off2 + p->len2; i++)
                    CHECK(re[i] == tu_pattern(from, rank, base + i), "pair %zu index byte %zu", k,
                          i);
            }
        }
        free(s);
        free(r);
    }
    /* count 0 with MPI_DATATYPE_NULL is accepted */
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, to, 12, NULL, 0, MPI_DATATYPE_NULL, from, 12,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
    /* Every transfer allocates its buffers and reference maps afresh (up to about 5 MiB); left to
     * mmap, each was page-faulted in anew, which took most of the test's time. Kept in the
     * heap, the pages are reused. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rdbl = ref_basic(8);
    /* 64 B (ring), 12.5 KiB (eager), 32 KiB (rendezvous), 1.5 MiB (large rendezvous) */
    static const int sizes[] = {8, 1600, 4096, 196608};
    int salt = 0;
    for (int si = 0; si < 4; si++) {
        int n = sizes[si];
        for (int a = 0; a < L_COUNT; a++) {
            for (int b = 0; b < L_COUNT; b++) {
                /* all pairs at the smaller sizes; at 1.5 MiB each layout meets contig and three
                 * others */
                if (n > 10000 && b != a && b != (a + 1) % L_COUNT && b != (a + 5) % L_COUNT &&
                    a != L_CONTIG && b != L_CONTIG)
                    continue;
                transfer(a, b, n, salt % 6, salt);
                salt++;
            }
            replace(a, n);
        }
        for (int b = 0; b < L_COUNT; b++) {
            partial(b, n, n - 3);
            partial(b, n, n / 2);
            partial(b, n, 0);
        }
        truncation(L_COLUMN, n);
        truncation(L_CONTIG, n);
    }
    mixed(3);
    mixed(2000);
    mixed(80000);
    predefined();
    ref_free(&rdbl);
    if (rank == 0) printf("dtype_p2p: %d transfers checked\n", salt);
    MPI_Finalize();
    return 0;
}
