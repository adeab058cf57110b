// A strategy's passes applied together (apply_strategy.h) on programs: data parallelism then
// gradient merge, in the order of Paddle's parallelizer_v2.py (the data-parallel sync inserted
// with the backward; auto_parallel_gradient_merge_pass in _apply_post_optimization), so that each
// gradient's merge add follows its all-reduce and scale, and every rank's programs validate.
#include "oldir/passes/apply_strategy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/passes/gradient_merge.h"
#include "oldir/validator.h"

namespace irm::oldir::passes {
namespace {

using models::ModelPrograms;

// One nn.Linear(4, 3), softmax cross entropy, SGD.
void SmallSgdMlp(ModelPrograms* model) {
  models::MlpConfig config;
  config.depth = 1;
  EXPECT_TRUE(models::BuildMlp(config, model).ok());
  EXPECT_TRUE(models::AddTraining(model, {}).ok());
}

std::vector<std::string> OpTypes(const Block& block) {
  std::vector<std::string> types;
  for (int i = 0; i < block.num_ops(); ++i) types.push_back(block.op(i).type());
  return types;
}

int Count(const Block& block, const std::string& type) {
  int n = 0;
  for (int i = 0; i < block.num_ops(); ++i) n += block.op(i).type() == type ? 1 : 0;
  return n;
}

Strategy DpGm(int dp, int k) {
  Strategy s;
  s.dp_degree = dp;
  s.gradient_merge.enable = true;
  s.gradient_merge.k_steps = k;
  return s;
}

// parallelizer_v2.py: the sync ops are in backward, so the merge add follows them and the
// buffers accumulate the synchronised gradient on every micro-step
// (gradient_sync_after_accumulate false).
TEST(ApplyStrategyTest, DataParallelThenGradientMerge) {
  ModelPrograms model;
  SmallSgdMlp(&model);
  StatusOr<DistributedPrograms> out =
      ApplyStrategy(model.startup.Build(), model.main.Build(), DpGm(2, 2));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->world_size, 2);
  ASSERT_EQ(out->ranks.size(), 2u);
  for (const RankPrograms& rank : out->ranks) {
    ASSERT_EQ(rank.main.num_blocks(), 2);
    EXPECT_EQ(OpTypes(rank.main.root()),
              (std::vector<std::string>{"feed",
                                        "feed",
                                        "matmul_v2",
                                        "elementwise_add",
                                        "softmax_with_cross_entropy",
                                        "mean",
                                        "fill_constant",
                                        "mean_grad",
                                        "softmax_with_cross_entropy_grad",
                                        "elementwise_add_grad",
                                        "c_allreduce_sum",
                                        "scale",
                                        "elementwise_add",
                                        "matmul_v2_grad",
                                        "c_allreduce_sum",
                                        "scale",
                                        "elementwise_add",
                                        "increment",
                                        "elementwise_mod",
                                        "equal",
                                        "conditional_block",
                                        "fetch"}));
    // The optimizer, the 1/k scales and the zeroing moved into the conditional block.
    const Block sub = rank.main.block(1);
    EXPECT_EQ(Count(sub, "sgd"), 2);
    EXPECT_EQ(Count(sub, "scale"), 2);
    EXPECT_EQ(Count(sub, "c_allreduce_sum"), 0);
    const Diagnostics findings = ValidateProgram(rank.main);
    EXPECT_FALSE(findings.HasErrors()) << findings.Render();
    // The serial startup's 3 initialisers, then the 2 buffers and the 4 counter vars.
    EXPECT_GT(rank.startup.num_ops(), 3);
  }
}

TEST(ApplyStrategyTest, EveryZooProgramValidatesUnderDpAndGm) {
  for (const bool gpt : {false, true}) {
    for (const OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
      ModelPrograms model;
      if (gpt) {
        models::GptConfig config;
        config.layers = 2;
        ASSERT_TRUE(models::BuildGpt(config, &model).ok());
      } else {
        ASSERT_TRUE(models::BuildMlp({}, &model).ok());
      }
      OptimizerOptions optimizer;
      optimizer.kind = kind;
      ASSERT_TRUE(models::AddTraining(&model, optimizer).ok());
      const Program main = model.main.Build();
      StatusOr<DistributedPrograms> out = ApplyStrategy(model.startup.Build(), main, DpGm(2, 4));
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const Block root = out->ranks[1].main.root();
      // One all-reduce and one merge add per parameter, all in the root block.
      StatusOr<std::vector<ParamGrad>> grads = OptimizerParamGrads(main);
      ASSERT_TRUE(grads.ok());
      EXPECT_EQ(Count(root, "c_allreduce_sum"), static_cast<int>(grads->size()));
      EXPECT_EQ(Count(root, "conditional_block"), 1);
      const Diagnostics findings = ValidateProgram(out->ranks[1].main);
      EXPECT_FALSE(findings.HasErrors()) << findings.Render();
    }
  }
}

TEST(ApplyStrategyTest, WithoutGradientMergeItIsTheDataParallelPass) {
  ModelPrograms model;
  SmallSgdMlp(&model);
  Strategy s;
  s.dp_degree = 2;
  StatusOr<DistributedPrograms> out = ApplyStrategy(model.startup.Build(), model.main.Build(), s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ranks[0].main.num_blocks(), 1);
  EXPECT_EQ(Count(out->ranks[0].main.root(), "c_allreduce_sum"), 2);
}

TEST(ApplyStrategyTest, GradientMergeAloneOnOneRank) {
  ModelPrograms model;
  SmallSgdMlp(&model);
  StatusOr<DistributedPrograms> out =
      ApplyStrategy(model.startup.Build(), model.main.Build(), DpGm(1, 2));
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->ranks.size(), 1u);
  EXPECT_EQ(Count(out->ranks[0].main.root(), "c_allreduce_sum"), 0);
  EXPECT_EQ(Count(out->ranks[0].main.root(), "conditional_block"), 1);
}

}  // namespace
}  // namespace irm::oldir::passes
