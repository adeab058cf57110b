// The gradient-merge pass on programs: the op sequence and attributes it leaves in a small
// training program, the startup additions, that every zoo training program stays valid, and its
// diagnostics. The expectations pin Paddle's parse_program
// (python/paddle/distributed/passes/auto_parallel_gradient_merge.py; the program it makes is the
// one test/auto_parallel/test_dist_gradient_merge* and gradient_merge_pass_unittest.py run).
#include "oldir/passes/gradient_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/op_role.h"
#include "oldir/validator.h"

namespace irm::oldir::passes {
namespace {

using models::ModelPrograms;

// One nn.Linear(4, 3), softmax cross entropy, SGD: a program small enough to spell out.
struct Programs {
  Program main;
  Program startup;
};

Programs SmallSgdMlp() {
  ModelPrograms model;
  models::MlpConfig config;
  config.depth = 1;
  EXPECT_TRUE(models::BuildMlp(config, &model).ok());
  EXPECT_TRUE(models::AddTraining(&model, OptimizerOptions{}).ok());
  return {model.main.Build(), model.startup.Build()};
}

GradientMergeOptions Options(int k_steps, bool avg = true, std::string file = "") {
  GradientMergeOptions options;
  options.k_steps = k_steps;
  options.avg = avg;
  options.file = std::move(file);
  return options;
}

std::vector<std::string> OpTypes(const Block& block) {
  std::vector<std::string> types;
  for (int i = 0; i < block.num_ops(); ++i) types.push_back(block.op(i).type());
  return types;
}

std::vector<std::string> Args(const Op::Names* names) {
  if (names == nullptr) return {"<no slot>"};
  return {names->begin(), names->end()};
}

TEST(GradientMergeTest, RewritesTheRootBlockAsParseProgramDoes) {
  Programs p = SmallSgdMlp();
  ASSERT_TRUE(ApplyGradientMerge(p.main, p.startup, Options(2)).ok());
  ASSERT_EQ(p.main.num_blocks(), 2);
  const Block root = p.main.root();
  // The forward and backward ops stay; each parameter gradient's accumulation follows its
  // producer (bias grad from elementwise_add_grad, weight grad from matmul_v2_grad); the counter
  // and the conditional_block replace the optimizer; the fetch stays last.
  EXPECT_EQ(OpTypes(root),
            (std::vector<std::string>{
                "feed", "feed", "matmul_v2", "elementwise_add", "softmax_with_cross_entropy",
                "mean", "fill_constant", "mean_grad", "softmax_with_cross_entropy_grad",
                "elementwise_add_grad", "elementwise_add", "matmul_v2_grad", "elementwise_add",
                "increment", "elementwise_mod", "equal", "conditional_block", "fetch"}));
  // In place, buffer first ('a = a + b'), backward role, in Paddle's namescope.
  const Op add_b = root.op(10);
  EXPECT_EQ(Args(add_b.Input("X")), std::vector<std::string>{"linear_0.b_0@GRAD@MERGE"});
  EXPECT_EQ(Args(add_b.Input("Y")), std::vector<std::string>{"linear_0.b_0@GRAD"});
  EXPECT_EQ(Args(add_b.Output("Out")), std::vector<std::string>{"linear_0.b_0@GRAD@MERGE"});
  EXPECT_EQ(add_b.role(), kBackward);
  EXPECT_EQ(add_b.AttrOr<int32_t>("axis", 0), -1);
  EXPECT_EQ(add_b.AttrOr<std::string>(kOpNamescopeAttr, ""), "/auto_parallel/gradient_merge");
  EXPECT_EQ(Args(root.op(12).Input("X")), std::vector<std::string>{"linear_0.w_0@GRAD@MERGE"});
  EXPECT_EQ(Args(root.op(12).Input("Y")), std::vector<std::string>{"linear_0.w_0@GRAD"});

  // step = (step + 1) % k; cond = step == 0: backward role, on the CPU.
  const Op increment = root.op(13);
  EXPECT_EQ(Args(increment.Input("X")), std::vector<std::string>{"gradient_merge_step"});
  EXPECT_EQ(Args(increment.Output("Out")), std::vector<std::string>{"gradient_merge_step"});
  EXPECT_EQ(increment.AttrOr<float>("step", 0.0f), 1.0f);
  const Op mod = root.op(14);
  EXPECT_EQ(Args(mod.Input("X")), std::vector<std::string>{"gradient_merge_step"});
  EXPECT_EQ(Args(mod.Input("Y")), std::vector<std::string>{"gradient_merge_k"});
  EXPECT_EQ(Args(mod.Output("Out")), std::vector<std::string>{"gradient_merge_step"});
  const Op equal = root.op(15);
  EXPECT_EQ(Args(equal.Input("X")), std::vector<std::string>{"gradient_merge_step"});
  EXPECT_EQ(Args(equal.Input("Y")), std::vector<std::string>{"gradient_merge_zero"});
  EXPECT_EQ(Args(equal.Output("Out")), std::vector<std::string>{"gradient_merge_cond"});
  for (const Op& op : {increment, mod, equal}) {
    EXPECT_EQ(op.role(), kBackward) << op.type();
    EXPECT_EQ(op.AttrOr<std::string>(kOpDeviceAttr, ""), "cpu") << op.type();
  }

  // The conditional_block: optimize role, scalar condition, block 1; what the block reads before
  // writing it, and what it writes.
  const Op cond = root.op(16);
  EXPECT_EQ(cond.role(), kOptimize);
  EXPECT_EQ(Args(cond.Input("Cond")), std::vector<std::string>{"gradient_merge_cond"});
  EXPECT_EQ(Args(cond.Input("Input")),
            (std::vector<std::string>{"learning_rate_0", "linear_0.b_0", "linear_0.b_0@GRAD@MERGE",
                                      "linear_0.w_0", "linear_0.w_0@GRAD@MERGE"}));
  EXPECT_EQ(Args(cond.Output("Out")),
            (std::vector<std::string>{"linear_0.b_0", "linear_0.b_0@GRAD@MERGE", "linear_0.w_0",
                                      "linear_0.w_0@GRAD@MERGE"}));
  EXPECT_EQ(Args(cond.Output("Scope")), std::vector<std::string>{"_generated_var_0"});
  EXPECT_EQ(cond.AttrOr<BlockRef>("sub_block", {}), BlockRef{1});
  EXPECT_TRUE(cond.AttrOr<bool>("is_scalar_condition", false));

  // The sub-block: the scales in the order the backward scan met the gradients (weight first),
  // the optimizer ops in program order on the buffers, the resets.
  const Block sub = p.main.block(1);
  EXPECT_EQ(sub.parent_index(), 0);
  EXPECT_EQ(OpTypes(sub),
            (std::vector<std::string>{"scale", "scale", "sgd", "sgd", "set_value", "set_value"}));
  const Op scale = sub.op(0);
  EXPECT_EQ(Args(scale.Input("X")), std::vector<std::string>{"linear_0.w_0@GRAD@MERGE"});
  EXPECT_EQ(Args(scale.Output("Out")), std::vector<std::string>{"linear_0.w_0@GRAD@MERGE"});
  EXPECT_EQ(scale.AttrOr<float>("scale", 0.0f), 0.5f);
  EXPECT_EQ(scale.AttrOr<float>("bias", 1.0f), 0.0f);
  EXPECT_FALSE(scale.AttrOr<bool>("bias_after_scale", true));
  const Op sgd = sub.op(2);
  EXPECT_EQ(Args(sgd.Input("Param")), std::vector<std::string>{"linear_0.b_0"});
  EXPECT_EQ(Args(sgd.Input("Grad")), std::vector<std::string>{"linear_0.b_0@GRAD@MERGE"});
  EXPECT_FALSE(sgd.HasAttr(kOpRoleVarAttr));  // removed, as Paddle removes it
  EXPECT_EQ(sgd.AttrOr<std::string>(kOpNamescopeAttr, ""), "/optimizer/");  // copied as it was
  const Op reset = sub.op(4);
  EXPECT_EQ(Args(reset.Input("Input")), std::vector<std::string>{"linear_0.w_0@GRAD@MERGE"});
  EXPECT_EQ(Args(reset.Output("Out")), std::vector<std::string>{"linear_0.w_0@GRAD@MERGE"});
  EXPECT_EQ(reset.AttrOr<std::vector<float>>("fp32_values", {}), std::vector<float>{0.0f});
  EXPECT_EQ(reset.AttrOr<std::vector<int64_t>>("shape", {}), std::vector<int64_t>{1});
  EXPECT_EQ(reset.AttrOr<std::vector<int64_t>>("axes", {7}), std::vector<int64_t>{});
  for (int i = 0; i < sub.num_ops(); ++i) EXPECT_EQ(sub.op(i).role(), kOptimize) << i;

  // The buffers are persistable, shaped as their gradients; the counters persistable int32 [1].
  const std::optional<Var> merge = root.FindVar("linear_0.w_0@GRAD@MERGE");
  ASSERT_TRUE(merge.has_value());
  EXPECT_TRUE(merge->persistable());
  EXPECT_EQ(merge->dims(), (std::vector<int64_t>{4, 3}));
  for (const char* name : {"gradient_merge_k", "gradient_merge_zero", "gradient_merge_step"}) {
    const std::optional<Var> counter = root.FindVar(name);
    ASSERT_TRUE(counter.has_value()) << name;
    EXPECT_TRUE(counter->persistable());
    EXPECT_EQ(counter->dtype(), proto::VarType::INT32);
    EXPECT_EQ(counter->dims(), std::vector<int64_t>{1});
  }
  EXPECT_EQ(root.FindVar("gradient_merge_cond")->dtype(), proto::VarType::BOOL);
}

TEST(GradientMergeTest, StartupZeroFillsTheBuffersAndInitialisesTheCounters) {
  Programs p = SmallSgdMlp();
  const int before = p.startup.root().num_ops();
  ASSERT_TRUE(ApplyGradientMerge(p.main, p.startup, Options(4)).ok());
  const Block startup = p.startup.root();
  ASSERT_EQ(startup.num_ops(), before + 6);
  struct Expected {
    const char* out;
    float value;
    bool force_cpu;
    std::vector<int64_t> shape;
  };
  const std::vector<Expected> expected = {{"linear_0.w_0@GRAD@MERGE", 0.0f, false, {4, 3}},
                                          {"linear_0.b_0@GRAD@MERGE", 0.0f, false, {3}},
                                          {"gradient_merge_k", 4.0f, true, {1}},
                                          {"gradient_merge_zero", 0.0f, true, {1}},
                                          {"gradient_merge_step", 0.0f, true, {1}},
                                          {"gradient_merge_cond", 0.0f, true, {1}}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const Op op = startup.op(before + static_cast<int>(i));
    SCOPED_TRACE(expected[i].out);
    EXPECT_EQ(op.type(), "fill_constant");
    EXPECT_EQ(Args(op.Output("Out")), std::vector<std::string>{expected[i].out});
    EXPECT_EQ(op.AttrOr<float>("value", -1.0f), expected[i].value);
    EXPECT_EQ(op.AttrOr<bool>("force_cpu", !expected[i].force_cpu), expected[i].force_cpu);
    EXPECT_EQ(op.AttrOr<std::vector<int64_t>>("shape", {}), expected[i].shape);
    EXPECT_TRUE(startup.FindVar(expected[i].out).has_value());
  }
}

TEST(GradientMergeTest, WithoutAvgThereIsNoScale) {
  Programs p = SmallSgdMlp();
  ASSERT_TRUE(ApplyGradientMerge(p.main, p.startup, Options(2, /*avg=*/false)).ok());
  EXPECT_EQ(OpTypes(p.main.block(1)),
            (std::vector<std::string>{"sgd", "sgd", "set_value", "set_value"}));
}

// Every zoo training program stays a valid program after the pass (the global-norm clip ops,
// which read the gradients, move into the block with the optimizer and read the buffers).
TEST(GradientMergeTest, ZooProgramsStayValid) {
  for (const OptimizerOptions& optimizer : EveryOptimizerConfiguration()) {
    for (int model_kind = 0; model_kind < 2; ++model_kind) {
      ModelPrograms model;
      if (model_kind == 0) {
        ASSERT_TRUE(models::BuildMlp({}, &model).ok());
      } else {
        models::GptConfig config;
        config.layers = 2;
        config.hidden = 8;
        config.heads = 2;
        config.vocab = 11;
        config.seq = 4;
        ASSERT_TRUE(models::BuildGpt(config, &model).ok());
      }
      ASSERT_TRUE(models::AddTraining(&model, optimizer).ok());
      Program main = model.main.Build();
      Program startup = model.startup.Build();
      SCOPED_TRACE(std::string(model_kind == 0 ? "mlp " : "gpt ") +
                   OptimizerKindName(optimizer.kind) + (optimizer.clip_global_norm ? " clip" : ""));
      ASSERT_TRUE(ApplyGradientMerge(main, startup, Options(4)).ok());
      const Diagnostics main_findings = ValidateProgram(main);
      EXPECT_FALSE(main_findings.HasErrors()) << main_findings.Render();
      const Diagnostics startup_findings = ValidateProgram(startup);
      EXPECT_FALSE(startup_findings.HasErrors()) << startup_findings.Render();
      // No optimize-role op is left outside the conditional block.
      for (int i = 0; i < main.root().num_ops(); ++i) {
        const Op op = main.root().op(i);
        if (op.type() == "conditional_block") continue;
        EXPECT_FALSE(IsOptimize(op.role())) << i << " " << op.type();
      }
    }
  }
}

TEST(GradientMergeTest, KStepsBelowOneIsAnErrorAndChangesNothing) {
  Programs p = SmallSgdMlp();
  const std::string before = p.main.desc().SerializeAsString();
  const Status status = ApplyGradientMerge(p.main, p.startup, Options(0, true, "main.pdmodel"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.location().attr, "k_steps");
  EXPECT_EQ(status.ToString(),
            "main.pdmodel: attr 'k_steps': error: gradient merge needs k_steps >= 1, not 0");
  EXPECT_EQ(p.main.desc().SerializeAsString(), before);
}

TEST(GradientMergeTest, AProgramWithoutOptimizerOpsIsALocatedError) {
  ModelPrograms model;
  ASSERT_TRUE(models::BuildMlp({}, &model).ok());  // forward only
  Program main = model.main.Build();
  Program startup = model.startup.Build();
  const Status status = ApplyGradientMerge(main, startup, Options(2, true, "mlp.pdmodel"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.location().file, "mlp.pdmodel");
  EXPECT_EQ(status.location().block, 0);
  EXPECT_NE(status.ToString().find("no optimize-role op"), std::string::npos) << status.ToString();
  EXPECT_EQ(main.num_blocks(), 1);
}

TEST(GradientMergeTest, ApplyingThePassTwiceIsALocatedError) {
  Programs p = SmallSgdMlp();
  ASSERT_TRUE(ApplyGradientMerge(p.main, p.startup, Options(2)).ok());
  // The optimizer now sits inside the conditional block: the root block has no optimize-role op
  // but the conditional_block itself, whose buffers are already declared.
  const Status status = ApplyGradientMerge(p.main, p.startup, Options(2, true, "m"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_EQ(status.ToString(),
            "m: block 0, var 'linear_0.w_0@GRAD@MERGE': error: gradient merge declares "
            "'linear_0.w_0@GRAD@MERGE', which the program already declares (was the pass applied "
            "twice?)");
}

}  // namespace
}  // namespace irm::oldir::passes
