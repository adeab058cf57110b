// Where the Engine flow's runs execute (engine_flow.h, EngineOptions::kernels and make_world; the
// CLI's --device and --backend): the kernels and the world it is given reach its runs, and the
// reports name the device and the backend. Needs no GPU: a registry without any kernel makes the
// first run fail naming the missing kernel, and a world factory of the test's own (the thread
// world, counted) runs the ranks the flow hands it. The GPU registry and the device world on a GPU
// are runtime_cuda_executor_test's (reference_runtime/cuda/gpu_executor_test.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "diff_tests/engine_flow.h"
#include "reference_runtime/comm/thread_world.h"

namespace irm::diff {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("engine_device_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The zoo mlp at its smallest under DP2: two ranks, one step.
EngineOptions Dp2Mlp(EngineIr ir) {
  EngineOptions options;
  options.ir = ir;
  options.strategy.dp_degree = 2;
  options.strategy_file = "dp2.json";
  options.recipe.model = corpus::ZooModel::kMlp;
  options.recipe.mlp.depth = 2;
  options.recipe.mlp.in_features = 4;
  options.recipe.mlp.width = 8;
  options.recipe.mlp.classes = 3;
  options.steps = 1;
  return options;
}

// The thread world behind a factory of the test's own, counting the worlds it makes.
class CountedThreadWorld final : public rt::RankWorld {
 public:
  explicit CountedThreadWorld(std::unique_ptr<rt::ThreadWorld> world) : world_(std::move(world)) {
    for (int r = 0; r < world_->world_size(); ++r) hosted_.push_back(r);
  }
  int world_size() const override { return world_->world_size(); }
  const std::vector<int>& hosted_ranks() const override { return hosted_; }
  rt::CommContext Context(int rank) override { return world_->Context(rank); }
  Status RunRanks(const std::function<Status(int rank)>& fn) override {
    return world_->RunRanks(fn);
  }
  const rt::CommTrace* trace(int rank) const override { return world_->trace(rank); }

 private:
  std::unique_ptr<rt::ThreadWorld> world_;
  std::vector<int> hosted_;
};

rt::RankWorldFactory CountingFactory(std::atomic<int>* two_rank_worlds) {
  return [two_rank_worlds](
             int world_size, std::vector<rt::CommGroup> groups,
             const schedules::P2pModel& p2p) -> StatusOr<std::unique_ptr<rt::RankWorld>> {
    rt::ThreadWorldOptions options;
    options.p2p = p2p;
    IRM_ASSIGN_OR_RETURN(std::unique_ptr<rt::ThreadWorld> world,
                         rt::ThreadWorld::Create(world_size, std::move(groups), options));
    if (world_size == 2) ++*two_rank_worlds;
    return std::unique_ptr<rt::RankWorld>(std::make_unique<CountedThreadWorld>(std::move(world)));
  };
}

TEST(EngineDeviceTest, EveryRoadRunsOnTheKernelsItIsGiven) {
  const rt::KernelRegistry empty;  // no kernel at all
  for (EngineIr ir : {EngineIr::kLegacy, EngineIr::kPir, EngineIr::kBoth}) {
    SCOPED_TRACE(EngineIrName(ir));
    const fs::path scratch = Scratch(std::string("kernels_") + EngineIrName(ir));
    EngineOptions options = Dp2Mlp(ir);
    options.kernels = &empty;
    EngineFailure failure;
    StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "dp2", &failure);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(failure.stage, EngineStage::kRun) << EngineStageName(failure.stage);
    EXPECT_NE(result.status().ToString().find("there is no kernel"), std::string::npos)
        << result.status().ToString();
    EXPECT_FALSE(fs::exists(scratch / "out"));
  }
}

TEST(EngineDeviceTest, TheRanksRunInTheWorldItIsGiven) {
  const fs::path scratch = Scratch("world");
  std::atomic<int> two_rank_worlds{0};
  EngineOptions options = Dp2Mlp(EngineIr::kBoth);
  options.make_world = CountingFactory(&two_rank_worlds);
  options.backend = "counted";
  StatusOr<EngineResult> result = RunEngineFlow(options, scratch / "out", "dp2");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->pairs.size(), 3u);
  for (const EnginePair& pair : result->pairs) {
    EXPECT_EQ(pair.verdict, EnginePair::Verdict::kPass) << pair.name << ": " << pair.first_failure;
  }
  // The distributed runs of both serial pairs and legacy-pir's two bundles, two ranks each.
  EXPECT_EQ(two_rank_worlds.load(), 4);
  EXPECT_EQ(result->backend, "counted");
}

TEST(EngineDeviceTest, TheReportsNameTheDeviceAndTheBackend) {
  EngineResult cpu;
  cpu.stem = "mlp.dp2";
  const std::string cpu_md = RenderEngineMarkdown(cpu);
  EXPECT_NE(cpu_md.find(", device cpu, backend thread\n"), std::string::npos) << cpu_md;
  EXPECT_NE(RenderEngineJson(cpu).find("\"device\": \"cpu\""), std::string::npos);

  EngineResult gpu = cpu;
  gpu.device = "gpu";
  gpu.backend = "device";
  const std::string gpu_md = RenderEngineMarkdown(gpu);
  EXPECT_NE(gpu_md.find(", device gpu, backend device\n"), std::string::npos) << gpu_md;
  const std::string json = RenderEngineJson(gpu);
  EXPECT_NE(json.find("\"device\": \"gpu\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"backend\": \"device\""), std::string::npos) << json;
}

}  // namespace
}  // namespace irm::diff
