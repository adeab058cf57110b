// Fuzzes the bundle.json, plan.json and shards.json parsers (nlohmann JSON + the bundle schema):
// never a crash, and every rejection carries a message; what shards.json parses to is written and
// parsed again to the same shards.
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
  auto shards = irm::oldir::ParseShardsJson(text, "shards.json");
  if (!shards.ok() && shards.status().message().empty()) __builtin_trap();
  if (shards.ok()) {
    auto again = irm::oldir::ParseShardsJson(irm::oldir::ShardsJsonText(*shards), "shards.json");
    if (!again.ok() || *again != *shards) __builtin_trap();
  }
  return 0;
}
