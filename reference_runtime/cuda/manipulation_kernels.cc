// The CUDA manipulation family, host side: reshape (with Paddle's xshape carrier) and its grad,
// transpose and its grad, concat, split, split_with_num, slice and their grads, assign, with the
// CPU kernels' names, signatures, attributes, dtypes and errors (kernels/manipulation.cc,
// kernels/indexing.cc). reshape's output shares x's device storage (no copy): device kernels never
// write into their inputs, so a view is as good as the CPU's copy. The rest are strided gathers
// and scatters of boxes (layout.cu).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/data_kernels.h"

namespace irm::rt::cuda {
namespace {

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The target shape by Paddle's rules: 0 copies x's dim at the same index, one -1 takes what is
// left; the element count must be x's.
StatusOr<std::vector<int64_t>> ReshapeTarget(const DeviceTensor& x,
                                             const std::vector<int64_t>& shape) {
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
      out[i] = x.shape()[i];
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

// reshape(x; shape) -> out, xshape (x's dtype, shape [0, x dims...], no element).
Status RunReshape(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReshapeTarget(x, shape));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, x.Reshaped(std::move(target)));
  call.SetOutput(0, std::move(out));
  if (call.wants_output(1)) {
    std::vector<int64_t> xshape = {0};
    xshape.insert(xshape.end(), x.shape().begin(), x.shape().end());
    IRM_ASSIGN_OR_RETURN(DeviceTensor carrier,
                         DeviceTensor::Uninitialized(x.dtype(), std::move(xshape), "reshape"));
    call.SetOutput(1, std::move(carrier));
  }
  return Status::Ok();
}

// reshape_grad(xshape, out_grad) -> x_grad: out_grad's elements under x's shape.
Status RunReshapeGrad(CudaKernelCall& call) {
  const DeviceTensor& xshape = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  if (xshape.rank() == 0 || xshape.shape()[0] != 0) {
    return KernelError(fmt::format("reshape_grad: xshape {} is not a shape carrier [0, x dims...]",
                                   xshape.Describe()));
  }
  std::vector<int64_t> x_shape(xshape.shape().begin() + 1, xshape.shape().end());
  if (Numel(x_shape) != out_grad.numel()) {
    return KernelError(
        fmt::format("reshape_grad: out_grad {} has {} elements, x has {} (xshape {})",
                    out_grad.Describe(), out_grad.numel(), Numel(x_shape), xshape.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, out_grad.Reshaped(std::move(x_shape)));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// perm as indices in [0, rank) (negative ones count from the end).
StatusOr<std::vector<int>> Permutation(const std::vector<int64_t>& perm, const DeviceTensor& t,
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

// out.dim(k) = x.dim(perm[k]); out element i reads x at the offset of its permuted index.
StatusOr<DeviceTensor> Transposed(const DeviceTensor& x, const std::vector<int>& perm,
                                  std::string_view kernel) {
  const std::vector<int64_t> x_strides = ContiguousStrides(x.shape());
  std::vector<int64_t> out_shape(perm.size());
  Walk walk;
  for (size_t k = 0; k < perm.size(); ++k) {
    out_shape[k] = x.shape()[static_cast<size_t>(perm[k])];
    if (out_shape[k] == 1) continue;  // never moves the offset
    if (walk.rank == kMaxDims) {
      return KernelError(fmt::format("gpu {}: more than {} dims", kernel, kMaxDims));
    }
    walk.dims[walk.rank] = out_shape[k];
    walk.strides[walk.rank] = x_strides[static_cast<size_t>(perm[k])];
    ++walk.rank;
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, DeviceTensor::Uninitialized(x.dtype(), out_shape, kernel));
  IRM_RETURN_IF_ERROR(LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(x.dtype())), x.numel(),
                                                walk, 0, x.raw(), out.raw(), Stream()),
                                   kernel));
  return out;
}

Status RunTranspose(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, call.attrs.Get<std::vector<int64_t>>("perm"));
  IRM_ASSIGN_OR_RETURN(std::vector<int> p, Permutation(perm, x, "transpose", "x"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, Transposed(x, p, "transpose"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// transpose_grad(out_grad; perm) -> x_grad: out_grad transposed by the inverse permutation.
Status RunTransposeGrad(CudaKernelCall& call) {
  const DeviceTensor& out_grad = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, call.attrs.Get<std::vector<int64_t>>("perm"));
  IRM_ASSIGN_OR_RETURN(std::vector<int> p,
                       Permutation(perm, out_grad, "transpose_grad", "out_grad"));
  std::vector<int> inverse(p.size());
  for (size_t k = 0; k < p.size(); ++k) inverse[static_cast<size_t>(p[k])] = static_cast<int>(k);
  IRM_ASSIGN_OR_RETURN(DeviceTensor x_grad, Transposed(out_grad, inverse, "transpose_grad"));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- boxes: concat, split, slice and their grads
// ---------------------------------------------------

// The walk over the box `extent` of a contiguous tensor of `shape` from `start`: its offset base
// and the strides of the box's dims (size-1 dims dropped: they never move the offset).
StatusOr<Walk> BoxWalk(const std::vector<int64_t>& shape, const std::vector<int64_t>& start,
                       const std::vector<int64_t>& extent, int64_t* base, std::string_view kernel) {
  const std::vector<int64_t> strides = ContiguousStrides(shape);
  Walk walk;
  *base = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    *base += start[d] * strides[d];
    if (extent[d] == 1) continue;
    if (walk.rank == kMaxDims) {
      return KernelError(fmt::format("gpu {}: more than {} dims", kernel, kMaxDims));
    }
    walk.dims[walk.rank] = extent[d];
    walk.strides[walk.rank] = strides[d];
    ++walk.rank;
  }
  return walk;
}

// A new tensor of shape `out_shape` holding the box [start, start + extent) of `src`.
StatusOr<DeviceTensor> GatherBox(const DeviceTensor& src, const std::vector<int64_t>& start,
                                 const std::vector<int64_t>& extent, std::vector<int64_t> out_shape,
                                 std::string_view kernel) {
  int64_t base = 0;
  IRM_ASSIGN_OR_RETURN(Walk walk, BoxWalk(src.shape(), start, extent, &base, kernel));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(src.dtype(), std::move(out_shape), kernel));
  IRM_RETURN_IF_ERROR(
      LaunchStatus(LaunchGather(static_cast<int>(DTypeSize(src.dtype())), out.numel(), walk, base,
                                src.raw(), out.raw(), Stream()),
                   kernel));
  return out;
}

// Writes the contiguous `piece` (of shape `extent`) into the box of `dst` from `start`.
Status ScatterBox(const DeviceTensor& piece, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& extent, DeviceTensor& dst, std::string_view kernel) {
  int64_t base = 0;
  IRM_ASSIGN_OR_RETURN(Walk walk, BoxWalk(dst.shape(), start, extent, &base, kernel));
  return LaunchStatus(LaunchScatter(static_cast<int>(DTypeSize(dst.dtype())), piece.numel(), walk,
                                    base, piece.raw(), dst.raw(), Stream()),
                      kernel);
}

// `axis` in [-rank, rank), as data::NormalizeAxis words it.
StatusOr<int> NormalizeAxisOf(int64_t axis, const DeviceTensor& t, std::string_view kernel,
                              std::string_view what, std::string_view operand) {
  const int64_t rank = t.rank();
  if (axis < -rank || axis >= rank) {
    return KernelError(fmt::format("{}: {} {} is out of range for {} {}", kernel, what, axis,
                                   operand, t.Describe()));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The pieces joined along `axis`: checks ranks and the dims off the axis; the joined shape.
StatusOr<std::vector<int64_t>> JoinedShape(const std::vector<const DeviceTensor*>& pieces,
                                           int64_t axis, std::string_view kernel, int* a_out) {
  const DeviceTensor& first = *pieces[0];
  if (first.rank() == 0) {
    return KernelError(
        fmt::format("{}: x[0] {} is 0-D and has no axis to join", kernel, first.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(*a_out, NormalizeAxisOf(axis, first, kernel, "axis", "x[0]"));
  const size_t a = static_cast<size_t>(*a_out);
  std::vector<int64_t> shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const DeviceTensor& piece = *pieces[i];
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

// concat(x...; axis) -> out.
Status RunConcat(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    if (!call.has_input(i)) return KernelError(fmt::format("concat: x[{}] is missing", i));
    if (call.input(i).dtype() != call.input(0).dtype()) {
      return KernelError(fmt::format("concat: x[{}] is {}, x[0] is {}", i,
                                     DTypeName(call.input(i).dtype()),
                                     DTypeName(call.input(0).dtype())));
    }
  }
  int a = 0;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, JoinedShape(call.inputs, axis, "concat", &a));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(call.input(0).dtype(), shape, "concat"));
  std::vector<int64_t> start(shape.size(), 0);
  for (const DeviceTensor* x : call.inputs) {
    IRM_RETURN_IF_ERROR(ScatterBox(*x, start, x->shape(), out, "concat"));
    start[static_cast<size_t>(a)] += x->shape()[static_cast<size_t>(a)];
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Cuts `whole` along `axis` into pieces of `shapes`, piece i to output i.
Status Cut(CudaKernelCall& call, const DeviceTensor& whole, int axis,
           const std::vector<std::vector<int64_t>>& shapes, std::string_view kernel) {
  std::vector<int64_t> start(static_cast<size_t>(whole.rank()), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (call.wants_output(i)) {
      IRM_ASSIGN_OR_RETURN(DeviceTensor piece,
                           GatherBox(whole, start, shapes[i], shapes[i], kernel));
      call.SetOutput(i, std::move(piece));
    }
    start[static_cast<size_t>(axis)] += shapes[i][static_cast<size_t>(axis)];
  }
  return Status::Ok();
}

// concat_grad(x..., out_grad; axis) -> x_grad...
Status RunConcatGrad(CudaKernelCall& call) {
  const size_t n = call.num_inputs() - 1;
  const DeviceTensor& out_grad = call.input(n);
  if (call.outputs.size() != n) {
    return KernelError(fmt::format("concat_grad: {} inputs x need {} x_grad outputs, {} were given",
                                   n, n, call.outputs.size()));
  }
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  std::vector<const DeviceTensor*> xs(call.inputs.begin(), call.inputs.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    if (xs[i] == nullptr) return KernelError(fmt::format("concat_grad: x[{}] is missing", i));
  }
  int a = 0;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, JoinedShape(xs, axis, "concat_grad", &a));
  if (out_grad.shape() != shape) {
    return KernelError(
        fmt::format("concat_grad: out_grad {} is not the concatenation of x along "
                    "axis {} ({})",
                    out_grad.Describe(), a, ShapeToString(shape)));
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const DeviceTensor* x : xs) shapes.push_back(x->shape());
  return Cut(call, out_grad, a, shapes, "concat_grad");
}

std::vector<std::vector<int64_t>> PieceShapes(const DeviceTensor& x, int a,
                                              const std::vector<int64_t>& sizes) {
  std::vector<std::vector<int64_t>> shapes(sizes.size(), x.shape());
  for (size_t i = 0; i < sizes.size(); ++i) shapes[i][static_cast<size_t>(a)] = sizes[i];
  return shapes;
}

// split(x; sections, axis) -> out...; one section may be -1 (the rest).
Status RunSplit(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> sections,
                       call.attrs.Get<std::vector<int64_t>>("sections"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, NormalizeAxisOf(axis, x, "split", "axis", "x"));
  if (call.outputs.size() != sections.size()) {
    return KernelError(fmt::format("split: {} sections {} need {} outputs, {} were given",
                                   sections.size(), ShapeToString(sections), sections.size(),
                                   call.outputs.size()));
  }
  const int64_t dim = x.shape()[static_cast<size_t>(a)];
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
  return Cut(call, x, a, PieceShapes(x, a, sections), "split");
}

// split_with_num(x; num, axis) -> out...: num equal pieces.
Status RunSplitWithNum(CudaKernelCall& call) {
  const DeviceTensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(int64_t num, data::IntScalarAttr(call.attrs, "num"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, NormalizeAxisOf(axis, x, "split_with_num", "axis", "x"));
  if (num < 1) {
    return KernelError(fmt::format("split_with_num: num is {}, it must be at least 1", num));
  }
  const int64_t dim = x.shape()[static_cast<size_t>(a)];
  if (dim % num != 0) {
    return KernelError(
        fmt::format("split_with_num: axis {} of x {} has {}, not divisible by num {}", a,
                    x.Describe(), dim, num));
  }
  if (call.outputs.size() != static_cast<size_t>(num)) {
    return KernelError(fmt::format("split_with_num: num {} needs {} outputs, {} were given", num,
                                   num, call.outputs.size()));
  }
  const std::vector<int64_t> sizes(static_cast<size_t>(num), dim / num);
  return Cut(call, x, a, PieceShapes(x, a, sizes), "split_with_num");
}

// The box of a slice by Paddle's rules (kernels/indexing.cc, SliceBoxOf): negative starts and
// ends count from the end, both clamp to [0, dim]; decrease_axis drops size-1 dims.
struct SliceBox {
  std::vector<int64_t> start, extent, out_shape;
};
StatusOr<SliceBox> SliceBoxOf(const DeviceTensor& input, const KernelAttrs& attrs,
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
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxisOf(axes[i], input, kernel, "axis", "input"));
    const size_t k = static_cast<size_t>(a);
    if (sliced[k]) {
      return KernelError(
          fmt::format("{}: axis {} appears twice in axes {}", kernel, a, ShapeToString(axes)));
    }
    sliced[k] = true;
    const int64_t dim = input.shape()[k];
    const int64_t start = std::clamp(starts[i] < 0 ? starts[i] + dim : starts[i], int64_t{0}, dim);
    const int64_t end = std::clamp(ends[i] < 0 ? ends[i] + dim : ends[i], int64_t{0}, dim);
    box.start[k] = start;
    box.extent[k] = std::max<int64_t>(end - start, 0);
  }
  std::vector<bool> removed(static_cast<size_t>(input.rank()), false);
  for (int64_t d : decrease) {
    IRM_ASSIGN_OR_RETURN(int a, NormalizeAxisOf(d, input, kernel, "decrease_axis", "input"));
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
  for (size_t k = 0; k < box.extent.size(); ++k) {
    if (!removed[k]) box.out_shape.push_back(box.extent[k]);
  }
  return box;
}

// slice(input; axes, starts, ends, decrease_axis) -> out.
Status RunSlice(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  IRM_ASSIGN_OR_RETURN(SliceBox box, SliceBoxOf(input, call.attrs, "slice"));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       GatherBox(input, box.start, box.extent, box.out_shape, "slice"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// slice_grad(input, out_grad; same attributes) -> zeros of input's shape with out_grad in the box.
Status RunSliceGrad(CudaKernelCall& call) {
  const DeviceTensor& input = call.input(0);
  const DeviceTensor& out_grad = call.input(1);
  IRM_ASSIGN_OR_RETURN(SliceBox box, SliceBoxOf(input, call.attrs, "slice_grad"));
  if (out_grad.shape() != box.out_shape && out_grad.shape() != box.extent) {
    return KernelError(fmt::format("slice_grad: out_grad {} does not have the slice's shape {}",
                                   out_grad.Describe(), ShapeToString(box.out_shape)));
  }
  IRM_ASSIGN_OR_RETURN(DeviceTensor input_grad,
                       DeviceTensor::Zeros(out_grad.dtype(), input.shape(), "slice_grad"));
  IRM_RETURN_IF_ERROR(ScatterBox(out_grad, box.start, box.extent, input_grad, "slice_grad"));
  call.SetOutput(0, std::move(input_grad));
  return Status::Ok();
}

// assign(x) -> a copy of x.
Status RunAssign(CudaKernelCall& call) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor out, CopyOf(call.input(0), "assign"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterCudaManipulationKernels(CudaKernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "reshape", kCudaEvery, &RunReshape, {1, 1, 2}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "reshape_grad", kCudaEvery, &RunReshapeGrad, {2, 2, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "transpose", kCudaEvery, &RunTranspose, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "transpose_grad", kCudaEvery, &RunTransposeGrad, {1, 1, 1}));
  constexpr size_t kAny = KernelSignature::kVariadic;
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "concat", kCudaEvery, &RunConcat, {1, kAny, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "concat_grad", kCudaEvery, &RunConcatGrad, {2, kAny, kAny}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "split", kCudaEvery, &RunSplit, {1, 1, kAny}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "split_with_num", kCudaEvery, &RunSplitWithNum, {1, 1, kAny}));
  IRM_RETURN_IF_ERROR(RegisterForDTypes(registry, "slice", kCudaEvery, &RunSlice, {1, 1, 1}));
  IRM_RETURN_IF_ERROR(
      RegisterForDTypes(registry, "slice_grad", kCudaEvery, &RunSliceGrad, {2, 2, 1}));
  return RegisterForDTypes(registry, "assign", kCudaEvery, &RunAssign, {1, 1, 1});
}

}  // namespace irm::rt::cuda
