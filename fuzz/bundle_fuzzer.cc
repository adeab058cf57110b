// Fuzzes the bundle.json and plan.json parsers (nlohmann JSON + the bundle schema): never a crash,
// and every rejection carries a message.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oldir/bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto bundle = irm::oldir::ParseBundleJson(text, "bundle.json");
  if (!bundle.ok() && bundle.status().message().empty()) __builtin_trap();
  auto plan = irm::oldir::ParsePlanJson(text, "plan.json");
  if (!plan.ok() && plan.status().message().empty()) __builtin_trap();
  return 0;
}
