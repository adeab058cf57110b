// What the two executors share: the Scope of named tensors (a program's persistable vars —
// parameters, optimizer state, counters — live in one Scope that the startup program, the main
// program and every step share), feeds and fetches by name, the per-op observer hook, and the
// Executor interface. LegacyExecutor (old IR) and PirExecutor (new IR) implement it, each with its
// own op binding table (docs/architecture.md, invariant 1); run.h drives either through it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "reference_runtime/kernel.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

struct CommContext;  // reference_runtime/comm/comm_context.h

// Named tensors, over an enclosing scope (legacy sub-blocks run in child scopes: a name they do
// not declare is looked up, and written, where an enclosing scope has it).
class Scope {
 public:
  explicit Scope(Scope* parent = nullptr) : parent_(parent) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // This scope, then the enclosing ones; null when no scope has the name.
  Tensor* Find(std::string_view name);
  const Tensor* Find(std::string_view name) const;
  Tensor* FindLocal(std::string_view name);
  // Writes where the name already lives (this scope or an enclosing one), else here.
  void Set(std::string_view name, Tensor tensor);
  // Writes here, hiding an enclosing scope's tensor of the same name.
  void SetLocal(std::string_view name, Tensor tensor);
  bool Erase(std::string_view name);
  // Names held by this scope (not the enclosing ones), sorted.
  std::vector<std::string> LocalNames() const;
  Scope* parent() const { return parent_; }

 private:
  // Hashes std::string and std::string_view alike, so a look-up by view builds no string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  Scope* parent_;
  // Hashed, not ordered: every op reads and writes here, and a step's scope holds each of its
  // vars. Never iterated in its own order (LocalNames sorts), so the order reaches no result.
  std::unordered_map<std::string, Tensor, NameHash, std::equal_to<>> tensors_;
};

using FeedMap = std::map<std::string, Tensor, std::less<>>;

struct Fetch {
  std::string name;
  Tensor tensor;
};

// A program input as declared: dtype and shape (-1 = any size), and for integer inputs that index
// something (token ids into an embedding table, class labels of a cross entropy) the exclusive
// upper bound of valid values (0 when unknown), so that random feeds are valid feeds.
struct FeedSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  int64_t index_bound = 0;
};

// One executed op, as the observer sees it. Outputs are in the op's output order: the logical
// name (the legacy var name on both sides; a new-IR value without a recorded legacy name is
// "%<result index>@<op index>") and the tensor (null for an output not produced). Inputs are the
// logical names of what the op read, in input order, named by the same rule (a new-IR block
// argument without a legacy name is "%arg<index>"); absent optional inputs are left out.
struct OpEvent {
  int block = 0;     // legacy block index; new IR: nesting depth (0 = top block)
  int op_index = 0;  // index in its block
  std::string_view op_type;
  std::vector<std::string_view> inputs;
  std::vector<std::pair<std::string_view, const Tensor*>> outputs;
};
using OpObserver = std::function<void(const OpEvent&)>;

struct ExecutorOptions {
  const KernelRegistry* kernels = nullptr;  // null: KernelRegistry::Global()
  GemmMode gemm = GemmMode::kBlas;
  // The program's random seed: random ops whose seed attribute is 0 use it.
  uint64_t seed = 0;
  // Called after every op when set; costs nothing when unset.
  const OpObserver* observer = nullptr;
  // Names the program in diagnostics.
  std::string file;
  // This rank's communicators and call-site fields (comm/comm_context.h), kept by the caller;
  // null: communication ops fail as needing the multi-rank runtime.
  const CommContext* comm = nullptr;
  // The vars that are shards of a serial tensor, by name, and where each lies in it (a bundle
  // rank's shards.json): a random initialiser whose output is one draws the serial tensor's
  // numbers for its elements (KernelContext::shard). An op's output is found by the name of its
  // first output: the legacy var name, and in a new-IR program the result's logical name, which
  // the translator records as the same legacy name. (`= {}`: initialisers that leave it out need
  // not name it under -Wmissing-field-initializers.)
  std::map<std::string, OutputShard, std::less<>> shards = {};
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the program once: feeds by name; persistable vars (parameters) read from and written to
  // `persistent`; returns the fetched tensors in fetch order. An error names the op (location with
  // block, op index and type): kNotFound for a missing parameter or feed, kInvalidArgument for a
  // feed of the wrong dtype or shape, kInvalid for what a kernel rejects (shapes that disagree),
  // kUnimplemented for an op without a binding or kernel.
  virtual StatusOr<std::vector<Fetch>> Run(Scope& persistent, const FeedMap& feeds) = 0;
  // Runs the program as one job of a plan (plan_executor.h): as Run, but the job's other values
  // live in `job_scope`, a child of `persistent` that holds its micro-batch's values across the
  // micro-batch's jobs, so a later job reads by name what an earlier one wrote (Paddle runs each
  // job in its micro-batch's scope). kInvalidArgument when `job_scope`'s parent is not
  // `persistent`; this default: kUnimplemented.
  virtual StatusOr<std::vector<Fetch>> RunJob(Scope& persistent, Scope& job_scope,
                                              const FeedMap& feeds);
  // The inputs Run expects and the names it fetches, in order.
  virtual std::vector<FeedSpec> FeedSpecs() const = 0;
  // The exclusive bound of the integers an op of the program reads `name` as (ids, hard
  // labels), fed by this program or handed on by an earlier job; 0 when no op bounds it.
  virtual int64_t IndexBound(std::string_view /*name*/) const { return 0; }
  virtual std::vector<std::string> FetchNames() const = 0;
};

// RunJob's precondition: OK when `job_scope` is a child of `persistent`.
Status CheckJobScope(const Scope& persistent, const Scope& job_scope);

}  // namespace irm::rt
