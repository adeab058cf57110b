// The launchers of conv.cu, the device code of the conv-net kernels (conv2d, pool2d, batch_norm and
// their grads), as launch.h's: plain descriptions (the plans of kernels/conv_net_geometry.h,
// element type, raw device pointers, a stream) in, the launch's cudaError_t out. Every kernel is
// one thread per output element (or per channel for batch_norm's statistics) summing in a fixed
// order that repeats the CPU kernel's (kernels/conv.cc, pool.cc, batch_norm.cc): no atomics, so
// every run gives the same bits. The element types are the CPU kernels' float32 and float64.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference_runtime/cuda/launch.h"
#include "reference_runtime/kernels/conv_net_geometry.h"

namespace irm::rt::cuda {

// ---- conv2d: im2col, col2im, the filter grad's sum over samples
// --------------------------------

// The launchers take the plans themselves (kernels/conv_net_geometry.h), as the CPU kernels read
// them.
using plan::BatchNormPlan;
using plan::ConvPlan;
using plan::PoolPlan;

// col[s][g][(ch * KH + ki) * KW + kj][oy * OW + ox] = x[s][g * C/groups + ch][oy * sh - pt + ki *
// dh][ox * sw - pl + kj * dw], zero outside the input, for `samples` NCHW samples of x.
cudaError_t LaunchIm2Col(Elem elem, const ConvPlan& g, int64_t samples, const void* x, void* col,
                         cudaStream_t stream);

// The adjoint of LaunchIm2Col as a gather: each element of dx (NCHW, `samples` samples) is the sum
// of the col entries that read it, from zero, in increasing (ki, kj) — the order in which the CPU's
// Col2ImAdd adds them — so for the same col the bits are the CPU's. dx is overwritten.
cudaError_t LaunchCol2Im(Elem elem, const ConvPlan& g, int64_t samples, const void* col, void* dx,
                         cudaStream_t stream);

// dw[j] += parts[s * count + j] for s = 0, 1, ..., samples - 1 in that order (the CPU adds each
// sample's filter-grad product into dw in increasing sample order).
cudaError_t LaunchAddSamples(Elem elem, int64_t count, int64_t samples, const void* parts, void* dw,
                             cudaStream_t stream);

// ---- pool2d
// -----------------------------------------------------------------------------------

// out: one thread per output element, its window in row-major order as the CPU's Pool2dFunctor
// (max from -FLT_MAX keeping `acc > v ? acc : v`; avg the sum divided by the window size).
cudaError_t LaunchPool2d(Elem elem, const PoolPlan& g, const void* x, void* out,
                         cudaStream_t stream);
// x_grad: one thread per input element, adding, from zero and in increasing (oy, ox), the terms
// the CPU's loop over outputs adds into it (avg: (1 / size) * dout; max: dout of each output whose
// window's first maximum, row-major, is this element): the CPU's bits. x_grad is overwritten.
cudaError_t LaunchPool2dGrad(Elem elem, const PoolPlan& g, const void* x, const void* out,
                             const void* out_grad, void* x_grad, cudaStream_t stream);

// ---- batch_norm
// -------------------------------------------------------------------------------

// Training statistics, one thread per channel summing over samples then positions in index order
// (the CPU's loops): saved_mean = batch mean, saved_inv_std = sqrt(1 / (batch var + eps)), and the
// running statistics mean_out = mean * momentum + batch_mean * (1 - momentum) (likewise variance),
// every value in the element type. momentum and epsilon are already rounded through float.
cudaError_t LaunchBatchNormStats(Elem elem, const BatchNormPlan& g, double momentum, double epsilon,
                                 const void* x, const void* running_mean, const void* running_var,
                                 void* mean_out, void* variance_out, void* saved_mean,
                                 void* saved_inv_std, cudaStream_t stream);

// out = x * (inv_std * scale) + (bias - mean * inv_std * scale) per element; inv_std is
// `inv_std` itself, or 1 / sqrt(inv_std + epsilon) when `from_variance` (global statistics: the
// running variance). scale and bias may be null (1 and 0).
cudaError_t LaunchBatchNormApply(Elem elem, const BatchNormPlan& g, bool from_variance,
                                 double epsilon, const void* x, const void* mean,
                                 const void* inv_std, const void* scale, const void* bias,
                                 void* out, cudaStream_t stream);

// The grad (kernels/batch_norm.cc): one thread per channel for dy_sum = Σ dy and dy_xhat_sum =
// Σ (x - mean) * inv_std * dy in index order, then one thread per element for x_grad. `global`:
// x_grad = scale * inv_std * dy with inv_std = 1 / sqrt(variance + epsilon) from `inv_std`;
// otherwise `inv_std` is saved_variance and m = n * s. scale may be null (1).
cudaError_t LaunchBatchNormGrad(Elem elem, const BatchNormPlan& g, bool global, double epsilon,
                                const void* x, const void* mean, const void* inv_std,
                                const void* scale, const void* out_grad, void* x_grad,
                                void* dy_xhat_sum, void* dy_sum, cudaStream_t stream);

}  // namespace irm::rt::cuda
