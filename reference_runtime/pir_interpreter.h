// The state of one run of a new-IR program (PirExecutor::Run): the tensors of the values computed
// so far, the fetches collected, and where in the nesting of regions the run is, for diagnostics.
// Internal to the executor: pir_executor.cc runs blocks, builtin ops, feeds, fetches and kernel
// ops; pir_control_flow.cc runs pd_op.if and pd_op.while.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "newir/block.h"
#include "newir/operation.h"
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

class PirInterpreter {
 public:
  // `job_scope`: the micro-batch scope of a job of a plan (PirExecutor::RunJob); null for Run.
  PirInterpreter(const ExecutorOptions& options, Scope& persistent, const FeedMap& feeds,
                 Scope* job_scope = nullptr);

  // Runs the ops of `block` (at nesting depth `depth`) in order. A block of a region ends with its
  // cf.yield, whose operands are returned; the top block returns nothing.
  StatusOr<std::vector<PirSlot>> RunBlock(const newir::Block& block, int depth);
  // The fetches collected, ordered by col (in execution order for equal cols).
  std::vector<Fetch> TakeFetches();

 private:
  Status RunOp(const newir::Operation& op, int index, int depth);
  Status Dispatch(const newir::Operation& op, int index, int depth);
  // Reports the op to the observer; remembers its results' logical names for their readers.
  void Observe(const newir::Operation& op, int index, int depth);
  // The logical name of an operand's value (OpEvent): a result's as observed, a block argument's
  // legacy_var_name or "%arg<index>".
  std::string InputName(const newir::Value& value) const;

  // builtin.*, pd_op.data/feed/fetch.
  Status RunParameter(const newir::Operation& op, int index);
  Status RunScopeWrite(const newir::Operation& op, int index, const char* name_attr);
  Status RunCombine(const newir::Operation& op, int index);
  Status RunSplit(const newir::Operation& op, int index);
  Status RunSlice(const newir::Operation& op, int index);
  Status RunFeed(const newir::Operation& op, int index);
  // A job's pd_op.data of a name the feeds lack: the micro-batch scope's tensor.
  Status RunJobInput(const newir::Operation& op, int index, const std::string& name);
  Status RunFetch(const newir::Operation& op, int index);

  // Ops of the binding table.
  Status RunPassThrough(const newir::Operation& op, int index);
  Status RunKernelOp(const newir::Operation& op, const OpBinding& binding, int index);
  // Communication ops, on options_.comm's communicators (pir_comm_ops.cc).
  Status RunCommOp(const newir::Operation& op, const OpBinding& binding, int index);
  StatusOr<AttrValue> ReadMutable(const newir::Operation& op, int index, size_t operand,
                                  OperandRole role) const;
  StatusOr<DType> KernelDType(const newir::Operation& op, const OpBinding& binding, int index,
                              const KernelAttrs& attrs) const;
  // Copies `out` into the storage of the tensor `target` (operand `operand`) and returns that
  // storage viewed with out's shape.
  StatusOr<Tensor> WriteInPlace(const newir::Operation& op, int index, size_t operand,
                                size_t result, const Tensor& target, Tensor out) const;
  // The element of add_n_'s vector operand that its result overwrites.
  size_t NamedElement(const newir::Operation& op, int index) const;

  // Control flow (pir_control_flow.cc).
  Status RunIf(const newir::Operation& op, int index, int depth);
  Status RunWhile(const newir::Operation& op, int index, int depth);
  // Runs the block of region `region` of `op` and returns what its cf.yield passes.
  StatusOr<std::vector<PirSlot>> RunRegion(const newir::Operation& op, int index, size_t region,
                                           int depth);
  // The value of a condition: a bool tensor holding one value; `what` names it in the error.
  StatusOr<bool> Condition(const newir::Operation& op, int index, const PirSlot& slot,
                           const std::string& what) const;

  // Values.
  StatusOr<const PirSlot*> Read(const newir::Operation& op, int index, size_t operand) const;
  StatusOr<const Tensor*> ReadTensor(const newir::Operation& op, int index, size_t operand) const;
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
  const PirBindings& bindings_;
  Scope& persistent_;
  const FeedMap& feeds_;
  Scope* job_scope_;
  // Looked up by value, never iterated: its order cannot reach a result.
  std::unordered_map<const newir::Value*, PirSlot> slots_;
  std::vector<std::pair<int32_t, Fetch>> fetches_;
  // The logical names of the results observed so far; filled only when an observer is set.
  std::unordered_map<const newir::Value*, std::string> names_;
  std::vector<Frame> frames_;
};

}  // namespace irm::rt
