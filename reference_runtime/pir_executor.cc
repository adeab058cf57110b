// PirExecutor (pir_executor.h) and the core of its interpreter (pir_interpreter.h): running a
// block op by op, the builtin ops that move values between the program and the Scope (parameters,
// set_parameter, shadow_output), vectors (combine, split, slice), feeds and fetches, the observer,
// and locating every failure at its op.
#include "reference_runtime/pir_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "newir/block.h"
#include "reference_runtime/pir_interpreter.h"

namespace irm::rt {
namespace {

const std::string_view* StringAttr(const newir::Operation& op, std::string_view name) {
  return op.attribute(name).AsString();
}

// Checks a feed against the type its op declares: same dtype, same rank, equal dims where the
// declared dim is not -1.
bool FeedMatches(const Tensor& feed, const newir::Type& type) {
  const std::optional<DType> dtype = DTypeOfElementType(type.dtype());
  if (!dtype || *dtype != feed.dtype()) return false;
  const std::vector<int64_t>& dims = type.dims();
  if (dims.size() != feed.shape().size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0 && dims[i] != feed.shape()[i]) return false;
  }
  return true;
}

bool IsFeedOp(const newir::Operation& op) {
  return op.name() == "pd_op.data" || op.name() == "pd_op.feed";
}

bool IsIntegerDType(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kUInt8 || dtype == DType::kInt16 ||
         dtype == DType::kInt32 || dtype == DType::kInt64;
}

}  // namespace

std::string PirLogicalName(const newir::Operation& op, size_t result, int op_index) {
  if (const newir::AttributeSpan* names = op.attribute("legacy_var_names").AsArray()) {
    if (result < names->size()) {
      const std::string_view* name = (*names)[result].AsString();
      if (name != nullptr && !name->empty()) return std::string(*name);
    }
  }
  return fmt::format("%{}@{}", result, op_index);
}

// ---- PirExecutor --------------------------------------------------------------------------------

PirExecutor::PirExecutor(const newir::Program& program, ExecutorOptions options)
    : program_(program), options_(std::move(options)) {
  const KernelRegistry& kernels =
      options_.kernels != nullptr ? *options_.kernels : KernelRegistry::Global();
  plan_ = std::make_unique<const PirProgramPlan>(
      PirInterpreter::PreparePlan(program_, kernels, PirBindings::Global(),
                                  /*with_names=*/options_.observer != nullptr));
}

PirExecutor::~PirExecutor() = default;

StatusOr<std::vector<Fetch>> PirExecutor::Run(Scope& persistent, const FeedMap& feeds) {
  return RunIn(persistent, nullptr, feeds);
}

StatusOr<std::vector<Fetch>> PirExecutor::RunJob(Scope& persistent, Scope& job_scope,
                                                 const FeedMap& feeds) {
  IRM_RETURN_IF_ERROR(CheckJobScope(persistent, job_scope));
  return RunIn(persistent, &job_scope, feeds);
}

StatusOr<std::vector<Fetch>> PirExecutor::RunIn(Scope& persistent, Scope* job_scope,
                                                const FeedMap& feeds) {
  std::unique_ptr<std::vector<PirSlot>> slots;
  {
    std::lock_guard<std::mutex> lock(spare_mutex_);
    slots = std::move(spare_slots_);
  }
  if (slots == nullptr) slots = std::make_unique<std::vector<PirSlot>>();
  slots->resize(plan_->num_slots);
  PirInterpreter interpreter(options_, *plan_, persistent, feeds, job_scope, std::move(*slots));
  Status status = interpreter.RunBlock(program_.block(), 0).status();
  *slots = interpreter.TakeSlots();
  {
    std::lock_guard<std::mutex> lock(spare_mutex_);
    spare_slots_ = std::move(slots);
  }
  if (!status.ok()) return status;
  return interpreter.TakeFetches();
}

namespace {

// The exclusive bound of the integers `value` holds when an op reads them as indices: the rows of
// the weight of a pd_op.embedding reading it as ids, the classes (the input's last dim) of a
// pd_op.cross_entropy_with_softmax reading it as hard labels; for the vocabulary-parallel twins
// the serial bound (c_embedding's vocab_size, the logits' columns times nranks); 0 when unknown.
int64_t IndexBoundOfValue(const newir::Value& value) {
  for (const newir::OpOperand* use = value.first_use(); use != nullptr; use = use->next_use()) {
    const newir::Operation& reader = *use->owner();
    const newir::Value* table = nullptr;
    bool last_dim = false;
    int64_t shards = 1;  // a vocabulary-parallel op holds one of this many column blocks
    if (reader.name() == "pd_op.embedding" && use->index() == 0 && reader.num_operands() > 1) {
      table = reader.operand(1);
    } else if (reader.name() == "pd_op.c_embedding" && use->index() == 1) {
      // The serial vocabulary when the op says it; the rank's rows are only a part of it.
      const int64_t* vocab = reader.attribute("vocab_size").AsInt64();
      if (vocab != nullptr && *vocab > 0) return *vocab;
      continue;
    } else if (reader.name() == "pd_op.c_softmax_with_cross_entropy" && use->index() == 1) {
      table = reader.operand(0);
      last_dim = true;
      const int32_t* nranks = reader.attribute("nranks").AsInt32();
      if (nranks != nullptr && *nranks > 0) shards = *nranks;
    } else if (reader.name() == "pd_op.cross_entropy_with_softmax" && use->index() == 1) {
      const bool* soft = reader.attribute("soft_label").AsBool();
      if (soft != nullptr && *soft) continue;
      table = reader.operand(0);
      last_dim = true;
    }
    if (table == nullptr || table->type().IsNull()) continue;
    const std::vector<int64_t>& dims = table->type().dims();
    if (dims.empty()) continue;
    const int64_t bound = (last_dim ? dims.back() : dims[0]) * shards;
    if (bound > 0) return bound;
  }
  return 0;
}

}  // namespace

int64_t PirExecutor::IndexBound(std::string_view name) const {
  for (const newir::Operation& op : program_.block()) {
    if (!IsFeedOp(op) || op.num_results() != 1) continue;
    const std::string_view* fed = StringAttr(op, "name");
    if (fed != nullptr && *fed == name) return IndexBoundOfValue(*op.result(0));
  }
  return 0;
}

std::vector<FeedSpec> PirExecutor::FeedSpecs() const {
  std::vector<FeedSpec> specs;
  for (const newir::Operation& op : program_.block()) {
    if (!IsFeedOp(op) || op.num_results() != 1) continue;
    FeedSpec spec;
    if (const std::string_view* name = StringAttr(op, "name")) spec.name = *name;
    const newir::Value& value = *op.result(0);
    spec.dtype = DTypeOfElementType(value.type().dtype()).value_or(DType::kFloat32);
    spec.shape = value.type().dims();
    if (IsIntegerDType(spec.dtype)) spec.index_bound = IndexBoundOfValue(value);
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<std::string> PirExecutor::FetchNames() const {
  std::vector<std::pair<int32_t, std::string>> fetches;
  for (const newir::Operation& op : program_.block()) {
    if (op.name() != "pd_op.fetch") continue;
    const int32_t* col = op.attribute("col").AsInt32();
    const std::string_view* name = StringAttr(op, "name");
    fetches.emplace_back(col != nullptr ? *col : 0, name != nullptr ? *name : "");
  }
  std::stable_sort(fetches.begin(), fetches.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (auto& [col, name] : fetches) names.push_back(std::move(name));
  return names;
}

// ---- the interpreted ops ------------------------------------------------------------------------

PirOpHandler PirInterpreter::InterpretedHandler(std::string_view op_name) {
  // The ops the interpreter runs itself, and how: the one list of them (IsInterpretedOp). Every
  // other op runs through the binding table.
  struct Entry {
    std::string_view name;
    PirOpHandler handler;
  };
  static constexpr Entry kTable[] = {
      {"builtin.parameter", &PirInterpreter::RunParameter},
      {"builtin.set_parameter", &PirInterpreter::RunSetParameter},
      {"builtin.shadow_output", &PirInterpreter::RunShadowOutput},
      {"builtin.combine", &PirInterpreter::RunCombine},
      {"builtin.split", &PirInterpreter::RunSplit},
      {"builtin.slice", &PirInterpreter::RunSlice},
      {"cf.yield", &PirInterpreter::RunYield},
      {"pd_op.data", &PirInterpreter::RunFeed},
      {"pd_op.feed", &PirInterpreter::RunFeed},
      {"pd_op.fetch", &PirInterpreter::RunFetch},
      {"pd_op.if", &PirInterpreter::RunIf},
      {"pd_op.while", &PirInterpreter::RunWhile},
  };
  for (const Entry& entry : kTable) {
    if (entry.name == op_name) return entry.handler;
  }
  return nullptr;
}

bool IsInterpretedOp(std::string_view op_name) {
  return PirInterpreter::InterpretedHandler(op_name) != nullptr;
}

// ---- PirInterpreter: blocks and ops -------------------------------------------------------------

PirInterpreter::PirInterpreter(const ExecutorOptions& options, const PirProgramPlan& plan,
                               Scope& persistent, const FeedMap& feeds, Scope* job_scope,
                               std::vector<PirSlot> slots)
    : options_(options),
      kernels_(options.kernels != nullptr ? *options.kernels : KernelRegistry::Global()),
      plan_(plan),
      persistent_(persistent),
      feeds_(feeds),
      job_scope_(job_scope),
      slots_(std::move(slots)) {
  slots_.resize(plan.num_slots);
}

StatusOr<std::vector<PirSlot>> PirInterpreter::RunBlock(const newir::Block& block, int depth) {
  auto ops = plan_.blocks.find(&block);
  if (ops == plan_.blocks.end()) {
    // Every block of the program is prepared with it: a block from elsewhere is a caller's bug.
    return Status(StatusCode::kInternal, Location::File(options_.file),
                  "a block that is not part of the prepared program");
  }
  for (const PirOpPlan& plan : ops->second) {
    if (plan.ends_block) {
      IRM_RETURN_IF_ERROR((this->*plan.handler)(*plan.op, plan.index, depth));
      return std::move(yielded_);
    }
    IRM_RETURN_IF_ERROR(RunOp(plan, depth));
    for (uint32_t slot : plan.last_use_of) slots_[slot] = PirSlot();
  }
  return std::vector<PirSlot>();
}

std::vector<PirSlot> PirInterpreter::TakeSlots() {
  // Emptied, so that no tensor of this run outlives it in the next run's slots.
  for (PirSlot& slot : slots_) slot = PirSlot();
  return std::move(slots_);
}

std::vector<Fetch> PirInterpreter::TakeFetches() {
  std::stable_sort(fetches_.begin(), fetches_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Fetch> fetches;
  for (auto& [col, fetch] : fetches_) fetches.push_back(std::move(fetch));
  fetches_.clear();
  return fetches;
}

Status PirInterpreter::RunOp(const PirOpPlan& plan, int depth) {
  IRM_RETURN_IF_ERROR(Dispatch(plan, depth));
  if (options_.observer != nullptr) Observe(plan, depth);
  return Status::Ok();
}

Status PirInterpreter::Dispatch(const PirOpPlan& plan, int depth) {
  const newir::Operation& op = *plan.op;
  const int index = plan.index;
  if (plan.handler != nullptr) return (this->*plan.handler)(op, index, depth);
  if (plan.binding == nullptr) {
    return Fail(StatusCode::kUnimplemented, op, index,
                fmt::format("no binding for '{}'", op.name()));
  }
  switch (plan.binding->kind) {
    case BindingKind::kKernel:
      return RunKernelOp(plan);
    case BindingKind::kPassThrough:
      return RunPassThrough(op, index);
    case BindingKind::kCommunication:
      if (options_.comm != nullptr) return RunCommOp(op, *plan.binding, index);
      break;
  }
  return Fail(StatusCode::kUnimplemented, op, index,
              fmt::format("'{}' needs the multi-rank runtime", op.name()));
}

Status PirInterpreter::RunYield(const newir::Operation& op, int index, int depth) {
  if (depth == 0) {
    return Fail(StatusCode::kInvalid, op, index,
                "cf.yield ends a nested region; it cannot be in the top block");
  }
  std::vector<PirSlot> yielded;
  for (size_t i = 0; i < op.num_operands(); ++i) {
    IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, i));
    yielded.push_back(*slot);
  }
  yielded_ = std::move(yielded);
  return Status::Ok();
}

void PirInterpreter::Observe(const PirOpPlan& plan, int depth) {
  const newir::Operation& op = *plan.op;
  OpEvent event;
  event.block = depth;
  event.op_index = plan.index;
  event.op_type = op.name();
  event.inputs.reserve(plan.operands.size());
  for (uint32_t slot : plan.operands) {
    if (slot != PirOpPlan::kAbsent) event.inputs.emplace_back(plan_.names[slot]);
  }
  event.outputs.reserve(plan.results.size());
  for (uint32_t slot : plan.results) {
    const PirSlot& held = slots_[slot];
    const Tensor* tensor = !held.is_vector && held.tensor.defined() ? &held.tensor : nullptr;
    event.outputs.emplace_back(plan_.names[slot], tensor);
  }
  (*options_.observer)(event);
}

// ---- builtin ops, feeds and fetches -------------------------------------------------------------

Status PirInterpreter::RunParameter(const newir::Operation& op, int index, int /*depth*/) {
  const std::string_view* name = StringAttr(op, "parameter_name");
  if (name == nullptr || op.num_results() != 1) {
    return Fail(StatusCode::kInvalid, op, index, "needs a string attribute 'parameter_name'");
  }
  Tensor* tensor = persistent_.Find(*name);
  if (tensor == nullptr) {
    return Fail(StatusCode::kNotFound, op, index,
                fmt::format("parameter '{}' is not in the scope", *name));
  }
  Bind(op.result(0), *tensor);
  return Status::Ok();
}

Status PirInterpreter::RunSetParameter(const newir::Operation& op, int index, int /*depth*/) {
  return RunScopeWrite(op, index, "parameter_name");
}

Status PirInterpreter::RunShadowOutput(const newir::Operation& op, int index, int /*depth*/) {
  return RunScopeWrite(op, index, "output_name");
}

Status PirInterpreter::RunScopeWrite(const newir::Operation& op, int index, const char* name_attr) {
  const std::string_view* name = StringAttr(op, name_attr);
  if (name == nullptr) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("needs a string attribute '{}'", name_attr));
  }
  IRM_ASSIGN_OR_RETURN(const Tensor* tensor, ReadTensor(op, index, 0));
  // In a job, a value handed on to the micro-batch's later jobs; a persistable var stays shared.
  if (job_scope_ != nullptr && persistent_.Find(*name) == nullptr) {
    job_scope_->SetLocal(*name, *tensor);
    return Status::Ok();
  }
  persistent_.Set(*name, *tensor);
  return Status::Ok();
}

Status PirInterpreter::RunCombine(const newir::Operation& op, int index, int /*depth*/) {
  PirSlot slot;
  slot.is_vector = true;
  for (size_t i = 0; i < op.num_operands(); ++i) {
    IRM_ASSIGN_OR_RETURN(const Tensor* tensor, ReadTensor(op, index, i));
    slot.elements.push_back(*tensor);
  }
  Bind(op.result(0), std::move(slot));
  return Status::Ok();
}

Status PirInterpreter::RunSplit(const newir::Operation& op, int index, int /*depth*/) {
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, 0));
  if (!slot->is_vector || slot->elements.size() != op.num_results()) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("has {} results but its operand holds {} tensors", op.num_results(),
                            slot->is_vector ? slot->elements.size() : 1));
  }
  const std::vector<Tensor> elements = slot->elements;
  for (size_t i = 0; i < elements.size(); ++i) Bind(op.result(i), elements[i]);
  return Status::Ok();
}

Status PirInterpreter::RunSlice(const newir::Operation& op, int index, int /*depth*/) {
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, 0));
  const int32_t* at = op.attribute("index").AsInt32();
  const size_t size = slot->is_vector ? slot->elements.size() : 1;
  if (at == nullptr || !slot->is_vector || *at < 0 || static_cast<size_t>(*at) >= size) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("index {} is out of range for a vector of {} tensors",
                            at != nullptr ? *at : -1, size));
  }
  Bind(op.result(0), slot->elements[static_cast<size_t>(*at)]);
  return Status::Ok();
}

Status PirInterpreter::RunFeed(const newir::Operation& op, int index, int /*depth*/) {
  const std::string_view* name_attr = StringAttr(op, "name");
  if (name_attr == nullptr || op.num_results() != 1) {
    return Fail(StatusCode::kInvalid, op, index, "needs a string attribute 'name'");
  }
  const std::string name(*name_attr);
  auto it = feeds_.find(name);
  if (it == feeds_.end()) {
    if (job_scope_ != nullptr) return RunJobInput(op, index, name);
    return Fail(StatusCode::kNotFound, op, index, fmt::format("feed '{}' is missing", name));
  }
  const newir::Type& type = op.result(0)->type();
  if (!it->second.defined() || !FeedMatches(it->second, type)) {
    // The caller's feed is wrong, not the program: bad input (exit 2 on the command line).
    return Fail(
        StatusCode::kInvalidArgument, op, index,
        fmt::format("feed '{}' is {} but the program declares {}", name,
                    it->second.defined() ? it->second.Describe() : "undefined", type.ToString()));
  }
  // A copy: in-place ops on the input must not change the caller's tensor.
  Bind(op.result(0), it->second.Clone());
  return Status::Ok();
}

Status PirInterpreter::RunJobInput(const newir::Operation& op, int index, const std::string& name) {
  const Tensor* held = job_scope_->Find(name);
  if (held == nullptr || !held->defined()) {
    return Fail(StatusCode::kNotFound, op, index, fmt::format("feed '{}' is missing", name));
  }
  const newir::Type& type = op.result(0)->type();
  if (!FeedMatches(*held, type)) {
    // What an earlier job handed on disagrees with this job's declaration: the programs are wrong.
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("'{}' in the micro-batch scope is {} but the program declares {}", name,
                            held->Describe(), type.ToString()));
  }
  // A copy, as for feeds: an in-place op of this job must not change the earlier job's value.
  Bind(op.result(0), held->Clone());
  return Status::Ok();
}

Status PirInterpreter::RunFetch(const newir::Operation& op, int index, int /*depth*/) {
  const std::string_view* name = StringAttr(op, "name");
  const int32_t* col = op.attribute("col").AsInt32();
  if (name == nullptr || col == nullptr) {
    return Fail(StatusCode::kInvalid, op, index,
                "needs a string attribute 'name' and an int32 attribute 'col'");
  }
  IRM_ASSIGN_OR_RETURN(const Tensor* tensor, ReadTensor(op, index, 0));
  // A copy, as Paddle's fetch: a later in-place op must not change what was fetched.
  Tensor fetched = tensor->Clone();
  if (op.num_results() == 1) Bind(op.result(0), fetched);
  fetches_.emplace_back(*col, Fetch{std::string(*name), std::move(fetched)});
  return Status::Ok();
}

// ---- values and diagnostics ---------------------------------------------------------------------

StatusOr<const PirSlot*> PirInterpreter::Read(const newir::Operation& op, int index,
                                              size_t operand) const {
  const newir::Value* value = op.operand(operand);
  if (value == nullptr) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} is absent", OperandLabel(op, operand)));
  }
  const PirSlot* slot = SlotOf(value);
  if (slot == nullptr || (!slot->is_vector && !slot->tensor.defined())) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} reads a value that was not computed", OperandLabel(op, operand)));
  }
  return slot;
}

StatusOr<const PirSlot*> PirInterpreter::Read(const PirOpPlan& plan, size_t operand) const {
  const uint32_t at = plan.operands[operand];
  if (at == PirOpPlan::kAbsent) return Read(*plan.op, plan.index, operand);  // its error
  const PirSlot& slot = slots_[at];
  if (!slot.is_vector && !slot.tensor.defined()) return Read(*plan.op, plan.index, operand);
  return &slot;
}

StatusOr<const Tensor*> PirInterpreter::ReadTensor(const newir::Operation& op, int index,
                                                   size_t operand) const {
  IRM_ASSIGN_OR_RETURN(const PirSlot* slot, Read(op, index, operand));
  if (slot->is_vector) {
    return Fail(StatusCode::kInvalid, op, index,
                fmt::format("{} is a vector, not a tensor", OperandLabel(op, operand)));
  }
  return &slot->tensor;
}

const PirSlot* PirInterpreter::SlotOf(const newir::Value* value) const {
  auto it = plan_.slots.find(value);
  return it == plan_.slots.end() ? nullptr : &slots_[it->second];
}

PirSlot* PirInterpreter::SlotOf(const newir::Value* value) {
  auto it = plan_.slots.find(value);
  return it == plan_.slots.end() ? nullptr : &slots_[it->second];
}

void PirInterpreter::Bind(const newir::Value* value, Tensor tensor) {
  // Every value of the prepared program has a slot; nothing else is ever bound.
  PirSlot* slot = SlotOf(value);
  if (slot == nullptr) return;
  slot->tensor = std::move(tensor);
  slot->elements.clear();
  slot->is_vector = false;
}

void PirInterpreter::Bind(const newir::Value* value, PirSlot slot) {
  if (PirSlot* held = SlotOf(value)) *held = std::move(slot);
}

std::string PirInterpreter::OperandLabel(const newir::Operation& op, size_t operand) {
  const newir::OpInfo* info = op.info();
  if (info == nullptr || info->operands.empty()) return fmt::format("operand {}", operand);
  // An any_count slot is the last one and takes the remaining operands.
  const size_t slot = std::min(operand, info->operands.size() - 1);
  return fmt::format("operand {} ('{}')", operand, info->operands[slot].name);
}

Status PirInterpreter::Fail(StatusCode code, const newir::Operation& op, int index,
                            std::string message) const {
  return Locate(Status(code, Location{}, std::move(message)), op, index);
}

Status PirInterpreter::Locate(const Status& status, const newir::Operation& op, int index) const {
  if (status.ok()) return status;
  Diagnostic d = status.diagnostic();
  d.location = Location::File(options_.file).AtOp(index, op.name());
  std::string path;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (!path.empty()) path += ' ';
    path += fmt::format("in region {} of op {} ({})", it->region, it->op_index, it->op->name());
  }
  d.location.detail = std::move(path);
  return Status(status.code(), std::move(d));
}

}  // namespace irm::rt
