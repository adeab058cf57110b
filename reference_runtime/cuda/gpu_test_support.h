// What the CUDA backend's tests share: skipping (never passing) where no GPU is visible, moving
// host tensors to the device and back, running a CUDA kernel from the global registry, and what
// the kernel tests compare with: the CPU kernels' test helpers and their bits.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
#include "reference_runtime/kernels/kernel_test_support.h"
#include "reference_runtime/tensor.h"

// Ends the test as skipped, with the reason, when no GPU can be used.
#define IRM_REQUIRE_GPU()                                                   \
  do {                                                                      \
    if (::irm::rt::cuda::VisibleGpuCount() == 0) {                          \
      GTEST_SKIP() << "no GPU visible: " << ::irm::rt::cuda::NoGpuReason(); \
    }                                                                       \
  } while (0)

namespace irm::rt::cuda::testing {

// Runs `name` on device copies of `inputs` and returns host copies of its outputs (an output the
// kernel left unset comes back undefined).
StatusOr<std::vector<Tensor>> TryRunGpu(const std::string& name, DType dtype,
                                        const std::vector<const Tensor*>& inputs,
                                        const KernelAttrs& attrs, size_t num_outputs,
                                        const KernelContext& context = {});
// The same, failing the current test (and returning empty tensors) on an error.
std::vector<Tensor> RunGpu(const std::string& name, DType dtype,
                           const std::vector<const Tensor*>& inputs, const KernelAttrs& attrs,
                           size_t num_outputs, const KernelContext& context = {});

// The CPU kernels' test helpers (kernels/kernel_test_support.h: RunKernel, RandomTensor,
// ExpectClose...): a GPU kernel test reaches them and these with `using namespace testing;`.
using namespace rt::testing;  // NOLINT(build/namespaces)

// The floating dtypes of the CUDA kernels (kCudaFloating), to loop over.
inline constexpr DType kFloating[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                      DType::kBFloat16};

// Each defined output bit for bit equal to the other run's (`whose`: "the CPU kernel's").
void ExpectSameBits(const std::vector<Tensor>& gpu, const std::vector<Tensor>& other,
                    const std::string& what, const std::string& whose);
// The same against the CPU kernel's outputs.
void ExpectCpuBits(const std::vector<Tensor>& gpu, const std::vector<Tensor>& cpu,
                   const std::string& what);
// One result: both defined and equal in dtype, shape and bytes.
void ExpectCpuBits(const Tensor& gpu, const Tensor& cpu, const std::string& what);

}  // namespace irm::rt::cuda::testing
