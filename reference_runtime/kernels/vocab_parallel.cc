// The vocabulary-parallel kernels (vocab_parallel.h): c_embedding and its grad, and the parallel
// cross entropy and its grad, each step in the order and precision of Paddle's kernels.
#include "reference_runtime/kernels/vocab_parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/numeric.h"

namespace irm::rt {
namespace {

// ---- c_embedding -------------------------------------------------------------------------------

// weight must be a 2-D float table with rows and width (c_embedding_op.cc's InferShape: height > 0,
// width > 0, start_index >= 0), ids int32 or int64.
Status CheckTable(const Tensor& weight, const Tensor& ids, int64_t start_index,
                  std::string_view kernel) {
  if (!IsFloatingDType(weight.dtype())) {
    return KernelError(
        fmt::format("{}: weight {} must be a float tensor", kernel, weight.Describe()));
  }
  if (weight.rank() != 2 || weight.dim(0) <= 0 || weight.dim(1) <= 0) {
    return KernelError(fmt::format("{}: weight {} must be 2-D [rows, width] with rows and width",
                                   kernel, weight.Describe()));
  }
  if (ids.dtype() != DType::kInt32 && ids.dtype() != DType::kInt64) {
    return KernelError(fmt::format("{}: ids {} must be int32 or int64", kernel, ids.Describe()));
  }
  if (start_index < 0) {
    return KernelError(fmt::format("{}: start_index {} is negative", kernel, start_index));
  }
  return Status::Ok();
}

int64_t IdAt(const Tensor& ids, int64_t i) {
  return ids.dtype() == DType::kInt32 ? int64_t{ids.data<int32_t>()[i]} : ids.data<int64_t>()[i];
}

// The local row of an id, or -1 when another rank holds it.
int64_t LocalRow(int64_t id, int64_t start_index, int64_t rows) {
  return id >= start_index && id - start_index < rows ? id - start_index : -1;
}

template <typename T>
Tensor AccumulateRows(const Tensor& weight, const Tensor& ids, const Tensor& out_grad,
                      int64_t start_index) {
  const int64_t rows = weight.dim(0);
  const size_t width = static_cast<size_t>(weight.dim(1));
  std::vector<Compute<T>> acc(static_cast<size_t>(weight.numel()), Compute<T>{0});
  const T* g = out_grad.data<T>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t row = LocalRow(IdAt(ids, i), start_index, rows);
    if (row < 0) continue;
    Compute<T>* dst = acc.data() + static_cast<size_t>(row) * width;
    const T* src = g + static_cast<size_t>(i) * width;
    for (size_t j = 0; j < width; ++j) dst[j] += Load<T>(src[j]);
  }
  Tensor weight_grad = Tensor::ZerosUnchecked(weight.dtype(), weight.shape());
  T* out = weight_grad.data<T>();
  for (size_t j = 0; j < acc.size(); ++j) out[j] = Store<T>(acc[j]);
  return weight_grad;
}

// ---- c_softmax_with_cross_entropy --------------------------------------------------------------

// Paddle's TolerableValue (paddle/phi/kernels/funcs/cross_entropy.h): float and double clip an
// infinity to +-1e20; float16 keeps finite values, sends a positive overflow to its largest value
// and everything else (-inf, NaN) to numeric_limits<float16>::min(), the smallest positive normal.
template <typename T>
Compute<T> Tolerable(Compute<T> x) {
  if constexpr (std::is_same_v<T, Float16>) {
    if (std::isfinite(x)) return x;
    return x > 0 ? 65504.0f : 6.103515625e-05f;
  } else {
    const T kApproInf = static_cast<T>(1e20);
    if (x == std::numeric_limits<T>::infinity()) return kApproInf;
    if (x == -std::numeric_limits<T>::infinity()) return -kApproInf;
    return x;
  }
}

// The rows (N) and local classes (D) of logits-shaped `probs`, checking the label against it:
// int32/int64 of probs' shape with the last dim 1; rank in [0, nranks).
struct Rows {
  int64_t n = 0;
  int64_t d = 0;
  std::vector<int64_t> loss_shape;
};
StatusOr<Rows> CheckOperands(const Tensor& probs, std::string_view name, const Tensor& label,
                             int rank, int nranks, std::string_view kernel) {
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return KernelError(fmt::format("{}: rank {} is not in [0, nranks {})", kernel, rank, nranks));
  }
  IRM_RETURN_IF_ERROR(CheckDType(probs, name, {DType::kFloat32, DType::kFloat64, DType::kFloat16}));
  if (probs.rank() == 0) {
    return KernelError(fmt::format("{}: {} of shape [] has no class axis", kernel, name));
  }
  Rows rows;
  rows.d = probs.shape().back();
  rows.n = rows.d == 0 ? 0 : probs.numel() / rows.d;
  rows.loss_shape = probs.shape();
  rows.loss_shape.back() = 1;
  IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64, DType::kInt32}));
  IRM_RETURN_IF_ERROR(
      CheckShape(label, "label", rows.loss_shape,
                 fmt::format("{}'s shape with the last dim 1: one global class per row", name)));
  return rows;
}

// Row i's label, or an error when it is neither a global class nor ignore_index (the GPU
// kernel's PADDLE_ENFORCE in MaskLabelByIndex).
StatusOr<int64_t> LabelAt(const Tensor& label, int64_t i, int64_t classes, int64_t ignore_index,
                          std::string_view kernel) {
  const int64_t v = IdAt(label, i);
  if (v == ignore_index || (v >= 0 && v < classes)) return v;
  return KernelError(fmt::format("{}: label[{}] = {} is not in [0, {}) nor ignore_index {}", kernel,
                                 i, v, classes, ignore_index));
}

template <typename T>
StatusOr<SoftmaxAndLoss> ParallelCrossEntropy(const Tensor& logits, const Tensor& label,
                                              int64_t ignore_index, int rank, int nranks,
                                              const Rows& rows, const RowAllReduce& reduce) {
  using C = Compute<T>;
  constexpr std::string_view kKernel = "c_softmax_with_cross_entropy";
  const int64_t n = rows.n;
  const int64_t d = rows.d;
  const T* x = logits.data<T>();
  const std::vector<int64_t> column = {n, 1};

  // Step 1: the row max, all-reduced (max).
  Tensor row_max = Tensor::ZerosUnchecked(logits.dtype(), column);
  for (int64_t i = 0; i < n; ++i) {
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t j = 0; j < d; ++j) m = std::max(m, Load<T>(x[i * d + j]));
    row_max.data<T>()[i] = Store<T>(m);
  }
  IRM_RETURN_IF_ERROR(reduce.max(row_max));

  // Step 2: shifted = logits - max, in the softmax's storage.
  Tensor softmax = Tensor::ZerosUnchecked(logits.dtype(), logits.shape());
  T* s = softmax.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const C m = Load<T>(row_max.data<T>()[i]);
    for (int64_t j = 0; j < d; ++j) s[i * d + j] = Store<T>(Load<T>(x[i * d + j]) - m);
  }

  // Step 3: the label's shifted logit where this rank holds its column, 0 elsewhere, all-reduced
  // (sum): exactly the one rank's value.
  const int64_t classes = d * nranks;
  const int64_t start = static_cast<int64_t>(rank) * d;
  Tensor predicted = Tensor::ZerosUnchecked(logits.dtype(), column);
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    IRM_ASSIGN_OR_RETURN(labels[static_cast<size_t>(i)],
                         LabelAt(label, i, classes, ignore_index, kKernel));
    const int64_t v = labels[static_cast<size_t>(i)];
    if (v >= start && v < start + d) predicted.data<T>()[i] = s[i * d + (v - start)];
  }
  IRM_RETURN_IF_ERROR(reduce.sum(predicted));

  // Steps 4 and 5: exp in place, the row sum from column 0, all-reduced (sum).
  Tensor sum_exp = Tensor::ZerosUnchecked(logits.dtype(), column);
  for (int64_t i = 0; i < n; ++i) {
    C sum = 0;
    for (int64_t j = 0; j < d; ++j) {
      s[i * d + j] = Store<T>(std::exp(Load<T>(s[i * d + j])));
      sum += Load<T>(s[i * d + j]);
    }
    sum_exp.data<T>()[i] = Store<T>(sum);
  }
  IRM_RETURN_IF_ERROR(reduce.sum(sum_exp));

  // The loss from the global sum and label logit; softmax = exp * (1 / sum), Eigen's inverse()
  // then a product, each rounded to T.
  Tensor loss = Tensor::ZerosUnchecked(logits.dtype(), rows.loss_shape);
  for (int64_t i = 0; i < n; ++i) {
    const C sum = Load<T>(sum_exp.data<T>()[i]);
    if (labels[static_cast<size_t>(i)] != ignore_index) {
      const C log_sum = Load<T>(Store<T>(Tolerable<T>(Load<T>(Store<T>(std::log(sum))))));
      const C diff = Load<T>(Store<T>(log_sum - Load<T>(predicted.data<T>()[i])));
      loss.data<T>()[i] = Store<T>(Tolerable<T>(diff));
    }
    const C inverse = Load<T>(Store<T>(C{1} / sum));
    for (int64_t j = 0; j < d; ++j) s[i * d + j] = Store<T>(Load<T>(s[i * d + j]) * inverse);
  }
  return SoftmaxAndLoss{std::move(softmax), std::move(loss)};
}

template <typename T>
StatusOr<Tensor> ParallelCrossEntropyGrad(const Tensor& softmax, const Tensor& label,
                                          const Tensor& loss_grad, int64_t ignore_index, int rank,
                                          int nranks, const Rows& rows) {
  using C = Compute<T>;
  const int64_t n = rows.n;
  const int64_t d = rows.d;
  const int64_t start = static_cast<int64_t>(rank) * d;
  const T* p = softmax.data<T>();
  const T* g = loss_grad.data<T>();
  Tensor logits_grad = Tensor::ZerosUnchecked(softmax.dtype(), softmax.shape());
  T* dx = logits_grad.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    IRM_ASSIGN_OR_RETURN(const int64_t v, LabelAt(label, i, d * nranks, ignore_index,
                                                  "c_softmax_with_cross_entropy_grad"));
    if (v == ignore_index) continue;  // zeros
    const C gi = Load<T>(g[i]);
    for (int64_t j = 0; j < d; ++j) {
      const C pj = Load<T>(p[i * d + j]);
      const C shifted = j + start == v ? Load<T>(Store<T>(pj - C{1})) : pj;
      dx[i * d + j] = Store<T>(shifted * gi);
    }
  }
  return logits_grad;
}

}  // namespace

StatusOr<Tensor> CEmbedding(const Tensor& weight, const Tensor& ids, int64_t start_index,
                            int64_t vocab_size) {
  IRM_RETURN_IF_ERROR(CheckTable(weight, ids, start_index, "c_embedding"));
  const int64_t rows = weight.dim(0);
  std::vector<int64_t> shape = ids.shape();
  shape.push_back(weight.dim(1));
  Tensor out = Tensor::ZerosUnchecked(weight.dtype(), shape);
  const size_t row_bytes = static_cast<size_t>(weight.dim(1)) * DTypeSize(weight.dtype());
  const auto* w = static_cast<const std::byte*>(weight.raw());
  auto* o = static_cast<std::byte*>(out.raw());
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = IdAt(ids, i);
    if (id < 0) return KernelError(fmt::format("c_embedding: ids[{}] = {} is negative", i, id));
    if (vocab_size >= 0 && id >= vocab_size) {
      return KernelError(
          fmt::format("c_embedding: ids[{}] = {} is not below vocab_size {}", i, id, vocab_size));
    }
    const int64_t row = LocalRow(id, start_index, rows);
    if (row < 0) continue;  // another rank's row: stays zero
    std::memcpy(o + static_cast<size_t>(i) * row_bytes, w + static_cast<size_t>(row) * row_bytes,
                row_bytes);
  }
  return out;
}

StatusOr<Tensor> CEmbeddingGrad(const Tensor& weight, const Tensor& ids, const Tensor& out_grad,
                                int64_t start_index) {
  IRM_RETURN_IF_ERROR(CheckTable(weight, ids, start_index, "c_embedding_grad"));
  std::vector<int64_t> expected = ids.shape();
  expected.push_back(weight.dim(1));
  if (out_grad.dtype() != weight.dtype() || out_grad.shape() != expected) {
    return KernelError(fmt::format(
        "c_embedding_grad: out_grad {} should be {}{} (ids' shape, then the width of weight {})",
        out_grad.Describe(), DTypeName(weight.dtype()), ShapeToString(expected),
        weight.Describe()));
  }
  Tensor weight_grad;
  VisitDType(weight.dtype(), [&](auto element) {
    using T = decltype(element);
    if constexpr (std::is_floating_point_v<Compute<T>>) {
      weight_grad = AccumulateRows<T>(weight, ids, out_grad, start_index);
    }
  });
  return weight_grad;
}

StatusOr<SoftmaxAndLoss> CSoftmaxWithCrossEntropy(const Tensor& logits, const Tensor& label,
                                                  int64_t ignore_index, int rank, int nranks,
                                                  const RowAllReduce& reduce) {
  IRM_ASSIGN_OR_RETURN(const Rows rows, CheckOperands(logits, "logits", label, rank, nranks,
                                                      "c_softmax_with_cross_entropy"));
  switch (logits.dtype()) {
    case DType::kFloat32:
      return ParallelCrossEntropy<float>(logits, label, ignore_index, rank, nranks, rows, reduce);
    case DType::kFloat64:
      return ParallelCrossEntropy<double>(logits, label, ignore_index, rank, nranks, rows, reduce);
    default:
      return ParallelCrossEntropy<Float16>(logits, label, ignore_index, rank, nranks, rows, reduce);
  }
}

StatusOr<Tensor> CSoftmaxWithCrossEntropyGrad(const Tensor& softmax, const Tensor& label,
                                              const Tensor& loss_grad, int64_t ignore_index,
                                              int rank, int nranks) {
  IRM_ASSIGN_OR_RETURN(const Rows rows, CheckOperands(softmax, "softmax", label, rank, nranks,
                                                      "c_softmax_with_cross_entropy_grad"));
  IRM_RETURN_IF_ERROR(CheckDType(loss_grad, "loss_grad", {softmax.dtype()}));
  IRM_RETURN_IF_ERROR(CheckShape(loss_grad, "loss_grad", rows.loss_shape, "the shape of loss"));
  switch (softmax.dtype()) {
    case DType::kFloat32:
      return ParallelCrossEntropyGrad<float>(softmax, label, loss_grad, ignore_index, rank, nranks,
                                             rows);
    case DType::kFloat64:
      return ParallelCrossEntropyGrad<double>(softmax, label, loss_grad, ignore_index, rank, nranks,
                                              rows);
    default:
      return ParallelCrossEntropyGrad<Float16>(softmax, label, loss_grad, ignore_index, rank,
                                               nranks, rows);
  }
}

}  // namespace irm::rt
