// What ir-deadcode looks for, configurable per code base (`--config cfg.json`, keys as the field
// names below; a key given replaces that field's default): the guard vocabulary that selects
// new-IR vs legacy code, the naming rules that pair a legacy unit with its twin, the registration
// families and the legacy / new-IR types that make overload twins.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace irm::deadcode {

// A guard: an expression that is true on the new-IR path.
struct GuardPattern {
  std::string name;  // the vocabulary entry reported as guard_name: "in_pir_mode"
  // How it appears:
  //   "call"      a call of a function with this last name: in_pir_mode(), framework.in_pir_mode()
  //   "name"      a bare identifier or the last component of a dotted name:
  //               FLAGS_enable_pir_in_executor, paddle.base.framework.FLAGS_x
  //   "attribute" an attribute of any object: self._in_pir_mode
  //   "flag"      a flag read by name: get_flags("FLAGS_enable_pir_api")["FLAGS_enable_pir_api"],
  //               get_flags(["FLAGS_enable_pir_api"])[...], FLAGS_x in C++ (a global or a
  //               GetFlag-style call with the name as its string argument)
  std::string kind;
  std::string text;  // what is matched: the function / identifier / attribute / flag name
};

// A rule pairing a legacy unit's name with its twin's, `{}` standing for the shared stem:
// {legacy "{}", twin "_pir_{}"} pairs `parse_program` with `_pir_parse_program`.
struct TwinRule {
  std::string legacy;
  std::string twin;
};

// A registration family: names registered by the legacy macro (or decorator) and by the new-IR
// one are twins. The registered name is the macro's first argument, the registered unit its second
// (when there is one).
struct RegistrationFamily {
  std::string registry;  // "pass"
  std::vector<std::string> legacy_macros;
  std::vector<std::string> new_macros;
};

struct DeadcodeConfig {
  std::vector<GuardPattern> python_guards;
  std::vector<GuardPattern> cpp_guards;
  std::vector<TwinRule> twin_rules;
  std::vector<RegistrationFamily> registrations;
  // Overload twins: same qualified name, one overload taking a legacy type, the other a new-IR
  // type. An entry matches a parameter type (cv, & and * stripped) whose trailing `::` components
  // are the entry: "ProgramDesc" matches "paddle::framework::ProgramDesc", "pir::Program" matches
  // "::pir::Program" but not "Program".
  std::vector<std::string> legacy_types;
  std::vector<std::string> new_types;
  // Names that mark a function as legacy code (case-insensitive substrings): such a function with
  // no twin is kept, and a legacy-only helper it calls is reported blocked by it.
  std::vector<std::string> legacy_markers;
  // Python decorators that register a class in a registry users reach by name only (Paddle's
  // @register_pass("x"), instantiated by new_pass("x")): a public method such a class adds to the
  // protocol it inherits is not API (see python_api.h). Matched by the called name's last part.
  std::vector<std::string> registry_decorators;
};

// The defaults: Paddle's vocabulary (in_pir_mode, use_pir_api, in_dynamic_or_pir_mode,
// FLAGS_enable_pir_api, FLAGS_enable_pir_in_executor, _in_pir_mode), the twin naming rules,
// REGISTER_PASS ↔ REGISTER_IR_PASS, ProgramDesc ↔ pir::Program, markers old_ir / legacy /
// deprecated, the registry decorator register_pass.
DeadcodeConfig DefaultConfig();

// Reads a configuration file over the defaults; errors name the file and the JSON pointer.
StatusOr<DeadcodeConfig> LoadConfig(const std::string& path);

}  // namespace irm::deadcode
