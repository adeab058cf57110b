// WritePirPipelineBundle (pir_pipeline_bundle.h): the legacy bundle is written to a scratch
// folder beside `dir` and translated into `dir` (startups, bundle.json, shards); each rank's job
// programs and plan are then replaced by the new IR's split of its translated stage program.
#include "diff_tests/pir_pipeline_bundle.h"

#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diff_tests/corpus/bundle_comm_program.h"
#include "newir/auto_parallel/pipeline_split.h"
#include "newir/program_io.h"
#include "oldir/passes/distributed_programs.h"
#include "schedules/simulator.h"
#include "translator/bundle_translate.h"
#include "translator/translate.h"

namespace irm::diff {
namespace {

// Removes the scratch legacy bundle whatever happens after it is made.
class ScratchFolder {
 public:
  explicit ScratchFolder(std::string path) : path_(std::move(path)) {}
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Status RemoveFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) {
    return Status(StatusCode::kIoError, Location::File(path),
                  fmt::format("cannot remove the file: {}", ec.message()));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<PirPipelineBundle> WritePirPipelineBundle(const PirPipelineRecipe& recipe,
                                                   const std::string& dir) {
  if (!recipe.model.strategy.has_value() || !recipe.model.strategy->pipeline.enable ||
      recipe.model.strategy->pp_degree < 2) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "a pir pipeline bundle needs a strategy with pipeline.enable and pp_degree > 1");
  }
  const oldir::passes::Strategy& strategy = *recipe.model.strategy;
  corpus::ModelRecipe legacy_recipe = recipe.model;
  // The legacy split whose jobs the new IR's split replaces: the same job types (the translated
  // startups and bundle.json are kept), so the PIR form with the split, the legacy one without.
  legacy_recipe.job_lists =
      recipe.split_recv_send ? schedules::JobListIr::kPir : schedules::JobListIr::kLegacy;
  IRM_ASSIGN_OR_RETURN(corpus::ModelBundle made, corpus::MakeModelBundle(legacy_recipe));

  const std::filesystem::path out = std::filesystem::path(dir).lexically_normal();
  ScratchFolder legacy((out.has_filename() ? out : out.parent_path()).string() + ".legacy");
  {
    std::error_code ec;
    std::filesystem::remove_all(legacy.path(), ec);
  }
  IRM_RETURN_IF_ERROR(corpus::WriteModelBundle(made, legacy.path()).status());
  IRM_ASSIGN_OR_RETURN(translator::BundleTranslation translated,
                       translator::TranslateBundle(legacy.path(), dir));
  oldir::Bundle bundle = std::move(translated.bundle);

  const oldir::passes::Topology topology{strategy.dp_degree, strategy.pp_degree,
                                         strategy.mp_degree};
  for (oldir::BundleRank& rank : bundle.ranks) {
    const size_t r = static_cast<size_t>(rank.rank);
    if (r >= made.ranks.size()) {
      return Status(StatusCode::kInternal, Location::File(oldir::RankDir(dir, rank.rank)),
                    "the translated bundle has a rank the legacy passes did not make");
    }
    translator::TranslateOptions to;
    to.file = fmt::format("stage {}", rank.rank);
    to.process_groups = &bundle.process_groups;
    to.rank = rank.rank;
    IRM_ASSIGN_OR_RETURN(translator::Translation stage,
                         translator::TranslateProgram(made.ranks[r].main, to));

    newir::PipelineSplitOptions options;
    options.schedule_mode = strategy.pipeline.schedule_mode;
    options.pp_degree = strategy.pp_degree;
    options.pp_stage = topology.PpIndex(rank.rank);
    options.micro_batches = strategy.pipeline.accumulate_steps;
    options.vpp_degree = strategy.pipeline.vpp_degree;
    options.split_recv_send = recipe.split_recv_send;
    options.fetches = bundle.fetches;
    options.file = to.file;
    IRM_ASSIGN_OR_RETURN(newir::PipelineJobPrograms split,
                         newir::SplitPipelineProgram(stage.program, options));

    const std::set<std::string> types(split.job_types.begin(), split.job_types.end());
    for (const auto& [type, file] : rank.programs) {
      if (types.count(type) == 0) {
        IRM_RETURN_IF_ERROR(RemoveFile(oldir::RankFile(dir, rank.rank, file)));
      }
    }
    rank.programs.clear();
    for (const std::string& type : split.job_types) {
      const std::string file = type + ".json";
      IRM_RETURN_IF_ERROR(newir::SaveProgramFile(split.programs.at(type),
                                                 oldir::RankFile(dir, rank.rank, file),
                                                 newir::FileFormat::kJson));
      rank.programs.emplace(type, file);
    }
    std::vector<oldir::PlanJob> plan;
    for (const schedules::Job& job : split.plan) plan.push_back({job.type, job.micro_batch});
    rank.plan = std::move(plan);
  }
  bundle.p2p = std::nullopt;
  IRM_RETURN_IF_ERROR(oldir::WriteBundle(bundle, dir));

  PirPipelineBundle written;
  IRM_ASSIGN_OR_RETURN(const schedules::CommProgram comm, corpus::BundleCommProgram(bundle, dir));
  IRM_ASSIGN_OR_RETURN(written.min_buffer_depth, schedules::MinBufferDepth(comm));
  written.bundle = std::move(bundle);
  return written;
}

}  // namespace irm::diff
