// LegacyExecutor: runs legacy (ProgramDesc) programs op by op, as Paddle's legacy executor does,
// on the shared kernels. Ops reach kernels through the legacy binding table (legacy_bindings.h),
// never through the translator's tables (docs/architecture.md, invariant 1); feed, fetch,
// conditional_block and while are the executor's own.
//
// Vars live where Paddle's executor puts them: persistable vars (parameters, optimizer state,
// counters) in the caller's persistent scope; the step's other vars in a child scope made for the
// Run and dropped after it; a sub-block's own vars in a child scope of the op that runs it, while
// its writes to vars declared in an enclosing block land in that block's scope. An op that writes
// a var it also reads (legacy in-place: ParamOut is Param, Out is X) stores the result into the
// var's storage when dtype and shape are unchanged, as Paddle's kernels reuse the output's
// allocation and as the translated in-place op does; every other write rebinds the var to the
// kernel's fresh tensor. Feeds are copied in and fetches copied out, so neither aliases the step.
// The plan is read-only once built: Runs on different persistent scopes may go on at once.
// RunJob keeps the step's other vars in the caller's micro-batch scope instead, where the
// micro-batch's later jobs read them.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/program.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/legacy_plan.h"

namespace irm::rt {

class LegacyExecutor : public Executor {
 public:
  // Plans `program` (legacy_plan.h) and keeps only the plan: the program may go away afterwards.
  // A program that cannot be planned makes every Run fail with that error (located) before any
  // op runs; FeedSpecs and FetchNames are then empty.
  LegacyExecutor(const oldir::Program& program, ExecutorOptions options);

  StatusOr<std::vector<Fetch>> Run(Scope& persistent, const FeedMap& feeds) override;
  // The step's non-persistable vars live in `job_scope` and stay there after the job.
  StatusOr<std::vector<Fetch>> RunJob(Scope& persistent, Scope& job_scope,
                                      const FeedMap& feeds) override;
  std::vector<FeedSpec> FeedSpecs() const override;
  int64_t IndexBound(std::string_view name) const override;
  std::vector<std::string> FetchNames() const override;

  // OK, or the planning error every Run returns.
  const Status& plan_status() const { return plan_status_; }

 private:
  // A block being run and the scope holding its own vars.
  struct Frame {
    int block;
    Scope* scope;
  };
  struct FetchedTensor {
    int64_t col;
    Fetch fetch;
  };
  // What one Run carries from op to op.
  struct RunState {
    Scope& persistent;
    const FeedMap& feeds;
    std::vector<Frame> frames;
    std::vector<FetchedTensor> fetched;
    // Run (not RunJob): drop each block-0 var from the step's scope after its last use, as
    // Paddle's executor frees a step's dead tensors eagerly, so that a step's memory is reused
    // while it runs instead of piling up until its end. RunJob keeps them for later jobs.
    bool drop_dead_vars = false;
    // Reused by every kernel op of the run, so that a step allocates no call vectors per op.
    KernelCall call;
    std::vector<Tensor> results;
    Scope& scope() const { return *frames.back().scope; }
  };

  // Run and RunJob: block 0 with its vars in `step`, a child of `persistent`.
  StatusOr<std::vector<Fetch>> RunIn(Scope& persistent, Scope& step, const FeedMap& feeds,
                                     bool drop_dead_vars) const;
  Status RunBlock(int block, Scope& scope, RunState& state) const;
  Status RunOp(const PlannedOp& op, RunState& state) const;
  // `written`, when given, records which outputs the kernel produced.
  Status RunKernelOp(const PlannedOp& op, RunState& state, std::vector<bool>* written) const;
  Status RunFeed(const PlannedOp& op, RunState& state) const;
  // A program without feed ops: its data vars from `feeds`, into the step's scope.
  Status FeedByName(Scope& step, const FeedMap& feeds) const;
  Status RunFetch(const PlannedOp& op, RunState& state) const;
  // legacy_control_flow.cc
  Status RunConditionalBlock(const PlannedOp& op, RunState& state) const;
  Status RunWhile(const PlannedOp& op, RunState& state) const;
  Status RunSubBlock(const PlannedOp& op, RunState& state) const;
  // legacy_comm_ops.cc
  Status RunCommOp(const PlannedOp& op, RunState& state) const;

  // The tensor of a var the op reads: kNotFound naming the var when no scope has it.
  StatusOr<const Tensor*> Read(const PlannedOp& op, const PlannedVar& var,
                               const RunState& state) const;
  void Write(const PlannedVar& var, Tensor tensor, RunState& state) const;
  // The value an input's tensors give an attribute (ShapeTensor, ScaleTensor, AxisTensor, ...).
  StatusOr<AttrValue> TensorAttrValue(const PlannedOp& op, const PlannedTensorAttr& attr,
                                      const RunState& state) const;
  // A one-element bool condition's value; kInvalid naming the var for any other tensor.
  StatusOr<bool> ScalarCondition(const PlannedOp& op, const PlannedVar& var,
                                 const RunState& state) const;
  void Observe(const PlannedOp& op, const RunState& state, const std::vector<bool>& written) const;

  ExecutorOptions options_;
  const KernelRegistry* kernels_;
  Status plan_status_;
  LegacyPlan plan_;
};

// A failure at `op`: its location (plus `var` when given), `code` and `message`.
Status LegacyOpError(const PlannedOp& op, StatusCode code, std::string message,
                     const std::string& var = "");

}  // namespace irm::rt
