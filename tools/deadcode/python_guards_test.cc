// The guarded-branch shapes the Python front end recognizes, each with its negative controls.
// Sources start on line 1 right after the opening R"py( line; ranges are counted by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/deadcode/python_frontend.h"

namespace irm::deadcode {
namespace {

FileModel Analyze(std::string_view source, const DeadcodeConfig& config = DefaultConfig()) {
  if (source.starts_with('\n')) source.remove_prefix(1);
  return AnalyzePythonSource(source, "pkg/mod.py", "pkg.mod", config);
}

std::string Range(const SourceRange& r) {
  return fmt::format("{}:{}-{}:{}", r.start_line, r.start_column, r.end_line, r.end_column);
}

// "shape/legacy_kind guard_name `guard_text` @line [not] legacy L twin T [raises] in enclosing"
std::string Describe(const GuardedBranch& b) {
  return fmt::format("{}/{} {} `{}` @{}{} legacy {} twin {}{} in {}", b.shape, b.legacy_kind,
                     b.guard_name, b.guard_text, b.guard_line, b.negated ? " not" : "",
                     Range(b.legacy), b.twin ? Range(*b.twin) : "none",
                     b.legacy_only_raises ? " raises" : "", b.enclosing);
}

std::vector<std::string> Branches(const FileModel& model) {
  EXPECT_TRUE(model.problems.empty()) << model.problems[0].message;
  std::vector<std::string> out;
  for (const GuardedBranch& branch : model.branches) {
    EXPECT_EQ(branch.file, "pkg/mod.py");
    out.push_back(Describe(branch));
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST(PythonGuardsTest, IfElseMakesTheElseLegacyAndTheIfBodyItsTwin) {
  FileModel model = Analyze(R"py(
def f(x):
    if in_pir_mode():
        new_path(x)
    else:
        old_path(x)
        more()
)py");
  EXPECT_EQ(Branches(model), Strings{"if-else/else-branch in_pir_mode `in_pir_mode()` @2 legacy "
                                     "5:9-6:15 twin 3:9-3:20 in pkg.mod.f"});
}

TEST(PythonGuardsTest, NegatedGuardWithElseMakesTheIfBodyLegacy) {
  FileModel model = Analyze(R"py(
def f():
    if not in_pir_mode():
        old()
    else:
        new()
)py");
  EXPECT_EQ(Branches(model), Strings{"negated/if-body in_pir_mode `not in_pir_mode()` @2 not "
                                     "legacy 3:9-3:14 twin 5:9-5:14 in pkg.mod.f"});
}

TEST(PythonGuardsTest, NegatedGuardWithoutElseHasNoTwin) {
  FileModel model = Analyze(R"py(
def f():
    if not paddle.framework.in_pir_mode():
        old()
    done()
)py");
  EXPECT_EQ(Branches(model),
            Strings{"negated/if-body in_pir_mode `not paddle.framework.in_pir_mode()` @2 not "
                    "legacy 3:9-3:14 twin none in pkg.mod.f"});
}

TEST(PythonGuardsTest, GuardInAnElifMakesTheFollowingElseLegacy) {
  FileModel model = Analyze(R"py(
def f(x):
    if x is None:
        return
    elif in_pir_mode():
        new()
    else:
        old()
)py");
  EXPECT_EQ(Branches(model), Strings{"elif/else-branch in_pir_mode `in_pir_mode()` @4 legacy "
                                     "7:9-7:14 twin 5:9-5:14 in pkg.mod.f"});
}

TEST(PythonGuardsTest, NegatedElifMakesItsBodyLegacy) {
  FileModel model = Analyze(R"py(
def f(x):
    if x:
        a()
    elif not in_pir_mode():
        old()
    else:
        new()
)py");
  EXPECT_EQ(Branches(model), Strings{"elif/if-body in_pir_mode `not in_pir_mode()` @4 not legacy "
                                     "5:9-5:14 twin 7:9-7:14 in pkg.mod.f"});
}

TEST(PythonGuardsTest, GuardFollowedByAnElifLeavesTheElseAlone) {
  // The else also runs on the new-IR path when `x` is false: not purely legacy.
  FileModel model = Analyze(R"py(
def f(x):
    if in_pir_mode():
        new()
    elif x:
        other()
    else:
        old()
)py");
  EXPECT_EQ(Branches(model), Strings{});
}

TEST(PythonGuardsTest, GuardedElifNotFollowedByElseIsNoFinding) {
  FileModel model = Analyze(R"py(
def f(x):
    if x:
        a()
    elif in_pir_mode():
        new()
    elif x > 1:
        b()
    else:
        c()
)py");
  EXPECT_EQ(Branches(model), Strings{});
}

TEST(PythonGuardsTest, EarlyReturnMakesTheRestOfTheBlockLegacy) {
  FileModel model = Analyze(R"py(
def f(x):
    if in_pir_mode():
        y = new(x)
        return y
    z = old(x)
    return z
)py");
  EXPECT_EQ(Branches(model),
            Strings{"early-return/tail-after-early-return in_pir_mode `in_pir_mode()` @2 legacy "
                    "5:5-6:13 twin 3:9-4:17 in pkg.mod.f"});
}

TEST(PythonGuardsTest, EarlyReturnThroughAnIfElseThatAlwaysReturns) {
  FileModel model = Analyze(R"py(
def f(x):
    if use_pir_api():
        if x:
            return 1
        else:
            raise ValueError(x)
    return old(x)
)py");
  EXPECT_EQ(Branches(model),
            Strings{"early-return/tail-after-early-return use_pir_api `use_pir_api()` @2 legacy "
                    "7:5-7:18 twin 3:9-6:32 in pkg.mod.f"});
}

TEST(PythonGuardsTest, NegatedEarlyReturnMakesTheIfBodyLegacyAndTheTailItsTwin) {
  FileModel model = Analyze(R"py(
def f(x):
    if not in_pir_mode():
        old(x)
        return None
    new(x)
)py");
  EXPECT_EQ(Branches(model), Strings{"early-return/if-body in_pir_mode `not in_pir_mode()` @2 not "
                                     "legacy 3:9-4:20 twin 5:5-5:11 in pkg.mod.f"});
}

TEST(PythonGuardsTest, GuardWithoutElseOrEarlyReturnIsNoFinding) {
  FileModel model = Analyze(R"py(
def f():
    if in_pir_mode():
        new()
    old()
    if in_pir_mode():
        return new()
)py");
  EXPECT_EQ(Branches(model), Strings{});
}

TEST(PythonGuardsTest, GuardStoredInAVariableFirst) {
  FileModel model = Analyze(R"py(
def f(x):
    use_pir = paddle.framework.in_pir_mode()
    prepare()
    if use_pir:
        new()
    else:
        old()
    if not use_pir:
        old2()
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"guard-variable/else-branch in_pir_mode `use_pir` @4 legacy 7:9-7:14 twin "
                     "5:9-5:14 in pkg.mod.f",
                     "guard-variable/if-body in_pir_mode `not use_pir` @8 not legacy 9:9-9:15 "
                     "twin none in pkg.mod.f"}));
}

TEST(PythonGuardsTest, NegatedGuardVariableFlipsThePolarity) {
  FileModel model = Analyze(R"py(
def f():
    old_ir = not in_pir_mode()
    if old_ir:
        old()
    else:
        new()
)py");
  EXPECT_EQ(Branches(model), Strings{"guard-variable/if-body in_pir_mode `old_ir` @3 not legacy "
                                     "4:9-4:14 twin 6:9-6:14 in pkg.mod.f"});
}

TEST(PythonGuardsTest, GuardVariableAssignedTwiceOrElsewhereIsNoGuard) {
  FileModel model = Analyze(R"py(
def f(x):
    use_pir = in_pir_mode()
    if x:
        use_pir = False
    if use_pir:
        new()
    else:
        old()
def g():
    pir = in_pir_mode()
def h():
    if pir:
        new()
    else:
        old()
def k():
    if late:
        new()
    else:
        old()
    late = in_pir_mode()
)py");
  EXPECT_EQ(Branches(model), Strings{});
}

TEST(PythonGuardsTest, ConditionalExpression) {
  FileModel model = Analyze(R"py(
def f(x):
    return new(x) if in_pir_mode() else old(x)
y = old() if not in_pir_mode() else new()
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"ternary/else-branch in_pir_mode `in_pir_mode()` @2 legacy 2:41-2:47 twin "
                     "2:12-2:18 in pkg.mod.f",
                     "ternary/if-body in_pir_mode `not in_pir_mode()` @3 not legacy 3:5-3:10 twin "
                     "3:37-3:42 in "}));
}

TEST(PythonGuardsTest, GuardVariableInAConditionalExpressionAndAtModuleLevel) {
  FileModel model = Analyze(R"py(
pir = use_pir_api()
run = new_run if pir else old_run
def f():
    return new() if pir else old()
)py");
  // The module's variable is not the function's: only the module-level use is a guard.
  EXPECT_EQ(Branches(model), Strings{"guard-variable/else-branch use_pir_api `pir` @2 legacy "
                                     "2:27-2:34 twin 2:7-2:14 in "});
}

TEST(PythonGuardsTest, ElseThatOnlyRaisesIsFlagged) {
  FileModel model = Analyze(R"py(
def f():
    if in_pir_mode():
        new()
    else:
        """Old IR is gone."""
        raise RuntimeError("old IR")
def g():
    if in_pir_mode():
        new()
    else:
        pass
def h():
    if in_pir_mode():
        new()
    else:
        log()
        raise RuntimeError("old IR")
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"if-else/else-branch in_pir_mode `in_pir_mode()` @2 legacy 5:9-6:37 twin "
                     "3:9-3:14 raises in pkg.mod.f",
                     "if-else/else-branch in_pir_mode `in_pir_mode()` @8 legacy 11:9-11:13 twin "
                     "9:9-9:14 in pkg.mod.g",
                     "if-else/else-branch in_pir_mode `in_pir_mode()` @13 legacy 16:9-17:37 twin "
                     "14:9-14:14 in pkg.mod.h"}));
}

TEST(PythonGuardsTest, EveryKindOfGuardInTheDefaultVocabulary) {
  FileModel model = Analyze(R"py(
if paddle.framework.in_pir_mode():
    a()
else:
    b()
if FLAGS_enable_pir_in_executor:
    a()
else:
    b()
if get_flags("FLAGS_enable_pir_api")["FLAGS_enable_pir_api"]:
    a()
else:
    b()
if paddle.get_flags(['FLAGS_enable_pir_api'])['FLAGS_enable_pir_api']:
    a()
else:
    b()
if self._in_pir_mode:
    a()
else:
    b()
if ((use_pir_api())):
    a()
else:
    b()
if not (in_dynamic_or_pir_mode()):
    b()
else:
    a()
)py");
  std::vector<std::string> names;
  for (const GuardedBranch& b : model.branches) {
    names.push_back(fmt::format("{} {} {}", b.guard_line, b.guard_name, b.negated));
  }
  EXPECT_EQ(names, (Strings{"1 in_pir_mode false", "5 FLAGS_enable_pir_in_executor false",
                            "9 FLAGS_enable_pir_api false", "13 FLAGS_enable_pir_api false",
                            "17 _in_pir_mode false", "21 use_pir_api false",
                            "25 in_dynamic_or_pir_mode true"}));
  ASSERT_EQ(model.branches.size(), 7u);
  EXPECT_EQ(model.branches[5].guard_text, "((use_pir_api()))");
  EXPECT_EQ(model.branches[2].guard_text,
            "get_flags(\"FLAGS_enable_pir_api\")[\"FLAGS_enable_pir_api\"]");
}

TEST(PythonGuardsTest, ConditionsThatAreNotExactlyAGuard) {
  FileModel model = Analyze(R"py(
if in_pir_mode() and x:
    a()
else:
    b()
if not not in_pir_mode():
    a()
else:
    b()
if in_pir_mode:
    a()
else:
    b()
if get_flags("FLAGS_enable_pir_api")["FLAGS_other"]:
    a()
else:
    b()
if os.environ.get("FLAGS_enable_pir_api"):
    a()
else:
    b()
if paddle.FLAGS_enable_pir_in_executor:
    a()
else:
    b()
if _in_pir_mode:
    a()
else:
    b()
if in_pir_mode() == True:
    a()
else:
    b()
)py");
  EXPECT_EQ(Branches(model), Strings{});
}

// `if X and not G:` (auto_parallel/api.py's `isinstance(optimizer, _ShardOptimizer) and not
// use_pir_api()`) runs its body on the legacy path only; with `or`, or a guard that is not negated,
// the body is not purely legacy.
TEST(PythonGuardsTest, ConjunctionWithANegatedGuardMakesTheBodyLegacy) {
  FileModel model = Analyze(R"py(
if isinstance(o, X) and not use_pir_api():
    b()
else:
    a()
if (ready and (x > 1 and not self._in_pir_mode)):
    b()
if x or not use_pir_api():
    a()
if x and use_pir_api():
    a()
else:
    b()
if x and y:
    a()
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"negated/if-body use_pir_api `isinstance(o, X) and not use_pir_api()` @1 not "
                     "legacy 2:5-2:8 twin none in ",
                     "negated/if-body _in_pir_mode `(ready and (x > 1 and not "
                     "self._in_pir_mode))` @5 not legacy 6:5-6:8 twin none in "}));
}

TEST(PythonGuardsTest, NamePatternsMatchBareAndDottedNames) {
  DeadcodeConfig config = DefaultConfig();
  config.python_guards = {{"pir", "name", "USE_PIR"}};
  FileModel model = Analyze(R"py(
if USE_PIR:
    a()
else:
    b()
if cfg.USE_PIR:
    a()
else:
    b()
if in_pir_mode():
    a()
else:
    b()
)py",
                            config);
  EXPECT_EQ(Branches(model),
            (Strings{"if-else/else-branch pir `USE_PIR` @1 legacy 4:5-4:8 twin 2:5-2:8 in ",
                     "if-else/else-branch pir `cfg.USE_PIR` @5 legacy 8:5-8:8 twin 6:5-6:8 in "}));
}

TEST(PythonGuardsTest, ReferencesInsideLegacyPartsListTheirBranchesOutermostFirst) {
  FileModel model = Analyze(R"py(
def f():
    if in_pir_mode():
        new()
    else:
        if not use_pir_api():
            oldest()
        old()
    return after()
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"if-else/else-branch in_pir_mode `in_pir_mode()` @2 legacy 5:9-7:14 twin "
                     "3:9-3:14 in pkg.mod.f",
                     "negated/if-body use_pir_api `not use_pir_api()` @5 not legacy 6:13-6:21 "
                     "twin none in pkg.mod.f"}));
  std::vector<std::string> references;
  for (const Reference& r : model.references) {
    references.push_back(fmt::format("{}@{}:{} [{}]", r.target, r.line, r.column,
                                     fmt::join(r.legacy_branches, ",")));
  }
  EXPECT_EQ(references, (Strings{"in_pir_mode@2:8 []", "new@3:9 []", "use_pir_api@5:16 [0]",
                                 "oldest@6:13 [0,1]", "old@7:9 [0]", "after@8:12 []"}));
}

TEST(PythonGuardsTest, TailAfterEarlyReturnCoversNestedBranches) {
  FileModel model = Analyze(R"py(
def f(x):
    if in_pir_mode():
        return new(x)
    y = old(x) if not use_pir_api() else None
    return y
)py");
  EXPECT_EQ(Branches(model),
            (Strings{"early-return/tail-after-early-return in_pir_mode `in_pir_mode()` @2 legacy "
                     "4:5-5:13 twin 3:9-3:22 in pkg.mod.f",
                     "ternary/if-body use_pir_api `not use_pir_api()` @4 not legacy 4:9-4:15 twin "
                     "4:42-4:46 in pkg.mod.f"}));
  std::vector<std::string> references;
  for (const Reference& r : model.references) {
    if (!r.legacy_branches.empty()) {
      references.push_back(fmt::format("{}@{}:{} [{}]", r.target, r.line, r.column,
                                       fmt::join(r.legacy_branches, ",")));
    }
  }
  EXPECT_EQ(references,
            (Strings{"old@4:9 [0,1]", "x@4:13 [0,1]", "use_pir_api@4:23 [0]", "y@5:12 [0]"}));
}

}  // namespace
}  // namespace irm::deadcode
