// `ir-migrate parallelize SERIAL_BUNDLE --strategy s.json [--annotations a.json] -o BUNDLE`: a
// translated serial pir bundle (as `ir-migrate translate` writes it) made into a pir bundle of
// every rank's dense programs by the new IR's auto-parallel passes (newir/auto_parallel/
// parallelize.h). The layouts come from the annotation file, or, for data parallelism alone,
// from the strategy: every feed the bundle splits by batch is sharded on the dp mesh axis.
// bundle.json records the strategy (its dp_degree makes `run --ranks N` give each replica its
// rows) and the process groups; each rank's shards.json lists its sharded parameters. Written
// into a staged folder renamed into place: nothing is written on error, and every error of the
// input (bad files, layouts the rules refuse) exits 2.
#include <fmt/format.h>

#include "common/file_io.h"
#include "common/staged_folder.h"
#include "newir/auto_parallel/parallelize.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "oldir/passes/strategy.h"
#include "tools/commands.h"
#include "tools/exit_code.h"

namespace irm::tools {
namespace {

StatusOr<newir::ShardAnnotations> AnnotationsFor(const ParallelizeCommand& command,
                                                 const oldir::passes::Strategy& strategy,
                                                 const oldir::Bundle& serial) {
  if (!command.annotations.empty()) {
    IRM_ASSIGN_OR_RETURN(std::string text, ReadFile(command.annotations));
    return newir::ParseShardAnnotations(text, command.annotations);
  }
  if (strategy.mp_degree != 1 || strategy.pp_degree != 1) {
    Status status(StatusCode::kInvalidArgument, Location::File(command.strategy),
                  "only data parallelism has standard placements here");
    status.AddNote("give the layouts with --annotations a.json");
    return status;
  }
  std::vector<std::string> feeds;
  for (const oldir::FeedSpec& feed : serial.feeds) {
    if (feed.split == oldir::FeedSplit::kBatch) feeds.push_back(feed.name);
  }
  return newir::DataParallelAnnotations(strategy.dp_degree, feeds);
}

Status Parallelize(const ParallelizeCommand& command, std::ostream& out) {
  std::string in_dir = command.input;
  while (in_dir.size() > 1 && in_dir.back() == '/') in_dir.pop_back();
  IRM_ASSIGN_OR_RETURN(oldir::Bundle serial, oldir::ReadBundle(in_dir));
  if (serial.ir != oldir::BundleIr::kPir || serial.world_size != 1 || serial.ranks.size() != 1 ||
      serial.ranks[0].programs.size() != 1 || !serial.ranks[0].programs.contains("main") ||
      serial.ranks[0].startup.empty() || serial.ranks[0].plan) {
    return Status(StatusCode::kInvalidArgument, Location::File(in_dir),
                  "expected a serial pir bundle: one rank with a startup and a main program, no "
                  "plan (ir-migrate build, then translate)");
  }
  IRM_ASSIGN_OR_RETURN(oldir::passes::Strategy strategy,
                       oldir::passes::ReadStrategyFile(command.strategy));
  IRM_ASSIGN_OR_RETURN(newir::ShardAnnotations annotations,
                       AnnotationsFor(command, strategy, serial));
  const oldir::BundleRank& rank0 = serial.ranks[0];
  IRM_ASSIGN_OR_RETURN(newir::Program main, newir::LoadProgramFile(oldir::RankFile(
                                                in_dir, 0, rank0.programs.at("main"))));
  IRM_ASSIGN_OR_RETURN(newir::Program startup,
                       newir::LoadProgramFile(oldir::RankFile(in_dir, 0, rank0.startup)));
  IRM_ASSIGN_OR_RETURN(newir::ParallelPrograms parallel,
                       newir::Parallelize(main, startup, annotations));
  if (parallel.world_size != strategy.world_size()) {
    return Status(StatusCode::kInvalidArgument, Location::File(command.strategy),
                  fmt::format("the strategy has {} ranks, the annotations' mesh {}",
                              strategy.world_size(), parallel.world_size));
  }

  oldir::Bundle bundle = serial;
  bundle.world_size = static_cast<int>(parallel.world_size);
  bundle.strategy = oldir::passes::StrategyToJson(strategy);
  bundle.process_groups.clear();
  for (const auto& [ring, ranks] : parallel.process_groups) {
    bundle.process_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  bundle.ranks.clear();
  IRM_ASSIGN_OR_RETURN(StagedFolder staged, StagedFolder::Begin(command.output));
  for (size_t r = 0; r < parallel.ranks.size(); ++r) {
    const newir::RankPrograms& programs = parallel.ranks[r];
    oldir::BundleRank entry;
    entry.rank = static_cast<int>(r);
    entry.startup = "startup.json";
    entry.programs = {{"main", "main.json"}};
    for (const auto& [name, shard] : programs.shards) {
      entry.shards[name] = {shard.global_shape, shard.offsets};
    }
    bundle.ranks.push_back(std::move(entry));
  }
  IRM_RETURN_IF_ERROR(staged.Relocate(oldir::WriteBundle(bundle, staged.path())));
  for (size_t r = 0; r < parallel.ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    IRM_RETURN_IF_ERROR(staged.Relocate(newir::SaveProgramFile(
        parallel.ranks[r].startup, oldir::RankFile(staged.path(), rank, "startup.json"),
        newir::FileFormat::kJson)));
    IRM_RETURN_IF_ERROR(staged.Relocate(newir::SaveProgramFile(
        parallel.ranks[r].main, oldir::RankFile(staged.path(), rank, "main.json"),
        newir::FileFormat::kJson)));
  }
  IRM_RETURN_IF_ERROR(staged.Commit());
  out << fmt::format("{}: wrote a pir bundle of {} ranks ({} process groups)\n", command.output,
                     parallel.world_size, parallel.process_groups.size());
  return Status::Ok();
}

}  // namespace

int RunParallelize(const ParallelizeCommand& command, std::ostream& out, std::ostream& err) {
  const Status status = Parallelize(command, out);
  if (status.ok()) return kExitOk;
  Fail(status, err);
  // Every failure here is the input's (files, strategy, layouts the rules refuse) or the
  // output folder's.
  return status.code() == StatusCode::kInternal ? kExitRuntimeFailure : kExitBadInput;
}

}  // namespace irm::tools
