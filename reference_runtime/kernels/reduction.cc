// Reduction kernels: mean, sum and prod over axes, mean_all (the legacy `mean` op: the mean of
// every element, 0-D), squared_l2_norm (the sum of squares gradient clipping takes, shape [1]) and
// their grads.
//
// Summation order (the same bits at any thread count, single-threaded): for each out element in
// C order, the reduced elements are added one after the other, starting from 0, in C order of
// the reduced dims (last reduced dim fastest), in the compute type — float32 for float32 and the
// 16-bit types, float64 for float64, the out's integer type for integer sums (wrapping on
// overflow). mean_all and squared_l2_norm add every element in flat C order the same way.
//
// Kernel dtype (what the executor dispatches on): x's for every kernel here. A grad's out_grad may
// be of any float dtype (a sum with a dtype attribute has a grad of that dtype); the x_grad has
// x's dtype.
#include <fmt/format.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "reference_runtime/kernels/axes.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {
namespace {

// Integer sums wrap like two's complement hardware instead of overflowing (undefined in C++).
template <typename A>
A Add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// Sums per out element in the order of the file comment; `convert` turns an x element into the
// accumulator type.
template <typename Acc, typename X, typename Convert>
std::vector<Acc> SumReduced(const ReducePlan& plan, const X* x, Convert convert) {
  std::vector<Acc> sums(static_cast<size_t>(plan.out_numel), Acc{0});
  StridedWalk out = plan.OutWalk();
  StridedWalk red = plan.ReducedWalk();
  for (size_t o = 0; o < sums.size(); ++o, out.Next()) {
    Acc sum{0};
    red.Reset();
    for (int64_t r = 0; r < plan.reduce_count; ++r, red.Next()) {
      sum = Add(sum, convert(x[out.offset() + red.offset()]));
    }
    sums[o] = sum;
  }
  return sums;
}

// The elements of a float tensor of any float dtype in the compute type C.
template <typename G, typename C>
void AppendAs(const Tensor& t, std::vector<C>& values) {
  const G* in = t.data<G>();
  for (int64_t i = 0; i < t.numel(); ++i) values.push_back(static_cast<C>(Load<G>(in[i])));
}
template <typename C>
StatusOr<std::vector<C>> FloatValues(const Tensor& t, std::string_view name) {
  IRM_RETURN_IF_ERROR(
      CheckDType(t, name, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  std::vector<C> values;
  values.reserve(static_cast<size_t>(t.numel()));
  switch (t.dtype()) {
    case DType::kFloat16:
      AppendAs<Float16>(t, values);
      break;
    case DType::kBFloat16:
      AppendAs<BFloat16>(t, values);
      break;
    case DType::kFloat32:
      AppendAs<float>(t, values);
      break;
    default:
      AppendAs<double>(t, values);
      break;
  }
  return values;
}

struct ReduceAttrs {
  std::vector<int64_t> axis;
  bool keepdim = false;
  bool reduce_all = false;
};
StatusOr<ReduceAttrs> ReadReduceAttrs(const KernelAttrs& attrs) {
  ReduceAttrs r;
  IRM_ASSIGN_OR_RETURN(r.axis, attrs.GetOr<std::vector<int64_t>>("axis", {}));
  IRM_ASSIGN_OR_RETURN(r.keepdim, attrs.GetOr<bool>("keepdim", false));
  IRM_ASSIGN_OR_RETURN(r.reduce_all, attrs.GetOr<bool>("reduce_all", false));
  return r;
}

// The scalar grad of a reduction to one element (mean_all, squared_l2_norm): 0-D or [1].
template <typename C>
StatusOr<C> ScalarGrad(const Tensor& out_grad, std::string_view op) {
  if (!out_grad.shape().empty() && out_grad.shape() != std::vector<int64_t>{1}) {
    return KernelError(
        fmt::format("out_grad has shape {}, expected [] or [1] (the shape of {}'s out)",
                    ShapeToString(out_grad.shape()), op));
  }
  IRM_ASSIGN_OR_RETURN(std::vector<C> g, FloatValues<C>(out_grad, "out_grad"));
  return g[0];
}

template <typename T>
struct MeanKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(ReduceAttrs attrs, ReadReduceAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(ReducePlan plan,
                         PlanReduce(x.shape(), attrs.axis, attrs.keepdim, attrs.reduce_all, "x"));
    const std::vector<C> sums = SumReduced<C>(plan, x.data<T>(), [](T v) { return Load<T>(v); });
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), plan.out_shape);
    // An empty reduction is 0 / 0 = NaN, as in NumPy and Paddle.
    const C count = static_cast<C>(plan.reduce_count);
    for (size_t o = 0; o < sums.size(); ++o) out.data<T>()[o] = Store<T>(sums[o] / count);
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// Sums x (of element type X) into an out of element type Out.
template <typename X, typename Out>
Status SumInto(KernelCall& call, const ReducePlan& plan) {
  using C = Compute<Out>;
  const Tensor& x = call.input(0);
  if constexpr (std::is_floating_point_v<Compute<X>> && !std::is_floating_point_v<C>) {
    return KernelError(fmt::format("sum of {} x into {} is not supported", DTypeName(x.dtype()),
                                   DTypeName(DTypeOf<Out>())));
  } else {
    const std::vector<C> sums = SumReduced<C>(plan, x.data<X>(), [](X v) {
      if constexpr (std::is_same_v<X, bool>) {
        return static_cast<C>(v ? 1 : 0);
      } else {
        return static_cast<C>(Load<X>(v));
      }
    });
    Tensor out = Tensor::ZerosUnchecked(DTypeOf<Out>(), plan.out_shape);
    for (size_t o = 0; o < sums.size(); ++o) out.data<Out>()[o] = Store<Out>(sums[o]);
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
}

// sum's dtype attribute picks the out dtype; without it (Paddle's UNDEFINED) bool and int32 sum
// into int64 and other dtypes into themselves, as Paddle's SumRawInferMeta decides.
template <typename T>
struct SumKernel {
  static Status Run(KernelCall& call) {
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(ReduceAttrs attrs, ReadReduceAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(ReducePlan plan,
                         PlanReduce(x.shape(), attrs.axis, attrs.keepdim, attrs.reduce_all, "x"));
    DType out_dtype = x.dtype();
    if (out_dtype == DType::kBool || out_dtype == DType::kInt32) out_dtype = DType::kInt64;
    if (call.attrs.Has("dtype")) {
      IRM_ASSIGN_OR_RETURN(out_dtype, call.attrs.Get<DType>("dtype"));
    }
    switch (out_dtype) {
      case DType::kInt32:
        return SumInto<T, int32_t>(call, plan);
      case DType::kInt64:
        return SumInto<T, int64_t>(call, plan);
      case DType::kFloat16:
        return SumInto<T, Float16>(call, plan);
      case DType::kBFloat16:
        return SumInto<T, BFloat16>(call, plan);
      case DType::kFloat32:
        return SumInto<T, float>(call, plan);
      case DType::kFloat64:
        return SumInto<T, double>(call, plan);
      default:
        return KernelError(fmt::format("sum of {} x into {} is not supported", DTypeName(x.dtype()),
                                       DTypeName(out_dtype)));
    }
  }
};

// mean_grad and sum_grad: the out grad broadcast back over the reduced dims, divided by the
// number of reduced elements for mean.
template <typename T, bool kMean>
struct ReduceGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    const Tensor& out_grad = call.input(1);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(ReduceAttrs attrs, ReadReduceAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(ReducePlan plan,
                         PlanReduce(x.shape(), attrs.axis, attrs.keepdim, attrs.reduce_all, "x"));
    IRM_RETURN_IF_ERROR(CheckReducedGradShape(plan, out_grad, x.shape()));
    IRM_ASSIGN_OR_RETURN(std::vector<C> g, FloatValues<C>(out_grad, "out_grad"));
    if constexpr (kMean) {
      const C count = static_cast<C>(plan.reduce_count);
      for (C& v : g) v /= count;
    }
    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    T* dx = x_grad.data<T>();
    StridedWalk from = plan.BroadcastWalk();
    for (int64_t i = 0; i < x.numel(); ++i, from.Next()) {
      dx[i] = Store<T>(g[static_cast<size_t>(from.offset())]);
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};
template <typename T>
using MeanGradKernel = ReduceGradKernel<T, true>;
template <typename T>
using SumGradKernel = ReduceGradKernel<T, false>;

// prod (phi's ProdFunctor, paddle/phi/kernels/funcs/reduce_functor.h): the product per out element,
// multiplied in the summation order of the file comment from 1, in the compute type (integers
// wrap).
template <typename A>
A Mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <typename T>
struct ProdKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(ReduceAttrs attrs, ReadReduceAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(ReducePlan plan,
                         PlanReduce(x.shape(), attrs.axis, attrs.keepdim, attrs.reduce_all, "x"));
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), plan.out_shape);
    const T* in = x.data<T>();
    StridedWalk walk_out = plan.OutWalk();
    StridedWalk red = plan.ReducedWalk();
    for (int64_t o = 0; o < plan.out_numel; ++o, walk_out.Next()) {
      C product{1};
      red.Reset();
      for (int64_t r = 0; r < plan.reduce_count; ++r, red.Next()) {
        product = Mul(product, Load<T>(in[walk_out.offset() + red.offset()]));
      }
      out.data<T>()[o] = Store<T>(product);
    }
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

// prod_grad (phi's ProdGradFunctor): x_grad = out_grad * out * (1 / x), out and out_grad broadcast
// back over the reduced dims; a zero in x gives inf or NaN there, as in Paddle.
template <typename T>
struct ProdGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    const Tensor& out = call.input(1);
    const Tensor& out_grad = call.input(2);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_RETURN_IF_ERROR(CheckDType(out, "out", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(ReduceAttrs attrs, ReadReduceAttrs(call.attrs));
    IRM_ASSIGN_OR_RETURN(ReducePlan plan,
                         PlanReduce(x.shape(), attrs.axis, attrs.keepdim, attrs.reduce_all, "x"));
    IRM_RETURN_IF_ERROR(CheckReducedGradShape(plan, out_grad, x.shape()));
    IRM_RETURN_IF_ERROR(CheckReducedGradShape(plan, out, x.shape()));
    IRM_ASSIGN_OR_RETURN(std::vector<C> g, FloatValues<C>(out_grad, "out_grad"));
    const T* po = out.data<T>();
    const T* px = x.data<T>();
    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    T* dx = x_grad.data<T>();
    StridedWalk from = plan.BroadcastWalk();
    for (int64_t i = 0; i < x.numel(); ++i, from.Next()) {
      const auto o = static_cast<size_t>(from.offset());
      dx[i] = Store<T>(g[o] * Load<T>(po[o]) * (C{1} / Load<T>(px[i])));
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

template <typename T>
struct MeanAllKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    const T* in = x.data<T>();
    C sum = 0;
    for (int64_t i = 0; i < x.numel(); ++i) sum += Load<T>(in[i]);
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), {});
    out.data<T>()[0] = Store<T>(sum / static_cast<C>(x.numel()));
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

template <typename T>
struct MeanAllGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const C g, ScalarGrad<C>(call.input(1), "mean_all"));
    const T dx = Store<T>(g / static_cast<C>(x.numel()));
    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) x_grad.data<T>()[i] = dx;
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

template <typename T>
struct SquaredL2NormKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    const T* in = x.data<T>();
    C sum = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const C v = Load<T>(in[i]);
      sum += v * v;
    }
    Tensor out = Tensor::ZerosUnchecked(x.dtype(), {1});
    out.data<T>()[0] = Store<T>(sum);
    call.SetOutput(0, std::move(out));
    return Status::Ok();
  }
};

template <typename T>
struct SquaredL2NormGradKernel {
  static Status Run(KernelCall& call) {
    using C = Compute<T>;
    const Tensor& x = call.input(0);
    IRM_RETURN_IF_ERROR(CheckDType(x, "x", {DTypeOf<T>()}));
    IRM_ASSIGN_OR_RETURN(const C g, ScalarGrad<C>(call.input(1), "squared_l2_norm"));
    Tensor x_grad = Tensor::ZerosUnchecked(x.dtype(), x.shape());
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      x_grad.data<T>()[i] = Store<T>(C{2} * Load<T>(in[i]) * g);
    }
    call.SetOutput(0, std::move(x_grad));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterReductionKernels(KernelRegistry& registry) {
  constexpr KernelSignature kUnary{1, 1, 1};
  constexpr KernelSignature kGrad{2, 2, 1};
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<MeanKernel, float, double, Float16, BFloat16>(registry, "mean", kUnary)));
  IRM_RETURN_IF_ERROR((RegisterForTypes<MeanGradKernel, float, double, Float16, BFloat16>(
      registry, "mean_grad", kGrad)));
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<SumKernel, float, double, Float16, BFloat16, int32_t, int64_t, bool>(
          registry, "sum", kUnary)));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SumGradKernel, float, double, Float16, BFloat16>(
      registry, "sum_grad", kGrad)));
  IRM_RETURN_IF_ERROR(
      (RegisterForTypes<ProdKernel, float, double, Float16, BFloat16, int32_t, int64_t>(
          registry, "prod", kUnary)));
  IRM_RETURN_IF_ERROR((RegisterForTypes<ProdGradKernel, float, double, Float16, BFloat16>(
      registry, "prod_grad", {3, 3, 1})));
  IRM_RETURN_IF_ERROR((RegisterForTypes<MeanAllKernel, float, double, Float16, BFloat16>(
      registry, "mean_all", kUnary)));
  IRM_RETURN_IF_ERROR((RegisterForTypes<MeanAllGradKernel, float, double, Float16, BFloat16>(
      registry, "mean_all_grad", kGrad)));
  IRM_RETURN_IF_ERROR((RegisterForTypes<SquaredL2NormKernel, float, double, Float16, BFloat16>(
      registry, "squared_l2_norm", kUnary)));
  return RegisterForTypes<SquaredL2NormGradKernel, float, double, Float16, BFloat16>(
      registry, "squared_l2_norm_grad", kGrad);
}

}  // namespace irm::rt
