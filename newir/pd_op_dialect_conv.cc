// The conv-net rows of the `pd_op` dialect, written from Paddle's paddle/phi/ops/yaml/ops.yaml
// (conv2d, pool2d, topk, accuracy, logical_*), backward.yaml (conv2d_grad, pool2d_grad),
// inconsistent/static_ops.yaml and static_backward.yaml (batch_norm, batch_norm_grad) and
// legacy/static_ops.yaml (topk_v1) as PIR generates them: operands and results in yaml order,
// mutable IntArray / Scalar arguments as operands, `int[]` attributes as int32 arrays. Where the
// yaml gives an attribute no default, the legacy op maker's default is the row's (the translator
// fills them so, paddle/fluid/ir_adaptor/translator/op_translator.cc's Pool2dOpTranscriber and
// BatchNormOpTranscriber).
#include "newir/pd_op_dialect_conv.h"

#include "newir/pd_op_dialect_detection.h"

#include <string>
#include <utility>
#include <vector>

namespace irm::newir {

using namespace pd_op_table;  // NOLINT(build/namespaces): the row builders, read as a table

namespace {

// conv2d's attributes, shared by its grad (backward.yaml repeats them).
std::vector<AttrSpec> Conv2dAttrs() {
  return {Ints("strides", {1, 1}),   Ints("paddings", {0, 0}), Str("padding_algorithm", "EXPLICIT"),
          Ints("dilations", {1, 1}), I32("groups", 1),         Str("data_format", "NCHW")};
}

// pool2d's attributes after kernel_size (legacy/static_ops.yaml defaults), shared by its grad.
std::vector<AttrSpec> Pool2dAttrs() {
  return {Ints("strides", {1, 1}),
          Ints("paddings", {0, 0}),
          Bool("ceil_mode", false),
          Bool("exclusive", true),
          Str("data_format", "NCHW"),
          Str("pooling_type", ""),
          Bool("global_pooling", false),
          Bool("adaptive", false),
          Str("padding_algorithm", "EXPLICIT")};
}

// batch_norm's attributes (BatchNormOpMaker's defaults), in the yaml order of the grad.
std::vector<AttrSpec> BatchNormAttrs() {
  return {F32("momentum", 0.9f),           F32("epsilon", 1e-5f),
          Str("data_format", "NCHW"),      Bool("is_test", false),
          Bool("use_global_stats", false), Bool("trainable_statistics", false)};
}

}  // namespace

void AddConvolution(Table& t) {
  t.Add(Op("conv2d", "2-D convolution (NCHW or NHWC input, OIHW filter)",
           {In("input"), In("filter")}, {Out("out")}, Conv2dAttrs()));
  // A grad nobody asked for (the input of a conv fed by data) is an absent result, as the legacy
  // grad maker leaves its slot empty.
  t.Add(Op("conv2d_grad", "gradient of conv2d", {In("input"), In("filter"), In("out_grad")},
           {OptOut("input_grad"), OptOut("filter_grad")}, Conv2dAttrs()));

  t.Add(Op("pool2d", "2-D max or average pooling", {In("x"), IntArrayIn("kernel_size")},
           {Out("out")}, Pool2dAttrs()));
  t.Add(Op("pool2d_grad", "gradient of pool2d",
           {In("x"), In("out"), In("out_grad"), IntArrayIn("kernel_size")}, {OptOut("x_grad")},
           Pool2dAttrs()));

  // batch_norm_ writes the running statistics in place (the yaml's view mean -> mean_out,
  // variance -> variance_out): what the translator makes of a legacy batch_norm whose MeanOut is
  // its Mean.
  t.AddWithInplace(Op("batch_norm", "batch normalization",
                      {In("x"), In("mean"), In("variance"), Opt("scale"), Opt("bias")},
                      {Out("out"), Out("mean_out"), Out("variance_out"), Out("saved_mean"),
                       Out("saved_variance"), OptOut("reserve_space")},
                      BatchNormAttrs()));
  t.Add(Op("batch_norm_grad", "gradient of batch_norm",
           {In("x"), Opt("scale"), Opt("bias"), Opt("mean_out"), Opt("variance_out"),
            In("saved_mean"), In("saved_variance"), Opt("reserve_space"), In("out_grad")},
           {OptOut("x_grad"), OptOut("scale_grad"), OptOut("bias_grad")}, BatchNormAttrs()));

  // k is a mutable Scalar(int).
  t.Add(Op("topk", "the k largest (or smallest) values along an axis and their indices",
           {In("x"), In("k")}, {Out("out"), Out("indices")},
           {I32("axis", -1), Bool("largest", true), Bool("sorted", true)}));
  t.Add(Op("topk_v1", "the k largest values along the last axis and their indices",
           {In("x"), In("k")}, {Out("out"), Out("indices")}));
  t.Add(Op("accuracy", "top-k accuracy of indices against label",
           {In("x"), In("indices"), In("label")}, {Out("accuracy"), Out("correct"), Out("total")}));
  // logical_not is in the dialect's math section; the binary ones write x in their `_` form.
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) {
    t.AddWithInplace(
        Op(name, std::string("elementwise ") + name, {In("x"), In("y")}, {Out("out")}));
  }
  AddDetection(t);
}

}  // namespace irm::newir
