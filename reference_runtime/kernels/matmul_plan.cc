// matmul's shape plan (matmul_plan.h).
#include "reference_runtime/kernels/matmul_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "reference_runtime/kernels/broadcast.h"

namespace irm::rt::plan {
namespace {

std::string Described(const char* name, const std::vector<int64_t>& shape, bool transposed) {
  return fmt::format("{} {}{}", name, ShapeToString(shape), transposed ? " (transposed)" : "");
}

}  // namespace

int64_t MatmulPlan::NumelOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

StatusOr<MatmulPlan> PlanMatmul(const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                bool transpose_x, bool transpose_y) {
  if (x.empty()) return KernelError("x is 0-D; matmul needs at least 1 dim");
  if (y.empty()) return KernelError("y is 0-D; matmul needs at least 1 dim");
  MatmulPlan p;
  const bool x_vector = x.size() == 1;
  const bool y_vector = y.size() == 1;
  p.trans_x = transpose_x && !x_vector;
  p.trans_y = transpose_y && !y_vector;
  // The matrices as stored: rows and columns.
  const int64_t x_rows = x_vector ? 1 : x[x.size() - 2], x_cols = x.back();
  const int64_t y_rows = y_vector ? y[0] : y[y.size() - 2], y_cols = y_vector ? 1 : y.back();
  p.m = p.trans_x ? x_cols : x_rows;
  const int64_t kx = p.trans_x ? x_rows : x_cols;
  const int64_t ky = p.trans_y ? y_cols : y_rows;
  p.n = p.trans_y ? y_rows : y_cols;
  if (kx != ky) {
    return KernelError(fmt::format("{} and {} do not multiply: inner dims {} and {} differ",
                                   Described("x", x, p.trans_x), Described("y", y, p.trans_y), kx,
                                   ky));
  }
  p.k = kx;
  p.x_batch.assign(x.begin(), x.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(x.size())));
  p.y_batch.assign(y.begin(), y.end() - std::min<ptrdiff_t>(2, static_cast<ptrdiff_t>(y.size())));
  StatusOr<std::vector<int64_t>> batch = BroadcastShapes(p.x_batch, p.y_batch);
  if (!batch.ok()) {
    return KernelError(fmt::format("x {} and y {}: batch dims {} and {} do not broadcast",
                                   ShapeToString(x), ShapeToString(y), ShapeToString(p.x_batch),
                                   ShapeToString(p.y_batch)));
  }
  p.batch = std::move(batch).value();
  p.out = p.batch;
  if (!x_vector) p.out.push_back(p.m);
  if (!y_vector) p.out.push_back(p.n);
  return p;
}

StatusOr<MatmulPlan> PlanMatmul(const Operand& x, const Operand& y, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(bool transpose_x, attrs.GetOr<bool>("transpose_x", false));
  IRM_ASSIGN_OR_RETURN(bool transpose_y, attrs.GetOr<bool>("transpose_y", false));
  return PlanMatmul(x.shape(), y.shape(), transpose_x, transpose_y);
}

Status CheckMatmulGradShape(const MatmulPlan& plan, const Operand& x, const Operand& y,
                            const Operand& out_grad) {
  if (out_grad.shape() == plan.out) return Status::Ok();
  return KernelError(fmt::format("out_grad {} is not matmul's out shape {} for x {} and y {}",
                                 ShapeToString(out_grad.shape()), ShapeToString(plan.out),
                                 ShapeToString(x.shape()), ShapeToString(y.shape())));
}

}  // namespace irm::rt::plan
