// PirExecutor: runs a new-IR program (newir::Program) op by op on the shared kernels, binding each
// pd_op to its kernel through the new-IR binding table (pir_bindings.h) — never through the
// translator's tables (docs/architecture.md, invariant 1).
//
// Values map to tensors; a vector-typed value (builtin.combine, split's result) maps to a list of
// tensors. Parameters are the tensors of the persistent Scope and share their storage, so an
// in-place op on a parameter (adamw_, increment_, assign_out_) updates the Scope as PIR's in-place
// semantics mean, without any set_parameter. builtin.set_parameter and builtin.shadow_output write
// the Scope; pd_op.data and pd_op.feed read the feeds (copied, so that in-place ops on them never
// change the caller's tensors); pd_op.fetch collects copies, ordered by col. pd_op.if runs one of
// its regions and pd_op.while its body while the condition holds; a region's values are visible
// to the ops nested in it. Communication ops need the multi-rank runtime and fail here.
//
// Every failure is a Status located at the op: the file (options.file), the op's index in its
// block and its name, and for an op nested in regions the path up from it in Location::detail,
// as the verifier writes it ("in region 0 of op 5 (pd_op.if)").
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "newir/program.h"
#include "reference_runtime/executor.h"

namespace irm::rt {

struct PirProgramPlan;  // pir_interpreter.h
struct PirSlot;         // pir_interpreter.h

class PirExecutor : public Executor {
 public:
  // `program` must be verified (newir::VerifyProgram), outlive the executor and stay as it is
  // while the executor lives: it is kept by reference, not copied, and prepared once here (each
  // op's handler or binding, its kernel, its converted attributes, a slot per value) for every
  // run to reuse.
  PirExecutor(const newir::Program& program, ExecutorOptions options);
  ~PirExecutor() override;

  StatusOr<std::vector<Fetch>> Run(Scope& persistent, const FeedMap& feeds) override;
  // builtin.shadow_output writes `job_scope` (a name `persistent` holds: there), and pd_op.data /
  // pd_op.feed read a name the feeds lack from `job_scope`: what an earlier job of the
  // micro-batch handed on.
  StatusOr<std::vector<Fetch>> RunJob(Scope& persistent, Scope& job_scope,
                                      const FeedMap& feeds) override;
  // pd_op.data and pd_op.feed ops of the top block, in program order: the name, the declared
  // dtype and shape (-1 for a dynamic dim), and for an integer input read as the ids of a
  // pd_op.embedding the rows of its weight.
  std::vector<FeedSpec> FeedSpecs() const override;
  int64_t IndexBound(std::string_view name) const override;
  // The names of the top block's pd_op.fetch ops, ordered by col.
  std::vector<std::string> FetchNames() const override;

 private:
  // Run (job_scope null) and RunJob.
  StatusOr<std::vector<Fetch>> RunIn(Scope& persistent, Scope* job_scope, const FeedMap& feeds);

  const newir::Program& program_;
  ExecutorOptions options_;
  std::unique_ptr<const PirProgramPlan> plan_;
  // The value slots of the last run, emptied, for the next one: a step of a program of many
  // values would otherwise allocate, page in and free a slot per value every time. Null while
  // a run holds them (a concurrent run makes its own).
  std::mutex spare_mutex_;
  std::unique_ptr<std::vector<PirSlot>> spare_slots_;
};

// Whether the executor runs `op_name` itself (builtin.*, cf.yield, pd_op.data/feed/fetch,
// pd_op.if/while) rather than through the binding table: a name of its interpreted-op table.
bool IsInterpretedOp(std::string_view op_name);

}  // namespace irm::rt
