// A strategy's passes applied together (apply_strategy.h) on programs: data parallelism then
// gradient merge, in the order of Paddle's parallelizer_v2.py (the data-parallel sync inserted
// with the backward; auto_parallel_gradient_merge_pass in _apply_post_optimization), so that each
// gradient's merge add follows its all-reduce and scale, and every rank's programs validate.
#include "oldir/passes/apply_strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/passes/data_parallel.h"
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
  EXPECT_TRUE(models::AddTraining(model, OptimizerOptions{}).ok());
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

// The zoo mlp (4 linears) or gpt (2 layers, 4 heads, vocabulary 12) with AdamW, as the
// distributed tests run them.
void ZooTraining(const std::string& name, ModelPrograms* model) {
  if (name == "mlp") {
    models::MlpConfig config;
    config.depth = 4;
    EXPECT_TRUE(models::BuildMlp(config, model).ok());
  } else {
    models::GptConfig config;
    config.layers = 2;
    config.hidden = 8;
    config.heads = 4;
    config.vocab = 12;
    config.seq = 4;
    config.dropout = 0.0f;
    EXPECT_TRUE(models::BuildGpt(config, model).ok());
  }
  OptimizerOptions optimizer;
  optimizer.kind = OptimizerKind::kAdamW;
  EXPECT_TRUE(models::AddTraining(model, optimizer).ok());
}

Strategy Hybrid(int dp, int mp, int pp) {
  Strategy s;
  s.dp_degree = dp;
  s.mp_degree = mp;
  s.pp_degree = pp;
  if (pp > 1) {
    s.pipeline.enable = true;
    s.pipeline.schedule_mode = "1F1B";
    s.pipeline.accumulate_steps = 2;
  }
  return s;
}

// The ring of each communication op of `program`, by op type.
std::multiset<std::pair<std::string, int>> CommRings(const Program& program) {
  std::multiset<std::pair<std::string, int>> rings;
  const Block root = program.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (op.type().rfind("c_", 0) == 0 || op.type() == "send_v2" || op.type() == "recv_v2") {
      const int32_t ring = op.AttrOr<int32_t>("ring_id", -1);
      if (ring >= 0) rings.insert({op.type(), ring});
    }
  }
  return rings;
}

// Every rank of a hybrid world: programs that validate, rings that name groups holding the rank,
// and as many groups as Paddle's topology has: an mp group per (dp, pp), a p2p group per
// direction and stage boundary per (dp, mp), a dp group per (pp, mp).
TEST(ApplyStrategyTest, HybridWorldsLayRanksOutAsPaddlesTopology) {
  struct Case {
    int dp, mp, pp;
    size_t groups;
  };
  for (const std::string model_name : {"mlp", "gpt"}) {
    for (const Case& c : {Case{1, 2, 1, 1}, Case{2, 2, 1, 4}, Case{2, 1, 2, 2 * 2 + 2},
                          Case{2, 2, 2, 4 + 4 * 2 + 4}}) {
      SCOPED_TRACE(model_name + " dp" + std::to_string(c.dp) + " mp" + std::to_string(c.mp) +
                   " pp" + std::to_string(c.pp));
      ModelPrograms model;
      ZooTraining(model_name, &model);
      ApplyStrategyOptions options;
      options.micro_batch_size = 2;
      StatusOr<DistributedPrograms> out = ApplyStrategy(model.startup.Build(), model.main.Build(),
                                                        Hybrid(c.dp, c.mp, c.pp), options);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      ASSERT_EQ(out->world_size, c.dp * c.mp * c.pp);
      ASSERT_EQ(out->ranks.size(), static_cast<size_t>(out->world_size));
      EXPECT_EQ(out->process_groups.size(), c.groups);
      EXPECT_EQ(out->micro_batches, c.pp > 1 ? 2 : 1);
      for (int rank = 0; rank < out->world_size; ++rank) {
        const RankPrograms& programs = out->ranks[rank];
        EXPECT_EQ(programs.jobs.empty(), c.pp == 1);
        EXPECT_EQ(!programs.shards.empty(), c.mp > 1) << rank;
        // A job program reads what earlier jobs of its micro-batch wrote: the stage's program
        // the jobs were cut from is what validates as a whole.
        for (const Program* program : {&programs.startup, &programs.main}) {
          const Diagnostics findings = ValidateProgram(*program);
          EXPECT_FALSE(findings.HasErrors()) << rank << ": " << findings.Render();
        }
        std::vector<const Program*> all = {&programs.main};
        for (const auto& job : programs.jobs) all.push_back(&job.second);
        for (const Program* program : all) {
          for (const auto& [type, ring] : CommRings(*program)) {
            ASSERT_LT(ring, static_cast<int>(out->process_groups.size())) << type;
            const std::vector<int>& members = out->process_groups[ring].ranks;
            EXPECT_NE(std::find(members.begin(), members.end(), rank), members.end())
                << "rank " << rank << " " << type << " on ring " << ring;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace irm::oldir::passes
