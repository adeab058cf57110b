// The gradient-merge case (corpus.h), as Paddle's old-IR gradient merge pass leaves a data-
// parallel program: after the gradient synchronisation every gradient is added into its merge
// buffer; backward-role ops count the steps on int32 CPU vars (`step = (step + 1) % k`,
// `cond = step == 0`); an optimize-role `conditional_block` runs, on every k-th step, the 1/k
// scale, the SGD update from the buffers and their reset.
#include <fmt/format.h>

#include <set>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/corpus/gradient_merge_ops.h"
#include "diff_tests/corpus/mlp_training.h"
#include "oldir/op_role.h"

namespace irm::corpus {

namespace {

namespace models = oldir::models;
namespace proto = oldir::proto;

constexpr int kRanks = 2;

// A persistable int32 [1] CPU var of main and startup, filled with `value` in startup.
void AddCounter(models::ModelPrograms& model, const std::string& name, int32_t value) {
  oldir::VarOptions persistable;
  persistable.persistable = true;
  persistable.stop_gradient = true;
  model.main.root().CreateVar(name, proto::VarType::INT32, {1}, persistable);
  model.startup.root().CreateVar(name, proto::VarType::INT32, {1}, persistable);
  model.startup.root().AppendOp("fill_constant",
                                {{"ValueTensor", {}}, {"ShapeTensor", {}}, {"ShapeTensorList", {}}},
                                {{"Out", {name}}},
                                {{"dtype", static_cast<int32_t>(proto::VarType::INT32)},
                                 {"shape", std::vector<int64_t>{1}},
                                 {"value", static_cast<float>(value)},
                                 {"str_value", std::to_string(value)},
                                 {"force_cpu", true},
                                 {"place_type", int32_t{-1}}});
}

// Moves main's root ops from position `first` on into a new sub-block and runs it by a
// conditional_block on `cond`, whose Input and Out list the outer vars the block reads and
// writes (sorted), as paddle.static.nn.cond records them.
void WrapInConditionalBlock(models::ModelPrograms& model, int first, const std::string& cond) {
  oldir::BlockBuilder& root = model.main.root();
  oldir::BlockBuilder& sub = model.main.CreateBlock(root.index());
  auto* root_ops = root.desc()->mutable_ops();
  std::set<std::string> reads, writes;
  for (int i = first; i < root_ops->size(); ++i) {
    const proto::OpDesc& op = root_ops->Get(i);
    for (const proto::OpDesc::Var& slot : op.inputs())
      reads.insert(slot.arguments().begin(), slot.arguments().end());
    for (const proto::OpDesc::Var& slot : op.outputs())
      writes.insert(slot.arguments().begin(), slot.arguments().end());
    *sub.desc()->add_ops() = op;
  }
  root_ops->DeleteSubrange(first, root_ops->size() - first);
  const std::string scope = model.main.names().Generate("_generated_var");
  root.CreateTypedVar(scope, proto::VarType::STEP_SCOPES);
  oldir::ScopedOpRole role(model.main, oldir::kOptimize);
  root.AppendOp("conditional_block", {{"Cond", {cond}}, {"Input", {reads.begin(), reads.end()}}},
                {{"Out", {writes.begin(), writes.end()}}, {"Scope", {scope}}},
                {{"sub_block", oldir::BlockRef{sub.index()}}, {"is_scalar_condition", true}});
}

}  // namespace

StatusOr<BundleCase> GradientMergeMlp(int k_steps, const CorpusOptions& options) {
  if (k_steps < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("gradient merge needs k_steps >= 1, not {}", k_steps));
  }
  models::ModelPrograms model;
  IRM_RETURN_IF_ERROR(BuildCorpusMlp(options, &model));
  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads,
                       oldir::AppendBackward(model.main, model.loss));
  AppendGradientSync(model.main, grads, kRanks);

  oldir::BlockBuilder& root = model.main.root();
  std::vector<oldir::ParamGrad> merged;
  for (const oldir::ParamGrad& pg : grads) {
    const std::string merge = pg.grad + "@MERGE";
    IRM_RETURN_IF_ERROR(AddMergeBuffer(model, pg.param, merge));
    oldir::ScopedOpRole role(model.main, oldir::kBackward);
    root.AppendOp("elementwise_add", {{"X", {merge}}, {"Y", {pg.grad}}}, {{"Out", {merge}}},
                  {{"axis", int32_t{-1}}});
    merged.push_back({pg.param, merge});
  }
  AddCounter(model, "gradient_merge_k", k_steps);
  AddCounter(model, "gradient_merge_zero", 0);
  AddCounter(model, "gradient_merge_step", 0);
  const std::string cond = "gradient_merge_cond";
  root.CreateVar(cond, proto::VarType::BOOL, {1});
  {
    oldir::ScopedOpRole role(model.main, oldir::kBackward);
    root.AppendOp("increment", {{"X", {"gradient_merge_step"}}}, {{"Out", {"gradient_merge_step"}}},
                  {{"step", 1.0f}});
    root.AppendOp("elementwise_mod", {{"X", {"gradient_merge_step"}}, {"Y", {"gradient_merge_k"}}},
                  {{"Out", {"gradient_merge_step"}}}, {{"axis", int32_t{-1}}});
    root.AppendOp("equal", {{"X", {"gradient_merge_step"}}, {"Y", {"gradient_merge_zero"}}},
                  {{"Out", {cond}}}, {{"axis", int32_t{-1}}, {"force_cpu", false}});
  }
  const int first_update = root.num_ops();
  IRM_RETURN_IF_ERROR(AppendMergedUpdate(model, merged, k_steps));
  WrapInConditionalBlock(model, first_update, cond);
  model.fetches = {model.loss};
  AppendFetchOps(&model);

  BundleCase c;
  c.name = fmt::format("dp2_gm{}_mlp", k_steps);
  c.description = fmt::format(
      "MLP, data parallel over 2 ranks with gradient merge every {} steps in a "
      "conditional_block, SGD",
      k_steps);
  CorpusOptions steps = options;
  steps.steps = std::max(options.steps, 2 * k_steps);  // the update runs at least twice
  c.bundle = BaseBundle(model, kRanks, options.batch, steps);
  c.bundle.strategy = {{"kind", "data_parallel"},
                       {"dp_degree", kRanks},
                       {"gradient_merge", {{"k_steps", k_steps}, {"avg", true}}}};
  for (int r = 0; r < kRanks; ++r) {
    c.ranks.push_back(MainOnlyRank(model));
  }
  return c;
}

}  // namespace irm::corpus
