// The analysis on hand-built code models: twins, closure, blocked-by, evidence, deletability.
#include "tools/deadcode/analysis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace irm::deadcode {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A Python module under construction: functions, branches and references by hand.
class Module {
 public:
  explicit Module(std::string name) {
    model_.language = Language::kPython;
    model_.module = name;
    model_.file = name + ".py";
  }

  // Adds `name` (in `klass` when given) over lines [start, end]; returns its key.
  std::string Def(const std::string& name, int start, int end, const std::string& klass = "") {
    FunctionUnit function;
    function.scope = klass.empty() ? model_.module : model_.module + "." + klass;
    function.class_name = klass.empty() ? "" : function.scope;
    function.key = function.qualname = function.scope + "." + name;
    function.name = name;
    function.file = model_.file;
    function.range = {start, 1, end, 80};
    model_.functions.push_back(function);
    return function.key;
  }
  // Adds `name` nested in the function `outer` ("<outer>.<locals>.<name>"); returns its key.
  std::string DefNested(const std::string& outer, const std::string& name, int start, int end) {
    FunctionUnit function;
    function.scope = model_.module;
    function.key = function.qualname = outer + ".<locals>." + name;
    function.name = name;
    function.file = model_.file;
    function.range = {start, 1, end, 80};
    model_.functions.push_back(function);
    return function.key;
  }
  void Class(const std::string& name, std::vector<std::string> bases = {}) {
    model_.classes.push_back({model_.module + "." + name,
                              model_.module + "." + name,
                              model_.file,
                              {1, 1, 1, 1},
                              std::move(bases),
                              {}});
  }
  // `if in_pir_mode(): <twin lines> else: <legacy lines>` inside `enclosing`; returns its index.
  int Branch(const std::string& enclosing, int twin_start, int twin_end, int legacy_start,
             int legacy_end, bool only_raises = false) {
    GuardedBranch branch;
    branch.file = model_.file;
    branch.enclosing = enclosing;
    branch.guard_text = "in_pir_mode()";
    branch.guard_name = "in_pir_mode";
    branch.guard_line = twin_start - 1;
    branch.legacy_kind = "else-branch";
    branch.shape = "if-else";
    branch.twin = SourceRange{twin_start, 5, twin_end, 80};
    branch.legacy = {legacy_start, 5, legacy_end, 80};
    branch.legacy_only_raises = only_raises;
    model_.branches.push_back(branch);
    return static_cast<int>(model_.branches.size()) - 1;
  }
  void Ref(const std::string& from, const std::string& target, int line,
           std::vector<int> legacy_branches = {}) {
    model_.references.push_back({from, target, line, 9, std::move(legacy_branches)});
  }
  void Import(const std::string& alias, const std::string& target) {
    model_.imports.emplace_back(alias, target);
  }
  FileModel& model() { return model_; }

 private:
  FileModel model_;
};

// Evidence for the listed (legacy, twin) pairs only.
EvidenceLookup EvidenceFor(std::vector<std::pair<std::string, std::string>> pairs) {
  return [pairs](const std::string& legacy, const std::string& twin) {
    std::vector<Evidence> out;
    for (const auto& [l, t] : pairs) {
      if (l == legacy && t == twin) out.push_back({"parity", "parity/" + t + ".json", ""});
    }
    return out;
  };
}

const Finding& FindingFor(const DeadcodeReport& report, const std::string& kind,
                          const std::string& qualname) {
  for (const Finding& finding : report.findings) {
    if (finding.kind == kind && finding.unit.qualname == qualname) return finding;
  }
  static const Finding kNone;
  ADD_FAILURE() << "no " << kind << " finding for " << qualname;
  return kNone;
}

std::vector<std::string> Summaries(const DeadcodeReport& report) {
  std::vector<std::string> out;
  for (const Finding& f : report.findings) {
    out.push_back(f.kind + " " + f.unit.qualname + " " + f.status +
                  (f.deletable ? " deletable" : ""));
  }
  return out;
}

// m.run: if in_pir_mode(): _pir_parse() else: parse(); parse calls _helper, which calls _leaf.
Module PipelineModule() {
  Module m("m");
  const std::string run = m.Def("run", 1, 8);
  m.Branch(run, 3, 4, 6, 7);
  m.Ref(run, "_pir_parse", 4);
  m.Ref(run, "parse", 7, {0});
  const std::string parse = m.Def("parse", 10, 14);
  m.Ref(parse, "_helper", 12);
  m.Def("_pir_parse", 16, 18);
  const std::string helper = m.Def("_helper", 20, 22);
  m.Ref(helper, "_leaf", 21);
  m.Def("_leaf", 24, 25);
  return m;
}

TEST(DeadcodeAnalysisTest, AVerifiedTwinMakesTheLegacyFunctionItsBranchAndItsHelpersDeletable) {
  Module m = PipelineModule();
  const DeadcodeReport report = Analyze(
      {m.model()}, DefaultConfig(), EvidenceFor({{"m.parse", "m._pir_parse"}, {"m.run", "m.run"}}));
  EXPECT_THAT(
      Summaries(report),
      ElementsAre("branch m.run verified deletable", "function m.parse verified deletable",
                  "function m._helper verified deletable", "function m._leaf verified deletable"));
  const Finding& parse = FindingFor(report, "function", "m.parse");
  ASSERT_TRUE(parse.twin.has_value());
  EXPECT_EQ(parse.twin->qualname, "m._pir_parse");
  EXPECT_EQ(parse.twin->range.start_line, 16);
  EXPECT_EQ(parse.twin_rule, "_pir_{}");
  ASSERT_EQ(parse.callers.size(), 1u);
  EXPECT_EQ(parse.callers[0].qualname, "m.run");
  EXPECT_EQ(parse.callers[0].line, 7);
  EXPECT_FALSE(parse.callers[0].kept);
  ASSERT_EQ(parse.evidence.size(), 1u);
  EXPECT_EQ(parse.evidence[0].ref, "parity/m._pir_parse.json");
  const Finding& branch = FindingFor(report, "branch", "m.run");
  EXPECT_EQ(branch.legacy_kind, "else-branch");
  EXPECT_EQ(branch.unit.range.start_line, 6);
  ASSERT_TRUE(branch.guard.has_value());
  EXPECT_EQ(branch.guard->name, "in_pir_mode");
  EXPECT_EQ(branch.twin->range.start_line, 3);
  // A helper is verified by the evidence of the legacy code that calls it: _leaf by _helper's,
  // _helper by m.parse's (the branch's evidence covers the branch, which calls m.parse).
  const Finding& leaf = FindingFor(report, "function", "m._leaf");
  ASSERT_EQ(leaf.evidence.size(), 1u);
  EXPECT_EQ(leaf.evidence[0].ref, "parity/m._pir_parse.json");
  EXPECT_TRUE(FindingFor(report, "function", "m._helper").twin == std::nullopt);
}

TEST(DeadcodeAnalysisTest, WithoutEvidenceNothingIsDeletableAndUntestedLegacyHoldsItsCallees) {
  Module m = PipelineModule();
  // The function's twin is verified but the branch calling it is not: it waits for the branch.
  DeadcodeReport report =
      Analyze({m.model()}, DefaultConfig(), EvidenceFor({{"m.parse", "m._pir_parse"}}));
  EXPECT_THAT(Summaries(report),
              ElementsAre("branch m.run twin-untested", "function m.parse verified",
                          "function m._helper twin-untested", "function m._leaf twin-untested"));
  EXPECT_EQ(FindingFor(report, "function", "m.parse").reason,
            "its twin is verified, but legacy code that calls it is not deletable yet");
  report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  EXPECT_EQ(FindingFor(report, "function", "m.parse").reason,
            "its twin m._pir_parse has no parity or test evidence");
}

TEST(DeadcodeAnalysisTest, KeptLegacyCodeBlocksALegacyUnitAndIsReportedWithoutTwin) {
  Module m = PipelineModule();
  const std::string legacy_api = m.Def("save_legacy_format", 30, 33);
  m.Ref(legacy_api, "parse", 31);
  const DeadcodeReport report = Analyze(
      {m.model()}, DefaultConfig(), EvidenceFor({{"m.parse", "m._pir_parse"}, {"m.run", "m.run"}}));
  EXPECT_THAT(Summaries(report), ElementsAre("branch m.run verified deletable",
                                             "function m.parse blocked-by:m.save_legacy_format",
                                             "function m.save_legacy_format no-twin"));
  const Finding& kept = FindingFor(report, "function", "m.save_legacy_format");
  EXPECT_EQ(kept.reason, "legacy code with no new-IR twin; it keeps m.parse alive");
  EXPECT_FALSE(kept.twin.has_value());
  const Finding& parse = FindingFor(report, "function", "m.parse");
  ASSERT_EQ(parse.callers.size(), 2u);
  EXPECT_FALSE(parse.callers[0].kept);  // m.run's legacy branch, line 7
  EXPECT_TRUE(parse.callers[1].kept);   // m.save_legacy_format, line 31
}

TEST(DeadcodeAnalysisTest, ALegacyOnlyHelperCalledByKeptLegacyCodeIsBlockedSharedCodeIsNot) {
  Module m("m");
  const std::string run = m.Def("run", 1, 8);
  m.Branch(run, 3, 4, 6, 7);
  m.Ref(run, "_legacy_only", 7, {0});
  m.Ref(run, "_shared", 7, {0});
  m.Ref(run, "_shared", 4);  // the new-IR branch calls it too
  m.Def("_legacy_only", 10, 11);
  m.Def("_shared", 12, 13);
  const std::string kept = m.Def("load_deprecated", 14, 16);
  m.Ref(kept, "_legacy_only", 15);
  const std::string other = m.Def("other", 20, 22);
  const std::string also_shared = m.Def("_also_shared", 24, 25);
  m.Ref(run, also_shared, 6, {0});
  m.Ref(other, also_shared, 21);  // ordinary kept code: shared, not a finding
  const DeadcodeReport report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  EXPECT_THAT(Summaries(report), ElementsAre("branch m.run twin-untested",
                                             "function m._legacy_only blocked-by:m.load_deprecated",
                                             "function m.load_deprecated no-twin"));
}

TEST(DeadcodeAnalysisTest, ACycleOfLegacyHelpersGoesTogetherAnOrdinaryCycleStays) {
  Module m("m");
  const std::string run = m.Def("run", 1, 8);
  m.Branch(run, 3, 4, 6, 7);
  m.Ref(run, "_a", 7, {0});
  const std::string a = m.Def("_a", 10, 11);
  const std::string b = m.Def("_b", 12, 13);
  m.Ref(a, "_b", 10);
  m.Ref(b, "_a", 12);
  m.Ref(a, "_a", 11);  // recursion does not keep a function alive
  const std::string c1 = m.Def("c1", 20, 21);
  const std::string c2 = m.Def("c2", 22, 23);
  m.Ref(c1, "c2", 20);
  m.Ref(c2, "c1", 22);
  m.Def("public_api", 30, 31);  // nobody in the tree calls it: an entry point
  const DeadcodeReport report =
      Analyze({m.model()}, DefaultConfig(), EvidenceFor({{"m.run", "m.run"}}));
  EXPECT_THAT(Summaries(report),
              ElementsAre("branch m.run verified deletable", "function m._a verified deletable",
                          "function m._b verified deletable"));
}

TEST(DeadcodeAnalysisTest, NegativeControlsAreNotReported) {
  Module m("m");
  const std::string f = m.Def("f", 1, 8);
  m.Branch(f, 3, 4, 6, 7, /*only_raises=*/true);
  m.Def("legacy_with_no_twin", 10, 11);  // legacy by name, but it blocks nothing
  m.Class("A");
  m.Class("B");
  m.Def("step", 20, 21, "A");
  m.Def("_pir_step", 30, 31, "B");  // same stem, unrelated classes
  const std::string registered = m.Def("_registered", 40, 41);
  m.model().functions.back().decorators = {"register_pass(\"fuse\")"};
  m.Branch(f, 3, 4, 6, 7);
  m.Ref(f, registered, 7, {1});
  const DeadcodeReport report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  EXPECT_THAT(Summaries(report), ElementsAre("branch m.f twin-untested"));
}

TEST(DeadcodeAnalysisTest, EveryDefaultTwinRulePairsWithinOneScope) {
  Module m("m");
  m.Class("Engine");
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"parse_program", "_pir_parse_program"},
      {"_create_job_list", "_pir_create_job_list"},
      {"build_in_old_ir", "build_in_pir"},
      {"lower", "lower_pir"},
      {"apply", "apply_in_pir"},
      {"_partial_programs", "_partial_pir_programs"},
      {"_apply_single_impl", "_apply_pir_single_impl"},
      {"init", "init_pir"},
  };
  int line = 1;
  for (const auto& [legacy, twin] : pairs) {
    m.Def(legacy, line, line + 1, "Engine");
    m.Def(twin, line + 2, line + 3, "Engine");
    line += 10;
  }
  const DeadcodeReport report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  std::map<std::string, std::string> found;
  for (const Finding& finding : report.findings) {
    ASSERT_TRUE(finding.twin.has_value()) << finding.unit.qualname;
    EXPECT_EQ(finding.kind, "method");
    found[finding.unit.qualname.substr(9)] = finding.twin->qualname.substr(9);
  }
  EXPECT_EQ(found, (std::map<std::string, std::string>(pairs.begin(), pairs.end())));
}

TEST(DeadcodeAnalysisTest, PythonReferencesResolveThroughImportsSelfAndSubclasses) {
  Module lib("pkg.lib");
  lib.Def("parse", 1, 2);
  lib.Def("_pir_parse", 3, 4);
  lib.Class("Base");
  lib.Class("Derived", {"Base"});
  const std::string step = lib.Def("step", 10, 14, "Base");
  lib.Branch(step, 11, 11, 13, 13);
  lib.Ref(step, "self._build", 13, {0});
  lib.Def("_build", 20, 21, "Derived");  // reached through self in the base class
  Module user("pkg.user");
  user.Import("lib", "pkg.lib");
  const std::string main = user.Def("main", 1, 5);
  user.Branch(main, 2, 2, 4, 4);
  user.Ref(main, "lib.parse", 4, {0});
  const DeadcodeReport report =
      Analyze({lib.model(), user.model()}, DefaultConfig(), EvidenceFor({}));
  EXPECT_THAT(Summaries(report), ElementsAre("function pkg.lib.parse twin-untested",
                                             "branch pkg.lib.Base.step twin-untested",
                                             "method pkg.lib.Derived._build twin-untested",
                                             "branch pkg.user.main twin-untested"));
  EXPECT_EQ(FindingFor(report, "function", "pkg.lib.parse").callers[0].qualname, "pkg.user.main");
}

// The same text resolves differently from different callers: whichever caller comes first, the
// nested function neither hides the module's function from the other caller nor stands in for it.
TEST(DeadcodeAnalysisTest, ANameResolvesToTheCallersNestedFunctionBeforeTheModules) {
  for (bool nested_caller_first : {true, false}) {
    Module m("m");
    const std::string other = m.Def("other", 10, 16);
    m.DefNested(other, "helper", 12, 13);
    const std::string run = m.Def("run", 1, 8);
    m.Branch(run, 3, 4, 6, 7);
    // From `other` the nested helper: it does not keep m.helper alive. From `run`: m.helper.
    if (nested_caller_first) m.Ref(other, "helper", 15);
    m.Ref(run, "helper", 7, {0});
    if (!nested_caller_first) m.Ref(other, "helper", 15);
    m.Def("helper", 20, 21);
    for (int threads : {1, 2}) {
      const DeadcodeReport report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}), threads);
      EXPECT_THAT(Summaries(report),
                  ElementsAre("branch m.run twin-untested", "function m.helper twin-untested"))
          << threads << " threads, nested caller first: " << nested_caller_first;
    }
  }
}

TEST(DeadcodeAnalysisTest, TheReportIsTheSameAtAnyThreadCount) {
  std::vector<FileModel> files;
  for (int i = 0; i < 7; ++i) {
    Module lib("pkg.lib" + std::to_string(i));
    lib.Class("Base");
    lib.Class("Derived", {"Base"});
    const std::string step = lib.Def("step", 1, 8, "Base");
    lib.Branch(step, 3, 4, 6, 7);
    lib.Ref(step, "self._pir_build", 4);
    lib.Ref(step, "self._build", 7, {0});
    lib.Def("_build", 10, 12, "Derived");
    lib.Def("_pir_build", 14, 16, "Derived");
    const std::string use = lib.Def("use", 20, 22);
    lib.Import("next", "pkg.lib" + std::to_string((i + 1) % 7));
    lib.Ref(use, "next.use", 21);
    lib.Ref(use, "next.Derived._build", 22);
    files.push_back(lib.model());
  }
  const DeadcodeReport one = Analyze(files, DefaultConfig(), EvidenceFor({}), 1);
  ASSERT_EQ(one.findings.size(), 14u);
  for (int threads : {2, 3, 8}) {
    const DeadcodeReport many = Analyze(files, DefaultConfig(), EvidenceFor({}), threads);
    EXPECT_EQ(Summaries(many), Summaries(one)) << threads << " threads";
    ASSERT_EQ(many.findings.size(), one.findings.size());
    for (size_t i = 0; i < one.findings.size(); ++i) {
      EXPECT_EQ(many.findings[i].id, one.findings[i].id);
      ASSERT_EQ(many.findings[i].callers.size(), one.findings[i].callers.size());
      for (size_t c = 0; c < one.findings[i].callers.size(); ++c) {
        EXPECT_EQ(many.findings[i].callers[c].qualname, one.findings[i].callers[c].qualname);
        EXPECT_EQ(many.findings[i].callers[c].kept, one.findings[i].callers[c].kept);
      }
    }
  }
}

TEST(DeadcodeAnalysisTest, AnUnresolvedReceiverKeepsEveryMethodOfThatName) {
  Module m("m");
  m.Class("A");
  const std::string run = m.Def("run", 1, 8);
  m.Branch(run, 3, 4, 6, 7);
  m.Ref(run, "A.build", 7, {0});
  m.Ref(run, "obj.build", 4);  // unknown receiver: may be A.build
  m.Def("build", 10, 11, "A");
  const DeadcodeReport report = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  EXPECT_THAT(Summaries(report), ElementsAre("branch m.run twin-untested"));
}

FunctionUnit CppFunction(const std::string& usr, const std::string& qualname,
                         std::vector<std::string> parameter_types, int line) {
  FunctionUnit function;
  function.key = usr;
  function.qualname = qualname;
  function.name = qualname.substr(qualname.rfind(':') + 1);
  function.scope = qualname.substr(0, qualname.rfind("::"));
  function.file = "exec.cc";
  function.range = {line, 1, line + 2, 2};
  function.parameter_types = std::move(parameter_types);
  return function;
}

TEST(DeadcodeAnalysisTest, OverloadAndRegistrationTwinsInCpp) {
  FileModel file;
  file.language = Language::kCpp;
  file.file = "exec.cc";
  file.functions = {
      CppFunction("c:@N@ir@F@Run#&1$@N@ir@S@ProgramDesc#", "ir::Run", {"const ir::ProgramDesc &"},
                  1),
      CppFunction("c:@N@ir@F@Run#&1$@N@pir@S@Program#", "ir::Run", {"const pir::Program &"}, 5),
      CppFunction("c:@N@ir@F@Run#I#", "ir::Run", {"int"}, 9),
  };
  file.registrations = {
      {"pass", "fuse", true, "REGISTER_PASS", "exec.cc", {20, 1, 20, 30}, ""},
      {"pass", "fuse", false, "REGISTER_IR_PASS", "exec.cc", {21, 1, 21, 30}, ""},
      {"pass", "old_only", true, "REGISTER_PASS", "exec.cc", {22, 1, 22, 30}, ""},
  };
  const DeadcodeReport report = Analyze(
      {file}, DefaultConfig(), EvidenceFor({{"REGISTER_PASS(fuse)", "REGISTER_IR_PASS(fuse)"}}));
  EXPECT_THAT(Summaries(report),
              ElementsAre("overload ir::Run(const ir::ProgramDesc &) twin-untested",
                          "registration REGISTER_PASS(fuse) verified deletable"));
  EXPECT_EQ(report.findings[0].twin->qualname, "ir::Run(const pir::Program &)");
  EXPECT_EQ(report.findings[0].language, Language::kCpp);
  EXPECT_EQ(report.findings[1].twin_rule, "registration:pass");
}

TEST(DeadcodeAnalysisTest, IdsAreStableAndDistinctAndProblemsAreCarried) {
  Module m = PipelineModule();
  m.model().problems.push_back({"m.py", 3, 1, "syntax error"});
  const DeadcodeReport a = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  const DeadcodeReport b = Analyze({m.model()}, DefaultConfig(), EvidenceFor({}));
  std::set<std::string> ids;
  for (size_t i = 0; i < a.findings.size(); ++i) {
    EXPECT_EQ(a.findings[i].id, b.findings[i].id);
    EXPECT_EQ(a.findings[i].id.size(), 16u);
    ids.insert(a.findings[i].id);
  }
  EXPECT_EQ(ids.size(), a.findings.size());
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_EQ(a.problems[0].message, "syntax error");
  EXPECT_THAT(Analyze({}, DefaultConfig(), EvidenceFor({})).findings, IsEmpty());
}

}  // namespace
}  // namespace irm::deadcode
