// A small conv-net training program built with oldir's ProgramBuilder — conv2d -> batch_norm
// (training, running statistics in place) -> relu -> pool2d (max) -> pool2d (adaptive avg) ->
// mul (fc) -> softmax_with_cross_entropy -> mean, with top_k + accuracy fetched beside the loss
// (and top_k_v2 and logical_and / or / xor on comparisons of the softmax computed beside it),
// append_backward and momentum (plain, nesterov with l2_decay, and with batch_norm's
// use_global_stats) — run as legacy and as translated on the fly, is bit-identical over 3 steps in
// both GEMM modes: the losses and accuracies, every parameter, velocity and running statistic
// after each step, and the aligned intermediates. The NHWC variant runs the same net
// channel-last.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "diff_tests/parity_run.h"
#include "oldir/backward.h"
#include "oldir/builder.h"
#include "oldir/initializer.h"
#include "oldir/optimizer.h"
#include "reference_runtime/kernels/kernel_test_support.h"

namespace irm::diff {
namespace {

namespace pf = oldir::proto;

constexpr int64_t kBatch = 4;
constexpr int64_t kClasses = 5;

struct ConvNet {
  oldir::Program main;
  oldir::Program startup;
};

struct NetOptions {
  bool nhwc = false;
  bool nesterov_l2 = false;
  bool global_stats = false;  // batch_norm's use_global_stats: the running statistics normalise
};

// Declares a parameter (or, with trainable false, a running statistic) in main and initialises
// it in startup.
void Param(oldir::ProgramBuilder& main, oldir::ProgramBuilder& startup, const std::string& name,
           const std::vector<int64_t>& dims, const oldir::Initializer& init, bool trainable) {
  main.root().CreateVar(name, pf::VarType::FP32, dims,
                        {.persistable = true,
                         .stop_gradient = !trainable,
                         .is_parameter = trainable,
                         .need_check_feed = false,
                         .lod_level = 0});
  oldir::AppendInitializer(startup, name, pf::VarType::FP32, dims, init, /*program_seed=*/7);
}

StatusOr<ConvNet> BuildConvNet(const NetOptions& o) {
  oldir::ProgramBuilder main, startup;
  oldir::BlockBuilder& b = main.root();
  const std::string format = o.nhwc ? "NHWC" : "NCHW";
  auto nchw = [&](int64_t c, int64_t h, int64_t w) {
    return o.nhwc ? std::vector<int64_t>{-1, h, w, c} : std::vector<int64_t>{-1, c, h, w};
  };
  auto var = [&](const std::string& name, std::vector<int64_t> dims,
                 pf::VarType::Type dtype = pf::VarType::FP32) { b.CreateVar(name, dtype, dims); };
  b.CreateVar("image", pf::VarType::FP32, nchw(3, 8, 8),
              {.persistable = false,
               .stop_gradient = true,
               .is_parameter = false,
               .need_check_feed = true,
               .lod_level = 0});
  b.CreateVar("label", pf::VarType::INT64, {-1, 1},
              {.persistable = false,
               .stop_gradient = true,
               .is_parameter = false,
               .need_check_feed = true,
               .lod_level = 0});
  Param(main, startup, "conv.w", {4, 3, 3, 3}, oldir::Initializer::Uniform(-0.5f, 0.5f), true);
  Param(main, startup, "bn.scale", {4}, oldir::Initializer::Uniform(0.5f, 1.5f), true);
  Param(main, startup, "bn.bias", {4}, oldir::Initializer::Uniform(-0.1f, 0.1f), true);
  Param(main, startup, "bn.mean", {4}, oldir::Initializer::Constant(0.0f), false);
  Param(main, startup, "bn.var", {4}, oldir::Initializer::Constant(1.0f), false);
  Param(main, startup, "fc.w", {4, kClasses}, oldir::Initializer::Uniform(-0.5f, 0.5f), true);

  var("conv.out", nchw(4, 8, 8));
  b.AppendOp("conv2d", {{"Input", {"image"}}, {"Filter", {"conv.w"}}}, {{"Output", {"conv.out"}}},
             {{"strides", std::vector<int32_t>{1, 1}},
              {"paddings", std::vector<int32_t>{1, 1}},
              {"padding_algorithm", std::string("EXPLICIT")},
              {"dilations", std::vector<int32_t>{1, 1}},
              {"groups", int32_t{1}},
              {"data_format", format}});
  var("bn.saved_mean", {4});
  var("bn.saved_var", {4});
  var("bn.out", nchw(4, 8, 8));
  b.AppendOp("batch_norm",
             {{"X", {"conv.out"}},
              {"Scale", {"bn.scale"}},
              {"Bias", {"bn.bias"}},
              {"Mean", {"bn.mean"}},
              {"Variance", {"bn.var"}}},
             {{"Y", {"bn.out"}},
              {"MeanOut", {"bn.mean"}},
              {"VarianceOut", {"bn.var"}},
              {"SavedMean", {"bn.saved_mean"}},
              {"SavedVariance", {"bn.saved_var"}}},
             {{"momentum", 0.9f},
              {"epsilon", 1e-5f},
              {"is_test", false},
              {"data_layout", format},
              {"use_global_stats", o.global_stats},
              {"trainable_statistics", false}});
  var("relu.out", nchw(4, 8, 8));
  b.AppendOp("relu", {{"X", {"bn.out"}}}, {{"Out", {"relu.out"}}});
  var("pool.out", nchw(4, 4, 4));
  b.AppendOp("pool2d", {{"X", {"relu.out"}}}, {{"Out", {"pool.out"}}},
             {{"pooling_type", std::string("max")},
              {"ksize", std::vector<int32_t>{3, 3}},
              {"strides", std::vector<int32_t>{2, 2}},
              {"paddings", std::vector<int32_t>{1, 1}},
              {"ceil_mode", false},
              {"exclusive", true},
              {"adaptive", false},
              {"global_pooling", false},
              {"data_format", format},
              {"padding_algorithm", std::string("EXPLICIT")}});
  var("gap.out", nchw(4, 1, 1));
  b.AppendOp("pool2d", {{"X", {"pool.out"}}}, {{"Out", {"gap.out"}}},
             {{"pooling_type", std::string("avg")},
              {"ksize", std::vector<int32_t>{1, 1}},
              {"adaptive", true},
              {"data_format", format}});
  var("fc.out", {-1, kClasses});
  b.AppendOp("mul", {{"X", {"gap.out"}}, {"Y", {"fc.w"}}}, {{"Out", {"fc.out"}}},
             {{"x_num_col_dims", int32_t{1}}, {"y_num_col_dims", int32_t{1}}});
  var("softmax", {-1, kClasses});
  var("loss.vec", {-1, 1});
  b.AppendOp("softmax_with_cross_entropy", {{"Logits", {"fc.out"}}, {"Label", {"label"}}},
             {{"Softmax", {"softmax"}}, {"Loss", {"loss.vec"}}},
             {{"soft_label", false},
              {"numeric_stable_mode", true},
              {"ignore_index", int32_t{-100}},
              {"axis", int32_t{-1}}});
  var("loss", {});
  b.AppendOp("mean", {{"X", {"loss.vec"}}}, {{"Out", {"loss"}}});
  var("topk.out", {-1, 2});
  var("topk.idx", {-1, 2}, pf::VarType::INT64);
  b.AppendOp("top_k", {{"X", {"softmax"}}}, {{"Out", {"topk.out"}}, {"Indices", {"topk.idx"}}},
             {{"k", int32_t{2}}});
  var("acc", {});
  var("acc.correct", {}, pf::VarType::INT32);
  var("acc.total", {}, pf::VarType::INT32);
  b.AppendOp("accuracy", {{"Out", {"topk.out"}}, {"Indices", {"topk.idx"}}, {"Label", {"label"}}},
             {{"Accuracy", {"acc"}}, {"Correct", {"acc.correct"}}, {"Total", {"acc.total"}}});

  // top_k_v2 (smallest, along the classes) and the logical ops on comparisons of the softmax:
  // intermediates both sides compute.
  var("topk2.out", {-1, 2});
  var("topk2.idx", {-1, 2}, pf::VarType::INT64);
  b.AppendOp("top_k_v2", {{"X", {"softmax"}}}, {{"Out", {"topk2.out"}}, {"Indices", {"topk2.idx"}}},
             {{"k", int32_t{2}}, {"axis", int32_t{-1}}, {"largest", false}, {"sorted", true}});
  const std::pair<const char*, float> thresholds[] = {{"low", 0.15f}, {"high", 0.3f}};
  for (const auto& [name, value] : thresholds) {
    var(name, {1});
    b.AppendOp("fill_constant", {}, {{"Out", {name}}},
               {{"shape", std::vector<int64_t>{1}},
                {"value", value},
                {"dtype", int32_t{pf::VarType::FP32}}});
  }
  var("above", {-1, kClasses}, pf::VarType::BOOL);
  var("below", {-1, kClasses}, pf::VarType::BOOL);
  b.AppendOp("greater_than", {{"X", {"softmax"}}, {"Y", {"low"}}}, {{"Out", {"above"}}},
             {{"axis", int32_t{-1}}, {"force_cpu", false}});
  b.AppendOp("less_than", {{"X", {"softmax"}}, {"Y", {"high"}}}, {{"Out", {"below"}}},
             {{"axis", int32_t{-1}}, {"force_cpu", false}});
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    var(std::string(op) + ".out", {-1, kClasses}, pf::VarType::BOOL);
    b.AppendOp(op, {{"X", {"above"}}, {"Y", {"below"}}}, {{"Out", {std::string(op) + ".out"}}});
  }

  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads, oldir::AppendBackward(main, "loss"));
  oldir::OptimizerOptions optimizer;
  optimizer.kind = oldir::OptimizerKind::kMomentum;
  optimizer.learning_rate = 0.1f;
  optimizer.momentum = 0.9f;
  optimizer.use_nesterov = o.nesterov_l2;
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(main, startup, grads, optimizer));
  if (o.nesterov_l2) {
    // Paddle's Momentum(weight_decay=L2Decay(c)) writes the decay into the op itself.
    for (pf::OpDesc& op : *main.root().desc()->mutable_ops()) {
      if (op.type() != "momentum") continue;
      for (pf::OpDesc::Attr& attr : *op.mutable_attrs()) {
        if (attr.name() == "regularization_method") attr.set_s("l2_decay");
        if (attr.name() == "regularization_coeff") attr.set_f(0.01f);
      }
    }
  }
  // The fetch ops Paddle's executor inserts: the loss, then the accuracy.
  main.root().CreateTypedVar("fetch", pf::VarType::FETCH_LIST, true);
  int32_t col = 0;
  for (const char* name : {"loss", "acc"}) {
    main.root().AppendOp("fetch", {{"X", {name}}}, {{"Out", {"fetch"}}}, {{"col", col++}});
  }
  return ConvNet{main.Build(), startup.Build()};
}

rt::FeedMap Feeds(bool nhwc) {
  rt::FeedMap feeds;
  const std::vector<int64_t> shape =
      nhwc ? std::vector<int64_t>{kBatch, 8, 8, 3} : std::vector<int64_t>{kBatch, 3, 8, 8};
  feeds["image"] = rt::testing::RandomTensor(DType::kFloat32, shape, 21, -1.0, 1.0);
  feeds["label"] = rt::Tensor::FromVector(std::vector<int64_t>{3, 0, 4, 1}, {kBatch, 1});
  return feeds;
}

TEST(ConvNetParityTest, TrainingIsBitIdenticalToItsTranslation) {
  for (bool nhwc : {false, true}) {
    for (int variant = 0; variant < 3; ++variant) {
      const bool nesterov_l2 = variant == 1;
      const bool global_stats = variant == 2;
      StatusOr<ConvNet> net =
          BuildConvNet({.nhwc = nhwc, .nesterov_l2 = nesterov_l2, .global_stats = global_stats});
      ASSERT_TRUE(net.ok()) << net.status().ToString();
      for (rt::GemmMode gemm : {rt::GemmMode::kBlas, rt::GemmMode::kReference}) {
        const std::string name =
            fmt::format("{} {} {}", nhwc ? "NHWC" : "NCHW",
                        nesterov_l2 ? "nesterov+l2_decay" : "momentum", rt::GemmModeName(gemm));
        SCOPED_TRACE(name);
        ParityPrograms programs{.legacy_main = &net->main,
                                .legacy_startup = &net->startup,
                                .new_main = nullptr,
                                .new_startup = nullptr,
                                .legacy_file = name,
                                .new_file = ""};
        ParityOptions options;
        options.steps = 3;
        options.seed = 5;
        options.feeds = Feeds(nhwc);
        options.gemm = gemm;
        StatusOr<ParityResult> result = RunParity(programs, options);
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        const ParityReport& report = result->report;
        EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
        EXPECT_FALSE(report.first_divergence.has_value());
        // loss and accuracy per step; conv.w, bn.scale, bn.bias, fc.w, their velocities, the two
        // running statistics and the learning rate after the startup and each step.
        EXPECT_EQ(report.Compared(TensorGroup::kFetch), 2 * 3);
        EXPECT_GE(report.Compared(TensorGroup::kParameter), 11 * 4);
        EXPECT_GT(report.Compared(TensorGroup::kIntermediate), 0);
        EXPECT_EQ(report.NotCompared(), 0);
      }
    }
  }
}

}  // namespace
}  // namespace irm::diff
