// The CUDA pool2d family, host side: pool2d and pool2d_grad with the CPU kernels' names,
// signatures, attributes, dtypes (float32, float64) and errors (kernels/pool.cc, which says how
// Paddle resolves kernel size, paddings and windows). The device code (conv.cu) runs one thread
// per output element for the forward and one per input element for the grad, which gathers the
// terms the CPU's loop over outputs scatters, in the CPU's order: both give the CPU's bits.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/cuda/conv_launch.h"
#include "reference_runtime/cuda/cuda_kernel.h"

namespace irm::rt::cuda {
namespace {

// Height and width.
using Pair = std::array<int64_t, 2>;

StatusOr<Pair> PairOf(const KernelAttrs& attrs, const char* name, std::vector<int64_t> fallback) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetOr(name, std::move(fallback)));
  if (v.size() != 2) {
    return KernelError(fmt::format("{} has {} values, expected 2 (height, width)", name, v.size()));
  }
  return Pair{v[0], v[1]};
}

std::vector<int64_t> OutShape(const PoolGeometry& p) {
  return p.channel_last ? std::vector<int64_t>{p.n, p.oh, p.ow, p.c}
                        : std::vector<int64_t>{p.n, p.c, p.oh, p.ow};
}

// kernels/pool.cc's plan, on a device tensor's shape.
StatusOr<PoolGeometry> PlanPool(const DeviceTensor& x, const KernelAttrs& attrs) {
  PoolGeometry p;
  const StatusOr<std::string> format_or = attrs.GetOr<std::string>("data_format", "NCHW");
  if (!format_or.ok()) return format_or.status();
  const std::string& format = format_or.value();
  if (format != "NCHW" && format != "NHWC" && format != "AnyLayout") {
    return KernelError(
        fmt::format("data_format '{}' is not one of NCHW, NHWC, AnyLayout (NCHW)", format));
  }
  p.channel_last = format == "NHWC";
  const StatusOr<std::string> type_or = attrs.GetOr<std::string>("pooling_type", "");
  if (!type_or.ok()) return type_or.status();
  const std::string& type = type_or.value();
  if (type != "max" && type != "avg") {
    return KernelError(fmt::format("pooling_type '{}' is not one of max, avg", type));
  }
  p.max = type == "max";
  IRM_ASSIGN_OR_RETURN(p.exclusive, attrs.GetOr<bool>("exclusive", true));
  IRM_ASSIGN_OR_RETURN(p.adaptive, attrs.GetOr<bool>("adaptive", false));
  IRM_ASSIGN_OR_RETURN(const bool global, attrs.GetOr<bool>("global_pooling", false));
  IRM_ASSIGN_OR_RETURN(const bool ceil_mode, attrs.GetOr<bool>("ceil_mode", false));
  if (p.max && p.adaptive) {
    return KernelError(
        "adaptive max pooling is max_pool2d_with_index in Paddle, not pool2d with pooling_type "
        "'max'");
  }
  if (x.rank() != 4) {
    return KernelError(fmt::format("x has shape {}, expected 4 dims ({})", ShapeToString(x.shape()),
                                   p.channel_last ? "NHWC" : "NCHW"));
  }
  const std::vector<int64_t>& in = x.shape();
  p.n = in[0];
  p.c = p.channel_last ? in[3] : in[1];
  p.h = p.channel_last ? in[1] : in[2];
  p.w = p.channel_last ? in[2] : in[3];

  IRM_ASSIGN_OR_RETURN(Pair kernel, PairOf(attrs, "kernel_size", {}));
  IRM_ASSIGN_OR_RETURN(const Pair strides, PairOf(attrs, "strides", {1, 1}));
  IRM_ASSIGN_OR_RETURN(const std::vector<int64_t> paddings,
                       attrs.GetOr<std::vector<int64_t>>("paddings", {0, 0}));
  const StatusOr<std::string> algorithm_or =
      attrs.GetOr<std::string>("padding_algorithm", "EXPLICIT");
  if (!algorithm_or.ok()) return algorithm_or.status();
  const std::string& algorithm = algorithm_or.value();
  std::array<int64_t, 4> pads{};  // top, bottom, left, right
  if (paddings.size() == 2) {
    pads = {paddings[0], paddings[0], paddings[1], paddings[1]};
  } else if (paddings.size() == 4) {
    pads = {paddings[0], paddings[1], paddings[2], paddings[3]};
  } else {
    return KernelError(fmt::format("paddings has {} values, expected 2 or 4", paddings.size()));
  }
  const std::array<int64_t, 2> sizes = {p.h, p.w};
  for (size_t d = 0; d < 2; ++d) {
    if (strides[d] < 1) {
      return KernelError(
          fmt::format("strides [{}, {}] must be at least 1", strides[0], strides[1]));
    }
  }
  if (algorithm == "SAME") {
    for (size_t d = 0; d < 2; ++d) {
      const int64_t out = (sizes[d] + strides[d] - 1) / strides[d];
      const int64_t sum = std::max<int64_t>((out - 1) * strides[d] + kernel[d] - sizes[d], 0);
      pads[2 * d] = sum / 2;
      pads[2 * d + 1] = sum - sum / 2;
    }
  } else if (algorithm == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (algorithm != "EXPLICIT") {
    return KernelError(
        fmt::format("padding_algorithm '{}' is not one of EXPLICIT, SAME, VALID", algorithm));
  }
  if (global || p.adaptive) pads = {0, 0, 0, 0};
  if (global) kernel = sizes;
  for (int64_t pad : pads) {
    if (pad < 0) return KernelError("paddings has a negative value");
  }
  std::array<int64_t, 2> outs{};
  for (size_t d = 0; d < 2; ++d) {
    if (kernel[d] < 1) {
      return KernelError(
          fmt::format("kernel_size [{}, {}] must be at least 1", kernel[0], kernel[1]));
    }
    if (p.adaptive) {
      outs[d] = kernel[d];
    } else {
      const int64_t span = sizes[d] - kernel[d] + pads[2 * d] + pads[2 * d + 1];
      outs[d] = (span + (ceil_mode ? strides[d] - 1 : 0)) / strides[d] + 1;
      if (span < 0) outs[d] = 0;
    }
    if (outs[d] < 1) {
      return KernelError(fmt::format(
          "the output is empty along {}: input size {} padded by ({}, {}) is smaller "
          "than the kernel ({})",
          d == 0 ? "height" : "width", sizes[d], pads[2 * d], pads[2 * d + 1], kernel[d]));
    }
  }
  p.kh = kernel[0];
  p.kw = kernel[1];
  p.stride_h = strides[0];
  p.stride_w = strides[1];
  p.pad_top = pads[0];
  p.pad_left = pads[2];
  p.oh = outs[0];
  p.ow = outs[1];
  return p;
}

template <DType kDType>
StatusOr<PoolGeometry> PlanCall(const CudaKernelCall& call) {
  IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
  IRM_RETURN_IF_ERROR(CheckDType(call.input(0), "x", {kDType}));
  return PlanPool(call.input(0), call.attrs);
}

template <DType kDType>
Status RunPool2d(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const PoolGeometry p, PlanCall<kDType>(call));
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(kDType, OutShape(p), "pool2d"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchPool2d(elem, p, call.input(0).raw(), out.raw(), Stream()), "pool2d"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (x, out, out_grad) -> x_grad.
template <DType kDType>
Status RunPool2dGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const PoolGeometry p, PlanCall<kDType>(call));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 1, "out"));
  IRM_RETURN_IF_ERROR(CheckPresent(call, 2, "out_grad"));
  const std::vector<int64_t> out_shape = OutShape(p);
  for (size_t k = 1; k < 3; ++k) {
    const char* name = k == 1 ? "out" : "out_grad";
    IRM_RETURN_IF_ERROR(CheckDType(call.input(k), name, {kDType}));
    IRM_RETURN_IF_ERROR(CheckShape(call.input(k), name, out_shape, "the shape of pool2d's output"));
  }
  IRM_ASSIGN_OR_RETURN(const Elem elem, ElemOf(kDType));
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(kDType, x.shape(), "pool2d_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchPool2dGrad(elem, p, x.raw(), call.input(1).raw(),
                                                    call.input(2).raw(), x_grad.raw(), Stream()),
                                   "pool2d_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaPoolKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      registry.Register("pool2d", DType::kFloat32, {&RunPool2d<DType::kFloat32>, {1, 1, 1}}));
  IRM_RETURN_IF_ERROR(
      registry.Register("pool2d", DType::kFloat64, {&RunPool2d<DType::kFloat64>, {1, 1, 1}}));
  IRM_RETURN_IF_ERROR(registry.Register("pool2d_grad", DType::kFloat32,
                                        {&RunPool2dGrad<DType::kFloat32>, {3, 3, 1}}));
  return registry.Register("pool2d_grad", DType::kFloat64,
                           {&RunPool2dGrad<DType::kFloat64>, {3, 3, 1}});
}

}  // namespace irm::rt::cuda
