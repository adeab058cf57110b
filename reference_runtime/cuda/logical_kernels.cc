// The CUDA comparison and logic family, host side: equal, not_equal, less_than, greater_than,
// logical_and, logical_or, logical_xor and logical_not, with the CPU kernels' names, signatures,
// dtypes and bool results (kernels/elementwise.cc: float equal within 1e-8, a NaN equal to
// nothing, a value true when it is not zero). Device code in elementwise_more.cu.
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/elementwise_more_launch.h"
#include "reference_runtime/cuda/walk_plans.h"

namespace irm::rt::cuda {
namespace {

template <CompareOp kOp>
constexpr const char* CompareName() {
  if constexpr (kOp == CompareOp::kEqual) return "equal";
  if constexpr (kOp == CompareOp::kNotEqual) return "not_equal";
  if constexpr (kOp == CompareOp::kLessThan) return "less_than";
  if constexpr (kOp == CompareOp::kGreaterThan) return "greater_than";
  if constexpr (kOp == CompareOp::kLogicalAnd) return "logical_and";
  if constexpr (kOp == CompareOp::kLogicalOr) return "logical_or";
  return "logical_xor";
}

template <CompareOp kOp>
Status RunCompare(CudaKernelCall& call) {
  const char* kernel = CompareName<kOp>();
  const DeviceTensor& x = call.input(0);
  const DeviceTensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(y, x.dtype(), "y"));
  IRM_ASSIGN_OR_RETURN(BinaryWalks walks, PlanBinaryWalks(x.shape(), y.shape(), kernel));
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(DType::kBool, walks.shape, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchCompare(kOp, elem, out.numel(), walks.x, walks.y, x.raw(),
                                                 y.raw(), static_cast<bool*>(out.raw()), Stream()),
                                   kernel));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

Status RunLogicalNot(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(Elem elem, ElemOf(x.dtype()));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(DType::kBool, x.shape(), "logical_not"));
  IRM_RETURN_IF_ERROR(LaunchStatus(
      LaunchLogicalNot(elem, x.numel(), x.raw(), static_cast<bool*>(out.raw()), Stream()),
      "logical_not"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// The CPU's RegisterNumeric (every numeric dtype) and RegisterNumericAndBool (and bool).
constexpr std::initializer_list<DType> kNumeric = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kUInt8,   DType::kInt16,   DType::kInt32,   DType::kInt64};
constexpr std::initializer_list<DType> kNumericAndBool = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kUInt8,   DType::kInt16,   DType::kInt32,   DType::kInt64,    DType::kBool};

}  // namespace

Status RegisterCudaLogicalKernels(CudaKernelRegistry& registry) {
  const KernelSignature binary{2, 2, 1};
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "equal", kNumericAndBool,
                                        &RunCompare<CompareOp::kEqual>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "not_equal", kNumericAndBool,
                                        &RunCompare<CompareOp::kNotEqual>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "less_than", kNumeric,
                                        &RunCompare<CompareOp::kLessThan>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "greater_than", kNumeric,
                                        &RunCompare<CompareOp::kGreaterThan>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "logical_and", kNumericAndBool,
                                        &RunCompare<CompareOp::kLogicalAnd>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "logical_or", kNumericAndBool,
                                        &RunCompare<CompareOp::kLogicalOr>, binary));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "logical_xor", kNumericAndBool,
                                        &RunCompare<CompareOp::kLogicalXor>, binary));
  return RegisterForDTypes(registry, "logical_not", kNumericAndBool, &RunLogicalNot, {1, 1, 1});
}

}  // namespace irm::rt::cuda
