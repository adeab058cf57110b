// A training run on one rank, the way both IRs are driven: the startup program once (it creates
// and initialises the persistable vars in the run's Scope), then N steps of the main program with
// the given feeds (fixed tensors, or drawn at random per step from the seed), collecting each
// step's fetches; afterwards every persistable var (parameters, optimizer state) can be read from
// the Scope or saved. The executors are chosen by the caller (LegacyExecutor or PirExecutor); this
// file knows only the Executor interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "reference_runtime/executor.h"

namespace irm::rt {

struct TrainingConfig {
  int steps = 1;
  // Feeds given as tensors, used at every step.
  FeedMap feeds;
  // Feeds the main program needs that `feeds` lacks are drawn at random (RandomFeed) when set;
  // otherwise a missing feed is an error.
  bool random_feeds = false;
  uint64_t seed = 0;
  // The size of a random feed's -1 dims (the batch).
  int64_t batch_size = 4;
  // Fetch these instead of the program's fetch list: a name the program fetches, or a
  // persistable var read from the Scope after the step. Empty: the program's fetch list.
  std::vector<std::string> fetch;
};

struct StepResult {
  int step = 0;  // 1-based
  std::vector<Fetch> fetches;
};

// Called after each step (progress on a terminal); may be empty.
using StepCallback = std::function<void(const StepResult&)>;

// Runs `startup` (when given) once, then `config.steps` steps of `main`, in `persistent`.
// kInvalidArgument before anything runs for steps below 1 and for a feed `main` does not read
// (CheckFeedNames).
StatusOr<std::vector<StepResult>> RunTraining(Executor* startup, Executor& main, Scope& persistent,
                                              const TrainingConfig& config,
                                              const StepCallback& on_step = {});

// A random tensor for `spec` at `step`: floats uniform in [-1, 1), integers uniform in
// [0, index_bound) (or {0, 1} when the bound is unknown), bools fair coins; -1 dims become
// batch_size. A pure function of (seed, name, step): both IRs get the same feeds. Requires
// CheckRandomFeed(spec, batch_size) to hold.
Tensor RandomFeed(const FeedSpec& spec, uint64_t seed, int step, int64_t batch_size);

// Whether RandomFeed can make `spec`'s tensor: kInvalidArgument for a batch size below 1 when the
// spec has a -1 dim, kInternal (a runtime failure) for a tensor larger than the machine's memory
// (tensor_limits.h), naming the feed and the size.
Status CheckRandomFeed(const FeedSpec& spec, int64_t batch_size);

// Whether every name in `feeds` is one of `known` (what the program, or `what` in general, reads
// as feeds): kInvalidArgument naming the first unknown one, located at it, and listing the known
// ones. A feed nothing reads is a typo more often than not, and it would leave the run on other
// data unnoticed.
Status CheckFeedNames(const FeedMap& feeds, const std::vector<std::string>& known,
                      std::string_view what);

}  // namespace irm::rt
