// conv2d and conv2d_grad against a direct float64 convolution written here from the definition
// (every output pixel a sum over its window; the grads scattered back from every product), in
// both layouts and both GEMM modes, with odd sizes, groups (depthwise too), strides, dilations and
// the three padding algorithms, whose resolved paddings each case states by hand from Paddle's
// rule (paddle/phi/kernels/cpu/conv_util.h, UpdatePaddingAndDilation); the kernel's grad against
// central differences; bit-identical reruns; and the bad-input messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::rt {
namespace {

using testing::ExpectClose;
using testing::NumericGradient;
using testing::RandomTensor;
using testing::RunKernel;
using testing::ToDoubles;
using testing::ToleranceFor;
using testing::TryRunKernel;

struct ConvCase {
  std::string name;
  int64_t n, c, h, w;  // input, NCHW order whatever the layout
  int64_t o, kh, kw;   // filter [o, c / groups, kh, kw]
  std::vector<int64_t> strides;
  std::vector<int64_t> paddings;  // the attribute as given
  std::string algorithm;
  std::vector<int64_t> dilations;  // the attribute as given
  int64_t groups;
  // Resolved by hand: [top, bottom, left, right], the dilations in effect, the output size.
  std::vector<int64_t> pads;
  int64_t dil_h, dil_w;
  int64_t oh, ow;
};

const std::vector<ConvCase> kCases = {
    {"pad1", 2, 3, 7, 5, 4, 3, 3, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 1, {1, 1, 1, 1}, 1, 1, 7, 5},
    {"groups_stride_dilation_pad4",
     2,
     6,
     9,
     7,
     9,
     3,
     2,
     {2, 1},
     {1, 0, 2, 1},
     "EXPLICIT",
     {2, 1},
     3,
     {1, 0, 2, 1},
     2,
     1,
     3,
     9},
    // SAME: out = ceil(7 / 2) = 4, ceil(6 / 2) = 3; pad sums (4-1)*2+3-7 = 2 -> (1, 1) and
    // (3-1)*2+2-6 = 0; the dilations become 1.
    {"same", 1, 2, 7, 6, 3, 3, 2, {2, 2}, {5, 5}, "SAME", {2, 2}, 1, {1, 1, 0, 0}, 1, 1, 4, 3},
    // SAME with stride 1 and an even kernel: pad sum 1 -> (0, 1) (the low side gets the half).
    {"same_even_kernel",
     1,
     1,
     4,
     5,
     2,
     2,
     4,
     {1, 1},
     {0, 0},
     "SAME",
     {1, 1},
     1,
     {0, 1, 1, 2},
     1,
     1,
     4,
     5},
    // VALID ignores the paddings.
    {"valid", 3, 2, 5, 4, 2, 2, 3, {1, 1}, {3, 3}, "VALID", {1, 1}, 1, {0, 0, 0, 0}, 1, 1, 4, 2},
    {"depthwise",
     1,
     4,
     5,
     5,
     8,
     3,
     3,
     {2, 2},
     {1, 1},
     "EXPLICIT",
     {1, 1},
     4,
     {1, 1, 1, 1},
     1,
     1,
     3,
     3},
    {"empty_batch",
     0,
     2,
     3,
     3,
     2,
     1,
     1,
     {1, 1},
     {0, 0},
     "EXPLICIT",
     {1, 1},
     1,
     {0, 0, 0, 0},
     1,
     1,
     3,
     3},
};

KernelAttrs AttrsOf(const ConvCase& c, bool nhwc) {
  KernelAttrs a;
  a.Set("strides", c.strides);
  a.Set("paddings", c.paddings);
  a.Set("padding_algorithm", c.algorithm);
  a.Set("dilations", c.dilations);
  a.Set("groups", c.groups);
  a.Set("data_format", std::string(nhwc ? "NHWC" : "NCHW"));
  return a;
}

// Flat index of (i, ch, y, x) in a tensor of C channels and H x W pixels in either layout.
int64_t At(bool nhwc, int64_t C, int64_t H, int64_t W, int64_t i, int64_t ch, int64_t y,
           int64_t x) {
  return nhwc ? ((i * H + y) * W + x) * C + ch : ((i * C + ch) * H + y) * W + x;
}

std::vector<int64_t> InputShape(const ConvCase& c, bool nhwc) {
  return nhwc ? std::vector<int64_t>{c.n, c.h, c.w, c.c} : std::vector<int64_t>{c.n, c.c, c.h, c.w};
}
std::vector<int64_t> OutputShape(const ConvCase& c, bool nhwc) {
  return nhwc ? std::vector<int64_t>{c.n, c.oh, c.ow, c.o}
              : std::vector<int64_t>{c.n, c.o, c.oh, c.ow};
}

// Calls f(input index, filter index, output index) for every product of the convolution.
template <typename F>
void ForEachProduct(const ConvCase& c, bool nhwc, F f) {
  const int64_t cg = c.c / c.groups;
  const int64_t og = c.o / c.groups;
  for (int64_t i = 0; i < c.n; ++i)
    for (int64_t oc = 0; oc < c.o; ++oc)
      for (int64_t oy = 0; oy < c.oh; ++oy)
        for (int64_t ox = 0; ox < c.ow; ++ox)
          for (int64_t k = 0; k < cg; ++k)
            for (int64_t ki = 0; ki < c.kh; ++ki)
              for (int64_t kj = 0; kj < c.kw; ++kj) {
                const int64_t y = oy * c.strides[0] - c.pads[0] + ki * c.dil_h;
                const int64_t x = ox * c.strides[1] - c.pads[2] + kj * c.dil_w;
                if (y < 0 || y >= c.h || x < 0 || x >= c.w) continue;
                const int64_t ic = (oc / og) * cg + k;
                f(At(nhwc, c.c, c.h, c.w, i, ic, y, x), ((oc * cg + k) * c.kh + ki) * c.kw + kj,
                  At(nhwc, c.o, c.oh, c.ow, i, oc, oy, ox));
              }
}

std::vector<double> NaiveConv(const ConvCase& c, bool nhwc, const std::vector<double>& x,
                              const std::vector<double>& w) {
  std::vector<double> out(static_cast<size_t>(c.n * c.o * c.oh * c.ow), 0.0);
  ForEachProduct(c, nhwc, [&](int64_t xi, int64_t wi, int64_t oi) { out[oi] += x[xi] * w[wi]; });
  return out;
}

struct NaiveGrads {
  std::vector<double> input;
  std::vector<double> filter;
};
NaiveGrads NaiveConvGrad(const ConvCase& c, bool nhwc, const std::vector<double>& x,
                         const std::vector<double>& w, const std::vector<double>& dy) {
  NaiveGrads g{std::vector<double>(x.size(), 0.0), std::vector<double>(w.size(), 0.0)};
  ForEachProduct(c, nhwc, [&](int64_t xi, int64_t wi, int64_t oi) {
    g.input[xi] += dy[oi] * w[wi];
    g.filter[wi] += dy[oi] * x[xi];
  });
  return g;
}

class ConvTest : public ::testing::TestWithParam<std::tuple<DType, bool, GemmMode>> {};

TEST_P(ConvTest, ForwardAndGradMatchDirectConvolution) {
  const auto [dtype, nhwc, mode] = GetParam();
  KernelContext context;
  context.gemm = mode;
  // Sums of up to ~60 products of values in [-1, 1): a few roundings of each more than one op.
  const double tol = ToleranceFor(dtype) * 10;
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const Tensor x = RandomTensor(dtype, InputShape(c, nhwc), 11);
    const Tensor w = RandomTensor(dtype, {c.o, c.c / c.groups, c.kh, c.kw}, 12);
    const Tensor dy = RandomTensor(dtype, OutputShape(c, nhwc), 13);
    const KernelAttrs attrs = AttrsOf(c, nhwc);
    const std::vector<Tensor> out = RunKernel("conv2d", dtype, {&x, &w}, attrs, 1, context);
    ASSERT_EQ(out.size(), 1u);
    ExpectClose(out[0], NaiveConv(c, nhwc, ToDoubles(x), ToDoubles(w)), OutputShape(c, nhwc), tol,
                "out");
    const std::vector<Tensor> grads =
        RunKernel("conv2d_grad", dtype, {&x, &w, &dy}, attrs, 2, context);
    ASSERT_EQ(grads.size(), 2u);
    const NaiveGrads expected = NaiveConvGrad(c, nhwc, ToDoubles(x), ToDoubles(w), ToDoubles(dy));
    ExpectClose(grads[0], expected.input, x.shape(), tol, "input_grad");
    ExpectClose(grads[1], expected.filter, w.shape(), tol, "filter_grad");
  }
}

INSTANTIATE_TEST_SUITE_P(
    LayoutsAndModes, ConvTest,
    ::testing::Combine(::testing::Values(DType::kFloat32, DType::kFloat64), ::testing::Bool(),
                       ::testing::Values(GemmMode::kBlas, GemmMode::kReference)));

// The direct reference's grads are themselves checked: the kernel's input and filter grads of
// loss = Σ out · dy against central differences of the float64 kernel.
TEST(ConvGradTest, MatchesFiniteDifferences) {
  const ConvCase& c = kCases[1];  // groups, stride, dilation, asymmetric padding
  for (bool nhwc : {false, true}) {
    SCOPED_TRACE(nhwc ? "NHWC" : "NCHW");
    const KernelAttrs attrs = AttrsOf(c, nhwc);
    const Tensor x = RandomTensor(DType::kFloat64, InputShape(c, nhwc), 21);
    const Tensor w = RandomTensor(DType::kFloat64, {c.o, c.c / c.groups, c.kh, c.kw}, 22);
    const Tensor dy = RandomTensor(DType::kFloat64, OutputShape(c, nhwc), 23);
    const std::vector<double> dyv = ToDoubles(dy);
    auto loss = [&](const Tensor& xs, const Tensor& ws) {
      const std::vector<Tensor> out = RunKernel("conv2d", DType::kFloat64, {&xs, &ws}, attrs, 1);
      const std::vector<double> v = ToDoubles(out[0]);
      double sum = 0;
      for (size_t i = 0; i < v.size(); ++i) sum += v[i] * dyv[i];
      return sum;
    };
    const std::vector<Tensor> grads =
        RunKernel("conv2d_grad", DType::kFloat64, {&x, &w, &dy}, attrs, 2);
    ASSERT_EQ(grads.size(), 2u);
    const std::vector<double> dx = NumericGradient(
        [&](const std::vector<double>& v) {
          return loss(testing::FromDoubles(v, x.shape(), DType::kFloat64), w);
        },
        ToDoubles(x));
    const std::vector<double> dw = NumericGradient(
        [&](const std::vector<double>& v) {
          return loss(x, testing::FromDoubles(v, w.shape(), DType::kFloat64));
        },
        ToDoubles(w));
    ExpectClose(grads[0], dx, x.shape(), 1e-7, "input_grad");
    ExpectClose(grads[1], dw, w.shape(), 1e-7, "filter_grad");
  }
}

// Determinism contract (docs/runtime.md): the same bits on every run, in both modes.
TEST(ConvTest, RerunsAreBitIdentical) {
  const ConvCase& c = kCases[0];
  for (GemmMode mode : {GemmMode::kBlas, GemmMode::kReference}) {
    KernelContext context;
    context.gemm = mode;
    const Tensor x = RandomTensor(DType::kFloat32, InputShape(c, false), 31);
    const Tensor w = RandomTensor(DType::kFloat32, {c.o, c.c, c.kh, c.kw}, 32);
    const Tensor dy = RandomTensor(DType::kFloat32, OutputShape(c, false), 33);
    const KernelAttrs attrs = AttrsOf(c, false);
    const auto a = RunKernel("conv2d_grad", DType::kFloat32, {&x, &w, &dy}, attrs, 2, context);
    const auto b = RunKernel("conv2d_grad", DType::kFloat32, {&x, &w, &dy}, attrs, 2, context);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(0, std::memcmp(a[i].data<float>(), b[i].data<float>(),
                               static_cast<size_t>(a[i].numel()) * sizeof(float)));
    }
  }
}

// An output nobody reads is not computed: the grad with only filter_grad wanted.
TEST(ConvGradTest, SkipsUnwantedOutputs) {
  const ConvCase& c = kCases[0];
  const Tensor x = RandomTensor(DType::kFloat64, InputShape(c, false), 41);
  const Tensor w = RandomTensor(DType::kFloat64, {c.o, c.c, c.kh, c.kw}, 42);
  const Tensor dy = RandomTensor(DType::kFloat64, OutputShape(c, false), 43);
  Tensor filter_grad;
  KernelCall call;
  call.inputs = {&x, &w, &dy};
  call.outputs = {nullptr, &filter_grad};
  call.attrs = AttrsOf(c, false);
  ASSERT_TRUE(KernelRegistry::Global().Run("conv2d_grad", DType::kFloat64, call).ok());
  const NaiveGrads expected = NaiveConvGrad(c, false, ToDoubles(x), ToDoubles(w), ToDoubles(dy));
  ExpectClose(filter_grad, expected.filter, w.shape(), 1e-12, "filter_grad");
}

std::string ErrorOf(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& w_shape,
                    const KernelAttrs& attrs) {
  const Tensor x = RandomTensor(DType::kFloat32, x_shape, 1);
  const Tensor w = RandomTensor(DType::kFloat32, w_shape, 2);
  auto result = TryRunKernel("conv2d", DType::kFloat32, {&x, &w}, attrs, 1);
  return result.ok() ? "ok" : result.status().message();
}

TEST(ConvTest, BadInputIsAnErrorNamingTheProblem) {
  KernelAttrs base;
  EXPECT_EQ(ErrorOf({1, 2, 3}, {1, 2, 1, 1}, base),
            "input has shape [1, 2, 3], expected 4 dims (NCHW)");
  EXPECT_EQ(ErrorOf({1, 4, 3, 3}, {2, 3, 1, 1}, base),
            "filter has shape [2, 3, 1, 1]: dim 1 must be the input channels / groups = 4 / 1 = 4");
  KernelAttrs groups;
  groups.Set("groups", int64_t{3});
  EXPECT_EQ(ErrorOf({1, 4, 3, 3}, {3, 1, 1, 1}, groups),
            "groups 3 must be at least 1 and divide the input channels (4) and the filter's "
            "output channels (3)");
  KernelAttrs algorithm;
  algorithm.Set("padding_algorithm", std::string("FULL"));
  EXPECT_EQ(ErrorOf({1, 1, 3, 3}, {1, 1, 1, 1}, algorithm),
            "padding_algorithm 'FULL' is not one of EXPLICIT, SAME, VALID");
  KernelAttrs pads;
  pads.Set("paddings", std::vector<int64_t>{1, 1, 1});
  EXPECT_EQ(ErrorOf({1, 1, 3, 3}, {1, 1, 1, 1}, pads), "paddings has 3 values, expected 2 or 4");
  EXPECT_EQ(ErrorOf({1, 1, 2, 3}, {1, 1, 3, 1}, base),
            "the output is empty along height: input size 2 padded by (0, 0) is smaller than the "
            "dilated kernel (3)");
  KernelAttrs format;
  format.Set("data_format", std::string("NDHWC"));
  EXPECT_EQ(ErrorOf({1, 1, 3, 3}, {1, 1, 1, 1}, format),
            "data_format 'NDHWC' is not one of NCHW, NHWC, AnyLayout (NCHW)");

  const Tensor x = RandomTensor(DType::kFloat32, {1, 1, 3, 3}, 1);
  const Tensor w = RandomTensor(DType::kFloat32, {1, 1, 1, 1}, 2);
  const Tensor dy = RandomTensor(DType::kFloat32, {1, 1, 3, 2}, 3);
  auto grad = TryRunKernel("conv2d_grad", DType::kFloat32, {&x, &w, &dy}, base, 2);
  ASSERT_FALSE(grad.ok());
  EXPECT_EQ(grad.status().message(),
            "out_grad has shape [1, 1, 3, 2], expected [1, 1, 3, 3] (the shape of conv2d's "
            "output)");
}

}  // namespace
}  // namespace irm::rt
