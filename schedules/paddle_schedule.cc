// Paddle's job lists (paddle_schedule.h), rebuilt rule by rule from the `_create_job_list`
// methods of python/paddle/distributed/passes/pipeline_scheduler_pass/ (pipeline_fthenb.py,
// pipeline_1f1b.py, pipeline_eager_1f1b.py, pipeline_vpp.py, pipeline_zero_bubble.py): the legacy
// forms as of January 2025, the PIR forms of PR #70360 (1F1B) and PR #71104 (VPP). ZBVPP's greedy
// creator lives in paddle_zbvpp.cc.
#include "schedules/paddle_schedule.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "schedules/paddle_zbvpp.h"

namespace irm::schedules {
namespace {

constexpr const char* kForward = "forward";
constexpr const char* kBackward = "backward";
constexpr const char* kRecvForward = "recv_forward";
constexpr const char* kSendBackward = "send_backward";
constexpr const char* kOptimizer = "optimizer";

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, std::move(message));
}

void Add(std::vector<Job>* jobs, std::string type, int micro_batch) {
  jobs->push_back(Job{std::move(type), micro_batch});
}

std::string Chunked(const char* type, int chunk) { return fmt::format("{}{}", type, chunk); }

std::vector<Job> FThenB(int m) {
  std::vector<Job> jobs;
  for (int i = 0; i < m; ++i) Add(&jobs, kForward, i);
  for (int i = 0; i < m; ++i) Add(&jobs, kBackward, i);
  Add(&jobs, kOptimizer, 0);
  return jobs;
}

// Legacy 1F1B and Eager1F1B differ only in the warm-up: F×w, then (B, F)×(m-w), then B×w. The
// steady pair is B-first, so Paddle's w = p-s (one more than Megatron's F-first p-s-1) gives the
// same compute order.
std::vector<Job> OneFOneB(int m, int warmup) {
  std::vector<Job> jobs;
  int f = 0;
  int b = 0;
  for (int i = 0; i < warmup; ++i) Add(&jobs, kForward, f++);
  for (int i = 0; i < m - warmup; ++i) {
    Add(&jobs, kBackward, b++);
    Add(&jobs, kForward, f++);
  }
  for (int i = 0; i < warmup; ++i) Add(&jobs, kBackward, b++);
  Add(&jobs, kOptimizer, 0);
  return jobs;
}

// PIR 1F1B with the split of PR #70360: warm-up (recv_forward, forward)×(p-s), steady
// (backward, recv_forward, send_backward, forward), cool-down (backward, send_backward)×(p-s). The
// steady quad receives the next activation before sending the gradient back, which is what keeps
// two neighbours from both sending first.
std::vector<Job> PirOneFOneB(int m, int warmup) {
  std::vector<Job> jobs;
  int f = 0;
  int b = 0;
  for (int i = 0; i < warmup; ++i, ++f) {
    Add(&jobs, kRecvForward, f);
    Add(&jobs, kForward, f);
  }
  for (int i = 0; i < m - warmup; ++i, ++f, ++b) {
    Add(&jobs, kBackward, b);
    Add(&jobs, kRecvForward, f);
    Add(&jobs, kSendBackward, b);
    Add(&jobs, kForward, f);
  }
  for (int i = 0; i < warmup; ++i, ++b) {
    Add(&jobs, kBackward, b);
    Add(&jobs, kSendBackward, b);
  }
  Add(&jobs, kOptimizer, 0);
  return jobs;
}

// ZB-H1 (pipeline_zero_bubble.py, PipelineZeroBubblePipelinePass): stage s splits its first s
// backwards into backward_b and defers their backward_w to the end, where they fill the bubble
// of the cool-down.
std::vector<Job> ZeroBubbleH1(int p, int m, int s) {
  std::vector<Job> jobs;
  int f = 0;
  int b = 0;
  for (int i = 0; i < p - s; ++i) Add(&jobs, kForward, f++);
  for (int i = 0; i < s; ++i) {
    Add(&jobs, "backward_b", b++);
    Add(&jobs, kForward, f++);
  }
  for (int i = 0; i < m - p; ++i) {
    Add(&jobs, kBackward, b++);
    Add(&jobs, kForward, f++);
  }
  for (int i = 0; i < p - s - 1; ++i) Add(&jobs, kBackward, b++);
  if (s > 0) {
    Add(&jobs, "backward_b", b);
    Add(&jobs, "backward_w", b);
  } else {
    Add(&jobs, kBackward, b);
  }
  for (int i = 0; i < s; ++i) Add(&jobs, "backward_w", i);
  Add(&jobs, kOptimizer, 0);
  return jobs;
}

// VPP, legacy (`_create_job_list`) and PIR (`_pir_create_job_list`). Micro-step k runs chunk
// (k % (p·v)) / p (by `remainder` = m % p past the last whole round); backward steps mirror the
// chunk; each chunk numbers its own micro-batches. Warm-up is every forward when m == p, else
// Megatron's 2(p-s-1) + (v-1)p. Legacy steady pairs are F-first; the PIR split turns them into the
// B-first quad (backward, recv_forward, send_backward, forward) and warms up one step more to keep
// the compute order. A real split backward (split_backward and m == p) names backwards backward_b
// and appends every backward_w (chunks v-1..0, micro-batches 0..m-1); Paddle's PIR pass then keeps
// the legacy shape (no recv/send jobs, no extra warm-up step).
std::vector<Job> Vpp(const PaddleScheduleSpec& spec, int s, bool pir_split) {
  const int p = spec.pp;
  const int m = spec.micro_batches;
  const int v = spec.vpp;
  const int remainder = m % p;
  const auto chunk_of = [&](int step, bool forward) {
    int chunk = step % (p * v);
    chunk = step <= (m / p) * (p * v) ? chunk / p : chunk / remainder;
    return forward ? chunk : v - chunk - 1;
  };
  std::vector<int> forward_count(v, 0);
  std::vector<int> backward_count(v, 0);

  const int total = m * v;
  int warmup = m == p ? total : std::min(2 * (p - s - 1) + (v - 1) * p, total);
  const bool real_split_backward = m == p && spec.split_backward;
  const bool quad = pir_split && !real_split_backward;
  if (quad) warmup = std::min(total, warmup + 1);
  const int steady = total - warmup;
  const char* backward = real_split_backward ? "backward_b" : kBackward;

  std::vector<Job> jobs;
  for (int step = 0; step < warmup; ++step) {
    const int c = chunk_of(step, true);
    const int mb = forward_count[c]++;
    if (quad) Add(&jobs, Chunked(kRecvForward, c), mb);
    Add(&jobs, Chunked(kForward, c), mb);
  }
  for (int step = 0; step < steady; ++step) {
    const int fc = chunk_of(step + warmup, true);
    const int fmb = forward_count[fc]++;
    const int bc = chunk_of(step, false);
    const int bmb = backward_count[bc]++;
    if (quad) {
      Add(&jobs, Chunked(kBackward, bc), bmb);
      Add(&jobs, Chunked(kRecvForward, fc), fmb);
      Add(&jobs, Chunked(kSendBackward, bc), bmb);
      Add(&jobs, Chunked(kForward, fc), fmb);
    } else {
      Add(&jobs, Chunked(kForward, fc), fmb);
      Add(&jobs, Chunked(backward, bc), bmb);
    }
  }
  for (int step = steady; step < total; ++step) {
    const int c = chunk_of(step, false);
    const int mb = backward_count[c]++;
    Add(&jobs, Chunked(backward, c), mb);
    if (quad) Add(&jobs, Chunked(kSendBackward, c), mb);
  }
  if (real_split_backward) {
    for (int c = v - 1; c >= 0; --c) {
      for (int mb = 0; mb < m; ++mb) Add(&jobs, Chunked("backward_w", c), mb);
    }
  }
  Add(&jobs, kOptimizer, 0);
  return jobs;
}

}  // namespace

const char* PaddleModeName(PaddleMode mode) {
  switch (mode) {
    case PaddleMode::kFThenB:
      return "FThenB";
    case PaddleMode::k1F1B:
      return "1F1B";
    case PaddleMode::kEager1F1B:
      return "Eager1F1B";
    case PaddleMode::kVpp:
      return "VPP";
    case PaddleMode::kZbh1:
      return "ZBH1";
    case PaddleMode::kZbvpp:
      return "ZBVPP";
  }
  return "FThenB";
}

StatusOr<PaddleMode> ParsePaddleMode(std::string_view text) {
  for (PaddleMode mode : {PaddleMode::kFThenB, PaddleMode::k1F1B, PaddleMode::kEager1F1B,
                          PaddleMode::kVpp, PaddleMode::kZbh1, PaddleMode::kZbvpp}) {
    if (text == PaddleModeName(mode)) return mode;
  }
  return Invalid(fmt::format(
      "unknown Paddle schedule mode '{}': expected FThenB, 1F1B, Eager1F1B, VPP, ZBH1 or ZBVPP",
      text));
}

Status ValidatePaddleScheduleSpec(const PaddleScheduleSpec& spec) {
  const char* name = PaddleModeName(spec.mode);
  const int p = spec.pp;
  const int m = spec.micro_batches;
  if (p < 1) return Invalid(fmt::format("{}: pp_degree must be >= 1, got {}", name, p));
  if (m < 1) return Invalid(fmt::format("{}: num_micro_batches must be >= 1, got {}", name, m));
  if (spec.vpp < 1)
    return Invalid(fmt::format("{}: vpp_degree must be >= 1, got {}", name, spec.vpp));
  const bool chunked = spec.mode == PaddleMode::kVpp || spec.mode == PaddleMode::kZbvpp;
  if (!chunked && spec.vpp != 1) {
    return Invalid(fmt::format("{}: vpp_degree {} given, but only VPP and ZBVPP have model chunks",
                               name, spec.vpp));
  }
  if (spec.split_backward && spec.mode != PaddleMode::kVpp) {
    return Invalid(fmt::format(
        "{}: split_backward applies to VPP only (ZBH1 and ZBVPP always split backward)", name));
  }
  // static/pir_pass.py::pipeline_pass: "pipeline scheduler only support FThenB, 1F1B and VPP now".
  if (spec.ir == JobListIr::kPir && spec.mode != PaddleMode::kFThenB &&
      spec.mode != PaddleMode::k1F1B && spec.mode != PaddleMode::kVpp) {
    return Invalid(fmt::format(
        "{} has no PIR form: Paddle's PIR pipeline pass supports only FThenB, 1F1B and VPP", name));
  }
  switch (spec.mode) {
    case PaddleMode::kFThenB:
      break;
    case PaddleMode::k1F1B:
    case PaddleMode::kZbh1:
      if (p > m) {
        return Invalid(
            fmt::format("{} needs num_micro_batches >= pp_degree (Paddle asserts pp_degree <= "
                        "num_micro_batches): got {} micro-batches for {} stages",
                        name, m, p));
      }
      break;
    case PaddleMode::kEager1F1B:
      // Asserted per stage; stage 0 has the largest warm-up.
      if (2 * p - 1 > m) {
        return Invalid(fmt::format(
            "Eager1F1B needs num_micro_batches >= 2 * (pp_degree - pp_stage) - 1 on every stage, "
            "2 * pp_degree - 1 = {} on stage 0: got {} micro-batches",
            2 * p - 1, m));
      }
      break;
    case PaddleMode::kVpp:
      if (m < p) {
        return Invalid(fmt::format(
            "VPP needs num_micro_batches >= pp_degree (Paddle asserts accumulate_steps >= "
            "num_stages): got {} micro-batches for {} stages",
            m, p));
      }
      break;
    case PaddleMode::kZbvpp:
      if (m % p != 0) {
        return Invalid(fmt::format(
            "ZBVPP needs num_micro_batches % pp_degree == 0: got {} micro-batches for {} stages", m,
            p));
      }
      if (m > p) {
        return Invalid(fmt::format(
            "ZBVPP needs num_micro_batches <= pp_degree (Paddle: \"zbvpp now only supports "
            "accumulate steps <= pp degree\"): got {} micro-batches for {} stages",
            m, p));
      }
      if (spec.vpp < 2) {
        // VScheduleCreator places forward1 before anything else; with one chunk there is none.
        return Invalid(
            fmt::format("ZBVPP needs vpp_degree >= 2 (a V of two chunks): got {}", spec.vpp));
      }
      for (int runtime : spec.zbvpp_program_runtimes) {
        if (runtime < 0) return Invalid("ZBVPP program_runtimes must be >= 0");
      }
      break;
  }
  return Status::Ok();
}

bool HasRecvSendJobs(const PaddleScheduleSpec& spec) {
  if (spec.ir != JobListIr::kPir || !spec.pir_split_recv_send) return false;
  if (spec.mode == PaddleMode::k1F1B) return true;
  if (spec.mode == PaddleMode::kVpp) {
    return !(spec.split_backward && spec.micro_batches == spec.pp);
  }
  return false;
}

StatusOr<std::vector<Job>> MakeJobList(const PaddleScheduleSpec& spec, int stage) {
  IRM_RETURN_IF_ERROR(ValidatePaddleScheduleSpec(spec));
  if (stage < 0 || stage >= spec.pp) {
    return Invalid(fmt::format("pp_stage {} is out of range: the pipeline has {} stages (0..{})",
                               stage, spec.pp, spec.pp - 1));
  }
  const int p = spec.pp;
  const int m = spec.micro_batches;
  switch (spec.mode) {
    case PaddleMode::kFThenB:
      return FThenB(m);
    case PaddleMode::k1F1B:
      return HasRecvSendJobs(spec) ? PirOneFOneB(m, p - stage) : OneFOneB(m, p - stage);
    case PaddleMode::kEager1F1B:
      return OneFOneB(m, 2 * (p - stage) - 1);
    case PaddleMode::kVpp:
      return Vpp(spec, stage, HasRecvSendJobs(spec));
    case PaddleMode::kZbh1:
      return ZeroBubbleH1(p, m, stage);
    case PaddleMode::kZbvpp: {
      IRM_ASSIGN_OR_RETURN(std::vector<std::vector<Job>> lists, ZbvppJobLists(spec));
      return std::move(lists[stage]);
    }
  }
  return Invalid("unknown Paddle schedule mode");
}

StatusOr<std::vector<std::vector<Job>>> MakeJobLists(const PaddleScheduleSpec& spec) {
  IRM_RETURN_IF_ERROR(ValidatePaddleScheduleSpec(spec));
  // ZBVPP's creator schedules every stage at once; build it once rather than p times.
  if (spec.mode == PaddleMode::kZbvpp) return ZbvppJobLists(spec);
  std::vector<std::vector<Job>> lists;
  for (int stage = 0; stage < spec.pp; ++stage) {
    IRM_ASSIGN_OR_RETURN(std::vector<Job> jobs, MakeJobList(spec, stage));
    lists.push_back(std::move(jobs));
  }
  return lists;
}

JobTypeInfo ClassifyJobType(std::string_view type) {
  // Longest names first: "backward_b" before "backward", "recv_forward" before "forward".
  static constexpr std::pair<std::string_view, JobKind> kPrefixes[] = {
      {"recv_forward", JobKind::kRecvForward}, {"send_backward", JobKind::kSendBackward},
      {"backward_b", JobKind::kBackwardB},     {"backward_w", JobKind::kBackwardW},
      {"backward", JobKind::kBackward},        {"forward", JobKind::kForward},
  };
  if (type == kOptimizer) return {JobKind::kOptimizer, -1};
  for (const auto& [prefix, kind] : kPrefixes) {
    if (!type.starts_with(prefix)) continue;
    std::string_view rest = type.substr(prefix.size());
    if (rest.empty()) return {kind, -1};
    int chunk = -1;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), chunk);
    if (error != std::errc() || end == rest.data() || chunk < 0) return {};
    const std::string_view tail(end, rest.data() + rest.size() - end);
    // VPP's split backward may move the sharding reduce into the last W: "backward_w0_reduce".
    if (tail.empty() || (kind == JobKind::kBackwardW && tail == "_reduce")) return {kind, chunk};
    return {};
  }
  return {};
}

}  // namespace irm::schedules
