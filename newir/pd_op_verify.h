// Verifier hooks (OpVerifyFn) of pd_op ops whose types are related in ways the op table cannot
// say: control flow (what pd_op.if and pd_op.while yield against what they return), the inner
// dims of pd_op.matmul and the broadcasting of the elementwise binary ops. Each check runs only
// where it is cheap and certain: dynamic dims (-1) and types the check does not understand pass.
#pragma once

#include "common/status.h"
#include "newir/operation.h"
#include "newir/types.h"

namespace irm::newir {

// cond is a bool tensor; every block of both regions that ends with cf.yield yields one value per
// result, each compatible with the result's type.
Status VerifyIfOp(const Operation& op);
// cond is a bool tensor; one result and one body argument per loop value (the operands after
// cond), each compatible with it; the body's cf.yield passes the next cond (a bool tensor) and
// one value per loop value.
Status VerifyWhileOp(const Operation& op);
// With static inner dims, x's columns (rows when transpose_x) equal y's rows (columns when
// transpose_y); a 1-D operand is a vector.
Status VerifyMatmulOp(const Operation& op);
// x and y broadcast (numpy rules, aligned at the last dim; 1 and -1 broadcast with anything).
Status VerifyElementwiseBinaryOp(const Operation& op);

// Whether a value of type `a` may stand where `b` is declared: equal, or the same kind of tensor
// with the same dtype and rank whose dims agree wherever both are static (control flow merges
// branch shapes into dynamic dims); vectors element by element.
bool TypesCompatible(const Type& a, const Type& b);

}  // namespace irm::newir
