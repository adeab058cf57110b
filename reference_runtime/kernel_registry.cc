// The kernel registry (kernel.h): registration, look-up with a helpful miss, the signature check,
// and the one place that lists every kernel family.
#include <cstdint>
#include <memory>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/builtin_registry.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/kernels/register.h"
#include "reference_runtime/tensor_limits.h"

namespace irm::rt {

Status KernelError(std::string message) {
  return Status(StatusCode::kInvalid, Location{}, std::move(message));
}

const char* AttrKindName(const AttrValue& value) {
  static constexpr const char* kNames[] = {"a bool",       "an int",        "a float", "a string",
                                           "an int array", "a float array", "a dtype"};
  return kNames[value.index()];
}

const char* GemmModeName(GemmMode mode) { return mode == GemmMode::kBlas ? "blas" : "reference"; }

const KernelAttrs::Map& KernelAttrs::EmptyMap() {
  static const Map* const kEmpty = new Map();
  return *kEmpty;
}

KernelAttrs::Map& KernelAttrs::Own() {
  if (values_ == nullptr) {
    values_ = std::make_shared<Map>();
  } else if (values_.use_count() > 1) {
    values_ = std::make_shared<Map>(*values_);
  }
  return *values_;
}

const KernelRegistry& KernelRegistry::Global() {
  static const KernelRegistry* const kRegistry =
      BuildBuiltinRegistry<KernelRegistry>("kernel registry", RegisterAllKernels);
  return *kRegistry;
}

Status KernelRegistry::Register(const std::string& name, DType dtype, Device device,
                                KernelEntry entry) {
  auto [it, inserted] = kernels_.emplace(Key{name, dtype, device}, entry);
  if (!inserted) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("kernel '{}' for {} on {} is registered twice", name,
                              DTypeName(dtype), DeviceName(device)));
  }
  return Status::Ok();
}

const KernelEntry* KernelRegistry::Find(std::string_view name, DType dtype, Device device) const {
  auto it = kernels_.find(Key{std::string(name), dtype, device});
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<DType> KernelRegistry::DTypesOf(std::string_view name, Device device) const {
  std::vector<DType> dtypes;
  for (const auto& [key, entry] : kernels_) {
    if (key.name == name && key.device == device) dtypes.push_back(key.dtype);
  }
  return dtypes;
}

StatusOr<const KernelEntry*> KernelRegistry::Lookup(std::string_view name, DType dtype,
                                                    Device device) const {
  if (const KernelEntry* entry = Find(name, dtype, device)) return entry;
  const std::vector<DType> dtypes = DTypesOf(name, device);
  if (dtypes.empty()) {
    return Status(StatusCode::kUnimplemented, Location{},
                  fmt::format("there is no kernel '{}' on {}", name, DeviceName(device)));
  }
  std::vector<std::string> names;
  for (DType d : dtypes) names.push_back(DTypeName(d));
  return Status(StatusCode::kUnimplemented, Location{},
                fmt::format("kernel '{}' has no {} version on {} (it has: {})", name,
                            DTypeName(dtype), DeviceName(device), fmt::join(names, ", ")));
}

Status KernelRegistry::Run(std::string_view name, DType dtype, KernelCall& call,
                           Device device) const {
  IRM_ASSIGN_OR_RETURN(const KernelEntry* entry, Lookup(name, dtype, device));
  return RunEntry(name, *entry, call);
}

Status KernelRegistry::RunEntry(std::string_view name, const KernelEntry& entry, KernelCall& call) {
  const KernelSignature& sig = entry.signature;
  if (call.inputs.size() < sig.min_inputs || call.inputs.size() > sig.max_inputs) {
    const std::string expected = sig.max_inputs == KernelSignature::kVariadic
                                     ? fmt::format("{} or more", sig.min_inputs)
                                 : sig.min_inputs == sig.max_inputs
                                     ? fmt::format("{}", sig.min_inputs)
                                     : fmt::format("{} to {}", sig.min_inputs, sig.max_inputs);
    return KernelError(
        fmt::format("kernel '{}' takes {} inputs, got {}", name, expected, call.inputs.size()));
  }
  if (sig.num_outputs != KernelSignature::kVariadic && call.outputs.size() != sig.num_outputs) {
    return KernelError(fmt::format("kernel '{}' has {} outputs, {} were given", name,
                                   sig.num_outputs, call.outputs.size()));
  }
  // A kernel allocates its outputs; one whose output would not fit (a shape computed from the
  // inputs, such as a broadcast of two long vectors) fails here as a runtime failure naming the
  // size, which the executor locates at the op.
  try {
    return entry.fn(call);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("kernel '{}' could not allocate a tensor of {} bytes (out of memory, "
                              "or more than this machine's {} bytes)",
                              name, TakeFailedAllocationBytes(), MaxTensorBytes()));
  }
}

BoundKernel::BoundKernel(const KernelRegistry& registry, std::string name, Device device)
    : registry_(&registry), name_(std::move(name)), device_(device) {
  for (size_t d = 0; d < kDTypes; ++d) {
    entries_[d] = registry.Find(name_, static_cast<DType>(d), device);
  }
}

Status BoundKernel::Run(DType dtype, KernelCall& call) const {
  const size_t d = static_cast<size_t>(dtype);
  if (d < kDTypes && entries_[d] != nullptr) {
    return KernelRegistry::RunEntry(name_, *entries_[d], call);
  }
  return registry_->Run(name_, dtype, call, device_);
}

std::vector<std::string> KernelRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [key, entry] : kernels_) {
    if (names.empty() || names.back() != key.name) names.push_back(key.name);
  }
  return names;
}

}  // namespace irm::rt
