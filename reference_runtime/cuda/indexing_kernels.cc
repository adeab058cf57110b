// The CUDA indexing family, host side: embedding and embedding_grad, tril, triu and their grads,
// with the CPU kernels' names, signatures, attributes, dtypes and errors (kernels/indexing.cc).
// The ids are read back to the host and checked there (the CPU's error names the bad index); the
// host then sorts the positions by id, keeping increasing position within an id, so that
// embedding_grad adds each weight row's out_grad rows in the CPU's order with no atomics: the
// CPU's bits.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/data_kernels.h"

namespace irm::rt::cuda {
namespace {

// The ids of x as int64, each checked against [0, rows).
StatusOr<std::vector<int64_t>> Ids(const DeviceTensor& x, const DeviceTensor& weight,
                                   std::string_view kernel) {
  if (x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64) {
    return KernelError(
        fmt::format("{}: ids x must be int32 or int64, not {}", kernel, DTypeName(x.dtype())));
  }
  if (weight.rank() != 2) {
    return KernelError(
        fmt::format("{}: weight {} must be 2-D [rows, width]", kernel, weight.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(x, kernel));
  std::vector<int64_t> ids(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = x.dtype() == DType::kInt32 ? host.data<int32_t>()[i] : host.data<int64_t>()[i];
    if (ids[i] < 0 || ids[i] >= weight.shape()[0]) {
      return KernelError(fmt::format("{}: x[{}] = {} is outside [0, {}), the rows of weight {}",
                                     kernel, i, ids[i], weight.shape()[0], weight.Describe()));
    }
  }
  return ids;
}

StatusOr<int64_t> PaddingIdx(const KernelAttrs& attrs, const DeviceTensor& weight,
                             std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(int64_t padding_idx, attrs.GetOr<int64_t>("padding_idx", -1));
  if (padding_idx < -1 || padding_idx >= weight.shape()[0]) {
    return KernelError(fmt::format("{}: padding_idx {} is outside [0, {}) and is not -1 (none)",
                                   kernel, padding_idx, weight.shape()[0]));
  }
  return padding_idx;
}

StatusOr<DeviceTensor> Upload(const std::vector<int64_t>& values, std::string_view kernel) {
  return DeviceTensor::FromHost(
      Tensor::FromVector<int64_t>(values, {static_cast<int64_t>(values.size())}), kernel);
}

// embedding(x, weight; padding_idx) -> out of shape x.shape + [width].
Status RunEmbedding(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& weight = call.input(1);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Ids(x, weight, "embedding"));
  IRM_ASSIGN_OR_RETURN(int64_t padding_idx, PaddingIdx(call.attrs, weight, "embedding"));
  std::vector<int64_t> shape = x.shape();
  shape.push_back(weight.shape()[1]);
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(weight.dtype(), shape, "embedding"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor device_ids, Upload(ids, "embedding"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchEmbedding(static_cast<int>(DTypeSize(weight.dtype())), x.numel(),
                                   weight.shape()[1], static_cast<const int64_t*>(device_ids.raw()),
                                   padding_idx, weight.raw(), out.raw(), Stream()),
                   "embedding"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// embedding_grad(x, weight, out_grad; padding_idx) -> weight_grad.
Status RunEmbeddingGrad(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& weight = call.input(1);
  const DeviceTensor& out_grad = call.input(2);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Ids(x, weight, "embedding_grad"));
  IRM_ASSIGN_OR_RETURN(int64_t padding_idx, PaddingIdx(call.attrs, weight, "embedding_grad"));
  std::vector<int64_t> expected = x.shape();
  expected.push_back(weight.shape()[1]);
  if (out_grad.dtype() != weight.dtype() || out_grad.shape() != expected) {
    return KernelError(
        fmt::format("embedding_grad: out_grad {} should be {}{} (x's shape, then "
                    "the width of weight {})",
                    out_grad.Describe(), DTypeName(weight.dtype()), ShapeToString(expected),
                    weight.Describe()));
  }
  // Positions grouped by id, increasing within an id (a stable counting sort); padding_idx's
  // positions are left out, so its row stays zero.
  const int64_t rows = weight.shape()[0];
  std::vector<int64_t> row_start(static_cast<size_t>(rows) + 1, 0);
  for (int64_t id : ids) {
    if (id != padding_idx) ++row_start[static_cast<size_t>(id) + 1];
  }
  std::partial_sum(row_start.begin(), row_start.end(), row_start.begin());
  std::vector<int64_t> order(static_cast<size_t>(row_start.back()));
  std::vector<int64_t> next(row_start.begin(), row_start.end() - 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == padding_idx) continue;
    order[static_cast<size_t>(next[static_cast<size_t>(ids[i])]++)] = static_cast<int64_t>(i);
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(weight.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor device_start, Upload(row_start, "embedding_grad"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor device_order, Upload(order, "embedding_grad"));
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor weight_grad,
      DeviceTensor::Uninitialized(weight.dtype(), weight.shape(), "embedding_grad"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchEmbeddingGrad(elem, rows, weight.shape()[1],
                                       static_cast<const int64_t*>(device_start.raw()),
                                       static_cast<const int64_t*>(device_order.raw()),
                                       out_grad.raw(), weight_grad.raw(), Stream()),
                   "embedding_grad"));
  call.SetOutput(0, std::move(weight_grad));
  return Status::Ok();
}

template <bool kLower, bool kGrad>
Status RunTriangle(CudaKernelCall& call) {
  constexpr const char* kName =
      kLower ? (kGrad ? "tril_grad" : "tril") : (kGrad ? "triu_grad" : "triu");
  const char* operand = kGrad ? "out_grad" : "x";
  // The forward ops default diagonal to 0 (ops.yaml); the grads always carry it.
  IRM_ASSIGN_OR_RETURN(int64_t diagonal, kGrad ? data::IntScalarAttr(call.attrs, "diagonal")
                                               : call.attrs.GetOr<int64_t>("diagonal", 0));
  const DeviceTensor& x = call.input(0);
  if (x.rank() < 2) {
    return KernelError(
        fmt::format("{}: {} {} needs at least 2 dims", kName, operand, x.Describe()));
  }
  const int64_t rows = x.shape()[static_cast<size_t>(x.rank() - 2)];
  const int64_t cols = x.shape().back();
  diagonal = std::clamp(diagonal, -rows - 1, cols + 1);
  const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), x.shape(), kName));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchTriangle(static_cast<int>(DTypeSize(x.dtype())), matrices, rows, cols,
                                  diagonal, kLower, x.raw(), out.raw(), Stream()),
                   kName));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaIndexingKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "embedding", kCudaEvery, &RunEmbedding, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "embedding_grad", kCudaFloating, &RunEmbeddingGrad, {3, 3, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "tril", kCudaEvery, &RunTriangle<true, false>, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "triu", kCudaEvery, &RunTriangle<false, false>, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "tril_grad", kCudaEvery, &RunTriangle<true, true>, {1, 1, 1}));
  return RegisterForDTypes(registry, "triu_grad", kCudaEvery, &RunTriangle<false, true>, {1, 1, 1});
}

}  // namespace irm::rt::cuda
