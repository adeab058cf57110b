// Small pieces the op_context*.cc files share: the non-empty names of a legacy slot and a
// per-result attribute gathered before it becomes an Array. Not for handlers (op_context.h is
// their API).
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "newir/attributes.h"
#include "oldir/program.h"

namespace irm::translator::op_context_internal {

// As string_views, so that unequal lengths decide without comparing bytes (std::string ==
// const char* compares them always, and these run for every argument and attribute of every op).
inline bool IsEmptyName(const std::string& name) {
  return name.empty() || std::string_view(name) == std::string_view(oldir::kEmptyVarName);
}

// The non-empty names of a slot, counted, and the first of them: what Input and OptionalInput
// need, without copying the names.
struct SlotVars {
  const oldir::Op::Names* names = nullptr;
  const std::string* first = nullptr;
  size_t count = 0;
  bool persistable = false;  // the first's var (filled in by EmitByTable for single results)
};

inline SlotVars VarsOf(const oldir::Op::Names* names) {
  SlotVars vars;
  if (names == nullptr) return vars;
  vars.names = names;
  for (const std::string& name : *names) {
    if (IsEmptyName(name)) continue;
    if (vars.first == nullptr) vars.first = &name;
    ++vars.count;
  }
  return vars;
}

// One attribute per result, gathered before they become an Array: the usual handful inline, so
// that an array that is interned (flags, empty names) costs no allocation at all.
class PerResult {
 public:
  PerResult(size_t n, const newir::Attribute& fill) : n_(n) {
    if (n > inline_.size()) {
      spilled_.assign(n, fill);
    } else {
      std::fill_n(inline_.begin(), n, fill);
    }
  }
  newir::Attribute& operator[](size_t i) { return n_ > inline_.size() ? spilled_[i] : inline_[i]; }
  newir::Attribute ToArray() const {
    return newir::Attribute::ArrayFrom(std::span<const newir::Attribute>(
        n_ > inline_.size() ? spilled_.data() : inline_.data(), n_));
  }

 private:
  size_t n_;
  std::array<newir::Attribute, 8> inline_;
  std::vector<newir::Attribute> spilled_;
};

}  // namespace irm::translator::op_context_internal
