// Test support for the communication ops of both executors: parsing a legacy program (protobuf
// text) or a new-IR program (text, verified), and running one executor per rank of a thread world
// with that rank's CommContext, feeds and persistent scope.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "newir/program.h"
#include "oldir/program.h"
#include "reference_runtime/comm/thread_world.h"
#include "reference_runtime/executor.h"

namespace irm::rt::testing {

// "t.prototxt" / "t.pir"; a parse or verification failure fails the test.
oldir::Program ParseLegacy(const std::string& text);
newir::Program ParsePir(const std::string& text);

struct RankRuns {
  Status status;                            // ThreadWorld::RunRanks's
  std::vector<std::vector<Fetch>> fetches;  // by rank
  std::vector<std::unique_ptr<Scope>> scopes;
};

// Builds an executor per rank with make(rank, options) — options carrying the real kernels, the
// rank's CommContext and `file` — and runs it once on feeds[rank] (none when feeds is empty).
using MakeExecutor =
    std::function<std::unique_ptr<Executor>(int rank, const ExecutorOptions& options)>;
RankRuns RunOnRanks(ThreadWorld& world, const MakeExecutor& make,
                    const std::vector<FeedMap>& feeds = {}, const std::string& file = "t");

// Legacy programs (one text per rank, or one for all) and new-IR programs on the world.
RankRuns RunLegacy(ThreadWorld& world, const std::vector<std::string>& texts,
                   const std::vector<FeedMap>& feeds = {});
RankRuns RunPir(ThreadWorld& world, const std::vector<std::string>& texts,
                const std::vector<FeedMap>& feeds = {});

// The fetched tensor named `name` of rank `rank`; fails the test when there is none.
Tensor Fetched(const RankRuns& runs, int rank, const std::string& name);

}  // namespace irm::rt::testing
