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

#include "newir/builder.h"
#include "newir/operation.h"
#include "newir/value.h"

namespace irm::newir {
namespace {

namespace sched = irm::schedules;

// Paddle's OpRole bits (paddle/phi/core/framework/op_proto_maker.h).
constexpr int kBackwardRole = 0x1;
constexpr int kOptimizeRole = 0x2;

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
  Splitter(const Program& stage, const PipelineSplitOptions& options, sched::PaddleMode mode,
           bool recv_send)
      : stage_(stage),
        options_(options),
        types_(JobTypes(mode, options.vpp_degree, recv_send)),
        chunked_(mode == sched::PaddleMode::kVpp),
        recv_send_(recv_send),
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

}  // namespace

StatusOr<PipelineJobPrograms> SplitPipelineProgram(const Program& stage,
                                                   const PipelineSplitOptions& options) {
  const auto at = [&](const char* attr) { return Location::File(options.file).AtAttr(attr); };
  StatusOr<sched::PaddleMode> mode = sched::ParsePaddleMode(options.schedule_mode);
  if (!mode.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), mode.status().message());
  }
  if (*mode != sched::PaddleMode::kFThenB && *mode != sched::PaddleMode::k1F1B &&
      *mode != sched::PaddleMode::kVpp) {
    // static/pir_pass.py::pipeline_pass: "pipeline scheduler only support FThenB, 1F1B and VPP".
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"),
                  fmt::format("{} has no PIR form: Paddle's PIR pipeline pass supports only "
                              "FThenB, 1F1B and VPP",
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
  spec.ir = sched::JobListIr::kPir;
  spec.pir_split_recv_send = options.split_recv_send;
  if (Status valid = sched::ValidatePaddleScheduleSpec(spec); !valid.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), valid.message());
  }
  StatusOr<std::vector<sched::Job>> plan = sched::MakeJobList(spec, options.pp_stage);
  if (!plan.ok()) {
    return Status(StatusCode::kInvalidArgument, at("schedule_mode"), plan.status().message());
  }
  Splitter splitter(stage, options, *mode, sched::HasRecvSendJobs(spec));
  IRM_RETURN_IF_ERROR(splitter.PlaceOps());
  IRM_RETURN_IF_ERROR(splitter.Build());
  PipelineJobPrograms out = splitter.Take();
  out.plan = std::move(plan).value();
  return out;
}

}  // namespace irm::newir
