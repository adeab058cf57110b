// PyTorch's schedules generated as action lists: the DualPipeV artifact byte for byte, small
// orders worked out by hand from schedules.py, PyTorch's preconditions, and every schedule
// generating, validating, lowering and round-tripping through CSV.
#include "schedules/action_generate.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"
#include "schedules/action_csv.h"
#include "schedules/action_lower.h"
#include "schedules/action_validate.h"

namespace irm::schedules {
namespace {

std::string Artifact(const std::string& name) {
  const char* dir = std::getenv("IRM_SOURCE_DIR");
  const std::string root = dir != nullptr && *dir != '\0' ? dir : std::filesystem::current_path();
  StatusOr<std::string> text = ReadFile(root + "/schedules/testdata/pytorch/" + name);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

GeneratedSchedule MustGenerate(PyTorchSchedule schedule, int pp, int m, int n_local,
                               const GenerateOptions& options = {}) {
  StatusOr<GeneratedSchedule> g = GeneratePyTorchSchedule(schedule, pp, m, n_local, options);
  EXPECT_TRUE(g.ok()) << PyTorchScheduleName(schedule) << ": " << g.status().ToString();
  return g.ok() ? *g : GeneratedSchedule{};
}

// Pins pytorch/pytorch test/distributed/pipelining/test_schedule.py,
// TestScheduleCsv.test_csv_compare: ScheduleDualPipeV with 4 ranks, 2 stages each and 10
// micro-batches has the pipeline_order of artifacts/dualpipev_4rank_10mb.csv.
TEST(ActionGenerateTest, DualPipeVMatchesPyTorchArtifact) {
  const GeneratedSchedule g = MustGenerate(PyTorchSchedule::kDualPipeV, 4, 10, 2);
  EXPECT_EQ(WriteActionCsv(g.order), Artifact("dualpipev_4rank_10mb.csv"));
  EXPECT_EQ(g.stage_to_rank, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(g.style, StageStyle::kV);
}

// Worked out by hand from ScheduleGPipe._get_pipeline_order and _add_reduce_grad (idle steps
// dropped, REDUCE_GRAD after the m-th B).
TEST(ActionGenerateTest, GPipeByHand) {
  const GeneratedSchedule g = MustGenerate(PyTorchSchedule::kGPipe, 2, 2, 1);
  EXPECT_EQ(WriteActionCsv(g.order),
            "0F0,0F1,0B0,0B1,0REDUCE_GRAD\n"
            "1F0,1F1,1B0,1B1,1REDUCE_GRAD\n");
}

// Schedule1F1B._get_pipeline_order for pp 2, m 3: rank 0 warms up with F0 and then alternates;
// rank 1 has no warm-up forward, so PyTorch's order starts it at F1 (and runs F3).
TEST(ActionGenerateTest, OneFOneBByHandAndUpstreamLastRank) {
  const GeneratedSchedule g = MustGenerate(PyTorchSchedule::k1F1B, 2, 3, 1);
  EXPECT_EQ(WriteActionCsv(g.order),
            "0F0,0F1,0B0,0F2,0B1,0B2,0REDUCE_GRAD\n"
            "1F0,1B0,1F1,1B1,1F2,1B2,1REDUCE_GRAD\n");
  const GeneratedSchedule upstream =
      MustGenerate(PyTorchSchedule::k1F1B, 2, 3, 1, {.upstream_1f1b_last_rank = true});
  EXPECT_EQ(WriteActionCsv(upstream.order),
            "0F0,0F1,0B0,0F2,0B1,0B2,0REDUCE_GRAD\n"
            "1F1,1B0,1F2,1B1,1F3,1B2,1REDUCE_GRAD\n");
  StatusOr<std::vector<int>> v = ValidateActionSchedule(upstream.order, 2, 2, 3, "1F1B");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(),
            "running full backward for stage 1, microbatch 0 without first running forward");
  EXPECT_EQ(v.status().location().detail, "rank 1, step 1");
}

// ScheduleLoopedBFS._calculate_single_rank_operations for pp 2, 2 stages per rank, m 2.
TEST(ActionGenerateTest, LoopedBfsByHand) {
  const GeneratedSchedule g = MustGenerate(PyTorchSchedule::kLoopedBFS, 2, 2, 2);
  EXPECT_EQ(WriteActionCsv(g.order),
            "0F0,0F1,2F0,2F1,,,2B1,2B0,0B1,0B0\n"
            ",1F0,1F1,3F0,3F1,3B1,3B0,1B1,1B0\n");
}

// ScheduleZBVZeroBubble for pp 2, m 2: n_micro = max(2pp-1, m) = 3, and micro-batch 2 is nulled.
TEST(ActionGenerateTest, ZbvByHand) {
  const GeneratedSchedule g = MustGenerate(PyTorchSchedule::kZBVZeroBubble, 2, 2, 2);
  EXPECT_EQ(WriteActionCsv(g.order),
            "0F0,0F1,,3F0,3I0,3W0,3F1,3I1,3W1,0I0,0W0,,,,0I1,0W1,,\n"
            ",1F0,2F0,1F1,2F1,2I0,2W0,,1I0,1W0,,2I1,2W1,1I1,,,1W1,,\n");
}

TEST(ActionGenerateTest, PreconditionsAreInvalidArguments) {
  struct Case {
    PyTorchSchedule schedule;
    int pp, m, n_local;
    std::string message;
  };
  const std::vector<Case> cases = {
      {PyTorchSchedule::k1F1B, 4, 3, 1,
       "Number of microbatches (3) must be greater than or equal to the number of stages (4)"},
      {PyTorchSchedule::kDualPipeV, 2, 2, 2,
       "DualPipeV requires at least as many microbatches as stages, but got 2 microbatches and 4 "
       "stages"},
      {PyTorchSchedule::kZBVZeroBubble, 2, 4, 3,
       "ZBVZeroBubble requires exactly 2 stages per rank, but got 3"},
      {PyTorchSchedule::kInterleaved1F1B, 4, 10, 2, ""},  // 10 % max(1, 10 / 4) == 0
      {PyTorchSchedule::kInterleaved1F1B, 4, 9, 2,
       "Interleaved1F1B requires the number of microbatches to be a multiple of the number of "
       "rounds (2), but got 9"},
      {PyTorchSchedule::kInterleavedZeroBubble, 2, 7, 2,
       "InterleavedZeroBubble requires the number of microbatches to be a multiple of the number "
       "of rounds (3), but got 7"},
      {PyTorchSchedule::kGPipe, 2, 2, 2,
       "GPipe is a single-stage schedule: one stage per rank, got 2"},
      {PyTorchSchedule::kLoopedBFS, 0, 2, 2,
       "LoopedBFS needs pp, micro-batches and stages per rank >= 1, got pp 0, 2 micro-batches, 2 "
       "stages per rank"},
  };
  for (const Case& c : cases) {
    StatusOr<GeneratedSchedule> g = GeneratePyTorchSchedule(c.schedule, c.pp, c.m, c.n_local);
    if (c.message.empty()) {
      EXPECT_TRUE(g.ok()) << g.status().ToString();
      continue;
    }
    ASSERT_FALSE(g.ok()) << PyTorchScheduleName(c.schedule);
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(g.status().message(), c.message);
  }
}

TEST(ActionGenerateTest, NamesParseCaseInsensitively) {
  for (PyTorchSchedule s : AllPyTorchSchedules()) {
    EXPECT_EQ(*ParsePyTorchSchedule(PyTorchScheduleName(s)), s);
  }
  EXPECT_EQ(*ParsePyTorchSchedule("dualpipev"), PyTorchSchedule::kDualPipeV);
  StatusOr<PyTorchSchedule> bad = ParsePyTorchSchedule("ZB1P");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown schedule name 'ZB1P'; the valid options are GPipe, 1F1B, Interleaved1F1B, "
            "LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV");
}

// The matrix: every schedule x pp in {2, 4} x m in {pp, 2pp} (default stages per rank)
// generates, validates to its own stage placement, lowers to a schedule with communication that
// validates again, and round-trips through CSV. DualPipeV with m = pp is below its m >= 2pp.
TEST(ActionGenerateTest, EveryScheduleGeneratesValidatesLowersAndRoundTrips) {
  int checked = 0;
  for (PyTorchSchedule schedule : AllPyTorchSchedules()) {
    for (int pp : {2, 4}) {
      for (int m : {pp, 2 * pp}) {
        const int n_local = DefaultStagesPerRank(schedule);
        SCOPED_TRACE(fmt::format("{} pp {} m {}", PyTorchScheduleName(schedule), pp, m));
        StatusOr<GeneratedSchedule> g = GeneratePyTorchSchedule(schedule, pp, m, n_local);
        if (schedule == PyTorchSchedule::kDualPipeV && m < 2 * pp) {
          EXPECT_FALSE(g.ok());
          continue;
        }
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        StatusOr<std::vector<int>> map = ValidateActionSchedule(g->order, pp, g->num_stages, m);
        ASSERT_TRUE(map.ok()) << map.status().ToString();
        EXPECT_EQ(*map, g->stage_to_rank);
        StatusOr<ActionSchedule> lowered = LowerComputeSchedule(g->order, pp, g->num_stages, m);
        ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
        EXPECT_TRUE(ValidateActionSchedule(*lowered, pp, g->num_stages, m).ok());
        for (const ActionSchedule* s : {&g->order, &*lowered}) {
          StatusOr<ActionSchedule> back = ReadActionCsv(WriteActionCsv(*s), "x.csv");
          ASSERT_TRUE(back.ok()) << back.status().ToString();
          EXPECT_EQ(*back, *s);
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 26);
}

// The parameter sets of test_schedule.py's TestSchedulePlan (num_local_stages, micro-batches,
// group size): test_pipeline_order (Interleaved1F1B, LoopedBFS; m % group == 0),
// test_pipeline_order_flex_and_zero_bubble (Interleaved1F1B, InterleavedZeroBubble) and
// test_pipeline_order_for_v_schedules (ZBV, DualPipeV: 2 local stages only, DualPipeV m >= stages)
// — each of which PyTorch generates and lowers with _add_send_recv (or validates) without error.
TEST(ActionGenerateTest, PyTorchSchedulePlanCasesGenerateAndLower) {
  const std::vector<std::tuple<int, int, int>> cases = {
      {2, 2, 2},   {2, 4, 4},    {2, 8, 2},  {2, 8, 4},  {2, 8, 8},  {4, 4, 4},
      {4, 8, 4},   {4, 8, 8},    {4, 16, 4}, {4, 32, 4}, {4, 64, 4}, {4, 16, 16},
      {4, 32, 32}, {4, 128, 64}, {3, 2, 2},  {3, 8, 2},  {3, 12, 4}, {4, 6, 3},
      {4, 10, 5},  {2, 3, 4},    {2, 4, 4},  {2, 10, 4}, {2, 15, 4}};
  int lowered_count = 0;
  for (const auto& [n_local, m, pp] : cases) {
    for (PyTorchSchedule schedule :
         {PyTorchSchedule::kInterleaved1F1B, PyTorchSchedule::kLoopedBFS,
          PyTorchSchedule::kInterleavedZeroBubble, PyTorchSchedule::kZBVZeroBubble,
          PyTorchSchedule::kDualPipeV}) {
      SCOPED_TRACE(
          fmt::format("{} n_local {} m {} pp {}", PyTorchScheduleName(schedule), n_local, m, pp));
      const bool v = PyTorchScheduleStageStyle(schedule) == StageStyle::kV;
      if (schedule == PyTorchSchedule::kLoopedBFS && m % pp != 0) continue;
      StatusOr<GeneratedSchedule> g = GeneratePyTorchSchedule(schedule, pp, m, n_local);
      if ((v && n_local != 2) || (schedule == PyTorchSchedule::kDualPipeV && m < n_local * pp)) {
        EXPECT_FALSE(g.ok());
        continue;
      }
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      ASSERT_TRUE(ValidateActionSchedule(g->order, pp, g->num_stages, m).ok());
      StatusOr<ActionSchedule> lowered = AddSendRecv(g->order, g->stage_to_rank);
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
      ++lowered_count;
    }
  }
  EXPECT_GT(lowered_count, 60);
}

}  // namespace
}  // namespace irm::schedules
