// The distributed-vs-serial driver (serial_parity.h): three runs — the distributed bundle, the
// serial bundle and, in the noise-floor tier, the serial program's float64 shadow — the
// comparison, and on a mismatch the shorter re-runs that find the earliest differing step.
#include "diff_tests/serial_parity.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "diff_tests/parity_compare.h"
#include "diff_tests/shard_assembly.h"
#include "oldir/float64_shadow.h"
#include "oldir/program_io.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/run.h"

namespace irm::diff {
namespace {

// A replica's rank block, as multi_rank_run.h assigns rows: rank r is in replica r / (W / dp).
int ReplicaOf(int rank, int world_size, int dp_degree) { return rank / (world_size / dp_degree); }

const rt::Tensor* FindFetch(const std::vector<rt::Fetch>& fetches, const std::string& name) {
  for (const rt::Fetch& f : fetches) {
    if (f.name == name) return &f.tensor;
  }
  return nullptr;
}

// The mean over `values` of each one's mean (a replica's loss, or its micro-batches' losses), in
// double, as a tensor of `like`'s dtype and shape.
StatusOr<rt::Tensor> MeanOfMeans(const std::vector<const rt::Tensor*>& values,
                                 const rt::Tensor& like) {
  double sum = 0.0;
  for (const rt::Tensor* t : values) {
    if (t->dtype() != like.dtype() || t->numel() == 0) {
      return Status(
          StatusCode::kInvalidArgument, Location{},
          fmt::format("a replica fetches {}, the serial run {}", t->Describe(), like.Describe()));
    }
    double local = 0.0;
    for (int64_t i = 0; i < t->numel(); ++i) local += rt::ElementAsDouble(*t, i);
    sum += local / static_cast<double>(t->numel());
  }
  const double mean = sum / static_cast<double>(values.size());
  if (like.dtype() == DType::kFloat32) {
    return rt::Tensor::FromVector(std::vector<float>{static_cast<float>(mean)}, like.shape());
  }
  if (like.dtype() == DType::kFloat64) {
    return rt::Tensor::FromVector(std::vector<double>{mean}, like.shape());
  }
  return Status(StatusCode::kUnimplemented, Location{},
                fmt::format("the mean of {} fetches over the replicas is not computed",
                            DTypeName(like.dtype())));
}

// The replicas' rows one after another (dim 0), as the serial run of the global batch has them.
StatusOr<rt::Tensor> ReplicaRows(const std::vector<const rt::Tensor*>& values) {
  const rt::Tensor& first = *values.front();
  if (first.rank() == 0) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  "a replica fetches a 0-D value where the serial run fetches several");
  }
  std::vector<int64_t> shape = first.shape();
  shape[0] = 0;
  for (const rt::Tensor* t : values) {
    std::vector<int64_t> rest(t->shape().begin() + (t->rank() > 0 ? 1 : 0), t->shape().end());
    if (t->dtype() != first.dtype() || t->rank() != first.rank() ||
        !std::equal(rest.begin(), rest.end(), first.shape().begin() + 1)) {
      return Status(StatusCode::kInvalidArgument, Location{},
                    fmt::format("the replicas fetch {} and {}", first.Describe(), t->Describe()));
    }
    shape[0] += t->dim(0);
  }
  IRM_ASSIGN_OR_RETURN(rt::Tensor rows, rt::Tensor::Zeros(first.dtype(), shape));
  auto* out = static_cast<unsigned char*>(rows.raw());
  for (const rt::Tensor* t : values) {
    std::memcpy(out, t->raw(), t->nbytes());
    out += t->nbytes();
  }
  return rows;
}

// A check decided bit for bit (reassembly, replicas), with no metrics.
ComparedTensor Finding(TensorGroup group, int rank, int step, const std::string& name,
                       std::string reason) {
  ComparedTensor t;
  t.group = group;
  t.rank = rank;
  t.step = step;
  t.name = name;
  t.by_hash = true;
  t.comparison.reason = std::move(reason);
  return t;
}

// `got` against the serial run's `serial` in `tier`; in the noise-floor tier, a miss of the
// reordered tier goes to the float64 shadow.
void Judge(const rt::Tensor& got, const rt::Tensor& serial, const rt::Tensor* shadow, Tier tier,
           ComparedTensor& entry) {
  if (tier != Tier::kNoiseFloor) {
    entry.comparison = CompareTensors(got, serial, tier);
    return;
  }
  entry.comparison = CompareTensors(got, serial, Tier::kReordered);
  if (entry.comparison.pass) return;
  Arbitration arbitration = AgainstSerial(got, serial, shadow);
  if (arbitration.agreement == Agreement::kNoiseFloor ||
      arbitration.agreement == Agreement::kNoSignal) {
    entry.comparison.pass = true;
    entry.comparison.reason.clear();
  } else {
    entry.comparison.reason =
        shadow == nullptr ? arbitration.reason + " (no float64 shadow)" : arbitration.reason;
  }
  entry.arbitration = std::move(arbitration);
}

void CompareFetchesWithSerial(const oldir::Bundle& bundle, int dp_degree, int merge_steps,
                              const std::vector<rt::RankOutcome>& ranks,
                              const SerialOutcome& serial, Tier tier, ParityReport& report) {
  const int world = static_cast<int>(ranks.size());
  const size_t k = static_cast<size_t>(merge_steps);
  for (size_t s = 0; s < serial.run->steps.size(); ++s) {
    const rt::PlanStepResult& serial_step = serial.run->steps[s];
    const std::vector<rt::Fetch>* shadow_step =
        serial.shadow_fetches != nullptr && s < serial.shadow_fetches->size()
            ? &(*serial.shadow_fetches)[s]
            : nullptr;
    for (const rt::Fetch& want : serial_step.merged) {
      // The serial step's rows are the k executor steps' global batches one after another, each
      // the replicas' rows in replica order: the values in that order (j, then replica).
      std::vector<const rt::Tensor*> per_replica;
      bool complete = true;
      for (size_t j = 0; j < k; ++j) {
        const size_t executor_step = s * k + j;
        // Per replica, the ranks that fetch it (a pipeline's last stage; every rank of a
        // model-parallel group), in rank order.
        std::vector<std::vector<std::pair<int, const rt::Tensor*>>> replicas(
            static_cast<size_t>(dp_degree));
        for (int r = 0; r < world; ++r) {
          const std::vector<rt::PlanStepResult>& steps = ranks[static_cast<size_t>(r)].steps;
          if (executor_step >= steps.size()) continue;
          if (const rt::Tensor* t = FindFetch(steps[executor_step].merged, want.name)) {
            replicas[static_cast<size_t>(ReplicaOf(r, bundle.world_size, dp_degree))].push_back(
                {r, t});
          }
        }
        for (size_t q = 0; q < replicas.size(); ++q) {
          if (replicas[q].empty()) {
            report.tensors.push_back(Finding(TensorGroup::kFetch, kAllRanks, serial_step.step,
                                             want.name,
                                             fmt::format("no rank of replica {} fetches it", q)));
            complete = false;
            continue;
          }
          const int first_rank = replicas[q].front().first;
          const rt::Tensor* first = replicas[q].front().second;
          for (size_t i = 1; i < replicas[q].size(); ++i) {
            if (first->BitwiseEqual(*replicas[q][i].second)) continue;
            report.tensors.push_back(
                Finding(TensorGroup::kFetch, replicas[q][i].first, serial_step.step, want.name,
                        fmt::format("ranks {} and {} of replica {} fetch different bits",
                                    first_rank, replicas[q][i].first, q)));
          }
          per_replica.push_back(first);
        }
      }
      if (!complete) continue;
      StatusOr<rt::Tensor> got = want.tensor.numel() == 1 ? MeanOfMeans(per_replica, want.tensor)
                                                          : ReplicaRows(per_replica);
      if (!got.ok()) {
        report.tensors.push_back(Finding(TensorGroup::kFetch, kAllRanks, serial_step.step,
                                         want.name, got.status().message()));
        continue;
      }
      ComparedTensor entry;
      entry.group = TensorGroup::kFetch;
      entry.rank = kAllRanks;
      entry.step = serial_step.step;
      entry.name = want.name;
      Judge(*got, want.tensor,
            shadow_step != nullptr ? FindFetch(*shadow_step, want.name) : nullptr, tier, entry);
      report.tensors.push_back(std::move(entry));
    }
  }
}

void CompareVarsWithSerial(const oldir::Bundle& bundle, const std::vector<rt::RankOutcome>& ranks,
                           const SerialOutcome& serial, Tier tier, ParityReport& report) {
  const int step = serial.run->steps.empty() ? 0 : serial.run->steps.back().step;
  std::vector<VarView> held;
  std::vector<const std::map<std::string, oldir::ShardSlice>*> shards;
  for (size_t r = 0; r < ranks.size(); ++r) {
    held.push_back(ranks[r].scope != nullptr ? DefinedVars(*ranks[r].scope) : VarView{});
    auto it =
        std::find_if(bundle.ranks.begin(), bundle.ranks.end(),
                     [&](const oldir::BundleRank& b) { return b.rank == static_cast<int>(r); });
    shards.push_back(it != bundle.ranks.end() ? &it->shards : nullptr);
  }
  const VarView shadow = serial.shadow != nullptr ? DefinedVars(*serial.shadow) : VarView{};
  for (const auto& [name, expected] : DefinedVars(*serial.run->scope)) {
    std::vector<VarPiece> pieces;
    for (size_t r = 0; r < ranks.size(); ++r) {
      auto it = held[r].find(name);
      if (it == held[r].end()) continue;
      const oldir::ShardSlice* slice = nullptr;
      if (shards[r] != nullptr) {
        auto s = shards[r]->find(name);
        if (s != shards[r]->end()) slice = &s->second;
      }
      pieces.push_back({static_cast<int>(r), it->second, slice});
    }
    if (pieces.empty()) {
      report.tensors.push_back(
          Finding(TensorGroup::kParameter, kAllRanks, step, name, "no rank holds it"));
      continue;
    }
    AssembledVar assembled = AssembleVar(name, pieces);
    for (const AssemblyFinding& f : assembled.findings) {
      report.tensors.push_back(Finding(
          TensorGroup::kParameter, f.kind == AssemblyFinding::Kind::kUncovered ? kAllRanks : f.rank,
          step, name, f.message));
    }
    if (!assembled.tensor.defined()) continue;
    ComparedTensor entry;
    entry.group = TensorGroup::kParameter;
    entry.rank = kAllRanks;
    entry.step = step;
    entry.name = name;
    auto s = shadow.find(name);
    Judge(assembled.tensor, *expected, s != shadow.end() ? s->second : nullptr, tier, entry);
    report.tensors.push_back(std::move(entry));
  }
}

// The feeds of serial step `step` (1-based) under gradient merge of `stack` executor steps: each
// feed the executor steps (step-1)*stack+1 .. step*stack draw, of `rows` rows each, one after
// another along dim 0 — the rows the k micro-steps of one update read, as one batch.
StatusOr<rt::FeedMap> StackedFeeds(const std::vector<rt::FeedSpec>& specs, uint64_t seed, int step,
                                   int stack, int64_t rows) {
  rt::FeedMap feeds;
  for (const rt::FeedSpec& spec : specs) {
    if (stack == 1) {
      feeds[spec.name] = rt::RandomFeed(spec, seed, step, rows);
      continue;
    }
    std::vector<rt::Tensor> parts;
    std::vector<const rt::Tensor*> views;
    parts.reserve(static_cast<size_t>(stack));
    for (int j = 1; j <= stack; ++j) {
      parts.push_back(rt::RandomFeed(spec, seed, (step - 1) * stack + j, rows));
    }
    for (const rt::Tensor& part : parts) views.push_back(&part);
    StatusOr<rt::Tensor> rows_stacked = ReplicaRows(views);
    if (!rows_stacked.ok()) {
      return Status(rows_stacked.status().code(), Location{}.AtVar(spec.name),
                    rows_stacked.status().message());
    }
    feeds[spec.name] = std::move(rows_stacked).value();
  }
  return feeds;
}

rt::Tensor Widened(const rt::Tensor& t) {
  if (t.dtype() != DType::kFloat32) return t.Clone();
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.data<float>()[i];
  return rt::Tensor::FromVector(v, t.shape());
}

}  // namespace

StatusOr<std::unique_ptr<Float64Shadow>> RunFloat64Shadow(const oldir::Program* startup,
                                                          const oldir::Program& main, int steps,
                                                          uint64_t seed, int64_t rows,
                                                          rt::GemmMode gemm, int stack) {
  rt::ExecutorOptions eo;
  eo.seed = seed;
  eo.gemm = gemm;
  auto shadow = std::make_unique<Float64Shadow>();
  if (startup != nullptr) {
    rt::Scope narrow;
    rt::LegacyExecutor init(*startup, eo);
    IRM_RETURN_IF_ERROR(init.plan_status());
    IRM_RETURN_IF_ERROR(init.Run(narrow, {}).status());
    for (const auto& [name, tensor] : DefinedVars(narrow)) {
      shadow->scope.Set(name, Widened(*tensor));
    }
  }
  oldir::Program wide = main;
  oldir::PromoteToFloat64(wide);
  rt::LegacyExecutor declared(main, eo);  // the float32 declarations the serial run drew by
  IRM_RETURN_IF_ERROR(declared.plan_status());
  rt::LegacyExecutor step(wide, eo);
  IRM_RETURN_IF_ERROR(step.plan_status());
  for (int s = 1; s <= steps; ++s) {
    IRM_ASSIGN_OR_RETURN(rt::FeedMap feeds,
                         StackedFeeds(declared.FeedSpecs(), seed, s, std::max(1, stack), rows));
    for (auto& [name, tensor] : feeds) tensor = Widened(tensor);
    StatusOr<std::vector<rt::Fetch>> fetched = step.Run(shadow->scope, feeds);
    if (!fetched.ok()) {
      return Status(fetched.status()).AddNote(fmt::format("in step {} of the float64 shadow", s));
    }
    shadow->fetches.push_back(std::move(fetched).value());
  }
  return shadow;
}

namespace {

// What one comparison reads: both bundles' runs and the shadow.
struct Runs {
  rt::MultiRankResult distributed;
  rt::MultiRankResult serial;
  std::unique_ptr<Float64Shadow> shadow;
};

struct Setup {
  std::string distributed_dir;
  std::string serial_dir;
  oldir::Bundle distributed;
  int dp_degree = 1;
  int64_t global_rows = 0;  // the serial run's -1 dims: every replica's rows
  // Gradient merge's executor steps per update (1 without it): one serial step reads the rows of
  // that many executor steps, stacked.
  int merge_steps = 1;
  uint64_t seed = 0;
  // The serial rank's programs, for the shadow and the order of the report's vars.
  std::optional<oldir::Program> serial_startup;
  std::optional<oldir::Program> serial_main;
};

StatusOr<rt::MultiRankResult> RunSideOf(const std::string& dir, int steps, uint64_t seed,
                                        int64_t rows, const SerialParityOptions& options,
                                        const std::string& side) {
  rt::MultiRankConfig config;
  config.rank_config.steps = steps;
  config.rank_config.seed = seed;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = rows;
  config.rank_config.options.gemm = options.gemm;
  config.rank_config.options.kernels = options.kernels;
  config.world.timeout = options.timeout;
  config.make_world = options.make_world;
  config.p2p = options.p2p;
  std::mutex progress_mu;
  if (options.progress) {
    config.on_step = [&](int rank, const rt::PlanStepResult& step) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.progress(side, rank, step.step, steps);
    };
  }
  StatusOr<rt::MultiRankResult> ran = rt::RunBundleRanks(dir, config);
  if (!ran.ok()) return Status(ran.status()).AddNote(fmt::format("in the {} run", side));
  return ran;
}

// The serial program under gradient merge: `steps` serial steps, each on the rows of
// `setup.merge_steps` executor steps stacked (StackedFeeds), run by the legacy executor as the
// serial bundle's rank runs it (its startup, then main once per step, the bundle's seed).
StatusOr<rt::MultiRankResult> RunStackedSerial(const Setup& setup, int steps,
                                               const SerialParityOptions& options) {
  rt::ExecutorOptions eo;
  eo.seed = setup.seed;
  eo.gemm = options.gemm;
  eo.kernels = options.kernels;
  rt::RankOutcome outcome;
  outcome.scope = std::make_unique<rt::Scope>();
  if (setup.serial_startup) {
    rt::LegacyExecutor init(*setup.serial_startup, eo);
    IRM_RETURN_IF_ERROR(init.plan_status());
    IRM_RETURN_IF_ERROR(init.Run(*outcome.scope, {}).status());
  }
  rt::LegacyExecutor main(*setup.serial_main, eo);
  IRM_RETURN_IF_ERROR(main.plan_status());
  for (int step = 1; step <= steps; ++step) {
    IRM_ASSIGN_OR_RETURN(rt::FeedMap feeds, StackedFeeds(main.FeedSpecs(), setup.seed, step,
                                                         setup.merge_steps, setup.global_rows));
    StatusOr<std::vector<rt::Fetch>> fetched = main.Run(*outcome.scope, feeds);
    if (!fetched.ok()) {
      return Status(fetched.status()).AddNote(fmt::format("in step {} of the serial run", step));
    }
    rt::PlanStepResult result;
    result.step = step;
    result.merged = *fetched;
    result.micro_batches.push_back(std::move(fetched).value());
    if (options.progress) options.progress("serial", 0, step, steps);
    outcome.steps.push_back(std::move(result));
  }
  rt::MultiRankResult run;
  run.ranks.push_back(std::move(outcome));
  return run;
}

// `steps` serial steps: merge_steps times as many executor steps of the distributed bundle.
StatusOr<Runs> RunAll(const Setup& setup, int steps, const SerialParityOptions& options) {
  Runs runs;
  IRM_ASSIGN_OR_RETURN(runs.distributed,
                       RunSideOf(setup.distributed_dir, steps * setup.merge_steps, setup.seed,
                                 options.batch_size, options, "distributed"));
  const int64_t global_rows = setup.global_rows;
  if (setup.merge_steps > 1) {
    IRM_ASSIGN_OR_RETURN(runs.serial, RunStackedSerial(setup, steps, options));
  } else {
    IRM_ASSIGN_OR_RETURN(runs.serial, RunSideOf(setup.serial_dir, steps, setup.seed, global_rows,
                                                options, "serial"));
  }
  if (options.tier == Tier::kNoiseFloor) {
    IRM_ASSIGN_OR_RETURN(runs.shadow,
                         RunFloat64Shadow(setup.serial_startup ? &*setup.serial_startup : nullptr,
                                          *setup.serial_main, steps, setup.seed, global_rows,
                                          options.gemm, setup.merge_steps));
  }
  return runs;
}

Status Compare(const Setup& setup, const Runs& runs, Tier tier, ParityReport& report) {
  if (runs.serial.ranks.empty()) {
    return Status(StatusCode::kInternal, Location::File(setup.serial_dir),
                  "the serial run has no rank");
  }
  SerialOutcome serial;
  serial.run = &runs.serial.ranks.front();
  if (runs.shadow) {
    serial.shadow = &runs.shadow->scope;
    serial.shadow_fetches = &runs.shadow->fetches;
  }
  return CompareWithSerial({&setup.distributed, &runs.distributed.ranks}, serial, tier, report);
}

// The vars of the report's failing parameter entries, in the order the serial main program
// first writes them (the rest after, by name).
std::vector<std::string> DifferingVars(const ParityReport& report,
                                       const std::optional<oldir::Program>& main) {
  std::vector<std::string> names;
  for (const ComparedTensor& t : report.tensors) {
    if (t.group != TensorGroup::kParameter || !t.compared || t.comparison.pass) continue;
    if (std::find(names.begin(), names.end(), t.name) == names.end()) names.push_back(t.name);
  }
  std::map<std::string, int> order;
  if (main) {
    int position = 0;
    for (const oldir::proto::BlockDesc& block : main->desc().blocks()) {
      for (const oldir::proto::OpDesc& op : block.ops()) {
        for (const oldir::proto::OpDesc::Var& slot : op.outputs()) {
          for (const std::string& argument : slot.arguments())
            order.try_emplace(argument, position++);
        }
      }
    }
  }
  auto key = [&](const std::string& name) {
    auto it = order.find(name);
    return std::make_pair(it != order.end() ? it->second : static_cast<int>(order.size()), name);
  };
  std::sort(names.begin(), names.end(),
            [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
  return names;
}

StatusOr<oldir::Bundle> ReadLegacyBundle(const std::string& dir, const char* role) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  if (bundle.ir != oldir::BundleIr::kLegacy) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  fmt::format("the {} bundle is a pir bundle; the serial program is the legacy "
                              "one (ir-migrate build)",
                              role));
  }
  return bundle;
}

// Gradient merge's k executor steps per update (bundle.json's strategy, as `build --strategy`
// writes it); 1 without it.
int GradientMergeSteps(const oldir::Bundle& bundle) {
  const nlohmann::json& s = bundle.strategy;
  if (!s.is_object() || !s.contains("gradient_merge") || !s["gradient_merge"].is_object()) return 1;
  const nlohmann::json& gm = s["gradient_merge"];
  const bool enabled =
      gm.contains("enable") && gm["enable"].is_boolean() && gm["enable"].get<bool>();
  if (!enabled || !gm.contains("k_steps") || !gm["k_steps"].is_number_integer()) return 1;
  return std::max(1, gm["k_steps"].get<int>());
}

// The rows of a step's global batch: each replica's rows (a feed's fixed dim 0 — a pipeline's
// bundle fixes it —, or the batch size) times the replicas. The serial bundle must draw as many: a
// fixed dim 0 of its own must be that.
StatusOr<int64_t> GlobalRows(const oldir::Bundle& distributed, const oldir::Bundle& serial,
                             int dp_degree, int64_t batch_size, const std::string& serial_dir) {
  std::optional<int64_t> replica_rows;
  for (const oldir::FeedSpec& feed : distributed.feeds) {
    if (feed.split != oldir::FeedSplit::kBatch || feed.shape.empty() || feed.shape[0] < 0) continue;
    if (replica_rows && *replica_rows != feed.shape[0]) {
      return Status(StatusCode::kInvalidArgument, Location{}.AtVar(feed.name),
                    fmt::format("feed '{}' has {} rows per replica, another feed {}", feed.name,
                                feed.shape[0], *replica_rows));
    }
    replica_rows = feed.shape[0];
  }
  const int64_t global = replica_rows.value_or(batch_size) * dp_degree;
  for (const oldir::FeedSpec& feed : serial.feeds) {
    if (feed.shape.empty() || feed.shape[0] < 0 || feed.shape[0] == global) continue;
    return Status(StatusCode::kInvalidArgument, Location::File(serial_dir + "/bundle.json"),
                  fmt::format("the serial bundle's feed '{}' has {} rows, and the global batch of "
                              "{} replicas has {}: build the serial bundle with --batch-size {}",
                              feed.name, feed.shape[0], dp_degree, global, global));
  }
  return global;
}

}  // namespace

Status CompareWithSerial(const DistributedOutcome& distributed, const SerialOutcome& serial,
                         Tier tier, ParityReport& report) {
  IRM_ASSIGN_OR_RETURN(const int dp_degree, rt::DataParallelDegree(*distributed.bundle));
  CompareFetchesWithSerial(*distributed.bundle, dp_degree, GradientMergeSteps(*distributed.bundle),
                           *distributed.ranks, serial, tier, report);
  CompareVarsWithSerial(*distributed.bundle, *distributed.ranks, serial, tier, report);
  return Status::Ok();
}

StatusOr<ParityResult> RunSerialParity(const std::string& distributed_dir,
                                       const std::string& serial_dir,
                                       const SerialParityOptions& options) {
  Setup setup;
  setup.distributed_dir = distributed_dir;
  setup.serial_dir = serial_dir;
  // The distributed bundle is either IR's: the legacy passes' or `parallelize`'s pir bundle.
  IRM_ASSIGN_OR_RETURN(setup.distributed, oldir::ReadBundle(distributed_dir));
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle serial, ReadLegacyBundle(serial_dir, "serial"));
  StatusOr<int> dp_degree = rt::DataParallelDegree(setup.distributed);
  if (!dp_degree.ok()) return Status(dp_degree.status()).InFile(distributed_dir + "/bundle.json");
  setup.dp_degree = *dp_degree;
  if (serial.world_size != 1 || serial.ranks.size() != 1) {
    return Status(StatusCode::kInvalidArgument, Location::File(serial_dir),
                  fmt::format("the serial bundle has {} ranks; it must be the one-rank bundle of "
                              "the serial program",
                              serial.world_size));
  }
  if (options.batch_size < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("the batch size must be at least 1, got {}", options.batch_size));
  }
  IRM_ASSIGN_OR_RETURN(setup.global_rows, GlobalRows(setup.distributed, serial, setup.dp_degree,
                                                     options.batch_size, serial_dir));
  setup.merge_steps = GradientMergeSteps(setup.distributed);
  const oldir::BundleRank& serial_rank = serial.ranks.front();
  auto main_file = serial_rank.programs.find("main");
  if (main_file != serial_rank.programs.end()) {
    IRM_ASSIGN_OR_RETURN(setup.serial_main, oldir::LoadProgram(oldir::RankFile(
                                                serial_dir, serial_rank.rank, main_file->second)));
  }
  if (options.tier == Tier::kNoiseFloor || setup.merge_steps > 1) {
    if (serial_rank.plan.has_value() || !setup.serial_main) {
      if (setup.merge_steps > 1) {
        return Status(StatusCode::kUnimplemented,
                      Location::File(oldir::RankDir(serial_dir, serial_rank.rank)),
                      "gradient merge is compared with the serial main program run once per "
                      "update on the stacked rows; a serial rank with a plan is not supported");
      }
      return Status(StatusCode::kUnimplemented,
                    Location::File(oldir::RankDir(serial_dir, serial_rank.rank)),
                    "the noise-floor tier runs a float64 shadow of the serial rank's main "
                    "program once per step; a serial rank with a plan is not supported");
    }
    if (!serial_rank.startup.empty()) {
      IRM_ASSIGN_OR_RETURN(
          setup.serial_startup,
          oldir::LoadProgram(oldir::RankFile(serial_dir, serial_rank.rank, serial_rank.startup)));
    }
  }
  setup.seed = options.seed.value_or(static_cast<uint64_t>(setup.distributed.seed));
  const int steps = options.steps > 0 ? options.steps : setup.distributed.steps;
  if (steps % setup.merge_steps != 0) {
    return Status(StatusCode::kInvalidArgument, Location::File(distributed_dir + "/bundle.json"),
                  fmt::format("{} executor steps are not whole updates of gradient merge's {} "
                              "steps: the serial run compares updates",
                              steps, setup.merge_steps));
  }
  const int serial_steps = steps / setup.merge_steps;

  IRM_ASSIGN_OR_RETURN(const Runs runs, RunAll(setup, serial_steps, options));
  ParityResult result;
  ParityReport& report = result.report;
  report.against_serial = true;
  report.legacy_program = distributed_dir;
  report.new_program = serial_dir;
  report.tier = options.tier;
  report.steps = steps;
  report.seed = setup.seed;
  report.gemm = rt::GemmModeName(options.gemm);
  IRM_RETURN_IF_ERROR(Compare(setup, runs, options.tier, report));

  std::vector<std::string> differing = DifferingVars(report, setup.serial_main);
  if (!differing.empty()) {
    DifferingState state{steps, differing};
    // A difference in the state persists: the earliest step after which it shows is the first
    // shorter run that has one (whole updates under gradient merge).
    for (int k = 1; options.localize && k < serial_steps; ++k) {
      IRM_ASSIGN_OR_RETURN(const Runs shorter, RunAll(setup, k, options));
      ParityReport probe;
      IRM_RETURN_IF_ERROR(Compare(setup, shorter, options.tier, probe));
      std::vector<std::string> names = DifferingVars(probe, setup.serial_main);
      if (!names.empty()) {
        state = {k * setup.merge_steps, std::move(names)};
        break;
      }
    }
    report.first_differing_state = std::move(state);
  }
  return result;
}

}  // namespace irm::diff
