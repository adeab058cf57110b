// The legacy pipeline pass (oldir/passes/pipeline.h) against the serial run: a zoo training
// program (mlp with 4 linears, gpt with 2 blocks; SGD and AdamW) cut into pp2 and pp4 stages under
// FThenB, 1F1B, Eager1F1B (accumulate_steps Paddle accepts: 2(p-s)-1 <= m), VPP (v = 2, pp2) and
// ZBH1, with m micro-batches accumulated into @GRAD@MERGE buffers, is written as a bundle that
// validates, runs 3 steps on the thread backend — every stage reading the same global batch and
// cutting it into m micro-batches — and ends where 3 serial steps on those global batches end:
// the loss (the serial loss against the mean of the m micro-batch losses the last stage
// fetches, as Paddle's pipeline tests average them: test/auto_parallel/pipeline_scheduler_
// unittest.py), every parameter and every piece of optimizer state on its stage, within the
// reordered tier of docs/parity.md, a float64 shadow arbitrating (serial_arbitration.h).
//
// Schedules that accumulate the micro-batches in the same order agree bit for bit: FThenB, 1F1B
// and Eager1F1B run every stage's backward jobs in micro-batch order 0..m-1 and compute each
// op with the same kernels, and so does VPP (each chunk's backward jobs in order 0..m-1; the
// programs only differ in where the cuts fall, and a send/recv moves bits unchanged). ZBH1 is
// left out: its matmul_v2_grad becomes two matmul_v2 (other kernels), and on stages s > 0 the
// weight gradients of micro-batches 0..s-1 are added last (pipelines.md §1.4).
//
// The PIR form of the job split (SplitPipelineJobs with JobListIr::kPir: recv_forward and
// send_backward jobs, Paddle's PIR 1F1B and VPP passes since PR #70360 / #71104) runs the same
// ops in the same order per micro-batch, only cut into more jobs: its bundles (1F1B pp2 and pp4,
// VPP pp2 v2) run under the point-to-point model their plans need (the schedule simulator's
// MinBufferDepth of the bundle's send/recv order, as `ir-migrate build` records it), match the
// serial run, and agree bit for bit with the legacy form of the same schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/corpus/bundle_comm_program.h"
#include "diff_tests/serial_reference_test_support.h"
#include "diff_tests/tensor_compare.h"
#include "oldir/bundle.h"
#include "oldir/params_io.h"
#include "oldir/passes/bundle_output.h"
#include "oldir/passes/pipeline.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/run.h"
#include "schedules/paddle_schedule.h"
#include "schedules/simulator.h"

namespace irm::diff {
namespace {

using rt::Scope;
using rt::Tensor;

constexpr int kSteps = 3;
constexpr int64_t kMicroRows = 2;

struct Case {
  const char* model;
  oldir::OptimizerKind optimizer;
  int pp;
  const char* mode;
  int micro_batches;
  int vpp = 1;
  schedules::JobListIr ir = schedules::JobListIr::kLegacy;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(c.model) + "_" + oldir::OptimizerKindName(c.optimizer) + "_pp" +
         std::to_string(c.pp) + "_" + c.mode + (c.vpp > 1 ? "_v" + std::to_string(c.vpp) : "") +
         "_m" + std::to_string(c.micro_batches) +
         (c.ir == schedules::JobListIr::kPir ? "_pir" : "");
}

oldir::passes::Strategy PipelineStrategy(const Case& c) {
  oldir::passes::Strategy s;
  s.pp_degree = c.pp;
  s.pipeline.enable = true;
  s.pipeline.schedule_mode = c.mode;
  s.pipeline.accumulate_steps = c.micro_batches;
  s.pipeline.vpp_degree = c.vpp;
  return s;
}

// Applies the pass, writes the bundle and ASSERTs that it validates.
void WritePipelineBundle(const oldir::models::ModelPrograms& model, const Case& c,
                         const std::string& dir) {
  const oldir::passes::Strategy strategy = PipelineStrategy(c);
  StatusOr<oldir::passes::DistributedPrograms> pp = oldir::passes::ApplyPipeline(
      model.startup.Build(), model.main.Build(), strategy, kMicroRows, c.ir);
  ASSERT_TRUE(pp.ok()) << pp.status().ToString();
  StatusOr<oldir::Bundle> written =
      oldir::passes::WriteDistributedBundle(*pp, ZooBundleJson(model, strategy, kSteps), dir);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  StatusOr<oldir::Bundle> read = oldir::ReadBundle(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const Diagnostics findings = oldir::ValidateBundle(*read, dir);
  ASSERT_FALSE(findings.HasErrors()) << findings.Render();
  ASSERT_EQ(read->world_size, c.pp);
  ASSERT_EQ(read->micro_batches, c.micro_batches);
}

// Every stage draws each step's global batch from the bundle's seed (the serial run draws the same
// from the same seed) and cuts it into micro-batches. An index feed one job feeds and another
// bounds (VPP's labels) takes the bound of the job that reads it.
// `p2p`: unset, room for every message of a step — the legacy 1F1B-style schedules have a stage
// send its next forward while its peer sends a backward, and run where a send completes before
// its receive, as on NCCL while a message fits its buffers (docs/architecture.md, point-to-point
// semantics).
StatusOr<rt::MultiRankResult> RunBundle(const std::string& dir, int micro_batches,
                                        std::optional<schedules::P2pModel> p2p = std::nullopt) {
  rt::MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = kMicroRows * micro_batches;
  config.world.trace = true;
  config.p2p = p2p.value_or(schedules::P2pModel::Buffered(4 * micro_batches));
  return rt::RunBundleRanks(dir, config);
}

// The buffer depth the bundle's plans need, found by the schedule simulator from the ranks'
// send/recv order (what `ir-migrate build` records in bundle.json).
StatusOr<std::optional<int>> NeededDepth(const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  IRM_ASSIGN_OR_RETURN(schedules::CommProgram comm, corpus::BundleCommProgram(bundle, dir));
  return schedules::MinBufferDepth(comm);
}

// The PIR form runs under exactly the model its plans need. For 1F1B that is rendezvous: the
// split's point (PR #70360; docs/schedules.md, "Buffer depth each schedule needs", Paddle 1F1B
// PIR row), where the legacy bundles need a buffer of 1 (mlp) or 2 (gpt, whose mask travels
// too). VPP keeps the depth of its warm-up wrap-around (2 for the mlp, 3 for the gpt at pp2 v2,
// as in the legacy form: the split fixes the steady phase only).
StatusOr<rt::MultiRankResult> RunCase(const Case& c, const std::string& dir) {
  if (c.ir != schedules::JobListIr::kPir) return RunBundle(dir, c.micro_batches);
  IRM_ASSIGN_OR_RETURN(std::optional<int> depth, NeededDepth(dir));
  if (!depth || (std::string(c.mode) == "1F1B" && *depth != 0)) {
    return Status(StatusCode::kInternal, Location::File(dir),
                  "the PIR " + std::string(c.mode) + " plans need buffer depth " +
                      schedules::BufferDepthName(depth));
  }
  return RunBundle(
      dir, c.micro_batches,
      *depth == 0 ? schedules::P2pModel::Rendezvous() : schedules::P2pModel::Buffered(*depth));
}

// The rank whose scope holds `name` (its stage's state); -1 when none.
int OwnerOf(const rt::MultiRankResult& run, const std::string& name) {
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    const Tensor* t = run.ranks[r].scope->FindLocal(name);
    if (t != nullptr && t->defined()) return static_cast<int>(r);
  }
  return -1;
}

class PipelinePassTest : public ::testing::TestWithParam<Case> {};

TEST_P(PipelinePassTest, StagesMatchTheSerialRunOfTheGlobalBatch) {
  const Case c = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &model).ok());
  ScratchDir dir(CaseName({c, 0}));
  ASSERT_NO_FATAL_FAILURE(WritePipelineBundle(model, c, dir / "pp"));
  StatusOr<std::unique_ptr<SerialReference>> reference = SerialReference::Create(model);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  SerialReference& ref = **reference;
  StatusOr<rt::MultiRankResult> run = RunCase(c, dir / "pp");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->ranks.size(), static_cast<size_t>(c.pp));

  const rt::RankOutcome& last = run->ranks.back();
  ASSERT_EQ(last.steps.size(), static_cast<size_t>(kSteps));
  for (int s = 1; s <= kSteps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    rt::FeedMap feeds;
    for (const rt::FeedSpec& spec : ref.FeedSpecs()) {
      feeds[spec.name] = rt::RandomFeed(spec, ref.seed(), s, kMicroRows * c.micro_batches);
    }
    StatusOr<std::vector<rt::Fetch>> loss = ref.Step(feeds);
    ASSERT_TRUE(loss.ok()) << loss.status().ToString();
    // The last stage fetches the m micro-batch losses; their mean is the global batch's mean.
    const Tensor& losses = last.steps[s - 1].merged.at(0).tensor;
    ASSERT_EQ(losses.numel(), c.micro_batches);
    double sum = 0;
    for (int i = 0; i < c.micro_batches; ++i) sum += losses.data<float>()[i];
    const Tensor mean = Tensor::FromVector(
        std::vector<float>{static_cast<float>(sum / c.micro_batches)}, (*loss)[0].tensor.shape());
    const Comparison cmp = CompareTensors(mean, (*loss)[0].tensor, Tier::kReordered);
    EXPECT_TRUE(cmp.pass) << "loss: " << cmp.reason;
  }

  std::string arbitrated;
  int compared = 0;
  for (const std::string& name : ref.state()) {
    const Tensor* expected = ref.serial().FindLocal(name);
    if (expected == nullptr || !expected->defined()) continue;
    SCOPED_TRACE(name);
    const int owner = OwnerOf(*run, name);
    ASSERT_GE(owner, 0) << "no stage holds it";
    ++compared;
    const Arbitration verdict = AgainstSerial(*run->ranks[owner].scope->FindLocal(name), *expected,
                                              ref.shadow().FindLocal(name));
    EXPECT_NE(verdict.agreement, Agreement::kMismatch) << verdict.reason;
    if (verdict.agreement != Agreement::kReordered) {
      arbitrated +=
          (arbitrated.empty() ? "" : " ") + name + " (" + AgreementName(verdict.agreement) + ")";
    }
  }
  EXPECT_GE(compared, 8);
  if (!arbitrated.empty()) {
    std::cout << "arbitrated: " << arbitrated << "\n";
    RecordProperty("noise_floor", arbitrated);
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const char* model : {"mlp", "gpt"}) {
    for (oldir::OptimizerKind kind : {oldir::OptimizerKind::kSgd, oldir::OptimizerKind::kAdamW}) {
      cases.push_back({model, kind, 2, "FThenB", 4});
      cases.push_back({model, kind, 2, "1F1B", 4});
      cases.push_back({model, kind, 2, "Eager1F1B", 4});
      cases.push_back({model, kind, 2, "VPP", 4, 2});
      cases.push_back({model, kind, 2, "ZBH1", 4});
      cases.push_back({model, kind, 4, "FThenB", 4});
      cases.push_back({model, kind, 4, "1F1B", 4});
      cases.push_back({model, kind, 4, "Eager1F1B", 8});  // 2(p-s)-1 = 7 on stage 0
      cases.push_back({model, kind, 4, "ZBH1", 4});
      constexpr schedules::JobListIr kPir = schedules::JobListIr::kPir;
      cases.push_back({model, kind, 2, "1F1B", 4, 1, kPir});
      cases.push_back({model, kind, 4, "1F1B", 4, 1, kPir});
      cases.push_back({model, kind, 2, "VPP", 4, 2, kPir});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ZooModels, PipelinePassTest, ::testing::ValuesIn(Cases()), CaseName);

struct OrderCase {
  const char* model;
  oldir::OptimizerKind optimizer;
};

std::string OrderCaseName(const ::testing::TestParamInfo<OrderCase>& info) {
  return std::string(info.param.model) + "_" + oldir::OptimizerKindName(info.param.optimizer);
}

class SameAccumulationOrderTest : public ::testing::TestWithParam<OrderCase> {};

// Every loss the last stage fetches and every piece of `state` on its stage, bit for bit.
void ExpectSameBits(const rt::MultiRankResult& base, const rt::MultiRankResult& other,
                    const std::vector<std::string>& state) {
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_TRUE(SameBits(other.ranks.back().steps[s].merged.at(0).tensor,
                         base.ranks.back().steps[s].merged.at(0).tensor))
        << "losses of step " << s + 1;
  }
  int compared = 0;
  for (const std::string& name : state) {
    const int a = OwnerOf(base, name);
    const int b = OwnerOf(other, name);
    ASSERT_GE(a, 0) << name;
    ASSERT_GE(b, 0) << name;
    EXPECT_TRUE(
        SameBits(*base.ranks[a].scope->FindLocal(name), *other.ranks[b].scope->FindLocal(name)))
        << name;
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

// FThenB, 1F1B, Eager1F1B and VPP (pp2, m = 4) leave every parameter and optimizer state, and
// fetch every loss, bit for bit alike.
TEST_P(SameAccumulationOrderTest, SchedulesAgreeBitForBit) {
  const OrderCase oc = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(oc.model, oc.optimizer, &model).ok());
  StatusOr<std::unique_ptr<SerialReference>> reference = SerialReference::Create(model);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  const std::vector<Case> schedules = {{oc.model, oc.optimizer, 2, "FThenB", 4},
                                       {oc.model, oc.optimizer, 2, "1F1B", 4},
                                       {oc.model, oc.optimizer, 2, "Eager1F1B", 4},
                                       {oc.model, oc.optimizer, 2, "VPP", 4, 2}};
  ScratchDir dir("same_order_" + OrderCaseName({oc, 0}));
  std::vector<rt::MultiRankResult> runs;
  for (const Case& c : schedules) {
    const std::string path = dir / CaseName({c, 0});
    ASSERT_NO_FATAL_FAILURE(WritePipelineBundle(model, c, path));
    StatusOr<rt::MultiRankResult> run = RunBundle(path, c.micro_batches);
    ASSERT_TRUE(run.ok()) << c.mode << ": " << run.status().ToString();
    runs.push_back(std::move(run).value());
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    SCOPED_TRACE(schedules[i].mode);
    ExpectSameBits(runs.front(), runs[i], (*reference)->state());
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, SameAccumulationOrderTest,
                         ::testing::Values(OrderCase{"mlp", oldir::OptimizerKind::kSgd},
                                           OrderCase{"mlp", oldir::OptimizerKind::kAdamW},
                                           OrderCase{"gpt", oldir::OptimizerKind::kSgd},
                                           OrderCase{"gpt", oldir::OptimizerKind::kAdamW}),
                         OrderCaseName);

class PirJobListsTest : public ::testing::TestWithParam<OrderCase> {};

// The PIR form of 1F1B (pp2, pp4) and VPP (pp2 v2) moves the recv and the send into their own
// jobs and reorders jobs across micro-batches, but every micro-batch's ops run in the same order
// with the same kernels and the backward jobs still accumulate in micro-batch order 0..m-1: the
// legacy and the PIR bundle of the same schedule agree bit for bit.
TEST_P(PirJobListsTest, AgreeBitForBitWithTheLegacyForm) {
  const OrderCase oc = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(oc.model, oc.optimizer, &model).ok());
  StatusOr<std::unique_ptr<SerialReference>> reference = SerialReference::Create(model);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  ScratchDir dir("pir_jobs_" + OrderCaseName({oc, 0}));
  const std::vector<Case> schedules = {{oc.model, oc.optimizer, 2, "1F1B", 4},
                                       {oc.model, oc.optimizer, 4, "1F1B", 4},
                                       {oc.model, oc.optimizer, 2, "VPP", 4, 2}};
  for (Case legacy : schedules) {
    Case pir = legacy;
    pir.ir = schedules::JobListIr::kPir;
    SCOPED_TRACE(CaseName({pir, 0}));
    std::vector<rt::MultiRankResult> runs;
    for (const Case& c : {legacy, pir}) {
      const std::string path = dir / CaseName({c, 0});
      ASSERT_NO_FATAL_FAILURE(WritePipelineBundle(model, c, path));
      StatusOr<rt::MultiRankResult> run = RunCase(c, path);
      ASSERT_TRUE(run.ok()) << run.status().ToString();
      runs.push_back(std::move(run).value());
    }
    ExpectSameBits(runs[0], runs[1], (*reference)->state());
    // The split never needs deeper buffers than the legacy form; 1F1B needs none.
    StatusOr<std::optional<int>> legacy_depth = NeededDepth(dir / CaseName({legacy, 0}));
    StatusOr<std::optional<int>> pir_depth = NeededDepth(dir / CaseName({pir, 0}));
    ASSERT_TRUE(legacy_depth.ok() && pir_depth.ok());
    ASSERT_TRUE(legacy_depth->has_value() && pir_depth->has_value());
    EXPECT_LE(**pir_depth, **legacy_depth);
    if (std::string(legacy.mode) == "1F1B") {
      EXPECT_GE(**legacy_depth, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ZooModels, PirJobListsTest,
                         ::testing::Values(OrderCase{"mlp", oldir::OptimizerKind::kSgd},
                                           OrderCase{"mlp", oldir::OptimizerKind::kAdamW},
                                           OrderCase{"gpt", oldir::OptimizerKind::kSgd},
                                           OrderCase{"gpt", oldir::OptimizerKind::kAdamW}),
                         OrderCaseName);

}  // namespace
}  // namespace irm::diff
