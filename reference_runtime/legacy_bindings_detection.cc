// The detection rows of the legacy binding table (legacy_binding_rows.h): gather, shape,
// smooth_l1_loss, sigmoid_cross_entropy_with_logits, affine_channel, anchor_generator, roi_align,
// generate_proposals_v2, rpn_target_assign and the grads (elementwise_pow, floor and reduce_prod
// are with their families in legacy_bindings.cc), written from the legacy names of
// paddle/phi/ops/yaml/op_compat.yaml, the arguments of ops.yaml / backward.yaml and the makers of
// Paddle 2.x (smooth_l1_loss_op.cc, detection/*_op.cc).
#include <vector>

#include "reference_runtime/legacy_binding_rows.h"

namespace irm::rt {

using namespace legacy_binding_rows;  // NOLINT(build/namespaces): the row constructors

void AddDetectionBindings(std::vector<LegacyBinding>& t) {
  // gather (gather_op.cc): the tensor Axis overrides attribute axis (default 0).
  const std::vector<TensorAttrRule> axis = {{"Axis", "axis", TensorAttrKind::kInt}};
  t.push_back(
      {"gather", "gather", {One("X"), One("Index")}, {One("Out")}, {Int("axis", "axis", 0)}, axis});
  t.push_back({"gather_grad",
               "gather_grad",
               {One("X"), One("Index"), One("Out@GRAD")},
               {One("X@GRAD")},
               {Int("axis", "axis", 0)},
               axis,
               {2, ""}});
  t.push_back({"shape", "shape", {One("Input")}, {One("Out")}});

  const std::vector<AttrRule> smooth_l1 = {Float("sigma", "sigma", 1.0f)};
  t.push_back({"smooth_l1_loss",
               "smooth_l1_loss",
               {One("X"), One("Y"), Opt("InsideWeight"), Opt("OutsideWeight")},
               {One("Diff"), One("Out")},
               smooth_l1});
  // The kernel's dtype is Diff's (its first inputs are optional).
  t.push_back({"smooth_l1_loss_grad",
               "smooth_l1_loss_grad",
               {Opt("InsideWeight"), Opt("OutsideWeight"), One("Diff"), One("Out@GRAD")},
               {One("X@GRAD"), One("Y@GRAD")},
               smooth_l1,
               {},
               {2, ""}});

  const std::vector<AttrRule> sigmoid_ce = {Bool("normalize", "normalize", false),
                                            Int("ignore_index", "ignore_index", -100)};
  t.push_back({"sigmoid_cross_entropy_with_logits",
               "sigmoid_cross_entropy_with_logits",
               {One("X"), One("Label"), Opt("pos_weight")},
               {One("Out")},
               sigmoid_ce});
  t.push_back({"sigmoid_cross_entropy_with_logits_grad",
               "sigmoid_cross_entropy_with_logits_grad",
               {One("X"), One("Label"), Opt("pos_weight"), One("Out@GRAD")},
               {One("X@GRAD")},
               sigmoid_ce});

  // affine_channel (affine_channel_op.cc: data_layout defaults to "AnyLayout"); the grad's Bias
  // is optional (its maker does not feed it; the kernel never reads it).
  const std::vector<AttrRule> affine = {Str("data_layout", "data_layout", "AnyLayout")};
  t.push_back({"affine_channel",
               "affine_channel",
               {One("X"), One("Scale"), One("Bias")},
               {One("Out")},
               affine});
  t.push_back({"affine_channel_grad",
               "affine_channel_grad",
               {One("X"), One("Scale"), Opt("Bias"), One("Out@GRAD")},
               {One("X@GRAD"), One("Scale@GRAD"), One("Bias@GRAD")},
               affine});

  // anchor_generator (anchor_generator_op.cc): anchor_sizes, aspect_ratios and variances have no
  // default.
  t.push_back({"anchor_generator",
               "anchor_generator",
               {One("Input")},
               {One("Anchors"), One("Variances")},
               {Required("anchor_sizes", "anchor_sizes", AttrKind::kFloats),
                Required("aspect_ratios", "aspect_ratios", AttrKind::kFloats),
                Required("variances", "variances", AttrKind::kFloats),
                Floats("stride", "stride", {16.0, 16.0}), Float("offset", "offset", 0.5f)}});

  // roi_align (roi_align_op.cc defaults; op_compat.yaml: boxes is ROIs, boxes_num RoisNum).
  const std::vector<AttrRule> roi_align = {
      Int("pooled_height", "pooled_height", 1), Int("pooled_width", "pooled_width", 1),
      Float("spatial_scale", "spatial_scale", 1.0f), Int("sampling_ratio", "sampling_ratio", -1),
      Bool("aligned", "aligned", false)};
  t.push_back(
      {"roi_align", "roi_align", {One("X"), One("ROIs"), Opt("RoisNum")}, {One("Out")}, roi_align});
  t.push_back({"roi_align_grad",
               "roi_align_grad",
               {One("X"), One("ROIs"), Opt("RoisNum"), One("Out@GRAD")},
               {One("X@GRAD")},
               roi_align});

  // generate_proposals_v2 is phi's generate_proposals (op_compat.yaml: pre_nms_topN and
  // post_nms_topN are pre_nms_top_n and post_nms_top_n; GenerateProposalsV2OpMaker's defaults).
  t.push_back(
      {"generate_proposals_v2",
       "generate_proposals",
       {One("Scores"), One("BboxDeltas"), One("ImShape"), One("Anchors"), One("Variances")},
       {One("RpnRois"), One("RpnRoiProbs"), One("RpnRoisNum")},
       {Int("pre_nms_topN", "pre_nms_top_n", 6000), Int("post_nms_topN", "post_nms_top_n", 1000),
        Float("nms_thresh", "nms_thresh", 0.5f), Float("min_size", "min_size", 0.1f),
        Float("eta", "eta", 1.0f), Bool("pixel_offset", "pixel_offset", true)}});

  // rpn_target_assign: bound to a kernel that refuses it by name (kernels/detection.cc says why).
  t.push_back({"rpn_target_assign",
               "rpn_target_assign",
               {One("Anchor"), One("GtBoxes"), One("IsCrowd"), One("ImInfo")},
               {One("LocationIndex"), One("ScoreIndex"), One("TargetBBox"), One("TargetLabel"),
                One("BBoxInsideWeight")}});
}

}  // namespace irm::rt
