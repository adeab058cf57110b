// The CUDA random family, host side: uniform, gaussian, dropout and dropout_grad with the CPU
// kernels' names, signatures, attributes, dtypes and errors (kernels/random.cc). The device draws
// from the same Philox-4x32-10 stream as the CPU (philox.h, philox.cuh): key = the op's seed, or
// the program's when it is 0; counter = (element block, op identity); an initialiser whose output
// is a shard draws each element at its index in the serial tensor. uniform, dropout and
// dropout_grad give the CPU's bits; gaussian goes through the device's float64 log, cos and sin.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

uint64_t StreamSeed(int64_t op_seed, const KernelContext& context) {
  return op_seed != 0 ? static_cast<uint64_t>(op_seed) : context.program_seed;
}

// The serial elements the streams tell apart (kernels/random.cc).
constexpr int64_t kMaxSerialElements = int64_t{1} << 60;

// The stream of an initialiser's output of `shape`: the serial index walk when the output is a
// shard, checked as the CPU kernel checks it (same messages).
StatusOr<RandomStream> InitialiserStream(const char* kernel, const std::vector<int64_t>& shape,
                                         uint64_t seed, const KernelContext& context) {
  RandomStream s;
  s.seed = seed;
  s.identity = context.op_identity;
  const OutputShard* shard = context.shard;
  if (shard == nullptr) return s;
  auto error = [&](const std::string& why) {
    return KernelError(
        fmt::format("{}: output '{}' {} is a shard of the serial tensor {} at offsets {}, but {}",
                    kernel, context.shard_var, ShapeToString(shape),
                    ShapeToString(shard->global_shape), ShapeToString(shard->offsets), why));
  };
  const size_t rank = shape.size();
  if (shard->global_shape.size() != rank || shard->offsets.size() != rank) {
    return error(fmt::format("it has {} dims, the serial tensor {} and the offsets {}", rank,
                             shard->global_shape.size(), shard->offsets.size()));
  }
  int64_t serial_numel = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t global = shard->global_shape[d];
    const int64_t offset = shard->offsets[d];
    if (global < 1) return error(fmt::format("serial dim {} is {}, not positive", d, global));
    if (__builtin_mul_overflow(serial_numel, global, &serial_numel) ||
        serial_numel > kMaxSerialElements) {
      return error(
          "the serial tensor has more than 2^60 elements, more than the random streams tell "
          "apart");
    }
    if (offset < 0 || offset >= global) {
      return error(fmt::format("offset {} of dim {} is outside [0, {})", offset, d, global));
    }
    if (shape[d] > global - offset) {
      return error(fmt::format("dim {} reaches {} + {} = {}, past the serial dim {}", d, offset,
                               shape[d], offset + shape[d], global));
    }
  }
  if (rank > static_cast<size_t>(kMaxDims)) {
    return error(fmt::format("the gpu walks at most {} dims", kMaxDims));
  }
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shard->global_shape[d];
  s.sharded = true;
  s.serial.rank = static_cast<int>(rank);
  for (size_t d = 0; d < rank; ++d) {
    s.base += shard->offsets[d] * strides[d];
    s.serial.dims[d] = shape[d];
    s.serial.strides[d] = strides[d];
  }
  return s;
}

StatusOr<DeviceTensor> NewRandomOutput(const char* kernel, DType dtype, const KernelAttrs& attrs,
                                       std::vector<int64_t>* shape_out) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, attrs.Get<std::vector<int64_t>>("shape"));
  for (int64_t d : shape) {
    if (d < 0) {
      return KernelError(
          fmt::format("{}: shape {} has a negative dim", kernel, ShapeToString(shape)));
    }
  }
  *shape_out = shape;
  return DeviceTensor::Uninitialized(dtype, std::move(shape), kernel);
}

// The registry key of uniform and gaussian is the output dtype (their dtype attribute).
template <DType kDType>
Status RunUniform(CudaKernelCall& call) {
  std::vector<int64_t> shape;
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, NewRandomOutput("uniform", kDType, call.attrs, &shape));
  IRM_ASSIGN_OR_RETURN(const double min, call.attrs.Get<double>("min"));
  IRM_ASSIGN_OR_RETURN(const double max, call.attrs.Get<double>("max"));
  IRM_ASSIGN_OR_RETURN(const int64_t seed, call.attrs.GetOr<int64_t>("seed", 0));
  IRM_ASSIGN_OR_RETURN(
      RandomStream s,
      InitialiserStream("uniform", shape, StreamSeed(seed, call.context), call.context));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(kDType));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchUniform(elem, out.numel(), s, min, max, out.raw(), Stream()), "uniform"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

template <DType kDType>
Status RunGaussian(CudaKernelCall& call) {
  std::vector<int64_t> shape;
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, NewRandomOutput("gaussian", kDType, call.attrs, &shape));
  IRM_ASSIGN_OR_RETURN(const double mean, call.attrs.GetOr<double>("mean", 0.0));
  IRM_ASSIGN_OR_RETURN(const double std, call.attrs.GetOr<double>("std", 1.0));
  IRM_ASSIGN_OR_RETURN(const int64_t seed, call.attrs.GetOr<int64_t>("seed", 0));
  IRM_ASSIGN_OR_RETURN(
      RandomStream s,
      InitialiserStream("gaussian", shape, StreamSeed(seed, call.context), call.context));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(kDType));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchGaussian(elem, out.numel(), s, mean, std, out.raw(), Stream()), "gaussian"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

struct DropoutAttrs {
  float p = 0.5f;
  bool is_test = false;
  bool upscale_in_train = true;
};

StatusOr<DropoutAttrs> ReadDropoutAttrs(const char* kernel, const KernelAttrs& attrs) {
  DropoutAttrs out;
  IRM_ASSIGN_OR_RETURN(const double p, attrs.GetOr<double>("p", 0.5));
  if (!(p >= 0.0 && p <= 1.0)) {
    return KernelError(fmt::format("{}: p is {}, not in [0, 1]", kernel, p));
  }
  out.p = static_cast<float>(p);
  IRM_ASSIGN_OR_RETURN(out.is_test, attrs.GetOr<bool>("is_test", false));
  IRM_ASSIGN_OR_RETURN(const std::string mode,
                       attrs.GetOr<std::string>("mode", "upscale_in_train"));
  if (mode != "upscale_in_train" && mode != "downscale_in_infer" && mode != "downgrade_in_infer") {
    return KernelError(
        fmt::format("{}: mode is '{}', not 'upscale_in_train' or 'downscale_in_infer' (also "
                    "spelt 'downgrade_in_infer')",
                    kernel, mode));
  }
  out.upscale_in_train = mode == "upscale_in_train";
  return out;
}

// The seed tensor's value (read back to the host) when given, else `seed` when fix_seed, else 0.
StatusOr<int64_t> DropoutSeed(const CudaKernelCall& call) {
  if (call.has_input(1)) {
    const DeviceTensor& s = call.input(1);
    if (s.numel() != 1 || (s.dtype() != DType::kInt32 && s.dtype() != DType::kInt64)) {
      return KernelError(
          fmt::format("dropout: seed_tensor is {}, expected one int32 or int64", s.Describe()));
    }
    IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(s, "dropout"));
    return s.dtype() == DType::kInt32 ? int64_t{host.data<int32_t>()[0]} : host.data<int64_t>()[0];
  }
  IRM_ASSIGN_OR_RETURN(const bool fix_seed, call.attrs.GetOr<bool>("fix_seed", false));
  if (!fix_seed) return int64_t{0};
  return call.attrs.GetOr<int64_t>("seed", 0);
}

// (x, seed_tensor?) -> (out, mask uint8). The mask is keyed by the local index, as the CPU's.
Status RunDropout(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const DropoutAttrs a, ReadDropoutAttrs("dropout", call.attrs));
  IRM_ASSIGN_OR_RETURN(const int64_t seed, DropoutSeed(call));
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "dropout"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor mask,
                       DeviceTensor::Uninitialized(DType::kUInt8, x.shape(), "dropout"));
  RandomStream s;
  s.seed = StreamSeed(seed, call.context);
  s.identity = call.context.op_identity;
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchDropout(elem, x.numel(), s, a.p, a.is_test, a.upscale_in_train, x.raw(),
                                 out.raw(), static_cast<uint8_t*>(mask.raw()), Stream()),
                   "dropout"));
  call.SetOutput(0, std::move(out));
  call.SetOutput(1, std::move(mask));
  return Status::Ok();
}

// (mask, out_grad) -> x_grad.
Status RunDropoutGrad(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(const DropoutAttrs a, ReadDropoutAttrs("dropout_grad", call.attrs));
  const DeviceTensor& mask = call.input(0);
  const DeviceTensor& dy = call.input(1);
  if (!a.is_test) {
    if (mask.dtype() != DType::kUInt8) {
      return KernelError(fmt::format("dropout_grad: mask is {}, expected uint8", mask.Describe()));
    }
    if (mask.shape() != dy.shape()) {
      return KernelError(fmt::format("dropout_grad: mask {} and out_grad {} differ in shape",
                                     mask.Describe(), dy.Describe()));
    }
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(dy.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor dx,
                       DeviceTensor::Uninitialized(dy.dtype(), dy.shape(), "dropout_grad"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchDropoutGrad(elem, dy.numel(), a.p, a.is_test, a.upscale_in_train,
                        static_cast<const uint8_t*>(mask.raw()), dy.raw(), dx.raw(), Stream()),
      "dropout_grad"));
  call.SetOutput(0, std::move(dx));
  return Status::Ok();
}

template <DType kDType>
Status RegisterInitialisers(CudaKernelRegistry& registry) {
  const KernelSignature none{0, 0, 1};
  IRM_RETURN_IF_ERROR(registry.Register("uniform", kDType, {&RunUniform<kDType>, none}));
  return registry.Register("gaussian", kDType, {&RunGaussian<kDType>, none});
}

}  // namespace

Status RegisterCudaRandomKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterInitialisers<DType::kFloat32>(registry));
  IRM_RETURN_IF_ERROR(RegisterInitialisers<DType::kFloat64>(registry));
  IRM_RETURN_IF_ERROR(RegisterInitialisers<DType::kFloat16>(registry));
  IRM_RETURN_IF_ERROR(RegisterInitialisers<DType::kBFloat16>(registry));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "dropout", kCudaFloating, &RunDropout, {1, 2, 2}));
  return RegisterForDTypes(registry, "dropout_grad", kCudaFloating, &RunDropoutGrad, {2, 2, 1});
}

}  // namespace irm::rt::cuda
