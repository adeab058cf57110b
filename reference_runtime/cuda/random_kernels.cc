// The CUDA random family, host side: uniform, gaussian, dropout and dropout_grad with the CPU
// kernels' names, signatures, attributes, dtypes and errors (kernels/random.cc). The device draws
// from the same Philox-4x32-10 stream as the CPU (philox.h, philox.cuh): key = the op's seed, or
// the program's when it is 0; counter = (element block, op identity); an initialiser whose output
// is a shard draws each element at its index in the serial tensor. uniform, dropout and
// dropout_grad give the CPU's bits; gaussian goes through the device's float64 log, cos and sin.
// The seeds, shapes, shard placement and checks are the CPU's plans (kernels/random_plan.h).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/random_plan.h"

namespace irm::rt::cuda {
namespace {

using plan::StreamSeed;

// The stream of an initialiser's output of `shape`: the serial index walk when the output is a
// shard, checked as the CPU kernel checks it (plan::PlanSerialIndex).
StatusOr<RandomStream> InitialiserStream(const char* kernel, const std::vector<int64_t>& shape,
                                         uint64_t seed, const KernelContext& context) {
  RandomStream s;
  s.seed = seed;
  s.identity = context.op_identity;
  IRM_ASSIGN_OR_RETURN(const plan::SerialIndexPlan placement,
                       plan::PlanSerialIndex(kernel, shape, context));
  if (!placement.sharded) return s;
  const size_t rank = shape.size();
  if (rank > static_cast<size_t>(kMaxDims)) {
    return plan::ShardError(kernel, shape, context,
                            fmt::format("the gpu walks at most {} dims", kMaxDims));
  }
  s.sharded = true;
  s.base = placement.base;
  s.serial.rank = static_cast<int>(rank);
  for (size_t d = 0; d < rank; ++d) {
    s.serial.dims[d] = shape[d];
    s.serial.strides[d] = placement.strides[d];
  }
  return s;
}

StatusOr<DeviceTensor> NewRandomOutput(const char* kernel, DType dtype, const KernelAttrs& attrs,
                                       std::vector<int64_t>* shape_out) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, plan::RandomOutputShape(kernel, attrs));
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

using plan::DropoutAttrs;
using plan::ReadDropoutAttrs;

// The op's seed (plan::DropoutSeed), the seed tensor read back to the host.
StatusOr<int64_t> DropoutSeed(const CudaKernelCall& call) {
  return plan::DropoutSeed(plan::InputOperand(call, 1), call.attrs,
                           [&call] { return HostCopy(call.input(1), "dropout"); });
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
  IRM_RETURN_IF_ERROR(plan::CheckDropoutGradOperands(a, mask, dy));
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
