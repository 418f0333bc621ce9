/* Every datatype constructor against a reference type map built by hand (dtype_ref.h): size,
 * lb/extent, true extent, the bytes MPI_Pack gathers and MPI_Unpack scatters (and that it
 * touches nothing else), the envelope and contents, and names. Includes zero counts,
 * negative strides and displacements, struct alignment padding, MPI_LB/MPI_UB markers,
 * resized types, subarrays in both orders and absolute addresses with MPI_BOTTOM. */
#include "dtype_ref.h"

#include <stddef.h>

static int ncheck;

/* Compare t with the reference m: queries, then Pack and Unpack of `count` elements. */
static void check_count(const char *what, MPI_Datatype t, const ref_map *m, int count, int unpack) {
    MPI_Aint lo, hi;
    ref_span(m, count, &lo, &hi);
    size_t span = (size_t)(hi - lo), margin = 64;
    char *mem = malloc(span + 2 * margin), *mem2 = malloc(span + 2 * margin);
    CHECK(mem && mem2, "malloc");
    char *base = mem + margin - lo, *base2 = mem2 + margin - lo;
    for (size_t i = 0; i < span + 2 * margin; i++) mem[i] = (char)(i * 7 + 3);
    size_t bytes = ref_size(m) * (size_t)count;
    char *got = malloc(bytes + 1), *want = malloc(bytes + 1);
    CHECK(got && want, "malloc");
    ref_pack(m, count, base, want);
    int pos = 0, psize;
    CHECK_RC(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    CHECK((size_t)psize >= bytes, "%s: Pack_size %d < %zu", what, psize, bytes);
    CHECK_RC(MPI_Pack(base, count, t, got, (int)bytes, &pos, MPI_COMM_WORLD));
    CHECK((size_t)pos == bytes, "%s: packed %d bytes, expected %zu", what, pos, bytes);
    for (size_t i = 0; i < bytes; i++)
        CHECK(got[i] == want[i], "%s x%d: packed byte %zu is %d, expected %d", what, count, i,
              got[i], want[i]);
    if (unpack) { /* scatter a fresh pattern; every other byte must stay as it was */
        for (size_t i = 0; i < bytes; i++) got[i] = (char)(i * 13 + 1);
        memset(mem2, 0xee, span + 2 * margin);
        pos = 0;
        CHECK_RC(MPI_Unpack(got, (int)bytes, &pos, base2, count, t, MPI_COMM_WORLD));
        CHECK((size_t)pos == bytes, "%s: unpacked %d bytes", what, pos);
        unsigned char *hit = calloc(span + 2 * margin, 1);
        size_t k = 0;
        for (int c = 0; c < count; c++)
            for (int i = 0; i < m->n; i++)
                for (int b = 0; b < m->e[i].len; b++, k++) {
                    MPI_Aint off = margin - lo + (MPI_Aint)c * ref_extent(m) + m->e[i].disp + b;
                    CHECK(mem2[off] == got[k], "%s x%d: unpacked byte %zu at offset %ld is %d",
                          what, count, k, (long)(off - margin + lo), mem2[off]);
                    hit[off] = 1;
                }
        for (size_t i = 0; i < span + 2 * margin; i++)
            CHECK(hit[i] || (unsigned char)mem2[i] == 0xee,
                  "%s x%d: Unpack wrote outside the type map (offset %ld)", what, count,
                  (long)i - (long)margin + (long)lo);
        free(hit);
    }
    free(mem);
    free(mem2);
    free(got);
    free(want);
}

static void check_type(const char *what, MPI_Datatype t, const ref_map *m, int unpack) {
    int size;
    MPI_Count size_x, lb_x, ext_x, tlb_x, text_x;
    MPI_Aint lb, ext, tlb, text, rtlb, rtext, old_ext, old_lb, old_ub;
    CHECK_RC(MPI_Type_size(t, &size));
    CHECK_RC(MPI_Type_size_x(t, &size_x));
    CHECK((size_t)size == ref_size(m) && size_x == size, "%s: size %d, expected %zu", what, size,
          ref_size(m));
    CHECK_RC(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == m->lb && ext == ref_extent(m), "%s: lb %ld extent %ld, expected %ld %ld", what,
          (long)lb, (long)ext, (long)m->lb, (long)ref_extent(m));
    CHECK_RC(MPI_Type_get_extent_x(t, &lb_x, &ext_x));
    CHECK(lb_x == lb && ext_x == ext, "%s: extent_x", what);
    CHECK_RC(MPI_Type_extent(t, &old_ext));
    CHECK_RC(MPI_Type_lb(t, &old_lb));
    CHECK_RC(MPI_Type_ub(t, &old_ub));
    CHECK(old_ext == ext && old_lb == lb && old_ub == lb + ext, "%s: deprecated bounds", what);
    CHECK_RC(MPI_Type_get_true_extent(t, &tlb, &text));
    CHECK_RC(MPI_Type_get_true_extent_x(t, &tlb_x, &text_x));
    ref_true(m, &rtlb, &rtext);
    CHECK(tlb == rtlb && text == rtext && tlb_x == tlb && text_x == text,
          "%s: true lb %ld extent %ld, expected %ld %ld", what, (long)tlb, (long)text, (long)rtlb,
          (long)rtext);
    check_count(what, t, m, 1, unpack);
    check_count(what, t, m, 3, unpack);
    check_count(what, t, m, 0, unpack);
    ncheck++;
}

/* The envelope and contents must repeat the constructor's arguments. */
static void check_contents(const char *what, MPI_Datatype t, int combiner, int ni, const int *ints,
                           int na, const MPI_Aint *addrs, int nt, const MPI_Datatype *types) {
    int gi, ga, gt, gc;
    CHECK_RC(MPI_Type_get_envelope(t, &gi, &ga, &gt, &gc));
    CHECK(gc == combiner && gi == ni && ga == na && gt == nt,
          "%s: envelope %d/%d/%d combiner %d, expected %d/%d/%d %d", what, gi, ga, gt, gc, ni, na,
          nt, combiner);
    int *ri = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *ra = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)(nt + 1));
    CHECK_RC(MPI_Type_get_contents(t, ni, na, nt, ri, ra, rt));
    for (int i = 0; i < ni; i++) CHECK(ri[i] == ints[i], "%s: integer %d", what, i);
    for (int i = 0; i < na; i++) CHECK(ra[i] == addrs[i], "%s: address %d", what, i);
    for (int i = 0; i < nt; i++) {
        int c0, c1, d;
        MPI_Type_get_envelope(types[i], &d, &d, &d, &c0);
        MPI_Type_get_envelope(rt[i], &d, &d, &d, &c1);
        CHECK(c0 == c1, "%s: type %d has combiner %d, expected %d", what, i, c1, c0);
        if (c0 == MPI_COMBINER_NAMED) {
            CHECK(rt[i] == types[i], "%s: predefined type %d comes back as itself", what, i);
        } else { /* a new handle to an equivalent type, which the caller frees */
            MPI_Aint l0, e0, l1, e1;
            int s0, s1;
            MPI_Type_get_extent(types[i], &l0, &e0);
            MPI_Type_get_extent(rt[i], &l1, &e1);
            MPI_Type_size(types[i], &s0);
            MPI_Type_size(rt[i], &s1);
            CHECK(l0 == l1 && e0 == e1 && s0 == s1, "%s: returned type %d differs", what, i);
            CHECK_RC(MPI_Type_free(&rt[i]));
        }
    }
    free(ri);
    free(ra);
    free(rt);
}

static MPI_Datatype commit(MPI_Datatype t) {
    CHECK_RC(MPI_Type_commit(&t));
    return t;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ref_map rint = ref_basic(sizeof(int)), rdbl = ref_basic(8), rchar = ref_basic(1);
    ref_map rshort = ref_basic(sizeof(short)), rfloat = ref_basic(sizeof(float));
    MPI_Datatype t, t2, t3, tv2;

    /* contiguous */
    CHECK_RC(MPI_Type_contiguous(5, MPI_INT, &t));
    ref_map m = ref_contiguous(5, &rint);
    check_type("contiguous(5,int)", commit(t), &m, 1);
    check_contents("contiguous", t, MPI_COMBINER_CONTIGUOUS, 1, (int[]){5}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_INT});
    MPI_Type_free(&t);
    ref_free(&m);
    CHECK_RC(MPI_Type_contiguous(0, MPI_INT, &t));
    m = ref_contiguous(0, &rint);
    check_type("contiguous(0,int)", commit(t), &m, 1);
    /* copies of an empty layout (dup, resized) */
    MPI_Datatype e2;
    CHECK_RC(MPI_Type_dup(t, &e2));
    check_type("dup(contiguous(0,int))", e2, &m, 1);
    MPI_Type_free(&e2);
    CHECK_RC(MPI_Type_create_resized(t, 0, 8, &e2));
    MPI_Aint lb, ext;
    CHECK_RC(MPI_Type_get_extent(e2, &lb, &ext));
    CHECK(lb == 0 && ext == 8, "resized empty type: lb %ld extent %ld", (long)lb, (long)ext);
    MPI_Type_free(&e2);
    MPI_Type_free(&t);
    ref_free(&m);

    /* vector: plain, negative stride, empty, blocklength 0 */
    CHECK_RC(MPI_Type_vector(4, 2, 3, MPI_DOUBLE, &t));
    m = ref_vector(4, 2, 3, &rdbl);
    check_type("vector(4,2,3,double)", commit(t), &m, 1);
    check_contents("vector", t, MPI_COMBINER_VECTOR, 3, (int[]){4, 2, 3}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_DOUBLE});
    ref_free(&m);
    CHECK_RC(MPI_Type_vector(3, 1, -2, MPI_INT, &t2));
    m = ref_vector(3, 1, -2, &rint);
    check_type("vector(3,1,-2,int)", commit(t2), &m, 1);
    ref_free(&m);
    MPI_Type_free(&t2);
    CHECK_RC(MPI_Type_vector(0, 2, 3, MPI_INT, &t2));
    m = ref_vector(0, 2, 3, &rint);
    check_type("vector(0,2,3,int)", commit(t2), &m, 1);
    ref_free(&m);
    MPI_Type_free(&t2);
    CHECK_RC(MPI_Type_vector(3, 0, 2, MPI_INT, &t2));
    m = ref_vector(3, 0, 2, &rint);
    check_type("vector(3,0,2,int)", commit(t2), &m, 1);
    ref_free(&m);
    MPI_Type_free(&t2);

    /* hvector: odd byte stride, and a negative-stride hvector of the vector above */
    CHECK_RC(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t2));
    m = ref_hvector(3, 2, 20, &rint);
    check_type("hvector(3,2,20B,int)", commit(t2), &m, 1);
    check_contents("hvector", t2, MPI_COMBINER_HVECTOR, 2, (int[]){3, 2}, 1, (MPI_Aint[]){20}, 1,
                   (MPI_Datatype[]){MPI_INT});
    ref_free(&m);
    MPI_Type_free(&t2);
    ref_map rv = ref_vector(4, 2, 3, &rdbl);
    CHECK_RC(MPI_Type_create_hvector(3, 2, -300, t, &t2));
    m = ref_hvector(3, 2, -300, &rv);
    check_type("hvector(3,2,-300B,vector)", commit(t2), &m, 1);
    check_contents("hvector of vector", t2, MPI_COMBINER_HVECTOR, 2, (int[]){3, 2}, 1,
                   (MPI_Aint[]){-300}, 1, (MPI_Datatype[]){t});
    MPI_Type_free(&t2);
    /* the MPI-1 name makes the same type, with the same combiner */
    CHECK_RC(MPI_Type_hvector(3, 2, -300, t, &t2));
    check_type("MPI-1 hvector(3,2,-300B,vector)", commit(t2), &m, 1);
    check_contents("MPI-1 hvector", t2, MPI_COMBINER_HVECTOR, 2, (int[]){3, 2}, 1,
                   (MPI_Aint[]){-300}, 1, (MPI_Datatype[]){t});
    ref_free(&m);
    MPI_Type_free(&t2);

    /* indexed family, with empty blocks and negative displacements */
    int bl3[] = {2, 0, 3}, dp3[] = {5, 0, -2};
    CHECK_RC(MPI_Type_indexed(3, bl3, dp3, MPI_INT, &t2));
    MPI_Aint dp3b[] = {5 * (MPI_Aint)sizeof(int), 0, -2 * (MPI_Aint)sizeof(int)};
    m = ref_hindexed(3, bl3, dp3b, &rint);
    check_type("indexed", commit(t2), &m, 1);
    check_contents("indexed", t2, MPI_COMBINER_INDEXED, 7, (int[]){3, 2, 0, 3, 5, 0, -2}, 0, NULL,
                   1, (MPI_Datatype[]){MPI_INT});
    ref_free(&m);
    MPI_Type_free(&t2);
    int hbl[] = {1, 2, 1};
    MPI_Aint hdp[] = {0, 10, 40};
    CHECK_RC(MPI_Type_create_hindexed(3, hbl, hdp, MPI_DOUBLE, &t2));
    m = ref_hindexed(3, hbl, hdp, &rdbl);
    check_type("hindexed", commit(t2), &m, 1);
    check_contents("hindexed", t2, MPI_COMBINER_HINDEXED, 4, (int[]){3, 1, 2, 1}, 3, hdp, 1,
                   (MPI_Datatype[]){MPI_DOUBLE});
    MPI_Type_free(&t2);
    CHECK_RC(MPI_Type_hindexed(3, hbl, hdp, MPI_DOUBLE, &t2));
    check_type("MPI-1 hindexed", commit(t2), &m, 1);
    check_contents("MPI-1 hindexed", t2, MPI_COMBINER_HINDEXED, 4, (int[]){3, 1, 2, 1}, 3, hdp, 1,
                   (MPI_Datatype[]){MPI_DOUBLE});
    ref_free(&m);
    MPI_Type_free(&t2);
    int ibd[] = {0, 7, 3, 12};
    CHECK_RC(MPI_Type_create_indexed_block(4, 2, ibd, MPI_SHORT, &t2));
    MPI_Aint ibdb[4];
    int bl2[] = {2, 2, 2, 2};
    for (int i = 0; i < 4; i++) ibdb[i] = ibd[i] * (MPI_Aint)sizeof(short);
    m = ref_hindexed(4, bl2, ibdb, &rshort);
    check_type("indexed_block", commit(t2), &m, 1);
    check_contents("indexed_block", t2, MPI_COMBINER_INDEXED_BLOCK, 6, (int[]){4, 2, 0, 7, 3, 12},
                   0, NULL, 1, (MPI_Datatype[]){MPI_SHORT});
    ref_free(&m);
    MPI_Type_free(&t2);
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &tv2));
    ref_map rv2 = ref_vector(2, 1, 2, &rint);
    MPI_Aint hbd[] = {16, 0, 48};
    CHECK_RC(MPI_Type_create_hindexed_block(3, 1, hbd, tv2, &t2));
    m = ref_hindexed(3, (int[]){1, 1, 1}, hbd, &rv2);
    check_type("hindexed_block of vector", commit(t2), &m, 1);
    check_contents("hindexed_block", t2, MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){3, 1}, 3, hbd, 1,
                   (MPI_Datatype[]){tv2});
    ref_free(&m);
    MPI_Type_free(&t2);

    /* struct: alignment padding of the extent */
    {
        struct cd {
            char c;
            double d;
        };
        struct dc {
            double d;
            char c;
        };
        int b2[] = {1, 1};
        MPI_Aint d_cd[] = {offsetof(struct cd, c), offsetof(struct cd, d)};
        MPI_Aint d_dc[] = {offsetof(struct dc, d), offsetof(struct dc, c)};
        CHECK_RC(MPI_Type_create_struct(2, b2, d_cd, (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE}, &t2));
        m = ref_struct(2, b2, d_cd, (ref_map[]){rchar, rdbl}, _Alignof(double));
        CHECK(ref_extent(&m) == sizeof(struct cd), "reference");
        check_type("struct{char,double}", commit(t2), &m, 1);
        check_contents("struct", t2, MPI_COMBINER_STRUCT, 3, (int[]){2, 1, 1}, 2, d_cd, 2,
                       (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE});
        MPI_Type_free(&t2);
        CHECK_RC(MPI_Type_struct(2, b2, d_cd, (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE}, &t2));
        check_type("MPI-1 struct{char,double}", commit(t2), &m, 1);
        check_contents("MPI-1 struct", t2, MPI_COMBINER_STRUCT, 3, (int[]){2, 1, 1}, 2, d_cd, 2,
                       (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE});
        ref_free(&m);
        MPI_Type_free(&t2);
        CHECK_RC(MPI_Type_create_struct(2, b2, d_dc, (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &t2));
        m = ref_struct(2, b2, d_dc, (ref_map[]){rdbl, rchar}, _Alignof(double));
        CHECK(ref_extent(&m) == sizeof(struct dc), "reference");
        check_type("struct{double,char}", commit(t2), &m, 1);
        /* an array of these: the padding makes count>1 land on the next struct */
        ref_map ra = ref_contiguous(7, &m);
        CHECK_RC(MPI_Type_contiguous(7, t2, &t3));
        check_type("contiguous(7,struct{double,char})", commit(t3), &ra, 1);
        MPI_Type_free(&t3);
        ref_free(&ra);
        ref_free(&m);
        MPI_Type_free(&t2);
        CHECK_RC(MPI_Type_create_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 1},
                                        (MPI_Datatype[]){MPI_CHAR, MPI_CHAR}, &t2));
        m = ref_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 1}, (ref_map[]){rchar, rchar}, 1);
        check_type("struct{char,char[3]}", commit(t2), &m, 1);
        ref_free(&m);
        MPI_Type_free(&t2);
    }

    /* MPI 3.1 example 4.6 (section 4.1.2): type1 = {(double,0),(char,8)} extent 16; struct
     * (2,1,3) x (0,16,26) x (float,type1,char) has lb 0 and extent 32. */
    {
        MPI_Datatype type1;
        CHECK_RC(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                        (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &type1));
        ref_map r1 = ref_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8}, (ref_map[]){rdbl, rchar}, 8);
        CHECK_RC(MPI_Type_create_struct(3, (int[]){2, 1, 3}, (MPI_Aint[]){0, 16, 26},
                                        (MPI_Datatype[]){MPI_FLOAT, type1, MPI_CHAR}, &t2));
        m = ref_struct(3, (int[]){2, 1, 3}, (MPI_Aint[]){0, 16, 26}, (ref_map[]){rfloat, r1, rchar},
                       8);
        CHECK(m.lb == 0 && ref_extent(&m) == 32, "reference");
        check_type("MPI example 4.6", commit(t2), &m, 1);
        check_contents("example 4.6", t2, MPI_COMBINER_STRUCT, 4, (int[]){3, 2, 1, 3}, 3,
                       (MPI_Aint[]){0, 16, 26}, 3, (MPI_Datatype[]){MPI_FLOAT, type1, MPI_CHAR});
        ref_free(&m);
        ref_free(&r1);
        MPI_Type_free(&t2);
        MPI_Type_free(&type1);
    }

    /* MPI_LB / MPI_UB markers: {(lb,-3),(int,0),(ub,6)} has lb -3 and extent 9; two of them
     * (contiguous) span lb -3 .. ub 15. */
    {
        CHECK_RC(MPI_Type_create_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){-3, 0, 6},
                                        (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB}, &t2));
        m = ref_resized(&rint, -3, 9);
        check_type("struct with LB/UB markers", commit(t2), &m, 1);
        CHECK_RC(MPI_Type_contiguous(2, t2, &t3));
        ref_map r2 = ref_contiguous(2, &m);
        CHECK(r2.lb == -3 && ref_extent(&r2) == 18, "reference");
        check_type("contiguous(2, markers)", commit(t3), &r2, 1);
        /* markers are sticky: a struct around it keeps them and adds no padding */
        MPI_Datatype t4;
        CHECK_RC(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 20},
                                        (MPI_Datatype[]){t2, MPI_CHAR}, &t4));
        ref_map r3 = {0};
        ref_push(&r3, 0, sizeof(int));
        ref_push(&r3, 20, 1);
        r3.lb = -3;
        r3.ub = 6;
        check_type("struct keeps markers", commit(t4), &r3, 0);
        MPI_Type_free(&t4);
        ref_free(&r3);
        ref_free(&r2);
        ref_free(&m);
        MPI_Type_free(&t3);
        MPI_Type_free(&t2);
    }

    /* pair types inside a struct */
    {
        struct di {
            double v;
            int i;
        };
        CHECK_RC(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &t2));
        ref_map rp = {0};
        ref_push(&rp, offsetof(struct di, v), 8);
        ref_push(&rp, offsetof(struct di, i), sizeof(int));
        rp.ub = sizeof(struct di);
        m = ref_contiguous(3, &rp);
        check_type("contiguous(3,DOUBLE_INT)", commit(t2), &m, 1);
        ref_free(&m);
        ref_free(&rp);
        MPI_Type_free(&t2);
    }

    /* subarrays: 2-D and 3-D, both orders, of a basic and of a derived element type */
    {
        int sz2[] = {6, 5}, sb2[] = {3, 2}, st2[] = {1, 2};
        int sz3[] = {4, 5, 6}, sb3[] = {2, 3, 4}, st3[] = {1, 2, 1};
        for (int order = 0; order < 2; order++) {
            int ord = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            CHECK_RC(MPI_Type_create_subarray(2, sz2, sb2, st2, ord, MPI_DOUBLE, &t2));
            m = ref_subarray(2, sz2, sb2, st2, ord, &rdbl);
            check_type(order ? "subarray 2-D Fortran" : "subarray 2-D C", commit(t2), &m, 1);
            check_contents("subarray", t2, MPI_COMBINER_SUBARRAY, 8,
                           (int[]){2, 6, 5, 3, 2, 1, 2, ord}, 0, NULL, 1,
                           (MPI_Datatype[]){MPI_DOUBLE});
            ref_free(&m);
            MPI_Type_free(&t2);
            CHECK_RC(MPI_Type_create_subarray(3, sz3, sb3, st3, ord, tv2, &t2));
            m = ref_subarray(3, sz3, sb3, st3, ord, &rv2);
            check_type(order ? "subarray 3-D Fortran of vector" : "subarray 3-D C of vector",
                       commit(t2), &m, 1);
            ref_free(&m);
            MPI_Type_free(&t2);
        }
        /* the whole array: a contiguous block with lb 0 */
        CHECK_RC(MPI_Type_create_subarray(2, sz2, sz2, (int[]){0, 0}, MPI_ORDER_C, MPI_INT, &t2));
        m = ref_subarray(2, sz2, sz2, (int[]){0, 0}, MPI_ORDER_C, &rint);
        check_type("subarray = whole array", commit(t2), &m, 1);
        ref_free(&m);
        MPI_Type_free(&t2);
    }

    /* distributed arrays: every process of the grid against the reference, and all of them
     * together covering the global array once (an int array holding each element's index,
     * packed through each process's type) */
    {
        enum { B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE };
        enum { D = MPI_DISTRIBUTE_DFLT_DARG };
        struct {
            int ndims, g[3], dist[3], darg[3], p[3];
        } cases[] = {
            {1, {10}, {B}, {D}, {3}},            /* blocks of 4, 4, 2 */
            {1, {10}, {B}, {D}, {4}},            /* 3, 3, 3, 1 */
            {1, {5}, {B}, {2}, {4}},             /* 2, 2, 1, nothing */
            {1, {11}, {C}, {D}, {3}},            /* round robin */
            {1, {11}, {C}, {2}, {3}},            /* pairs dealt round */
            {2, {6, 7}, {B, C}, {D, D}, {2, 3}}, /* block rows, cyclic columns */
            {2, {5, 9}, {C, B}, {2, 4}, {2, 3}}, /* cyclic(2) rows, blocks of 4 columns */
            {2, {4, 6}, {N, B}, {D, D}, {1, 4}}, /* whole rows, columns in blocks */
            {3, {4, 5, 3}, {B, C, N}, {D, 2, D}, {2, 2, 1}},
            {3, {3, 4, 5}, {C, C, C}, {D, 3, 2}, {3, 1, 2}},
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            int nd = cases[c].ndims, size = 1, total = 1;
            for (int d = 0; d < nd; d++) {
                size *= cases[c].p[d];
                total *= cases[c].g[d];
            }
            for (int order = 0; order < 2; order++) {
                int ord = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
                int *global = malloc(sizeof(int) * (size_t)total),
                    *seen = calloc((size_t)total, sizeof(int));
                int *packed = malloc(sizeof(int) * (size_t)total);
                CHECK(global && seen && packed, "malloc");
                for (int i = 0; i < total; i++) global[i] = i;
                for (int r = 0; r < size; r++) {
                    char what[96];
                    snprintf(what, sizeof(what), "darray case %zu, %s order, rank %d of %d", c,
                             order ? "Fortran" : "C", r, size);
                    CHECK_RC(MPI_Type_create_darray(size, r, nd, cases[c].g, cases[c].dist,
                                                    cases[c].darg, cases[c].p, ord, MPI_INT, &t2));
                    m = ref_darray(r, nd, cases[c].g, cases[c].dist, cases[c].darg, cases[c].p, ord,
                                   &rint);
                    check_type(what, commit(t2), &m, 1);
                    int ints[16] = {size, r, nd}, ni = 3;
                    for (int d = 0; d < nd; d++) ints[ni++] = cases[c].g[d];
                    for (int d = 0; d < nd; d++) ints[ni++] = cases[c].dist[d];
                    for (int d = 0; d < nd; d++) ints[ni++] = cases[c].darg[d];
                    for (int d = 0; d < nd; d++) ints[ni++] = cases[c].p[d];
                    ints[ni++] = ord;
                    check_contents(what, t2, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1,
                                   (MPI_Datatype[]){MPI_INT});
                    int tsize, pos = 0;
                    CHECK_RC(MPI_Type_size(t2, &tsize));
                    CHECK_RC(MPI_Pack(global, 1, t2, packed, (int)sizeof(int) * total, &pos,
                                      MPI_COMM_SELF));
                    CHECK(pos == tsize, "%s: packed %d bytes, size %d", what, pos, tsize);
                    for (int k = 0; k < tsize / (int)sizeof(int); k++) {
                        CHECK(packed[k] >= 0 && packed[k] < total, "%s: element %d", what, k);
                        CHECK(!seen[packed[k]]++, "%s: element %d is another process's too", what,
                              packed[k]);
                    }
                    ref_free(&m);
                    MPI_Type_free(&t2);
                }
                for (int i = 0; i < total; i++)
                    CHECK(seen[i] == 1, "darray case %zu: element %d owned by %d processes", c, i,
                          seen[i]);
                free(global);
                free(seen);
                free(packed);
            }
        }
        /* of a derived element type, received as a message: the 2x3 grid's rank 4 (row 1,
         * column 1) of a 5x7 array of vectors in blocks */
        int g[] = {5, 7}, dist[] = {B, B}, darg[] = {D, D}, p[] = {2, 3};
        CHECK_RC(MPI_Type_create_darray(6, 4, 2, g, dist, darg, p, MPI_ORDER_C, tv2, &t2));
        m = ref_darray(4, 2, g, dist, darg, p, MPI_ORDER_C, &rv2);
        check_type("darray of vector", commit(t2), &m, 1);
        ref_free(&m);
        MPI_Type_free(&t2);
    }

    /* resized: negative lb, holes between elements, extent smaller than the data */
    CHECK_RC(MPI_Type_create_resized(MPI_INT, -4, 12, &t2));
    m = ref_resized(&rint, -4, 12);
    check_type("resized(int,-4,12)", commit(t2), &m, 1);
    check_contents("resized", t2, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Aint[]){-4, 12}, 1,
                   (MPI_Datatype[]){MPI_INT});
    ref_map r5 = ref_contiguous(5, &m);
    CHECK_RC(MPI_Type_contiguous(5, t2, &t3));
    check_type("contiguous(5, resized int)", commit(t3), &r5, 1);
    ref_free(&r5);
    ref_free(&m);
    MPI_Type_free(&t3);
    MPI_Type_free(&t2);
    CHECK_RC(MPI_Type_create_resized(t, 8, 40, &t2));
    m = ref_resized(&rv, 8, 40);
    check_type("resized(vector,8,40)", commit(t2), &m, 0);
    ref_free(&m);
    MPI_Type_free(&t2);

    /* dup: same layout, envelope DUP, committed like the original */
    CHECK_RC(MPI_Type_dup(t, &t2));
    check_type("dup(vector)", t2, &rv, 1);
    check_contents("dup", t2, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){t});
    MPI_Type_free(&t2);

    /* a struct of several multi-run members, repeated: many segments */
    {
        CHECK_RC(MPI_Type_create_struct(3, (int[]){2, 1, 2}, (MPI_Aint[]){0, 40, 100},
                                        (MPI_Datatype[]){tv2, t, MPI_SHORT}, &t2));
        ref_map parts[] = {rv2, rv, rshort};
        m = ref_struct(3, (int[]){2, 1, 2}, (MPI_Aint[]){0, 40, 100}, parts, 8);
        check_type("struct of vectors", commit(t2), &m, 0);
        MPI_Datatype t4;
        CHECK_RC(MPI_Type_vector(5, 2, 3, t2, &t4));
        ref_map r4 = ref_vector(5, 2, 3, &m);
        check_type("vector of struct of vectors", commit(t4), &r4, 0);
        ref_free(&r4);
        MPI_Type_free(&t4);
        ref_free(&m);
        MPI_Type_free(&t2);
    }

    /* absolute addresses: a struct of separate variables used with MPI_BOTTOM */
    {
        static int a = 11;
        static double b[3] = {1.5, 2.5, 3.5};
        static short c = 7;
        MPI_Aint addr[3];
        CHECK_RC(MPI_Get_address(&a, &addr[0]));
        CHECK_RC(MPI_Get_address(&b[1], &addr[1]));
        CHECK_RC(MPI_Address(&c, &addr[2]));
        CHECK(MPI_Aint_diff(addr[1], MPI_Aint_add(addr[1], -8)) == 8, "Aint_add/Aint_diff");
        CHECK(MPI_Aint_add(addr[0], 0) == addr[0], "Aint_add");
        CHECK_RC(MPI_Type_create_struct(3, (int[]){1, 2, 1}, addr,
                                        (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_SHORT}, &t2));
        commit(t2);
        char out[64];
        int pos = 0;
        CHECK_RC(MPI_Pack(MPI_BOTTOM, 1, t2, out, sizeof(out), &pos, MPI_COMM_WORLD));
        CHECK(pos == (int)(sizeof(int) + 16 + sizeof(short)), "packed %d", pos);
        int ga;
        double gb[2];
        short gc;
        memcpy(&ga, out, sizeof(int));
        memcpy(gb, out + sizeof(int), 16);
        memcpy(&gc, out + sizeof(int) + 16, sizeof(short));
        CHECK(ga == 11 && gb[0] == 2.5 && gb[1] == 3.5 && gc == 7, "MPI_BOTTOM pack");
        a = 0;
        b[1] = b[2] = 0;
        c = 0;
        pos = 0;
        CHECK_RC(MPI_Unpack(out, sizeof(out), &pos, MPI_BOTTOM, 1, t2, MPI_COMM_WORLD));
        CHECK(a == 11 && b[1] == 2.5 && b[2] == 3.5 && c == 7 && b[0] == 1.5, "MPI_BOTTOM unpack");
        MPI_Type_free(&t2);
    }

    /* names: predefined types have the standard names; derived ones start empty */
    {
        struct {
            MPI_Datatype t;
            const char *name;
        } names[] = {{MPI_CHAR, "MPI_CHAR"},
                     {MPI_INT, "MPI_INT"},
                     {MPI_DOUBLE, "MPI_DOUBLE"},
                     {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
                     {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
                     {MPI_2INT, "MPI_2INT"},
                     {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
                     {MPI_PACKED, "MPI_PACKED"},
                     {MPI_BYTE, "MPI_BYTE"}};
        char buf[MPI_MAX_OBJECT_NAME];
        int len;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            CHECK_RC(MPI_Type_get_name(names[i].t, buf, &len));
            CHECK(!strcmp(buf, names[i].name) && len == (int)strlen(names[i].name),
                  "name %s, expected %s", buf, names[i].name);
        }
        CHECK_RC(MPI_Type_get_name(t, buf, &len));
        CHECK(len == 0 && buf[0] == 0, "derived types start without a name");
        CHECK_RC(MPI_Type_set_name(t, "column"));
        CHECK_RC(MPI_Type_get_name(t, buf, &len));
        CHECK(!strcmp(buf, "column") && len == 6, "set_name");
        char longname[300];
        memset(longname, 'x', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = 0;
        CHECK_RC(MPI_Type_set_name(t, longname));
        CHECK_RC(MPI_Type_get_name(t, buf, &len));
        CHECK(len == MPI_MAX_OBJECT_NAME - 1, "long names are truncated (%d)", len);
        int ni, na, nt, comb;
        CHECK_RC(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "predefined envelope");
    }

    MPI_Type_free(&tv2);
    MPI_Type_free(&t);
    ref_free(&rv);
    ref_free(&rv2);
    ref_free(&rint);
    ref_free(&rdbl);
    ref_free(&rchar);
    ref_free(&rshort);
    ref_free(&rfloat);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("dtype_layout: %d types checked\n", ncheck);
    MPI_Finalize();
    return 0;
}
