// The comparison steps both parity drivers share (parity_compare.h).
#include "diff_tests/parity_compare.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "oldir/dump.h"

namespace irm::diff {

VarView DefinedVars(const rt::Scope& scope) {
  VarView vars;
  for (const std::string& name : scope.LocalNames()) {
    const rt::Tensor* t = scope.Find(name);
    if (t != nullptr && t->defined()) vars[name] = t;
  }
  return vars;
}

VarView ViewOf(const std::map<std::string, rt::Tensor>& vars) {
  VarView view;
  for (const auto& [name, t] : vars) view[name] = &t;
  return view;
}

void CompareFetches(int rank, int step, const std::vector<rt::Fetch>& old_fetches,
                    const std::vector<rt::Fetch>& new_fetches, std::string_view unit,
                    ParityReport& report) {
  const std::vector<rt::Fetch>& a = old_fetches;
  const std::vector<rt::Fetch>& b = new_fetches;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    ComparedTensor t;
    t.group = TensorGroup::kFetch;
    t.rank = rank;
    t.step = step;
    t.name = i < a.size() ? a[i].name : b[i].name;
    if (i >= a.size() || i >= b.size()) {
      t.comparison.reason = i >= a.size() ? fmt::format("fetched only by the new-IR {}", unit)
                                          : fmt::format("fetched only by the legacy {}", unit);
    } else if (a[i].name != b[i].name) {
      t.comparison.reason = fmt::format("fetch {} is '{}' vs '{}'", i, b[i].name, a[i].name);
    } else {
      t.comparison = CompareTensors(b[i].tensor, a[i].tensor, report.tier);
    }
    report.tensors.push_back(std::move(t));
  }
}

void CompareVars(int rank, int step, const VarView& old_vars, const VarView& new_vars,
                 ParityReport& report) {
  std::set<std::string> names;
  for (const auto& [name, t] : old_vars) names.insert(name);
  for (const auto& [name, t] : new_vars) names.insert(name);
  for (const std::string& name : names) {
    ComparedTensor t;
    t.group = TensorGroup::kParameter;
    t.rank = rank;
    t.step = step;
    t.name = name;
    auto a = old_vars.find(name);
    auto b = new_vars.find(name);
    if (a == old_vars.end()) {
      t.comparison.reason = "only in the new-IR scope";
    } else if (b == new_vars.end()) {
      t.comparison.reason = "only in the legacy scope";
    } else {
      t.comparison = CompareTensors(*b->second, *a->second, report.tier);
    }
    report.tensors.push_back(std::move(t));
  }
}

std::string OldOpLabel(const rt::OpRecord& r) {
  return fmt::format("{} (block {}, op {})", r.op_type, r.block, r.op_index);
}

std::string NewOpLabel(const rt::OpRecord& r) {
  return r.block == 0 ? fmt::format("{} (op {})", r.op_type, r.op_index)
                      : fmt::format("{} (depth {}, op {})", r.op_type, r.block, r.op_index);
}

void AppendIntermediates(const Alignment& alignment, const std::vector<PairResult>& results,
                         const Trace& old_trace, const Trace& new_trace, ParityReport& report) {
  for (size_t p = 0; p < alignment.pairs.size(); ++p) {
    const AlignedPair& pair = alignment.pairs[p];
    ComparedTensor t;
    t.group = TensorGroup::kIntermediate;
    t.rank = pair.key.rank;
    t.step = pair.key.step;
    t.micro_batch = pair.key.micro_batch;
    t.name = pair.key.name;
    t.occurrence = pair.key.occurrence;
    t.old_op = OldOpLabel(old_trace[pair.old_ref.record]);
    t.new_op = NewOpLabel(new_trace[pair.new_ref.record]);
    t.compared = results[p].compared;
    t.by_hash = results[p].by_hash;
    t.comparison = results[p].comparison;
    report.tensors.push_back(std::move(t));
  }
}

namespace {

void AppendEntries(const std::vector<UnalignedWrite>& writes, const Trace& trace,
                   std::vector<UnalignedEntry>& entries) {
  for (const UnalignedWrite& w : writes) {
    entries.push_back(
        {w.key.rank, w.key.step, w.key.micro_batch, w.key.name, trace[w.ref.record].op_type});
  }
}

}  // namespace

void AppendUnaligned(const Alignment& alignment, const Trace& old_trace, const Trace& new_trace,
                     ParityReport& report) {
  AppendEntries(alignment.old_only, old_trace, report.old_only);
  AppendEntries(alignment.new_only, new_trace, report.new_only);
  AppendEntries(alignment.unnamed_new, new_trace, report.unnamed_new);
}

rt::KeepPredicate KeepNames(std::set<std::string> names, rt::KeepPredicate also) {
  return [names = std::move(names), also = std::move(also)](std::string_view name) {
    return names.contains(std::string(name)) || also(name);
  };
}

DivergenceKeep KeepForDivergence(const rt::OpRecord& old_op, const rt::OpRecord& new_op,
                                 const rt::KeepPredicate& also) {
  std::set<std::string> old_names, new_names;
  old_names.insert(old_op.inputs.begin(), old_op.inputs.end());
  for (const rt::OutputRecord& o : old_op.outputs) old_names.insert(o.name);
  for (const rt::OutputRecord& o : new_op.outputs) new_names.insert(o.name);
  return {KeepNames(std::move(old_names), also), KeepNames(std::move(new_names), also)};
}

void RecompareDiffering(const FirstDivergence& divergence, const Alignment& alignment,
                        const Trace& old_trace, const Trace& new_trace, Tier tier,
                        std::vector<PairResult>& results) {
  for (size_t p : divergence.differing_pairs) {
    const AlignedPair& pair = alignment.pairs[p];
    results[p] = CompareOutputs(old_trace, pair.old_ref, new_trace, pair.new_ref, tier);
  }
}

DivergenceReport DescribeDivergence(const FirstDivergence& divergence, const Alignment& alignment,
                                    const std::vector<PairResult>& results, const Trace& old_trace,
                                    const Trace& new_trace) {
  const rt::OpRecord& old_op = old_trace[divergence.old_record];
  const rt::OpRecord& new_op = new_trace[divergence.new_record];
  DivergenceReport d;
  d.rank = old_op.rank;
  d.step = old_op.step;
  d.micro_batch = old_op.micro_batch;
  d.job = old_op.job;
  d.old_op = {old_op.op_type, old_op.block, old_op.op_index, ""};
  d.new_op = {new_op.op_type, new_op.block, new_op.op_index, new_op.op_type};
  for (size_t p : divergence.differing_pairs) {
    d.differing_outputs.push_back(alignment.pairs[p].key.name);
  }
  const PairResult& first = results[divergence.differing_pairs.front()];
  d.comparison = first.comparison;
  d.has_metrics = first.compared && !first.by_hash;
  d.inputs_matched = divergence.inputs_matched;
  for (const InputCheck& in : divergence.inputs) {
    if (!in.matched) d.unmatched_inputs.push_back(in.name);
  }
  d.later_differing = divergence.later_differing;
  return d;
}

std::string LegacyOpText(const oldir::Program& program, const rt::OpRecord& r) {
  if (r.block < program.num_blocks() && r.op_index < program.block(r.block).num_ops()) {
    return oldir::DumpOp(program.block(r.block).op(r.op_index));
  }
  return "";
}

const newir::Operation* TopLevelOp(const newir::Program& program, int depth, int index) {
  if (depth != 0) return nullptr;
  int i = 0;
  for (const newir::Operation& op : program.block()) {
    if (i++ == index) return &op;
  }
  return nullptr;
}

const rt::Tensor* KeptOutput(const Trace& trace, size_t record, const std::string& name) {
  const rt::OpRecord& op = trace[record];
  for (size_t o = 0; o < op.outputs.size(); ++o) {
    if (op.outputs[o].name == name) return KeptTensor(trace, {record, o});
  }
  return nullptr;
}

}  // namespace irm::diff
