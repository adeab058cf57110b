// The CUDA backend's kernel registry: the CPU registry's contract (kernel.h) — kernel name = the
// pd_op name without prefix or in-place suffix, inputs in operand order, outputs in result order,
// attributes by their pd_op names, KernelSignature checked before the kernel runs, bad input a
// KernelError naming the operand — with DeviceTensors in place of Tensors. A kernel is keyed by
// (name, dtype) like the CPU's (name, dtype, Device::kCpu); the executors will reach it through
// Device::kCuda once Tensor can hold device storage (docs/runtime.md, "GPU").
#pragma once

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
  const CudaKernelEntry* Find(std::string_view name, DType dtype) const;
  // Checks the call against the signature, then runs the kernel; errors are prefixed "gpu ".
  Status Run(std::string_view name, DType dtype, CudaKernelCall& call) const;

  std::vector<std::string> Names() const;
  std::vector<DType> DTypesOf(std::string_view name) const;

 private:
  std::map<std::pair<std::string, DType>, CudaKernelEntry, std::less<>> kernels_;
};

// Families (one host file each), called by Global().
Status RegisterCudaElementwiseKernels(CudaKernelRegistry& registry);  // elementwise_kernels.cc
Status RegisterCudaReductionKernels(CudaKernelRegistry& registry);    // reduction_kernels.cc
Status RegisterCudaMatmulKernels(CudaKernelRegistry& registry);       // matmul_kernels.cc

// What kernel files share: dtype checks and an output allocated for every element to be written.
Status ExpectDType(const DeviceTensor& t, DType dtype, std::string_view name);
// Wraps a launcher's error as the kernel's Status ("gpu: add: launch failed: ...").
Status LaunchStatus(cudaError_t error, std::string_view kernel);

}  // namespace irm::rt::cuda
