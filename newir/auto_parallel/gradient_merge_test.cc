// The gradient-merge pass's program on a one-linear SGD program: the buffers and their in-place
// accumulation after each gradient's producer, the step counter, the pd_op.if holding the 1/k
// scales before the optimizer ops, the optimizer and the zeroing, as
// python/paddle/distributed/passes/auto_parallel_gradient_merge.py's PIR functions
// (`_pir_append_gradient_merge_backward_op`, `_pir_append_scale_op`) make them, with the gate of
// its legacy `_create_cond_block_and_update_optimizer`. Paddle has no test pinning the PIR ops
// (its test/auto_parallel gradient-merge tests compare losses), so the expectations follow the
// pass's source. Also: the startup's initialisers, the pass by name with its options, the
// test-only faults, and the located refusals.
#include "newir/auto_parallel/gradient_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "newir/attributes.h"
#include "newir/auto_parallel/passes.h"
#include "newir/parser.h"
#include "newir/pass_manager.h"
#include "newir/verifier.h"

namespace irm::newir {
namespace {

// loss = mean(x @ w + b); SGD on w and b (Paddle's op roles: 0 forward, 256 loss, 257 its
// gradient's seed, 1 backward, 2 optimize).
constexpr const char* kMain = R"pir({
    (%0) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<4x2xf32>
    (%1) = "builtin.parameter" () {parameter_name:"b"} : () -> builtin.tensor<2xf32>
    (%2) = "builtin.parameter" () {parameter_name:"learning_rate_0"} : () -> builtin.tensor<1xf32>
    (%3) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",op_role:(Int32)0,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[3,4]} : () -> builtin.tensor<3x4xf32>
    (%4) = "pd_op.matmul" (%3, %0) {op_role:(Int32)0,transpose_x:false,transpose_y:false} : (builtin.tensor<3x4xf32>, builtin.tensor<4x2xf32>) -> builtin.tensor<3x2xf32>
    (%5) = "pd_op.add" (%4, %1) {op_role:(Int32)0} : (builtin.tensor<3x2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<3x2xf32>
    (%6) = "pd_op.mean_all" (%5) {op_role:(Int32)256} : (builtin.tensor<3x2xf32>) -> builtin.tensor<f32>
    (%7) = "pd_op.full" () {dtype:(pd_op.DataType)float32,op_role:(Int32)257,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[],value:(Double)1} : () -> builtin.tensor<f32>
    (%8) = "pd_op.mean_all_grad" (%5, %7) {op_role:(Int32)1} : (builtin.tensor<3x2xf32>, builtin.tensor<f32>) -> builtin.tensor<3x2xf32>
    (%9, %10) = "pd_op.add_grad" (%4, %1, %8) {axis:(Int32)-1,op_role:(Int32)1} : (builtin.tensor<3x2xf32>, builtin.tensor<2xf32>, builtin.tensor<3x2xf32>) -> builtin.tensor<3x2xf32>, builtin.tensor<2xf32>
    (%11, %12) = "pd_op.matmul_grad" (%3, %0, %9) {op_role:(Int32)1,transpose_x:false,transpose_y:false} : (builtin.tensor<3x4xf32>, builtin.tensor<4x2xf32>, builtin.tensor<3x2xf32>) -> builtin.tensor<3x4xf32>, builtin.tensor<4x2xf32>
    (%13, %14) = "pd_op.sgd_" (%1, %2, %10, <<NULL VALUE>>) {multi_precision:false,op_role:(Int32)2} : (builtin.tensor<2xf32>, builtin.tensor<1xf32>, builtin.tensor<2xf32>, <<NULL TYPE>>) -> builtin.tensor<2xf32>, <<NULL TYPE>>
    (%15, %16) = "pd_op.sgd_" (%0, %2, %12, <<NULL VALUE>>) {multi_precision:false,op_role:(Int32)2} : (builtin.tensor<4x2xf32>, builtin.tensor<1xf32>, builtin.tensor<4x2xf32>, <<NULL TYPE>>) -> builtin.tensor<4x2xf32>, <<NULL TYPE>>
    (%17) = "pd_op.fetch" (%6) {col:(Int32)0,name:"loss",op_role:(Int32)0} : (builtin.tensor<f32>) -> builtin.tensor<f32>
})pir";

Program Parse(const char* text) {
  StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  if (!program.ok()) return Program();
  return std::move(program).value();
}

// The op names of a block, a region's ops as `name{...}` / `else{...}` after their op.
std::vector<std::string> Names(const Block& block) {
  std::vector<std::string> names;
  for (const Operation* op : block.ops()) {
    names.push_back(op->name());
    for (size_t r = 0; r < op->num_regions(); ++r) {
      names.push_back(r == 0 ? "then {" : "} else {");
      for (const std::string& name : Names(op->region(r).front())) names.push_back("  " + name);
    }
    if (op->num_regions() > 0) names.push_back("}");
  }
  return names;
}

std::string ParameterOf(const Value* value) {
  if (value == nullptr || value->defining_op() == nullptr) return "";
  const std::string_view* name = value->defining_op()->attribute("parameter_name").AsString();
  return name == nullptr ? "" : std::string(*name);
}

const Operation* Find(const Block& block, std::string_view name, size_t nth = 0) {
  for (const Operation* op : block.ops()) {
    if (op->name() == name && nth-- == 0) return op;
  }
  return nullptr;
}

double FullValue(const Value* value) {
  const double* v = value->defining_op()->attribute("value").AsDouble();
  return v == nullptr ? -1.0 : *v;
}

TEST(GradientMergeTest, TheOpsOfPaddlesPirPassGatedByTheStepCounter) {
  Program main = Parse(kMain);
  StatusOr<GradientMergeResult> merged = ApplyGradientMerge(main, {.k_steps = 2, .avg = true});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->buffers, (std::vector<std::string>{"b@GRAD@MERGE", "w@GRAD@MERGE"}));
  EXPECT_EQ(merged->optimizer_ops, 2u);
  const Status verified = VerifyProgram(main);
  ASSERT_TRUE(verified.ok()) << verified.ToString();

  EXPECT_EQ(Names(main.block()), (std::vector<std::string>{
                                     "builtin.parameter",  // w
                                     "builtin.parameter",  // b
                                     "builtin.parameter",  // learning_rate_0
                                     "builtin.parameter",  // b@GRAD@MERGE
                                     "builtin.parameter",  // w@GRAD@MERGE
                                     "builtin.parameter",  // gradient_merge_step
                                     "pd_op.data",
                                     "pd_op.matmul",
                                     "pd_op.add",
                                     "pd_op.mean_all",
                                     "pd_op.full",
                                     "pd_op.mean_all_grad",
                                     "pd_op.add_grad",
                                     "pd_op.add_",  // b@GRAD@MERGE += b@GRAD
                                     "pd_op.matmul_grad",
                                     "pd_op.add_",  // w@GRAD@MERGE += w@GRAD
                                     "pd_op.increment_",
                                     "pd_op.full",
                                     "pd_op.remainder_",
                                     "pd_op.full",
                                     "pd_op.equal",
                                     "pd_op.if",
                                     "then {",
                                     "  pd_op.full",  // 1/k
                                     "  pd_op.scale_",
                                     "  pd_op.sgd_",  // b
                                     "  pd_op.full",
                                     "  pd_op.scale_",
                                     "  pd_op.sgd_",  // w
                                     "  pd_op.full",  // 0
                                     "  pd_op.full_int_array",
                                     "  pd_op.full_int_array",
                                     "  pd_op.full_int_array",
                                     "  pd_op.set_value_with_tensor_",  // b@GRAD@MERGE = 0
                                     "  pd_op.full",
                                     "  pd_op.full_int_array",
                                     "  pd_op.full_int_array",
                                     "  pd_op.full_int_array",
                                     "  pd_op.set_value_with_tensor_",  // w@GRAD@MERGE = 0
                                     "  cf.yield",
                                     "} else {",
                                     "  cf.yield",
                                     "}",
                                     "pd_op.fetch",
                                 }));

  // The accumulation: add_(buffer, grad), in place, with the producer's role and the mark.
  const Operation* add_b = Find(main.block(), "pd_op.add_", 0);
  ASSERT_NE(add_b, nullptr);
  EXPECT_EQ(ParameterOf(add_b->operand(0)), "b@GRAD@MERGE");
  EXPECT_EQ(add_b->operand(1)->defining_op()->name(), "pd_op.add_grad");
  EXPECT_EQ(add_b->operand(1)->index(), 1u);
  EXPECT_EQ(*add_b->attribute("op_role").AsInt32(), 1);
  EXPECT_TRUE(*add_b->attribute("grad_merge_add").AsBool());
  const Operation* add_w = Find(main.block(), "pd_op.add_", 1);
  ASSERT_NE(add_w, nullptr);
  EXPECT_EQ(ParameterOf(add_w->operand(0)), "w@GRAD@MERGE");
  EXPECT_EQ(add_w->operand(1)->defining_op()->name(), "pd_op.matmul_grad");

  // The counter: increment_ of the step, remainder_ by k = 2, equal to 0; the if reads it.
  const Operation* increment = Find(main.block(), "pd_op.increment_");
  EXPECT_EQ(ParameterOf(increment->operand(0)), kGradientMergeStepName);
  const Operation* remainder = Find(main.block(), "pd_op.remainder_");
  EXPECT_EQ(remainder->operand(0), increment->result(0));
  EXPECT_EQ(FullValue(remainder->operand(1)), 2.0);
  const Operation* equal = Find(main.block(), "pd_op.equal");
  EXPECT_EQ(FullValue(equal->operand(1)), 0.0);
  const Operation* if_op = Find(main.block(), "pd_op.if");
  EXPECT_EQ(if_op->operand(0), equal->result(0));
  EXPECT_EQ(if_op->num_results(), 0u);
  EXPECT_EQ(*if_op->attribute("op_role").AsInt32(), 2);

  // In the true region: sgd_'s grad (operand 2) is scale_(add_'s result, 1/2), bias 0 first.
  const Block& then = if_op->region(0).front();
  const Operation* sgd_b = Find(then, "pd_op.sgd_", 0);
  const Operation* scale_b = sgd_b->operand(2)->defining_op();
  ASSERT_EQ(scale_b->name(), "pd_op.scale_");
  EXPECT_EQ(scale_b->operand(0), add_b->result(0));
  EXPECT_EQ(FullValue(scale_b->operand(1)), 0.5);
  EXPECT_FALSE(*scale_b->attribute("bias_after_scale").AsBool());
  EXPECT_EQ(*scale_b->attribute("bias").AsFloat(), 0.0f);
  EXPECT_EQ(ParameterOf(sgd_b->operand(0)), "b");
  const Operation* sgd_w = Find(then, "pd_op.sgd_", 1);
  EXPECT_EQ(sgd_w->operand(2)->defining_op()->operand(0), add_w->result(0));
  // The zeroing writes a [1] zero into each scaled buffer.
  const Operation* reset_b = Find(then, "pd_op.set_value_with_tensor_", 0);
  EXPECT_EQ(reset_b->operand(0), scale_b->result(0));
  EXPECT_EQ(FullValue(reset_b->operand(1)), 0.0);
  EXPECT_EQ(reset_b->operand(1)->type().dims(), (std::vector<int64_t>{1}));
}

// Data parallelism: the reshard lowering's all-reduce of w's gradient (no op_role) stands
// between the gradient and its optimizer op. Paddle creates a reshard under its consumer's role
// (static/pir_pass.py reshard_single_value / apply_reshard_pass: pir_op_role_guard(op.op_role)),
// so the all-reduce is optimizer work: the buffer accumulates the local gradient, and the
// all-reduce moves into the pd_op.if, reading the buffer, once per update. An unroled op that
// something outside the optimizer reads (the loss's all-reduce, fetched) stays where it is.
TEST(GradientMergeTest, TheAllReduceBeforeTheOptimizerRunsOnTheMergedBuffer) {
  std::string text = kMain;
  const std::string sgd_w = R"((%15, %16) = "pd_op.sgd_" (%0, %2, %12,)";
  const size_t at = text.find(sgd_w);
  ASSERT_NE(at, std::string::npos);
  text.insert(
      at,
      R"((%30) = "pd_op.all_reduce" (%12) {ring_id:(Int32)0,reduce_type:(Int32)0} : (builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>
    (%31) = "pd_op.all_reduce" (%6) {ring_id:(Int32)0,reduce_type:(Int32)0} : (builtin.tensor<f32>) -> builtin.tensor<f32>
    )");
  text.replace(text.find(sgd_w), sgd_w.size(), R"((%15, %16) = "pd_op.sgd_" (%0, %2, %30,)");
  const size_t fetch = text.find(R"("pd_op.fetch" (%6))");
  ASSERT_NE(fetch, std::string::npos);
  text.replace(fetch, std::string(R"("pd_op.fetch" (%6))").size(), R"("pd_op.fetch" (%31))");
  Program main = Parse(text.c_str());
  StatusOr<GradientMergeResult> merged = ApplyGradientMerge(main, {.k_steps = 2, .avg = true});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  ASSERT_TRUE(VerifyProgram(main).ok()) << VerifyProgram(main).ToString();
  // w's buffer accumulates matmul_grad's local gradient; it is named after the parameter the
  // sgd_ at the end of the all-reduce updates.
  EXPECT_EQ(merged->buffers, (std::vector<std::string>{"b@GRAD@MERGE", "w@GRAD@MERGE"}));
  EXPECT_EQ(merged->optimizer_ops, 3u);  // sgd_ b, the all-reduce, sgd_ w
  const Operation* if_op = Find(main.block(), "pd_op.if");
  ASSERT_NE(if_op, nullptr);
  const Block& then = if_op->region(0).front();
  const Operation* reduce = Find(then, "pd_op.all_reduce");
  ASSERT_NE(reduce, nullptr) << "the gradient's all-reduce runs inside the pd_op.if";
  // It reads the buffer after this step's in-place add (no 1/k before the communication).
  const Operation* add = reduce->operand(0)->defining_op();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name(), "pd_op.add_");
  EXPECT_EQ(ParameterOf(add->operand(0)), "w@GRAD@MERGE");
  // The 1/k after the communication, on what sgd_ reads (Paddle's _append_scale_op_after_comm).
  const Operation* sgd_of_w = Find(then, "pd_op.sgd_", 1);
  ASSERT_NE(sgd_of_w, nullptr);
  const Operation* scale = sgd_of_w->operand(2)->defining_op();
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->name(), "pd_op.scale_");
  EXPECT_EQ(scale->operand(0), reduce->result(0));
  EXPECT_DOUBLE_EQ(FullValue(scale->operand(1)), 0.5);
  // The loss's all-reduce stays outside, before the fetch.
  EXPECT_NE(Find(main.block(), "pd_op.all_reduce"), nullptr);
  EXPECT_EQ(Find(then, "pd_op.all_reduce", 1), nullptr);
}

TEST(GradientMergeTest, WithoutAvgNothingIsScaled) {
  Program main = Parse(kMain);
  ASSERT_TRUE(ApplyGradientMerge(main, {.k_steps = 4, .avg = false}).ok());
  const Operation* if_op = Find(main.block(), "pd_op.if");
  ASSERT_NE(if_op, nullptr);
  EXPECT_EQ(Find(if_op->region(0).front(), "pd_op.scale_"), nullptr);
  const Operation* sgd = Find(if_op->region(0).front(), "pd_op.sgd_");
  EXPECT_EQ(sgd->operand(2)->defining_op()->name(), "pd_op.add_");
  EXPECT_EQ(FullValue(Find(main.block(), "pd_op.remainder_")->operand(1)), 4.0);
}

TEST(GradientMergeTest, StartupZeroesTheBuffersAndTheCounter) {
  Program main = Parse(kMain);
  ASSERT_TRUE(ApplyGradientMerge(main, {.k_steps = 2, .avg = true}).ok());
  Program startup = Parse("{\n}");
  ASSERT_TRUE(AddGradientMergeInitializers(startup, main).ok());
  std::vector<std::string> set;
  for (const Operation* op : startup.block().ops()) {
    if (op->name() != "builtin.set_parameter") continue;
    set.push_back(std::string(*op->attribute("parameter_name").AsString()));
    const Operation* full = op->operand(0)->defining_op();
    EXPECT_EQ(full->name(), "pd_op.full");
    EXPECT_EQ(FullValue(op->operand(0)), 0.0);
  }
  EXPECT_EQ(set, (std::vector<std::string>{"b@GRAD@MERGE", "w@GRAD@MERGE", "gradient_merge_step"}));
  EXPECT_EQ(Find(startup.block(), "pd_op.full", 1)->result(0)->type().dims(),
            (std::vector<int64_t>{4, 2}));
  // A second call adds nothing.
  ASSERT_TRUE(AddGradientMergeInitializers(startup, main).ok());
  EXPECT_EQ(startup.block().size(), 6u);
  EXPECT_TRUE(VerifyProgram(startup).ok());
}

PassRegistry Registry() {
  PassRegistry registry;
  EXPECT_TRUE(RegisterAutoParallelPasses(registry).ok());
  return registry;
}

TEST(GradientMergeTest, ThePassByNameWithPaddlesOptionNames) {
  const PassRegistry registry = Registry();
  Program main = Parse(kMain);
  PassManager pm;
  const Status added = pm.AddPipeline("gradient-merge{k-steps=4 avg=true}", registry);
  ASSERT_TRUE(added.ok()) << added.ToString();
  StatusOr<IrChange> change = pm.Run(main);
  ASSERT_TRUE(change.ok()) << change.status().ToString();
  EXPECT_EQ(FullValue(Find(main.block(), "pd_op.remainder_")->operand(1)), 4.0);
  const Operation* scale = Find(Find(main.block(), "pd_op.if")->region(0).front(), "pd_op.scale_");
  EXPECT_EQ(FullValue(scale->operand(1)), 0.25);

  PassManager zero;
  const Status refused = zero.AddPipeline("gradient-merge{k-steps=0}", registry);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("k-steps"), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.ToString().find("at least 1"), std::string::npos) << refused.ToString();
}

TEST(GradientMergeTest, TestOnlyFaults) {
  Program scaled = Parse(kMain);
  ASSERT_TRUE(
      ApplyGradientMerge(scaled,
                         {.k_steps = 2, .avg = true, .fault = GradientMergeFault::kScaleByKPlusOne})
          .ok());
  const Operation* scale =
      Find(Find(scaled.block(), "pd_op.if")->region(0).front(), "pd_op.scale_");
  EXPECT_DOUBLE_EQ(FullValue(scale->operand(1)), 1.0 / 3.0);

  Program ungated = Parse(kMain);
  ASSERT_TRUE(
      ApplyGradientMerge(ungated, {.k_steps = 2, .avg = true, .fault = GradientMergeFault::kDropIf})
          .ok());
  EXPECT_EQ(Find(ungated.block(), "pd_op.if"), nullptr);
  EXPECT_NE(Find(ungated.block(), "pd_op.sgd_"), nullptr);
  EXPECT_NE(Find(ungated.block(), "pd_op.set_value_with_tensor_"), nullptr);
  EXPECT_TRUE(VerifyProgram(ungated).ok());

  StatusOr<GradientMergeFault> unknown = GradientMergeFaultFromName("scale-twice");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().ToString(),
            "attr 'test-fault': error: unknown gradient-merge fault 'scale-twice': expected none, "
            "scale-by-k-plus-1 or drop-if");
}

TEST(GradientMergeTest, LocatedRefusals) {
  Program main = Parse(kMain);
  StatusOr<GradientMergeResult> zero = ApplyGradientMerge(main, {.k_steps = 0, .avg = true});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().ToString(),
            "attr 'k-steps': error: gradient merge needs k_steps >= 1, got 0");

  // Without the optimizer (the sgd_ ops erased): nothing to gate.
  Program forward = Parse(kMain);
  for (Operation* op : forward.block().ops()) {
    if (op->name() == "pd_op.sgd_") op->parent_block()->Remove(op);
  }
  StatusOr<GradientMergeResult> none = ApplyGradientMerge(forward, {.k_steps = 2, .avg = true});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(none.status().ToString(),
            "the top block: error: gradient merge needs the optimizer: no op has the optimize "
            "role (op_role 2)");

  // Applied twice: the counter is declared already; the program is left as it was.
  ASSERT_TRUE(ApplyGradientMerge(main, {.k_steps = 2, .avg = true}).ok());
  const size_t ops = main.CountOps();
  StatusOr<GradientMergeResult> twice = ApplyGradientMerge(main, {.k_steps = 2, .avg = true});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().ToString().find("applied before"), std::string::npos)
      << twice.status().ToString();
  EXPECT_EQ(main.CountOps(), ops);
}

}  // namespace
}  // namespace irm::newir
