// The detection rows of the `pd_op` dialect, written from Paddle's paddle/phi/ops/yaml/ops.yaml
// (gather, shape, prod, sigmoid_cross_entropy_with_logits, affine_channel, roi_align,
// generate_proposals, floor), backward.yaml (their grads) and inconsistent/static_ops.yaml
// (anchor_generator): operands and results in yaml order, mutable Scalar / IntArray arguments as
// operands. Where the yaml gives an attribute no default, the legacy op maker's default is the
// row's, as in pd_op_dialect_conv.cc.
//
// Two rows have no yaml: Paddle 3 deleted smooth_l1_loss and rpn_target_assign (neither is in
// paddle/phi/ops/yaml at ccd49a3de4), so its translator has nothing to make of them. Their rows
// here keep the legacy makers' slots and defaults (paddle/fluid/operators/smooth_l1_loss_op.cc,
// detection/rpn_target_assign_op.cc of Paddle 2.x) in snake case, so that a legacy detection
// program translates whole instead of becoming opaque.
#include "newir/pd_op_dialect_detection.h"

#include <string>
#include <utility>
#include <vector>

namespace irm::newir {

using namespace pd_op_table;  // NOLINT(build/namespaces): the row builders, read as a table

namespace {

// A float32 array attribute (`float[]`), with a default or required.
AttrSpec Floats(std::string name, std::vector<float> v) {
  std::vector<Attribute> items;
  for (float f : v) items.push_back(Attribute::Float(f));
  AttrSpec spec = Def(std::move(name), Attribute::Array(std::move(items)));
  spec.element_kind = AttrKind::kFloat;
  return spec;
}
AttrSpec FloatsReq(std::string name) {
  AttrSpec spec = Req(std::move(name), AttrKind::kArray);
  spec.element_kind = AttrKind::kFloat;
  return spec;
}

std::vector<AttrSpec> ProdAttrs() { return {Bool("keepdim", false), Bool("reduce_all", false)}; }

std::vector<AttrSpec> RoiAlignAttrs() {
  return {I32("pooled_height", 1), I32("pooled_width", 1), F32("spatial_scale", 1.0f),
          I32("sampling_ratio", -1), Bool("aligned", false)};
}

}  // namespace

void AddDetection(Table& t) {
  // exponential_decay's floor (ops.yaml, in place x -> out); floor_grad is zero (backward.yaml:
  // out_grad alone). Its elementwise_pow is a row of the elementwise family
  // (pd_op_elementwise.h).
  t.AddWithInplace(Op("floor", "elementwise floor", {In("x")}, {Out("out")}));
  t.Add(Op("floor_grad", "gradient of floor (zero)", {In("out_grad")}, {Out("x_grad")}));

  // gather's axis is a mutable Scalar(int) (ops.yaml), an operand.
  t.Add(Op("gather", "rows of x at index along axis", {In("x"), In("index"), In("axis")},
           {Out("out")}));
  t.Add(Op("gather_grad", "gradient of gather", {In("x"), In("index"), In("out_grad"), In("axis")},
           {Out("x_grad")}));
  t.Add(Op("shape", "the shape of input as an int32 tensor", {In("input")}, {Out("out")}));
  // prod (ops.yaml): axis a mutable IntArray; keepdim and reduce_all as reduce_prod's maker.
  t.Add(Op("prod", "product over axes", {In("x"), IntArrayIn("axis")}, {Out("out")}, ProdAttrs()));
  t.Add(Op("prod_grad", "gradient of prod",
           {In("x"), In("out"), In("out_grad"), IntArrayIn("axis")}, {Out("x_grad")}, ProdAttrs()));

  t.Add(Op("smooth_l1_loss", "smooth L1 loss of x - y, summed per sample (legacy op)",
           {In("x"), In("y"), Opt("inside_weight"), Opt("outside_weight")},
           {Out("diff"), Out("out")}, {F32("sigma", 1.0f)}));
  t.Add(Op("smooth_l1_loss_grad", "gradient of smooth_l1_loss (legacy op)",
           {Opt("inside_weight"), Opt("outside_weight"), In("diff"), In("out_grad")},
           {OptOut("x_grad"), OptOut("y_grad")}, {F32("sigma", 1.0f)}));
  const std::vector<AttrSpec> sigmoid_ce = {Bool("normalize", false), I32("ignore_index", -100)};
  t.AddWithInplace(Op("sigmoid_cross_entropy_with_logits",
                      "elementwise sigmoid cross entropy of logits x against label",
                      {In("x"), In("label"), Opt("pos_weight")}, {Out("out")}, sigmoid_ce));
  t.Add(Op("sigmoid_cross_entropy_with_logits_grad",
           "gradient of sigmoid_cross_entropy_with_logits",
           {In("x"), In("label"), Opt("pos_weight"), In("out_grad")}, {Out("x_grad")}, sigmoid_ce));
  t.AddWithInplace(Op("affine_channel", "x * scale + bias per channel",
                      {In("x"), In("scale"), In("bias")}, {Out("out")},
                      {Str("data_layout", "AnyLayout")}));
  t.Add(Op("affine_channel_grad", "gradient of affine_channel",
           {In("x"), In("scale"), In("bias"), In("out_grad")},
           {OptOut("x_grad"), OptOut("scale_grad"), OptOut("bias_grad")},
           {Str("data_layout", "AnyLayout")}));

  // anchor_generator (inconsistent/static_ops.yaml).
  t.Add(Op("anchor_generator", "anchors of every feature-map position", {In("input")},
           {Out("anchors"), Out("variances_out")},
           {FloatsReq("anchor_sizes"), FloatsReq("aspect_ratios"), FloatsReq("variances"),
            Floats("stride", {16.0f, 16.0f}), F32("offset", 0.5f)}));
  t.Add(Op("roi_align", "bilinear pooling of x over regions of interest",
           {In("x"), In("boxes"), Opt("boxes_num")}, {Out("out")}, RoiAlignAttrs()));
  t.Add(Op("roi_align_grad", "gradient of roi_align",
           {In("x"), In("boxes"), Opt("boxes_num"), In("out_grad")}, {Out("x_grad")},
           RoiAlignAttrs()));
  // generate_proposals (generate_proposals_v2); the defaults are GenerateProposalsV2OpMaker's.
  t.Add(Op("generate_proposals", "region proposals: decode, clip, filter, NMS",
           {In("scores"), In("bbox_deltas"), In("im_shape"), In("anchors"), In("variances")},
           {Out("rpn_rois"), Out("rpn_roi_probs"), OptOut("rpn_rois_num")},
           {I32("pre_nms_top_n", 6000), I32("post_nms_top_n", 1000), F32("nms_thresh", 0.5f),
            F32("min_size", 0.1f), F32("eta", 1.0f), Bool("pixel_offset", true)}));
  t.Add(Op("rpn_target_assign", "RPN training targets: sampled anchors (legacy op)",
           {In("anchor"), In("gt_boxes"), In("is_crowd"), In("im_info")},
           {Out("location_index"), Out("score_index"), Out("target_bbox"), Out("target_label"),
            Out("bbox_inside_weight")},
           {I32("rpn_batch_size_per_im", 256), F32("rpn_straddle_thresh", 0.0f),
            F32("rpn_positive_overlap", 0.7f), F32("rpn_negative_overlap", 0.3f),
            F32("rpn_fg_fraction", 0.25f), Bool("use_random", true)}));
}

}  // namespace irm::newir
