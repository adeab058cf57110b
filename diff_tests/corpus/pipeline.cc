// The 2-stage pipeline case (corpus.h), made the way Paddle's old-IR pipeline passes make it: the
// whole training program is built, every op is assigned a stage through its `op_device`
// ("gpu:0", "gpu:1"), send_v2 / recv_v2 pairs are inserted at the cut, gradient merge adds the
// merge buffers, and the program is then split by stage and op role into the forward, backward
// and optimizer job programs of each rank (every job program keeps all var declarations, as
// Paddle's split does). Stage 0 holds the first linear layer and its activation, stage 1 the rest
// and the loss. The activation goes forward on ring 1 (ranks [0, 1]) and its gradient back on
// ring 2 (ranks [1, 0]): one group per direction, as Paddle's reshard makes them.
#include <fmt/format.h>

#include <set>

#include "diff_tests/corpus/corpus.h"
#include "diff_tests/corpus/gradient_merge_ops.h"
#include "diff_tests/corpus/mlp_training.h"
#include "diff_tests/corpus/program_surgery.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"
#include "oldir/optimizer.h"

namespace irm::corpus {

namespace {

namespace models = oldir::models;
namespace proto = oldir::proto;

constexpr int kStages = 2;
constexpr int kRingForward = 1;   // ranks [0, 1]
constexpr int kRingBackward = 2;  // ranks [1, 0]
const char* const kJobTypes[] = {"forward", "backward", "optimizer"};

std::string Device(int stage) { return fmt::format("gpu:{}", stage); }

const proto::OpDesc::Attr* FindAttr(const proto::OpDesc& op, std::string_view name) {
  for (const proto::OpDesc::Attr& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int StageOf(const proto::OpDesc& op) {
  const proto::OpDesc::Attr* device = FindAttr(op, oldir::kOpDeviceAttr);
  if (device == nullptr) return -1;
  for (int s = 0; s < kStages; ++s) {
    if (device->s() == Device(s)) return s;
  }
  return -1;
}

// 0 forward, 1 backward, 2 optimizer: the index into kJobTypes.
int JobOf(const proto::OpDesc& op) {
  const proto::OpDesc::Attr* role = FindAttr(op, oldir::kOpRoleAttr);
  const int value = role == nullptr ? oldir::kForward : role->i();
  if (oldir::IsOptimize(value)) return 2;
  return oldir::IsBackward(value) ? 1 : 0;
}

void SetStage(oldir::BlockBuilder& block, int index, int stage) {
  oldir::OpEditor(block.desc()->mutable_ops(index)).SetAttr(oldir::kOpDeviceAttr, Device(stage));
}

oldir::AttrList P2pAttrs(int32_t ring, int32_t peer) {
  return {{"ring_id", ring}, {"peer", peer}, {"use_calc_stream", true}, {"dynamic_shape", false}};
}

oldir::AttrList RecvAttrs(int32_t ring, int32_t peer, std::vector<int32_t> shape) {
  oldir::AttrList attrs = P2pAttrs(ring, peer);
  attrs.emplace_back("dtype", static_cast<int32_t>(proto::VarType::FP32));
  attrs.emplace_back("out_shape", std::move(shape));
  return attrs;
}

// `desc` keeping only the root block's ops `keep` accepts.
template <typename Keep>
oldir::Program Filtered(const proto::ProgramDesc& desc, Keep keep) {
  proto::ProgramDesc out = desc;
  auto* ops = out.mutable_blocks(0)->mutable_ops();
  google::protobuf::RepeatedPtrField<proto::OpDesc> kept;
  for (const proto::OpDesc& op : *ops) {
    if (keep(op)) *kept.Add() = op;
  }
  ops->Swap(&kept);
  return oldir::Program(out);
}

void CollectArgs(const proto::OpDesc& op, std::set<std::string>* names) {
  for (const proto::OpDesc::Var& slot : op.inputs())
    names->insert(slot.arguments().begin(), slot.arguments().end());
  for (const proto::OpDesc::Var& slot : op.outputs())
    names->insert(slot.arguments().begin(), slot.arguments().end());
}

}  // namespace

StatusOr<BundleCase> PipelineFThenBMlp(int micro_batches, const CorpusOptions& options) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("a pipeline needs at least 1 micro-batch, not {}", micro_batches));
  }
  models::ModelPrograms model;
  IRM_RETURN_IF_ERROR(BuildCorpusMlp(options, &model));
  oldir::BlockBuilder& block = model.main.root();

  // Forward stages: the feed of the label and everything after the first activation are stage 1.
  int activation = -1;
  for (int i = 0; i < block.num_ops() && activation < 0; ++i) {
    if (block.desc()->ops(i).type() == "relu") activation = i;
  }
  if (activation < 0) return Status(StatusCode::kInternal, Location{}, "the MLP has no relu");
  const std::string cut = block.desc()->ops(activation).outputs(0).arguments(0);
  for (int i = 0; i < block.num_ops(); ++i) {
    const proto::OpDesc& op = block.desc()->ops(i);
    const bool label_feed = op.type() == "feed" && op.outputs(0).arguments(0) == "label";
    SetStage(block, i, label_feed || i > activation ? 1 : 0);
  }
  // Which stage each parameter lives on: that of the forward op reading it.
  std::map<std::string, int> param_stage;
  const int num_forward = block.num_ops();
  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads,
                       oldir::AppendBackward(model.main, model.loss));
  for (const oldir::ParamGrad& pg : grads) {
    for (int i = 0; i < num_forward; ++i) {
      std::set<std::string> args;
      CollectArgs(block.desc()->ops(i), &args);
      if (args.count(pg.param)) param_stage[pg.param] = StageOf(block.desc()->ops(i));
    }
  }
  // Backward stages: stage 1 until the op that writes the cut's gradient, then stage 0.
  const std::string cut_grad = cut + "@GRAD";
  IRM_ASSIGN_OR_RETURN(int grad_writer, FindWriter(block, cut_grad, num_forward));
  for (int i = num_forward; i < block.num_ops(); ++i) SetStage(block, i, i <= grad_writer ? 1 : 0);

  // The cut: the activation goes forward, its gradient back.
  const std::vector<int32_t> micro_shape = {static_cast<int32_t>(options.batch), 8};
  {
    oldir::ScopedOpRole role(model.main, oldir::kForward);
    InsertOp(block, activation + 1, "send_v2", {{"X", {cut}}}, {}, P2pAttrs(kRingForward, 1));
    SetStage(block, activation + 1, 0);
    InsertOp(block, activation + 2, "recv_v2", {}, {{"Out", {cut}}},
             RecvAttrs(kRingForward, 0, micro_shape));
    SetStage(block, activation + 2, 1);
  }
  {
    oldir::ScopedOpRole role(model.main, oldir::kBackward);
    IRM_ASSIGN_OR_RETURN(grad_writer, FindWriter(block, cut_grad, num_forward + 2));
    InsertOp(block, grad_writer + 1, "send_v2", {{"X", {cut_grad}}}, {},
             P2pAttrs(kRingBackward, 1));
    SetStage(block, grad_writer + 1, 1);
    InsertOp(block, grad_writer + 2, "recv_v2", {}, {{"Out", {cut_grad}}},
             RecvAttrs(kRingBackward, 0, micro_shape));
    SetStage(block, grad_writer + 2, 0);
  }

  // Gradient merge: every backward job adds its gradients into persistable buffers.
  std::vector<std::vector<oldir::ParamGrad>> merged(kStages);
  for (const oldir::ParamGrad& pg : grads) {
    const int stage = param_stage.at(pg.param);
    const std::string merge = pg.grad + "@MERGE";
    IRM_RETURN_IF_ERROR(AddMergeBuffer(model, pg.param, merge));
    oldir::ScopedOpRole role(model.main, oldir::kBackward);
    IRM_ASSIGN_OR_RETURN(int writer, FindWriter(block, pg.grad, num_forward));
    InsertOp(block, writer + 1, "elementwise_add", {{"X", {merge}}, {"Y", {pg.grad}}},
             {{"Out", {merge}}}, {{"axis", int32_t{-1}}});
    SetStage(block, writer + 1, stage);
    merged[static_cast<size_t>(stage)].push_back({pg.param, merge});
  }
  // The optimizer job: the merged gradients averaged, applied, and reset.
  for (int s = 0; s < kStages; ++s) {
    model.main.set_device(Device(s));
    model.startup.set_device(Device(s));
    IRM_RETURN_IF_ERROR(AppendMergedUpdate(model, merged[static_cast<size_t>(s)], micro_batches));
  }
  model.main.set_device(Device(1));
  model.fetches = {model.loss};
  AppendFetchOps(&model);
  model.main.set_device("");
  model.startup.set_device("");

  for (int i = 0; i < block.num_ops(); ++i) {
    if (StageOf(block.desc()->ops(i)) < 0) {
      return Status(StatusCode::kInternal, Location{},
                    fmt::format("op {} ({}) has no stage", i, block.desc()->ops(i).type()));
    }
  }

  BundleCase c;
  c.name = fmt::format("pp2_fthenb_mb{}_mlp", micro_batches);
  c.description = fmt::format(
      "MLP in a 2-stage pipeline: send_v2/recv_v2 at the cut, FThenB over {} micro-batches, "
      "gradient merge, SGD",
      micro_batches);
  c.bundle = BaseBundle(model, kStages, options.batch * micro_batches, options);
  c.bundle.process_groups.push_back({kRingForward, {0, 1}});
  c.bundle.process_groups.push_back({kRingBackward, {1, 0}});
  c.bundle.micro_batches = micro_batches;
  c.bundle.strategy = {{"kind", "pipeline"},
                       {"pp_degree", kStages},
                       {"dp_degree", 1},
                       {"schedule", "FThenB"},
                       {"micro_batches", micro_batches}};

  std::vector<oldir::PlanJob> plan;
  for (int mb = 0; mb < micro_batches; ++mb) plan.push_back({"forward", mb});
  for (int mb = 0; mb < micro_batches; ++mb) plan.push_back({"backward", mb});
  plan.push_back({"optimizer", 0});

  for (int s = 0; s < kStages; ++s) {
    std::map<std::string, oldir::Program> jobs;
    std::set<std::string> used;
    for (int job = 0; job < 3; ++job) {
      jobs.emplace(kJobTypes[job], Filtered(model.main.desc(), [&](const proto::OpDesc& op) {
                     const bool mine = StageOf(op) == s && JobOf(op) == job;
                     if (mine) CollectArgs(op, &used);
                     return mine;
                   }));
    }
    // The stage's startup: the initialisers of what its jobs use.
    oldir::Program startup = Filtered(model.startup.desc(), [&](const proto::OpDesc& op) {
      for (const proto::OpDesc::Var& slot : op.outputs()) {
        for (const std::string& arg : slot.arguments()) {
          if (used.count(arg)) return true;
        }
      }
      return false;
    });
    c.ranks.push_back(RankPrograms{std::move(startup), std::move(jobs), plan});
  }
  return c;
}

}  // namespace irm::corpus
