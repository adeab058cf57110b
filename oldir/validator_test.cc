// Tests of the legacy-program validator and of the op schema table it checks against. Programs
// are built with the editors (or, for the block tree, written as protobuf text); every check has a
// passing and a failing case, and a representative subset asserts the exact rendered diagnostic.
#include "oldir/validator.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "oldir/attribute.h"
#include "oldir/backward.h"
#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/grad_makers.h"
#include "oldir/op_schema.h"

namespace irm::oldir {
namespace {

constexpr const char* kFile = "m.pdmodel";

// Builds a ProgramDesc block by block. Vars are FP32 dense tensors unless changed.
class Builder {
 public:
  Builder() { AddBlock(-1); }

  int AddBlock(int parent) {
    proto::BlockDesc* block = desc_.add_blocks();
    block->set_idx(desc_.blocks_size() - 1);
    block->set_parent_idx(parent);
    return block->idx();
  }

  VarEditor Var(int block, const std::string& name, std::vector<int64_t> dims = {-1, 4}) {
    VarEditor var(desc_.mutable_blocks(block)->add_vars());
    var.desc()->set_name(name);
    var.SetDenseTensor(proto::VarType::FP32, dims);
    return var;
  }
  VarEditor Param(int block, const std::string& name, std::vector<int64_t> dims = {4, 4}) {
    return Var(block, name, dims).SetPersistable(true).SetIsParameter(true);
  }
  VarEditor Data(int block, const std::string& name) {
    return Var(block, name).SetNeedCheckFeed(true);
  }

  // An op with Paddle's common attributes, as every op of a saved program carries them.
  OpEditor Op(int block, const std::string& type, int role = kForward) {
    OpEditor op(desc_.mutable_blocks(block)->add_ops());
    op.SetType(type);
    op.SetAttr("op_role", int32_t{role});
    op.SetAttr("op_role_var", std::vector<std::string>{});
    op.SetAttr("op_namescope", std::string("/"));
    op.SetAttr("op_callstack", std::vector<std::string>{"  File \"train.py\", line 7"});
    op.SetAttr("op_device", std::string(""));
    op.SetAttr("with_quant_attr", false);
    return op;
  }
  // A bare op: only what the test sets.
  OpEditor RawOp(int block, const std::string& type) {
    OpEditor op(desc_.mutable_blocks(block)->add_ops());
    op.SetType(type);
    return op;
  }

  proto::ProgramDesc* desc() { return &desc_; }
  proto::BlockDesc* block(int b) { return desc_.mutable_blocks(b); }
  Program Build() const { return Program(desc_); }

 private:
  proto::ProgramDesc desc_;
};

Diagnostics Validate(const Program& program, ValidateOptions options = {}) {
  options.file = kFile;
  return ValidateProgram(program, options);
}

Diagnostics Validate(const Builder& builder, ValidateOptions options = {}) {
  return Validate(builder.Build(), std::move(options));
}

Program FromText(const std::string& text) {
  proto::ProgramDesc desc;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &desc)) << text;
  return Program(std::move(desc));
}

// A matmul_v2 + elementwise_add + relu layer reading `in`, declaring its own vars.
std::string Layer(Builder* b, int block, const std::string& in, const std::string& name) {
  b->Param(block, name + ".w_0");
  b->Param(block, name + ".b_0", {4});
  b->Var(block, name + ".tmp_0");
  b->Var(block, name + ".tmp_1");
  b->Var(block, name + ".tmp_2");
  b->Op(block, "matmul_v2")
      .SetInput("X", {in})
      .SetInput("Y", {name + ".w_0"})
      .SetOutput("Out", {name + ".tmp_0"})
      .SetAttr("trans_x", false)
      .SetAttr("trans_y", false);
  b->Op(block, "elementwise_add")
      .SetInput("X", {name + ".tmp_0"})
      .SetInput("Y", {name + ".b_0"})
      .SetOutput("Out", {name + ".tmp_1"})
      .SetAttr("axis", int32_t{-1});
  b->Op(block, "relu").SetInput("X", {name + ".tmp_1"}).SetOutput("Out", {name + ".tmp_2"});
  return name + ".tmp_2";
}

// The renderings of all findings, for exact comparisons.
std::vector<std::string> Rendered(const Diagnostics& diagnostics) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diagnostics.items()) out.push_back(d.Render());
  return out;
}

// ---- a valid program ----------------------------------------------------------------------------

// A one-layer MLP training step as Paddle's static graph writes it: forward, loss, backward,
// SGD, then a conditional_block whose sub-block rescales the weight.
Builder MlpTrainingProgram() {
  Builder b;
  b.Data(0, "x");
  b.Param(0, "fc_0.w_0");
  b.Param(0, "fc_0.b_0", {4});
  b.Param(0, "learning_rate_0", {1});
  for (const char* name : {"fc_0.tmp_0", "fc_0.tmp_1", "relu_0.tmp_0", "fc_0.tmp_0@GRAD",
                           "fc_0.tmp_1@GRAD", "relu_0.tmp_0@GRAD"}) {
    b.Var(0, name);
  }
  b.Var(0, "fc_0.w_0@GRAD", {4, 4});
  b.Var(0, "fc_0.b_0@GRAD", {4});
  b.Var(0, "mean_0.tmp_0", {});
  b.Var(0, "mean_0.tmp_0@GRAD", {});
  b.Var(0, "cond", {1}).SetDenseTensor(proto::VarType::BOOL, {1});
  b.Var(0, "cond_scope").SetType(proto::VarType::STEP_SCOPES);

  b.Op(0, "matmul_v2")
      .SetInput("X", {"x"})
      .SetInput("Y", {"fc_0.w_0"})
      .SetOutput("Out", {"fc_0.tmp_0"})
      .SetAttr("trans_x", false)
      .SetAttr("trans_y", false);
  b.Op(0, "elementwise_add")
      .SetInput("X", {"fc_0.tmp_0"})
      .SetInput("Y", {"fc_0.b_0"})
      .SetOutput("Out", {"fc_0.tmp_1"})
      .SetAttr("axis", int32_t{1});
  b.Op(0, "relu").SetInput("X", {"fc_0.tmp_1"}).SetOutput("Out", {"relu_0.tmp_0"});
  b.Op(0, "mean", kForward | kLoss)
      .SetInput("X", {"relu_0.tmp_0"})
      .SetOutput("Out", {"mean_0.tmp_0"});
  b.Op(0, "fill_constant", kBackward | kLoss)
      .SetOutput("Out", {"mean_0.tmp_0@GRAD"})
      .SetAttr("shape", std::vector<int64_t>{})
      .SetAttr("value", 1.0f)
      .SetAttr("dtype", int32_t{proto::VarType::FP32})
      .SetAttr("force_cpu", false);
  b.Op(0, "mean_grad", kBackward)
      .SetInput("X", {"relu_0.tmp_0"})
      .SetInput("Out@GRAD", {"mean_0.tmp_0@GRAD"})
      .SetOutput("X@GRAD", {"relu_0.tmp_0@GRAD"});
  b.Op(0, "relu_grad", kBackward)
      .SetInput("Out", {"relu_0.tmp_0"})
      .SetInput("Out@GRAD", {"relu_0.tmp_0@GRAD"})
      .SetOutput("X@GRAD", {"fc_0.tmp_1@GRAD"});
  b.Op(0, "elementwise_add_grad", kBackward)
      .SetInput("X", {"fc_0.tmp_0"})
      .SetInput("Y", {"fc_0.b_0"})
      .SetInput("Out@GRAD", {"fc_0.tmp_1@GRAD"})
      .SetOutput("X@GRAD", {"fc_0.tmp_0@GRAD"})
      .SetOutput("Y@GRAD", {"fc_0.b_0@GRAD"})
      .SetAttr("axis", int32_t{1})
      .SetAttr("op_role_var", std::vector<std::string>{"fc_0.b_0", "fc_0.b_0@GRAD"});
  b.Op(0, "matmul_v2_grad", kBackward)
      .SetInput("X", {"x"})
      .SetInput("Y", {"fc_0.w_0"})
      .SetInput("Out@GRAD", {"fc_0.tmp_0@GRAD"})
      .SetOutput("X@GRAD", {kEmptyVarName})
      .SetOutput("Y@GRAD", {"fc_0.w_0@GRAD"})
      .SetAttr("trans_x", false)
      .SetAttr("trans_y", false)
      .SetAttr("op_role_var", std::vector<std::string>{"fc_0.w_0", "fc_0.w_0@GRAD"});
  for (const char* param : {"fc_0.w_0", "fc_0.b_0"}) {
    b.Op(0, "sgd", kOptimize)
        .SetInput("Param", {param})
        .SetInput("LearningRate", {"learning_rate_0"})
        .SetInput("Grad", {std::string(param) + "@GRAD"})
        .SetOutput("ParamOut", {param})
        .SetAttr("multi_precision", false);
  }
  b.Op(0, "fill_constant")
      .SetOutput("Out", {"cond"})
      .SetAttr("shape", std::vector<int64_t>{1})
      .SetAttr("value", 1.0f)
      .SetAttr("dtype", int32_t{proto::VarType::BOOL});
  const int sub = b.AddBlock(0);
  b.Op(0, "conditional_block")
      .SetInput("Cond", {"cond"})
      .SetInput("Input", {"fc_0.w_0"})
      .SetOutput("Out", {"fc_0.w_0"})
      .SetOutput("Scope", {"cond_scope"})
      .SetAttr("sub_block", BlockRef{sub})
      .SetAttr("is_scalar_condition", true);
  b.Var(sub, "scaled", {4, 4});
  b.Op(sub, "scale")
      .SetInput("X", {"fc_0.w_0"})
      .SetOutput("Out", {"scaled"})
      .SetAttr("scale", 0.5f)
      .SetAttr("bias", 0.0f)
      .SetAttr("bias_after_scale", true);
  b.Op(sub, "assign").SetInput("X", {"scaled"}).SetOutput("Out", {"fc_0.w_0"});
  return b;
}

TEST(ValidateProgramTest, MlpTrainingProgramHasNoFindings) {
  Builder b = MlpTrainingProgram();
  ValidateOptions options;
  options.note_unknown_ops = true;  // every op of it is modelled
  Diagnostics d = Validate(b, options);
  EXPECT_TRUE(d.empty()) << d.Render();
}

// A conv net's forward pass as Paddle 2.x writes it (conv2d, batch_norm with its running
// statistics in place, relu, pool2d, mul, softmax_with_cross_entropy, mean, and top_k + accuracy
// on the softmax), then append_backward: the forward ops and the grad ops the grad makers write
// (conv2d_grad, batch_norm_grad, pool2d_grad, mul_grad, ...) all agree with the schema.
TEST(ValidateProgramTest, ConvNetTrainingProgramHasNoFindings) {
  ProgramBuilder program;
  BlockBuilder& b = program.root();
  const VarOptions data{.persistable = false,
                        .stop_gradient = true,
                        .is_parameter = false,
                        .need_check_feed = true,
                        .lod_level = 0};
  const VarOptions param{.persistable = true,
                         .stop_gradient = false,
                         .is_parameter = true,
                         .need_check_feed = false,
                         .lod_level = 0};
  const VarOptions stat{.persistable = true,
                        .stop_gradient = true,
                        .is_parameter = false,
                        .need_check_feed = false,
                        .lod_level = 0};
  const auto fp32 = proto::VarType::FP32;
  b.CreateVar("image", fp32, {-1, 3, 8, 8}, data);
  b.CreateVar("label", proto::VarType::INT64, {-1, 1}, data);
  b.CreateVar("conv.w", fp32, {4, 3, 3, 3}, param);
  b.CreateVar("bn.scale", fp32, {4}, param);
  b.CreateVar("bn.bias", fp32, {4}, param);
  b.CreateVar("bn.mean", fp32, {4}, stat);
  b.CreateVar("bn.var", fp32, {4}, stat);
  b.CreateVar("fc.w", fp32, {4, 5}, param);
  for (const char* name : {"conv.out", "bn.out", "relu.out"})
    b.CreateVar(name, fp32, {-1, 4, 8, 8});
  b.CreateVar("bn.saved_mean", fp32, {4});
  b.CreateVar("bn.saved_var", fp32, {4});
  b.CreateVar("pool.out", fp32, {-1, 4, 1, 1});
  b.CreateVar("fc.out", fp32, {-1, 5});
  b.CreateVar("softmax", fp32, {-1, 5});
  b.CreateVar("loss.vec", fp32, {-1, 1});
  b.CreateVar("loss", fp32, {});
  b.CreateVar("topk.out", fp32, {-1, 1});
  b.CreateVar("topk.idx", proto::VarType::INT64, {-1, 1});
  b.CreateVar("acc", fp32, {});
  b.CreateVar("acc.correct", proto::VarType::INT32, {});
  b.CreateVar("acc.total", proto::VarType::INT32, {});
  b.AppendOp("conv2d", {{"Input", {"image"}}, {"Filter", {"conv.w"}}}, {{"Output", {"conv.out"}}},
             {{"strides", std::vector<int32_t>{1, 1}},
              {"paddings", std::vector<int32_t>{1, 1}},
              {"dilations", std::vector<int32_t>{1, 1}},
              {"groups", int32_t{1}},
              {"data_format", std::string("NCHW")}});
  b.AppendOp("batch_norm",
             {{"X", {"conv.out"}},
              {"Scale", {"bn.scale"}},
              {"Bias", {"bn.bias"}},
              {"Mean", {"bn.mean"}},
              {"Variance", {"bn.var"}}},
             {{"Y", {"bn.out"}},
              {"MeanOut", {"bn.mean"}},
              {"VarianceOut", {"bn.var"}},
              {"SavedMean", {"bn.saved_mean"}},
              {"SavedVariance", {"bn.saved_var"}}},
             {{"momentum", 0.9f},
              {"epsilon", 1e-5f},
              {"is_test", false},
              {"data_layout", std::string("NCHW")},
              {"use_global_stats", false},
              {"trainable_statistics", false}});
  b.AppendOp("relu", {{"X", {"bn.out"}}}, {{"Out", {"relu.out"}}});
  b.AppendOp("pool2d", {{"X", {"relu.out"}}}, {{"Out", {"pool.out"}}},
             {{"pooling_type", std::string("avg")},
              {"ksize", std::vector<int32_t>{1, 1}},
              {"adaptive", true},
              {"global_pooling", false}});
  b.AppendOp("mul", {{"X", {"pool.out"}}, {"Y", {"fc.w"}}}, {{"Out", {"fc.out"}}},
             {{"x_num_col_dims", int32_t{1}}, {"y_num_col_dims", int32_t{1}}});
  b.AppendOp("softmax_with_cross_entropy", {{"Logits", {"fc.out"}}, {"Label", {"label"}}},
             {{"Softmax", {"softmax"}}, {"Loss", {"loss.vec"}}});
  b.AppendOp("mean", {{"X", {"loss.vec"}}}, {{"Out", {"loss"}}});
  b.AppendOp("top_k", {{"X", {"softmax"}}}, {{"Out", {"topk.out"}}, {"Indices", {"topk.idx"}}},
             {{"k", int32_t{1}}});
  b.AppendOp("accuracy", {{"Out", {"topk.out"}}, {"Indices", {"topk.idx"}}, {"Label", {"label"}}},
             {{"Accuracy", {"acc"}}, {"Correct", {"acc.correct"}}, {"Total", {"acc.total"}}});
  StatusOr<std::vector<ParamGrad>> grads = AppendBackward(program, "loss");
  ASSERT_TRUE(grads.ok()) << grads.status().ToString();
  EXPECT_EQ(grads->size(), 4u);  // conv.w, bn.scale, bn.bias, fc.w
  const Program built = program.Build();
  std::set<std::string> types;
  for (const proto::OpDesc& op : built.desc().blocks(0).ops()) types.insert(op.type());
  for (const char* grad : {"conv2d_grad", "batch_norm_grad", "pool2d_grad", "mul_grad"}) {
    EXPECT_TRUE(types.count(grad)) << grad;
  }
  ValidateOptions options;
  options.note_unknown_ops = true;  // every op of it is modelled
  Diagnostics d = Validate(built, options);
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, AProgramWithSeveralProblemsReportsAllOfThem) {
  Builder b = MlpTrainingProgram();
  proto::BlockDesc* block = b.block(0);
  block->mutable_vars(1)->set_name("x");  // fc_0.w_0 becomes a second "x"
  // matmul_v2 (op 0): trans_x as INT.
  OpEditor(block->mutable_ops(0)).SetAttr("trans_x", int32_t{0});
  // relu (op 2) reads a var nobody writes.
  OpEditor(block->mutable_ops(2)).SetInput("X", {"nowhere"});
  // fill_constant (op 4) loses its output.
  block->mutable_ops(4)->clear_outputs();
  b.block(1)->set_parent_idx(1);

  Diagnostics d = Validate(b);
  EXPECT_EQ(
      Rendered(d),
      (std::vector<std::string>{
          "m.pdmodel: block 0, var 'x': error: var 'x' is declared more than once in block 0\n",
          "m.pdmodel: block 0, op 0 (matmul_v2), attr 'trans_x': error: attribute 'trans_x' has "
          "type INT, expected BOOLEAN\n",
          // fc_0.w_0 is no longer declared.
          "m.pdmodel: block 0, op 0 (matmul_v2), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot "
          "'Y' is not declared\n",
          "m.pdmodel: block 0, op 0 (matmul_v2), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot "
          "'Y' is not defined before use\n",
          "m.pdmodel: block 0, op 2 (relu), var 'nowhere': error: input 'nowhere' of slot 'X' is "
          "not declared\n",
          "m.pdmodel: block 0, op 2 (relu), var 'nowhere': error: input 'nowhere' of slot 'X' is "
          "not defined before use\n",
          "m.pdmodel: block 0, op 4 (fill_constant): error: required output slot 'Out' of "
          "'fill_constant' is missing\n",
          "m.pdmodel: block 0, op 5 (mean_grad), var 'mean_0.tmp_0@GRAD': error: input "
          "'mean_0.tmp_0@GRAD' of slot 'Out@GRAD' is not defined before use\n",
          "m.pdmodel: block 0, op 8 (matmul_v2_grad), var 'fc_0.w_0': error: input 'fc_0.w_0' of "
          "slot 'Y' is not declared\n",
          "m.pdmodel: block 0, op 8 (matmul_v2_grad), var 'fc_0.w_0': error: input 'fc_0.w_0' of "
          "slot 'Y' is not defined before use\n",
          "m.pdmodel: block 0, op 9 (sgd), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot "
          "'Param' is not declared\n",
          "m.pdmodel: block 0, op 9 (sgd), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot "
          "'Param' is not defined before use\n",
          "m.pdmodel: block 0, op 9 (sgd), var 'fc_0.w_0': error: output 'fc_0.w_0' of slot "
          "'ParamOut' is not declared\n",
          "m.pdmodel: block 0, op 12 (conditional_block), attr 'sub_block': warning: sub-block 1 "
          "has parent block 1, not the op's block 0\n",
          "m.pdmodel: block 0, op 12 (conditional_block), var 'fc_0.w_0': error: input "
          "'fc_0.w_0' of slot 'Input' is not declared\n",
          "m.pdmodel: block 0, op 12 (conditional_block), var 'fc_0.w_0': error: output "
          "'fc_0.w_0' of slot 'Out' is not declared\n",
          "m.pdmodel: block 1: error: block 1 is its own parent\n",
          "m.pdmodel: block 1, op 0 (scale), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot 'X' "
          "is not declared\n",
          "m.pdmodel: block 1, op 0 (scale), var 'fc_0.w_0': error: input 'fc_0.w_0' of slot 'X' "
          "is not defined before use\n",
          "m.pdmodel: block 1, op 1 (assign), var 'fc_0.w_0': error: output 'fc_0.w_0' of slot "
          "'Out' is not declared\n",
      }));
  EXPECT_EQ(d.CountOf(Severity::kWarning), 1);
}

// Many layers: large name tables, every lookup path of a long chain.
TEST(ValidateProgramTest, LongChainHasNoFindings) {
  Builder b;
  std::string h = b.Data(0, "x").desc()->name();
  for (int i = 0; i < 300; ++i) h = Layer(&b, 0, h, "fc_" + std::to_string(i));
  Diagnostics d = Validate(b);
  EXPECT_TRUE(d.empty()) << d.Render();
}

// Names that are written but not declared grow a block's name table past its initial size.
TEST(ValidateProgramTest, ManyUndeclaredNames) {
  Builder b;
  b.Data(0, "x");
  for (int i = 0; i < 100; ++i) {
    b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"u" + std::to_string(i)});
  }
  for (int i = 0; i < 100; ++i) {
    b.Op(0, "relu").SetInput("X", {"u" + std::to_string(i)}).SetOutput("Out", {"x"});
  }
  Diagnostics d = Validate(b);
  ASSERT_EQ(d.size(), 200u);
  for (int i = 0; i < 100; ++i) {
    const std::string u = "u" + std::to_string(i);
    EXPECT_EQ(d.items()[i].message, "output '" + u + "' of slot 'Out' is not declared");
    // Written before, so defined; but not declared.
    EXPECT_EQ(d.items()[100 + i].message, "input '" + u + "' of slot 'X' is not declared");
    EXPECT_EQ(d.items()[100 + i].location.op, 100 + i);
  }
}

// ---- the block tree ---------------------------------------------------------------------------

TEST(ValidateProgramTest, EmptyProgram) {
  Diagnostics d = Validate(Program());
  EXPECT_EQ(Rendered(d), std::vector<std::string>{"m.pdmodel: error: program has no blocks\n"});
}

TEST(ValidateProgramTest, BlockIdxMustEqualItsPosition) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 2 parent_idx: 0 }
  )pb"));
  EXPECT_EQ(Rendered(d),
            std::vector<std::string>{"m.pdmodel: block 1: error: block at position 1 has idx 2\n"});
}

TEST(ValidateProgramTest, RootBlockHasNoParent) {
  Diagnostics d = Validate(FromText("blocks { idx: 0 parent_idx: 0 }"));
  EXPECT_EQ(Rendered(d),
            std::vector<std::string>{
                "m.pdmodel: block 0: error: root block has parent_idx 0, expected -1\n"});
}

TEST(ValidateProgramTest, BlockIsItsOwnParent) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 1 parent_idx: 1 }
  )pb"));
  EXPECT_EQ(Rendered(d),
            std::vector<std::string>{"m.pdmodel: block 1: error: block 1 is its own parent\n"});
}

TEST(ValidateProgramTest, ParentOutOfRangeOrMissing) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 1 parent_idx: 5 }
    blocks { idx: 2 parent_idx: -1 }
    blocks { idx: 3 parent_idx: -7 }
  )pb"));
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 1: error: block 1 has parent_idx 5, out of range (the program "
                "has 4 blocks)\n",
                "m.pdmodel: block 2: error: block 2 has no parent (parent_idx -1); only block 0 "
                "may be the root\n",
                "m.pdmodel: block 3: error: block 3 has parent_idx -7, out of range (the program "
                "has 4 blocks)\n",
            }));
}

TEST(ValidateProgramTest, ParentCycle) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 1 parent_idx: 2 }
    blocks { idx: 2 parent_idx: 1 }
    blocks { idx: 3 parent_idx: 2 }
  )pb"));
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 1: error: the parent chain of block 1 never reaches the root "
                "block: 1 -> 2 -> 1\n",
                // Blocks whose chain runs into one already reported stop there (each block is
                // walked once, so a long loop costs no more than a long chain).
                "m.pdmodel: block 2: error: the parent chain of block 2 never reaches the root "
                "block: 2 -> 1, whose chain never does\n",
                "m.pdmodel: block 3: error: the parent chain of block 3 never reaches the root "
                "block: 3 -> 2, whose chain never does\n",
            }));
}

TEST(ValidateProgramTest, DeepValidBlockTree) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 1 parent_idx: 0 }
    blocks { idx: 2 parent_idx: 1 }
    blocks { idx: 3 parent_idx: 2 forward_block_idx: 1 }
    blocks { idx: 4 parent_idx: 0 forward_block_idx: -1 }
  )pb"));
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, ForwardBlockOutOfRange) {
  Diagnostics d = Validate(FromText(R"pb(
    blocks { idx: 0 parent_idx: -1 }
    blocks { idx: 1 parent_idx: 0 forward_block_idx: 3 }
    blocks { idx: 2 parent_idx: 0 forward_block_idx: -3 }
  )pb"));
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 1: error: block 1 has forward_block_idx 3, out of range (the "
                "program has 3 blocks)\n",
                "m.pdmodel: block 2: error: block 2 has forward_block_idx -3, out of range (the "
                "program has 3 blocks)\n",
            }));
}

// ---- vars ---------------------------------------------------------------------------------------

TEST(ValidateProgramTest, DuplicateVarInABlock) {
  Builder b;
  b.Var(0, "a");
  b.Var(0, "b");
  b.Var(0, "a");
  b.Var(0, "a");
  const int sub = b.AddBlock(0);
  b.Var(sub, "b");  // shadowing a parent's var is fine
  Diagnostics d = Validate(b);
  ASSERT_EQ(d.size(), 2u) << d.Render();
  for (const Diagnostic& diagnostic : d.items()) {
    EXPECT_EQ(diagnostic.Render(),
              "m.pdmodel: block 0, var 'a': error: var 'a' is declared more than once in block "
              "0\n");
  }
}

TEST(ValidateProgramTest, TensorVarWithoutTensorDescription) {
  Builder b;
  VarEditor(b.block(0)->add_vars()).SetType(proto::VarType::DENSE_TENSOR).desc()->set_name("d");
  VarEditor(b.block(0)->add_vars()).SetType(proto::VarType::SELECTED_ROWS).desc()->set_name("s");
  VarEditor(b.block(0)->add_vars())
      .SetType(proto::VarType::DENSE_TENSOR_ARRAY)
      .desc()
      ->set_name("a");
  // Containers that carry no tensor description need none.
  for (auto type : {proto::VarType::FEED_MINIBATCH, proto::VarType::FETCH_LIST,
                    proto::VarType::STEP_SCOPES, proto::VarType::RAW}) {
    VarEditor(b.block(0)->add_vars())
        .SetType(type)
        .desc()
        ->set_name(proto::VarType::Type_Name(type));
  }
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, var 'd': error: var 'd' of type DENSE_TENSOR has no tensor "
                "description\n",
                "m.pdmodel: block 0, var 's': error: var 's' of type SELECTED_ROWS has no tensor "
                "description\n",
                "m.pdmodel: block 0, var 'a': error: var 'a' of type DENSE_TENSOR_ARRAY has no "
                "tensor description\n",
            }));
}

TEST(ValidateProgramTest, ElementTypeMustBePod) {
  const std::vector<proto::VarType::Type> pod = {
      proto::VarType::BOOL,       proto::VarType::INT16,      proto::VarType::INT32,
      proto::VarType::INT64,      proto::VarType::FP16,       proto::VarType::FP32,
      proto::VarType::FP64,       proto::VarType::SIZE_T,     proto::VarType::UINT8,
      proto::VarType::INT8,       proto::VarType::BF16,       proto::VarType::COMPLEX64,
      proto::VarType::COMPLEX128, proto::VarType::FP8_E4M3FN, proto::VarType::FP8_E5M2,
      proto::VarType::UINT32,     proto::VarType::UINT64};
  Builder good;
  for (auto type : pod) {
    good.Var(0, proto::VarType::Type_Name(type)).SetDenseTensor(type, {2});
  }
  Diagnostics d = Validate(good);
  EXPECT_TRUE(d.empty()) << d.Render();

  Builder bad;
  int expected = 0;
  for (int t = 0; t <= 40; ++t) {
    if (!proto::VarType::Type_IsValid(t)) continue;
    const auto type = static_cast<proto::VarType::Type>(t);
    if (std::find(pod.begin(), pod.end(), type) != pod.end()) continue;
    bad.Var(0, "v" + std::to_string(t)).SetDenseTensor(type, {2});
    ++expected;
  }
  d = Validate(bad);
  EXPECT_EQ(d.size(), static_cast<size_t>(expected)) << d.Render();
  EXPECT_EQ(d.items()[0].Render(),
            "m.pdmodel: block 0, var 'v7': error: var 'v7' has element type DENSE_TENSOR, which "
            "is not a POD type\n");
}

TEST(ValidateProgramTest, SelectedRowsAndTensorArrayElementTypes) {
  Builder b;
  proto::VarDesc* rows = b.block(0)->add_vars();
  rows->set_name("rows");
  rows->mutable_type()->set_type(proto::VarType::SELECTED_ROWS);
  rows->mutable_type()->mutable_selected_rows()->set_data_type(proto::VarType::FP32);
  proto::VarDesc* array = b.block(0)->add_vars();
  array->set_name("array");
  array->mutable_type()->set_type(proto::VarType::DENSE_TENSOR_ARRAY);
  array->mutable_type()->mutable_tensor_array()->mutable_tensor()->set_data_type(
      proto::VarType::READER);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, var 'array': error: var 'array' has element "
                             "type READER, which is not a POD type\n"});
}

TEST(ValidateProgramTest, DimsAndLodLevel) {
  Builder b;
  b.Var(0, "ok", {-1, 0, 7});
  b.Var(0, "bad", {3, -2, -5});
  b.Var(0, "lod", {2}).SetDenseTensor(proto::VarType::FP32, {2}, -1);
  b.Var(0, "lod_ok", {2}).SetDenseTensor(proto::VarType::FP32, {2}, 2);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, var 'bad': error: var 'bad' has dimension -2 at index 1 "
                "(dimensions must be >= -1)\n",
                "m.pdmodel: block 0, var 'bad': error: var 'bad' has dimension -5 at index 2 "
                "(dimensions must be >= -1)\n",
                "m.pdmodel: block 0, var 'lod': error: var 'lod' has lod level -1 (must be >= 0)\n",
            }));
}

TEST(ValidateProgramTest, VarAttributes) {
  Builder b;
  proto::VarDesc* var = b.Var(0, "v").desc();
  auto add = [&](const std::string& name, proto::AttrType type) {
    proto::VarDesc::Attr* attr = var->add_attrs();
    attr->set_name(name);
    attr->set_type(type);
    return attr;
  };
  add("i_ok", proto::INT)->set_i(3);
  add("s_ok", proto::STRING)->set_s("x");
  add("ints_ok", proto::INTS)->add_ints(1);
  add("ints_empty_ok", proto::INTS);
  add("i_missing", proto::INT);
  add("s_missing", proto::STRING);
  add("f", proto::FLOAT)->set_i(1);
  add("blocks", proto::BLOCKS);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, var 'v', attr 'i_missing': error: var attribute 'i_missing' "
                "of type INT has no value (field 'i' is not set)\n",
                "m.pdmodel: block 0, var 'v', attr 's_missing': error: var attribute 's_missing' "
                "of type STRING has no value (field 's' is not set)\n",
                "m.pdmodel: block 0, var 'v', attr 'f': error: var attribute 'f' has type FLOAT; "
                "var attributes hold only INT, STRING or INTS\n",
                "m.pdmodel: block 0, var 'v', attr 'blocks': error: var attribute 'blocks' has "
                "type BLOCKS; var attributes hold only INT, STRING or INTS\n",
            }));
}

#ifdef NDEBUG
// Values outside an enum cannot come from a parser (proto2 keeps them as unknown fields); only a
// release build's setters store them, so only there can these checks be reached.
TEST(ValidateProgramTest, EnumValuesOutsideTheSchema) {
  Builder b;
  b.Var(0, "v").desc()->mutable_type()->set_type(static_cast<proto::VarType::Type>(99));
  b.Var(0, "w").desc()->mutable_type()->mutable_dense_tensor()->mutable_tensor()->set_data_type(
      static_cast<proto::VarType::Type>(77));
  proto::VarDesc::Attr* var_attr = b.Var(0, "u").desc()->add_attrs();
  var_attr->set_name("a");
  var_attr->set_type(static_cast<proto::AttrType>(42));
  proto::OpDesc::Attr* attr = b.RawOp(0, "custom").desc()->add_attrs();
  attr->set_name("weird");
  attr->set_type(static_cast<proto::AttrType>(42));
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, var 'v': error: var 'v' has unknown type 99\n",
                "m.pdmodel: block 0, var 'w': error: var 'w' has element type 77, which is not a "
                "POD type\n",
                "m.pdmodel: block 0, var 'u', attr 'a': error: var attribute 'a' has unknown "
                "AttrType 42\n",
                "m.pdmodel: block 0, op 0 (custom), attr 'weird': error: attribute 'weird' has "
                "unknown AttrType 42\n",
            }));
}
#endif

// ---- op encoding --------------------------------------------------------------------------------

TEST(ValidateProgramTest, OpWithEmptyType) {
  Builder b;
  b.RawOp(0, "");
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            std::vector<std::string>{"m.pdmodel: block 0, op 0: error: op has an empty type\n"});
}

TEST(ValidateProgramTest, DuplicateSlots) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  for (const char* type : {"relu", "my_custom_op"}) {  // with a schema, and without
    proto::OpDesc* op = b.Op(0, type).SetInput("X", {"x"}).SetOutput("Out", {"y"}).desc();
    *op->add_inputs() = op->inputs(0);
    *op->add_outputs() = op->outputs(0);
  }
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (relu): error: input slot 'X' appears more than once\n",
                "m.pdmodel: block 0, op 0 (relu): error: output slot 'Out' appears more than "
                "once\n",
                "m.pdmodel: block 0, op 1 (my_custom_op): error: input slot 'X' appears more than "
                "once\n",
                "m.pdmodel: block 0, op 1 (my_custom_op): error: output slot 'Out' appears more "
                "than once\n",
            }));
}

TEST(ValidateProgramTest, DuplicateAttributes) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  proto::OpDesc* op = b.Op(0, "softmax").SetInput("X", {"x"}).SetOutput("Out", {"y"}).desc();
  OpEditor(op).SetAttr("axis", int32_t{-1}).SetAttr("extra", true);
  for (int a : {0, 6, 7}) *op->add_attrs() = op->attrs(a);  // op_role, axis, extra
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (softmax), attr 'op_role': error: attribute 'op_role' "
                "appears more than once\n",
                "m.pdmodel: block 0, op 0 (softmax), attr 'axis': error: attribute 'axis' appears "
                "more than once\n",
                "m.pdmodel: block 0, op 0 (softmax), attr 'extra': error: attribute 'extra' "
                "appears more than once\n",
            }));
}

TEST(ValidateProgramTest, AttributeWithoutValue) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  proto::OpDesc::Attr* attr =
      b.Op(0, "softmax").SetInput("X", {"x"}).SetOutput("Out", {"y"}).desc()->add_attrs();
  attr->set_name("axis");
  attr->set_type(proto::INT);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (softmax), attr 'axis': error: attribute "
                             "'axis' of type INT has no value (field 'i' is not set)\n"});
}

// The validator's presence test must agree with ReadAttrValue, the reference reader, for every
// AttrType: an attribute with its type and no value field.
TEST(ValidateProgramTest, AttributeValuePresenceAgreesWithReadAttrValue) {
  for (int t = proto::AttrType_MIN; t <= proto::AttrType_MAX; ++t) {
    const auto type = static_cast<proto::AttrType>(t);
    Builder b;
    proto::OpDesc::Attr* attr = b.RawOp(0, "custom").desc()->add_attrs();
    attr->set_name("a");
    attr->set_type(type);
    const bool readable = ReadAttrValue(*attr).ok();
    Diagnostics d = Validate(b);
    EXPECT_EQ(d.empty(), readable) << AttrTypeName(type) << ": " << d.Render();
    if (!readable) {
      ASSERT_EQ(d.size(), 1u);
      EXPECT_NE(d.items()[0].message.find("has no value"), std::string::npos);
    }
  }
}

// Every combination of an AttrType with one value field set: a warning exactly when
// StrayValueFields (the reference) names the field.
TEST(ValidateProgramTest, StrayValueFieldsAreWarnings) {
  auto set_field = [](int field, proto::OpDesc::Attr* a) {
    switch (field) {
      case 0:
        a->set_i(1);
        break;
      case 1:
        a->set_f(1);
        break;
      case 2:
        a->set_s("s");
        break;
      case 3:
        a->add_ints(1);
        break;
      case 4:
        a->add_floats(1);
        break;
      case 5:
        a->add_strings("s");
        break;
      case 6:
        a->set_b(true);
        break;
      case 7:
        a->add_bools(true);
        break;
      case 8:
        a->set_block_idx(0);
        break;
      case 9:
        a->set_l(1);
        break;
      case 10:
        a->add_blocks_idx(0);
        break;
      case 11:
        a->add_longs(1);
        break;
      case 12:
        a->add_float64s(1);
        break;
      case 13:
        a->set_var_name("v");
        break;
      case 14:
        a->add_vars_name("v");
        break;
      case 15:
        a->set_float64(1);
        break;
      case 16:
        *a->mutable_scalar() = MakeScalar(true);
        break;
      case 17:
        *a->add_scalars() = MakeScalar(true);
        break;
    }
  };
  for (int t = 0; t <= 17; ++t) {
    for (int field = 0; field <= 17; ++field) {
      Builder b;
      b.AddBlock(0);  // so that block references to block 1 are valid
      proto::OpDesc::Attr* attr = b.RawOp(0, "custom").desc()->add_attrs();
      attr->set_name("a");
      attr->set_type(static_cast<proto::AttrType>(t));
      set_field(field, attr);
      if (t != field) set_field(t, attr);  // its own field too, so that it has a value
      if (t == proto::BLOCK || t == proto::BLOCKS) {
        attr->set_block_idx(1);
        attr->clear_blocks_idx();
        if (t == proto::BLOCKS) attr->add_blocks_idx(1);
        if (t == proto::BLOCKS && field != proto::BLOCK) attr->clear_block_idx();
      }
      if (field == proto::BLOCKS && t != proto::BLOCKS) attr->add_blocks_idx(1);
      const std::vector<std::string> stray = StrayValueFields(*attr);
      Diagnostics d = Validate(b);
      SCOPED_TRACE(std::string(AttrTypeName(attr->type())) + " with field #" +
                   std::to_string(field));
      EXPECT_EQ(d.CountOf(Severity::kWarning), stray.empty() ? 0 : 1) << d.Render();
      EXPECT_EQ(d.CountOf(Severity::kError), 0) << d.Render();
    }
  }
  Builder b;
  proto::OpDesc::Attr* attr = b.RawOp(0, "custom").desc()->add_attrs();
  attr->set_name("axis");
  attr->set_type(proto::INT);
  attr->set_i(1);
  attr->set_f(2);
  attr->add_ints(3);
  EXPECT_EQ(Rendered(Validate(b)),
            std::vector<std::string>{"m.pdmodel: block 0, op 0 (custom), attr 'axis': warning: "
                                     "attribute 'axis' of type INT also sets field(s) f, ints, "
                                     "which its type does not use\n"});
}

TEST(ValidateProgramTest, BlockReferences) {
  Builder b;
  const int sub = b.AddBlock(0);
  const int nested = b.AddBlock(sub);
  b.RawOp(0, "custom")
      .SetAttr("sub_block", BlockRef{sub})           // fine
      .SetAttr("far", BlockRef{nested})              // fine: only sub_block is about parents
      .SetAttr("missing", BlockRef{3})               // no block 3
      .SetAttr("self", BlockRef{0})                  // the op's own block
      .SetAttr("blocks", BlockRefs{{1, 0, -1, 2}});  // two bad ones
  b.RawOp(sub, "custom").SetAttr("sub_block", BlockRef{0});     // refers to its parent
  b.RawOp(0, "custom").SetAttr("sub_block", BlockRef{nested});  // a grandchild
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (custom), attr 'missing': error: attribute 'missing' "
                "refers to block 3, but the program has 3 blocks\n",
                "m.pdmodel: block 0, op 0 (custom), attr 'self': error: attribute 'self' refers "
                "to the op's own block 0\n",
                "m.pdmodel: block 0, op 0 (custom), attr 'blocks': error: attribute 'blocks' "
                "refers to the op's own block 0\n",
                "m.pdmodel: block 0, op 0 (custom), attr 'blocks': error: attribute 'blocks' "
                "refers to block -1, but the program has 3 blocks\n",
                "m.pdmodel: block 0, op 1 (custom), attr 'sub_block': warning: sub-block 2 has "
                "parent block 1, not the op's block 0\n",
                "m.pdmodel: block 1, op 0 (custom), attr 'sub_block': warning: sub-block 0 has "
                "parent block -1, not the op's block 1\n",
                // Block 0 runs block 1, which runs block 0 again: a cycle, whatever the parents.
                "m.pdmodel: block 1, op 0 (custom), attr 'sub_block': error: attribute "
                "'sub_block' runs block 0, which already runs this op: the sub-blocks form a "
                "cycle 0 -> 1 -> 0\n",
            }));
}

// ---- op schemas ---------------------------------------------------------------------------------

TEST(ValidateProgramTest, RequiredSlots) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  b.Op(0, "matmul_v2").SetInput("X", {"x"}).SetOutput("Out", {"y"});  // no Y
  b.Op(0, "matmul_v2").SetInput("X", {"x"}).SetInput("Y", {}).SetOutput("Out", {"y"});
  b.Op(0, "matmul_v2").SetInput("X", {"x"}).SetInput("Y", {kEmptyVarName}).SetOutput("Out", {});
  b.Op(0, "sgd")  // MasterParam / MasterParamOut are dispensable
      .SetInput("Param", {"x"})
      .SetInput("LearningRate", {"x"})
      .SetInput("Grad", {"x"})
      .SetOutput("ParamOut", {"x"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (matmul_v2): error: required input slot 'Y' of "
                "'matmul_v2' is missing\n",
                "m.pdmodel: block 0, op 1 (matmul_v2): error: required input slot 'Y' of "
                "'matmul_v2' is empty\n",
                "m.pdmodel: block 0, op 2 (matmul_v2): error: required input slot 'Y' of "
                "'matmul_v2' is empty\n",
                "m.pdmodel: block 0, op 2 (matmul_v2): error: required output slot 'Out' of "
                "'matmul_v2' is empty\n",
            }));
}

TEST(ValidateProgramTest, SlotArity) {
  Builder b;
  b.Data(0, "x");
  b.Data(0, "z");
  b.Var(0, "y");
  b.Op(0, "relu").SetInput("X", {"x", "z"}).SetOutput("Out", {"y"});
  b.Op(0, "sum").SetInput("X", {"x", "z", "y"}).SetOutput("Out", {"y"});  // X is duplicable
  b.Op(0, "concat").SetInput("X", {"x", "z"}).SetOutput("Out", {"y"}).SetAttr("axis", 0);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (relu): error: input slot 'X' holds 2 "
                             "arguments; 'relu' takes at most 1\n"});
}

TEST(ValidateProgramTest, UnknownSlotsAreWarnings) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  b.Var(0, "z");
  b.Op(0, "relu")
      .SetInput("X", {"x"})
      .SetInput("Alpha", {"x"})
      .SetOutput("Out", {"y"})
      .SetOutput("Mask", {"z"});
  b.Op(0, "my_custom_op").SetInput("Anything", {"x"}).SetOutput("Goes", {"z"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (relu): warning: unknown input slot 'Alpha' for op "
                "'relu'\n",
                "m.pdmodel: block 0, op 0 (relu): warning: unknown output slot 'Mask' for op "
                "'relu'\n",
            }));
}

TEST(ValidateProgramTest, RequiredAttributes) {
  Builder b;
  b.Var(0, "feed").SetType(proto::VarType::FEED_MINIBATCH).SetPersistable(true);
  b.Var(0, "x");
  b.Var(0, "y");
  b.Op(0, "feed").SetInput("X", {"feed"}).SetOutput("Out", {"x"});  // no col
  b.Op(0, "cast").SetInput("X", {"x"}).SetOutput("Out", {"y"}).SetAttr("out_dtype", 5);
  b.Op(0, "transpose2")
      .SetInput("X", {"x"})
      .SetOutput("Out", {"y"})
      .SetAttr("axis", std::vector<int32_t>{1, 0});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (feed), attr 'col': error: required attribute 'col' of "
                "'feed' is missing\n",
                "m.pdmodel: block 0, op 1 (cast), attr 'in_dtype': error: required attribute "
                "'in_dtype' of 'cast' is missing\n",
            }));
}

TEST(ValidateProgramTest, AttributeTypes) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  b.Op(0, "matmul_v2")
      .SetInput("X", {"x"})
      .SetInput("Y", {"x"})
      .SetOutput("Out", {"y"})
      .SetAttr("trans_x", int32_t{0})  // BOOLEAN expected
      .SetAttr("trans_y", true)
      .SetAttr("op_role", std::string("0"))  // a common attribute: INT expected
      .SetAttr("whatever", 1.5f);            // not in the schema: not checked
  b.Op(0, "lookup_table_v2")
      .SetInput("W", {"x"})
      .SetInput("Ids", {"x"})
      .SetOutput("Out", {"y"})
      .SetAttr("padding_idx", int32_t{-1});  // Paddle declares it int64_t
  b.RawOp(0, "my_custom_op").SetAttr("op_callstack", std::string("one line"));
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (matmul_v2), attr 'op_role': error: attribute "
                "'op_role' has type STRING, expected INT\n",
                "m.pdmodel: block 0, op 0 (matmul_v2), attr 'trans_x': error: attribute "
                "'trans_x' has type INT, expected BOOLEAN\n",
                "m.pdmodel: block 0, op 1 (lookup_table_v2), attr 'padding_idx': error: "
                "attribute 'padding_idx' has type INT, expected LONG\n",
                "m.pdmodel: block 0, op 2 (my_custom_op), attr 'op_callstack': error: attribute "
                "'op_callstack' has type STRING, expected STRINGS\n",
            }));
}

// The ops gradient-merge and loop programs add: the step counter (increment, elementwise_mod,
// equal), the other compare and logical ops, fill_any_like and share_data.
Builder CounterCompareAndLogicalProgram() {
  Builder b;
  b.Data(0, "x");
  for (const char* name : {"step", "k", "zero", "quotient"}) {
    b.Var(0, name, {1}).SetDenseTensor(proto::VarType::INT32, {1});
  }
  for (const char* name : {"eq", "ne", "lt", "gt", "both", "neither"}) {
    b.Var(0, name, {1}).SetDenseTensor(proto::VarType::BOOL, {1});
  }
  for (const char* name : {"ones", "twos", "x_view"}) b.Var(0, name);
  for (const char* name : {"step", "k", "zero"}) {
    b.Op(0, "fill_constant")
        .SetOutput("Out", {name})
        .SetAttr("shape", std::vector<int64_t>{1})
        .SetAttr("value", 1.0f)
        .SetAttr("dtype", int32_t{proto::VarType::INT32});
  }
  b.Op(0, "increment", kBackward)
      .SetInput("X", {"step"})
      .SetOutput("Out", {"step"})
      .SetAttr("step", 1.0f);
  b.Op(0, "elementwise_mod", kBackward)
      .SetInput("X", {"step"})
      .SetInput("Y", {"k"})
      .SetOutput("Out", {"step"})
      .SetAttr("axis", int32_t{-1});
  b.Op(0, "elementwise_floordiv")
      .SetInput("X", {"step"})
      .SetInput("Y", {"k"})
      .SetOutput("Out", {"quotient"})
      .SetAttr("axis", int32_t{-1})
      .SetAttr("use_mkldnn", false);
  // The gradient-merge pass sets no attribute of equal but op_role: axis and force_cpu default.
  b.Op(0, "equal", kBackward)
      .SetInput("X", {"step"})
      .SetInput("Y", {"zero"})
      .SetOutput("Out", {"eq"});
  b.Op(0, "not_equal")
      .SetInput("X", {"step"})
      .SetInput("Y", {"zero"})
      .SetOutput("Out", {"ne"})
      .SetAttr("axis", int32_t{-1})
      .SetAttr("force_cpu", false);
  b.Op(0, "less_than")
      .SetInput("X", {"step"})
      .SetInput("Y", {"k"})
      .SetOutput("Out", {"lt"})
      .SetAttr("force_cpu", true);
  b.Op(0, "greater_than")
      .SetInput("X", {"step"})
      .SetInput("Y", {"k"})
      .SetOutput("Out", {"gt"})
      .SetAttr("axis", int32_t{-1});
  b.Op(0, "logical_and").SetInput("X", {"lt"}).SetInput("Y", {"gt"}).SetOutput("Out", {"both"});
  b.Op(0, "logical_not").SetInput("X", {"both"}).SetOutput("Out", {"neither"});
  // fill_any_like's value: FLOAT from older Paddle, SCALAR since its maker declares a Scalar.
  b.Op(0, "fill_any_like")
      .SetInput("X", {"x"})
      .SetOutput("Out", {"ones"})
      .SetAttr("value", 1.0f)
      .SetAttr("dtype", int32_t{-1});
  b.Op(0, "fill_any_like")
      .SetInput("X", {"x"})
      .SetOutput("Out", {"twos"})
      .SetAttr("value", MakeScalar(2.0))
      .SetAttr("dtype", int32_t{proto::VarType::FP32});
  b.Op(0, "share_data").SetInput("X", {"x"}).SetOutput("Out", {"x_view"});
  return b;
}

TEST(ValidateProgramTest, CounterCompareAndLogicalOpsHaveNoFindings) {
  Builder b = CounterCompareAndLogicalProgram();
  ValidateOptions options;
  options.note_unknown_ops = true;  // every op of it is modelled
  Diagnostics d = Validate(b, options);
  EXPECT_TRUE(d.empty()) << d.Render();
  EXPECT_EQ(b.block(0)->ops_size(), 15);
}

TEST(ValidateProgramTest, CompareAndCreationAttributeTypes) {
  Builder b = CounterCompareAndLogicalProgram();
  proto::BlockDesc* block = b.block(0);
  // op 6 is equal, op 13 the second fill_any_like.
  ASSERT_EQ(block->ops(6).type(), "equal");
  ASSERT_EQ(block->ops(13).type(), "fill_any_like");
  OpEditor(block->mutable_ops(6)).SetAttr("force_cpu", int32_t{1});  // BOOLEAN expected
  OpEditor(block->mutable_ops(13)).SetAttr("dtype", int64_t{5});     // INT expected
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 6 (equal), attr 'force_cpu': error: attribute "
                "'force_cpu' has type INT, expected BOOLEAN\n",
                "m.pdmodel: block 0, op 13 (fill_any_like), attr 'dtype': error: attribute "
                "'dtype' has type LONG, expected INT\n",
            }));
}

TEST(ValidateProgramTest, UnknownOpsGetANoteOnlyWhenAsked) {
  Builder b;
  b.RawOp(0, "my_custom_op");
  EXPECT_TRUE(Validate(b).empty());
  ValidateOptions options;
  options.note_unknown_ops = true;
  Diagnostics d = Validate(b, options);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (my_custom_op): note: op 'my_custom_op' "
                             "has no schema; its slots and attributes are not checked against "
                             "one\n"});
}

// ---- dataflow -----------------------------------------------------------------------------------

TEST(ValidateProgramTest, InputNotDefinedBeforeUse) {
  Builder b;
  b.Var(0, "a");
  b.Var(0, "c");
  b.Op(0, "relu").SetInput("X", {"a"}).SetOutput("Out", {"c"});  // a is written only later
  b.Op(0, "relu").SetInput("X", {"c"}).SetOutput("Out", {"a"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (relu), var 'a': error: input 'a' of slot "
                             "'X' is not defined before use\n"});
}

TEST(ValidateProgramTest, InPlaceOpNeedsItsInputDefinedBefore) {
  Builder b;
  b.Var(0, "g");
  b.Var(0, "h");
  b.Op(0, "c_allreduce_sum").SetInput("X", {"g"}).SetOutput("Out", {"g"});
  b.Op(0, "scale").SetInput("X", {"g"}).SetOutput("Out", {"h"});
  b.Op(0, "c_allreduce_sum").SetInput("X", {"h"}).SetOutput("Out", {"h"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (c_allreduce_sum), var 'g': error: input "
                             "'g' of slot 'X' is not defined before use\n"});
}

TEST(ValidateProgramTest, ExternallyDefinedInputs) {
  Builder b;
  b.Param(0, "w");
  b.Data(0, "x");
  b.Var(0, "fed_by_caller");
  b.Var(0, "y");
  b.Op(0, "sum").SetInput("X", {"w", "x", "fed_by_caller"}).SetOutput("Out", {"y"});
  Diagnostics d = Validate(b);
  ASSERT_EQ(d.size(), 1u) << d.Render();
  EXPECT_EQ(d.items()[0].location.var, "fed_by_caller");
  EXPECT_EQ(d.items()[0].message, "input 'fed_by_caller' of slot 'X' is not defined before use");

  ValidateOptions options;
  options.extra_feeds = {"fed_by_caller"};
  d = Validate(b, options);
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, FeedOpOutputsAreWrites) {
  Builder b;
  b.Var(0, "feed").SetType(proto::VarType::FEED_MINIBATCH).SetPersistable(true);
  b.Var(0, "fetch").SetType(proto::VarType::FETCH_LIST).SetPersistable(true);
  b.Var(0, "x");
  b.Var(0, "y");
  b.Op(0, "feed").SetInput("X", {"feed"}).SetOutput("Out", {"x"}).SetAttr("col", 0);
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"y"});
  b.Op(0, "fetch").SetInput("X", {"y"}).SetOutput("Out", {"fetch"}).SetAttr("col", 0);
  Diagnostics d = Validate(b);
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, EmptyArgumentsAreSkipped) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  b.Op(0, "my_custom_op").SetInput("X", {"x", kEmptyVarName, ""}).SetOutput("Out", {"", "y"});
  Diagnostics d = Validate(b);
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, UndeclaredArguments) {
  Builder b;
  b.Data(0, "x");
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"ghost"});
  b.Op(0, "relu").SetInput("X", {"ghost"}).SetOutput("Out", {"x"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 0, op 0 (relu), var 'ghost': error: output 'ghost' of slot 'Out' "
                "is not declared\n",
                // Written by op 0, so defined; still not declared.
                "m.pdmodel: block 0, op 1 (relu), var 'ghost': error: input 'ghost' of slot 'X' "
                "is not declared\n",
            }));
}

TEST(ValidateProgramTest, SubBlockSeesWhatItsParentDefinedBeforeTheOwningOp) {
  Builder b;
  b.Var(0, "cond", {1}).SetDenseTensor(proto::VarType::BOOL, {1});
  b.Var(0, "scope").SetType(proto::VarType::STEP_SCOPES);
  b.Param(0, "w");
  b.Data(0, "x");
  b.Var(0, "before");
  b.Var(0, "result");
  b.Var(0, "after");
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"before"});
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"cond"});
  const int sub = b.AddBlock(0);
  b.Op(0, "conditional_block")
      .SetInput("Cond", {"cond"})
      .SetInput("Input", {"before", "w"})
      .SetOutput("Out", {"result"})  // written by the sub-block, not before it
      .SetOutput("Scope", {"scope"})
      .SetAttr("sub_block", BlockRef{sub});
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"after"});
  b.Var(sub, "local");
  b.Op(sub, "sum").SetInput("X", {"before", "w", "x"}).SetOutput("Out", {"local"});
  b.Op(sub, "sum").SetInput("X", {"local", "after", "result"}).SetOutput("Out", {"local"});
  b.Op(sub, "assign").SetInput("X", {"local"}).SetOutput("Out", {"result"});
  b.Op(sub, "relu").SetInput("X", {"result"}).SetOutput("Out", {"local"});
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d),
            (std::vector<std::string>{
                "m.pdmodel: block 1, op 1 (sum), var 'after': error: input 'after' of slot 'X' is "
                "not defined before use\n",
                "m.pdmodel: block 1, op 1 (sum), var 'result': error: input 'result' of slot 'X' "
                "is not defined before use\n",
            }));
}

TEST(ValidateProgramTest, NestedSubBlocksFollowTheChainOfOwners) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "early");
  b.Var(0, "late");
  const int outer = b.AddBlock(0);
  const int inner = b.AddBlock(outer);
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"early"});
  b.RawOp(0, "while").SetAttr("sub_block", BlockRef{outer});
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"late"});
  b.Var(outer, "mid");
  b.RawOp(outer, "while").SetAttr("sub_block", BlockRef{inner});
  b.Op(outer, "relu").SetInput("X", {"x"}).SetOutput("Out", {"mid"});
  b.Var(inner, "out");
  b.Op(inner, "sum").SetInput("X", {"early", "late", "mid"}).SetOutput("Out", {"out"});
  Diagnostics d = Validate(b);
  std::vector<std::string> undefined;
  for (const Diagnostic& diagnostic : d.items()) {
    if (diagnostic.message.find("not defined before use") != std::string::npos) {
      EXPECT_EQ(diagnostic.location.block, inner);
      undefined.push_back(diagnostic.location.var);
    }
  }
  EXPECT_EQ(undefined, (std::vector<std::string>{"late", "mid"})) << d.Render();
}

TEST(ValidateProgramTest, SubBlockWithoutOwnerSeesEverythingItsAncestorsDeclare) {
  Builder b;
  b.Var(0, "a");
  const int sub = b.AddBlock(0);
  b.Var(sub, "b");
  b.Op(sub, "relu").SetInput("X", {"a"}).SetOutput("Out", {"b"});
  Diagnostics d = Validate(b);
  EXPECT_TRUE(d.empty()) << d.Render();
}

TEST(ValidateProgramTest, GradSubBlockSeesItsForwardBlock) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "cond", {1});
  b.Var(0, "scope").SetType(proto::VarType::STEP_SCOPES);
  b.Var(0, "x@GRAD");
  b.Op(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"cond"});
  const int fwd = b.AddBlock(0);
  b.Op(0, "conditional_block")
      .SetInput("Cond", {"cond"})
      .SetInput("Input", {"x"})
      .SetOutput("Scope", {"scope"})
      .SetAttr("sub_block", BlockRef{fwd});
  b.Var(fwd, "hidden");
  b.Op(fwd, "relu").SetInput("X", {"x"}).SetOutput("Out", {"hidden"});
  const int grad = b.AddBlock(0);
  b.block(grad)->set_forward_block_idx(fwd);
  b.Op(0, "conditional_block_grad", kBackward)
      .SetInput("Cond", {"cond"})
      .SetInput("Input", {"x"})
      .SetInput("Scope", {"scope"})
      .SetOutput("Input@GRAD", {"x@GRAD"})
      .SetAttr("sub_block", BlockRef{grad});
  b.Op(grad, "relu_grad", kBackward)
      .SetInput("Out", {"hidden"})  // declared and computed in the forward block
      .SetInput("Out@GRAD", {"hidden"})
      .SetOutput("X@GRAD", {"x@GRAD"});
  Diagnostics d = Validate(b);
  EXPECT_TRUE(d.empty()) << d.Render();

  b.block(grad)->set_forward_block_idx(-1);  // without the link, 'hidden' is out of reach
  d = Validate(b);
  EXPECT_EQ(d.CountOf(Severity::kError), 4) << d.Render();  // 2 inputs x (undeclared, undefined)
}

// Blocks listed before their parent: the validator indexes everything first.
TEST(ValidateProgramTest, BlocksOutOfOrder) {
  Builder b;
  const int child = b.AddBlock(2);
  const int parent = b.AddBlock(0);
  b.Data(0, "x");
  b.Var(parent, "p1");
  b.Var(parent, "p2");
  b.Op(0, "while").SetAttr("sub_block", BlockRef{parent});
  b.Op(parent, "relu").SetInput("X", {"x"}).SetOutput("Out", {"p1"});
  b.RawOp(parent, "while").SetAttr("sub_block", BlockRef{child});
  b.Op(parent, "relu").SetInput("X", {"x"}).SetOutput("Out", {"p2"});
  b.Var(child, "c");
  b.Op(child, "sum").SetInput("X", {"p1", "p2"}).SetOutput("Out", {"c"});
  Diagnostics d = Validate(b);
  std::vector<std::string> undefined;
  for (const Diagnostic& diagnostic : d.items()) {
    if (diagnostic.message.find("not defined before use") != std::string::npos) {
      undefined.push_back(diagnostic.location.var);
    }
  }
  EXPECT_EQ(undefined, std::vector<std::string>{"p2"}) << d.Render();
}

// ---- unknown fields -----------------------------------------------------------------------------

TEST(ValidateProgramTest, UnknownFieldsAreWarnings) {
  Builder b;
  b.Data(0, "x");
  b.Var(0, "y");
  b.RawOp(0, "relu").SetInput("X", {"x"}).SetOutput("Out", {"y"});
  b.block(0)->mutable_ops(0)->mutable_unknown_fields()->AddVarint(99, 1);
  Diagnostics d = Validate(b);
  EXPECT_EQ(Rendered(d), std::vector<std::string>{
                             "m.pdmodel: block 0, op 0 (relu): warning: unknown field 99 (at "
                             "blocks[0].ops[0]) kept from the input\n"});

  ValidateOptions options;
  options.warn_unknown_fields = false;
  EXPECT_TRUE(Validate(b, options).empty());
}

// Unknown fields anywhere, down to the deepest messages, are found.
TEST(ValidateProgramTest, UnknownFieldsInNestedMessages) {
  auto count = [](const std::function<void(proto::ProgramDesc*)>& edit) {
    Builder b;
    b.Var(0, "v");
    proto::OpDesc::Attr* attr = b.RawOp(0, "custom").desc()->add_attrs();
    attr->set_name("s");
    attr->set_type(proto::SCALARS);
    *attr->add_scalars() = MakeScalar(1.0);
    edit(b.desc());
    return Validate(b).CountOf(Severity::kWarning);
  };
  auto add = [](google::protobuf::Message* m) {
    m->GetReflection()->MutableUnknownFields(m)->AddVarint(77, 1);
  };
  EXPECT_EQ(count([](proto::ProgramDesc*) {}), 0);
  EXPECT_EQ(count([&](proto::ProgramDesc* p) { add(p); }), 1);
  EXPECT_EQ(count([&](proto::ProgramDesc* p) { add(p->mutable_version()); }), 1);
  EXPECT_EQ(count([&](proto::ProgramDesc* p) {
              add(p->mutable_blocks(0)
                      ->mutable_vars(0)
                      ->mutable_type()
                      ->mutable_dense_tensor()
                      ->mutable_tensor());
            }),
            1);
  EXPECT_EQ(count([&](proto::ProgramDesc* p) {
              add(p->mutable_blocks(0)->mutable_ops(0)->mutable_attrs(0)->mutable_scalars(0));
            }),
            1);
  EXPECT_EQ(count([&](proto::ProgramDesc* p) {
              add(p->mutable_op_version_map()->add_pair()->mutable_op_version());
            }),
            1);
}

// ---- the schema table ---------------------------------------------------------------------------

// Which ops the schema covers is checked against the other tables rather than against a copy of
// its own list: every grad rule's op here (oldir-only), every binding and op-compat row in
// diff_tests/op_tables_test.cc. What stays here is the lookup itself.
TEST(OpSchemaTest, FindsEveryOpOfTheTableByItsTypeAndNothingElse) {
  const std::vector<OpSchema>& all = AllOpSchemas();
  ASSERT_FALSE(all.empty());
  for (const OpSchema& schema : all) {
    const OpSchema* found = FindOpSchema(schema.type);
    ASSERT_NE(found, nullptr) << schema.type;
    EXPECT_EQ(found->type, schema.type);
  }
  EXPECT_EQ(FindOpSchema("matmul"), nullptr);  // the new-IR name, not a legacy op
  EXPECT_EQ(FindOpSchema(""), nullptr);
}

// A grad op of the schema (`X_grad`) exists because backward makes it from forward op X: X is in
// the schema too and has a grad rule that makes gradients. The exceptions, each with its reason,
// are made elsewhere or only read.
const std::map<std::string_view, std::string_view> kGradOpsWithoutGradRule = {
    {"c_embedding_grad",
     "made by the tensor-parallel pass (oldir/passes/tensor_parallel.cc) in place of "
     "lookup_table_v2_grad"},
    {"c_softmax_with_cross_entropy_grad",
     "made by the tensor-parallel pass (oldir/passes/tensor_parallel.cc) in place of "
     "softmax_with_cross_entropy_grad"},
    {"conditional_block_grad",
     "backward here does not differentiate control flow; the op comes in programs Paddle wrote"},
    {"while_grad",
     "backward here does not differentiate control flow; the op comes in programs Paddle wrote"},
    {"set_value_grad", "no grad rule for set_value yet; the op comes in programs Paddle wrote"},
};

TEST(OpSchemaTest, EveryGradOpHasItsForwardOpAndItsGradRule) {
  constexpr std::string_view kSuffix = "_grad";
  std::vector<std::string> orphans;
  for (const OpSchema& schema : AllOpSchemas()) {
    const std::string_view type = schema.type;
    if (type.size() <= kSuffix.size() || !type.ends_with(kSuffix)) continue;
    if (kGradOpsWithoutGradRule.count(type) > 0) continue;
    const std::string_view forward = type.substr(0, type.size() - kSuffix.size());
    const GradRule* rule = FindGradRule(forward);
    if (FindOpSchema(forward) == nullptr || rule == nullptr || rule->maker == nullptr) {
      orphans.push_back(std::string(type));
    }
  }
  EXPECT_EQ(orphans, std::vector<std::string>{});
  for (const auto& [type, reason] : kGradOpsWithoutGradRule) {
    EXPECT_NE(FindOpSchema(type), nullptr) << type << " is not in the schema";
  }
}

TEST(OpSchemaTest, TableIsWellFormed) {
  const std::vector<OpSchema>& all = AllOpSchemas();
  std::set<std::string_view> common;
  for (const AttrSchema& attr : CommonAttrSchemas()) common.insert(attr.name);
  for (size_t i = 0; i < all.size(); ++i) {
    const OpSchema& schema = all[i];
    SCOPED_TRACE(std::string(schema.type));
    if (i > 0) {
      EXPECT_LT(all[i - 1].type, schema.type);  // sorted, unique
    }
    EXPECT_EQ(FindOpSchema(schema.type), &schema);
    std::set<std::string_view> inputs, outputs, attrs;
    for (const SlotSchema& slot : schema.inputs) EXPECT_TRUE(inputs.insert(slot.name).second);
    for (const SlotSchema& slot : schema.outputs) EXPECT_TRUE(outputs.insert(slot.name).second);
    for (const AttrSchema& attr : schema.attrs) {
      EXPECT_TRUE(attrs.insert(attr.name).second) << attr.name;
      EXPECT_EQ(common.count(attr.name), 0u) << attr.name;
      EXPECT_NE(schema.FindAttr(attr.name), nullptr);
    }
    // The validator's bit masks hold 64 entries (common attributes first).
    EXPECT_LT(schema.inputs.size() + schema.outputs.size(), 64u);
    EXPECT_LT(schema.attrs.size() + common.size(), 64u);
    // Paddle's grad makers: every output of a *_grad op is a gradient, and dispensable.
    if (schema.type.ends_with("_grad")) {
      for (const SlotSchema& slot : schema.outputs) {
        EXPECT_TRUE(slot.name.ends_with(kGradSuffix)) << slot.name;
        EXPECT_FALSE(slot.required) << slot.name;
      }
      // ... and the forward op's attributes come along.
      const OpSchema* forward = FindOpSchema(
          schema.type.substr(0, schema.type.size() - std::string_view("_grad").size()));
      ASSERT_NE(forward, nullptr);
      for (const AttrSchema& attr : forward->attrs) {
        const AttrSchema* copy = schema.FindAttr(attr.name);
        ASSERT_NE(copy, nullptr) << attr.name;
        EXPECT_EQ(copy->type, attr.type) << attr.name;
      }
    }
  }
  EXPECT_EQ(FindOpSchema("relu")->FindInput("Out"), nullptr);
  EXPECT_EQ(FindOpSchema("relu")->FindOutput("X"), nullptr);
}

TEST(OpSchemaTest, CommonAttributes) {
  std::vector<std::pair<std::string, proto::AttrType>> got;
  for (const AttrSchema& attr : CommonAttrSchemas()) {
    EXPECT_FALSE(attr.required) << attr.name;
    got.emplace_back(attr.name, attr.type);
  }
  EXPECT_EQ(got, (std::vector<std::pair<std::string, proto::AttrType>>{
                     {"op_role", proto::INT},
                     {"op_role_var", proto::STRINGS},
                     {"op_namescope", proto::STRING},
                     {"op_callstack", proto::STRINGS},
                     {"op_device", proto::STRING},
                     {"with_quant_attr", proto::BOOLEAN},
                 }));
}

// Spot checks against Paddle's op makers (hand-copied from paddle/fluid/operators/ and
// op_compat.yaml): slot names, required flags and attribute types the translator relies on.
TEST(OpSchemaTest, MatchesPaddleMakers) {
  struct Attr {
    const char* op;
    const char* name;
    proto::AttrType type;
    bool required;
  };
  const Attr attrs[] = {
      {"matmul_v2", "trans_x", proto::BOOLEAN, false},
      {"matmul_v2", "trans_y", proto::BOOLEAN, false},
      {"elementwise_add", "axis", proto::INT, false},
      {"gelu", "approximate", proto::BOOLEAN, false},
      {"softmax", "axis", proto::INT, false},
      {"layer_norm", "epsilon", proto::FLOAT, false},
      {"layer_norm", "begin_norm_axis", proto::INT, false},
      {"lookup_table_v2", "padding_idx", proto::LONG, false},
      {"reshape2", "shape", proto::INTS, false},
      {"transpose2", "axis", proto::INTS, true},
      {"scale", "scale", proto::FLOAT, false},
      {"scale", "bias", proto::FLOAT, false},
      {"scale", "bias_after_scale", proto::BOOLEAN, false},
      {"cast", "in_dtype", proto::INT, true},
      {"cast", "out_dtype", proto::INT, true},
      {"dropout", "dropout_prob", proto::FLOAT, false},
      {"dropout", "is_test", proto::BOOLEAN, false},
      {"dropout", "fix_seed", proto::BOOLEAN, false},
      {"dropout", "seed", proto::INT, false},
      {"dropout", "dropout_implementation", proto::STRING, false},
      {"reduce_mean", "dim", proto::INTS, false},
      {"reduce_sum", "keep_dim", proto::BOOLEAN, false},
      {"reduce_sum", "reduce_all", proto::BOOLEAN, false},
      {"softmax_with_cross_entropy", "soft_label", proto::BOOLEAN, false},
      {"softmax_with_cross_entropy", "ignore_index", proto::INT, false},
      {"softmax_with_cross_entropy", "axis", proto::INT, false},
      {"softmax_with_cross_entropy", "numeric_stable_mode", proto::BOOLEAN, false},
      {"concat", "axis", proto::INT, false},
      {"split", "num", proto::INT, false},
      {"split", "sections", proto::INTS, false},
      {"split", "axis", proto::INT, false},
      {"slice", "axes", proto::INTS, true},
      {"slice", "starts", proto::INTS, false},
      {"slice", "decrease_axis", proto::INTS, false},
      {"set_value", "axes", proto::LONGS, true},
      {"set_value", "starts", proto::LONGS, false},
      {"set_value", "steps", proto::LONGS, false},
      {"set_value", "decrease_axes", proto::LONGS, false},
      {"set_value", "none_axes", proto::LONGS, false},
      {"set_value", "shape", proto::LONGS, false},
      {"set_value", "dtype", proto::INT, false},
      {"set_value", "bool_values", proto::INTS, false},
      {"set_value", "fp16_values", proto::FLOATS, false},
      {"set_value", "fp64_values", proto::FLOAT64S, false},
      {"set_value", "values", proto::SCALARS, false},
      {"set_value_grad", "axes", proto::LONGS, true},
      {"fill_constant", "shape", proto::LONGS, false},
      {"fill_constant", "value", proto::FLOAT, false},
      {"fill_constant", "dtype", proto::INT, false},
      {"assign_value", "shape", proto::INTS, true},
      {"assign_value", "dtype", proto::INT, true},
      {"assign_value", "int64_values", proto::LONGS, false},
      {"elementwise_mod", "axis", proto::INT, false},
      {"elementwise_floordiv", "axis", proto::INT, false},
      {"equal", "axis", proto::INT, false},
      {"equal", "force_cpu", proto::BOOLEAN, false},
      {"less_than", "force_cpu", proto::BOOLEAN, false},
      {"greater_than", "axis", proto::INT, false},
      {"not_equal", "force_cpu", proto::BOOLEAN, false},
      {"fill_any_like", "dtype", proto::INT, false},
      {"tril_triu", "diagonal", proto::INT, false},
      {"tril_triu", "lower", proto::BOOLEAN, false},
      {"momentum", "mu", proto::FLOAT, true},
      {"adam", "beta1", proto::FLOAT, false},
      {"adam", "min_row_size_to_use_multithread", proto::LONG, false},
      {"adamw", "coeff", proto::FLOAT, false},
      {"feed", "col", proto::INT, true},
      {"fetch", "col", proto::INT, true},
      {"conditional_block", "sub_block", proto::BLOCK, true},
      {"conditional_block", "is_scalar_condition", proto::BOOLEAN, false},
      {"while", "sub_block", proto::BLOCK, true},
      {"increment", "step", proto::FLOAT, false},
      {"c_allreduce_sum", "ring_id", proto::INT, false},
      {"c_allreduce_sum", "use_calc_stream", proto::BOOLEAN, false},
      {"c_broadcast", "root", proto::INT, false},
      {"c_allgather", "nranks", proto::INT, true},
      {"c_reducescatter", "nranks", proto::INT, false},
      {"c_split", "rank", proto::INT, false},
      {"send_v2", "peer", proto::INT, false},
      {"recv_v2", "out_shape", proto::INTS, false},
      {"recv_v2", "dtype", proto::INT, false},
      {"barrier", "ring_id", proto::INT, false},
      // paddle/fluid/operators/collective/c_embedding_op.cc, c_softmax_with_cross_entropy_op.cc.
      {"c_embedding", "start_index", proto::LONG, false},
      {"c_embedding", "vocab_size", proto::LONG, false},
      {"c_embedding_grad", "start_index", proto::LONG, false},
      {"c_softmax_with_cross_entropy", "ignore_index", proto::LONG, false},
      {"c_softmax_with_cross_entropy", "ring_id", proto::INT, false},
      {"c_softmax_with_cross_entropy", "rank", proto::INT, false},
      {"c_softmax_with_cross_entropy", "nranks", proto::INT, false},
      {"c_softmax_with_cross_entropy_grad", "nranks", proto::INT, false},
  };
  for (const Attr& expected : attrs) {
    const OpSchema* schema = FindOpSchema(expected.op);
    ASSERT_NE(schema, nullptr) << expected.op;
    const AttrSchema* attr = schema->FindAttr(expected.name);
    ASSERT_NE(attr, nullptr) << expected.op << "." << expected.name;
    EXPECT_EQ(attr->type, expected.type) << expected.op << "." << expected.name;
    EXPECT_EQ(attr->required, expected.required) << expected.op << "." << expected.name;
  }

  struct Slots {
    const char* op;
    std::vector<std::string> inputs;  // "name" required, "name?" dispensable, "+" duplicable
    std::vector<std::string> outputs;
  };
  auto describe = [](const std::vector<SlotSchema>& slots) {
    std::vector<std::string> out;
    for (const SlotSchema& s : slots) {
      out.push_back(std::string(s.name) + (s.required ? "" : "?") + (s.duplicable ? "+" : ""));
    }
    return out;
  };
  const Slots slots[] = {
      {"matmul_v2", {"X", "Y"}, {"Out"}},
      {"matmul_v2_grad", {"X", "Y", "Out@GRAD"}, {"X@GRAD?", "Y@GRAD?"}},
      {"relu_grad", {"Out", "Out@GRAD"}, {"X@GRAD?"}},
      {"gelu_grad", {"X", "Out@GRAD"}, {"X@GRAD?"}},
      {"layer_norm", {"X", "Scale?", "Bias?"}, {"Y", "Mean", "Variance"}},
      {"lookup_table_v2", {"W", "Ids"}, {"Out"}},
      {"c_embedding", {"W", "Ids"}, {"Out"}},
      {"c_embedding_grad", {"W", "Ids", "Out@GRAD"}, {"W@GRAD?"}},
      {"c_softmax_with_cross_entropy", {"Logits", "Label"}, {"Softmax", "Loss"}},
      {"c_softmax_with_cross_entropy_grad", {"Softmax", "Label", "Loss@GRAD"}, {"Logits@GRAD?"}},
      {"reshape2", {"X", "Shape?", "ShapeTensor?+"}, {"Out", "XShape?"}},
      {"transpose2", {"X"}, {"Out", "XShape?"}},
      {"dropout", {"X", "Seed?"}, {"Out", "Mask?"}},
      {"dropout_grad", {"Mask", "Out@GRAD"}, {"X@GRAD?"}},
      {"softmax_with_cross_entropy", {"Logits", "Label"}, {"Softmax", "Loss", "Backprop?"}},
      {"softmax_with_cross_entropy_grad",
       {"Label", "Softmax", "Loss@GRAD", "Backprop?"},
       {"Logits@GRAD?"}},
      {"concat", {"X+", "AxisTensor?"}, {"Out"}},
      {"set_value",
       {"Input", "ValueTensor?", "StartsTensorList?+", "EndsTensorList?+", "StepsTensorList?+"},
       {"Out"}},
      {"set_value_grad",
       {"Out@GRAD", "ValueTensor", "StartsTensorList?+", "EndsTensorList?+", "StepsTensorList?+"},
       {"Input@GRAD?", "ValueTensor@GRAD?"}},
      {"split", {"X", "AxisTensor?", "SectionsTensorList?+"}, {"Out+"}},
      {"sum", {"X+"}, {"Out"}},
      {"assign", {"X?"}, {"Out"}},
      {"assign_value", {}, {"Out"}},
      {"sgd", {"Param", "LearningRate", "Grad", "MasterParam?"}, {"ParamOut", "MasterParamOut?"}},
      {"feed", {"X"}, {"Out"}},
      {"conditional_block", {"Cond+", "Input?+"}, {"Out?+", "Scope"}},
      {"while", {"X?+", "Condition"}, {"Out?+", "StepScopes"}},
      {"equal", {"X", "Y"}, {"Out"}},
      {"logical_and", {"X", "Y"}, {"Out"}},
      {"logical_not", {"X"}, {"Out"}},
      {"fill_any_like", {"X"}, {"Out"}},
      {"share_data", {"X"}, {"Out"}},
      {"c_sync_comm_stream", {"X+"}, {"Out+"}},
      {"send_v2", {"X"}, {}},
      {"recv_v2", {}, {"Out"}},
  };
  for (const Slots& expected : slots) {
    const OpSchema* schema = FindOpSchema(expected.op);
    ASSERT_NE(schema, nullptr) << expected.op;
    EXPECT_EQ(describe(schema->inputs), expected.inputs) << expected.op;
    EXPECT_EQ(describe(schema->outputs), expected.outputs) << expected.op;
  }
  // fill_any_like's value is FLOAT or SCALAR depending on the Paddle version: not type-checked.
  EXPECT_EQ(FindOpSchema("fill_any_like")->FindAttr("value"), nullptr);
}

}  // namespace
}  // namespace irm::oldir
