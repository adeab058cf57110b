// CommTrace: one rank's ordered record of its communication calls (what, on which ring, with
// which peer or root, how many elements of which dtype, which reduction, from which call site).
// The parity engine diffs the traces of the legacy and the translated run rank by rank: a
// difference predicts a hang or wrong data before any number is compared. A Communicator records
// only while a trace is attached to it, so recording costs nothing when it is off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/host_tensor.h"
#include "reference_runtime/comm/communicator.h"

namespace irm::rt {

struct CommRecord {
  CommKind kind = CommKind::kBarrier;
  int ring_id = 0;
  int peer = -1;  // send and recv: the peer; broadcast: the root (group ranks); else -1
  int64_t count = 0;
  DType dtype = DType::kFloat32;
  std::optional<ReduceOp> reduce;  // all_reduce and reduce_scatter
  CallSite site;
};

// Equal in everything but the call site: the two IRs name and number their ops differently.
bool SameCommunication(const CommRecord& a, const CommRecord& b);

// "all_reduce sum float32 x6 (ring 0, op 3)", "send float32 x4 to 1 (ring 0)".
std::string DescribeRecord(const CommRecord& record);

class CommTrace {
 public:
  void Add(CommRecord record) { records_.push_back(std::move(record)); }
  const std::vector<CommRecord>& records() const { return records_; }
  std::vector<CommRecord>& mutable_records() { return records_; }
  void Clear() { records_.clear(); }

 private:
  std::vector<CommRecord> records_;
};

// The index of the first record where `a` and `b` differ (SameCommunication), or where one ends
// before the other; nullopt when they communicate alike.
std::optional<size_t> FirstCommDifference(const CommTrace& a, const CommTrace& b);

}  // namespace irm::rt
