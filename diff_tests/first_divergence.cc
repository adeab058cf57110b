// Pair comparison and first-divergence search (first_divergence.h).
#include "diff_tests/first_divergence.h"

#include <map>

#include <fmt/format.h>

namespace irm::diff {

const rt::Tensor* KeptTensor(const Trace& trace, const TensorRef& ref) {
  const rt::OutputRecord& out = trace[ref.record].outputs[ref.output];
  return out.tensor.has_value() ? &*out.tensor : nullptr;
}

PairResult CompareOutputs(const Trace& old_trace, const TensorRef& old_ref, const Trace& new_trace,
                          const TensorRef& new_ref, Tier tier) {
  PairResult result;
  const rt::OutputRecord& a = new_trace[new_ref.record].outputs[new_ref.output];
  const rt::OutputRecord& b = old_trace[old_ref.record].outputs[old_ref.output];
  const rt::Tensor* ta = KeptTensor(new_trace, new_ref);
  const rt::Tensor* tb = KeptTensor(old_trace, old_ref);
  if (ta != nullptr && tb != nullptr) {
    result.compared = true;
    result.comparison = CompareTensors(*ta, *tb, tier);
    return result;
  }
  // Without both tensors: what the record says.
  if (a.dtype != b.dtype) {
    result.compared = true;
    result.by_hash = true;
    result.comparison.reason =
        fmt::format("dtype {} vs {}", DTypeName(a.dtype), DTypeName(b.dtype));
    return result;
  }
  if (a.shape != b.shape) {
    result.compared = true;
    result.by_hash = true;
    result.comparison.reason =
        fmt::format("shape {} vs {}", rt::ShapeToString(a.shape), rt::ShapeToString(b.shape));
    return result;
  }
  // Equal bits pass every tier; different bits fail only the exact one without the tensors.
  if (a.hash == b.hash || tier == Tier::kExact) {
    result.compared = true;
    result.by_hash = true;
    result.comparison.pass = a.hash == b.hash;
    result.comparison.metrics.bits_equal = result.comparison.pass;
    if (!result.comparison.pass) {
      result.comparison.reason = fmt::format("hash {:016x} vs {:016x}", a.hash, b.hash);
    }
  }
  return result;
}

std::vector<PairResult> CompareAligned(const Trace& old_trace, const Trace& new_trace,
                                       const Alignment& alignment, Tier tier) {
  std::vector<PairResult> results;
  results.reserve(alignment.pairs.size());
  for (const AlignedPair& pair : alignment.pairs) {
    results.push_back(CompareOutputs(old_trace, pair.old_ref, new_trace, pair.new_ref, tier));
  }
  return results;
}

namespace {

bool Differs(const PairResult& r) { return r.compared && !r.comparison.pass; }

}  // namespace

std::optional<FirstDivergence> FindFirstDivergence(const Trace& old_trace, const Trace& new_trace,
                                                   const Alignment& alignment,
                                                   const std::vector<PairResult>& results,
                                                   Tier tier) {
  // The differing pairs of each old record, in output order (pairs are in old execution order).
  std::map<size_t, std::vector<size_t>> differing_by_record;
  for (size_t p = 0; p < alignment.pairs.size(); ++p) {
    if (Differs(results[p])) differing_by_record[alignment.pairs[p].old_ref.record].push_back(p);
  }
  if (differing_by_record.empty()) return std::nullopt;
  const WriteIndex old_writes(old_trace);
  const WriteIndex new_writes(new_trace);
  std::map<std::pair<TensorRef, TensorRef>, size_t> pair_of;
  for (size_t p = 0; p < alignment.pairs.size(); ++p) {
    pair_of[{alignment.pairs[p].old_ref, alignment.pairs[p].new_ref}] = p;
  }

  auto check = [&](size_t record, const std::vector<size_t>& pairs) {
    FirstDivergence d;
    d.old_record = record;
    d.new_record = alignment.pairs[pairs.front()].new_ref.record;
    d.differing_pairs = pairs;
    const rt::OpRecord& op = old_trace[record];
    for (const std::string& name : op.inputs) {
      InputCheck in;
      in.name = name;
      in.old_write = old_writes.LatestBefore(op.rank, name, record);
      in.new_write = new_writes.LatestBefore(op.rank, name, d.new_record);
      if (!in.old_write && !in.new_write) {
        in.matched = true;
      } else if (in.old_write && in.new_write) {
        auto it = pair_of.find({*in.old_write, *in.new_write});
        const PairResult r = it != pair_of.end() ? results[it->second]
                                                 : CompareOutputs(old_trace, *in.old_write,
                                                                  new_trace, *in.new_write, tier);
        in.matched = r.compared && r.comparison.pass;
      }
      if (!in.matched) d.inputs_matched = false;
      d.inputs.push_back(std::move(in));
    }
    return d;
  };

  std::optional<FirstDivergence> found;
  for (const auto& [record, pairs] : differing_by_record) {
    FirstDivergence d = check(record, pairs);
    if (d.inputs_matched) {
      found = std::move(d);
      break;
    }
  }
  if (!found)
    found = check(differing_by_record.begin()->first, differing_by_record.begin()->second);
  for (const auto& [record, pairs] : differing_by_record) {
    if (record > found->old_record) found->later_differing += static_cast<int>(pairs.size());
  }
  return found;
}

}  // namespace irm::diff
