// The start-up policy of the process-wide registries of compiled-in entries (the kernel registry,
// the op registry, the pass registry, the new-IR binding table): each is built once, on first use,
// by registering its built-in entries. Those registrations are code, not input, so a failed one is
// a programming error, and a registry is never left partial: the process stops at start-up with
// the first failed registration's diagnostic, which every test run that touches the registry
// meets. Each registry's own tests also register into a fresh registry and report that first
// failure as an ordinary test failure.
#pragma once

#include <memory>
#include <string_view>

#include "common/status.h"

namespace irm {

// Prints "<registry>: <diagnostic>" to stderr and aborts.
[[noreturn]] void FailBuiltinRegistration(std::string_view registry, const Status& status);

// A new Registry filled by `fill` (Status(Registry&)), which stops at its first failure; on
// failure, FailBuiltinRegistration. Meant for a function-local static of Registry::Global().
template <typename Registry, typename Fill>
const Registry* BuildBuiltinRegistry(std::string_view registry_name, Fill&& fill) {
  auto registry = std::make_unique<Registry>();
  const Status status = fill(*registry);
  if (!status.ok()) FailBuiltinRegistration(registry_name, status);
  return registry.release();
}

}  // namespace irm
