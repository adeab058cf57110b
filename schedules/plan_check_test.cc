// CheckJobList: every generated Paddle plan passes; each way a plan can be wrong is a located
// diagnostic with the exact message.
#include "schedules/plan_check.h"

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

std::vector<Job> FThenB4() {
  return {{"forward", 0},  {"forward", 1},  {"forward", 2},  {"forward", 3},  {"backward", 0},
          {"backward", 1}, {"backward", 2}, {"backward", 3}, {"optimizer", 0}};
}

std::string Check(const std::vector<Job>& jobs, int m) {
  Status status = CheckJobList(jobs, m, Location::File("rank1/plan.json"));
  if (status.ok()) return "OK";
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  return status.diagnostic().Render();
}

TEST(PlanCheckTest, AcceptsEveryGeneratedPlan) {
  for (PaddleMode mode : {PaddleMode::kFThenB, PaddleMode::k1F1B, PaddleMode::kEager1F1B,
                          PaddleMode::kVpp, PaddleMode::kZbh1, PaddleMode::kZbvpp}) {
    for (JobListIr ir : {JobListIr::kLegacy, JobListIr::kPir}) {
      for (int p : {2, 4}) {
        for (int m : {p, 2 * p}) {
          for (bool split : {false, true}) {
            PaddleScheduleSpec spec{mode, p, m, 1, false, ir};
            if (mode == PaddleMode::kVpp || mode == PaddleMode::kZbvpp) spec.vpp = 2;
            if (split && mode != PaddleMode::kVpp) continue;
            spec.split_backward = split;
            StatusOr<std::vector<std::vector<Job>>> lists = MakeJobLists(spec);
            if (!lists.ok()) continue;
            for (const std::vector<Job>& jobs : *lists) EXPECT_EQ(Check(jobs, m), "OK");
          }
        }
      }
    }
  }
  // Paddle's FThenB plan before PR #58459 began with a once-per-step "lr" job.
  std::vector<Job> with_lr = FThenB4();
  with_lr.insert(with_lr.begin(), Job{"lr", 0});
  EXPECT_EQ(Check(with_lr, 4), "OK");
}

TEST(PlanCheckTest, NamesAMicroBatchNamedTwice) {
  std::vector<Job> jobs = FThenB4();
  jobs[3].micro_batch = 1;
  EXPECT_EQ(Check(jobs, 4),
            "rank1/plan.json: job 3 (forward, micro-batch 1): error: micro-batch 1 is named "
            "twice: job 1 already ran forward\n");
}

TEST(PlanCheckTest, NamesAMicroBatchNoJobRuns) {
  std::vector<Job> jobs = FThenB4();
  jobs.erase(jobs.begin() + 6);  // backward 2
  EXPECT_EQ(Check(jobs, 4),
            "rank1/plan.json: job type backward: error: micro-batch 2 never runs backward: the "
            "plan has 4 micro-batches\n");
}

TEST(PlanCheckTest, NamesAMicroBatchOutOfRange) {
  std::vector<Job> jobs = FThenB4();
  jobs[7].micro_batch = 4;
  EXPECT_EQ(Check(jobs, 4),
            "rank1/plan.json: job 7 (backward, micro-batch 4): error: micro-batch 4 is out of "
            "range: the plan has 4 micro-batches (0..3)\n");
  jobs[7].micro_batch = -1;
  EXPECT_EQ(Check(jobs, 4),
            "rank1/plan.json: job 7 (backward, micro-batch -1): error: micro-batch -1 is out of "
            "range: the plan has 4 micro-batches (0..3)\n");
}

TEST(PlanCheckTest, RefusesAnEmptyPlan) {
  EXPECT_EQ(Check({}, 4), "rank1/plan.json: error: the plan has no jobs\n");
  Status status = CheckJobList(FThenB4(), 0, Location{});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "a plan needs at least one micro-batch, got 0");
}

TEST(PlanCheckTest, NamesASecondOptimizer) {
  std::vector<Job> jobs = FThenB4();
  jobs.push_back({"optimizer", 0});
  EXPECT_EQ(Check(jobs, 4),
            "rank1/plan.json: job 9 (optimizer, micro-batch 0): error: optimizer runs once per "
            "step, but job 8 already ran it\n");
}

// ZB-H1 mixes whole and split backwards: a backward and a backward_b of one micro-batch run its
// input gradient twice; a backward_b without its backward_w leaves the weight gradient undone.
TEST(PlanCheckTest, CountsBackwardHalvesOnce) {
  std::vector<Job> jobs = {{"forward", 0},  {"forward", 1},    {"backward_b", 0},
                           {"backward", 1}, {"backward_w", 0}, {"optimizer", 0}};
  EXPECT_EQ(Check(jobs, 2), "OK");
  std::vector<Job> twice = jobs;
  twice[3] = {"backward", 0};
  EXPECT_EQ(Check(twice, 2),
            "rank1/plan.json: job 3 (backward, micro-batch 0): error: micro-batch 0's input "
            "gradient (backward_b) already ran in job 2 (backward_b)\n");
  std::vector<Job> no_w = jobs;
  no_w.erase(no_w.begin() + 4);
  EXPECT_EQ(Check(no_w, 2),
            "rank1/plan.json: job type backward: error: micro-batch 0 never runs backward: the "
            "plan has 2 micro-batches\n");
}

TEST(PlanCheckTest, ChecksEachChunkOnItsOwn) {
  std::vector<Job> jobs = {{"forward0", 0},  {"forward1", 0}, {"backward1", 0},
                           {"backward0", 0}, {"forward1", 1}, {"optimizer", 0}};
  EXPECT_EQ(Check(jobs, 2),
            "rank1/plan.json: job type forward0: error: micro-batch 1 never runs forward0: the "
            "plan has 2 micro-batches\n");
}

TEST(PlanCheckTest, KeepsTheCallersDetail) {
  std::vector<Job> jobs = FThenB4();
  jobs[0].micro_batch = 9;
  Status status = CheckJobList(jobs, 4, Location{}.With("stage 1"));
  EXPECT_EQ(status.location().detail, "stage 1, job 0 (forward, micro-batch 9)");
}

}  // namespace
}  // namespace irm::schedules
