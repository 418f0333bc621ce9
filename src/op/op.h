/* Reduction operators: the object behind MPI_Op and the kernels that combine buffers. */
#ifndef CO_OP_H
#define CO_OP_H

#include "../core/cohort.h"
#include "../dtype/dtype.h"

struct co_op {
    int handle;
    int refcount;
    int predefined; /* 1..14: the MPI_Op slot of a predefined operator; 0: user-defined */
    int commute;
    MPI_User_function *fn;
};

co_op *co_op_get(MPI_Op h); /* NULL if invalid */

/* MPI_SUCCESS if `op` is defined on `dt` (every element of dt is of one basic type the op
 * accepts; user ops accept anything), else MPI_ERR_OP. */
int co_op_check(const co_op *op, const co_dtype *dt);

/* inout[i] = in[i] op inout[i] for `count` elements of `dt`, both buffers laid out as dt
 * describes (for collectives they are usually contiguous copies). `in` holds the operand that
 * comes first in rank order, which matters for non-commutative user operators. */
void co_op_apply(const co_op *op, co_dtype *dt, const void *in, void *inout, size_t count);

void co_op_retain(co_op *op);
void co_op_release(co_op *op);

#endif /* CO_OP_H */
