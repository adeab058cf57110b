// The translator's program-level rules: unsupported ops listed all at once, opaque ops that
// round-trip, parameters and set_parameter by the storage rule, legacy names and op roles on every
// value, control flow, communication styles and ring checks, located errors. (Per-op mappings are
// pinned by the file tests in translator/testdata/ops.)
#include "translator/translate.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "newir/nesting.h"
#include "newir/printer.h"
#include "newir/program_io.h"
#include "newir/structural_equal.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"

namespace irm::translator {
namespace {

using ::testing::HasSubstr;

// A dense var declaration in protobuf text form.
std::string Var(const std::string& name, const std::string& dtype, const std::string& dims,
                bool persistable = false) {
  return "vars { name: \"" + name + "\" type { type: DENSE_TENSOR dense_tensor { tensor { " +
         "data_type: " + dtype + " " + dims + " } } }" + (persistable ? " persistable: true" : "") +
         " }\n";
}
std::string F32(const std::string& name, bool persistable = false) {
  return Var(name, "FP32", "dims: 2 dims: 3", persistable);
}

oldir::Program Parse(const std::string& blocks) {
  StatusOr<oldir::Program> program =
      oldir::ParseProgram(blocks, "t.prototxt", oldir::ProgramFormat::kText);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : oldir::Program();
}

std::string Root(const std::string& body) {
  return "blocks { idx: 0 parent_idx: -1\n" + body + "}\n";
}

Translation Translate(const oldir::Program& program, TranslateOptions options = {}) {
  options.file = "t.prototxt";
  StatusOr<Translation> t = TranslateProgram(program, options);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  const Diagnostics findings = newir::VerifyProgramAll(
      t->program, {.allow_unregistered = options.allow_unregistered, .file = "t"});
  EXPECT_TRUE(findings.empty()) << findings.Render() << newir::PrintProgram(t->program);
  return std::move(t).value();
}

std::vector<std::string> OpNames(const newir::Program& program) {
  std::vector<std::string> names;
  for (const newir::Operation& op : program.block()) names.push_back(op.name());
  return names;
}

const newir::Operation* FindOp(const newir::Program& program, const std::string& name) {
  for (const newir::Operation& op : program.block()) {
    if (op.name() == name) return &op;
  }
  return nullptr;
}

const char* kRelu = R"(ops { type: "relu" inputs { parameter: "X" arguments: "x" }
  outputs { parameter: "Out" arguments: "y" } attrs { name: "op_role" type: INT i: 0 } }
)";

TEST(TranslateTest, ListsEveryUnsupportedOpType) {
  const oldir::Program program = Parse(Root(F32("x") + F32("y") + F32("z") + kRelu + R"(
    ops { type: "my_fused_op" inputs { parameter: "X" arguments: "y" }
          outputs { parameter: "Out" arguments: "z" } }
    ops { type: "while_grad" }
    ops { type: "my_fused_op" inputs { parameter: "X" arguments: "z" }
          outputs { parameter: "Out" arguments: "z" } }
  )"));
  StatusOr<Translation> t = TranslateProgram(program, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(t.status().diagnostic().Render(),
            "t.prototxt: error: cannot translate 2 op types (3 ops); --allow-unregistered keeps "
            "them as opaque ops\n"
            "  note: 'my_fused_op': 2 ops, first at block 0, op 1: no translation known\n"
            "  note: 'while_grad': 1 op, first at block 0, op 2: the backward of a while loop is "
            "not translated (nor is it by Paddle)\n");
}

// The translation walks the program once and lists the unsupported ops when it meets one: an
// error met before them, and a block no op leads to, must not hide them.
TEST(TranslateTest, UnsupportedOpsComeFirstAndUnreachedBlocksCount) {
  const oldir::Program earlier_error = Parse(Root(F32("x") + F32("z") + R"(
    ops { type: "relu" inputs { parameter: "X" arguments: "undeclared" }
          outputs { parameter: "Out" arguments: "z" } }
    ops { type: "my_fused_op" inputs { parameter: "X" arguments: "z" }
          outputs { parameter: "Out" arguments: "z" } }
  )"));
  StatusOr<Translation> t = TranslateProgram(earlier_error, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().diagnostic().Render(),
              HasSubstr("note: 'my_fused_op': 1 op, first at block 0, op 1"));

  const oldir::Program unreached = Parse(Root(F32("x") + F32("y") + kRelu) + R"(
    blocks { idx: 1 parent_idx: 0
      ops { type: "my_fused_op" inputs { parameter: "X" arguments: "y" }
            outputs { parameter: "Out" arguments: "y" } } }
  )");
  t = TranslateProgram(unreached, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(t.status().diagnostic().Render(),
              HasSubstr("note: 'my_fused_op': 1 op, first at block 1, op 0"));
  // Allowed, it is no error (the block is simply not reached).
  TranslateOptions allowed;
  allowed.allow_unregistered = true;
  EXPECT_TRUE(TranslateProgram(unreached, allowed).ok());
}

TEST(TranslateTest, OpaqueOpsKeepSlotsAttributesAndRoundTrip) {
  const oldir::Program program = Parse(Root(F32("x") + F32("w", true) + F32("z") + R"(
    ops { type: "my_fused_op" inputs { parameter: "X" arguments: "x" }
          inputs { parameter: "W" arguments: "w" } outputs { parameter: "Out" arguments: "z" }
          attrs { name: "alpha" type: FLOAT f: 0.5 } attrs { name: "dims" type: LONGS longs: 3 }
          attrs { name: "op_role" type: INT i: 1 } }
  )"));
  const Translation t = Translate(program, {.allow_unregistered = true});
  const newir::Operation* op = FindOp(t.program, "pd_op.legacy.my_fused_op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->num_operands(), 2u);
  EXPECT_EQ(op->attribute("legacy_input_slots").ToString(), "[\"X\",\"W\"]");
  EXPECT_EQ(op->attribute("legacy_output_slots").ToString(), "[\"Out\"]");
  EXPECT_EQ(op->attribute("alpha"), newir::Attribute::Float(0.5f));
  EXPECT_EQ(op->attribute("dims").ToString(), "[(Int64)3]");
  EXPECT_EQ(op->attribute("op_role"), newir::Attribute::Int32(1));
  EXPECT_EQ(t.coverage.types().at("my_fused_op").opaque, 1);

  newir::ReadOptions read;
  read.allow_unregistered = true;
  for (newir::FileFormat format : {newir::FileFormat::kText, newir::FileFormat::kJson}) {
    const std::string bytes = newir::SerializeProgramFile(t.program, format);
    StatusOr<newir::Program> back = newir::ParseProgramFile(bytes, "t", format, read);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    const std::optional<std::string> difference = newir::FindStructuralDifference(t.program, *back);
    EXPECT_FALSE(difference.has_value()) << *difference;
  }
}

TEST(TranslateTest, StartupInitialisersBecomeSetParameter) {
  const oldir::Program program = Parse(Root(F32("w", true) + R"(
    ops { type: "fill_constant" outputs { parameter: "Out" arguments: "w" }
          attrs { name: "dtype" type: INT i: 5 } attrs { name: "shape" type: LONGS longs: 2 longs: 3 }
          attrs { name: "value" type: FLOAT f: 0.25 } attrs { name: "op_role" type: INT i: 0 } }
  )"));
  const Translation t = Translate(program);
  EXPECT_THAT(OpNames(t.program), ::testing::ElementsAre("pd_op.full", "builtin.set_parameter"));
  const newir::Operation* set = FindOp(t.program, "builtin.set_parameter");
  EXPECT_EQ(set->attribute("parameter_name"), newir::Attribute::String("w"));
  EXPECT_EQ(set->operand(0), t.program.block().front()->result(0));
}

TEST(TranslateTest, InPlaceUpdatesKeepTheParameterStorage) {
  // sgd writes w in place: no set_parameter. lr is read and then overwritten by a new value: the
  // new value must be stored back. Externals appear in the order the new ops read them (sgd_:
  // param, learning_rate, grad).
  const oldir::Program program =
      Parse(Root(F32("w", true) + F32("g") + Var("lr", "FP32", "dims: 1", true) + R"(
    ops { type: "sgd" inputs { parameter: "Param" arguments: "w" }
          inputs { parameter: "Grad" arguments: "g" }
          inputs { parameter: "LearningRate" arguments: "lr" }
          outputs { parameter: "ParamOut" arguments: "w" } attrs { name: "op_role" type: INT i: 2 } }
    ops { type: "scale" inputs { parameter: "X" arguments: "lr" }
          outputs { parameter: "Out" arguments: "lr" } attrs { name: "scale" type: FLOAT f: 0.5 } }
    ops { type: "fill_constant" outputs { parameter: "Out" arguments: "lr" }
          attrs { name: "dtype" type: INT i: 5 } attrs { name: "shape" type: LONGS longs: 1 }
          attrs { name: "value" type: FLOAT f: 0.1 } }
  )"));
  const Translation t = Translate(program);
  EXPECT_THAT(
      OpNames(t.program),
      ::testing::ElementsAre("builtin.parameter", "builtin.parameter", "pd_op.data", "pd_op.sgd_",
                             "pd_op.full", "pd_op.scale_", "pd_op.full", "builtin.set_parameter"));
  const newir::Operation* set = FindOp(t.program, "builtin.set_parameter");
  EXPECT_EQ(set->attribute("parameter_name"), newir::Attribute::String("lr"));
}

TEST(TranslateTest, ValuesRecordLegacyNamesRolesAndChunks) {
  const oldir::Program program = Parse(Root(F32("x") + F32("y") + R"(
    ops { type: "relu" inputs { parameter: "X" arguments: "x" }
          outputs { parameter: "Out" arguments: "y" } attrs { name: "op_role" type: INT i: 1 }
          attrs { name: "chunk_id" type: INT i: 3 } attrs { name: "op_namescope" type: STRING s: "/" } }
  )"));
  const Translation t = Translate(program);
  const newir::Operation* relu = FindOp(t.program, "pd_op.relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->attribute(kLegacyVarNamesAttr).ToString(), "[\"y\"]");
  EXPECT_EQ(relu->attribute("op_role"), newir::Attribute::Int32(1));
  EXPECT_EQ(relu->attribute("chunk_id"), newir::Attribute::Int32(3));
  EXPECT_FALSE(relu->HasAttribute("op_namescope"));
  const newir::Operation* data = FindOp(t.program, "pd_op.data");
  EXPECT_EQ(data->attribute("name"), newir::Attribute::String("x"));
  EXPECT_EQ(data->attribute(kLegacyVarNamesAttr).ToString(), "[\"x\"]");
}

TEST(TranslateTest, ConditionalBlockKeepsOldValuesInTheFalseBranch) {
  // acc (persistable) is zeroed inside the block; `fresh` exists only once the block ran.
  const std::string program_text = Root(Var("cond", "BOOL", "dims: 1") + F32("acc", true) +
                                        F32("fresh") + Var("scope", "FP32", "") + R"(
    ops { type: "conditional_block" inputs { parameter: "Cond" arguments: "cond" }
          inputs { parameter: "Input" }
          outputs { parameter: "Out" arguments: "acc" } outputs { parameter: "Scope" arguments: "scope" }
          attrs { name: "sub_block" type: BLOCK block_idx: 1 }
          attrs { name: "is_scalar_condition" type: BOOLEAN b: true } }
  )") + R"(blocks { idx: 1 parent_idx: 0
    ops { type: "fill_constant" outputs { parameter: "Out" arguments: "acc" }
          attrs { name: "dtype" type: INT i: 5 } attrs { name: "shape" type: LONGS longs: 2 longs: 3 }
          attrs { name: "value" type: FLOAT f: 0 } }
    ops { type: "assign" inputs { parameter: "X" arguments: "acc" }
          outputs { parameter: "Out" arguments: "fresh" } }
  })";
  const Translation t = Translate(Parse(program_text));
  const newir::Operation* if_op = FindOp(t.program, "pd_op.if");
  ASSERT_NE(if_op, nullptr);
  ASSERT_EQ(if_op->num_results(), 2u);
  EXPECT_EQ(if_op->attribute(kLegacyVarNamesAttr).ToString(), "[\"acc\",\"fresh\"]");
  EXPECT_EQ(if_op->attribute("fake_false_branch"), newir::Attribute::Bool(true));
  // The false branch yields acc's parameter and zeros for fresh.
  const newir::Block& else_block = if_op->region(1).front();
  const newir::Operation* yield = else_block.back();
  EXPECT_EQ(yield->operand(0)->defining_op()->name(), "builtin.parameter");
  EXPECT_EQ(yield->operand(1)->defining_op()->name(), "pd_op.full");
  // acc's new value is stored back.
  EXPECT_NE(FindOp(t.program, "builtin.set_parameter"), nullptr);
}

TEST(TranslateTest, WhileCarriesTheValuesItsBodyWrites) {
  const std::string program_text =
      Root(Var("i", "INT64", "dims: 1") + Var("n", "INT64", "dims: 1") +
           Var("cond", "BOOL", "dims: 1") + Var("steps", "FP32", "") + R"(
    ops { type: "fill_constant" outputs { parameter: "Out" arguments: "i" }
          attrs { name: "dtype" type: INT i: 3 } attrs { name: "shape" type: LONGS longs: 1 }
          attrs { name: "value" type: FLOAT f: 0 } }
    ops { type: "fill_constant" outputs { parameter: "Out" arguments: "n" }
          attrs { name: "dtype" type: INT i: 3 } attrs { name: "shape" type: LONGS longs: 1 }
          attrs { name: "value" type: FLOAT f: 3 } }
    ops { type: "less_than" inputs { parameter: "X" arguments: "i" } inputs { parameter: "Y" arguments: "n" }
          outputs { parameter: "Out" arguments: "cond" } }
    ops { type: "while" inputs { parameter: "X" arguments: "i" arguments: "n" }
          inputs { parameter: "Condition" arguments: "cond" }
          outputs { parameter: "Out" arguments: "i" arguments: "cond" }
          outputs { parameter: "StepScopes" arguments: "steps" }
          attrs { name: "sub_block" type: BLOCK block_idx: 1 } }
  )") +
      R"(blocks { idx: 1 parent_idx: 0
    ops { type: "increment" inputs { parameter: "X" arguments: "i" } outputs { parameter: "Out" arguments: "i" }
          attrs { name: "step" type: FLOAT f: 1 } }
    ops { type: "less_than" inputs { parameter: "X" arguments: "i" } inputs { parameter: "Y" arguments: "n" }
          outputs { parameter: "Out" arguments: "cond" } }
  })";
  const Translation t = Translate(Parse(program_text));
  const newir::Operation* loop = FindOp(t.program, "pd_op.while");
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->num_operands(), 2u);  // cond, i
  ASSERT_EQ(loop->num_results(), 1u);
  const newir::Block& body = loop->region(0).front();
  ASSERT_EQ(body.num_arguments(), 1u);
  EXPECT_EQ(body.argument(0)->attributes().at(kLegacyVarNameAttr), newir::Attribute::String("i"));
  EXPECT_EQ(body.back()->name(), "cf.yield");
  EXPECT_EQ(body.back()->num_operands(), 2u);
  EXPECT_EQ(body.front()->name(), "pd_op.increment_");
}

const char* kAllReduce = R"(ops { type: "c_allreduce_max" inputs { parameter: "X" arguments: "g" }
  outputs { parameter: "Out" arguments: "g" } attrs { name: "ring_id" type: INT i: 1 } }
)";

TEST(TranslateTest, CommunicationOpsInBothStyles) {
  const oldir::Program program = Parse(Root(F32("g") + kAllReduce));
  const Translation dist = Translate(program);
  const newir::Operation* all_reduce = FindOp(dist.program, "pd_op.all_reduce_");
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_EQ(all_reduce->attribute("reduce_type"), newir::Attribute::Int32(1));
  EXPECT_EQ(all_reduce->attribute("ring_id"), newir::Attribute::Int32(1));
  const Translation legacy = Translate(program, {.comm_ops = CommOpStyle::kLegacy});
  EXPECT_NE(FindOp(legacy.program, "pd_op.c_allreduce_max_"), nullptr);
}

TEST(TranslateTest, RingIdsAreResolvedAgainstTheProcessGroups) {
  const oldir::Program program = Parse(Root(F32("g") + kAllReduce));
  const std::vector<oldir::ProcessGroup> groups = {{0, {0, 1}}, {1, {2, 3}}};
  StatusOr<Translation> t =
      TranslateProgram(program, {.file = "t.prototxt", .process_groups = &groups, .rank = 0});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "t.prototxt: block 0, op 0 (c_allreduce_max): error: process group 1 (ranks [2, 3]) "
            "does not hold rank 0");
  const std::vector<oldir::ProcessGroup> none = {{0, {0, 1}}};
  t = TranslateProgram(program, {.file = "t.prototxt", .process_groups = &none, .rank = 0});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("ring_id 1 names no process group"));
  EXPECT_TRUE(TranslateProgram(program, {.process_groups = &groups, .rank = 2}).ok());
}

TEST(TranslateTest, ErrorsNameTheLegacyOp) {
  const oldir::Program program = Parse(Root(F32("x") + F32("y") + R"(
    ops { type: "cast" inputs { parameter: "X" arguments: "x" } outputs { parameter: "Out" arguments: "y" } }
  )"));
  StatusOr<Translation> t = TranslateProgram(program, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "t.prototxt: block 0, op 0 (cast): error: attribute 'out_dtype' is missing "
            "(pd_op.cast requires 'dtype')");
}

// The legacy validator infers no shapes: vars that disagree show only in the translated op, and
// are reported at the legacy op rather than left for the verifier to reject.
TEST(TranslateTest, OperandsThatDisagreeAreTheLegacyOpsError) {
  const oldir::Program program = Parse(Root(F32("x") + Var("y", "FP32", "dims: 4") + F32("z") + R"(
    ops { type: "elementwise_add" inputs { parameter: "X" arguments: "x" }
          inputs { parameter: "Y" arguments: "y" } outputs { parameter: "Out" arguments: "z" }
          attrs { name: "axis" type: INT i: -1 } }
  )"));
  StatusOr<Translation> t = TranslateProgram(program, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "t.prototxt: block 0, op 0 (elementwise_add): error: its translation pd_op.add is not "
            "well formed: x builtin.tensor<2x3xf32> and y builtin.tensor<4xf32> do not broadcast: "
            "dim 1 of x is 3 but dim 0 of y is 4");
}

TEST(TranslateTest, OutputsAreExposedByShadowOutput) {
  const oldir::Program program = Parse(Root(F32("x") + F32("y") + kRelu));
  const Translation t = Translate(program, {.outputs = {"y"}});
  const newir::Operation* out = t.program.block().back();
  EXPECT_EQ(out->name(), "builtin.shadow_output");
  EXPECT_EQ(out->attribute("output_name"), newir::Attribute::String("y"));
  StatusOr<Translation> missing = TranslateProgram(program, {.outputs = {"nope"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("output 'nope' is never written"));
}

// --- programs no walker may follow ------------------------------------------------------------

// Root block 0 and `levels` sub-blocks, block b (b >= 1) a child of block b - 1 that a
// conditional_block of block b - 1 runs; each sub-block scales the root's x in place.
std::string NestedBlocks(int levels, int cycle_back_to = -1) {
  auto conditional = [](int sub) {
    return "ops { type: \"conditional_block\" inputs { parameter: \"Cond\" arguments: \"c\" }\n"
           "  inputs { parameter: \"Input\" arguments: \"x\" }\n"
           "  outputs { parameter: \"Out\" arguments: \"x\" }\n"
           "  outputs { parameter: \"Scope\" arguments: \"scope\" }\n"
           "  attrs { name: \"is_scalar_condition\" type: BOOLEAN b: true }\n"
           "  attrs { name: \"sub_block\" type: BLOCK block_idx: " +
           std::to_string(sub) + " } }\n";
  };
  std::string text = "blocks { idx: 0 parent_idx: -1\n" + Var("c", "BOOL", "dims: 1") + F32("x") +
                     "vars { name: \"scope\" type { type: STEP_SCOPES } }\n" +
                     (levels > 0 ? conditional(1) : "") + "}\n";
  for (int b = 1; b <= levels; ++b) {
    text += "blocks { idx: " + std::to_string(b) + " parent_idx: " + std::to_string(b - 1) +
            "\nops { type: \"scale\" inputs { parameter: \"X\" arguments: \"x\" }\n" +
            "  outputs { parameter: \"Out\" arguments: \"x\" } }\n";
    if (b < levels) text += conditional(b + 1);
    if (b == levels && cycle_back_to >= 0) text += conditional(cycle_back_to);
    text += "}\n";
  }
  return text;
}

// Paddle's translator recurses into sub-blocks as it meets them (ProgramTranslator::TranslateBlock
// in paddle/fluid/ir_adaptor/translator/program_translator.cc) and has no guard against a cycle;
// here a cycle is refused before anything is built, with the validator's finding.
TEST(TranslateTest, SubBlockCycleIsRefusedWithItsFinding) {
  const oldir::Program program = Parse(NestedBlocks(2, /*cycle_back_to=*/1));
  StatusOr<Translation> t = TranslateProgram(program, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(t.status().ToString(),
            "t.prototxt: block 2, op 1 (conditional_block), attr 'sub_block': error: attribute "
            "'sub_block' runs block 1, which already runs this op: the sub-blocks form a cycle "
            "1 -> 2 -> 1");
}

// The new IR's readers refuse regions nested deeper than newir::kMaxRegionNesting; a legacy
// program nesting its blocks deeper is refused before translation, so that nothing is produced
// that cannot be read back. At the bound it translates.
TEST(TranslateTest, NestingPastTheNewIrBoundIsRefused) {
  const oldir::Program deep = Parse(NestedBlocks(49));
  StatusOr<Translation> t = TranslateProgram(deep, {.file = "t.prototxt"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(t.status().ToString(),
            "t.prototxt: block 48, op 1 (conditional_block), attr 'sub_block': error: block 49 "
            "is nested 49 levels deep (its sub-blocks reach 49); at most 48 levels are "
            "supported");
  const Translation at_bound = Translate(Parse(NestedBlocks(48)));
  EXPECT_NE(FindOp(at_bound.program, "pd_op.if"), nullptr);
  EXPECT_EQ(newir::RegionNesting(at_bound.program), newir::kMaxRegionNesting);
}

}  // namespace
}  // namespace irm::translator
