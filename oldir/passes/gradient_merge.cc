// The legacy gradient-merge pass (gradient_merge.h), step for step as Paddle's `parse_program`
// (python/paddle/distributed/passes/auto_parallel_gradient_merge.py) does it without a dist
// context and without gradient_sync_after_accumulate: _remove_and_get_optimizer_op,
// _append_gradient_merge_backward_op, _get_gm_cond_var, _create_cond_block_and_update_optimizer.
// The new ops are made by a scratch ProgramBuilder, so that they carry the attributes every op of
// a Paddle program carries, and copied into the program.
#include "oldir/passes/gradient_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/initializer.h"
#include "oldir/op_role.h"

namespace irm::oldir::passes {

namespace {

// The op's op_role (kNotSpecified when absent, which counts as neither backward nor optimize, as
// Paddle's is_optimize_op and is_forward_op read it).
int RoleOf(const proto::OpDesc& op) { return Op(&op).role(); }

std::vector<int64_t> DimsOf(const proto::VarDesc& var) {
  const auto& dims = var.type().dense_tensor().tensor().dims();
  return {dims.begin(), dims.end()};
}

proto::VarType::Type DtypeOf(const proto::VarDesc& var) {
  return var.type().dense_tensor().tensor().data_type();
}

const proto::VarDesc* FindVar(const proto::BlockDesc& block, const std::string& name) {
  for (const proto::VarDesc& var : block.vars()) {
    if (var.name() == name) return &var;
  }
  return nullptr;
}

// Makes ops and var declarations as Paddle's Python layer would, for copying into a program.
class Factory {
 public:
  proto::OpDesc Op(const std::string& type, SlotArgs inputs, SlotArgs outputs, AttrList attrs,
                   int role, const std::string& namescope = "/", const std::string& device = "") {
    scratch_.set_role(role);
    scratch_.set_namescope(namescope);
    scratch_.set_device(device);
    return *scratch_.root().AppendOp(type, std::move(inputs), std::move(outputs), std::move(attrs));
  }

  // fill_constant of `value` into `out`, as paddle.static.create_global_var's (force_cpu) or a
  // startup block's zero fill writes it.
  proto::OpDesc FillConstant(const std::string& out, proto::VarType::Type dtype,
                             const std::vector<int64_t>& dims, float value, bool force_cpu) {
    scratch_.set_role(kForward);
    scratch_.set_namescope("/");
    scratch_.set_device("");
    proto::OpDesc op = *AppendFillConstant(scratch_.root(), out, dtype, dims, value);
    if (force_cpu) OpEditor(&op).SetAttr("force_cpu", true);
    return op;
  }

  proto::VarDesc Var(const std::string& name, proto::VarType::Type dtype,
                     const std::vector<int64_t>& dims, const VarOptions& options) {
    return *scratch_.root().CreateVar(name, dtype, dims, options);
  }

  proto::VarDesc TypedVar(const std::string& name, proto::VarType::Type type) {
    return *scratch_.root().CreateTypedVar(name, type);
  }

 private:
  ProgramBuilder scratch_;
};

// A var the pass declares in the main program's root block, with its startup initialiser.
struct NewPersistable {
  proto::VarDesc var;
  proto::OpDesc init;
};

// Renames every argument of `op` found in `renames`.
void RenameArgs(proto::OpDesc& op, const std::unordered_map<std::string, std::string>& renames) {
  for (auto* slots : {op.mutable_inputs(), op.mutable_outputs()}) {
    for (proto::OpDesc::Var& slot : *slots) {
      for (std::string& name : *slot.mutable_arguments()) {
        if (auto it = renames.find(name); it != renames.end()) name = it->second;
      }
    }
  }
}

// The conditional_block's Input and Out as paddle.static.nn.cond's ConditionalBlock.complete
// derives them: the vars its ops read before any of them writes them, and the vars they write
// that an enclosing block declares (here every one: the moved ops' vars stay declared in the root
// block, as in Paddle). Sorted, for a deterministic program.
std::pair<std::vector<std::string>, std::vector<std::string>> BlockInputsOutputs(
    const proto::BlockDesc& sub, const proto::BlockDesc& root) {
  std::set<std::string> declared;
  for (const proto::VarDesc& var : root.vars()) declared.insert(var.name());
  std::set<std::string> inputs, written;
  for (const proto::OpDesc& op : sub.ops()) {
    for (const proto::OpDesc::Var& slot : op.inputs()) {
      for (const std::string& name : slot.arguments()) {
        if (!name.empty() && written.count(name) == 0) inputs.insert(name);
      }
    }
    for (const proto::OpDesc::Var& slot : op.outputs()) {
      for (const std::string& name : slot.arguments()) {
        if (!name.empty()) written.insert(name);
      }
    }
  }
  std::vector<std::string> outputs;
  for (const std::string& name : written) {
    if (declared.count(name) != 0) outputs.push_back(name);
  }
  return {{inputs.begin(), inputs.end()}, outputs};
}

// The name paddle's unique_name gives the conditional_block's STEP_SCOPES var, made unique
// against the block's declarations.
std::string StepScopesName(const proto::BlockDesc& root) {
  for (int i = 0;; ++i) {
    std::string name = fmt::format("_generated_var_{}", i);
    if (FindVar(root, name) == nullptr) return name;
  }
}

}  // namespace

Status ApplyGradientMerge(Program& main, Program& startup, const GradientMergeOptions& options) {
  if (options.k_steps < 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(options.file).AtAttr("k_steps"),
                  fmt::format("gradient merge needs k_steps >= 1, not {}", options.k_steps));
  }
  if (main.num_blocks() == 0 || startup.num_blocks() == 0) {
    return Status(StatusCode::kInvalid, Location::File(options.file),
                  "gradient merge needs a main and a startup program with a root block");
  }
  // Edit copies, so that a failure leaves both programs as they were.
  Program new_main = main;
  Program new_startup = startup;
  proto::ProgramDesc& desc = *new_main.mutable_desc();
  proto::BlockDesc& root = *desc.mutable_blocks(0);
  proto::BlockDesc& startup_root = *new_startup.mutable_desc()->mutable_blocks(0);
  const Location program_loc = Location::File(options.file).InBlock(0);

  // 1. _remove_and_get_optimizer_op: the optimize-role ops leave the root block, in order.
  std::vector<proto::OpDesc> kept, optimize;
  for (const proto::OpDesc& op : root.ops()) {
    (IsOptimize(RoleOf(op)) ? optimize : kept).push_back(op);
  }
  if (optimize.empty()) {
    return Status(StatusCode::kInvalid, program_loc,
                  "gradient merge needs a training program: the root block has no optimize-role "
                  "op (append the optimizer before the pass)");
  }
  // The executor's fetch ops, which Paddle adds only when it runs the program, stay last.
  size_t tail = kept.size();
  while (tail > 0 && kept[tail - 1].type() == "fetch") --tail;

  // 2. _append_gradient_merge_backward_op. params_grads are append_backward's pairs: every
  // parameter whose `<param>@GRAD` the root block declares.
  std::map<std::string, std::string> grad_to_param;
  for (const proto::VarDesc& var : root.vars()) {
    if (var.is_parameter() && FindVar(root, var.name() + kGradSuffix) != nullptr) {
      grad_to_param.emplace(var.name() + kGradSuffix, var.name());
    }
  }
  if (grad_to_param.empty()) {
    return Status(StatusCode::kInvalid, program_loc,
                  "gradient merge found no parameter gradient (`<param>@GRAD`) in the root block");
  }
  Factory factory;
  std::vector<std::vector<proto::OpDesc>> adds_after(kept.size());
  std::vector<std::pair<std::string, std::string>> param_merge;  // in Paddle's (reverse) order
  std::unordered_map<std::string, std::string> grad_to_merge;
  std::vector<NewPersistable> merges;
  for (size_t i = tail; i-- > 0 && !grad_to_param.empty();) {
    if (IsForward(RoleOf(kept[i]))) break;
    for (const proto::OpDesc::Var& slot : kept[i].outputs()) {
      for (const std::string& out : slot.arguments()) {
        auto found = grad_to_param.find(out);
        if (found == grad_to_param.end()) continue;
        const std::string param = found->second;
        const std::string merge = param + kGradientMergeSuffix;
        const proto::VarDesc& grad_var = *FindVar(root, out);
        NewPersistable buffer;
        buffer.var = factory.Var(merge, DtypeOf(grad_var), DimsOf(grad_var), {.persistable = true});
        buffer.init = factory.FillConstant(merge, DtypeOf(grad_var), DimsOf(grad_var), 0.0f,
                                           /*force_cpu=*/false);
        merges.push_back(std::move(buffer));
        // Each insertion lands right after the producer, so a later one goes first (in place, as
        // `a = a + b`: the buffer is X).
        adds_after[i].insert(
            adds_after[i].begin(),
            factory.Op("elementwise_add", {{"X", {merge}}, {"Y", {out}}}, {{"Out", {merge}}},
                       {{"axis", int32_t{-1}}}, kBackward, "/auto_parallel/gradient_merge"));
        param_merge.emplace_back(param, merge);
        grad_to_merge.emplace(out, merge);
        grad_to_param.erase(found);
      }
    }
  }
  if (!grad_to_param.empty()) {
    const std::string& grad = grad_to_param.begin()->first;
    return Status(StatusCode::kInvalid, VarLocation(options.file, new_main.root(), grad),
                  fmt::format("gradient merge found no backward-role op writing '{}' after the "
                              "forward ops",
                              grad));
  }

  // 4. _get_gm_cond_var: persistable CPU counters (paddle.static.create_global_var, whose vars
  // stop gradients), counted by backward-role ops on the CPU.
  std::vector<NewPersistable> counters;
  const VarOptions global{.persistable = true, .stop_gradient = true};
  for (const auto& [name, value] : {std::pair<const char*, int>{kGradientMergeK, options.k_steps},
                                    {kGradientMergeZero, 0},
                                    {kGradientMergeStep, 0}}) {
    counters.push_back({factory.Var(name, proto::VarType::INT32, {1}, global),
                        factory.FillConstant(name, proto::VarType::INT32, {1},
                                             static_cast<float>(value), /*force_cpu=*/true)});
  }
  counters.push_back(
      {factory.Var(kGradientMergeCond, proto::VarType::BOOL, {1}, global),
       factory.FillConstant(kGradientMergeCond, proto::VarType::BOOL, {1}, 0.0f, true)});
  const std::vector<proto::OpDesc> counting = {
      factory.Op("increment", {{"X", {kGradientMergeStep}}}, {{"Out", {kGradientMergeStep}}},
                 {{"step", 1.0f}}, kBackward, "/", "cpu"),
      factory.Op("elementwise_mod", {{"X", {kGradientMergeStep}}, {"Y", {kGradientMergeK}}},
                 {{"Out", {kGradientMergeStep}}}, {{"axis", int32_t{-1}}}, kBackward, "/", "cpu"),
      factory.Op("equal", {{"X", {kGradientMergeStep}}, {"Y", {kGradientMergeZero}}},
                 {{"Out", {kGradientMergeCond}}}, {{"axis", int32_t{-1}}, {"force_cpu", false}},
                 kBackward, "/", "cpu"),
  };

  // Every var the pass declares must be new to both programs.
  const std::string scopes = StepScopesName(root);
  std::vector<const NewPersistable*> added;
  for (const NewPersistable& v : merges) added.push_back(&v);
  for (const NewPersistable& v : counters) added.push_back(&v);
  for (const NewPersistable* v : added) {
    if (FindVar(root, v->var.name()) != nullptr ||
        FindVar(startup_root, v->var.name()) != nullptr) {
      return Status(StatusCode::kInvalid, VarLocation(options.file, new_main.root(), v->var.name()),
                    fmt::format("gradient merge declares '{}', which the program already "
                                "declares (was the pass applied twice?)",
                                v->var.name()));
    }
  }

  // 5. _create_cond_block_and_update_optimizer: the sub-block holds the 1/k scale of each buffer
  // (avg), the optimizer ops on the buffers (without op_role_var), and the buffers' reset.
  // Paddle's newest pass writes the reset with Paddle 3.x's SCALARS `values`; the programs here
  // are Paddle 2.6 programs, whose set_value carries the value in `fp32_values` (same op, same
  // kernel, the attribute of the op's 2.6 schema).
  proto::BlockDesc& sub = *desc.add_blocks();
  sub.set_idx(desc.blocks_size() - 1);
  sub.set_parent_idx(0);
  if (options.avg) {
    for (const auto& [param, merge] : param_merge) {
      *sub.add_ops() = factory.Op("scale", {{"X", {merge}}}, {{"Out", {merge}}},
                                  {{"scale", 1.0f / static_cast<float>(options.k_steps)},
                                   {"bias", 0.0f},
                                   {"bias_after_scale", false}},
                                  kOptimize);
    }
  }
  for (proto::OpDesc& op : optimize) {
    RenameArgs(op, grad_to_merge);
    OpEditor(&op).RemoveAttr(kOpRoleVarAttr);
    *sub.add_ops() = std::move(op);
  }
  for (const auto& entry : param_merge) {
    const std::string& merge = entry.second;
    const std::vector<int64_t> none;
    const proto::VarDesc& merge_var =
        std::find_if(merges.begin(), merges.end(), [&](const NewPersistable& m) {
          return m.var.name() == merge;
        })->var;
    *sub.add_ops() = factory.Op("set_value",
                                {{"Input", {merge}},
                                 {"ValueTensor", {}},
                                 {"StartsTensorList", {}},
                                 {"EndsTensorList", {}},
                                 {"StepsTensorList", {}}},
                                {{"Out", {merge}}},
                                {{"axes", none},
                                 {"starts", none},
                                 {"ends", none},
                                 {"steps", none},
                                 {"decrease_axes", none},
                                 {"none_axes", none},
                                 {"shape", std::vector<int64_t>{1}},
                                 {"dtype", static_cast<int32_t>(DtypeOf(merge_var))},
                                 {"fp32_values", std::vector<float>{0.0f}}},
                                kOptimize);
  }

  // The root block's declarations, then its ops: the kept ops with the accumulations, the
  // counter, the conditional_block, the fetch ops.
  for (const NewPersistable* v : added) {
    *root.add_vars() = v->var;
    *startup_root.add_vars() = v->var;
    *startup_root.add_ops() = v->init;
  }
  *root.add_vars() = factory.TypedVar(scopes, proto::VarType::STEP_SCOPES);
  const auto [block_inputs, block_outputs] = BlockInputsOutputs(sub, root);
  proto::OpDesc conditional =
      factory.Op("conditional_block", {{"Cond", {kGradientMergeCond}}, {"Input", block_inputs}},
                 {{"Out", block_outputs}, {"Scope", {scopes}}},
                 {{kSubBlockAttr, BlockRef{sub.idx()}}, {"is_scalar_condition", true}}, kOptimize);

  root.clear_ops();
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i == tail) {
      for (const proto::OpDesc& op : counting) *root.add_ops() = op;
      *root.add_ops() = conditional;
    }
    *root.add_ops() = std::move(kept[i]);
    for (proto::OpDesc& op : adds_after[i]) *root.add_ops() = std::move(op);
  }
  if (tail == kept.size()) {
    for (const proto::OpDesc& op : counting) *root.add_ops() = op;
    *root.add_ops() = conditional;
  }

  new_main.Reindex();
  new_startup.Reindex();
  main = std::move(new_main);
  startup = std::move(new_startup);
  return Status::Ok();
}

}  // namespace irm::oldir::passes
