// Tests of the optimizer kernels (optimizer.cc): several steps of each update for every parameter
// dtype and a few shapes, each step checked against a float64 reference written here from the
// published update rules (Paddle's optimizer documentation), with the kernel's outputs fed back as
// the next step's inputs so that the beta powers advance; amsgrad, decoupled weight decay,
// nesterov and l2_decay, multi-precision master weights, skip_update, global beta powers, and the
// exact messages for bad operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::FromDoubles;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;
using Values = std::vector<double>;

const DType kFloatTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
const std::vector<std::vector<int64_t>> kShapes = {{3, 4}, {1}, {2, 1, 3}};

bool IsHalf(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }
// Where Paddle keeps optimizer state for a parameter of this dtype: float32 for 16-bit ones.
DType StateDType(DType param) { return IsHalf(param) ? DType::kFloat32 : param; }
Tensor Scalar(double v, DType dtype = DType::kFloat32) { return FromDoubles({v}, {1}, dtype); }
// The value a 1-element tensor holds (a float32 learning rate of 0.1 is not 0.1).
double Value(const Tensor& t) { return ToDoubles(t)[0]; }
std::string Name(const std::string& what, DType dtype, int step) {
  return what + " (" + DTypeName(dtype) + ", step " + std::to_string(step) + ")";
}

// ---- sgd ---------------------------------------------------------------------------------------

TEST(SgdKernelTest, StepsMatchTheReference) {
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      Tensor param = RandomTensor(dtype, shape, 1);
      const Tensor lr = Scalar(0.1);
      for (int step = 0; step < 3; ++step) {
        const Tensor grad = RandomTensor(dtype, shape, 10 + step);
        const Values p = ToDoubles(param), g = ToDoubles(grad);
        Values expected(p.size());
        for (size_t i = 0; i < p.size(); ++i) expected[i] = p[i] - Value(lr) * g[i];
        auto out = RunKernel("sgd", dtype, {&param, &lr, &grad, nullptr}, {}, 2);
        ExpectClose(out[0], expected, shape, ToleranceFor(dtype), Name("sgd", dtype, step));
        EXPECT_FALSE(out[1].defined());
        param = out[0];
      }
    }
  }
}

TEST(SgdKernelTest, MultiPrecisionUpdatesTheMasterAndRoundsIt) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const std::vector<int64_t> shape = {4, 3};
    Tensor master = RandomTensor(DType::kFloat32, shape, 2);
    // param is not what the step starts from: the master is.
    Tensor param = RandomTensor(dtype, shape, 3);
    const Tensor lr = Scalar(0.05, DType::kFloat64);
    KernelAttrs attrs;
    attrs.Set("multi_precision", true);
    for (int step = 0; step < 3; ++step) {
      // A float32 gradient for a 16-bit parameter, as phi's mixed path takes it.
      const Tensor grad = RandomTensor(step == 1 ? DType::kFloat32 : dtype, shape, 20 + step);
      const Values m = ToDoubles(master), g = ToDoubles(grad);
      Values expected(m.size());
      for (size_t i = 0; i < m.size(); ++i) expected[i] = m[i] - Value(lr) * g[i];
      auto out = RunKernel("sgd", dtype, {&param, &lr, &grad, &master}, attrs, 2);
      ExpectClose(out[1], expected, shape, ToleranceFor(DType::kFloat32),
                  Name("sgd master", dtype, step));
      EXPECT_TRUE(out[0].BitwiseEqual(FromDoubles(ToDoubles(out[1]), shape, dtype)));
      param = out[0];
      master = out[1];
    }
  }
}

TEST(SgdKernelTest, BadOperandsAreErrors) {
  const Tensor param = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor grad = RandomTensor(DType::kFloat32, {3, 2}, 2);
  const Tensor good_grad = RandomTensor(DType::kFloat32, {2, 3}, 2);
  const Tensor lr = Scalar(0.1);
  const Tensor lr2 = FromDoubles({0.1, 0.2}, {2}, DType::kFloat32);
  const Tensor int_lr = Tensor::FromVector<int32_t>({1}, {1});
  auto message = [](const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs) {
    const auto r = TryRunKernel("sgd", DType::kFloat32, inputs, attrs, 2);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message({&param, &lr, &grad}, {}),
            "sgd: grad has shape [3, 2], param has shape [2, 3]");
  EXPECT_EQ(message({&param, &lr2, &good_grad}, {}),
            "sgd: learning_rate must hold 1 element, got float32[2]");
  EXPECT_EQ(message({&param, &int_lr, &good_grad}, {}),
            "sgd: learning_rate is int32[1], expected a floating-point dtype");
  KernelAttrs multi;
  multi.Set("multi_precision", true);
  EXPECT_EQ(message({&param, &lr, &good_grad, nullptr}, multi),
            "sgd: multi_precision is set but master_param is missing");
  const Tensor f64_grad = RandomTensor(DType::kFloat64, {2, 3}, 2);
  EXPECT_EQ(message({&param, &lr, &f64_grad}, {}),
            "sgd: grad is float64, expected float32 for a float32 param");
}

// ---- momentum ----------------------------------------------------------------------------------

KernelAttrs MomentumAttrs(double mu, bool nesterov, const std::string& method, double coeff,
                          double rescale, bool multi_precision = false) {
  KernelAttrs attrs;
  attrs.Set("mu", mu);
  attrs.Set("use_nesterov", nesterov);
  attrs.Set("regularization_method", method);
  attrs.Set("regularization_coeff", coeff);
  attrs.Set("rescale_grad", rescale);
  attrs.Set("multi_precision", multi_precision);
  return attrs;
}

// Paddle's Momentum: g' = rescale * g (+ coeff * p), v = mu * v + g', p -= lr * v or, with
// nesterov, p -= lr * (g' + mu * v).
void ReferenceMomentum(Values& p, Values& v, const Values& g, double lr, double mu, bool nesterov,
                       double l2, double rescale) {
  for (size_t i = 0; i < p.size(); ++i) {
    const double grad = rescale * g[i] + l2 * p[i];
    v[i] = mu * v[i] + grad;
    p[i] -= nesterov ? lr * (grad + mu * v[i]) : lr * v[i];
  }
}

TEST(MomentumKernelTest, StepsMatchTheReferenceWithNesterovAndL2Decay) {
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      for (bool nesterov : {false, true}) {
        for (const std::string method : {"", "l2_decay"}) {
          const double coeff = 0.05, rescale = method.empty() ? 1.0 : 0.5;
          const KernelAttrs attrs = MomentumAttrs(0.9, nesterov, method, coeff, rescale);
          Tensor param = RandomTensor(dtype, shape, 1);
          Tensor velocity = RandomTensor(dtype, shape, 2);
          const Tensor lr = Scalar(0.1);
          for (int step = 0; step < 3; ++step) {
            const Tensor grad = RandomTensor(dtype, shape, 30 + step);
            Values p = ToDoubles(param), v = ToDoubles(velocity);
            ReferenceMomentum(p, v, ToDoubles(grad), Value(lr), 0.9, nesterov,
                              method.empty() ? 0.0 : coeff, rescale);
            auto out =
                RunKernel("momentum", dtype, {&param, &grad, &velocity, &lr, nullptr}, attrs, 3);
            const std::string what = std::string("momentum") + (nesterov ? " nesterov " : " ") +
                                     (method.empty() ? "plain" : method);
            ExpectClose(out[0], p, shape, ToleranceFor(dtype), Name(what + " param", dtype, step));
            ExpectClose(out[1], v, shape, ToleranceFor(dtype),
                        Name(what + " velocity", dtype, step));
            EXPECT_FALSE(out[2].defined());
            param = out[0];
            velocity = out[1];
          }
        }
      }
    }
  }
}

TEST(MomentumKernelTest, MultiPrecisionKeepsFloat32VelocityAndMaster) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const std::vector<int64_t> shape = {2, 5};
    Tensor master = RandomTensor(DType::kFloat32, shape, 4);
    Tensor param = RandomTensor(dtype, shape, 5);
    Tensor velocity = RandomTensor(DType::kFloat32, shape, 6);
    const Tensor lr = Scalar(0.2);
    const KernelAttrs attrs = MomentumAttrs(0.8, true, "l2_decay", 0.01, 1.0, true);
    for (int step = 0; step < 3; ++step) {
      const Tensor grad = RandomTensor(dtype, shape, 40 + step);
      Values p = ToDoubles(master), v = ToDoubles(velocity);
      ReferenceMomentum(p, v, ToDoubles(grad), Value(lr), 0.8, true, 0.01, 1.0);
      auto out = RunKernel("momentum", dtype, {&param, &grad, &velocity, &lr, &master}, attrs, 3);
      ASSERT_EQ(out[1].dtype(), DType::kFloat32);
      ExpectClose(out[2], p, shape, ToleranceFor(DType::kFloat32), Name("master", dtype, step));
      ExpectClose(out[1], v, shape, ToleranceFor(DType::kFloat32), Name("velocity", dtype, step));
      EXPECT_TRUE(out[0].BitwiseEqual(FromDoubles(ToDoubles(out[2]), shape, dtype)));
      param = out[0];
      velocity = out[1];
      master = out[2];
    }
  }
}

TEST(MomentumKernelTest, MasterWithoutMultiPrecisionIsLeftAsItIs) {
  const Tensor param = RandomTensor(DType::kFloat32, {3}, 1);
  const Tensor grad = RandomTensor(DType::kFloat32, {3}, 2);
  const Tensor velocity = RandomTensor(DType::kFloat32, {3}, 3);
  const Tensor master = RandomTensor(DType::kFloat32, {3}, 4);
  const Tensor lr = Scalar(0.1);
  auto out = RunKernel("momentum", DType::kFloat32, {&param, &grad, &velocity, &lr, &master},
                       MomentumAttrs(0.9, false, "", 0, 1.0), 3);
  EXPECT_TRUE(out[2].BitwiseEqual(master));
  EXPECT_FALSE(out[2].SharesStorageWith(master));
  Values p = ToDoubles(param), v = ToDoubles(velocity);
  ReferenceMomentum(p, v, ToDoubles(grad), Value(lr), 0.9, false, 0, 1.0);
  ExpectClose(out[0], p, {3}, ToleranceFor(DType::kFloat32), "param from param, not master");
}

TEST(MomentumKernelTest, BadOperandsAreErrors) {
  const Tensor param = RandomTensor(DType::kFloat16, {4}, 1);
  const Tensor grad = RandomTensor(DType::kFloat16, {4}, 2);
  const Tensor long_grad = RandomTensor(DType::kFloat16, {5}, 2);
  const Tensor velocity = RandomTensor(DType::kFloat32, {4}, 3);
  const Tensor f64_velocity = RandomTensor(DType::kFloat64, {4}, 3);
  const Tensor lr = Scalar(0.1);
  const Tensor lr3 = FromDoubles({1, 2, 3}, {3}, DType::kFloat32);
  const Tensor bad_master = RandomTensor(DType::kFloat16, {4}, 4);
  auto message = [](const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs) {
    const auto r = TryRunKernel("momentum", DType::kFloat16, inputs, attrs, 3);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  const KernelAttrs plain = MomentumAttrs(0.9, false, "", 0, 1);
  EXPECT_EQ(message({&param, &long_grad, &velocity, &lr}, plain),
            "momentum: grad has shape [5], param has shape [4]");
  EXPECT_EQ(message({&param, &grad, &velocity, &lr3}, plain),
            "momentum: learning_rate must hold 1 element, got float32[3]");
  EXPECT_EQ(message({&param, &grad, &f64_velocity, &lr}, plain),
            "momentum: velocity is float64, expected float16 or float32 for a float16 param");
  EXPECT_EQ(message({&param, &grad, &velocity, &lr}, MomentumAttrs(0.9, false, "l1_decay", 0, 1)),
            "momentum: regularization_method is 'l1_decay', expected '' or 'l2_decay'");
  EXPECT_EQ(message({&param, &grad, &velocity, &lr, &bad_master}, plain),
            "momentum: master_param is float16, expected float32 for a float16 param");
}

// ---- adam and adamw ----------------------------------------------------------------------------

struct AdamState {
  Tensor param, moment1, moment2, moment2_max, beta1_pow, beta2_pow, master;
};

struct AdamConfig {
  double lr = 0.1, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-6;
  bool amsgrad = false, multi_precision = false, global_beta_pow = false;
  // adamw only:
  bool with_decay = false;
  double lr_ratio = 1.0, coeff = 0.01;
};

KernelAttrs AdamAttrs(const AdamConfig& c, bool adamw) {
  KernelAttrs attrs;
  attrs.Set("beta1", c.beta1);
  attrs.Set("beta2", c.beta2);
  attrs.Set("epsilon", c.epsilon);
  attrs.Set("lazy_mode", false);
  attrs.Set("min_row_size_to_use_multithread", int64_t{1000});
  attrs.Set("multi_precision", c.multi_precision);
  attrs.Set("use_global_beta_pow", c.global_beta_pow);
  attrs.Set("amsgrad", c.amsgrad);
  if (adamw) {
    attrs.Set("lr_ratio", c.lr_ratio);
    attrs.Set("coeff", c.coeff);
    attrs.Set("with_decay", c.with_decay);
  }
  return attrs;
}

AdamState InitialAdamState(DType dtype, const std::vector<int64_t>& shape, const AdamConfig& c,
                           DType state_dtype) {
  AdamState s;
  s.param = RandomTensor(dtype, shape, 1);
  s.moment1 = RandomTensor(state_dtype, shape, 2, -0.5, 0.5);
  s.moment2 = RandomTensor(state_dtype, shape, 3, 0.01, 0.5);
  if (c.amsgrad) s.moment2_max = RandomTensor(state_dtype, shape, 4, 0.01, 0.5);
  const DType pow_dtype = StateDType(dtype);
  s.beta1_pow = Scalar(c.beta1, pow_dtype);
  s.beta2_pow = Scalar(c.beta2, pow_dtype);
  if (c.multi_precision) s.master = RandomTensor(DType::kFloat32, shape, 5);
  return s;
}

std::vector<Tensor> RunAdam(const std::string& name, DType dtype, const AdamState& s,
                            const Tensor& grad, const Tensor& lr, const AdamConfig& c,
                            const Tensor* skip = nullptr) {
  auto opt = [](const Tensor& t) { return t.defined() ? &t : nullptr; };
  return RunKernel(name, dtype,
                   {&s.param, &grad, &lr, &s.moment1, &s.moment2, opt(s.moment2_max), &s.beta1_pow,
                    &s.beta2_pow, opt(s.master), skip},
                   AdamAttrs(c, name == "adamw"), 7);
}

// The published rules: m1 = b1 m1 + (1 - b1) g, m2 = b2 m2 + (1 - b2) g^2 (m2max = max(m2max,
// m2) with amsgrad), lr_t = lr sqrt(1 - b2^t) / (1 - b1^t),
// p -= lr_t m1 / (sqrt(m2) + eps sqrt(1 - b2^t)); adamw first decays p -= lr lr_ratio coeff p.
struct AdamReference {
  Values p, m1, m2, m2_max;
  double beta1_pow_out, beta2_pow_out;
};
AdamReference ReferenceAdam(const Values& p0, const Values& g, const Values& m1, const Values& m2,
                            const Values& m2_max, double lr, double beta1_pow, double beta2_pow,
                            const AdamConfig& c, bool decoupled_decay) {
  AdamReference r{p0, m1, m2, m2_max, c.beta1 * beta1_pow, c.beta2 * beta2_pow};
  const double lr_t = lr * std::sqrt(1 - beta2_pow) / (1 - beta1_pow);
  for (size_t i = 0; i < p0.size(); ++i) {
    if (decoupled_decay) r.p[i] -= lr * c.lr_ratio * c.coeff * r.p[i];
    r.m1[i] = c.beta1 * m1[i] + (1 - c.beta1) * g[i];
    r.m2[i] = c.beta2 * m2[i] + (1 - c.beta2) * g[i] * g[i];
    double second = r.m2[i];
    if (c.amsgrad) second = r.m2_max[i] = std::max(m2_max[i], r.m2[i]);
    r.p[i] -= lr_t * r.m1[i] / (std::sqrt(second) + c.epsilon * std::sqrt(1 - beta2_pow));
  }
  return r;
}

// Three steps of `name` from InitialAdamState, each checked against ReferenceAdam.
void CheckAdamSteps(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                    const AdamConfig& c, DType state_dtype) {
  AdamState s = InitialAdamState(dtype, shape, c, state_dtype);
  const Tensor lr = Scalar(c.lr);
  const bool decay = name == "adamw" && c.with_decay;
  const double state_tol = ToleranceFor(state_dtype);
  for (int step = 0; step < 3; ++step) {
    const Tensor grad = RandomTensor(dtype, shape, 50 + step);
    const AdamReference r = ReferenceAdam(
        ToDoubles(c.multi_precision ? s.master : s.param), ToDoubles(grad), ToDoubles(s.moment1),
        ToDoubles(s.moment2), c.amsgrad ? ToDoubles(s.moment2_max) : Values{}, Value(lr),
        Value(s.beta1_pow), Value(s.beta2_pow), c, decay);
    const auto out = RunAdam(name, dtype, s, grad, lr, c);
    const std::string what = name + (c.amsgrad ? " amsgrad" : "") + (decay ? " decay" : "");
    if (c.multi_precision) {
      ExpectClose(out[6], r.p, shape, ToleranceFor(DType::kFloat32),
                  Name(what + " master", dtype, step));
      EXPECT_TRUE(out[0].BitwiseEqual(FromDoubles(ToDoubles(out[6]), shape, dtype)));
    } else {
      ExpectClose(out[0], r.p, shape, ToleranceFor(dtype), Name(what + " param", dtype, step));
      EXPECT_FALSE(out[6].defined());
    }
    ExpectClose(out[1], r.m1, shape, state_tol, Name(what + " moment1", dtype, step));
    ExpectClose(out[2], r.m2, shape, state_tol, Name(what + " moment2", dtype, step));
    if (c.amsgrad) {
      ExpectClose(out[3], r.m2_max, shape, state_tol, Name(what + " moment2_max", dtype, step));
    } else {
      EXPECT_FALSE(out[3].defined());
    }
    const double pow_tol = ToleranceFor(s.beta1_pow.dtype());
    ExpectClose(out[4], {r.beta1_pow_out}, {1}, pow_tol, Name(what + " beta1_pow", dtype, step));
    ExpectClose(out[5], {r.beta2_pow_out}, {1}, pow_tol, Name(what + " beta2_pow", dtype, step));
    s = {out[0], out[1], out[2], out[3], out[4], out[5], out[6]};
  }
}

TEST(AdamKernelTest, StepsMatchTheReference) {
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      for (bool amsgrad : {false, true}) {
        AdamConfig c;
        c.amsgrad = amsgrad;
        CheckAdamSteps("adam", dtype, shape, c, StateDType(dtype));
      }
    }
  }
}

TEST(AdamKernelTest, MomentsMayBeInTheParamsOwn16BitDtype) {
  AdamConfig c;
  c.amsgrad = true;
  CheckAdamSteps("adam", DType::kBFloat16, {3, 4}, c, DType::kBFloat16);
  CheckAdamSteps("adam", DType::kFloat16, {3, 4}, c, DType::kFloat16);
}

TEST(AdamKernelTest, MultiPrecisionUpdatesTheMaster) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    for (bool amsgrad : {false, true}) {
      AdamConfig c;
      c.multi_precision = true;
      c.amsgrad = amsgrad;
      CheckAdamSteps("adam", dtype, {2, 3}, c, StateDType(dtype));
      CheckAdamSteps("adamw", dtype, {2, 3}, c, StateDType(dtype));
    }
  }
}

TEST(AdamKernelTest, SkipUpdateCopiesEveryInput) {
  AdamConfig c;
  c.amsgrad = true;
  c.multi_precision = true;
  const AdamState s = InitialAdamState(DType::kFloat16, {2, 3}, c, DType::kFloat32);
  const Tensor grad = RandomTensor(DType::kFloat16, {2, 3}, 60);
  const Tensor lr = Scalar(0.1);
  const Tensor skip = Tensor::FromVector<bool>({true}, {1});
  const Tensor no_skip = Tensor::FromVector<bool>({false}, {1});
  for (const std::string name : {"adam", "adamw"}) {
    const auto out = RunAdam(name, DType::kFloat16, s, grad, lr, c, &skip);
    const Tensor* inputs[] = {&s.param,     &s.moment1,   &s.moment2, &s.moment2_max,
                              &s.beta1_pow, &s.beta2_pow, &s.master};
    for (size_t i = 0; i < 7; ++i) EXPECT_TRUE(out[i].BitwiseEqual(*inputs[i])) << name << " " << i;
    // skip_update false is an ordinary step.
    const auto stepped = RunAdam(name, DType::kFloat16, s, grad, lr, c, &no_skip);
    const auto plain = RunAdam(name, DType::kFloat16, s, grad, lr, c);
    for (size_t i = 0; i < 7; ++i) EXPECT_TRUE(stepped[i].BitwiseEqual(plain[i])) << name << i;
    EXPECT_FALSE(stepped[0].BitwiseEqual(s.param)) << name;
  }
}

TEST(AdamKernelTest, GlobalBetaPowsAreReadButNotAdvanced) {
  AdamConfig c;
  c.global_beta_pow = true;
  AdamState s = InitialAdamState(DType::kFloat32, {5}, c, DType::kFloat32);
  s.beta1_pow = Scalar(0.9 * 0.9 * 0.9);
  s.beta2_pow = Scalar(0.999 * 0.999 * 0.999);
  const Tensor grad = RandomTensor(DType::kFloat32, {5}, 61);
  const Tensor lr = Scalar(c.lr);
  const auto out = RunAdam("adam", DType::kFloat32, s, grad, lr, c);
  EXPECT_TRUE(out[4].BitwiseEqual(s.beta1_pow));
  EXPECT_TRUE(out[5].BitwiseEqual(s.beta2_pow));
  const AdamReference r =
      ReferenceAdam(ToDoubles(s.param), ToDoubles(grad), ToDoubles(s.moment1), ToDoubles(s.moment2),
                    {}, Value(lr), Value(s.beta1_pow), Value(s.beta2_pow), c, false);
  ExpectClose(out[0], r.p, {5}, ToleranceFor(DType::kFloat32), "param with global beta pows");
}

TEST(AdamKernelTest, Moment2MaxWithoutAmsgradIsLeftAsItIs) {
  AdamConfig c;
  c.amsgrad = true;
  const AdamState s = InitialAdamState(DType::kFloat64, {4}, c, DType::kFloat64);
  c.amsgrad = false;
  const auto out =
      RunAdam("adam", DType::kFloat64, s, RandomTensor(DType::kFloat64, {4}, 62), Scalar(0.1), c);
  EXPECT_TRUE(out[3].BitwiseEqual(s.moment2_max));
}

TEST(AdamwKernelTest, DecoupledDecayStepsMatchTheReference) {
  for (DType dtype : kFloatTypes) {
    for (const auto& shape : kShapes) {
      for (bool amsgrad : {false, true}) {
        AdamConfig c;
        c.with_decay = true;
        c.lr_ratio = 0.5;
        c.coeff = 0.2;
        c.amsgrad = amsgrad;
        CheckAdamSteps("adamw", dtype, shape, c, StateDType(dtype));
      }
    }
  }
}

TEST(AdamwKernelTest, WithoutDecayItIsAdam) {
  for (DType dtype : kFloatTypes) {
    AdamConfig c;
    c.with_decay = false;
    c.coeff = 0.3;
    const AdamState s = InitialAdamState(dtype, {3, 2}, c, StateDType(dtype));
    const Tensor grad = RandomTensor(dtype, {3, 2}, 63);
    const auto adamw = RunAdam("adamw", dtype, s, grad, Scalar(c.lr), c);
    const auto adam = RunAdam("adam", dtype, s, grad, Scalar(c.lr), c);
    for (size_t i = 0; i < 7; ++i) {
      EXPECT_EQ(adamw[i].defined(), adam[i].defined());
      if (adam[i].defined()) {
        EXPECT_TRUE(adamw[i].BitwiseEqual(adam[i])) << DTypeName(dtype) << i;
      }
    }
  }
}

TEST(AdamKernelTest, BadOperandsAreErrors) {
  AdamConfig c;
  const AdamState s = InitialAdamState(DType::kFloat32, {2, 3}, c, DType::kFloat32);
  const Tensor grad = RandomTensor(DType::kFloat32, {2, 3}, 64);
  const Tensor wide_grad = RandomTensor(DType::kFloat32, {2, 4}, 64);
  const Tensor lr = Scalar(0.1);
  const Tensor lr_empty = Tensor::ZerosUnchecked(DType::kFloat32, {0});
  const Tensor f64_moment = RandomTensor(DType::kFloat64, {2, 3}, 65);
  const Tensor pow2 = FromDoubles({0.9, 0.9}, {2}, DType::kFloat32);
  const Tensor int_skip = Tensor::FromVector<int32_t>({1}, {1});
  for (const std::string name : {"adam", "adamw"}) {
    auto message = [&](std::vector<const Tensor*> inputs, const AdamConfig& config) {
      const auto r =
          TryRunKernel(name, DType::kFloat32, inputs, AdamAttrs(config, name == "adamw"), 7);
      return r.ok() ? std::string("ok") : r.status().message();
    };
    auto inputs = [&](const Tensor* g, const Tensor* l, const Tensor* m1, const Tensor* b1p,
                      const Tensor* skip) -> std::vector<const Tensor*> {
      return {&s.param, g, l, m1, &s.moment2, nullptr, b1p, &s.beta2_pow, nullptr, skip};
    };
    EXPECT_EQ(message(inputs(&grad, &lr, &s.moment1, &s.beta1_pow, nullptr), c), "ok");
    EXPECT_EQ(message(inputs(&wide_grad, &lr, &s.moment1, &s.beta1_pow, nullptr), c),
              name + ": grad has shape [2, 4], param has shape [2, 3]");
    EXPECT_EQ(message(inputs(&grad, &lr_empty, &s.moment1, &s.beta1_pow, nullptr), c),
              name + ": learning_rate must hold 1 element, got float32[0]");
    EXPECT_EQ(message(inputs(&grad, &lr, &f64_moment, &s.beta1_pow, nullptr), c),
              name + ": moment1 is float64, expected float32 for a float32 param");
    EXPECT_EQ(message(inputs(&grad, &lr, &s.moment1, &pow2, nullptr), c),
              name + ": beta1_pow must hold 1 element, got float32[2]");
    EXPECT_EQ(message(inputs(&grad, &lr, &s.moment1, &s.beta1_pow, &int_skip), c),
              name + ": skip_update is int32[1], expected one bool");
    AdamConfig amsgrad = c;
    amsgrad.amsgrad = true;
    EXPECT_EQ(message(inputs(&grad, &lr, &s.moment1, &s.beta1_pow, nullptr), amsgrad),
              name + ": amsgrad is set but moment2_max is missing");
    AdamConfig multi = c;
    multi.multi_precision = true;
    EXPECT_EQ(message(inputs(&grad, &lr, &s.moment1, &s.beta1_pow, nullptr), multi),
              name + ": multi_precision is set but master_param is missing");
  }
}

}  // namespace
}  // namespace irm::rt
