// The pass registry: registration checks, lookup, the global registry of built-in passes and the
// `--list-passes` text.
#include "newir/pass_registry.h"

#include <fmt/format.h>

#include <limits>
#include <set>

#include "common/builtin_registry.h"
#include "newir/auto_parallel/passes.h"
#include "newir/transforms/passes.h"

namespace irm::newir {
namespace {

Status BadRegistration(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
}

bool IsBounded(int64_t value, int64_t bound) { return value != bound; }

// ", at least 1", ", at most 8", ", from 1 to 8" or "" for an unbounded int option.
std::string RangeText(const PassOptionSpec& option) {
  if (option.kind() != PassOptionKind::kInt) return "";
  const bool has_min = IsBounded(option.min, std::numeric_limits<int64_t>::min());
  const bool has_max = IsBounded(option.max, std::numeric_limits<int64_t>::max());
  if (has_min && has_max) return fmt::format(", from {} to {}", option.min, option.max);
  if (has_min) return fmt::format(", at least {}", option.min);
  if (has_max) return fmt::format(", at most {}", option.max);
  return "";
}

// How --list-passes shows a default: strings quoted, so that an empty default is visible.
std::string DefaultText(const PassOptionSpec& option) {
  const std::string text = PassOptionValueToString(option.default_value);
  return option.kind() == PassOptionKind::kString ? fmt::format("\"{}\"", text) : text;
}

}  // namespace

bool IsKebabCase(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  char previous = '\0';
  for (char c : name) {
    const bool word_char = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!word_char && !(c == '-' && previous != '-')) return false;
    previous = c;
  }
  return true;
}

const PassOptionSpec* PassInfo::FindOption(std::string_view option_name) const {
  for (const PassOptionSpec& option : options) {
    if (option.name == option_name) return &option;
  }
  return nullptr;
}

PassOptions PassInfo::DefaultOptions() const {
  PassOptions values;
  for (const PassOptionSpec& option : options) values.Set(option.name, option.default_value);
  return values;
}

Status RegisterBuiltinPasses(PassRegistry& registry) {
  IRM_RETURN_IF_ERROR(RegisterCanonicalizePass(registry));
  IRM_RETURN_IF_ERROR(RegisterAutoParallelPasses(registry));
  return RegisterDcePass(registry);
}

const PassRegistry& PassRegistry::Global() {
  static const PassRegistry* const kRegistry =
      BuildBuiltinRegistry<PassRegistry>("pass registry", RegisterBuiltinPasses);
  return *kRegistry;
}

Status PassRegistry::Register(PassInfo info) {
  if (!IsKebabCase(info.name)) {
    return BadRegistration(fmt::format("pass name '{}' is not kebab-case", info.name));
  }
  if (passes_.contains(info.name)) {
    return BadRegistration(fmt::format("pass '{}' is registered twice", info.name));
  }
  if (info.summary.empty() || info.summary.find('\n') != std::string::npos) {
    return BadRegistration(fmt::format("pass '{}' needs a one-line summary", info.name));
  }
  if (!info.factory) return BadRegistration(fmt::format("pass '{}' has no factory", info.name));
  std::set<std::string_view> seen;
  for (const PassOptionSpec& option : info.options) {
    if (!IsKebabCase(option.name)) {
      return BadRegistration(
          fmt::format("option name '{}' of pass '{}' is not kebab-case", option.name, info.name));
    }
    if (!seen.insert(option.name).second) {
      return BadRegistration(
          fmt::format("option '{}' of pass '{}' is declared twice", option.name, info.name));
    }
    if (option.kind() == PassOptionKind::kInt) {
      const int64_t value = std::get<int64_t>(option.default_value);
      if (option.min > option.max || value < option.min || value > option.max) {
        return BadRegistration(
            fmt::format("option '{}' of pass '{}' has default {} outside its range [{}, {}]",
                        option.name, info.name, value, option.min, option.max));
      }
    }
  }
  std::string name = info.name;
  passes_.emplace(std::move(name), std::make_unique<PassInfo>(std::move(info)));
  return Status::Ok();
}

const PassInfo* PassRegistry::Lookup(std::string_view name) const {
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : it->second.get();
}

std::vector<const PassInfo*> PassRegistry::passes() const {
  std::vector<const PassInfo*> out;
  out.reserve(passes_.size());
  for (const auto& [name, info] : passes_) out.push_back(info.get());
  return out;
}

std::string PassRegistry::ListPasses() const {
  std::string out;
  for (const auto& [name, info] : passes_) {
    out += fmt::format("{}: {}\n", name, info->summary);
    for (const PassOptionSpec& option : info->options) {
      out += fmt::format("  {}=<{}> (default: {}{}): {}\n", option.name,
                         PassOptionKindName(option.kind()), DefaultText(option), RangeText(option),
                         option.help);
    }
  }
  return out;
}

}  // namespace irm::newir
