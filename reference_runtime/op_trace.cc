// The per-op trace (op_trace.h): statistics, hashes, keep predicates and the recorder.
#include "reference_runtime/op_trace.h"

#include <cmath>
#include <limits>
#include <utility>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/philox.h"

namespace irm::rt {

TensorStats ComputeStats(const Tensor& tensor) {
  TensorStats stats;
  if (!tensor.defined()) return stats;
  double min = std::numeric_limits<double>::infinity();
  double max = -min;
  double sum = 0.0;
  int64_t finite = 0;
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    const double v = ElementAsDouble(tensor, i);
    if (std::isnan(v)) {
      ++stats.nan_count;
    } else if (std::isinf(v)) {
      ++stats.inf_count;
    } else {
      min = std::min(min, v);
      max = std::max(max, v);
      sum += v;
      ++finite;
    }
  }
  if (finite > 0) {
    stats.min = min;
    stats.max = max;
    stats.mean = sum / static_cast<double>(finite);
  }
  return stats;
}

uint64_t HashTensor(const Tensor& tensor) {
  if (!tensor.defined()) return Fnv1a({});
  return Fnv1a(std::string_view(static_cast<const char*>(tensor.raw()), tensor.nbytes()));
}

KeepPredicate KeepAll() {
  return [](std::string_view) { return true; };
}

KeepPredicate KeepNone() {
  return [](std::string_view) { return false; };
}

bool GlobMatch(std::string_view pattern, std::string_view name) {
  // Iterative matching with one backtrack point for the last '*': linear in practice, never
  // exponential.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

KeepPredicate KeepMatching(std::vector<std::string> patterns) {
  return [patterns = std::move(patterns)](std::string_view name) {
    for (const std::string& pattern : patterns) {
      if (GlobMatch(pattern, name)) return true;
    }
    return false;
  };
}

OpTraceRecorder::OpTraceRecorder(KeepPredicate keep)
    : keep_(keep ? std::move(keep) : KeepNone()),
      observer_([this](const OpEvent& event) { Record(event); }) {}

void OpTraceRecorder::SetContext(int rank, int step, int micro_batch, std::string job) {
  rank_ = rank;
  step_ = step;
  micro_batch_ = micro_batch;
  job_ = std::move(job);
}

std::vector<OpRecord> OpTraceRecorder::TakeRecords() {
  std::vector<OpRecord> records = std::move(records_);
  records_.clear();
  return records;
}

void OpTraceRecorder::Record(const OpEvent& event) {
  OpRecord record;
  record.rank = rank_;
  record.step = step_;
  record.micro_batch = micro_batch_;
  record.job = job_;
  record.block = event.block;
  record.op_index = event.op_index;
  record.op_type = std::string(event.op_type);
  record.inputs.assign(event.inputs.begin(), event.inputs.end());
  record.outputs.reserve(event.outputs.size());
  for (const auto& [name, tensor] : event.outputs) {
    OutputRecord out;
    out.name = std::string(name);
    if (tensor != nullptr) {
      out.produced = true;
      out.dtype = tensor->dtype();
      out.shape = tensor->shape();
      out.hash = HashTensor(*tensor);
      out.stats = ComputeStats(*tensor);
      if (keep_(out.name)) out.tensor = tensor->Clone();
    }
    record.outputs.push_back(std::move(out));
  }
  records_.push_back(std::move(record));
}

}  // namespace irm::rt
