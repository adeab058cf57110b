// The distributed-vs-serial check (serial_parity.h). Whole runs: the zoo mlp made into a dp2
// bundle by the legacy data-parallel pass (oldir/passes: ApplyStrategy, WriteDistributedBundle)
// against its serial one-rank bundle (the same pass with dp_degree 1) — equal within the
// reordered tier and the noise-floor tier after 3 steps; the same bundle with one gradient's
// 1/dp scale edited to 1 (Paddle scales by 1/dp after the all-reduce: python/paddle/distributed/
// auto_parallel/static/operators/common.py, sync_and_scale_gradients) fails, and re-running
// fewer steps names the step and the parameter; without one all-reduce, the replicas drift apart,
// a finding of its own. Hand-made outcomes: the pipeline's micro-batch losses averaged per
// replica and over the replicas, halves of a parameter reassembled and the elements nobody holds
// reported, and the float64 shadow's arbitration (noise floor, no signal, mismatch) with the
// reports that list it.
#include "diff_tests/serial_parity.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/schema_check_test_support.h"
#include "diff_tests/serial_reference_test_support.h"
#include "oldir/builder.h"
#include "oldir/params_io.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/bundle_output.h"
#include "reference_runtime/legacy_executor.h"

namespace irm::diff {
namespace {

using rt::Tensor;

constexpr int kSteps = 3;
constexpr int64_t kRowsPerReplica = 2;

// The programs of `model` under dp_degree `dp`.
oldir::passes::DistributedPrograms DataParallel(const oldir::models::ModelPrograms& model, int dp) {
  oldir::passes::Strategy strategy;
  strategy.dp_degree = dp;
  StatusOr<oldir::passes::DistributedPrograms> programs =
      oldir::passes::ApplyStrategy(model.startup.Build(), model.main.Build(), strategy);
  EXPECT_TRUE(programs.ok()) << programs.status().ToString();
  return programs.ok() ? std::move(programs).value() : oldir::passes::DistributedPrograms{};
}

void Write(const oldir::models::ModelPrograms& model, int dp,
           const oldir::passes::DistributedPrograms& programs, const std::string& dir) {
  oldir::passes::Strategy strategy;
  strategy.dp_degree = dp;
  StatusOr<oldir::Bundle> written =
      oldir::passes::WriteDistributedBundle(programs, ZooBundleJson(model, strategy, kSteps), dir);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
}

// The first op of `type` in `program`'s root block that reads `input` through X.
oldir::proto::OpDesc* FindOp(oldir::Program& program, const std::string& type,
                             const std::string& input) {
  oldir::proto::BlockDesc* block = program.mutable_desc()->mutable_blocks(0);
  for (oldir::proto::OpDesc& op : *block->mutable_ops()) {
    if (op.type() != type) continue;
    for (const oldir::proto::OpDesc::Var& slot : op.inputs()) {
      if (slot.parameter() == "X" && slot.arguments_size() == 1 && slot.arguments(0) == input) {
        return &op;
      }
    }
  }
  return nullptr;
}

// The serial startup's vars: what the serial run's scope holds after the steps.
size_t SerialStateSize(const oldir::models::ModelPrograms& model) {
  rt::ExecutorOptions options;
  options.seed = static_cast<uint64_t>(model.seed);
  rt::LegacyExecutor startup(model.startup.Build(), options);
  rt::Scope scope;
  EXPECT_TRUE(startup.Run(scope, {}).ok());
  return scope.LocalNames().size();
}

class SerialParityTest : public ::testing::Test {
 protected:
  void Build(oldir::OptimizerKind optimizer) {
    ASSERT_TRUE(BuildZooTraining("mlp", optimizer, &model_).ok());
    dp2_ = DataParallel(model_, 2);
    ASSERT_NO_FATAL_FAILURE(Write(model_, 1, DataParallel(model_, 1), dir_ / "serial"));
  }
  StatusOr<ParityResult> Check(Tier tier, int steps = kSteps) {
    SerialParityOptions options;
    options.tier = tier;
    options.steps = steps;
    options.batch_size = kRowsPerReplica;
    return RunSerialParity(dir_ / "dp2", dir_ / "serial", options);
  }

  oldir::models::ModelPrograms model_;
  oldir::passes::DistributedPrograms dp2_;
  ScratchDir dir_{"serial_parity"};
};

TEST_F(SerialParityTest, Dp2MlpMatchesItsSerialBundleInTheReorderedTier) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kSgd));
  ASSERT_NO_FATAL_FAILURE(Write(model_, 2, dp2_, dir_ / "dp2"));
  StatusOr<ParityResult> result = Check(Tier::kReordered);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
  EXPECT_TRUE(report.against_serial);
  // The loss of each step, and every parameter (4 linears' weights and biases) and the learning
  // rate, each reassembled over both replicas.
  EXPECT_EQ(report.Compared(TensorGroup::kFetch), kSteps);
  EXPECT_EQ(report.Compared(TensorGroup::kParameter), static_cast<int>(SerialStateSize(model_)));
  EXPECT_EQ(report.Compared(TensorGroup::kParameter), 9);
  EXPECT_EQ(report.Compared(TensorGroup::kIntermediate), 0);
  for (const ComparedTensor& t : report.tensors) EXPECT_EQ(t.rank, kAllRanks) << t.name;
  EXPECT_FALSE(report.first_differing_state.has_value());
  EXPECT_EQ(testing::SchemaErrors(RenderJson(report)), std::vector<std::string>{});
  const std::string md = RenderMarkdown(report);
  EXPECT_NE(md.find("- distributed bundle: `"), std::string::npos) << md;
  EXPECT_NE(md.find("All 12 compared tensors are equal under the reordered tier.\n"),
            std::string::npos)
      << md;
}

// Gradient merge (oldir/passes/gradient_merge.h, Paddle's auto_parallel_gradient_merge.py): k = 2
// executor steps make one update of the merged gradient averaged over k (gradient_merge.avg), the
// serial update of the k steps' rows stacked (pipelines.md §2.3). Without avg the update takes
// the sum of the k gradients, twice the serial one: the check fails on the parameters. A step
// count that is not whole updates is refused.
TEST_F(SerialParityTest, GradientMergeMatchesTheSerialRunOfTheStackedRows) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kSgd));
  for (const bool avg : {true, false}) {
    SCOPED_TRACE(avg ? "avg" : "sum");
    oldir::passes::Strategy strategy;
    strategy.dp_degree = 2;
    strategy.gradient_merge.enable = true;
    strategy.gradient_merge.k_steps = 2;
    strategy.gradient_merge.avg = avg;
    StatusOr<oldir::passes::DistributedPrograms> programs =
        oldir::passes::ApplyStrategy(model_.startup.Build(), model_.main.Build(), strategy);
    ASSERT_TRUE(programs.ok()) << programs.status().ToString();
    const std::string dir = dir_ / (avg ? "gm2" : "gm2_sum");
    StatusOr<oldir::Bundle> written =
        oldir::passes::WriteDistributedBundle(*programs, ZooBundleJson(model_, strategy, 4), dir);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
    SerialParityOptions options;
    options.steps = 4;
    options.batch_size = kRowsPerReplica;
    StatusOr<ParityResult> result = RunSerialParity(dir, dir_ / "serial", options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    // Two updates: two serial steps, each fetch the mean of its two executor steps' losses.
    EXPECT_EQ(report.Compared(TensorGroup::kFetch), 2);
    EXPECT_EQ(report.Compared(TensorGroup::kParameter), static_cast<int>(SerialStateSize(model_)));
    if (avg) {
      EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
    } else {
      EXPECT_FALSE(report.parity());
      EXPECT_GT(report.Mismatched(TensorGroup::kParameter), 0);
      // The first update already differs: the re-run of one serial step (two executor steps)
      // names it.
      ASSERT_TRUE(report.first_differing_state.has_value());
      EXPECT_EQ(report.first_differing_state->step, 2);
    }
    options.steps = 3;
    StatusOr<ParityResult> partial = RunSerialParity(dir, dir_ / "serial", options);
    ASSERT_FALSE(partial.ok());
    EXPECT_EQ(partial.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(partial.status().message().find("not whole updates"), std::string::npos)
        << partial.status().ToString();
  }
}

TEST_F(SerialParityTest, Dp2MlpWithAdamWPassesInTheNoiseFloorTier) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kAdamW));
  ASSERT_NO_FATAL_FAILURE(Write(model_, 2, dp2_, dir_ / "dp2"));
  StatusOr<ParityResult> result = Check(Tier::kNoiseFloor);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->report.parity()) << RenderMarkdown(result->report);
  EXPECT_EQ(result->report.tier, Tier::kNoiseFloor);
  // Parameters, both moments, both beta powers per parameter, and the learning rate.
  EXPECT_EQ(result->report.Compared(TensorGroup::kParameter),
            static_cast<int>(SerialStateSize(model_)));
  EXPECT_GE(result->report.Compared(TensorGroup::kParameter), 8 * 5);
}

TEST_F(SerialParityTest, AnEditedScaleFailsAndTheShorterRunsNameTheStepAndTheParameter) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kSgd));
  // linear_1.w_0's gradient is summed over the replicas and not halved: twice the serial one.
  for (oldir::passes::RankPrograms& rank : dp2_.ranks) {
    oldir::proto::OpDesc* scale = FindOp(rank.main, "scale", "linear_1.w_0@GRAD");
    ASSERT_NE(scale, nullptr);
    for (oldir::proto::OpDesc::Attr& attr : *scale->mutable_attrs()) {
      if (attr.name() == "scale") attr.set_f(1.0f);
    }
  }
  ASSERT_NO_FATAL_FAILURE(Write(model_, 2, dp2_, dir_ / "dp2"));
  for (Tier tier : {Tier::kReordered, Tier::kNoiseFloor}) {
    SCOPED_TRACE(TierName(tier));
    StatusOr<ParityResult> result = Check(tier);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    EXPECT_FALSE(report.parity());
    ASSERT_TRUE(report.first_differing_state.has_value()) << RenderMarkdown(report);
    // After one step only the parameter the edited gradient updates differs (SGD keeps no state).
    EXPECT_EQ(report.first_differing_state->step, 1);
    EXPECT_EQ(report.first_differing_state->names, std::vector<std::string>{"linear_1.w_0"});
    const std::string md = RenderMarkdown(report);
    EXPECT_NE(md.find("After step 1, 1 var differs from the serial run: `linear_1.w_0`."),
              std::string::npos)
        << md;
    // After 3 steps the loss of steps 2 and 3 differs too, and more parameters.
    EXPECT_GE(report.Mismatched(TensorGroup::kParameter), 2);
    EXPECT_GE(report.Mismatched(TensorGroup::kFetch), 1);
    EXPECT_EQ(testing::SchemaErrors(RenderJson(report)), std::vector<std::string>{});
  }
}

TEST_F(SerialParityTest, WithoutAnAllReduceTheReplicasDisagreeAndThatIsItsOwnFinding) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kSgd));
  for (oldir::passes::RankPrograms& rank : dp2_.ranks) {
    oldir::proto::BlockDesc* block = rank.main.mutable_desc()->mutable_blocks(0);
    const oldir::proto::OpDesc* all_reduce =
        FindOp(rank.main, "c_allreduce_sum", "linear_0.b_0@GRAD");
    ASSERT_NE(all_reduce, nullptr);
    int index = 0;
    while (&block->ops(index) != all_reduce) ++index;
    block->mutable_ops()->DeleteSubrange(index, 1);
    rank.main.Reindex();
  }
  ASSERT_NO_FATAL_FAILURE(Write(model_, 2, dp2_, dir_ / "dp2"));
  StatusOr<ParityResult> result = Check(Tier::kReordered, 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_FALSE(report.parity());
  std::vector<std::string> findings;
  for (const ComparedTensor& t : report.tensors) {
    if (t.rank != kAllRanks) findings.push_back(t.name + ": " + t.comparison.reason);
  }
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rfind("linear_0.b_0: ranks 0 and 1 hold different bits of "
                              "'linear_0.b_0' at ",
                              0),
            0u)
      << findings[0];
  ASSERT_TRUE(report.first_differing_state.has_value());
  EXPECT_EQ(report.first_differing_state->names, std::vector<std::string>{"linear_0.b_0"});
}

TEST_F(SerialParityTest, WhatTheSerialCheckRefuses) {
  ASSERT_NO_FATAL_FAILURE(Build(oldir::OptimizerKind::kSgd));
  ASSERT_NO_FATAL_FAILURE(Write(model_, 2, dp2_, dir_ / "dp2"));
  SerialParityOptions options;
  StatusOr<ParityResult> two = RunSerialParity(dir_ / "dp2", dir_ / "dp2", options);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(two.status().message(),
            "the serial bundle has 2 ranks; it must be the one-rank bundle of the serial program");
  StatusOr<ParityResult> missing = RunSerialParity(dir_ / "dp2", dir_ / "none", options);
  EXPECT_FALSE(missing.ok());
}

// --- A hand-made sharded bundle ---

// A startup program that sets the persistable float32 `w` of `shape` to `values`, and a main
// program that only reads it.
void HoldingW(const std::vector<int64_t>& shape, const std::vector<float>& values,
              oldir::Program* startup, oldir::Program* main) {
  oldir::VarOptions persistable;
  persistable.persistable = true;
  oldir::ProgramBuilder s;
  s.root().CreateVar("w", oldir::proto::VarType::FP32, shape, persistable);
  s.root().AppendOp("assign_value", {}, {{"Out", {"w"}}},
                    {{"shape", std::vector<int32_t>(shape.begin(), shape.end())},
                     {"dtype", static_cast<int32_t>(oldir::proto::VarType::FP32)},
                     {"bool_values", std::vector<int32_t>{}},
                     {"fp32_values", values},
                     {"int32_values", std::vector<int32_t>{}},
                     {"int64_values", std::vector<int64_t>{}}});
  oldir::ProgramBuilder m;
  m.root().CreateVar("w", oldir::proto::VarType::FP32, shape, persistable);
  m.root().CreateVar("y", oldir::proto::VarType::FP32, shape);
  m.root().AppendOp("scale", {{"X", {"w"}}, {"ScaleTensor", {}}}, {{"Out", {"y"}}},
                    {{"scale", 2.0f}, {"bias", 0.0f}, {"bias_after_scale", true}});
  *startup = s.Build();
  *main = m.Build();
}

// The bundle of `ranks` ranks, rank r holding `values[r]` of `shapes[r]` at `offsets[r]` of w.
void WriteShardedBundle(const std::string& dir, const std::vector<int64_t>& global,
                        const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<std::vector<int64_t>>& offsets,
                        const std::vector<std::vector<float>>& values) {
  oldir::Bundle bundle;
  bundle.world_size = static_cast<int>(shapes.size());
  for (size_t r = 0; r < shapes.size(); ++r) {
    oldir::Program startup, main;
    HoldingW(shapes[r], values[r], &startup, &main);
    StatusOr<oldir::BundleRank> rank =
        oldir::WriteLegacyRankPrograms(dir, static_cast<int>(r), startup, {{"main", main}});
    ASSERT_TRUE(rank.ok()) << rank.status().ToString();
    if (shapes[r] != global) rank->shards["w"] = {global, offsets[r]};
    bundle.ranks.push_back(std::move(rank).value());
  }
  ASSERT_TRUE(oldir::WriteBundle(bundle, dir).ok());
}

TEST(ShardedBundleTest, HalvesOfAParameterAreReassembledFromShardsJson) {
  ScratchDir dir("sharded_bundle");
  ASSERT_NO_FATAL_FAILURE(
      WriteShardedBundle(dir / "serial", {4, 2}, {{4, 2}}, {{0, 0}}, {{1, 2, 3, 4, 5, 6, 7, 8}}));
  ASSERT_NO_FATAL_FAILURE(WriteShardedBundle(dir / "halves", {4, 2}, {{2, 2}, {2, 2}},
                                             {{0, 0}, {2, 0}}, {{1, 2, 3, 4}, {5, 6, 7, 8}}));
  StatusOr<ParityResult> halves = RunSerialParity(dir / "halves", dir / "serial", {});
  ASSERT_TRUE(halves.ok()) << halves.status().ToString();
  EXPECT_TRUE(halves->report.parity()) << RenderMarkdown(halves->report);
  EXPECT_EQ(halves->report.Compared(TensorGroup::kParameter), 1);

  // Rank 1 holding rows 1 and 2 (the same numbers as the serial w there): row 3 is held by nobody.
  ASSERT_NO_FATAL_FAILURE(WriteShardedBundle(dir / "gap", {4, 2}, {{2, 2}, {2, 2}},
                                             {{0, 0}, {1, 0}}, {{1, 2, 3, 4}, {3, 4, 5, 6}}));
  StatusOr<ParityResult> gap = RunSerialParity(dir / "gap", dir / "serial", {});
  ASSERT_TRUE(gap.ok()) << gap.status().ToString();
  EXPECT_FALSE(gap->report.parity());
  ASSERT_EQ(gap->report.tensors.size(), 2u);
  EXPECT_EQ(gap->report.tensors[0].comparison.reason,
            "2 of 8 elements of 'w' [4,2] are held by no rank, first at index 6");
}

// --- Hand-made outcomes ---

rt::PlanStepResult Step(int step, const std::string& name, Tensor value) {
  rt::PlanStepResult result;
  result.step = step;
  result.merged.push_back({name, std::move(value)});
  return result;
}

rt::RankOutcome Outcome(std::vector<rt::PlanStepResult> steps,
                        std::vector<std::pair<std::string, Tensor>> vars) {
  rt::RankOutcome outcome;
  outcome.steps = std::move(steps);
  outcome.scope = std::make_unique<rt::Scope>();
  for (auto& [name, tensor] : vars) outcome.scope->Set(name, std::move(tensor));
  return outcome;
}

Tensor F32(std::vector<float> v, std::vector<int64_t> shape) {
  return Tensor::FromVector(v, std::move(shape));
}

TEST(CompareWithSerialTest, PipelineLossesAreAveragedPerReplicaThenOverTheReplicas) {
  // dp2 x pp2: ranks 1 and 3 are the last stages and fetch one loss per micro-batch (two each).
  oldir::Bundle bundle;
  bundle.world_size = 4;
  bundle.strategy = {{"dp_degree", 2}, {"pp_degree", 2}};
  std::vector<rt::RankOutcome> ranks;
  ranks.push_back(Outcome({rt::PlanStepResult{1, {}, {}}}, {}));
  ranks.push_back(Outcome({Step(1, "loss", F32({1.0f, 3.0f}, {2}))}, {}));
  ranks.push_back(Outcome({rt::PlanStepResult{1, {}, {}}}, {}));
  ranks.push_back(Outcome({Step(1, "loss", F32({4.0f, 6.0f}, {2}))}, {}));
  // (mean(1, 3) + mean(4, 6)) / 2.
  rt::RankOutcome serial = Outcome({Step(1, "loss", F32({3.5f}, {}))}, {});
  ParityReport report;
  ASSERT_TRUE(
      CompareWithSerial({&bundle, &ranks}, {&serial, nullptr, nullptr}, Tier::kReordered, report)
          .ok());
  ASSERT_EQ(report.tensors.size(), 1u);
  EXPECT_TRUE(report.tensors[0].comparison.pass) << report.tensors[0].comparison.reason;

  // A loss one replica lacks is reported, not averaged over the other.
  ranks[3].steps[0].merged.clear();
  ParityReport missing;
  ASSERT_TRUE(
      CompareWithSerial({&bundle, &ranks}, {&serial, nullptr, nullptr}, Tier::kReordered, missing)
          .ok());
  ASSERT_EQ(missing.tensors.size(), 1u);
  EXPECT_EQ(missing.tensors[0].comparison.reason, "no rank of replica 1 fetches it");
  EXPECT_FALSE(missing.parity());
}

TEST(CompareWithSerialTest, HalvesOfAParameterAreReassembledAndGapsReported) {
  // Two ranks of one replica, each holding two rows of the [4, 2] weight.
  oldir::Bundle bundle;
  bundle.world_size = 2;
  bundle.ranks = {{.rank = 0,
                   .startup = "",
                   .programs = {},
                   .plan = std::nullopt,
                   .shards = {{"w", {{4, 2}, {0, 0}}}}},
                  {.rank = 1,
                   .startup = "",
                   .programs = {},
                   .plan = std::nullopt,
                   .shards = {{"w", {{4, 2}, {2, 0}}}}}};
  std::vector<rt::RankOutcome> ranks;
  ranks.push_back(Outcome({}, {{"w", F32({1, 2, 3, 4}, {2, 2})}}));
  ranks.push_back(Outcome({}, {{"w", F32({5, 6, 7, 8}, {2, 2})}}));
  rt::RankOutcome serial = Outcome({}, {{"w", F32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})}});
  ParityReport report;
  ASSERT_TRUE(
      CompareWithSerial({&bundle, &ranks}, {&serial, nullptr, nullptr}, Tier::kExact, report).ok());
  ASSERT_EQ(report.tensors.size(), 1u);
  EXPECT_TRUE(report.parity()) << report.tensors[0].comparison.reason;

  // Rank 1 holding rows 1 and 2 instead: row 3 is held by nobody.
  bundle.ranks[1].shards["w"].offsets = {1, 0};
  ranks[1].scope->Set("w", F32({3, 4, 5, 6}, {2, 2}));
  ParityReport gap;
  gap.gemm = "blas";
  ASSERT_TRUE(
      CompareWithSerial({&bundle, &ranks}, {&serial, nullptr, nullptr}, Tier::kExact, gap).ok());
  ASSERT_EQ(gap.tensors.size(), 2u);
  EXPECT_EQ(gap.tensors[0].comparison.reason,
            "2 of 8 elements of 'w' [4,2] are held by no rank, first at index 6");
  EXPECT_FALSE(gap.tensors[1].comparison.pass);  // zeros where the serial run has 7 and 8
  EXPECT_EQ(testing::SchemaErrors(RenderJson(gap)), std::vector<std::string>{});
}

TEST(CompareWithSerialTest, TheFloat64ShadowArbitratesAndTheReportsSayWhy) {
  oldir::Bundle bundle;
  std::vector<rt::RankOutcome> ranks;
  // near: 1.5e-4 from the serial value, 0.5e-4 from the shadow, which the serial run misses by
  // 1e-4. noise: the serial run is all rounding noise (1e-8 against an exact 0), the candidate
  // noise of the same order. far: 1e-3 off, 10 times the serial run's own error.
  ranks.push_back(Outcome({}, {{"near", F32({1.00015f}, {1})},
                               {"noise", F32({-3e-8f}, {1})},
                               {"far", F32({1.001f}, {1})}}));
  rt::RankOutcome serial = Outcome(
      {}, {{"near", F32({1.0f}, {1})}, {"noise", F32({1e-8f}, {1})}, {"far", F32({1.0f}, {1})}});
  rt::Scope shadow;
  shadow.Set("near", Tensor::FromVector(std::vector<double>{1.0001}, {1}));
  shadow.Set("noise", Tensor::FromVector(std::vector<double>{0.0}, {1}));
  shadow.Set("far", Tensor::FromVector(std::vector<double>{1.0001}, {1}));
  const std::vector<std::vector<rt::Fetch>> no_fetches;

  ParityReport reordered;
  ASSERT_TRUE(CompareWithSerial({&bundle, &ranks}, {&serial, &shadow, &no_fetches},
                                Tier::kReordered, reordered)
                  .ok());
  EXPECT_EQ(reordered.Mismatched(), 3);
  EXPECT_EQ(reordered.Arbitrated(), 0);

  ParityReport report;
  report.against_serial = true;
  report.tier = Tier::kNoiseFloor;
  report.gemm = "blas";
  ASSERT_TRUE(CompareWithSerial({&bundle, &ranks}, {&serial, &shadow, &no_fetches},
                                Tier::kNoiseFloor, report)
                  .ok());
  ASSERT_EQ(report.tensors.size(), 3u);  // by name: far, near, noise
  const ComparedTensor& far = report.tensors[0];
  const ComparedTensor& near = report.tensors[1];
  const ComparedTensor& noise = report.tensors[2];
  EXPECT_FALSE(far.comparison.pass);
  ASSERT_TRUE(far.arbitration.has_value());
  EXPECT_EQ(far.arbitration->agreement, Agreement::kMismatch);
  EXPECT_TRUE(near.comparison.pass);
  ASSERT_TRUE(near.arbitration.has_value());
  EXPECT_EQ(near.arbitration->agreement, Agreement::kNoiseFloor);
  EXPECT_TRUE(noise.comparison.pass);
  ASSERT_TRUE(noise.arbitration.has_value());
  EXPECT_EQ(noise.arbitration->agreement, Agreement::kNoSignal);
  EXPECT_EQ(report.Arbitrated(), 2);

  const std::string md = RenderMarkdown(report);
  EXPECT_NE(md.find("## Arbitrated by the float64 shadow"), std::string::npos) << md;
  EXPECT_NE(md.find("| parameters | 0 | `near` | noise floor | normwise"), std::string::npos) << md;
  EXPECT_NE(md.find("| parameters | 0 | `noise` | no signal | normwise"), std::string::npos) << md;
  EXPECT_NE(md.find("| DIFF | parameters | all | 0 | `far` |"), std::string::npos) << md;
  const nlohmann::json json = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(json["summary"]["arbitrated"], 2);
  EXPECT_EQ(json["tensors"][1]["arbitration"]["agreement"], "noise floor");
  EXPECT_TRUE(json["tensors"][1]["pass"].get<bool>());
  EXPECT_EQ(testing::SchemaErrors(RenderJson(report)), std::vector<std::string>{});
  const std::string xml = RenderJunit(report);
  EXPECT_NE(xml.find("classname=\"parity.reassembled\" name=\"parameters\""), std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("intermediates"), std::string::npos) << xml;
}

}  // namespace
}  // namespace irm::diff
