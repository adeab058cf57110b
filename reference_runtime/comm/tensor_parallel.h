// The tensor-parallel split and concat of Paddle's c_split and c_concat, as shared kernels over a
// Communicator: each executor binds its own op (attributes, slots) to them, as it binds other ops
// to the shared kernels. Both work on the last dim, which `nranks` parts divide.
#pragma once

#include "common/status.h"
#include "reference_runtime/comm/communicator.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// Part `rank` of `nranks` equal parts of x's last dim. kInvalidArgument when rank is not in
// [0, nranks), nranks is below 1, x is 0-D or its last dim does not divide.
StatusOr<Tensor> SplitLastDim(const Tensor& x, int rank, int nranks);

// Every group rank's x (same shape) gathered and concatenated along the last dim in group-rank
// order.
StatusOr<Tensor> ConcatLastDim(Communicator& comm, const Tensor& x, const CallSite& site);

}  // namespace irm::rt
