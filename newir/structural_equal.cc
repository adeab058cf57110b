// A lock-step walk over two programs with a value correspondence built as definitions are met
// (results, block arguments, keyword arguments); an operand matches when its value corresponds.
#include "newir/structural_equal.h"

#include <fmt/format.h>

#include <unordered_map>

#include "newir/block.h"
#include "newir/printer.h"

namespace irm::newir {
namespace {

class Comparer {
 public:
  explicit Comparer(const StructuralCompareOptions& options) : options_(options) {}

  std::optional<std::string> Blocks(const Block& a, const Block& b, const std::string& path) {
    if (a.num_arguments() != b.num_arguments()) {
      return Diff(path,
                  fmt::format("{} vs {} block arguments", a.num_arguments(), b.num_arguments()));
    }
    for (size_t i = 0; i < a.num_arguments(); ++i) {
      if (auto d = Definition(a.argument(i), b.argument(i), path, fmt::format("argument {}", i))) {
        return d;
      }
    }
    if (a.num_kwargs() != b.num_kwargs()) {
      return Diff(path, fmt::format("{} vs {} keyword arguments", a.num_kwargs(), b.num_kwargs()));
    }
    for (size_t i = 0; i < a.num_kwargs(); ++i) {
      const std::string what = fmt::format("keyword argument {}", i);
      if (a.kwarg(i)->kwarg_name() != b.kwarg(i)->kwarg_name()) {
        return Diff(path, fmt::format("{} is named '{}' vs '{}'", what, a.kwarg(i)->kwarg_name(),
                                      b.kwarg(i)->kwarg_name()));
      }
      if (auto d = Definition(a.kwarg(i), b.kwarg(i), path, what)) return d;
    }
    if (a.size() != b.size()) {
      return Diff(path, fmt::format("{} vs {} ops", a.size(), b.size()));
    }
    size_t index = 0;
    for (Operation *x = a.front(), *y = b.front(); x != nullptr;
         x = x->next(), y = y->next(), ++index) {
      if (auto d = Ops(*x, *y, Join(path, fmt::format("op {} ({})", index, x->name())))) return d;
    }
    return std::nullopt;
  }

 private:
  static std::string Join(const std::string& path, const std::string& step) {
    return path.empty() ? step : path + " > " + step;
  }
  static std::string Diff(const std::string& path, const std::string& what) {
    return path.empty() ? what : path + ": " + what;
  }

  // Records that `x` and `y` are the same value, after checking their types and attributes.
  std::optional<std::string> Definition(const Value* x, const Value* y, const std::string& path,
                                        const std::string& what) {
    if (x->type() != y->type()) {
      return Diff(path, fmt::format("{} has type {} vs {}", what, x->type().ToString(),
                                    y->type().ToString()));
    }
    if (auto d = Attributes(x->attributes(), y->attributes(), path, what + " attribute")) return d;
    twin_[x] = y;
    return std::nullopt;
  }

  std::optional<std::string> Attributes(const AttributeMap& a, const AttributeMap& b,
                                        const std::string& path, const std::string& what) const {
    const bool skip_hidden = options_.ignore_hidden_attributes;
    auto x = a.begin();
    auto y = b.begin();
    auto skip = [&](auto& it, const AttributeMap& m) {
      while (skip_hidden && it != m.end() && IsHiddenAttribute(it->first)) ++it;
    };
    for (skip(x, a), skip(y, b); x != a.end() && y != b.end(); ++x, ++y, skip(x, a), skip(y, b)) {
      if (x->first != y->first) {
        return Diff(path, fmt::format("{} '{}' vs '{}'", what, x->first, y->first));
      }
      if (x->second != y->second) {
        return Diff(path, fmt::format("{} '{}' is {} vs {}", what, x->first, x->second.ToString(),
                                      y->second.ToString()));
      }
    }
    if (x != a.end()) return Diff(path, fmt::format("{} '{}' only in the first", what, x->first));
    if (y != b.end()) return Diff(path, fmt::format("{} '{}' only in the second", what, y->first));
    return std::nullopt;
  }

  std::optional<std::string> Ops(const Operation& x, const Operation& y, const std::string& path) {
    if (x.name() != y.name())
      return Diff(path, fmt::format("op is '{}' vs '{}'", x.name(), y.name()));
    if (x.num_operands() != y.num_operands()) {
      return Diff(path, fmt::format("{} vs {} operands", x.num_operands(), y.num_operands()));
    }
    for (size_t i = 0; i < x.num_operands(); ++i) {
      const Value* vx = x.operand(i);
      const Value* vy = y.operand(i);
      if (vx == nullptr || vy == nullptr) {
        if (vx != vy) return Diff(path, fmt::format("operand {} is empty in only one", i));
        continue;
      }
      auto it = twin_.find(vx);
      if (it == twin_.end() || it->second != vy) {
        return Diff(path, fmt::format("operand {} reads a different value", i));
      }
    }
    if (auto d = Attributes(x.attributes(), y.attributes(), path, "attribute")) return d;
    if (x.num_results() != y.num_results()) {
      return Diff(path, fmt::format("{} vs {} results", x.num_results(), y.num_results()));
    }
    for (size_t i = 0; i < x.num_results(); ++i) {
      if (auto d = Definition(x.result(i), y.result(i), path, fmt::format("result {}", i))) {
        return d;
      }
    }
    if (x.num_regions() != y.num_regions()) {
      return Diff(path, fmt::format("{} vs {} regions", x.num_regions(), y.num_regions()));
    }
    for (size_t r = 0; r < x.num_regions(); ++r) {
      const Region& rx = x.region(r);
      const Region& ry = y.region(r);
      const std::string region_path = Join(path, fmt::format("region {}", r));
      if (rx.num_blocks() != ry.num_blocks()) {
        return Diff(region_path, fmt::format("{} vs {} blocks", rx.num_blocks(), ry.num_blocks()));
      }
      for (size_t b = 0; b < rx.num_blocks(); ++b) {
        if (auto d =
                Blocks(rx.block(b), ry.block(b), Join(region_path, fmt::format("block {}", b)))) {
          return d;
        }
      }
    }
    return std::nullopt;
  }

  StructuralCompareOptions options_;
  std::unordered_map<const Value*, const Value*> twin_;
};

}  // namespace

std::optional<std::string> FindStructuralDifference(const Program& a, const Program& b,
                                                    const StructuralCompareOptions& options) {
  return Comparer(options).Blocks(a.block(), b.block(), "");
}

}  // namespace irm::newir
