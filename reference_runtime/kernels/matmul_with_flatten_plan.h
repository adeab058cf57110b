// The device-independent half of matmul_with_flatten and its grad (the legacy `mul`): read
// x_num_col_dims and y_num_col_dims, check them against x and y, and give the matrices x and y
// are seen as and the shape of out. The CPU kernels (matmul_with_flatten.cc, which cites Paddle)
// and the CUDA kernels (cuda/matmul_with_flatten_kernels.cc) both plan with these and only
// multiply their own way, so that the two check the same things in the same order with the same
// words.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

struct MatmulWithFlattenPlan {
  std::vector<int64_t> x_matrix;  // [rows, cols] of x split after x_num_col_dims dims
  std::vector<int64_t> y_matrix;  // likewise for y
  std::vector<int64_t> out_dims;  // x.dims[:x_num_col_dims] + y.dims[y_num_col_dims:]
};
StatusOr<MatmulWithFlattenPlan> PlanMatmulWithFlatten(const Operand& x, const Operand& y,
                                                      const KernelAttrs& attrs);

// x and y (inputs 0 and 1 of `call`) as views of the plan's matrices, and out's shape.
template <typename TensorT>
struct FlattenedOperands {
  TensorT x, y;
  std::vector<int64_t> out_dims;
};
template <typename Call>
auto FlattenOperands(const Call& call)
    -> StatusOr<FlattenedOperands<std::decay_t<decltype(call.input(0))>>> {
  IRM_ASSIGN_OR_RETURN(MatmulWithFlattenPlan plan,
                       PlanMatmulWithFlatten(call.input(0), call.input(1), call.attrs));
  FlattenedOperands<std::decay_t<decltype(call.input(0))>> f;
  IRM_ASSIGN_OR_RETURN(f.x, call.input(0).Reshaped(plan.x_matrix));
  IRM_ASSIGN_OR_RETURN(f.y, call.input(1).Reshaped(plan.y_matrix));
  f.out_dims = std::move(plan.out_dims);
  return f;
}

// The grad's out_grad has out's shape (the plan's out_dims).
Status CheckMatmulWithFlattenOutGrad(const Operand& out_grad, const std::vector<int64_t>& out_dims);

}  // namespace irm::rt::plan
