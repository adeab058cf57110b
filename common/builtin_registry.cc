// FailBuiltinRegistration (builtin_registry.h).
#include "common/builtin_registry.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace irm {

void FailBuiltinRegistration(std::string_view registry, const Status& status) {
  fmt::print(stderr, "{}: {}\n", registry, status.ToString());
  std::fflush(stderr);
  std::abort();
}

}  // namespace irm
