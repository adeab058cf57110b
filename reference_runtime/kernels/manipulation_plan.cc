// The shape kernels' plans (manipulation_plan.h): attributes, checks and output shapes.
#include "reference_runtime/kernels/manipulation_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "reference_runtime/kernels/data_kernels.h"

namespace irm::rt::plan {
namespace {

StatusOr<std::vector<int64_t>> ReshapeTarget(const Operand& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) {
        return KernelError(
            fmt::format("reshape: shape {} has more than one -1", ShapeToString(shape)));
      }
      infer = static_cast<int>(i);
      continue;
    }
    if (shape[i] < -1) {
      return KernelError(
          fmt::format("reshape: shape {} has dim {} (only -1, to infer, may be "
                      "negative)",
                      ShapeToString(shape), shape[i]));
    }
    if (shape[i] == 0) {
      if (static_cast<int>(i) >= x.rank()) {
        return KernelError(fmt::format("reshape: shape {} copies dim {} of x {}, which has {} dims",
                                       ShapeToString(shape), i, x.Describe(), x.rank()));
      }
      out[i] = x.dim(static_cast<int>(i));
    }
    known *= out[i];
  }
  if (infer >= 0) {
    if (known == 0) {
      return KernelError(
          fmt::format("reshape: cannot infer the -1 of {} for x {}: the other dims "
                      "multiply to 0",
                      ShapeToString(shape), x.Describe()));
    }
    if (x.numel() % known != 0) {
      return KernelError(
          fmt::format("reshape: cannot reshape x {} ({} elements) to {}: {} is not "
                      "a multiple of {}",
                      x.Describe(), x.numel(), ShapeToString(shape), x.numel(), known));
    }
    out[static_cast<size_t>(infer)] = x.numel() / known;
  } else if (known != x.numel()) {
    return KernelError(fmt::format("reshape: cannot reshape x {} ({} elements) to {} ({} elements)",
                                   x.Describe(), x.numel(), ShapeToString(shape), known));
  }
  return out;
}

// perm as indices in [0, rank), or an error when it is not a permutation of t's dims.
StatusOr<std::vector<int>> Permutation(const std::vector<int64_t>& perm, const Operand& t,
                                       std::string_view kernel, std::string_view operand) {
  const int rank = t.rank();
  std::vector<int> p;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool ok = static_cast<int>(perm.size()) == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    const int64_t a = perm[i] < 0 ? perm[i] + rank : perm[i];
    ok = a >= 0 && a < rank && !seen[static_cast<size_t>(a)];
    if (ok) seen[static_cast<size_t>(a)] = true;
    p.push_back(static_cast<int>(a));
  }
  if (!ok) {
    return KernelError(fmt::format("{}: perm {} is not a permutation of the {} dims of {} {}",
                                   kernel, ShapeToString(perm), rank, operand, t.Describe()));
  }
  return p;
}

// Every piece present: "<kernel>: x[i] is missing" for the first one that is not.
Status CheckPiecesPresent(const std::vector<Operand>& pieces, std::string_view kernel) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].present()) return KernelError(fmt::format("{}: x[{}] is missing", kernel, i));
  }
  return Status::Ok();
}

// The pieces joined along `axis`: checks the ranks and the dims off the axis, and returns the
// joined shape. `kernel` words the errors.
StatusOr<std::vector<int64_t>> JoinedShape(const std::vector<Operand>& pieces, int64_t axis,
                                           std::string_view kernel, int* normalized_axis) {
  const Operand& first = pieces[0];
  if (first.rank() == 0) {
    return KernelError(
        fmt::format("{}: x[0] {} is 0-D and has no axis to join", kernel, first.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(*normalized_axis, NormalizeAxis(axis, first, kernel, "axis", "x[0]"));
  const size_t a = static_cast<size_t>(*normalized_axis);
  std::vector<int64_t> shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Operand& piece = pieces[i];
    bool match = piece.rank() == first.rank();
    for (size_t k = 0; match && k < shape.size(); ++k) {
      match = k == a || piece.shape()[k] == first.shape()[k];
    }
    if (!match) {
      return KernelError(fmt::format("{}: x[{}] {} does not match x[0] {} outside axis {}", kernel,
                                     i, piece.Describe(), first.Describe(), a));
    }
    shape[a] += piece.shape()[a];
  }
  return shape;
}

// Where each of `shapes`, laid one after another along `axis`, starts.
std::vector<std::vector<int64_t>> StartsAlong(int axis,
                                              const std::vector<std::vector<int64_t>>& shapes,
                                              size_t rank) {
  std::vector<std::vector<int64_t>> starts;
  std::vector<int64_t> start(rank, 0);
  for (const std::vector<int64_t>& shape : shapes) {
    starts.push_back(start);
    start[static_cast<size_t>(axis)] += shape[static_cast<size_t>(axis)];
  }
  return starts;
}

// x cut along axis a into pieces of `sizes`.
CutPlan CutInto(const Operand& x, int a, const std::vector<int64_t>& sizes) {
  CutPlan plan;
  plan.axis = a;
  plan.shapes.assign(sizes.size(), x.shape());
  for (size_t i = 0; i < sizes.size(); ++i) plan.shapes[i][static_cast<size_t>(a)] = sizes[i];
  plan.starts = StartsAlong(a, plan.shapes, x.shape().size());
  return plan;
}

}  // namespace

StatusOr<std::vector<int64_t>> PlanReshape(const Operand& x, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, attrs.Get<std::vector<int64_t>>("shape"));
  return ReshapeTarget(x, shape);
}

std::vector<int64_t> XShapeCarrier(const std::vector<int64_t>& x_shape) {
  std::vector<int64_t> xshape = {0};
  xshape.insert(xshape.end(), x_shape.begin(), x_shape.end());
  return xshape;
}

StatusOr<std::vector<int64_t>> PlanReshapeGrad(const Operand& xshape, const Operand& out_grad) {
  if (xshape.rank() == 0 || xshape.dim(0) != 0) {
    return KernelError(fmt::format("reshape_grad: xshape {} is not a shape carrier [0, x dims...]",
                                   xshape.Describe()));
  }
  std::vector<int64_t> x_shape(xshape.shape().begin() + 1, xshape.shape().end());
  if (data::Numel(x_shape) != out_grad.numel()) {
    return KernelError(fmt::format(
        "reshape_grad: out_grad {} has {} elements, x has {} (xshape {})", out_grad.Describe(),
        out_grad.numel(), data::Numel(x_shape), xshape.Describe()));
  }
  return x_shape;
}

StatusOr<std::vector<int>> PlanTranspose(const Operand& x, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.Get<std::vector<int64_t>>("perm"));
  return Permutation(perm, x, "transpose", "x");
}

StatusOr<std::vector<int>> PlanTransposeGrad(const Operand& out_grad, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attrs.Get<std::vector<int64_t>>("perm"));
  IRM_ASSIGN_OR_RETURN(std::vector<int> p,
                       Permutation(perm, out_grad, "transpose_grad", "out_grad"));
  std::vector<int> inverse(p.size());
  for (size_t k = 0; k < p.size(); ++k) inverse[static_cast<size_t>(p[k])] = static_cast<int>(k);
  return inverse;
}

StatusOr<ConcatPlan> PlanConcat(const std::vector<Operand>& xs, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(attrs, "axis"));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].present()) return KernelError(fmt::format("concat: x[{}] is missing", i));
    if (xs[i].dtype() != xs[0].dtype()) {
      return KernelError(fmt::format("concat: x[{}] is {}, x[0] is {}", i, DTypeName(xs[i].dtype()),
                                     DTypeName(xs[0].dtype())));
    }
  }
  ConcatPlan plan;
  IRM_ASSIGN_OR_RETURN(plan.shape, JoinedShape(xs, axis, "concat", &plan.axis));
  std::vector<std::vector<int64_t>> shapes;
  for (const Operand& x : xs) shapes.push_back(x.shape());
  plan.starts = StartsAlong(plan.axis, shapes, plan.shape.size());
  return plan;
}

StatusOr<CutPlan> PlanConcatGrad(const std::vector<Operand>& xs, const Operand& out_grad,
                                 const KernelAttrs& attrs, size_t num_outputs) {
  const size_t n = xs.size();
  if (num_outputs != n) {
    return KernelError(fmt::format("concat_grad: {} inputs x need {} x_grad outputs, {} were given",
                                   n, n, num_outputs));
  }
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(attrs, "axis"));
  IRM_RETURN_IF_ERROR(CheckPiecesPresent(xs, "concat_grad"));
  CutPlan plan;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                       JoinedShape(xs, axis, "concat_grad", &plan.axis));
  if (out_grad.shape() != shape) {
    return KernelError(
        fmt::format("concat_grad: out_grad {} is not the concatenation of x along "
                    "axis {} ({})",
                    out_grad.Describe(), plan.axis, ShapeToString(shape)));
  }
  for (const Operand& x : xs) plan.shapes.push_back(x.shape());
  plan.starts = StartsAlong(plan.axis, plan.shapes, shape.size());
  return plan;
}

StatusOr<CutPlan> PlanSplit(const Operand& x, const KernelAttrs& attrs, size_t num_outputs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> sections, attrs.Get<std::vector<int64_t>>("sections"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, x, "split", "axis", "x"));
  if (num_outputs != sections.size()) {
    return KernelError(fmt::format("split: {} sections {} need {} outputs, {} were given",
                                   sections.size(), ShapeToString(sections), sections.size(),
                                   num_outputs));
  }
  const int64_t dim = x.dim(a);
  int64_t known = 0;
  int infer = -1;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i] == -1 && infer < 0) {
      infer = static_cast<int>(i);
    } else if (sections[i] == -1) {
      return KernelError(
          fmt::format("split: sections {} have more than one -1", ShapeToString(sections)));
    } else if (sections[i] < 0) {
      return KernelError(fmt::format("split: sections {} have a negative section {}",
                                     ShapeToString(sections), sections[i]));
    } else {
      known += sections[i];
    }
  }
  if (infer >= 0 && known > dim) {
    return KernelError(
        fmt::format("split: sections {} sum to {} without the -1, more than the {} "
                    "of axis {} of x {}",
                    ShapeToString(sections), known, dim, a, x.Describe()));
  }
  if (infer >= 0) {
    sections[static_cast<size_t>(infer)] = dim - known;
  } else if (known != dim) {
    return KernelError(fmt::format("split: sections {} sum to {}, but axis {} of x {} has {}",
                                   ShapeToString(sections), known, a, x.Describe(), dim));
  }
  return CutInto(x, a, sections);
}

StatusOr<CutPlan> PlanSplitWithNum(const Operand& x, const KernelAttrs& attrs, size_t num_outputs) {
  IRM_ASSIGN_OR_RETURN(int64_t num, data::IntScalarAttr(attrs, "num"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, x, "split_with_num", "axis", "x"));
  if (num < 1) {
    return KernelError(fmt::format("split_with_num: num is {}, it must be at least 1", num));
  }
  if (x.dim(a) % num != 0) {
    return KernelError(
        fmt::format("split_with_num: axis {} of x {} has {}, not divisible by num {}", a,
                    x.Describe(), x.dim(a), num));
  }
  if (num_outputs != static_cast<size_t>(num)) {
    return KernelError(fmt::format("split_with_num: num {} needs {} outputs, {} were given", num,
                                   num, num_outputs));
  }
  return CutInto(x, a, std::vector<int64_t>(static_cast<size_t>(num), x.dim(a) / num));
}

StatusOr<SliceBox> PlanSlice(const Operand& input, const KernelAttrs& attrs,
                             std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrs.Get<std::vector<int64_t>>("axes"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> starts, attrs.Get<std::vector<int64_t>>("starts"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> ends, attrs.Get<std::vector<int64_t>>("ends"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> decrease,
                       attrs.GetOr<std::vector<int64_t>>("decrease_axis", {}));
  if (starts.size() != axes.size() || ends.size() != axes.size()) {
    return KernelError(fmt::format("{}: axes {}, starts {} and ends {} differ in length", kernel,
                                   ShapeToString(axes), ShapeToString(starts),
                                   ShapeToString(ends)));
  }
  SliceBox box;
  box.start.assign(static_cast<size_t>(input.rank()), 0);
  box.extent = input.shape();
  std::vector<bool> sliced(static_cast<size_t>(input.rank()), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(axes[i], input, kernel, "axis", "input"));
    const size_t k = static_cast<size_t>(a);
    if (sliced[k]) {
      return KernelError(
          fmt::format("{}: axis {} appears twice in axes {}", kernel, a, ShapeToString(axes)));
    }
    sliced[k] = true;
    const int64_t dim = input.dim(a);
    const int64_t start = std::clamp(starts[i] < 0 ? starts[i] + dim : starts[i], int64_t{0}, dim);
    const int64_t end = std::clamp(ends[i] < 0 ? ends[i] + dim : ends[i], int64_t{0}, dim);
    box.start[k] = start;
    box.extent[k] = std::max<int64_t>(end - start, 0);
  }
  std::vector<bool> removed(static_cast<size_t>(input.rank()), false);
  for (int64_t d : decrease) {
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxis(d, input, kernel, "decrease_axis", "input"));
    const size_t k = static_cast<size_t>(a);
    if (removed[k]) {
      return KernelError(fmt::format("{}: axis {} appears twice in decrease_axis {}", kernel, a,
                                     ShapeToString(decrease)));
    }
    if (box.extent[k] != 1) {
      return KernelError(
          fmt::format("{}: decrease_axis {} cannot be removed: the slice has {} "
                      "elements there, not 1",
                      kernel, a, box.extent[k]));
    }
    removed[k] = true;
  }
  for (size_t k = 0; k < removed.size(); ++k) {
    if (!removed[k]) box.out_shape.push_back(box.extent[k]);
  }
  return box;
}

Status CheckSliceGradShape(const SliceBox& box, const Operand& out_grad) {
  if (out_grad.shape() == box.out_shape || out_grad.shape() == box.extent) return Status::Ok();
  return KernelError(fmt::format("slice_grad: out_grad {} does not have the slice's shape {}",
                                 out_grad.Describe(), ShapeToString(box.out_shape)));
}

}  // namespace irm::rt::plan
