// The data-parallel pass and its fused all-reduce (data_parallel.h). Where Paddle puts the ops
// and what they carry follows its legacy static auto-parallel:
// - python/paddle/distributed/auto_parallel/static/operators/common.py, sync_and_scale_gradients:
//   per gradient of a backward op, `c_allreduce_sum` {ring_id: the dp group, use_calc_stream:
//   True, op_role: Backward} then `scale` {scale: 1.0 / dp_degree, op_role: Backward}, both in
//   op_namescope "/data_parallel", appended right after that backward op.
// - python/paddle/distributed/passes/auto_parallel_data_parallel_optimization.py, _group_grads
//   and _update_program: the dp all-reduces grouped in program order (same ring, same dtype,
//   size bound, no op between them touching the group's gradients), a group of two or more
//   gets `coalesce_tensor` {use_align: True, dtype, concated_shapes, concated_ranks, op_role:
//   Backward}, and its last all-reduce and scale are renamed to the fused buffer while the
//   others are removed. That pass puts coalesce_tensor (copy_data: False) before the op producing
//   the group's first gradient, so that the gradients are computed into the buffer; here it is
//   placed as fleet's insert_fused_allreduce_ops (python/paddle/distributed/fleet/meta_optimizers/
//   sharding/utils.py) places it, right before the fused all-reduce with copy_data: True, so the
//   program reads each gradient after it is written and validates without a memory model.
#include "oldir/passes/data_parallel.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/diagnostic.h"
#include "common/host_tensor.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"
#include "oldir/params_io.h"

namespace irm::oldir::passes {
namespace {

using OpList = google::protobuf::RepeatedPtrField<proto::OpDesc>;

proto::OpDesc MakeOp(const std::string& type, const std::string& in_slot,
                     const std::vector<std::string>& in, const std::string& out_slot,
                     const std::vector<std::string>& out,
                     const std::vector<std::pair<std::string, AttrValue>>& attrs) {
  proto::OpDesc desc;
  OpEditor op(&desc);
  op.SetType(type).SetInput(in_slot, in).SetOutput(out_slot, out);
  for (const auto& [name, value] : attrs) op.SetAttr(name, value);
  return desc;
}

// The dp all-reduce and scale of `var` (sync_and_scale_gradients).
void AppendSync(const std::string& var, int dp_degree, int ring_id, OpList* ops) {
  *ops->Add() = MakeOp("c_allreduce_sum", "X", {var}, "Out", {var},
                       {{"ring_id", int32_t{ring_id}},
                        {"use_calc_stream", true},
                        {"use_model_parallel", false},
                        {kOpRoleAttr, int32_t{kBackward}},
                        {kOpNamescopeAttr, std::string(kDataParallelNamescope)}});
  *ops->Add() = MakeOp("scale", "X", {var}, "Out", {var},
                       {{"scale", 1.0f / static_cast<float>(dp_degree)},
                        {"bias", 0.0f},
                        {"bias_after_scale", true},
                        {kOpRoleAttr, int32_t{kBackward}},
                        {kOpNamescopeAttr, std::string(kDataParallelNamescope)}});
}

bool InDataParallelScope(const Op& op) {
  return op.AttrOr<std::string>(kOpNamescopeAttr, "") == kDataParallelNamescope;
}
bool IsDpAllReduce(const Op& op) {
  return op.type() == "c_allreduce_sum" && InDataParallelScope(op);
}
bool IsDpScale(const Op& op) { return op.type() == "scale" && InDataParallelScope(op); }

bool Touches(const proto::OpDesc& op, const std::unordered_set<std::string>& names) {
  for (const auto* slots : {&op.inputs(), &op.outputs()}) {
    for (const proto::OpDesc::Var& slot : *slots) {
      for (const std::string& arg : slot.arguments()) {
        if (names.count(arg)) return true;
      }
    }
  }
  return false;
}

// A gradient's dtype, dims and bytes, from its var in the root block.
struct GradInfo {
  proto::VarType::Type dtype = proto::VarType::FP32;
  std::vector<int64_t> dims;
  int64_t bytes = 0;
};

StatusOr<GradInfo> DescribeGrad(const Program& program, const std::string& name) {
  std::optional<Var> var = program.root().FindVar(name);
  if (!var || !var->dtype()) {
    return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                  "a synchronised gradient has no dense-tensor var in the root block");
  }
  GradInfo info;
  info.dtype = *var->dtype();
  info.dims = var->dims();
  const std::optional<DType> dtype = DTypeFromVarType(info.dtype);
  std::optional<uint64_t> bytes;
  if (dtype) bytes = CheckedByteSize(info.dims, DTypeSize(*dtype));
  if (!bytes || *bytes > uint64_t{INT64_MAX}) {
    return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                  "a synchronised gradient needs a known shape and a tensor dtype to be bucketed");
  }
  info.bytes = static_cast<int64_t>(*bytes);
  return info;
}

}  // namespace

StatusOr<std::vector<ParamGrad>> OptimizerParamGrads(const Program& main) {
  std::vector<ParamGrad> out;
  std::set<std::string> seen;
  const Block root = main.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (!IsOptimize(op.role())) continue;
    std::optional<std::string> param = op.SingleInput("Param");
    std::optional<std::string> grad = op.SingleInput("Grad");
    if (!param || !grad || !seen.insert(*grad).second) continue;
    out.push_back({*param, *grad});
  }
  if (out.empty()) {
    return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0),
                  "the program has no optimizer op (op_role Optimize, Param and Grad inputs): "
                  "data parallelism needs a training program");
  }
  return out;
}

StatusOr<Program> InsertGradientSync(const Program& main, const std::vector<ParamGrad>& grads,
                                     int dp_degree, int ring_id) {
  const Block root = main.root();
  std::unordered_map<std::string, int> last_writer;
  for (const ParamGrad& pg : grads) last_writer.emplace(pg.grad, -1);
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (!IsBackward(op.role()) || IsOptimize(op.role())) continue;
    for (const proto::OpDesc::Var& slot : op.desc().outputs()) {
      for (const std::string& arg : slot.arguments()) {
        auto it = last_writer.find(arg);
        if (it != last_writer.end()) it->second = i;
      }
    }
  }
  // The syncs after each op, in the order of the parameters the op's gradients belong to.
  std::map<int, std::vector<std::string>> after;
  for (const ParamGrad& pg : grads) {
    const int writer = last_writer.at(pg.grad);
    if (writer < 0) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(pg.grad),
                    fmt::format("gradient of parameter '{}' has no backward op writing it in the "
                                "root block",
                                pg.param));
    }
    std::vector<std::string>& list = after[writer];
    if (std::find(list.begin(), list.end(), pg.grad) == list.end()) list.push_back(pg.grad);
  }
  Program out = main;
  proto::BlockDesc* block = out.mutable_desc()->mutable_blocks(0);
  OpList ops;
  for (int i = 0; i < block->ops_size(); ++i) {
    *ops.Add() = block->ops(i);
    auto it = after.find(i);
    if (it == after.end()) continue;
    for (const std::string& grad : it->second) AppendSync(grad, dp_degree, ring_id, &ops);
  }
  block->mutable_ops()->Swap(&ops);
  out.Reindex();
  return out;
}

StatusOr<std::vector<GradientBucket>> GroupGradients(const Program& synced, int64_t max_bytes) {
  std::vector<GradientBucket> buckets;
  GradientBucket open;
  proto::VarType::Type open_dtype = proto::VarType::FP32;
  std::unordered_set<std::string> open_names;
  auto close = [&] {
    if (!open.grads.empty()) buckets.push_back(std::move(open));
    open = GradientBucket{};
    open_names.clear();
  };
  const Block root = synced.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (IsDpAllReduce(op)) {
      std::optional<std::string> grad = op.SingleOutput("Out");
      if (!grad) {
        return Status(StatusCode::kInvalidArgument, Location{}.InBlock(0).AtOp(i, op.type()),
                      "a data-parallel all-reduce must have one output");
      }
      IRM_ASSIGN_OR_RETURN(GradInfo info, DescribeGrad(synced, *grad));
      const bool fits =
          open.grads.empty() || (open.bytes + info.bytes <= max_bytes && info.dtype == open_dtype);
      if (!fits) close();
      open.grads.push_back(*grad);
      open.bytes += info.bytes;
      open_dtype = info.dtype;
      open_names.insert(*grad);
    } else if (IsDpScale(op)) {
      continue;  // the all-reduce's own scale: part of the sync, not a use
    } else if (Touches(op.desc(), open_names)) {
      close();
    }
  }
  close();
  return buckets;
}

StatusOr<Program> FuseGradientSync(const Program& synced,
                                   const std::vector<GradientBucket>& buckets) {
  const Block root = synced.root();
  std::unordered_map<std::string, int> bucket_of;  // gradient -> bucket index
  for (size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].grads.size() < 2) continue;
    for (const std::string& g : buckets[b].grads) bucket_of[g] = static_cast<int>(b);
  }
  std::unordered_map<std::string, int> sync_at;  // gradient -> index of its dp all-reduce
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (!IsDpAllReduce(op)) continue;
    std::optional<std::string> grad = op.SingleOutput("Out");
    if (grad && bucket_of.count(*grad)) sync_at[*grad] = i;
  }

  Program out = synced;
  proto::BlockDesc* block = out.mutable_desc()->mutable_blocks(0);
  std::map<int, OpList> replace;  // the bucket's coalesce_tensor, all-reduce and scale
  std::unordered_set<int> drop;   // the members' own all-reduces and scales
  for (size_t b = 0; b < buckets.size(); ++b) {
    const GradientBucket& bucket = buckets[b];
    if (bucket.grads.size() < 2) continue;
    // Paddle numbers the buffers over the groups in reverse.
    const std::string fused = fmt::format("{}_{}_0", kCoalescePrefix, buckets.size() - 1 - b);
    if (root.FindVar(fused)) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(fused),
                    "the program already has a var named like a fused gradient buffer");
    }
    std::vector<int32_t> shapes;
    std::vector<int32_t> ranks;
    proto::VarType::Type dtype = proto::VarType::FP32;
    int64_t numel = 0;
    for (const std::string& g : bucket.grads) {
      auto at = sync_at.find(g);
      if (at == sync_at.end()) {
        return Status(StatusCode::kInvalidArgument, Location{}.AtVar(g),
                      "a bucketed gradient has no data-parallel all-reduce");
      }
      IRM_ASSIGN_OR_RETURN(GradInfo info, DescribeGrad(synced, g));
      dtype = info.dtype;
      int64_t n = 1;
      for (int64_t d : info.dims) {
        shapes.push_back(static_cast<int32_t>(d));
        n *= d;
      }
      numel += n;
      ranks.push_back(static_cast<int32_t>(info.dims.size()));
      drop.insert(at->second);
      if (at->second + 1 < root.num_ops() && IsDpScale(root.op(at->second + 1))) {
        drop.insert(at->second + 1);
      }
    }
    OpList sync;
    *sync.Add() = MakeOp("coalesce_tensor", "Input", bucket.grads, "Output", bucket.grads,
                         {{"copy_data", true},
                          {"use_align", true},
                          {"dtype", static_cast<int32_t>(dtype)},
                          {"concated_shapes", shapes},
                          {"concated_ranks", ranks},
                          {kOpRoleAttr, int32_t{kBackward}}});
    OpEditor(sync.Mutable(0)).SetOutput("FusedOutput", {fused});
    const int last_sync = sync_at.at(bucket.grads.back());
    float scale = 1.0f;
    if (last_sync + 1 < root.num_ops() && IsDpScale(root.op(last_sync + 1))) {
      scale = root.op(last_sync + 1).AttrOr<float>("scale", 1.0f);
    }
    const int ring_id = root.op(last_sync).AttrOr<int32_t>("ring_id", kDataParallelRing);
    AppendSync(fused, 1, ring_id, &sync);
    OpEditor(sync.Mutable(2)).SetAttr("scale", scale);
    replace[last_sync] = std::move(sync);
    VarEditor(block->add_vars())
        .SetDenseTensor(dtype, {numel})
        .SetPersistable(false)
        .SetStopGradient(true)
        .desc()
        ->set_name(fused);
  }
  OpList ops;
  for (int i = 0; i < block->ops_size(); ++i) {
    if (auto it = replace.find(i); it != replace.end()) {
      for (const proto::OpDesc& op : it->second) *ops.Add() = op;
      continue;
    }
    if (drop.count(i)) continue;
    *ops.Add() = block->ops(i);
  }
  block->mutable_ops()->Swap(&ops);
  out.Reindex();
  return out;
}

StatusOr<Program> SynchronizeGradients(const Program& main, const Strategy& strategy, int ring_id) {
  IRM_ASSIGN_OR_RETURN(std::vector<ParamGrad> grads, OptimizerParamGrads(main));
  IRM_ASSIGN_OR_RETURN(Program synced,
                       InsertGradientSync(main, grads, strategy.dp_degree, ring_id));
  if (!strategy.fuse_all_reduce()) return synced;
  const double bytes = strategy.dp_optimization.fuse_grad_size_in_MB * (1 << 20);
  const int64_t max_bytes =
      bytes >= 9.0e18 ? INT64_MAX : std::max<int64_t>(1, static_cast<int64_t>(bytes));
  IRM_ASSIGN_OR_RETURN(std::vector<GradientBucket> buckets, GroupGradients(synced, max_bytes));
  return FuseGradientSync(synced, buckets);
}

StatusOr<DistributedPrograms> ApplyDataParallel(const Program& startup, const Program& main,
                                                const Strategy& strategy) {
  if (strategy.mp_degree != 1 || strategy.pp_degree != 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  "the data-parallel pass alone applies only to strategies without tensor or "
                  "pipeline parallelism");
  }
  if (main.num_blocks() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, "the main program has no block");
  }
  const int dp = strategy.dp_degree;
  DistributedPrograms out;
  out.world_size = dp;
  ProcessGroup group;
  group.ring_id = kDataParallelRing;
  for (int r = 0; r < dp; ++r) group.ranks.push_back(r);
  out.process_groups.push_back(group);
  if (dp == 1) {
    out.ranks.push_back(SingleProgramRank(startup, main));
    return out;
  }
  IRM_ASSIGN_OR_RETURN(Program synced, SynchronizeGradients(main, strategy, kDataParallelRing));
  for (int r = 0; r < dp; ++r) out.ranks.push_back(SingleProgramRank(startup, synced));
  return out;
}

}  // namespace irm::oldir::passes
