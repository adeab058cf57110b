// append_backward, step for step as python/paddle/base/backward.py does it for the root block:
//   1. the op path: ops whose outputs reach the loss, walking back from it, not through
//      stop_gradient / no-grad vars nor ops without a gradient (_find_op_path_);
//   2. outputs of path ops that reach nothing become no-grad vars too (_find_no_grad_vars);
//   3. grad ops from the grad makers, in reverse op order (_append_backward_ops_);
//   4. gradients written by several grad ops are renamed `x@GRAD@RENAME@block0@N` and summed
//      by a `sum` op placed before the first grad op that reads them, or at the end
//      (_addup_repetitive_outputs_);
//   5. grad ops that produce only no-grad gradients, or read only no-grad gradients, go; a kept
//      op reading a no-grad gradient gets a zero `fill_any_like` first
//      (_remove_no_grad_branch_);
//   6. grad-op islands not connected to the loss gradient go (_find_not_need_ops);
//   7. gradient names that already name a var are made unique (_rename_grad_), grad ops with
//      nothing to write or nothing to read go, and the grad vars are declared with the forward
//      var's dtype and shape (_append_backward_vars_);
//   8. op_role_var [param, grad] goes on the last op writing each parameter's gradient.
// Everything is planned on GradOp values first; the builder is only touched once the plan holds,
// so a failure leaves the program as it was.
#include "oldir/backward.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "oldir/editor.h"
#include "oldir/grad_makers.h"
#include "oldir/initializer.h"
#include "oldir/program.h"

namespace irm::oldir {
namespace {

using Names = std::vector<std::string>;
using NameSet = std::unordered_set<std::string>;

bool IsGradName(std::string_view name) { return name.find(kGradSuffix) != std::string_view::npos; }

bool Contains(const Names& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Paddle's _all_in_set_: false for an empty list.
bool AllIn(const Names& names, const NameSet& set) {
  if (names.empty()) return false;
  return std::all_of(names.begin(), names.end(), [&](const auto& n) { return set.count(n) > 0; });
}

// Paddle's _strip_grad_suffix_: "x@GRAD" -> "x", "x@GRAD@RENAME@block0@1" -> "x",
// "grad/x@GRAD" -> "x".
std::string StripGradSuffix(std::string_view name) {
  size_t cut = std::string_view::npos;
  for (size_t pos = name.find(kGradSuffix); pos != std::string_view::npos;
       pos = name.find(kGradSuffix, pos + 1)) {
    size_t end = pos + 4;  // "@GRA" then one or more 'D' then '@'
    while (end < name.size() && name[end] == 'D') ++end;
    if (end < name.size() && name[end] == '@') {
      cut = pos;
      break;
    }
  }
  const std::string_view suffix = kGradSuffix;
  if (cut == std::string_view::npos && name.size() >= suffix.size() &&
      name.substr(name.size() - suffix.size()) == suffix) {
    cut = name.size() - suffix.size();
  }
  std::string_view stripped = name.substr(0, cut);
  const size_t prefix = name.rfind("grad/");
  if (prefix != std::string_view::npos)
    stripped = stripped.substr(std::min(prefix + 5, stripped.size()));
  return std::string(stripped);
}

Names SlotArgNames(const google::protobuf::RepeatedPtrField<proto::OpDesc::Var>& slots) {
  Names names;
  for (const proto::OpDesc::Var& slot : slots) {
    names.insert(names.end(), slot.arguments().begin(), slot.arguments().end());
  }
  return names;
}

Location OpLoc(int index, const std::string& type) {
  Location loc;
  loc.InBlock(0).AtOp(index, type);
  return loc;
}

Location VarLoc(const std::string& name) {
  Location loc;
  loc.InBlock(0).AtVar(name);
  return loc;
}

// A grad op of the plan; `seed` marks the loss-gradient fill_constant.
struct PlannedOp {
  GradOp op;
  bool seed = false;
};

struct NewVar {
  std::string name;
  proto::VarType::Type dtype = proto::VarType::FP32;
  std::vector<int64_t> dims;
  int32_t lod_level = 0;
};

class Backward {
 public:
  Backward(ProgramBuilder& program, const std::string& loss, const BackwardOptions& options)
      : program_(program), block_(program.root()), loss_(loss), options_(options) {}

  StatusOr<std::vector<ParamGrad>> Run() {
    IRM_RETURN_IF_ERROR(FindLoss());
    CollectNoGrad();
    FindOpPath();
    IRM_RETURN_IF_ERROR(FindNoGradVars());
    IRM_RETURN_IF_ERROR(MakeGradOps());
    AddupRepetitiveOutputs();
    RemoveNoGradBranch();
    RemoveNotNeededOps();
    PlanSeed();
    RenameGrads();
    IRM_RETURN_IF_ERROR(PlanVars());
    Apply();
    return SetOpRoleVars();
  }

 private:
  const proto::BlockDesc& desc() const { return std::as_const(block_).desc(); }
  const proto::OpDesc& fwd(int i) const { return desc().ops(i); }

  Status FindLoss() {
    loss_var_ = block_.FindLocalVar(loss_);
    if (loss_var_ == nullptr) {
      return Status(StatusCode::kInvalidArgument, VarLoc(loss_),
                    fmt::format("the loss var '{}' is not declared in the root block", loss_));
    }
    if (!Var(loss_var_).dtype().has_value()) {
      return Status(StatusCode::kInvalidArgument, VarLoc(loss_),
                    fmt::format("the loss var '{}' is not a tensor", loss_));
    }
    for (int i = 0; i < desc().ops_size(); ++i) {
      if (IsBackward(Op(&fwd(i)).role())) {
        return Status(StatusCode::kUnimplemented, OpLoc(i, fwd(i).type()),
                      "the program already has backward ops; a second append_backward (double "
                      "grad) is not supported");
      }
    }
    // loss.op: the last op writing the loss.
    for (int i = desc().ops_size() - 1; i >= 0 && loss_op_ < 0; --i) {
      if (Contains(SlotArgNames(fwd(i).outputs()), loss_)) loss_op_ = i;
    }
    if (loss_op_ < 0) {
      return Status(StatusCode::kInvalidArgument, VarLoc(loss_),
                    fmt::format("no op of the root block writes the loss var '{}'", loss_));
    }
    num_forward_ops_ = desc().ops_size();
    return Status::Ok();
  }

  // _get_stop_gradients_ plus the caller's no_grad_set.
  void CollectNoGrad() {
    for (const proto::VarDesc& var : desc().vars()) {
      if (var.stop_gradient()) no_grad_.insert(var.name());
    }
    no_grad_.insert(options_.no_grad_vars.begin(), options_.no_grad_vars.end());
  }

  // Ops known to have no gradient stop the walk; unknown ones are taken (and fail later).
  static bool HasEmptyGradMaker(const std::string& type) {
    const GradRule* rule = FindGradRule(type);
    return rule != nullptr && rule->maker == nullptr;
  }

  void FindOpPath() {
    NameSet reached = {loss_};
    std::vector<bool> on_path(num_forward_ops_, false);
    for (int i = num_forward_ops_ - 1; i >= 0; --i) {
      const Names outputs = SlotArgNames(fwd(i).outputs());
      const bool reaches = std::any_of(outputs.begin(), outputs.end(),
                                       [&](const auto& n) { return reached.count(n) > 0; });
      if (!reaches || HasEmptyGradMaker(fwd(i).type())) continue;
      on_path[i] = true;
      for (const std::string& name : SlotArgNames(fwd(i).inputs())) {
        if (no_grad_.count(name) == 0) reached.insert(name);
      }
    }
    for (int i = 0; i < num_forward_ops_; ++i) {
      if (on_path[i]) path_.push_back(i);
    }
  }

  // Outputs of path ops that nothing later on the path reads (and that are not the loss).
  Status FindNoGradVars() {
    NameSet used = {loss_};
    NameSet found;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      const proto::OpDesc& op = fwd(*it);
      const Names inputs = SlotArgNames(op.inputs());
      for (const std::string& out : SlotArgNames(op.outputs())) {
        if (out.empty() || out == kEmptyVarName) continue;
        proto::VarDesc* var = block_.FindVar(out);
        if (var == nullptr) {
          return Status(StatusCode::kInvalidArgument, OpLoc(*it, op.type()).AtVar(out),
                        fmt::format("output '{}' of op '{}' is not declared", out, op.type()));
        }
        if (used.count(out) == 0 && !Contains(inputs, out) && !var->stop_gradient()) {
          found.insert(out);
        }
      }
      for (const std::string& name : inputs) {
        if (no_grad_.count(name) == 0) used.insert(name);
      }
    }
    no_grad_.insert(found.begin(), found.end());
    for (const std::string& name : no_grad_) no_grad_grads_.insert(name + kGradSuffix);
    return Status::Ok();
  }

  Status MakeGradOps() {
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      const proto::OpDesc& op = fwd(*it);
      const GradRule* rule = FindGradRule(op.type());
      if (rule == nullptr) {
        return Status(StatusCode::kUnimplemented, OpLoc(*it, op.type()),
                      fmt::format("op '{}' is on the path to the loss '{}' but has no grad rule",
                                  op.type(), loss_));
      }
      AttrList attrs;
      std::optional<AttrValue> op_device;
      for (const proto::OpDesc::Attr& attr : op.attrs()) {
        StatusOr<AttrValue> value = ReadAttrValue(attr);
        if (!value.ok()) {
          return Status(StatusCode::kInvalid, OpLoc(*it, op.type()).AtAttr(attr.name()),
                        value.status().message());
        }
        attrs.emplace_back(attr.name(), std::move(value).value());
        if (attr.name() == kOpDeviceAttr) op_device = attrs.back().second;
      }
      if (op.type() == "lookup_table_v2") {
        for (const auto& [name, value] : attrs) {
          if (name == "is_sparse" && std::holds_alternative<bool>(value) && std::get<bool>(value)) {
            return Status(StatusCode::kUnimplemented, OpLoc(*it, op.type()).AtAttr(name),
                          "sparse embedding gradients (SELECTED_ROWS) are not supported");
          }
        }
      }
      GradMakerContext ctx(op, std::move(attrs), no_grad_grads_, &grad_to_var_);
      std::vector<GradOp> made = rule->maker(ctx);
      if (!ctx.status().ok()) {
        return Status(StatusCode::kInvalidArgument, OpLoc(*it, op.type()), ctx.status().message());
      }
      for (GradOp& g : made) {
        // _append_backward_ops_ gives every grad op its forward op's device.
        if (op_device.has_value()) g.SetAttr(kOpDeviceAttr, *op_device);
        grad_ops_.push_back(std::move(g));
      }
    }
    return Status::Ok();
  }

  static std::string DeviceOf(const GradOp& op) {
    const AttrValue* device = op.FindAttr(kOpDeviceAttr);
    return device && std::holds_alternative<std::string>(*device) ? std::get<std::string>(*device)
                                                                  : std::string();
  }

  // _addup_repetitive_outputs_ (FLAGS_max_inplace_grad_add is 0: always a `sum` op).
  void AddupRepetitiveOutputs() {
    std::vector<GradOp>& ops = grad_ops_;
    std::map<int, std::vector<GradOp>> pending;  // insertion position -> sum ops
    std::unordered_map<std::string, Names> renamed;
    Names renamed_order;  // first access order, as Python's defaultdict iterates
    std::unordered_map<std::string, int> rename_count;
    std::unordered_map<std::string, int> start_index;
    std::unordered_map<std::string, std::string> device_of;
    auto renamed_of = [&](const std::string& name) -> Names& {
      auto [it, inserted] = renamed.try_emplace(name);
      if (inserted) renamed_order.push_back(name);
      return it->second;
    };
    auto next_name = [&](const std::string& name) {
      return fmt::format("{}@RENAME@block0@{}", name, rename_count[name]++);
    };
    auto accumulate = [&](const std::string& name, int position) {
      GradOp sum;
      sum.type = "sum";
      sum.SetInput("X", renamed_of(name));
      sum.SetOutput("Out", {name});
      sum.SetAttr("use_mkldnn", false);
      sum.SetAttr(kOpDeviceAttr, device_of[name]);
      pending[position].push_back(std::move(sum));
      renamed_of(name) = {name};
    };

    for (int idx = 0; idx < static_cast<int>(ops.size()); ++idx) {
      for (const std::string& name : ops[idx].InputArgNames()) {
        if (IsGradName(name) && renamed_of(name).size() > 1) accumulate(name, idx);
      }
      const std::string device = DeviceOf(ops[idx]);
      for (size_t p = 0; p < ops[idx].outputs.size(); ++p) {
        const Names original = ops[idx].outputs[p].second;
        Names args = original;
        for (size_t a = 0; a < original.size(); ++a) {
          const std::string& name = original[a];
          if (!IsGradName(name)) continue;
          if (name == kEmptyVarName || Contains(ops[idx].InputArgNames(), name)) continue;
          Names& versions = renamed_of(name);
          if (versions.empty()) {
            versions = {name};
            start_index[name] = idx;
            continue;
          }
          if (versions.size() == 1) {
            // The first writer's output (and what read it since) becomes partial #0.
            const std::string first = next_name(name);
            versions[0] = first;
            for (int k = start_index[name]; k < idx; ++k) {
              ops[k].RenameInput(name, first);
              ops[k].RenameOutput(name, first);
            }
            for (auto& [position, sums] : pending) {
              for (GradOp& sum : sums) {
                sum.RenameInput(name, first);
                sum.RenameOutput(name, first);
              }
            }
            for (size_t q = 0; q < p; ++q) {
              Names& earlier = ops[idx].outputs[q].second;
              std::replace(earlier.begin(), earlier.end(), name, first);
            }
            std::replace(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(a), name, first);
          }
          const std::string partial = next_name(name);
          args[a] = partial;
          ops[idx].outputs[p].second = args;
          versions.push_back(partial);
          device_of[name] = device;
        }
      }
    }
    for (const std::string& name : renamed_order) {
      if (renamed[name].size() > 1) accumulate(name, static_cast<int>(ops.size()));
    }
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      for (size_t i = 0; i < it->second.size(); ++i) {
        ops.insert(ops.begin() + it->first + static_cast<std::ptrdiff_t>(i),
                   std::move(it->second[i]));
      }
    }
  }

  // _remove_no_grad_branch_.
  void RemoveNoGradBranch() {
    const std::string loss_grad = loss_ + kGradSuffix;
    std::vector<GradOp> kept;
    for (GradOp& op : grad_ops_) {
      const Names outputs = op.OutputArgNames();
      if (outputs.empty() || AllIn(outputs, no_grad_grads_)) continue;
      Names grad_inputs;
      for (const std::string& name : op.InputArgNames()) {
        if (IsGradName(name)) grad_inputs.push_back(name);
      }
      if (AllIn(grad_inputs, no_grad_grads_)) {
        for (const std::string& name : outputs) {
          if (name != loss_grad) no_grad_grads_.insert(name);
        }
        continue;
      }
      kept.push_back(std::move(op));
    }
    // A kept op reading a gradient that never flows gets it as zeros.
    std::vector<GradOp> result;
    for (GradOp& op : kept) {
      for (const std::string& name : op.InputArgNames()) {
        if (!IsGradName(name) || no_grad_grads_.count(name) == 0) continue;
        GradOp zeros;
        zeros.type = "fill_any_like";
        zeros.SetInput("X", {StripGradSuffix(name)});
        zeros.SetOutput("Out", {name});
        zeros.SetAttr("value", 0.0f);
        zeros.SetAttr("dtype", int32_t{-1});
        zeros.SetAttr(kOpDeviceAttr, std::string());
        result.push_back(std::move(zeros));
      }
      result.push_back(std::move(op));
    }
    grad_ops_ = std::move(result);
  }

  // _find_not_need_ops: sub-graphs of grad ops that start from gradients nothing produced (and
  // no forward var) and never meet a forward var are dropped, unless that is everything.
  void RemoveNotNeededOps() {
    const int n = static_cast<int>(grad_ops_.size());
    NameSet forward_vars;
    for (int i : path_) {
      for (const std::string& name : SlotArgNames(fwd(i).inputs())) forward_vars.insert(name);
      for (const std::string& name : SlotArgNames(fwd(i).outputs())) forward_vars.insert(name);
    }
    // Var versions: every write makes a new node; a read uses the latest one.
    std::unordered_map<std::string, std::vector<int>> versions;
    std::vector<std::vector<int>> readers;  // per var node: the ops reading it
    std::vector<std::vector<int>> op_inputs(n), op_outputs(n);
    auto new_node = [&](const std::string& name) {
      readers.emplace_back();
      versions[name].push_back(static_cast<int>(readers.size()) - 1);
      return versions[name].back();
    };
    NameSet backward_vars;
    std::vector<int> heads;
    for (int i = 0; i < n; ++i) {
      const Names inputs = grad_ops_[i].InputArgNames();
      const NameSet input_set(inputs.begin(), inputs.end());
      size_t fresh = 0;
      for (const std::string& name : input_set) {
        fresh += forward_vars.count(name) == 0 && backward_vars.count(name) == 0;
      }
      for (const std::string& name : grad_ops_[i].OutputArgNames()) backward_vars.insert(name);
      for (const std::string& name : inputs) {
        auto it = versions.find(name);
        const int node = it == versions.end() ? new_node(name) : it->second.back();
        readers[node].push_back(i);
        op_inputs[i].push_back(node);
      }
      for (const std::string& name : grad_ops_[i].OutputArgNames()) {
        op_outputs[i].push_back(new_node(name));
      }
      if (fresh == input_set.size()) heads.push_back(i);
    }
    std::vector<bool> not_needed(n, false);
    for (int head : heads) {
      std::vector<int> visited = {head};
      std::unordered_set<int> ready(op_inputs[head].begin(), op_inputs[head].end());
      std::deque<int> queue = {head};
      bool remove = true;
      while (!queue.empty()) {
        const int op = queue.front();
        queue.pop_front();
        const bool all_ready =
            !op_inputs[op].empty() && std::all_of(op_inputs[op].begin(), op_inputs[op].end(),
                                                  [&](int node) { return ready.count(node) > 0; });
        if (!all_ready) {
          remove = false;
          break;
        }
        for (int node : op_outputs[op]) {
          queue.insert(queue.end(), readers[node].begin(), readers[node].end());
          visited.insert(visited.end(), readers[node].begin(), readers[node].end());
        }
        ready.insert(op_outputs[op].begin(), op_outputs[op].end());
      }
      if (remove) {
        for (int op : visited) not_needed[op] = true;
      }
    }
    if (std::all_of(not_needed.begin(), not_needed.end(), [](bool b) { return b; })) return;
    std::vector<GradOp> kept;
    for (int i = 0; i < n; ++i) {
      if (!not_needed[i]) kept.push_back(std::move(grad_ops_[i]));
    }
    grad_ops_ = std::move(kept);
  }

  // _create_loss_op_desc_: 1.0 into loss@GRAD, shape [] for a 0-D loss (or the loss shape when
  // it has a 0 dim), else [1].
  void PlanSeed() {
    const std::vector<int64_t> dims = Var(loss_var_).dims();
    const bool keep = dims.empty() || std::find(dims.begin(), dims.end(), 0) != dims.end();
    seed_shape_ = keep ? dims : std::vector<int64_t>{1};
    PlannedOp seed;
    seed.seed = true;
    seed.op.type = "fill_constant";
    seed.op.SetOutput("Out", {loss_ + kGradSuffix});
    plan_.push_back(std::move(seed));
    for (GradOp& op : grad_ops_) plan_.push_back({std::move(op), false});
  }

  // _rename_grad_: a gradient output whose name is already a var of the block gets a unique one.
  void RenameGrads() {
    std::unordered_map<std::string, std::string> renames;
    for (PlannedOp& planned : plan_) {
      GradOp& op = planned.op;
      for (const std::string& name : op.InputArgNames()) {
        auto it = renames.find(name);
        if (it != renames.end()) op.RenameInput(name, it->second);
      }
      for (const std::string& name : op.OutputArgNames()) {
        if (!IsGradName(name) || block_.FindVar(name) == nullptr) continue;
        std::string unique = program_.names().Generate(name);
        op.RenameOutput(name, unique);
        renames[name] = unique;
      }
    }
    for (const auto& [from, to] : renames) {
      auto it = grad_to_var_.find(from);
      if (it == grad_to_var_.end()) continue;
      std::string var = it->second;
      grad_to_var_.erase(it);
      grad_to_var_[to] = std::move(var);
    }
  }

  bool Declared(const std::string& name) const {
    return declared_.count(name) > 0 || block_.FindVar(name) != nullptr;
  }

  // _append_backward_vars_: drops grad ops with nothing to write or no gradient to read, and
  // declares the vars the kept ones write.
  Status PlanVars() {
    std::vector<PlannedOp> kept;
    for (PlannedOp& planned : plan_) {
      GradOp& op = planned.op;
      Names outputs;
      for (const std::string& name : op.OutputArgNames()) {
        if (name != kEmptyVarName) outputs.push_back(name);
      }
      if (outputs.empty()) continue;
      Names grad_inputs;
      for (const std::string& name : op.InputArgNames()) {
        if (IsGradName(name)) grad_inputs.push_back(name);
      }
      if (!grad_inputs.empty() &&
          std::none_of(grad_inputs.begin(), grad_inputs.end(),
                       [&](const std::string& name) { return Declared(name); })) {
        continue;
      }
      if (op.type == "sum") {
        Names inputs;
        for (const std::string& name : op.InputArgNames()) {
          if (Declared(name)) inputs.push_back(name);
        }
        if (inputs.empty()) {
          return Status(StatusCode::kInternal, VarLoc(op.OutputArgNames().front()),
                        "after removing undeclared gradients, a sum op has no inputs");
        }
        op.SetInput("X", std::move(inputs));
      }
      std::vector<NewVar>& vars = new_vars_.emplace_back();
      for (const std::string& name : op.OutputArgNames()) {
        if (name == kEmptyVarName || Declared(name)) continue;
        declared_.insert(name);
        NewVar var;
        var.name = name;
        if (proto::VarDesc* forward = block_.FindVar(StripGradSuffix(name))) {
          const Var view(forward);
          var.dtype = view.dtype().value_or(proto::VarType::FP32);
          var.dims = view.dims();
          var.lod_level = view.lod_level();
        }
        vars.push_back(std::move(var));
        auto it = grad_to_var_.find(name);
        if (it != grad_to_var_.end()) grad_of_[it->second] = name;
      }
      kept.push_back(std::move(planned));
    }
    plan_ = std::move(kept);
    return Status::Ok();
  }

  void Apply() {
    OpEditor(block_.desc()->mutable_ops(loss_op_)).SetAttr(kOpRoleAttr, kForward | kLoss);
    for (size_t i = 0; i < plan_.size(); ++i) {
      const PlannedOp& planned = plan_[i];
      if (planned.seed) {
        ScopedOpRole role(program_, kBackward | kLoss);
        const std::string saved_device = program_.device();
        const Op loss_op(&fwd(loss_op_));
        program_.set_device(loss_op.AttrOr<std::string>(kOpDeviceAttr, saved_device));
        AppendFillConstant(block_, planned.op.outputs.front().second.front(),
                           *Var(loss_var_).dtype(), seed_shape_, 1.0f);
        program_.set_device(saved_device);
      } else {
        ScopedOpRole role(program_, kBackward);
        block_.AppendOp(planned.op.type, planned.op.inputs, planned.op.outputs, planned.op.attrs);
      }
      for (const NewVar& var : new_vars_[i]) {
        block_.CreateVar(var.name, var.dtype, var.dims, {.lod_level = var.lod_level});
      }
    }
  }

  // The trainable parameters that got a gradient, in block order; op_role_var on the last op
  // writing each gradient, the newest pair first (Paddle prepends).
  std::vector<ParamGrad> SetOpRoleVars() {
    std::vector<ParamGrad> result;
    for (const proto::VarDesc& var : desc().vars()) {
      if (!var.is_parameter() || var.stop_gradient()) continue;
      auto it = grad_of_.find(var.name());
      if (it != grad_of_.end()) result.push_back({var.name(), it->second});
    }
    // The last writer of every var, in one pass: linear in the program, not params x ops.
    std::unordered_map<std::string, int> last_writer;
    for (int i = 0; i < desc().ops_size(); ++i) {
      for (const std::string& out : SlotArgNames(desc().ops(i).outputs())) last_writer[out] = i;
    }
    for (const ParamGrad& pg : result) {
      auto writer = last_writer.find(pg.grad);
      if (writer == last_writer.end()) continue;
      proto::OpDesc* op = block_.desc()->mutable_ops(writer->second);
      Names role_var = {pg.param, pg.grad};
      const Names existing = Op(op).AttrOr<Names>(kOpRoleVarAttr, {});
      role_var.insert(role_var.end(), existing.begin(), existing.end());
      OpEditor(op).SetAttr(kOpRoleVarAttr, role_var);
    }
    return result;
  }

  ProgramBuilder& program_;
  BlockBuilder& block_;
  const std::string& loss_;
  const BackwardOptions& options_;

  proto::VarDesc* loss_var_ = nullptr;
  int loss_op_ = -1;
  int num_forward_ops_ = 0;
  NameSet no_grad_;        // forward names no gradient flows into
  NameSet no_grad_grads_;  // the same as gradient names, grown by the pruning
  std::vector<int> path_;  // forward op indices, in op order
  std::unordered_map<std::string, std::string> grad_to_var_;
  std::vector<GradOp> grad_ops_;
  std::vector<int64_t> seed_shape_;
  std::vector<PlannedOp> plan_;
  std::vector<std::vector<NewVar>> new_vars_;  // per planned op
  NameSet declared_;
  std::unordered_map<std::string, std::string> grad_of_;  // forward var -> its gradient var
};

}  // namespace

StatusOr<std::vector<ParamGrad>> AppendBackward(ProgramBuilder& program, const std::string& loss,
                                                const BackwardOptions& options) {
  return Backward(program, loss, options).Run();
}

}  // namespace irm::oldir
