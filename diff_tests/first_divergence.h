// Comparing the aligned tensors of two traces and finding the first divergence (docs/parity.md):
// the earliest op of the old trace, in execution order, with an output that differs from its
// aligned twin while every input it read matched — the latest write of each input name before the
// op on each side; an input no op wrote (a feed, a parameter) matches, since both runs start from
// equal feeds and parameters. With hashes only, the exact tier decides by hash; the other tiers
// need the kept tensors (a pair without them is not compared).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diff_tests/tensor_compare.h"
#include "diff_tests/trace_align.h"

namespace irm::diff {

struct PairResult {
  bool compared = false;  // false: the tier needs tensors that were not kept
  bool by_hash = false;   // decided by dtype, shape and hash alone (no metrics)
  Comparison comparison;
};

// The output `ref` of `trace` as a tensor comparison needs it: its kept copy, or null.
const rt::Tensor* KeptTensor(const Trace& trace, const TensorRef& ref);

// Compares the old and new outputs under `tier` (new is the candidate, old the reference).
PairResult CompareOutputs(const Trace& old_trace, const TensorRef& old_ref, const Trace& new_trace,
                          const TensorRef& new_ref, Tier tier);

// One result per aligned pair, in the alignment's order.
std::vector<PairResult> CompareAligned(const Trace& old_trace, const Trace& new_trace,
                                       const Alignment& alignment, Tier tier);

struct InputCheck {
  std::string name;
  std::optional<TensorRef> old_write;  // nullopt: a feed or parameter no traced op wrote
  std::optional<TensorRef> new_write;
  bool matched = false;
};

struct FirstDivergence {
  size_t old_record = 0;
  size_t new_record = 0;
  // The pairs of the op's outputs that differ (indexes into the alignment's pairs), first first.
  std::vector<size_t> differing_pairs;
  std::vector<InputCheck> inputs;
  // False when every differing op read a differing input (its writer not aligned, say): the
  // earliest differing op is reported instead.
  bool inputs_matched = true;
  // Aligned tensors after this op's that differ too.
  int later_differing = 0;
};

std::optional<FirstDivergence> FindFirstDivergence(const Trace& old_trace, const Trace& new_trace,
                                                   const Alignment& alignment,
                                                   const std::vector<PairResult>& results,
                                                   Tier tier);

}  // namespace irm::diff
