// Fuzzes the .npy reader; what it accepts must write back and read back to the same tensor.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensor = irm::ParseNpy(bytes, "fuzz-input");
  if (!tensor.ok()) return 0;
  auto written = irm::SerializeNpy(*tensor);
  if (!written.ok()) __builtin_trap();
  auto again = irm::ParseNpy(*written, "rewritten");
  if (!again.ok() || !(*again == *tensor)) __builtin_trap();
  return 0;
}
