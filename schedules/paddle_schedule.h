// Paddle's pipeline job lists (pipelines.md §1.4): for each schedule mode, the ordered jobs one
// pipeline stage runs in a step — the `core.Job(type, micro_batch_id)` list of Paddle's
// `_create_job_list` (legacy IR) or `_create_job_list_in_pir` / `_pir_create_job_list` (PIR) —
// with Paddle's job type names: forward, backward, optimizer; recv_forward, send_backward (PIR
// 1F1B/VPP); forward<c>/backward<c> per VPP chunk c; backward_b, backward_w (zero bubble).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace irm::schedules {

// Paddle's registered pass names without the `pipeline_scheduler_` prefix.
enum class PaddleMode { kFThenB, k1F1B, kEager1F1B, kVpp, kZbh1, kZbvpp };
// "FThenB", "1F1B", "Eager1F1B", "VPP", "ZBH1", "ZBVPP".
const char* PaddleModeName(PaddleMode mode);
// The names above (case as Paddle spells them). kInvalidArgument listing them otherwise.
StatusOr<PaddleMode> ParsePaddleMode(std::string_view text);

// Which pass produced the list: the legacy (ProgramDesc) pass or its PIR twin.
enum class JobListIr { kLegacy, kPir };

// One job of a plan, as a bundle's plan.json holds it.
struct Job {
  std::string type;
  int micro_batch = 0;
  bool operator==(const Job&) const = default;
};

struct PaddleScheduleSpec {
  PaddleMode mode = PaddleMode::kFThenB;
  int pp = 1;                   // pp_degree: stages
  int micro_batches = 1;        // num_micro_batches = accumulate_steps
  int vpp = 1;                  // vpp_degree: model chunks per stage (VPP, ZBVPP)
  bool split_backward = false;  // VPP only; it takes effect only where m == p, as in Paddle
  JobListIr ir = JobListIr::kLegacy;
  // PIR 1F1B / VPP only: the recv_forward/send_backward split of PR #70360 (1F1B) and #71104
  // (VPP). false gives the PIR list from before those PRs, which is the legacy list (the PIR
  // passes then reused `_create_job_list`; test_pir_1f1b_plan.py before #70360 asserts it).
  bool pir_split_recv_send = true;
  // ZBVPP only: Paddle's `program_runtimes` (strategy.pipeline.program_runtimes), the costs its
  // greedy VScheduleCreator schedules with: forward, backward_b, backward_w, loss, communication.
  // The default is Paddle's default; {1, 1, 1, 0, 0} gives unit costs.
  std::array<int, 5> zbvpp_program_runtimes = {61, 72, 71, 34, 3};
};

// kInvalidArgument naming the precondition a spec breaks: the asserts of Paddle's passes
// (m >= p for 1F1B, ZBH1 and VPP; 2(p-s)-1 <= m on every stage for Eager1F1B; m % p == 0 and
// m <= p for ZBVPP), the modes Paddle's PIR side lacks, and flags given to a mode without them.
Status ValidatePaddleScheduleSpec(const PaddleScheduleSpec& spec);

// The jobs stage `stage` (0-based pp_stage) runs in one step, in order; the last is `optimizer`.
// Every job's micro_batch is as Paddle sets it; the optimizer's is 0 everywhere (FThenB, 1F1B and
// the ZB passes set 0, VPP and Eager1F1B leave core.Job's default, which is 0).
StatusOr<std::vector<Job>> MakeJobList(const PaddleScheduleSpec& spec, int stage);
// MakeJobList for every stage 0..pp-1.
StatusOr<std::vector<std::vector<Job>>> MakeJobLists(const PaddleScheduleSpec& spec);

// Whether the spec's lists carry separate recv_forward / send_backward jobs (PIR 1F1B and VPP with
// the split, unless VPP really splits backward into backward_b/backward_w, where Paddle's PIR pass
// keeps the p2p ops in forward and backward_b).
bool HasRecvSendJobs(const PaddleScheduleSpec& spec);

// What a job type names, read from Paddle's spelling: "forward1" is kForward of chunk 1,
// "backward_w" is kBackwardW with no chunk (-1), "backward_w0_reduce" kBackwardW of chunk 0 (the
// sharding-reduce variant of VPP's split backward).
enum class JobKind {
  kForward,
  kBackward,
  kBackwardB,
  kBackwardW,
  kRecvForward,
  kSendBackward,
  kOptimizer,
  kOther,  // anything else ("lr", the pieces of 1F1B's backward/forward overlap)
};
struct JobTypeInfo {
  JobKind kind = JobKind::kOther;
  int chunk = -1;  // -1: the type carries no chunk id
};
JobTypeInfo ClassifyJobType(std::string_view type);

}  // namespace irm::schedules
