// The model zoo's training programs (oldir/models: MLP and GPT, with backward and every optimizer
// configuration) on the legacy executor: every op they hold plans, their feeds and fetches are
// the model's, and two steps run start to end on recording kernels — every var an op reads was
// written before (by startup, a feed or an earlier op), persistable state lands in the persistent
// scope, and no temporary leaks into it.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/models/training.h"
#include "oldir/params_io.h"
#include "reference_runtime/legacy_bindings.h"
#include "reference_runtime/legacy_executor.h"
#include "reference_runtime/legacy_test_support.h"

namespace irm::rt {
namespace {

using testing::LegacyHarness;
using testing::MakeTensor;

// Every kernel the binding table can name, recorded for the dtypes the models compute in.
void AddEveryKernel(testing::RecordingKernels& kernels) {
  std::set<std::string> names = {"split_with_num", "triu", "triu_grad"};
  for (const LegacyBinding& binding : AllLegacyBindings())
    names.insert(std::string(binding.kernel));
  for (const std::string& name : names) {
    kernels.Add(name, {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat32});
  }
}

std::set<std::string> PersistableVars(const oldir::Program& program) {
  std::set<std::string> names;
  const oldir::Block root = program.root();
  for (int i = 0; i < root.num_vars(); ++i) {
    if (root.var(i).persistable() && root.var(i).type() == oldir::proto::VarType::DENSE_TENSOR) {
      names.insert(root.var(i).name());
    }
  }
  return names;
}

// Plans startup and main, checks the feeds and fetches, runs startup once and main twice.
void TrainTwoSteps(oldir::models::ModelPrograms& model, const std::string& what) {
  SCOPED_TRACE(what);
  LegacyHarness h;
  h.options.observer = nullptr;
  AddEveryKernel(h.kernels);
  const oldir::Program startup = model.startup.Build();
  const oldir::Program main = model.main.Build();
  LegacyExecutor init(startup, h.options);
  LegacyExecutor step(main, h.options);
  ASSERT_OK(init.plan_status());
  ASSERT_OK(step.plan_status());

  // The feeds and fetches are the model's.
  const std::vector<FeedSpec> specs = step.FeedSpecs();
  ASSERT_EQ(specs.size(), model.feeds.size());
  FeedMap feeds;
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].name, model.feeds[i].name);
    EXPECT_EQ(specs[i].dtype, oldir::DTypeFromVarType(model.feeds[i].dtype));
    EXPECT_EQ(specs[i].shape, model.feeds[i].shape);
    std::vector<int64_t> shape = specs[i].shape;
    for (int64_t& d : shape) d = d < 0 ? 2 : d;
    feeds[specs[i].name] = MakeTensor(specs[i].dtype, shape);
  }
  EXPECT_EQ(step.FetchNames(), model.fetches);

  ASSERT_OK(init.Run(h.persistent, {}).status());
  const std::vector<std::string> initialised = h.persistent.LocalNames();
  for (int i = 0; i < 2; ++i) {
    StatusOr<std::vector<Fetch>> fetched = step.Run(h.persistent, feeds);
    ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
    ASSERT_EQ(fetched->size(), 1u);
    EXPECT_EQ((*fetched)[0].name, model.loss);
  }
  // Startup initialised every persistable var of main; the steps added none of their own.
  const std::set<std::string> persistable = PersistableVars(main);
  EXPECT_EQ(std::set<std::string>(initialised.begin(), initialised.end()), persistable);
  EXPECT_EQ(h.persistent.LocalNames(), initialised);
}

TEST(LegacyModelsTest, MlpTrainsWithEveryOptimizer) {
  for (const oldir::OptimizerOptions& optimizer : oldir::EveryOptimizerConfiguration()) {
    for (oldir::models::MlpLoss loss :
         {oldir::models::MlpLoss::kSoftmaxCrossEntropy, oldir::models::MlpLoss::kMse}) {
      oldir::models::ModelPrograms model;
      oldir::models::MlpConfig config;
      config.depth = 3;
      config.loss = loss;
      config.activation = loss == oldir::models::MlpLoss::kMse
                              ? oldir::models::MlpActivation::kGelu
                              : oldir::models::MlpActivation::kTanh;
      ASSERT_OK(oldir::models::BuildMlp(config, &model));
      ASSERT_OK(oldir::models::AddTraining(&model, optimizer));
      TrainTwoSteps(model, std::string(oldir::OptimizerKindName(optimizer.kind)) +
                               (optimizer.clip_global_norm ? " clipped " : " ") +
                               oldir::models::MlpLossName(loss));
    }
  }
}

TEST(LegacyModelsTest, GptTrainsWithEveryOptimizer) {
  for (const oldir::OptimizerOptions& optimizer : oldir::EveryOptimizerConfiguration()) {
    oldir::models::ModelPrograms model;
    oldir::models::GptConfig config;
    config.layers = 2;
    config.hidden = 8;
    config.heads = 2;
    config.vocab = 11;
    config.seq = 4;
    ASSERT_OK(oldir::models::BuildGpt(config, &model));
    ASSERT_OK(oldir::models::AddTraining(&model, optimizer));
    TrainTwoSteps(model, std::string(oldir::OptimizerKindName(optimizer.kind)) +
                             (optimizer.clip_global_norm ? " clipped" : ""));
  }
}

TEST(LegacyModelsTest, GptTokensAreBoundByTheVocabulary) {
  oldir::models::ModelPrograms model;
  oldir::models::GptConfig config;
  config.vocab = 11;
  config.seq = 4;
  config.hidden = 8;
  config.heads = 2;
  ASSERT_OK(oldir::models::BuildGpt(config, &model));
  LegacyHarness h;
  LegacyExecutor step(model.main.Build(), h.options);
  const std::vector<FeedSpec> specs = step.FeedSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "tokens");
  EXPECT_EQ(specs[0].index_bound, 11);
  EXPECT_EQ(specs[1].name, "labels");
  EXPECT_EQ(specs[1].index_bound, 11);  // the classes of the softmax_with_cross_entropy
}

}  // namespace
}  // namespace irm::rt
