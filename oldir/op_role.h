// Paddle's op_role attribute: bit flags saying which phase of training an op belongs to
// (paddle/phi/core/framework/op_proto_maker.h, enum class OpRole).
#pragma once

#include <string>

namespace irm::oldir {

enum OpRole : int {
  kForward = 0x0000,
  kBackward = 0x0001,
  kOptimize = 0x0002,
  kRPC = 0x0004,
  kDist = 0x0008,
  kLRSched = 0x0010,
  kLoss = 0x0100,
  kNotSpecified = 0x1000,
};

inline constexpr const char* kOpRoleAttr = "op_role";
inline constexpr const char* kOpRoleVarAttr = "op_role_var";
inline constexpr const char* kOpNamescopeAttr = "op_namescope";
inline constexpr const char* kOpCallstackAttr = "op_callstack";
inline constexpr const char* kOpDeviceAttr = "op_device";

inline bool IsForward(int role) { return (role & (kBackward | kOptimize)) == 0; }
inline bool IsBackward(int role) { return (role & kBackward) != 0; }
inline bool IsOptimize(int role) { return (role & kOptimize) != 0; }
inline bool IsLoss(int role) { return (role & kLoss) != 0; }
inline bool IsLRSched(int role) { return (role & kLRSched) != 0; }

// "Forward", "Backward|Loss", "Optimize|LRSched", unknown bits as hex: "Backward|0x40".
std::string OpRoleName(int role);

}  // namespace irm::oldir
