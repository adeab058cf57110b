// The device-independent half of the shape kernels (reshape, transpose, concat, split, slice and
// their grads): read the attributes, check the operands and compute the output shapes and the
// boxes each output is copied from or to. The CPU kernels (manipulation.cc; slice in indexing.cc)
// and the CUDA kernels (cuda/manipulation_kernels.cc) both plan with these and only move the bytes
// their own way, so that the two check the same things in the same order with the same words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/plan_operand.h"

namespace irm::rt::plan {

// reshape's target shape (the `shape` attribute) by Paddle's rules: 0 copies x's dim at the same
// index, one -1 takes what is left; the element count must be x's.
StatusOr<std::vector<int64_t>> PlanReshape(const Operand& x, const KernelAttrs& attrs);

// The shape of reshape's xshape, which carries x's shape for reshape_grad as Paddle's does: x's
// dtype and shape [0, x dims...], holding no element.
std::vector<int64_t> XShapeCarrier(const std::vector<int64_t>& x_shape);

// reshape_grad's x_grad shape: the x shape xshape carries, with out_grad's element count.
StatusOr<std::vector<int64_t>> PlanReshapeGrad(const Operand& xshape, const Operand& out_grad);

// transpose's permutation (the `perm` attribute; negative entries count from the end, as Paddle
// allows): out.dim(k) = x.dim(perm[k]).
StatusOr<std::vector<int>> PlanTranspose(const Operand& x, const KernelAttrs& attrs);
// transpose_grad's: the inverse of `perm`, checked against out_grad.
StatusOr<std::vector<int>> PlanTransposeGrad(const Operand& out_grad, const KernelAttrs& attrs);

// concat(x...; axis): every x present with x[0]'s dtype and x[0]'s dims off the axis; the joined
// shape, and where along the axis each x starts in it.
struct ConcatPlan {
  int axis = 0;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> starts;  // per x: its box's start in out
};
StatusOr<ConcatPlan> PlanConcat(const std::vector<Operand>& xs, const KernelAttrs& attrs);

// A tensor cut along `axis` into pieces: piece i has `shapes[i]` and starts at `starts[i]` in it
// (split, split_with_num, concat_grad).
struct CutPlan {
  int axis = 0;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<int64_t>> starts;
};
// concat_grad(x..., out_grad; axis): out_grad cut back into the x's shapes, one per output.
StatusOr<CutPlan> PlanConcatGrad(const std::vector<Operand>& xs, const Operand& out_grad,
                                 const KernelAttrs& attrs, size_t num_outputs);
// split(x; sections, axis): one piece per section; one section may be -1 (the rest).
StatusOr<CutPlan> PlanSplit(const Operand& x, const KernelAttrs& attrs, size_t num_outputs);
// split_with_num(x; num, axis): num equal pieces.
StatusOr<CutPlan> PlanSplitWithNum(const Operand& x, const KernelAttrs& attrs, size_t num_outputs);

// Where a slice sits in its input: the box (start and extent per dim) and the output shape after
// decrease_axis.
struct SliceBox {
  std::vector<int64_t> start;
  std::vector<int64_t> extent;
  std::vector<int64_t> out_shape;
};
// slice(input; axes, starts, ends, decrease_axis) by Paddle's rules per sliced axis: a negative
// start or end counts from the end of the dim, then both are clamped to [0, dim]; an end at or
// before the start gives an empty slice. infer_flags only tell Paddle's shape inference which
// values were unknown when the program was built, so it is not read. decrease_axis removes dims
// the slice leaves at size 1 (all of them: 0-D). `kernel` words the errors.
StatusOr<SliceBox> PlanSlice(const Operand& input, const KernelAttrs& attrs,
                             std::string_view kernel);
// slice_grad's out_grad has the decreased shape or the slice's full-rank box (a legacy program
// keeps removed dims of size 1 in some versions); the elements are the same.
Status CheckSliceGradShape(const SliceBox& box, const Operand& out_grad);

}  // namespace irm::rt::plan
