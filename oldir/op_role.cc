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
  unsigned rest = static_cast<unsigned>(role);
  for (const auto& b : kBits) {
    if (role & b.bit) {
      if (!out.empty()) out += '|';
      out += b.name;
      rest &= ~static_cast<unsigned>(b.bit);
    }
  }
  if (rest != 0) {
    if (!out.empty()) out += '|';
    out += fmt::format("{:#x}", rest);
  }
  // The loss op itself has no Backward/Optimize bit: it is a forward op, "Forward|Loss".
  if ((role & kLoss) && !(role & (kBackward | kOptimize))) out = "Forward|" + out;
  return out;
}

}  // namespace irm::oldir
