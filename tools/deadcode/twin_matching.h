// Pairing legacy units with their new-IR twins: by the configured naming rules within one scope
// (module or class, never across unrelated classes that share a name), by overloads taking the
// legacy vs the new-IR type, and by registrations of one name through a family's legacy and
// new-IR macros. Guarded branches carry their twin already (the guarded new-IR branch).
#pragma once

#include <string>
#include <vector>

#include "tools/deadcode/code_index.h"
#include "tools/deadcode/config.h"

namespace irm::deadcode {

struct FunctionTwin {
  const FunctionUnit* legacy = nullptr;
  const FunctionUnit* twin = nullptr;
  std::string rule;  // "_pir_{}" (the rule's twin side), or "overload"
};

struct RegistrationTwin {
  const Registration* legacy = nullptr;
  const Registration* twin = nullptr;
};

// The legacy name a rule pairs with `twin_name`, or "" when the rule does not apply.
std::string LegacyNameFor(const TwinRule& rule, const std::string& twin_name);

// Named twins: for every function whose name a rule's twin side matches, the function of the
// rule's legacy name in the same scope. A legacy unit keeps its first match in rule order.
std::vector<FunctionTwin> MatchNamedTwins(const CodeIndex& index, const DeadcodeConfig& config);

// Overload twins (C++): same qualified name, the legacy one taking a legacy type and no new type,
// the twin taking a new type.
std::vector<FunctionTwin> MatchOverloadTwins(const CodeIndex& index, const DeadcodeConfig& config);

// Whether a parameter type names one of `types` (see DeadcodeConfig::legacy_types).
bool TypeMatches(const std::string& parameter_type, const std::vector<std::string>& types);

std::vector<RegistrationTwin> MatchRegistrationTwins(const std::vector<FileModel>& files);

}  // namespace irm::deadcode
