// CUDA errors as Status, and the device probe (cuda_status.h).
#include "reference_runtime/cuda/cuda_status.h"

#include <fmt/format.h>

namespace irm::rt::cuda {

Status CudaStatus(cudaError_t error, std::string_view op, std::string_view what) {
  if (error == cudaSuccess) return Status::Ok();
  return Status(StatusCode::kInternal, Location{},
                fmt::format("gpu: {}: {} failed: {} ({})", op, what, cudaGetErrorName(error),
                            cudaGetErrorString(error)));
}

namespace {
struct Probe {
  int count = 0;
  std::string reason;
};
const Probe& GetProbe() {
  static const Probe probe = [] {
    Probe p;
    const cudaError_t error = cudaGetDeviceCount(&p.count);
    if (error != cudaSuccess) {
      p.count = 0;
      p.reason = fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorName(error),
                             cudaGetErrorString(error));
      cudaGetLastError();  // clear the sticky-free error so later calls do not see it
    } else if (p.count == 0) {
      p.reason = "cudaGetDeviceCount: 0 devices";
    }
    return p;
  }();
  return probe;
}
}  // namespace

int VisibleGpuCount() { return GetProbe().count; }
std::string NoGpuReason() { return GetProbe().reason; }

}  // namespace irm::rt::cuda
