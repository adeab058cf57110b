// The process groups the distributed passes communicate over, as the bundle records them
// (ring_id -> ranks). Ring 0 is the whole world in rank order (the runtime's default group); any
// other group gets the next free ring the first time it is asked for, so a table filled in the
// same order on every rank gives every rank the same rings. A group's order matters: a rank's
// index in it is its rank in the group (p2p pairs [src, dst] and [dst, src] are two groups, as
// in Paddle's same_status_reshard_func.py).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace irm::newir {

class ProcessGroupTable {
 public:
  explicit ProcessGroupTable(int64_t world_size);

  // The ring of `ranks`, registering it when new.
  int64_t RingOf(const std::vector<int64_t>& ranks);
  int64_t world_size() const { return world_size_; }
  // Every group, ring 0 included.
  const std::map<int64_t, std::vector<int64_t>>& groups() const { return groups_; }

 private:
  int64_t world_size_;
  std::map<int64_t, std::vector<int64_t>> groups_;
};

}  // namespace irm::newir
