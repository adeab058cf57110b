// The PIR pipeline split (newir/auto_parallel/pipeline_split.h) against the legacy one
// (oldir/passes/pipeline_jobs.h, JobListIr::kPir): for a zoo training program (mlp, gpt) cut
// into pp2 / pp4 stages by the legacy partition, each rank's stage program as the legacy job
// split received it (RankPrograms::main: after the micro-batch accumulation and the send syncs) is
// translated and split by the new-IR pass; every job program must hold the same ops in the same
// order as the translation of the legacy job program of that type (the translator's dist style
// drops the stream syncs, so they meet op for op), the job list must be the legacy plan, and the
// pir bundle made of the split programs must run bit for bit like the translated legacy bundle
// (every fetched loss, every tensor of every rank's scope after 3 steps).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/scratch_dir_test_support.h"
#include "diff_tests/serial_reference_test_support.h"
#include "newir/auto_parallel/pipeline_split.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "oldir/passes/bundle_output.h"
#include "oldir/passes/pipeline.h"
#include "reference_runtime/multi_rank_run.h"
#include "translator/bundle_translate.h"
#include "translator/translate.h"

namespace irm::diff {
namespace {

constexpr int kSteps = 3;
constexpr int64_t kMicroRows = 2;
constexpr int kMicroBatches = 4;

struct SplitCase {
  const char* model;
  oldir::OptimizerKind optimizer;
  int pp;
  const char* mode;
  int vpp = 1;
};

std::string SplitCaseName(const ::testing::TestParamInfo<SplitCase>& info) {
  const SplitCase& c = info.param;
  return std::string(c.model) + "_" + oldir::OptimizerKindName(c.optimizer) + "_pp" +
         std::to_string(c.pp) + "_" + c.mode + (c.vpp > 1 ? "_v" + std::to_string(c.vpp) : "");
}

oldir::passes::Strategy PipelineStrategy(const SplitCase& c) {
  oldir::passes::Strategy s;
  s.pp_degree = c.pp;
  s.pipeline.enable = true;
  s.pipeline.schedule_mode = c.mode;
  s.pipeline.accumulate_steps = kMicroBatches;
  s.pipeline.vpp_degree = c.vpp;
  return s;
}

std::string StringAttr(const newir::Operation& op, const char* name) {
  const newir::Attribute attr = op.attribute(name);
  return attr.IsNull() || attr.AsString() == nullptr ? "" : std::string(*attr.AsString());
}

// The op names of a program's top block, in order, leaving out the builtin.shadow_output of a
// name in `unread` and one that hands on an input of the same name unchanged (a no-op).
std::vector<std::string> OpNames(const newir::Program& program,
                                 const std::set<std::string>& unread = {}) {
  std::vector<std::string> names;
  for (const newir::Operation& op : program.block()) {
    if (op.name() == "builtin.shadow_output") {
      const std::string name = StringAttr(op, "output_name");
      const newir::Operation* source = op.operand(0)->defining_op();
      const bool echo = source != nullptr && source->name() == "pd_op.data" &&
                        StringAttr(*source, "name") == name;
      if (unread.count(name) != 0 || echo) continue;
    }
    names.push_back(op.name());
  }
  return names;
}

std::vector<std::string> WithoutExposures(std::vector<std::string> names) {
  std::erase(names, std::string("builtin.shadow_output"));
  return names;
}

StatusOr<rt::MultiRankResult> RunPirBundle(const std::string& dir) {
  rt::MultiRankConfig config;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = kMicroRows * kMicroBatches;
  // Room for every message of a step: VPP's warm-up wrap-around needs a buffer in both forms
  // (docs/passes.md, "The PIR form").
  config.p2p = schedules::P2pModel::Buffered(4 * kMicroBatches);
  return rt::RunBundleRanks(dir, config);
}

class PipelineSplitParityTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(PipelineSplitParityTest, MatchesTheTranslatedLegacySplitOpForOpAndBitForBit) {
  const SplitCase c = GetParam();
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(BuildZooTraining(c.model, c.optimizer, &model).ok());
  const oldir::passes::Strategy strategy = PipelineStrategy(c);
  // ZBH1 has no PIR job lists (its list is the legacy pass's); the others are split in the PIR
  // form.
  const bool zero_bubble = std::string(c.mode) == "ZBH1";
  StatusOr<oldir::passes::DistributedPrograms> pp = oldir::passes::ApplyPipeline(
      model.startup.Build(), model.main.Build(), strategy, kMicroRows,
      zero_bubble ? schedules::JobListIr::kLegacy : schedules::JobListIr::kPir);
  ASSERT_TRUE(pp.ok()) << pp.status().ToString();
  // The stage programs the new IR's split takes: what the legacy job split received, before its
  // own zero-bubble matmul split (the PIR pass splits the translated pd_op.matmul_grad itself) —
  // the 1F1B stages, which differ from ZBH1's only by that split.
  StatusOr<oldir::passes::DistributedPrograms> unsplit = pp;
  if (zero_bubble) {
    oldir::passes::Strategy before = strategy;
    before.pipeline.schedule_mode = "1F1B";
    unsplit = oldir::passes::ApplyPipeline(model.startup.Build(), model.main.Build(), before,
                                           kMicroRows, schedules::JobListIr::kLegacy);
    ASSERT_TRUE(unsplit.ok()) << unsplit.status().ToString();
  }
  const oldir::Bundle bundle_json = ZooBundleJson(model, strategy, kSteps);

  ScratchDir dir("pipeline_split_" + SplitCaseName({c, 0}));
  const std::string legacy_dir = dir / "legacy";
  const std::string translated_dir = dir / "translated";
  const std::string split_dir = dir / "split";
  StatusOr<oldir::Bundle> written =
      oldir::passes::WriteDistributedBundle(*pp, bundle_json, legacy_dir);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  StatusOr<translator::BundleTranslation> translated =
      translator::TranslateBundle(legacy_dir, translated_dir);
  ASSERT_TRUE(translated.ok()) << translated.status().ToString();
  std::filesystem::copy(translated_dir, split_dir, std::filesystem::copy_options::recursive);

  for (int r = 0; r < pp->world_size; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const oldir::passes::RankPrograms& rank = pp->ranks[static_cast<size_t>(r)];
    translator::TranslateOptions to;
    to.file = "stage " + std::to_string(r);
    to.process_groups = &pp->process_groups;
    to.rank = r;
    StatusOr<translator::Translation> stage =
        translator::TranslateProgram(unsplit->ranks[static_cast<size_t>(r)].main, to);
    ASSERT_TRUE(stage.ok()) << stage.status().ToString();

    newir::PipelineSplitOptions options;
    options.schedule_mode = c.mode;
    options.pp_degree = c.pp;
    options.pp_stage = r;
    options.micro_batches = kMicroBatches;
    options.vpp_degree = c.vpp;
    options.fetches = bundle_json.fetches;
    options.file = to.file;
    StatusOr<newir::PipelineJobPrograms> split =
        newir::SplitPipelineProgram(stage->program, options);
    ASSERT_TRUE(split.ok()) << split.status().ToString();

    // The same job types, the same plan.
    std::vector<std::string> legacy_types;
    for (const auto& [type, program] : rank.jobs) legacy_types.push_back(type);
    std::vector<std::string> split_types = split->job_types;
    std::sort(split_types.begin(), split_types.end());
    EXPECT_EQ(split_types, legacy_types);
    ASSERT_TRUE(rank.plan.has_value());
    ASSERT_EQ(split->plan.size(), rank.plan->size());
    for (size_t j = 0; j < split->plan.size(); ++j) {
      EXPECT_EQ(split->plan[j].type, (*rank.plan)[j].type) << "job " << j;
      EXPECT_EQ(split->plan[j].micro_batch, (*rank.plan)[j].micro_batch) << "job " << j;
    }

    // Op for op against the translated legacy job programs; then the split's programs replace
    // them in the bundle that runs. The one difference allowed: the translated legacy job also
    // exposes a name no program of the rank reads and the run does not fetch — the gradient a
    // backward send_v2 sends, which the optimizer's c_sync_comm_stream reads in the legacy
    // program and the translator's dist style drops (op_compat.cc, "stream ordering only") — and
    // send_backward's re-exposure of that gradient, which the c_sync_calc_stream before the send
    // "writes" in the legacy program: a shadow_output of the pd_op.data of the same name.
    std::map<std::string, newir::Program> legacy_jobs;
    std::set<std::string> read(bundle_json.fetches.begin(), bundle_json.fetches.end());
    for (const std::string& type : split->job_types) {
      StatusOr<newir::Program> legacy_job =
          newir::LoadProgramFile(oldir::RankFile(split_dir, r, type + ".json"));
      ASSERT_TRUE(legacy_job.ok()) << legacy_job.status().ToString();
      for (const newir::Operation& op : legacy_job->block()) {
        if (op.name() == "pd_op.data") read.insert(StringAttr(op, "name"));
      }
      legacy_jobs.emplace(type, std::move(legacy_job).value());
    }
    std::set<std::string> planned;
    for (const schedules::Job& job : split->plan) planned.insert(job.type);
    for (const std::string& type : split->job_types) {
      std::set<std::string> unread;
      for (const newir::Operation& op : legacy_jobs.at(type).block()) {
        const std::string name = StringAttr(op, "output_name");
        if (op.name() == "builtin.shadow_output" && read.count(name) == 0) unread.insert(name);
      }
      const newir::Program& mine = split->programs.at(type);
      if (planned.count(type) == 0) {
        // A program no job of the rank runs (ZBH1's stage 0 runs whole backward jobs only): the
        // bundle translator exposes only what a job of the plan reads, so such a program exposes
        // nothing there; the ops must still be the same.
        EXPECT_EQ(WithoutExposures(OpNames(mine)), WithoutExposures(OpNames(legacy_jobs.at(type))))
            << type;
      } else {
        EXPECT_EQ(OpNames(mine), OpNames(legacy_jobs.at(type), unread)) << type;
      }
      for (const std::string& name : unread) {
        // Only a gradient sent back (the legacy sync's operand) may be exposed and unread.
        EXPECT_NE(name.find("@GRAD"), std::string::npos) << type << " exposes " << name;
        EXPECT_TRUE(type.starts_with("backward") || type.starts_with("send_backward"))
            << type << " exposes " << name;
      }
      ASSERT_TRUE(newir::SaveProgramFile(mine, oldir::RankFile(split_dir, r, type + ".json"),
                                         newir::FileFormat::kJson)
                      .ok());
    }
  }

  StatusOr<rt::MultiRankResult> base = RunPirBundle(translated_dir);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  StatusOr<rt::MultiRankResult> run = RunPirBundle(split_dir);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->ranks.size(), base->ranks.size());
  int compared = 0;
  for (size_t r = 0; r < base->ranks.size(); ++r) {
    const rt::RankOutcome& a = base->ranks[r];
    const rt::RankOutcome& b = run->ranks[r];
    ASSERT_EQ(a.steps.size(), b.steps.size());
    for (size_t s = 0; s < a.steps.size(); ++s) {
      ASSERT_EQ(a.steps[s].merged.size(), b.steps[s].merged.size());
      for (size_t f = 0; f < a.steps[s].merged.size(); ++f) {
        EXPECT_TRUE(SameBits(a.steps[s].merged[f].tensor, b.steps[s].merged[f].tensor))
            << "rank " << r << ", step " << s + 1 << ", fetch " << f;
        ++compared;
      }
    }
    const std::vector<std::string> names = a.scope->LocalNames();
    EXPECT_EQ(b.scope->LocalNames(), names) << "rank " << r;
    for (const std::string& name : names) {
      const rt::Tensor* x = a.scope->FindLocal(name);
      const rt::Tensor* y = b.scope->FindLocal(name);
      if (x == nullptr || y == nullptr || !x->defined()) continue;
      EXPECT_TRUE(SameBits(*x, *y)) << "rank " << r << ", " << name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 8);
}

std::vector<SplitCase> SplitCases() {
  std::vector<SplitCase> cases;
  for (const char* model : {"mlp", "gpt"}) {
    for (const int pp : {2, 4}) {
      for (const char* mode : {"FThenB", "1F1B"}) {
        cases.push_back({model, oldir::OptimizerKind::kSgd, pp, mode});
      }
    }
    cases.push_back({model, oldir::OptimizerKind::kSgd, 2, "VPP", 2});
    cases.push_back({model, oldir::OptimizerKind::kAdamW, 2, "1F1B"});
    // Zero bubble: the matmul grads split into their input-grad and weight-grad GEMMs, the
    // backward cut into backward_b / backward_w beside the whole backward.
    cases.push_back({model, oldir::OptimizerKind::kSgd, 2, "ZBH1"});
    cases.push_back({model, oldir::OptimizerKind::kAdamW, 4, "ZBH1"});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ZooModels, PipelineSplitParityTest, ::testing::ValuesIn(SplitCases()),
                         SplitCaseName);

}  // namespace
}  // namespace irm::diff
