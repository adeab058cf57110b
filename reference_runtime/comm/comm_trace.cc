// CommTrace (comm_trace.h): comparing and describing records.
#include "reference_runtime/comm/comm_trace.h"

#include <algorithm>

#include <fmt/format.h>

namespace irm::rt {

bool SameCommunication(const CommRecord& a, const CommRecord& b) {
  return a.kind == b.kind && a.ring_id == b.ring_id && a.peer == b.peer && a.count == b.count &&
         a.dtype == b.dtype && a.reduce == b.reduce;
}

std::string DescribeRecord(const CommRecord& record) {
  std::string text = CommKindName(record.kind);
  if (record.reduce) text += fmt::format(" {}", ReduceOpName(*record.reduce));
  if (record.kind != CommKind::kBarrier) {
    text += fmt::format(" {} x{}", DTypeName(record.dtype), record.count);
  }
  if (record.kind == CommKind::kSend) text += fmt::format(" to {}", record.peer);
  if (record.kind == CommKind::kRecv) text += fmt::format(" from {}", record.peer);
  if (record.kind == CommKind::kBroadcast) text += fmt::format(" from root {}", record.peer);
  return text + fmt::format(" ({})", DescribeSite(record.ring_id, record.site));
}

std::optional<size_t> FirstCommDifference(const CommTrace& a, const CommTrace& b) {
  const std::vector<CommRecord>& x = a.records();
  const std::vector<CommRecord>& y = b.records();
  const size_t common = std::min(x.size(), y.size());
  for (size_t i = 0; i < common; ++i) {
    if (!SameCommunication(x[i], y[i])) return i;
  }
  if (x.size() != y.size()) return common;
  return std::nullopt;
}

}  // namespace irm::rt
