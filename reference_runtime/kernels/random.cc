// Random kernels: uniform, gaussian, dropout and dropout_grad. Every draw comes from the op's
// PhiloxStream (philox.h) at the output element's own index, so a value depends only on (seed,
// op identity, element index) — not on thread count or loop order — and a legacy op and its
// translated twin draw identical numbers. The seed is the op's own when non-zero, else the
// program's (KernelContext::program_seed).
//
// The initialisers (uniform, gaussian) of an output that is a shard of a serial tensor
// (KernelContext::shard) draw each element at its index in the serial tensor, so every rank's
// shard of a parameter holds the serial initialiser's numbers for its elements and a distributed
// run starts from the serial run's parameters. dropout is no initialiser: it keys its mask by the
// local index whatever the context says.
//
// dropout follows Paddle's phi CPU kernels (paddle/phi/kernels/cpu/dropout_kernel.cc,
// dropout_grad_kernel.cc) except for where the numbers come from: keep element i when
// u_i >= p, scale kept elements by dividing by (1 - p) in upscale_in_train training, multiply by
// (1 - p) at test in downscale_in_infer, and p = 1 zeroes everything. As in Paddle, a seed_tensor
// wins over the attributes, then `seed` when fix_seed is set; a seed of 0 means the program's.
//
// The attributes, shapes, shard placement and operand checks are the plans the CUDA kernels share
// (random_plan.h).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/random_plan.h"
#include "reference_runtime/kernels/register.h"
#include "reference_runtime/philox.h"

namespace irm::rt {
namespace {

using plan::StreamSeed;

// The output of a creation-style random op, from its `shape` attribute.
template <typename T>
StatusOr<Tensor> NewRandomOutput(const char* kernel, const KernelAttrs& attrs) {
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, plan::RandomOutputShape(kernel, attrs));
  StatusOr<Tensor> out = Tensor::Zeros(DTypeOf<T>(), shape);
  if (!out.ok()) return KernelError(fmt::format("{}: {}", kernel, out.status().message()));
  return out;
}

// The index in the serial tensor of each element of an output, walked in row-major order: the
// element's own index for an output that is no shard, else (plan::SerialIndexPlan)
//   base + sum over d of local_index[d] * serial_stride[d].
class SerialIndexWalk {
 public:
  // The plan's errors when the output does not fit where the shard says it lies.
  static StatusOr<SerialIndexWalk> Start(const char* kernel, const std::vector<int64_t>& shape,
                                         const KernelContext& context) {
    IRM_ASSIGN_OR_RETURN(plan::SerialIndexPlan placement,
                         plan::PlanSerialIndex(kernel, shape, context));
    SerialIndexWalk walk;
    if (!placement.sharded) return walk;
    walk.sharded_ = true;
    walk.shape_ = shape;
    walk.position_.assign(shape.size(), 0);
    walk.strides_ = std::move(placement.strides);
    walk.index_ = placement.base;
    return walk;
  }

  uint64_t index() const { return static_cast<uint64_t>(index_); }

  // To the next element in row-major order. Past the last element the index is meaningless.
  void Next() {
    if (!sharded_) {
      ++index_;
      return;
    }
    for (size_t d = shape_.size(); d-- > 0;) {
      index_ += strides_[d];
      if (++position_[d] < shape_[d]) return;
      index_ -= strides_[d] * shape_[d];
      position_[d] = 0;
    }
  }

 private:
  bool sharded_ = false;
  int64_t index_ = 0;
  std::vector<int64_t> shape_;     // the output's
  std::vector<int64_t> position_;  // the element's local index, per dim
  std::vector<int64_t> strides_;   // the serial tensor's, in elements
};

// out = min + (max - min) * u, u uniform in [0, 1): 53-bit doubles for float64, 24-bit floats
// (computed in float32) otherwise.
template <typename T>
struct UniformKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(Tensor out, NewRandomOutput<T>("uniform", call.attrs));
    IRM_ASSIGN_OR_RETURN(const double min, call.attrs.Get<double>("min"));
    IRM_ASSIGN_OR_RETURN(const double max, call.attrs.Get<double>("max"));
    IRM_ASSIGN_OR_RETURN(const int64_t seed, call.attrs.GetOr<int64_t>("seed", 0));
    IRM_ASSIGN_OR_RETURN(SerialIndexWalk walk,
                         SerialIndexWalk::Start("uniform", out.shape(), call.context));
    const PhiloxStream stream(StreamSeed(seed, call.context), call.context.op_identity);
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = 0; i < out.numel(); ++i, walk.Next()) {
        o[i] = min + (max - min) * stream.UniformDouble(walk.index());
      }
    } else {
      const float lo = static_cast<float>(min);
      const float hi = static_cast<float>(max);
      for (int64_t i = 0; i < out.numel(); ++i, walk.Next()) {
        o[i] = Store<T>(lo + (hi - lo) * stream.UniformFloat(walk.index()));
      }
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// out = mean + std * n, n standard normal (PhiloxStream::Normal, Box-Muller in float64), rounded
// once to T.
template <typename T>
struct GaussianKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(Tensor out, NewRandomOutput<T>("gaussian", call.attrs));
    IRM_ASSIGN_OR_RETURN(const double mean, call.attrs.GetOr<double>("mean", 0.0));
    IRM_ASSIGN_OR_RETURN(const double std, call.attrs.GetOr<double>("std", 1.0));
    IRM_ASSIGN_OR_RETURN(const int64_t seed, call.attrs.GetOr<int64_t>("seed", 0));
    IRM_ASSIGN_OR_RETURN(SerialIndexWalk walk,
                         SerialIndexWalk::Start("gaussian", out.shape(), call.context));
    const PhiloxStream stream(StreamSeed(seed, call.context), call.context.op_identity);
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i, walk.Next()) {
      o[i] = Store<T>(static_cast<Compute<T>>(mean + std * stream.Normal(walk.index())));
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

using plan::DropoutAttrs;
using plan::ReadDropoutAttrs;

// 1 - p as Paddle's static_cast<T>(1.0f - p): computed in float32, then rounded to T.
template <typename T>
Compute<T> KeepScale(float p) {
  return Load<T>(Store<T>(static_cast<Compute<T>>(1.0f - p)));
}

// The op's seed (plan::DropoutSeed); the seed tensor is on the host already.
StatusOr<int64_t> DropoutSeed(const KernelCall& call) {
  return plan::DropoutSeed(plan::InputOperand(call, 1), call.attrs,
                           [&call]() -> StatusOr<Tensor> { return call.input(1); });
}

// (x, seed_tensor?) -> (out, mask). mask is uint8, 1 where x was kept; at test nothing is dropped
// and mask is all ones (Paddle leaves it unwritten; ones say what happened).
template <typename T>
struct DropoutKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const DropoutAttrs a, ReadDropoutAttrs("dropout", call.attrs));
    IRM_ASSIGN_OR_RETURN(const int64_t seed, DropoutSeed(call));
    const Tensor& x = call.input(0);
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    Tensor mask = Tensor::ZerosUnchecked(DType::kUInt8, x.shape());
    const T* xs = x.data<T>();
    T* o = out.data<T>();
    uint8_t* m = mask.data<uint8_t>();
    const Compute<T> keep = KeepScale<T>(a.p);
    const int64_t n = x.numel();
    if (a.is_test) {
      for (int64_t i = 0; i < n; ++i) {
        o[i] = a.upscale_in_train ? xs[i] : Store<T>(Load(xs[i]) * keep);
        m[i] = 1;
      }
    } else if (a.p != 1.0f) {  // p = 1: out and mask stay zero, with no division by zero
      const PhiloxStream stream(StreamSeed(seed, call.context), call.context.op_identity);
      for (int64_t i = 0; i < n; ++i) {
        if (stream.UniformFloat(i) < a.p) continue;
        m[i] = 1;
        o[i] = a.upscale_in_train ? Store<T>(Load(xs[i]) / keep) : xs[i];
      }
    }
    call.SetOutput(0, std::move(out));
    call.SetOutput(1, std::move(mask));
    return Status::Ok();
  }
};

// (mask, out_grad) -> x_grad, as Paddle's DropoutGradRawKernel: training scales out_grad by the
// mask (and by 1 / (1 - p) in upscale_in_train; by 0 when p = 1), test by 1 or by (1 - p).
template <typename T>
struct DropoutGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(const DropoutAttrs a, ReadDropoutAttrs("dropout_grad", call.attrs));
    const Tensor& mask = call.input(0);
    const Tensor& dy = call.input(1);
    IRM_RETURN_IF_ERROR(plan::CheckDropoutGradOperands(a, mask, dy));
    Tensor dx = Tensor::ZerosUnchecked(dy.dtype(), dy.shape());
    const T* g = dy.data<T>();
    T* o = dx.data<T>();
    const Compute<T> keep = KeepScale<T>(a.p);
    const int64_t n = dy.numel();
    if (a.is_test) {
      for (int64_t i = 0; i < n; ++i)
        o[i] = a.upscale_in_train ? g[i] : Store<T>(Load(g[i]) * keep);
    } else {
      const uint8_t* m = mask.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) {
        const Compute<T> masked = Load(g[i]) * static_cast<Compute<T>>(m[i]);
        if (!a.upscale_in_train) {
          o[i] = Store<T>(masked);
        } else if (a.p == 1.0f) {
          o[i] = Store<T>(Load(g[i]) * Compute<T>(0));  // 0 * dy, as Paddle: NaN stays NaN
        } else {
          o[i] = Store<T>(masked / keep);
        }
      }
    }
    call.SetOutput(0, std::move(dx));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterRandomKernels(KernelRegistry& registry) {
  IRM_RETURN_IF_ERROR((RegisterForTypes<UniformKernel, float, double, Float16, BFloat16>(
      registry, "uniform", {.min_inputs = 0, .max_inputs = 0, .num_outputs = 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<GaussianKernel, float, double, Float16, BFloat16>(
      registry, "gaussian", {.min_inputs = 0, .max_inputs = 0, .num_outputs = 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<DropoutKernel, float, double, Float16, BFloat16>(
      registry, "dropout", {.min_inputs = 1, .max_inputs = 2, .num_outputs = 2})));
  return RegisterForTypes<DropoutGradKernel, float, double, Float16, BFloat16>(
      registry, "dropout_grad", {.min_inputs = 2, .max_inputs = 2, .num_outputs = 1});
}

}  // namespace irm::rt
