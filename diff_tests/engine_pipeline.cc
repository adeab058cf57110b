// The Engine flow's new-IR pipeline road: stages as process meshes (engine_pipeline.h).
#include "diff_tests/engine_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include "diff_tests/corpus/bundle_comm_check.h"
#include "diff_tests/corpus/bundle_comm_program.h"
#include "newir/auto_parallel/pipeline_meshes.h"
#include "newir/auto_parallel/pipeline_split.h"
#include "newir/auto_parallel/strategy_placements.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "oldir/passes/distributed_programs.h"
#include "oldir/passes/pipeline_stages.h"
#include "schedules/paddle_schedule.h"
#include "schedules/simulator.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

// The wrong-peer fault: the first activation send of the stage's forward jobs (pd_op.p_send, or
// send_v2 as Paddle's reshard functions write it) names `rank` itself as its peer.
Status SendToTheWrongPeer(newir::PipelineJobPrograms& jobs,
                          const std::vector<oldir::ProcessGroup>& groups, int rank) {
  for (const std::string& type : jobs.job_types) {
    if (type.rfind("forward", 0) != 0) continue;
    for (newir::Operation* op : jobs.programs.at(type).block().ops()) {
      if (op->name() != "pd_op.p_send" && op->name() != "pd_op.send_v2") continue;
      const int32_t* ring = op->attribute("ring_id").AsInt32();
      if (ring == nullptr) continue;
      for (const oldir::ProcessGroup& group : groups) {
        if (group.ring_id != *ring) continue;
        auto self = std::find(group.ranks.begin(), group.ranks.end(), rank);
        if (self == group.ranks.end()) continue;
        op->SetAttribute("peer",
                         newir::Attribute::Int32(static_cast<int32_t>(self - group.ranks.begin())));
        return Status::Ok();
      }
    }
  }
  return Status(StatusCode::kInternal, Location{},
                fmt::format("pp:wrong-peer: rank {} sends nothing from its forward jobs", rank));
}

// One rank's stage program split into its jobs.
StatusOr<newir::PipelineJobPrograms> SplitStage(const newir::Program& stage,
                                                const oldir::passes::Strategy& strategy,
                                                int pp_stage,
                                                const std::vector<std::string>& fetches,
                                                const std::string& file) {
  const std::string& mode = strategy.pipeline.schedule_mode;
  newir::PipelineSplitOptions split;
  split.schedule_mode = mode;
  split.pp_degree = strategy.pp_degree;
  split.pp_stage = pp_stage;
  split.micro_batches = strategy.pipeline.accumulate_steps;
  split.vpp_degree = strategy.pipeline.vpp_degree;
  split.fetches = fetches;
  split.file = file;
  StatusOr<newir::PipelineJobPrograms> jobs = newir::SplitPipelineProgram(stage, split);
  if (jobs.ok() || mode != "Eager1F1B") return jobs;
  // Eager1F1B: FThenB's programs, the legacy Eager1F1B job list.
  split.schedule_mode = "FThenB";
  IRM_ASSIGN_OR_RETURN(newir::PipelineJobPrograms programs,
                       newir::SplitPipelineProgram(stage, split));
  schedules::PaddleScheduleSpec spec;
  spec.mode = schedules::PaddleMode::kEager1F1B;
  spec.pp = strategy.pp_degree;
  spec.micro_batches = strategy.pipeline.accumulate_steps;
  spec.ir = schedules::JobListIr::kLegacy;
  IRM_ASSIGN_OR_RETURN(programs.plan, schedules::MakeJobList(spec, pp_stage));
  return programs;
}

// The check before anything runs: the smallest buffer depth the plans need, recorded in
// bundle.json; "" when they complete, the check's finding when no depth lets them.
StatusOr<std::string> CheckCommunication(oldir::Bundle& bundle, const std::string& dir) {
  StatusOr<schedules::CommProgram> comm = corpus::BundleCommProgram(bundle, dir);
  if (!comm.ok()) return comm.status().ToString();
  StatusOr<std::optional<int>> depth = schedules::MinBufferDepth(*comm);
  if (!depth.ok()) return depth.status().ToString();
  const schedules::P2pModel model = depth->value_or(0) > 0 ? schedules::P2pModel::Buffered(**depth)
                                                           : schedules::P2pModel::Rendezvous();
  // With no depth that completes, the check under rendezvous says why (the cycle, or the send no
  // receive takes, naming the op).
  if (const Status checked = corpus::CheckBundleCommunication(bundle, dir, model); !checked.ok()) {
    return checked.ToString();
  }
  if (model.mode == schedules::P2pMode::kBuffered) {
    bundle.p2p = model;
    IRM_RETURN_IF_ERROR(oldir::WriteBundle(bundle, dir));
  }
  return std::string();
}

// Splits one rank's stage program and writes its job programs and plan into `entry`.
Status WriteSplitRank(const newir::Program& stage_program, const PirPipelineOptions& options,
                      const oldir::Bundle& bundle, const std::vector<std::string>& fetches,
                      int rank, int stage, bool first_of_stage, const std::string& out_dir,
                      oldir::BundleRank& entry) {
  const std::string file = fmt::format("the stage program of rank {}", rank);
  IRM_ASSIGN_OR_RETURN(newir::PipelineJobPrograms jobs,
                       SplitStage(stage_program, options.strategy, stage, fetches, file));
  if (options.send_to_the_wrong_peer && stage == 0 && first_of_stage) {
    IRM_RETURN_IF_ERROR(SendToTheWrongPeer(jobs, bundle.process_groups, rank));
  }
  int64_t ops = 0;
  entry.programs.clear();
  for (const std::string& type : jobs.job_types) {
    const std::string name = type + ".json";
    const newir::Program& program = jobs.programs.at(type);
    IRM_RETURN_IF_ERROR(newir::SaveProgramFile(program, oldir::RankFile(out_dir, rank, name),
                                               newir::FileFormat::kJson));
    entry.programs[type] = name;
    ops += program.CountOps();
  }
  std::vector<oldir::PlanJob> plan;
  for (const schedules::Job& job : jobs.plan) plan.push_back({job.type, job.micro_batch});
  entry.plan = std::move(plan);
  if (options.progress) {
    options.progress(fmt::format("rank {}: stage {}, {} job programs ({} ops), {} jobs", rank,
                                 stage, jobs.job_types.size(), ops, entry.plan->size()));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> WritePirPipelineFromSerial(const PirPipelineFromSerial& serial,
                                                 const PirPipelineOptions& options,
                                                 const std::string& out_dir) {
  const oldir::passes::Strategy& strategy = options.strategy;
  if (serial.legacy_serial_main == nullptr || serial.like == nullptr) {
    return Status(StatusCode::kInternal, Location{}, "the serial programs are missing");
  }
  IRM_ASSIGN_OR_RETURN(oldir::passes::LayerUnits units,
                       oldir::passes::FindLayerUnits(*serial.legacy_serial_main, "main"));
  IRM_ASSIGN_OR_RETURN(oldir::Bundle serial_bundle, oldir::ReadBundle(serial.serial_pir_dir));
  const oldir::BundleRank& rank0 = serial_bundle.ranks.at(0);
  IRM_ASSIGN_OR_RETURN(
      newir::Program main,
      newir::LoadProgramFile(oldir::RankFile(serial.serial_pir_dir, 0, rank0.programs.at("main"))));
  IRM_ASSIGN_OR_RETURN(newir::Program startup, newir::LoadProgramFile(oldir::RankFile(
                                                   serial.serial_pir_dir, 0, rank0.startup)));
  newir::PipelineMeshOptions meshes;
  meshes.pp_degree = strategy.pp_degree;
  meshes.dp_degree = strategy.dp_degree;
  meshes.mp_degree = strategy.mp_degree;
  if (strategy.mp_degree > 1) {
    IRM_ASSIGN_OR_RETURN(meshes.mp_placements,
                         newir::MegatronPlacementsOver(main, strategy.mp_degree));
  }
  for (const oldir::FeedSpec& feed : serial.like->feeds) {
    if (feed.split == oldir::FeedSplit::kBatch) meshes.batch_feeds.push_back(feed.name);
  }
  meshes.vpp_degree = strategy.pipeline.vpp_degree;
  meshes.unit_count = units.count;
  meshes.unit_of_param = units.of_param;
  meshes.micro_batch_size = serial.micro_batch_size;
  meshes.micro_batches = strategy.pipeline.accumulate_steps;
  meshes.avg = true;  // Paddle forces avg under pipelining (parallelizer_v2.py)
  IRM_ASSIGN_OR_RETURN(newir::ParallelPrograms parallel,
                       newir::ParallelizePipeline(main, startup, meshes));

  oldir::Bundle bundle = *serial.like;
  bundle.ir = oldir::BundleIr::kPir;
  bundle.world_size = static_cast<int>(parallel.world_size);
  bundle.strategy = oldir::passes::StrategyToJson(strategy);
  bundle.process_groups.clear();
  for (const auto& [ring, ranks] : parallel.process_groups) {
    bundle.process_groups.push_back(
        {.ring_id = static_cast<int>(ring), .ranks = std::vector<int>(ranks.begin(), ranks.end())});
  }
  bundle.p2p.reset();
  bundle.ranks.clear();
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  const oldir::passes::Topology topology{strategy.dp_degree, strategy.pp_degree,
                                         strategy.mp_degree};
  for (size_t r = 0; r < parallel.ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    oldir::BundleRank entry;
    entry.rank = rank;
    entry.startup = "startup.json";
    for (const auto& [name, shard] : parallel.ranks[r].shards) {
      entry.shards[name] = {shard.global_shape, shard.offsets};
    }
    fs::create_directories(fs::path(oldir::RankFile(out_dir, rank, "startup.json")).parent_path(),
                           ec);
    IRM_RETURN_IF_ERROR(newir::SaveProgramFile(parallel.ranks[r].startup,
                                               oldir::RankFile(out_dir, rank, "startup.json"),
                                               newir::FileFormat::kJson));
    IRM_RETURN_IF_ERROR(WriteSplitRank(
        parallel.ranks[r].main, options, bundle, bundle.fetches, rank, topology.PpIndex(rank),
        topology.DpIndex(rank) == 0 && topology.MpIndex(rank) == 0, out_dir, entry));
    bundle.ranks.push_back(std::move(entry));
  }
  IRM_RETURN_IF_ERROR(oldir::WriteBundle(bundle, out_dir));
  return CheckCommunication(bundle, out_dir);
}

}  // namespace irm::diff
