// Shape kernels: reshape (with Paddle's xshape carrier) and its grad, transpose and its grad,
// concat, concat_grad, split, split_with_num, assign (and assign_out), share_data and add_n.
// Except add_n they only move bytes, so one function serves every runtime dtype; the registry key
// is the dtype of the data input (x, or out_grad for the grads). Outputs get fresh storage except
// share_data's, whose point is to share.
#include <cstring>
#include <numeric>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using data::MakeOutput;
using data::Numel;

// ---- reshape -----------------------------------------------------------------------------------

// The target shape by Paddle's rules: 0 copies x's dim at the same index, one -1 takes what is
// left; the element count must be x's.
StatusOr<std::vector<int64_t>> ReshapeTarget(const Tensor& x, const std::vector<int64_t>& shape) {
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

// reshape(x; shape) -> out, xshape. xshape carries x's shape for reshape_grad as Paddle's does:
// a tensor of x's dtype and shape [0, x dims...], holding no element.
Status Reshape(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, call.attrs.Get<std::vector<int64_t>>("shape"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReshapeTarget(x, shape));
  IRM_ASSIGN_OR_RETURN(Tensor out, x.Clone().Reshaped(std::move(target)));
  call.SetOutput(0, std::move(out));
  std::vector<int64_t> xshape = {0};
  xshape.insert(xshape.end(), x.shape().begin(), x.shape().end());
  call.SetOutput(1, Tensor::ZerosUnchecked(x.dtype(), std::move(xshape)));
  return Status::Ok();
}

// reshape_grad(xshape, out_grad) -> x_grad: out_grad's elements under x's shape.
Status ReshapeGrad(KernelCall& call) {
  const Tensor& xshape = call.input(0);
  const Tensor& out_grad = call.input(1);
  if (xshape.rank() == 0 || xshape.dim(0) != 0) {
    return KernelError(fmt::format("reshape_grad: xshape {} is not a shape carrier [0, x dims...]",
                                   xshape.Describe()));
  }
  std::vector<int64_t> x_shape(xshape.shape().begin() + 1, xshape.shape().end());
  if (Numel(x_shape) != out_grad.numel()) {
    return KernelError(
        fmt::format("reshape_grad: out_grad {} has {} elements, x has {} (xshape {})",
                    out_grad.Describe(), out_grad.numel(), Numel(x_shape), xshape.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(Tensor x_grad, out_grad.Clone().Reshaped(std::move(x_shape)));
  call.SetOutput(0, std::move(x_grad));
  return Status::Ok();
}

// ---- transpose ---------------------------------------------------------------------------------

// perm as indices in [0, rank) (negative ones count from the end, as Paddle allows), or an error
// when it is not a permutation of t's dims.
StatusOr<std::vector<int>> Permutation(const std::vector<int64_t>& perm, const Tensor& t,
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

// out[i_0, ..., i_{r-1}] = x[j] where j[perm[k]] = i_k. Word is an unsigned type of the element
// size: the copy needs the bytes, not the type.
template <typename Word>
void TransposeWords(const Word* x, const std::vector<int64_t>& x_shape,
                    const std::vector<int>& perm, Word* out,
                    const std::vector<int64_t>& out_shape) {
  const size_t rank = perm.size();
  const int64_t n = Numel(out_shape);
  if (n == 0) return;
  if (rank == 0) {
    out[0] = x[0];
    return;
  }
  std::vector<int64_t> x_stride(rank, 1);
  for (size_t k = rank - 1; k > 0; --k) x_stride[k - 1] = x_stride[k] * x_shape[k];
  // Strides in x of a step along each out dim.
  std::vector<int64_t> step(rank);
  for (size_t k = 0; k < rank; ++k) step[k] = x_stride[static_cast<size_t>(perm[k])];
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_step = step[rank - 1];
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < n; o += inner) {
    int64_t src = 0;
    for (size_t k = 0; k + 1 < rank; ++k) src += index[k] * step[k];
    for (int64_t j = 0; j < inner; ++j) out[o + j] = x[src + j * inner_step];
    for (size_t k = rank - 1; k > 0;) {
      --k;
      if (++index[k] < out_shape[k]) break;
      index[k] = 0;
    }
  }
}

Tensor TransposeTensor(const Tensor& x, const std::vector<int>& perm) {
  std::vector<int64_t> out_shape;
  for (int p : perm) out_shape.push_back(x.dim(p));
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), out_shape);
  switch (DTypeSize(x.dtype())) {
    case 1:
      TransposeWords(x.data<uint8_t>(), x.shape(), perm, out.data<uint8_t>(), out_shape);
      break;
    case 2:
      TransposeWords(x.data<uint16_t>(), x.shape(), perm, out.data<uint16_t>(), out_shape);
      break;
    case 4:
      TransposeWords(x.data<uint32_t>(), x.shape(), perm, out.data<uint32_t>(), out_shape);
      break;
    default:
      TransposeWords(x.data<uint64_t>(), x.shape(), perm, out.data<uint64_t>(), out_shape);
      break;
  }
  return out;
}

// transpose(x; perm) -> out with out.dim(k) = x.dim(perm[k]).
Status Transpose(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, call.attrs.Get<std::vector<int64_t>>("perm"));
  IRM_ASSIGN_OR_RETURN(std::vector<int> p, Permutation(perm, x, "transpose", "x"));
  call.SetOutput(0, TransposeTensor(x, p));
  return Status::Ok();
}

// transpose_grad(out_grad; perm) -> x_grad: out_grad transposed by the inverse permutation.
Status TransposeGrad(KernelCall& call) {
  const Tensor& out_grad = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> perm, call.attrs.Get<std::vector<int64_t>>("perm"));
  IRM_ASSIGN_OR_RETURN(std::vector<int> p,
                       Permutation(perm, out_grad, "transpose_grad", "out_grad"));
  std::vector<int> inverse(p.size());
  for (size_t k = 0; k < p.size(); ++k) inverse[static_cast<size_t>(p[k])] = static_cast<int>(k);
  call.SetOutput(0, TransposeTensor(out_grad, inverse));
  return Status::Ok();
}

// ---- concat and split
// ----------------------------------------------------------------------------

// The pieces x[0..n) joined along `axis`: checks dtypes, ranks and the dims off the axis, and
// returns the joined shape. `kernel` and `operand` word the errors.
StatusOr<std::vector<int64_t>> JoinedShape(const std::vector<const Tensor*>& pieces, int64_t axis,
                                           std::string_view kernel, int* normalized_axis) {
  const Tensor& first = *pieces[0];
  if (first.rank() == 0) {
    return KernelError(
        fmt::format("{}: x[0] {} is 0-D and has no axis to join", kernel, first.Describe()));
  }
  IRM_ASSIGN_OR_RETURN(*normalized_axis, data::NormalizeAxis(axis, first, kernel, "axis", "x[0]"));
  const size_t a = static_cast<size_t>(*normalized_axis);
  std::vector<int64_t> shape = first.shape();
  shape[a] = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Tensor& piece = *pieces[i];
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

// concat(x...; axis) -> out. Inputs must share x[0]'s dtype (the registry key).
Status Concat(KernelCall& call) {
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  for (size_t i = 1; i < call.num_inputs(); ++i) {
    if (call.input(i).dtype() != call.input(0).dtype()) {
      return KernelError(fmt::format("concat: x[{}] is {}, x[0] is {}", i,
                                     DTypeName(call.input(i).dtype()),
                                     DTypeName(call.input(0).dtype())));
    }
  }
  int a = 0;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, JoinedShape(call.inputs, axis, "concat", &a));
  IRM_ASSIGN_OR_RETURN(Tensor out, MakeOutput("concat", call.input(0).dtype(), shape));
  const size_t item = DTypeSize(out.dtype());
  std::vector<int64_t> dst_start(shape.size(), 0);
  for (const Tensor* x : call.inputs) {
    data::CopyBox(static_cast<const std::byte*>(x->raw()), x->shape(),
                  std::vector<int64_t>(shape.size(), 0), static_cast<std::byte*>(out.raw()), shape,
                  dst_start, x->shape(), item);
    dst_start[static_cast<size_t>(a)] += x->dim(a);
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Cuts `whole` along `axis` into pieces of the given shapes (their dims off the axis are whole's)
// and hands piece i to output i.
Status Cut(KernelCall& call, const Tensor& whole, int axis,
           const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> src_start(static_cast<size_t>(whole.rank()), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (call.wants_output(i)) {
      Tensor piece = Tensor::ZerosUnchecked(whole.dtype(), shapes[i]);
      data::CopyBox(static_cast<const std::byte*>(whole.raw()), whole.shape(), src_start,
                    static_cast<std::byte*>(piece.raw()), shapes[i],
                    std::vector<int64_t>(shapes[i].size(), 0), shapes[i], DTypeSize(whole.dtype()));
      call.SetOutput(i, std::move(piece));
    }
    src_start[static_cast<size_t>(axis)] += shapes[i][static_cast<size_t>(axis)];
  }
  return Status::Ok();
}

// concat_grad(x..., out_grad; axis) -> x_grad...: out_grad cut back into x's shapes. The registry
// key is out_grad's dtype; the x only give their shapes.
Status ConcatGrad(KernelCall& call) {
  const size_t n = call.num_inputs() - 1;
  const Tensor& out_grad = call.input(n);
  if (call.outputs.size() != n) {
    return KernelError(fmt::format("concat_grad: {} inputs x need {} x_grad outputs, {} were given",
                                   n, n, call.outputs.size()));
  }
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  const std::vector<const Tensor*> xs(call.inputs.begin(), call.inputs.end() - 1);
  int a = 0;
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, JoinedShape(xs, axis, "concat_grad", &a));
  if (out_grad.shape() != shape) {
    return KernelError(
        fmt::format("concat_grad: out_grad {} is not the concatenation of x along "
                    "axis {} ({})",
                    out_grad.Describe(), a, ShapeToString(shape)));
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor* x : xs) shapes.push_back(x->shape());
  return Cut(call, out_grad, a, shapes);
}

// The piece shapes of x cut along axis a into pieces of `sizes`.
std::vector<std::vector<int64_t>> PieceShapes(const Tensor& x, int a,
                                              const std::vector<int64_t>& sizes) {
  std::vector<std::vector<int64_t>> shapes(sizes.size(), x.shape());
  for (size_t i = 0; i < sizes.size(); ++i) shapes[i][static_cast<size_t>(a)] = sizes[i];
  return shapes;
}

// split(x; sections, axis) -> out...: one output per section; one section may be -1 (the rest).
Status Split(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> sections,
                       call.attrs.Get<std::vector<int64_t>>("sections"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, data::NormalizeAxis(axis, x, "split", "axis", "x"));
  if (call.outputs.size() != sections.size()) {
    return KernelError(fmt::format("split: {} sections {} need {} outputs, {} were given",
                                   sections.size(), ShapeToString(sections), sections.size(),
                                   call.outputs.size()));
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
  return Cut(call, x, a, PieceShapes(x, a, sections));
}

// split_with_num(x; num, axis) -> out...: num equal pieces.
Status SplitWithNum(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(int64_t num, data::IntScalarAttr(call.attrs, "num"));
  IRM_ASSIGN_OR_RETURN(int64_t axis, data::IntScalarAttr(call.attrs, "axis"));
  IRM_ASSIGN_OR_RETURN(int a, data::NormalizeAxis(axis, x, "split_with_num", "axis", "x"));
  if (num < 1) {
    return KernelError(fmt::format("split_with_num: num is {}, it must be at least 1", num));
  }
  if (x.dim(a) % num != 0) {
    return KernelError(
        fmt::format("split_with_num: axis {} of x {} has {}, not divisible by num {}", a,
                    x.Describe(), x.dim(a), num));
  }
  if (call.outputs.size() != static_cast<size_t>(num)) {
    return KernelError(fmt::format("split_with_num: num {} needs {} outputs, {} were given", num,
                                   num, call.outputs.size()));
  }
  const std::vector<int64_t> sizes(static_cast<size_t>(num), x.dim(a) / num);
  return Cut(call, x, a, PieceShapes(x, a, sizes));
}

// ---- copies
// --------------------------------------------------------------------------------------

// assign(x) -> out: a copy with its own storage.
Status Assign(KernelCall& call) {
  call.SetOutput(0, call.input(0).Clone());
  return Status::Ok();
}

// share_data(x) -> out: x itself, the same storage (Paddle's share_data/share_buffer).
Status ShareData(KernelCall& call) {
  call.SetOutput(0, call.input(0));
  return Status::Ok();
}

// ---- add_n
// ---------------------------------------------------------------------------------------

// add_n(inputs...) -> out: the element-wise sum, added in input order (((in0 + in1) + in2) + ...)
// in the compute type (float32 for float16/bfloat16, stored once at the end). Integer sums wrap
// modulo 2^bits (computed unsigned: signed overflow would be undefined).
template <typename T, typename = void>
struct AddNAccumulator {
  using type = Compute<T>;
};
template <typename T>
struct AddNAccumulator<T, std::enable_if_t<std::is_integral_v<T>>> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
struct AddNKernel {
  static Status Run(KernelCall& call) {
    const Tensor& first = call.input(0);
    for (size_t i = 1; i < call.num_inputs(); ++i) {
      const Tensor& in = call.input(i);
      if (in.dtype() != first.dtype() || in.shape() != first.shape()) {
        return KernelError(fmt::format("add_n: inputs[{}] {} does not match inputs[0] {}", i,
                                       in.Describe(), first.Describe()));
      }
    }
    using Acc = typename AddNAccumulator<T>::type;
    std::vector<Acc> acc(static_cast<size_t>(first.numel()), Acc{0});
    for (const Tensor* in : call.inputs) {
      const T* v = in->data<T>();
      for (size_t j = 0; j < acc.size(); ++j) {
        if constexpr (std::is_integral_v<T>) {
          acc[j] = static_cast<Acc>(acc[j] + static_cast<Acc>(v[j]));
        } else {
          acc[j] += Load<T>(v[j]);
        }
      }
    }
    Tensor out = Tensor::ZerosUnchecked(first.dtype(), first.shape());
    T* o = out.data<T>();
    for (size_t j = 0; j < acc.size(); ++j) {
      if constexpr (std::is_integral_v<T>) {
        o[j] = static_cast<T>(acc[j]);
      } else {
        o[j] = Store<T>(acc[j]);
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterManipulationKernels(KernelRegistry& registry) {
  constexpr size_t kAny = KernelSignature::kVariadic;
  const struct {
    const char* name;
    KernelFn fn;
    KernelSignature signature;
  } kernels[] = {
      {"reshape", &Reshape, {1, 1, 2}},
      {"reshape_grad", &ReshapeGrad, {2, 2, 1}},
      {"transpose", &Transpose, {1, 1, 1}},
      {"transpose_grad", &TransposeGrad, {1, 1, 1}},
      {"concat", &Concat, {1, kAny, 1}},
      {"concat_grad", &ConcatGrad, {2, kAny, kAny}},
      {"split", &Split, {1, 1, kAny}},
      {"split_with_num", &SplitWithNum, {1, 1, kAny}},
      {"assign", &Assign, {1, 1, 1}},
      // assign_out_(x, output): the executor writes out into output; the copy is assign's.
      {"assign_out", &Assign, {2, 2, 1}},
      {"share_data", &ShareData, {1, 1, 1}},
  };
  for (const auto& k : kernels) {
    IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, k.name, k.fn, k.signature));
  }
  return RegisterForTypes<AddNKernel, Float16, BFloat16, float, double, int32_t, int64_t>(
      registry, "add_n", {1, kAny, 1});
}

}  // namespace irm::rt
