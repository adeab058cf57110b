// What the CUDA backend's tests share: skipping (never passing) where no GPU is visible, moving
// host tensors to the device and back, and running a CUDA kernel from the global registry.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"
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

}  // namespace irm::rt::cuda::testing
