// Walk plans for the CUDA kernel files (walk_plans.h).
#include "reference_runtime/cuda/walk_plans.h"

#include <fmt/format.h>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::cuda {
namespace {

Status TooManyDims(std::string_view kernel, const std::vector<int64_t>& shape) {
  return KernelError(fmt::format("gpu {}: shape {} has more than {} dims after merging", kernel,
                                 ShapeToString(shape), kMaxDims));
}

}  // namespace

StatusOr<BinaryWalks> PlanBinaryWalks(const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                                      std::string_view kernel) {
  BinaryWalks walks;
  IRM_ASSIGN_OR_RETURN(walks.shape, BroadcastShapes(x, y));
  const BroadcastWalk<2> plan = PlanBroadcast<2>(walks.shape, {&x, &y});
  if (plan.dims.size() > static_cast<size_t>(kMaxDims)) return TooManyDims(kernel, walks.shape);
  walks.x.rank = walks.y.rank = static_cast<int>(plan.dims.size());
  for (size_t d = 0; d < plan.dims.size(); ++d) {
    walks.x.dims[d] = walks.y.dims[d] = plan.dims[d];
    walks.x.strides[d] = plan.strides[0][d];
    walks.y.strides[d] = plan.strides[1][d];
  }
  return walks;
}

StatusOr<GradPlan> PlanOperandGrad(const std::vector<int64_t>& self,
                                   const std::vector<int64_t>& other,
                                   const std::vector<int64_t>& out, std::string_view kernel) {
  const std::vector<int64_t> out_strides = ContiguousStrides(out);
  const std::vector<int64_t> other_strides = BroadcastStrides(other, out);
  const size_t lead = out.size() - self.size();
  GradPlan plan;
  plan.self_numel = 1;
  for (int64_t d : self) plan.self_numel *= d;
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t self_dim = d < lead ? 1 : self[d - lead];
    const bool reduced = self_dim == 1 && out[d] != 1;
    Walk& walk = reduced ? plan.reduced : plan.kept;
    int64_t* other_out = reduced ? plan.other_reduced_strides : plan.other_kept_strides;
    if (walk.rank == kMaxDims) return TooManyDims(kernel, out);
    walk.dims[walk.rank] = out[d];
    walk.strides[walk.rank] = out_strides[d];
    other_out[walk.rank] = other_strides[d];
    ++walk.rank;
    if (reduced) plan.reduce_count *= out[d];
  }
  return plan;
}

StatusOr<Walk> WalkOf(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                      std::string_view kernel) {
  Walk w;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (w.rank == kMaxDims) return TooManyDims(kernel, dims);
    w.dims[w.rank] = dims[d];
    w.strides[w.rank] = strides[d];
    ++w.rank;
  }
  return w;
}

}  // namespace irm::rt::cuda
