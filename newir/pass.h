// The Pass interface of the new IR: a named transformation of a whole Program that reports
// failure as a Status and says whether it changed the IR (the pass manager prints, dumps and
// verifies around it on that answer), and the typed options (bool, int, string) a pass is built
// with. Passes are registered by name in pass_registry.h, listed in textual pipelines
// (pass_pipeline.h) and run by the PassManager (pass_manager.h).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"
#include "newir/program.h"

namespace irm::newir {

// What a successful pass run did to the IR.
enum class IrChange { kUnchanged, kChanged };

class Pass {
 public:
  virtual ~Pass() = default;

  // The kebab-case name the pass is registered under ("dce"); it names the pass in IR dumps,
  // dump-dir files, verifier failures and the timing report.
  virtual std::string_view name() const = 0;

  // Transforms `program` in place. On failure the program may be partly transformed; the pass
  // manager stops there.
  virtual StatusOr<IrChange> Run(Program& program) = 0;
};

// An option value; the alternative is the option's kind.
using PassOptionValue = std::variant<bool, int64_t, std::string>;
enum class PassOptionKind { kBool, kInt, kString };  // the order of PassOptionValue's alternatives

inline PassOptionKind KindOf(const PassOptionValue& value) {
  return static_cast<PassOptionKind>(value.index());
}
// "bool", "int", "string": how --list-passes and diagnostics spell a kind.
inline const char* PassOptionKindName(PassOptionKind kind) {
  switch (kind) {
    case PassOptionKind::kBool:
      return "bool";
    case PassOptionKind::kInt:
      return "int";
    case PassOptionKind::kString:
      return "string";
  }
  return "?";
}
// `true`, `10`, `abc`: the value as a pipeline spells it.
inline std::string PassOptionValueToString(const PassOptionValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

// One option a pass declares: a kebab-case name, a default whose kind is the option's kind, a
// one-line help text and, for int options, the accepted range.
struct PassOptionSpec {
  std::string name = {};
  PassOptionValue default_value = false;
  std::string help = {};
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();

  PassOptionKind kind() const { return KindOf(default_value); }
};

// The option values a pass is built with. The registry fills in every declared option (its
// default unless the pipeline set it), so a pass reading an option it declared always finds it;
// the getters answer false, 0 or "" for a name that is absent or of another kind.
class PassOptions {
 public:
  void Set(std::string name, PassOptionValue value) { values_[std::move(name)] = std::move(value); }
  // Null when no value is set under `name`.
  const PassOptionValue* Find(std::string_view name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  bool GetBool(std::string_view name) const { return Get<bool>(name, false); }
  int64_t GetInt(std::string_view name) const { return Get<int64_t>(name, 0); }
  std::string GetString(std::string_view name) const { return Get<std::string>(name, ""); }
  const std::map<std::string, PassOptionValue, std::less<>>& values() const { return values_; }

 private:
  template <typename T>
  T Get(std::string_view name, T fallback) const {
    const PassOptionValue* value = Find(name);
    const T* typed = value == nullptr ? nullptr : std::get_if<T>(value);
    return typed == nullptr ? fallback : *typed;
  }

  std::map<std::string, PassOptionValue, std::less<>> values_;
};

}  // namespace irm::newir
