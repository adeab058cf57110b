// The row constructors of the legacy binding table (legacy_bindings.cc and its sections in files
// of their own, legacy_bindings_convnet.cc, legacy_bindings_detection.cc), and the sections'
// entry points. Internal to the table's sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference_runtime/legacy_bindings.h"

namespace irm::rt {

// The conv-net rows (pool2d, batch_norm, mul, top_k, accuracy and their grads).
void AddConvNetBindings(std::vector<LegacyBinding>& t);
// The detection rows (gather, shape, smooth_l1_loss, sigmoid_cross_entropy_with_logits,
// affine_channel, anchor_generator, roi_align, rpn_target_assign and the grads).
void AddDetectionBindings(std::vector<LegacyBinding>& t);

namespace legacy_binding_rows {

inline SlotRule One(std::string_view slot) { return {slot, Arity::kOne}; }
inline SlotRule Opt(std::string_view slot) { return {slot, Arity::kOptional}; }
inline SlotRule List(std::string_view slot) { return {slot, Arity::kList}; }

inline AttrRule Bool(std::string_view legacy, std::string_view kernel, bool fallback) {
  return {legacy, kernel, AttrKind::kBool, AttrValue(fallback)};
}
inline AttrRule Int(std::string_view legacy, std::string_view kernel, int64_t fallback) {
  return {legacy, kernel, AttrKind::kInt, AttrValue(fallback)};
}
// The fallback is a float: the legacy attribute is one.
inline AttrRule Float(std::string_view legacy, std::string_view kernel, float fallback) {
  return {legacy, kernel, AttrKind::kFloat, AttrValue(static_cast<double>(fallback))};
}
inline AttrRule Str(std::string_view legacy, std::string_view kernel, std::string fallback) {
  return {legacy, kernel, AttrKind::kString, AttrValue(std::move(fallback))};
}
inline AttrRule Ints(std::string_view legacy, std::string_view kernel,
                     std::vector<int64_t> fallback = {}) {
  return {legacy, kernel, AttrKind::kInts, AttrValue(std::move(fallback))};
}
inline AttrRule Floats(std::string_view legacy, std::string_view kernel,
                       std::vector<double> fallback) {
  return {legacy, kernel, AttrKind::kFloats, AttrValue(std::move(fallback))};
}
inline AttrRule DTypeOr(std::string_view legacy, std::string_view kernel, DType fallback) {
  return {legacy, kernel, AttrKind::kDType, AttrValue(fallback)};
}
inline AttrRule Required(std::string_view legacy, std::string_view kernel, AttrKind kind) {
  return {legacy, kernel, kind, std::nullopt};
}
// A kernel attribute the legacy op has no counterpart for: always `value`.
inline AttrRule ConstInt(std::string_view kernel, int64_t value) {
  return {"", kernel, AttrKind::kInt, AttrValue(value)};
}

}  // namespace legacy_binding_rows
}  // namespace irm::rt
