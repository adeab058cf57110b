// The PIR pipeline split (pipeline_split.h): place every top-level op of the stage program in its
// job program, then clone the ops program by program with the crossing values turned into
// pd_op.data / builtin.shadow_output pairs.
#include "newir/auto_parallel/pipeline_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "newir/auto_parallel/op_roles.h"
#include "newir/builder.h"
#include "newir/operation.h"
#include "newir/value.h"

namespace irm::newir {
namespace {

namespace sched = irm::schedules;

// Where an op of the stage program goes.
enum class Placement {
  kJob,     // the job program of its role and chunk
  kSource,  // copied into every program that reads it
  kFetch,   // the first program writing or reading its operand
  kExpose,  // a shadow_output without op_role: its operand's program
};

std::optional<int> IntAttr(const Operation& op, std::string_view name) {
  const Attribute attr = op.attribute(name);
  if (attr.IsNull()) return std::nullopt;
  if (const int32_t* v = attr.AsInt32()) return *v;
  if (const int64_t* v = attr.AsInt64()) return static_cast<int>(*v);
  return std::nullopt;
}

bool IsP2pSend(const Operation& op) {
  return op.name() == "pd_op.p_send" || op.name() == "pd_op.send_v2";
}
bool IsP2pRecv(const Operation& op) {
  return op.name() == "pd_op.p_recv" || op.name() == "pd_op.recv_v2";
}

Placement PlacementOf(const Operation& op) {
  const bool has_role = op.HasAttribute("op_role");
  if (op.name() == "builtin.parameter") return Placement::kSource;
  if (op.name() == "pd_op.data" && !has_role) return Placement::kSource;
  if (op.name() == "pd_op.fetch") return Placement::kFetch;
  if (op.name() == "builtin.shadow_output" && !has_role) return Placement::kExpose;
  return Placement::kJob;
}

// The legacy var name the translator recorded for `value`; empty when none.
std::string LegacyName(const Value* value) {
  if (const Operation* op = value->defining_op()) {
    const Attribute names = op->attribute("legacy_var_names");
    if (const AttributeSpan* list = names.IsNull() ? nullptr : names.AsArray()) {
      if (value->index() < list->size()) {
        if (const std::string_view* name = (*list)[value->index()].AsString()) {
          return std::string(*name);
        }
      }
    }
    return "";
  }
  const Attribute name = value->attributes().contains("legacy_var_name")
                             ? value->attributes().at("legacy_var_name")
                             : Attribute();
  if (const std::string_view* text = name.IsNull() ? nullptr : name.AsString()) {
    return std::string(*text);
  }
  return "";
}

// The values `op` (or an op nested in it) reads that are defined outside it, in operand order.
std::vector<Value*> ExternalReads(const Operation& op) {
  std::vector<Value*> reads;
  std::unordered_set<const Value*> inside;
  std::unordered_set<const Value*> seen;
  const_cast<Operation&>(op).Walk([&](Operation* nested) {
    for (size_t r = 0; r < nested->num_regions(); ++r) {
      Region& region = nested->region(r);
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        Block& block = region.block(b);
        for (size_t a = 0; a < block.num_arguments(); ++a) inside.insert(block.argument(a));
        for (size_t a = 0; a < block.num_kwargs(); ++a) inside.insert(block.kwarg(a));
      }
    }
    if (nested != &op) {
      for (Value* result : nested->results()) inside.insert(result);
    }
  });
  const_cast<Operation&>(op).Walk([&](Operation* nested) {
    for (size_t i = 0; i < nested->num_operands(); ++i) {
      Value* v = nested->operand(i);
      if (v == nullptr || inside.count(v) != 0 || !seen.insert(v).second) continue;
      reads.push_back(v);
    }
  });
  return reads;
}

// The job types in Paddle's program order (pipeline_split.h).
std::vector<std::string> JobTypes(sched::PaddleMode mode, int vpp, bool recv_send) {
  std::vector<std::string> types;
  if (mode == sched::PaddleMode::kZbh1) {
    // pass_utils.py _program_for_zero_bubble: backward is the union of backward_b and backward_w.
    return {"forward", "backward", "backward_b", "backward_w", "optimizer"};
  }
  if (mode == sched::PaddleMode::kVpp) {
    for (int c = 0; c < vpp; ++c) {
      if (recv_send) types.push_back(fmt::format("recv_forward{}", c));
      types.push_back(fmt::format("forward{}", c));
    }
    for (int c = vpp - 1; c >= 0; --c) {
      types.push_back(fmt::format("backward{}", c));
      if (recv_send) types.push_back(fmt::format("send_backward{}", c));
    }
  } else if (recv_send) {
    types = {"recv_forward", "forward", "backward", "send_backward"};
  } else {
    types = {"forward", "backward"};
  }
  types.push_back("optimizer");
  return types;
}

// One job program being built.
struct JobBuild {
  Program program;
  IrMapping mapping;
  Operation* prologue_end = nullptr;  // the last source or input placed at its start
  // Values of the stage program this program hands on by name, with the name.
  std::vector<std::pair<const Value*, std::string>> exposed;
  std::unordered_set<const Value*> exposed_values;
};

class Splitter {
 public:
  // `types` in program order; `weight_ops` (ZBH1): the backward ops of backward_w, every other
  // backward op going to backward_b; null: backward ops go to backward<c>.
  Splitter(const Program& stage, const PipelineSplitOptions& options,
           std::vector<std::string> types, bool chunked, bool recv_send,
           const std::unordered_set<const Operation*>* weight_ops = nullptr)
      : stage_(stage),
        options_(options),
        types_(std::move(types)),
        chunked_(chunked),
        recv_send_(recv_send),
        weight_ops_(weight_ops),
        jobs_(types_.size()) {
    for (size_t t = 0; t < types_.size(); ++t) index_of_type_[types_[t]] = static_cast<int>(t);
  }

  Status PlaceOps() {
    const std::vector<Operation*> ops = stage_.block().ops();
    for (Operation* op : ops) {
      if (op->name() != "builtin.parameter" && op->name() != "builtin.set_parameter") continue;
      const Attribute name = op->attribute("parameter_name");
      if (name.IsNull() || name.AsString() == nullptr) continue;
      const std::string text(*name.AsString());
      persistable_.insert(text);
      if (op->name() == "builtin.parameter") parameter_op_.emplace(text, op);
    }
    int chunk = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      position_[&op] = i;
      const Placement placement = PlacementOf(op);
      if (placement != Placement::kJob) continue;
      const std::optional<int> role = IntAttr(op, "op_role");
      if (!role) {
        return Status(StatusCode::kInvalid, At(op, i),
                      "the op has no integer op_role: the pipeline split places ops by role "
                      "(Paddle completes a missing role from the neighbours, "
                      "pass_utils.py forward_complete_op_role; give every op its role)");
      }
      if (const std::optional<int> c = IntAttr(op, "chunk_id")) chunk = *c;
      if (chunk < 0 || chunk >= options_.vpp_degree) {
        return Status(StatusCode::kInvalid, At(op, i),
                      fmt::format("chunk_id {} outside the stage's {} chunk{}", chunk,
                                  options_.vpp_degree, options_.vpp_degree == 1 ? "" : "s"));
      }
      const std::string suffix = chunked_ ? std::to_string(chunk) : "";
      std::string type;
      if ((*role & kOptimizeRole) != 0) {
        type = "optimizer";
      } else if ((*role & kBackwardRole) != 0 && weight_ops_ != nullptr) {
        type = weight_ops_->count(&op) != 0 ? "backward_w" : "backward_b";
      } else if ((*role & kBackwardRole) != 0) {
        type = (recv_send_ && IsP2pSend(op) ? "send_backward" : "backward") + suffix;
      } else if (op.name() == "pd_op.data") {
        type = chunked_ ? "forward0" : "forward";
      } else {
        type = (recv_send_ && IsP2pRecv(op) ? "recv_forward" : "forward") + suffix;
      }
      job_of_[&op] = index_of_type_.at(type);
    }
    // Fetches: the first program (in program order) that writes or reads the operand.
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      const Placement placement = PlacementOf(op);
      if (placement != Placement::kFetch && placement != Placement::kExpose) continue;
      if (placement == Placement::kFetch && !place_fetches_) continue;
      Value* v = op.num_operands() == 1 ? op.operand(0) : nullptr;
      if (v == nullptr) {
        return Status(StatusCode::kInvalid, At(op, i), "expected one operand");
      }
      std::set<int> users;
      if (auto found = job_of_.find(v->defining_op()); found != job_of_.end()) {
        users.insert(found->second);
      }
      if (placement == Placement::kFetch || users.empty()) {
        for (size_t j = 0; j < i; ++j) {
          auto found = job_of_.find(ops[j]);
          if (found == job_of_.end()) continue;
          const std::vector<Value*> reads = ExternalReads(*ops[j]);
          if (std::find(reads.begin(), reads.end(), v) != reads.end()) users.insert(found->second);
        }
      }
      if (users.empty()) {
        return Status(StatusCode::kInvalid, At(op, i),
                      "no job program writes or reads the value this op takes");
      }
      job_of_[&op] = *users.begin();
    }
    return Status::Ok();
  }

  Status Build() {
    const std::vector<Operation*> ops = stage_.block().ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation& op = *ops[i];
      auto found = job_of_.find(&op);
      if (found == job_of_.end()) continue;  // a source: copied where read
      JobBuild& job = jobs_[static_cast<size_t>(found->second)];
      if (PlacementOf(op) == Placement::kExpose) {
        IRM_RETURN_IF_ERROR(MakeAvailable(job, found->second, op.operand(0), op));
        const Attribute name = op.attribute("output_name");
        const std::string_view* text = name.IsNull() ? nullptr : name.AsString();
        if (text == nullptr) {
          return Status(StatusCode::kInvalid, At(op, i), "needs a string 'output_name'");
        }
        Expose(job, op.operand(0), std::string(*text));
        continue;
      }
      for (Value* v : ExternalReads(op)) {
        IRM_RETURN_IF_ERROR(MakeAvailable(job, found->second, v, op));
      }
      Builder builder(job.program.block());
      builder.Clone(op, job.mapping);
    }
    // The run's fetches: the final value of each name a program writes.
    for (const std::string& name : options_.fetches) {
      for (size_t t = 0; t < jobs_.size(); ++t) {
        const Value* last = nullptr;
        for (Operation* op : ops) {
          auto found = job_of_.find(op);
          if (found == job_of_.end() || found->second != static_cast<int>(t)) continue;
          if (PlacementOf(*op) != Placement::kJob) continue;
          for (Value* result : op->results()) {
            if (LegacyName(result) == name) last = result;
          }
        }
        if (last != nullptr) Expose(jobs_[t], last, name);
      }
    }
    for (JobBuild& job : jobs_) {
      // In the order the program writes them, as the translator exposes a job's outputs.
      std::stable_sort(job.exposed.begin(), job.exposed.end(), [&](const auto& a, const auto& b) {
        return WritePosition(a.first) < WritePosition(b.first);
      });
      Builder builder(job.program.block());
      for (const auto& [value, name] : job.exposed) {
        builder.Create("builtin.shadow_output", {job.mapping.Lookup(const_cast<Value*>(value))}, {},
                       {{"output_name", Attribute::String(name)}});
      }
    }
    return Status::Ok();
  }

  // ZBH1's whole backward: a fetch goes to backward_b / backward_w, never there.
  void LeaveFetchesOut() { place_fetches_ = false; }

  PipelineJobPrograms Take() {
    PipelineJobPrograms out;
    out.job_types = types_;
    for (size_t t = 0; t < types_.size(); ++t) {
      out.programs.emplace(types_[t], std::move(jobs_[t].program));
    }
    return out;
  }

 private:
  Location At(const Operation& op, size_t index) const {
    return Location::File(options_.file).InBlock(0).AtOp(static_cast<int>(index), op.name());
  }

  size_t WritePosition(const Value* v) const {
    auto found = position_.find(v->defining_op());
    return found == position_.end() ? 0 : found->second;
  }

  void Expose(JobBuild& job, const Value* v, std::string name) {
    if (!job.exposed_values.insert(v).second) return;
    // A name already exposed here by another value: the later write wins, as in the scope.
    job.exposed.erase(std::remove_if(job.exposed.begin(), job.exposed.end(),
                                     [&](const auto& e) { return e.second == name; }),
                      job.exposed.end());
    job.exposed.emplace_back(v, std::move(name));
  }

  // Places a copy of a source op, or an input by name, at the start of `job` after the earlier
  // ones (so they stay in the order of first use).
  Operation* InsertAtPrologue(JobBuild& job, std::unique_ptr<Operation> made) {
    Builder builder(job.program.block());
    if (job.prologue_end == nullptr) {
      builder.SetInsertionPointToStart(job.program.block());
    } else {
      builder.SetInsertionPointAfter(*job.prologue_end);
    }
    job.prologue_end = builder.Insert(std::move(made));
    return job.prologue_end;
  }

  // Makes the stage value `v` readable in `job` (index `job_index`) by `reader`.
  Status MakeAvailable(JobBuild& job, int job_index, Value* v, const Operation& reader) {
    if (job.mapping.Contains(v)) return Status::Ok();
    Operation* producer = v->defining_op();
    if (producer == nullptr) {
      // A top-block keyword argument (Paddle's block.add_kwarg input): the same kwarg here.
      if (v->kind() != Value::Kind::kBlockKwarg) {
        return Status(StatusCode::kInvalid, At(reader, position_.at(&reader)),
                      "reads a block argument the pipeline split cannot carry");
      }
      Value* kwarg = job.program.block().FindKwarg(v->kwarg_name());
      if (kwarg == nullptr) {
        IRM_ASSIGN_OR_RETURN(kwarg, job.program.block().AddKwarg(v->kwarg_name(), v->type()));
        kwarg->CopyAttributesFrom(*v);
      }
      job.mapping.Map(v, kwarg);
      return Status::Ok();
    }
    if (PlacementOf(*producer) == Placement::kSource) {
      InsertAtPrologue(job, producer->Clone(job.mapping));
      return Status::Ok();
    }
    auto found = job_of_.find(producer);
    if (found == job_of_.end() || found->second == job_index) {
      return Status(StatusCode::kInternal, At(reader, position_.at(&reader)),
                    "reads a value of its own program before it is made");
    }
    // A persistable var (a parameter, an accumulation buffer an op updates in place or
    // builtin.set_parameter stores) lives in the scope every job shares: the reader reads it as a
    // parameter, as Paddle's split makes such values persistable (set_persistable_value).
    if (const std::string legacy = LegacyName(v); persistable_.count(legacy) != 0) {
      std::unique_ptr<Operation> parameter;
      if (auto source = parameter_op_.find(legacy); source != parameter_op_.end()) {
        IrMapping fresh;
        parameter = source->second->Clone(fresh);
      } else {
        const Attribute name_attr = Attribute::String(legacy);
        parameter = Operation::Create(
            "builtin.parameter", {}, {v->type()},
            {{"parameter_name", name_attr},
             {"legacy_var_names", Attribute::ArrayFrom(std::span(&name_attr, 1))}},
            0, OpRegistry::Global().Lookup("builtin.parameter"));
      }
      Operation* read = InsertAtPrologue(job, std::move(parameter));
      job.mapping.Map(v, read->result(0));
      return Status::Ok();
    }
    const Type& type = v->type();
    if (type.kind() != TypeKind::kDenseTensor) {
      return Status(StatusCode::kInvalid, At(*producer, position_.at(producer)),
                    fmt::format("a result of this op is read by job program '{}' but is no dense "
                                "tensor: only tensors cross job programs by name",
                                types_[static_cast<size_t>(job_index)]));
    }
    const std::string name = CrossingName(v);
    const Attribute name_attr = Attribute::String(name);
    const Attribute no = Attribute::Bool(false);
    Attribute stop_gradient = Attribute::Bool(false);
    if (const Attribute flags = producer->attribute("stop_gradient"); !flags.IsNull()) {
      const AttributeSpan* list = flags.AsArray();
      if (list != nullptr && v->index() < list->size()) stop_gradient = (*list)[v->index()];
    }
    AttributeMap attrs = {
        {"name", name_attr},
        {"shape", Attribute::IntArrayAttr(type.dims())},
        {"dtype",
         Attribute::DataTypeAttr(DataTypeOfElement(type.dtype()).value_or(DataType::kUndefined))},
        {"place", Attribute::PlaceAttr(Place{})},
        {"legacy_var_names", Attribute::ArrayFrom(std::span(&name_attr, 1))},
        {"stop_gradient", Attribute::ArrayFrom(std::span(&stop_gradient, 1))},
        {"persistable", Attribute::ArrayFrom(std::span(&no, 1))},
    };
    std::unique_ptr<Operation> data = Operation::Create(
        "pd_op.data", {}, {type}, std::move(attrs), 0, OpRegistry::Global().Lookup("pd_op.data"));
    Operation* input = InsertAtPrologue(job, std::move(data));
    job.mapping.Map(v, input->result(0));
    Expose(jobs_[static_cast<size_t>(found->second)], v, name);
    return Status::Ok();
  }

  // The name a value crossing programs travels under (pipeline_split.h).
  std::string CrossingName(const Value* v) {
    if (auto found = crossing_name_.find(v); found != crossing_name_.end()) return found->second;
    std::string name = LegacyName(v);
    if (name.empty() || !taken_names_.insert(name).second) {
      const Operation* producer = v->defining_op();
      name = fmt::format("var_{}_{}_{}", position_.at(producer), producer->name(), v->index());
      taken_names_.insert(name);
    }
    crossing_name_[v] = name;
    return name;
  }

  const Program& stage_;
  const PipelineSplitOptions& options_;
  std::vector<std::string> types_;
  bool chunked_;
  bool recv_send_;
  const std::unordered_set<const Operation*>* weight_ops_;
  bool place_fetches_ = true;
  std::vector<JobBuild> jobs_;
  std::map<std::string, int> index_of_type_;
  std::unordered_map<const Operation*, int> job_of_;
  std::unordered_map<const Operation*, size_t> position_;
  std::unordered_map<const Value*, std::string> crossing_name_;
  std::set<std::string> taken_names_;
  // The names of the persistable vars (builtin.parameter and builtin.set_parameter) and the
  // parameter op of each one the program reads.
  std::set<std::string> persistable_;
  std::map<std::string, const Operation*> parameter_op_;
};

// ---- zero bubble (ZBH1)

// A copy of the stage's top block (kwargs and ops), which the matmul split rewrites.
StatusOr<Program> CloneStage(const Program& stage) {
  Program copy;
  IrMapping mapping;
  Block& from = stage.block();
  for (size_t k = 0; k < from.num_kwargs(); ++k) {
    Value* kwarg = from.kwarg(k);
    IRM_ASSIGN_OR_RETURN(Value * made, copy.block().AddKwarg(kwarg->kwarg_name(), kwarg->type()));
    made->CopyAttributesFrom(*kwarg);
    mapping.Map(kwarg, made);
  }
  Builder builder(copy.block());
  for (const Operation& op : from) builder.Clone(op, mapping);
  return copy;
}

bool BoolAttr(const Operation& op, std::string_view name) {
  const Attribute attr = op.attribute(name);
  const bool* v = attr.IsNull() ? nullptr : attr.AsBool();
  return v != nullptr && *v;
}

// The attributes every op the split makes of a matmul_grad keeps from it (op_role, chunk_id),
// with the legacy var names of its results.
AttributeMap SplitOpAttributes(const Operation& grad, std::vector<std::string> names) {
  AttributeMap attrs;
  for (const char* kept : {"op_role", "chunk_id", "op_namescope"}) {
    if (const Attribute a = grad.attribute(kept); !a.IsNull()) attrs.emplace(kept, a);
  }
  std::vector<Attribute> list;
  std::vector<Attribute> no;
  for (const std::string& name : names) {
    list.push_back(Attribute::String(name));
    no.push_back(Attribute::Bool(false));
  }
  attrs.emplace("legacy_var_names", Attribute::Array(std::move(list)));
  if (!names.empty() && !names.front().empty()) {
    attrs.emplace("persistable", Attribute::Array(no));
    attrs.emplace("stop_gradient", Attribute::Array(std::move(no)));
  }
  return attrs;
}

// pd_op.full_int_array + pd_op.reshape of `x` to `dims`, as the translator makes a reshape2 (the
// second result, xshape, has no type): the value reshaped, named `name`.
Value* Reshape(Builder& builder, const Operation& grad, Value* x, const std::vector<int64_t>& dims,
               const std::string& name) {
  std::vector<Attribute> items;
  for (int64_t d : dims) items.push_back(Attribute::Int64(d));
  AttributeMap shape_attrs = SplitOpAttributes(grad, {""});
  shape_attrs.emplace("value", Attribute::Array(std::move(items)));
  shape_attrs.emplace("dtype", Attribute::DataTypeAttr(DataType::kInt64));
  shape_attrs.emplace("place", Attribute::PlaceAttr(Place::Of(AllocationType::kCpu)));
  Operation* shape = builder.Create(
      "pd_op.full_int_array", {},
      {Type::DenseTensor(Type::I64(), {static_cast<int64_t>(dims.size())})}, shape_attrs);
  builder.SetInsertionPointAfter(*shape);
  AttributeMap attrs = SplitOpAttributes(grad, {name, ""});
  Operation* reshape =
      builder.Create("pd_op.reshape", {x, shape->result(0)},
                     {Type::DenseTensor(x->type().dtype(), dims), Type()}, std::move(attrs));
  builder.SetInsertionPointAfter(*reshape);
  return reshape->result(0);
}

// The first two dims folded into one, -1 when either is dynamic (MatmulGradKernel's
// FoldInitDims).
std::vector<int64_t> FoldFirstTwo(const std::vector<int64_t>& dims) {
  std::vector<int64_t> folded = {dims[0] < 0 || dims[1] < 0 ? -1 : dims[0] * dims[1]};
  folded.insert(folded.end(), dims.begin() + 2, dims.end());
  return folded;
}

// Paddle's _split_matmul_grad_ops_to_matmul (pipeline_zero_bubble.py) with pass_utils.py's
// _pir_split_matmul_grad_to_matmul: every pd_op.matmul_grad with transpose_x and transpose_y
// false becomes, right where it was,
//   x_grad = pd_op.matmul(out_grad, y, transpose_y=true)                   (when x_grad is used)
//   y_grad = reshape(pd_op.matmul(reshape(x), reshape(out_grad), transpose_x=true), y_grad dims)
// the reshapes folding the first two dims of rank > 2 operands into one GEMM as MatmulGradKernel
// does; for rank 2 operands the plain pd_op.matmul(x, out_grad, transpose_x=true), as the legacy
// split (oldir/passes/pipeline_zero_bubble.h) writes it — Paddle's fold would make them rank 1.
// The new values keep the legacy names (`X@reshape.out`, `Out@GRAD@reshape.out`,
// `Y@GRAD@reshape.out`) the legacy split gives its vars, so both sides name the same values.
// kInvalid at the op when x and out_grad differ in rank, or above rank 2 in their first two dims
// (Paddle asserts both).
Status SplitMatmulGrads(Program& program, const std::string& file) {
  std::vector<Operation*> grads;
  size_t index = 0;
  std::unordered_map<const Operation*, size_t> position;
  for (Operation& op : program.block()) {
    position[&op] = index++;
    if (op.name() == "pd_op.matmul_grad" && !BoolAttr(op, "transpose_x") &&
        !BoolAttr(op, "transpose_y") && op.num_operands() == 3 && op.num_results() == 2) {
      grads.push_back(&op);
    }
  }
  for (Operation* grad : grads) {
    const Location at =
        Location::File(file).InBlock(0).AtOp(static_cast<int>(position.at(grad)), grad->name());
    Value* x = grad->operand(0);
    Value* y = grad->operand(1);
    Value* out_grad = grad->operand(2);
    Value* x_grad = grad->result(0);
    Value* y_grad = grad->result(1);
    const std::vector<int64_t>& x_dims = x->type().dims();
    const std::vector<int64_t>& out_dims = out_grad->type().dims();
    if (x_dims.size() != out_dims.size()) {
      return Status(StatusCode::kInvalid, at,
                    fmt::format("x has rank {} and out_grad rank {}: the zero-bubble split needs "
                                "equal ranks",
                                x_dims.size(), out_dims.size()));
    }
    if (x_dims.size() > 2 && (x_dims[0] != out_dims[0] || x_dims[1] != out_dims[1])) {
      return Status(StatusCode::kInvalid, at,
                    "x and out_grad differ in their first two dims: the zero-bubble split folds "
                    "them into one");
    }
    Builder builder(program.block());
    builder.SetInsertionPointAfter(*grad);
    const std::string x_grad_name = LegacyName(x_grad);
    if (!x_grad->use_empty() || !x_grad_name.empty()) {
      AttributeMap attrs = SplitOpAttributes(*grad, {x_grad_name});
      attrs.emplace("transpose_x", Attribute::Bool(false));
      attrs.emplace("transpose_y", Attribute::Bool(true));
      Operation* matmul =
          builder.Create("pd_op.matmul", {out_grad, y}, {x_grad->type()}, std::move(attrs));
      builder.SetInsertionPointAfter(*matmul);
      x_grad->ReplaceAllUsesWith(matmul->result(0));
    }
    const std::string y_grad_name = LegacyName(y_grad);
    if (!y_grad->use_empty() || !y_grad_name.empty()) {
      const bool fold = x_dims.size() > 2;
      Value* lhs =
          fold ? Reshape(builder, *grad, x, FoldFirstTwo(x_dims), LegacyName(x) + "@reshape.out")
               : x;
      Value* rhs = fold ? Reshape(builder, *grad, out_grad, FoldFirstTwo(out_dims),
                                  LegacyName(out_grad) + "@reshape.out")
                        : out_grad;
      AttributeMap attrs =
          SplitOpAttributes(*grad, {fold ? y_grad_name + "@reshape.out" : y_grad_name});
      attrs.emplace("transpose_x", Attribute::Bool(true));
      attrs.emplace("transpose_y", Attribute::Bool(false));
      Operation* matmul =
          builder.Create("pd_op.matmul", {lhs, rhs}, {y_grad->type()}, std::move(attrs));
      builder.SetInsertionPointAfter(*matmul);
      Value* made =
          fold ? Reshape(builder, *grad, matmul->result(0), y_grad->type().dims(), y_grad_name)
               : matmul->result(0);
      y_grad->ReplaceAllUsesWith(made);
    }
    program.block().Remove(grad);
  }
  return Status::Ok();
}

// The top-level op holding `op` (itself at the top).
const Operation* TopLevel(const Operation* op, const Block& top) {
  while (op != nullptr && op->parent_block() != &top) op = op->parent_op();
  return op;
}

// The backward ops of backward_w, by pass_utils.py's _get_backward_op_type on the legacy var
// names the translator records (the legacy split's rule, oldir/passes/pipeline_zero_bubble.h
// BackwardParts): W for the run reshape, reshape, matmul, reshape, add_ (full_int_array shape
// operands aside: Paddle's PIR pattern of _pir_get_backward_op_type) whose matmul writes a
// parameter's gradient, and for an op whose named results are all `<param>@...`; B otherwise,
// and for an op without named results. Paddle's PIR rule keys on gradient-merge adds instead (W:
// the add, and an op whose results only such adds read); in a pipeline every parameter gradient
// ends in the accumulation's add_, so both mark the same ops. An op whose results carry no legacy
// name (a shape the translator made, a builtin.combine) goes with the op using it, as the legacy
// op it was made for.
std::unordered_set<const Operation*> WeightOps(const Program& program) {
  const Block& top = program.block();
  std::set<std::string> params;
  for (const Operation& op : top) {
    if (op.name() != "builtin.parameter") continue;
    const Attribute name = op.attribute("parameter_name");
    if (name.IsNull() || name.AsString() == nullptr) continue;
    if (name.AsString()->find('@') == std::string_view::npos) {
      params.insert(std::string(*name.AsString()));
    }
  }
  const auto is_param_grad = [&](const std::string& name) {
    return params.count(name.substr(0, name.find('@'))) != 0;
  };
  const auto named_results = [](const Operation& op) {
    std::vector<std::string> names;
    for (const Value* result : op.results()) {
      if (std::string name = LegacyName(result); !name.empty()) names.push_back(std::move(name));
    }
    return names;
  };
  const auto backward = [](const Operation& op) {
    const std::optional<int> role = IntAttr(op, "op_role");
    return role && (*role & kBackwardRole) != 0 && (*role & kOptimizeRole) == 0;
  };
  // The backward ops with a named result, in order: the ops the legacy rule looks at.
  std::vector<const Operation*> named;
  for (const Operation& op : top) {
    if (backward(op) && !named_results(op).empty()) named.push_back(&op);
  }
  static const char* const kPattern[] = {"pd_op.reshape", "pd_op.reshape", "pd_op.matmul",
                                         "pd_op.reshape", "pd_op.add_"};
  std::unordered_set<const Operation*> weight;
  for (size_t i = 0; i < named.size(); ++i) {
    bool pattern = i + 4 < named.size();
    for (size_t k = 0; pattern && k < 5; ++k) {
      pattern = named[i + k]->name() == kPattern[k] &&
                (k != 2 || is_param_grad(named_results(*named[i + k]).front()));
    }
    if (pattern) {
      for (size_t k = 0; k < 5; ++k) weight.insert(named[i + k]);
      i += 4;
      continue;
    }
    const std::vector<std::string> names = named_results(*named[i]);
    if (std::all_of(names.begin(), names.end(), is_param_grad)) weight.insert(named[i]);
  }
  // Unnamed helpers, last to first, so that a chain of them follows its named user.
  std::vector<const Operation*> ops;
  for (const Operation& op : top) ops.push_back(&op);
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const Operation& op = **it;
    if (!backward(op) || !named_results(op).empty() || op.num_results() == 0) continue;
    for (const Value* result : op.results()) {
      const std::vector<OpOperand*> uses = result->uses();
      if (uses.empty()) continue;
      if (weight.count(TopLevel(uses.front()->owner(), top)) != 0) weight.insert(&op);
      break;
    }
  }
  return weight;
}

// ZBH1's programs (pipeline_split.h): the matmul split on a copy of the stage, then the stage cut
// twice — backward whole, and backward as backward_b / backward_w — forward and optimizer being
// the same in both cuts (the same ops read the same values).
StatusOr<PipelineJobPrograms> SplitZeroBubble(const Program& stage,
                                              const PipelineSplitOptions& options) {
  IRM_ASSIGN_OR_RETURN(Program split, CloneStage(stage));
  IRM_RETURN_IF_ERROR(SplitMatmulGrads(split, options.file));
  const std::unordered_set<const Operation*> weight = WeightOps(split);
  Splitter whole(split, options, {"forward", "backward", "optimizer"}, false, false);
  whole.LeaveFetchesOut();
  IRM_RETURN_IF_ERROR(whole.PlaceOps());
  IRM_RETURN_IF_ERROR(whole.Build());
  Splitter parts(split, options, {"forward", "backward_b", "backward_w", "optimizer"}, false, false,
                 &weight);
  IRM_RETURN_IF_ERROR(parts.PlaceOps());
  IRM_RETURN_IF_ERROR(parts.Build());
  PipelineJobPrograms out = parts.Take();
  PipelineJobPrograms backward = whole.Take();
  out.programs.emplace("backward", std::move(backward.programs.at("backward")));
  out.job_types = JobTypes(sched::PaddleMode::kZbh1, 1, false);
  return out;
}

}  // namespace

StatusOr<PipelineJobPrograms> SplitPipelineProgram(const Program& stage,
                                                   const PipelineSplitOptions& options) {
  const auto at = [&](const char* attr) { return Location::File(options.file).AtAttr(attr); };
  StatusOr<sched::PaddleMode> mode = sched::ParsePaddleMode(options.schedule_mode);
  if (!mode.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), mode.status().message());
  }
  const bool zero_bubble = *mode == sched::PaddleMode::kZbh1;
  if (*mode != sched::PaddleMode::kFThenB && *mode != sched::PaddleMode::k1F1B &&
      *mode != sched::PaddleMode::kVpp && !zero_bubble) {
    // static/pir_pass.py::pipeline_pass: "pipeline scheduler only support FThenB, 1F1B and VPP";
    // ZBH1 is split here too, by the legacy pass's rules (pipeline_split.h).
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"),
                  fmt::format("{} has no PIR form: the PIR pipeline split supports FThenB, 1F1B, "
                              "VPP (Paddle's PIR pipeline pass) and ZBH1",
                              options.schedule_mode));
  }
  if (*mode != sched::PaddleMode::kVpp && options.vpp_degree != 1) {
    return Status(StatusCode::kInvalidArgument, at("vpp_degree"),
                  fmt::format("vpp_degree {} needs schedule_mode VPP, not {}", options.vpp_degree,
                              options.schedule_mode));
  }
  if (options.pp_stage < 0 || options.pp_stage >= options.pp_degree) {
    return Status(
        StatusCode::kInvalidArgument, at("pp_stage"),
        fmt::format("stage {} outside the {} stages", options.pp_stage, options.pp_degree));
  }
  sched::PaddleScheduleSpec spec;
  spec.mode = *mode;
  spec.pp = options.pp_degree;
  spec.micro_batches = options.micro_batches;
  spec.vpp = options.vpp_degree;
  // ZBH1's job list is the legacy pass's (Paddle's PIR lists have no ZBH1).
  spec.ir = zero_bubble ? sched::JobListIr::kLegacy : sched::JobListIr::kPir;
  spec.pir_split_recv_send = options.split_recv_send;
  if (Status valid = sched::ValidatePaddleScheduleSpec(spec); !valid.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), valid.message());
  }
  StatusOr<std::vector<sched::Job>> plan = sched::MakeJobList(spec, options.pp_stage);
  if (!plan.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), plan.status().message());
  }
  if (zero_bubble) {
    IRM_ASSIGN_OR_RETURN(PipelineJobPrograms out, SplitZeroBubble(stage, options));
    out.plan = std::move(plan).value();
    return out;
  }
  const bool recv_send = sched::HasRecvSendJobs(spec);
  Splitter splitter(stage, options, JobTypes(*mode, options.vpp_degree, recv_send),
                    *mode == sched::PaddleMode::kVpp, recv_send);
  IRM_RETURN_IF_ERROR(splitter.PlaceOps());
  IRM_RETURN_IF_ERROR(splitter.Build());
  PipelineJobPrograms out = splitter.Take();
  out.plan = std::move(plan).value();
  return out;
}

}  // namespace irm::newir
