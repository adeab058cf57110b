// CUDA and cuBLAS errors as the runtime's Status, and whether a GPU is visible at all. A CUDA
// error (out of memory, a failed launch) becomes a kInternal diagnostic naming the op and what it
// was doing, never an abort: the CLI reports it and exits 3 (docs/runtime.md, "GPU").
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace irm::rt::cuda {

// Ok for cudaSuccess, else "gpu: <op>: <what> failed: <cuda's name and text>".
Status CudaStatus(cudaError_t error, std::string_view op, std::string_view what);

// The number of visible GPUs, 0 when there is none or the driver is absent.
int VisibleGpuCount();
// Why no GPU can be used ("cudaGetDeviceCount: no CUDA-capable device is detected"), or "" when
// one can. Tests skip with this reason.
std::string NoGpuReason();

}  // namespace irm::rt::cuda
