// The state of one run of a new-IR program (PirExecutor::Run): the tensors of the values computed
// so far, the fetches collected, and where in the nesting of regions the run is, for diagnostics.
// Internal to the executor: pir_executor.cc runs blocks, builtin ops, feeds, fetches and kernel
// ops; pir_control_flow.cc runs pd_op.if and pd_op.while; pir_plan.cc prepares a program once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "newir/block.h"
#include "newir/operation.h"
#include "newir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/pir_bindings.h"

namespace irm::rt {

// What a value holds at run time: a tensor, or for a vector-typed value a list of tensors.
struct PirSlot {
  Tensor tensor;
  std::vector<Tensor> elements;
  bool is_vector = false;
};

// The logical name of result `result` of `op` (index `op_index` in its block): the op's
// legacy_var_names entry when it has a non-empty one, else "%<result>@<op_index>".
std::string PirLogicalName(const newir::Operation& op, size_t result, int op_index);

class PirInterpreter;
// How the interpreter runs an op it interprets itself (builtin.*, pd_op.data/feed/fetch, control
// flow): one handler per op name, in one table (PirInterpreter::InterpretedHandler).
using PirOpHandler = Status (PirInterpreter::*)(const newir::Operation& op, int index, int depth);

// What a kernel op needs that does not change from step to step, prepared once per program.
struct PirKernelPlan {
  BoundKernel kernel;
  // The op's table attributes converted (ConvertAttributes), or the conversion's failure,
  // reported when the op runs, as an unprepared run would.
  KernelAttrs attrs;
  Status attrs_status;
  // Per result: its first kernel output and how many (a vector result one per element), and
  // whether it is absent (null type: a null kernel output).
  std::vector<size_t> first_output;
  std::vector<size_t> output_count;
  std::vector<bool> absent;
  std::vector<bool> is_vector;
  size_t num_outputs = 0;
  // A random op: its first result's logical name (its stream and shard) and that stream.
  std::string random_name;
  uint64_t op_identity = 0;
};

// An op prepared once per program: how it runs and where its values live.
struct PirOpPlan {
  static constexpr uint32_t kAbsent = UINT32_MAX;  // an absent optional operand

  const newir::Operation* op = nullptr;
  int index = 0;                       // in its block
  PirOpHandler handler = nullptr;      // an interpreted op
  bool ends_block = false;             // cf.yield
  const OpBinding* binding = nullptr;  // else its binding; null when it has none
  // The slot of each operand (kAbsent when absent) and of each result.
  std::vector<uint32_t> operands;
  std::vector<uint32_t> results;
  // kKernel bindings whose op matches the binding's signature; else null and the op is checked
  // as it runs.
  std::unique_ptr<PirKernelPlan> kernel;
  // The slots of the values of this op's block that no later op of the block reads (directly or
  // from a nested region), emptied after it runs: a step's tensors are freed as they die, as
  // Paddle's executors free dead tensors eagerly, instead of piling up until its end.
  std::vector<uint32_t> last_use_of;
};

// A program prepared once (PirExecutor's constructor): the ops of every block, and a slot for
// every value (every op result and block argument), so that a step keeps its tensors in a
// vector instead of a map and looks no op up by name.
struct PirProgramPlan {
  std::unordered_map<const newir::Block*, std::vector<PirOpPlan>> blocks;
  std::unordered_map<const newir::Value*, uint32_t> slots;
  uint32_t num_slots = 0;
  // By slot, when prepared for an observer: the value's logical name as OpEvent gives it (a
  // result's PirLogicalName at its op's index, a block argument's legacy_var_name or
  // "%arg<index>"), so that observing a step formats no name.
  std::vector<std::string> names;
};

class PirInterpreter {
 public:
  // `job_scope`: the micro-batch scope of a job of a plan (PirExecutor::RunJob); null for Run.
  // `plan` is PreparePlan's for the program being run; `slots` empty slots to reuse (resized to
  // the plan's).
  PirInterpreter(const ExecutorOptions& options, const PirProgramPlan& plan, Scope& persistent,
                 const FeedMap& feeds, Scope* job_scope = nullptr, std::vector<PirSlot> slots = {});

  // Prepares every block of `program` (pir_plan.cc): each op's handler or binding, its kernel
  // bound in `kernels`, its attributes converted, the slots of its values and, `with_names`
  // (an observer will watch), their logical names.
  static PirProgramPlan PreparePlan(const newir::Program& program, const KernelRegistry& kernels,
                                    const PirBindings& bindings, bool with_names);
  // The handler of an op the interpreter runs itself, or null: the one table of those ops.
  static PirOpHandler InterpretedHandler(std::string_view op_name);
  // Whether `handler` ends its block (cf.yield's): RunBlock returns what it passes.
  static bool EndsBlock(PirOpHandler handler) { return handler == &PirInterpreter::RunYield; }

  // Runs the ops of `block` (at nesting depth `depth`) in order. A block of a region ends with its
  // cf.yield, whose operands are returned; the top block returns nothing.
  StatusOr<std::vector<PirSlot>> RunBlock(const newir::Block& block, int depth);
  // The fetches collected, ordered by col (in execution order for equal cols).
  std::vector<Fetch> TakeFetches();
  // The value slots, every one emptied, for a later run to reuse.
  std::vector<PirSlot> TakeSlots();

 private:
  Status RunOp(const PirOpPlan& plan, int depth);
  Status Dispatch(const PirOpPlan& plan, int depth);
  // Reports the op to the observer, its operands and results by the plan's names.
  void Observe(const PirOpPlan& plan, int depth);

  // The interpreted ops (PirOpHandler): builtin.*, pd_op.data/feed/fetch; cf.yield, which
  // collects its operands into yielded_ for RunBlock.
  Status RunParameter(const newir::Operation& op, int index, int depth);
  Status RunSetParameter(const newir::Operation& op, int index, int depth);
  Status RunShadowOutput(const newir::Operation& op, int index, int depth);
  Status RunScopeWrite(const newir::Operation& op, int index, const char* name_attr);
  Status RunCombine(const newir::Operation& op, int index, int depth);
  Status RunSplit(const newir::Operation& op, int index, int depth);
  Status RunSlice(const newir::Operation& op, int index, int depth);
  Status RunFeed(const newir::Operation& op, int index, int depth);
  // A job's pd_op.data of a name the feeds lack: the micro-batch scope's tensor.
  Status RunJobInput(const newir::Operation& op, int index, const std::string& name);
  Status RunFetch(const newir::Operation& op, int index, int depth);
  Status RunYield(const newir::Operation& op, int index, int depth);

  // Ops of the binding table.
  Status RunPassThrough(const newir::Operation& op, int index);
  // `plan.kernel` set: the prepared path; else the op is checked against its binding first.
  Status RunKernelOp(const PirOpPlan& plan);
  // Communication ops, on options_.comm's communicators (pir_comm_ops.cc).
  Status RunCommOp(const newir::Operation& op, const OpBinding& binding, int index);
  StatusOr<AttrValue> ReadMutable(const PirOpPlan& plan, size_t operand, OperandRole role) const;
  StatusOr<DType> KernelDType(const PirOpPlan& plan, const KernelAttrs& attrs) const;
  // Copies `out` into the storage of the tensor `target` (operand `operand`) and returns that
  // storage viewed with out's shape.
  StatusOr<Tensor> WriteInPlace(const newir::Operation& op, int index, size_t operand,
                                size_t result, const Tensor& target, Tensor out) const;
  // The element of add_n_'s vector operand that its result overwrites.
  size_t NamedElement(const newir::Operation& op, int index) const;

  // Control flow (pir_control_flow.cc); interpreted ops too.
  Status RunIf(const newir::Operation& op, int index, int depth);
  Status RunWhile(const newir::Operation& op, int index, int depth);
  // Runs the block of region `region` of `op` and returns what its cf.yield passes.
  StatusOr<std::vector<PirSlot>> RunRegion(const newir::Operation& op, int index, size_t region,
                                           int depth);
  // The value of a condition: a bool tensor holding one value; `what` names it in the error.
  StatusOr<bool> Condition(const newir::Operation& op, int index, const PirSlot& slot,
                           const std::string& what) const;

  // Values, by the value (its slot looked up in the plan) or by a prepared op's slots.
  StatusOr<const PirSlot*> Read(const newir::Operation& op, int index, size_t operand) const;
  StatusOr<const PirSlot*> Read(const PirOpPlan& plan, size_t operand) const;
  StatusOr<const Tensor*> ReadTensor(const newir::Operation& op, int index, size_t operand) const;
  // The slot holding `value`; null for a value of no prepared block.
  const PirSlot* SlotOf(const newir::Value* value) const;
  PirSlot* SlotOf(const newir::Value* value);
  void Bind(const newir::Value* value, Tensor tensor);
  void Bind(const newir::Value* value, PirSlot slot);

  // Diagnostics: a Status at `op` (index `index` in its block) with the path of the regions
  // enclosing it; Locate keeps an unlocated status's code and message (a kernel's error).
  Status Fail(StatusCode code, const newir::Operation& op, int index, std::string message) const;
  Status Locate(const Status& status, const newir::Operation& op, int index) const;
  // "operand 1 ('y')".
  static std::string OperandLabel(const newir::Operation& op, size_t operand);

  // An op whose region is being run: the path of a nested op's location.
  struct Frame {
    size_t region;
    int op_index;
    const newir::Operation* op;
  };

  const ExecutorOptions& options_;
  const KernelRegistry& kernels_;
  const PirProgramPlan& plan_;
  Scope& persistent_;
  const FeedMap& feeds_;
  Scope* job_scope_;
  // By the plan's slot of each value.
  std::vector<PirSlot> slots_;
  std::vector<std::pair<int32_t, Fetch>> fetches_;
  // What the last cf.yield passed (RunYield), for RunBlock to return.
  std::vector<PirSlot> yielded_;
  // Reused by every kernel op of the run, so that a step allocates no call vectors per op.
  KernelCall call_;
  std::vector<Tensor> outputs_;
  std::vector<Frame> frames_;
};

}  // namespace irm::rt
