// Gradient merge on a new-IR training program (gradient_merge.h).
#include "newir/auto_parallel/gradient_merge.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "newir/attributes.h"
#include "newir/auto_parallel/op_roles.h"
#include "newir/builder.h"

namespace irm::newir {
namespace {

// Paddle's OpRole bits (python/paddle/base/framework.py's OpRole): Backward 1, Optimize 2.
bool IsOptimize(const Operation& op) {
  const std::optional<int32_t> role = OpRoleOf(op);
  return role && (*role & kOptimizeRole) != 0;
}
bool IsBackward(const Operation& op) {
  const std::optional<int32_t> role = OpRoleOf(op);
  return role && (*role & kBackwardRole) != 0 && (*role & kOptimizeRole) == 0;
}

// The op of `top` that holds `op` (itself, or the op whose region it is in).
const Operation* TopLevel(const Operation* op, const Block& top) {
  while (op != nullptr && op->parent_block() != &top) op = op->parent_op();
  return op;
}

std::string ParameterName(const Operation& op) {
  if (const std::string_view* name = op.attribute("parameter_name").AsString()) {
    return std::string(*name);
  }
  return "";
}

// The name a value carries from the translator (`legacy_var_names`), or "".
std::string RecordedName(const Value& value) {
  const Operation* op = value.defining_op();
  if (op == nullptr) return "";
  const AttributeSpan* names = op->attribute("legacy_var_names").AsArray();
  if (names == nullptr || value.index() >= names->size()) return "";
  const std::string_view* name = (*names)[value.index()].AsString();
  return name == nullptr ? "" : std::string(*name);
}

bool StaticDims(const Type& type) {
  for (int64_t d : type.dims()) {
    if (d < 0) return false;
  }
  return true;
}

Status Invalid(const Operation& op, std::string var, std::string message) {
  Location location = LocationOf(op);
  location.var = std::move(var);
  return Status(StatusCode::kInvalid, std::move(location), std::move(message));
}

// One gradient the optimizer reads and its buffer.
struct Gradient {
  Value* grad = nullptr;
  Operation* producer = nullptr;
  std::string buffer_name;
  Value* merged = nullptr;  // the add_ result: the buffer after this step's gradient
};

class Merger {
 public:
  Merger(Program& main, const GradientMergeOptions& options)
      : top_(main.block()), options_(options) {}

  StatusOr<GradientMergeResult> Run() {
    IRM_RETURN_IF_ERROR(Collect());
    Rewrite();
    GradientMergeResult result;
    for (const Gradient& g : grads_) result.buffers.push_back(g.buffer_name);
    result.optimizer_ops = optimizer_.size();
    return result;
  }

 private:
  // Everything that can fail, before anything changes.
  Status Collect() {
    std::set<std::string> declared;
    for (Operation* op : top_.ops()) {
      if (op->name() == "builtin.parameter") declared.insert(ParameterName(*op));
      if (IsOptimize(*op)) moved_.insert(op);
    }
    // An op without a role that only the optimizer reads — the communication the reshard
    // lowering puts before an optimizer op, the data-parallel all-reduce of a gradient — is
    // optimize-role as Paddle's partition and reshard passes make it: they create a reshard under
    // its consumer's role (static/pir_pass.py reshard_single_value, apply_reshard_pass:
    // pir_op_role_guard(op.op_role)). It moves into the pd_op.if with the optimizer and runs once
    // per update, on the merged buffer (the all-reduce after accumulation).
    const std::vector<Operation*> ops = top_.ops();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Operation* op = *it;
      if (moved_.count(op) != 0 || OpRoleOf(*op) || op->num_results() == 0) continue;
      const std::string_view name = op->name();
      if (name == "builtin.parameter" || name == "pd_op.data" || name == "pd_op.fetch") continue;
      bool only_optimizer = true;
      bool used = false;
      for (Value* result : op->results()) {
        for (OpOperand* use : result->uses()) {
          used = true;
          only_optimizer = only_optimizer && moved_.count(TopLevel(use->owner(), top_)) != 0;
        }
      }
      if (used && only_optimizer) moved_.insert(op);
    }
    for (Operation* op : top_.ops()) {
      if (moved_.count(op) != 0) optimizer_.push_back(op);
    }
    if (optimizer_.empty()) {
      Location location;
      location.detail = "the top block";
      return Status(StatusCode::kInvalid, std::move(location),
                    "gradient merge needs the optimizer: no op has the optimize role (op_role 2)");
    }
    if (declared.count(kGradientMergeStepName) != 0) {
      return Invalid(*optimizer_.front(), kGradientMergeStepName,
                     "the program already declares the gradient-merge step counter: the pass "
                     "was applied before");
    }
    std::map<const Value*, size_t> seen;
    for (Operation* op : optimizer_) {
      for (size_t i = 0; i < op->num_operands(); ++i) {
        Value* v = op->operand(i);
        if (v == nullptr || !v->IsOpResult() || seen.count(v) != 0) continue;
        Operation* producer = v->defining_op();
        if (producer->parent_block() != &top_ || !IsBackward(*producer)) continue;
        if (v->type().kind() != TypeKind::kDenseTensor || !v->type().dtype().IsFloat()) continue;
        Gradient g{.grad = v,
                   .producer = producer,
                   .buffer_name = BufferName(OptimizerReading(*op), *v),
                   .merged = nullptr};
        if (!StaticDims(v->type())) {
          return Invalid(*producer, RecordedName(*v),
                         "a gradient of dynamic dims cannot have a merge buffer");
        }
        if (declared.count(g.buffer_name) != 0) {
          return Invalid(*op, g.buffer_name,
                         "the program already declares this merge buffer: the pass was applied "
                         "before");
        }
        seen.emplace(v, grads_.size());
        grads_.push_back(std::move(g));
      }
    }
    // What the moved communication computes from a gradient (its all-reduce) stands for that
    // gradient's buffer: the 1/k scale goes on it, after the communication, as Paddle's
    // `_append_scale_op_after_comm` puts it.
    for (Operation* op : optimizer_) {
      if (IsOptimize(*op)) continue;
      for (size_t i = 0; i < op->num_operands(); ++i) {
        const Value* v = op->operand(i);
        std::optional<size_t> source;
        if (auto grad = seen.find(v); grad != seen.end()) source = grad->second;
        if (auto derived = derived_.find(v); derived != derived_.end()) source = derived->second;
        if (!source) continue;
        for (Value* result : op->results()) derived_.emplace(result, *source);
        break;
      }
    }
    if (grads_.empty()) {
      return Invalid(*optimizer_.front(), "",
                     "no optimizer op reads a gradient (a value of a backward-role op)");
    }
    // The pd_op.if has no results: what the optimizer makes must stay inside it.
    if (options_.fault != GradientMergeFault::kDropIf) {
      for (Operation* op : optimizer_) {
        for (Value* result : op->results()) {
          for (OpOperand* use : result->uses()) {
            const Operation* user = TopLevel(use->owner(), top_);
            if (user != nullptr && moved_.count(user) == 0) {
              return Invalid(*user, RecordedName(*result),
                             fmt::format("reads a result of the optimizer op {}, which moves into "
                                         "the gradient-merge pd_op.if",
                                         LocationOf(*op).op_type));
            }
          }
        }
      }
    }
    return Status::Ok();
  }

  // The optimize-role op at the end of the moved chain that starts at `op` (itself when it is
  // one): what names a gradient that reaches the optimizer through communication.
  const Operation& OptimizerReading(const Operation& op) const {
    const Operation* at = &op;
    for (int hops = 0; hops < 16 && !IsOptimize(*at) && at->num_results() > 0; ++hops) {
      const Operation* next = nullptr;
      for (OpOperand* use : at->result(0)->uses()) {
        next = TopLevel(use->owner(), top_);
        if (next != nullptr) break;
      }
      if (next == nullptr) break;
      at = next;
    }
    return *at;
  }

  // `<param>@GRAD@MERGE`, `<param>` the parameter the optimizer op updates (operand 0 of
  // Paddle's optimizer ops), else the gradient's recorded name without `@GRAD`.
  std::string BufferName(const Operation& optimizer, const Value& grad) const {
    std::string param;
    if (optimizer.num_operands() > 0 && optimizer.operand(0) != nullptr &&
        optimizer.operand(0)->defining_op() != nullptr &&
        optimizer.operand(0)->defining_op()->name() == "builtin.parameter") {
      param = ParameterName(*optimizer.operand(0)->defining_op());
    }
    if (param.empty()) {
      param = RecordedName(grad);
      if (const size_t at = param.find("@GRAD"); at != std::string::npos) param.resize(at);
    }
    if (param.empty()) param = fmt::format("grad_{}", grads_.size());
    return param + kGradientMergeBufferSuffix;
  }

  Value* Parameter(const std::string& name, Type type) {
    return builder_
        .Create("builtin.parameter", {}, {std::move(type)},
                {{"parameter_name", Attribute::String(name)},
                 {"persistable", Attribute::Array({Attribute::Bool(true)})},
                 {"stop_gradient", Attribute::Array({Attribute::Bool(true)})}})
        ->result(0);
  }

  Value* Full(const std::vector<int64_t>& shape, double value, Type element, AllocationType place,
              int32_t role) {
    const DataType dtype = DataTypeOfElement(element).value_or(DataType::kFloat32);
    return builder_
        .Create("pd_op.full", {}, {Type::DenseTensor(std::move(element), shape)},
                {{"shape", Attribute::IntArrayFrom(shape)},
                 {"value", Attribute::Double(value)},
                 {"dtype", Attribute::DataTypeAttr(dtype)},
                 {"place", Attribute::PlaceAttr(Place::Of(place))},
                 {"op_role", Attribute::Int32(role)}})
        ->result(0);
  }

  Value* EmptyIntArray() {
    return builder_
        .Create("pd_op.full_int_array", {}, {Type::DenseTensor(Type::I64(), {0})},
                {{"value", Attribute::Array({})},
                 {"dtype", Attribute::DataTypeAttr(DataType::kInt64)},
                 {"place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu))},
                 {"op_role", Attribute::Int32(kOptimizeRole)}})
        ->result(0);
  }

  // scale_(buffer, 1/k) at the insertion point (Paddle's `_insert_scale_op_after`).
  Value* Scale(Value* buffer) {
    const double k = options_.fault == GradientMergeFault::kScaleByKPlusOne
                         ? static_cast<double>(options_.k_steps + 1)
                         : static_cast<double>(options_.k_steps);
    Value* factor = Full({1}, 1.0 / k, Type::F32(), AllocationType::kCpu, kOptimizeRole);
    return builder_
        .Create("pd_op.scale_", {buffer, factor}, {buffer->type()},
                {{"bias", Attribute::Float(0.0f)},
                 {"bias_after_scale", Attribute::Bool(false)},
                 {"op_role", Attribute::Int32(kOptimizeRole)}})
        ->result(0);
  }

  void Rewrite() {
    // The buffers and the counter join the program's parameters.
    SetInsertionPointAfterParameters(builder_, top_);
    std::vector<Value*> buffers;
    for (const Gradient& g : grads_) buffers.push_back(Parameter(g.buffer_name, g.grad->type()));
    Value* step = Parameter(kGradientMergeStepName, Type::DenseTensor(Type::I32(), {1}));

    // merge += grad right after the gradient's producer ("a = a + b", never "b + a": in place).
    std::map<Operation*, Operation*> last_after;
    for (size_t i = 0; i < grads_.size(); ++i) {
      Gradient& g = grads_[i];
      auto it = last_after.emplace(g.producer, g.producer).first;
      builder_.SetInsertionPointAfter(*it->second);
      AttributeMap attrs = {{"grad_merge_add", Attribute::Bool(true)}};
      if (g.producer->HasAttribute("op_role")) {
        attrs.emplace("op_role", g.producer->attribute("op_role"));
      }
      Operation* add =
          builder_.Create("pd_op.add_", {buffers[i], g.grad}, {g.grad->type()}, std::move(attrs));
      it->second = add;
      g.merged = add->result(0);
      g.grad->ReplaceUsesWithIf(g.merged, [this](const OpOperand& use) {
        return moved_.count(TopLevel(use.owner(), top_)) != 0;
      });
    }

    // The counter, before the optimizer: step = (step + 1) % k; cond = step == 0.
    builder_.SetInsertionPoint(*optimizer_.front());
    const Type counter = Type::DenseTensor(Type::I32(), {1});
    Value* incremented = builder_
                             .Create("pd_op.increment_", {step}, {counter},
                                     {{"value", Attribute::Float(1.0f)},
                                      {"op_role", Attribute::Int32(kBackwardRole)}})
                             ->result(0);
    Value* k = Full({1}, static_cast<double>(options_.k_steps), Type::I32(), AllocationType::kCpu,
                    kBackwardRole);
    Value* wrapped = builder_
                         .Create("pd_op.remainder_", {incremented, k}, {counter},
                                 {{"op_role", Attribute::Int32(kBackwardRole)}})
                         ->result(0);
    Value* zero = Full({1}, 0.0, Type::I32(), AllocationType::kCpu, kBackwardRole);
    Value* cond =
        builder_
            .Create("pd_op.equal", {wrapped, zero}, {Type::DenseTensor(Type::Bool(), {1})},
                    {{"op_role", Attribute::Int32(kBackwardRole)}})
            ->result(0);

    Block* apply = &top_;
    Block* skip = nullptr;
    if (options_.fault != GradientMergeFault::kDropIf) {
      Operation* if_op = builder_.Create("pd_op.if", {cond}, {},
                                         {{"op_role", Attribute::Int32(kOptimizeRole)}}, 2);
      apply = &if_op->region(0).AddBlock();
      skip = &if_op->region(1).AddBlock();
      for (Operation* op : optimizer_) apply->PushBack(top_.Remove(op));
    }

    // 1/k before each adam/sgd op on the buffer it reads (Paddle's _append_scale_op_after_comm:
    // operand 1 of adam/adamw, 2 of sgd); a buffer no such op reads is scaled first
    // (_append_scale_op_before_comm).
    std::map<const Value*, Value*> latest;
    for (const Gradient& g : grads_) latest[g.merged] = g.merged;
    if (options_.avg) {
      std::set<const Value*> scaled;
      for (Operation* op : optimizer_) {
        std::optional<size_t> operand;
        if (op->name().find("adam") != std::string::npos) operand = 1;
        if (op->name().find("sgd") != std::string::npos) operand = 2;
        if (!operand || *operand >= op->num_operands()) continue;
        Value* read = op->operand(*operand);
        if (auto from = derived_.find(read); from != derived_.end()) {
          // The buffer after communication: scaled where the optimizer reads it.
          if (scaled.count(grads_[from->second].merged) != 0) continue;
          builder_.SetInsertionPoint(*op);
          op->SetOperand(*operand, Scale(read));
          scaled.insert(grads_[from->second].merged);
          continue;
        }
        if (latest.count(read) == 0 || scaled.count(read) != 0) continue;
        builder_.SetInsertionPoint(*op);
        Value* scaled_value = Scale(read);
        op->SetOperand(*operand, scaled_value);
        latest[read] = scaled_value;
        scaled.insert(read);
      }
      builder_.SetInsertionPoint(*optimizer_.front());
      for (const Gradient& g : grads_) {
        if (scaled.count(g.merged) != 0) continue;
        Value* scaled_value = Scale(g.merged);
        g.merged->ReplaceUsesWithIf(scaled_value, [this, scaled_value](const OpOperand& use) {
          return use.owner() != scaled_value->defining_op() &&
                 moved_.count(TopLevel(use.owner(), top_)) != 0;
        });
        latest[g.merged] = scaled_value;
      }
    }

    // Zero the buffers after the optimizer (Paddle: set_value_with_tensor_(merge, full([1], 0))).
    if (apply == &top_) {
      builder_.SetInsertionPointAfter(*optimizer_.back());
    } else {
      builder_.SetInsertionPointToEnd(*apply);
    }
    for (const Gradient& g : grads_) {
      Value* buffer = latest[g.merged];
      Value* zeros =
          Full({1}, 0.0, buffer->type().dtype(), AllocationType::kUndefined, kOptimizeRole);
      Value* starts = EmptyIntArray();
      Value* ends = EmptyIntArray();
      Value* steps = EmptyIntArray();
      builder_.Create("pd_op.set_value_with_tensor_", {buffer, zeros, starts, ends, steps},
                      {buffer->type()},
                      {{"axes", Attribute::Array({})},
                       {"decrease_axes", Attribute::Array({})},
                       {"none_axes", Attribute::Array({})},
                       {"op_role", Attribute::Int32(kOptimizeRole)}});
    }
    if (skip != nullptr) {
      builder_.Create("cf.yield", {}, {}, {{"op_role", Attribute::Int32(kOptimizeRole)}});
      builder_.SetInsertionPointToEnd(*skip);
      builder_.Create("cf.yield", {}, {}, {{"op_role", Attribute::Int32(kOptimizeRole)}});
    }
  }

  Block& top_;
  const GradientMergeOptions& options_;
  Builder builder_;
  std::vector<Operation*> optimizer_;
  // Results of moved communication ops computed from a gradient -> that gradient (grads_ index).
  std::map<const Value*, size_t> derived_;
  std::set<const Operation*> moved_;
  std::vector<Gradient> grads_;
};

}  // namespace

void SetInsertionPointAfterParameters(Builder& builder, Block& top) {
  Operation* after_parameters = nullptr;
  for (Operation* op : top.ops()) {
    if (op->name() != "builtin.parameter") break;
    after_parameters = op;
  }
  if (after_parameters != nullptr) {
    builder.SetInsertionPointAfter(*after_parameters);
  } else {
    builder.SetInsertionPointToStart(top);
  }
}

StatusOr<GradientMergeFault> GradientMergeFaultFromName(std::string_view name) {
  if (name.empty() || name == "none") return GradientMergeFault::kNone;
  if (name == "scale-by-k-plus-1") return GradientMergeFault::kScaleByKPlusOne;
  if (name == "drop-if") return GradientMergeFault::kDropIf;
  Location location;
  location.attr = "test-fault";
  return Status(StatusCode::kInvalidArgument, std::move(location),
                fmt::format("unknown gradient-merge fault '{}': expected none, scale-by-k-plus-1 "
                            "or drop-if",
                            name));
}

StatusOr<GradientMergeResult> ApplyGradientMerge(Program& main,
                                                 const GradientMergeOptions& options) {
  if (options.k_steps < 1) {
    Location location;
    location.attr = "k-steps";
    return Status(StatusCode::kInvalidArgument, std::move(location),
                  fmt::format("gradient merge needs k_steps >= 1, got {}", options.k_steps));
  }
  return Merger(main, options).Run();
}

Status AddGradientMergeInitializers(Program& startup, const Program& main) {
  std::set<std::string> set;
  for (Operation* op : startup.block().ops()) {
    if (op->name() == "builtin.set_parameter") set.insert(ParameterName(*op));
  }
  Builder builder(startup.block());
  builder.SetInsertionPointToEnd(startup.block());
  for (Operation* op : main.block().ops()) {
    if (op->name() != "builtin.parameter") continue;
    const std::string name = ParameterName(*op);
    const bool ours = name == kGradientMergeStepName ||
                      (name.size() > std::string_view(kGradientMergeBufferSuffix).size() &&
                       name.ends_with(kGradientMergeBufferSuffix));
    if (!ours || set.count(name) != 0) continue;
    const Type& type = op->result(0)->type();
    const std::optional<DataType> dtype =
        type.kind() == TypeKind::kDenseTensor ? DataTypeOfElement(type.dtype()) : std::nullopt;
    if (!dtype || !StaticDims(type)) {
      return Invalid(*op, name, "a gradient-merge buffer needs a dense tensor of static dims");
    }
    const AllocationType place =
        name == kGradientMergeStepName ? AllocationType::kCpu : AllocationType::kUndefined;
    Value* zeros = builder
                       .Create("pd_op.full", {}, {type},
                               {{"shape", Attribute::IntArrayFrom(type.dims())},
                                {"value", Attribute::Double(0.0)},
                                {"dtype", Attribute::DataTypeAttr(*dtype)},
                                {"place", Attribute::PlaceAttr(Place::Of(place))},
                                {"op_role", Attribute::Int32(0)}})
                       ->result(0);
    builder.Create("builtin.set_parameter", {zeros}, {},
                   {{"parameter_name", Attribute::String(name)}, {"op_role", Attribute::Int32(0)}});
    set.insert(name);
  }
  return Status::Ok();
}

}  // namespace irm::newir
