// _validate_schedule's rules, each with its located diagnostic.
#include "schedules/action_validate.h"

#include <gtest/gtest.h>

#include "schedules/action_csv.h"

namespace irm::schedules {
namespace {

ActionSchedule Csv(std::string_view text) {
  StatusOr<ActionSchedule> s = ReadActionCsv(text, "t.csv");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : ActionSchedule{};
}

std::string Failure(std::string_view csv, int pp, int stages, int m) {
  StatusOr<std::vector<int>> r = ValidateActionSchedule(Csv(csv), pp, stages, m, "s.csv");
  EXPECT_FALSE(r.ok()) << csv;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
  return r.status().ToString();
}

// Pins pytorch/pytorch test/distributed/pipelining/test_schedule.py,
// TestValidateSchedule.test_valid_schedule (F then B, and F then I then W, 2 ranks, 1 micro-batch).
TEST(ActionValidateTest, PyTorchValidSchedules) {
  for (const char* csv : {"0F0,0B0\n1F0,1B0\n", "0F0,0I0,0W0\n1F0,1I0,1W0\n"}) {
    StatusOr<std::vector<int>> r = ValidateActionSchedule(Csv(csv), 2, 2, 1);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, (std::vector<int>{0, 1}));
  }
  // The V placement comes out of the schedule itself; communication places stages too.
  StatusOr<std::vector<int>> v = ValidateActionSchedule(
      Csv("0F0,0SEND_F0,3RECV_F0,3F0,3B0,0RECV_B0,0B0\n1RECV_F0,1F0,2F0,2B0,1B0,1SEND_B0\n"), 2, 4,
      1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 1, 0}));
}

// TestValidateSchedule.test_invalid_schedule_missing_rank and _missing_action.
TEST(ActionValidateTest, PyTorchInvalidSchedules) {
  EXPECT_EQ(Failure("0F0,0B0\n", 2, 2, 1),
            "s.csv: error: schedule has incorrect number of ranks - expected 2, actual 1");
  EXPECT_EQ(Failure("0F0\n1F0\n", 2, 2, 1),
            "s.csv: stage 0: error: invalid backward microbatches for stage 0: expected 1 total "
            "backwards, but got B=0, I=0, W=0");
}

TEST(ActionValidateTest, BackwardBeforeForwardIsLocated) {
  EXPECT_EQ(Failure("0F0,0F1,0B1,0B0\n1F0,1B1,1F1,1B0\n", 2, 2, 2),
            "s.csv: rank 1, step 1: error: running full backward for stage 1, microbatch 1 "
            "without first running forward");
  EXPECT_EQ(Failure("0I0,0F0,0W0\n", 1, 1, 1),
            "s.csv: rank 0, step 0: error: running backward input for stage 0, microbatch 0 "
            "without first running forward");
  EXPECT_EQ(Failure("0F0,,0W0,0I0\n", 1, 1, 1),
            "s.csv: rank 0, step 2: error: running backward weight for stage 0, microbatch 0 "
            "without first running backward input");
}

TEST(ActionValidateTest, OverlappedPartsAreCheckedOneByOne) {
  EXPECT_EQ(Failure("0F0,(0F1;3B0)OVERLAP_F_B,3F0,3F1\n1F0,1F1\n", 2, 4, 2),
            "s.csv: rank 0, step 1: error: running full backward for stage 3, microbatch 0 "
            "without first running forward");
}

TEST(ActionValidateTest, PlacementAndCounts) {
  EXPECT_EQ(Failure("0F0,0B0,1F0\n1F0,1B0\n", 2, 2, 1),
            "s.csv: rank 1, step 0: error: stage 1 is assigned to both rank 1 and rank 0");
  EXPECT_EQ(Failure("0F0,2F0\n1F0,1B0\n", 2, 2, 1),
            "s.csv: rank 0, step 1: error: 2F0 names stage 2, outside the schedule's 2 stages");
  EXPECT_EQ(Failure("0F0,0F5\n", 1, 1, 2),
            "s.csv: rank 0, step 1: error: 0F5 names micro-batch 5, outside the 2 micro-batches");
  EXPECT_EQ(Failure("0F0,0B0\n", 1, 1, 2),
            "s.csv: stage 0: error: got 1 F microbatches for stage 0, expected 2");
  EXPECT_EQ(Failure("0F0,0I0,0B0\n", 1, 1, 1),
            "s.csv: stage 0: error: invalid backward microbatches for stage 0: I and W must have "
            "equal counts, but got I=1, W=0");
}

}  // namespace
}  // namespace irm::schedules
