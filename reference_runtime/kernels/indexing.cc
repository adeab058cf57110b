// Indexing kernels: slice and slice_grad (planned by manipulation_plan.h's PlanSlice, as their
// device twins are), embedding and embedding_grad (row gather by int32/int64 ids, padding_idx),
// gather and gather_grad (slices along an axis at int32/int64 indices), shape, and tril/triu with
// their grads (a triangle of the last two dims). slice, tril and triu only move bytes and serve
// every runtime dtype; the registry key is the dtype of the data input (input, out_grad, x, or
// embedding's weight). embedding_grad accumulates and is registered for the float dtypes.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include <fmt/format.h>

#include "reference_runtime/kernels/data_kernels.h"
#include "reference_runtime/kernels/manipulation_plan.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using data::Numel;

// ---- slice
// ---------------------------------------------------------------------------------------

// slice(input; axes, starts, ends, infer_flags, decrease_axis) -> out.
Status Slice(KernelCall& call) {
  const Tensor& input = call.input(0);
  IRM_ASSIGN_OR_RETURN(plan::SliceBox box, plan::PlanSlice(input, call.attrs, "slice"));
  Tensor out = Tensor::ZerosUnchecked(input.dtype(), box.out_shape);
  data::CopyBox(static_cast<const std::byte*>(input.raw()), input.shape(), box.start,
                static_cast<std::byte*>(out.raw()), box.extent,
                std::vector<int64_t>(box.extent.size(), 0), box.extent, DTypeSize(input.dtype()));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// slice_grad(input, out_grad; same attributes) -> input_grad: zeros of input's shape with
// out_grad in the slice. out_grad may have the decreased shape or the slice's full-rank box (a
// legacy program keeps removed dims of size 1 in some versions); the elements are the same.
Status SliceGrad(KernelCall& call) {
  const Tensor& input = call.input(0);
  const Tensor& out_grad = call.input(1);
  IRM_ASSIGN_OR_RETURN(plan::SliceBox box, plan::PlanSlice(input, call.attrs, "slice_grad"));
  IRM_RETURN_IF_ERROR(plan::CheckSliceGradShape(box, out_grad));
  Tensor input_grad = Tensor::ZerosUnchecked(out_grad.dtype(), input.shape());
  data::CopyBox(static_cast<const std::byte*>(out_grad.raw()), box.extent,
                std::vector<int64_t>(box.extent.size(), 0),
                static_cast<std::byte*>(input_grad.raw()), input.shape(), box.start, box.extent,
                DTypeSize(out_grad.dtype()));
  call.SetOutput(0, std::move(input_grad));
  return Status::Ok();
}

// ---- embedding
// -----------------------------------------------------------------------------------

// The ids of x as int64, each checked against [0, rows).
StatusOr<std::vector<int64_t>> Ids(const Tensor& x, const Tensor& weight, std::string_view kernel) {
  if (x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64) {
    return KernelError(
        fmt::format("{}: ids x must be int32 or int64, not {}", kernel, DTypeName(x.dtype())));
  }
  if (weight.rank() != 2) {
    return KernelError(
        fmt::format("{}: weight {} must be 2-D [rows, width]", kernel, weight.Describe()));
  }
  std::vector<int64_t> ids(static_cast<size_t>(x.numel()));
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = x.dtype() == DType::kInt32 ? x.data<int32_t>()[i] : x.data<int64_t>()[i];
    if (ids[i] < 0 || ids[i] >= weight.dim(0)) {
      return KernelError(fmt::format("{}: x[{}] = {} is outside [0, {}), the rows of weight {}",
                                     kernel, i, ids[i], weight.dim(0), weight.Describe()));
    }
  }
  return ids;
}

// padding_idx: -1 for none, else a row whose lookups give zeros (and get no gradient).
StatusOr<int64_t> PaddingIdx(const KernelAttrs& attrs, const Tensor& weight,
                             std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(int64_t padding_idx, attrs.GetOr<int64_t>("padding_idx", -1));
  if (padding_idx < -1 || padding_idx >= weight.dim(0)) {
    return KernelError(fmt::format("{}: padding_idx {} is outside [0, {}) and is not -1 (none)",
                                   kernel, padding_idx, weight.dim(0)));
  }
  return padding_idx;
}

// embedding(x, weight; padding_idx, sparse) -> out of shape x.shape + [width]: out[i] =
// weight[x[i]], zeros where x[i] is padding_idx. `sparse` only matters to Paddle's gradient
// storage; the gradient here is dense.
Status Embedding(KernelCall& call) {
  const Tensor& x = call.input(0);
  const Tensor& weight = call.input(1);
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Ids(x, weight, "embedding"));
  IRM_ASSIGN_OR_RETURN(int64_t padding_idx, PaddingIdx(call.attrs, weight, "embedding"));
  std::vector<int64_t> shape = x.shape();
  shape.push_back(weight.dim(1));
  Tensor out = Tensor::ZerosUnchecked(weight.dtype(), shape);
  const size_t row_bytes = static_cast<size_t>(weight.dim(1)) * DTypeSize(weight.dtype());
  const auto* w = static_cast<const std::byte*>(weight.raw());
  auto* o = static_cast<std::byte*>(out.raw());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == padding_idx) continue;  // stays zero
    std::memcpy(o + i * row_bytes, w + static_cast<size_t>(ids[i]) * row_bytes, row_bytes);
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// embedding_grad(x, weight, out_grad; padding_idx, sparse) -> weight_grad: row r is the sum of
// the out_grad rows i with x[i] = r, added in increasing flat index i of x (the order the ids
// appear in), in the compute type from zero, stored once; the padding_idx row stays zero. The
// registry key is weight's dtype; out_grad must have it too.
template <typename T>
struct EmbeddingGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& weight = call.input(1);
    const Tensor& out_grad = call.input(2);
    IRM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, Ids(x, weight, "embedding_grad"));
    IRM_ASSIGN_OR_RETURN(int64_t padding_idx, PaddingIdx(call.attrs, weight, "embedding_grad"));
    std::vector<int64_t> expected = x.shape();
    expected.push_back(weight.dim(1));
    if (out_grad.dtype() != weight.dtype() || out_grad.shape() != expected) {
      return KernelError(
          fmt::format("embedding_grad: out_grad {} should be {}{} (x's shape, then "
                      "the width of weight {})",
                      out_grad.Describe(), DTypeName(weight.dtype()), ShapeToString(expected),
                      weight.Describe()));
    }
    const size_t width = static_cast<size_t>(weight.dim(1));
    std::vector<Compute<T>> acc(static_cast<size_t>(weight.numel()), Compute<T>{0});
    const T* g = out_grad.data<T>();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == padding_idx) continue;
      Compute<T>* row = acc.data() + static_cast<size_t>(ids[i]) * width;
      for (size_t j = 0; j < width; ++j) row[j] += Load<T>(g[i * width + j]);
    }
    Tensor weight_grad = Tensor::ZerosUnchecked(weight.dtype(), weight.shape());
    T* out = weight_grad.data<T>();
    for (size_t j = 0; j < acc.size(); ++j) out[j] = Store<T>(acc[j]);
    call.SetOutput(0, std::move(weight_grad));
    return Status::Ok();
  }
};

// ---- gather, shape
// --------------------------------------------------------------------------------

// gather (phi's GatherKernel: CPUGather for axis 0, GatherV2Function otherwise): out is x with
// dim `axis` replaced by index's dims (a 0-D index drops it), out[.., i, ..] = x[.., index[i], ..].
// A negative axis counts from the end; an index outside the dim is an error naming it.
struct GatherPlan {
  int64_t outer = 1, size = 0, inner = 1;
  std::vector<int64_t> index;
  std::vector<int64_t> out_shape;
};

StatusOr<GatherPlan> PlanGather(const KernelCall& call, const Tensor& x, const Tensor& index,
                                std::string_view kernel) {
  IRM_ASSIGN_OR_RETURN(int64_t axis, call.attrs.GetOr<int64_t>("axis", 0));
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) {
    return KernelError(fmt::format("{}: axis {} is outside x {}", kernel, axis, x.Describe()));
  }
  if ((index.dtype() != DType::kInt32 && index.dtype() != DType::kInt64) || index.rank() > 1) {
    return KernelError(
        fmt::format("{}: index {} must be int32 or int64, 0-D or 1-D", kernel, index.Describe()));
  }
  GatherPlan p;
  const auto a = static_cast<size_t>(axis);
  for (size_t d = 0; d < a; ++d) p.outer *= x.shape()[d];
  p.size = x.shape()[a];
  for (size_t d = a + 1; d < x.shape().size(); ++d) p.inner *= x.shape()[d];
  p.index.resize(static_cast<size_t>(index.numel()));
  for (size_t i = 0; i < p.index.size(); ++i) {
    p.index[i] =
        index.dtype() == DType::kInt32 ? index.data<int32_t>()[i] : index.data<int64_t>()[i];
    if (p.index[i] < 0 || p.index[i] >= p.size) {
      return KernelError(fmt::format("{}: index[{}] = {} is outside [0, {}), dim {} of x {}",
                                     kernel, i, p.index[i], p.size, axis, x.Describe()));
    }
  }
  p.out_shape.assign(x.shape().begin(), x.shape().begin() + axis);
  if (index.rank() == 1) p.out_shape.push_back(index.numel());
  p.out_shape.insert(p.out_shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  return p;
}

Status Gather(KernelCall& call) {
  const Tensor& x = call.input(0);
  IRM_ASSIGN_OR_RETURN(GatherPlan p, PlanGather(call, x, call.input(1), "gather"));
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), p.out_shape);
  const size_t row = static_cast<size_t>(p.inner) * DTypeSize(x.dtype());
  const auto* in = static_cast<const std::byte*>(x.raw());
  auto* o = static_cast<std::byte*>(out.raw());
  const auto n = static_cast<int64_t>(p.index.size());
  for (int64_t b = 0; b < p.outer; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = b * p.size + p.index[static_cast<size_t>(i)];
      std::memcpy(o + static_cast<size_t>(b * n + i) * row, in + static_cast<size_t>(from) * row,
                  row);
    }
  }
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// gather_grad (inputs x, index, out_grad): zeros of x's shape, then every out_grad slice added to
// the slice of x it came from, indices in order (ScatterAssignAdd), in the compute type.
template <typename T>
struct GatherGradKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    const Tensor& out_grad = call.input(2);
    IRM_ASSIGN_OR_RETURN(GatherPlan p, PlanGather(call, x, call.input(1), "gather_grad"));
    if (out_grad.dtype() != DTypeOf<T>() || out_grad.shape() != p.out_shape) {
      return KernelError(fmt::format("gather_grad: out_grad {} should be {}{}", out_grad.Describe(),
                                     DTypeName(DTypeOf<T>()), ShapeToString(p.out_shape)));
    }
    std::vector<Compute<T>> acc(static_cast<size_t>(x.numel()), Compute<T>{0});
    const T* g = out_grad.data<T>();
    const auto n = static_cast<int64_t>(p.index.size());
    for (int64_t b = 0; b < p.outer; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t to = (b * p.size + p.index[static_cast<size_t>(i)]) * p.inner;
        const int64_t from = (b * n + i) * p.inner;
        for (int64_t k = 0; k < p.inner; ++k) {
          acc[static_cast<size_t>(to + k)] += Load<T>(g[from + k]);
        }
      }
    }
    Tensor x_grad = Tensor::ZerosUnchecked(DTypeOf<T>(), x.shape());
    for (size_t j = 0; j < acc.size(); ++j) x_grad.data<T>()[j] = Store<T>(acc[j]);
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

// shape (phi's ShapeKernel): input's dims as an int32 1-D tensor.
Status Shape(KernelCall& call) {
  const Tensor& input = call.input(0);
  std::vector<int32_t> dims(input.shape().begin(), input.shape().end());
  call.SetOutput(0, Tensor::FromVector(dims, {static_cast<int64_t>(input.shape().size())}));
  return Status::Ok();
}

// ---- tril / triu
// ---------------------------------------------------------------------------------

// Keeps, in every matrix of the last two dims, the elements (i, j) with j - i <= diagonal (lower)
// or j - i >= diagonal (upper); the rest are zero (all-zero bytes, the zero of every dtype).
StatusOr<Tensor> Triangle(const Tensor& x, int64_t diagonal, bool lower, std::string_view kernel,
                          std::string_view operand) {
  if (x.rank() < 2) {
    return KernelError(
        fmt::format("{}: {} {} needs at least 2 dims", kernel, operand, x.Describe()));
  }
  const int64_t rows = x.dim(x.rank() - 2);
  const int64_t cols = x.dim(x.rank() - 1);
  // Diagonals beyond the matrix act as the nearest one beyond it; clamping keeps i + diagonal
  // from overflowing.
  diagonal = std::clamp(diagonal, -rows - 1, cols + 1);
  const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const size_t item = DTypeSize(x.dtype());
  Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
  const auto* in = static_cast<const std::byte*>(x.raw());
  auto* o = static_cast<std::byte*>(out.raw());
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      // The kept columns of row i form one contiguous range [begin, end).
      const int64_t begin = lower ? 0 : std::clamp(i + diagonal, int64_t{0}, cols);
      const int64_t end = lower ? std::clamp(i + diagonal + 1, int64_t{0}, cols) : cols;
      if (end <= begin) continue;
      const size_t at = static_cast<size_t>((m * rows + i) * cols + begin) * item;
      std::memcpy(o + at, in + at, static_cast<size_t>(end - begin) * item);
    }
  }
  return out;
}

template <bool kLower, bool kGrad>
Status TriangleKernel(KernelCall& call) {
  constexpr const char* kName =
      kLower ? (kGrad ? "tril_grad" : "tril") : (kGrad ? "triu_grad" : "triu");
  // The forward ops default diagonal to 0 (ops.yaml); the grads always carry it.
  IRM_ASSIGN_OR_RETURN(int64_t diagonal, kGrad ? data::IntScalarAttr(call.attrs, "diagonal")
                                               : call.attrs.GetOr<int64_t>("diagonal", 0));
  IRM_ASSIGN_OR_RETURN(Tensor out,
                       Triangle(call.input(0), diagonal, kLower, kName, kGrad ? "out_grad" : "x"));
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status RegisterIndexingKernels(KernelRegistry& registry) {
  const struct {
    const char* name;
    KernelFn fn;
    KernelSignature signature;
  } kernels[] = {
      {"slice", &Slice, {1, 1, 1}},
      {"slice_grad", &SliceGrad, {2, 2, 1}},
      {"embedding", &Embedding, {2, 2, 1}},
      {"gather", &Gather, {2, 2, 1}},
      {"shape", &Shape, {1, 1, 1}},
      {"tril", &TriangleKernel<true, false>, {1, 1, 1}},
      {"triu", &TriangleKernel<false, false>, {1, 1, 1}},
      {"tril_grad", &TriangleKernel<true, true>, {1, 1, 1}},
      {"triu_grad", &TriangleKernel<false, true>, {1, 1, 1}},
  };
  for (const auto& k : kernels) {
    IRM_RETURN_IF_ERROR(data::RegisterForEveryDType(registry, k.name, k.fn, k.signature));
  }
  IRM_RETURN_IF_ERROR((RegisterForTypes<GatherGradKernel, Float16, BFloat16, float, double>(
      registry, "gather_grad", {3, 3, 1})));
  return RegisterForTypes<EmbeddingGradKernel, Float16, BFloat16, float, double>(
      registry, "embedding_grad", {3, 3, 1});
}

}  // namespace irm::rt
