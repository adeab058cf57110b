// The per-op trace of a run (docs/parity.md, "Reading the report"): every op execution becomes an
// OpRecord — where it ran (rank, step, micro-batch, job), which op (block, index, type), the
// logical names it read, and per output its logical name, shape, dtype, an FNV-1a hash of its bytes
// and cheap float64 statistics, plus a full copy for the outputs a keep predicate selects. The
// OpTraceRecorder gives the executors an OpObserver; whoever drives the run says where it is with
// SetContext. Hashes are always on; full copies only where asked, so a trace of a large program
// stays small.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_runtime/executor.h"
#include "reference_runtime/tensor.h"

namespace irm::rt {

// Statistics of a tensor's values in float64: min, max and mean over the finite values (0 when
// there is none), and how many values are NaN and how many are infinite.
struct TensorStats {
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  int64_t nan_count = 0;
  int64_t inf_count = 0;
};

TensorStats ComputeStats(const Tensor& tensor);
// FNV-1a of the tensor's bytes (philox.h): equal hashes, equal bits, with overwhelming likelihood.
uint64_t HashTensor(const Tensor& tensor);

struct OutputRecord {
  std::string name;
  bool produced = false;  // false: the op left this output alone (no tensor; the rest is empty)
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  uint64_t hash = 0;
  TensorStats stats;
  std::optional<Tensor> tensor;  // a copy, when the keep predicate asked for it
};

struct OpRecord {
  int rank = 0;
  int step = 0;  // 0: the startup program; 1.. the training steps
  int micro_batch = 0;
  std::string job;  // the plan's job type; empty for a run without a plan
  int block = 0;
  int op_index = 0;
  std::string op_type;
  std::vector<std::string> inputs;
  std::vector<OutputRecord> outputs;
};

// Decides, by logical name, which outputs keep a full copy.
using KeepPredicate = std::function<bool(std::string_view name)>;
KeepPredicate KeepAll();
KeepPredicate KeepNone();
// Names matching any of the glob patterns ('*' any run of characters, '?' one character).
KeepPredicate KeepMatching(std::vector<std::string> patterns);
bool GlobMatch(std::string_view pattern, std::string_view name);

class OpTraceRecorder {
 public:
  explicit OpTraceRecorder(KeepPredicate keep = KeepNone());
  // The observer captures this recorder: it neither copies nor moves.
  OpTraceRecorder(const OpTraceRecorder&) = delete;
  OpTraceRecorder& operator=(const OpTraceRecorder&) = delete;

  // Where the ops observed from now on run.
  void SetContext(int rank, int step, int micro_batch, std::string job);
  // For ExecutorOptions::observer; valid as long as the recorder.
  const OpObserver* observer() const { return &observer_; }

  const std::vector<OpRecord>& records() const { return records_; }
  std::vector<OpRecord> TakeRecords();

 private:
  void Record(const OpEvent& event);

  KeepPredicate keep_;
  OpObserver observer_;
  int rank_ = 0;
  int step_ = 0;
  int micro_batch_ = 0;
  std::string job_;
  std::vector<OpRecord> records_;
};

}  // namespace irm::rt
