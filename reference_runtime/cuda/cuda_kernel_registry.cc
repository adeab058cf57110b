// The CUDA kernel registry (cuda_kernel.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <set>

#include "reference_runtime/cuda/cuda_kernel.h"
#include "reference_runtime/cuda/cuda_status.h"

namespace irm::rt::cuda {

const CudaKernelRegistry& CudaKernelRegistry::Global() {
  static const CudaKernelRegistry* registry = [] {
    auto* r = new CudaKernelRegistry();
    Status status = RegisterCudaElementwiseKernels(*r);
    if (status.ok()) status = RegisterCudaReductionKernels(*r);
    if (status.ok()) status = RegisterCudaMatmulKernels(*r);
    if (!status.ok()) {
      // Two kernels under one key: a bug in the tables above, caught by every test.
      fmt::print(stderr, "CUDA kernel registry: {}\n", status.message());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

Status CudaKernelRegistry::Register(const std::string& name, DType dtype, CudaKernelEntry entry) {
  if (!kernels_.emplace(std::make_pair(name, dtype), entry).second) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("gpu kernel {} for {} is registered twice", name, DTypeName(dtype)));
  }
  return Status::Ok();
}

const CudaKernelEntry* CudaKernelRegistry::Find(std::string_view name, DType dtype) const {
  auto it = kernels_.find(std::make_pair(std::string(name), dtype));
  return it == kernels_.end() ? nullptr : &it->second;
}

Status CudaKernelRegistry::Run(std::string_view name, DType dtype, CudaKernelCall& call) const {
  const CudaKernelEntry* entry = Find(name, dtype);
  if (entry == nullptr) {
    const std::vector<DType> dtypes = DTypesOf(name);
    if (dtypes.empty()) return KernelError(fmt::format("no gpu kernel '{}'", name));
    std::vector<std::string> names;
    for (DType d : dtypes) names.emplace_back(DTypeName(d));
    return KernelError(fmt::format("gpu kernel '{}' has no {} version (it has {})", name,
                                   DTypeName(dtype), fmt::join(names, ", ")));
  }
  const KernelSignature& s = entry->signature;
  const size_t n = call.inputs.size();
  if (n < s.min_inputs || (s.max_inputs != KernelSignature::kVariadic && n > s.max_inputs)) {
    return KernelError(fmt::format("gpu kernel '{}' takes {} to {} inputs, got {}", name,
                                   s.min_inputs, s.max_inputs, n));
  }
  for (size_t i = 0; i < s.min_inputs; ++i) {
    if (call.inputs[i] == nullptr || !call.inputs[i]->defined()) {
      return KernelError(fmt::format("gpu kernel '{}': input {} is missing", name, i));
    }
  }
  if (s.num_outputs != KernelSignature::kVariadic && call.outputs.size() != s.num_outputs) {
    return KernelError(fmt::format("gpu kernel '{}' has {} outputs, {} were given", name,
                                   s.num_outputs, call.outputs.size()));
  }
  return entry->fn(call);
}

std::vector<std::string> CudaKernelRegistry::Names() const {
  std::set<std::string> names;
  for (const auto& [key, entry] : kernels_) names.insert(key.first);
  return {names.begin(), names.end()};
}

std::vector<DType> CudaKernelRegistry::DTypesOf(std::string_view name) const {
  std::vector<DType> dtypes;
  for (const auto& [key, entry] : kernels_) {
    if (key.first == name) dtypes.push_back(key.second);
  }
  return dtypes;
}

Status ExpectDType(const DeviceTensor& t, DType dtype, std::string_view name) {
  if (t.dtype() == dtype) return Status::Ok();
  return KernelError(fmt::format("{} is {}, not {}", name, DTypeName(t.dtype()), DTypeName(dtype)));
}

Status LaunchStatus(cudaError_t error, std::string_view kernel) {
  return CudaStatus(error, kernel, "the kernel launch");
}

}  // namespace irm::rt::cuda
