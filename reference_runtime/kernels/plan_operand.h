// What the kernel plans (<family>_plan.h) see of a tensor, whichever device holds it: its dtype and
// shape, and its Describe() for the errors. The CPU kernels pass Tensors and the CUDA kernels
// DeviceTensors to the same plan, so that both check the same things in the same order and word
// every error alike (a DeviceTensor describes itself "... on gpu"). Describe() is only called when
// an error is worded: planning a call formats nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::plan {

class Operand {
 public:
  Operand() = default;  // absent (an optional input nobody gave)

  // Implicit, so that a plan takes a Tensor and a DeviceTensor alike; `t` must outlive the view.
  template <typename TensorLike>
  Operand(const TensorLike& t)  // NOLINT(google-explicit-constructor)
      : tensor_(&t),
        describe_(&DescribeAs<TensorLike>),
        dtype_(t.dtype()),
        shape_(&t.shape()),
        numel_(t.numel()) {}

  // A view of `t`, or an absent one when `t` is null.
  template <typename TensorLike>
  static Operand Of(const TensorLike* t) {
    return t == nullptr ? Operand() : Operand(*t);
  }

  // Only present() may be asked of an absent operand.
  bool present() const { return tensor_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return *shape_; }
  int rank() const { return static_cast<int>(shape_->size()); }
  int64_t dim(int d) const { return (*shape_)[static_cast<size_t>(d)]; }
  int64_t numel() const { return numel_; }
  std::string Describe() const { return describe_(tensor_); }

 private:
  template <typename TensorLike>
  static std::string DescribeAs(const void* t) {
    return static_cast<const TensorLike*>(t)->Describe();
  }

  const void* tensor_ = nullptr;
  std::string (*describe_)(const void*) = nullptr;
  DType dtype_ = DType::kFloat32;
  const std::vector<int64_t>* shape_ = nullptr;
  int64_t numel_ = 0;
};

// A kernel call's inputs (KernelCall's or CudaKernelCall's), or its first `count`, as operands;
// absent inputs are absent operands.
template <typename Call>
std::vector<Operand> OperandsOf(const Call& call, size_t count) {
  std::vector<Operand> operands;
  for (size_t i = 0; i < count; ++i) operands.push_back(Operand::Of(call.inputs[i]));
  return operands;
}
template <typename Call>
std::vector<Operand> OperandsOf(const Call& call) {
  return OperandsOf(call, call.inputs.size());
}

// Input i of a kernel call, absent when the call has no input i.
template <typename Call>
Operand InputOperand(const Call& call, size_t i) {
  return call.has_input(i) ? Operand(call.input(i)) : Operand();
}

// axis in [-rank, rank) as an index in [0, rank), or the error
// "<kernel>: <what> <axis> is out of range for <operand> <t.Describe()>" (data::NormalizeAxis
// forwards here).
StatusOr<int> NormalizeAxis(int64_t axis, const Operand& t, std::string_view kernel,
                            std::string_view what, std::string_view operand);

}  // namespace irm::rt::plan
