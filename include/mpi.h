/* Cohort's public MPI interface: the MPI 3.1 subset Cohort implements (docs/mpi-subset.md).
 * Handles are plain integers whose bits name the kind of object and its slot, so that the
 * predefined handles are compile-time constants usable in switch statements and static
 * initialisers. Every MPI_ function has a PMPI_ twin for profiling tools. */
#ifndef COHORT_MPI_H
#define COHORT_MPI_H

#include <stddef.h>
#include <stdint.h>

#define COHORT                1
#define COHORT_VERSION_MAJOR  0
#define COHORT_VERSION_MINOR  1
#define COHORT_VERSION_PATCH  0
#define COHORT_VERSION_STRING "0.1.0"

#define MPI_VERSION    3
#define MPI_SUBVERSION 1

#if defined(__GNUC__)
#define COHORT_API __attribute__((visibility("default")))
#else
#define COHORT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handle types ---------------------------------------------------------------------- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int co_cancelled;   /* internal */
    long long co_bytes; /* internal: bytes received */
} MPI_Status;

/* A handle is (kind << 26) | (generation << 20) | slot; slot 0 of each kind is its NULL. */
#define COHORT_HANDLE(kind, slot) ((int)(((kind) << 26) | (slot)))
#define COHORT_KIND_COMM          1
#define COHORT_KIND_GROUP         2
#define COHORT_KIND_DATATYPE      3
#define COHORT_KIND_OP            4
#define COHORT_KIND_REQUEST       5
#define COHORT_KIND_ERRHANDLER    6
#define COHORT_KIND_INFO          7
#define COHORT_KIND_WIN           8
#define COHORT_KIND_FILE          9
#define COHORT_KIND_MESSAGE       10

/* ---- Predefined handles ------------------------------------------------------------------ */
#define MPI_COMM_NULL  COHORT_HANDLE(COHORT_KIND_COMM, 0)
#define MPI_COMM_WORLD COHORT_HANDLE(COHORT_KIND_COMM, 1)
#define MPI_COMM_SELF  COHORT_HANDLE(COHORT_KIND_COMM, 2)

#define MPI_GROUP_NULL  COHORT_HANDLE(COHORT_KIND_GROUP, 0)
#define MPI_GROUP_EMPTY COHORT_HANDLE(COHORT_KIND_GROUP, 1)

#define MPI_REQUEST_NULL     COHORT_HANDLE(COHORT_KIND_REQUEST, 0)
#define MPI_ERRHANDLER_NULL  COHORT_HANDLE(COHORT_KIND_ERRHANDLER, 0)
#define MPI_ERRORS_ARE_FATAL COHORT_HANDLE(COHORT_KIND_ERRHANDLER, 1)
#define MPI_ERRORS_RETURN    COHORT_HANDLE(COHORT_KIND_ERRHANDLER, 2)
#define MPI_INFO_NULL        COHORT_HANDLE(COHORT_KIND_INFO, 0)
#define MPI_INFO_ENV         COHORT_HANDLE(COHORT_KIND_INFO, 1)
#define MPI_WIN_NULL         COHORT_HANDLE(COHORT_KIND_WIN, 0)
#define MPI_FILE_NULL        COHORT_HANDLE(COHORT_KIND_FILE, 0)
#define MPI_MESSAGE_NULL     COHORT_HANDLE(COHORT_KIND_MESSAGE, 0)
#define MPI_MESSAGE_NO_PROC  COHORT_HANDLE(COHORT_KIND_MESSAGE, 1)

#define COHORT_DT(slot)            COHORT_HANDLE(COHORT_KIND_DATATYPE, slot)
#define MPI_DATATYPE_NULL          COHORT_DT(0)
#define MPI_CHAR                   COHORT_DT(1)
#define MPI_SIGNED_CHAR            COHORT_DT(2)
#define MPI_UNSIGNED_CHAR          COHORT_DT(3)
#define MPI_BYTE                   COHORT_DT(4)
#define MPI_SHORT                  COHORT_DT(5)
#define MPI_UNSIGNED_SHORT         COHORT_DT(6)
#define MPI_INT                    COHORT_DT(7)
#define MPI_UNSIGNED               COHORT_DT(8)
#define MPI_LONG                   COHORT_DT(9)
#define MPI_UNSIGNED_LONG          COHORT_DT(10)
#define MPI_LONG_LONG_INT          COHORT_DT(11)
#define MPI_LONG_LONG              MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG     COHORT_DT(12)
#define MPI_FLOAT                  COHORT_DT(13)
#define MPI_DOUBLE                 COHORT_DT(14)
#define MPI_LONG_DOUBLE            COHORT_DT(15)
#define MPI_WCHAR                  COHORT_DT(16)
#define MPI_C_BOOL                 COHORT_DT(17)
#define MPI_INT8_T                 COHORT_DT(18)
#define MPI_INT16_T                COHORT_DT(19)
#define MPI_INT32_T                COHORT_DT(20)
#define MPI_INT64_T                COHORT_DT(21)
#define MPI_UINT8_T                COHORT_DT(22)
#define MPI_UINT16_T               COHORT_DT(23)
#define MPI_UINT32_T               COHORT_DT(24)
#define MPI_UINT64_T               COHORT_DT(25)
#define MPI_C_FLOAT_COMPLEX        COHORT_DT(26)
#define MPI_C_COMPLEX              MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX       COHORT_DT(27)
#define MPI_C_LONG_DOUBLE_COMPLEX  COHORT_DT(28)
#define MPI_AINT                   COHORT_DT(29)
#define MPI_OFFSET                 COHORT_DT(30)
#define MPI_COUNT                  COHORT_DT(31)
#define MPI_PACKED                 COHORT_DT(32)
#define MPI_FLOAT_INT              COHORT_DT(33)
#define MPI_DOUBLE_INT             COHORT_DT(34)
#define MPI_LONG_INT               COHORT_DT(35)
#define MPI_2INT                   COHORT_DT(36)
#define MPI_SHORT_INT              COHORT_DT(37)
#define MPI_LONG_DOUBLE_INT        COHORT_DT(38)
#define MPI_UB                     COHORT_DT(39)
#define MPI_LB                     COHORT_DT(40)
#define COHORT_DT_PREDEFINED_COUNT 63 /* with the named types below */
/* Fortran's named types, for C code that handles Fortran data (gfortran's sizes: INTEGER and
 * LOGICAL 4 bytes, REAL 4, DOUBLE PRECISION 8), and C++'s */
#define MPI_CHARACTER               COHORT_DT(41)
#define MPI_INTEGER                 COHORT_DT(42)
#define MPI_REAL                    COHORT_DT(43)
#define MPI_DOUBLE_PRECISION        COHORT_DT(44)
#define MPI_COMPLEX                 COHORT_DT(45)
#define MPI_DOUBLE_COMPLEX          COHORT_DT(46)
#define MPI_LOGICAL                 COHORT_DT(47)
#define MPI_2INTEGER                COHORT_DT(48)
#define MPI_2REAL                   COHORT_DT(49)
#define MPI_2DOUBLE_PRECISION       COHORT_DT(50)
#define MPI_INTEGER1                COHORT_DT(51)
#define MPI_INTEGER2                COHORT_DT(52)
#define MPI_INTEGER4                COHORT_DT(53)
#define MPI_INTEGER8                COHORT_DT(54)
#define MPI_REAL4                   COHORT_DT(55)
#define MPI_REAL8                   COHORT_DT(56)
#define MPI_COMPLEX8                COHORT_DT(57)
#define MPI_COMPLEX16               COHORT_DT(58)
#define MPI_CXX_BOOL                COHORT_DT(59)
#define MPI_CXX_FLOAT_COMPLEX       COHORT_DT(60)
#define MPI_CXX_DOUBLE_COMPLEX      COHORT_DT(61)
#define MPI_CXX_LONG_DOUBLE_COMPLEX COHORT_DT(62)
/* Optional Fortran types with no C type of their layout here (REAL*16 is IEEE quad, not the
 * x87 long double): MPI_DATATYPE_NULL, as the standard provides for types not supported */
#define MPI_REAL2     MPI_DATATYPE_NULL
#define MPI_REAL16    MPI_DATATYPE_NULL
#define MPI_COMPLEX4  MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL
#define MPI_INTEGER16 MPI_DATATYPE_NULL

/* MPI_Type_match_size's classes */
#define MPI_TYPECLASS_REAL    1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

#define COHORT_OP(slot)            COHORT_HANDLE(COHORT_KIND_OP, slot)
#define MPI_OP_NULL                COHORT_OP(0)
#define MPI_MAX                    COHORT_OP(1)
#define MPI_MIN                    COHORT_OP(2)
#define MPI_SUM                    COHORT_OP(3)
#define MPI_PROD                   COHORT_OP(4)
#define MPI_LAND                   COHORT_OP(5)
#define MPI_BAND                   COHORT_OP(6)
#define MPI_LOR                    COHORT_OP(7)
#define MPI_BOR                    COHORT_OP(8)
#define MPI_LXOR                   COHORT_OP(9)
#define MPI_BXOR                   COHORT_OP(10)
#define MPI_MINLOC                 COHORT_OP(11)
#define MPI_MAXLOC                 COHORT_OP(12)
#define MPI_REPLACE                COHORT_OP(13)
#define MPI_NO_OP                  COHORT_OP(14)
#define COHORT_OP_PREDEFINED_COUNT 15

/* ---- Special values ------------------------------------------------------------------------ */
#define MPI_ANY_SOURCE     (-2)
#define MPI_PROC_NULL      (-1)
#define MPI_ROOT           (-3)
#define MPI_ANY_TAG        (-1)
#define MPI_UNDEFINED      (-32766)
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BSEND_OVERHEAD 64

#define MPI_BOTTOM          ((void *)0)
#define MPI_IN_PLACE        ((void *)-1)
#define MPI_STATUS_IGNORE   ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL       ((char **)0)
#define MPI_ARGVS_NULL      ((char ***)0)
#define MPI_UNWEIGHTED      ((int *)2)
#define MPI_WEIGHTS_EMPTY   ((int *)3)

#define MPI_MAX_PROCESSOR_NAME         256
#define MPI_MAX_ERROR_STRING           512
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PORT_NAME              256
#define MPI_MAX_DATAREP_STRING         128

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Comm_compare / Group_compare results */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* Topology kinds */
#define MPI_GRAPH      1
#define MPI_CART       2
#define MPI_DIST_GRAPH 3

#define MPI_COMM_TYPE_SHARED      1
#define MPI_COMM_TYPE_HW_GUIDED   2 /* MPI 4 */
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* Predefined attribute keys */
#define MPI_TAG_UB          1
#define MPI_HOST            2
#define MPI_IO              3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE   5
#define MPI_APPNUM          6
#define MPI_LASTUSEDCODE    7
/* window attributes (MPI_Win_get_attr) */
#define MPI_WIN_BASE          8
#define MPI_WIN_SIZE          9
#define MPI_WIN_DISP_UNIT     10
#define MPI_WIN_CREATE_FLAVOR 11
#define MPI_WIN_MODEL         12

/* Datatype combiners */
#define MPI_COMBINER_NAMED            1
#define MPI_COMBINER_DUP              2
#define MPI_COMBINER_CONTIGUOUS       3
#define MPI_COMBINER_VECTOR           4
#define MPI_COMBINER_HVECTOR          5
#define MPI_COMBINER_INDEXED          6
#define MPI_COMBINER_HINDEXED         7
#define MPI_COMBINER_INDEXED_BLOCK    8
#define MPI_COMBINER_HINDEXED_BLOCK   9
#define MPI_COMBINER_STRUCT           10
#define MPI_COMBINER_SUBARRAY         11
#define MPI_COMBINER_DARRAY           12
#define MPI_COMBINER_F90_REAL         13
#define MPI_COMBINER_F90_COMPLEX      14
#define MPI_COMBINER_F90_INTEGER      15
#define MPI_COMBINER_RESIZED          16
#define MPI_COMBINER_HVECTOR_INTEGER  17
#define MPI_COMBINER_HINDEXED_INTEGER 18
#define MPI_COMBINER_STRUCT_INTEGER   19

#define MPI_ORDER_C              0
#define MPI_ORDER_FORTRAN        1
#define MPI_DISTRIBUTE_BLOCK     0
#define MPI_DISTRIBUTE_CYCLIC    1
#define MPI_DISTRIBUTE_NONE      2
#define MPI_DISTRIBUTE_DFLT_DARG (-1)

/* One-sided communication (docs/rma.md) */
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE        1
#define MPI_WIN_UNIFIED         2
#define MPI_MODE_NOCHECK        1024
#define MPI_MODE_NOSTORE        2048
#define MPI_MODE_NOPUT          4096
#define MPI_MODE_NOPRECEDE      8192
#define MPI_MODE_NOSUCCEED      16384
#define MPI_LOCK_EXCLUSIVE      234
#define MPI_LOCK_SHARED         235

/* Files (docs/io.md) */
#define MPI_MODE_CREATE          1
#define MPI_MODE_RDONLY          2
#define MPI_MODE_WRONLY          4
#define MPI_MODE_RDWR            8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN     32
#define MPI_MODE_EXCL            64
#define MPI_MODE_APPEND          128
#define MPI_MODE_SEQUENTIAL      256
#define MPI_SEEK_SET             600
#define MPI_SEEK_CUR             602
#define MPI_SEEK_END             604
#define MPI_DISPLACEMENT_CURRENT (-54278278LL)
/* ROMIO's names for file requests, which programs written for MPICH use */
#define MPIO_Request      MPI_Request
#define MPIO_REQUEST_NULL MPI_REQUEST_NULL
#define MPIO_Wait         MPI_Wait
#define MPIO_Test         MPI_Test

/* ---- Error classes ------------------------------------------------------------------------ */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               7
#define MPI_ERR_ROOT                  8
#define MPI_ERR_GROUP                 9
#define MPI_ERR_OP                    10
#define MPI_ERR_TOPOLOGY              11
#define MPI_ERR_DIMS                  12
#define MPI_ERR_ARG                   13
#define MPI_ERR_UNKNOWN               14
#define MPI_ERR_TRUNCATE              15
#define MPI_ERR_OTHER                 16
#define MPI_ERR_INTERN                17
#define MPI_ERR_IN_STATUS             18
#define MPI_ERR_PENDING               19
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_ASSERT                22
#define MPI_ERR_BAD_FILE              23
#define MPI_ERR_BASE                  24
#define MPI_ERR_CONVERSION            25
#define MPI_ERR_DISP                  26
#define MPI_ERR_DUP_DATAREP           27
#define MPI_ERR_FILE_EXISTS           28
#define MPI_ERR_FILE_IN_USE           29
#define MPI_ERR_FILE                  30
#define MPI_ERR_INFO_KEY              31
#define MPI_ERR_INFO_NOKEY            32
#define MPI_ERR_INFO_VALUE            33
#define MPI_ERR_INFO                  34
#define MPI_ERR_IO                    35
#define MPI_ERR_KEYVAL                36
#define MPI_ERR_LOCKTYPE              37
#define MPI_ERR_NAME                  38
#define MPI_ERR_NO_MEM                39
#define MPI_ERR_NOT_SAME              40
#define MPI_ERR_NO_SPACE              41
#define MPI_ERR_NO_SUCH_FILE          42
#define MPI_ERR_PORT                  43
#define MPI_ERR_QUOTA                 44
#define MPI_ERR_READ_ONLY             45
#define MPI_ERR_RMA_CONFLICT          46
#define MPI_ERR_RMA_SYNC              47
#define MPI_ERR_SERVICE               48
#define MPI_ERR_SIZE                  49
#define MPI_ERR_SPAWN                 50
#define MPI_ERR_UNSUPPORTED_DATAREP   51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN                   53
#define MPI_ERR_RMA_RANGE             54
#define MPI_ERR_RMA_ATTACH            55
#define MPI_ERR_RMA_SHARED            56
#define MPI_ERR_RMA_FLAVOR            57
#define MPI_T_ERR_INVALID             58
#define MPI_ERR_LASTCODE              63

/* ---- Callback types ----------------------------------------------------------------------- */
typedef void(MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm *comm, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function; /* MPI-1 */
typedef void(MPI_Win_errhandler_function)(MPI_Win *win, int *errcode, ...);
typedef void(MPI_File_errhandler_function)(MPI_File *file, int *errcode, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int(MPI_Datarep_conversion_function)(void *userbuf, MPI_Datatype datatype, int count,
                                             void *filebuf, MPI_Offset position, void *extra_state);
typedef int(MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint *file_extent,
                                         void *extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out,
                                         int *flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int keyval, void *attribute_val,
                                           void *extra_state);
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)1)
/* MPI-1 names of the same callbacks (deprecated, still in MPI 3.1) */
typedef int(MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int(MPI_Grequest_free_function)(void *extra_state);
typedef int(MPI_Grequest_cancel_function)(void *extra_state, int complete);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
#define MPI_NULL_COPY_FN   MPI_COMM_NULL_COPY_FN
#define MPI_NULL_DELETE_FN MPI_COMM_NULL_DELETE_FN
#define MPI_DUP_FN         MPI_COMM_DUP_FN
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out,
                                         int *flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int keyval, void *attribute_val,
                                           void *extra_state);
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)1)
typedef int(MPI_Win_copy_attr_function)(MPI_Win oldwin, int keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int keyval, void *attribute_val,
                                          void *extra_state);
#define MPI_WIN_NULL_COPY_FN   ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN         ((MPI_Win_copy_attr_function *)1)

/* ---- Function declarations ------------------------------------------------------------------
 * COHORT_FN declares both names: MPI_x (a weak alias) and PMPI_x (the implementation). */
#define COHORT_FN(ret, name, args)                                                                 \
    COHORT_API ret MPI_##name args;                                                                \
    COHORT_API ret PMPI_##name args;

/* Environment */
COHORT_FN(int, Init, (int *argc, char ***argv))
COHORT_FN(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
COHORT_FN(int, Initialized, (int *flag))
COHORT_FN(int, Finalize, (void))
COHORT_FN(int, Finalized, (int *flag))
COHORT_FN(int, Abort, (MPI_Comm comm, int errorcode))
COHORT_FN(int, Query_thread, (int *provided))
COHORT_FN(int, Is_thread_main, (int *flag))
COHORT_FN(double, Wtime, (void))
COHORT_FN(double, Wtick, (void))
COHORT_FN(int, Get_processor_name, (char *name, int *resultlen))
COHORT_FN(int, Get_version, (int *version, int *subversion))
COHORT_FN(int, Pcontrol, (const int level, ...))
COHORT_FN(int, Get_library_version, (char *version, int *resultlen))
COHORT_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
COHORT_FN(int, Free_mem, (void *base))

/* Handle conversion for Fortran interoperability: Cohort's handles are integers, the same in
 * both languages. */
COHORT_FN(MPI_Fint, Comm_c2f, (MPI_Comm handle))
COHORT_FN(MPI_Comm, Comm_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Type_c2f, (MPI_Datatype handle))
COHORT_FN(MPI_Datatype, Type_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Group_c2f, (MPI_Group handle))
COHORT_FN(MPI_Group, Group_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Request_c2f, (MPI_Request handle))
COHORT_FN(MPI_Request, Request_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Op_c2f, (MPI_Op handle))
COHORT_FN(MPI_Op, Op_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Info_c2f, (MPI_Info handle))
COHORT_FN(MPI_Info, Info_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler handle))
COHORT_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Message_c2f, (MPI_Message handle))
COHORT_FN(MPI_Message, Message_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, Win_c2f, (MPI_Win handle))
COHORT_FN(MPI_Win, Win_f2c, (MPI_Fint handle))
COHORT_FN(MPI_Fint, File_c2f, (MPI_File handle))
COHORT_FN(MPI_File, File_f2c, (MPI_Fint handle))

/* Errors */
COHORT_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
COHORT_FN(int, Error_class, (int errorcode, int *errorclass))
COHORT_FN(int, Add_error_class, (int *errorclass))
COHORT_FN(int, Add_error_code, (int errorclass, int *errorcode))
COHORT_FN(int, Add_error_string, (int errorcode, const char *string))
COHORT_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
COHORT_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
COHORT_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
COHORT_FN(int, Comm_create_errhandler,
          (MPI_Comm_errhandler_function * function, MPI_Errhandler *errhandler))
COHORT_FN(int, Errhandler_free, (MPI_Errhandler * errhandler))
COHORT_FN(int, Errhandler_create, (MPI_Handler_function * function, MPI_Errhandler *errhandler))
COHORT_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
COHORT_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))

/* Point-to-point */
COHORT_FN(int, Send,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
COHORT_FN(int, Ssend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
COHORT_FN(int, Rsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
COHORT_FN(int, Bsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
COHORT_FN(int, Recv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Status *status))
COHORT_FN(int, Isend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Issend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Irsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ibsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Irecv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Sendrecv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Status *status))
COHORT_FN(int, Sendrecv_replace,
          (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
           int recvtag, MPI_Comm comm, MPI_Status *status))
COHORT_FN(int, Isendrecv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Isendrecv_replace,
          (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
           int recvtag, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Grequest_start,
          (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function *free_fn,
           MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request))
COHORT_FN(int, Grequest_complete, (MPI_Request request))
COHORT_FN(int, Buffer_attach, (void *buffer, int size))
COHORT_FN(int, Buffer_detach, (void *buffer_addr, int *size))
COHORT_FN(int, Wait, (MPI_Request * request, MPI_Status *status))
COHORT_FN(int, Waitall, (int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses))
COHORT_FN(int, Waitany,
          (int count, MPI_Request array_of_requests[], int *index, MPI_Status *status))
COHORT_FN(int, Waitsome,
          (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
           MPI_Status *array_of_statuses))
COHORT_FN(int, Test, (MPI_Request * request, int *flag, MPI_Status *status))
COHORT_FN(int, Testall,
          (int count, MPI_Request array_of_requests[], int *flag, MPI_Status *array_of_statuses))
COHORT_FN(int, Testany,
          (int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status))
COHORT_FN(int, Testsome,
          (int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
           MPI_Status *array_of_statuses))
COHORT_FN(int, Request_free, (MPI_Request * request))
COHORT_FN(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status))
COHORT_FN(int, Cancel, (MPI_Request * request))
COHORT_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
COHORT_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
COHORT_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
COHORT_FN(int, Mprobe,
          (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
COHORT_FN(int, Improbe,
          (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
COHORT_FN(int, Mrecv,
          (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status))
COHORT_FN(int, Imrecv,
          (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request))
COHORT_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
COHORT_FN(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
COHORT_FN(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count))
COHORT_FN(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count))
COHORT_FN(int, Status_set_elements_x, (MPI_Status * status, MPI_Datatype datatype, MPI_Count count))
COHORT_FN(int, Status_set_cancelled, (MPI_Status * status, int flag))
COHORT_FN(int, Send_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ssend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Rsend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Bsend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Recv_init,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Start, (MPI_Request * request))
COHORT_FN(int, Startall, (int count, MPI_Request array_of_requests[]))

/* Collectives */
COHORT_FN(int, Barrier, (MPI_Comm comm))
COHORT_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
COHORT_FN(int, Reduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm))
COHORT_FN(int, Allreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
COHORT_FN(int, Gather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm))
COHORT_FN(int, Gatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm))
COHORT_FN(int, Scatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm))
COHORT_FN(int, Scatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
COHORT_FN(int, Allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm))
COHORT_FN(int, Alltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
COHORT_FN(int, Reduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm))
COHORT_FN(int, Reduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
COHORT_FN(int, Scan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
COHORT_FN(int, Exscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
COHORT_FN(int, Reduce_local,
          (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
/* Nonblocking collectives (MPI 3.0) */
COHORT_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ibcast,
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ireduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iallreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Igather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Igatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iscatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iscatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Iallgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iallgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ialltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ialltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ialltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ireduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ireduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Iexscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
/* Neighbourhood collectives (MPI 3.0) */
COHORT_FN(int, Neighbor_allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Neighbor_allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Neighbor_alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
COHORT_FN(int, Neighbor_alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm))
COHORT_FN(int, Neighbor_alltoallw,
          (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
COHORT_FN(int, Ineighbor_allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ineighbor_allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request))
COHORT_FN(int, Ineighbor_alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ineighbor_alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Request *request))
COHORT_FN(int, Ineighbor_alltoallw,
          (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request))
/* Persistent collectives (MPI 4.0) */
COHORT_FN(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Bcast_init,
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request))
COHORT_FN(int, Reduce_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Allreduce_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Scan_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Exscan_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Gather_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Gatherv_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Scatter_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Scatterv_init,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Info info, MPI_Request *request))
COHORT_FN(int, Allgather_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Allgatherv_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Info info, MPI_Request *request))
COHORT_FN(int, Alltoall_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Alltoallv_init,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Alltoallw_init,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
           MPI_Request *request))
COHORT_FN(int, Reduce_scatter_init,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Reduce_scatter_block_init,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request))
COHORT_FN(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op *op))
COHORT_FN(int, Op_free, (MPI_Op * op))
COHORT_FN(int, Op_commutative, (MPI_Op op, int *commute))

/* Communicators */
COHORT_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
COHORT_FN(int, Comm_size, (MPI_Comm comm, int *size))
COHORT_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
COHORT_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
COHORT_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
COHORT_FN(int, Comm_idup_with_info,
          (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request))
COHORT_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
COHORT_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used))
COHORT_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
COHORT_FN(int, Comm_split_type,
          (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
COHORT_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
COHORT_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
COHORT_FN(int, Comm_free, (MPI_Comm * comm))
COHORT_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
COHORT_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
COHORT_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
COHORT_FN(int, Comm_set_name, (MPI_Comm comm, const char *comm_name))
COHORT_FN(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen))
COHORT_FN(int, Comm_test_inter, (MPI_Comm comm, int *flag))
COHORT_FN(int, Comm_remote_size, (MPI_Comm comm, int *size))
COHORT_FN(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag))
COHORT_FN(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val))
COHORT_FN(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
COHORT_FN(int, Comm_create_keyval,
          (MPI_Comm_copy_attr_function * comm_copy_attr_fn,
           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state))
COHORT_FN(int, Comm_free_keyval, (int *comm_keyval))
COHORT_FN(int, Type_get_attr,
          (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag))
COHORT_FN(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val))
COHORT_FN(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
COHORT_FN(int, Type_create_keyval,
          (MPI_Type_copy_attr_function * type_copy_attr_fn,
           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state))
COHORT_FN(int, Type_free_keyval, (int *type_keyval))
COHORT_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
COHORT_FN(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val))
COHORT_FN(int, Attr_delete, (MPI_Comm comm, int keyval))
COHORT_FN(int, Keyval_create,
          (MPI_Copy_function * copy_fn, MPI_Delete_function *delete_fn, int *keyval,
           void *extra_state))
COHORT_FN(int, Keyval_free, (int *keyval))
COHORT_FN(int, Intercomm_create,
          (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
           MPI_Comm *newintercomm))
COHORT_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))

/* Groups */
COHORT_FN(int, Group_size, (MPI_Group group, int *size))
COHORT_FN(int, Group_rank, (MPI_Group group, int *rank))
COHORT_FN(int, Group_translate_ranks,
          (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
COHORT_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
COHORT_FN(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
COHORT_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
COHORT_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
COHORT_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
COHORT_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
COHORT_FN(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
COHORT_FN(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
COHORT_FN(int, Group_free, (MPI_Group * group))

/* Topology */
COHORT_FN(int, Cart_create,
          (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
           MPI_Comm *comm_cart))
COHORT_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
COHORT_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
COHORT_FN(int, Cart_shift,
          (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
COHORT_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
COHORT_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
COHORT_FN(int, Cartdim_get, (MPI_Comm comm, int *ndims))
COHORT_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
COHORT_FN(int, Topo_test, (MPI_Comm comm, int *status))
COHORT_FN(int, Cart_map,
          (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
COHORT_FN(int, Graph_create,
          (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
           MPI_Comm *comm_graph))
COHORT_FN(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
COHORT_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
COHORT_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
COHORT_FN(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
COHORT_FN(int, Graph_map,
          (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank))
COHORT_FN(int, Dist_graph_create,
          (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
           const int destinations[], const int *weights, MPI_Info info, int reorder,
           MPI_Comm *comm_dist_graph))
COHORT_FN(int, Dist_graph_create_adjacent,
          (MPI_Comm comm_old, int indegree, const int sources[], const int *sourceweights,
           int outdegree, const int destinations[], const int *destweights, MPI_Info info,
           int reorder, MPI_Comm *comm_dist_graph))
COHORT_FN(int, Dist_graph_neighbors_count,
          (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
COHORT_FN(int, Dist_graph_neighbors,
          (MPI_Comm comm, int maxindegree, int sources[], int *sourceweights, int maxoutdegree,
           int destinations[], int *destweights))

/* Datatypes */
COHORT_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_vector,
          (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_hvector,
          (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
           MPI_Datatype *newtype))
COHORT_FN(int, Type_indexed,
          (int count, const int array_of_blocklengths[], const int array_of_displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_hindexed,
          (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_indexed_block,
          (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
           MPI_Datatype *newtype))
COHORT_FN(int, Type_create_hindexed_block,
          (int count, int blocklength, const MPI_Aint array_of_displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_struct,
          (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
           const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
COHORT_FN(int, Type_create_subarray,
          (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
           const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_darray,
          (int size, int rank, int ndims, const int array_of_gsizes[],
           const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
           int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_resized,
          (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
COHORT_FN(int, Type_commit, (MPI_Datatype * datatype))
COHORT_FN(int, Type_free, (MPI_Datatype * datatype))
COHORT_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_size, (MPI_Datatype datatype, int *size))
COHORT_FN(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype))
COHORT_FN(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
COHORT_FN(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
COHORT_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
COHORT_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
COHORT_FN(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent))
COHORT_FN(int, Type_get_true_extent,
          (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent))
COHORT_FN(int, Type_get_true_extent_x,
          (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent))
COHORT_FN(int, Type_get_envelope,
          (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
           int *combiner))
COHORT_FN(int, Type_get_contents,
          (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
           int array_of_integers[], MPI_Aint array_of_addresses[],
           MPI_Datatype array_of_datatypes[]))
COHORT_FN(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen))
COHORT_FN(int, Type_set_name, (MPI_Datatype datatype, const char *type_name))
COHORT_FN(int, Type_hvector,
          (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
           MPI_Datatype *newtype))
COHORT_FN(int, Type_hindexed,
          (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype))
COHORT_FN(int, Type_struct,
          (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
           const MPI_Datatype array_of_types[], MPI_Datatype *newtype))
COHORT_FN(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent))
COHORT_FN(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement))
COHORT_FN(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement))
COHORT_FN(int, Get_address, (const void *location, MPI_Aint *address))
COHORT_FN(int, Address, (void *location, MPI_Aint *address))
COHORT_FN(int, Pack,
          (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
           int *position, MPI_Comm comm))
COHORT_FN(int, Unpack,
          (const void *inbuf, int insize, int *position, void *outbuf, int outcount,
           MPI_Datatype datatype, MPI_Comm comm))
COHORT_FN(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size))
COHORT_FN(int, Pack_external,
          (const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
           void *outbuf, MPI_Aint outsize, MPI_Aint *position))
COHORT_FN(int, Unpack_external,
          (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
           void *outbuf, int outcount, MPI_Datatype datatype))
COHORT_FN(int, Pack_external_size,
          (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size))
COHORT_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
COHORT_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

/* Info objects */
COHORT_FN(int, Info_create, (MPI_Info * info))
COHORT_FN(int, Info_create_env, (int argc, char *argv[], MPI_Info *info)) /* MPI 4 */
COHORT_FN(int, Info_set, (MPI_Info info, const char *key, const char *value))
COHORT_FN(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
COHORT_FN(int, Info_get_string,
          (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
COHORT_FN(int, Info_delete, (MPI_Info info, const char *key))
COHORT_FN(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
COHORT_FN(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
COHORT_FN(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
COHORT_FN(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
COHORT_FN(int, Info_free, (MPI_Info * info))

/* One-sided communication */
COHORT_FN(int, Win_create,
          (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
COHORT_FN(int, Win_allocate,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
COHORT_FN(int, Win_allocate_shared,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
COHORT_FN(int, Win_shared_query,
          (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
COHORT_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
COHORT_FN(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
COHORT_FN(int, Win_detach, (MPI_Win win, const void *base))
COHORT_FN(int, Win_free, (MPI_Win * win))
COHORT_FN(int, Win_fence, (int assert, MPI_Win win))
COHORT_FN(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
COHORT_FN(int, Win_unlock, (int rank, MPI_Win win))
COHORT_FN(int, Win_lock_all, (int assert, MPI_Win win))
COHORT_FN(int, Win_unlock_all, (MPI_Win win))
COHORT_FN(int, Win_flush, (int rank, MPI_Win win))
COHORT_FN(int, Win_flush_all, (MPI_Win win))
COHORT_FN(int, Win_flush_local, (int rank, MPI_Win win))
COHORT_FN(int, Win_flush_local_all, (MPI_Win win))
COHORT_FN(int, Win_sync, (MPI_Win win))
COHORT_FN(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
COHORT_FN(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
COHORT_FN(int, Win_complete, (MPI_Win win))
COHORT_FN(int, Win_wait, (MPI_Win win))
COHORT_FN(int, Win_test, (MPI_Win win, int *flag))
COHORT_FN(int, Win_get_group, (MPI_Win win, MPI_Group *group))
COHORT_FN(int, Win_set_name, (MPI_Win win, const char *win_name))
COHORT_FN(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
COHORT_FN(int, Win_set_info, (MPI_Win win, MPI_Info info))
COHORT_FN(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
COHORT_FN(int, Win_create_keyval,
          (MPI_Win_copy_attr_function * win_copy_attr_fn,
           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state))
COHORT_FN(int, Win_free_keyval, (int *win_keyval))
COHORT_FN(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val))
COHORT_FN(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
COHORT_FN(int, Win_delete_attr, (MPI_Win win, int win_keyval))
COHORT_FN(int, Win_create_errhandler,
          (MPI_Win_errhandler_function * win_errhandler_fn, MPI_Errhandler *errhandler))
COHORT_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
COHORT_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
COHORT_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
COHORT_FN(int, Put,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
COHORT_FN(int, Get,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
COHORT_FN(int, Accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win))
COHORT_FN(int, Get_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win))
COHORT_FN(int, Fetch_and_op,
          (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
           MPI_Aint target_disp, MPI_Op op, MPI_Win win))
COHORT_FN(int, Compare_and_swap,
          (const void *origin_addr, const void *compare_addr, void *result_addr,
           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
COHORT_FN(int, Rput,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request))
COHORT_FN(int, Rget,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request))
COHORT_FN(int, Raccumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request))
COHORT_FN(int, Rget_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request))

/* Files */
COHORT_FN(int, File_open,
          (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
COHORT_FN(int, File_close, (MPI_File * fh))
COHORT_FN(int, File_delete, (const char *filename, MPI_Info info))
COHORT_FN(int, File_set_size, (MPI_File fh, MPI_Offset size))
COHORT_FN(int, File_preallocate, (MPI_File fh, MPI_Offset size))
COHORT_FN(int, File_get_size, (MPI_File fh, MPI_Offset *size))
COHORT_FN(int, File_get_group, (MPI_File fh, MPI_Group *group))
COHORT_FN(int, File_get_amode, (MPI_File fh, int *amode))
COHORT_FN(int, File_set_info, (MPI_File fh, MPI_Info info))
COHORT_FN(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
COHORT_FN(int, File_set_view,
          (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
           const char *datarep, MPI_Info info))
COHORT_FN(int, File_get_view,
          (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
           char *datarep))
COHORT_FN(int, File_read_at,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status))
COHORT_FN(int, File_read_at_all,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status))
COHORT_FN(int, File_write_at,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status))
COHORT_FN(int, File_write_at_all,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status))
COHORT_FN(int, File_iread_at,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request))
COHORT_FN(int, File_iwrite_at,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request))
COHORT_FN(int, File_iread_at_all,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request))
COHORT_FN(int, File_iwrite_at_all,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request))
COHORT_FN(int, File_read,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_read_all,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_write,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_write_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_iread,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_iwrite,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_iread_all,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_iwrite_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
COHORT_FN(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
COHORT_FN(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
COHORT_FN(int, File_read_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_write_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_iread_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_iwrite_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request))
COHORT_FN(int, File_read_ordered,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_write_ordered,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status))
COHORT_FN(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
COHORT_FN(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
COHORT_FN(int, File_read_at_all_begin,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
COHORT_FN(int, File_write_at_all_begin,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
COHORT_FN(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
COHORT_FN(int, File_write_all_begin,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
COHORT_FN(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
COHORT_FN(int, File_write_ordered_begin,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype))
COHORT_FN(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
COHORT_FN(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent))
COHORT_FN(int, File_set_atomicity, (MPI_File fh, int flag))
COHORT_FN(int, File_get_atomicity, (MPI_File fh, int *flag))
COHORT_FN(int, File_sync, (MPI_File fh))
COHORT_FN(int, File_create_errhandler,
          (MPI_File_errhandler_function * file_errhandler_fn, MPI_Errhandler *errhandler))
COHORT_FN(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
COHORT_FN(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
COHORT_FN(int, File_call_errhandler, (MPI_File fh, int errorcode))
COHORT_FN(int, Register_datarep,
          (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
           MPI_Datarep_conversion_function *write_conversion_fn,
           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state))

#undef COHORT_FN

#ifdef __cplusplus
}
#endif

#include "mpix.h"

#endif /* COHORT_MPI_H */
