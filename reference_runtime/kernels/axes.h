// Axis and shape bookkeeping for the reduction, softmax and normalization kernels: normalising an
// axis (negative counts from the end), planning a reduction over a set of axes (which dims go,
// the out shape, how to walk the reduced elements), the outer × axis × inner split of a shape
// around one axis, and the dtype and shape checks their operands share. Errors are KernelErrors
// naming the operand and its shape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// `axis` in [-rank, rank) made non-negative. A 0-D tensor accepts -1 and 0 (NumPy and Paddle
// treat it as having one implicit dim), both meaning 0. `operand` names the tensor in the error:
// "axis 2 is out of range for x of shape [2, 3] (valid: -2 to 1)".
StatusOr<int> NormalizeAxis(int64_t axis, const std::vector<int64_t>& shape,
                            std::string_view operand);

// Row-major strides of a contiguous tensor of `shape`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

// Walks a multi-index over `dims` in C order (last dim fastest) and keeps the offset
// sum(index[d] * strides[d]); a stride of 0 repeats an element (broadcast).
class StridedWalk {
 public:
  StridedWalk(std::vector<int64_t> dims, std::vector<int64_t> strides);
  int64_t offset() const { return offset_; }
  void Next();
  // Back to the zero index.
  void Reset();

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// A reduction of a contiguous tensor over a set of dims. Kernels visit the out elements in C
// order and, for each, the reduced elements in C order of the reduced dims: that is the one
// summation order of every reduction kernel.
struct ReducePlan {
  std::vector<bool> reduced;          // per dim of x
  std::vector<int64_t> out_shape;     // with keepdim: reduced dims kept as 1
  std::vector<int64_t> drop_shape;    // the out shape without keepdim
  std::vector<int64_t> keep_shape;    // the out shape with keepdim
  std::vector<int64_t> kept_dims;     // x's dims that stay, in order
  std::vector<int64_t> kept_strides;  // their strides in x
  std::vector<int64_t> reduced_dims;  // x's dims that go, in order
  std::vector<int64_t> reduced_strides;
  int64_t reduce_count = 1;  // elements summed into each out element
  int64_t out_numel = 1;

  // The walk over the out elements (offsets into x of each one's first reduced element).
  StridedWalk OutWalk() const { return StridedWalk(kept_dims, kept_strides); }
  // The walk over one out element's reduced elements (offsets relative to OutWalk's).
  StridedWalk ReducedWalk() const { return StridedWalk(reduced_dims, reduced_strides); }
  // For x's elements in C order, the offset of the out element each one reduces into (grads
  // broadcast the out grad back this way).
  StridedWalk BroadcastWalk() const;
};

// Plans reducing a tensor of `shape` over `axes` (empty, or reduce_all: every dim). Axes may be
// negative; an axis out of range or named twice is an error naming `operand`.
StatusOr<ReducePlan> PlanReduce(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes,
                                bool keepdim, bool reduce_all, std::string_view operand);

// A grad's out_grad must have the reduced shape: the keepdim or the dropped form (either is
// accepted whatever keepdim says, since the legacy IR and the new IR disagree on which one
// reduce-all results get), or [1] when everything is reduced (the legacy 1-element form).
Status CheckReducedGradShape(const ReducePlan& plan, const Tensor& out_grad,
                             const std::vector<int64_t>& x_shape);

// A shape split around `axis`: outer = prod(dims before), size = the dim, inner = prod(after).
// Element (o, a, i) sits at (o * size + a) * inner + i.
struct AxisSplit {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};
AxisSplit SplitAround(const std::vector<int64_t>& shape, int axis);

// `tensor` has one of `allowed` dtypes, else "scale is float64, expected float16 or float32".
Status CheckDType(const Tensor& tensor, std::string_view name,
                  std::initializer_list<DType> allowed);
// `tensor` has shape `shape`, else "out_grad has shape [2, 4], expected [2, 3] (the shape of
// out)" with `why` in the parentheses.
Status CheckShape(const Tensor& tensor, std::string_view name, const std::vector<int64_t>& shape,
                  std::string_view why);
// A required input is present, else "input 'mean' (operand 3) is missing".
Status CheckPresent(const KernelCall& call, size_t index, std::string_view name);

}  // namespace irm::rt
