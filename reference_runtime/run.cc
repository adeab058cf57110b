// The training loop over the Executor interface, and random feeds (run.h).
#include "reference_runtime/run.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/kernels/numeric.h"
#include "reference_runtime/philox.h"
#include "reference_runtime/tensor_limits.h"

namespace irm::rt {
namespace {

template <typename T>
void FillRandom(Tensor& t, const PhiloxStream& stream, int64_t index_bound) {
  T* out = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double u = stream.UniformDouble(static_cast<uint64_t>(i));
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = u < 0.5;
    } else if constexpr (std::is_integral_v<T>) {
      const int64_t bound = index_bound > 0 ? index_bound : 2;
      out[i] = static_cast<T>(std::min<int64_t>(bound - 1, static_cast<int64_t>(u * bound)));
    } else {
      out[i] = Store<T>(static_cast<Compute<T>>(2.0 * u - 1.0));
    }
  }
}

Status InStep(Status status, int step) { return status.AddNote(fmt::format("in step {}", step)); }

}  // namespace

Status CheckRandomFeed(const FeedSpec& spec, int64_t batch_size) {
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) {
    if (d >= 0) continue;
    if (batch_size < 1) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(spec.name),
                    fmt::format("batch size must be at least 1, got {} (feed '{}' has a -1 dim)",
                                batch_size, spec.name));
    }
    d = batch_size;
  }
  const std::optional<uint64_t> bytes = CheckedByteSize(shape, DTypeSize(spec.dtype));
  if (!bytes) {
    return Status(StatusCode::kInternal, Location{}.AtVar(spec.name),
                  fmt::format("feed '{}' of shape {} has more elements than a tensor can hold",
                              spec.name, ShapeToString(shape)));
  }
  Status fits = CheckTensorBytes(*bytes, fmt::format("feed '{}' ({} of shape {})", spec.name,
                                                     DTypeName(spec.dtype), ShapeToString(shape)));
  if (!fits.ok()) return Status(fits.code(), Location{}.AtVar(spec.name), fits.message());
  return Status::Ok();
}

Status CheckFeedNames(const FeedMap& feeds, const std::vector<std::string>& known,
                      std::string_view what) {
  for (const auto& [name, tensor] : feeds) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    return Status(StatusCode::kInvalidArgument, Location{}.AtVar(name),
                  known.empty()
                      ? fmt::format("'{}' is not a feed of {}, which has none", name, what)
                      : fmt::format("'{}' is not a feed of {} (its feeds: {})", name, what,
                                    fmt::join(known, ", ")));
  }
  return Status::Ok();
}

Tensor RandomFeed(const FeedSpec& spec, uint64_t seed, int step, int64_t batch_size) {
  std::vector<int64_t> shape = spec.shape;
  for (int64_t& d : shape) {
    if (d < 0) d = batch_size;
  }
  Tensor t = Tensor::ZerosUnchecked(spec.dtype, std::move(shape));
  const PhiloxStream stream(seed, OpIdentity(fmt::format("feed:{}@step{}", spec.name, step)));
  VisitDType(spec.dtype,
             [&](auto zero) { FillRandom<decltype(zero)>(t, stream, spec.index_bound); });
  return t;
}

StatusOr<std::vector<StepResult>> RunTraining(Executor* startup, Executor& main, Scope& persistent,
                                              const TrainingConfig& config,
                                              const StepCallback& on_step) {
  if (config.steps < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("steps must be at least 1, got {}", config.steps));
  }
  std::vector<std::string> feed_names;
  for (const FeedSpec& spec : main.FeedSpecs()) feed_names.push_back(spec.name);
  IRM_RETURN_IF_ERROR(CheckFeedNames(config.feeds, feed_names, "the program"));
  if (startup != nullptr) {
    StatusOr<std::vector<Fetch>> ignored = startup->Run(persistent, {});
    if (!ignored.ok()) return Status(ignored.status()).AddNote("in the startup program");
  }
  const std::vector<std::string> program_fetches = main.FetchNames();
  for (const std::string& name : config.fetch) {
    if (std::find(program_fetches.begin(), program_fetches.end(), name) == program_fetches.end() &&
        persistent.Find(name) == nullptr) {
      return Status(
          StatusCode::kNotFound, Location{},
          fmt::format("'{}' is neither fetched by the program nor a persistable var", name));
    }
  }
  std::vector<StepResult> results;
  for (int step = 1; step <= config.steps; ++step) {
    FeedMap feeds = config.feeds;
    for (const FeedSpec& spec : main.FeedSpecs()) {
      if (feeds.contains(spec.name)) continue;
      if (!config.random_feeds) {
        return Status(StatusCode::kNotFound, Location{},
                      fmt::format("no feed for '{}' ({}{}); give one, or ask for random feeds",
                                  spec.name, DTypeName(spec.dtype), ShapeToString(spec.shape)));
      }
      IRM_RETURN_IF_ERROR(CheckRandomFeed(spec, config.batch_size));
      feeds[spec.name] = RandomFeed(spec, config.seed, step, config.batch_size);
    }
    StatusOr<std::vector<Fetch>> fetched = main.Run(persistent, feeds);
    if (!fetched.ok()) return InStep(fetched.status(), step);
    // Copies: a later step's in-place update must not change what this step fetched.
    StepResult result{.step = step, .fetches = {}};
    if (config.fetch.empty()) {
      for (const Fetch& f : *fetched) result.fetches.push_back({f.name, f.tensor.Clone()});
    } else {
      for (const std::string& name : config.fetch) {
        auto it = std::find_if(fetched->begin(), fetched->end(),
                               [&](const Fetch& f) { return f.name == name; });
        const Tensor* t = it != fetched->end() ? &it->tensor : persistent.Find(name);
        if (t == nullptr) {
          return Status(StatusCode::kNotFound, Location{},
                        fmt::format("step {} left no var '{}' to fetch", step, name));
        }
        result.fetches.push_back({name, t->Clone()});
      }
    }
    if (on_step) on_step(result);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace irm::rt
