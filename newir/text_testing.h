// Test support for the text form: a structural comparison of two programs that does not go
// through the printer, so that round-trip tests prove print ∘ parse lossless rather than merely
// stable. Header-only; included by the text tests.
#pragma once

#include <fmt/format.h>

#include <string>
#include <unordered_map>

#include "newir/block.h"
#include "newir/program.h"

namespace irm::newir::testing {

// Empty when `a` and `b` are the same program as far as the text form can say: the same ops in
// the same order (names, attributes, result types), the same regions and blocks, the same block
// and keyword arguments (types, attributes, keywords), and every operand reads the corresponding
// value. The two attributes Paddle never prints, op_callstack and sym_shape_str (printer.h), are
// left out of the comparison. Otherwise where and how they first differ.
class StructureDiff {
 public:
  std::string Programs(const Program& a, const Program& b) {
    return Blocks(a.block(), b.block(), "top block");
  }

 private:
  std::string Blocks(const Block& a, const Block& b, const std::string& where) {
    if (a.num_arguments() != b.num_arguments()) {
      return fmt::format("{}: {} vs {} arguments", where, a.num_arguments(), b.num_arguments());
    }
    for (size_t i = 0; i < a.num_arguments(); ++i) {
      if (std::string d = Value(*a.argument(i), *b.argument(i)); !d.empty()) {
        return fmt::format("{}: argument {}: {}", where, i, d);
      }
    }
    if (a.num_kwargs() != b.num_kwargs()) {
      return fmt::format("{}: {} vs {} keyword arguments", where, a.num_kwargs(), b.num_kwargs());
    }
    for (size_t i = 0; i < a.num_kwargs(); ++i) {
      if (a.kwarg(i)->kwarg_name() != b.kwarg(i)->kwarg_name()) {
        return fmt::format("{}: keyword argument {} is named differently", where, i);
      }
      if (std::string d = Value(*a.kwarg(i), *b.kwarg(i)); !d.empty()) {
        return fmt::format("{}: keyword argument {}: {}", where, i, d);
      }
    }
    if (a.size() != b.size()) return fmt::format("{}: {} vs {} ops", where, a.size(), b.size());
    auto ib = b.begin();
    size_t index = 0;
    for (const Operation& op : a) {
      if (std::string d = Ops(op, *ib, fmt::format("{} > op {} ({})", where, index, op.name()));
          !d.empty()) {
        return d;
      }
      ++ib;
      ++index;
    }
    return {};
  }

  static AttributeMap Printable(const AttributeMap& attrs) {
    AttributeMap out = attrs;
    out.erase("op_callstack");
    out.erase("sym_shape_str");
    return out;
  }

  std::string Value(const newir::Value& a, const newir::Value& b) {
    if (a.type() != b.type()) {
      return fmt::format("type {} vs {}", a.type().ToString(), b.type().ToString());
    }
    if (Printable(a.attributes()) != Printable(b.attributes())) return "different attributes";
    map_[&a] = &b;
    return {};
  }

  std::string Ops(const Operation& a, const Operation& b, const std::string& where) {
    if (a.name() != b.name()) return fmt::format("{}: named {}", where, b.name());
    if (Printable(a.attributes()) != Printable(b.attributes())) {
      return where + ": different attributes";
    }
    if (a.num_operands() != b.num_operands()) return where + ": different operand counts";
    for (size_t i = 0; i < a.num_operands(); ++i) {
      const newir::Value* va = a.operand(i);
      const newir::Value* vb = b.operand(i);
      if (va == nullptr || vb == nullptr) {
        if (va != vb) return fmt::format("{}: operand {} is empty in one of them", where, i);
        continue;
      }
      auto it = map_.find(va);
      if (it == map_.end() || it->second != vb) {
        return fmt::format("{}: operand {} reads a different value", where, i);
      }
    }
    if (a.num_results() != b.num_results()) return where + ": different result counts";
    for (size_t i = 0; i < a.num_results(); ++i) {
      if (std::string d = Value(*a.result(i), *b.result(i)); !d.empty()) {
        return fmt::format("{}: result {}: {}", where, i, d);
      }
    }
    if (a.num_regions() != b.num_regions()) return where + ": different region counts";
    for (size_t r = 0; r < a.num_regions(); ++r) {
      if (a.region(r).num_blocks() != b.region(r).num_blocks()) {
        return fmt::format("{}: region {} has {} vs {} blocks", where, r, a.region(r).num_blocks(),
                           b.region(r).num_blocks());
      }
      for (size_t k = 0; k < a.region(r).num_blocks(); ++k) {
        if (std::string d = Blocks(a.region(r).block(k), b.region(r).block(k),
                                   fmt::format("{} > region {} > block {}", where, r, k));
            !d.empty()) {
          return d;
        }
      }
    }
    return {};
  }

  std::unordered_map<const newir::Value*, const newir::Value*> map_;
};

inline std::string StructuralDifference(const Program& a, const Program& b) {
  return StructureDiff().Programs(a, b);
}

}  // namespace irm::newir::testing
