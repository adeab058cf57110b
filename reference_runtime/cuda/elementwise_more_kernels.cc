// The CUDA twins of the elementwise kernels beyond elementwise_kernels.cc: floor_divide,
// remainder, elementwise_pow and its grad, floor and its (zero) grad, increment — the CPU kernels'
// names, signatures, dtypes, attributes and errors (kernels/elementwise.cc) — and divide on int32
// and int64 (the floating divide is elementwise_kernels.cc's). An integer divisor of zero is found
// on the device (the first in y's order) and reported by element as the CPU does, before anything
// is divided.
// Device code in elementwise_more.cu.
#include <fmt/format.h>

#include <limits>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/elementwise_more_launch.h"
#include "reference_runtime/cuda/walk_plans.h"
#include "reference_runtime/kernels/elementwise.h"

namespace irm::rt::cuda {
namespace {

bool IsInteger(DType dtype) { return dtype == DType::kInt32 || dtype == DType::kInt64; }

// "integer division by zero: y[1] is 0 (y [3])", as the CPU's CheckNoZeroDivisor; nothing is
// divided when x is empty.
Status CheckNoZeroDivisor(const DeviceTensor& x, const DeviceTensor& y, const char* what,
                          std::string_view kernel) {
  if (!IsInteger(y.dtype()) || x.numel() == 0) return Status::Ok();
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(y.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor first, DeviceTensor::Uninitialized(DType::kInt64, {1}, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchFirstZero(elem, y.numel(), y.raw(), static_cast<int64_t*>(first.raw()), Stream()),
      kernel));
  IRM_ASSIGN_OR_RETURN(Tensor host, HostCopy(first, kernel));
  const int64_t at = host.data<int64_t>()[0];
  if (at >= y.numel()) return Status::Ok();
  return KernelError(fmt::format("integer {} by zero: y{} is 0 (y {})", what,
                                 IndexToString(at, y.shape()), ShapeToString(y.shape())));
}

template <ArithOp kOp>
constexpr const char* ArithName() {
  if constexpr (kOp == ArithOp::kDivide) return "divide";
  if constexpr (kOp == ArithOp::kFloorDivide) return "floor_divide";
  if constexpr (kOp == ArithOp::kRemainder) return "remainder";
  return "elementwise_pow";
}

template <ArithOp kOp>
Status RunArith(CudaKernelCall& call) {
  const char* kernel = ArithName<kOp>();
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(BinaryWalks walks, PlanBinaryWalks(x.shape(), y.shape(), kernel));
  if constexpr (kOp == ArithOp::kDivide) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor(x, y, "division", kernel));
  } else if constexpr (kOp == ArithOp::kFloorDivide) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor(x, y, "floor division", kernel));
  } else if constexpr (kOp == ArithOp::kRemainder) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor(x, y, "remainder", kernel));
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), walks.shape, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchArith(kOp, elem, out.numel(), walks.x, walks.y, x.raw(), y.raw(), out.raw(), Stream()),
      kernel));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// x, y, out_grad -> x_grad, y_grad (kernels/elementwise.cc's ElementwisePowGradKernel).
Status RunPowGrad(CudaKernelCall& call) {
  const char* kernel = "elementwise_pow_grad";
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  const DeviceTensor& out_grad = call.input(2);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(BinaryWalks walks, PlanBinaryWalks(x.shape(), y.shape(), kernel));
  if (out_grad.shape() != walks.shape) {
    return KernelError(fmt::format("out_grad {} is not the broadcast shape {} of x {} and y {}",
                                   ShapeToString(out_grad.shape()), ShapeToString(walks.shape),
                                   ShapeToString(x.shape()), ShapeToString(y.shape())));
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  for (size_t which = 0; which < 2; ++which) {
    if (!call.wants_output(which)) continue;
    const DeviceTensor& self = which == 0 ? x : y;
    const DeviceTensor& other = which == 0 ? y : x;
    IRM_ASSIGN_OR_RETURN(GradPlan plan,
                         PlanOperandGrad(self.shape(), other.shape(), walks.shape, kernel));
    IRM_ASSIGN_OR_RETURN(DeviceTensor grad,
                         DeviceTensor::Uninitialized(x.dtype(), self.shape(), kernel));
    IRM_RETURN_IF_ERROR(LaunchStatus(LaunchPowGrad(which == 1, elem, plan, self.raw(), other.raw(),
                                                   out_grad.raw(), grad.raw(), Stream()),
                                     kernel));
    call.SetOutput(which, std::move(grad));
  }
  return Status::Ok();
}

Status RunFloor(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "floor"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchFloor(elem, x.numel(), x.raw(), out.raw(), Stream()), "floor"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// floor_grad: zeros of out_grad's shape (phi's ZeroGradFunctor).
Status RunFloorGrad(CudaKernelCall& call) {
  const DeviceTensor& out_grad = call.input(0);
  IRM_ASSIGN_OR_RETURN(DeviceTensor zeros,
                       DeviceTensor::Zeros(out_grad.dtype(), out_grad.shape(), "floor_grad"));
  call.SetOutput(0, std::move(zeros));
  return Status::Ok();
}

// increment: x + value (default 1); an integer x takes the value's integral part, which must fit.
Status RunIncrement(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(double value, call.attrs.GetOr<double>("value", 1.0));
  double min = 0;
  if (x.dtype() == DType::kInt32) min = static_cast<double>(std::numeric_limits<int32_t>::min());
  if (x.dtype() == DType::kInt64) min = static_cast<double>(std::numeric_limits<int64_t>::min());
  if (min != 0 && !(value > min - 1.0 && value < -min)) {
    return KernelError(
        fmt::format("attribute 'value' ({}) does not fit {}", value, DTypeName(x.dtype())));
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "increment"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchIncrement(elem, x.numel(), value, x.raw(), out.raw(), Stream()), "increment"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaElementwiseMoreKernels(CudaKernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  const KernelSignature binary{2, 2, 1};
  const std::initializer_list<DType> arithmetic = {DType::kFloat32, DType::kFloat64,
                                                   DType::kFloat16, DType::kBFloat16,
                                                   DType::kInt32,   DType::kInt64};
  // The floating divide is elementwise_kernels.cc's; the integer one is here, beside the other
  // integer kernels whose zero divisors are found on the device.
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "divide", {DType::kInt32, DType::kInt64},
                                        &RunArith<ArithOp::kDivide>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "floor_divide", arithmetic,
                                        &RunArith<ArithOp::kFloorDivide>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "remainder", arithmetic, &RunArith<ArithOp::kRemainder>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "elementwise_pow", arithmetic, &RunArith<ArithOp::kPow>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "elementwise_pow_grad", kCudaFloating, &RunPowGrad, {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "floor", kCudaFloating, &RunFloor, unary));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "floor_grad", kCudaFloating, &RunFloorGrad, unary));
  return RegisterForDTypes(registry, "increment", arithmetic, &RunIncrement, unary);
}

}  // namespace irm::rt::cuda
