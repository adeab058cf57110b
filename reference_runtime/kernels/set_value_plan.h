// The device-independent half of set_value, set_value_with_tensor and set_value_with_tensor_grad:
// the strided slice the attributes select in the target (x, or out_grad for the grad), the shape
// the value broadcasts to, and set_value's values from its attributes. The CPU kernels
// (set_value.cc, which says which Paddle rules the slice follows) and the CUDA kernels
// (cuda/gather_kernels.cc) both plan with these and only move the elements their own way, so that
// the two check the same things in the same order with the same words.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"
#include "reference_runtime/tensor.h"

namespace irm::rt::plan {

// Where the value lands in the target: slice element (i_0, ..., i_r) in C order of slice_shape is
// target element (first[k] + i_k * step[k])_k.
struct SetValuePlan {
  std::vector<int64_t> slice_shape;  // one count per dim of the target
  std::vector<int64_t> value_shape;  // the slice's shape less decrease_axes, with none_axes as 1s
  std::vector<int64_t> first;        // the slice's first index on each dim
  std::vector<int64_t> step;         // its step on each dim (1 on a dim not sliced)
};

// axes, starts, ends, steps, decrease_axes and none_axes on `target` (named `operand` in errors;
// errors are prefixed "<kernel>: ").
StatusOr<SetValuePlan> PlanSetValue(const Operand& target, std::string_view operand,
                                    const KernelAttrs& attrs, std::string_view kernel);

// `values` must broadcast to the plan's value shape.
Status CheckSetValueValues(const Operand& values, const SetValuePlan& plan,
                           std::string_view kernel);

// set_value's attribute values as a host tensor of `dtype` and the attribute `shape`: an int array
// kept exact, a float array converted (cast's rules, convert.h); one value per element.
StatusOr<Tensor> SetValueAttrValues(const KernelAttrs& attrs, DType dtype);

}  // namespace irm::rt::plan
