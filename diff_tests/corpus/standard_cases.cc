// The corpus's cases (corpus.h): one recipe per case — the zoo model, optimizer, strategy JSON
// (the text `build --strategy` reads), steps and batch size — made by MakeModelBundle.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "diff_tests/corpus/corpus.h"
#include "oldir/passes/strategy.h"

namespace irm::corpus {
namespace {

constexpr int32_t kSeed = 2024;
constexpr int kSteps = 3;

// The MLP of every mlp case: 3 linears 4 -> 8 -> 8 -> 3, SGD.
ModelRecipe CorpusMlp() {
  ModelRecipe recipe;
  recipe.model = ZooModel::kMlp;
  recipe.mlp.depth = 3;
  recipe.mlp.in_features = 4;
  recipe.mlp.width = 8;
  recipe.mlp.classes = 3;
  recipe.mlp.seed = kSeed;
  recipe.steps = kSteps;
  recipe.batch_size = 4;
  return recipe;
}

// A GPT small enough for 8 ranks in a test (2 blocks, hidden 8, 4 heads, vocabulary 12, 4
// positions; no dropout), AdamW.
ModelRecipe CorpusGpt() {
  ModelRecipe recipe;
  recipe.model = ZooModel::kGpt;
  recipe.gpt.layers = 2;
  recipe.gpt.hidden = 8;
  recipe.gpt.heads = 4;
  recipe.gpt.vocab = 12;
  recipe.gpt.seq = 4;
  recipe.gpt.dropout = 0.0f;
  recipe.gpt.seed = kSeed;
  recipe.optimizer.kind = oldir::OptimizerKind::kAdamW;
  recipe.steps = kSteps;
  recipe.batch_size = 4;
  return recipe;
}

// A pipeline's strategy JSON: `pp` stages under `mode` over `micro_batches`.
std::string PipelineJson(const std::string& mode, int micro_batches, const std::string& more = "") {
  return fmt::format(R"("pp_degree": 2, "pipeline": {{"enable": true, "schedule_mode": "{}", )"
                     R"("accumulate_steps": {}{}}})",
                     mode, micro_batches, more);
}

struct CaseSpec {
  std::string name;
  std::string description;
  ModelRecipe recipe;
  std::string strategy;  // JSON; empty: the serial bundle
};

StatusOr<BundleCase> Make(CaseSpec spec) {
  if (!spec.strategy.empty()) {
    IRM_ASSIGN_OR_RETURN(spec.recipe.strategy,
                         oldir::passes::ParseStrategyJson(spec.strategy, spec.name));
  }
  StatusOr<ModelBundle> made = MakeModelBundle(spec.recipe);
  if (!made.ok()) {
    Status status = made.status();
    status.AddNote(fmt::format("in the corpus case {}", spec.name));
    return status;
  }
  BundleCase c;
  static_cast<ModelBundle&>(c) = *std::move(made);
  c.name = std::move(spec.name);
  c.description = std::move(spec.description);
  c.recipe = std::move(spec.recipe);
  c.strategy = std::move(spec.strategy);
  return c;
}

ModelRecipe WithBatch(ModelRecipe recipe, int64_t batch_size) {
  recipe.batch_size = batch_size;
  return recipe;
}

std::vector<CaseSpec> StandardSpecs() {
  ModelRecipe gm = CorpusMlp();
  gm.steps = 4;  // two optimizer updates of 2 executor steps
  ModelRecipe deep = CorpusMlp();
  deep.mlp.depth = 4;  // 4 chunks for 2 stages × 2 virtual stages
  // Pipelines take 8 rows per step, so that every micro-batch has at least 2.
  const ModelRecipe pipelined = WithBatch(CorpusMlp(), 8);
  return {
      {"dp2_mlp", "MLP, data parallel over 2 ranks", CorpusMlp(), R"({"dp_degree": 2})"},
      {"dp4_mlp", "MLP, data parallel over 4 ranks", CorpusMlp(), R"({"dp_degree": 4})"},
      {"tp2_mlp", "MLP, tensor parallel (Megatron) over 2 ranks", CorpusMlp(),
       R"({"mp_degree": 2})"},
      {"pp2_fthenb_mb2_mlp", "MLP in a 2-stage pipeline, FThenB over 2 micro-batches", pipelined,
       "{" + PipelineJson("FThenB", 2) + "}"},
      {"pp2_fthenb_mb4_mlp", "MLP in a 2-stage pipeline, FThenB over 4 micro-batches", pipelined,
       "{" + PipelineJson("FThenB", 4) + "}"},
      {"dp2_gm2_mlp", "MLP, data parallel over 2 ranks, gradient merge every 2 steps", gm,
       R"({"dp_degree": 2, "gradient_merge": {"enable": true, "k_steps": 2}})"},
      {"pp2_1f1b_mb2_mlp", "MLP in a 2-stage pipeline, 1F1B over 2 micro-batches", pipelined,
       "{" + PipelineJson("1F1B", 2) + "}"},
      {"pp2_vpp2_mb4_mlp",
       "MLP in a 2-stage pipeline, VPP with 2 chunks per stage over 4 micro-batches",
       WithBatch(deep, 8), "{" + PipelineJson("VPP", 4, R"(, "vpp_degree": 2)") + "}"},
      {"pp2_zbh1_mb2_mlp", "MLP in a 2-stage pipeline, zero-bubble ZBH1 over 2 micro-batches",
       pipelined, "{" + PipelineJson("ZBH1", 2) + "}"},
      {"tp2_gpt", "GPT, tensor parallel (Megatron) over 2 ranks", CorpusGpt(),
       R"({"mp_degree": 2})"},
      {"dp2_tp2_mlp", "MLP, data parallel over 2 replicas of tensor parallel over 2 ranks",
       CorpusMlp(), R"({"dp_degree": 2, "mp_degree": 2})"},
      {"dp2_pp2_mlp", "MLP, data parallel over 2 replicas of a 2-stage 1F1B pipeline", pipelined,
       R"({"dp_degree": 2, )" + PipelineJson("1F1B", 2) + "}"},
      {"dp2_tp2_pp2_gpt",
       "GPT, data parallel over 2 replicas of a 2-stage 1F1B pipeline of tensor-parallel pairs",
       CorpusGpt(), R"({"dp_degree": 2, "mp_degree": 2, )" + PipelineJson("1F1B", 2) + "}"},
  };
}

CaseSpec SerialSpec(int64_t batch) {
  return {fmt::format("serial_mlp{}", batch),
          fmt::format("MLP on one rank ({} rows per step: the serial run of dp2_mlp)", batch),
          WithBatch(CorpusMlp(), batch), ""};
}

StatusOr<std::vector<BundleCase>> MakeAll(std::vector<CaseSpec> specs) {
  std::vector<BundleCase> cases;
  for (CaseSpec& spec : specs) {
    IRM_ASSIGN_OR_RETURN(BundleCase c, Make(std::move(spec)));
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

StatusOr<std::vector<BundleCase>> StandardCases() { return MakeAll(StandardSpecs()); }

StatusOr<std::vector<BundleCase>> CorpusCases() {
  std::vector<CaseSpec> specs = StandardSpecs();
  specs.push_back(SerialSpec(8));
  return MakeAll(std::move(specs));
}

StatusOr<BundleCase> CaseNamed(std::string_view name) {
  std::vector<CaseSpec> specs = StandardSpecs();
  specs.push_back(SerialSpec(8));
  std::vector<std::string> names;
  for (CaseSpec& spec : specs) {
    if (spec.name == name) return Make(std::move(spec));
    names.push_back(spec.name);
  }
  return Status(StatusCode::kNotFound, Location{},
                fmt::format("no corpus case '{}' (the cases: {})", name, fmt::join(names, ", ")));
}

StatusOr<BundleCase> DataParallelMlp(int ranks) {
  return Make({fmt::format("dp{}_mlp", ranks),
               fmt::format("MLP, data parallel over {} ranks", ranks), CorpusMlp(),
               fmt::format(R"({{"dp_degree": {}}})", ranks)});
}

StatusOr<BundleCase> SerialMlp(int64_t batch) { return Make(SerialSpec(batch)); }

Status WriteBundleCase(const BundleCase& bundle_case, const std::string& dir, bool text_copies) {
  oldir::RankProgramsOptions options;
  options.text_copies = text_copies;
  return WriteModelBundle(bundle_case, dir, options).status();
}

}  // namespace irm::corpus
