// What the legacy passes make of a serial program: the programs of every rank of a world, the
// process groups their communication ops name by ring_id, and where each rank sits in Paddle's
// hybrid topology (data-parallel outermost, then pipeline, then model parallel innermost:
// python/paddle/distributed/fleet/base/topology.py orders the axes ["dp", "pp", "sharding",
// "sep", "mp"]).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "oldir/bundle.h"
#include "oldir/program.h"

namespace irm::oldir::passes {

// The programs of one rank. A rank runs either `main` once per step (job "main", no plan), or,
// when `jobs` is set, the job programs in the order of `plan` (a pipeline stage).
struct RankPrograms {
  Program startup;
  Program main;
  std::map<std::string, Program> jobs;       // job type -> program; empty: `main` is the job
  std::optional<std::vector<PlanJob>> plan;  // the rank's plan.json; set with `jobs`
  std::map<std::string, ShardSlice> shards;  // the rank's sharded vars (rank<N>/shards.json)
};

// A rank that runs `main` once per step.
RankPrograms SingleProgramRank(const Program& startup, const Program& main);

// The rank of coordinates (dp, pp, mp) and back, in Paddle's order of the axes.
struct Topology {
  int dp = 1;
  int pp = 1;
  int mp = 1;

  int world_size() const { return dp * pp * mp; }
  int Rank(int d, int p, int m) const { return (d * pp + p) * mp + m; }
  int DpIndex(int rank) const { return rank / (pp * mp); }
  int PpIndex(int rank) const { return rank / mp % pp; }
  int MpIndex(int rank) const { return rank % mp; }
  // The ranks that differ from `rank` only along one axis, in axis order: its group on that axis.
  std::vector<int> DpGroup(int rank) const;
  std::vector<int> PpGroup(int rank) const;
  std::vector<int> MpGroup(int rank) const;
};

// The bundle's process groups, one ring per distinct ordered list of ranks, numbered 0, 1, ... in
// the order first asked for — so the passes, asking in a fixed order, give every rank the same
// ring ids.
class RingRegistry {
 public:
  // The ring of `ranks` (as ordered: a point-to-point group [1, 0] differs from [0, 1]).
  int Ring(const std::vector<int>& ranks);
  const std::vector<ProcessGroup>& groups() const { return groups_; }

 private:
  std::vector<ProcessGroup> groups_;
};

struct DistributedPrograms {
  int world_size = 1;
  std::vector<ProcessGroup> process_groups;
  std::vector<RankPrograms> ranks;  // by rank
  int micro_batches = 1;            // the bundle's micro_batches (pipeline accumulate_steps)
};

}  // namespace irm::oldir::passes
