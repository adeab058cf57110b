// Softmax along one axis and Paddle's softmax_with_cross_entropy (pd_op
// cross_entropy_with_softmax), with their grads.
//
// Softmax subtracts the maximum along the axis before exponentiating, so large logits neither
// overflow nor lose the small ones. The cross entropy takes its log-probabilities from that same
// shifted form (x - max - log(sum exp)) rather than log(softmax), so a class whose probability
// underflows to 0 still has a finite loss; numeric_stable_mode is therefore accepted and changes
// nothing (Paddle's unstable mode is a faster GPU formula for the same value). Unlike Paddle's CPU
// kernel, shifted logits are not clipped at -64: the reference computes the exact function.
//
// Summation order (the same bits at any thread count, single-threaded): for each position along
// the other dims (C order), the max, the sum of exponentials, the soft-label sums and the grad's
// dot product run sequentially along the class axis from index 0, starting from 0, in the
// compute type (float32 for float32 and the 16-bit types, float64 for float64).
//
// Kernel dtype (what the executor dispatches on): x's for softmax, out's for softmax_grad,
// input's for cross_entropy_with_softmax, softmax's for its grad. Hard labels are int64 or int32
// with the class axis of size 1; soft labels have the dtype and shape of the input.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// Softmax of the `n` values at x[0], x[stride], ... into out (compute type), returning the
// shift and log(sum exp) so that log softmax_j = (x_j - shift) - log_sum.
template <typename T, typename C = Compute<T>>
void SoftmaxLine(const T* x, int64_t n, int64_t stride, C* out, C* shift, C* log_sum) {
  C max = -std::numeric_limits<C>::infinity();
  for (int64_t j = 0; j < n; ++j) max = std::max(max, Load<T>(x[j * stride]));
  C sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    out[j] = std::exp(Load<T>(x[j * stride]) - max);
    sum += out[j];
  }
  for (int64_t j = 0; j < n; ++j) out[j] /= sum;
  *shift = max;
  *log_sum = std::log(sum);
}

template <typename T>
struct SoftmaxKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const int64_t axis_attr, call.attrs.GetOr<int64_t>("axis", -1));
    IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, x.shape(), "x"));
    const AxisSplit s = SplitAround(x.shape(), axis);
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    std::vector<C> line(static_cast<size_t>(s.size));
    C shift;
    C log_sum;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        SoftmaxLine(x.data<T>() + base, s.size, s.inner, line.data(), &shift, &log_sum);
        for (int64_t j = 0; j < s.size; ++j) {
          out.data<T>()[base + j * s.inner] = Store<T>(line[static_cast<size_t>(j)]);
        }
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// x_grad = out * (out_grad - sum_j(out_grad_j * out_j)) along the axis.
template <typename T>
struct SoftmaxGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& out = call.input(0);
    const Tensor& out_grad = call.input(1);
    IRM_RETURN_IF_ERROR(CheckDType(out, "out", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(CheckDType(out_grad, "out_grad", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(CheckShape(out_grad, "out_grad", out.shape(), "the shape of out"));
    IRM_ASSIGN_OR_RETURN(const int64_t axis_attr, call.attrs.GetOr<int64_t>("axis", -1));
    IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_attr, out.shape(), "out"));
    const AxisSplit s = SplitAround(out.shape(), axis);
    const T* y = out.data<T>();
    const T* g = out_grad.data<T>();
    Tensor x_grad = Tensor::ZerosUnchecked(out.dtype(), out.shape());
    T* dx = x_grad.data<T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        C dot = 0;
        for (int64_t j = 0; j < s.size; ++j) {
          const int64_t k = base + j * s.inner;
          dot += Load<T>(g[k]) * Load<T>(y[k]);
        }
        for (int64_t j = 0; j < s.size; ++j) {
          const int64_t k = base + j * s.inner;
          dx[k] = Store<T>(Load<T>(y[k]) * (Load<T>(g[k]) - dot));
        }
      }
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

struct CrossEntropyAttrs {
  bool soft_label = false;
  bool use_softmax = true;
  int64_t ignore_index = -100;
  int64_t axis = -1;
};
StatusOr<CrossEntropyAttrs> ReadCrossEntropyAttrs(const KernelAttrs& attrs) {
  CrossEntropyAttrs a;
  IRM_ASSIGN_OR_RETURN(a.soft_label, attrs.GetOr<bool>("soft_label", false));
  IRM_ASSIGN_OR_RETURN(a.use_softmax, attrs.GetOr<bool>("use_softmax", true));
  IRM_ASSIGN_OR_RETURN(const bool stable, attrs.GetOr<bool>("numeric_stable_mode", true));
  (void)stable;  // always stable (file comment); read so that a malformed value is still an error
  IRM_ASSIGN_OR_RETURN(a.ignore_index, attrs.GetOr<int64_t>("ignore_index", -100));
  IRM_ASSIGN_OR_RETURN(a.axis, attrs.GetOr<int64_t>("axis", -1));
  return a;
}

// The class axis of `probs` (input or softmax, named `name`) and the label checks shared by the
// forward and the grad kernel.
struct ClassLayout {
  AxisSplit split;
  std::vector<int64_t> loss_shape;  // probs' shape with the class axis 1
};
StatusOr<ClassLayout> CheckCrossEntropyOperands(const Tensor& probs, std::string_view name,
                                                const Tensor& label, const CrossEntropyAttrs& a) {
  if (probs.rank() == 0) {
    return KernelError(fmt::format("{} of shape [] has no class axis", name));
  }
  IRM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(a.axis, probs.shape(), name));
  ClassLayout layout{SplitAround(probs.shape(), axis), probs.shape()};
  layout.loss_shape[static_cast<size_t>(axis)] = 1;
  if (a.soft_label) {
    IRM_RETURN_IF_ERROR(CheckDType(label, "label", {probs.dtype()}));
    IRM_RETURN_IF_ERROR(CheckShape(label, "label", probs.shape(),
                                   fmt::format("soft labels have the shape of {}", name)));
  } else {
    IRM_RETURN_IF_ERROR(CheckDType(label, "label", {DType::kInt64, DType::kInt32}));
    IRM_RETURN_IF_ERROR(
        CheckShape(label, "label", layout.loss_shape,
                   fmt::format("hard labels have the shape of {} with the class axis 1", name)));
  }
  return layout;
}

// Hard label k (flat index into label), or an error when it is neither a class nor ignore_index.
StatusOr<int64_t> HardLabel(const Tensor& label, int64_t k, int64_t classes,
                            const CrossEntropyAttrs& a, const Tensor& probs,
                            std::string_view name) {
  const int64_t v =
      label.dtype() == DType::kInt64 ? label.data<int64_t>()[k] : int64_t{label.data<int32_t>()[k]};
  if (v == a.ignore_index || (v >= 0 && v < classes)) return v;
  return KernelError(
      fmt::format("label[{}] = {} is out of range for {} classes ({} of shape {}, ignore_index {})",
                  k, v, classes, name, ShapeToString(probs.shape()), a.ignore_index));
}

// softmax = softmax(input) (or input itself without use_softmax); loss = -sum_j label_j *
// log softmax_j, or -log softmax_label for hard labels (0 where the label is ignore_index).
template <typename T>
struct CrossEntropyWithSoftmaxKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& input = call.input(0);
    const Tensor& label = call.input(1);
    IRM_RETURN_IF_ERROR(CheckDType(input, "input", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const CrossEntropyAttrs a, ReadCrossEntropyAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(const ClassLayout layout,
                         CheckCrossEntropyOperands(input, "input", label, a));
    const AxisSplit& s = layout.split;
    const T* x = input.data<T>();
    Tensor softmax = Tensor::ZerosUnchecked(input.dtype(), input.shape());
    Tensor loss = Tensor::ZerosUnchecked(input.dtype(), layout.loss_shape);
    std::vector<C> probs(static_cast<size_t>(s.size));
    std::vector<C> log_probs(static_cast<size_t>(s.size));
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        const int64_t row = o * s.inner + i;  // the flat index into label (hard) and loss
        if (a.use_softmax) {
          C shift;
          C log_sum;
          SoftmaxLine(x + base, s.size, s.inner, probs.data(), &shift, &log_sum);
          for (int64_t j = 0; j < s.size; ++j) {
            log_probs[static_cast<size_t>(j)] = (Load<T>(x[base + j * s.inner]) - shift) - log_sum;
          }
        } else {
          for (int64_t j = 0; j < s.size; ++j) {
            probs[static_cast<size_t>(j)] = Load<T>(x[base + j * s.inner]);
            log_probs[static_cast<size_t>(j)] = std::log(probs[static_cast<size_t>(j)]);
          }
        }
        for (int64_t j = 0; j < s.size; ++j) {
          softmax.data<T>()[base + j * s.inner] = Store<T>(probs[static_cast<size_t>(j)]);
        }
        C l = 0;
        if (a.soft_label) {
          const T* y = label.data<T>();
          for (int64_t j = 0; j < s.size; ++j) {
            l -= Load<T>(y[base + j * s.inner]) * log_probs[static_cast<size_t>(j)];
          }
        } else {
          IRM_ASSIGN_OR_RETURN(const int64_t k, HardLabel(label, row, s.size, a, input, "input"));
          if (k != a.ignore_index) l = -log_probs[static_cast<size_t>(k)];
        }
        loss.data<T>()[row] = Store<T>(l);
      }
    }
    call.SetOutput(0, std::move(softmax));
    call.SetOutput(1, std::move(loss));
    return Status::Ok();
  }
};

// The exact derivative of the forward loss times loss_grad. With use_softmax, w.r.t. the logits:
// softmax_j * sum(label) - label_j (soft; softmax - one_hot for hard labels). Without, w.r.t. the
// probabilities: -label_j / p_j (soft), -1 / p_label at the label (hard). Ignored rows get 0.
template <typename T>
struct CrossEntropyWithSoftmaxGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& label = call.input(0);
    const Tensor& softmax = call.input(1);
    const Tensor& loss_grad = call.input(2);
    IRM_RETURN_IF_ERROR(CheckDType(softmax, "softmax", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const CrossEntropyAttrs a, ReadCrossEntropyAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(const ClassLayout layout,
                         CheckCrossEntropyOperands(softmax, "softmax", label, a));
    IRM_RETURN_IF_ERROR(CheckDType(loss_grad, "loss_grad", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(CheckShape(loss_grad, "loss_grad", layout.loss_shape, "the shape of loss"));
    const AxisSplit& s = layout.split;
    const T* p = softmax.data<T>();
    const T* lg = loss_grad.data<T>();
    Tensor input_grad = Tensor::ZerosUnchecked(softmax.dtype(), softmax.shape());
    T* dx = input_grad.data<T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t base = o * s.size * s.inner + i;
        const int64_t row = o * s.inner + i;
        const C g = Load<T>(lg[row]);
        if (a.soft_label) {
          const T* y = label.data<T>();
          C label_sum = 0;
          if (a.use_softmax) {
            for (int64_t j = 0; j < s.size; ++j) label_sum += Load<T>(y[base + j * s.inner]);
          }
          for (int64_t j = 0; j < s.size; ++j) {
            const int64_t k = base + j * s.inner;
            const C yj = Load<T>(y[k]);
            const C pj = Load<T>(p[k]);
            dx[k] = Store<T>(a.use_softmax ? (pj * label_sum - yj) * g : -yj / pj * g);
          }
          continue;
        }
        IRM_ASSIGN_OR_RETURN(const int64_t c, HardLabel(label, row, s.size, a, softmax, "softmax"));
        if (c == a.ignore_index) continue;  // zero grad; x_grad is zero-filled
        for (int64_t j = 0; j < s.size; ++j) {
          const int64_t k = base + j * s.inner;
          const C pj = Load<T>(p[k]);
          if (a.use_softmax) {
            dx[k] = Store<T>((j == c ? pj - C{1} : pj) * g);
          } else if (j == c) {
            dx[k] = Store<T>(-g / pj);
          }
        }
      }
    }
    call.SetOutput(0, std::move(input_grad));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterSoftmaxKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<SoftmaxKernel, float, double, Float16, BFloat16>(
      registry, "softmax", {1, 1, 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SoftmaxGradKernel, float, double, Float16, BFloat16>(
      registry, "softmax_grad", {2, 2, 1})));
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<CrossEntropyWithSoftmaxKernel, float, double, Float16, BFloat16>(
          registry, "cross_entropy_with_softmax", {2, 2, 2})));
  return RegisterForTypes<CrossEntropyWithSoftmaxGradKernel, float, double, Float16, BFloat16>(
      registry, "cross_entropy_with_softmax_grad", {3, 3, 1});
}

}  // namespace irm::rt
