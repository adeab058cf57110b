// Tests of the `canonicalize` pass on hand-written programs: each fold (scale by 1 in its operand
// and attribute forms, cast to the same dtype, reshape to the same static shape, assign, assign
// chains), each case that must not fold (other values, other types, in-place variants, persistable
// or fetched results, readers that write in place, dist attr conflicts), folds in nested regions,
// erasing only what became dead, and the max-iterations / test-convergence options; that the pass
// folds by the op table's fold hooks alone (a row without one is left alone, a new op folds by a
// hook on its row).
#include <gtest/gtest.h>

#include <memory>

#include "newir/dialect.h"
#include "newir/pass_pipeline.h"
#include "newir/transforms/pass_test_support.h"

namespace irm::newir {
namespace {

using testing::Parse;
using testing::Print;

// Runs canonicalize as `pipeline` spells it; the printed result, or the error.
std::string RunPass(Program& program, IrChange* change = nullptr,
                    std::string_view pipeline = "canonicalize") {
  StatusOr<std::vector<PassPipelineElement>> parsed = ParsePassPipeline(pipeline);
  if (!parsed.ok()) return "BAD PIPELINE: " + parsed.status().ToString();
  const PassPipelineElement& element = parsed->front();
  StatusOr<IrChange> result = element.info->factory(element.options)->Run(program);
  if (!result.ok()) return "ERROR: " + result.status().ToString();
  if (change != nullptr) *change = *result;
  return Print(program);
}

std::string Canonicalize(const std::string& text, IrChange* change = nullptr) {
  Program program = Parse(text);
  return RunPass(program, change);
}

// `text` must come out unchanged, and the pass must say so.
void ExpectNoFold(const std::string& text) {
  IrChange change = IrChange::kChanged;
  EXPECT_EQ(Canonicalize(text, &change), Print(Parse(text)));
  EXPECT_EQ(change, IrChange::kUnchanged);
}

// The program's start: `{` and the parameter x (%0).
std::string X() {
  return "{\n    (%0) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> "
         "builtin.tensor<2xf32>\n";
}
// x read by relu and exposed as "out": what every fold below should leave.
const char kFolded[] = R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)";
// The tail reading %9, the value a fold should replace by x.
const char kTail[] = R"(
    (%20) = "pd_op.relu" (%9) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%20) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)";

std::string FullOf(const std::string& value) {
  return "    (%1) = \"pd_op.full\" () "
         "{dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),"
         "shape:(pd_op.IntArray)[1],value:" +
         value + "} : () -> builtin.tensor<1xf32>\n";
}
std::string ScaleOf(const std::string& attrs) {
  return "    (%9) = \"pd_op.scale\" (%0, %1) {" + attrs +
         "} : (builtin.tensor<2xf32>, builtin.tensor<1xf32>) -> builtin.tensor<2xf32>";
}

// ---- scale ------------------------------------------------------------------------------------

TEST(CanonicalizeTest, ScaleByOneFedByFullFolds) {
  IrChange change = IrChange::kUnchanged;
  // The full that fed the factor became dead and goes too.
  EXPECT_EQ(Canonicalize(
                X() + FullOf("(Double)1") + ScaleOf("bias:(Float)0,bias_after_scale:true") + kTail,
                &change),
            kFolded);
  EXPECT_EQ(change, IrChange::kChanged);
  for (const char* one : {"(Float)1", "(Int32)1", "(Int64)1"}) {
    SCOPED_TRACE(one);
    EXPECT_EQ(Canonicalize(X() + FullOf(one) + ScaleOf("bias:(Float)0") + kTail), kFolded);
  }
  // No bias attribute: the table's default, 0; bias before scale is the same identity.
  EXPECT_EQ(Canonicalize(X() + FullOf("(Float)1") + ScaleOf("") + kTail), kFolded);
  EXPECT_EQ(Canonicalize(X() + FullOf("(Float)1") +
                         ScaleOf("bias:(Float)-0,bias_after_scale:false") + kTail),
            kFolded);
}

TEST(CanonicalizeTest, ScaleByOneAsAnAttributeFolds) {
  EXPECT_EQ(
      Canonicalize(X() +
                   std::string("    (%9) = \"pd_op.scale\" (%0) {bias:(Float)0,scale:(Float)1} "
                               ": (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>") +
                   kTail),
      kFolded);
}

TEST(CanonicalizeTest, FullStillReadElsewhereStays) {
  EXPECT_EQ(Canonicalize(X() + FullOf("(Float)1") + ScaleOf("bias:(Float)0") + R"(
    (%20) = "pd_op.relu" (%9) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%21) = "pd_op.add" (%20, %1) {} : (builtin.tensor<2xf32>, builtin.tensor<1xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%21) {output_name:"out"} : (builtin.tensor<2xf32>) ->
})"),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Float)1} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%3) = "pd_op.add" (%2, %1) {} : (builtin.tensor<2xf32>, builtin.tensor<1xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
}

TEST(CanonicalizeTest, ScaleThatIsNotTheIdentityStays) {
  ExpectNoFold(X() + FullOf("(Float)2") + ScaleOf("bias:(Float)0") + kTail);
  ExpectNoFold(X() + FullOf("(Float)1") + ScaleOf("bias:(Float)0.5") + kTail);
  ExpectNoFold(X() +
               std::string("    (%9) = \"pd_op.scale\" (%0) {scale:(Float)3} : "
                           "(builtin.tensor<2xf32>) -> builtin.tensor<2xf32>") +
               kTail);
  // The factor comes from something other than pd_op.full.
  ExpectNoFold(X() +
               std::string("    (%1) = \"builtin.parameter\" () {parameter_name:\"s\"} : () -> "
                           "builtin.tensor<1xf32>\n") +
               ScaleOf("bias:(Float)0") + kTail);
  // The in-place variant writes x: not an identity to fold away.
  ExpectNoFold(X() + FullOf("(Float)1") +
               "    (%9) = \"pd_op.scale_\" (%0, %1) {} : (builtin.tensor<2xf32>, "
               "builtin.tensor<1xf32>) -> builtin.tensor<2xf32>" +
               kTail);
}

// ---- cast -------------------------------------------------------------------------------------

TEST(CanonicalizeTest, CastToTheSameDtypeFolds) {
  EXPECT_EQ(
      Canonicalize(X() +
                   std::string("    (%9) = \"pd_op.cast\" (%0) {dtype:(pd_op.DataType)float32} "
                               ": (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>") +
                   kTail),
      kFolded);
}

TEST(CanonicalizeTest, CastThatConvertsStays) {
  ExpectNoFold(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.cast" (%0) {dtype:(pd_op.DataType)float16} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf16>
    () = "builtin.set_parameter" (%1) {parameter_name:"y"} : (builtin.tensor<2xf16>) ->
})");
  // Types equal but the dtype attribute disagrees: the op is inconsistent; keep it for the
  // verifier to report.
  ExpectNoFold(X() +
               std::string("    (%9) = \"pd_op.cast\" (%0) {dtype:(pd_op.DataType)float64} : "
                           "(builtin.tensor<2xf32>) -> builtin.tensor<2xf32>") +
               kTail);
  ExpectNoFold(X() +
               std::string("    (%9) = \"pd_op.cast\" (%0) {} : (builtin.tensor<2xf32>) -> "
                           "builtin.tensor<2xf32>") +
               kTail);
  ExpectNoFold(X() +
               std::string("    (%9) = \"pd_op.cast_\" (%0) {dtype:(pd_op.DataType)float32} : "
                           "(builtin.tensor<2xf32>) -> builtin.tensor<2xf32>") +
               kTail);
}

// ---- reshape ----------------------------------------------------------------------------------

std::string Reshape(const std::string& x_type, const std::string& out_type,
                    const std::string& xshape_reader) {
  return "{\n    (%0) = \"builtin.parameter\" () {parameter_name:\"x\"} : () -> " + x_type +
         "\n"
         "    (%1) = \"pd_op.full_int_array\" () {dtype:(pd_op.DataType)int64,"
         "place:(pd_op.Place)Place(cpu),value:[(Int64)2,(Int64)3]} : () -> builtin.tensor<2xi64>\n"
         "    (%2, %3) = \"pd_op.reshape\" (%0, %1) {} : (" +
         x_type + ", builtin.tensor<2xi64>) -> " + out_type + ", builtin.tensor<0x2x3xf32>\n" +
         "    () = \"builtin.set_parameter\" (%2) {parameter_name:\"y\"} : (" + out_type +
         ") -> \n" + xshape_reader + "}\n";
}

TEST(CanonicalizeTest, ReshapeToTheSameStaticShapeFolds) {
  // The shape operand's producer became dead and goes too.
  EXPECT_EQ(Canonicalize(Reshape("builtin.tensor<2x3xf32>", "builtin.tensor<2x3xf32>", "")), R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2x3xf32>
    () = "builtin.set_parameter" (%0) {parameter_name:"y"} : (builtin.tensor<2x3xf32>) ->
}
)");
  // The one-result form.
  EXPECT_EQ(Canonicalize(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {value:[(Int64)2,(Int64)3]} : () -> builtin.tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (builtin.tensor<2x3xf32>, builtin.tensor<2xi64>) -> builtin.tensor<2x3xf32>
    () = "builtin.set_parameter" (%2) {parameter_name:"y"} : (builtin.tensor<2x3xf32>) ->
})"),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2x3xf32>
    () = "builtin.set_parameter" (%0) {parameter_name:"y"} : (builtin.tensor<2x3xf32>) ->
}
)");
}

TEST(CanonicalizeTest, ReshapeThatReshapesStays) {
  ExpectNoFold(Reshape("builtin.tensor<2x3xf32>", "builtin.tensor<3x2xf32>", ""));
  ExpectNoFold(Reshape("builtin.tensor<-1x3xf32>", "builtin.tensor<-1x3xf32>", ""));
  // xshape is read (by reshape_grad): the op cannot go.
  ExpectNoFold(Reshape("builtin.tensor<2x3xf32>", "builtin.tensor<2x3xf32>",
                       "    (%4) = \"pd_op.reshape_grad\" (%3, %0) {} : "
                       "(builtin.tensor<0x2x3xf32>, builtin.tensor<2x3xf32>) -> "
                       "builtin.tensor<2x3xf32>\n"
                       "    () = \"builtin.shadow_output\" (%4) {output_name:\"g\"} : "
                       "(builtin.tensor<2x3xf32>) -> \n"));
}

// ---- assign -----------------------------------------------------------------------------------

std::string AssignOf(const std::string& attrs) {
  return "    (%9) = \"pd_op.assign\" (%0) {" + attrs +
         "} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>";
}

TEST(CanonicalizeTest, AssignFolds) {
  EXPECT_EQ(Canonicalize(X() + AssignOf("stop_gradient:[false]") + kTail), kFolded);
}

TEST(CanonicalizeTest, AssignThatMustStayStays) {
  // Persistable result.
  ExpectNoFold(X() + AssignOf("persistable:[true]") + kTail);
  // A fetch target or an output: the assign names the output.
  ExpectNoFold(X() + AssignOf("") + R"(
    (%20) = "pd_op.fetch" (%9) {col:(Int32)0,name:"out"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  ExpectNoFold(X() + AssignOf("") + R"(
    () = "builtin.shadow_output" (%9) {output_name:"out"} : (builtin.tensor<2xf32>) ->
})");
  // The copy is written in place: folding would write x.
  ExpectNoFold(X() + AssignOf("") + R"(
    (%20) = "pd_op.relu_" (%9) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  // x is written in place elsewhere: the copy would see the write.
  ExpectNoFold(X() + AssignOf("") + R"(
    (%20) = "pd_op.increment_" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.set_parameter" (%9) {parameter_name:"x_copy"} : (builtin.tensor<2xf32>) ->
})");
  // An unregistered reader may write what it reads.
  ExpectNoFold(X() + AssignOf("") + R"(
    (%20) = "test.opaque" (%9) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})");
  // Different types.
  ExpectNoFold(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<-1xf32>
    () = "builtin.set_parameter" (%1) {parameter_name:"y"} : (builtin.tensor<-1xf32>) ->
})");
}

OperationDistAttr DistAttr(int64_t operand_mapping, int64_t result_mapping) {
  const ProcessMesh mesh{{2}, {0, 1}, {"x"}};
  auto tensor = [&](int64_t mapping) {
    TensorDistAttr attr;
    attr.mesh = mesh;
    attr.dims_mapping = {mapping};
    return Attribute::TensorDist(attr);
  };
  return {mesh, {tensor(operand_mapping)}, {tensor(result_mapping)}, -1};
}

TEST(CanonicalizeTest, AssignWithConflictingDistAttrsStays) {
  const std::string text = X() + AssignOf("") + kTail;
  Program program = Parse(text);
  Operation* assign = program.block().front()->next();
  ASSERT_EQ(assign->name(), "pd_op.assign");
  assign->SetAttribute("op_dist_attr", Attribute::OperationDist(DistAttr(0, -1)));
  const std::string before = Print(program);
  IrChange change = IrChange::kChanged;
  EXPECT_EQ(RunPass(program, &change), before);
  EXPECT_EQ(change, IrChange::kUnchanged);

  // The same dist attr on both sides is no conflict.
  assign->SetAttribute("op_dist_attr", Attribute::OperationDist(DistAttr(0, 0)));
  EXPECT_EQ(RunPass(program), kFolded);
}

TEST(CanonicalizeTest, AssignOfAssign) {
  // Both copies go.
  EXPECT_EQ(Canonicalize(X() + R"(
    (%5) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%9) = "pd_op.assign" (%5) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)" +
                         kTail),
            kFolded);
  // The outer copy is persistable: one assign of x remains.
  EXPECT_EQ(Canonicalize(X() + R"(
    (%5) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%9) = "pd_op.assign" (%5) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)" +
                         kTail),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.assign" (%0) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.relu" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
  // Both must stay (the inner one is fetched, the outer one persistable), but the outer one reads
  // x directly.
  EXPECT_EQ(Canonicalize(X() + R"(
    (%5) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%6) = "pd_op.fetch" (%5) {col:(Int32)0,name:"y"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%9) = "pd_op.assign" (%5) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)" +
                         kTail),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.fetch" (%1) {col:(Int32)0,name:"y"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%3) = "pd_op.assign" (%0) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%4) = "pd_op.relu" (%3) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%4) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
  // The middle value is written in place: the chain stays as it is.
  ExpectNoFold(X() + R"(
    (%5) = "pd_op.assign" (%0) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%6) = "pd_op.relu_" (%5) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%9) = "pd_op.assign" (%5) {persistable:[true]} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)" +
               kTail);
}

// ---- regions, dead code, iterations ------------------------------------------------------------

TEST(CanonicalizeTest, FoldsInsideRegions) {
  EXPECT_EQ(Canonicalize(R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.if" (%1) {} -> builtin.tensor<2xf32> {
        (%3) = "pd_op.assign" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%4) = "pd_op.relu" (%3) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%4) {} : (builtin.tensor<2xf32>) ->
    } else {
        (%5) = "pd_op.cast" (%0) {dtype:(pd_op.DataType)float32} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%5) {} : (builtin.tensor<2xf32>) ->
    }
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (builtin.tensor<2xf32>) ->
})"),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.less_than" (%0, %0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
    (%2) = "pd_op.if" (%1) {} -> builtin.tensor<2xf32> {
        (%3) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%3) {} : (builtin.tensor<2xf32>) ->
    } else {
        () = "cf.yield" (%0) {} : (builtin.tensor<2xf32>) ->
    }
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
}

TEST(CanonicalizeTest, LeavesUnrelatedDeadCodeToDce) {
  EXPECT_EQ(Canonicalize(X() + AssignOf("") + R"(
    (%10) = "pd_op.sigmoid" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>)" +
                         kTail),
            R"({
    (%0) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%1) = "pd_op.sigmoid" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    (%2) = "pd_op.relu" (%0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (builtin.tensor<2xf32>) ->
}
)");
}

TEST(CanonicalizeTest, NothingToFold) {
  IrChange change = IrChange::kChanged;
  EXPECT_EQ(Canonicalize(kFolded, &change), kFolded);
  EXPECT_EQ(change, IrChange::kUnchanged);
}

// cast(x) then scale(cast) by 1: both fold in the first round; the second finds nothing.
std::string TwoFolds() {
  return X() + FullOf("(Float)1") +
         "    (%5) = \"pd_op.cast\" (%0) {dtype:(pd_op.DataType)float32} : (builtin.tensor<2xf32>) "
         "-> "
         "builtin.tensor<2xf32>\n"
         "    (%9) = \"pd_op.scale\" (%5, %1) {} : (builtin.tensor<2xf32>, builtin.tensor<1xf32>) "
         "-> "
         "builtin.tensor<2xf32>" +
         kTail;
}

TEST(CanonicalizeTest, MaxIterationsAndTestConvergence) {
  Program program = Parse(TwoFolds());
  EXPECT_EQ(RunPass(program, nullptr, "canonicalize{max-iterations=2 test-convergence}"), kFolded);

  // One round folds everything but cannot show it reached a fixpoint.
  Program one_round = Parse(TwoFolds());
  EXPECT_EQ(RunPass(one_round, nullptr, "canonicalize{max-iterations=1 test-convergence}"),
            "ERROR: error: canonicalize changed the IR in each of its 1 iteration(s) and did not "
            "reach a fixpoint");
  // Without test-convergence the same run is a success.
  Program quiet = Parse(TwoFolds());
  IrChange change = IrChange::kUnchanged;
  EXPECT_EQ(RunPass(quiet, &change, "canonicalize{max-iterations=1}"), kFolded);
  EXPECT_EQ(change, IrChange::kChanged);
  // Nothing to do converges at once, even in one round.
  Program folded = Parse(kFolded);
  EXPECT_EQ(RunPass(folded, nullptr, "canonicalize{max-iterations=1 test-convergence}"), kFolded);
}

// ---- fold hooks on the op table -----------------------------------------------------------------

TEST(CanonicalizeTest, FoldsAreHooksOnThePdOpRows) {
  const OpRegistry& registry = OpRegistry::Global();
  for (const char* name : {"pd_op.scale", "pd_op.cast", "pd_op.reshape", "pd_op.assign"}) {
    SCOPED_TRACE(name);
    ASSERT_NE(registry.Lookup(name), nullptr);
    EXPECT_NE(registry.Lookup(name)->fold, nullptr);
  }
  // In-place variants write their input: no fold.
  for (const char* name : {"pd_op.scale_", "pd_op.cast_", "pd_op.reshape_"}) {
    SCOPED_TRACE(name);
    ASSERT_NE(registry.Lookup(name), nullptr);
    EXPECT_EQ(registry.Lookup(name)->fold, nullptr);
  }
  ASSERT_NE(registry.Lookup("pd_op.relu"), nullptr);
  EXPECT_EQ(registry.Lookup("pd_op.relu")->fold, nullptr);
}

// test.copy's hook: result 0 is x.
OpFoldResult FoldCopyToItsInput(const Operation& op) {
  OpFoldResult fold;
  fold.result = op.operand(0);
  return fold;
}

// Every dialect, plus test.copy (x -> out) with `fold` on its row: an op the pass has never heard
// of.
std::unique_ptr<OpRegistry> RegistryWithCopyOp(OpFoldFn fold) {
  auto registry = std::make_unique<OpRegistry>();
  EXPECT_TRUE(RegisterAllDialects(*registry).ok());
  OpInfo copy;
  copy.name = "test.copy";
  copy.summary = "copies x";
  copy.operands.push_back(OperandSpec{.name = "x"});
  copy.results.push_back(ResultSpec{.name = "out"});
  copy.fold = fold;
  EXPECT_TRUE(registry->Register(std::move(copy)).ok());
  return registry;
}

// `text` parsed against `registry` (no unregistered ops), canonicalized and printed.
std::string CanonicalizeWith(const OpRegistry& registry, const std::string& text,
                             IrChange* change = nullptr) {
  ParseOptions options;
  options.registry = &registry;
  StatusOr<Program> program = ParseProgram(text, "t.pir", options);
  if (!program.ok()) return "PARSE: " + program.status().ToString();
  return RunPass(*program, change);
}

std::string CopyOf(const std::string& attrs, const std::string& result_type = "2xf32") {
  return "    (%9) = \"test.copy\" (%0) {" + attrs +
         "} : (builtin.tensor<2xf32>) -> builtin.tensor<" + result_type + ">";
}

TEST(CanonicalizeTest, RowWithoutAFolderIsLeftAlone) {
  std::unique_ptr<OpRegistry> registry = RegistryWithCopyOp(nullptr);
  const std::string text = X() + CopyOf("") + kTail;
  IrChange change = IrChange::kChanged;
  EXPECT_EQ(CanonicalizeWith(*registry, text, &change), Print(Parse(text)));
  EXPECT_EQ(change, IrChange::kUnchanged);
}

TEST(CanonicalizeTest, NewOpFoldsByAFolderOnItsRowOnly) {
  std::unique_ptr<OpRegistry> registry = RegistryWithCopyOp(FoldCopyToItsInput);
  IrChange change = IrChange::kUnchanged;
  EXPECT_EQ(CanonicalizeWith(*registry, X() + CopyOf("") + kTail, &change), kFolded);
  EXPECT_EQ(change, IrChange::kChanged);
  // What the hook cannot see, the pass checks for every hook: a persistable result, a fetched
  // one, a replacement of another type.
  for (const std::string& text : {X() + CopyOf("persistable:[true]") + kTail, X() + CopyOf("") + R"(
    (%20) = "pd_op.fetch" (%9) {col:(Int32)0,name:"out"} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
})",
                                  X() + CopyOf("", "-1xf32") + R"(
    () = "builtin.set_parameter" (%9) {parameter_name:"y"} : (builtin.tensor<-1xf32>) ->
})"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(CanonicalizeWith(*registry, text, &change), Print(Parse(text)));
    EXPECT_EQ(change, IrChange::kUnchanged);
  }
}

}  // namespace
}  // namespace irm::newir
