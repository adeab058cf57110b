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

void ExpectSameBits(const std::vector<Tensor>& gpu, const std::vector<Tensor>& other,
                    const std::string& what, const std::string& whose) {
  ASSERT_EQ(gpu.size(), other.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    ASSERT_EQ(gpu[i].defined(), other[i].defined()) << what << " output " << i;
    if (!gpu[i].defined()) continue;
    EXPECT_TRUE(gpu[i].BitwiseEqual(other[i]))
        << what << " output " << i << " differs from " << whose << " bits";
  }
}

void ExpectCpuBits(const std::vector<Tensor>& gpu, const std::vector<Tensor>& cpu,
                   const std::string& what) {
  ExpectSameBits(gpu, cpu, what, "the CPU kernel's");
}

void ExpectCpuBits(const Tensor& gpu, const Tensor& cpu, const std::string& what) {
  ASSERT_TRUE(gpu.defined()) << what;
  ASSERT_TRUE(cpu.defined()) << what;
  EXPECT_TRUE(gpu.BitwiseEqual(cpu)) << what << " differs from the CPU kernel's bits";
}

}  // namespace irm::rt::cuda::testing
