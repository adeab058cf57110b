// The conv-net rows of the legacy binding table (legacy_binding_rows.h; conv2d is with the other
// nn rows in legacy_bindings.cc): pool2d, batch_norm, mul, top_k, top_k_v2, accuracy and the
// grads, written from the legacy names of paddle/phi/ops/yaml/op_compat.yaml, the arguments of
// legacy/static_ops.yaml and the makers in paddle/fluid/operators/batch_norm_op.cc.
#include <vector>

#include "reference_runtime/legacy_binding_rows.h"

namespace irm::rt {

using namespace legacy_binding_rows;  // NOLINT(build/namespaces): the row constructors

void AddConvNetBindings(std::vector<LegacyBinding>& t) {
  // pool2d is phi's pool2d(x; kernel_size = ksize, ...) (legacy/static_ops.yaml defaults).
  const std::vector<AttrRule> pool2d = {Required("ksize", "kernel_size", AttrKind::kInts),
                                        Required("pooling_type", "pooling_type", AttrKind::kString),
                                        Ints("strides", "strides", {1, 1}),
                                        Ints("paddings", "paddings", {0, 0}),
                                        Bool("ceil_mode", "ceil_mode", false),
                                        Bool("exclusive", "exclusive", true),
                                        Str("data_format", "data_format", "NCHW"),
                                        Bool("global_pooling", "global_pooling", false),
                                        Bool("adaptive", "adaptive", false),
                                        Str("padding_algorithm", "padding_algorithm", "EXPLICIT")};
  t.push_back({"pool2d", "pool2d", {One("X")}, {One("Out")}, pool2d});
  t.push_back({"pool2d_grad",
               "pool2d_grad",
               {One("X"), One("Out"), One("Out@GRAD")},
               {One("X@GRAD")},
               pool2d});

  // batch_norm is phi's batch_norm(x, mean, variance, scale, bias); data_layout is data_format;
  // MomentumTensor overrides momentum (BatchNormKernel's caller reads it first).
  const std::vector<AttrRule> batch_norm = {
      Bool("is_test", "is_test", false),
      Float("momentum", "momentum", 0.9f),
      Float("epsilon", "epsilon", 1e-5f),
      Str("data_layout", "data_format", "NCHW"),
      Bool("use_global_stats", "use_global_stats", false),
      Bool("trainable_statistics", "trainable_statistics", false)};
  t.push_back({"batch_norm",
               "batch_norm",
               {One("X"), One("Mean"), One("Variance"), Opt("Scale"), Opt("Bias")},
               {One("Y"), One("MeanOut"), One("VarianceOut"), One("SavedMean"),
                One("SavedVariance"), One("ReserveSpace")},
               batch_norm,
               {{"MomentumTensor", "momentum", TensorAttrKind::kScalar}}});
  // The grad reads the running statistics from MeanOut / VarianceOut (the vars Mean / Variance
  // also name when the grad maker feeds them).
  t.push_back({"batch_norm_grad",
               "batch_norm_grad",
               {One("X"), Opt("Scale"), Opt("Bias"), Opt("MeanOut"), Opt("VarianceOut"),
                One("SavedMean"), One("SavedVariance"), Opt("ReserveSpace"), One("Y@GRAD")},
               {One("X@GRAD"), One("Scale@GRAD"), One("Bias@GRAD")},
               batch_norm});

  // mul is phi's matmul_with_flatten (legacy/static_ops.yaml).
  const std::vector<AttrRule> mul = {Int("x_num_col_dims", "x_num_col_dims", 1),
                                     Int("y_num_col_dims", "y_num_col_dims", 1)};
  t.push_back({"mul", "matmul_with_flatten", {One("X"), One("Y")}, {One("Out")}, mul});
  t.push_back({"mul_grad",
               "matmul_with_flatten_grad",
               {One("X"), One("Y"), One("Out@GRAD")},
               {One("X@GRAD"), One("Y@GRAD")},
               mul});

  // top_k is phi's topk_v1(x, k); top_k_v2 is topk(x, k, axis, largest, sorted). K overrides k.
  t.push_back({"top_k",
               "topk_v1",
               {One("X")},
               {One("Out"), One("Indices")},
               {Int("k", "k", 1)},
               {{"K", "k", TensorAttrKind::kInt}}});
  t.push_back({"top_k_v2",
               "topk",
               {One("X")},
               {One("Out"), One("Indices")},
               {Int("k", "k", 1), Int("axis", "axis", -1), Bool("largest", "largest", true),
                Bool("sorted", "sorted", true)},
               {{"K", "k", TensorAttrKind::kInt}}});
  t.push_back({"accuracy",
               "accuracy",
               {One("Out"), One("Indices"), One("Label")},
               {One("Accuracy"), One("Correct"), One("Total")}});
}

}  // namespace irm::rt
