// Tests of the ResNet builder and the learning-rate schedules: the op sequence and names the
// static-graph script of resnet.h writes (written out by hand here), the batch_norm statistics'
// flags, the schedules' ops as fluid's learning_rate_scheduler.py writes them, the optimizer
// reading the scheduled rate, and bad configs refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "oldir/models/lr_schedule.h"
#include "oldir/models/resnet.h"
#include "oldir/models/training.h"
#include "oldir/validator.h"

namespace irm::oldir::models {
namespace {

using Strings = std::vector<std::string>;

Strings OpTypes(const Block& block) {
  Strings types;
  for (int i = 0; i < block.num_ops(); ++i) types.push_back(block.op(i).type());
  return types;
}

Strings Params(const Program& program) {
  Strings names;
  const Block root = program.root();
  for (int i = 0; i < root.num_vars(); ++i) {
    if (root.var(i).is_parameter()) names.push_back(root.var(i).name());
  }
  return names;
}

ResnetConfig TinyBottleneck() {
  ResnetConfig config;
  config.depth = {1, 1};
  config.width = 2;
  config.image_size = 8;
  config.classes = 3;
  config.top_k = 2;
  config.seed = 5;
  return config;
}

TEST(ResnetTest, BottleneckForwardIsTheScriptsOpSequence) {
  ModelPrograms model;
  ResnetMetrics metrics;
  ASSERT_TRUE(BuildResnet(TinyBottleneck(), &model, &metrics).ok());
  const Program main = model.main.Build();
  // stem conv_bn(relu) + max pool; stage 0: 3 conv_bn + projection conv_bn (2 -> 8 channels);
  // stage 1 (stride 2): the same; adaptive avg pool, fc, loss, two accuracies.
  const Strings conv_bn_relu = {"conv2d", "batch_norm", "relu"};
  const Strings conv_bn = {"conv2d", "batch_norm"};
  Strings expected = {"feed", "feed"};
  auto append = [&expected](const Strings& ops) {
    expected.insert(expected.end(), ops.begin(), ops.end());
  };
  append(conv_bn_relu);
  append({"pool2d"});
  for (int stage = 0; stage < 2; ++stage) {
    append(conv_bn_relu);
    append(conv_bn_relu);
    append(conv_bn);
    append(conv_bn);  // the projection shortcut
    append({"elementwise_add", "relu"});
  }
  append({"pool2d", "mul", "elementwise_add", "softmax_with_cross_entropy", "mean", "top_k",
          "accuracy", "top_k", "accuracy"});
  EXPECT_EQ(OpTypes(main.root()), expected);

  // One LayerHelper per static.nn call: conv2d_N.w_0, batch_norm_N.{w_0, b_0, w_1, w_2}.
  const Strings params = Params(main);
  ASSERT_GE(params.size(), 6u);
  EXPECT_EQ(Strings(params.begin(), params.begin() + 5),
            (Strings{"conv2d_0.w_0", "batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1",
                     "batch_norm_0.w_2"}));
  EXPECT_EQ(params.back(), "fc_0.b_0");
  EXPECT_EQ(model.loss, "mean_0.tmp_0");
  EXPECT_EQ(metrics.acc_top1, "accuracy_0.tmp_2");
  EXPECT_EQ(metrics.acc_topk, "accuracy_1.tmp_2");

  const Op bn = main.root().op(3);
  ASSERT_EQ(bn.type(), "batch_norm");
  EXPECT_EQ(bn.SingleInput("X"), "conv2d_0.tmp_0");
  EXPECT_EQ(bn.SingleOutput("MeanOut"), "batch_norm_0.w_1");  // in place, as Paddle writes it
  EXPECT_EQ(bn.SingleOutput("VarianceOut"), "batch_norm_0.w_2");
  EXPECT_EQ(bn.SingleOutput("Y"), "batch_norm_0.tmp_3");
  EXPECT_EQ(main.root().op(4).SingleOutput("Out"), "batch_norm_0.tmp_4");  // act='relu'
  EXPECT_FALSE(bn.AttrOr<bool>("is_test", true));
  EXPECT_FLOAT_EQ(bn.AttrOr<float>("momentum", 0.0f), 0.9f);

  // The moving statistics are persistable, not trained; scale and bias are trained.
  const proto::VarDesc* mean = model.main.root().FindLocalVar("batch_norm_0.w_1");
  ASSERT_NE(mean, nullptr);
  EXPECT_TRUE(mean->persistable());
  EXPECT_TRUE(mean->stop_gradient());
  EXPECT_FALSE(model.main.root().FindLocalVar("batch_norm_0.w_0")->stop_gradient());

  // The stem: 7x7 stride 2 padding 3 on 8x8 gives 4x4; the max pool 3/2/1 gives 2x2.
  const Op stem = main.root().op(2);
  EXPECT_EQ(stem.AttrOr<std::vector<int32_t>>("strides", {}), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(stem.AttrOr<std::vector<int32_t>>("paddings", {}), (std::vector<int32_t>{3, 3}));
  const proto::VarDesc* pooled = model.main.root().FindLocalVar("pool2d_0.tmp_0");
  ASSERT_NE(pooled, nullptr);
  const auto& dims = pooled->type().dense_tensor().tensor().dims();
  EXPECT_EQ(std::vector<int64_t>(dims.begin(), dims.end()), (std::vector<int64_t>{-1, 2, 2, 2}));

  // fc: mul flattening from dim 1, bias added on axis 1.
  const int mul_index =
      static_cast<int>(std::find(expected.begin(), expected.end(), "mul") - expected.begin());
  const Op mul = main.root().op(mul_index);
  ASSERT_EQ(mul.type(), "mul");
  EXPECT_EQ(mul.SingleInput("Y"), "fc_0.w_0");
  EXPECT_EQ(mul.AttrOr<int32_t>("x_num_col_dims", 0), 1);
  EXPECT_EQ(main.root().op(mul_index + 1).AttrOr<int32_t>("axis", 0), 1);
}

TEST(ResnetTest, BasicBlocksKeepTheIdentityShortcutWhereShapesAgree) {
  ResnetConfig config = TinyBottleneck();
  config.block = ResnetBlock::kBasic;
  config.width = 2;  // stem 2 channels = stage 0's width: no projection in stage 0
  ModelPrograms model;
  ASSERT_TRUE(BuildResnet(config, &model).ok());
  const Strings ops = OpTypes(model.main.Build().root());
  int convs = 0;
  for (const std::string& op : ops) convs += op == "conv2d" ? 1 : 0;
  EXPECT_EQ(convs, 1 + 2 + 3);  // stem; stage 0: two; stage 1: two and the projection
}

TEST(ResnetTest, RefusesBadConfigs) {
  auto refused = [](ResnetConfig config) {
    ModelPrograms model;
    return BuildResnet(config, &model).code() == StatusCode::kInvalidArgument;
  };
  ResnetConfig c = TinyBottleneck();
  c.depth = {};
  EXPECT_TRUE(refused(c));
  c = TinyBottleneck();
  c.depth = {1, 0};
  EXPECT_TRUE(refused(c));
  c = TinyBottleneck();
  c.top_k = 4;  // more than the 3 classes
  EXPECT_TRUE(refused(c));
  c = TinyBottleneck();
  c.classes = 1;
  EXPECT_TRUE(refused(c));
  c = TinyBottleneck();
  c.image_size = 0;
  EXPECT_TRUE(refused(c));
}

TrainingOptions Momentum(LrSchedule schedule) {
  TrainingOptions options;
  options.optimizer.kind = OptimizerKind::kMomentum;
  options.lr_schedule = std::move(schedule);
  return options;
}

// fluid.layers.piecewise_decay([2, 4], [0.1, 0.01, 0.001]) (learning_rate_scheduler.py) under a
// Switch (control_flow.py Switch.case / default).
TEST(LrScheduleTest, PiecewiseDecayIsASwitchOfConditionalBlocks) {
  ModelPrograms model;
  ResnetMetrics metrics;
  ASSERT_TRUE(BuildResnet(TinyBottleneck(), &model, &metrics).ok());
  LrSchedule schedule;
  schedule.decay = LrDecay::kPiecewise;
  schedule.boundaries = {2, 4};
  schedule.values = {0.1f, 0.01f, 0.001f};
  TrainingOptions options = Momentum(schedule);
  options.extra_fetches = {metrics.acc_top1, metrics.acc_topk};
  const Status trained = AddTraining(&model, options);
  ASSERT_TRUE(trained.ok()) << trained.ToString();
  const Program main = model.main.Build();
  const Block root = main.root();

  // The counter's increment follows the feed ops; its role is LRSched.
  EXPECT_EQ(root.op(2).type(), "increment");
  EXPECT_EQ(root.op(2).SingleInput("X"), kLrDecayCounter);
  EXPECT_EQ(root.op(2).AttrOr<int32_t>("op_role", -1), kLRSched);

  // After the forward pass: cast, then per boundary fill_constant + less_than (+ the logical ops)
  // + conditional_block, and the default block.
  Strings schedule_ops;
  int first = -1;
  for (int i = 3; i < root.num_ops(); ++i) {
    if (root.op(i).AttrOr<int32_t>("op_role", 0) != kLRSched) continue;
    if (first < 0) first = i;
    schedule_ops.push_back(root.op(i).type());
  }
  EXPECT_EQ(schedule_ops,
            (Strings{"cast", "fill_constant", "less_than", "logical_not", "conditional_block",
                     "fill_constant", "less_than", "logical_not", "logical_and", "logical_and",
                     "conditional_block", "conditional_block"}));
  EXPECT_EQ(root.op(first - 1).type(), "accuracy");  // the forward pass comes first
  ASSERT_EQ(main.num_blocks(), 4);
  for (int b = 1; b < 4; ++b) {
    const Block sub = main.block(b);
    ASSERT_EQ(OpTypes(sub), Strings{"fill_constant"});
    EXPECT_EQ(sub.op(0).SingleOutput("Out"), "learning_rate");
  }
  EXPECT_FLOAT_EQ(main.block(1).op(0).AttrOr<float>("value", 0.0f), 0.1f);
  EXPECT_FLOAT_EQ(main.block(2).op(0).AttrOr<float>("value", 0.0f), 0.01f);
  EXPECT_FLOAT_EQ(main.block(3).op(0).AttrOr<float>("value", 0.0f), 0.001f);
  // The second case runs on not(step < 2) and (step < 4).
  const Op second = root.op(first + 10);
  ASSERT_EQ(second.type(), "conditional_block");
  EXPECT_EQ(second.SingleInput("Cond"), root.op(first + 9).SingleOutput("Out"));
  EXPECT_EQ(root.op(first + 9).SingleInput("Y"), root.op(first + 6).SingleOutput("Out"));

  // Momentum reads the scheduled rate; no constant learning_rate_0 is left.
  int momentum = 0;
  for (int i = 0; i < root.num_ops(); ++i) {
    if (root.op(i).type() != "momentum") continue;
    ++momentum;
    EXPECT_EQ(root.op(i).SingleInput("LearningRate"), "learning_rate");
  }
  EXPECT_GT(momentum, 0);
  for (int i = 0; i < root.num_vars(); ++i) EXPECT_NE(root.var(i).name(), "learning_rate_0");
  const Program startup = model.startup.Build();
  for (int i = 0; i < startup.root().num_ops(); ++i) {
    EXPECT_NE(startup.root().op(i).SingleOutput("Out"), "learning_rate_0");
  }
  EXPECT_EQ(model.fetches, (Strings{model.loss, metrics.acc_top1, metrics.acc_topk}));
  const Diagnostics diagnostics = ValidateProgram(main);
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.Render();
}

// fluid.layers.exponential_decay(0.1, 2, 0.5, staircase=True).
TEST(LrScheduleTest, ExponentialDecayScalesAPowerOfTheStep) {
  ModelPrograms model;
  ResnetConfig config = TinyBottleneck();
  config.depth = {1};
  ASSERT_TRUE(BuildResnet(config, &model).ok());
  LrSchedule schedule;
  schedule.decay = LrDecay::kExponential;
  schedule.staircase = true;
  const Status trained = AddTraining(&model, Momentum(schedule));
  ASSERT_TRUE(trained.ok()) << trained.ToString();
  const Program main = model.main.Build();  // the Block views it
  const Block root = main.root();
  Strings ops;
  std::string last;
  for (int i = 3; i < root.num_ops(); ++i) {
    if (root.op(i).AttrOr<int32_t>("op_role", 0) != kLRSched) continue;
    ops.push_back(root.op(i).type());
    last = *root.op(i).SingleOutput("Out");
  }
  EXPECT_EQ(ops, (Strings{"cast", "scale", "floor", "fill_constant", "elementwise_pow", "scale"}));
  for (int i = 0; i < root.num_ops(); ++i) {
    if (root.op(i).type() == "momentum") {
      EXPECT_EQ(root.op(i).SingleInput("LearningRate"), last);
    }
  }
}

TEST(LrScheduleTest, RefusesBadSchedules) {
  ModelPrograms model;
  ASSERT_TRUE(BuildResnet(TinyBottleneck(), &model).ok());
  LrSchedule schedule;
  schedule.decay = LrDecay::kPiecewise;
  schedule.boundaries = {4, 2};
  schedule.values = {0.1f, 0.01f, 0.001f};
  EXPECT_EQ(AppendLrSchedule(&model, schedule).status().code(), StatusCode::kInvalidArgument);
  schedule.boundaries = {2};
  EXPECT_EQ(AppendLrSchedule(&model, schedule).status().code(), StatusCode::kInvalidArgument);
  schedule.decay = LrDecay::kExponential;
  schedule.decay_steps = 0;
  EXPECT_EQ(AppendLrSchedule(&model, schedule).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LrDecayFromName("piecewise"), LrDecay::kPiecewise);
  EXPECT_EQ(LrDecayFromName("cosine"), std::nullopt);
}

}  // namespace
}  // namespace irm::oldir::models
