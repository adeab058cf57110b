// The gradient-merge model and its bundle (plan_test_support.h).
#include "reference_runtime/plan_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "oldir/initializer.h"
#include "oldir/layers.h"
#include "oldir/models/model.h"
#include "oldir/op_role.h"
#include "oldir/optimizer.h"

namespace irm::rt::testing {
namespace {

namespace fs = std::filesystem;

std::string MergeName(const oldir::ParamGrad& pg) { return pg.param + "@GRAD@MERGE"; }

std::vector<int64_t> DimsOf(oldir::BlockBuilder& block, const std::string& name) {
  const oldir::proto::VarDesc* var = block.FindVar(name);
  const auto& dims = var->type().dense_tensor().tensor().dims();
  return std::vector<int64_t>(dims.begin(), dims.end());
}

// The ops of `main`'s root block whose role `keep` accepts, with every var declaration.
oldir::Program OpsOfRole(const oldir::Program& main, bool (*keep)(int role)) {
  oldir::proto::ProgramDesc desc = main.desc();
  google::protobuf::RepeatedPtrField<oldir::proto::OpDesc> kept;
  for (const oldir::proto::OpDesc& op : desc.blocks(0).ops()) {
    if (keep(oldir::Op(&op).role())) *kept.Add() = op;
  }
  desc.mutable_blocks(0)->mutable_ops()->Swap(&kept);
  return oldir::Program(desc);
}

// The model's forward pass, backward pass, and (with gradient merge over `m` micro-batches, or
// none when m == 0) the merge adds, then SGD and the fetch of the loss.
Status BuildInto(oldir::models::ModelPrograms& model, int m, float lr, int64_t in, int64_t out,
                 std::vector<oldir::ParamGrad>* params_grads) {
  namespace layers = oldir::layers;
  using oldir::proto::VarType;
  IRM_RETURN_IF_ERROR(layers::Data(&model, {"x", VarType::FP32, {-1, in}}).status());
  IRM_RETURN_IF_ERROR(layers::Data(&model, {"label", VarType::FP32, {-1, out}}).status());
  IRM_ASSIGN_OR_RETURN(const layers::LinearLayer linear, layers::CreateLinear(&model, in, out));
  oldir::BlockBuilder& root = model.main.root();
  IRM_ASSIGN_OR_RETURN(const std::string y, layers::Linear(root, linear, "x"));
  IRM_ASSIGN_OR_RETURN(const std::string d, layers::Subtract(root, y, "label"));
  IRM_ASSIGN_OR_RETURN(const std::string sq, layers::Multiply(root, d, d));
  IRM_ASSIGN_OR_RETURN(model.loss, layers::Mean(root, sq));
  IRM_RETURN_IF_ERROR(layers::PrependFeedOps(&model));
  IRM_ASSIGN_OR_RETURN(*params_grads, oldir::AppendBackward(model.main, model.loss));

  if (m > 0) {
    oldir::ScopedOpRole role(model.main, oldir::kBackward);
    for (const oldir::ParamGrad& pg : *params_grads) {
      const std::vector<int64_t> dims = DimsOf(root, pg.param);
      root.CreateVar(MergeName(pg), VarType::FP32, dims, {.persistable = true});
      model.startup.root().CreateVar(MergeName(pg), VarType::FP32, dims, {.persistable = true});
      oldir::AppendFillConstant(model.startup.root(), MergeName(pg), VarType::FP32, dims, 0.0f);
      root.AppendOp("elementwise_add", {{"X", {MergeName(pg)}}, {"Y", {pg.grad}}},
                    {{"Out", {MergeName(pg)}}}, {{"axis", -1}});
    }
    oldir::ScopedOpRole optimize(model.main, oldir::kOptimize);
    for (const oldir::ParamGrad& pg : *params_grads) {
      // Paddle's gradient merge (avg): scale by 1/k in the optimizer's block.
      root.AppendOp(
          "scale", {{"X", {MergeName(pg)}}}, {{"Out", {pg.grad}}},
          {{"scale", 1.0f / static_cast<float>(m)}, {"bias", 0.0f}, {"bias_after_scale", true}});
    }
  }
  oldir::OptimizerOptions sgd;
  sgd.learning_rate = lr;
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(model.main, model.startup, *params_grads, sgd));
  if (m > 0) {
    oldir::ScopedOpRole optimize(model.main, oldir::kOptimize);
    for (const oldir::ParamGrad& pg : *params_grads) {
      oldir::AppendFillConstant(root, MergeName(pg), VarType::FP32, DimsOf(root, pg.param), 0.0f);
    }
  }
  root.CreateTypedVar("fetch", VarType::FETCH_LIST, /*persistable=*/true);
  oldir::ScopedOpRole forward(model.main, oldir::kForward);
  root.AppendOp("fetch", {{"X", {model.loss}}}, {{"Out", {"fetch"}}}, {{"col", int32_t{0}}});
  return Status::Ok();
}

}  // namespace

StatusOr<GradMergeModel> BuildGradMergeModel(int micro_batches, int32_t seed) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, Location{}, "micro_batches must be at least 1");
  }
  GradMergeModel model;
  model.micro_batches = micro_batches;
  oldir::models::ModelPrograms merged;
  merged.seed = seed;
  IRM_RETURN_IF_ERROR(BuildInto(merged, micro_batches, model.learning_rate, model.in, model.out,
                                &model.params_grads));
  model.loss = merged.loss;
  const oldir::Program main = merged.main.Build();
  model.startup = merged.startup.Build();
  model.jobs.emplace("forward", OpsOfRole(main, oldir::IsForward));
  model.jobs.emplace("backward", OpsOfRole(main, [](int r) { return oldir::IsBackward(r); }));
  model.jobs.emplace("optimizer", OpsOfRole(main, [](int r) { return oldir::IsOptimize(r); }));
  model.forward_backward = OpsOfRole(main, [](int r) { return !oldir::IsOptimize(r); });

  oldir::models::ModelPrograms plain;
  plain.seed = seed;
  std::vector<oldir::ParamGrad> plain_grads;
  IRM_RETURN_IF_ERROR(BuildInto(plain, 0, model.learning_rate, model.in, model.out, &plain_grads));
  model.plain = plain.main.Build();
  model.plain_startup = plain.startup.Build();
  return model;
}

std::vector<oldir::PlanJob> FThenBPlan(int micro_batches) {
  std::vector<oldir::PlanJob> plan;
  for (int mb = 0; mb < micro_batches; ++mb) plan.push_back({"forward", mb});
  for (int mb = 0; mb < micro_batches; ++mb) plan.push_back({"backward", mb});
  plan.push_back({"optimizer", 0});
  return plan;
}

std::vector<oldir::PlanJob> InterleavedPlan(int micro_batches) {
  std::vector<oldir::PlanJob> plan;
  for (int mb = 0; mb < micro_batches; ++mb) {
    plan.push_back({"forward", mb});
    plan.push_back({"backward", mb});
  }
  plan.push_back({"optimizer", 0});
  return plan;
}

Status WriteGradMergeBundle(const GradMergeModel& model, const std::vector<oldir::PlanJob>& plan,
                            int steps, int64_t seed, const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::BundleRank rank,
                       oldir::WriteLegacyRankPrograms(dir, 0, model.startup, model.jobs));
  rank.plan = plan;
  oldir::Bundle bundle;
  bundle.strategy = {
      {"pipeline", {{"schedule", "FThenB"}, {"micro_batches", model.micro_batches}}}};
  bundle.feeds = {{"x", {-1, model.in}, "float32", oldir::FeedSplit::kBatch},
                  {"label", {-1, model.out}, "float32", oldir::FeedSplit::kBatch}};
  bundle.fetches = {model.loss};
  bundle.steps = steps;
  bundle.seed = seed;
  bundle.micro_batches = model.micro_batches;
  bundle.ranks.push_back(std::move(rank));
  return oldir::WriteBundle(bundle, dir);
}

std::string TestDir(const std::string& tag) {
  const std::string dir =
      (fs::path(::testing::TempDir()) /
       fmt::format("irm_{}_{}_{}", tag, ::getpid(),
                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
          .string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace irm::rt::testing
