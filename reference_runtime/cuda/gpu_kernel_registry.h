// The kernel registry of `--device gpu`: a KernelRegistry (kernel.h) that the legacy and PIR
// executors use unchanged, through ExecutorOptions::kernels. Every CPU kernel (name, dtype) with a
// device twin in CudaKernelRegistry is an entry with the CPU's name, dtype and signature that runs
// the twin, in one of two residencies:
// - kResident (the default, what the CLI uses): tensors stay on the device between ops. An input
//   whose storage has a current device mirror (tensor.h) is read there, with no copy; any other is
//   uploaded once and the mirror kept on its storage for the next op. Outputs are Tensor::OnDevice:
//   their bytes come back to the host only if and when a host reader (a fetch, control flow, a
//   communicator, a CPU kernel) reads them.
// - kStaged: every op copies its inputs to the device and its outputs back into host Tensors (one
//   round trip per op; simple and exact, kept for comparison).
// A CPU kernel without a device twin is an entry that refuses at the op, naming the kernel ("no GPU
// kernel for 'conv2d' yet") — never a silent run on the CPU. A CUDA error is the twin's kInternal
// Status naming the kernel, which the executor locates at the op (the CLI's exit 3).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "reference_runtime/kernel.h"

namespace irm::rt::cuda {

enum class GpuResidency { kStaged, kResident };

// The registry above. kInternal ("--device gpu: no GPU can be used: ...") where no GPU is
// visible, so that nothing starts that would fail at its first kernel.
StatusOr<std::unique_ptr<KernelRegistry>> MakeGpuKernelRegistry(
    GpuResidency residency = GpuResidency::kResident);

// What the registry holds, without touching a GPU: every CPU (name, dtype) is staged (the device
// twin runs) or refused. Sorted by name, then dtype.
struct GpuKernelCoverage {
  std::vector<std::pair<std::string, DType>> staged;
  std::vector<std::pair<std::string, DType>> refused;
};
const GpuKernelCoverage& GpuCoverage();

// The registry of MakeGpuKernelRegistry without the device check: for tests of the refusals and of
// the entries' signatures, which need no GPU (nothing touches the device before a kernel runs).
StatusOr<std::unique_ptr<KernelRegistry>> MakeGpuKernelRegistryUnchecked(
    GpuResidency residency = GpuResidency::kResident);

}  // namespace irm::rt::cuda
