// Tests of the sub-block graph check (block_graph.h) and of the validator on programs built to be
// large: thousands of nested blocks, a cycle of sub-blocks, an op of 200,000 attributes. Each
// asserts the exact finding (or that there is none); how fast the validator is on them is
// measured by bench/oldir_bench.cc, not here.
#include "oldir/block_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oldir/editor.h"
#include "oldir/validator.h"

namespace irm::oldir {
namespace {

constexpr const char* kFile = "m.pdmodel";

std::vector<std::string> Rendered(const Diagnostics& diagnostics) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics.items()) out.push_back(d.Render());
  return out;
}

proto::BlockDesc* AddBlock(proto::ProgramDesc* desc, int parent) {
  proto::BlockDesc* block = desc->add_blocks();
  block->set_idx(desc->blocks_size() - 1);
  block->set_parent_idx(parent);
  return block;
}

void AddDenseVar(proto::BlockDesc* block, const std::string& name, bool feed) {
  proto::VarDesc* var = block->add_vars();
  var->set_name(name);
  var->set_need_check_feed(feed);
  var->mutable_type()->set_type(proto::VarType::DENSE_TENSOR);
  proto::VarType::TensorDesc* tensor =
      var->mutable_type()->mutable_dense_tensor()->mutable_tensor();
  tensor->set_data_type(proto::VarType::FP32);
  tensor->add_dims(1);
}

// An op of `block` running block `sub` through a `sub_block` attribute, as Paddle's
// conditional_block does: it reads the root block's `c` and `x` and writes the root's `y`.
void AddConditionalBlock(proto::BlockDesc* block, int sub) {
  OpEditor op(block->add_ops());
  op.SetType("conditional_block");
  op.SetInput("Cond", {"c"});
  op.SetInput("Input", {"x"});
  op.SetOutput("Out", {"y"});
  op.SetOutput("Scope", {"scope"});
  op.SetAttr("is_scalar_condition", true);
  proto::OpDesc::Attr* attr = block->mutable_ops(block->ops_size() - 1)->add_attrs();
  attr->set_name("sub_block");
  attr->set_type(proto::BLOCK);
  attr->set_block_idx(sub);
}

// A scale op of `block` reading `in` (declared further out) and writing `out`.
void AddScale(proto::BlockDesc* block, const std::string& in, const std::string& out) {
  OpEditor op(block->add_ops());
  op.SetType("scale");
  op.SetInput("X", {in});
  op.SetOutput("Out", {out});
  op.SetAttr("scale", 2.0f);
  op.SetAttr("bias", 0.0f);
  op.SetAttr("bias_after_scale", true);
}

// Blocks 0..levels, block b + 1 the sub-block of a conditional_block of block b; every sub-block
// scales the root's x into a var of its own. The root feeds c and x0 and computes x from x0 before
// its conditional_block, so that whether x holds a value in a sub-block depends on when the ops
// running its enclosing blocks ran: the walk up the chain of owners.
Program Nested(int levels) {
  proto::ProgramDesc desc;
  proto::BlockDesc* root = AddBlock(&desc, -1);
  AddDenseVar(root, "c", true);
  AddDenseVar(root, "x0", true);
  AddDenseVar(root, "x", false);
  AddDenseVar(root, "y", false);
  AddScale(root, "x0", "x");
  proto::VarDesc* scope = root->add_vars();
  scope->set_name("scope");
  scope->mutable_type()->set_type(proto::VarType::STEP_SCOPES);
  for (int b = 1; b <= levels; ++b) AddBlock(&desc, b - 1);
  for (int b = 0; b <= levels; ++b) {
    proto::BlockDesc* block = desc.mutable_blocks(b);
    if (b > 0) {
      const std::string out = "t" + std::to_string(b);
      AddDenseVar(block, out, false);
      AddScale(block, "x", out);
    }
    if (b < levels) AddConditionalBlock(block, b + 1);
  }
  return Program(desc);
}

TEST(BlockGraphTest, WellNestedProgramHasNoFindings) {
  const Program program = Nested(3);
  EXPECT_TRUE(CheckBlockGraph(program, kFile).empty());
  EXPECT_TRUE(RequireWellNestedBlocks(program, kFile).ok());
}

TEST(BlockGraphTest, SubBlockCycleIsReportedAtTheOpClosingIt) {
  // Block 2 (a child of block 1) runs block 1 again: run and translate would recurse forever.
  Program program = Nested(2);
  AddConditionalBlock(program.mutable_desc()->mutable_blocks(2), 1);
  program.Reindex();
  const std::string expected =
      "m.pdmodel: block 2, op 1 (conditional_block), attr 'sub_block': error: attribute "
      "'sub_block' runs block 1, which already runs this op: the sub-blocks form a cycle "
      "1 -> 2 -> 1\n";
  EXPECT_EQ(Rendered(CheckBlockGraph(program, kFile)), std::vector<std::string>{expected});
  const Status status = RequireWellNestedBlocks(program, kFile);
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.diagnostic().Render(), expected);
}

TEST(BlockGraphTest, SubBlockRunningTheRootIsACycle) {
  Program program = Nested(1);
  AddConditionalBlock(program.mutable_desc()->mutable_blocks(1), 0);
  program.Reindex();
  EXPECT_EQ(Rendered(CheckBlockGraph(program, kFile)),
            std::vector<std::string>{
                "m.pdmodel: block 1, op 1 (conditional_block), attr 'sub_block': error: "
                "attribute 'sub_block' runs block 0, which already runs this op: the sub-blocks "
                "form a cycle 0 -> 1 -> 0\n"});
}

TEST(BlockGraphTest, LongCycleIsShortenedInTheMessage) {
  Program program = Nested(40);
  AddConditionalBlock(program.mutable_desc()->mutable_blocks(40), 1);
  program.Reindex();
  EXPECT_EQ(Rendered(CheckBlockGraph(program, kFile)),
            std::vector<std::string>{
                "m.pdmodel: block 40, op 1 (conditional_block), attr 'sub_block': error: "
                "attribute 'sub_block' runs block 1, which already runs this op: the sub-blocks "
                "form a cycle 1 -> 2 -> 3 -> 4 -> 5 -> 6 -> 7 -> 8 -> ... (25 more) -> 34 -> 35 "
                "-> 36 -> 37 -> 38 -> 39 -> 40 -> 1\n"});
}

TEST(BlockGraphTest, NestingPastTheBoundIsReportedOnceWhereItCrossesIt) {
  // 10,000 levels: one finding, at the op that runs the first block past the bound.
  const Program program = Nested(10000);
  EXPECT_EQ(Rendered(CheckBlockGraph(program, kFile)),
            std::vector<std::string>{
                "m.pdmodel: block 1024, op 1 (conditional_block), attr 'sub_block': error: block "
                "1025 is nested 1025 levels deep (its sub-blocks reach 10000); at most 1024 levels "
                "are supported\n"});
  // Exactly at the bound: fine.
  EXPECT_TRUE(CheckBlockGraph(Nested(kMaxBlockNesting), kFile).empty());
  EXPECT_EQ(CheckBlockGraph(Nested(kMaxBlockNesting + 1), kFile).size(), 1u);
  // A smaller bound (the translator's).
  EXPECT_EQ(RequireWellNestedBlocks(Nested(10), kFile, 4).message(),
            "block 5 is nested 5 levels deep (its sub-blocks reach 10); at most 4 levels are "
            "supported");
}

TEST(BlockGraphTest, SharedSubBlockIsNotACycle) {
  // Two ops of the root run the same block (as an op and its grad op may): a diamond, no cycle.
  Program program = Nested(1);
  AddConditionalBlock(program.mutable_desc()->mutable_blocks(0), 1);
  program.Reindex();
  EXPECT_TRUE(CheckBlockGraph(program, kFile).empty());
}

// ---- the validator on large programs ------------------------------------------------------

TEST(ValidateLargeProgramTest, ThousandNestedBlocksAreValid) {
  // Every sub-block reads the root's x from 1 to 1,000 levels up: the dataflow checks walk the
  // chain of owners (once per input, not once per level per input).
  const Program program = Nested(1000);
  ValidateOptions options;
  options.file = kFile;
  const Diagnostics d = ValidateProgram(program, options);
  EXPECT_EQ(d.CountOf(Severity::kError), 0) << d.Render();
}

TEST(ValidateLargeProgramTest, DeepUndefinedInputIsStillFound) {
  // The same chain, but the innermost block reads a name no block declares or writes.
  Program program = Nested(1000);
  AddScale(program.mutable_desc()->mutable_blocks(1000), "nowhere", "t1000");
  program.Reindex();
  ValidateOptions options;
  options.file = kFile;
  EXPECT_EQ(Rendered(ValidateProgram(program, options)),
            (std::vector<std::string>{
                "m.pdmodel: block 1000, op 1 (scale), var 'nowhere': error: input 'nowhere' of "
                "slot 'X' is not declared\n",
                "m.pdmodel: block 1000, op 1 (scale), var 'nowhere': error: input 'nowhere' of "
                "slot 'X' is not defined before use\n"}));
}

TEST(ValidateLargeProgramTest, TenThousandNestedBlocksDoNotCrash) {
  const Program program = Nested(10000);
  ValidateOptions options;
  options.file = kFile;
  const Diagnostics d = ValidateProgram(program, options);
  ASSERT_EQ(d.CountOf(Severity::kError), 1) << d.Render();
  EXPECT_NE(d.Render().find("error: block 1025 is nested 1025 levels deep"), std::string::npos);
}

TEST(ValidateLargeProgramTest, ValidatorReportsASubBlockCycle) {
  Program program = Nested(2);
  AddConditionalBlock(program.mutable_desc()->mutable_blocks(2), 1);
  program.Reindex();
  ValidateOptions options;
  options.file = kFile;
  const Diagnostics d = ValidateProgram(program, options);
  ASSERT_EQ(d.CountOf(Severity::kError), 1) << d.Render();
  EXPECT_NE(d.Render().find("m.pdmodel: block 2, op 1 (conditional_block), attr 'sub_block': "
                            "error: attribute 'sub_block' runs block 1, which already runs this "
                            "op: the sub-blocks form a cycle 1 -> 2 -> 1\n"),
            std::string::npos)
      << d.Render();
}

TEST(ValidateLargeProgramTest, OpWithTwoHundredThousandAttributes) {
  // Distinct names the schema does not know, and one repeated at the end: exactly one duplicate.
  proto::ProgramDesc desc;
  proto::BlockDesc* root = AddBlock(&desc, -1);
  AddDenseVar(root, "x", true);
  proto::OpDesc* op = root->add_ops();
  op->set_type("custom_op");
  for (int i = 0; i < 200000; ++i) {
    proto::OpDesc::Attr* attr = op->add_attrs();
    attr->set_name("a" + std::to_string(i));
    attr->set_type(proto::INT);
    attr->set_i(i);
  }
  proto::OpDesc::Attr* again = op->add_attrs();
  again->set_name("a123456");
  again->set_type(proto::INT);
  again->set_i(0);
  ValidateOptions options;
  options.file = kFile;
  EXPECT_EQ(Rendered(ValidateProgram(Program(desc), options)),
            std::vector<std::string>{"m.pdmodel: block 0, op 0 (custom_op), attr 'a123456': "
                                     "error: attribute 'a123456' appears more than once\n"});
}

TEST(ValidateLargeProgramTest, FewUnknownAttributesStillFindDuplicates) {
  // Below the hash set's threshold the names are compared one by one.
  proto::ProgramDesc desc;
  proto::BlockDesc* root = AddBlock(&desc, -1);
  proto::OpDesc* op = root->add_ops();
  op->set_type("custom_op");
  for (const char* name : {"p", "q", "p"}) {
    proto::OpDesc::Attr* attr = op->add_attrs();
    attr->set_name(name);
    attr->set_type(proto::INT);
    attr->set_i(1);
  }
  ValidateOptions options;
  options.file = kFile;
  EXPECT_EQ(Rendered(ValidateProgram(Program(desc), options)),
            std::vector<std::string>{"m.pdmodel: block 0, op 0 (custom_op), attr 'p': error: "
                                     "attribute 'p' appears more than once\n"});
}

}  // namespace
}  // namespace irm::oldir
