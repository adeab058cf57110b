// LegacyExecutor (legacy_executor.h): running a planned legacy program — kernel ops through the
// registry, feed and fetch, where each write lands, the observer. Control flow is in
// legacy_control_flow.cc.
#include "reference_runtime/legacy_executor.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "reference_runtime/dtype_visit.h"

namespace irm::rt {
namespace {

bool IsIndexDType(DType dtype) { return dtype == DType::kInt32 || dtype == DType::kInt64; }

Status Located(const PlannedOp& op, const Status& status) {
  Status located(status.code(), op.location, status.message());
  for (const std::string& note : status.diagnostic().notes) located.AddNote(note);
  return located;
}

// The operand a legacy `axis` moved and its shape before, for grad ops to move its gradient back.
struct Alignment {
  int operand = -1;
  std::vector<int64_t> shape;
};

// Legacy elementwise/compare broadcasting (paddle/phi/kernels/funcs/common_shape.h,
// GetBroadcastDimsArrays): the lower-rank operand's dims sit at [axis, axis + rank) of the other's;
// -1 means the trailing dims. Reshaping it to end in ones gives numpy broadcasting that meaning.
Status AlignOperands(const PlannedOp& op, KernelCall& call, std::array<Tensor, 2>& aligned,
                     Alignment& alignment) {
  if (op.axis == -1 || !call.has_input(0) || !call.has_input(1)) return Status::Ok();
  const Tensor& x = call.input(0);
  const Tensor& y = call.input(1);
  if (x.rank() == y.rank()) return Status::Ok();
  const int small = x.rank() < y.rank() ? 0 : 1;
  const Tensor& s = small == 0 ? x : y;
  const Tensor& b = small == 0 ? y : x;
  if (op.axis < 0 || op.axis + s.rank() > b.rank()) {
    return LegacyOpError(
        op, StatusCode::kInvalid,
        fmt::format("axis {} does not place {} {} inside {} {}", op.axis, small == 0 ? "X" : "Y",
                    s.Describe(), small == 0 ? "Y" : "X", b.Describe()),
        op.inputs[static_cast<size_t>(small)].name);
  }
  if (op.axis + s.rank() == b.rank()) return Status::Ok();
  std::vector<int64_t> shape = s.shape();
  shape.resize(static_cast<size_t>(b.rank() - op.axis), 1);
  StatusOr<Tensor> view = s.Reshaped(std::move(shape));
  if (!view.ok()) return Located(op, view.status());
  alignment.operand = small;
  alignment.shape = s.shape();
  aligned[static_cast<size_t>(small)] = std::move(view).value();
  call.inputs[static_cast<size_t>(small)] = &aligned[static_cast<size_t>(small)];
  return Status::Ok();
}

// Calls `f` with the name of every var `op` reads, writes or reports.
template <typename F>
void ForEachVarName(const PlannedOp& op, F&& f) {
  for (const PlannedVar& var : op.inputs) f(var.name);
  for (const PlannedVar& var : op.outputs) f(var.name);
  for (const PlannedTensorAttr& attr : op.tensor_attrs) {
    for (const PlannedVar& var : attr.vars) f(var.name);
  }
  for (const PlannedVar& var : op.conditions) f(var.name);
  for (const ObservedVar& var : op.observed) f(var.name);
}

// PlannedOp::last_use_of for block 0. A var an op of a sub-block mentions is never dropped: a
// sub-block may run many times, and reads by name what its enclosing blocks hold.
void MarkLastUses(LegacyPlan& plan) {
  if (plan.blocks.empty()) return;
  std::unordered_set<std::string_view> in_sub_blocks;
  for (size_t b = 1; b < plan.blocks.size(); ++b) {
    for (const PlannedOp& op : plan.blocks[b]) {
      ForEachVarName(op, [&](const std::string& name) { in_sub_blocks.insert(name); });
    }
  }
  std::vector<PlannedOp>& ops = plan.blocks[0];
  std::unordered_map<std::string_view, size_t> last;
  for (size_t i = 0; i < ops.size(); ++i) {
    ForEachVarName(ops[i], [&](const std::string& name) {
      if (!name.empty() && !in_sub_blocks.contains(name)) last[name] = i;
    });
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    ForEachVarName(ops[i], [&](const std::string& name) {
      auto it = last.find(name);
      if (it == last.end() || it->second != i) return;
      ops[i].last_use_of.push_back(name);
      last.erase(it);  // once, however often the op mentions it
    });
  }
}

const char* ExpectedTensor(TensorAttrKind kind) {
  switch (kind) {
    case TensorAttrKind::kIntArray:
      return "an int32 or int64 tensor";
    case TensorAttrKind::kIntList:
    case TensorAttrKind::kInt:
      return "a 1-element int32 or int64 tensor";
    case TensorAttrKind::kScalar:
      return "a 1-element tensor";
  }
  return "?";
}

}  // namespace

Status LegacyOpError(const PlannedOp& op, StatusCode code, std::string message,
                     const std::string& var) {
  Location location = op.location;
  if (!var.empty()) location.AtVar(var);
  return Status(code, std::move(location), std::move(message));
}

LegacyExecutor::LegacyExecutor(const oldir::Program& program, ExecutorOptions options)
    : options_(std::move(options)),
      kernels_(options_.kernels != nullptr ? options_.kernels : &KernelRegistry::Global()) {
  StatusOr<LegacyPlan> plan =
      PlanLegacyProgram(program, options_.file, /*multi_rank=*/options_.comm != nullptr);
  if (!plan.ok()) {
    plan_status_ = plan.status();
    return;
  }
  plan_ = std::move(plan).value();
  MarkLastUses(plan_);
  // Each kernel op's kernel, resolved once: a step looks up no kernel by name.
  for (std::vector<PlannedOp>& block : plan_.blocks) {
    for (PlannedOp& op : block) {
      if (op.kind == PlannedKind::kKernel) op.bound_kernel = BoundKernel(*kernels_, op.kernel);
    }
  }
}

std::vector<FeedSpec> LegacyExecutor::FeedSpecs() const { return plan_.feeds; }

int64_t LegacyExecutor::IndexBound(std::string_view name) const {
  auto it = plan_.index_bounds.find(name);
  return it == plan_.index_bounds.end() ? 0 : it->second;
}

std::vector<std::string> LegacyExecutor::FetchNames() const { return plan_.fetches; }

StatusOr<std::vector<Fetch>> LegacyExecutor::Run(Scope& persistent, const FeedMap& feeds) {
  Scope step(&persistent);
  return RunIn(persistent, step, feeds, /*drop_dead_vars=*/true);
}

StatusOr<std::vector<Fetch>> LegacyExecutor::RunJob(Scope& persistent, Scope& job_scope,
                                                    const FeedMap& feeds) {
  IRM_RETURN_IF_ERROR(CheckJobScope(persistent, job_scope));
  return RunIn(persistent, job_scope, feeds, /*drop_dead_vars=*/false);
}

StatusOr<std::vector<Fetch>> LegacyExecutor::RunIn(Scope& persistent, Scope& step,
                                                   const FeedMap& feeds,
                                                   bool drop_dead_vars) const {
  IRM_RETURN_IF_ERROR(plan_status_);
  if (plan_.feeds_by_name) IRM_RETURN_IF_ERROR(FeedByName(step, feeds));
  RunState state{persistent, feeds, {}, {}, drop_dead_vars, {}, {}};
  IRM_RETURN_IF_ERROR(RunBlock(0, step, state));
  std::stable_sort(state.fetched.begin(), state.fetched.end(),
                   [](const FetchedTensor& a, const FetchedTensor& b) { return a.col < b.col; });
  std::vector<Fetch> fetches;
  fetches.reserve(state.fetched.size());
  for (FetchedTensor& f : state.fetched) fetches.push_back(std::move(f.fetch));
  return fetches;
}

Status LegacyExecutor::RunBlock(int block, Scope& scope, RunState& state) const {
  state.frames.push_back({block, &scope});
  // The top-level run of block 0 only (a malformed program may run block 0 as a sub-block).
  const bool drop = block == 0 && state.drop_dead_vars && state.frames.size() == 1;
  for (const PlannedOp& op : plan_.blocks[static_cast<size_t>(block)]) {
    Status status = RunOp(op, state);
    if (!status.ok()) {
      state.frames.pop_back();
      return status;
    }
    // Only the step's own vars: Erase leaves the persistent scope's alone.
    if (drop) {
      for (const std::string& name : op.last_use_of) scope.Erase(name);
    }
  }
  state.frames.pop_back();
  return Status::Ok();
}

Status LegacyExecutor::RunOp(const PlannedOp& op, RunState& state) const {
  // Which kernel outputs were written: only the observer asks.
  std::vector<bool> written;
  switch (op.kind) {
    case PlannedKind::kKernel:
      if (options_.observer != nullptr) written.assign(op.outputs.size(), false);
      IRM_RETURN_IF_ERROR(
          RunKernelOp(op, state, options_.observer != nullptr ? &written : nullptr));
      break;
    case PlannedKind::kFeed:
      IRM_RETURN_IF_ERROR(RunFeed(op, state));
      break;
    case PlannedKind::kFetch:
      IRM_RETURN_IF_ERROR(RunFetch(op, state));
      break;
    case PlannedKind::kConditionalBlock:
      IRM_RETURN_IF_ERROR(RunConditionalBlock(op, state));
      break;
    case PlannedKind::kWhile:
      IRM_RETURN_IF_ERROR(RunWhile(op, state));
      break;
    case PlannedKind::kNoOp:
      break;
    case PlannedKind::kComm:
      IRM_RETURN_IF_ERROR(RunCommOp(op, state));
      break;
  }
  if (options_.observer != nullptr) Observe(op, state, written);
  return Status::Ok();
}

StatusOr<const Tensor*> LegacyExecutor::Read(const PlannedOp& op, const PlannedVar& var,
                                             const RunState& state) const {
  const Tensor* tensor = state.scope().Find(var.name);
  if (tensor == nullptr || !tensor->defined()) {
    return LegacyOpError(
        op, StatusCode::kNotFound,
        var.persistable
            ? fmt::format("persistable var '{}' is not in the persistent scope", var.name)
            : fmt::format("var '{}' is read before any op writes it", var.name),
        var.name);
  }
  return tensor;
}

void LegacyExecutor::Write(const PlannedVar& var, Tensor tensor, RunState& state) const {
  if (var.in_place) {
    Tensor* existing = state.scope().Find(var.name);
    if (existing != nullptr && existing->defined() && existing->dtype() == tensor.dtype() &&
        existing->shape() == tensor.shape()) {
      // A kernel may hand back a view of the very storage it overwrites (CopyBytesFrom moves
      // overlapping bytes), or a device-resident result (the storage takes its device copy).
      existing->CopyBytesFrom(tensor);
      return;
    }
  }
  if (var.persistable) {
    state.persistent.Set(var.name, std::move(tensor));
    return;
  }
  if (var.declared_in >= 0) {
    for (auto frame = state.frames.rbegin(); frame != state.frames.rend(); ++frame) {
      if (frame->block == var.declared_in) {
        frame->scope->SetLocal(var.name, std::move(tensor));
        return;
      }
    }
  }
  // Undeclared, or declared in a block that is not running (a program whose sub-block parents do
  // not follow the ops that run them): where the name already lives, else here.
  state.scope().Set(var.name, std::move(tensor));
}

Status LegacyExecutor::RunKernelOp(const PlannedOp& op, RunState& state,
                                   std::vector<bool>* written) const {
  KernelCall& call = state.call;
  call.inputs.clear();
  call.outputs.clear();
  call.context = KernelContext();
  for (const PlannedVar& var : op.inputs) {
    if (var.name.empty()) {
      call.inputs.push_back(nullptr);
      continue;
    }
    IRM_ASSIGN_OR_RETURN(const Tensor* tensor, Read(op, var, state));
    call.inputs.push_back(tensor);
  }
  call.attrs = op.attrs;
  for (const PlannedTensorAttr& attr : op.tensor_attrs) {
    IRM_ASSIGN_OR_RETURN(AttrValue value, TensorAttrValue(op, attr, state));
    call.attrs.Set(std::string(attr.rule->kernel_attr), std::move(value));
  }
  std::array<Tensor, 2> aligned;
  Alignment alignment;
  if (op.binding->broadcast != LegacyBroadcast::kNone) {
    IRM_RETURN_IF_ERROR(AlignOperands(op, call, aligned, alignment));
  }

  const DTypeRule& rule = op.binding->dtype;
  DType dtype = DType::kFloat32;
  if (!rule.attr.empty() && call.attrs.Has(rule.attr)) {
    StatusOr<DType> from_attr = call.attrs.Get<DType>(rule.attr);
    if (!from_attr.ok()) return Located(op, from_attr.status());
    dtype = *from_attr;
  } else if (call.has_input(rule.input)) {
    dtype = call.input(rule.input).dtype();
  } else {
    return LegacyOpError(op, StatusCode::kInvalid,
                         fmt::format("kernel '{}' takes its dtype from input {}, which is absent",
                                     op.kernel, rule.input));
  }

  call.context.gemm = options_.gemm;
  call.context.program_seed = options_.seed;
  call.context.op_identity = op.identity;
  if (!options_.shards.empty()) {
    // The var that names the op's stream (legacy_plan.h: its first output) is the one sharded.
    auto first = std::find_if(op.outputs.begin(), op.outputs.end(),
                              [](const PlannedVar& var) { return !var.name.empty(); });
    auto shard =
        first == op.outputs.end() ? options_.shards.end() : options_.shards.find(first->name);
    if (shard != options_.shards.end()) {
      call.context.shard = &shard->second;
      call.context.shard_var = shard->first;
    }
  }
  std::vector<Tensor>& results = state.results;
  results.clear();
  results.resize(op.outputs.size());
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    call.outputs.push_back(op.outputs[i].name.empty() ? nullptr : &results[i]);
  }
  Status status = op.bound_kernel.bound() ? op.bound_kernel.Run(dtype, call)
                                          : kernels_->Run(op.kernel, dtype, call);
  if (!status.ok()) return Located(op, status);

  if (op.binding->broadcast == LegacyBroadcast::kGrad && alignment.operand >= 0) {
    Tensor& grad = results[static_cast<size_t>(alignment.operand)];
    if (grad.defined()) {
      StatusOr<Tensor> back = grad.Reshaped(alignment.shape);
      if (!back.ok()) return Located(op, back.status());
      grad = std::move(back).value();
    }
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    if (op.outputs[i].name.empty() || !results[i].defined()) continue;
    Write(op.outputs[i], std::move(results[i]), state);
    if (written != nullptr) (*written)[i] = true;
  }
  return Status::Ok();
}

StatusOr<AttrValue> LegacyExecutor::TensorAttrValue(const PlannedOp& op,
                                                    const PlannedTensorAttr& attr,
                                                    const RunState& state) const {
  const TensorAttrKind kind = attr.rule->kind;
  if (kind != TensorAttrKind::kIntList && attr.vars.size() != 1) {
    return LegacyOpError(op, StatusCode::kInvalid,
                         fmt::format("input slot '{}' holds {} vars, takes at most 1",
                                     attr.rule->slot, attr.vars.size()));
  }
  std::vector<int64_t> ints;
  for (const PlannedVar& var : attr.vars) {
    IRM_ASSIGN_OR_RETURN(const Tensor* t, Read(op, var, state));
    const bool fits = kind == TensorAttrKind::kIntArray ? IsIndexDType(t->dtype())
                      : kind == TensorAttrKind::kScalar
                          ? t->numel() == 1
                          : IsIndexDType(t->dtype()) && t->numel() == 1;
    if (!fits) {
      return LegacyOpError(op, StatusCode::kInvalid,
                           fmt::format("{} '{}' is {}, not {}", attr.rule->slot, var.name,
                                       t->Describe(), ExpectedTensor(kind)),
                           var.name);
    }
    if (kind == TensorAttrKind::kScalar) return AttrValue(ElementAsDouble(*t, 0));
    if (kind == TensorAttrKind::kInt) return AttrValue(ElementAsInt64(*t, 0));
    for (int64_t i = 0; i < t->numel(); ++i) ints.push_back(ElementAsInt64(*t, i));
  }
  return AttrValue(std::move(ints));
}

namespace {

// The feed for `name`, checked against its declared dtype and dims (-1 matches any size); errors
// at `location`.
StatusOr<const Tensor*> CheckedFeed(const FeedMap& feeds, const std::string& name, DType dtype,
                                    const std::vector<int64_t>& dims, Location location) {
  location.var = name;
  auto it = feeds.find(name);
  if (it == feeds.end()) {
    return Status(StatusCode::kNotFound, location, fmt::format("no feed for '{}'", name));
  }
  const Tensor& fed = it->second;
  bool fits = fed.defined() && fed.dtype() == dtype && fed.rank() == static_cast<int>(dims.size());
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    fits = dims[i] < 0 || dims[i] == fed.dim(static_cast<int>(i));
  }
  if (!fits) {
    // The caller's feed is wrong, not the program: bad input (exit 2 on the command line).
    return Status(StatusCode::kInvalidArgument, location,
                  fmt::format("feed '{}' is {}, but the var is declared {}{}", name, fed.Describe(),
                              DTypeName(dtype), ShapeToString(dims)));
  }
  return &fed;
}

}  // namespace

Status LegacyExecutor::RunFeed(const PlannedOp& op, RunState& state) const {
  const PlannedVar& var = op.outputs[0];
  IRM_ASSIGN_OR_RETURN(const Tensor* fed, CheckedFeed(state.feeds, var.name, op.feed_dtype,
                                                      op.feed_dims, op.location));
  Write(var, fed->Clone(), state);
  return Status::Ok();
}

Status LegacyExecutor::FeedByName(Scope& step, const FeedMap& feeds) const {
  for (const FeedSpec& spec : plan_.feeds) {
    // Not fed but already in the scope (set by the caller, or by an earlier program): Paddle's
    // executor reads it from there.
    if (!feeds.contains(spec.name) && step.Find(spec.name) != nullptr) continue;
    IRM_ASSIGN_OR_RETURN(const Tensor* fed, CheckedFeed(feeds, spec.name, spec.dtype, spec.shape,
                                                        Location::File(options_.file).InBlock(0)));
    step.SetLocal(spec.name, fed->Clone());
  }
  return Status::Ok();
}

Status LegacyExecutor::RunFetch(const PlannedOp& op, RunState& state) const {
  IRM_ASSIGN_OR_RETURN(const Tensor* tensor, Read(op, op.inputs[0], state));
  state.fetched.push_back({op.col, Fetch{op.inputs[0].name, tensor->Clone()}});
  return Status::Ok();
}

void LegacyExecutor::Observe(const PlannedOp& op, const RunState& state,
                             const std::vector<bool>& written) const {
  OpEvent event;
  event.block = op.block;
  event.op_index = op.index;
  event.op_type = op.type;
  // What the op read: kernel inputs, then the inputs that give attributes, then conditions.
  for (const PlannedVar& var : op.inputs) {
    if (!var.name.empty()) event.inputs.emplace_back(var.name);
  }
  for (const PlannedTensorAttr& attr : op.tensor_attrs) {
    for (const PlannedVar& var : attr.vars) {
      if (!var.name.empty()) event.inputs.emplace_back(var.name);
    }
  }
  for (const PlannedVar& var : op.conditions) event.inputs.emplace_back(var.name);
  event.outputs.reserve(op.observed.size());
  for (const ObservedVar& var : op.observed) {
    const Tensor* tensor = nullptr;
    // A kernel op reports what it wrote; an output it left alone is null, whatever the var held.
    if (op.kind != PlannedKind::kKernel ||
        (var.output >= 0 && written[static_cast<size_t>(var.output)])) {
      tensor = state.scope().Find(var.name);
      if (tensor != nullptr && !tensor->defined()) tensor = nullptr;
    }
    event.outputs.emplace_back(var.name, tensor);
  }
  (*options_.observer)(event);
}

}  // namespace irm::rt
