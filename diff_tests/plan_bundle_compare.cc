// Two pir bundles of pipeline stages compared rank by rank (plan_bundle_compare.h).
#include "diff_tests/plan_bundle_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "diff_tests/parity_compare.h"
#include "newir/program_io.h"
#include "oldir/bundle.h"
#include "reference_runtime/dtype_visit.h"
#include "reference_runtime/executor.h"
#include "reference_runtime/multi_rank_run.h"

namespace irm::diff {
namespace {

StatusOr<oldir::Bundle> ReadPir(const std::string& dir) {
  IRM_ASSIGN_OR_RETURN(oldir::Bundle bundle, oldir::ReadBundle(dir));
  if (bundle.ir != oldir::BundleIr::kPir) {
    return Status(StatusCode::kInvalidArgument, Location::File(dir),
                  "expected a pir bundle (ir-migrate translate or engine --ir pir writes one)");
  }
  return bundle;
}

StatusOr<std::vector<std::string>> OpNamesOf(const std::string& dir, int rank,
                                             const std::string& file) {
  IRM_ASSIGN_OR_RETURN(newir::Program program,
                       newir::LoadProgramFile(oldir::RankFile(dir, rank, file)));
  std::vector<std::string> names;
  for (newir::Operation* op : program.block().ops()) names.emplace_back(op->name());
  return names;
}

// Each program of a rank by name ("startup", then the job types): its op names.
StatusOr<std::map<std::string, std::vector<std::string>>> RankOpNames(
    const std::string& dir, const oldir::BundleRank& rank) {
  std::map<std::string, std::vector<std::string>> out;
  if (!rank.startup.empty()) {
    IRM_ASSIGN_OR_RETURN(out["startup"], OpNamesOf(dir, rank.rank, rank.startup));
  }
  for (const auto& [type, file] : rank.programs) {
    IRM_ASSIGN_OR_RETURN(out[type], OpNamesOf(dir, rank.rank, file));
  }
  return out;
}

bool AllZero(const rt::Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (rt::ElementAsDouble(t, i) != 0.0) return false;
  }
  return true;
}

// The micro-batch accumulation buffers (`<param>@GRAD@MERGE`) take the gradient as each road
// makes it: the legacy passes' vocab-parallel c_embedding_grad gives the table's rows of the rank,
// the new IR's embedding_grad (Paddle's rule keeps the vocab dim whole, spmd_rules/embedding.cc)
// the whole table's, resharded at the optimizer. Buffers of two shapes cannot be compared
// element by element; after a step the optimizer job has zeroed both, and that is checked.
void AcceptZeroedMergeBuffers(const VarView& a, const VarView& b, size_t first,
                              ParityReport& report) {
  for (size_t i = first; i < report.tensors.size(); ++i) {
    ComparedTensor& t = report.tensors[i];
    if (t.comparison.pass || !t.name.ends_with("@GRAD@MERGE")) continue;
    auto ia = a.find(t.name);
    auto ib = b.find(t.name);
    if (ia == a.end() || ib == b.end() || ia->second->shape() == ib->second->shape()) continue;
    if (!AllZero(*ia->second) || !AllZero(*ib->second)) continue;
    t.comparison.pass = true;
    t.comparison.reason += ": accumulation buffers of two layouts, both zeroed by the optimizer";
  }
}

}  // namespace

StatusOr<PirBundleComparison> ComparePlanBundles(const std::string& a_dir, const std::string& b_dir,
                                                 const PirBundleCompareOptions& options) {
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle a, ReadPir(a_dir));
  IRM_ASSIGN_OR_RETURN(const oldir::Bundle b, ReadPir(b_dir));
  if (a.world_size != b.world_size || a.ranks.size() != b.ranks.size()) {
    return Status(StatusCode::kInvalidArgument, Location::File(b_dir),
                  fmt::format("bundle A has {} ranks, bundle B {}", a.world_size, b.world_size));
  }
  IRM_ASSIGN_OR_RETURN(const int dp_a, rt::DataParallelDegree(a));
  IRM_ASSIGN_OR_RETURN(const int dp_b, rt::DataParallelDegree(b));
  if (dp_a != dp_b) {
    return Status(StatusCode::kInvalidArgument, Location::File(b_dir),
                  fmt::format("bundle A has {} data-parallel replicas, bundle B {}", dp_a, dp_b));
  }
  PirBundleComparison out;
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    IRM_ASSIGN_OR_RETURN(const auto names_a, RankOpNames(a_dir, a.ranks[r]));
    IRM_ASSIGN_OR_RETURN(const auto names_b, RankOpNames(b_dir, b.ranks[r]));
    std::set<std::string> programs;
    for (const auto& entry : names_a) programs.insert(entry.first);
    for (const auto& entry : names_b) programs.insert(entry.first);
    static const std::vector<std::string> kNone;
    // The startup first, as ComparePirBundles lists it, then the job types by name.
    std::vector<std::string> order = {"startup"};
    for (const std::string& p : programs) {
      if (p != "startup") order.push_back(p);
    }
    for (const std::string& p : order) {
      auto ia = names_a.find(p);
      auto ib = names_b.find(p);
      if (ia == names_a.end() && ib == names_b.end()) continue;
      out.programs.push_back(AlignProgram(static_cast<int>(r), p,
                                          ia != names_a.end() ? ia->second : kNone,
                                          ib != names_b.end() ? ib->second : kNone));
    }
    // The plans are part of the order: the same jobs in the same order on both sides.
    std::vector<std::string> plan_a, plan_b;
    for (const oldir::PlanJob& job : a.ranks[r].plan.value_or(std::vector<oldir::PlanJob>{})) {
      plan_a.push_back(fmt::format("{}#{}", job.type, job.micro_batch));
    }
    for (const oldir::PlanJob& job : b.ranks[r].plan.value_or(std::vector<oldir::PlanJob>{})) {
      plan_b.push_back(fmt::format("{}#{}", job.type, job.micro_batch));
    }
    out.programs.push_back(AlignProgram(static_cast<int>(r), "plan", plan_a, plan_b));
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
  CompareFetchesOverReplicas(run_a.ranks, run_b.ranks, dp_a, std::max<int64_t>(1, a.micro_batches),
                             report);
  for (size_t r = 0; r < run_a.ranks.size() && r < run_b.ranks.size(); ++r) {
    const rt::RankOutcome& ra = run_a.ranks[r];
    const rt::RankOutcome& rb = run_b.ranks[r];
    const int rank = static_cast<int>(r);
    if (ra.scope && rb.scope) {
      const VarView vars_a = DefinedVars(*ra.scope);
      const VarView vars_b = DefinedVars(*rb.scope);
      const size_t first = report.tensors.size();
      CompareVars(rank, steps, vars_a, vars_b, report);
      AcceptZeroedMergeBuffers(vars_a, vars_b, first, report);
      if (options.shadow != nullptr && report.tier == Tier::kReordered) {
        ArbitrateByShadow(b.ranks[r], vars_a, vars_b, *options.shadow, first, report);
      }
    }
  }
  return out;
}

}  // namespace irm::diff
