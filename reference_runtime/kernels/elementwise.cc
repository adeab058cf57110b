// Elementwise kernels: the broadcasting binary ops (add, subtract, multiply, divide, floor_divide,
// maximum, remainder, elementwise_pow) and their grads, floor (and its zero grad), comparisons and
// logic (equal, not_equal, less_than, greater_than, logical_and, logical_or, logical_xor,
// logical_not), increment and scale. Semantics are Paddle's phi functors': integer divide
// truncates, floor_divide rounds towards -inf (Python's
// //), remainder takes the divisor's sign (Python's %), maximum is `x > y ? x : y`, float equal is
// |x - y| < 1e-8 (exact for infinities and 16-bit types, false with a NaN) and not_equal its
// negation. Integer
// arithmetic wraps around instead of overflowing (two's complement); an integer divisor of zero
// is an error naming the element. Grads sum the broadcast dims back to each operand's shape in
// increasing output index (broadcast.h).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference_runtime/kernels/broadcast.h"
#include "reference_runtime/kernels/elementwise.h"
#include "reference_runtime/kernels/register.h"

namespace irm::rt {

Status ExpectDType(const Tensor& t, DType dtype, std::string_view name) {
  if (t.dtype() == dtype) return Status::Ok();
  return KernelError(fmt::format("{} is {}, not {}", name, DTypeName(t.dtype()), DTypeName(dtype)));
}

Status ExpectSameShape(const Tensor& a, std::string_view a_name, const Tensor& b,
                       std::string_view b_name) {
  if (a.shape() == b.shape()) return Status::Ok();
  return KernelError(fmt::format("{} {} and {} {} differ in shape", a_name,
                                 ShapeToString(a.shape()), b_name, ShapeToString(b.shape())));
}

std::string IndexToString(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> multi(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    multi[d] = index % shape[d];
    index /= shape[d];
  }
  return ShapeToString(multi);
}

namespace {

// ---- scalar operations on compute values -------------------------------------------------------

template <typename C>
constexpr bool kIsInt = std::is_integral_v<C>;

// Two's complement wrap-around for integers (signed overflow would be undefined behaviour).
template <typename C>
C Add(C a, C b) {
  if constexpr (kIsInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename C>
C Sub(C a, C b) {
  if constexpr (kIsInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename C>
C Mul(C a, C b) {
  if constexpr (kIsInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
// Integers: truncating, b != 0 (checked before); min / -1 wraps to min.
template <typename C>
C Div(C a, C b) {
  if constexpr (kIsInt<C>) {
    if (b == -1) return Sub(C(0), a);
  }
  return a / b;
}
// The remainder with the divisor's sign; integers: b != 0 (checked before).
template <typename C>
C Mod(C a, C b) {
  C r;
  if constexpr (kIsInt<C>) {
    if (b == -1) return 0;  // min % -1 would overflow
    r = a % b;
  } else {
    r = std::fmod(a, b);
  }
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Python's //, as phi's FloorDivideFunctor (paddle/phi/kernels/funcs/elementwise_functor.h).
// Integers: the truncated quotient, less one when the signs differ and the division is inexact
// (b != 0, checked before; min // -1 wraps to min). Floats: the quotient of a - fmod(a, b), which
// is exact where a / b may round up to the next integer (1 // 0.1 is 9), rounded to the nearest
// integer; a zero quotient takes the sign of a / b, and a zero divisor gives a / b (inf or NaN).
template <typename C>
C FloorDiv(C a, C b) {
  if constexpr (kIsInt<C>) {
    const C quotient = Div(a, b);
    if ((a < 0) != (b < 0) && b != -1 && a % b != 0) return Sub(quotient, C(1));
    return quotient;
  } else {
    if (b == 0) return a / b;
    const C mod = std::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= C(1);
    if (div == 0) return std::copysign(C(0), a / b);
    C floored = std::floor(div);
    if (div - floored > C(0.5)) floored += C(1);
    return floored;
  }
}
template <typename C>
C Max(C a, C b) {
  return a > b ? a : b;
}
// Paddle's equal: floats within 1e-8 of each other (their difference taken in the element type),
// infinities only equal to themselves, a NaN equal to nothing; float16/bfloat16 and integers
// exactly.
template <typename T>
bool Equal(Compute<T> a, Compute<T> b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (std::isinf(a) || std::isinf(b)) return a == b;
    if (std::isnan(a) || std::isnan(b)) return false;
    return std::fabs(static_cast<double>(a - b)) < 1e-8;
  } else {
    return a == b;
  }
}

// ---- broadcasting binary ops --------------------------------------------------------------------

// x, y -> out of Out with broadcasting: out = f(Load(x), Load(y)), stored as Out (Store<T> for
// arithmetic results, as is for bool results).
template <typename T, typename Out, typename F>
Status BroadcastBinary(KernelCall& call, F&& f) {
  const Tensor& x = call.input(0);
  const Tensor& y = call.input(1);
  IRM_RETURN_IF_ERROR(ExpectDType(x, DTypeOf<T>(), "x"));
  IRM_RETURN_IF_ERROR(ExpectDType(y, DTypeOf<T>(), "y"));
  IRM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShapes(x.shape(), y.shape()));
  IRM_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DTypeOf<Out>(), shape));
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  Out* po = out.data<Out>();
  const BroadcastWalk<2> walk = PlanBroadcast<2>(shape, {&x.shape(), &y.shape()});
  ForEachBroadcast(walk, [&](int64_t i, const std::array<int64_t, 2>& at) {
    const auto value = f(Load<T>(px[at[0]]), Load<T>(py[at[1]]));
    if constexpr (std::is_same_v<Out, bool>) {
      po[i] = value;
    } else {
      po[i] = Store<T>(value);
    }
  });
  call.SetOutput(0, std::move(out));
  return Status::Ok();
}

// Integer divide and remainder: the first zero in y (in y's own order) is an error, unless the
// output is empty and nothing is divided.
template <typename T>
Status CheckNoZeroDivisor(const KernelCall& call, const char* what) {
  if constexpr (kIsInt<T>) {
    const Tensor& x = call.input(0);
    const Tensor& y = call.input(1);
    if (x.numel() == 0) return Status::Ok();
    const T* py = y.data<T>();
    for (int64_t i = 0; i < y.numel(); ++i) {
      if (py[i] != 0) continue;
      return KernelError(fmt::format("integer {} by zero: y{} is 0 (y {})", what,
                                     IndexToString(i, y.shape()), ShapeToString(y.shape())));
    }
  }
  return Status::Ok();
}

template <typename T>
struct AddKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, T>(call, Add<Compute<T>>); }
};
template <typename T>
struct SubtractKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, T>(call, Sub<Compute<T>>); }
};
template <typename T>
struct MultiplyKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, T>(call, Mul<Compute<T>>); }
};
template <typename T>
struct DivideKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor<T>(call, "division"));
    return BroadcastBinary<T, T>(call, Div<Compute<T>>);
  }
};
template <typename T>
struct RemainderKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor<T>(call, "remainder"));
    return BroadcastBinary<T, T>(call, Mod<Compute<T>>);
  }
};
template <typename T>
struct FloorDivideKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(CheckNoZeroDivisor<T>(call, "floor division"));
    return BroadcastBinary<T, T>(call, FloorDiv<Compute<T>>);
  }
};
template <typename T>
struct MaximumKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, T>(call, Max<Compute<T>>); }
};

// phi's ElementwisePowFunctor (paddle/phi/kernels/funcs/elementwise_functor.h, compute_pow):
// std::pow in the compute type; integers take std::llrint of the double power, so that an
// inexact pow(3, 1) still gives 3.
template <typename C>
C Pow(C a, C b) {
  if constexpr (kIsInt<C>) {
    return static_cast<C>(std::llrint(std::pow(static_cast<double>(a), static_cast<double>(b))));
  } else {
    return std::pow(a, b);
  }
}
template <typename T>
struct ElementwisePowKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, T>(call, Pow<Compute<T>>); }
};
// phi's FloorFunctor (paddle/phi/kernels/funcs/activation_functor.h): std::floor.
template <typename T>
struct FloorKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "x"));
    call.SetOutput(0, MapUnary<T, T>(call.input(0), [](Compute<T> v) { return std::floor(v); }));
    return Status::Ok();
  }
};

template <typename T>
struct EqualKernel {
  static Status Run(KernelCall& call) { return BroadcastBinary<T, bool>(call, Equal<T>); }
};
// phi's NotEqualFunctor is !EqualFunctor: a NaN is not equal to anything, itself included.
template <typename T>
struct NotEqualKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call,
                                    [](Compute<T> a, Compute<T> b) { return !Equal<T>(a, b); });
  }
};
template <typename T>
struct LessThanKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call, [](Compute<T> a, Compute<T> b) { return a < b; });
  }
};
template <typename T>
struct GreaterThanKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call, [](Compute<T> a, Compute<T> b) { return a > b; });
  }
};
// A value is true when it is not zero (a NaN is true), as a C++ conversion to bool.
template <typename T>
struct LogicalAndKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call, [](Compute<T> a, Compute<T> b) {
      return static_cast<bool>(a) && static_cast<bool>(b);
    });
  }
};
template <typename T>
struct LogicalOrKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call, [](Compute<T> a, Compute<T> b) {
      return static_cast<bool>(a) || static_cast<bool>(b);
    });
  }
};
// phi's LogicalXorFunctor (paddle/phi/kernels/funcs/logical_functor.h): (a || b) && !(a && b).
template <typename T>
struct LogicalXorKernel {
  static Status Run(KernelCall& call) {
    return BroadcastBinary<T, bool>(call, [](Compute<T> a, Compute<T> b) {
      return static_cast<bool>(a) != static_cast<bool>(b);
    });
  }
};
template <typename T>
struct LogicalNotKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "x"));
    call.SetOutput(0, MapUnary<bool, T>(call.input(0), [](Compute<T> v) { return !v; }));
    return Status::Ok();
  }
};

// ---- grads
// ---------------------------------------------------------------------------------------

// The inputs every binary grad starts from: x and y (for their shapes and values), out_grad of
// their broadcast shape.
struct BinaryGradInputs {
  const Tensor* x;
  const Tensor* y;
  const Tensor* out_grad;
  std::vector<int64_t> shape;  // the broadcast shape of x and y
};

template <typename T>
StatusOr<BinaryGradInputs> CheckBinaryGrad(const KernelCall& call, size_t out_grad_index) {
  BinaryGradInputs in{&call.input(0), &call.input(1), &call.input(out_grad_index), {}};
  IRM_RETURN_IF_ERROR(ExpectDType(*in.x, DTypeOf<T>(), "x"));
  IRM_RETURN_IF_ERROR(ExpectDType(*in.y, DTypeOf<T>(), "y"));
  IRM_RETURN_IF_ERROR(ExpectDType(*in.out_grad, DTypeOf<T>(), "out_grad"));
  IRM_ASSIGN_OR_RETURN(in.shape, BroadcastShapes(in.x->shape(), in.y->shape()));
  if (in.out_grad->shape() != in.shape) {
    return KernelError(fmt::format("out_grad {} is not the broadcast shape {} of x {} and y {}",
                                   ShapeToString(in.out_grad->shape()), ShapeToString(in.shape),
                                   ShapeToString(in.x->shape()), ShapeToString(in.y->shape())));
  }
  return in;
}

// The grad of operand `which` (0: x, 1: y): sum over the outputs it feeds of
// term(out_index, offset of x, offset of y).
template <typename T, typename Term>
Tensor OperandGrad(const BinaryGradInputs& in, int which, Term&& term) {
  const std::vector<int64_t>& target = which == 0 ? in.x->shape() : in.y->shape();
  const std::vector<int64_t>& other = which == 0 ? in.y->shape() : in.x->shape();
  return SumToShape<T, 2>(in.shape, {&target, &other},
                          [&](int64_t i, const std::array<int64_t, 2>& at) {
                            return which == 0 ? term(i, at[0], at[1]) : term(i, at[1], at[0]);
                          });
}

template <typename T>
struct AddGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(BinaryGradInputs in, CheckBinaryGrad<T>(call, 2));
    const T* g = in.out_grad->data<T>();
    auto term = [&](int64_t i, int64_t, int64_t) { return Load<T>(g[i]); };
    if (call.wants_output(0)) call.SetOutput(0, OperandGrad<T>(in, 0, term));
    if (call.wants_output(1)) call.SetOutput(1, OperandGrad<T>(in, 1, term));
    return Status::Ok();
  }
};

template <typename T>
struct SubtractGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(BinaryGradInputs in, CheckBinaryGrad<T>(call, 2));
    const T* g = in.out_grad->data<T>();
    if (call.wants_output(0)) {
      call.SetOutput(
          0, OperandGrad<T>(in, 0, [&](int64_t i, int64_t, int64_t) { return Load<T>(g[i]); }));
    }
    if (call.wants_output(1)) {
      call.SetOutput(
          1, OperandGrad<T>(in, 1, [&](int64_t i, int64_t, int64_t) { return -Load<T>(g[i]); }));
    }
    return Status::Ok();
  }
};

// d(x * y): x_grad = out_grad * y, y_grad = out_grad * x (each summed to its operand's shape).
template <typename T>
struct MultiplyGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(BinaryGradInputs in, CheckBinaryGrad<T>(call, 2));
    const T* g = in.out_grad->data<T>();
    const T* px = in.x->data<T>();
    const T* py = in.y->data<T>();
    if (call.wants_output(0)) {
      call.SetOutput(0, OperandGrad<T>(in, 0, [&](int64_t i, int64_t, int64_t yi) {
                       return Load<T>(g[i]) * Load<T>(py[yi]);
                     }));
    }
    if (call.wants_output(1)) {
      call.SetOutput(1, OperandGrad<T>(in, 1, [&](int64_t i, int64_t xi, int64_t) {
                       return Load<T>(g[i]) * Load<T>(px[xi]);
                     }));
    }
    return Status::Ok();
  }
};

// d(x / y): x_grad = out_grad / y, y_grad = -out_grad * out / y (out = x / y, as Paddle's
// DivGradXYFunctor, so that out need not be recomputed).
template <typename T>
struct DivideGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(BinaryGradInputs in, CheckBinaryGrad<T>(call, 3));
    const Tensor& out = call.input(2);
    IRM_RETURN_IF_ERROR(ExpectDType(out, DTypeOf<T>(), "out"));
    IRM_RETURN_IF_ERROR(ExpectSameShape(out, "out", *in.out_grad, "out_grad"));
    const T* g = in.out_grad->data<T>();
    const T* po = out.data<T>();
    const T* py = in.y->data<T>();
    if (call.wants_output(0)) {
      call.SetOutput(0, OperandGrad<T>(in, 0, [&](int64_t i, int64_t, int64_t yi) {
                       return Load<T>(g[i]) / Load<T>(py[yi]);
                     }));
    }
    if (call.wants_output(1)) {
      call.SetOutput(1, OperandGrad<T>(in, 1, [&](int64_t i, int64_t, int64_t yi) {
                       return -Load<T>(g[i]) * Load<T>(po[i]) / Load<T>(py[yi]);
                     }));
    }
    return Status::Ok();
  }
};

// d(x ** y), as phi's PowGradDX / PowGradDY (paddle/phi/kernels/impl/
// elementwise_grad_kernel_impl.h): x_grad = out_grad * y * pow(x, y - 1), y_grad = out_grad *
// log(x) * pow(x, y), in the compute type, each summed to its operand's shape.
template <typename T>
struct ElementwisePowGradKernel {
  static Status Run(KernelCall& call) {
    IRM_ASSIGN_OR_RETURN(BinaryGradInputs in, CheckBinaryGrad<T>(call, 2));
    const T* g = in.out_grad->data<T>();
    const T* px = in.x->data<T>();
    const T* py = in.y->data<T>();
    using C = Compute<T>;
    if (call.wants_output(0)) {
      call.SetOutput(0, OperandGrad<T>(in, 0, [&](int64_t i, int64_t xi, int64_t yi) {
                       const C x = Load<T>(px[xi]);
                       const C y = Load<T>(py[yi]);
                       return Load<T>(g[i]) * y * std::pow(x, y - C(1));
                     }));
    }
    if (call.wants_output(1)) {
      call.SetOutput(1, OperandGrad<T>(in, 1, [&](int64_t i, int64_t xi, int64_t yi) {
                       const C x = Load<T>(px[xi]);
                       const C y = Load<T>(py[yi]);
                       return Load<T>(g[i]) * std::log(x) * std::pow(x, y);
                     }));
    }
    return Status::Ok();
  }
};

// floor_grad is phi's ZeroGradFunctor (activation_functor.h, FloorGradFunctor): zeros of
// out_grad's shape.
template <typename T>
struct FloorGradKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "out_grad"));
    IRM_ASSIGN_OR_RETURN(Tensor zeros, Tensor::Zeros(DTypeOf<T>(), call.input(0).shape()));
    call.SetOutput(0, std::move(zeros));
    return Status::Ok();
  }
};

// ---- increment, scale
// ----------------------------------------------------------------------------

// A float attribute as the compute type of T: integers take its integral part (as Paddle's
// static_cast<T>) and must be in range.
template <typename T>
StatusOr<Compute<T>> AttrAs(double value, std::string_view name) {
  if constexpr (kIsInt<T>) {
    constexpr double kMin = static_cast<double>(std::numeric_limits<T>::min());
    if (!(value > kMin - 1.0 && value < -kMin)) {  // also false for a NaN
      return KernelError(
          fmt::format("attribute '{}' ({}) does not fit {}", name, value, DTypeName(DTypeOf<T>())));
    }
  }
  return static_cast<Compute<T>>(value);
}

template <typename T>
struct IncrementKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "x"));
    IRM_ASSIGN_OR_RETURN(double value, call.attrs.GetOr<double>("value", 1.0));
    IRM_ASSIGN_OR_RETURN(Compute<T> step, AttrAs<T>(value, "value"));
    call.SetOutput(0, MapUnary<T, T>(call.input(0), [&](Compute<T> v) { return Add(v, step); }));
    return Status::Ok();
  }
};

// out = scale * x + bias, or scale * (x + bias) when !bias_after_scale; scale and bias taken in
// the compute type (float32 for 16-bit types) and the result rounded once.
template <typename T>
struct ScaleKernel {
  static Status Run(KernelCall& call) {
    IRM_RETURN_IF_ERROR(ExpectDType(call.input(0), DTypeOf<T>(), "x"));
    IRM_ASSIGN_OR_RETURN(double scale_attr, call.attrs.GetOr<double>("scale", 1.0));
    IRM_ASSIGN_OR_RETURN(double bias_attr, call.attrs.GetOr<double>("bias", 0.0));
    IRM_ASSIGN_OR_RETURN(bool after, call.attrs.GetOr<bool>("bias_after_scale", true));
    IRM_ASSIGN_OR_RETURN(Compute<T> scale, AttrAs<T>(scale_attr, "scale"));
    IRM_ASSIGN_OR_RETURN(Compute<T> bias, AttrAs<T>(bias_attr, "bias"));
    call.SetOutput(0, MapUnary<T, T>(call.input(0), [&](Compute<T> v) {
                     return after ? Add(Mul(scale, v), bias) : Mul(scale, Add(v, bias));
                   }));
    return Status::Ok();
  }
};

}  // namespace

Status RegisterElementwiseKernels(KernelRegistry& registry) {
  const KernelSignature unary{1, 1, 1};
  const KernelSignature binary{2, 2, 1};
  IRM_RETURN_IF_ERROR(RegisterArithmetic<AddKernel>(registry, "add", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<SubtractKernel>(registry, "subtract", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<MultiplyKernel>(registry, "multiply", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<DivideKernel>(registry, "divide", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<FloorDivideKernel>(registry, "floor_divide", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<MaximumKernel>(registry, "maximum", binary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<RemainderKernel>(registry, "remainder", binary));
  IRM_RETURN_IF_ERROR(
      RegisterArithmetic<ElementwisePowKernel>(registry, "elementwise_pow", binary));
  IRM_RETURN_IF_ERROR(RegisterFloating<FloorKernel>(registry, "floor", unary));
  IRM_RETURN_IF_ERROR(RegisterFloating<FloorGradKernel>(registry, "floor_grad", unary));

  IRM_RETURN_IF_ERROR(RegisterFloating<AddGradKernel>(registry, "add_grad", {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFloating<SubtractGradKernel>(registry, "subtract_grad", {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFloating<MultiplyGradKernel>(registry, "multiply_grad", {3, 3, 2}));
  IRM_RETURN_IF_ERROR(RegisterFloating<DivideGradKernel>(registry, "divide_grad", {4, 4, 2}));
  IRM_RETURN_IF_ERROR(
      RegisterFloating<ElementwisePowGradKernel>(registry, "elementwise_pow_grad", {3, 3, 2}));

  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<EqualKernel>(registry, "equal", binary));
  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<NotEqualKernel>(registry, "not_equal", binary));
  IRM_RETURN_IF_ERROR(RegisterNumeric<LessThanKernel>(registry, "less_than", binary));
  IRM_RETURN_IF_ERROR(RegisterNumeric<GreaterThanKernel>(registry, "greater_than", binary));
  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<LogicalAndKernel>(registry, "logical_and", binary));
  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<LogicalOrKernel>(registry, "logical_or", binary));
  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<LogicalXorKernel>(registry, "logical_xor", binary));
  IRM_RETURN_IF_ERROR(RegisterNumericAndBool<LogicalNotKernel>(registry, "logical_not", unary));

  IRM_RETURN_IF_ERROR(RegisterArithmetic<IncrementKernel>(registry, "increment", unary));
  IRM_RETURN_IF_ERROR(RegisterArithmetic<ScaleKernel>(registry, "scale", unary));
  return Status::Ok();
}

}  // namespace irm::rt
