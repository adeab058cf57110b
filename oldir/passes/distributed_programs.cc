// Topology and ring numbering of the legacy passes (distributed_programs.h).
#include "oldir/passes/distributed_programs.h"

namespace irm::oldir::passes {

RankPrograms SingleProgramRank(const Program& startup, const Program& main) {
  RankPrograms rank;
  rank.startup = startup;
  rank.main = main;
  return rank;
}

std::vector<int> Topology::DpGroup(int rank) const {
  std::vector<int> group;
  for (int d = 0; d < dp; ++d) group.push_back(Rank(d, PpIndex(rank), MpIndex(rank)));
  return group;
}

std::vector<int> Topology::PpGroup(int rank) const {
  std::vector<int> group;
  for (int p = 0; p < pp; ++p) group.push_back(Rank(DpIndex(rank), p, MpIndex(rank)));
  return group;
}

std::vector<int> Topology::MpGroup(int rank) const {
  std::vector<int> group;
  for (int m = 0; m < mp; ++m) group.push_back(Rank(DpIndex(rank), PpIndex(rank), m));
  return group;
}

int RingRegistry::Ring(const std::vector<int>& ranks) {
  for (const ProcessGroup& group : groups_) {
    if (group.ranks == ranks) return group.ring_id;
  }
  ProcessGroup group;
  group.ring_id = static_cast<int>(groups_.size());
  group.ranks = ranks;
  groups_.push_back(std::move(group));
  return groups_.back().ring_id;
}

}  // namespace irm::oldir::passes
