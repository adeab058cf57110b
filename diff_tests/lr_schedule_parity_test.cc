// The zoo ResNet trained with Paddle's exponential learning-rate decay (oldir/models/
// lr_schedule.h: the step counter, scale, floor when staircase, fill_constant + elementwise_pow,
// scale) and momentum, run as legacy and as translated on the fly: bit-identical over 4 steps
// (the staircase exponent floors 0, 0, 1, 1), the decay's own ops (elementwise_pow, floor)
// compared as intermediates on both sides at every step.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "diff_tests/parity_run.h"
#include "oldir/models/lr_schedule.h"
#include "oldir/models/resnet.h"
#include "oldir/models/training.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff {
namespace {

namespace models = oldir::models;

constexpr int64_t kBatch = 2;
constexpr int kSteps = 4;

models::ResnetConfig TinyResnet() {
  models::ResnetConfig config;
  config.depth = {1};
  config.width = 2;
  config.image_size = 8;
  config.classes = 3;
  config.top_k = 2;
  config.seed = 5;
  return config;
}

// The feeds of the model's FeedSpecs: images uniform in [-1, 1], labels 0, 1, 2, ...
rt::FeedMap Feeds(const models::ModelPrograms& model, int64_t classes) {
  rt::FeedMap feeds;
  uint64_t seed = 31;
  for (const models::FeedSpec& spec : model.feeds) {
    std::vector<int64_t> shape = spec.shape;
    for (int64_t& d : shape) d = d < 0 ? kBatch : d;
    if (spec.dtype == oldir::proto::VarType::INT64) {
      std::vector<int64_t> labels;
      for (int64_t i = 0; i < kBatch; ++i) labels.push_back(i % classes);
      feeds[spec.name] = rt::Tensor::FromVector(labels, shape);
    } else {
      feeds[spec.name] = rt::testing::RandomTensor(DType::kFloat32, shape, seed++, -1.0, 1.0);
    }
  }
  return feeds;
}

// How many compared intermediates an op of `type` wrote, over all steps.
int ComparedFrom(const ParityReport& report, const std::string& type) {
  int n = 0;
  for (const ComparedTensor& t : report.tensors) {
    if (t.group == TensorGroup::kIntermediate && t.compared && t.old_op.starts_with(type + " ")) {
      ++n;
    }
  }
  return n;
}

TEST(LrScheduleParityTest, ExponentialDecayTrainsBitIdenticalToItsTranslation) {
  for (bool staircase : {false, true}) {
    SCOPED_TRACE(staircase ? "staircase" : "continuous");
    models::ModelPrograms model;
    ASSERT_TRUE(models::BuildResnet(TinyResnet(), &model).ok());
    models::TrainingOptions options;
    options.optimizer.kind = oldir::OptimizerKind::kMomentum;
    options.lr_schedule.decay = models::LrDecay::kExponential;
    options.lr_schedule.learning_rate = 0.1f;
    options.lr_schedule.decay_steps = 2;
    options.lr_schedule.decay_rate = 0.5f;
    options.lr_schedule.staircase = staircase;
    const Status trained = models::AddTraining(&model, options);
    ASSERT_TRUE(trained.ok()) << trained.ToString();
    const oldir::Program main = model.main.Build();
    const oldir::Program startup = model.startup.Build();

    ParityPrograms programs{.legacy_main = &main,
                            .legacy_startup = &startup,
                            .new_main = nullptr,
                            .new_startup = nullptr,
                            .legacy_file = "resnet_exponential",
                            .new_file = ""};
    ParityOptions parity;
    parity.steps = kSteps;
    parity.seed = 5;
    parity.feeds = Feeds(model, TinyResnet().classes);
    StatusOr<ParityResult> result = RunParity(programs, parity);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const ParityReport& report = result->report;
    EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
    EXPECT_FALSE(report.first_divergence.has_value());
    EXPECT_EQ(report.NotCompared(), 0);
    EXPECT_EQ(report.Compared(TensorGroup::kFetch), kSteps);
    // The decay ran on both sides, once per step.
    EXPECT_EQ(ComparedFrom(report, "elementwise_pow"), kSteps);
    EXPECT_EQ(ComparedFrom(report, "floor"), staircase ? kSteps : 0);
  }
}

}  // namespace
}  // namespace irm::diff
