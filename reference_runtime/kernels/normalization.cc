// Layer normalization and its grad, in Paddle's layout: x is seen as rows × N, with the rows the
// dims before begin_norm_axis and N the product of the dims from it; each row is normalised by its
// own mean and biased variance (divided by N), then scaled and shifted by the optional 1-D scale
// and bias of size N. mean and variance come out with shape [rows].
//
// 16-bit x: as in Paddle, the statistics (mean, variance) are float32, and scale and bias may be
// float32 or of x's dtype (each independently); scale_grad and bias_grad take the dtype of their
// parameter. For float32 and float64 x everything has x's dtype.
//
// Summation order (the same bits at any thread count, single-threaded): each row's mean, variance
// (two passes: the mean first, then the squared deviations from it) and the grad's two row sums
// run sequentially along the row from index 0, starting from 0; scale_grad and bias_grad add the
// rows' contributions for each column in row order 0, 1, ...; all in the compute type (float32
// for float32 and the 16-bit types, float64 for float64).
//
// Kernel dtype (what the executor dispatches on): x's. The layout and the operand checks are the
// plan the CUDA kernels share (normalization_plan.h).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/normalization_plan.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// The dtype of x's statistics (plan::LayerNormPlan::stat_dtype, as a constant).
template <typename T>
constexpr DType kStatDType = DTypeOf<Compute<T>>();

// An optional parameter's values in the compute type; `fill` when absent.
template <typename T>
std::vector<Compute<T>> ParamValues(const KernelCall& call, size_t index, int64_t n,
                                    Compute<T> fill) {
  using C = Compute<T>;
  std::vector<C> values(static_cast<size_t>(n), fill);
  if (!call.has_input(index)) return values;
  const Tensor& p = call.input(index);
  for (size_t j = 0; j < values.size(); ++j) {
    values[j] = p.dtype() == DTypeOf<T>() ? Load<T>(p.data<T>()[j]) : p.data<C>()[j];
  }
  return values;
}

// A tensor of `dtype` (T or the compute type) holding `values`.
template <typename T>
Tensor ParamTensor(DType dtype, const std::vector<Compute<T>>& values) {
  using C = Compute<T>;
  Tensor t = Tensor::ZerosUnchecked(dtype, {static_cast<int64_t>(values.size())});
  for (size_t j = 0; j < values.size(); ++j) {
    if (dtype == DTypeOf<T>()) {
      t.data<T>()[j] = Store<T>(values[j]);
    } else {
      t.data<C>()[j] = values[j];
    }
  }
  return t;
}

template <typename T>
struct LayerNormKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    IRM_RETURN_IF_ERROR(CheckPresent(call, 0, "x"));
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const plan::LayerNormPlan layout, plan::PlanLayerNorm(x, call.attrs));
    IRM_RETURN_IF_ERROR(plan::CheckLayerNormParams(call, x.dtype(), layout));
    const std::vector<C> scale = ParamValues<T>(call, 1, layout.n, C{1});
    const std::vector<C> bias = ParamValues<T>(call, 2, layout.n, C{0});
    const C eps = static_cast<C>(layout.epsilon);
    const C count = static_cast<C>(layout.n);

    Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    Tensor mean = Tensor::ZerosUnchecked(kStatDType<T>, {layout.rows});
    Tensor variance = Tensor::ZerosUnchecked(kStatDType<T>, {layout.rows});
    for (int64_t r = 0; r < layout.rows; ++r) {
      const T* row = x.data<T>() + r * layout.n;
      T* y = out.data<T>() + r * layout.n;
      C sum = 0;
      for (int64_t j = 0; j < layout.n; ++j) sum += Load<T>(row[j]);
      const C mu = sum / count;
      C square_sum = 0;
      for (int64_t j = 0; j < layout.n; ++j) {
        const C d = Load<T>(row[j]) - mu;
        square_sum += d * d;
      }
      const C var = square_sum / count;
      const C rstd = C{1} / std::sqrt(var + eps);
      for (int64_t j = 0; j < layout.n; ++j) {
        const size_t k = static_cast<size_t>(j);
        y[j] = Store<T>((Load<T>(row[j]) - mu) * rstd * scale[k] + bias[k]);
      }
      mean.data<C>()[r] = mu;
      variance.data<C>()[r] = var;
    }
    call.SetOutput(0, std::move(out));
    call.SetOutput(1, std::move(mean));
    call.SetOutput(2, std::move(variance));
    return Status::Ok();
  }
};

// With xhat = (x - mean) * rstd and g = out_grad * scale, per row:
// x_grad = rstd * (g - mean(g) - xhat * mean(g * xhat)); scale_grad = sum over rows of
// out_grad * xhat; bias_grad = sum over rows of out_grad.
template <typename T>
struct LayerNormGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    IRM_RETURN_IF_ERROR(plan::CheckLayerNormGradPresent(call));
    const Tensor& x = call.input(0);
    const Tensor& mean = call.input(3);
    const Tensor& variance = call.input(4);
    const Tensor& out_grad = call.input(5);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const plan::LayerNormPlan layout, plan::PlanLayerNorm(x, call.attrs));
    IRM_RETURN_IF_ERROR(plan::CheckLayerNormParams(call, x.dtype(), layout));
    IRM_RETURN_IF_ERROR(plan::CheckLayerNormGradStats(x, mean, variance, out_grad, layout));
    const std::vector<C> scale = ParamValues<T>(call, 1, layout.n, C{1});
    const C eps = static_cast<C>(layout.epsilon);
    const C count = static_cast<C>(layout.n);

    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    std::vector<C> scale_grad(static_cast<size_t>(layout.n), C{0});
    std::vector<C> bias_grad(static_cast<size_t>(layout.n), C{0});
    std::vector<C> xhat(static_cast<size_t>(layout.n));
    std::vector<C> g(static_cast<size_t>(layout.n));
    for (int64_t r = 0; r < layout.rows; ++r) {
      const T* row = x.data<T>() + r * layout.n;
      const T* dy = out_grad.data<T>() + r * layout.n;
      T* dx = x_grad.data<T>() + r * layout.n;
      const C mu = mean.data<C>()[r];
      const C rstd = C{1} / std::sqrt(variance.data<C>()[r] + eps);
      C g_sum = 0;
      C gx_sum = 0;
      for (int64_t j = 0; j < layout.n; ++j) {
        const size_t k = static_cast<size_t>(j);
        const C dyj = Load<T>(dy[j]);
        xhat[k] = (Load<T>(row[j]) - mu) * rstd;
        g[k] = dyj * scale[k];
        g_sum += g[k];
        gx_sum += g[k] * xhat[k];
        scale_grad[k] += dyj * xhat[k];
        bias_grad[k] += dyj;
      }
      const C g_mean = g_sum / count;
      const C gx_mean = gx_sum / count;
      for (int64_t j = 0; j < layout.n; ++j) {
        const size_t k = static_cast<size_t>(j);
        dx[j] = Store<T>(rstd * (g[k] - g_mean - xhat[k] * gx_mean));
      }
    }
    call.SetOutput(0, std::move(x_grad));
    if (call.has_input(1)) call.SetOutput(1, ParamTensor<T>(call.input(1).dtype(), scale_grad));
    if (call.has_input(2)) call.SetOutput(2, ParamTensor<T>(call.input(2).dtype(), bias_grad));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterNormalizationKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<LayerNormKernel, float, double, Float16, BFloat16>(
      registry, "layer_norm", {1, 3, 3})));
  return RegisterForTypes<LayerNormGradKernel, float, double, Float16, BFloat16>(
      registry, "layer_norm_grad", {6, 6, 3});
}

}  // namespace irm::rt
