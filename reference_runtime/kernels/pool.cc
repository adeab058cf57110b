// pool2d and pool2d_grad as phi defines them (paddle/phi/ops/yaml/ops.yaml, backward.yaml;
// paddle/phi/kernels/impl/pool_kernel_impl.h, pool_grad_kernel_impl.h; the loops of
// paddle/phi/kernels/funcs/pooling.cc; the sizes of funcs/pooling.h and Pool2DInferMeta):
// x [N, C, H, W] (NCHW) or [N, H, W, C] (NHWC); attributes kernel_size, strides, paddings (2
// values: the same before and after; 4: top, bottom, left, right), ceil_mode, exclusive,
// data_format, pooling_type ("max" or "avg"), global_pooling, adaptive, padding_algorithm.
//
// Resolution (UpdatePadding, UpdateKernelSize): SAME pads to an output of ceil(in / stride), the
// low side getting the smaller half; VALID, global_pooling and adaptive pad nothing;
// global_pooling pools the whole plane. Output size: the kernel size when adaptive, else
// (in - k + pads (+ stride - 1 with ceil_mode)) / stride + 1.
//
// Windows: adaptive ones are [floor(i * in / out), ceil((i + 1) * in / out)); the others start at
// i * stride - pad_before and end at min(start + k, in + pad_before), then are clipped to the
// input. avg divides by the clipped window's size when exclusive or adaptive, else by the window
// before clipping to the input (the padded part counts); max starts from -FLT_MAX and keeps
// `y > x ? y : x`. Sums run in the window's row-major order, so the bits are fixed.
// Grads: avg adds (1 / size) * dout to every pixel of the window (the scale rounded to float, as
// phi does); max gives dout to the first pixel of the window, row-major, that equals the output
// (MaxPool2dGradFunctor), whose window is clipped to the input only.
//
// Paddle runs adaptive max pooling as max_pool2d_with_index: pool2d with pooling_type "max" and
// adaptive is refused here rather than computed with windows no Paddle kernel uses.
#include <cfloat>
#include <cstdint>
#include <vector>

#include "reference_runtime/kernels/pool_plan.h"
#include "reference_runtime/kernels/pool_window.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

using plan::PoolPlan;

using plan::ForwardWindow;
using plan::MaxGradWindow;
using plan::PoolAt;
using plan::PoolWindow;

template <typename T>
struct Pool2dKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const PoolPlan p, plan::PlanPoolCall(call, DTypeOf<T>()));
    IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<T>(), p.out_shape()));
    const T* x = call.input(0).data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0; i < p.n; ++i) {
      for (int64_t ch = 0; ch < p.c; ++ch) {
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const PoolWindow win = ForwardWindow(p, oy, ox);
            T acc = p.max ? static_cast<T>(-FLT_MAX) : T{0};
            for (int64_t yy = win.h0; yy < win.h1; ++yy) {
              for (int64_t xx = win.w0; xx < win.w1; ++xx) {
                const T v = x[PoolAt(p, i, ch, yy, xx, p.h, p.w)];
                if (p.max) {
                  acc = acc > v ? acc : v;
                } else {
                  acc += v;
                }
              }
            }
            if (!p.max) acc = acc / static_cast<T>(win.size);
            y[PoolAt(p, i, ch, oy, ox, p.oh, p.ow)] = acc;
          }
        }
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

template <typename T>
struct Pool2dGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const PoolPlan p, plan::PlanPoolCall(call, DTypeOf<T>()));
    IRM_RETURN_IF_ERROR(plan::CheckPoolGradOperands(call, DTypeOf<T>(), p));
    IRM_ASSIGN_OR_RETURN(Tensor x_grad, Tensor::Zeros(DTypeOf<T>(), call.input(0).shape()));
    const T* x = call.input(0).data<T>();
    const T* y = call.input(1).data<T>();
    const T* dy = call.input(2).data<T>();
    T* dx = x_grad.data<T>();
    for (int64_t i = 0; i < p.n; ++i) {
      for (int64_t ch = 0; ch < p.c; ++ch) {
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          for (int64_t ox = 0; ox < p.ow; ++ox) {
            const int64_t o = PoolAt(p, i, ch, oy, ox, p.oh, p.ow);
            if (p.max) {
              const PoolWindow win = MaxGradWindow(p, oy, ox);
              bool found = false;
              for (int64_t yy = win.h0; yy < win.h1 && !found; ++yy) {
                for (int64_t xx = win.w0; xx < win.w1 && !found; ++xx) {
                  const int64_t at = PoolAt(p, i, ch, yy, xx, p.h, p.w);
                  if (x[at] == y[o]) {
                    dx[at] += dy[o];
                    found = true;
                  }
                }
              }
              continue;
            }
            const PoolWindow win = ForwardWindow(p, oy, ox);
            const T scale = static_cast<T>(1.0f / static_cast<float>(win.size));
            for (int64_t yy = win.h0; yy < win.h1; ++yy) {
              for (int64_t xx = win.w0; xx < win.w1; ++xx) {
                dx[PoolAt(p, i, ch, yy, xx, p.h, p.w)] += scale * dy[o];
              }
            }
          }
        }
      }
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterPoolKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<Pool2dKernel, float, double>(registry, "pool2d", {1, 1, 1})));
  return RegisterForTypes<Pool2dGradKernel, float, double>(registry, "pool2d_grad", {3, 3, 1});
}

}  // namespace irm::rt
