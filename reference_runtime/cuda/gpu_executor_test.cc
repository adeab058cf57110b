// The executors on the GPU (`--device gpu`): the legacy and PIR executors, unchanged, on the
// GPU kernel registry (gpu_kernel_registry.h; tensors resident on the device between ops). The
// model is the zoo gpt training program that `ir-migrate build gpt` writes into its bundle
// (oldir/models/gpt.h + AddTraining, AdamW, attention dropout 0.1), at small sizes. The Engine flow
// (`ir-migrate engine --device gpu
// --backend device`: diff_tests/engine_flow.h) on the zoo mlp under DP2, its two ranks in the
// device world. Every test here needs a GPU and reports skipped without one (check_gpu_tests.sh
// holds that none passes there).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diff_tests/engine_flow.h"
#include "diff_tests/parity_run.h"
#include "diff_tests/tensor_compare.h"
#include "reference_runtime/cuda/device_world.h"
#include "reference_runtime/cuda/gpu_gpt_fixture.h"
#include "reference_runtime/cuda/gpu_kernel_registry.h"
#include "reference_runtime/cuda/gpu_test_support.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/multi_rank_run.h"
#include "reference_runtime/run.h"

namespace irm::rt::cuda {
namespace {

constexpr int kSteps = 3;
constexpr uint64_t kSeed = 11;

// One training run: each step's fetches, the persistable vars after the startup and after the
// last step, and every output of the dropout ops of step 1 (their masks come from the RNG alone).
struct TrainingRun {
  std::vector<StepResult> steps;
  std::map<std::string, Tensor> after_startup;
  std::map<std::string, Tensor> after_training;
  std::map<std::string, Tensor> dropout_outputs;
};

std::map<std::string, Tensor> Persistables(const Scope& scope) {
  std::map<std::string, Tensor> vars;
  for (const std::string& name : scope.LocalNames()) vars.emplace(name, scope.Find(name)->Clone());
  return vars;
}

// `kernels`: null for the CPU.
StatusOr<TrainingRun> Train(const GptPrograms& gpt, const KernelRegistry* kernels) {
  TrainingRun run;
  bool first_step = true;
  OpObserver observer = [&](const OpEvent& event) {
    if (!first_step || event.op_type != "dropout") return;
    for (const auto& [name, tensor] : event.outputs) {
      if (tensor != nullptr) run.dropout_outputs.emplace(std::string(name), tensor->Clone());
    }
  };
  ExecutorOptions options;
  options.kernels = kernels;
  options.seed = kSeed;
  LegacyExecutor startup(gpt.startup, options);
  options.observer = &observer;
  LegacyExecutor main(gpt.main, options);
  Scope initialized;
  IRM_RETURN_IF_ERROR(startup.Run(initialized, {}).status());
  run.after_startup = Persistables(initialized);
  TrainingConfig config;
  config.steps = kSteps;
  config.random_feeds = true;
  config.seed = kSeed;
  config.batch_size = 4;
  Scope trained;
  IRM_ASSIGN_OR_RETURN(run.steps,
                       RunTraining(&startup, main, trained, config,
                                   [&first_step](const StepResult&) { first_step = false; }));
  run.after_training = Persistables(trained);
  return run;
}

std::unique_ptr<KernelRegistry> GpuRegistry() {
  StatusOr<std::unique_ptr<KernelRegistry>> registry = MakeGpuKernelRegistry();
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  return registry.ok() ? std::move(registry).value() : nullptr;
}

void ExpectTier(const std::map<std::string, Tensor>& gpu, const std::map<std::string, Tensor>& cpu,
                diff::Tier tier, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (const auto& [name, tensor] : cpu) {
    auto it = gpu.find(name);
    ASSERT_NE(it, gpu.end()) << what << ": " << name;
    const diff::Comparison c = diff::CompareTensors(it->second, tensor, tier);
    EXPECT_TRUE(c.pass) << what << ": " << name << ": " << c.reason;
  }
}

std::map<std::string, Tensor> Losses(const TrainingRun& run) {
  std::map<std::string, Tensor> losses;
  for (const StepResult& step : run.steps) {
    for (const Fetch& f : step.fetches) {
      losses.emplace(f.name + " step " + std::to_string(step.step), f.tensor.Clone());
    }
  }
  return losses;
}

TEST(GpuExecutorTest, TheRegistryIsMadeWhereAGpuIsVisible) {
  IRM_REQUIRE_GPU();
  StatusOr<std::unique_ptr<KernelRegistry>> registry = MakeGpuKernelRegistry();
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  EXPECT_EQ((*registry)->Names(), KernelRegistry::Global().Names());
}

TEST(GpuExecutorTest, ZooGptTrainingMatchesTheCpuWithinTheReorderedTier) {
  IRM_REQUIRE_GPU();
  const GptPrograms gpt = SmallGpt();
  std::unique_ptr<KernelRegistry> registry = GpuRegistry();
  ASSERT_NE(registry, nullptr);
  StatusOr<TrainingRun> cpu = Train(gpt, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  StatusOr<TrainingRun> gpu = Train(gpt, registry.get());
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_EQ(gpu->steps.size(), static_cast<size_t>(kSteps));
  ExpectTier(Losses(*gpu), Losses(*cpu), diff::Tier::kReordered, "losses");
  ExpectTier(gpu->after_training, cpu->after_training, diff::Tier::kReordered, "after training");
  // The loss moved: the run trained (a run that did nothing would match itself trivially).
  const Tensor& first_loss = gpu->steps.front().fetches.at(0).tensor;
  const Tensor& last_loss = gpu->steps.back().fetches.at(0).tensor;
  EXPECT_FALSE(diff::CompareTensors(last_loss, first_loss, diff::Tier::kExact).pass);
}

TEST(GpuExecutorTest, TwoGpuRunsAreBitIdentical) {
  IRM_REQUIRE_GPU();
  const GptPrograms gpt = SmallGpt();
  std::unique_ptr<KernelRegistry> registry = GpuRegistry();
  ASSERT_NE(registry, nullptr);
  StatusOr<TrainingRun> first = Train(gpt, registry.get());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StatusOr<TrainingRun> second = Train(gpt, registry.get());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ExpectTier(Losses(*second), Losses(*first), diff::Tier::kExact, "losses");
  ExpectTier(second->after_training, first->after_training, diff::Tier::kExact, "after training");
}

// uniform_random and dropout transform the Philox bits exactly, so the device draws the CPU's
// numbers through the whole executor; gaussian_random goes through the device's libm (log, cos,
// sin: a few units in the last place from glibc's), so it matches within the reordered tier.
TEST(GpuExecutorTest, RandomOpsDrawTheCpuBitsThroughTheExecutor) {
  IRM_REQUIRE_GPU();
  const GptPrograms gpt = SmallGpt();
  std::unique_ptr<KernelRegistry> registry = GpuRegistry();
  ASSERT_NE(registry, nullptr);
  StatusOr<TrainingRun> cpu = Train(gpt, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  StatusOr<TrainingRun> gpu = Train(gpt, registry.get());
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();

  std::map<std::string, std::string> initializer;  // var -> the startup op that writes it
  const oldir::Block startup = gpt.startup.root();
  for (int i = 0; i < startup.num_ops(); ++i) {
    const oldir::Op op = startup.op(i);
    if (const oldir::Op::Names* out = op.Output("Out")) {
      for (const std::string& name : *out) initializer[name] = op.type();
    }
  }
  int uniform = 0;
  for (const auto& [name, tensor] : cpu->after_startup) {
    SCOPED_TRACE(name);
    ASSERT_EQ(gpu->after_startup.count(name), 1u);
    const std::string& op = initializer[name];
    const diff::Tier tier = op == "gaussian_random" ? diff::Tier::kReordered : diff::Tier::kExact;
    uniform += op == "uniform_random" ? 1 : 0;
    const diff::Comparison c = diff::CompareTensors(gpu->after_startup.at(name), tensor, tier);
    EXPECT_TRUE(c.pass) << op << ": " << c.reason;
  }
  EXPECT_GT(uniform, 0);
  // Dropout's masks depend on the seed and the op alone: bit for bit.
  ASSERT_FALSE(cpu->dropout_outputs.empty());
  int masks = 0;
  for (const auto& [name, tensor] : cpu->dropout_outputs) {
    if (IsFloatingDType(tensor.dtype())) continue;
    ++masks;
    ASSERT_EQ(gpu->dropout_outputs.count(name), 1u) << name;
    EXPECT_TRUE(
        diff::CompareTensors(gpu->dropout_outputs.at(name), tensor, diff::Tier::kExact).pass)
        << name;
  }
  EXPECT_GT(masks, 0);
}

// Old vs translated new, both on the GPU registry: the translation must not change a bit there
// either (the same kernels in the same order on both sides).
TEST(GpuParityTest, OldAndNewAreBitIdenticalOnTheGpu) {
  IRM_REQUIRE_GPU();
  const GptPrograms gpt = SmallGpt();
  std::unique_ptr<KernelRegistry> registry = GpuRegistry();
  ASSERT_NE(registry, nullptr);
  diff::ParityPrograms programs{.legacy_main = &gpt.main,
                                .legacy_startup = &gpt.startup,
                                .new_main = nullptr,
                                .new_startup = nullptr,
                                .legacy_file = "gpt adamw",
                                .new_file = ""};
  diff::ParityOptions options;
  options.steps = kSteps;
  options.seed = kSeed;
  options.tier = diff::Tier::kExact;
  options.kernels = registry.get();
  StatusOr<diff::ParityResult> result = diff::RunParity(programs, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->report.parity()) << diff::RenderMarkdown(result->report);
  EXPECT_EQ(result->report.Compared(diff::TensorGroup::kFetch), kSteps);
  EXPECT_GT(result->report.Compared(diff::TensorGroup::kIntermediate), 0);
}

// The Engine flow with --device gpu --backend device: the zoo mlp under DP2 (two ranks sharing the
// GPU in the device world), by both roads. Every pair passes on the GPU as on the CPU (serial vs
// legacy and serial vs new in the noise-floor tier, legacy vs new), and the new IR's bundle the
// GPU flow wrote, run again on the GPU and on the CPU's thread world, agrees within the reordered
// tier: every step's fetches of every rank and every persistable var after the last step.
diff::EngineOptions Dp2Mlp() {
  diff::EngineOptions options;
  options.ir = diff::EngineIr::kBoth;
  options.strategy.dp_degree = 2;
  options.strategy_file = "dp2.json";
  options.recipe.model = corpus::ZooModel::kMlp;
  options.steps = kSteps;
  return options;
}

void ExpectEveryPairPasses(const StatusOr<diff::EngineResult>& result, const std::string& where) {
  ASSERT_TRUE(result.ok()) << where << ": " << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 3u) << where;
  for (const diff::EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, diff::EnginePair::Verdict::kPass)
        << where << ": " << pair.name << ": " << pair.first_failure;
  }
}

// Every rank of the bundle in `dir`, as the engine runs it, on `kernels` in `world`'s ranks.
StatusOr<MultiRankResult> RunRanks(const std::string& dir, uint64_t seed,
                                   const KernelRegistry* kernels, RankWorldFactory world) {
  MultiRankConfig config;
  config.rank_config.steps = kSteps;
  config.rank_config.seed = seed;
  config.rank_config.random_feeds = true;
  config.rank_config.batch_size = 4;
  config.rank_config.options.kernels = kernels;
  config.make_world = std::move(world);
  return RunBundleRanks(dir, config);
}

TEST(GpuEngineTest, MlpDp2OnTheDeviceWorldPassesAndMatchesTheCpu) {
  IRM_REQUIRE_GPU();
  std::unique_ptr<KernelRegistry> registry = GpuRegistry();
  ASSERT_NE(registry, nullptr);
  const std::filesystem::path scratch =
      std::filesystem::path(::testing::TempDir()) / "gpu_engine_mlp_dp2";
  std::filesystem::remove_all(scratch);

  ExpectEveryPairPasses(diff::RunEngineFlow(Dp2Mlp(), (scratch / "cpu").string(), "mlp.dp2"),
                        "cpu");
  diff::EngineOptions options = Dp2Mlp();
  options.kernels = registry.get();
  options.make_world = DeviceWorld::Factory({});
  options.device = "gpu";
  options.backend = "device";
  StatusOr<diff::EngineResult> gpu =
      diff::RunEngineFlow(options, (scratch / "gpu").string(), "mlp.dp2");
  ExpectEveryPairPasses(gpu, "gpu");
  if (!gpu.ok()) return;
  EXPECT_NE(diff::RenderEngineMarkdown(*gpu).find("device gpu, backend device"), std::string::npos);

  const std::string pir = (scratch / "gpu" / "pir").string();
  StatusOr<MultiRankResult> on_gpu =
      RunRanks(pir, gpu->seed, registry.get(), DeviceWorld::Factory({}));
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status().ToString();
  StatusOr<MultiRankResult> on_cpu = RunRanks(pir, gpu->seed, nullptr, {});
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().ToString();
  ASSERT_EQ(on_gpu->ranks.size(), 2u);
  ASSERT_EQ(on_cpu->ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const RankOutcome& g = on_gpu->ranks[r];
    const RankOutcome& c = on_cpu->ranks[r];
    const std::string rank = "rank " + std::to_string(r);
    ASSERT_EQ(g.steps.size(), static_cast<size_t>(kSteps)) << rank;
    ASSERT_EQ(c.steps.size(), static_cast<size_t>(kSteps)) << rank;
    std::map<std::string, Tensor> gpu_fetches;
    std::map<std::string, Tensor> cpu_fetches;
    for (size_t s = 0; s < g.steps.size(); ++s) {
      for (const Fetch& f : g.steps[s].merged) {
        gpu_fetches.emplace(f.name + " step " + std::to_string(s), f.tensor.Clone());
      }
      for (const Fetch& f : c.steps[s].merged) {
        cpu_fetches.emplace(f.name + " step " + std::to_string(s), f.tensor.Clone());
      }
    }
    ASSERT_FALSE(cpu_fetches.empty()) << rank;
    ExpectTier(gpu_fetches, cpu_fetches, diff::Tier::kReordered, rank + " fetches");
    ExpectTier(Persistables(*g.scope), Persistables(*c.scope), diff::Tier::kReordered,
               rank + " after training");
  }
  std::filesystem::remove_all(scratch);
}

}  // namespace
}  // namespace irm::rt::cuda
