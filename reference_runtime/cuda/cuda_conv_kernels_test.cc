// The conv-net CUDA kernels (conv2d, pool2d, batch_norm and their grads) against float64
// definitions written here (the cases' paddings, windows and output sizes resolved by hand from
// Paddle's rules, as kernels/conv_test.cc and pool_test.cc state them), against the CPU kernels'
// bits wherever the device repeats the CPU's order (pool2d, batch_norm, their grads; conv2d's
// col2im and its sum over samples where the GEMMs are exact), and against the CPU's error for bad
// input. Suites named Gpu* are skipped where no GPU is visible; the registry checks run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/gpu_test_support.h"

namespace irm::rt::cuda {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU tests' helpers (gpu_test_support.h)

constexpr DType kConvDTypes[] = {DType::kFloat32, DType::kFloat64};
constexpr const char* kConvNetKernels[] = {"conv2d",      "conv2d_grad", "pool2d",
                                           "pool2d_grad", "batch_norm",  "batch_norm_grad"};

// Element (i, ch, y, x) of an [N, C, H, W] tensor stored NCHW or NHWC.
int64_t Index(bool nhwc, int64_t c, int64_t hh, int64_t ww, int64_t i, int64_t ch, int64_t y,
              int64_t x) {
  return nhwc ? ((i * hh + y) * ww + x) * c + ch : ((i * c + ch) * hh + y) * ww + x;
}
std::vector<int64_t> Shape4(bool nhwc, int64_t n, int64_t c, int64_t h, int64_t w) {
  return nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
}

// Whole numbers in [lo, hi]: products and sums of them are exact in float32 while below 2^24.
Tensor Integers(DType dtype, std::vector<int64_t> shape, uint64_t seed, int lo, int hi) {
  std::vector<double> v = ToDoubles(RandomTensor(DType::kFloat64, shape, seed, lo, hi + 1));
  for (double& d : v) d = std::floor(d);
  return FromDoubles(v, std::move(shape), dtype);
}

// ---- conv2d
// ------------------------------------------------------------------------------------

struct ConvCase {
  std::string name;
  int64_t n, c, h, w, o, kh, kw, groups;
  std::vector<int64_t> strides, paddings, dilations;
  std::string algorithm;
  // Resolved by hand (paddle/phi/kernels/cpu/conv_util.h): top and left pads, the dilations in
  // effect, the output size.
  int64_t pad_top, pad_left, dil_h, dil_w, oh, ow;
};

const std::vector<ConvCase> kConvCases = {
    {"pad1", 2, 3, 7, 5, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1}, "EXPLICIT", 1, 1, 1, 1, 7, 5},
    // Height: 9 + 1 + 0 padded, dilated window 5, stride 2 -> 3; width: 7 + 2 + 1, window 2 -> 9.
    {"groups_stride_dilation_pad4",
     2,
     6,
     9,
     7,
     9,
     3,
     2,
     3,
     {2, 1},
     {1, 0, 2, 1},
     {2, 1},
     "EXPLICIT",
     1,
     2,
     2,
     1,
     3,
     9},
    // SAME: out ceil(7 / 2) = 4, ceil(6 / 2) = 3; pad sums 2 -> (1, 1) and 0; dilations become 1.
    {"same", 1, 2, 7, 6, 3, 3, 2, 1, {2, 2}, {5, 5}, {2, 2}, "SAME", 1, 0, 1, 1, 4, 3},
    // Depthwise, VALID: no padding whatever the attribute says.
    {"depthwise_valid", 2, 4, 6, 5, 4, 3, 3, 4, {1, 1}, {2, 2}, {1, 1}, "VALID", 0, 0, 1, 1, 4, 3},
};

KernelAttrs ConvAttrs(const ConvCase& k, bool nhwc) {
  KernelAttrs a;
  a.Set("strides", k.strides);
  a.Set("paddings", k.paddings);
  a.Set("dilations", k.dilations);
  a.Set("padding_algorithm", k.algorithm);
  a.Set("groups", k.groups);
  a.Set("data_format", std::string(nhwc ? "NHWC" : "NCHW"));
  return a;
}

struct ConvReference {
  std::vector<double> out, input_grad, filter_grad;
};

// The direct convolution and its grads in float64, from the definition: every output pixel the
// sum over its window, every product scattered back into both grads.
ConvReference Convolve(const ConvCase& k, bool nhwc, const std::vector<double>& x,
                       const std::vector<double>& w, const std::vector<double>& dy) {
  ConvReference r;
  r.out.assign(static_cast<size_t>(k.n * k.o * k.oh * k.ow), 0.0);
  r.input_grad.assign(x.size(), 0.0);
  r.filter_grad.assign(w.size(), 0.0);
  const int64_t cpg = k.c / k.groups, opg = k.o / k.groups;
  for (int64_t i = 0; i < k.n; ++i) {
    for (int64_t oc = 0; oc < k.o; ++oc) {
      for (int64_t oy = 0; oy < k.oh; ++oy) {
        for (int64_t ox = 0; ox < k.ow; ++ox) {
          const int64_t o = Index(nhwc, k.o, k.oh, k.ow, i, oc, oy, ox);
          double sum = 0;
          for (int64_t cl = 0; cl < cpg; ++cl) {
            const int64_t ch = oc / opg * cpg + cl;
            for (int64_t ki = 0; ki < k.kh; ++ki) {
              for (int64_t kj = 0; kj < k.kw; ++kj) {
                const int64_t iy = oy * k.strides[0] - k.pad_top + ki * k.dil_h;
                const int64_t ix = ox * k.strides[1] - k.pad_left + kj * k.dil_w;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                const int64_t at = Index(nhwc, k.c, k.h, k.w, i, ch, iy, ix);
                const int64_t wt = ((oc * cpg + cl) * k.kh + ki) * k.kw + kj;
                sum += x[at] * w[wt];
                r.input_grad[at] += dy[o] * w[wt];
                r.filter_grad[wt] += dy[o] * x[at];
              }
            }
          }
          r.out[o] = sum;
        }
      }
    }
  }
  return r;
}

TEST(GpuConvTest, ForwardAndGradsMatchTheFloat64Definition) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kConvDTypes) {
    for (const ConvCase& k : kConvCases) {
      for (bool nhwc : {false, true}) {
        SCOPED_TRACE(k.name + (nhwc ? " NHWC " : " NCHW ") + DTypeName(dtype));
        const std::vector<int64_t> out_shape = Shape4(nhwc, k.n, k.o, k.oh, k.ow);
        const Tensor x = RandomTensor(dtype, Shape4(nhwc, k.n, k.c, k.h, k.w), 31);
        const Tensor w = RandomTensor(dtype, {k.o, k.c / k.groups, k.kh, k.kw}, 32);
        const Tensor dy = RandomTensor(dtype, out_shape, 33);
        const ConvReference r = Convolve(k, nhwc, ToDoubles(x), ToDoubles(w), ToDoubles(dy));
        const KernelAttrs attrs = ConvAttrs(k, nhwc);
        const double tol = 4 * ToleranceFor(dtype);
        const std::vector<Tensor> out = RunGpu("conv2d", dtype, {&x, &w}, attrs, 1);
        ExpectClose(out[0], r.out, out_shape, tol, "out");
        const std::vector<Tensor> grads = RunGpu("conv2d_grad", dtype, {&x, &w, &dy}, attrs, 2);
        ExpectClose(grads[0], r.input_grad, x.shape(), tol, "input_grad");
        ExpectClose(grads[1], r.filter_grad, w.shape(), tol, "filter_grad");
      }
    }
  }
}

// Where a GEMM's inner dim is 1 its entries are single products, exact on both sides, so what
// follows runs in the CPU's order on the same numbers: col2im (depthwise: one output channel per
// group) and the filter grad's sum over samples (a 1 x 1 output: one pixel per sample).
TEST(GpuConvTest, Col2ImAndTheSampleSumGiveTheCpuBits) {
  IRM_REQUIRE_GPU();
  KernelContext reference_gemm;
  reference_gemm.gemm = GemmMode::kReference;
  const ConvCase depthwise = {"depthwise", 2,      4,          5, 6, 4, 3, 3, 4, {1, 1},
                              {1, 1},      {1, 1}, "EXPLICIT", 1, 1, 1, 1, 5, 6};
  const ConvCase one_pixel = {"one_pixel", 5,      2,          3, 3, 3, 3, 3, 1, {1, 1},
                              {0, 0},      {1, 1}, "EXPLICIT", 0, 0, 1, 1, 1, 1};
  for (DType dtype : kConvDTypes) {
    for (bool nhwc : {false, true}) {
      SCOPED_TRACE(std::string(nhwc ? "NHWC " : "NCHW ") + DTypeName(dtype));
      for (const ConvCase* k : {&depthwise, &one_pixel}) {
        const Tensor x = RandomTensor(dtype, Shape4(nhwc, k->n, k->c, k->h, k->w), 41);
        const Tensor w = RandomTensor(dtype, {k->o, k->c / k->groups, k->kh, k->kw}, 42);
        const Tensor dy = RandomTensor(dtype, Shape4(nhwc, k->n, k->o, k->oh, k->ow), 43);
        const KernelAttrs attrs = ConvAttrs(*k, nhwc);
        const std::vector<Tensor> gpu = RunGpu("conv2d_grad", dtype, {&x, &w, &dy}, attrs, 2);
        const std::vector<Tensor> cpu =
            RunKernel("conv2d_grad", dtype, {&x, &w, &dy}, attrs, 2, reference_gemm);
        const size_t exact = k == &depthwise ? 0 : 1;  // input_grad, filter_grad
        EXPECT_TRUE(gpu[exact].BitwiseEqual(cpu[exact])) << k->name;
      }
    }
  }
}

// A batch whose im2col columns (92 MB a sample) exceed the 256 MiB chunk runs in chunks of 2
// samples, then 1. Whole numbers in [-1, 1] keep every sum exact in float32 (the filter grad's
// 7.7 million terms stay below 2^24), so the result is the definition's exactly.
TEST(GpuConvTest, ABatchLargerThanOneChunkRunsInChunks) {
  IRM_REQUIRE_GPU();
  const ConvCase k = {"chunks", 3,      1,          1600, 1600, 2, 3, 3,    1,   {1, 1},
                      {1, 1},   {1, 1}, "EXPLICIT", 1,    1,    1, 1, 1600, 1600};
  const DType dtype = DType::kFloat32;
  const Tensor x = Integers(dtype, {k.n, k.c, k.h, k.w}, 51, -1, 1);
  const Tensor w = Integers(dtype, {k.o, k.c, k.kh, k.kw}, 52, -1, 1);
  const Tensor dy = Integers(dtype, {k.n, k.o, k.oh, k.ow}, 53, -1, 1);
  const ConvReference r = Convolve(k, false, ToDoubles(x), ToDoubles(w), ToDoubles(dy));
  const KernelAttrs attrs = ConvAttrs(k, false);
  const std::vector<Tensor> out = RunGpu("conv2d", dtype, {&x, &w}, attrs, 1);
  EXPECT_TRUE(out[0].BitwiseEqual(FromDoubles(r.out, {k.n, k.o, k.oh, k.ow}, dtype)));
  const std::vector<Tensor> grads = RunGpu("conv2d_grad", dtype, {&x, &w, &dy}, attrs, 2);
  EXPECT_TRUE(grads[0].BitwiseEqual(FromDoubles(r.input_grad, x.shape(), dtype)));
  EXPECT_TRUE(grads[1].BitwiseEqual(FromDoubles(r.filter_grad, w.shape(), dtype)));
}

TEST(GpuConvTest, RerunsAreBitIdenticalAndUnwantedOutputsAreSkipped) {
  IRM_REQUIRE_GPU();
  const ConvCase& k = kConvCases[1];
  const Tensor x = RandomTensor(DType::kFloat32, {k.n, k.c, k.h, k.w}, 61);
  const Tensor w = RandomTensor(DType::kFloat32, {k.o, k.c / k.groups, k.kh, k.kw}, 62);
  const Tensor dy = RandomTensor(DType::kFloat32, {k.n, k.o, k.oh, k.ow}, 63);
  const KernelAttrs attrs = ConvAttrs(k, false);
  const std::vector<Tensor> first = RunGpu("conv2d_grad", DType::kFloat32, {&x, &w, &dy}, attrs, 2);
  const std::vector<Tensor> again = RunGpu("conv2d_grad", DType::kFloat32, {&x, &w, &dy}, attrs, 2);
  ExpectSameBits(again, first, "conv2d_grad", "the first run's");
  EXPECT_TRUE(RunGpu("conv2d", DType::kFloat32, {&x, &w}, attrs, 1)[0].BitwiseEqual(
      RunGpu("conv2d", DType::kFloat32, {&x, &w}, attrs, 1)[0]));
  // Only the filter grad asked for: the input grad stays unset.
  std::vector<DeviceTensor> inputs;
  for (const Tensor* t : {&x, &w, &dy}) {
    StatusOr<DeviceTensor> d = DeviceTensor::FromHost(*t);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    inputs.push_back(std::move(d).value());
  }
  DeviceTensor filter_grad;
  CudaKernelCall call;
  call.inputs = {&inputs[0], &inputs[1], &inputs[2]};
  call.outputs = {nullptr, &filter_grad};
  call.attrs = attrs;
  ASSERT_TRUE(CudaKernelRegistry::Global().Run("conv2d_grad", DType::kFloat32, call).ok());
  StatusOr<Tensor> host = filter_grad.ToHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_TRUE(host->BitwiseEqual(first[1]));
}

// ---- pool2d
// ------------------------------------------------------------------------------------

struct PoolCase {
  std::string name;
  int64_t n, c, h, w;
  std::string type;
  std::vector<int64_t> ksize, strides, paddings;
  std::string algorithm;
  bool exclusive, ceil_mode, global, adaptive;
  // Resolved by hand (paddle/phi/kernels/funcs/pooling.h): the window in effect, the top and
  // left pads, the output size.
  int64_t kh, kw, pad_top, pad_left, oh, ow;
};

const std::vector<PoolCase> kPoolCases = {
    {"max_3x3_s2_p1", 2,     3,     7, 6, "max", {3, 3}, {2, 2}, {1, 1}, "EXPLICIT", true,
     false,           false, false, 3, 3, 1,     1,      4,      3},
    // ceil_mode: (6 - 3 + 2 - 1) / 2 + 1 = 3 rows instead of 2; (5 - 2 + 1) / 2 + 1 = 3 columns.
    {"max_ceil", 1,    2,     6,     5, "max", {3, 2}, {2, 2}, {0, 0}, "EXPLICIT",
     true,       true, false, false, 3, 2,     0,      0,      3,      3},
    {"avg_exclusive_pad",
     2,
     2,
     5,
     5,
     "avg",
     {3, 3},
     {2, 2},
     {1, 1},
     "EXPLICIT",
     true,
     false,
     false,
     false,
     3,
     3,
     1,
     1,
     3,
     3},
    // Not exclusive: padded cells count in the divisor; (6 - 2 + 1) / 2 + 1 = 3 rows,
    // (7 - 3 + 3) / 2 + 1 = 4 columns.
    {"avg_inclusive_pad4",
     1,
     3,
     6,
     7,
     "avg",
     {2, 3},
     {2, 2},
     {1, 0, 1, 2},
     "EXPLICIT",
     false,
     false,
     false,
     false,
     2,
     3,
     1,
     1,
     3,
     4},
    // SAME: out ceil(7 / 2) = 4, pad sum 2 -> top 1; ceil(5 / 2) = 3, pad sum 2 -> left 1.
    {"avg_same", 1,     2,     7,     5, "avg", {3, 3}, {2, 2}, {9, 9}, "SAME",
     true,       false, false, false, 3, 3,     1,      1,      4,      3},
    // global: the whole plane, paddings ignored.
    {"avg_global", 2,     4,    3,     5, "avg", {1, 1}, {1, 1}, {1, 1}, "EXPLICIT",
     true,         false, true, false, 3, 5,     0,      0,      1,      1},
    // adaptive: the output size is ksize; windows [floor(i * in / out), ceil((i + 1) * in / out)).
    {"avg_adaptive", 1,     2,     7,    5, "avg", {3, 2}, {1, 1}, {0, 0}, "EXPLICIT",
     false,          false, false, true, 0, 0,     0,      0,      3,      2},
};

KernelAttrs PoolAttrs(const PoolCase& k, bool nhwc) {
  KernelAttrs a;
  a.Set("kernel_size", k.ksize);
  a.Set("strides", k.strides);
  a.Set("paddings", k.paddings);
  a.Set("padding_algorithm", k.algorithm);
  a.Set("pooling_type", k.type);
  a.Set("exclusive", k.exclusive);
  a.Set("ceil_mode", k.ceil_mode);
  a.Set("global_pooling", k.global);
  a.Set("adaptive", k.adaptive);
  a.Set("data_format", std::string(nhwc ? "NHWC" : "NCHW"));
  return a;
}

// Output (oy, ox)'s window clipped to the input, and avg's divisor.
struct Window {
  int64_t h0, h1, w0, w1;
  double divisor;
};
Window WindowOf(const PoolCase& k, int64_t oy, int64_t ox) {
  if (k.adaptive) {
    Window win{static_cast<int64_t>(std::floor(double(oy * k.h) / double(k.oh))),
               static_cast<int64_t>(std::ceil(double((oy + 1) * k.h) / double(k.oh))),
               static_cast<int64_t>(std::floor(double(ox * k.w) / double(k.ow))),
               static_cast<int64_t>(std::ceil(double((ox + 1) * k.w) / double(k.ow))), 0};
    win.divisor = double((win.h1 - win.h0) * (win.w1 - win.w0));
    return win;
  }
  const int64_t hs = oy * k.strides[0] - k.pad_top, ws = ox * k.strides[1] - k.pad_left;
  // Without exclusive the window counts its padded cells, not beyond the padding.
  const int64_t he = std::min(hs + k.kh, k.h + k.pad_top);
  const int64_t we = std::min(ws + k.kw, k.w + k.pad_left);
  Window win{std::max<int64_t>(hs, 0), std::min(he, k.h), std::max<int64_t>(ws, 0),
             std::min(we, k.w), double((he - hs) * (we - ws))};
  if (k.exclusive) win.divisor = double((win.h1 - win.h0) * (win.w1 - win.w0));
  return win;
}

struct PoolReference {
  std::vector<double> out, x_grad;
};
// Forward from the definition; the grad scatters each output's grad to its window (avg: / the
// divisor; max: to the window's first maximum, row-major).
PoolReference Pool(const PoolCase& k, bool nhwc, const std::vector<double>& x,
                   const std::vector<double>& dy) {
  PoolReference r;
  r.out.assign(static_cast<size_t>(k.n * k.c * k.oh * k.ow), 0.0);
  r.x_grad.assign(x.size(), 0.0);
  const bool max = k.type == "max";
  for (int64_t i = 0; i < k.n; ++i) {
    for (int64_t ch = 0; ch < k.c; ++ch) {
      for (int64_t oy = 0; oy < k.oh; ++oy) {
        for (int64_t ox = 0; ox < k.ow; ++ox) {
          const Window win = WindowOf(k, oy, ox);
          const int64_t o = Index(nhwc, k.c, k.oh, k.ow, i, ch, oy, ox);
          double acc = max ? -INFINITY : 0.0;
          int64_t arg = -1;
          for (int64_t y = win.h0; y < win.h1; ++y) {
            for (int64_t xx = win.w0; xx < win.w1; ++xx) {
              const int64_t at = Index(nhwc, k.c, k.h, k.w, i, ch, y, xx);
              if (max && x[at] > acc) {
                acc = x[at];
                arg = at;
              }
              if (!max) {
                acc += x[at];
                r.x_grad[at] += dy[o] / win.divisor;
              }
            }
          }
          r.out[o] = max ? acc : acc / win.divisor;
          if (max) r.x_grad[arg] += dy[o];
        }
      }
    }
  }
  return r;
}

TEST(GpuPoolTest, ForwardAndGradAreTheCpuBitsAndTheFloat64Definition) {
  IRM_REQUIRE_GPU();
  for (DType dtype : kConvDTypes) {
    for (const PoolCase& k : kPoolCases) {
      for (bool nhwc : {false, true}) {
        SCOPED_TRACE(k.name + (nhwc ? " NHWC " : " NCHW ") + DTypeName(dtype));
        const std::vector<int64_t> out_shape = Shape4(nhwc, k.n, k.c, k.oh, k.ow);
        const Tensor x = RandomTensor(dtype, Shape4(nhwc, k.n, k.c, k.h, k.w), 71);
        const Tensor dy = RandomTensor(dtype, out_shape, 72);
        const PoolReference r = Pool(k, nhwc, ToDoubles(x), ToDoubles(dy));
        const KernelAttrs attrs = PoolAttrs(k, nhwc);
        const double tol = 4 * ToleranceFor(dtype);
        const std::vector<Tensor> out = RunGpu("pool2d", dtype, {&x}, attrs, 1);
        ExpectClose(out[0], r.out, out_shape, tol, "out");
        ExpectCpuBits(out, RunKernel("pool2d", dtype, {&x}, attrs, 1), "pool2d");
        const std::vector<Tensor> grad = RunGpu("pool2d_grad", dtype, {&x, &out[0], &dy}, attrs, 1);
        ExpectClose(grad[0], r.x_grad, x.shape(), tol, "x_grad");
        ExpectCpuBits(grad, RunKernel("pool2d_grad", dtype, {&x, &out[0], &dy}, attrs, 1),
                      "pool2d_grad");
      }
    }
  }
}

TEST(GpuPoolTest, MaxGradGoesToTheFirstMaximumOfEachWindow) {
  IRM_REQUIRE_GPU();
  // A flat 3 x 3 plane, 3 x 3 windows, stride 1, padding 1: every window's first maximum is its
  // top-left cell inside the input, so (0, 0) takes outputs (0, 0), (0, 1), (1, 0), (1, 1); (0, 1)
  // takes (0, 2), (1, 2); (1, 0) takes (2, 0), (2, 1); (1, 1) takes (2, 2).
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(9, 0.5f), {1, 1, 3, 3});
  const Tensor dy = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  KernelAttrs attrs;
  attrs.Set("kernel_size", std::vector<int64_t>{3, 3});
  attrs.Set("paddings", std::vector<int64_t>{1, 1});
  attrs.Set("pooling_type", std::string("max"));
  const std::vector<Tensor> out = RunGpu("pool2d", DType::kFloat32, {&x}, attrs, 1);
  const std::vector<Tensor> grad =
      RunGpu("pool2d_grad", DType::kFloat32, {&x, &out[0], &dy}, attrs, 1);
  ExpectClose(grad[0], {1 + 2 + 4 + 5, 3 + 6, 0, 7 + 8, 9, 0, 0, 0, 0}, {1, 1, 3, 3}, 0, "x_grad");
}

// ---- batch_norm
// --------------------------------------------------------------------------------

struct BatchNormCase {
  std::string name;
  std::vector<int64_t> shape;
  bool nhwc;
  bool affine;  // scale and bias given
};

const std::vector<BatchNormCase> kBatchNormCases = {
    {"nchw", {3, 4, 5, 2}, false, true},
    {"nhwc", {2, 3, 3, 4}, true, true},
    {"rank2_without_scale_and_bias", {6, 5}, false, false},
    {"one_element_per_channel", {1, 3}, false, true},
};

TEST(GpuBatchNormTest, TrainingAndGlobalStatisticsAreTheCpuBitsAndTheFloat64Definition) {
  IRM_REQUIRE_GPU();
  const double momentum = 0.8, epsilon = 1e-3;
  for (DType dtype : kConvDTypes) {
    for (const BatchNormCase& k : kBatchNormCases) {
      for (bool global : {false, true}) {
        SCOPED_TRACE(k.name + (global ? " global " : " training ") + DTypeName(dtype));
        const int64_t n = k.shape[0];
        const int64_t c = k.nhwc ? k.shape.back() : k.shape[1];
        const Tensor x = RandomTensor(dtype, k.shape, 81, -2.0, 3.0);
        const int64_t s = x.numel() / n / c;
        const Tensor running_mean = RandomTensor(dtype, {c}, 82);
        const Tensor running_var = RandomTensor(dtype, {c}, 83, 0.5, 2.0);
        const Tensor scale = RandomTensor(dtype, {c}, 84, 0.5, 1.5);
        const Tensor bias = RandomTensor(dtype, {c}, 85);
        const Tensor dy = RandomTensor(dtype, k.shape, 86);
        KernelAttrs attrs;
        attrs.Set("momentum", momentum);
        attrs.Set("epsilon", epsilon);
        attrs.Set("is_test", global);
        attrs.Set("data_format", std::string(k.nhwc ? "NHWC" : "NCHW"));
        std::vector<const Tensor*> inputs = {&x, &running_mean, &running_var};
        if (k.affine) inputs.insert(inputs.end(), {&scale, &bias});
        const std::vector<Tensor> gpu = RunGpu("batch_norm", dtype, inputs, attrs, 6);
        const std::vector<Tensor> cpu = RunKernel("batch_norm", dtype, inputs, attrs, 6);
        ExpectCpuBits(gpu, cpu, "batch_norm");

        // The definition in float64 (epsilon and momentum as the kernel reads them: floats).
        const double eps = static_cast<float>(epsilon), mom = static_cast<float>(momentum);
        const std::vector<double> dx = ToDoubles(x), ddy = ToDoubles(dy);
        const std::vector<double> rm = ToDoubles(running_mean), rv = ToDoubles(running_var);
        const std::vector<double> sc = ToDoubles(scale), bi = ToDoubles(bias);
        auto at = [&](int64_t i, int64_t ch, int64_t j) {
          return static_cast<size_t>(k.nhwc ? (i * s + j) * c + ch : (i * c + ch) * s + j);
        };
        const double m = static_cast<double>(n * s);
        const bool copies = !global && n * s == 1;  // one element per channel: out = x
        std::vector<double> out(dx.size()), mean_out(rm), var_out(rv), saved_mean(c, 0.0),
            saved_inv_std(c, 0.0), x_grad(dx.size()), scale_grad(c, 0.0), bias_grad(c, 0.0);
        for (int64_t ch = 0; ch < c; ++ch) {
          double mean = rm[ch], var = rv[ch];
          if (!global) {
            double sum = 0, sq = 0;
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < s; ++j) sum += dx[at(i, ch, j)];
            mean = sum / m;
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = 0; j < s; ++j)
                sq += (dx[at(i, ch, j)] - mean) * (dx[at(i, ch, j)] - mean);
            var = sq / m;
            if (!copies) {
              mean_out[ch] = rm[ch] * mom + mean * (1 - mom);
              var_out[ch] = rv[ch] * mom + var * (1 - mom);
              saved_mean[ch] = mean;
              saved_inv_std[ch] = 1 / std::sqrt(var + eps);
            }
          }
          const double inv_std = 1 / std::sqrt(var + eps);
          const double g = k.affine ? sc[ch] : 1.0, b = k.affine ? bi[ch] : 0.0;
          double dy_sum = 0, dy_xhat_sum = 0;
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < s; ++j) {
              const size_t e = at(i, ch, j);
              out[e] = copies ? dx[e] : (dx[e] - mean) * inv_std * g + b;
              dy_sum += ddy[e];
              dy_xhat_sum += (dx[e] - mean) * inv_std * ddy[e];
            }
          }
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < s; ++j) {
              const size_t e = at(i, ch, j);
              const double xhat = (dx[e] - mean) * inv_std;
              x_grad[e] = copies   ? ddy[e]
                          : global ? g * inv_std * ddy[e]
                                   : g * inv_std / m * (m * ddy[e] - dy_sum - xhat * dy_xhat_sum);
            }
          }
          scale_grad[ch] = copies ? 0.0 : dy_xhat_sum;
          bias_grad[ch] = copies ? 0.0 : dy_sum;
        }
        const double tol = 16 * ToleranceFor(dtype);
        ExpectClose(gpu[0], out, k.shape, tol, "out");
        ExpectClose(gpu[1], mean_out, {c}, tol, "mean_out");
        ExpectClose(gpu[2], var_out, {c}, tol, "variance_out");
        ExpectClose(gpu[3], saved_mean, {c}, tol, "saved_mean");
        ExpectClose(gpu[4], saved_inv_std, {c}, tol, "saved_variance");
        EXPECT_EQ(gpu[5].numel(), 0);

        // The grad reads the forward's outputs (the CPU's, the same bits).
        const Tensor* scale_in = k.affine ? &scale : nullptr;
        const Tensor* bias_in = k.affine ? &bias : nullptr;
        const std::vector<const Tensor*> grad_inputs = {
            &x, scale_in, bias_in, &cpu[1], &cpu[2], &cpu[3], &cpu[4], nullptr, &dy};
        const std::vector<Tensor> gpu_grad =
            RunGpu("batch_norm_grad", dtype, grad_inputs, attrs, 3);
        ExpectCpuBits(gpu_grad, RunKernel("batch_norm_grad", dtype, grad_inputs, attrs, 3),
                      "batch_norm_grad");
        ExpectClose(gpu_grad[0], x_grad, k.shape, tol, "x_grad");
        ExpectClose(gpu_grad[1], scale_grad, {c}, tol, "scale_grad");
        ExpectClose(gpu_grad[2], bias_grad, {c}, tol, "bias_grad");
      }
    }
  }
}

// ---- errors and the registry
// -------------------------------------------------------------------

struct BadCall {
  std::string kernel;
  std::vector<const Tensor*> inputs;
  KernelAttrs attrs;
  size_t outputs;
};

KernelAttrs With(KernelAttrs attrs, const std::string& name, AttrValue value) {
  attrs.Set(name, std::move(value));
  return attrs;
}

TEST(GpuConvNetErrorTest, BadInputIsTheCpuKernelsError) {
  IRM_REQUIRE_GPU();
  const Tensor x = RandomTensor(DType::kFloat32, {2, 4, 5, 5}, 91);
  const Tensor x3 = RandomTensor(DType::kFloat32, {2, 4, 5}, 92);
  const Tensor w = RandomTensor(DType::kFloat32, {6, 2, 3, 3}, 93);
  const Tensor w64 = RandomTensor(DType::kFloat64, {6, 4, 3, 3}, 94);
  const Tensor w_big = RandomTensor(DType::kFloat32, {6, 4, 7, 7}, 95);
  const Tensor dy_bad = RandomTensor(DType::kFloat32, {2, 6, 4, 4}, 96);
  const Tensor c4 = RandomTensor(DType::kFloat32, {4}, 97);
  const Tensor c3 = RandomTensor(DType::kFloat32, {3}, 98);
  KernelAttrs grouped;
  grouped.Set("groups", int64_t{2});
  KernelAttrs pool;
  pool.Set("kernel_size", std::vector<int64_t>{2, 2});
  pool.Set("pooling_type", std::string("max"));
  const std::vector<BadCall> calls = {
      {"conv2d", {&x3, &w}, grouped, 1},
      {"conv2d", {&x, &w}, {}, 1},  // filter dim 1 is not 4 / 1
      {"conv2d", {&x, &w}, With(grouped, "groups", int64_t{3}), 1},
      {"conv2d", {&x, &w}, With(grouped, "paddings", std::vector<int64_t>{1, 1, 1}), 1},
      {"conv2d", {&x, &w}, With(grouped, "padding_algorithm", std::string("FULL")), 1},
      {"conv2d", {&x, &w}, With(grouped, "strides", std::vector<int64_t>{0, 1}), 1},
      {"conv2d", {&x, &w}, With(grouped, "data_format", std::string("NCWH")), 1},
      {"conv2d", {&x, &w64}, {}, 1},
      {"conv2d", {&x, &w_big}, {}, 1},  // a 7 x 7 window on a 5 x 5 plane
      {"conv2d_grad", {&x, &w, &dy_bad}, grouped, 2},
      {"pool2d", {&x}, With(pool, "pooling_type", std::string("min")), 1},
      {"pool2d", {&x}, With(pool, "adaptive", true), 1},
      {"pool2d", {&x3}, pool, 1},
      {"pool2d", {&x}, With(pool, "kernel_size", std::vector<int64_t>{9, 9}), 1},
      {"pool2d_grad", {&x, &x, &x}, pool, 1},
      {"batch_norm", {&x, &c3, &c4}, {}, 6},
      {"batch_norm", {&c4, &c4, &c4}, {}, 6},
      {"batch_norm_grad",
       {&x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &x},
       {},
       3},  // training without saved statistics
  };
  for (const BadCall& call : calls) {
    SCOPED_TRACE(call.kernel);
    const StatusOr<std::vector<Tensor>> gpu =
        TryRunGpu(call.kernel, DType::kFloat32, call.inputs, call.attrs, call.outputs);
    const StatusOr<std::vector<Tensor>> cpu =
        TryRunKernel(call.kernel, DType::kFloat32, call.inputs, call.attrs, call.outputs);
    ASSERT_FALSE(cpu.ok());
    ASSERT_FALSE(gpu.ok());
    EXPECT_EQ(gpu.status().code(), cpu.status().code());
    EXPECT_EQ(gpu.status().message(), cpu.status().message());
  }
}

// Needs no GPU: every conv-net CPU kernel has a device twin with its dtypes and signature.
TEST(CudaConvNetRegistryTest, EveryConvNetKernelHasATwinWithTheCpuContract) {
  const CudaKernelRegistry& gpu = CudaKernelRegistry::Global();
  const KernelRegistry& cpu = KernelRegistry::Global();
  for (const char* name : kConvNetKernels) {
    SCOPED_TRACE(name);
    const std::vector<DType> cpu_dtypes = cpu.DTypesOf(name, Device::kCpu);
    ASSERT_FALSE(cpu_dtypes.empty());
    EXPECT_EQ(gpu.DTypesOf(name), cpu_dtypes);
    for (DType dtype : cpu_dtypes) {
      const CudaKernelEntry* g = gpu.Find(name, dtype);
      ASSERT_NE(g, nullptr) << DTypeName(dtype);
      const KernelSignature& c = cpu.Find(name, dtype, Device::kCpu)->signature;
      EXPECT_EQ(g->signature.min_inputs, c.min_inputs);
      EXPECT_EQ(g->signature.max_inputs, c.max_inputs);
      EXPECT_EQ(g->signature.num_outputs, c.num_outputs);
    }
  }
}

}  // namespace
}  // namespace irm::rt::cuda
