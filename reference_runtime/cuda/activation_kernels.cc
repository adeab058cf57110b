// The CUDA activation family, host side: relu, gelu (exact, or the tanh approximation when
// `approximate`), tanh, sigmoid, sqrt and the grads relu_grad, gelu_grad, tanh_grad, sigmoid_grad,
// and add_n, with the CPU kernels' names, signatures, dtypes and errors (kernels/activation.cc,
// kernels/manipulation.cc). The dtype checked is x's (the registry key the executor picks).
#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"

namespace irm::rt::cuda {
namespace {

constexpr const char* OpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
      return "relu";
    case UnaryOp::kGelu:
    case UnaryOp::kGeluTanh:
      return "gelu";
    case UnaryOp::kTanh:
      return "tanh";
    case UnaryOp::kSigmoid:
      return "sigmoid";
    case UnaryOp::kSqrt:
      return "sqrt";
  }
  return "?";
}

// gelu's form from its `approximate` attribute.
StatusOr<UnaryOp> Resolve(UnaryOp op, const KernelAttrs& attrs) {
  if (op != UnaryOp::kGelu) return op;
  IRM_ASSIGN_OR_RETURN(bool approximate, attrs.GetOr<bool>("approximate", false));
  return approximate ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
}

template <UnaryOp kOp>
Status RunUnary(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(UnaryOp op, Resolve(kOp, call.attrs));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), OpName(kOp)));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchUnary(op, elem, x.numel(), x.raw(), out.raw(), Stream()), OpName(kOp)));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// (a, out_grad) -> x_grad; a is out for relu, tanh, sigmoid and x for gelu.
template <UnaryOp kOp>
Status RunUnaryGrad(CudaKernelCall& call) {
  const std::string kernel = std::string(OpName(kOp)) + "_grad";
  const char* a_name = kOp == UnaryOp::kGelu ? "x" : "out";
  const DeviceTensor& a = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, a.dtype(), "out_grad"));
  if (a.shape() != out_grad.shape()) {
    return KernelError(fmt::format("{} {} and out_grad {} differ in shape", a_name,
                                   ShapeToString(a.shape()), ShapeToString(out_grad.shape())));
  }
  IRM_ASSIGN_OR_RETURN(UnaryOp op, Resolve(kOp, call.attrs));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(a.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad,
                       DeviceTensor::Uninitialized(a.dtype(), a.shape(), kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchUnaryGrad(op, elem, a.numel(), a.raw(), out_grad.raw(), x_grad.raw(), Stream()),
      kernel));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// add_n(inputs...) -> out, added in input order in the compute type (launch.h).
Status RunAddN(CudaKernelCall& call) {
  const DeviceTensor& first = call.input(0);
  std::vector<int64_t> pointers;
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    if (!call.has_input(i)) return KernelError(fmt::format("add_n: inputs[{}] is missing", i));
    const DeviceTensor& in = call.input(i);
    if (in.dtype() != first.dtype() || in.shape() != first.shape()) {
      return KernelError(fmt::format("add_n: inputs[{}] {} does not match inputs[0] {}", i,
                                     in.Describe(), first.Describe()));
    }
    pointers.push_back(reinterpret_cast<int64_t>(in.raw()));
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(first.dtype()));
  const int64_t count = static_cast<int64_t>(pointers.size());
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor table,
      DeviceTensor::FromHost(Tensor::FromVector<int64_t>(pointers, {count}), "add_n"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(first.dtype(), first.shape(), "add_n"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchAddN(elem, out.numel(), count,
                              static_cast<const void* const*>(table.raw()), out.raw(), Stream()),
                   "add_n"));
  // `table` returns to the cache here; the stream orders its reuse after the launch.
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaActivationKernels(CudaKernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  const KernelSignature grad{2, 2, 1};
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "relu", kCudaFloating, &RunUnary<UnaryOp::kRelu>, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "gelu", kCudaFloating, &RunUnary<UnaryOp::kGelu>, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "tanh", kCudaFloating, &RunUnary<UnaryOp::kTanh>, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "sigmoid", kCudaFloating, &RunUnary<UnaryOp::kSigmoid>, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "sqrt", kCudaFloating, &RunUnary<UnaryOp::kSqrt>, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "relu_grad", kCudaFloating, &RunUnaryGrad<UnaryOp::kRelu>, grad));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "gelu_grad", kCudaFloating, &RunUnaryGrad<UnaryOp::kGelu>, grad));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "tanh_grad", kCudaFloating, &RunUnaryGrad<UnaryOp::kTanh>, grad));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "sigmoid_grad", kCudaFloating,
                                        &RunUnaryGrad<UnaryOp::kSigmoid>, grad));
  return RegisterForDTypes(registry, "add_n",
                           {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                            DType::kInt32, DType::kInt64},
                           &RunAddN, {1, KernelSignature::kVariadic, 1});
}

}  // namespace irm::rt::cuda
