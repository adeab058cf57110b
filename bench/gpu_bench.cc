// The CUDA backend's kernels against their natural baselines on the same GPU, side by side in one
// run (issue 23's speed targets):
//   BM_Sgemm/<shape>      the `matmul` twin (CudaKernelRegistry, DeviceTensors, float32) against
//                         cuBLAS's best for the shape: cublasGemmEx in our settings (pedantic math,
//                         CUBLAS_COMPUTE_32F_PEDANTIC, 32 MiB workspace), cublasGemmEx in cuBLAS's
//                         defaults (CUBLAS_COMPUTE_32F), and every algorithm cublasLt's heuristic
//                         proposes (up to kLtCandidates); target: ours >= 0.9 x the fastest of
//                         them.
//   BM_Bandwidth/<kernel> add, multiply, relu, scale, and sum / mean over all elements and over the
//                         last dim, on 64 MiB of float32, against cudaMemcpyAsync device-to-device
//                         of the same 64 MiB; bytes read + written; target: >= 0.7 x the copy.
// Timing: CUDA events on the backend's stream around a batch of back-to-back calls (enough for a
// batch to last kMinBatchSeconds), each variant in turn within a repetition, the median over
// kRepetitions repetitions after a warm-up. Each benchmark runs once (Iterations(1)) and reports
// our median per call as its manual time; the baselines and ratios are counters. After the table
// it prints one line per ratio (PASS or MISS against the target); --irm_check_targets makes a
// miss exit 1. A CUDA or cuBLAS error is a FAIL line naming the call, and exit 3. Without a GPU
// every benchmark reports the reason through SkipWithError, one SKIP line follows, and the program
// exits 0: never a made-up figure.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_runner.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/cuda/device_allocator.h"
#include "reference_runtime/cuda/device_tensor.h"

namespace {

using irm::DType;
using irm::Status;
using irm::StatusOr;
using irm::rt::KernelAttrs;
using irm::rt::Tensor;
using irm::rt::cuda::CudaKernelCall;
using irm::rt::cuda::CudaKernelRegistry;
using irm::rt::cuda::CudaStatus;
using irm::rt::cuda::DeviceTensor;
using irm::rt::cuda::Stream;

constexpr int kRepetitions = 11;
constexpr double kMinBatchSeconds = 2e-3;  // event timing is good to ~1 us: batch short calls
constexpr int kMaxBatch = 2000;
constexpr int kLtCandidates = 8;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;    // matmul_kernels.cc's
constexpr size_t kLtWorkspaceBytes = size_t{64} << 20;  // generous: cuBLASLt's own best
constexpr double kGemmTarget = 0.9;
constexpr double kBandwidthTarget = 0.7;
constexpr int64_t kBandwidthBytes = int64_t{64} << 20;
constexpr int64_t kSide = 4096;  // [4096, 4096] float32 = 64 MiB

Status Internal(std::string message) {
  return Status(irm::StatusCode::kInternal, irm::Location{}, std::move(message));
}

Status Cublas(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Internal(fmt::format("gpu_bench: {} failed: {} ({})", what, cublasGetStatusName(status),
                              cublasGetStatusString(status)));
}

// What main prints after the table, one line per benchmark, in the order they ran.
struct Summary {
  std::string label;
  std::string line;  // "PASS ...", "MISS ..." or "FAIL ..."
  bool pass = false;
};
std::vector<Summary>& Summaries() {
  static auto* summaries = new std::vector<Summary>;
  return *summaries;
}

bool SkipWithoutGpu(benchmark::State& state) {
  if (irm::rt::cuda::VisibleGpuCount() > 0) return false;
  state.SkipWithError(("no GPU visible: " + irm::rt::cuda::NoGpuReason()).c_str());
  return true;
}

void Fail(benchmark::State& state, const std::string& label, const Status& status) {
  state.SkipWithError(status.ToString().c_str());
  Summaries().push_back(
      {label, fmt::format("FAIL gpu_bench {}: {}", label, status.ToString()), false});
}

// Two events on the backend's stream, destroyed with the object.
class EventPair {
 public:
  EventPair() = default;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
  }
  Status Create() {
    IRM_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&start_), "gpu_bench", "cudaEventCreate"));
    return CudaStatus(cudaEventCreate(&stop_), "gpu_bench", "cudaEventCreate");
  }
  Status Start() {
    return CudaStatus(cudaEventRecord(start_, Stream()), "gpu_bench", "cudaEventRecord");
  }
  // Seconds between Start and now (waits for the stream's work in between).
  StatusOr<double> Stop() {
    IRM_RETURN_IF_ERROR(
        CudaStatus(cudaEventRecord(stop_, Stream()), "gpu_bench", "cudaEventRecord"));
    IRM_RETURN_IF_ERROR(
        CudaStatus(cudaEventSynchronize(stop_), "gpu_bench", "cudaEventSynchronize"));
    float ms = 0;
    IRM_RETURN_IF_ERROR(
        CudaStatus(cudaEventElapsedTime(&ms, start_, stop_), "gpu_bench", "cudaEventElapsedTime"));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

struct Variant {
  std::string name;
  std::function<Status()> call;  // enqueues one call on the backend's stream
};

// Median seconds per call of each variant, measured side by side: every repetition times a
// batch of each variant in turn, so clock and thermal drift touch all of them alike.
StatusOr<std::vector<double>> MeasureSideBySide(const std::vector<Variant>& variants) {
  EventPair events;
  IRM_RETURN_IF_ERROR(events.Create());
  std::vector<int> batch(variants.size(), 1);
  for (size_t v = 0; v < variants.size(); ++v) {
    // Warm-up (handles, the allocator's first cudaMalloc, cuBLAS's kernel loading), then one
    // timed call to size the batch.
    for (int i = 0; i < 2; ++i) IRM_RETURN_IF_ERROR(variants[v].call());
    IRM_RETURN_IF_ERROR(events.Start());
    IRM_RETURN_IF_ERROR(variants[v].call());
    IRM_ASSIGN_OR_RETURN(double once, events.Stop());
    batch[v] = std::clamp(static_cast<int>(std::ceil(kMinBatchSeconds / std::max(once, 1e-7))), 1,
                          kMaxBatch);
  }
  std::vector<std::vector<double>> samples(variants.size());
  for (int rep = 0; rep < kRepetitions; ++rep) {
    for (size_t v = 0; v < variants.size(); ++v) {
      IRM_RETURN_IF_ERROR(events.Start());
      for (int i = 0; i < batch[v]; ++i) IRM_RETURN_IF_ERROR(variants[v].call());
      IRM_ASSIGN_OR_RETURN(double seconds, events.Stop());
      samples[v].push_back(seconds / batch[v]);
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& s : samples) {
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    medians.push_back(s[s.size() / 2]);
  }
  return medians;
}

// Uniform [-1, 1) float32 on the device (values do not change the timing much, but zeros would
// flatter the GEMMs' power draw).
StatusOr<DeviceTensor> RandomTensor(std::vector<int64_t> shape, uint32_t seed) {
  Tensor host = Tensor::ZerosUnchecked(DType::kFloat32, std::move(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  float* data = host.data<float>();
  for (int64_t i = 0; i < host.numel(); ++i) data[i] = uniform(engine);
  return DeviceTensor::FromHost(host, "gpu_bench");
}

// Runs `name` of the CUDA registry on `inputs`; the output is dropped at once (back to the
// allocator's cache, ready for the next call), as an executor drops a consumed temporary.
Status RunTwin(const char* name, std::vector<const DeviceTensor*> inputs,
               const KernelAttrs& attrs) {
  DeviceTensor out;
  CudaKernelCall call;
  call.inputs = std::move(inputs);
  call.outputs = {&out};
  call.attrs = attrs;
  return CudaKernelRegistry::Global().Run(name, DType::kFloat32, call);
}

// ---- SGEMM -------------------------------------------------------------------------------------

struct GemmShape {
  std::string label;
  int64_t m, n, k;  // out[m, n] = op(x)[m, k] · op(y)[k, n]
  bool trans_x, trans_y;
};

// The cube shapes, then the gpt training step's GEMMs for gpu-check's gpt (hidden 1024, 16 heads,
// vocab 8192, seq 256, batch 8: 2048 tokens); the attention's batched [256, 64] products are left
// to the gpt step's own comparison.
const std::vector<GemmShape>& GemmShapes() {
  static const auto* shapes = new std::vector<GemmShape>{
      {"1024x1024x1024", 1024, 1024, 1024, false, false},
      {"4096x4096x4096", 4096, 4096, 4096, false, false},
      {"8192x8192x8192", 8192, 8192, 8192, false, false},
      {"gpt_qkv_2048x1024x1024", 2048, 1024, 1024, false, false},
      {"gpt_fc1_2048x4096x1024", 2048, 4096, 1024, false, false},
      {"gpt_fc2_2048x1024x4096", 2048, 1024, 4096, false, false},
      {"gpt_head_2048x8192x1024", 2048, 8192, 1024, false, false},
      {"gpt_fc1_dw_1024x4096x2048_tx", 1024, 4096, 2048, true, false},
      {"gpt_fc1_dx_2048x1024x4096_ty", 2048, 1024, 4096, false, true},
  };
  return *shapes;
}

// A cuBLAS handle on the backend's stream, destroyed with the object; `ours` gives it
// matmul_kernels.cc's settings (pedantic math, atomics not allowed, a fixed 32 MiB workspace).
class BlasHandle {
 public:
  BlasHandle() = default;
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  ~BlasHandle() {
    if (handle_ != nullptr) cublasDestroy(handle_);
    irm::rt::cuda::DeviceAllocator::Global().Free(workspace_);
  }
  Status Create(bool ours) {
    IRM_RETURN_IF_ERROR(Cublas(cublasCreate(&handle_), "cublasCreate"));
    IRM_RETURN_IF_ERROR(Cublas(cublasSetStream(handle_, Stream()), "cublasSetStream"));
    if (!ours) return Status::Ok();
    IRM_RETURN_IF_ERROR(
        Cublas(cublasSetMathMode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode"));
    IRM_RETURN_IF_ERROR(
        Cublas(cublasSetAtomicsMode(handle_, CUBLAS_ATOMICS_NOT_ALLOWED), "cublasSetAtomicsMode"));
    IRM_ASSIGN_OR_RETURN(workspace_, irm::rt::cuda::DeviceAllocator::Global().Allocate(
                                         kWorkspaceBytes, "gpu_bench"));
    return Cublas(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes), "cublasSetWorkspace");
  }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

// Row-major out = op(x) · op(y) as the column-major outᵀ = op(y)ᵀ · op(x)ᵀ, the formulation of
// matmul_kernels.cc, so that every variant computes the same product in the same layout.
Status GemmEx(cublasHandle_t handle, const GemmShape& s, const void* x, const void* y, void* out,
              cublasComputeType_t compute) {
  const float one = 1.0f, zero = 0.0f;
  return Cublas(cublasGemmEx(handle, s.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N,
                             s.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(s.n),
                             static_cast<int>(s.m), static_cast<int>(s.k), &one, y, CUDA_R_32F,
                             static_cast<int>(s.trans_y ? s.k : s.n), x, CUDA_R_32F,
                             static_cast<int>(s.trans_x ? s.m : s.k), &zero, out, CUDA_R_32F,
                             static_cast<int>(s.n), compute, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
}

// cuBLASLt's plan for one shape: descriptors, a workspace and the heuristic's algorithms.
class LtPlan {
 public:
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (pref_ != nullptr) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_, b_, c_}) {
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    }
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
    if (handle_ != nullptr) cublasLtDestroy(handle_);
    irm::rt::cuda::DeviceAllocator::Global().Free(workspace_);
  }

  Status Create(const GemmShape& s) {
    IRM_RETURN_IF_ERROR(Cublas(cublasLtCreate(&handle_), "cublasLtCreate"));
    IRM_RETURN_IF_ERROR(Cublas(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                               "cublasLtMatmulDescCreate"));
    // Column-major A = y (op by trans_y), B = x (op by trans_x), C = outᵀ [n, m].
    const cublasOperation_t op_a = s.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = s.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
    IRM_RETURN_IF_ERROR(Cublas(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)),
        "cublasLtMatmulDescSetAttribute"));
    IRM_RETURN_IF_ERROR(Cublas(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)),
        "cublasLtMatmulDescSetAttribute"));
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    IRM_RETURN_IF_ERROR(
        Cublas(s.trans_y ? cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, u(s.k), u(s.n), s.k)
                         : cublasLtMatrixLayoutCreate(&a_, CUDA_R_32F, u(s.n), u(s.k), s.n),
               "cublasLtMatrixLayoutCreate"));
    IRM_RETURN_IF_ERROR(
        Cublas(s.trans_x ? cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, u(s.m), u(s.k), s.m)
                         : cublasLtMatrixLayoutCreate(&b_, CUDA_R_32F, u(s.k), u(s.m), s.k),
               "cublasLtMatrixLayoutCreate"));
    IRM_RETURN_IF_ERROR(Cublas(cublasLtMatrixLayoutCreate(&c_, CUDA_R_32F, u(s.n), u(s.m), s.n),
                               "cublasLtMatrixLayoutCreate"));
    IRM_RETURN_IF_ERROR(
        Cublas(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate"));
    const uint64_t workspace_bytes = kLtWorkspaceBytes;
    IRM_RETURN_IF_ERROR(
        Cublas(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)),
               "cublasLtMatmulPreferenceSetAttribute"));
    IRM_ASSIGN_OR_RETURN(workspace_, irm::rt::cuda::DeviceAllocator::Global().Allocate(
                                         kLtWorkspaceBytes, "gpu_bench"));
    int returned = 0;
    algos_.resize(kLtCandidates);
    IRM_RETURN_IF_ERROR(
        Cublas(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, pref_, kLtCandidates,
                                              algos_.data(), &returned),
               "cublasLtMatmulAlgoGetHeuristic"));
    algos_.resize(static_cast<size_t>(returned));
    if (algos_.empty()) return Internal("gpu_bench: cublasLt proposes no algorithm");
    return Status::Ok();
  }

  size_t candidates() const { return algos_.size(); }

  Status Run(size_t candidate, const void* x, const void* y, void* out) const {
    const float one = 1.0f, zero = 0.0f;
    return Cublas(cublasLtMatmul(handle_, desc_, &one, y, a_, x, b_, &zero, out, c_, out, c_,
                                 &algos_[candidate].algo, workspace_, kLtWorkspaceBytes, Stream()),
                  "cublasLtMatmul");
  }

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  void* workspace_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
};

double Tflops(const GemmShape& s, double seconds) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) /
         seconds / 1e12;
}

Status MeasureGemm(benchmark::State& state, const GemmShape& s) {
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor x,
      RandomTensor(s.trans_x ? std::vector<int64_t>{s.k, s.m} : std::vector<int64_t>{s.m, s.k}, 1));
  IRM_ASSIGN_OR_RETURN(
      DeviceTensor y,
      RandomTensor(s.trans_y ? std::vector<int64_t>{s.n, s.k} : std::vector<int64_t>{s.k, s.n}, 2));
  IRM_ASSIGN_OR_RETURN(DeviceTensor out,
                       DeviceTensor::Uninitialized(DType::kFloat32, {s.m, s.n}, "gpu_bench"));
  BlasHandle pedantic, plain;
  IRM_RETURN_IF_ERROR(pedantic.Create(/*ours=*/true));
  IRM_RETURN_IF_ERROR(plain.Create(/*ours=*/false));
  LtPlan lt;
  IRM_RETURN_IF_ERROR(lt.Create(s));

  KernelAttrs attrs;
  attrs.Set("transpose_x", s.trans_x);
  attrs.Set("transpose_y", s.trans_y);
  std::vector<Variant> variants;
  variants.push_back({"ours", [&] { return RunTwin("matmul", {&x, &y}, attrs); }});
  variants.push_back({"gemmex_pedantic", [&] {
                        return GemmEx(pedantic.get(), s, x.raw(), y.raw(), out.raw(),
                                      CUBLAS_COMPUTE_32F_PEDANTIC);
                      }});
  variants.push_back(
      {"gemmex_default",
       [&] { return GemmEx(plain.get(), s, x.raw(), y.raw(), out.raw(), CUBLAS_COMPUTE_32F); }});
  for (size_t i = 0; i < lt.candidates(); ++i) {
    variants.push_back({fmt::format("lt_{}", i),
                        [&lt, &x, &y, &out, i] { return lt.Run(i, x.raw(), y.raw(), out.raw()); }});
  }
  IRM_ASSIGN_OR_RETURN(std::vector<double> seconds, MeasureSideBySide(variants));

  const double ours = Tflops(s, seconds[0]);
  const double pedantic_tflops = Tflops(s, seconds[1]);
  const double default_tflops = Tflops(s, seconds[2]);
  size_t best_lt = 3;
  for (size_t v = 3; v < seconds.size(); ++v) {
    if (seconds[v] < seconds[best_lt]) best_lt = v;
  }
  const double lt_tflops = Tflops(s, seconds[best_lt]);
  const double best = std::max({pedantic_tflops, default_tflops, lt_tflops});
  const char* best_name = best == lt_tflops        ? "cublasLt"
                          : best == default_tflops ? "cublasGemmEx COMPUTE_32F"
                                                   : "cublasGemmEx COMPUTE_32F_PEDANTIC";
  const double ratio = ours / best;

  for (auto _ : state) state.SetIterationTime(seconds[0]);
  state.counters["TFLOPs"] = ours;
  state.counters["pedantic_TFLOPs"] = pedantic_tflops;
  state.counters["default_TFLOPs"] = default_tflops;
  state.counters["lt_best_TFLOPs"] = lt_tflops;
  state.counters["pct_of_best"] = 100 * ratio;
  const bool pass = ratio >= kGemmTarget;
  Summaries().push_back(
      {s.label,
       fmt::format("{} gpu_bench sgemm {} (fp32, m x n x k{}{}): ours {:.2f} TFLOP/s, cuBLAS best "
                   "{:.2f} TFLOP/s ({}; GemmEx pedantic {:.2f}, GemmEx default {:.2f}, cublasLt "
                   "best of {} {:.2f}), ratio {:.3f} (target >= {})",
                   pass ? "PASS" : "MISS", s.label, s.trans_x ? ", x transposed" : "",
                   s.trans_y ? ", y transposed" : "", ours, best, best_name, pedantic_tflops,
                   default_tflops, lt.candidates(), lt_tflops, ratio, kGemmTarget),
       pass});
  return Status::Ok();
}

void BM_Sgemm(benchmark::State& state, const GemmShape& shape) {
  if (SkipWithoutGpu(state)) return;
  const Status status = MeasureGemm(state, shape);
  if (!status.ok()) Fail(state, "sgemm " + shape.label, status);
}

// ---- bandwidth-bound kernels -------------------------------------------------------------------

struct BandwidthKernel {
  std::string label;
  const char* kernel;
  int inputs;             // 64 MiB operands read
  int64_t written_bytes;  // the output's bytes
  KernelAttrs attrs;
};

std::vector<BandwidthKernel> BandwidthKernels() {
  KernelAttrs none;
  KernelAttrs scale;
  scale.Set("scale", 0.5);
  scale.Set("bias", 1.0);
  scale.Set("bias_after_scale", true);
  KernelAttrs all;
  all.Set("axis", std::vector<int64_t>{});
  all.Set("keepdim", false);
  all.Set("reduce_all", true);
  KernelAttrs last;
  last.Set("axis", std::vector<int64_t>{-1});
  last.Set("keepdim", false);
  last.Set("reduce_all", false);
  constexpr int64_t kFloat = sizeof(float);
  return {
      {"add", "add", 2, kBandwidthBytes, none},
      {"multiply", "multiply", 2, kBandwidthBytes, none},
      {"relu", "relu", 1, kBandwidthBytes, none},
      {"scale", "scale", 1, kBandwidthBytes, scale},
      {"sum_all", "sum", 1, kFloat, all},
      {"mean_all", "mean", 1, kFloat, all},
      {"sum_last_dim", "sum", 1, kSide * kFloat, last},
      {"mean_last_dim", "mean", 1, kSide * kFloat, last},
  };
}

// The 64 MiB operands, drawn once for all the bandwidth benchmarks.
struct BandwidthOperands {
  DeviceTensor x, y, copy;
};
StatusOr<const BandwidthOperands*> SharedBandwidthOperands() {
  static BandwidthOperands* operands = nullptr;
  if (operands != nullptr) return operands;
  auto fresh = std::make_unique<BandwidthOperands>();
  IRM_ASSIGN_OR_RETURN(fresh->x, RandomTensor({kSide, kSide}, 3));
  IRM_ASSIGN_OR_RETURN(fresh->y, RandomTensor({kSide, kSide}, 4));
  IRM_ASSIGN_OR_RETURN(fresh->copy,
                       DeviceTensor::Uninitialized(DType::kFloat32, {kSide, kSide}, "gpu_bench"));
  operands = fresh.release();  // kept to the end of the process, as the device itself
  return operands;
}

Status MeasureBandwidth(benchmark::State& state, const BandwidthKernel& k) {
  IRM_ASSIGN_OR_RETURN(const BandwidthOperands* operands, SharedBandwidthOperands());
  const DeviceTensor& x = operands->x;
  const DeviceTensor& y = operands->y;
  DeviceTensor copy = operands->copy;  // shares the storage: the copy's destination
  std::vector<const DeviceTensor*> inputs = {&x};
  if (k.inputs == 2) inputs.push_back(&y);
  std::vector<Variant> variants;
  variants.push_back({"ours", [&] { return RunTwin(k.kernel, inputs, k.attrs); }});
  variants.push_back({"copy", [&] {
                        return CudaStatus(cudaMemcpyAsync(copy.raw(), x.raw(), x.nbytes(),
                                                          cudaMemcpyDeviceToDevice, Stream()),
                                          "gpu_bench", "cudaMemcpyAsync");
                      }});
  IRM_ASSIGN_OR_RETURN(std::vector<double> seconds, MeasureSideBySide(variants));

  const double ours_bytes = static_cast<double>(k.inputs * kBandwidthBytes + k.written_bytes);
  const double copy_bytes = 2.0 * static_cast<double>(kBandwidthBytes);
  const double ours = ours_bytes / seconds[0] / 1e9;
  const double baseline = copy_bytes / seconds[1] / 1e9;
  const double ratio = ours / baseline;

  for (auto _ : state) state.SetIterationTime(seconds[0]);
  state.counters["GBps"] = ours;
  state.counters["copy_GBps"] = baseline;
  state.counters["pct_of_copy"] = 100 * ratio;
  const bool pass = ratio >= kBandwidthTarget;
  Summaries().push_back(
      {k.label,
       fmt::format("{} gpu_bench {} (fp32, [{}, {}], 64 MiB): ours {:.0f} GB/s, device-to-device "
                   "copy {:.0f} GB/s (bytes read + written), ratio {:.3f} (target >= {})",
                   pass ? "PASS" : "MISS", k.label, kSide, kSide, ours, baseline, ratio,
                   kBandwidthTarget),
       pass});
  return Status::Ok();
}

void BM_Bandwidth(benchmark::State& state, const BandwidthKernel& kernel) {
  if (SkipWithoutGpu(state)) return;
  const Status status = MeasureBandwidth(state, kernel);
  if (!status.ok()) Fail(state, kernel.label, status);
}

void RegisterAll() {
  for (const GemmShape& shape : GemmShapes()) {
    benchmark::RegisterBenchmark(("BM_Sgemm/" + shape.label).c_str(),
                                 [&shape](benchmark::State& state) { BM_Sgemm(state, shape); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const BandwidthKernel& kernel : BandwidthKernels()) {
    benchmark::RegisterBenchmark(("BM_Bandwidth/" + kernel.label).c_str(),
                                 [kernel](benchmark::State& state) { BM_Bandwidth(state, kernel); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  irm::bench::BenchmarkRun run = irm::bench::RunBenchmarks(argc, argv);
  if (irm::rt::cuda::VisibleGpuCount() == 0) {
    fmt::print("SKIP gpu_bench: no GPU visible: {}\n", irm::rt::cuda::NoGpuReason());
    benchmark::Shutdown();
    return 0;
  }
  int device = 0;
  cudaDeviceProp props{};
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaGetDeviceProperties(&props, device) == cudaSuccess) {
    fmt::print("gpu_bench: {} (sm_{}{}), medians of {} side-by-side repetitions\n", props.name,
               props.major, props.minor, kRepetitions);
  }
  bool ok = true, failed = false;
  for (const Summary& s : Summaries()) {
    fmt::print("{}\n", s.line);
    ok &= s.pass;
    failed |= s.line.starts_with("FAIL");
  }
  benchmark::Shutdown();
  if (failed) return 3;  // a CUDA or cuBLAS error: a runtime failure, as the CLI's exit 3
  return run.check_targets && !ok ? 1 : 0;
}
