// The CUDA backend's kernel registry: the CPU registry's contract (kernel.h) — kernel name = the
// pd_op name without prefix or in-place suffix, inputs in operand order, outputs in result order,
// attributes by their pd_op names, KernelSignature checked before the kernel runs, bad input a
// KernelError naming the operand — with DeviceTensors in place of Tensors. A kernel is keyed by
// (name, dtype) like the CPU's (name, dtype, Device::kCpu); the executors reach it through the GPU
// kernel registry (gpu_kernel_registry.h), which hands it their Tensors' device copies
// (docs/runtime.md, "GPU").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/cuda/device_tensor.h"
#include "reference_runtime/kernel.h"

namespace irm::rt::cuda {

struct CudaKernelCall {
  std::vector<const DeviceTensor*> inputs;  // null: an absent optional input
  std::vector<DeviceTensor*> outputs;       // null: an output nobody reads
  KernelAttrs attrs;
  KernelContext context;

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const DeviceTensor& input(size_t i) const { return *inputs[i]; }
  bool wants_output(size_t i) const { return i < outputs.size() && outputs[i] != nullptr; }
  void SetOutput(size_t i, DeviceTensor t) {
    if (wants_output(i)) *outputs[i] = std::move(t);
  }
};

using CudaKernelFn = Status (*)(CudaKernelCall& call);

struct CudaKernelEntry {
  CudaKernelFn fn = nullptr;
  KernelSignature signature;
};

class CudaKernelRegistry {
 public:
  // Every CUDA kernel (built once, on first use; needs no GPU).
  static const CudaKernelRegistry& Global();

  Status Register(const std::string& name, DType dtype, CudaKernelEntry entry);
  // Inputs of `name` below its min_inputs that may be absent (null), as the CPU kernel allows:
  // adam's moment2_max, layer_norm_grad's scale and bias. Run reports any other absent input
  // below min_inputs as missing.
  void AllowAbsentInputs(const std::string& name, std::initializer_list<size_t> inputs);
  const CudaKernelEntry* Find(std::string_view name, DType dtype) const;
  // Checks the call against the signature, then runs the kernel; errors are prefixed "gpu ".
  Status Run(std::string_view name, DType dtype, CudaKernelCall& call) const;

  std::vector<std::string> Names() const;
  std::vector<DType> DTypesOf(std::string_view name) const;

 private:
  std::map<std::pair<std::string, DType>, CudaKernelEntry, std::less<>> kernels_;
  std::map<std::string, uint64_t, std::less<>> absent_allowed_;  // bit i: input i
};

// Families (one host file each), called by Global().
Status RegisterCudaElementwiseKernels(CudaKernelRegistry& registry);    // elementwise_kernels.cc
Status RegisterCudaReductionKernels(CudaKernelRegistry& registry);      // reduction_kernels.cc
Status RegisterCudaMatmulKernels(CudaKernelRegistry& registry);         // matmul_kernels.cc
Status RegisterCudaActivationKernels(CudaKernelRegistry& registry);     // activation_kernels.cc
Status RegisterCudaRandomKernels(CudaKernelRegistry& registry);         // random_kernels.cc
Status RegisterCudaOptimizerKernels(CudaKernelRegistry& registry);      // optimizer_kernels.cc
Status RegisterCudaNormalizationKernels(CudaKernelRegistry& registry);  // normalization_kernels.cc
Status RegisterCudaIndexingKernels(CudaKernelRegistry& registry);       // indexing_kernels.cc
Status RegisterCudaManipulationKernels(CudaKernelRegistry& registry);   // manipulation_kernels.cc
Status RegisterCudaCreationKernels(CudaKernelRegistry& registry);       // creation_kernels.cc
Status RegisterCudaConvKernels(CudaKernelRegistry& registry);           // conv_kernels.cc
Status RegisterCudaPoolKernels(CudaKernelRegistry& registry);           // pool_kernels.cc
Status RegisterCudaBatchNormKernels(CudaKernelRegistry& registry);      // batch_norm_kernels.cc
// The twins of the remaining CPU kernels, one host file each: logical_kernels.cc,
// elementwise_more_kernels.cc, prod_kernels.cc, gather_kernels.cc, metrics_kernels.cc,
// matmul_with_flatten_kernels.cc, detection_kernels.cc.
Status RegisterCudaLogicalKernels(CudaKernelRegistry& registry);
Status RegisterCudaElementwiseMoreKernels(CudaKernelRegistry& registry);
Status RegisterCudaProdKernels(CudaKernelRegistry& registry);
Status RegisterCudaGatherKernels(CudaKernelRegistry& registry);
Status RegisterCudaMetricsKernels(CudaKernelRegistry& registry);
Status RegisterCudaMatmulWithFlattenKernels(CudaKernelRegistry& registry);
Status RegisterCudaDetectionKernels(CudaKernelRegistry& registry);

// What kernel files share: dtype checks and an output allocated for every element to be written.
Status ExpectDType(const DeviceTensor& t, DType dtype, std::string_view name);
// Wraps a launcher's error as the kernel's Status ("gpu: add: launch failed: ...").
Status LaunchStatus(cudaError_t error, std::string_view kernel);

// The CPU kernels' checks (kernels/axes.h) on device tensors, with the same wording:
// "x is int32, expected float32 or float64", "mean has shape [3], expected [2] (why)".
Status CheckDType(const DeviceTensor& t, std::string_view name,
                  std::initializer_list<DType> allowed);
Status CheckShape(const DeviceTensor& t, std::string_view name, const std::vector<int64_t>& shape,
                  std::string_view why);
// "input 'x' (operand 0) is missing".
Status CheckPresent(const CudaKernelCall& call, size_t index, std::string_view name);

// A new tensor holding `t`'s elements (an output that equals its input, kernels' Clone()).
StatusOr<DeviceTensor> CopyOf(const DeviceTensor& t, std::string_view op);
// The elements of a small device tensor on the host (labels, ids, flags the host must check):
// waits for the device work that writes it.
StatusOr<Tensor> HostCopy(const DeviceTensor& t, std::string_view op);

// A floating device tensor as launch.h's run-time typed operand (null data when `t` is null).
AnyFloat AnyOf(const DeviceTensor* t);
AnyFloatOut AnyOutOf(DeviceTensor* t);

// Registers `fn` under `name` for each dtype.
Status RegisterForDTypes(CudaKernelRegistry& registry, const std::string& name,
                         std::initializer_list<DType> dtypes, CudaKernelFn fn,
                         KernelSignature signature);
// The floating dtypes (what most CPU kernels register) and every dtype a device tensor can have.
inline constexpr std::initializer_list<DType> kCudaFloating = {DType::kFloat32, DType::kFloat64,
                                                               DType::kFloat16, DType::kBFloat16};
inline constexpr std::initializer_list<DType> kCudaEvery = {
    DType::kBool,  DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kInt32,
    DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

}  // namespace irm::rt::cuda
