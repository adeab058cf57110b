// CheckJobList (plan_check.h).
#include "schedules/plan_check.h"

#include <map>
#include <string>
#include <tuple>

#include <fmt/format.h>

namespace irm::schedules {
namespace {

// The parts of a micro-batch's work a job type runs; `backward` runs both gradient halves.
enum Part { kForwardPart, kInputGradPart, kWeightGradPart, kRecvPart, kSendPart };

std::vector<Part> PartsOf(JobKind kind) {
  switch (kind) {
    case JobKind::kForward:
      return {kForwardPart};
    case JobKind::kBackward:
      return {kInputGradPart, kWeightGradPart};
    case JobKind::kBackwardB:
      return {kInputGradPart};
    case JobKind::kBackwardW:
      return {kWeightGradPart};
    case JobKind::kRecvForward:
      return {kRecvPart};
    case JobKind::kSendBackward:
      return {kSendPart};
    case JobKind::kOptimizer:
    case JobKind::kOther:
      return {};
  }
  return {};
}

const char* PartName(Part part) {
  switch (part) {
    case kForwardPart:
      return "forward";
    case kInputGradPart:
      return "input gradient (backward_b)";
    case kWeightGradPart:
      return "weight gradient (backward_w)";
    case kRecvPart:
      return "recv_forward";
    case kSendPart:
      return "send_backward";
  }
  return "forward";
}

Location At(const Location& where, std::string detail) {
  Location location = where;
  location.detail =
      location.detail.empty() ? std::move(detail) : fmt::format("{}, {}", location.detail, detail);
  return location;
}

std::string JobName(size_t index, const Job& job) {
  return fmt::format("job {} ({}, micro-batch {})", index, job.type, job.micro_batch);
}

}  // namespace

Status CheckJobList(const std::vector<Job>& jobs, int micro_batches, const Location& where) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, where,
                  fmt::format("a plan needs at least one micro-batch, got {}", micro_batches));
  }
  if (jobs.empty()) return Status(StatusCode::kInvalid, where, "the plan has no jobs");

  std::map<std::string, int> occurrences;
  for (const Job& job : jobs) ++occurrences[job.type];

  // (part, chunk, micro-batch) -> the job that ran it; (part, chunk) -> a job type naming it.
  std::map<std::tuple<Part, int, int>, size_t> ran;
  std::map<std::pair<Part, int>, std::string> families;
  std::map<std::string, size_t> once;
  for (size_t index = 0; index < jobs.size(); ++index) {
    const Job& job = jobs[index];
    if (job.micro_batch < 0 || job.micro_batch >= micro_batches) {
      return Status(StatusCode::kInvalid, At(where, JobName(index, job)),
                    fmt::format("micro-batch {} is out of range: the plan has {} micro-batches "
                                "(0..{})",
                                job.micro_batch, micro_batches, micro_batches - 1));
    }
    const JobTypeInfo info = ClassifyJobType(job.type);
    const std::vector<Part> parts = PartsOf(info.kind);
    const bool once_per_step =
        info.kind == JobKind::kOptimizer || (parts.empty() && occurrences[job.type] == 1);
    if (once_per_step) {
      const auto [it, inserted] = once.emplace(job.type, index);
      if (!inserted) {
        return Status(
            StatusCode::kInvalid, At(where, JobName(index, job)),
            fmt::format("{} runs once per step, but job {} already ran it", job.type, it->second));
      }
      continue;
    }
    const int chunk = info.chunk;
    for (Part part : parts) {
      families.emplace(std::make_pair(part, chunk), job.type);
      const auto [it, inserted] = ran.emplace(std::make_tuple(part, chunk, job.micro_batch), index);
      if (!inserted) {
        const Job& first = jobs[it->second];
        return Status(StatusCode::kInvalid, At(where, JobName(index, job)),
                      first.type == job.type
                          ? fmt::format("micro-batch {} is named twice: job {} already ran {}",
                                        job.micro_batch, it->second, job.type)
                          : fmt::format("micro-batch {}'s {} already ran in job {} ({})",
                                        job.micro_batch, PartName(part), it->second, first.type));
      }
    }
  }
  // Types outside Paddle's per-micro-batch families that repeat (the pieces of 1F1B's
  // backward/forward overlap): each micro-batch once per type.
  std::map<std::pair<std::string, int>, size_t> other_ran;
  for (size_t index = 0; index < jobs.size(); ++index) {
    const Job& job = jobs[index];
    const JobTypeInfo info = ClassifyJobType(job.type);
    if (!PartsOf(info.kind).empty() || info.kind == JobKind::kOptimizer ||
        occurrences[job.type] == 1) {
      continue;
    }
    const auto [it, inserted] = other_ran.emplace(std::make_pair(job.type, job.micro_batch), index);
    if (!inserted) {
      return Status(StatusCode::kInvalid, At(where, JobName(index, job)),
                    fmt::format("micro-batch {} is named twice: job {} already ran {}",
                                job.micro_batch, it->second, job.type));
    }
  }
  for (const auto& [type, count] : occurrences) {
    const JobTypeInfo info = ClassifyJobType(type);
    if (!PartsOf(info.kind).empty() || info.kind == JobKind::kOptimizer || count == 1) continue;
    for (int mb = 0; mb < micro_batches; ++mb) {
      if (!other_ran.contains({type, mb})) {
        return Status(StatusCode::kInvalid, At(where, fmt::format("job type {}", type)),
                      fmt::format("micro-batch {} never runs {}: the plan has {} micro-batches", mb,
                                  type, micro_batches));
      }
    }
  }
  for (const auto& [family, type] : families) {
    const auto [part, chunk] = family;
    for (int mb = 0; mb < micro_batches; ++mb) {
      if (ran.contains({part, chunk, mb})) continue;
      // Named by the first type of the family (backward or its half, backward_b / backward_w).
      return Status(StatusCode::kInvalid, At(where, fmt::format("job type {}", type)),
                    fmt::format("micro-batch {} never runs {}: the plan has {} micro-batches", mb,
                                type, micro_batches));
    }
  }
  return Status::Ok();
}

}  // namespace irm::schedules
