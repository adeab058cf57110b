#include "tools/deadcode/config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/file_io.h"

namespace irm::deadcode {
namespace {

std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  EXPECT_TRUE(WriteFileAtomically(path, text).ok());
  return path;
}

TEST(DeadcodeConfigTest, DefaultsHoldPaddlesVocabularyAndTheIssuesTwinRules) {
  const DeadcodeConfig config = DefaultConfig();
  std::vector<std::string> python;
  for (const GuardPattern& guard : config.python_guards) python.push_back(guard.name);
  EXPECT_EQ(python, (std::vector<std::string>{"in_pir_mode", "use_pir_api",
                                              "in_dynamic_or_pir_mode", "FLAGS_enable_pir_api",
                                              "FLAGS_enable_pir_in_executor", "_in_pir_mode"}));
  ASSERT_EQ(config.twin_rules.size(), 8u);
  EXPECT_EQ(config.twin_rules[0].twin, "_pir_{}");
  EXPECT_EQ(config.twin_rules[2].legacy, "{}_in_old_ir");
  ASSERT_EQ(config.registrations.size(), 1u);
  EXPECT_EQ(config.registrations[0].legacy_macros, std::vector<std::string>{"REGISTER_PASS"});
  EXPECT_EQ(config.registrations[0].new_macros, std::vector<std::string>{"REGISTER_IR_PASS"});
  EXPECT_EQ(config.registry_decorators, std::vector<std::string>{"register_pass"});
}

TEST(DeadcodeConfigTest, AGivenKeyReplacesItsDefaultAndTheOthersStay) {
  const std::string path =
      WriteConfig("irm_deadcode_config_ok.json",
                  R"({"python_guards": [{"name": "new_ir", "kind": "call", "text": "use_new_ir"}],
          "twin_rules": [{"legacy": "{}_old", "twin": "{}_new"}],
          "registry_decorators": ["register_op", "register"]})");
  StatusOr<DeadcodeConfig> config = LoadConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->python_guards.size(), 1u);
  EXPECT_EQ(config->python_guards[0].text, "use_new_ir");
  ASSERT_EQ(config->twin_rules.size(), 1u);
  EXPECT_EQ(config->twin_rules[0].twin, "{}_new");
  EXPECT_EQ(config->cpp_guards.size(), DefaultConfig().cpp_guards.size());
  EXPECT_EQ(config->registry_decorators, (std::vector<std::string>{"register_op", "register"}));
}

TEST(DeadcodeConfigTest, ErrorsNameTheFileAndTheJsonPointer) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"[", "config: not valid JSON"},
      {R"({"guards": []})", "config /guards: unknown key"},
      {R"({"python_guards": [{"name": "a", "kind": "regex", "text": "b"}]})",
       "config /python_guards/0/kind: 'regex' is not a guard kind (call, name, attribute, flag)"},
      {R"({"python_guards": [{"name": "a", "kind": "call"}]})",
       "config /python_guards/0/text: expected a string member"},
      {R"({"twin_rules": [{"legacy": "{}", "twin": "pir"}]})",
       "config /twin_rules/0: a rule's two sides differ and both hold '{}' once, or neither holds "
       "it"},
      {R"({"legacy_types": ["ProgramDesc", 3]})", "config /legacy_types/1: expected a string"},
      {R"({"registry_decorators": "register_pass"})",
       "config /registry_decorators: expected an array of strings"},
      {R"({"registrations": [{"registry": "pass"}]})",
       R"(config /registrations/0: expected {"registry", "legacy_macros", "new_macros"})"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = WriteConfig("irm_deadcode_config_bad.json", cases[i].text);
    StatusOr<DeadcodeConfig> config = LoadConfig(path);
    ASSERT_FALSE(config.ok()) << cases[i].text;
    EXPECT_EQ(config.status().ToString(), path + ": error: " + cases[i].message) << cases[i].text;
  }
  EXPECT_FALSE(LoadConfig("/nonexistent/irm_deadcode.json").ok());
}

}  // namespace
}  // namespace irm::deadcode
