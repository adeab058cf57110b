// Tests of the C++ front end on the fixture tree in testdata/cpp_frontend/, through a compile
// database written at run time (absolute paths from IRM_SOURCE_DIR). Positions, USRs and
// qualified names below are derived by hand from the fixture sources.
#include "tools/deadcode/cpp_frontend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/file_io.h"

namespace irm::deadcode {
namespace {

std::string FixtureDir() {
  const char* source = std::getenv("IRM_SOURCE_DIR");
  // Absolute, as a compile database's "directory" is meant to be: with a relative one, a missing
  // source (gone.cc below) resolves outside the absolute root and is skipped, not reported.
  return std::filesystem::absolute(std::string(source == nullptr ? "." : source) +
                                   "/tools/deadcode/testdata/cpp_frontend")
      .lexically_normal()
      .string();
}

std::string TempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("irm_cpp_frontend_" + std::to_string(getpid()) + "_" + name);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A compile database for the fixture TUs; b.cc's entry uses the "command" form, the others
// "arguments", both with g++'s -Werror.
std::string WriteDatabase(const std::string& name, const std::vector<std::string>& sources) {
  const std::string dir = TempDir(name);
  nlohmann::json entries = nlohmann::json::array();
  for (const std::string& source : sources) {
    const std::string object = dir + "/" + source + ".o";
    nlohmann::json entry = {{"directory", FixtureDir()}, {"file", source}};
    if (source == "b.cc") {
      entry["command"] = "/usr/bin/c++ -std=c++20 -Wall -Werror -O2 -c " + source + " -o " + object;
    } else {
      entry["arguments"] = {"/usr/bin/c++", "-std=c++20", "-Wall", "-Wextra", "-Werror",
                            "-c",           source,       "-o",    object};
    }
    entries.push_back(entry);
  }
  const std::string path = dir + "/compile_commands.json";
  EXPECT_TRUE(WriteFileAtomically(path, entries.dump(2)).ok());
  return path;
}

DeadcodeConfig TestConfig() {
  DeadcodeConfig config = DefaultConfig();
  config.cpp_guards.push_back({"use_pir_api", "call", "UsePirApi"});
  config.cpp_guards.push_back({"in_pir_mode_", "attribute", "in_pir_mode_"});
  config.cpp_guards.push_back({"pir_mode", "name", "kPirMode"});
  return config;
}

// Everything the front end returned, one line per record: how two runs are compared.
std::string Dump(const CppAnalysis& analysis) {
  std::ostringstream out;
  auto range = [&](const SourceRange& r) {
    out << r.start_line << ":" << r.start_column << "-" << r.end_line << ":" << r.end_column;
  };
  for (const FileModel& model : analysis.files) {
    out << "file " << model.file << "\n";
    for (const FunctionUnit& f : model.functions) {
      out << " function " << f.key << " " << f.qualname << " " << f.name << " " << f.scope << " "
          << f.class_name << " " << f.file << " ";
      range(f.range);
      for (const std::string& type : f.parameter_types) out << " [" << type << "]";
      out << " " << f.is_virtual << f.overrides << f.from_template << f.from_macro << f.is_main
          << "\n";
    }
    for (const ClassUnit& c : model.classes) {
      out << " class " << c.key << " " << c.qualname << " ";
      range(c.range);
      for (const std::string& base : c.bases) out << " [" << base << "]";
      out << "\n";
    }
    for (const GuardedBranch& b : model.branches) {
      out << " branch " << b.enclosing << " '" << b.guard_text << "' " << b.guard_name << " "
          << b.guard_line << " " << b.negated << " " << b.legacy_kind << " " << b.shape << " ";
      range(b.legacy);
      if (b.twin) {
        out << " twin ";
        range(*b.twin);
      }
      out << " " << b.legacy_only_raises << "\n";
    }
    for (const Reference& r : model.references) {
      out << " ref " << r.from << " -> " << r.target << " " << r.line << ":" << r.column;
      for (int index : r.legacy_branches) out << " #" << index;
      out << "\n";
    }
    for (const Registration& r : model.registrations) {
      out << " registration " << r.registry << " " << r.key << " " << r.legacy << " " << r.macro
          << " " << r.file << " ";
      range(r.range);
      out << " " << r.target << "\n";
    }
  }
  for (const FileProblem& p : analysis.problems) {
    out << "problem " << p.file << ":" << p.line << ":" << p.column << " " << p.message << "\n";
  }
  return out.str();
}

class CppFrontendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string database = WriteDatabase("all", {"a.cc", "b.cc", "broken.cc"});
    StatusOr<CppAnalysis> result =
        AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 1, {});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    analysis_ = new CppAnalysis(std::move(*result));
  }
  static void TearDownTestSuite() {
    delete analysis_;
    analysis_ = nullptr;
  }

  static CppAnalysis* analysis_;
};
CppAnalysis* CppFrontendTest::analysis_ = nullptr;

const FileModel* FindFile(const CppAnalysis& analysis, const std::string& file) {
  for (const FileModel& model : analysis.files) {
    if (model.file == file) return &model;
  }
  return nullptr;
}

std::vector<const FunctionUnit*> FindFunctions(const CppAnalysis& analysis,
                                               const std::string& qualname) {
  std::vector<const FunctionUnit*> found;
  for (const FileModel& model : analysis.files) {
    for (const FunctionUnit& unit : model.functions) {
      if (unit.qualname == qualname) found.push_back(&unit);
    }
  }
  return found;
}

const Reference* FindReference(const FileModel& model, int line, int column) {
  for (const Reference& reference : model.references) {
    if (reference.line == line && reference.column == column) return &reference;
  }
  return nullptr;
}

SourceRange Range(int start_line, int start_column, int end_line, int end_column) {
  return SourceRange{start_line, start_column, end_line, end_column};
}

constexpr char kNs[] = "c:@N@paddle@N@framework@";

TEST_F(CppFrontendTest, OverloadsHaveDistinctUsrsAndFullyQualifiedParameterTypes) {
  const std::vector<const FunctionUnit*> runs = FindFunctions(*analysis_, "paddle::framework::Run");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]->key, std::string(kNs) + "F@Run#&1$@N@paddle@N@framework@S@ProgramDesc#");
  EXPECT_EQ(runs[0]->parameter_types,
            std::vector<std::string>{"const paddle::framework::ProgramDesc &"});
  EXPECT_EQ(runs[0]->range, Range(7, 1, 7, 56));
  EXPECT_EQ(runs[1]->key, std::string(kNs) + "F@Run#&1$@N@pir@S@Program#");
  EXPECT_EQ(runs[1]->parameter_types, std::vector<std::string>{"const pir::Program &"});
  for (const FunctionUnit* run : runs) {
    EXPECT_EQ(run->name, "Run");
    EXPECT_EQ(run->scope, "paddle::framework");
    EXPECT_EQ(run->class_name, "");
    EXPECT_EQ(run->file, "a.cc");
    EXPECT_FALSE(run->is_virtual || run->overrides || run->from_template || run->from_macro ||
                 run->is_main);
  }
}

TEST_F(CppFrontendTest, OverridesAreVirtualAndCallsThroughTheBaseNameTheBaseMethod) {
  const std::vector<const FunctionUnit*> apply =
      FindFunctions(*analysis_, "paddle::framework::FusePass::Apply");
  ASSERT_EQ(apply.size(), 1u);
  EXPECT_EQ(apply[0]->key, std::string(kNs) + "S@FusePass@F@Apply#");
  EXPECT_EQ(apply[0]->class_name, "paddle::framework::FusePass");
  EXPECT_EQ(apply[0]->scope, "paddle::framework::FusePass");
  EXPECT_TRUE(apply[0]->is_virtual);
  EXPECT_TRUE(apply[0]->overrides);
  // The pure virtual Pass::Apply has no definition: no unit, but `pass.Apply()` names it.
  EXPECT_TRUE(FindFunctions(*analysis_, "paddle::framework::Pass::Apply").empty());
  const Reference* call = FindReference(*FindFile(*analysis_, "a.cc"), 22, 34);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->from, std::string(kNs) + "F@ApplyAll#&$@N@paddle@N@framework@S@Pass#");
  EXPECT_EQ(call->target, std::string(kNs) + "S@Pass@F@Apply#");
}

TEST_F(CppFrontendTest, ATemplateIsOneUnitAndItsInstantiationsReferenceIt) {
  const std::vector<const FunctionUnit*> twice =
      FindFunctions(*analysis_, "paddle::framework::Twice");
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_TRUE(twice[0]->from_template);
  EXPECT_EQ(twice[0]->file, "ir.h");
  EXPECT_EQ(twice[0]->range, Range(62, 1, 65, 2));  // the template header included
  const FileModel& a = *FindFile(*analysis_, "a.cc");
  for (int column : {29, 57}) {  // Twice(1), Twice(2.0)
    const Reference* use = FindReference(a, 26, column);
    ASSERT_NE(use, nullptr) << column;
    EXPECT_EQ(use->target, twice[0]->key);
  }
}

TEST_F(CppFrontendTest, AClassTemplatesMembersAreOneUnitEachUsedFromBothUnits) {
  const std::vector<const FunctionUnit*> get =
      FindFunctions(*analysis_, "paddle::framework::Holder::Get");
  ASSERT_EQ(get.size(), 1u);
  EXPECT_EQ(get[0]->key, std::string(kNs) + "ST>1#T@Holder@F@Get#1");
  EXPECT_EQ(get[0]->class_name, "paddle::framework::Holder");
  EXPECT_TRUE(get[0]->from_template);
  EXPECT_EQ(get[0]->file, "ir.h");
  const Reference* from_a = FindReference(*FindFile(*analysis_, "a.cc"), 33, 85);  // Holder<int>
  const Reference* from_b = FindReference(*FindFile(*analysis_, "b.cc"), 86, 42);  // Holder<long>
  ASSERT_NE(from_a, nullptr);
  ASSERT_NE(from_b, nullptr);
  EXPECT_EQ(from_a->target, get[0]->key);
  EXPECT_EQ(from_b->target, get[0]->key);
  EXPECT_EQ(from_b->from, std::string(kNs) + "F@UseHolder#");
}

TEST_F(CppFrontendTest, MacroWrittenFunctionsAreFlagged) {
  const std::vector<const FunctionUnit*> kernel =
      FindFunctions(*analysis_, "paddle::framework::relu_kernel");
  ASSERT_EQ(kernel.size(), 1u);
  EXPECT_TRUE(kernel[0]->from_macro);
  EXPECT_EQ(kernel[0]->range, Range(24, 1, 24, 20));  // DEFINE_KERNEL(relu)
  const std::vector<const FunctionUnit*> main = FindFunctions(*analysis_, "main");
  ASSERT_EQ(main.size(), 1u);
  EXPECT_TRUE(main[0]->is_main);
  EXPECT_FALSE(main[0]->from_macro);
}

TEST_F(CppFrontendTest, ReferencesCrossTranslationUnits) {
  // Helper is defined in a.cc and called in b.cc and by main in a.cc.
  const std::vector<const FunctionUnit*> helper =
      FindFunctions(*analysis_, "paddle::framework::Helper");
  ASSERT_EQ(helper.size(), 1u);
  EXPECT_EQ(helper[0]->key, std::string(kNs) + "F@Helper#I#");
  EXPECT_EQ(helper[0]->file, "a.cc");
  const Reference* from_b = FindReference(*FindFile(*analysis_, "b.cc"), 27, 10);
  ASSERT_NE(from_b, nullptr);
  EXPECT_EQ(from_b->target, helper[0]->key);
  EXPECT_EQ(from_b->from, std::string(kNs) + "F@EarlyReturn#");
  const Reference* from_main = FindReference(*FindFile(*analysis_, "a.cc"), 33, 40);
  ASSERT_NE(from_main, nullptr);
  EXPECT_EQ(from_main->target, helper[0]->key);
  EXPECT_EQ(from_main->from, "c:@F@main#");
}

TEST_F(CppFrontendTest, AHeaderFunctionIncludedByTwoUnitsAppearsOnce) {
  const std::vector<const FunctionUnit*> shared =
      FindFunctions(*analysis_, "paddle::framework::SharedHelper");
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0]->file, "ir.h");
  EXPECT_EQ(shared[0]->key, std::string(kNs) + "F@SharedHelper#");
  // Its callers in both TUs.
  const Reference* from_a = FindReference(*FindFile(*analysis_, "a.cc"), 10, 32);
  const Reference* from_b = FindReference(*FindFile(*analysis_, "b.cc"), 21, 15);
  ASSERT_NE(from_a, nullptr);
  ASSERT_NE(from_b, nullptr);
  EXPECT_EQ(from_a->target, shared[0]->key);
  EXPECT_EQ(from_b->target, shared[0]->key);
}

TEST_F(CppFrontendTest, OnlyFilesUnderTheRootAreReported) {
  std::vector<std::string> files;
  for (const FileModel& model : analysis_->files) files.push_back(model.file);
  EXPECT_EQ(files, (std::vector<std::string>{"a.cc", "b.cc", "ir.h"}));
  const FileModel& header = *FindFile(*analysis_, "ir.h");
  std::vector<std::string> classes;
  for (const ClassUnit& unit : header.classes) classes.push_back(unit.qualname);
  EXPECT_EQ(classes,
            (std::vector<std::string>{"paddle::framework::ProgramDesc", "pir::Program",
                                      "paddle::framework::Pass", "paddle::framework::Options",
                                      "paddle::framework::Holder"}));
  const FileModel& a = *FindFile(*analysis_, "a.cc");
  ASSERT_EQ(a.classes.size(), 2u);
  EXPECT_EQ(a.classes[0].key, std::string(kNs) + "S@FusePass");
  EXPECT_EQ(a.classes[0].bases, std::vector<std::string>{"paddle::framework::Pass"});
  EXPECT_EQ(a.classes[0].range, Range(12, 1, 15, 2));
  // GetFlag takes a std::string: referenced (declared under the root), but no std:: unit.
  for (const FileModel& model : analysis_->files) {
    for (const FunctionUnit& unit : model.functions) {
      EXPECT_EQ(unit.qualname.rfind("std::", 0), std::string::npos) << unit.qualname;
    }
  }
}

struct ExpectedBranch {
  std::string enclosing;
  std::string guard_text;
  std::string guard_name;
  int guard_line;
  bool negated;
  std::string legacy_kind;
  std::string shape;
  SourceRange legacy;
  std::optional<SourceRange> twin;
  bool legacy_only_raises;
};

TEST_F(CppFrontendTest, EveryGuardShapeAndNoBranchForTheNegativeControls) {
  const std::string ns = kNs;
  const std::vector<ExpectedBranch> expected = {
      {ns + "F@IfElse#", "FLAGS_enable_pir_api", "FLAGS_enable_pir_api", 7, false, "else-branch",
       "if-else", Range(9, 10, 11, 4), Range(7, 29, 9, 4), false},
      {ns + "F@Negated#", "!(paddle::FLAGS_enable_pir_in_executor)", "FLAGS_enable_pir_in_executor",
       15, true, "if-body", "negated", Range(15, 48, 17, 4), std::nullopt, false},
      {ns + "F@EarlyReturn#", "GetFlag(\"FLAGS_enable_pir_api\")", "FLAGS_enable_pir_api", 22,
       false, "tail-after-early-return", "early-return", Range(26, 3, 27, 23), Range(22, 40, 25, 4),
       false},
      {ns + "F@GuardVariable#", "!use_pir", "FLAGS_enable_pir_api", 32, true, "if-body",
       "guard-variable", Range(32, 17, 34, 4), Range(34, 10, 36, 4), false},
      {ns + "F@Ternary#", "FLAGS_enable_pir_api", "FLAGS_enable_pir_api", 39, false, "else-branch",
       "ternary", Range(39, 60, 39, 70), Range(39, 47, 39, 57), false},
      {ns + "F@ElseOnlyThrows#", "FLAGS_enable_pir_api", "FLAGS_enable_pir_api", 42, false,
       "else-branch", "if-else", Range(44, 10, 46, 4), Range(42, 29, 44, 4), true},
      {ns + "F@Elif#I#", "UsePirApi()", "use_pir_api", 52, false, "else-branch", "elif",
       Range(54, 10, 56, 4), Range(52, 27, 54, 4), false},
      {ns + "F@Attribute#&1$@N@paddle@N@framework@S@Options#", "options.in_pir_mode_",
       "in_pir_mode_", 60, false, "else-branch", "if-else", Range(62, 10, 64, 4),
       Range(60, 29, 62, 4), false},
      {ns + "F@NameGuard#", "kPirMode", "pir_mode", 91, false, "else-branch", "if-else",
       Range(93, 10, 95, 4), Range(91, 17, 93, 4), false},
      {ns + "F@EarlyReturnThenThrow#", "use_pir", "use_pir_api", 100, false,
       "tail-after-early-return", "guard-variable", Range(103, 3, 103, 49), Range(100, 16, 102, 4),
       true},
  };
  const FileModel& b = *FindFile(*analysis_, "b.cc");
  ASSERT_EQ(b.branches.size(), expected.size());  // NoElse, NotOnlyAGuard, InMacro: none
  for (size_t i = 0; i < expected.size(); ++i) {
    const GuardedBranch& got = b.branches[i];
    const ExpectedBranch& want = expected[i];
    SCOPED_TRACE(want.enclosing);
    EXPECT_EQ(got.file, "b.cc");
    EXPECT_EQ(got.enclosing, want.enclosing);
    EXPECT_EQ(got.guard_text, want.guard_text);
    EXPECT_EQ(got.guard_name, want.guard_name);
    EXPECT_EQ(got.guard_line, want.guard_line);
    EXPECT_EQ(got.negated, want.negated);
    EXPECT_EQ(got.legacy_kind, want.legacy_kind);
    EXPECT_EQ(got.shape, want.shape);
    EXPECT_EQ(got.legacy, want.legacy);
    EXPECT_EQ(got.twin, want.twin);
    EXPECT_EQ(got.legacy_only_raises, want.legacy_only_raises);
  }
}

TEST_F(CppFrontendTest, ReferencesKnowTheLegacyBranchesThatHoldThem) {
  const FileModel& b = *FindFile(*analysis_, "b.cc");
  struct Expected {
    int line, column;
    std::vector<int> branches;
  };
  // OldPath in each legacy part, NewPath in the twins, Helper in the legacy tail; the negative
  // controls' OldPath calls (lines 73, 80, 84) are in no branch.
  const std::vector<Expected> expected = {{10, 5, {0}},  {8, 5, {}},   {16, 5, {1}}, {26, 3, {2}},
                                          {27, 10, {2}}, {23, 5, {}},  {33, 5, {3}}, {35, 5, {}},
                                          {39, 60, {4}}, {39, 47, {}}, {55, 5, {6}}, {63, 5, {7}},
                                          {73, 3, {}},   {80, 5, {}}};
  for (const Expected& want : expected) {
    const Reference* reference = FindReference(b, want.line, want.column);
    ASSERT_NE(reference, nullptr) << want.line << ":" << want.column;
    EXPECT_EQ(reference->legacy_branches, want.branches) << want.line << ":" << want.column;
  }
}

TEST_F(CppFrontendTest, RegistrationsOfBothKindsWithTheirTargets) {
  const FileModel& a = *FindFile(*analysis_, "a.cc");
  ASSERT_EQ(a.registrations.size(), 2u);
  const Registration& legacy = a.registrations[0];
  EXPECT_EQ(legacy.registry, "pass");
  EXPECT_EQ(legacy.key, "fuse_gemm");
  EXPECT_TRUE(legacy.legacy);
  EXPECT_EQ(legacy.macro, "REGISTER_PASS");
  EXPECT_EQ(legacy.file, "a.cc");
  EXPECT_EQ(legacy.range, Range(30, 1, 30, 54));
  EXPECT_EQ(legacy.target, std::string(kNs) + "S@FusePass");
  const Registration& ir = a.registrations[1];
  EXPECT_EQ(ir.key, "fuse_gemm");  // written as a string
  EXPECT_FALSE(ir.legacy);
  EXPECT_EQ(ir.macro, "REGISTER_IR_PASS");
  EXPECT_EQ(ir.range, Range(31, 1, 31, 61));
  EXPECT_EQ(ir.target, std::string(kNs) + "S@FuseIrPass");
  // The registrar's call runs at static initialisation: a reference from no function.
  const Reference* registrar = FindReference(a, 30, 1);
  ASSERT_NE(registrar, nullptr);
  EXPECT_EQ(registrar->from, "");
}

TEST_F(CppFrontendTest, AUnitThatDoesNotCompileIsAProblemAndTheOthersAreAnalysed) {
  ASSERT_EQ(analysis_->problems.size(), 1u);
  const FileProblem& problem = analysis_->problems[0];
  EXPECT_EQ(problem.file, "broken.cc");
  EXPECT_EQ(problem.line, 4);
  EXPECT_EQ(problem.column, 23);
  EXPECT_EQ(problem.message, "use of undeclared identifier 'undefined_function'");
  ASSERT_EQ(analysis_->units.size(), 3u);
  EXPECT_EQ(analysis_->units[0].file, "a.cc");
  EXPECT_TRUE(analysis_->units[0].ok);
  EXPECT_EQ(analysis_->units[1].file, "b.cc");
  EXPECT_TRUE(analysis_->units[1].ok);
  EXPECT_EQ(analysis_->units[2].file, "broken.cc");
  EXPECT_FALSE(analysis_->units[2].ok);
  for (const TranslationUnitTiming& unit : analysis_->units) EXPECT_GT(unit.seconds, 0);
  EXPECT_EQ(FindFile(*analysis_, "broken.cc"), nullptr);
}

TEST(CppFrontendRunTest, TheResultIsTheSameWithOneAndTwoThreadsAndProgressCountsEveryUnit) {
  const std::string database = WriteDatabase("threads", {"b.cc", "a.cc", "broken.cc"});
  StatusOr<CppAnalysis> one = AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 1);
  std::vector<int> done;
  StatusOr<CppAnalysis> two = AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 2,
                                                     [&](int count, int total, const std::string&) {
                                                       EXPECT_EQ(total, 3);
                                                       done.push_back(count);
                                                     });
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(Dump(*one), Dump(*two));
  EXPECT_NE(Dump(*one).find("branch"), std::string::npos);
  EXPECT_EQ(done, (std::vector<int>{1, 2, 3}));
}

TEST(CppFrontendRunTest, GlobsSelectTheUnits) {
  const std::string database = WriteDatabase("globs", {"a.cc", "b.cc", "broken.cc"});
  StatusOr<CppAnalysis> result =
      AnalyzeCompileCommands(database, {"a.*", "nothing/*"}, FixtureDir(), TestConfig(), 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->units.size(), 1u);
  EXPECT_EQ(result->units[0].file, "a.cc");
  EXPECT_TRUE(result->problems.empty());
  ASSERT_EQ(result->files.size(), 2u);  // a.cc and the ir.h it includes
  EXPECT_EQ(result->files[1].file, "ir.h");
}

TEST(CppFrontendRunTest, UnitsOutsideTheRootAreNotAnalysed) {
  const std::string dir = TempDir("outside");
  ASSERT_TRUE(WriteFileAtomically(dir + "/outside.cc", "int Outside() { return 0; }\n").ok());
  const nlohmann::json entries = {
      {{"directory", dir}, {"file", "outside.cc"}, {"arguments", {"c++", "-c", "outside.cc"}}},
      {{"directory", FixtureDir()}, {"file", "a.cc"}, {"arguments", {"c++", "-c", "a.cc"}}},
  };
  const std::string database = dir + "/compile_commands.json";
  ASSERT_TRUE(WriteFileAtomically(database, entries.dump()).ok());
  StatusOr<CppAnalysis> result =
      AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->units.size(), 1u);
  EXPECT_EQ(result->units[0].file, "a.cc");
  EXPECT_TRUE(FindFunctions(*result, "Outside").empty());
}

Status Analyze(const std::string& database, const std::string& root = FixtureDir()) {
  return AnalyzeCompileCommands(database, {}, root, TestConfig(), 1).status();
}

TEST(CppFrontendRunTest, AMissingDatabaseIsAnErrorNamingTheFile) {
  const std::string path = TempDir("missing") + "/compile_commands.json";
  const Status status = Analyze(path);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.location().file, path);
  EXPECT_EQ(status.message(), "compile database not found");
}

// A directory: an unreadable database that a test can make even when it runs as root.
TEST(CppFrontendRunTest, AnUnreadableDatabaseIsAnErrorNamingTheFile) {
  const std::string path = TempDir("directory");
  const Status status = Analyze(path);
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_EQ(status.location().file, path);
  EXPECT_EQ(status.message(), "cannot read the compile database: Is a directory");
}

TEST(CppFrontendRunTest, InvalidDatabasesAreErrorsNamingTheFile) {
  const std::string dir = TempDir("invalid");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[{\"file\": ", "not a compile database: Expected string as value."},
      {"{not json", "not a compile database: Expected array."},
      {R"({"file": "a.cc"})", "not a compile database: Expected array."},
      {R"([{"file": "a.cc", "command": "c++ a.cc"}])",
       "not a compile database: Missing key: \"directory\"."},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = dir + "/db" + std::to_string(i) + ".json";
    ASSERT_TRUE(WriteFileAtomically(path, cases[i].first).ok());
    const Status status = Analyze(path);
    EXPECT_EQ(status.code(), StatusCode::kParseError) << cases[i].first;
    EXPECT_EQ(status.location().file, path);
    EXPECT_EQ(status.message(), cases[i].second);
  }
}

TEST(CppFrontendRunTest, TheRootMustBeADirectory) {
  const std::string database = WriteDatabase("root", {"a.cc"});
  const Status status = Analyze(database, FixtureDir() + "/a.cc");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.location().file, FixtureDir() + "/a.cc");
  EXPECT_EQ(status.message(), "the analysis root is not a directory");
}

TEST(CppFrontendRunTest, AUnitWhoseSourceIsMissingIsAProblem) {
  const std::string database = WriteDatabase("gone", {"a.cc", "gone.cc"});
  StatusOr<CppAnalysis> result =
      AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->problems.size(), 1u);
  EXPECT_EQ(result->problems[0].file, "gone.cc");
  EXPECT_EQ(result->problems[0].line, 0);
  EXPECT_EQ(result->problems[0].message, "no such file or directory: 'gone.cc'");
  ASSERT_EQ(result->units.size(), 2u);
  EXPECT_TRUE(result->units[0].ok);
  EXPECT_FALSE(result->units[1].ok);
}

// A relative "directory" is read from the database's folder: the missing source is still a
// problem of the TU, not silently outside the root.
TEST(CppFrontendRunTest, ARelativeDirectoryIsReadFromTheDatabasesFolder) {
  const std::string dir = TempDir("relative");
  const std::string fixtures = std::filesystem::relative(FixtureDir(), dir).string();
  nlohmann::json entries = nlohmann::json::array();
  for (const char* source : {"a.cc", "gone.cc"}) {
    entries.push_back({{"directory", fixtures},
                       {"file", source},
                       {"arguments", {"c++", "-std=c++20", "-c", source}}});
  }
  const std::string database = dir + "/compile_commands.json";
  ASSERT_TRUE(WriteFileAtomically(database, entries.dump()).ok());
  StatusOr<CppAnalysis> result =
      AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->units.size(), 2u);
  EXPECT_TRUE(result->units[0].ok);
  ASSERT_EQ(result->problems.size(), 1u);
  EXPECT_EQ(result->problems[0].file, "gone.cc");
  EXPECT_EQ(result->problems[0].message, "no such file or directory: 'gone.cc'");
}

// Problems say where the first error is: in a header (named in the message, the problem stays
// with the TU), from the driver (no position), or an empty command.
TEST(CppFrontendRunTest, ProblemsSayWhereTheFirstErrorIs) {
  const std::string dir = TempDir("where");
  nlohmann::json entries = {
      {{"directory", FixtureDir()},
       {"file", "uses_bad_header.cc"},
       {"arguments", {"c++", "-std=c++20", "-c", "uses_bad_header.cc"}}},
      {{"directory", FixtureDir()},
       {"file", "a.cc"},
       {"arguments", {"c++", "-std=c++20", "-fno-such-flag", "-c", "a.cc"}}},
      {{"directory", FixtureDir()}, {"file", "b.cc"}, {"arguments", nlohmann::json::array()}},
  };
  const std::string database = dir + "/compile_commands.json";
  ASSERT_TRUE(WriteFileAtomically(database, entries.dump()).ok());
  StatusOr<CppAnalysis> result =
      AnalyzeCompileCommands(database, {}, FixtureDir(), TestConfig(), 2);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->problems.size(), 3u);
  EXPECT_EQ(result->problems[0].file, "a.cc");
  EXPECT_EQ(result->problems[0].line, 0);
  EXPECT_EQ(result->problems[0].message, "unknown argument: '-fno-such-flag'");
  EXPECT_EQ(result->problems[1].file, "b.cc");
  EXPECT_EQ(result->problems[1].message, "the compile command is empty");
  EXPECT_EQ(result->problems[2].file, "uses_bad_header.cc");
  EXPECT_EQ(result->problems[2].line, 0);
  EXPECT_EQ(result->problems[2].message,
            "bad_header.h:4:33: use of undeclared identifier 'missing_in_header'");
  EXPECT_TRUE(result->files.empty());
}

}  // namespace
}  // namespace irm::deadcode
