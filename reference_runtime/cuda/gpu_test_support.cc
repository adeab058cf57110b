// Test support for the CUDA backend's tests (gpu_test_support.h).
#include "reference_runtime/cuda/gpu_test_support.h"

namespace irm::rt::cuda::testing {

StatusOr<std::vector<Tensor>> TryRunGpu(const std::string& name, DType dtype,
                                        const std::vector<const Tensor*>& inputs,
                                        const KernelAttrs& attrs, size_t num_outputs,
                                        const KernelContext& context) {
  std::vector<DeviceTensor> device_inputs;
  device_inputs.reserve(inputs.size());
  CudaKernelCall call;
  for (const Tensor* input : inputs) {
    if (input == nullptr) {
      call.inputs.push_back(nullptr);
      continue;
    }
    IRM_ASSIGN_OR_RETURN(DeviceTensor d, DeviceTensor::FromHost(*input));
    device_inputs.push_back(std::move(d));
    call.inputs.push_back(&device_inputs.back());
  }
  std::vector<DeviceTensor> outputs(num_outputs);
  for (DeviceTensor& out : outputs) call.outputs.push_back(&out);
  call.attrs = attrs;
  call.context = context;
  IRM_RETURN_IF_ERROR(CudaKernelRegistry::Global().Run(name, dtype, call));
  std::vector<Tensor> host;
  for (const DeviceTensor& out : outputs) {
    if (!out.defined()) {
      host.emplace_back();
      continue;
    }
    IRM_ASSIGN_OR_RETURN(Tensor t, out.ToHost());
    host.push_back(std::move(t));
  }
  return host;
}

std::vector<Tensor> RunGpu(const std::string& name, DType dtype,
                           const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs,
                           size_t num_outputs, const KernelContext& context) {
  StatusOr<std::vector<Tensor>> result =
      TryRunGpu(name, dtype, inputs, attrs, num_outputs, context);
  if (!result.ok()) {
    ADD_FAILURE() << "gpu " << name << " (" << DTypeName(dtype)
                  << "): " << result.status().message();
    return std::vector<Tensor>(num_outputs);
  }
  return std::move(result).value();
}

}  // namespace irm::rt::cuda::testing
