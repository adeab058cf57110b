// Test support for the communication ops (comm_ops_test_support.h).
#include "reference_runtime/comm_ops_test_support.h"

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "newir/parser.h"
#include "newir/verifier.h"
#include "oldir/program_io.h"
#include "reference_runtime/comm/comm_context.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/pir_executor.h"

namespace irm::rt::testing {

oldir::Program ParseLegacy(const std::string& text) {
  StatusOr<oldir::Program> program =
      oldir::ParseProgram(text, "t.prototxt", oldir::ProgramFormat::kText);
  EXPECT_TRUE(program.ok()) << program.status().ToString() << "\n" << text;
  return program.ok() ? std::move(program).value() : oldir::Program();
}

newir::Program ParsePir(const std::string& text) {
  StatusOr<newir::Program> program = newir::ParseProgram(text, "t.pir");
  if (!program.ok()) {
    ADD_FAILURE() << program.status().ToString() << "\n" << text;
    return newir::Program();
  }
  const Status verified = newir::VerifyProgram(*program, {.file = "t.pir"});
  EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << text;
  return std::move(program).value();
}

RankRuns RunOnRanks(ThreadWorld& world, const MakeExecutor& make, const std::vector<FeedMap>& feeds,
                    const std::string& file) {
  const size_t n = static_cast<size_t>(world.world_size());
  RankRuns runs;
  runs.fetches.resize(n);
  std::vector<CommContext> contexts;
  for (size_t r = 0; r < n; ++r) {
    contexts.push_back(world.Context(static_cast<int>(r)));
    runs.scopes.push_back(std::make_unique<Scope>());
  }
  runs.status = world.RunRanks([&](int rank) -> Status {
    const size_t r = static_cast<size_t>(rank);
    ExecutorOptions options;
    options.file = file;
    options.comm = &contexts[r];
    std::unique_ptr<Executor> executor = make(rank, options);
    static const FeedMap kNoFeeds;
    IRM_ASSIGN_OR_RETURN(runs.fetches[r],
                         executor->Run(*runs.scopes[r], feeds.empty() ? kNoFeeds : feeds[r]));
    return Status::Ok();
  });
  return runs;
}

namespace {

const std::string& TextOf(const std::vector<std::string>& texts, int rank) {
  return texts.size() == 1 ? texts[0] : texts[static_cast<size_t>(rank)];
}

}  // namespace

RankRuns RunLegacy(ThreadWorld& world, const std::vector<std::string>& texts,
                   const std::vector<FeedMap>& feeds) {
  std::vector<oldir::Program> programs;
  for (int r = 0; r < world.world_size(); ++r) programs.push_back(ParseLegacy(TextOf(texts, r)));
  return RunOnRanks(
      world,
      [&](int rank, const ExecutorOptions& options) {
        return std::make_unique<LegacyExecutor>(programs[static_cast<size_t>(rank)], options);
      },
      feeds, "t.prototxt");
}

RankRuns RunPir(ThreadWorld& world, const std::vector<std::string>& texts,
                const std::vector<FeedMap>& feeds) {
  std::vector<std::unique_ptr<newir::Program>> programs;
  for (int r = 0; r < world.world_size(); ++r) {
    programs.push_back(std::make_unique<newir::Program>(ParsePir(TextOf(texts, r))));
  }
  return RunOnRanks(
      world,
      [&](int rank, const ExecutorOptions& options) {
        return std::make_unique<PirExecutor>(*programs[static_cast<size_t>(rank)], options);
      },
      feeds, "t.pir");
}

Tensor Fetched(const RankRuns& runs, int rank, const std::string& name) {
  for (const Fetch& fetch : runs.fetches[static_cast<size_t>(rank)]) {
    if (fetch.name == name) return fetch.tensor;
  }
  ADD_FAILURE() << "rank " << rank << " fetched no '" << name << "'";
  return Tensor();
}

}  // namespace irm::rt::testing
