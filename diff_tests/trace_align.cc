// Trace alignment by logical name and occurrence (trace_align.h).
#include "diff_tests/trace_align.h"

#include <algorithm>
#include <map>

namespace irm::diff {

bool IsWrite(const rt::OpRecord& record, const rt::OutputRecord& output) {
  if (!output.produced) return false;
  return record.op_type != "builtin.parameter" && record.op_type != "pd_op.fetch";
}

bool IsUnnamed(const std::string& name) { return !name.empty() && name[0] == '%'; }

namespace {

// Every write of a trace with its key, in execution order.
std::vector<UnalignedWrite> Writes(const Trace& trace) {
  std::map<AlignKey, int> seen;  // key with occurrence 0 -> writes so far
  std::vector<UnalignedWrite> writes;
  for (size_t r = 0; r < trace.size(); ++r) {
    const rt::OpRecord& record = trace[r];
    for (size_t o = 0; o < record.outputs.size(); ++o) {
      const rt::OutputRecord& output = record.outputs[o];
      if (!IsWrite(record, output)) continue;
      AlignKey key{record.rank, record.step, record.micro_batch, output.name, 0};
      const int occurrence = seen[key]++;
      key.occurrence = occurrence;
      writes.push_back({std::move(key), {r, o}});
    }
  }
  return writes;
}

}  // namespace

Alignment AlignTraces(const Trace& old_trace, const Trace& new_trace) {
  Alignment alignment;
  std::map<AlignKey, TensorRef> new_writes;
  for (UnalignedWrite& w : Writes(new_trace)) {
    if (IsUnnamed(w.key.name)) {
      alignment.unnamed_new.push_back(std::move(w));
    } else {
      new_writes.emplace(std::move(w.key), w.ref);
    }
  }
  for (UnalignedWrite& w : Writes(old_trace)) {
    auto it = new_writes.find(w.key);
    if (it == new_writes.end()) {
      alignment.old_only.push_back(std::move(w));
      continue;
    }
    alignment.pairs.push_back({std::move(w.key), w.ref, it->second});
    new_writes.erase(it);
  }
  // What is left, in the new trace's order.
  for (auto& [key, ref] : new_writes) alignment.new_only.push_back({key, ref});
  std::sort(alignment.new_only.begin(), alignment.new_only.end(),
            [](const UnalignedWrite& a, const UnalignedWrite& b) { return a.ref < b.ref; });
  return alignment;
}

WriteIndex::WriteIndex(const Trace& trace) {
  std::map<std::pair<int, std::string>, std::vector<TensorRef>> writes;
  for (size_t r = 0; r < trace.size(); ++r) {
    for (size_t o = 0; o < trace[r].outputs.size(); ++o) {
      if (!IsWrite(trace[r], trace[r].outputs[o])) continue;
      writes[{trace[r].rank, trace[r].outputs[o].name}].push_back({r, o});
    }
  }
  writes_.assign(std::make_move_iterator(writes.begin()), std::make_move_iterator(writes.end()));
}

std::optional<TensorRef> WriteIndex::LatestBefore(int rank, const std::string& name,
                                                  size_t before) const {
  const std::pair<int, std::string> key{rank, name};
  auto it = std::lower_bound(writes_.begin(), writes_.end(), key,
                             [](const auto& entry, const auto& k) { return entry.first < k; });
  if (it == writes_.end() || it->first != key) return std::nullopt;
  const std::vector<TensorRef>& refs = it->second;
  // The first write at or after `before`; the one before it is the latest before.
  auto after = std::lower_bound(refs.begin(), refs.end(), TensorRef{before, 0});
  if (after == refs.begin()) return std::nullopt;
  return *(after - 1);
}

}  // namespace irm::diff
