// The serial pir bundle parallelized and written (parallelize_bundle.h).
#include "diff_tests/parallelize_bundle.h"

#include <fmt/format.h>

#include "common/staged_folder.h"
#include "newir/auto_parallel/strategy_placements.h"
#include "newir/program_io.h"

namespace irm::diff {
namespace {

Status CheckSerial(const oldir::Bundle& serial, const std::string& dir) {
  if (serial.ir != oldir::BundleIr::kPir || serial.world_size != 1 || serial.ranks.size() != 1 ||
      serial.ranks[0].programs.size() != 1 || !serial.ranks[0].programs.contains("main") ||
      serial.ranks[0].startup.empty() || serial.ranks[0].plan) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "expected a serial pir bundle: one rank with a startup and a main program, no "
                  "plan (ir-migrate build, then translate)");
  }
  return Status::Ok();
}

// The mesh must hold exactly the strategy's ranks: a rank it lacks would run nothing, a rank it
// names beyond the world would leave its collectives waiting.
Status CheckMeshCoversWorld(const newir::ProcessMesh& mesh, int64_t world_size,
                            const std::string& strategy_file) {
  std::vector<int64_t> ids = mesh.process_ids;
  std::sort(ids.begin(), ids.end());
  for (int64_t rank = 0; rank < world_size; ++rank) {
    if (std::binary_search(ids.begin(), ids.end(), rank)) continue;
    Status status(StatusCode::kInvalidArgument, Location::File(strategy_file),
                  fmt::format("the strategy's world has {} ranks, and the annotations' mesh "
                              "leaves out rank {}",
                              world_size, rank));
    status.AddNote(fmt::format("mesh {}", mesh.ToString()));
    return status;
  }
  for (int64_t id : ids) {
    if (id < world_size) continue;
    Status status(StatusCode::kInvalidArgument, Location::File(strategy_file),
                  fmt::format("the annotations' mesh names rank {}, and the strategy's world has "
                              "{} ranks (0..{})",
                              id, world_size, world_size - 1));
    status.AddNote(fmt::format("mesh {}", mesh.ToString()));
    return status;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ParallelizedBundle> ParallelizeBundle(
    const std::string& serial_dir, const oldir::passes::Strategy& strategy,
    const std::string& strategy_file, const std::optional<newir::ShardAnnotations>& annotations) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle serial, oldir::ReadBundle(serial_dir));
  IRM_RETURN_IF_ERROR(CheckSerial(serial, serial_dir));
  if (strategy.pp_degree > 1) {
    Status status(StatusCode::kUnimplemented, Location::File(strategy_file),
                  fmt::format("pipeline parallelism (pp_degree {}) is not made by the new IR's "
                              "passes here",
                              strategy.pp_degree));
    status.AddNote(
        "pipeline stages come from the legacy passes: ir-migrate build --strategy, then "
        "translate");
    return status;
  }
  const oldir::BundleRank& rank0 = serial.ranks[0];
  IRM_ASSIGN_OR_RETURN(newir::Program main, newir::LoadProgramFile(oldir::RankFile(
                                                serial_dir, 0, rank0.programs.at("main"))));
  IRM_ASSIGN_OR_RETURN(newir::Program startup,
                       newir::LoadProgramFile(oldir::RankFile(serial_dir, 0, rank0.startup)));
  newir::ShardAnnotations layouts;
  if (annotations) {
    layouts = *annotations;
  } else {
    std::vector<std::string> batch_feeds;
    for (const oldir::FeedSpec& feed : serial.feeds) {
      if (feed.split == oldir::FeedSplit::kBatch) batch_feeds.push_back(feed.name);
    }
    StatusOr<newir::ShardAnnotations> standard = newir::StandardAnnotations(
        main, {strategy.dp_degree, strategy.mp_degree, strategy.pp_degree}, batch_feeds);
    if (!standard.ok()) {
      Status status = standard.status();
      if (status.location().empty()) status = Status(status).InFile(strategy_file);
      return status;
    }
    layouts = *std::move(standard);
  }
  IRM_RETURN_IF_ERROR(CheckMeshCoversWorld(layouts.mesh, strategy.world_size(), strategy_file));
  newir::ParallelizeOptions options;
  options.world_size = strategy.world_size();
  IRM_ASSIGN_OR_RETURN(newir::ParallelPrograms parallel,
                       newir::Parallelize(main, startup, layouts, options));

  ParallelizedBundle made;
  made.bundle = serial;
  oldir::Bundle& bundle = made.bundle;
  bundle.world_size = static_cast<int>(parallel.world_size);
  bundle.strategy = oldir::passes::StrategyToJson(strategy);
  bundle.process_groups.clear();
  for (const auto& [ring, ranks] : parallel.process_groups) {
    bundle.process_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  bundle.ranks.clear();
  for (size_t r = 0; r < parallel.ranks.size(); ++r) {
    oldir::BundleRank entry;
    entry.rank = static_cast<int>(r);
    entry.startup = "startup.json";
    entry.programs = {{"main", "main.json"}};
    for (const auto& [name, shard] : parallel.ranks[r].shards) {
      entry.shards[name] = {shard.global_shape, shard.offsets};
    }
    bundle.ranks.push_back(std::move(entry));
  }
  made.programs = std::move(parallel);
  return made;
}

Status WriteParallelizedBundle(const ParallelizedBundle& made, const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(StagedFolder staged, StagedFolder::Begin(dir));
  IRM_RETURN_IF_ERROR(staged.Relocate(oldir::WriteBundle(made.bundle, staged.path())));
  for (size_t r = 0; r < made.programs.ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    const newir::RankPrograms& programs = made.programs.ranks[r];
    IRM_RETURN_IF_ERROR(staged.Relocate(newir::SaveProgramFile(
        programs.startup, oldir::RankFile(staged.path(), rank, "startup.json"),
        newir::FileFormat::kJson)));
    IRM_RETURN_IF_ERROR(staged.Relocate(
        newir::SaveProgramFile(programs.main, oldir::RankFile(staged.path(), rank, "main.json"),
                               newir::FileFormat::kJson)));
  }
  return staged.Commit();
}

}  // namespace irm::diff
