// A small detection training program built with oldir's ProgramBuilder — affine_channel (the
// frozen batch_norm of Paddle's Faster R-CNN backbones), anchor_generator on its output,
// generate_proposals_v2 (decode, clip, filter, NMS) over those anchors, roi_align of fed boxes
// (RoisNum per image), gather of the pooled boxes, smooth_l1_loss and
// sigmoid_cross_entropy_with_logits against fed targets, reduce_prod of the scale as a
// regulariser, shape of the gathered boxes — with append_backward (the grads of all of them, and
// affine_channel_grad without the Bias its legacy maker does not feed) and momentum, run as
// legacy and as translated on the fly: bit-identical over 3 steps, every detection op compared as
// an intermediate on both sides.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
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

struct Net {
  oldir::Program main;
  oldir::Program startup;
};

StatusOr<Net> BuildNet() {
  oldir::ProgramBuilder main, startup;
  oldir::BlockBuilder& b = main.root();
  auto feed_var = [&](const std::string& name, std::vector<int64_t> dims,
                      pf::VarType::Type dtype = pf::VarType::FP32) {
    b.CreateVar(name, dtype, dims,
                {.persistable = false,
                 .stop_gradient = true,
                 .is_parameter = false,
                 .need_check_feed = true,
                 .lod_level = 0});
  };
  auto var = [&](const std::string& name, std::vector<int64_t> dims,
                 pf::VarType::Type dtype = pf::VarType::FP32) { b.CreateVar(name, dtype, dims); };
  feed_var("image", {-1, 2, 6, 6});
  feed_var("rois", {-1, 4});
  feed_var("rois_num", {-1}, pf::VarType::INT32);
  feed_var("pick", {-1}, pf::VarType::INT64);
  feed_var("target", {-1, 2, 2, 2});
  feed_var("label", {-1, 2, 2, 2});
  for (const auto& [name, init] : {std::pair<std::string, oldir::Initializer>{
                                       "ac.scale", oldir::Initializer::Uniform(0.5f, 1.5f)},
                                   {"ac.bias", oldir::Initializer::Uniform(-0.1f, 0.1f)}}) {
    main.root().CreateVar(name, pf::VarType::FP32, {2},
                          {.persistable = true,
                           .stop_gradient = false,
                           .is_parameter = true,
                           .need_check_feed = false,
                           .lod_level = 0});
    oldir::AppendInitializer(startup, name, pf::VarType::FP32, {2}, init, /*program_seed=*/7);
  }

  var("ac.out", {-1, 2, 6, 6});
  b.AppendOp("affine_channel", {{"X", {"image"}}, {"Scale", {"ac.scale"}}, {"Bias", {"ac.bias"}}},
             {{"Out", {"ac.out"}}}, {{"data_layout", std::string("NCHW")}});
  var("anchors", {6, 6, 2, 4});
  var("anchor.vars", {6, 6, 2, 4});
  b.AppendOp("anchor_generator", {{"Input", {"ac.out"}}},
             {{"Anchors", {"anchors"}}, {"Variances", {"anchor.vars"}}},
             {{"anchor_sizes", std::vector<float>{4.0f}},
              {"aspect_ratios", std::vector<float>{0.5f, 1.0f}},
              {"variances", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f}},
              {"stride", std::vector<float>{1.0f, 1.0f}},
              {"offset", 0.5f}});
  // Region proposals from fed scores and deltas over those anchors (no gradient).
  feed_var("rpn.scores", {-1, 2, 6, 6});
  feed_var("rpn.deltas", {-1, 8, 6, 6});
  feed_var("im_shape", {-1, 2});
  var("rpn.rois", {-1, 4});
  var("rpn.probs", {-1, 1});
  var("rpn.rois_num", {-1}, pf::VarType::INT32);
  b.AppendOp(
      "generate_proposals_v2",
      {{"Scores", {"rpn.scores"}},
       {"BboxDeltas", {"rpn.deltas"}},
       {"ImShape", {"im_shape"}},
       {"Anchors", {"anchors"}},
       {"Variances", {"anchor.vars"}}},
      {{"RpnRois", {"rpn.rois"}}, {"RpnRoiProbs", {"rpn.probs"}}, {"RpnRoisNum", {"rpn.rois_num"}}},
      {{"pre_nms_topN", int32_t{20}},
       {"post_nms_topN", int32_t{5}},
       {"nms_thresh", 0.5f},
       {"min_size", 0.5f},
       {"eta", 1.0f},
       {"pixel_offset", true}});
  var("roi.out", {-1, 2, 2, 2});
  b.AppendOp("roi_align", {{"X", {"ac.out"}}, {"ROIs", {"rois"}}, {"RoisNum", {"rois_num"}}},
             {{"Out", {"roi.out"}}},
             {{"pooled_height", int32_t{2}},
              {"pooled_width", int32_t{2}},
              {"spatial_scale", 1.0f},
              {"sampling_ratio", int32_t{2}},
              {"aligned", false}});
  var("picked", {-1, 2, 2, 2});
  b.AppendOp("gather", {{"X", {"roi.out"}}, {"Index", {"pick"}}}, {{"Out", {"picked"}}},
             {{"axis", int32_t{0}}, {"overwrite", true}});
  var("picked.shape", {4}, pf::VarType::INT32);
  b.AppendOp("shape", {{"Input", {"picked"}}}, {{"Out", {"picked.shape"}}});
  var("sl1.diff", {-1, 2, 2, 2});
  var("sl1.out", {-1, 1});
  b.AppendOp("smooth_l1_loss", {{"X", {"picked"}}, {"Y", {"target"}}},
             {{"Diff", {"sl1.diff"}}, {"Out", {"sl1.out"}}}, {{"sigma", 3.0f}});
  var("sce.out", {-1, 2, 2, 2});
  b.AppendOp("sigmoid_cross_entropy_with_logits", {{"X", {"picked"}}, {"Label", {"label"}}},
             {{"Out", {"sce.out"}}}, {{"normalize", true}, {"ignore_index", int32_t{-100}}});
  var("prod", {});
  b.AppendOp("reduce_prod", {{"X", {"ac.scale"}}}, {{"Out", {"prod"}}},
             {{"dim", std::vector<int32_t>{0}}, {"keep_dim", false}, {"reduce_all", false}});
  var("sl1.mean", {});
  var("sce.mean", {});
  b.AppendOp("mean", {{"X", {"sl1.out"}}}, {{"Out", {"sl1.mean"}}});
  b.AppendOp("mean", {{"X", {"sce.out"}}}, {{"Out", {"sce.mean"}}});
  var("loss.0", {});
  var("loss", {});
  b.AppendOp("elementwise_add", {{"X", {"sl1.mean"}}, {"Y", {"sce.mean"}}}, {{"Out", {"loss.0"}}},
             {{"axis", int32_t{-1}}});
  b.AppendOp("elementwise_add", {{"X", {"loss.0"}}, {"Y", {"prod"}}}, {{"Out", {"loss"}}},
             {{"axis", int32_t{-1}}});

  IRM_ASSIGN_OR_RETURN(std::vector<oldir::ParamGrad> grads, oldir::AppendBackward(main, "loss"));
  oldir::OptimizerOptions optimizer;
  optimizer.kind = oldir::OptimizerKind::kMomentum;
  optimizer.learning_rate = 0.1f;
  optimizer.momentum = 0.9f;
  IRM_RETURN_IF_ERROR(oldir::AppendOptimizer(main, startup, grads, optimizer));
  main.root().CreateTypedVar("fetch", pf::VarType::FETCH_LIST, true);
  main.root().AppendOp("fetch", {{"X", {"loss"}}}, {{"Out", {"fetch"}}}, {{"col", int32_t{0}}});
  return Net{main.Build(), startup.Build()};
}

rt::FeedMap Feeds() {
  rt::FeedMap feeds;
  feeds["image"] = rt::testing::RandomTensor(DType::kFloat32, {2, 2, 6, 6}, 41, -1.0, 1.0);
  // Three boxes: the first on image 0, the others on image 1, one reaching past the border.
  feeds["rois"] = rt::Tensor::FromVector(
      std::vector<float>{0, 0, 4, 4, 1, 1.5f, 5, 3, 2, 0.5f, 6.5f, 5}, {3, 4});
  feeds["rois_num"] = rt::Tensor::FromVector(std::vector<int32_t>{1, 2}, {2});
  feeds["pick"] = rt::Tensor::FromVector(std::vector<int64_t>{2, 0, 1, 2}, {4});
  feeds["target"] = rt::testing::RandomTensor(DType::kFloat32, {4, 2, 2, 2}, 42, -1.0, 1.0);
  feeds["label"] = rt::testing::RandomTensor(DType::kFloat32, {4, 2, 2, 2}, 43, 0.0, 1.0);
  feeds["rpn.scores"] = rt::testing::RandomTensor(DType::kFloat32, {2, 2, 6, 6}, 44, 0.0, 1.0);
  feeds["rpn.deltas"] = rt::testing::RandomTensor(DType::kFloat32, {2, 8, 6, 6}, 45, -0.5, 0.5);
  feeds["im_shape"] = rt::Tensor::FromVector(std::vector<float>{6, 6, 6, 6}, {2, 2});
  return feeds;
}

TEST(DetectionParityTest, TrainingIsBitIdenticalToItsTranslation) {
  StatusOr<Net> net = BuildNet();
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  std::set<std::string> grads;
  for (const pf::OpDesc& op : net->main.root().desc().ops()) {
    if (op.type().ends_with("_grad")) grads.insert(op.type());
  }
  for (const char* grad :
       {"affine_channel_grad", "roi_align_grad", "gather_grad", "smooth_l1_loss_grad",
        "sigmoid_cross_entropy_with_logits_grad", "reduce_prod_grad"}) {
    EXPECT_EQ(grads.count(grad), 1u) << grad;
  }
  ParityPrograms programs{.legacy_main = &net->main,
                          .legacy_startup = &net->startup,
                          .new_main = nullptr,
                          .new_startup = nullptr,
                          .legacy_file = "detection",
                          .new_file = ""};
  ParityOptions options;
  options.steps = 3;
  options.seed = 5;
  options.feeds = Feeds();
  StatusOr<ParityResult> result = RunParity(programs, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const ParityReport& report = result->report;
  EXPECT_TRUE(report.parity()) << RenderMarkdown(report);
  EXPECT_FALSE(report.first_divergence.has_value());
  EXPECT_EQ(report.NotCompared(), 0);
  EXPECT_EQ(report.Compared(TensorGroup::kFetch), 3);
  // ac.scale, ac.bias, their velocities and the learning rate after the startup and each step.
  EXPECT_GE(report.Compared(TensorGroup::kParameter), 5 * 4);
  // Every detection op, forward and grad, wrote a compared intermediate on both sides.
  std::set<std::string> compared;
  for (const ComparedTensor& t : report.tensors) {
    if (t.group != TensorGroup::kIntermediate || !t.compared) continue;
    compared.insert(t.old_op.substr(0, t.old_op.find(' ')));
  }
  for (const char* op :
       {"affine_channel", "anchor_generator", "generate_proposals_v2", "roi_align", "gather",
        "shape", "smooth_l1_loss", "sigmoid_cross_entropy_with_logits", "reduce_prod",
        "affine_channel_grad", "roi_align_grad", "gather_grad", "smooth_l1_loss_grad",
        "sigmoid_cross_entropy_with_logits_grad", "reduce_prod_grad"}) {
    EXPECT_EQ(compared.count(op), 1u) << op;
  }
}

// rpn_target_assign samples anchors at random (kernels/detection.cc): it translates, and both
// runtimes refuse it by name at its op.
TEST(DetectionParityTest, RpnTargetAssignIsRefusedByNameAtItsOp) {
  oldir::ProgramBuilder main, startup;
  oldir::BlockBuilder& b = main.root();
  for (const auto& [name, dims] : {std::pair<std::string, std::vector<int64_t>>{"anchor", {-1, 4}},
                                   {"gt_boxes", {-1, 4}},
                                   {"is_crowd", {-1}},
                                   {"im_info", {-1, 3}}}) {
    b.CreateVar(name, pf::VarType::FP32, dims,
                {.persistable = false,
                 .stop_gradient = true,
                 .is_parameter = false,
                 .need_check_feed = true,
                 .lod_level = 0});
  }
  const char* outs[] = {"loc_index", "score_index", "target_bbox", "target_label", "inside_weight"};
  for (const char* name : outs) b.CreateVar(name, pf::VarType::FP32, {-1});
  b.AppendOp("rpn_target_assign",
             {{"Anchor", {"anchor"}},
              {"GtBoxes", {"gt_boxes"}},
              {"IsCrowd", {"is_crowd"}},
              {"ImInfo", {"im_info"}}},
             {{"LocationIndex", {outs[0]}},
              {"ScoreIndex", {outs[1]}},
              {"TargetBBox", {outs[2]}},
              {"TargetLabel", {outs[3]}},
              {"BBoxInsideWeight", {outs[4]}}},
             {{"use_random", true}});
  const oldir::Program main_program = main.Build();
  const oldir::Program startup_program = startup.Build();
  ParityPrograms programs{.legacy_main = &main_program,
                          .legacy_startup = &startup_program,
                          .new_main = nullptr,
                          .new_startup = nullptr,
                          .legacy_file = "rpn.pdmodel",
                          .new_file = ""};
  ParityOptions options;
  options.steps = 1;
  for (const char* name : {"anchor", "gt_boxes"}) {
    options.feeds[name] = rt::testing::RandomTensor(DType::kFloat32, {2, 4}, 1);
  }
  options.feeds["im_info"] = rt::testing::RandomTensor(DType::kFloat32, {2, 3}, 1);
  options.feeds["is_crowd"] = rt::testing::RandomTensor(DType::kFloat32, {2}, 1);
  StatusOr<ParityResult> result = RunParity(programs, options);
  ASSERT_FALSE(result.ok());
  const std::string message = result.status().ToString();
  EXPECT_NE(message.find("rpn_target_assign is not run"), std::string::npos) << message;
  EXPECT_NE(message.find("op 0 (rpn_target_assign)"), std::string::npos) << message;
}

}  // namespace
}  // namespace irm::diff
