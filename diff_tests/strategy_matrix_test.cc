// The legacy passes' whole matrix (the acceptance of the legacy distributed passes): for the zoo
// mlp and gpt (2 layers), SGD and AdamW, each strategy — dp2, dp4, dp2 with the fused all-reduce
// (at least 3 buckets), tp2, tp4, pp2 and pp4 under FThenB, 1F1B, Eager1F1B, VPP (v=2) and ZBH1,
// gradient merge k=2 and k=4, dp2 x tp2, dp2 x pp2, dp2 x tp2 x pp2 (8 ranks) — becomes a bundle
// (oldir/passes/apply_strategy.h, bundle_output.h) that
//   - validates (docs/bundle.md),
//   - runs 3 steps on the thread backend and matches the serial program's 3 steps on the same
//     global batches from the same initial parameters: every step's loss, every parameter and
//     optimizer state reassembled from the shards (diff_tests/serial_parity.h, the noise-floor
//     tier: a tensor missing the reordered tier is arbitrated by the float64 shadow and reported),
//     and
//   - translates, its translation agreeing with it bit for bit on every rank
//     (diff_tests/bundle_parity.h, the exact tier).
// Gradient merge takes k executor steps per update, which the serial check does not model: its
// bundles are checked for validity and translation here, against the serial run in
// gradient_merge_pass_test.cc and legacy_passes_test.cc.
// pp4 with two chunks per stage needs 8 layer units: the 2-layer models have 4 (a located
// refusal, pinned in oldir/passes/pipeline_test.cc), so VPP pp4 runs on the 8-linear mlp and the
// 6-layer gpt.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/bundle_parity.h"
#include "diff_tests/serial_parity.h"
#include "diff_tests/serial_reference_test_support.h"
#include "oldir/bundle.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/bundle_output.h"

namespace irm::diff {
namespace {

constexpr int kSteps = 3;
constexpr int64_t kRows = 8;  // rows per data-parallel replica and step

struct Case {
  const char* name;
  const char* model;  // BuildZooTraining's
  oldir::OptimizerKind optimizer;
  const char* strategy;  // JSON
  bool gradient_merge;   // k executor steps per update: no serial check here
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.model) + "_" + oldir::OptimizerKindName(info.param.optimizer) +
         "_" + info.param.name;
}

Status WriteStrategyBundle(const oldir::models::ModelPrograms& model,
                           const oldir::passes::Strategy& strategy, const std::string& dir,
                           oldir::passes::DistributedPrograms* programs) {
  oldir::passes::ApplyStrategyOptions options;
  if (strategy.pipeline.enable) {
    options.micro_batch_size = kRows / strategy.pipeline.accumulate_steps;
  }
  IRM_ASSIGN_OR_RETURN(
      *programs,
      oldir::passes::ApplyStrategy(model.startup.Build(), model.main.Build(), strategy, options));
  return oldir::passes::WriteDistributedBundle(
             *programs,
             ZooBundleJson(model, strategy, kSteps, strategy.pipeline.enable ? kRows : 0), dir)
      .status();
}

int CountOps(const oldir::Program& program, const std::string& type) {
  int n = 0;
  const oldir::Block root = program.root();
  for (int i = 0; i < root.num_ops(); ++i) n += root.op(i).type() == type ? 1 : 0;
  return n;
}

// A 1F1B-style plan sends its next activation while its peer sends a gradient back: room for every
// message of a step (gpt sends its activation and its mask at each cut).
schedules::P2pModel RoomForAStep(const oldir::Bundle& bundle) {
  return schedules::P2pModel::Buffered(4 * bundle.micro_batches);
}

class StrategyMatrixTest : public ::testing::TestWithParam<Case> {};

TEST_P(StrategyMatrixTest, BundleValidatesMatchesTheSerialRunAndTranslatesBitForBit) {
  const Case c = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &model).ok());
  StatusOr<oldir::passes::Strategy> strategy =
      oldir::passes::ParseStrategyJson(c.strategy, "strategy.json");
  ASSERT_TRUE(strategy.ok()) << strategy.status().ToString();
  ScratchDir dir("matrix_" + CaseName({c, 0}));
  const std::string distributed = dir / "distributed";
  oldir::passes::DistributedPrograms programs;
  const Status written = WriteStrategyBundle(model, *strategy, distributed, &programs);
  ASSERT_TRUE(written.ok()) << written.ToString();
  ASSERT_EQ(programs.world_size, strategy->world_size());

  StatusOr<oldir::Bundle> bundle = oldir::ReadBundle(distributed);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  const Diagnostics findings = oldir::ValidateBundle(*bundle, distributed);
  ASSERT_FALSE(findings.HasErrors()) << findings.Render();

  if (strategy->fuse_all_reduce()) {
    EXPECT_GE(CountOps(programs.ranks[0].main, "coalesce_tensor"), 3) << "buckets";
  }

  if (!c.gradient_merge) {
    const std::string serial = dir / "serial";
    oldir::passes::DistributedPrograms serial_programs;
    ASSERT_TRUE(
        WriteStrategyBundle(model, oldir::passes::Strategy{}, serial, &serial_programs).ok());
    SerialParityOptions options;
    options.steps = kSteps;
    options.batch_size = kRows;
    options.tier = Tier::kNoiseFloor;
    options.p2p = RoomForAStep(*bundle);
    StatusOr<ParityResult> against_serial = RunSerialParity(distributed, serial, options);
    ASSERT_TRUE(against_serial.ok()) << against_serial.status().ToString();
    const ParityReport& report = against_serial->report;
    EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
    EXPECT_EQ(report.Mismatched(), 0);
    EXPECT_GT(report.Compared(TensorGroup::kParameter), 0);
    EXPECT_EQ(report.Compared(TensorGroup::kFetch), kSteps);
    std::string arbitrated;
    for (const ComparedTensor& t : report.tensors) {
      if (t.arbitration) arbitrated += " " + t.name;
    }
    if (!arbitrated.empty()) {
      std::cout << "noise-floor arbitration:" << arbitrated << "\n";
      RecordProperty("noise_floor", arbitrated);
    }
  }

  BundleParityOptions exact;
  exact.steps = kSteps;
  exact.batch_size = kRows;
  exact.tier = Tier::kExact;
  exact.isolate = false;
  exact.p2p = RoomForAStep(*bundle);
  StatusOr<ParityResult> translated = RunBundleParity(distributed, "", exact);
  ASSERT_TRUE(translated.ok()) << translated.status().ToString();
  EXPECT_TRUE(translated->report.parity()) << RenderMarkdown(translated->report);
}

// Every strategy of the matrix for one model and optimizer.
std::vector<Case> Strategies(const char* model, oldir::OptimizerKind optimizer) {
  // Buckets of at most this many MB make at least 3 of each model's gradients.
  const bool gpt = std::string(model) == "gpt";
  static const std::string kMlpBuckets =
      R"({"dp_degree": 2, "dp_optimization": {"enable": true, "fuse_grad_size_in_MB": 0.0003}})";
  static const std::string kGptBuckets =
      R"({"dp_degree": 2, "dp_optimization": {"enable": true, "fuse_grad_size_in_MB": 0.002}})";
  std::vector<Case> cases = {
      {"dp2", model, optimizer, R"({"dp_degree": 2})", false},
      {"dp4", model, optimizer, R"({"dp_degree": 4})", false},
      {"dp2_bucketed", model, optimizer, gpt ? kGptBuckets.c_str() : kMlpBuckets.c_str(), false},
      {"tp2", model, optimizer, R"({"mp_degree": 2})", false},
      {"tp4", model, optimizer, R"({"mp_degree": 4})", false},
      {"pp2_fthenb", model, optimizer,
       R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "FThenB", "accumulate_steps": 2}})",
       false},
      {"pp2_1f1b", model, optimizer,
       R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "1F1B", "accumulate_steps": 2}})",
       false},
      {"pp2_eager1f1b", model, optimizer,
       R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "Eager1F1B", "accumulate_steps": 4}})",
       false},
      {"pp2_vpp2", model, optimizer,
       R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "VPP", "vpp_degree": 2, "accumulate_steps": 2}})",
       false},
      {"pp2_zbh1", model, optimizer,
       R"({"pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "ZBH1", "accumulate_steps": 2}})",
       false},
      {"pp4_fthenb", model, optimizer,
       R"({"pp_degree": 4, "pipeline": {"enable": true, "schedule_mode": "FThenB", "accumulate_steps": 4}})",
       false},
      {"pp4_1f1b", model, optimizer,
       R"({"pp_degree": 4, "pipeline": {"enable": true, "schedule_mode": "1F1B", "accumulate_steps": 4}})",
       false},
      {"pp4_eager1f1b", model, optimizer,
       R"({"pp_degree": 4, "pipeline": {"enable": true, "schedule_mode": "Eager1F1B", "accumulate_steps": 8}})",
       false},
      {"pp4_zbh1", model, optimizer,
       R"({"pp_degree": 4, "pipeline": {"enable": true, "schedule_mode": "ZBH1", "accumulate_steps": 4}})",
       false},
      {"gm2", model, optimizer, R"({"gradient_merge": {"enable": true, "k_steps": 2}})", true},
      {"gm4", model, optimizer, R"({"gradient_merge": {"enable": true, "k_steps": 4}})", true},
      {"dp2_tp2", model, optimizer, R"({"dp_degree": 2, "mp_degree": 2})", false},
      {"dp2_pp2", model, optimizer,
       R"({"dp_degree": 2, "pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "1F1B", "accumulate_steps": 2}})",
       false},
      {"dp2_tp2_pp2", model, optimizer,
       R"({"dp_degree": 2, "mp_degree": 2, "pp_degree": 2, "pipeline": {"enable": true, "schedule_mode": "1F1B", "accumulate_steps": 2}})",
       false},
  };
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (const char* model : {"mlp", "gpt"}) {
    for (oldir::OptimizerKind optimizer :
         {oldir::OptimizerKind::kSgd, oldir::OptimizerKind::kAdamW}) {
      for (const Case& c : Strategies(model, optimizer)) all.push_back(c);
    }
  }
  // pp4 x vpp2: 8 chunks, on the models with 8 layer units.
  for (const char* model : {"mlp8", "gpt6"}) {
    for (oldir::OptimizerKind optimizer :
         {oldir::OptimizerKind::kSgd, oldir::OptimizerKind::kAdamW}) {
      all.push_back(
          {"pp4_vpp2", model, optimizer,
           R"({"pp_degree": 4, "pipeline": {"enable": true, "schedule_mode": "VPP", "vpp_degree": 2, "accumulate_steps": 4}})",
           false});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Matrix, StrategyMatrixTest, ::testing::ValuesIn(AllCases()), CaseName);

}  // namespace
}  // namespace irm::diff
