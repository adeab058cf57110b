// Human-readable op roles.
#include "oldir/op_role.h"

#include <fmt/format.h>

namespace irm::oldir {

std::string OpRoleName(int role) {
  if (role == kForward) return "Forward";
  static constexpr struct {
    int bit;
    const char* name;
  } kBits[] = {{kBackward, "Backward"},
               {kOptimize, "Optimize"},
               {kRPC, "RPC"},
               {kDist, "Dist"},
               {kLRSched, "LRSched"},
               {kLoss, "Loss"},
               {kNotSpecified, "NotSpecified"}};
  std::string out;
  int rest = role;
  for (const auto& b : kBits) {
    if (role & b.bit) {
      if (!out.empty()) out += '|';
      out += b.name;
      rest &= ~b.bit;
    }
  }
  if (rest != 0) {
    if (!out.empty()) out += '|';
    out += fmt::format("{:#x}", rest);
  }
  // kLoss alone on a forward op (the loss op itself) reads "Forward|Loss" in Paddle's terms.
  if (role == kLoss) out = "Forward|Loss";
  return out;
}

}  // namespace irm::oldir
