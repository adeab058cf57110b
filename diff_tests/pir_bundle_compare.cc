// Two pir bundles compared rank by rank (pir_bundle_compare.h).
#include "diff_tests/pir_bundle_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "diff_tests/parity_compare.h"
#include "diff_tests/serial_arbitration.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::diff {
namespace {

// Above this many cells the middle of two sequences is not searched for a common subsequence:
// its ops are all reported unpaired (then paired by name as moved). 16M cells: 64 MB.
constexpr size_t kMaxTableCells = size_t{16} << 20;

// Pairs each kOnlyA entry with the first unpaired kOnlyB entry of the same name: a moved op.
std::vector<AlignedOp> PairMoved(std::vector<AlignedOp> aligned) {
  std::vector<bool> dropped(aligned.size(), false);
  for (size_t i = 0; i < aligned.size(); ++i) {
    if (aligned[i].kind != AlignedOp::Kind::kOnlyA) continue;
    for (size_t j = 0; j < aligned.size(); ++j) {
      if (dropped[j] || aligned[j].kind != AlignedOp::Kind::kOnlyB ||
          aligned[j].name != aligned[i].name) {
        continue;
      }
      aligned[i].kind = AlignedOp::Kind::kMoved;
      aligned[i].index_b = aligned[j].index_b;
      dropped[j] = true;
      break;
    }
  }
  std::vector<AlignedOp> out;
  for (size_t i = 0; i < aligned.size(); ++i) {
    if (!dropped[i]) out.push_back(std::move(aligned[i]));
  }
  return out;
}

struct RankPrograms {
  std::vector<std::string> startup;
  std::vector<std::string> main;
};

std::vector<std::string> OpNames(const newir::Program& program) {
  std::vector<std::string> names;
  for (newir::Operation* op : program.block().ops()) names.emplace_back(op->name());
  return names;
}

StatusOr<std::vector<RankPrograms>> LoadOpNames(const std::string& dir,
                                                const oldir::Bundle& bundle) {
  std::vector<RankPrograms> out;
  for (const oldir::BundleRank& rank : bundle.ranks) {
    if (rank.plan || rank.programs.size() != 1 || !rank.programs.contains("main")) {
      return Status(StatusCode::kInvalidArgument, Location::File(oldir::RankDir(dir, rank.rank)),
                    "the rank runs a plan of jobs; only bundles whose ranks run one main program "
                    "are compared op by op");
    }
    RankPrograms names;
    if (!rank.startup.empty()) {
      IRM_ASSIGN_OR_RETURN(newir::Program startup,
                           newir::LoadProgramFile(oldir::RankFile(dir, rank.rank, rank.startup)));
      names.startup = OpNames(startup);
    }
    IRM_ASSIGN_OR_RETURN(newir::Program main, newir::LoadProgramFile(oldir::RankFile(
                                                  dir, rank.rank, rank.programs.at("main"))));
    names.main = OpNames(main);
    out.push_back(std::move(names));
  }
  return out;
}

StatusOr<oldir::Bundle> ReadPirBundle(const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  if (bundle.ir != oldir::BundleIr::kPir) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "expected a pir bundle (ir-migrate translate or parallelize writes one)");
  }
  return bundle;
}

// A scalar fetch of a data-parallel run as one logical value: the mean over the replicas of each
// replica's value, in double, in the fetch's dtype — as the serial check takes it
// (serial_parity.h). One side may fetch each replica's own loss (the legacy passes) and the
// other the loss already averaged over the replicas (Partial(avg) all-reduced in the new IR);
// both mean the same global loss. The replicas of `rank` are the ranks at its place in the other
// replicas (rank + k * world / dp: Paddle's hybrid topology, dp outermost). A plan's fetch holds
// one value per micro-batch (plan_executor.h: a 0-D loss merged to [m]), averaged elementwise.
// Null for a fetch that is not m float scalars on every replica.
std::optional<rt::Tensor> MeanOverReplicas(const std::vector<rt::RankOutcome>& ranks, size_t rank,
                                           size_t step, size_t fetch, int dp,
                                           int64_t micro_batches) {
  const size_t per_replica = ranks.size() / static_cast<size_t>(dp);
  std::vector<double> sum(static_cast<size_t>(micro_batches), 0.0);
  const rt::Tensor* like = nullptr;
  for (int k = 0; k < dp; ++k) {
    const rt::RankOutcome& replica =
        ranks[rank % per_replica + static_cast<size_t>(k) * per_replica];
    if (step >= replica.steps.size() || fetch >= replica.steps[step].merged.size()) {
      return std::nullopt;
    }
    const rt::Tensor& t = replica.steps[step].merged[fetch].tensor;
    if (t.numel() != micro_batches || t.shape().size() > 1 ||
        (t.dtype() != DType::kFloat32 && t.dtype() != DType::kFloat64)) {
      return std::nullopt;
    }
    like = &t;
    for (int64_t i = 0; i < micro_batches; ++i)
      sum[static_cast<size_t>(i)] += rt::ElementAsDouble(t, i);
  }
  if (like->dtype() == DType::kFloat32) {
    std::vector<float> mean;
    for (double v : sum) mean.push_back(static_cast<float>(v / dp));
    return rt::Tensor::FromVector(std::move(mean), like->shape());
  }
  std::vector<double> mean;
  for (double v : sum) mean.push_back(v / dp);
  return rt::Tensor::FromVector(std::move(mean), like->shape());
}

}  // namespace

void CompareFetchesOverReplicas(const std::vector<rt::RankOutcome>& a,
                                const std::vector<rt::RankOutcome>& b, int dp,
                                int64_t micro_batches, ParityReport& report) {
  const size_t per_replica = dp > 1 ? a.size() / static_cast<size_t>(dp) : a.size();
  for (size_t r = 0; r < a.size() && r < b.size(); ++r) {
    const int rank = static_cast<int>(r);
    for (size_t s = 0; s < a[r].steps.size() && s < b[r].steps.size(); ++s) {
      std::vector<rt::Fetch> fa = a[r].steps[s].merged;
      std::vector<rt::Fetch> fb = b[r].steps[s].merged;
      if (dp > 1) {
        // A scalar is compared once per place in a replica, at the first replica's rank (all ranks
        // where a replica is one rank).
        std::vector<rt::Fetch> keep_a;
        std::vector<rt::Fetch> keep_b;
        for (size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
          std::optional<rt::Tensor> ma = MeanOverReplicas(a, r, s, i, dp, micro_batches);
          std::optional<rt::Tensor> mb = MeanOverReplicas(b, r, s, i, dp, micro_batches);
          if (!ma || !mb) {
            keep_a.push_back(fa[i]);
            keep_b.push_back(fb[i]);
            continue;
          }
          if (r >= per_replica) continue;
          ComparedTensor t;
          t.group = TensorGroup::kFetch;
          t.rank = per_replica == 1 ? kAllRanks : rank;
          t.step = a[r].steps[s].step;
          t.name = fa[i].name;
          if (fa[i].name != fb[i].name) {
            t.comparison.reason =
                fmt::format("fetch {} is '{}' vs '{}'", i, fb[i].name, fa[i].name);
          } else {
            t.comparison = CompareTensors(*mb, *ma, report.tier);
          }
          report.tensors.push_back(std::move(t));
        }
        for (size_t i = std::min(fa.size(), fb.size()); i < fa.size(); ++i) keep_a.push_back(fa[i]);
        for (size_t i = std::min(fa.size(), fb.size()); i < fb.size(); ++i) keep_b.push_back(fb[i]);
        fa = std::move(keep_a);
        fb = std::move(keep_b);
      }
      CompareFetches(rank, a[r].steps[s].step, fa, fb, "bundle", report);
    }
  }
}

namespace {

// The block of the float64 `whole` that a shard of `local` dims at `offsets` holds; null when the
// shapes do not fit.
std::optional<rt::Tensor> SliceOf(const rt::Tensor& whole, const std::vector<int64_t>& local,
                                  const std::vector<int64_t>& offsets) {
  if (whole.dtype() != DType::kFloat64 || whole.shape().size() != local.size() ||
      offsets.size() != local.size()) {
    return std::nullopt;
  }
  const std::vector<int64_t>& global = whole.shape();
  int64_t count = 1;
  for (size_t d = 0; d < local.size(); ++d) {
    if (offsets[d] < 0 || offsets[d] + local[d] > global[d]) return std::nullopt;
    count *= local[d];
  }
  std::vector<double> values;
  values.reserve(static_cast<size_t>(count));
  std::vector<int64_t> at(local.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t flat = 0;
    for (size_t d = 0; d < local.size(); ++d) flat = flat * global[d] + offsets[d] + at[d];
    values.push_back(whole.data<double>()[flat]);
    for (size_t d = local.size(); d-- > 0;) {
      if (++at[d] < local[d]) break;
      at[d] = 0;
    }
  }
  return rt::Tensor::FromVector(values, local);
}

}  // namespace

void ArbitrateByShadow(const oldir::BundleRank& rank_b, const VarView& a, const VarView& b,
                       const rt::Scope& shadow, size_t first, ParityReport& report) {
  for (size_t i = first; i < report.tensors.size(); ++i) {
    ComparedTensor& t = report.tensors[i];
    if (t.comparison.pass) continue;
    auto ia = a.find(t.name);
    auto ib = b.find(t.name);
    const rt::Tensor* whole = shadow.Find(t.name);
    if (ia == a.end() || ib == b.end() || whole == nullptr) continue;
    std::vector<int64_t> offsets(ib->second->shape().size(), 0);
    auto shard = rank_b.shards.find(t.name);
    if (shard != rank_b.shards.end()) offsets = shard->second.offsets;
    const std::optional<rt::Tensor> slice = SliceOf(*whole, ib->second->shape(), offsets);
    if (!slice) continue;
    // Neither road is the reference: each is judged against the other, and it suffices that one
    // finds the other within its noise (a shard of two elements of pure rounding noise may land
    // near the shadow on one road by chance).
    Arbitration arbitration = AgainstSerial(*ib->second, *ia->second, &*slice);
    if (arbitration.agreement == Agreement::kMismatch) {
      arbitration = AgainstSerial(*ia->second, *ib->second, &*slice);
    }
    if (arbitration.agreement == Agreement::kMismatch) continue;
    t.comparison.pass = true;
    t.arbitration = std::move(arbitration);
  }
}

std::vector<AlignedOp> AlignOpSequences(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
  using Kind = AlignedOp::Kind;
  std::vector<AlignedOp> aligned;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  for (size_t i = 0; i < prefix; ++i) {
    aligned.push_back({Kind::kSame, a[i], static_cast<int>(i), static_cast<int>(i)});
  }
  const size_t n = a.size() - prefix - suffix;
  const size_t m = b.size() - prefix - suffix;
  const auto at_a = [&](size_t i) { return static_cast<int>(prefix + i); };
  const auto at_b = [&](size_t j) { return static_cast<int>(prefix + j); };
  if ((n + 1) * (m + 1) <= kMaxTableCells) {
    // lcs[i][j]: the longest common subsequence of a's middle from i and b's middle from j.
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    const auto cell = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        cell(i, j) = a[prefix + i] == b[prefix + j] ? cell(i + 1, j + 1) + 1
                                                    : std::max(cell(i + 1, j), cell(i, j + 1));
      }
    }
    size_t i = 0;
    size_t j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        aligned.push_back({Kind::kSame, a[prefix + i], at_a(i), at_b(j)});
        ++i;
        ++j;
      } else if (i < n && (j == m || cell(i + 1, j) >= cell(i, j + 1))) {
        aligned.push_back({Kind::kOnlyA, a[prefix + i], at_a(i), -1});
        ++i;
      } else {
        aligned.push_back({Kind::kOnlyB, b[prefix + j], -1, at_b(j)});
        ++j;
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) aligned.push_back({Kind::kOnlyA, a[prefix + i], at_a(i), -1});
    for (size_t j = 0; j < m; ++j) aligned.push_back({Kind::kOnlyB, b[prefix + j], -1, at_b(j)});
  }
  for (size_t k = 0; k < suffix; ++k) {
    const size_t ia = a.size() - suffix + k;
    const size_t ib = b.size() - suffix + k;
    aligned.push_back({Kind::kSame, a[ia], static_cast<int>(ia), static_cast<int>(ib)});
  }
  return PairMoved(std::move(aligned));
}

ProgramAlignment AlignProgram(int rank, std::string program, const std::vector<std::string>& a,
                              const std::vector<std::string>& b) {
  ProgramAlignment out;
  out.rank = rank;
  out.program = std::move(program);
  out.ops_a = static_cast<int>(a.size());
  out.ops_b = static_cast<int>(b.size());
  out.same_order = a == b;
  if (out.same_order) return out;
  for (AlignedOp& op : AlignOpSequences(a, b)) {
    if (op.kind != AlignedOp::Kind::kSame) out.differences.push_back(std::move(op));
  }
  return out;
}

StatusOr<rt::MultiRankResult> RunBundleForComparison(const std::string& dir, int steps,
                                                     uint64_t seed,
                                                     const PirBundleCompareOptions& options,
                                                     const char* side) {
  rt::MultiRankConfig config;
  config.rank_config.steps = steps;
  config.rank_config.seed = seed;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = options.batch_size;
  config.rank_config.options.kernels = options.kernels;
  config.world.timeout = options.timeout;
  config.make_world = options.make_world;
  StatusOr<rt::MultiRankResult> ran = rt::RunBundleRanks(dir, config);
  if (!ran.ok()) return Status(ran.status()).AddNote(fmt::format("in the run of bundle {}", side));
  return ran;
}

StatusOr<PirBundleComparison> ComparePirBundles(const std::string& a_dir, const std::string& b_dir,
                                                const PirBundleCompareOptions& options) {
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle a, ReadPirBundle(a_dir));
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle b, ReadPirBundle(b_dir));
  if (a.world_size != b.world_size || a.ranks.size() != b.ranks.size()) {
    return Status(StatusCode::kInvalidArgument, Location::File(b_dir),
                  fmt::format("bundle A has {} ranks, bundle B {}", a.world_size, b.world_size));
  }
  IRM_ASSIGN_OR_RETURN(const int dp_a, rt::DataParallelDegree(a));
  IRM_ASSIGN_OR_RETURN(const int dp_b, rt::DataParallelDegree(b));
  if (dp_a != dp_b) {
    return Status(StatusCode::kInvalidArgument, Location::File(b_dir),
                  fmt::format("bundle A has {} data-parallel replicas, bundle B {}: they would "
                              "read different rows",
                              dp_a, dp_b));
  }
  IRM_ASSIGN_OR_RETURN(const std::vector<RankPrograms> names_a, LoadOpNames(a_dir, a));
  IRM_ASSIGN_OR_RETURN(const std::vector<RankPrograms> names_b, LoadOpNames(b_dir, b));
  PirBundleComparison out;
  for (size_t r = 0; r < names_a.size(); ++r) {
    const int rank = static_cast<int>(r);
    out.programs.push_back(AlignProgram(rank, "startup", names_a[r].startup, names_b[r].startup));
    out.programs.push_back(AlignProgram(rank, "main", names_a[r].main, names_b[r].main));
  }
  for (const ProgramAlignment& p : out.programs) out.same_op_order &= p.same_order;

  const int steps = options.steps > 0 ? options.steps : a.steps;
  const uint64_t seed = options.seed.value_or(static_cast<uint64_t>(a.seed));
  IRM_ASSIGN_OR_RETURN(const rt::MultiRankResult run_a,
                       RunBundleForComparison(a_dir, steps, seed, options, "A"));
  IRM_ASSIGN_OR_RETURN(const rt::MultiRankResult run_b,
                       RunBundleForComparison(b_dir, steps, seed, options, "B"));
  ParityReport& report = out.report;
  report.legacy_program = a_dir;
  report.new_program = b_dir;
  report.tier = out.same_op_order ? Tier::kExact : Tier::kReordered;
  report.steps = steps;
  report.seed = seed;
  report.gemm = rt::GemmModeName(rt::ExecutorOptions{}.gemm);  // the runs' default
  CompareFetchesOverReplicas(run_a.ranks, run_b.ranks, dp_a, /*micro_batches=*/1, report);
  for (size_t r = 0; r < run_a.ranks.size() && r < run_b.ranks.size(); ++r) {
    const rt::RankOutcome& ra = run_a.ranks[r];
    const rt::RankOutcome& rb = run_b.ranks[r];
    const int rank = static_cast<int>(r);
    if (ra.scope && rb.scope) {
      const VarView vars_a = DefinedVars(*ra.scope);
      const VarView vars_b = DefinedVars(*rb.scope);
      const size_t first = report.tensors.size();
      CompareVars(rank, steps, vars_a, vars_b, report);
      if (options.shadow != nullptr && report.tier == Tier::kReordered) {
        ArbitrateByShadow(b.ranks[r], vars_a, vars_b, *options.shadow, first, report);
      }
    }
  }
  return out;
}

std::string DescribeOpDifferences(const PirBundleComparison& comparison) {
  if (comparison.same_op_order) {
    return "every rank's programs have the same ops in the same order\n";
  }
  std::string out;
  for (const ProgramAlignment& p : comparison.programs) {
    if (p.same_order) continue;
    out += fmt::format("rank {} {}: {} ops in A, {} in B\n", p.rank, p.program, p.ops_a, p.ops_b);
    for (const AlignedOp& op : p.differences) {
      switch (op.kind) {
        case AlignedOp::Kind::kOnlyA:
          out += fmt::format("  only in A: #{} {}\n", op.index_a, op.name);
          break;
        case AlignedOp::Kind::kOnlyB:
          out += fmt::format("  only in B: #{} {}\n", op.index_b, op.name);
          break;
        case AlignedOp::Kind::kMoved:
          out += fmt::format("  moved: {} A#{} B#{}\n", op.name, op.index_a, op.index_b);
          break;
        case AlignedOp::Kind::kSame:
          break;
      }
    }
  }
  return out;
}

}  // namespace irm::diff
