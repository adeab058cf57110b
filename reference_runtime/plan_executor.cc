// PlanExecutor (plan_executor.h): checking a plan, splitting feeds into micro-batches, running the
// jobs in micro-batch scopes, collecting and merging fetches.
#include "reference_runtime/plan_executor.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

namespace irm::rt {
namespace {

Status PlanError(const PlanConfig& config, std::string message) {
  return Status(StatusCode::kInvalidArgument, Location::File(config.file), std::move(message));
}

}  // namespace

StatusOr<PlanExecutor> PlanExecutor::Create(std::map<std::string, Executor*, std::less<>> programs,
                                            PlanConfig config) {
  const int m = config.micro_batches;
  if (m < 1) return PlanError(config, fmt::format("micro_batches must be at least 1, got {}", m));
  std::vector<oldir::PlanJob> jobs =
      config.jobs.has_value() ? *config.jobs : std::vector<oldir::PlanJob>{{"main", 0}};
  if (jobs.empty()) return PlanError(config, "the plan has no jobs");
  std::vector<bool> used(static_cast<size_t>(m), false);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const oldir::PlanJob& job = jobs[i];
    auto it = programs.find(job.type);
    if (it == programs.end() || it->second == nullptr) {
      return PlanError(config,
                       fmt::format("job {} has type '{}', which has no program", i, job.type));
    }
    if (job.micro_batch < 0 || job.micro_batch >= m) {
      return PlanError(config, fmt::format("job {} ('{}') runs micro-batch {}, outside [0, {})", i,
                                           job.type, job.micro_batch, m));
    }
    used[static_cast<size_t>(job.micro_batch)] = true;
  }
  for (int mb = 0; mb < m; ++mb) {
    if (!used[static_cast<size_t>(mb)]) {
      return PlanError(config,
                       fmt::format("no job of the plan runs micro-batch {} (of {})", mb, m));
    }
  }
  return PlanExecutor(std::move(programs), std::move(config), std::move(jobs));
}

PlanExecutor::PlanExecutor(std::map<std::string, Executor*, std::less<>> programs,
                           PlanConfig config, std::vector<oldir::PlanJob> jobs)
    : programs_(std::move(programs)), config_(std::move(config)), jobs_(std::move(jobs)) {}

std::vector<std::string> PlanExecutor::FetchNames() const {
  if (!config_.fetches.empty()) return config_.fetches;
  std::vector<std::string> names;
  for (const oldir::PlanJob& job : jobs_) {
    for (std::string& name : programs_.at(job.type)->FetchNames()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
    }
  }
  return names;
}

StatusOr<PlanStepResult> PlanExecutor::RunStep(Scope& root, const FeedMap& whole_batch_feeds) {
  const int m = config_.micro_batches;
  const int step = ++steps_run_;
  IRM_ASSIGN_OR_RETURN(const std::vector<FeedMap> feeds,
                       SplitFeeds(whole_batch_feeds, m, config_.splits));
  // unique_ptr: a Scope cannot move, and each is the parent of nothing but outlives its jobs.
  std::vector<std::unique_ptr<Scope>> scopes;
  for (int mb = 0; mb < m; ++mb) scopes.push_back(std::make_unique<Scope>(&root));
  // Per micro-batch, what its jobs fetched by name (a later job's fetch replaces an earlier one).
  std::vector<std::map<std::string, Tensor, std::less<>>> fetched(static_cast<size_t>(m));

  for (size_t i = 0; i < jobs_.size(); ++i) {
    const oldir::PlanJob& job = jobs_[i];
    const auto mb = static_cast<size_t>(job.micro_batch);
    if (on_job_) {
      on_job_(JobContext{.step = step,
                         .job_index = static_cast<int>(i),
                         .job_type = job.type,
                         .micro_batch = job.micro_batch,
                         .micro_batches = m});
    }
    StatusOr<std::vector<Fetch>> ran = programs_.at(job.type)->RunJob(root, *scopes[mb], feeds[mb]);
    if (!ran.ok()) {
      return Status(ran.status())
          .AddNote(fmt::format("in job {} ('{}', micro-batch {}) of step {}", i, job.type,
                               job.micro_batch, step));
    }
    for (Fetch& f : *ran) fetched[mb][f.name] = std::move(f.tensor);
  }

  PlanStepResult result;
  result.step = step;
  result.micro_batches.resize(static_cast<size_t>(m));
  for (const std::string& name : FetchNames()) {
    std::vector<Tensor> parts;
    std::vector<int> missing;
    for (int mb = 0; mb < m; ++mb) {
      const auto& by_name = fetched[static_cast<size_t>(mb)];
      auto it = by_name.find(name);
      const Tensor* t =
          it != by_name.end() ? &it->second : scopes[static_cast<size_t>(mb)]->Find(name);
      if (t == nullptr || !t->defined()) {
        missing.push_back(mb);
        continue;
      }
      // A copy: the scopes go away, and a later step's in-place update must not change it.
      parts.push_back(it != by_name.end() ? *t : t->Clone());
    }
    if (parts.empty()) {
      if (!config_.require_fetches) continue;
      return Status(StatusCode::kNotFound, Location::File(config_.file),
                    fmt::format("step {}: no job fetched or wrote '{}', and no persistable var "
                                "has that name",
                                step, name));
    }
    if (!missing.empty()) {
      return Status(StatusCode::kInvalid, Location::File(config_.file),
                    fmt::format("step {}: '{}' has a value in {} of {} micro-batches, not in "
                                "micro-batch {}",
                                step, name, parts.size(), m, missing.front()));
    }
    for (int mb = 0; mb < m; ++mb) {
      result.micro_batches[static_cast<size_t>(mb)].push_back(
          {name, parts[static_cast<size_t>(mb)]});
    }
    if (m == 1) {
      result.merged.push_back({name, std::move(parts[0])});
    } else {
      IRM_ASSIGN_OR_RETURN(Tensor merged, MergeFetches(name, parts));
      result.merged.push_back({name, std::move(merged)});
    }
  }
  return result;
}

StatusOr<std::vector<FeedMap>> SplitFeeds(const FeedMap& feeds, int micro_batches,
                                          const FeedSplits& splits) {
  if (micro_batches < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("micro_batches must be at least 1, got {}", micro_batches));
  }
  std::vector<FeedMap> out(static_cast<size_t>(micro_batches));
  if (micro_batches == 1) {
    out[0] = feeds;
    return out;
  }
  for (const auto& [name, tensor] : feeds) {
    auto split = splits.find(name);
    if (split != splits.end() && split->second == oldir::FeedSplit::kReplicate) {
      for (FeedMap& mb : out) mb[name] = tensor;
      continue;
    }
    if (!tensor.defined() || tensor.rank() == 0) {
      return Status(
          StatusCode::kInvalidArgument, Location{}.AtVar(name),
          fmt::format("feed '{}' is {}: a feed split by batch needs a dim 0 to cut "
                      "into {} micro-batches",
                      name, tensor.defined() ? tensor.Describe() : "undefined", micro_batches));
    }
    const int64_t rows = tensor.dim(0);
    if (rows % micro_batches != 0) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                    fmt::format("feed '{}' is {}: its dim 0 ({}) does not split into {} equal "
                                "micro-batches",
                                name, tensor.Describe(), rows, micro_batches));
    }
    const int64_t per = rows / micro_batches;
    for (int mb = 0; mb < micro_batches; ++mb) {
      IRM_ASSIGN_OR_RETURN(Tensor slice, tensor.Slice(mb * per, (mb + 1) * per));
      out[static_cast<size_t>(mb)][name] = std::move(slice);
    }
  }
  return out;
}

StatusOr<Tensor> MergeFetches(const std::string& name, const std::vector<Tensor>& parts) {
  if (parts.empty()) {
    return Status(StatusCode::kInvalid, Location{}.AtVar(name),
                  fmt::format("fetch '{}' has no micro-batch values to merge", name));
  }
  const Tensor& first = parts[0];
  const bool scalars = first.rank() == 0;
  std::vector<int64_t> shape = first.shape();
  int64_t rows = 0;
  for (const Tensor& part : parts) {
    const bool same_rest =
        part.rank() == first.rank() &&
        (scalars || std::equal(part.shape().begin() + 1, part.shape().end(), shape.begin() + 1));
    if (part.dtype() != first.dtype() || !same_rest) {
      return Status(StatusCode::kInvalid, Location{}.AtVar(name),
                    fmt::format("fetch '{}' is {} in micro-batch 0 but {} in another: they do not "
                                "concatenate along dim 0",
                                name, first.Describe(), part.Describe()));
    }
    rows += scalars ? 1 : part.dim(0);
  }
  if (scalars) {
    shape = {rows};
  } else {
    shape[0] = rows;
  }
  IRM_ASSIGN_OR_RETURN(Tensor merged, Tensor::Zeros(first.dtype(), std::move(shape)));
  auto* out = static_cast<char*>(merged.raw());
  for (const Tensor& part : parts) {
    if (part.nbytes() > 0) std::memcpy(out, part.raw(), part.nbytes());
    out += part.nbytes();
  }
  return merged;
}

}  // namespace irm::rt
