// Tests of bundle translation (bundle_translate.h): which vars each program hands on (the
// shadow_output rule, on hand-written programs), a model-zoo MLP split by op role into forward,
// backward and optimizer jobs translated end to end and read back as a pir bundle, the process
// group checks, and the inputs and outputs translation refuses.
#include "translator/bundle_translate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/host_tensor.h"
#include "newir/program_io.h"
#include "newir/verifier.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/op_role.h"
#include "oldir/params_io.h"
#include "oldir/program_io.h"

namespace irm::translator {
namespace {

namespace fs = std::filesystem;
using Outputs = std::map<std::string, std::vector<std::string>>;
using Names = std::vector<std::string>;

// --- programs, in protobuf text -------------------------------------------------------------

std::string Var(const std::string& name, const std::string& flags = "") {
  return "vars { name: \"" + name +
         "\" type { type: DENSE_TENSOR dense_tensor { tensor { data_type: FP32 dims: 4 } } } " +
         flags + " }\n";
}
// One op of `type` reading `x` into `out`.
std::string Op(const std::string& type, const std::string& x, const std::string& out,
               const std::string& attrs = "") {
  return "ops { type: \"" + type + "\" inputs { parameter: \"X\" arguments: \"" + x +
         "\" } outputs { parameter: \"Out\" arguments: \"" + out + "\" } " + attrs + " }\n";
}
std::string ProgramText(const std::string& vars, const std::string& ops) {
  return "blocks { idx: 0 parent_idx: -1\n" + vars + ops + "}\n";
}
oldir::Program Parse(const std::string& text) {
  StatusOr<oldir::Program> program = oldir::ParseProgram(text, "test.prototxt");
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  return program.ok() ? std::move(program).value() : oldir::Program();
}

const std::string kEmpty = ProgramText("", "");

// --- the shadow_output rule -----------------------------------------------------------------

// startup writes s; forward reads x, s and writes y, t, loss; backward reads y, writes g and
// re-writes t before reading it; optimizer reads g into the persistable w.
RankPrograms HandWritten() {
  RankPrograms p;
  p.startup = Parse(ProgramText(Var("s") + Var("w", "persistable: true"),
                                Op("fill_any_like", "w", "s") + Op("assign", "s", "w")));
  p.jobs["forward"] = Parse(ProgramText(
      Var("x") + Var("s") + Var("y") + Var("t") + Var("loss") + Var("w", "persistable: true"),
      Op("relu", "x", "y") + Op("relu", "s", "t") + Op("mean", "y", "loss") +
          Op("assign", "y", "w")));
  p.jobs["backward"] =
      Parse(ProgramText(Var("y") + Var("t") + Var("g") + Var("w"),
                        Op("relu", "y", "t") + Op("relu", "t", "g") + Op("relu", "w", "g")));
  p.jobs["optimizer"] =
      Parse(ProgramText(Var("g") + Var("w", "persistable: true"), Op("assign", "g", "w")));
  return p;
}

oldir::BundleRank RankWithPlan(std::vector<oldir::PlanJob> plan) {
  oldir::BundleRank rank;
  rank.startup = "startup.pdmodel";
  for (const char* type : {"forward", "backward", "optimizer"}) {
    rank.programs[type] = std::string(type) + ".pdmodel";
  }
  rank.plan = std::move(plan);
  return rank;
}

TEST(OutputsOfRankTest, VarsLaterJobsReadAndFetches) {
  oldir::Bundle bundle;
  bundle.fetches = {"loss"};
  const Outputs outputs = OutputsOfRank(
      bundle, RankWithPlan({{"forward", 0}, {"backward", 0}, {"optimizer", 0}}), HandWritten());
  // t: backward writes it before reading it. w: persistable (every program sees the same one).
  EXPECT_EQ(outputs, (Outputs{{"startup", Names{"s"}},
                              {"forward", Names{"y", "loss"}},
                              {"backward", Names{"g"}},
                              {"optimizer", Names{}}}));
}

TEST(OutputsOfRankTest, OnlyJobsOfTheSameMicroBatchLater) {
  oldir::Bundle bundle;
  bundle.micro_batches = 2;
  // backward of micro-batch 1 cannot see forward's y of micro-batch 0; optimizer runs before
  // backward, so nothing of backward's reaches it either.
  Outputs outputs = OutputsOfRank(
      bundle, RankWithPlan({{"forward", 0}, {"optimizer", 0}, {"backward", 1}}), HandWritten());
  EXPECT_EQ(outputs.at("forward"), Names{});
  EXPECT_EQ(outputs.at("backward"), Names{});
  // Jobs of several micro-batches: one pair in order is enough.
  outputs = OutputsOfRank(
      bundle,
      RankWithPlan(
          {{"forward", 0}, {"forward", 1}, {"backward", 1}, {"backward", 0}, {"optimizer", 0}}),
      HandWritten());
  EXPECT_EQ(outputs.at("forward"), Names{"y"});
  EXPECT_EQ(outputs.at("backward"), Names{"g"});
}

TEST(OutputsOfRankTest, ProgramsNoJobRunsHandOnNothing) {
  oldir::Bundle bundle;
  bundle.fetches = {"loss"};
  RankPrograms programs = HandWritten();
  programs.jobs["main"] = programs.jobs.at("forward");
  oldir::BundleRank rank = RankWithPlan({});
  rank.programs["main"] = "main.pdmodel";
  rank.plan.reset();  // runs main only
  const Outputs outputs = OutputsOfRank(bundle, rank, programs);
  // backward (never run) reads y, but only a fetch leaves main; the unplanned forward still
  // exposes its fetch.
  EXPECT_EQ(outputs.at("main"), Names{"loss"});
  EXPECT_EQ(outputs.at("forward"), Names{"loss"});
  EXPECT_EQ(outputs.at("backward"), Names{});
  // startup's s is read by forward and main; only main runs.
  EXPECT_EQ(outputs.at("startup"), Names{"s"});
}

TEST(OutputsOfRankTest, ReadsInsideSubBlocksCount) {
  oldir::Bundle bundle;
  RankPrograms programs;
  programs.startup = Parse(kEmpty);
  programs.jobs["forward"] = Parse(ProgramText(Var("x") + Var("y"), Op("relu", "x", "y")));
  // The sub-block of a conditional_block reads y.
  programs.jobs["backward"] = Parse(
      "blocks { idx: 0 parent_idx: -1 " + Var("y") + Var("c") + Var("z") +
      "ops { type: \"conditional_block\" inputs { parameter: \"Cond\" arguments: \"c\" } "
      "inputs { parameter: \"Input\" } outputs { parameter: \"Out\" arguments: \"z\" } "
      "outputs { parameter: \"Scope\" } attrs { name: \"sub_block\" type: BLOCK block_idx: 1 } "
      "attrs { name: \"is_scalar_condition\" type: BOOLEAN b: true } } }\n"
      "blocks { idx: 1 parent_idx: 0 " +
      Op("relu", "y", "z") + "}\n");
  oldir::BundleRank rank;
  rank.startup = "startup.pdmodel";
  rank.programs = {{"forward", "forward.pdmodel"}, {"backward", "backward.pdmodel"}};
  rank.plan = {{"forward", 0}, {"backward", 0}};
  EXPECT_EQ(OutputsOfRank(bundle, rank, programs).at("forward"), Names{"y"});
}

// --- bundles on disk ------------------------------------------------------------------------

class BundleTranslateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::path(::testing::TempDir()) /
            ("irm_bundle_translate_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    in_ = dir_ + "/legacy";
    out_ = dir_ + "/pir";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes rank folders holding `programs` (the same for every rank) and bundle.json.
  void WriteLegacy(oldir::Bundle bundle, const oldir::Program& startup,
                   const std::map<std::string, oldir::Program>& programs,
                   const std::optional<std::vector<oldir::PlanJob>>& plan) {
    for (int r = 0; r < bundle.world_size; ++r) {
      StatusOr<oldir::BundleRank> rank = oldir::WriteLegacyRankPrograms(in_, r, startup, programs);
      ASSERT_TRUE(rank.ok()) << rank.status().ToString();
      rank->plan = plan;
      bundle.ranks.push_back(*rank);
    }
    const Status written = oldir::WriteBundle(bundle, in_);
    ASSERT_TRUE(written.ok()) << written.ToString();
  }

  std::string dir_, in_, out_;
};

// The ops of `role`, with every var declaration (unused ones are harmless).
oldir::Program OpsOfRole(const oldir::Program& main, bool (*keep)(int role)) {
  oldir::proto::ProgramDesc desc = main.desc();
  google::protobuf::RepeatedPtrField<oldir::proto::OpDesc> kept;
  for (const oldir::proto::OpDesc& op : desc.blocks(0).ops()) {
    if (keep(oldir::Op(&op).role())) *kept.Add() = op;
  }
  desc.mutable_blocks(0)->mutable_ops()->Swap(&kept);
  return oldir::Program(desc);
}

Names ShadowOutputs(const newir::Program& program) {
  Names names;
  for (const newir::Operation& op : program.block()) {
    if (op.name() == "builtin.shadow_output") {
      const std::string_view* name = op.attribute("output_name").AsString();
      names.emplace_back(name != nullptr ? *name : "<not a string>");
    }
  }
  return names;
}

TEST_F(BundleTranslateTest, MlpSplitIntoJobs) {
  oldir::models::ModelPrograms model;
  ASSERT_TRUE(oldir::models::BuildMlp({}, &model).ok());
  ASSERT_TRUE(oldir::models::AddTraining(&model, oldir::OptimizerOptions{}).ok());
  const oldir::Program main = model.main.Build();
  const oldir::Program startup = model.startup.Build();
  const std::map<std::string, oldir::Program> jobs = {
      {"forward", OpsOfRole(main, oldir::IsForward)},
      {"backward", OpsOfRole(main, [](int role) { return oldir::IsBackward(role); })},
      {"optimizer", OpsOfRole(main, [](int role) { return oldir::IsOptimize(role); })}};
  oldir::Bundle bundle;
  bundle.seed = 7;
  bundle.strategy = {{"kind", "split by role"}};
  for (const oldir::models::FeedSpec& feed : model.feeds) {
    bundle.feeds.push_back({feed.name, feed.shape, DTypeName(*oldir::DTypeFromVarType(feed.dtype)),
                            oldir::FeedSplit::kBatch});
  }
  bundle.fetches = model.fetches;
  const std::vector<oldir::PlanJob> plan = {{"forward", 0}, {"backward", 0}, {"optimizer", 0}};
  WriteLegacy(bundle, startup, jobs, plan);
  ASSERT_TRUE(oldir::ValidateBundle(*oldir::ReadBundle(in_), in_).empty())
      << oldir::ValidateBundle(*oldir::ReadBundle(in_), in_).Render();

  std::vector<std::string> progress;
  StatusOr<BundleTranslation> t = TranslateBundle(in_, out_, {}, [&](const ProgramProgress& p) {
    progress.push_back(fmt::format("{}/{} {} {} -> {} {}", p.rank, p.world_size, p.job_type,
                                   p.legacy_file, p.output_file, p.ops > 0));
  });
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(progress, (Names{"0/1 startup startup.pdmodel -> startup.json true",
                             "0/1 forward forward.pdmodel -> forward.json true",
                             "0/1 backward backward.pdmodel -> backward.json true",
                             "0/1 optimizer optimizer.pdmodel -> optimizer.json true"}));
  EXPECT_EQ(t->ranks, 1);
  EXPECT_EQ(t->programs, 4);
  EXPECT_EQ(t->legacy_ops, main.num_ops() + startup.num_ops());
  EXPECT_EQ(t->coverage.total(), t->legacy_ops);
  EXPECT_EQ(t->coverage.unsupported_total(), 0);
  EXPECT_TRUE(t->coverage.types().at("relu").first_location.starts_with(in_ + "/rank0/"))
      << t->coverage.types().at("relu").first_location;

  // The pir bundle: the same bundle.json but ir, .json programs, the same plan.
  StatusOr<oldir::Bundle> pir = oldir::ReadBundle(out_);
  ASSERT_TRUE(pir.ok()) << pir.status().ToString();
  EXPECT_EQ(*pir, t->bundle);
  EXPECT_EQ(pir->ir, oldir::BundleIr::kPir);
  EXPECT_EQ(pir->seed, 7);
  EXPECT_EQ(pir->strategy, bundle.strategy);
  EXPECT_EQ(pir->feeds, bundle.feeds);
  EXPECT_EQ(pir->fetches, bundle.fetches);
  ASSERT_EQ(pir->ranks.size(), 1u);
  EXPECT_EQ(pir->ranks[0].startup, "startup.json");
  EXPECT_EQ(pir->ranks[0].programs,
            (std::map<std::string, std::string>{{"backward", "backward.json"},
                                                {"forward", "forward.json"},
                                                {"optimizer", "optimizer.json"}}));
  EXPECT_EQ(pir->ranks[0].plan, plan);
  EXPECT_TRUE(oldir::CheckBundle(*pir, out_).findings.empty());

  // Each program reads back, verifies and exposes exactly what OutputsOfRank chose.
  RankPrograms legacy{startup, jobs};
  const Outputs outputs = OutputsOfRank(bundle, RankWithPlan(plan), legacy);
  for (const auto& [type, names] : outputs) {
    SCOPED_TRACE(type);
    StatusOr<newir::Program> program =
        newir::LoadProgramFile(out_ + "/rank0/" + type + ".json", newir::FileFormat::kJson);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_TRUE(newir::VerifyProgramAll(*program).empty());
    EXPECT_EQ(ShadowOutputs(*program), names);
  }
  // Forward hands on the loss (a fetch) and the activations backward reads; backward the
  // gradients the optimizer reads; parameters are persistable and never among them.
  const Names& forward = outputs.at("forward");
  EXPECT_NE(std::find(forward.begin(), forward.end(), model.loss), forward.end());
  EXPECT_NE(std::find(forward.begin(), forward.end(), "relu_0.tmp_0"), forward.end());
  EXPECT_EQ(std::find(forward.begin(), forward.end(), "linear_0.w_0"), forward.end());
  const Names& backward = outputs.at("backward");
  EXPECT_NE(std::find(backward.begin(), backward.end(), "linear_0.w_0@GRAD"), backward.end());
  EXPECT_EQ(outputs.at("optimizer"), Names{});
  EXPECT_EQ(outputs.at("startup"), Names{});
}

const std::string kAllreduce =
    ProgramText(Var("g", "persistable: true"),
                Op("c_allreduce_sum", "g", "g", "attrs { name: \"ring_id\" type: INT i: 0 }"));

TEST_F(BundleTranslateTest, TwoRanksWithAProcessGroup) {
  oldir::Bundle bundle;
  bundle.world_size = 2;
  bundle.process_groups = {{0, {0, 1}}};
  WriteLegacy(bundle, Parse(kEmpty), {{"main", Parse(kAllreduce)}}, std::nullopt);
  StatusOr<BundleTranslation> t = TranslateBundle(in_, out_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->ranks, 2);
  EXPECT_EQ(t->programs, 4);
  EXPECT_EQ(t->coverage.types().at("c_allreduce_sum").count, 2);
  for (int r = 0; r < 2; ++r) {
    StatusOr<newir::Program> program =
        newir::LoadProgramFile(oldir::RankFile(out_, r, "main.json"));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    int all_reduce = 0;
    for (const newir::Operation& op : program->block()) {
      all_reduce += op.name().starts_with("pd_op.all_reduce");
    }
    EXPECT_EQ(all_reduce, 1);
  }
  EXPECT_FALSE(t->bundle.ranks[0].plan.has_value());
}

TEST_F(BundleTranslateTest, RingIdsMustNameAGroupOfTheRank) {
  oldir::Bundle bundle;
  bundle.world_size = 2;
  bundle.process_groups = {{0, {1}}};
  WriteLegacy(bundle, Parse(kEmpty), {{"main", Parse(kAllreduce)}}, std::nullopt);
  StatusOr<BundleTranslation> t = TranslateBundle(in_, out_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(t.status().ToString(),
            in_ +
                ": error: the bundle is invalid (1 error); nothing was translated\n  note: " + in_ +
                "/rank0/main.pdmodel: block 0, op 0 (c_allreduce_sum), attr 'ring_id': error: "
                "rank 0 is not in process group 0 (ranks [1])");
  EXPECT_FALSE(fs::exists(out_));

  fs::remove_all(in_);
  bundle.process_groups = {{3, {0, 1}}};
  WriteLegacy(bundle, Parse(kEmpty), {{"main", Parse(kAllreduce)}}, std::nullopt);
  t = TranslateBundle(in_, out_);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("rank1/main.pdmodel: block 0, op 0 (c_allreduce_sum), "
                                       "attr 'ring_id': error: ring_id 0 names no process group "
                                       "of bundle.json"),
            std::string::npos)
      << t.status().ToString();
  EXPECT_FALSE(fs::exists(out_));
}

TEST_F(BundleTranslateTest, UnknownOpsFailUnlessAllowed) {
  oldir::Bundle bundle;
  const std::string mystery =
      ProgramText(Var("x", "persistable: true") + Var("y"), Op("mystery_op", "x", "y"));
  WriteLegacy(bundle, Parse(kEmpty), {{"main", Parse(mystery)}}, std::nullopt);
  StatusOr<BundleTranslation> t = TranslateBundle(in_, out_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(t.status().location().file, in_ + "/rank0/main.pdmodel");
  EXPECT_FALSE(fs::exists(out_));

  t = TranslateBundle(in_, out_, {.allow_unregistered = true});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->coverage.types().at("mystery_op").opaque, 1);
  StatusOr<newir::Program> program =
      newir::LoadProgramFile(out_ + "/rank0/main.json", newir::FileFormat::kJson);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_TRUE(newir::VerifyProgramAll(*program, {.allow_unregistered = true}).empty());
}

TEST_F(BundleTranslateTest, RefusesPirBundlesAndUsedOutputs) {
  oldir::Bundle bundle;
  bundle.process_groups = {{0, {0}}};
  WriteLegacy(bundle, Parse(kEmpty), {{"main", Parse(kAllreduce)}}, std::nullopt);

  fs::create_directories(out_);
  { std::ofstream(out_ + "/keep") << "x"; }
  StatusOr<BundleTranslation> t = TranslateBundle(in_, out_);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "the output directory is not empty");
  fs::remove_all(out_);

  ASSERT_TRUE(TranslateBundle(in_, out_).ok());
  t = TranslateBundle(out_, dir_ + "/again");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "the bundle already holds new-IR programs (ir is pir)");

  t = TranslateBundle(dir_ + "/missing", dir_ + "/again");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir_ + "/again"));
}

}  // namespace
}  // namespace irm::translator
