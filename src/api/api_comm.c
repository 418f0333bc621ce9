/* Communicator calls: queries (rank, size, names, IDs), construction and freeing, comparison,
 * groups of a communicator, attributes and intercommunicators. Construction itself lives in
 * src/comm; these entry points check every argument first. */
#include "api.h"
#include "../boot/place.h"
#include "../comm/idpool.h"

#include <stdio.h>
#include <string.h>

static int intra_only(co_comm *c, const char *fn) {
    if (c->is_inter)
        return co_error(c, fn, MPI_ERR_COMM, "intercommunicators are not supported by this call");
    return MPI_SUCCESS;
}

static int inter_only(co_comm *c, const char *fn) {
    if (!c->is_inter) return co_error(c, fn, MPI_ERR_COMM, "not an intercommunicator");
    return MPI_SUCCESS;
}

/* The start of a constructor: the parent communicator (an intracommunicator unless
 * `any_kind`) and somewhere to put the new one. NULL with *rc set on bad arguments. */
static co_comm *parent_arg(MPI_Comm comm, const char *fn, MPI_Comm *newcomm, int any_kind,
                           int *rc) {
    co_comm *c = co_api_comm(comm, fn, rc);
    if (!c) return NULL;
    if (!newcomm)
        *rc = co_error(c, fn, MPI_ERR_ARG, "newcomm is NULL");
    else if (!any_kind)
        *rc = intra_only(c, fn);
    return *rc ? NULL : c;
}

CO_WEAK(MPI_Comm_rank, PMPI_Comm_rank);
int PMPI_Comm_rank(MPI_Comm comm, int *rank) {
    static const char fn[] = "MPI_Comm_rank";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!rank) return co_error(c, fn, MPI_ERR_ARG, "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_size, PMPI_Comm_size);
int PMPI_Comm_size(MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Comm_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!size) return co_error(c, fn, MPI_ERR_ARG, "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_test_inter, PMPI_Comm_test_inter);
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag) {
    static const char fn[] = "MPI_Comm_test_inter";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!flag) return co_error(c, fn, MPI_ERR_ARG, "flag is NULL");
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_remote_size, PMPI_Comm_remote_size);
int PMPI_Comm_remote_size(MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Comm_remote_size";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = inter_only(c, fn))) return rc;
    if (!size) return co_error(c, fn, MPI_ERR_ARG, "size is NULL");
    *size = c->remote->size;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_set_name, PMPI_Comm_set_name);
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name) {
    static const char fn[] = "MPI_Comm_set_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!comm_name) return co_error(c, fn, MPI_ERR_ARG, "name is NULL");
    strncpy(c->name, comm_name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_get_name, PMPI_Comm_get_name);
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen) {
    static const char fn[] = "MPI_Comm_get_name";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!comm_name || !resultlen) return co_error(c, fn, MPI_ERR_ARG, "name or resultlen is NULL");
    strcpy(comm_name, c->name);
    *resultlen = (int)strlen(c->name);
    return MPI_SUCCESS;
}

/* ---- Construction ---------------------------------------------------------------------------- */

/* Hints: Cohort understands none for communicators yet. The info argument is checked (and
 * MPI_INFO_NULL is what MPI_Comm_dup passes), and MPI_Comm_get_info returns the hints in use,
 * that is an empty info object (MPI 3.1 section 6.4.4). */
static int dup_common(const char *fn, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 1, &rc), *n;
    if (!c) return rc;
    if ((rc = co_api_info_arg(c, fn, info))) return rc;
    rc = co_comm_dup(c, fn, &n);
    *newcomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Comm_dup, PMPI_Comm_dup);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    return dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, newcomm);
}

CO_WEAK(MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    return dup_common("MPI_Comm_dup_with_info", comm, info, newcomm);
}

/* MPI_Comm_idup (MPI 3.0) and MPI_Comm_idup_with_info (MPI 4.0): the request is a collective
 * one (it cannot be freed or cancelled while active), and *newcomm is set when it completes. */
static int idup_common(const char *fn, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                       MPI_Request *request) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 1, &rc);
    if (!c) return rc;
    if (!request) return co_error(c, fn, MPI_ERR_ARG, "request is NULL");
    if ((rc = co_api_info_arg(c, fn, info))) return rc;
    co_req *r = co_req_new(CO_REQ_COLL); /* (without one, the call still takes its round) */
    if (r) {
        r->active = 1;
        co_req_set_comm(r, c);
    }
    *newcomm = MPI_COMM_NULL;
    int h = r ? r->handle : MPI_REQUEST_NULL;
    if ((rc = co_comm_idup(c, fn, newcomm, r))) {
        if (r) co_req_free(r);
        return rc;
    }
    *request = h;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_idup, PMPI_Comm_idup);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return idup_common("MPI_Comm_idup", comm, MPI_INFO_NULL, newcomm, request);
}

CO_WEAK(MPI_Comm_idup_with_info, PMPI_Comm_idup_with_info);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request) {
    return idup_common("MPI_Comm_idup_with_info", comm, info, newcomm, request);
}

CO_WEAK(MPI_Comm_set_info, PMPI_Comm_set_info);
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    static const char fn[] = "MPI_Comm_set_info";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    return co_api_info_arg(c, fn, info);
}

CO_WEAK(MPI_Comm_get_info, PMPI_Comm_get_info);
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    static const char fn[] = "MPI_Comm_get_info";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    CO_API_OUT(c, fn, info_used);
    co_info *in = co_info_create();
    if (!in) return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory or info handles");
    *info_used = in->handle;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_split, PMPI_Comm_split);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_split";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 1, &rc), *n;
    if (!c) return rc;
    rc = co_comm_split(c, color, key, 0, NULL, fn, &n);
    *newcomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Comm_split_type, PMPI_Comm_split_type);
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_split_type";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 0, &rc), *n;
    if (!c) return rc;
    if ((rc = co_api_info_arg(c, fn, info))) return rc; /* checked; no hints are understood */
    if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* MPI 4: by hardware level, the one the info's mpi_hw_resource_type names (none:
         * MPI_COMM_NULL), or the largest that divides comm, which goes back in the info */
        co_info *in = info == MPI_INFO_NULL ? NULL : co_info_get(info);
        const char *want = in ? co_info_lookup(in, "mpi_hw_resource_type") : NULL;
        int unguided = split_type == MPI_COMM_TYPE_HW_UNGUIDED, level;
        rc = co_comm_split_hw(c, unguided, want ? co_place_resource_level(want) : -1, key, fn, &n,
                              &level);
        *newcomm = co_api_comm_out(n);
        if (!rc && n && unguided && in && info != MPI_INFO_ENV &&
            co_info_set(in, "mpi_hw_resource_type", co_place_resource_name(level)))
            return co_error(c, fn, MPI_ERR_NO_MEM, "out of memory setting the info");
        return rc;
    }
    /* Every rank of a job shares memory with every other (one node), so SHARED is one group. */
    char reason[80] = "";
    int err = 0;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
        err = MPI_ERR_ARG;
        snprintf(reason, sizeof(reason), "invalid split_type %d", split_type);
    }
    rc = co_comm_split(c, split_type == MPI_COMM_TYPE_SHARED ? 0 : MPI_UNDEFINED, key, err, reason,
                       fn, &n);
    *newcomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Comm_create, PMPI_Comm_create);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_create";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 1, &rc), *n;
    if (!c) return rc;
    co_group *g = co_api_group(c, fn, group, &rc);
    if (!g) return rc;
    rc = co_comm_create_from(c, g, fn, &n);
    *newcomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Comm_create_group, PMPI_Comm_create_group);
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_create_group";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(comm, fn, newcomm, 0, &rc), *n;
    if (!c) return rc;
    if ((rc = co_api_tag(c, fn, tag, 0))) return rc;
    co_group *g = co_api_group(c, fn, group, &rc);
    if (!g) return rc;
    rc = co_comm_create_group(c, g, tag, fn, &n);
    *newcomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Comm_free, PMPI_Comm_free);
int PMPI_Comm_free(MPI_Comm *comm) {
    static const char fn[] = "MPI_Comm_free";
    CO_ENTER(fn);
    if (!comm) return co_error(NULL, fn, MPI_ERR_ARG, "comm is NULL");
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(*comm, fn, &rc);
    if (!c) return rc;
    if (c == co_st.world || c == co_st.self)
        return co_error(c, fn, MPI_ERR_COMM, "%s cannot be freed", c->name);
    rc = co_comm_free(c, fn);
    if (!rc) *comm = MPI_COMM_NULL;
    return rc;
}

CO_WEAK(MPI_Comm_compare, PMPI_Comm_compare);
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
    static const char fn[] = "MPI_Comm_compare";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *a = co_api_comm(comm1, fn, &rc);
    if (!a) return rc;
    co_comm *b = co_api_comm(comm2, fn, &rc);
    if (!b) return rc;
    if (!result) return co_error(a, fn, MPI_ERR_ARG, "result is NULL");
    if (a == b) {
        *result = MPI_IDENT;
    } else if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
    } else {
        int l = co_group_compare(a->local, b->local);
        int r = a->is_inter ? co_group_compare(a->remote, b->remote) : MPI_IDENT;
        if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
            *result = MPI_UNEQUAL;
        else if (l == MPI_IDENT && r == MPI_IDENT)
            *result = MPI_CONGRUENT;
        else
            *result = MPI_SIMILAR;
    }
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_group, PMPI_Comm_group);
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    static const char fn[] = "MPI_Comm_group";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!group) return co_error(c, fn, MPI_ERR_ARG, "group is NULL");
    *group = co_group_handle_out(c->local);
    if (*group == MPI_GROUP_NULL) return co_error(c, fn, MPI_ERR_NO_MEM, "out of group handles");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_remote_group, PMPI_Comm_remote_group);
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
    static const char fn[] = "MPI_Comm_remote_group";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = inter_only(c, fn))) return rc;
    if (!group) return co_error(c, fn, MPI_ERR_ARG, "group is NULL");
    *group = co_group_handle_out(c->remote);
    if (*group == MPI_GROUP_NULL) return co_error(c, fn, MPI_ERR_NO_MEM, "out of group handles");
    return MPI_SUCCESS;
}

/* ---- Intercommunicators -----------------------------------------------------------------------
 */

CO_WEAK(MPI_Intercomm_create, PMPI_Intercomm_create);
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm) {
    static const char fn[] = "MPI_Intercomm_create";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *l = co_api_comm(local_comm, fn, &rc), *peer = NULL, *n;
    if (!l) return rc;
    if (!newintercomm) return co_error(l, fn, MPI_ERR_ARG, "newcomm is NULL");
    if (l->is_inter) return co_error(l, fn, MPI_ERR_COMM, "local_comm is an intercommunicator");
    if (local_leader < 0 || local_leader >= l->size)
        return co_error(l, fn, MPI_ERR_RANK, "invalid local_leader %d (local_comm size %d)",
                        local_leader, l->size);
    if ((rc = co_api_tag(l, fn, tag, 0))) return rc;
    /* peer_comm and remote_leader matter only at the leader, which passes on its verdict */
    int refused = MPI_SUCCESS;
    char why[96] = "";
    if (l->rank == local_leader) {
        if (!(peer = co_comm_get(peer_comm))) {
            refused = MPI_ERR_COMM;
            snprintf(why, sizeof(why), "%s",
                     peer_comm == MPI_COMM_NULL ? "peer_comm is MPI_COMM_NULL"
                                                : "invalid peer_comm (freed or never created)");
        } else if (remote_leader < 0 || remote_leader >= peer->npeers) {
            refused = MPI_ERR_RANK;
            snprintf(why, sizeof(why), "invalid remote_leader %d (peer_comm size %d)",
                     remote_leader, peer->npeers);
        } else if (peer->peers[remote_leader] == co_st.world_rank) {
            refused = MPI_ERR_RANK;
            snprintf(why, sizeof(why), "remote_leader %d is the local leader itself",
                     remote_leader);
        }
    }
    rc = co_intercomm_create(l, local_leader, peer, remote_leader, tag, refused, why, fn, &n);
    *newintercomm = co_api_comm_out(n);
    return rc;
}

CO_WEAK(MPI_Intercomm_merge, PMPI_Intercomm_merge);
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    static const char fn[] = "MPI_Intercomm_merge";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = parent_arg(intercomm, fn, newintracomm, 1, &rc), *n;
    if (!c) return rc;
    if ((rc = inter_only(c, fn))) return rc;
    rc = co_intercomm_merge(c, high, fn, &n);
    *newintracomm = co_api_comm_out(n);
    return rc;
}

/* ---- Attributes -------------------------------------------------------------------------------
 */

static int predefined_keyval(int keyval) {
    return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* The predefined attributes; values are addresses of ints, as the standard requires. */
static int comm_get_attr(const char *fn, MPI_Comm comm, int comm_keyval, void *attribute_val,
                         int *flag) {
    static int tag_ub = CO_TAG_UB, wtime_global = 0, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE;
    static int universe, appnum, lastcode = MPI_ERR_LASTCODE;
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!attribute_val || !flag)
        return co_error(c, fn, MPI_ERR_ARG, "attribute_val or flag is NULL");
    universe = co_st.world_size;
    appnum = co_st.appnum;
    lastcode = co_error_last_used(); /* grows with MPI_Add_error_class and _code */
    int *v = NULL;
    switch (comm_keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_UNIVERSE_SIZE: v = &universe; break;
    case MPI_APPNUM: v = &appnum; break;
    case MPI_LASTUSEDCODE: v = &lastcode; break;
    default: break;
    }
    if (v) {
        *(int **)attribute_val = v;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!co_keyval_valid(comm_keyval))
        return co_error(c, fn, MPI_ERR_KEYVAL, "invalid attribute key %d", comm_keyval);
    void *val = NULL;
    co_attr_get(c, comm_keyval, &val, flag);
    if (*flag) *(void **)attribute_val = val;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_get_attr, PMPI_Comm_get_attr);
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag) {
    return comm_get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}

static int comm_set_attr(const char *fn, MPI_Comm comm, int comm_keyval, void *attribute_val) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (predefined_keyval(comm_keyval))
        return co_error(c, fn, MPI_ERR_KEYVAL, "attribute key %d is predefined and read-only",
                        comm_keyval);
    if (!co_keyval_valid(comm_keyval))
        return co_error(c, fn, MPI_ERR_KEYVAL, "invalid attribute key %d", comm_keyval);
    rc = co_attr_set(c, comm_keyval, attribute_val);
    if (rc) return co_error(c, fn, rc, "the delete callback of the old value failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_set_attr, PMPI_Comm_set_attr);
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val) {
    return comm_set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

static int comm_delete_attr(const char *fn, MPI_Comm comm, int comm_keyval) {
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (predefined_keyval(comm_keyval))
        return co_error(c, fn, MPI_ERR_KEYVAL, "attribute key %d is predefined and read-only",
                        comm_keyval);
    if (!co_keyval_valid(comm_keyval))
        return co_error(c, fn, MPI_ERR_KEYVAL, "invalid attribute key %d", comm_keyval);
    rc = co_attr_delete(c, comm_keyval);
    if (rc == MPI_ERR_KEYVAL) return MPI_SUCCESS; /* nothing was set */
    if (rc) return co_error(c, fn, rc, "the attribute's delete callback failed");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_delete_attr, PMPI_Comm_delete_attr);
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
    return comm_delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}

static int comm_create_keyval(const char *fn, MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                              MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                              void *extra_state) {
    CO_ENTER(fn);
    if (!comm_keyval) return co_error(NULL, fn, MPI_ERR_ARG, "comm_keyval is NULL");
    int rc = co_keyval_create(comm_copy_attr_fn, comm_delete_attr_fn, extra_state, CO_KV_COMM,
                              comm_keyval);
    if (rc) return co_error(NULL, fn, rc, "out of memory");
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_create_keyval, PMPI_Comm_create_keyval);
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state) {
    return comm_create_keyval("MPI_Comm_create_keyval", comm_copy_attr_fn, comm_delete_attr_fn,
                              comm_keyval, extra_state);
}

static int comm_free_keyval(const char *fn, int *comm_keyval) {
    CO_ENTER(fn);
    if (!comm_keyval) return co_error(NULL, fn, MPI_ERR_ARG, "comm_keyval is NULL");
    if (predefined_keyval(*comm_keyval))
        return co_error(NULL, fn, MPI_ERR_KEYVAL, "attribute key %d is predefined", *comm_keyval);
    if (co_keyval_free(*comm_keyval, CO_KV_COMM))
        return co_error(NULL, fn, MPI_ERR_KEYVAL, "invalid attribute key %d", *comm_keyval);
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

CO_WEAK(MPI_Comm_free_keyval, PMPI_Comm_free_keyval);
int PMPI_Comm_free_keyval(int *comm_keyval) {
    return comm_free_keyval("MPI_Comm_free_keyval", comm_keyval);
}

/* MPI-1 forms, deprecated but still in MPI 3.1: the same calls under their old names. */
CO_WEAK(MPI_Attr_get, PMPI_Attr_get);
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
    return comm_get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}

CO_WEAK(MPI_Attr_put, PMPI_Attr_put);
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val) {
    return comm_set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}

CO_WEAK(MPI_Attr_delete, PMPI_Attr_delete);
int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
    return comm_delete_attr("MPI_Attr_delete", comm, keyval);
}

CO_WEAK(MPI_Keyval_create, PMPI_Keyval_create);
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state) {
    return comm_create_keyval("MPI_Keyval_create", copy_fn, delete_fn, keyval, extra_state);
}

CO_WEAK(MPI_Keyval_free, PMPI_Keyval_free);
int PMPI_Keyval_free(int *keyval) {
    return comm_free_keyval("MPI_Keyval_free", keyval);
}

/* ---- Extensions --------------------------------------------------------------------------------
 */

CO_WEAK(MPIX_Comm_get_id, PMPIX_Comm_get_id);
int PMPIX_Comm_get_id(MPI_Comm comm, uint64_t *id) {
    static const char fn[] = "MPIX_Comm_get_id";
    CO_ENTER(fn);
    int rc = MPI_SUCCESS;
    co_comm *c = co_api_comm(comm, fn, &rc);
    if (!c) return rc;
    if (!id) return co_error(c, fn, MPI_ERR_ARG, "id is NULL");
    *id = c->id;
    return MPI_SUCCESS;
}

CO_WEAK(MPIX_Comm_id_stats, PMPIX_Comm_id_stats);
int PMPIX_Comm_id_stats(uint64_t values[MPIX_ID_STATS]) {
    static const char fn[] = "MPIX_Comm_id_stats";
    CO_ENTER(fn);
    if (!values) return co_error(NULL, fn, MPI_ERR_ARG, "values is NULL");
    co_idp_stats s;
    co_idp_get_stats(co_st.cm->idp, &s);
    uint64_t v[MPIX_ID_STATS] = {co_st.comms.live, s.pools,     s.leases,   s.free_ids,
                                 s.lent_ids,       s.root_free, s.requests, s.reclaims};
    memcpy(values, v, sizeof(v));
    return MPI_SUCCESS;
}
