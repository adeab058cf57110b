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
    if (status.ok()) status = RegisterCudaActivationKernels(*r);
    if (status.ok()) status = RegisterCudaRandomKernels(*r);
    if (status.ok()) status = RegisterCudaOptimizerKernels(*r);
    if (status.ok()) status = RegisterCudaNormalizationKernels(*r);
    if (status.ok()) status = RegisterCudaIndexingKernels(*r);
    if (status.ok()) status = RegisterCudaManipulationKernels(*r);
    if (status.ok()) status = RegisterCudaCreationKernels(*r);
    if (status.ok()) status = RegisterCudaConvKernels(*r);
    if (status.ok()) status = RegisterCudaPoolKernels(*r);
    if (status.ok()) status = RegisterCudaBatchNormKernels(*r);
    if (status.ok()) status = RegisterCudaLogicalKernels(*r);
    if (status.ok()) status = RegisterCudaElementwiseMoreKernels(*r);
    if (status.ok()) status = RegisterCudaProdKernels(*r);
    if (status.ok()) status = RegisterCudaGatherKernels(*r);
    if (status.ok()) status = RegisterCudaMetricsKernels(*r);
    if (status.ok()) status = RegisterCudaMatmulWithFlattenKernels(*r);
    if (status.ok()) status = RegisterCudaDetectionKernels(*r);
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

void CudaKernelRegistry::AllowAbsentInputs(const std::string& name,
                                           std::initializer_list<size_t> inputs) {
  uint64_t& bits = absent_allowed_[name];
  for (size_t i : inputs) bits |= uint64_t{1} << i;
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
  const auto allowed = absent_allowed_.find(name);
  const uint64_t may_be_absent = allowed == absent_allowed_.end() ? 0 : allowed->second;
  for (size_t i = 0; i < s.min_inputs; ++i) {
    if (call.inputs[i] == nullptr && i < 64 && (may_be_absent >> i & 1) != 0) continue;
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

Status CheckDType(const DeviceTensor& t, std::string_view name,
                  std::initializer_list<DType> allowed) {
  for (DType d : allowed) {
    if (t.dtype() == d) return Status::Ok();
  }
  std::string expected;
  size_t i = 0;
  for (DType d : allowed) {
    if (i > 0) expected += i + 1 == allowed.size() ? " or " : ", ";
    expected += DTypeName(d);
    ++i;
  }
  return KernelError(fmt::format("{} is {}, expected {}", name, DTypeName(t.dtype()), expected));
}

Status CheckShape(const DeviceTensor& t, std::string_view name, const std::vector<int64_t>& shape,
                  std::string_view why) {
  if (t.shape() == shape) return Status::Ok();
  return KernelError(fmt::format("{} has shape {}, expected {} ({})", name,
                                 ShapeToString(t.shape()), ShapeToString(shape), why));
}

Status CheckPresent(const CudaKernelCall& call, size_t index, std::string_view name) {
  if (call.has_input(index)) return Status::Ok();
  return KernelError(fmt::format("input '{}' (operand {}) is missing", name, index));
}

StatusOr<DeviceTensor> CopyOf(const DeviceTensor& t, std::string_view op) {
  IRM_ASSIGN_OR_RETURN(DeviceTensor copy, DeviceTensor::Uninitialized(t.dtype(), t.shape(), op));
  if (t.nbytes() > 0) {
    IRM_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(copy.raw(), t.raw(), t.nbytes(), cudaMemcpyDeviceToDevice, Stream()), op,
        "copying on the gpu"));
  }
  return copy;
}

StatusOr<Tensor> HostCopy(const DeviceTensor& t, std::string_view op) { return t.ToHost(op); }

AnyFloat AnyOf(const DeviceTensor* t) {
  AnyFloat a;
  if (t == nullptr) return a;
  a.data = t->raw();
  StatusOr<Elem> elem = ElemOf(t->dtype());
  if (elem.ok()) a.elem = *elem;
  return a;
}

AnyFloatOut AnyOutOf(DeviceTensor* t) {
  AnyFloatOut a;
  if (t == nullptr) return a;
  a.data = t->raw();
  StatusOr<Elem> elem = ElemOf(t->dtype());
  if (elem.ok()) a.elem = *elem;
  return a;
}

Status RegisterForDTypes(CudaKernelRegistry& registry, const std::string& name,
                         std::initializer_list<DType> dtypes, CudaKernelFn fn,
                         KernelSignature signature) {
  for (DType dtype : dtypes) IRM_RETURN_IF_ERROR(registry.Register(name, dtype, {fn, signature}));
  return Status::Ok();
}

}  // namespace irm::rt::cuda
