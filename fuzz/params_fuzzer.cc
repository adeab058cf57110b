// Fuzzes the .pdiparams reader; what it accepts must write back byte for byte.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oldir/params_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto params = irm::oldir::ParseParams(bytes, "fuzz-input");
  if (!params.ok()) return 0;
  auto written = irm::oldir::SerializeParams(*params);
  if (!written.ok()) __builtin_trap();
  auto again = irm::oldir::ParseParams(*written, "rewritten");
  if (!again.ok() || !(*again == *params)) __builtin_trap();
  return 0;
}
