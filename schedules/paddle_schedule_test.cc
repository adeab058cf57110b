// Paddle's job lists against the lists Paddle's own tests assert, and every mode's lists against
// the rules every plan obeys (each micro-batch's forward and backward exactly once per chunk, a
// micro-batch's backward after its forward, one optimizer job last).
#include "schedules/paddle_schedule.h"

#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

namespace irm::schedules {
namespace {

// One stage's expected list as Paddle's tests write it: the job types, then the micro-batch ids.
struct Expected {
  std::vector<std::string> types;
  std::vector<int> micro_batches;
};

std::vector<Job> Zip(const Expected& expected) {
  std::vector<Job> jobs;
  for (size_t i = 0; i < expected.types.size(); ++i) {
    jobs.push_back(Job{expected.types[i], expected.micro_batches.at(i)});
  }
  return jobs;
}

std::string Show(const std::vector<Job>& jobs) {
  std::string out;
  for (const Job& job : jobs) out += job.type + ":" + std::to_string(job.micro_batch) + " ";
  return out;
}

PaddleScheduleSpec Spec(PaddleMode mode, int pp, int m, JobListIr ir = JobListIr::kLegacy) {
  PaddleScheduleSpec spec;
  spec.mode = mode;
  spec.pp = pp;
  spec.micro_batches = m;
  spec.ir = ir;
  return spec;
}

void ExpectStages(const PaddleScheduleSpec& spec, const std::vector<Expected>& stages) {
  ASSERT_EQ(static_cast<int>(stages.size()), spec.pp);
  for (int stage = 0; stage < spec.pp; ++stage) {
    StatusOr<std::vector<Job>> jobs = MakeJobList(spec, stage);
    ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
    EXPECT_EQ(*jobs, Zip(stages[stage])) << "stage " << stage << ": " << Show(*jobs);
  }
}

// test/standalone_executor/test_standalone_executor_fthenb_plan.py
// (test_standalone_executor_fthenb_plan, as of PR #58459, which dropped the former "lr" job):
// num_micro_batches 4; the test asserts the types only.
TEST(PaddleScheduleTest, FThenBMatchesPaddlesPlanTest) {
  StatusOr<std::vector<Job>> jobs = MakeJobList(Spec(PaddleMode::kFThenB, 1, 4), 0);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<std::string> types;
  for (const Job& job : *jobs) types.push_back(job.type);
  EXPECT_EQ(types, (std::vector<std::string>{"forward", "forward", "forward", "forward", "backward",
                                             "backward", "backward", "backward", "optimizer"}));
  // pipeline_fthenb.py numbers both loops 0..m-1 and gives the optimizer micro-batch 0.
  EXPECT_EQ((*jobs)[3], (Job{"forward", 3}));
  EXPECT_EQ((*jobs)[4], (Job{"backward", 0}));
  EXPECT_EQ((*jobs)[8], (Job{"optimizer", 0}));
}

// test/standalone_executor/test_standalone_executor_1f1b_plan.py
// (test_standalone_executor_1f1b_plan_stage0..3): pp_degree 4, num_micro_batches 8, legacy IR.
TEST(PaddleScheduleTest, Legacy1F1BMatchesPaddlesPlanTest) {
  ExpectStages(Spec(PaddleMode::k1F1B, 4, 8),
               {
                   {{"forward", "forward", "forward", "forward", "backward", "forward", "backward",
                     "forward", "backward", "forward", "backward", "forward", "backward",
                     "backward", "backward", "backward", "optimizer"},
                    {0, 1, 2, 3, 0, 4, 1, 5, 2, 6, 3, 7, 4, 5, 6, 7, 0}},
                   {{"forward", "forward", "forward", "backward", "forward", "backward", "forward",
                     "backward", "forward", "backward", "forward", "backward", "forward",
                     "backward", "backward", "backward", "optimizer"},
                    {0, 1, 2, 0, 3, 1, 4, 2, 5, 3, 6, 4, 7, 5, 6, 7, 0}},
                   {{"forward", "forward", "backward", "forward", "backward", "forward", "backward",
                     "forward", "backward", "forward", "backward", "forward", "backward", "forward",
                     "backward", "backward", "optimizer"},
                    {0, 1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 7, 0}},
                   {{"forward", "backward", "forward", "backward", "forward", "backward", "forward",
                     "backward", "forward", "backward", "forward", "backward", "forward",
                     "backward", "forward", "backward", "optimizer"},
                    {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0}},
               });
}

// test/auto_parallel/pir/test_pir_1f1b_plan.py as added by PR #66810 ("Support 1F1B for PIR",
// before the split of #70360), test_standalone_executor_1f1b_plan_stage0..3: the PIR pass then
// made the legacy list. Exposed as pir_split_recv_send = false.
TEST(PaddleScheduleTest, Pir1F1BBeforePr70360MatchesPaddlesPlanTest) {
  PaddleScheduleSpec spec = Spec(PaddleMode::k1F1B, 4, 8, JobListIr::kPir);
  spec.pir_split_recv_send = false;
  ExpectStages(spec, {
                         {{"forward", "forward", "forward", "forward", "backward", "forward",
                           "backward", "forward", "backward", "forward", "backward", "forward",
                           "backward", "backward", "backward", "backward", "optimizer"},
                          {0, 1, 2, 3, 0, 4, 1, 5, 2, 6, 3, 7, 4, 5, 6, 7, 0}},
                         {{"forward", "forward", "forward", "backward", "forward", "backward",
                           "forward", "backward", "forward", "backward", "forward", "backward",
                           "forward", "backward", "backward", "backward", "optimizer"},
                          {0, 1, 2, 0, 3, 1, 4, 2, 5, 3, 6, 4, 7, 5, 6, 7, 0}},
                         {{"forward", "forward", "backward", "forward", "backward", "forward",
                           "backward", "forward", "backward", "forward", "backward", "forward",
                           "backward", "forward", "backward", "backward", "optimizer"},
                          {0, 1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 7, 6, 7, 0}},
                         {{"forward", "backward", "forward", "backward", "forward", "backward",
                           "forward", "backward", "forward", "backward", "forward", "backward",
                           "forward", "backward", "forward", "backward", "optimizer"},
                          {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0}},
                     });
}

// test/auto_parallel/pir/test_pir_1f1b_plan.py as changed by PR #70360 ("fix communication hang
// issue on GPU-H"), test_standalone_executor_1f1b_plan_stage0..3: recv_forward / send_backward
// split out, steady quad (backward, recv_forward, send_backward, forward).
TEST(PaddleScheduleTest, Pir1F1BAfterPr70360MatchesPaddlesPlanTest) {
  ExpectStages(
      Spec(PaddleMode::k1F1B, 4, 8, JobListIr::kPir),
      {
          {{"recv_forward",  "forward",       "recv_forward",  "forward",       "recv_forward",
            "forward",       "recv_forward",  "forward",       "backward",      "recv_forward",
            "send_backward", "forward",       "backward",      "recv_forward",  "send_backward",
            "forward",       "backward",      "recv_forward",  "send_backward", "forward",
            "backward",      "recv_forward",  "send_backward", "forward",       "backward",
            "send_backward", "backward",      "send_backward", "backward",      "send_backward",
            "backward",      "send_backward", "optimizer"},
           {0, 0, 1, 1, 2, 2, 3, 3, 0, 4, 0, 4, 1, 5, 1, 5, 2,
            6, 2, 6, 3, 7, 3, 7, 4, 4, 5, 5, 6, 6, 7, 7, 0}},
          {{"recv_forward",  "forward",       "recv_forward",  "forward",       "recv_forward",
            "forward",       "backward",      "recv_forward",  "send_backward", "forward",
            "backward",      "recv_forward",  "send_backward", "forward",       "backward",
            "recv_forward",  "send_backward", "forward",       "backward",      "recv_forward",
            "send_backward", "forward",       "backward",      "recv_forward",  "send_backward",
            "forward",       "backward",      "send_backward", "backward",      "send_backward",
            "backward",      "send_backward", "optimizer"},
           {0, 0, 1, 1, 2, 2, 0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2,
            5, 3, 6, 3, 6, 4, 7, 4, 7, 5, 5, 6, 6, 7, 7, 0}},
          {{"recv_forward",  "forward",       "recv_forward",  "forward",       "backward",
            "recv_forward",  "send_backward", "forward",       "backward",      "recv_forward",
            "send_backward", "forward",       "backward",      "recv_forward",  "send_backward",
            "forward",       "backward",      "recv_forward",  "send_backward", "forward",
            "backward",      "recv_forward",  "send_backward", "forward",       "backward",
            "recv_forward",  "send_backward", "forward",       "backward",      "send_backward",
            "backward",      "send_backward", "optimizer"},
           {0, 0, 1, 1, 0, 2, 0, 2, 1, 3, 1, 3, 2, 4, 2, 4, 3,
            5, 3, 5, 4, 6, 4, 6, 5, 7, 5, 7, 6, 6, 7, 7, 0}},
          {{"recv_forward",  "forward",       "backward",      "recv_forward",  "send_backward",
            "forward",       "backward",      "recv_forward",  "send_backward", "forward",
            "backward",      "recv_forward",  "send_backward", "forward",       "backward",
            "recv_forward",  "send_backward", "forward",       "backward",      "recv_forward",
            "send_backward", "forward",       "backward",      "recv_forward",  "send_backward",
            "forward",       "backward",      "recv_forward",  "send_backward", "forward",
            "backward",      "send_backward", "optimizer"},
           {0, 0, 0, 1, 0, 1, 1, 2, 1, 2, 2, 3, 2, 3, 3, 4, 3,
            4, 4, 5, 4, 5, 5, 6, 5, 6, 6, 7, 6, 7, 7, 7, 0}},
      });
}

// pipelines.md §1.4's worked ZB-H1 example (p=4, m=8, s=1), read off pipeline_zero_bubble.py's
// PipelineZeroBubblePipelinePass._create_job_list.
TEST(PaddleScheduleTest, Zbh1StageOneDefersItsFirstWeightGradient) {
  StatusOr<std::vector<Job>> jobs = MakeJobList(Spec(PaddleMode::kZbh1, 4, 8), 1);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(*jobs,
            Zip({{"forward", "forward", "forward", "backward_b", "forward", "backward", "forward",
                  "backward", "forward", "backward", "forward", "backward", "forward", "backward",
                  "backward", "backward_b", "backward_w", "backward_w", "optimizer"},
                 {0, 1, 2, 0, 3, 1, 4, 2, 5, 3, 6, 4, 7, 5, 6, 7, 7, 0, 0}}))
      << Show(*jobs);
}

// pipelines.md §1.4: legacy VPP p=2, v=2, m=4, stage 0 computes
// F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 (F<chunk>.<mb>).
TEST(PaddleScheduleTest, LegacyVppInterleavesChunks) {
  PaddleScheduleSpec spec = Spec(PaddleMode::kVpp, 2, 4);
  spec.vpp = 2;
  StatusOr<std::vector<Job>> jobs = MakeJobList(spec, 0);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(*jobs, Zip({{"forward0", "forward0", "forward1", "forward1", "forward0", "backward1",
                         "forward0", "backward1", "forward1", "backward0", "forward1", "backward0",
                         "backward1", "backward1", "backward0", "backward0", "optimizer"},
                        {0, 1, 0, 1, 2, 0, 3, 1, 2, 0, 3, 1, 2, 3, 2, 3, 0}}))
      << Show(*jobs);
}

// PR #71104: the PIR VPP list warms up one forward more and then runs B-first quads, which keeps
// the compute order of the legacy list exactly; recv_forward<c> precedes each forward<c> and
// send_backward<c> follows each backward<c>.
TEST(PaddleScheduleTest, PirVppKeepsTheLegacyComputeOrder) {
  for (int p : {2, 4}) {
    for (int m : {p, 2 * p, 3 * p}) {
      PaddleScheduleSpec legacy = Spec(PaddleMode::kVpp, p, m);
      legacy.vpp = 2;
      PaddleScheduleSpec pir = legacy;
      pir.ir = JobListIr::kPir;
      for (int stage = 0; stage < p; ++stage) {
        StatusOr<std::vector<Job>> old_jobs = MakeJobList(legacy, stage);
        StatusOr<std::vector<Job>> new_jobs = MakeJobList(pir, stage);
        ASSERT_TRUE(old_jobs.ok() && new_jobs.ok());
        std::vector<Job> compute;
        for (size_t i = 0; i < new_jobs->size(); ++i) {
          const Job& job = (*new_jobs)[i];
          const JobTypeInfo info = ClassifyJobType(job.type);
          if (info.kind == JobKind::kRecvForward) {
            ASSERT_LT(i + 1, new_jobs->size());
            // The forward of the same chunk and micro-batch comes next, possibly after the
            // send_backward of the steady quad.
            const Job& next = (*new_jobs)[i + 1];
            const Job& forward = ClassifyJobType(next.type).kind == JobKind::kSendBackward
                                     ? (*new_jobs)[i + 2]
                                     : next;
            EXPECT_EQ(forward, (Job{"forward" + std::to_string(info.chunk), job.micro_batch}));
            continue;
          }
          if (info.kind == JobKind::kSendBackward) continue;
          compute.push_back(job);
        }
        EXPECT_EQ(compute, *old_jobs) << "p=" << p << " m=" << m << " stage " << stage;
      }
    }
  }
}

// PR #71104 as the p=4, m=8, v=2 example of the issue: stage 0 warms up 2(p-1) + (v-1)p + 1 = 11
// forwards before its first backward.
TEST(PaddleScheduleTest, PirVppWarmsUpOneStepMore) {
  PaddleScheduleSpec spec = Spec(PaddleMode::kVpp, 4, 8, JobListIr::kPir);
  spec.vpp = 2;
  StatusOr<std::vector<Job>> jobs = MakeJobList(spec, 0);
  ASSERT_TRUE(jobs.ok());
  int forwards = 0;
  for (const Job& job : *jobs) {
    if (ClassifyJobType(job.type).kind == JobKind::kBackward) break;
    if (ClassifyJobType(job.type).kind == JobKind::kForward) ++forwards;
  }
  EXPECT_EQ(forwards, 11);
  EXPECT_EQ((*jobs)[22], (Job{"backward1", 0}));
  // Forward micro-step 11 is chunk (11 % 8) / 4 = 0, its 8th micro-batch.
  EXPECT_EQ((*jobs)[23], (Job{"recv_forward0", 7}));
  EXPECT_EQ((*jobs)[24], (Job{"send_backward1", 0}));
  EXPECT_EQ((*jobs)[25], (Job{"forward0", 7}));
}

// pipeline_vpp.py: with split_backward and m == p every backward is backward_b<c>, and all the
// backward_w<c> follow (chunks v-1..0, micro-batches 0..m-1); the PIR pass then keeps the p2p ops
// in forward / backward_b, so there are no recv_forward / send_backward jobs.
TEST(PaddleScheduleTest, VppSplitBackwardAppendsEveryWeightGradient) {
  for (JobListIr ir : {JobListIr::kLegacy, JobListIr::kPir}) {
    PaddleScheduleSpec spec = Spec(PaddleMode::kVpp, 2, 2, ir);
    spec.vpp = 2;
    spec.split_backward = true;
    EXPECT_FALSE(HasRecvSendJobs(spec));
    StatusOr<std::vector<Job>> jobs = MakeJobList(spec, 1);
    ASSERT_TRUE(jobs.ok());
    EXPECT_EQ(*jobs, Zip({{"forward0", "forward0", "forward1", "forward1", "backward_b1",
                           "backward_b1", "backward_b0", "backward_b0", "backward_w1",
                           "backward_w1", "backward_w0", "backward_w0", "optimizer"},
                          {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}}))
        << Show(*jobs);
  }
  // m != p: Paddle ignores split_backward.
  PaddleScheduleSpec spec = Spec(PaddleMode::kVpp, 2, 4, JobListIr::kPir);
  spec.vpp = 2;
  spec.split_backward = true;
  EXPECT_TRUE(HasRecvSendJobs(spec));
}

// ZBVPP lists as Paddle's own VScheduleCreator (python/paddle/distributed/passes/
// pipeline_scheduler_pass/pipeline_zero_bubble.py at ccd49a3de4dce0a7f6f96f221c55aaee1bf30a42,
// unchanged in the newest version seen) makes them with the pass's default program_runtimes
// [61, 72, 71, 34, 3] and memory_limit_times -1. Paddle has no test asserting these lists; the
// literals were recorded from that Python code run outside this project.
TEST(PaddleScheduleTest, ZbvppMatchesPaddlesVScheduleCreator) {
  PaddleScheduleSpec two = Spec(PaddleMode::kZbvpp, 2, 2);
  two.vpp = 2;
  ExpectStages(two, {
                        {{"forward0", "forward0", "forward1", "backward_b1", "forward1",
                          "backward_b1", "backward_b0", "backward_w1", "backward_b0", "backward_w1",
                          "backward_w0", "backward_w0", "optimizer"},
                         {0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0}},
                        {{"forward0", "forward1", "forward0", "forward1", "backward_b1",
                          "backward_b0", "backward_w1", "backward_b1", "backward_b0", "backward_w0",
                          "backward_w1", "backward_w0", "optimizer"},
                         {0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0}},
                    });
  PaddleScheduleSpec four = Spec(PaddleMode::kZbvpp, 4, 4);
  four.vpp = 2;
  ExpectStages(four,
               {
                   {{"forward0",    "forward0",    "forward0",    "forward0",    "forward1",
                     "backward_b1", "forward1",    "backward_b1", "forward1",    "backward_b1",
                     "forward1",    "backward_b1", "backward_b0", "backward_w1", "backward_b0",
                     "backward_w1", "backward_w1", "backward_b0", "backward_b0", "backward_w1",
                     "backward_w0", "backward_w0", "backward_w0", "backward_w0", "optimizer"},
                    {0, 1, 2, 3, 0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3, 0, 1, 2, 3, 0}},
                   {{"forward0",    "forward0",    "forward0",    "forward0",    "forward1",
                     "forward1",    "backward_b1", "forward1",    "backward_w1", "backward_b1",
                     "forward1",    "backward_w1", "backward_b1", "backward_b0", "backward_w1",
                     "backward_b1", "backward_b0", "backward_w0", "backward_w1", "backward_b0",
                     "backward_w0", "backward_b0", "backward_w0", "backward_w0", "optimizer"},
                    {0, 1, 2, 3, 0, 1, 0, 2, 0, 1, 3, 1, 2, 0, 2, 3, 1, 0, 3, 2, 1, 3, 2, 3, 0}},
                   {{"forward0",    "forward0",    "forward0",    "forward1",    "forward0",
                     "forward1",    "forward1",    "backward_b1", "forward1",    "backward_w1",
                     "backward_b1", "backward_b0", "backward_w1", "backward_b1", "backward_b0",
                     "backward_w0", "backward_b1", "backward_b0", "backward_w1", "backward_b0",
                     "backward_w0", "backward_w1", "backward_w0", "backward_w0", "optimizer"},
                    {0, 1, 2, 0, 3, 1, 2, 0, 3, 0, 1, 0, 1, 2, 1, 0, 3, 2, 2, 3, 1, 3, 2, 3, 0}},
                   {{"forward0",    "forward1",    "forward0",    "forward1",    "forward0",
                     "forward1",    "forward0",    "forward1",    "backward_b1", "backward_b0",
                     "backward_b1", "backward_b0", "backward_w1", "backward_b1", "backward_b0",
                     "backward_w0", "backward_b1", "backward_b0", "backward_w1", "backward_w0",
                     "backward_w1", "backward_w0", "backward_w1", "backward_w0", "optimizer"},
                    {0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 0, 2, 2, 0, 3, 3, 1, 1, 2, 2, 3, 3, 0}},
               });
  // An odd chunk count puts the loss on stage p-1 and starts the backward there.
  PaddleScheduleSpec three_chunks = Spec(PaddleMode::kZbvpp, 2, 2);
  three_chunks.vpp = 3;
  ExpectStages(three_chunks,
               {
                   {{"forward0", "forward0", "forward1", "forward2", "forward1", "forward2",
                     "backward_b2", "backward_b1", "backward_w2", "backward_b2", "backward_w1",
                     "backward_b0", "backward_b1", "backward_w2", "backward_w0", "backward_w1",
                     "backward_b0", "backward_w0", "optimizer"},
                    {0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0}},
                   {{"forward0", "forward1", "forward0", "forward1", "forward2", "backward_b2",
                     "forward2", "backward_b2", "backward_b1", "backward_b0", "backward_w2",
                     "backward_w2", "backward_b1", "backward_b0", "backward_w1", "backward_w0",
                     "backward_w1", "backward_w0", "optimizer"},
                    {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0}},
               });
}

TEST(PaddleScheduleTest, ParsesAndNamesEveryMode) {
  for (const char* name : {"FThenB", "1F1B", "Eager1F1B", "VPP", "ZBH1", "ZBVPP"}) {
    StatusOr<PaddleMode> mode = ParsePaddleMode(name);
    ASSERT_TRUE(mode.ok()) << name;
    EXPECT_STREQ(PaddleModeName(*mode), name);
  }
  StatusOr<PaddleMode> bad = ParsePaddleMode("1f1b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "unknown Paddle schedule mode '1f1b': expected FThenB, 1F1B, Eager1F1B, VPP, ZBH1 or "
            "ZBVPP");
}

TEST(PaddleScheduleTest, ClassifiesPaddlesJobTypes) {
  const std::vector<std::tuple<std::string, JobKind, int>> cases = {
      {"forward", JobKind::kForward, -1},
      {"forward12", JobKind::kForward, 12},
      {"backward", JobKind::kBackward, -1},
      {"backward1", JobKind::kBackward, 1},
      {"backward_b", JobKind::kBackwardB, -1},
      {"backward_b0", JobKind::kBackwardB, 0},
      {"backward_w", JobKind::kBackwardW, -1},
      {"backward_w1_reduce", JobKind::kBackwardW, 1},
      {"recv_forward", JobKind::kRecvForward, -1},
      {"recv_forward3", JobKind::kRecvForward, 3},
      {"send_backward", JobKind::kSendBackward, -1},
      {"send_backward0", JobKind::kSendBackward, 0},
      {"optimizer", JobKind::kOptimizer, -1},
      {"lr", JobKind::kOther, -1},
      {"forward_0", JobKind::kOther, -1},
      {"forward1x", JobKind::kOther, -1},
      {"backward-1", JobKind::kOther, -1},
  };
  for (const auto& [type, kind, chunk] : cases) {
    const JobTypeInfo info = ClassifyJobType(type);
    EXPECT_EQ(info.kind, kind) << type;
    EXPECT_EQ(info.chunk, chunk) << type;
  }
}

// Each refusal names the precondition Paddle asserts.
TEST(PaddleScheduleTest, RefusesWhatPaddleRefuses) {
  struct Case {
    PaddleScheduleSpec spec;
    std::string message;
  };
  PaddleScheduleSpec zbvpp_many = Spec(PaddleMode::kZbvpp, 2, 4);
  zbvpp_many.vpp = 2;
  PaddleScheduleSpec zbvpp_odd = Spec(PaddleMode::kZbvpp, 4, 2);
  zbvpp_odd.vpp = 2;
  PaddleScheduleSpec zbvpp_one_chunk = Spec(PaddleMode::kZbvpp, 2, 2);
  PaddleScheduleSpec chunks_1f1b = Spec(PaddleMode::k1F1B, 2, 2);
  chunks_1f1b.vpp = 2;
  PaddleScheduleSpec split_1f1b = Spec(PaddleMode::k1F1B, 2, 2);
  split_1f1b.split_backward = true;
  PaddleScheduleSpec vpp_few = Spec(PaddleMode::kVpp, 4, 2);
  vpp_few.vpp = 2;
  const std::vector<Case> cases = {
      {Spec(PaddleMode::k1F1B, 4, 3),
       "1F1B needs num_micro_batches >= pp_degree (Paddle asserts pp_degree <= num_micro_batches): "
       "got 3 micro-batches for 4 stages"},
      {Spec(PaddleMode::kZbh1, 2, 1),
       "ZBH1 needs num_micro_batches >= pp_degree (Paddle asserts pp_degree <= num_micro_batches): "
       "got 1 micro-batches for 2 stages"},
      {Spec(PaddleMode::kEager1F1B, 2, 2),
       "Eager1F1B needs num_micro_batches >= 2 * (pp_degree - pp_stage) - 1 on every stage, "
       "2 * pp_degree - 1 = 3 on stage 0: got 2 micro-batches"},
      {vpp_few,
       "VPP needs num_micro_batches >= pp_degree (Paddle asserts accumulate_steps >= num_stages): "
       "got 2 micro-batches for 4 stages"},
      {zbvpp_many,
       "ZBVPP needs num_micro_batches <= pp_degree (Paddle: \"zbvpp now only supports accumulate "
       "steps <= pp degree\"): got 4 micro-batches for 2 stages"},
      {zbvpp_odd,
       "ZBVPP needs num_micro_batches % pp_degree == 0: got 2 micro-batches for 4 stages"},
      {zbvpp_one_chunk, "ZBVPP needs vpp_degree >= 2 (a V of two chunks): got 1"},
      {Spec(PaddleMode::kZbh1, 2, 2, JobListIr::kPir),
       "ZBH1 has no PIR form: Paddle's PIR pipeline pass supports only FThenB, 1F1B and VPP"},
      {Spec(PaddleMode::kZbvpp, 2, 2, JobListIr::kPir),
       "ZBVPP has no PIR form: Paddle's PIR pipeline pass supports only FThenB, 1F1B and VPP"},
      {Spec(PaddleMode::kEager1F1B, 2, 4, JobListIr::kPir),
       "Eager1F1B has no PIR form: Paddle's PIR pipeline pass supports only FThenB, 1F1B and VPP"},
      {chunks_1f1b, "1F1B: vpp_degree 2 given, but only VPP and ZBVPP have model chunks"},
      {split_1f1b,
       "1F1B: split_backward applies to VPP only (ZBH1 and ZBVPP always split backward)"},
      {Spec(PaddleMode::kFThenB, 0, 2), "FThenB: pp_degree must be >= 1, got 0"},
      {Spec(PaddleMode::kFThenB, 2, 0), "FThenB: num_micro_batches must be >= 1, got 0"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<std::vector<Job>>> lists = MakeJobLists(c.spec);
    ASSERT_FALSE(lists.ok()) << c.message;
    EXPECT_EQ(lists.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(lists.status().message(), c.message);
  }
  StatusOr<std::vector<Job>> stage = MakeJobList(Spec(PaddleMode::kFThenB, 2, 2), 2);
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.status().message(),
            "pp_stage 2 is out of range: the pipeline has 2 stages (0..1)");
}

// Every mode × p ∈ {2, 4} × m ∈ {p, 2p} (v = 2 for VPP and ZBVPP, with and without
// split_backward for VPP) × IR: each stage's list runs each micro-batch's forward exactly once per
// chunk, its input-gradient and weight-gradient parts exactly once per chunk (backward = both,
// backward_b / backward_w one each), a micro-batch's backward after its forward and a W after its
// B, PIR recv_forward / send_backward exactly where the spec says, and one optimizer last.
TEST(PaddleScheduleTest, EveryModeRunsEachMicroBatchOncePerChunk) {
  int generated = 0;
  for (PaddleMode mode : {PaddleMode::kFThenB, PaddleMode::k1F1B, PaddleMode::kEager1F1B,
                          PaddleMode::kVpp, PaddleMode::kZbh1, PaddleMode::kZbvpp}) {
    for (JobListIr ir : {JobListIr::kLegacy, JobListIr::kPir}) {
      for (int p : {2, 4}) {
        for (int m : {p, 2 * p}) {
          for (bool split : {false, true}) {
            PaddleScheduleSpec spec = Spec(mode, p, m, ir);
            const bool chunked = mode == PaddleMode::kVpp || mode == PaddleMode::kZbvpp;
            if (chunked) spec.vpp = 2;
            if (split && mode != PaddleMode::kVpp) continue;
            spec.split_backward = split;
            StatusOr<std::vector<std::vector<Job>>> lists = MakeJobLists(spec);
            const bool pir_twin = mode == PaddleMode::kFThenB || mode == PaddleMode::k1F1B ||
                                  mode == PaddleMode::kVpp;
            const bool valid = (ir == JobListIr::kLegacy || pir_twin) &&
                               !(mode == PaddleMode::kEager1F1B && m == p) &&
                               !(mode == PaddleMode::kZbvpp && m != p);
            const std::string where =
                std::string(PaddleModeName(mode)) + (ir == JobListIr::kPir ? " pir" : " legacy") +
                " p=" + std::to_string(p) + " m=" + std::to_string(m) + (split ? " split" : "");
            ASSERT_EQ(lists.ok(), valid) << where << ": " << lists.status().ToString();
            if (!valid) continue;
            ++generated;
            ASSERT_EQ(static_cast<int>(lists->size()), p) << where;
            const int chunks = chunked ? 2 : 1;
            for (int stage = 0; stage < p; ++stage) {
              const std::vector<Job>& jobs = (*lists)[stage];
              const std::string at = where + " stage " + std::to_string(stage) + ": " + Show(jobs);
              ASSERT_FALSE(jobs.empty()) << at;
              EXPECT_EQ(jobs.back(), (Job{"optimizer", 0})) << at;
              // [part][chunk][micro-batch] -> job index; parts: F, B (input grad), W, recv, send.
              std::map<std::tuple<int, int, int>, int> seen;
              const auto mark = [&](int part, int chunk, int mb, int index) {
                EXPECT_TRUE(seen.emplace(std::make_tuple(part, chunk, mb), index).second)
                    << at << " job " << index << " repeats part " << part;
              };
              for (int i = 0; i + 1 < static_cast<int>(jobs.size()); ++i) {
                const JobTypeInfo info = ClassifyJobType(jobs[i].type);
                EXPECT_EQ(info.chunk >= 0, chunked) << at << " job " << i;
                const int c = std::max(info.chunk, 0);
                const int mb = jobs[i].micro_batch;
                ASSERT_TRUE(mb >= 0 && mb < m) << at << " job " << i;
                switch (info.kind) {
                  case JobKind::kForward:
                    mark(0, c, mb, i);
                    break;
                  case JobKind::kBackward:
                    mark(1, c, mb, i);
                    mark(2, c, mb, i);
                    break;
                  case JobKind::kBackwardB:
                    mark(1, c, mb, i);
                    break;
                  case JobKind::kBackwardW:
                    mark(2, c, mb, i);
                    break;
                  case JobKind::kRecvForward:
                    EXPECT_TRUE(HasRecvSendJobs(spec)) << at;
                    mark(3, c, mb, i);
                    break;
                  case JobKind::kSendBackward:
                    EXPECT_TRUE(HasRecvSendJobs(spec)) << at;
                    mark(4, c, mb, i);
                    break;
                  default:
                    ADD_FAILURE() << at << " unexpected job " << jobs[i].type;
                }
              }
              const int parts = HasRecvSendJobs(spec) ? 5 : 3;
              EXPECT_EQ(static_cast<int>(seen.size()), parts * chunks * m) << at;
              for (int c = 0; c < chunks; ++c) {
                for (int mb = 0; mb < m; ++mb) {
                  const auto at_part = [&](int part) {
                    auto it = seen.find({part, c, mb});
                    return it == seen.end() ? -1 : it->second;
                  };
                  EXPECT_LT(at_part(0), at_part(1)) << at << " chunk " << c << " mb " << mb;
                  EXPECT_LE(at_part(1), at_part(2)) << at << " chunk " << c << " mb " << mb;
                  if (parts == 5) {
                    EXPECT_LT(at_part(3), at_part(0)) << at;
                    EXPECT_LT(at_part(1), at_part(4)) << at;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  // FThenB, 1F1B (2 IRs each), VPP (2 IRs × 2 split), Eager1F1B (m = 2p), ZBH1 and ZBVPP (m = p).
  EXPECT_EQ(generated, 2 * 4 + 2 * 4 + 4 * 4 + 2 + 4 + 2);
}

}  // namespace
}  // namespace irm::schedules
