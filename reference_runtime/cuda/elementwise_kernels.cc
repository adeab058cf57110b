// The CUDA elementwise family, host side: add, subtract, multiply, divide, maximum, the grads of
// the first four, scale, full, full_like and cast, with the CPU kernels' names, signatures,
// attributes, dtypes and errors (kernels/elementwise.cc, kernels/creation.cc, kernels/cast.cc).
// Integer divide is elementwise_more_kernels.cc's (zero divisors found on the device).
#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/cuda/walk_plans.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/convert.h"
#include "reference_runtime/kernels/data_kernels.h"

namespace irm::rt::cuda {
namespace {

constexpr DType kFloating[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
constexpr DType kArithmetic[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                 DType::kBFloat16, DType::kInt32,   DType::kInt64};

// The kernel name of a binary op and the dtype the registry dispatched on are passed through the
// call's context-free entry points below, one per (op, grad) pair.
template <BinaryOp kOp>
constexpr const char* OpName() {
  if constexpr (kOp == BinaryOp::kAdd) return "add";
  if constexpr (kOp == BinaryOp::kSubtract) return "subtract";
  if constexpr (kOp == BinaryOp::kMultiply) return "multiply";
  if constexpr (kOp == BinaryOp::kMaximum) return "maximum";
  return "divide";
}

template <BinaryOp kOp>
Status RunBinary(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(const BinaryWalks walks,
                       PlanBinaryWalks(x.shape(), y.shape(), OpName<kOp>()));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), walks.shape, OpName<kOp>()));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchBinary(kOp, elem, out.numel(), walks.x, walks.y, x.raw(), y.raw(), out.raw(), Stream()),
      OpName<kOp>()));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// x, y, out_grad (divide_grad: x, y, out, out_grad) -> x_grad, y_grad.
template <BinaryOp kOp>
Status RunBinaryGrad(CudaKernelCall& call) {
  const std::string kernel = std::string(OpName<kOp>()) + "_grad";
  const bool divide = kOp == BinaryOp::kDivide;
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  const DeviceTensor* out = divide ? &call.input(2) : nullptr;
  const DeviceTensor& out_grad = call.input(divide ? 3 : 2);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_RETURN_IF_ERROR(ExpectDType(out_grad, x.dtype(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(x.shape(), y.shape()));
  if (out_grad.shape() != shape) {
    return KernelError(fmt::format("out_grad {} is not the broadcast shape {} of x {} and y {}",
                                   ShapeToString(out_grad.shape()), ShapeToString(shape),
                                   ShapeToString(x.shape()), ShapeToString(y.shape())));
  }
  if (out != nullptr) {
    IRM_RETURN_IF_ERROR(ExpectDType(*out, x.dtype(), "out"));
    if (out->shape() != shape) {
      return KernelError(fmt::format("out {} and out_grad {} differ in shape",
                                     ShapeToString(out->shape()), ShapeToString(shape)));
    }
  }
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  for (int which = 0; which < 2; ++which) {
    if (!call.wants_output(static_cast<size_t>(which))) continue;
    const DeviceTensor& self = which == 0 ? x : y;
    const DeviceTensor& other = which == 0 ? y : x;
    IRM_ASSIGN_OR_RETURN(GradPlan plan,
                         PlanOperandGrad(self.shape(), other.shape(), shape, kernel));
    IRM_ASSIGN_OR_RETURN(DeviceTensor grad,
                         DeviceTensor::Uninitialized(x.dtype(), self.shape(), kernel));
    IRM_RETURN_IF_ERROR(
        LaunchStatus(LaunchBinaryGrad(kOp, which == 1, elem, plan, self.raw(), other.raw(),
                                      out != nullptr ? out->raw() : nullptr, out_grad.raw(),
                                      grad.raw(), Stream()),
                     kernel));
    call.SetOutput(static_cast<size_t>(which), std::move(grad));
  }
  return Status::Ok();
}

// A float attribute as a value of `dtype`'s compute type: integers take its integral part and
// must be in range (as the CPU's scale).
StatusOr<double> AttrFor(DType dtype, double value, std::string_view name) {
  double min = 0;
  if (dtype == DType::kInt32) min = static_cast<double>(std::numeric_limits<int32_t>::min());
  if (dtype == DType::kInt64) min = static_cast<double>(std::numeric_limits<int64_t>::min());
  if (min != 0 && !(value > min - 1.0 && value < -min)) {
    return KernelError(
        fmt::format("attribute '{}' ({}) does not fit {}", name, value, DTypeName(dtype)));
  }
  return value;
}

Status RunScale(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(double scale_attr, call.attrs.GetOr<double>("scale", 1.0));
  IRM_ASSIGN_OR_RETURN(double bias_attr, call.attrs.GetOr<double>("bias", 0.0));
  IRM_ASSIGN_OR_RETURN(bool after, call.attrs.GetOr<bool>("bias_after_scale", true));
  IRM_ASSIGN_OR_RETURN(double scale, AttrFor(x.dtype(), scale_attr, "scale"));
  IRM_ASSIGN_OR_RETURN(double bias, AttrFor(x.dtype(), bias_attr, "bias"));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(x.dtype(), x.shape(), "scale"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchScale(elem, x.numel(), scale, bias, after, x.raw(), out.raw(), Stream()), "scale"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// The bytes of `value` converted to `dtype` by cast's rules (kernels/convert.h), as a fill pattern.
uint64_t FillPattern(DType dtype, const data::Number& value) {
  uint64_t pattern = 0;
  VisitDType(dtype, [&](auto zero) {
    using T = decltype(zero);
    T converted;
    if (const int64_t* i = std::get_if<int64_t>(&value)) {
      converted = ConvertElement<T>(*i);
    } else {
      converted = ConvertElement<T>(std::get<double>(value));
    }
    std::memcpy(&pattern, &converted, sizeof(T));
  });
  return pattern;
}

Status Fill(DType dtype, std::vector<int64_t> shape, const data::Number& value,
            std::string_view kernel, CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(dtype, std::move(shape), kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchFill(static_cast<int>(DTypeSize(dtype)), out.numel(),
                                              FillPattern(dtype, value), out.raw(), Stream()),
                                   kernel));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// The registry key of full and full_like is the output dtype; `dispatched` is it.
Status CheckKernelDType(DType wanted, DType dispatched, std::string_view kernel,
                        std::string_view source) {
  if (wanted == dispatched) return Status::Ok();
  return KernelError(fmt::format("{}: {} says {} but the {} kernel was called", kernel, source,
                                 DTypeName(wanted), DTypeName(dispatched)));
}

template <DType kDType>
Status RunFull(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "full"));
  IRM_RETURN_IF_ERROR(CheckKernelDType(dtype, kDType, "full", "the dtype attribute"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(data::Number value, data::NumberAttr(call.attrs, "value"));
  return Fill(dtype, std::move(shape), value, "full", call);
}

template <DType kDType>
Status RunFullLike(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  if (call.attrs.Has("dtype")) {
    IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "full_like"));
    IRM_RETURN_IF_ERROR(CheckKernelDType(dtype, kDType, "full_like", "the dtype attribute"));
  } else {
    IRM_RETURN_IF_ERROR(
        CheckKernelDType(x.dtype(), kDType, "full_like", "x's dtype (no dtype attribute)"));
  }
  IRM_ASSIGN_OR_RETURN(data::Number value, data::NumberAttr(call.attrs, "value"));
  return Fill(kDType, x.shape(), value, "full_like", call);
}

Status RunCast(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(DType dtype, data::RuntimeDTypeAttr(call.attrs, "dtype", "cast"));
  IRM_ASSIGN_OR_RETURN(Elem from, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(Elem to, ElemOf(dtype));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(dtype, x.shape(), "cast"));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchCast(from, to, x.numel(), x.raw(), out.raw(), Stream()), "cast"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Each key of full / full_like needs its own function pointer (the dtype is a template argument).
template <template <DType> class Holder>
Status RegisterPerDType(CudaKernelRegistry& registry, const std::string& name,
                        KernelSignature signature) {
  Status status;
  auto add = [&](DType dtype, CudaKernelFn fn) {
    if (status.ok()) status = registry.Register(name, dtype, {fn, signature});
  };
  add(DType::kBool, &Holder<DType::kBool>::Run);
  add(DType::kInt8, &Holder<DType::kInt8>::Run);
  add(DType::kUInt8, &Holder<DType::kUInt8>::Run);
  add(DType::kInt16, &Holder<DType::kInt16>::Run);
  add(DType::kInt32, &Holder<DType::kInt32>::Run);
  add(DType::kInt64, &Holder<DType::kInt64>::Run);
  add(DType::kFloat16, &Holder<DType::kFloat16>::Run);
  add(DType::kBFloat16, &Holder<DType::kBFloat16>::Run);
  add(DType::kFloat32, &Holder<DType::kFloat32>::Run);
  add(DType::kFloat64, &Holder<DType::kFloat64>::Run);
  return status;
}
template <DType kDType>
struct FullHolder {
  static Status Run(CudaKernelCall& call) { return RunFull<kDType>(call); }
};
template <DType kDType>
struct FullLikeHolder {
  static Status Run(CudaKernelCall& call) { return RunFullLike<kDType>(call); }
};

template <size_t N>
Status RegisterFor(CudaKernelRegistry& registry, const std::string& name, const DType (&dtypes)[N],
                   CudaKernelFn fn, KernelSignature signature) {
  for (DType dtype : dtypes) IRM_RETURN_IF_ERROR(registry.Register(name, dtype, {fn, signature}));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaElementwiseKernels(CudaKernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  const KernelSignature binary{2, 2, 1};
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "add", kArithmetic, &RunBinary<BinaryOp::kAdd>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "subtract", kArithmetic, &RunBinary<BinaryOp::kSubtract>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "multiply", kArithmetic, &RunBinary<BinaryOp::kMultiply>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "divide", kFloating, &RunBinary<BinaryOp::kDivide>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "maximum", kArithmetic, &RunBinary<BinaryOp::kMaximum>, binary));
  IRM_RETURN_IF_ERROR(
      RegisterFor(registry, "add_grad", kFloating, &RunBinaryGrad<BinaryOp::kAdd>, {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFor(registry, "subtract_grad", kFloating,
                                  &RunBinaryGrad<BinaryOp::kSubtract>, {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFor(registry, "multiply_grad", kFloating,
                                  &RunBinaryGrad<BinaryOp::kMultiply>, {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFor(registry, "divide_grad", kFloating,
                                  &RunBinaryGrad<BinaryOp::kDivide>, {4, 4, 2}));
  IRM_RETURN_IF_ERROR(RegisterFor(registry, "scale", kArithmetic, &RunScale, unary));
  IRM_RETURN_IF_ERROR(RegisterPerDType<FullHolder>(registry, "full", {0, 1, 1}));
  IRM_RETURN_IF_ERROR(RegisterPerDType<FullLikeHolder>(registry, "full_like", {1, 1, 1}));
  constexpr DType kEvery[] = {DType::kBool,    DType::kInt8,   DType::kUInt8,   DType::kInt16,
                              DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                              DType::kFloat32, DType::kFloat64};
  return RegisterFor(registry, "cast", kEvery, &RunCast, unary);
}

}  // namespace irm::rt::cuda
