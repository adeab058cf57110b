// The bundle parity driver (bundle_parity.h): both bundles on the thread world, traced per rank,
// compared per rank, the first divergence chosen over the ranks and isolated.
#include "diff_tests/bundle_parity.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "common/file_io.h"
#include "diff_tests/first_divergence.h"
#include "diff_tests/isolate.h"
#include "diff_tests/parity_compare.h"
#include "newir/pir_json.h"
#include "newir/printer.h"
#include "oldir/bundle.h"
#include "oldir/program_io.h"
#include "reference_runtime/chrome_trace.h"
#include "reference_runtime/comm/comm_trace.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/op_trace.h"
#include "translator/bundle_translate.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

// A folder removed when it goes out of scope (the on-the-fly translation).
class ScratchBundle {
 public:
  explicit ScratchBundle(std::string path) : path_(std::move(path)) {}
  ~ScratchBundle() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchBundle(const ScratchBundle&) = delete;
  ScratchBundle& operator=(const ScratchBundle&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Beside the legacy bundle: ".<name>.parity-<pid>-<n>", unique per process and call.
std::string ScratchPathBeside(const std::string& dir) {
  static std::atomic<int> counter{0};
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return (p.parent_path() /
          fmt::format(".{}.parity-{}-{}", p.filename().string(), ::getpid(), counter++))
      .string();
}

struct SideRun {
  std::vector<Trace> traces;  // per rank
  rt::MultiRankResult result;
};

using KeepForRank = std::function<rt::KeepPredicate(int rank)>;

// Runs every rank of the bundle in `dir`, each with its own recorder whose context follows the
// jobs the rank runs (the startup program first, as step 0).
// `chrome`, when given, draws the run too.
StatusOr<SideRun> RunSide(const std::string& dir, int world_size,
                          const BundleParityOptions& options, int steps, uint64_t seed,
                          const KeepForRank& keep, const std::string& side,
                          rt::ChromeTraceRecorder* chrome = nullptr) {
  std::vector<std::unique_ptr<rt::OpTraceRecorder>> recorders;
  std::vector<std::unique_ptr<rt::OpObserver>> observers;  // both recorders', with `chrome`
  for (int rank = 0; rank < world_size; ++rank) {
    recorders.push_back(std::make_unique<rt::OpTraceRecorder>(keep(rank)));
    recorders.back()->SetContext(rank, 0, 0, "startup");
    if (chrome != nullptr) {
      observers.push_back(std::make_unique<rt::OpObserver>(
          [trace = recorders.back()->observer(),
           draw = chrome->observer(rank)](const rt::OpEvent& event) {
            (*trace)(event);
            (*draw)(event);
          }));
    }
  }
  rt::MultiRankConfig config;
  config.rank_config.steps = steps;
  config.rank_config.seed = seed;
  config.rank_config.feeds = options.feeds;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = options.batch_size;
  config.rank_config.options.gemm = options.gemm;
  config.rank_config.options.kernels = options.kernels;
  config.world.trace = true;
  config.world.timeout = options.timeout;
  config.make_world = options.make_world;
  config.p2p = options.p2p;
  config.observer = [&](int rank) -> const rt::OpObserver* {
    const size_t r = static_cast<size_t>(rank);
    return chrome != nullptr ? observers[r].get() : recorders[r]->observer();
  };
  config.on_job = [&](int rank, const rt::JobContext& job) {
    recorders[static_cast<size_t>(rank)]->SetContext(rank, job.step, job.micro_batch,
                                                     std::string(job.job_type));
    if (chrome != nullptr) chrome->OnJob(rank, job);
  };
  std::mutex progress_mu;
  if (options.progress) {
    config.on_step = [&](int rank, const rt::PlanStepResult& step) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.progress(side, rank, step.step, steps);
    };
  }
  StatusOr<rt::MultiRankResult> ran = rt::RunBundleRanks(dir, config);
  if (!ran.ok()) return Status(ran.status()).AddNote(fmt::format("in the {} run", side));
  SideRun out;
  out.result = std::move(ran).value();
  for (auto& recorder : recorders) out.traces.push_back(recorder->TakeRecords());
  return out;
}

CommDiff DiffCommunication(int rank, const rt::CommTrace* a, const rt::CommTrace* b) {
  static const rt::CommTrace kEmpty;
  const rt::CommTrace& x = a != nullptr ? *a : kEmpty;
  const rt::CommTrace& y = b != nullptr ? *b : kEmpty;
  CommDiff d;
  d.rank = rank;
  d.old_records = static_cast<int>(x.records().size());
  d.new_records = static_cast<int>(y.records().size());
  if (std::optional<size_t> i = rt::FirstCommDifference(x, y)) {
    d.equal = false;
    d.index = static_cast<int64_t>(*i);
    d.old_record = *i < x.records().size() ? rt::DescribeRecord(x.records()[*i]) : "(none)";
    d.new_record = *i < y.records().size() ? rt::DescribeRecord(y.records()[*i]) : "(none)";
  }
  return d;
}

// One rank's intermediates: aligned, compared, and its own first divergence.
struct RankAlignment {
  Alignment alignment;
  std::vector<PairResult> results;
  std::optional<FirstDivergence> divergence;
};

// The program file a job (or "startup", step 0) of `rank` runs, in the bundle in `dir`.
StatusOr<std::string> ProgramFile(const std::string& dir, int rank, const std::string& job) {
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle bundle, oldir::ReadBundle(dir));
  for (const oldir::BundleRank& r : bundle.ranks) {
    if (r.rank != rank) continue;
    if (job == "startup" && !r.startup.empty()) return oldir::RankFile(dir, rank, r.startup);
    auto it = r.programs.find(job.empty() ? "main" : job);
    if (it != r.programs.end()) return oldir::RankFile(dir, rank, it->second);
  }
  return Status(StatusCode::kNotFound, Location::File(dir),
                fmt::format("rank {} has no program for job '{}'", rank, job));
}

}  // namespace

StatusOr<ParityResult> RunBundleParity(const std::string& legacy_dir, const std::string& new_dir,
                                       const BundleParityOptions& options) {
  if (options.tier == Tier::kNoiseFloor) {
    return Status(StatusCode::kUnimplemented, Location{},
                  "the noise-floor tier arbitrates a distributed run against its serial "
                  "program (parity --serial); a translation is checked in the exact or "
                  "reordered tier");
  }
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle legacy, oldir::ReadBundle(legacy_dir));
  if (legacy.ir != oldir::BundleIr::kLegacy) {
    return Status(StatusCode::kInvalidArgument, Location::File(legacy_dir),
                  "the legacy bundle is a pir bundle; give the legacy one (and the pir one with "
                  "--against)");
  }
  std::optional<ScratchBundle> scratch;
  std::string pir_dir = new_dir;
  if (pir_dir.empty()) {
    scratch.emplace(ScratchPathBeside(legacy_dir));
    IRM_ASSIGN_OR_RETURN(translator::BundleTranslation translated,
                         translator::TranslateBundle(legacy_dir, scratch->path()));
    pir_dir = scratch->path();
  }
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle pir, oldir::ReadBundle(pir_dir));
  if (pir.ir != oldir::BundleIr::kPir) {
    return Status(StatusCode::kInvalidArgument, Location::File(new_dir),
                  "the bundle to compare with is a legacy bundle; it must be a pir bundle");
  }
  if (pir.world_size != legacy.world_size) {
    return Status(StatusCode::kInvalidArgument, Location::File(new_dir),
                  fmt::format("the pir bundle has {} ranks and the legacy bundle {}",
                              pir.world_size, legacy.world_size));
  }
  const int world_size = legacy.world_size;
  const int steps = options.steps > 0 ? options.steps : legacy.steps;
  const uint64_t seed = options.seed.value_or(static_cast<uint64_t>(legacy.seed));
  const std::string new_label = new_dir.empty() ? "(translated)" : new_dir;

  // The exact tier decides by hash; the others compare values, so every output is kept.
  const rt::KeepPredicate user_keep =
      options.keep.empty() ? rt::KeepNone() : rt::KeepMatching(options.keep);
  const rt::KeepPredicate keep = options.tier == Tier::kExact ? user_keep : rt::KeepAll();
  const KeepForRank same_keep = [&](int) { return keep; };
  std::optional<rt::ChromeTraceRecorder> old_chrome;
  std::optional<rt::ChromeTraceRecorder> new_chrome;
  if (options.chrome_trace) {
    old_chrome.emplace(world_size, "legacy", 0);
    new_chrome.emplace(world_size, "new IR", world_size);
  }
  IRM_ASSIGN_OR_RETURN(SideRun old_run,
                       RunSide(legacy_dir, world_size, options, steps, seed, same_keep, "legacy",
                               old_chrome ? &*old_chrome : nullptr));
  IRM_ASSIGN_OR_RETURN(SideRun new_run,
                       RunSide(pir_dir, world_size, options, steps, seed, same_keep, "new-IR",
                               new_chrome ? &*new_chrome : nullptr));

  ParityResult result;
  if (options.chrome_trace) {
    std::vector<const rt::CommTrace*> old_comm;
    std::vector<const rt::CommTrace*> new_comm;
    for (int rank = 0; rank < world_size; ++rank) {
      old_comm.push_back(old_run.result.world->trace(rank));
      new_comm.push_back(new_run.result.world->trace(rank));
    }
    std::vector<std::pair<int, std::vector<int>>> rings;
    for (const oldir::ProcessGroup& group : legacy.process_groups) {
      rings.emplace_back(group.ring_id, group.ranks);
    }
    IRM_ASSIGN_OR_RETURN(result.chrome_trace,
                         rt::MergeChromeTraces({old_chrome->Render(old_comm, rings),
                                                new_chrome->Render(new_comm, rings)}));
  }
  ParityReport& report = result.report;
  report.legacy_program = legacy_dir;
  report.new_program = new_label;
  report.tier = options.tier;
  report.steps = steps;
  report.seed = seed;
  report.gemm = rt::GemmModeName(options.gemm);

  std::vector<RankAlignment> ranks(static_cast<size_t>(world_size));
  // The first divergence over the ranks: each rank's own is the earliest in its execution order;
  // of those, the one at the smallest (step, position in its rank's trace), then the smallest
  // rank. The ranks run concurrently, so no order across ranks is observed; the step comes first
  // because a step's divergence can only reach another rank within that step or later.
  std::optional<std::tuple<int, size_t, int>> first;
  for (int r = 0; r < world_size; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const rt::RankOutcome& old_rank = old_run.result.ranks[ri];
    const rt::RankOutcome& new_rank = new_run.result.ranks[ri];
    for (size_t s = 0; s < old_rank.steps.size() && s < new_rank.steps.size(); ++s) {
      CompareFetches(r, old_rank.steps[s].step, old_rank.steps[s].merged, new_rank.steps[s].merged,
                     "bundle", report);
    }
    // The rank's persistable vars after its last step (tensors never defined are left out).
    CompareVars(r, steps, DefinedVars(*old_rank.scope), DefinedVars(*new_rank.scope), report);
    RankAlignment& a = ranks[ri];
    a.alignment = AlignTraces(old_run.traces[ri], new_run.traces[ri]);
    a.results = CompareAligned(old_run.traces[ri], new_run.traces[ri], a.alignment, options.tier);
    a.divergence = FindFirstDivergence(old_run.traces[ri], new_run.traces[ri], a.alignment,
                                       a.results, options.tier);
    if (a.divergence) {
      const std::tuple<int, size_t, int> at{old_run.traces[ri][a.divergence->old_record].step,
                                            a.divergence->old_record, r};
      if (!first || at < *first) first = at;
    }
  }
  const int divergent_rank = first ? std::get<2>(*first) : -1;

  if (first && options.tier == Tier::kExact) {
    // Hashes found it; re-run both sides keeping the op's inputs and outputs on that rank.
    const size_t ri = static_cast<size_t>(divergent_rank);
    const FirstDivergence& d = *ranks[ri].divergence;
    const DivergenceKeep again_keep = KeepForDivergence(
        old_run.traces[ri][d.old_record], new_run.traces[ri][d.new_record], user_keep);
    const KeepForRank old_keep = [&](int rank) {
      return rank == divergent_rank ? again_keep.old_side : user_keep;
    };
    const KeepForRank new_keep = [&](int rank) {
      return rank == divergent_rank ? again_keep.new_side : user_keep;
    };
    IRM_ASSIGN_OR_RETURN(SideRun old_again,
                         RunSide(legacy_dir, world_size, options, steps, seed, old_keep, "legacy"));
    IRM_ASSIGN_OR_RETURN(SideRun new_again,
                         RunSide(pir_dir, world_size, options, steps, seed, new_keep, "new-IR"));
    if (old_again.traces[ri].size() == old_run.traces[ri].size() &&
        new_again.traces[ri].size() == new_run.traces[ri].size()) {
      old_run.traces[ri] = std::move(old_again.traces[ri]);
      new_run.traces[ri] = std::move(new_again.traces[ri]);
      RecompareDiffering(d, ranks[ri].alignment, old_run.traces[ri], new_run.traces[ri],
                         options.tier, ranks[ri].results);
    }
  }

  for (int r = 0; r < world_size; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const RankAlignment& a = ranks[ri];
    AppendIntermediates(a.alignment, a.results, old_run.traces[ri], new_run.traces[ri], report);
    AppendUnaligned(a.alignment, old_run.traces[ri], new_run.traces[ri], report);
    report.communication.push_back(
        DiffCommunication(r, old_run.result.world->trace(r), new_run.result.world->trace(r)));
  }

  if (first) {
    const size_t ri = static_cast<size_t>(divergent_rank);
    const RankAlignment& a = ranks[ri];
    const FirstDivergence& div = *a.divergence;
    const Trace& old_trace = old_run.traces[ri];
    const Trace& new_trace = new_run.traces[ri];
    const rt::OpRecord& old_op = old_trace[div.old_record];
    const rt::OpRecord& new_op = new_trace[div.new_record];
    DivergenceReport d = DescribeDivergence(div, a.alignment, a.results, old_trace, new_trace);
    // The ops' text: from the programs the rank ran for that job (read again; the runs are over).
    std::optional<oldir::Program> old_program;
    if (StatusOr<std::string> file = ProgramFile(legacy_dir, divergent_rank, old_op.job);
        file.ok()) {
      StatusOr<oldir::Program> loaded = oldir::LoadProgram(*file);
      if (loaded.ok()) old_program = std::move(loaded).value();
    }
    if (old_program) d.old_op.text = LegacyOpText(*old_program, old_op);
    std::optional<newir::Program> new_program;
    std::string not_loaded;
    StatusOr<std::string> new_file = ProgramFile(pir_dir, divergent_rank, new_op.job);
    StatusOr<std::string> new_text = new_file.ok() ? ReadFile(*new_file) : new_file.status();
    if (new_text.ok()) {
      StatusOr<newir::Program> loaded = newir::ReadPirJson(*new_text, *new_file);
      if (loaded.ok()) {
        new_program = std::move(loaded).value();
      } else {
        not_loaded = loaded.status().message();
      }
    } else {
      not_loaded = new_text.status().message();
    }
    const newir::Operation* suspect =
        new_program ? TopLevelOp(*new_program, new_op.block, new_op.op_index) : nullptr;
    if (suspect != nullptr) d.new_op.text = newir::PrintOperation(*suspect);
    report.first_divergence = std::move(d);

    if (options.isolate) {
      if (suspect == nullptr) {
        IsolationReport iso;
        iso.detail = !new_program ? fmt::format(
                                        "the rank's new-IR program for job '{}' could not "
                                        "be loaded again: {}",
                                        new_op.job, not_loaded)
                                  : "the suspect op is nested in a region";
        report.isolation = iso;
      } else {
        // Inputs: the legacy run's latest write of each name on the rank (startup writes and
        // optimizer updates included); feeds, which no op writes, are not kept.
        const WriteIndex old_writes(old_trace);
        const size_t record = div.old_record;
        const int rank = divergent_rank;
        const LegacyValue inputs = [&](const std::string& name) -> const rt::Tensor* {
          std::optional<TensorRef> w = old_writes.LatestBefore(rank, name, record);
          return w ? KeptTensor(old_trace, *w) : nullptr;
        };
        const LegacyValue outputs = [&](const std::string& name) {
          return KeptOutput(old_trace, record, name);
        };
        rt::ExecutorOptions eo;
        eo.gemm = options.gemm;
        eo.kernels = options.kernels;
        eo.seed = seed;
        report.isolation = IsolateNewOp(*suspect, inputs, outputs, options.tier, eo);
      }
    }
    result.old_trace = std::move(old_run.traces[ri]);
    result.new_trace = std::move(new_run.traces[ri]);
  }
  return result;
}

}  // namespace irm::diff
