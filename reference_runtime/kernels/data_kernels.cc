// Helpers shared by the data kernels (data_kernels.h).
#include "reference_runtime/kernels/data_kernels.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::data {

Status RegisterForEveryDType(KernelRegistry& registry, const std::string& name, KernelFn fn,
                             KernelSignature signature) {
  for (DType dtype : kEveryDType) {
    IRM_RETURN_IF_ERROR(registry.Register(name, dtype, Device::kCpu, {fn, signature}));
  }
  return Status::Ok();
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// plan::NormalizeAxis's check and words: one definition for the data kernels and the plans.
StatusOr<int> NormalizeAxis(int64_t axis, const Tensor& t, std::string_view kernel,
                            std::string_view what, std::string_view operand) {
  return plan::NormalizeAxis(axis, t, kernel, what, operand);
}

StatusOr<Tensor> MakeOutput(std::string_view kernel, DType dtype, std::vector<int64_t> shape) {
  StatusOr<Tensor> t = Tensor::Zeros(dtype, std::move(shape));
  // The code is kept: a tensor too large for the machine is a runtime failure, not bad input.
  if (!t.ok()) {
    return Status(t.status().code(), Location{},
                  fmt::format("{}: {}", kernel, t.status().message()));
  }
  return t;
}

void CopyBox(const std::byte* src, const std::vector<int64_t>& src_shape,
             const std::vector<int64_t>& src_start, std::byte* dst,
             const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& box, size_t item_size) {
  const size_t rank = box.size();
  if (Numel(box) == 0) return;
  if (rank == 0) {
    std::memcpy(dst, src, item_size);
    return;
  }
  // Element strides of both tensors.
  std::vector<int64_t> src_stride(rank, 1), dst_stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) {
    src_stride[k - 1] = src_stride[k] * src_shape[k];
    dst_stride[k - 1] = dst_stride[k] * dst_shape[k];
  }
  const size_t row_bytes = static_cast<size_t>(box[rank - 1]) * item_size;
  // An odometer over the box's outer dims (all but the last), in C order.
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (size_t k = 0; k < rank; ++k) {
      s += (src_start[k] + index[k]) * src_stride[k];
      d += (dst_start[k] + index[k]) * dst_stride[k];
    }
    std::memcpy(dst + static_cast<size_t>(d) * item_size, src + static_cast<size_t>(s) * item_size,
                row_bytes);
    size_t k = rank - 1;
    while (k > 0) {
      --k;
      if (++index[k] < box[k]) break;
      index[k] = 0;
      if (k == 0) return;
    }
    if (rank == 1) return;
  }
}

StatusOr<int64_t> IntScalarAttr(const KernelAttrs& attrs, std::string_view name) {
  auto it = attrs.values().find(name);
  if (it != attrs.values().end()) {
    if (const double* d = std::get_if<double>(&it->second)) {
      const double limit = std::ldexp(1.0, 63);
      if (std::trunc(*d) != *d || *d >= limit || *d < -limit) {
        return KernelError(fmt::format("attribute '{}' is {}, not an int64", name, *d));
      }
      return static_cast<int64_t>(*d);
    }
  }
  return attrs.Get<int64_t>(name);
}

StatusOr<Number> NumberAttr(const KernelAttrs& attrs, std::string_view name) {
  auto it = attrs.values().find(name);
  if (it != attrs.values().end()) {
    if (const double* d = std::get_if<double>(&it->second)) return Number(*d);
    if (const bool* b = std::get_if<bool>(&it->second)) return Number(int64_t{*b ? 1 : 0});
  }
  IRM_ASSIGN_OR_RETURN(int64_t i, attrs.Get<int64_t>(name));
  return Number(i);
}

StatusOr<DType> RuntimeDTypeAttr(const KernelAttrs& attrs, std::string_view name,
                                 std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(DType dtype, attrs.Get<DType>(name));
  if (!IsRuntimeDType(dtype)) {
    return KernelError(fmt::format("{}: {} {} is not a dtype the runtime computes with", kernel,
                                   name, DTypeName(dtype)));
  }
  return dtype;
}

}  // namespace irm::rt::data
