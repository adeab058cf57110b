// matmul_with_flatten's plan (matmul_with_flatten_plan.h).
#include "reference_runtime/kernels/matmul_with_flatten_plan.h"

#include <fmt/format.h>

#include <functional>
#include <numeric>

namespace irm::rt::plan {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  return std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(begin),
                         dims.begin() + static_cast<std::ptrdiff_t>(end), int64_t{1},
                         std::multiplies<int64_t>());
}

// The matrix `t` is seen as, split after `col_dims` dims.
StatusOr<std::vector<int64_t>> MatrixOf(const Operand& t, const char* name, int64_t col_dims) {
  if (t.rank() < 2 || col_dims < 1 || col_dims >= t.rank()) {
    return KernelError(fmt::format("{}_num_col_dims is {}, expected 1 to {} for {} of shape {}",
                                   name, col_dims, t.rank() - 1, name, ShapeToString(t.shape())));
  }
  const auto split = static_cast<size_t>(col_dims);
  return std::vector<int64_t>{Product(t.shape(), 0, split),
                              Product(t.shape(), split, t.shape().size())};
}

}  // namespace

StatusOr<MatmulWithFlattenPlan> PlanMatmulWithFlatten(const Operand& x, const Operand& y,
                                                      const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(const int64_t x_cols, attrs.GetOr<int64_t>("x_num_col_dims", 1));
  IRM_ASSIGN_OR_RETURN(const int64_t y_cols, attrs.GetOr<int64_t>("y_num_col_dims", 1));
  MatmulWithFlattenPlan plan;
  IRM_ASSIGN_OR_RETURN(plan.x_matrix, MatrixOf(x, "x", x_cols));
  IRM_ASSIGN_OR_RETURN(plan.y_matrix, MatrixOf(y, "y", y_cols));
  plan.out_dims.assign(x.shape().begin(), x.shape().begin() + x_cols);
  plan.out_dims.insert(plan.out_dims.end(), y.shape().begin() + y_cols, y.shape().end());
  return plan;
}

Status CheckMatmulWithFlattenOutGrad(const Operand& out_grad,
                                     const std::vector<int64_t>& out_dims) {
  if (out_grad.shape() == out_dims) return Status::Ok();
  return KernelError(fmt::format("out_grad has shape {}, expected {} (the shape of out)",
                                 ShapeToString(out_grad.shape()), ShapeToString(out_dims)));
}

}  // namespace irm::rt::plan
