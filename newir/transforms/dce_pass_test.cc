// Tests of the `dce` pass on hand-written programs: dead chains erased in one sweep, every
// category of op that stays although unused, regions (pure ones erased with their ops, ones with
// effects kept, dead ops inside kept regions erased, outer values read only by a dead region), the
// restricted "erase what became dead" mode canonicalize uses, and the change report.
#include <gtest/gtest.h>

#include "newir/pass_registry.h"
#include "newir/transforms/pass_test_support.h"
#include "newir/transforms/passes.h"

namespace irm::newir {
namespace {

using testing::Parse;
using testing::Print;

// Runs the registered dce pass; the printed result, or the error.
std::string RunDce(Program& program, IrChange* change = nullptr) {
  const PassInfo* info = PassRegistry::Global().Lookup("dce");
  if (info == nullptr) return "NO DCE PASS";
  StatusOr<IrChange> result = info->Create()->Run(program);
  if (!result.ok()) return "ERROR: " + result.status().ToString();
  if (change != nullptr) *change = *result;
  return Print(program);
}

const char kOnlyX[] = R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
}
)";

TEST(DceTest, ErasesADeadChainInOneSweep) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.tanh" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%3) = "pd_op.add" (%1, %2) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  StatusOr<size_t> erased = EraseDeadOps(program.block());
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 3u);
  EXPECT_EQ(Print(program), kOnlyX);
  // The sweep reached the fixpoint: a second one finds nothing.
  erased = EraseDeadOps(program.block());
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 0u);
}

TEST(DceTest, KeepsUsedOpsAndReportsChange) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.sigmoid" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (builtin.tensor<2xf32>) ->
})");
  IrChange change = IrChange::kUnchanged;
  EXPECT_EQ(RunDce(program, &change), R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
  EXPECT_EQ(change, IrChange::kChanged);
  // Nothing left to erase: unchanged, and said so.
  const std::string before = Print(program);
  EXPECT_EQ(RunDce(program, &change), before);
  EXPECT_EQ(change, IrChange::kUnchanged);
}

TEST(DceTest, AnUnusedParameterStays) {
  Program program = Parse(kOnlyX);
  IrChange change = IrChange::kChanged;
  EXPECT_EQ(RunDce(program, &change), kOnlyX);
  EXPECT_EQ(change, IrChange::kUnchanged);
}

// Each op below reads %0 (when it reads anything) and nothing reads its results; it stays, while
// the unused relu after it goes.
TEST(DceTest, KeepsEveryCategoryOfEffect) {
  const std::vector<std::pair<const char*, std::string>> kept = {
      {"communication",
       R"((%1) = "pd_op.c_allreduce_sum" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"phi-style communication",
       R"((%1) = "pd_op.all_reduce" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"p_send", R"(() = "pd_op.p_send" (%0) {} : (builtin.tensor<2xf32>) ->)"},
      {"p_recv", R"((%1) = "pd_op.p_recv" () {} : () -> builtin.tensor<2xf32>)"},
      {"barrier",
       R"((%1) = "pd_op.barrier" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"in-place",
       R"((%1) = "pd_op.relu_" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"in-place optimizer",
       R"((%1) = "pd_op.increment_" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"fetch",
       R"((%1) = "pd_op.fetch" (%0) {col:(Int32)0,name:"out"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
      {"shadow_output",
       R"(() = "builtin.shadow_output" (%0) {output_name:"out"} : (builtin.tensor<2xf32>) ->)"},
      {"set_parameter",
       R"(() = "builtin.set_parameter" (%0) {parameter_name:"x"} : (builtin.tensor<2xf32>) ->)"},
      {"parameter",
       R"((%1) = "builtin.parameter" () {parameter_name:"y"} : () -> builtin.tensor<2xf32>)"},
      {"data", R"((%1) = "pd_op.data" () {name:"d"} : () -> builtin.tensor<2xf32>)"},
      {"feed", R"((%1) = "pd_op.feed" () {col:(Int32)0,name:"f"} : () -> builtin.tensor<2xf32>)"},
      {"unregistered",
       R"((%1) = "test.opaque" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)"},
  };
  const std::string head =
      "{\n    (%0) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> "
      "builtin.tensor<2xf32>\n";
  for (const auto& [category, line] : kept) {
    SCOPED_TRACE(category);
    Program program = Parse(head + "    " + line +
                            "\n    (%9) = \"pd_op.relu\" (%0) {} : (builtin.tensor<2xf32>) -> "
                            "builtin.tensor<2xf32>\n}\n");
    EXPECT_EQ(RunDce(program), head + "    " + line + "\n}\n");
  }
}

TEST(DceTest, MustKeepWhenUnusedFollowsTheTables) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2, %3) = "pd_op.dropout" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>, builtin.tensor<2xu8>
    (%4) = "pd_op.c_allreduce_sum_" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  std::vector<bool> keep;
  for (Operation& op : program.block()) keep.push_back(MustKeepWhenUnused(op));
  // parameter: side effect; relu and dropout (random, but keyed by op identity): no; the in-place
  // all-reduce: both flags.
  EXPECT_EQ(keep, (std::vector<bool>{true, false, false, true}));
}

// ---- regions ----------------------------------------------------------------------------------

TEST(DceTest, IfWithPureBranchesGoesWithItsCondition) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.if" (%1) {} -> builtin.tensor<2xf32> {
        (%3) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%3) {} : (builtin.tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    }
})");
  StatusOr<size_t> erased = EraseDeadOps(program.block());
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 2u);  // the if (with its nested ops) and less_than
  EXPECT_EQ(Print(program), kOnlyX);
}

TEST(DceTest, IfWithAnEffectStaysAndLosesItsDeadOps) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.if" (%1) {} -> builtin.tensor<2xf32> {
        () = "pd_op.p_send" (%0) {} : (builtin.tensor<2xf32>) ->
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    } else {
        (%3) = "pd_op.tanh" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%4) = "pd_op.relu" (%3) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    }
})");
  EXPECT_EQ(RunDce(program), R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.if" (%1) {} -> builtin.tensor<2xf32> {
        () = "pd_op.p_send" (%0) {} : (builtin.tensor<2xf32>) ->
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    }
}
)");
}

TEST(DceTest, OuterValuesReadOnlyByADeadRegionGoInTheSameSweep) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%3) = "pd_op.if" (%2) {} -> builtin.tensor<2xf32> {
        (%4) = "pd_op.tanh" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%4) {} : (builtin.tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%1) {} : (builtin.tensor<2xf32>) ->
    }
})");
  StatusOr<size_t> erased = EraseDeadOps(program.block());
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 3u);
  EXPECT_EQ(Print(program), kOnlyX);
}

TEST(DceTest, PureWhileGoes) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.while" (cond=%1, inputs=%0) {
        ^%arg_0 {}
        (%3) = "pd_op.relu" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%4) = "pd_op.less_than" (%3, %arg_0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
        () = "cf.yield" (%4, %3) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) ->
    }
})");
  EXPECT_EQ(RunDce(program), kOnlyX);
}

TEST(DceTest, WhileWritingInPlaceStaysAndLosesItsDeadOps) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.while" (cond=%1, inputs=%0) {
    ^%arg_0 {}
        (%3) = "pd_op.increment_" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%4) = "pd_op.tanh" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%5) = "pd_op.less_than" (%3, %arg_0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
        () = "cf.yield" (%5, %3) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) ->
    }
})");
  EXPECT_EQ(RunDce(program), R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.while" (cond=%1, inputs=%0) {
    ^%arg_0 {}
        (%3) = "pd_op.increment_" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%4) = "pd_op.less_than" (%3, %arg_0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
        () = "cf.yield" (%4, %3) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) ->
    }
}
)");
}

TEST(DceTest, UnregisteredRegionOpStays) {
  const std::string text = R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "test.scope" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    {
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    }

}
)";
  Program program = Parse(text);
  EXPECT_EQ(RunDce(program), text);
}

// ---- erase what became dead -------------------------------------------------------------------

TEST(DceTest, RestrictedToCandidatesAndWhatTheyRead) {
  Program program = Parse(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.tanh" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%3) = "pd_op.sigmoid" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  // Only tanh is a candidate: it goes, and relu with it (it fed tanh); sigmoid, dead but not a
  // candidate, stays.
  std::unordered_set<const Operation*> only = {program.block().front()->next()->next()};
  StatusOr<size_t> erased = EraseDeadOps(program.block(), &only);
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 2u);
  EXPECT_EQ(Print(program), R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.sigmoid" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
}
)");
}

}  // namespace
}  // namespace irm::newir
