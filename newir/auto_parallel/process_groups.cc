// The ring table of the distributed passes (process_groups.h).
#include "newir/auto_parallel/process_groups.h"

namespace irm::newir {

ProcessGroupTable::ProcessGroupTable(int64_t world_size) : world_size_(world_size) {
  std::vector<int64_t> world;
  for (int64_t r = 0; r < world_size; ++r) world.push_back(r);
  groups_.emplace(0, std::move(world));
}

int64_t ProcessGroupTable::RingOf(const std::vector<int64_t>& ranks) {
  for (const auto& [ring, members] : groups_) {
    if (members == ranks) return ring;
  }
  const int64_t ring = groups_.rbegin()->first + 1;
  groups_.emplace(ring, ranks);
  return ring;
}

}  // namespace irm::newir
