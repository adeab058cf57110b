// The Engine flow on both IRs: the stages of Paddle's Engine._prepare_program for the legacy
// passes and the new IR's, and the three comparisons (engine_flow.h, docs/engine.md).
#include "diff_tests/engine_flow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "common/file_io.h"
#include "common/staged_folder.h"
#include "diff_tests/engine_pipeline.h"
#include "diff_tests/parallelize_bundle.h"
#include "diff_tests/pir_bundle_compare.h"
#include "diff_tests/plan_bundle_compare.h"
#include "diff_tests/serial_parity.h"
#include "newir/auto_parallel/strategy_placements.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "oldir/passes/apply_strategy.h"
#include "oldir/passes/placements.h"
#include "oldir/program_io.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/multi_rank_run.h"
#include "translator/bundle_translate.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSerialPair = "serial";
// Folders of the flow's output; those under kScratch are removed before the output appears.
constexpr const char* kScratch = ".engine-scratch";

// A status from a stage, remembered with the stage for the caller's exit code.
struct StageError {
  EngineStage stage;
  Status status;
};

bool UsesLegacy(EngineIr ir) { return ir != EngineIr::kPir; }
bool UsesPir(EngineIr ir) { return ir != EngineIr::kLegacy; }

// The first failing tensor or communication record of a report, for the summary.
std::string FirstFailure(const ParityReport& report) {
  for (const ComparedTensor& t : report.tensors) {
    if (!t.compared || t.comparison.pass) continue;
    const std::string rank = t.rank == kAllRanks ? "all ranks" : fmt::format("rank {}", t.rank);
    return fmt::format("{} {}, {}, step {}: {}", TensorGroupName(t.group), t.name, rank, t.step,
                       t.comparison.reason);
  }
  for (const CommDiff& c : report.communication) {
    if (c.equal) continue;
    return fmt::format("communication of rank {}, call {}: {} vs {}", c.rank, c.index, c.old_record,
                       c.new_record);
  }
  return "";
}

std::string FirstOpDifference(const PirBundleComparison& comparison) {
  for (const ProgramAlignment& program : comparison.programs) {
    if (program.same_order || program.differences.empty()) continue;
    const AlignedOp& op = program.differences.front();
    std::string where;
    switch (op.kind) {
      case AlignedOp::Kind::kOnlyA:
        where = fmt::format("only in legacy: #{} {}", op.index_a, op.name);
        break;
      case AlignedOp::Kind::kOnlyB:
        where = fmt::format("only in pir: #{} {}", op.index_b, op.name);
        break;
      case AlignedOp::Kind::kMoved:
        where = fmt::format("moved: {} legacy #{} pir #{}", op.name, op.index_a, op.index_b);
        break;
      case AlignedOp::Kind::kSame:
        where = op.name;
        break;
    }
    return fmt::format("rank {} {}: {}", program.rank, program.program, where);
  }
  return "";
}

// A persistable var the serial program lacks that only one road's pass makes (the legacy gradient
// merge's `gradient_merge_cond`, which the new IR's pd_op.if reads as a value) is the passes'
// bookkeeping: listed in the report, not compared, as pir_bundle_compare.h means a var only one
// side holds. A serial parameter or optimizer state missing on one side still fails.
void WaiveBookkeeping(const oldir::Program& startup, const oldir::Program& main,
                      ParityReport& report) {
  std::set<std::string> serial;
  for (const oldir::Program* program : {&startup, &main}) {
    const oldir::Block root = program->root();
    for (int i = 0; i < root.num_vars(); ++i) {
      if (root.var(i).persistable()) serial.insert(root.var(i).name());
    }
  }
  for (ComparedTensor& t : report.tensors) {
    const bool one_sided = t.comparison.reason == "only in the legacy scope" ||
                           t.comparison.reason == "only in the new-IR scope";
    if (t.group != TensorGroup::kParameter || !one_sided || serial.count(t.name)) continue;
    t.compared = false;
    t.comparison.reason += ": made by one road's pass only, not compared";
  }
}

EnginePair Judged(std::string name, ParityReport report) {
  EnginePair pair;
  pair.name = std::move(name);
  pair.verdict = report.parity() ? EnginePair::Verdict::kPass : EnginePair::Verdict::kFail;
  pair.first_failure = FirstFailure(report);
  pair.report = std::move(report);
  return pair;
}

EnginePair Skipped(std::string name, std::string reason) {
  EnginePair pair;
  pair.name = std::move(name);
  pair.verdict = EnginePair::Verdict::kSkipped;
  pair.skipped_reason = std::move(reason);
  return pair;
}

class Flow {
 public:
  Flow(const EngineOptions& options, std::string root) : options_(options), root_(std::move(root)) {
    strategy_ = options.strategy;
    merges_ = strategy_.gradient_merge.enable && strategy_.gradient_merge.k_steps > 1;
    pipelined_ = strategy_.pp_degree > 1;
  }

  StatusOr<EngineResult> Run(const std::string& stem, EngineStage* stage);

 private:
  std::string Dir(std::string_view name) const { return (fs::path(root_) / name).string(); }
  std::string ScratchDir(std::string_view name) const {
    return (fs::path(root_) / kScratch / name).string();
  }
  void Progress(EngineStage stage, const std::string& what) const {
    if (options_.progress) {
      options_.progress(fmt::format("[engine] {}: {}", EngineStageName(stage), what));
    }
  }

  Status Build();
  Status Plan();
  // A pipeline's bundle from the serial one: its feeds take a step's whole batch, which the
  // plans cut into accumulate_steps micro-batches of `micro_batch_rows`.
  struct PipelineLayout {
    oldir::Bundle bundle;
    int64_t micro_batch_rows = 0;
  };
  StatusOr<PipelineLayout> PipelineLayoutOf() const;
  StatusOr<corpus::ModelBundle> LegacyDistributed();
  Status ParallelLegacy();
  Status ParallelPir();
  Status ParallelPirPipeline();
  EnginePair CommunicationFailure(std::string name) const;
  Status InitComm(const std::string& side, const std::string& dir);
  Status Initialize(const std::string& side, const std::string& dir);
  StatusOr<EnginePair> AgainstSerial(const std::string& side, const std::string& dir);
  StatusOr<EnginePair> LegacyAgainstPir();
  Status RunAlone(const std::string& side, const std::string& dir);

  const EngineOptions& options_;
  std::string root_;
  oldir::passes::Strategy strategy_;
  bool merges_ = false;
  bool pipelined_ = false;
  // The new-IR bundle's static communication check, when it found that the plans cannot run
  // (a send no receive takes, a cycle): what it says, naming the op. Empty when it passed.
  std::string pir_comm_failure_;
  // The serial program, as built or read.
  oldir::Program serial_startup_;
  oldir::Program serial_main_;
  oldir::Bundle serial_bundle_;
  int steps_ = 1;
  uint64_t seed_ = 0;
  std::optional<newir::ShardAnnotations> annotations_;
};

Status Flow::Build() {
  const std::string serial_dir = Dir("serial");
  if (options_.serial_bundle.empty()) {
    corpus::ModelRecipe recipe = options_.recipe;
    recipe.strategy.reset();
    recipe.annotations.clear();
    recipe.batch_size = options_.batch_size;
    if (options_.steps > 0) recipe.steps = options_.steps;
    IRM_ASSIGN_OR_RETURN(corpus::ModelBundle made, corpus::MakeModelBundle(recipe));
    IRM_ASSIGN_OR_RETURN(serial_bundle_, corpus::WriteModelBundle(made, serial_dir));
    serial_startup_ = made.ranks[0].startup;
    serial_main_ = made.ranks[0].main;
  } else {
    const std::string& in = options_.serial_bundle;
    IRM_ASSIGN_OR_RETURN(serial_bundle_, oldir::ReadBundle(in));
    const bool one_rank = serial_bundle_.world_size == 1 && serial_bundle_.ranks.size() == 1;
    if (serial_bundle_.ir != oldir::BundleIr::kLegacy || !one_rank ||
        serial_bundle_.ranks[0].plan || !serial_bundle_.ranks[0].programs.count("main") ||
        serial_bundle_.ranks[0].startup.empty()) {
      Status status(StatusCode::kInvalidArgument, Location::File(in),
                    "not a serial legacy bundle: the engine starts from one rank's startup and "
                    "main programs without a plan");
      status.AddNote("ir-migrate build mlp|gpt -o DIR writes one");
      return status;
    }
    IRM_ASSIGN_OR_RETURN(serial_startup_, oldir::LoadProgram(oldir::RankFile(
                                              in, 0, serial_bundle_.ranks[0].startup)));
    IRM_ASSIGN_OR_RETURN(serial_main_, oldir::LoadProgram(oldir::RankFile(
                                           in, 0, serial_bundle_.ranks[0].programs.at("main"))));
    if (options_.steps > 0) serial_bundle_.steps = options_.steps;
    corpus::ModelBundle copy;
    copy.bundle = serial_bundle_;
    copy.bundle.ranks.clear();
    copy.ranks.push_back(oldir::passes::SingleProgramRank(serial_startup_, serial_main_));
    IRM_ASSIGN_OR_RETURN(serial_bundle_, corpus::WriteModelBundle(copy, serial_dir));
  }
  steps_ = options_.steps > 0 ? options_.steps : serial_bundle_.steps;
  seed_ = options_.seed.value_or(static_cast<uint64_t>(serial_bundle_.seed));
  Progress(EngineStage::kBuild,
           fmt::format("serial program: startup {} ops, main {} ops; {} steps, seed {}",
                       serial_startup_.num_ops(), serial_main_.num_ops(), steps_, seed_));
  return Status::Ok();
}

Status Flow::Plan() {
  const std::string degrees = fmt::format("dp {} x mp {} x pp {}", strategy_.dp_degree,
                                          strategy_.mp_degree, strategy_.pp_degree);
  if (UsesLegacy(options_.ir)) {
    std::string placed = "every parameter replicated";
    if (strategy_.mp_degree > 1) {
      IRM_ASSIGN_OR_RETURN(oldir::passes::Placements placements,
                           oldir::passes::MegatronPlacements(serial_main_));
      int sharded = 0;
      for (const auto& [name, mapping] : placements) {
        for (int64_t dim : mapping) sharded += dim >= 0 ? 1 : 0;
      }
      placed =
          fmt::format("Megatron placements: {} parameters, {} sharded", placements.size(), sharded);
    }
    Progress(EngineStage::kPlan, fmt::format("(legacy) {}: {}", degrees, placed));
  }
  if (UsesPir(options_.ir)) {
    // The serial program reaches the new IR by translation; the new IR's passes start there.
    IRM_RETURN_IF_ERROR(
        translator::TranslateBundle(Dir("serial"), ScratchDir("serial_pir")).status());
    IRM_ASSIGN_OR_RETURN(newir::Program main, newir::LoadProgramFile(oldir::RankFile(
                                                  ScratchDir("serial_pir"), 0, "main.json")));
    if (pipelined_) {
      // One process mesh per stage on the new IR's own passes (engine_pipeline.h), each of its
      // stage's data- and tensor-parallel ranks. Megatron placements a stage cannot split are
      // refused here, by the new IR's rule, before anything is built.
      if (strategy_.mp_degree > 1) {
        IRM_RETURN_IF_ERROR(newir::MegatronPlacementsOver(main, strategy_.mp_degree).status());
      }
      Progress(EngineStage::kPlan,
               fmt::format("(pir) {}: {} stage meshes of {} ranks{}, split by the new IR's "
                           "pipeline pass ({})",
                           degrees, strategy_.pp_degree, strategy_.dp_degree * strategy_.mp_degree,
                           strategy_.mp_degree > 1 ? ", Megatron placements over mp" : "",
                           strategy_.pipeline.schedule_mode));
      return Status::Ok();
    }
    std::vector<std::string> batch_feeds;
    for (const oldir::FeedSpec& feed : serial_bundle_.feeds) {
      if (feed.split == oldir::FeedSplit::kBatch) batch_feeds.push_back(feed.name);
    }
    StatusOr<newir::ShardAnnotations> standard = newir::StandardAnnotations(
        main, {strategy_.dp_degree, strategy_.mp_degree, strategy_.pp_degree}, batch_feeds);
    if (!standard.ok()) {
      Status status = standard.status();
      if (status.location().empty()) status = Status(status).InFile(options_.strategy_file);
      return status;
    }
    annotations_ = *std::move(standard);
    Progress(EngineStage::kPlan,
             fmt::format("(pir) {}: mesh {}, {} values annotated", degrees,
                         annotations_->mesh.ToString(), annotations_->values.size()));
  }
  return Status::Ok();
}

StatusOr<Flow::PipelineLayout> Flow::PipelineLayoutOf() const {
  const int accumulate = strategy_.pipeline.accumulate_steps;
  if (accumulate < 1 || options_.batch_size % accumulate != 0) {
    return Status(
        StatusCode::kInvalidArgument, Location::File("--batch-size"),
        fmt::format("{} rows do not split into {} micro-batches", options_.batch_size, accumulate));
  }
  PipelineLayout layout{serial_bundle_, options_.batch_size / accumulate};
  layout.bundle.steps = steps_;
  layout.bundle.micro_batches = accumulate;
  for (oldir::FeedSpec& feed : layout.bundle.feeds) {
    if (!feed.shape.empty() && feed.shape[0] == -1) feed.shape[0] = options_.batch_size;
  }
  return layout;
}

StatusOr<corpus::ModelBundle> Flow::LegacyDistributed() {
  corpus::ModelBundle made;
  if (options_.serial_bundle.empty()) {
    corpus::ModelRecipe recipe = options_.recipe;
    recipe.strategy = strategy_;
    recipe.batch_size = options_.batch_size;
    recipe.steps = steps_;
    recipe.job_lists = schedules::JobListIr::kLegacy;
    IRM_ASSIGN_OR_RETURN(made, corpus::MakeModelBundle(recipe));
  } else {
    // A serial bundle's programs through the passes as MakeModelBundle puts a zoo model's.
    oldir::passes::ApplyStrategyOptions apply;
    apply.job_lists = schedules::JobListIr::kLegacy;
    made.bundle = serial_bundle_;
    if (strategy_.pipeline.enable) {
      IRM_ASSIGN_OR_RETURN(PipelineLayout layout, PipelineLayoutOf());
      apply.micro_batch_size = layout.micro_batch_rows;
      made.bundle = std::move(layout.bundle);
    }
    IRM_ASSIGN_OR_RETURN(
        oldir::passes::DistributedPrograms programs,
        oldir::passes::ApplyStrategy(serial_startup_, serial_main_, strategy_, apply));
    made.bundle.strategy = oldir::passes::StrategyToJson(strategy_);
    made.bundle.world_size = programs.world_size;
    made.bundle.process_groups = std::move(programs.process_groups);
    made.bundle.micro_batches = programs.micro_batches;
    made.bundle.ranks.clear();
    made.ranks = std::move(programs.ranks);
    made.k_steps = strategy_.gradient_merge.enable ? strategy_.gradient_merge.k_steps : 1;
  }
  made.bundle.steps = steps_;
  return made;
}

Status Flow::ParallelLegacy() {
  IRM_ASSIGN_OR_RETURN(corpus::ModelBundle made, LegacyDistributed());
  for (size_t r = 0; r < made.ranks.size(); ++r) {
    const oldir::passes::RankPrograms& rank = made.ranks[r];
    int64_t job_ops = rank.main.num_ops();
    for (const auto& [type, job] : rank.jobs) job_ops += job.num_ops();
    Progress(EngineStage::kParallel,
             fmt::format("(legacy) rank {}: startup {} ops, {} {} ops", r, rank.startup.num_ops(),
                         rank.jobs.empty() ? "main" : fmt::format("{} jobs", rank.jobs.size()),
                         job_ops));
  }
  return corpus::WriteModelBundle(made, Dir("legacy")).status();
}

Status Flow::ParallelPir() {
  if (pipelined_) return ParallelPirPipeline();
  IRM_ASSIGN_OR_RETURN(
      ParallelizedBundle made,
      ParallelizeBundle(ScratchDir("serial_pir"), strategy_, options_.strategy_file, annotations_));
  made.bundle.steps = steps_;
  for (size_t r = 0; r < made.programs.ranks.size(); ++r) {
    newir::RankPrograms& rank = made.programs.ranks[r];
    std::string merged;
    if (strategy_.gradient_merge.enable) {
      newir::GradientMergeOptions gm;
      gm.k_steps = strategy_.gradient_merge.k_steps;
      gm.avg = strategy_.gradient_merge.avg;
      gm.fault = options_.test_fault.gradient_merge;
      StatusOr<newir::GradientMergeResult> result = newir::ApplyGradientMerge(rank.main, gm);
      if (!result.ok()) return result.status();
      IRM_RETURN_IF_ERROR(newir::AddGradientMergeInitializers(rank.startup, rank.main));
      merged = fmt::format(", gradient merge k={}: {} buffers", gm.k_steps, result->buffers.size());
    }
    Progress(EngineStage::kParallel,
             fmt::format("(pir) rank {}: startup {} ops, main {} ops{}", r, rank.startup.CountOps(),
                         rank.main.CountOps(), merged));
  }
  return WriteParallelizedBundle(made, Dir("pir"));
}

// Pipelines on the new IR's road: stages as process meshes (engine_pipeline.h), in the serial
// bundle's layout (PipelineLayoutOf).
Status Flow::ParallelPirPipeline() {
  IRM_ASSIGN_OR_RETURN(PipelineLayout layout, PipelineLayoutOf());
  PirPipelineOptions pipeline;
  pipeline.strategy = strategy_;
  pipeline.send_to_the_wrong_peer = options_.test_fault.pipeline_wrong_peer;
  pipeline.progress = [this](const std::string& line) {
    Progress(EngineStage::kParallel, "(pir) " + line);
  };
  PirPipelineFromSerial serial;
  serial.serial_pir_dir = ScratchDir("serial_pir");
  serial.legacy_serial_main = &serial_main_;
  serial.like = &layout.bundle;
  serial.micro_batch_size = layout.micro_batch_rows;
  IRM_ASSIGN_OR_RETURN(pir_comm_failure_, WritePirPipelineFromSerial(serial, pipeline, Dir("pir")));
  return Status::Ok();
}

// A pair the communication check decided: failed before any run, the check's finding as its
// first failure and as the report's one communication record.
EnginePair Flow::CommunicationFailure(std::string name) const {
  EnginePair pair;
  pair.name = std::move(name);
  pair.verdict = EnginePair::Verdict::kFail;
  pair.first_failure = "communication check of the new IR's bundle: " + pir_comm_failure_;
  pair.report.legacy_program = Dir("pir");
  pair.report.gemm = rt::GemmModeName(rt::ExecutorOptions{}.gemm);
  CommDiff diff;
  diff.equal = false;
  diff.old_record = "a plan every rank can run";
  diff.new_record = pir_comm_failure_;
  pair.report.communication.push_back(std::move(diff));
  return pair;
}

Status Flow::InitComm(const std::string& side, const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  for (int rank = 0; rank < bundle.world_size; ++rank) {
    std::vector<std::string> groups;
    for (const oldir::ProcessGroup& group : bundle.process_groups) {
      for (int member : group.ranks) {
        if (member != rank) continue;
        groups.push_back(fmt::format("ring {} [{}]", group.ring_id, fmt::join(group.ranks, ",")));
        break;
      }
    }
    Progress(EngineStage::kInitComm,
             fmt::format(
                 "({}) rank {}: {}", side, rank,
                 groups.empty() ? "no process group" : fmt::format("{}", fmt::join(groups, ", "))));
  }
  // The point-to-point model the build found the plans need (schedules/simulator.h): a legacy
  // plan that would hang under every model was refused when the bundle was written; a new-IR one
  // is reported as the communication check's failure, without running it.
  if (side == "pir" && !pir_comm_failure_.empty()) {
    Progress(EngineStage::kInitComm,
             fmt::format("({}) communication check FAILED: {}", side, pir_comm_failure_));
    return Status::Ok();
  }
  Progress(EngineStage::kInitComm,
           fmt::format("({}) point-to-point: {}", side,
                       bundle.p2p ? schedules::P2pModelName(*bundle.p2p) : "rendezvous"));
  return Status::Ok();
}

Status Flow::Initialize(const std::string& side, const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  for (const oldir::BundleRank& rank : bundle.ranks) {
    Progress(EngineStage::kInitialize,
             fmt::format("({}) rank {}: {} then {} shard{}", side, rank.rank, rank.startup,
                         rank.shards.size(), rank.shards.size() == 1 ? "" : "s"));
  }
  return Status::Ok();
}

StatusOr<EnginePair> Flow::AgainstSerial(const std::string& side, const std::string& dir) {
  const std::string name = fmt::format("{}-{}", kSerialPair, side);
  if (merges_ && steps_ % strategy_.gradient_merge.k_steps != 0) {
    return Skipped(name, fmt::format("{} executor steps are not whole updates of gradient merge's "
                                     "{} steps (the serial run compares updates: serial_parity.h)",
                                     steps_, strategy_.gradient_merge.k_steps));
  }
  SerialParityOptions parity;
  parity.steps = steps_;
  parity.seed = seed_;
  parity.batch_size = options_.batch_size;
  // The parity matrix cases' tier (diff_tests/cases: "noise-floor"): the reordered tier, a
  // tensor that misses it arbitrated by the serial program's float64 shadow.
  parity.tier = Tier::kNoiseFloor;
  parity.timeout = options_.timeout;
  parity.kernels = options_.kernels;
  parity.make_world = options_.make_world;
  parity.progress = [this, name, side](const std::string& who, int rank, int step, int steps) {
    if (step < steps) return;  // one line per rank, after its last step (1-based)
    Progress(EngineStage::kRun, fmt::format("({}) {} rank {}: {} steps", name,
                                            who == "serial" ? "serial" : side, rank, steps));
  };
  IRM_ASSIGN_OR_RETURN(ParityResult result, RunSerialParity(dir, Dir("serial"), parity));
  return Judged(name, std::move(result.report));
}

StatusOr<EnginePair> Flow::LegacyAgainstPir() {
  IRM_RETURN_IF_ERROR(translator::TranslateBundle(Dir("legacy"), Dir("legacy_pir")).status());
  PirBundleCompareOptions compare;
  compare.steps = steps_;
  compare.seed = seed_;
  compare.batch_size = options_.batch_size;
  compare.timeout = options_.timeout;
  compare.kernels = options_.kernels;
  compare.make_world = options_.make_world;
  // The float64 shadow of the serial program arbitrates as the serial check does. Not with
  // gradient merge: there the arbitration, which lets either road be judged against the other,
  // would excuse a merge that is wrong by a scale (1/(k+1)) on both the parameter and its
  // optimizer state; the two roads agree well within the reordered tier without it.
  std::unique_ptr<Float64Shadow> shadow;
  if (!merges_) {
    IRM_ASSIGN_OR_RETURN(
        shadow, RunFloat64Shadow(&serial_startup_, serial_main_, steps_, seed_,
                                 options_.batch_size * strategy_.dp_degree, rt::GemmMode::kBlas));
    compare.shadow = &shadow->scope;
  }
  // A pipeline's ranks run plans of jobs: compared job program by job program.
  IRM_ASSIGN_OR_RETURN(PirBundleComparison comparison,
                       pipelined_ ? ComparePlanBundles(Dir("legacy_pir"), Dir("pir"), compare)
                                  : ComparePirBundles(Dir("legacy_pir"), Dir("pir"), compare));
  Progress(EngineStage::kRun, fmt::format("(legacy-pir) {} ranks, {} steps each side",
                                          strategy_.world_size(), steps_));
  if (!pipelined_) WaiveBookkeeping(serial_startup_, serial_main_, comparison.report);
  EnginePair pair = Judged("legacy-pir", std::move(comparison.report));
  pair.same_op_order = comparison.same_op_order;
  pair.op_differences = DescribeOpDifferences(comparison);
  pair.first_op_difference = FirstOpDifference(comparison);
  return pair;
}

// A bundle no pair runs (gradient merge on one road): its steps on the flow's kernels and world,
// so that the flow still initialises and runs what it built.
Status Flow::RunAlone(const std::string& side, const std::string& dir) {
  rt::MultiRankConfig config;
  config.rank_config.steps = steps_;
  config.rank_config.seed = seed_;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = options_.batch_size;
  config.rank_config.options.kernels = options_.kernels;
  config.world.timeout = options_.timeout;
  config.make_world = options_.make_world;
  config.on_step = [this, side](int rank, const rt::PlanStepResult& step) {
    if (step.step < steps_) return;
    Progress(EngineStage::kRun, fmt::format("({}) rank {}: {} steps", side, rank, step.step));
  };
  return rt::RunBundleRanks(dir, config).status();
}

StatusOr<EngineResult> Flow::Run(const std::string& stem, EngineStage* stage) {
  auto at = [stage](EngineStage s) { *stage = s; };
  at(EngineStage::kBuild);
  IRM_RETURN_IF_ERROR(Build());
  at(EngineStage::kPlan);
  IRM_RETURN_IF_ERROR(Plan());
  at(EngineStage::kParallel);
  if (UsesLegacy(options_.ir)) IRM_RETURN_IF_ERROR(ParallelLegacy());
  if (UsesPir(options_.ir)) IRM_RETURN_IF_ERROR(ParallelPir());

  std::vector<std::pair<std::string, std::string>> sides;
  if (UsesLegacy(options_.ir)) sides.emplace_back("legacy", Dir("legacy"));
  if (UsesPir(options_.ir)) sides.emplace_back("pir", Dir("pir"));
  at(EngineStage::kInitComm);
  for (const auto& side : sides) IRM_RETURN_IF_ERROR(InitComm(side.first, side.second));
  at(EngineStage::kInitialize);
  for (const auto& side : sides) IRM_RETURN_IF_ERROR(Initialize(side.first, side.second));

  EngineResult result;
  result.stem = stem;
  result.ir = options_.ir;
  result.strategy = strategy_;
  result.steps = steps_;
  result.seed = seed_;
  result.device = options_.device;
  result.backend = options_.backend;
  at(EngineStage::kRun);
  for (const auto& side : sides) {
    if (side.first == "pir" && !pir_comm_failure_.empty()) {
      result.pairs.push_back(CommunicationFailure("serial-pir"));
      continue;
    }
    IRM_ASSIGN_OR_RETURN(EnginePair pair, AgainstSerial(side.first, side.second));
    if (pair.verdict == EnginePair::Verdict::kSkipped && options_.ir != EngineIr::kBoth) {
      IRM_RETURN_IF_ERROR(RunAlone(side.first, side.second));
    }
    result.pairs.push_back(std::move(pair));
  }
  if (options_.ir == EngineIr::kBoth && !pir_comm_failure_.empty()) {
    result.pairs.push_back(CommunicationFailure("legacy-pir"));
  } else if (options_.ir == EngineIr::kBoth) {
    IRM_ASSIGN_OR_RETURN(EnginePair pair, LegacyAgainstPir());
    result.pairs.push_back(std::move(pair));
  }
  at(EngineStage::kCompare);
  for (const EnginePair& pair : result.pairs) {
    std::string line = fmt::format("{}: {}", pair.name, EngineVerdictName(pair.verdict));
    if (pair.verdict == EnginePair::Verdict::kSkipped) line += " (" + pair.skipped_reason + ")";
    if (pair.verdict == EnginePair::Verdict::kFail) line += ": " + pair.first_failure;
    Progress(EngineStage::kCompare, line);
  }
  return result;
}

}  // namespace

const char* EngineIrName(EngineIr ir) {
  switch (ir) {
    case EngineIr::kLegacy:
      return "legacy";
    case EngineIr::kPir:
      return "pir";
    case EngineIr::kBoth:
      return "both";
  }
  return "?";
}

std::optional<EngineIr> EngineIrFromName(std::string_view name) {
  for (EngineIr ir : {EngineIr::kLegacy, EngineIr::kPir, EngineIr::kBoth}) {
    if (name == EngineIrName(ir)) return ir;
  }
  return std::nullopt;
}

const char* EngineStageName(EngineStage stage) {
  switch (stage) {
    case EngineStage::kBuild:
      return "build";
    case EngineStage::kPlan:
      return "plan";
    case EngineStage::kParallel:
      return "parallel";
    case EngineStage::kInitComm:
      return "init comm";
    case EngineStage::kInitialize:
      return "initialize";
    case EngineStage::kRun:
      return "run";
    case EngineStage::kCompare:
      return "compare";
  }
  return "?";
}

const char* EngineVerdictName(EnginePair::Verdict verdict) {
  switch (verdict) {
    case EnginePair::Verdict::kPass:
      return "pass";
    case EnginePair::Verdict::kFail:
      return "FAIL";
    case EnginePair::Verdict::kSkipped:
      return "skipped";
  }
  return "?";
}

StatusOr<EngineTestFault> ParseEngineTestFault(std::string_view spec) {
  EngineTestFault fault;
  if (spec == "pp:wrong-peer") {
    fault.pipeline_wrong_peer = true;
    return fault;
  }
  constexpr std::string_view kGm = "gm:";
  if (spec.substr(0, kGm.size()) == kGm) {
    const std::string_view name = spec.substr(kGm.size());
    if (!name.empty()) {
      StatusOr<newir::GradientMergeFault> gm = newir::GradientMergeFaultFromName(name);
      if (gm.ok()) {
        fault.gradient_merge = *gm;
        return fault;
      }
    }
  }
  Status status(StatusCode::kInvalidArgument, Location::File("--test-fault"),
                fmt::format("unknown fault '{}'", spec));
  status.AddNote("test-only faults: gm:scale-by-k-plus-1, gm:drop-if, pp:wrong-peer");
  return status;
}

bool EngineResult::parity() const {
  for (const EnginePair& pair : pairs) {
    if (pair.verdict == EnginePair::Verdict::kFail) return false;
  }
  return true;
}

StatusOr<EngineResult> RunEngineFlow(const EngineOptions& options, const std::string& out_dir,
                                     const std::string& stem, EngineFailure* failure) {
  EngineStage stage = EngineStage::kBuild;
  auto failed = [&](Status status) {
    if (failure) failure->stage = stage;
    return status;
  };
  // Refused before any work: the staged folder could only replace a new or empty one.
  std::error_code ec;
  if (fs::exists(out_dir, ec) && (!fs::is_directory(out_dir, ec) || !fs::is_empty(out_dir, ec))) {
    Status status(StatusCode::kInvalidArgument, Location::File(out_dir),
                  "the output exists and is not an empty folder");
    status.AddNote("engine writes a fresh folder: remove it or name another");
    return failed(status);
  }
  StatusOr<StagedFolder> staged = StagedFolder::Begin(out_dir);
  if (!staged.ok()) return failed(staged.status());
  Flow flow(options, staged->path());
  StatusOr<EngineResult> result = flow.Run(stem, &stage);
  if (!result.ok()) return failed(staged->Relocate(result.status()));
  // The reports name the bundles where they will be, not in the staging folder.
  for (EnginePair& pair : result->pairs) {
    for (std::string* dir : {&pair.report.legacy_program, &pair.report.new_program}) {
      if (dir->rfind(staged->path(), 0) == 0) {
        *dir = (fs::path(out_dir) / fs::path(*dir).lexically_relative(staged->path())).string();
      }
    }
  }
  if (!result->pairs.empty()) {
    const fs::path root = staged->path();
    Status written =
        WriteFileAtomically((root / "report.md").string(), RenderEngineMarkdown(*result));
    if (written.ok()) {
      written = WriteFileAtomically((root / "report.json").string(), RenderEngineJson(*result));
    }
    if (written.ok()) {
      written = WriteFileAtomically((root / "report.xml").string(), RenderEngineJunit(*result));
    }
    if (!written.ok()) return failed(staged->Relocate(written));
  }
  fs::remove_all(fs::path(staged->path()) / kScratch, ec);
  // --ir pir keeps the serial program only as the translation's input.
  if (options.ir == EngineIr::kPir) fs::remove_all(fs::path(staged->path()) / "serial", ec);
  stage = EngineStage::kCompare;
  if (const Status committed = staged->Commit(); !committed.ok()) return failed(committed);
  return result;
}

}  // namespace irm::diff
