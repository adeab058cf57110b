// Gradient accumulation across micro-batches in its pipeline form (pipeline_accumulation.h).
#include "oldir/passes/pipeline_accumulation.h"

#include <fmt/format.h>

#include <set>
#include <utility>
#include <vector>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/initializer.h"
#include "oldir/op_role.h"
#include "oldir/passes/gradient_merge.h"
#include "oldir/passes/pipeline_stages.h"

namespace irm::oldir::passes {

namespace {

struct Accumulated {
  std::string param;
  std::string grad;
  std::string merge;
  int writer = -1;  // the last backward op writing grad
};

bool Writes(const proto::OpDesc& op, const std::string& var) {
  for (const proto::OpDesc::Var& slot : op.outputs()) {
    for (const std::string& name : slot.arguments()) {
      if (name == var) return true;
    }
  }
  return false;
}

std::string DeviceOf(const proto::OpDesc& op) {
  return Op(&op).AttrOr<std::string>(kOpDeviceAttr, "");
}

}  // namespace

Status AppendPipelineAccumulation(Program& main, Program& startup, int micro_batches, bool avg,
                                  const std::string& file) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(file).AtAttr("accumulate_steps"),
                  fmt::format("accumulation needs at least 1 micro-batch, not {}", micro_batches));
  }
  const Block root = main.root();
  std::vector<Accumulated> pairs;
  int first_optimize = -1;
  int last_optimize = -1;
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (!IsOptimize(op.role())) continue;
    if (first_optimize < 0) first_optimize = i;
    last_optimize = i;
    std::optional<std::string> param = op.SingleInput("Param");
    std::optional<std::string> grad = op.SingleInput("Grad");
    if (param && grad) pairs.push_back({*param, *grad, *param + kGradientMergeSuffix, -1});
  }
  if (pairs.empty()) {
    return Status(StatusCode::kInvalid, Location::File(file).InBlock(0),
                  "accumulation needs a stage with optimizer ops (Param and Grad inputs)");
  }
  for (Accumulated& pair : pairs) {
    for (int i = 0; i < first_optimize; ++i) {
      const Op op = root.op(i);
      if (IsBackward(op.role()) && Writes(op.desc(), pair.grad)) pair.writer = i;
    }
    if (pair.writer < 0) {
      return Status(
          StatusCode::kInvalid, VarLocation(file, root, pair.grad),
          fmt::format("no backward op writes '{}', which the optimizer reads", pair.grad));
    }
    if (root.FindVar(pair.merge) || startup.root().FindVar(pair.merge)) {
      return Status(
          StatusCode::kInvalid, VarLocation(file, root, pair.merge),
          fmt::format("'{}' is declared already (was accumulation added twice?)", pair.merge));
    }
    if (!root.FindVar(pair.grad) || root.FindVar(pair.grad)->tensor_desc() == nullptr) {
      return Status(StatusCode::kInvalid, VarLocation(file, root, pair.grad),
                    fmt::format("gradient '{}' has no tensor declaration", pair.grad));
    }
  }

  ProgramBuilder scratch;
  const auto make = [&](const std::string& type, SlotArgs inputs, SlotArgs outputs, AttrList attrs,
                        int role, const std::string& namescope, const proto::OpDesc& like) {
    scratch.set_role(role);
    scratch.set_namescope(namescope);
    scratch.set_device(DeviceOf(like));
    proto::OpDesc op =
        *scratch.root().AppendOp(type, std::move(inputs), std::move(outputs), std::move(attrs));
    OpEditor(&op).SetAttr(kChunkIdAttr, int32_t{ChunkOf(like)});
    return op;
  };

  Program new_main = main;
  Program new_startup = startup;
  proto::BlockDesc& block = *new_main.mutable_desc()->mutable_blocks(0);
  proto::BlockDesc& init = *new_startup.mutable_desc()->mutable_blocks(0);
  std::vector<std::vector<proto::OpDesc>> adds_after(static_cast<size_t>(root.num_ops()));
  std::vector<proto::OpDesc> scales, resets;
  const proto::OpDesc& first_update = root.op(first_optimize).desc();
  for (const Accumulated& pair : pairs) {
    const Var grad = *root.FindVar(pair.grad);
    const proto::VarType::Type dtype = grad.dtype().value_or(proto::VarType::FP32);
    const std::vector<int64_t> dims = grad.dims();
    VarOptions persistable;
    persistable.persistable = true;
    proto::VarDesc var = *scratch.root().CreateVar(pair.merge, dtype, dims, persistable);
    *block.add_vars() = var;
    *init.add_vars() = var;
    scratch.set_role(kForward);
    scratch.set_namescope("/");
    scratch.set_device("");
    *init.add_ops() = *AppendFillConstant(scratch.root(), pair.merge, dtype, dims, 0.0f);
    const proto::OpDesc& writer = root.op(pair.writer).desc();
    adds_after[static_cast<size_t>(pair.writer)].push_back(
        make("elementwise_add", {{"X", {pair.merge}}, {"Y", {pair.grad}}}, {{"Out", {pair.merge}}},
             {{"axis", int32_t{-1}}}, kBackward, "/auto_parallel/gradient_merge", writer));
    if (avg) {
      scales.push_back(make("scale", {{"X", {pair.merge}}}, {{"Out", {pair.merge}}},
                            {{"scale", 1.0f / static_cast<float>(micro_batches)},
                             {"bias", 0.0f},
                             {"bias_after_scale", false}},
                            kOptimize, "/", first_update));
    }
    const std::vector<int64_t> none;
    // The reset as Paddle 2.6's set_value carries a float value (gradient_merge.cc does the same).
    resets.push_back(make("set_value",
                          {{"Input", {pair.merge}},
                           {"ValueTensor", {}},
                           {"StartsTensorList", {}},
                           {"EndsTensorList", {}},
                           {"StepsTensorList", {}}},
                          {{"Out", {pair.merge}}},
                          {{"axes", none},
                           {"starts", none},
                           {"ends", none},
                           {"steps", none},
                           {"decrease_axes", none},
                           {"none_axes", none},
                           {"shape", std::vector<int64_t>{1}},
                           {"dtype", static_cast<int32_t>(dtype)},
                           {"fp32_values", std::vector<float>{0.0f}}},
                          kOptimize, "/", first_update));
  }

  google::protobuf::RepeatedPtrField<proto::OpDesc> ops;
  for (int i = 0; i < root.num_ops(); ++i) {
    if (i == first_optimize) {
      for (proto::OpDesc& op : scales) *ops.Add() = std::move(op);
    }
    proto::OpDesc op = root.op(i).desc();
    if (IsOptimize(Op(&op).role())) {
      for (const Accumulated& pair : pairs) {
        for (auto* slots : {op.mutable_inputs(), op.mutable_outputs()}) {
          for (proto::OpDesc::Var& slot : *slots) {
            for (std::string& name : *slot.mutable_arguments()) {
              if (name == pair.grad) name = pair.merge;
            }
          }
        }
      }
      OpEditor(&op).RemoveAttr(kOpRoleVarAttr);
    }
    *ops.Add() = std::move(op);
    for (proto::OpDesc& add : adds_after[static_cast<size_t>(i)]) *ops.Add() = std::move(add);
    if (i == last_optimize) {
      for (proto::OpDesc& reset : resets) *ops.Add() = std::move(reset);
    }
  }
  block.mutable_ops()->Swap(&ops);
  new_main.Reindex();
  new_startup.Reindex();
  main = std::move(new_main);
  startup = std::move(new_startup);
  return Status::Ok();
}

}  // namespace irm::oldir::passes
