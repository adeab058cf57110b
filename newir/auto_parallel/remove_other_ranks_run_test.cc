// A value moved from mesh [0, 1] to mesh [2, 3] (remove_other_ranks_test_support.h), each rank's
// program lowered, stripped of the other ranks' ops and made dense, run on a thread world of 4:
// ranks 0 and 1 read the feed and send, ranks 2 and 3 receive, apply the second relu and fetch
// exactly relu(x); nothing of the other side runs anywhere (the senders fetch nothing, the
// receivers are fed nothing).
#include <gtest/gtest.h>

#include "newir/auto_parallel/dist_to_dense.h"
#include "newir/auto_parallel/remove_other_ranks.h"
#include "newir/auto_parallel/remove_other_ranks_test_support.h"
#include "newir/auto_parallel/reshard_lowering.h"
#include "newir/printer.h"
#include "reference_runtime/comm/comm_test_support.h"
#include "reference_runtime/comm_ops_test_support.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::newir {
namespace {

TEST(RemoveOtherRanksRunTest, EachSideRunsItsOwnOpsAcrossMeshes) {
  ProcessGroupTable groups(4);
  ASSERT_TRUE(PlanProcessGroups(testing::AcrossMeshes(), groups).ok());
  std::vector<std::string> texts;
  std::vector<rt::FeedMap> feeds;
  std::vector<double> x;
  for (int i = 0; i < 15; ++i) x.push_back((i % 7) - 3.0);
  for (int64_t rank = 0; rank < 4; ++rank) {
    Program program = testing::AcrossMeshes();
    ProcessGroupTable copy = groups;
    ASSERT_TRUE(LowerReshards(program, rank, copy).ok());
    ASSERT_TRUE(RemoveOtherRankOps(program, rank).ok());
    ASSERT_TRUE(DistToDense(program, rank).ok());
    texts.push_back(PrintProgram(program));
    rt::FeedMap feed;
    if (rank < 2) feed["x"] = rt::testing::FromDoubles(x, {3, 5}, DType::kFloat32);
    feeds.push_back(std::move(feed));
  }
  std::vector<rt::CommGroup> comm_groups;
  for (const auto& [ring, ranks] : groups.groups()) {
    comm_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  auto world = rt::testing::MakeWorld(4, comm_groups);
  ASSERT_NE(world, nullptr);
  const rt::testing::RankRuns runs = rt::testing::RunPir(*world, texts, feeds);
  ASSERT_TRUE(runs.status.ok()) << runs.status.ToString() << "\n" << texts[2];
  std::vector<double> want;
  for (double v : x) want.push_back(v > 0 ? v : 0);
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    if (rank < 2) {
      EXPECT_TRUE(runs.fetches[rank].empty());
      continue;
    }
    EXPECT_EQ(rt::testing::ToDoubles(rt::testing::Fetched(runs, rank, "out")), want);
  }
}

}  // namespace
}  // namespace irm::newir
