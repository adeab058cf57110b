// Aligning the per-op traces of two runs of one computation (the legacy program and its new-IR
// twin): a tensor is identified by (rank, step, micro-batch, logical name, occurrence) — names are
// rewritten in place (x = relu(x), ParamOut = Param), so the k-th write of `x` in the old trace
// pairs with the k-th write of `x` in the new one. New-IR values without a legacy name
// ("%<result>@<op>") and names that only one side writes are counted and listed, not compared.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "reference_runtime/op_trace.h"

namespace irm::diff {

using Trace = std::vector<rt::OpRecord>;

// An output of a record of a trace.
struct TensorRef {
  size_t record = 0;
  size_t output = 0;
  auto operator<=>(const TensorRef&) const = default;
};

struct AlignKey {
  int rank = 0;
  int step = 0;
  int micro_batch = 0;
  std::string name;
  int occurrence = 0;  // 0: the first write of the name under (rank, step, micro-batch)
  auto operator<=>(const AlignKey&) const = default;
};

struct AlignedPair {
  AlignKey key;
  TensorRef old_ref;
  TensorRef new_ref;
};

struct UnalignedWrite {
  AlignKey key;
  TensorRef ref;
};

struct Alignment {
  std::vector<AlignedPair> pairs;  // in the old trace's execution order
  std::vector<UnalignedWrite> old_only;
  std::vector<UnalignedWrite> new_only;
  std::vector<UnalignedWrite> unnamed_new;  // new-IR values without a legacy name
};

// Whether the output is a write of its name: a produced output of an op that computes it. The
// new IR's builtin.parameter (it reads the Scope) and pd_op.fetch (a copy for the caller) write
// nothing.
bool IsWrite(const rt::OpRecord& record, const rt::OutputRecord& output);
// "%0@12": a new-IR value the translator gave no legacy name.
bool IsUnnamed(const std::string& name);

Alignment AlignTraces(const Trace& old_trace, const Trace& new_trace);

// The latest write of a name before a record, per rank: what an op read.
class WriteIndex {
 public:
  explicit WriteIndex(const Trace& trace);
  // The last write of `name` on `rank` in a record before `before`; nullopt when none (a feed, or
  // a parameter the traced runs never wrote).
  std::optional<TensorRef> LatestBefore(int rank, const std::string& name, size_t before) const;

 private:
  std::vector<std::pair<std::pair<int, std::string>, std::vector<TensorRef>>> writes_;  // sorted
};

}  // namespace irm::diff
