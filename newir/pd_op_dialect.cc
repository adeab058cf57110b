// Op table of the `pd_op` dialect: the forward, grad and optimizer ops of the legacy op set under
// their PIR names (Paddle's paddle/phi/ops/yaml/op_compat.yaml), control flow (pd_op.if,
// pd_op.while) and the communication ops in both the phi style (all_reduce, ...) and the legacy c_
// style. Signatures follow Paddle's ops.yaml / backward.yaml as PIR generates them: IntArray and
// Scalar attributes that the yaml marks as mutable become operands (PIR materializes them with
// pd_op.full / pd_op.full_int_array), so they are listed here as operands, in yaml order; an
// IntArray one may also be a vector of scalar tensors (a list with tensor items). The verifier
// hooks of the ops with related types are in pd_op_verify.cc, the fold hooks in pd_op_folds.cc.
// These rows are the ops ir-migrate executes; the rest of Paddle's op set comes from the catalog
// (pd_op_catalog.h), registered after them.
#include <string>
#include <utility>
#include <vector>

#include "newir/dialect.h"
#include "newir/pd_op_catalog.h"
#include "newir/pd_op_dialect_conv.h"
#include "newir/pd_op_elementwise.h"
#include "newir/pd_op_folds.h"
#include "newir/pd_op_table.h"
#include "newir/pd_op_verify.h"

namespace irm::newir {
namespace {

using namespace pd_op_table;  // NOLINT(build/namespaces): the row builders, read as a table

void AddMath(Table& t) {
  t.Add(Verified(Op("matmul", "matrix product", {In("x"), In("y")}, {Out("out")},
                    {Bool("transpose_x", false), Bool("transpose_y", false)}),
                 VerifyMatmulOp));
  // A grad the backward pass does not need (x from a stop_gradient input) is absent: null type.
  t.Add(Op("matmul_grad", "gradient of matmul", {In("x"), In("y"), In("out_grad")},
           {OptOut("x_grad"), OptOut("y_grad")},
           {Bool("transpose_x", false), Bool("transpose_y", false)}));
  // The elementwise family, from its list (pd_op_elementwise.h).
  AddElementwise(t);

  t.AddWithInplace(Op("relu", "max(x, 0)", {In("x")}, {Out("out")}));
  t.Add(Op("gelu", "Gaussian error linear unit", {In("x")}, {Out("out")},
           {Bool("approximate", false)}));
  t.AddWithInplace(Op("tanh", "hyperbolic tangent", {In("x")}, {Out("out")}));
  t.AddWithInplace(Op("sigmoid", "logistic function", {In("x")}, {Out("out")}));
  t.AddWithInplace(Op("sqrt", "square root", {In("x")}, {Out("out")}));
  t.AddWithInplace(Op("softmax", "softmax along axis", {In("x")}, {Out("out")}, {I32("axis", -1)}));
  t.Add(Op("relu_grad", "gradient of relu", {In("out"), In("out_grad")}, {Out("x_grad")}));
  t.Add(Op("gelu_grad", "gradient of gelu", {In("x"), In("out_grad")}, {Out("x_grad")},
           {Bool("approximate", false)}));
  t.Add(Op("tanh_grad", "gradient of tanh", {In("out"), In("out_grad")}, {Out("x_grad")}));
  t.Add(Op("sigmoid_grad", "gradient of sigmoid", {In("out"), In("out_grad")}, {Out("x_grad")}));
  t.Add(Op("softmax_grad", "gradient of softmax", {In("out"), In("out_grad")}, {Out("x_grad")},
           {I32("axis", -1)}));

  t.Add(Op("layer_norm", "layer normalization", {In("x"), Opt("scale"), Opt("bias")},
           {Out("out"), Out("mean"), Out("variance")},
           {F32("epsilon", 1e-5f), I32("begin_norm_axis", 1)}));
  t.Add(Op("layer_norm_grad", "gradient of layer_norm",
           {In("x"), Opt("scale"), Opt("bias"), In("mean"), In("variance"), In("out_grad")},
           {Out("x_grad"), OptOut("scale_grad"), OptOut("bias_grad")},
           {F32("epsilon", 1e-5f), I32("begin_norm_axis", 1)}));
  // `sparse` comes from the legacy is_sparse (legacy_ops.yaml signature).
  t.Add(Op("embedding", "row lookup of ids x in weight", {In("x"), In("weight")}, {Out("out")},
           {I64("padding_idx", -1), Bool("sparse", false)}));
  t.Add(Op("embedding_grad", "gradient of embedding", {In("x"), In("weight"), In("out_grad")},
           {Out("weight_grad")}, {I64("padding_idx", -1), Bool("sparse", false)}));

  // IntArray / Scalar operands: mutable attributes (see the file comment).
  t.AddWithInplace(
      Folded(Op("scale", "x * scale + bias (or (x + bias) * scale)", {In("x"), In("scale")},
                {Out("out")}, {F32("bias", 0.0f), Bool("bias_after_scale", true)}),
             FoldScaleOp));
  t.AddWithInplace(Folded(
      Op("cast", "converts to dtype", {In("x")}, {Out("out")}, {Req("dtype", AttrKind::kDataType)}),
      FoldCastOp));
  // dropout's p is a non-mutable Scalar(float): PIR stores it as a Float attribute.
  t.Add(Op("dropout", "random zeroing", {In("x"), Opt("seed_tensor")}, {Out("out"), Out("mask")},
           {F32("p", 0.5f), Bool("is_test", false), Str("mode", "upscale_in_train"), I32("seed", 0),
            Bool("fix_seed", false)}));
  t.Add(Op("dropout_grad", "gradient of dropout", {In("mask"), In("out_grad")}, {Out("x_grad")},
           {F32("p", 0.5f), Bool("is_test", false), Str("mode", "upscale_in_train")}));
  t.Add(Op("mean", "mean over axis", {In("x")}, {Out("out")},
           {IntArr("axis", {}), Bool("keepdim", false)}));
  t.Add(Op("mean_grad", "gradient of mean", {In("x"), In("out_grad")}, {Out("x_grad")},
           {IntArr("axis", {}), Bool("keepdim", false), Bool("reduce_all", false)}));
  t.Add(Op("sum", "sum over axis", {In("x"), IntArrayIn("axis")}, {Out("out")},
           {Dtype("dtype", DataType::kUndefined), Bool("keepdim", false)}));
  t.Add(Op("sum_grad", "gradient of sum", {In("x"), In("out_grad"), IntArrayIn("axis")},
           {Out("x_grad")}, {Bool("keepdim", false), Bool("reduce_all", false)}));
  t.Add(Op("mean_all", "mean of all elements", {In("x")}, {Out("out")}));
  t.Add(Op("mean_all_grad", "gradient of mean_all", {In("x"), In("out_grad")}, {Out("x_grad")}));
  // Sum of squares (global-norm gradient clipping); out has shape [1].
  t.Add(Op("squared_l2_norm", "sum of the squares of x", {In("x")}, {Out("out")}));
  t.Add(Op("cross_entropy_with_softmax", "softmax then cross entropy", {In("input"), In("label")},
           {Out("softmax"), Out("loss")},
           {Bool("soft_label", false), Bool("use_softmax", true), Bool("numeric_stable_mode", true),
            I32("ignore_index", -100), I32("axis", -1)}));
  t.Add(Op("cross_entropy_with_softmax_grad", "gradient of cross_entropy_with_softmax",
           {In("label"), In("softmax"), In("loss_grad")}, {Out("input_grad")},
           {Bool("soft_label", false), Bool("use_softmax", true), Bool("numeric_stable_mode", true),
            I32("ignore_index", -100), I32("axis", -1)}));
  // add_n_ is a manual op (AddN_Op): what the translator makes of a sum whose output is one of
  // its inputs.
  t.AddWithInplace(Op("add_n", "sum of a vector of tensors", {Vec("inputs")}, {Out("out")}));
  t.AddWithInplace(Op("tril", "lower triangle", {In("x")}, {Out("out")}, {I32("diagonal", 0)}));
  t.AddWithInplace(Op("triu", "upper triangle", {In("x")}, {Out("out")}, {I32("diagonal", 0)}));
  // backward.yaml declares diagonal without a default; tril_triu_grad always carries it.
  t.Add(Op("tril_grad", "gradient of tril", {In("out_grad")}, {Out("x_grad")},
           {Req("diagonal", AttrKind::kInt32)}));
  t.Add(Op("triu_grad", "gradient of triu", {In("out_grad")}, {Out("x_grad")},
           {Req("diagonal", AttrKind::kInt32)}));
  t.Add(Op("equal", "x == y", {In("x"), In("y")}, {Out("out")}));
  t.Add(Op("less_than", "x < y", {In("x"), In("y")}, {Out("out")}));
  t.Add(Op("not_equal", "x != y", {In("x"), In("y")}, {Out("out")}));
  t.Add(Op("greater_than", "x > y", {In("x"), In("y")}, {Out("out")}));
  t.Add(Op("logical_not", "!x", {In("x")}, {Out("out")}));
  t.AddWithInplace(Op("increment", "x + value", {In("x")}, {Out("out")}, {F32("value", 1.0f)}));
}

void AddShapeAndCreation(Table& t) {
  // reshape keeps the two-output form (out, xshape) of the 3.0 yaml; reshape_grad reads xshape.
  t.AddWithInplace(Folded(Op("reshape", "changes the shape", {In("x"), IntArrayIn("shape")},
                             {Out("out"), OptOut("xshape")}),
                          FoldReshapeOp));
  t.Add(Op("reshape_grad", "gradient of reshape", {In("xshape"), In("out_grad")}, {Out("x_grad")}));
  t.Add(Op("transpose", "permutes dims", {In("x")}, {Out("out")}, {Ints("perm", {})}));
  t.Add(Op("transpose_grad", "gradient of transpose", {In("out_grad")}, {Out("x_grad")},
           {Ints("perm", {})}));
  t.Add(Op("concat", "joins a vector of tensors along axis", {Vec("x"), In("axis")}, {Out("out")}));
  t.Add(Op("concat_grad", "gradient of concat", {Vec("x"), In("out_grad"), In("axis")},
           {VecOut("x_grad")}));
  t.Add(Op("split", "splits into sections along axis",
           {In("x"), IntArrayIn("sections"), In("axis")}, {VecOut("out")}));
  t.Add(Op("split_with_num", "splits into num equal parts along axis", {In("x"), In("axis")},
           {VecOut("out")}, {Req("num", AttrKind::kInt32)}));
  t.Add(Op("slice", "takes starts:ends on axes",
           {In("input"), IntArrayIn("starts"), IntArrayIn("ends")}, {Out("out")},
           {Int64s("axes", {}), Int64s("infer_flags", {}), Int64s("decrease_axis", {})}));
  t.Add(Op("slice_grad", "gradient of slice",
           {In("input"), In("out_grad"), IntArrayIn("starts"), IntArrayIn("ends")},
           {Out("input_grad")},
           {Int64s("axes", {}), Int64s("infer_flags", {}), Int64s("decrease_axis", {})}));
  // set_value (static_ops.yaml) writes the constants `values` (Scalar[], of `shape`) into the
  // slice starts:ends:steps on axes of x; set_value_with_tensor (ops.yaml) writes the tensor
  // `values`. Both are in place in the yaml (x -> out); the plain forms are what a legacy
  // set_value with another Out becomes. The index lists have no defaults. set_value_grad
  // (static_backward.yaml) is an assign of out_grad; set_value_with_tensor_grad (backward.yaml)
  // gives x_grad (out_grad with the slice zeroed) and values_grad.
  const std::vector<AttrSpec> set_value_index = {Int64sReq("axes"), Int64sReq("decrease_axes"),
                                                 Int64sReq("none_axes")};
  std::vector<AttrSpec> set_value_attrs = set_value_index;
  set_value_attrs.push_back(Int64sReq("shape"));
  set_value_attrs.push_back(Req("values", AttrKind::kArray));
  t.AddWithInplace(Op("set_value", "writes constant values into a strided slice of x",
                      {In("x"), IntArrayIn("starts"), IntArrayIn("ends"), IntArrayIn("steps")},
                      {Out("out")}, set_value_attrs));
  t.AddWithInplace(
      Op("set_value_with_tensor", "writes a tensor into a strided slice of x",
         {In("x"), In("values"), IntArrayIn("starts"), IntArrayIn("ends"), IntArrayIn("steps")},
         {Out("out")}, set_value_index));
  t.Add(Op("set_value_grad", "gradient of set_value", {In("out_grad")}, {Out("x_grad")}));
  t.Add(Op(
      "set_value_with_tensor_grad", "gradient of set_value_with_tensor",
      {In("values"), In("out_grad"), IntArrayIn("starts"), IntArrayIn("ends"), IntArrayIn("steps")},
      {OptOut("x_grad"), OptOut("values_grad")}, set_value_index));
  // full keeps shape and value as attributes: it is what materializes the mutable ones. full_
  // fills an existing tensor: ops.yaml's full_(Tensor output, ...) with inplace (output -> out).
  // value is ops.yaml's Scalar(double): a Double, though older files hold a Float or an int.
  AttrSpec value = Req("value", AttrKind::kNull);
  value.untyped_kind = AttrKind::kDouble;
  const std::vector<AttrSpec> full_attrs = {Req("shape", AttrKind::kIntArray), value,
                                            Dtype("dtype", DataType::kFloat32), PlaceAttr()};
  t.Add(Op("full", "a tensor filled with value", {}, {Out("out")}, full_attrs));
  t.Add(Inplace(Op("full", "fills output with value", {In("output")}, {Out("out")}, full_attrs)));
  t.Add(Op("full_int_array", "a 1-D int tensor holding value", {}, {Out("out")},
           {Int64s("value", {}), Dtype("dtype", DataType::kInt64), PlaceAttr()}));
  t.Add(Op("full_like", "a tensor shaped like x filled with value", {In("x"), In("value")},
           {Out("out")}, {Dtype("dtype", DataType::kUndefined), PlaceAttr()}));
  t.Add(Folded(Op("assign", "copies x", {In("x")}, {Out("out")}), FoldAssignOp));
  t.Add(Inplace(Op("assign_out", "copies x into output", {In("x"), In("output")}, {Out("out")})));
  // share_data_ is what reshard lowering emits for the piece a rank keeps
  // (auto_parallel/reshard_lowering.cc); no legacy op translates to either form yet (the legacy
  // share_data is on diff_tests/op_tables_test.cc's not-translated list).
  t.AddWithInplace(Op("share_data", "shares x's buffer without a copy", {In("x")}, {Out("out")}));
  // coalesce_tensor (ops.yaml): the inputs laid out in one fused buffer; `output` are views of
  // their parts of `fused_output` (fuse-all-reduce's gradient buckets).
  t.Add(Op("coalesce_tensor", "lays a vector of tensors out in one fused buffer", {Vec("input")},
           {VecOut("output"), Out("fused_output")},
           {Req("dtype", AttrKind::kDataType), Bool("copy_data", false),
            Bool("set_constant", false), Bool("persist_output", false), F32("constant", 0.0f),
            Bool("use_align", true), I32("align_size", -1), I32("size_of_dtype", -1),
            Int64s("concated_shapes", {}), Int64s("concated_ranks", {})}));
  t.Add(
      Inplace(Op("assign_value", "writes constant values into output", {In("output")}, {Out("out")},
                 {Req("shape", AttrKind::kArray), Req("dtype", AttrKind::kDataType),
                  Req("values", AttrKind::kArray), PlaceAttr()})));
  t.Add(Op("assign_value", "constant values", {}, {Out("out")},
           {Req("shape", AttrKind::kArray), Req("dtype", AttrKind::kDataType),
            Req("values", AttrKind::kArray), PlaceAttr()}));
  t.Add(Op("uniform", "uniform random values in [min, max)",
           {IntArrayIn("shape"), In("min"), In("max")}, {Out("out")},
           {Dtype("dtype", DataType::kFloat32), I32("seed", 0), PlaceAttr()}));
  t.Add(Op("gaussian", "normal random values", {IntArrayIn("shape")}, {Out("out")},
           {F32("mean", 0.0f), F32("std", 1.0f), I32("seed", 0), Dtype("dtype", DataType::kFloat32),
            PlaceAttr()}));
}

void AddFeedFetchAndOptimizers(Table& t) {
  // Program inputs are part of the program's signature: kept even when nothing reads them.
  t.Add(SideEffect(Op("data", "a program input", {}, {Out("out")},
                      {Req("name", AttrKind::kString), Req("shape", AttrKind::kIntArray),
                       Req("dtype", AttrKind::kDataType), PlaceAttr()})));
  t.Add(SideEffect(Op("feed", "reads feed column col", {}, {Out("out")},
                      {Req("name", AttrKind::kString), Req("col", AttrKind::kInt32)})));
  t.Add(SideEffect(Op("fetch", "exposes x as fetch column col", {In("x")}, {Out("out")},
                      {Req("name", AttrKind::kString), Req("col", AttrKind::kInt32)})));

  t.Add(Inplace(Op("sgd", "stochastic gradient descent step",
                   {In("param"), In("learning_rate"), In("grad"), Opt("master_param")},
                   {Out("param_out"), OptOut("master_param_out")},
                   {Bool("multi_precision", false)})));
  t.Add(Inplace(
      Op("momentum", "momentum step",
         {In("param"), In("grad"), In("velocity"), In("learning_rate"), Opt("master_param")},
         {Out("param_out"), Out("velocity_out"), OptOut("master_param_out")},
         {F32("mu", 0.9f), Bool("use_nesterov", false), Str("regularization_method", ""),
          F32("regularization_coeff", 0.0f), Bool("multi_precision", false),
          F32("rescale_grad", 1.0f)})));
  // beta1, beta2, epsilon are mutable Scalars (Beta1Tensor/Beta2Tensor/EpsilonTensor in the old
  // IR), so operands. moment2_max / amsgrad are the late-2024 additions (§3.5 lists Moment2Max).
  const std::vector<OperandSpec> adam_operands = {
      In("param"),         In("grad"),         In("learning_rate"), In("moment1"),
      In("moment2"),       Opt("moment2_max"), In("beta1_pow"),     In("beta2_pow"),
      Opt("master_param"), Opt("skip_update"), In("beta1"),         In("beta2"),
      In("epsilon")};
  const std::vector<ResultSpec> adam_results = {
      Out("param_out"),          Out("moment1_out"),   Out("moment2_out"),
      OptOut("moment2_max_out"), Out("beta1_pow_out"), Out("beta2_pow_out"),
      OptOut("master_param_out")};
  std::vector<AttrSpec> adam_attrs = {
      Bool("lazy_mode", false), I64("min_row_size_to_use_multithread", 1000),
      Bool("multi_precision", false), Bool("use_global_beta_pow", false), Bool("amsgrad", false)};
  t.Add(Inplace(Op("adam", "Adam step", adam_operands, adam_results, adam_attrs)));
  std::vector<AttrSpec> adamw_attrs = {F32("lr_ratio", 1.0f), F32("coeff", 0.01f),
                                       Bool("with_decay", false)};
  adamw_attrs.insert(adamw_attrs.end(), adam_attrs.begin(), adam_attrs.end());
  t.Add(Inplace(Op("adamw", "AdamW step", adam_operands, adam_results, adamw_attrs)));
}

void AddControlFlow(Table& t) {
  OpInfo if_op = Op("if", "runs the true or the false region by cond", {In("cond")},
                    {ManyOut("out")}, {{"fake_false_branch", AttrKind::kBool, false, {}}});
  if_op.num_regions = 2;
  if_op.verify = VerifyIfOp;
  t.Add(std::move(if_op));
  OpInfo while_op =
      Op("while", "runs its body while cond holds", {In("cond"), Many("inputs")}, {ManyOut("out")});
  while_op.num_regions = 1;
  while_op.verify = VerifyWhileOp;
  t.Add(std::move(while_op));
}

void AddCommunication(Table& t) {
  // Phi style (§2.4): all_reduce(x, ring_id=0, reduce_type=0); reduce_type is a ReduceType int.
  t.AddWithInplace(SideEffect(Op("all_reduce", "reduces x across the ring", {In("x")}, {Out("out")},
                                 {I32("ring_id", 0), I32("reduce_type", 0)})));
  t.Add(SideEffect(Op("all_gather", "gathers x from every rank", {In("x")}, {Out("out")},
                      {I32("ring_id", 0), I32("nranks", 0)})));
  t.Add(SideEffect(Op("reduce_scatter", "reduces x and scatters the parts", {In("x")}, {Out("out")},
                      {I32("ring_id", 0), I32("nranks", 1)})));
  t.AddWithInplace(SideEffect(Op("broadcast", "copies x from root to every rank", {In("x")},
                                 {Out("out")}, {I32("ring_id", 0), I32("root", 0)})));
  t.Add(SideEffect(Op("all_to_all", "exchanges parts of x between all ranks", {In("x")},
                      {Out("out")}, {I32("ring_id", 0)})));
  t.Add(SideEffect(Op("p_send", "sends x to peer", {In("x")}, {},
                      {I32("ring_id", 0), I32("peer", 0), Bool("dynamic_shape", false)})));
  t.Add(SideEffect(Op("p_recv", "receives a tensor from peer", {}, {Out("out")},
                      {I32("ring_id", 0), I32("peer", 0), Dtype("dtype", DataType::kFloat32),
                       Bool("dynamic_shape", false)})));
  t.Add(SideEffect(
      Op("barrier", "waits for every rank", {In("x")}, {Out("out")}, {I32("ring_id", 0)})));

  // Legacy c_ style (§3.5): X, Out plus ring_id, use_calc_stream, use_model_parallel.
  const std::vector<AttrSpec> allreduce_attrs = {I32("ring_id", 0), Bool("use_calc_stream", false),
                                                 Bool("use_model_parallel", false)};
  for (const char* kind : {"sum", "max", "min", "prod"}) {
    t.AddWithInplace(
        SideEffect(Op(std::string("c_allreduce_") + kind, std::string("all-reduce (") + kind + ")",
                      {In("x")}, {Out("out")}, allreduce_attrs)));
  }
  t.Add(SideEffect(Op("c_allgather", "gathers x from every rank", {In("x")}, {Out("out")},
                      {I32("ring_id", 0), I32("nranks", 0), Bool("use_calc_stream", false)})));
  t.Add(
      SideEffect(Op("c_reducescatter", "reduces x and scatters the parts", {In("x")}, {Out("out")},
                    {I32("ring_id", 0), I32("nranks", 1), Bool("use_calc_stream", false)})));
  t.AddWithInplace(
      SideEffect(Op("c_broadcast", "copies x from root to every rank", {In("x")}, {Out("out")},
                    {I32("ring_id", 0), I32("root", 0), Bool("use_calc_stream", false)})));
  t.AddWithInplace(SideEffect(Op("c_identity", "identity forward, all-reduce backward", {In("x")},
                                 {Out("out")}, allreduce_attrs)));
  const std::vector<AttrSpec> split_concat_attrs = {
      I32("rank", 0), I32("nranks", 1), I32("ring_id", 0), Bool("use_calc_stream", false),
      Bool("use_model_parallel", true)};
  t.Add(SideEffect(Op("c_split", "keeps this rank's part of x's last dim", {In("x")}, {Out("out")},
                      split_concat_attrs)));
  t.Add(SideEffect(Op("c_concat", "gathers and concatenates x along the last dim", {In("x")},
                      {Out("out")}, split_concat_attrs)));
  // Vocabulary parallelism (paddle/phi/ops/yaml/inconsistent/static_ops.yaml and
  // static_backward.yaml for c_embedding, ops.yaml and backward.yaml for the cross entropy).
  // c_embedding_grad takes start_index only; the cross entropy's all-reduces make it a side
  // effect (a rank dropping it would leave the others waiting).
  t.Add(Op("c_embedding", "looks up ids x in this rank's rows of the table, zeros elsewhere",
           {In("weight"), In("x")}, {Out("out")}, {I64("start_index", 0), I64("vocab_size", -1)}));
  t.Add(Op("c_embedding_grad", "gradient of c_embedding", {In("weight"), In("x"), In("out_grad")},
           {Out("weight_grad")}, {I64("start_index", 0)}));
  const std::vector<AttrSpec> parallel_ce_attrs = {I64("ignore_index", -100), I32("ring_id", 0),
                                                   I32("rank", 0), I32("nranks", 0)};
  t.Add(SideEffect(Op("c_softmax_with_cross_entropy",
                      "softmax cross entropy over logits split by columns across the ring",
                      {In("logits"), In("label")}, {Out("softmax"), Out("loss")},
                      parallel_ce_attrs)));
  t.Add(Op("c_softmax_with_cross_entropy_grad", "gradient of c_softmax_with_cross_entropy",
           {In("softmax"), In("label"), In("loss_grad")}, {Out("logits_grad")}, parallel_ce_attrs));
  // What the translator makes of c_sync_calc_stream / c_sync_comm_stream (always in place). The
  // yaml gives them no side-effect trait; they order streams, so dead-code elimination keeps them.
  t.Add(SideEffect(Inplace(
      Op("sync_calc_stream", "waits for the calculation stream", {In("x")}, {Out("out")}))));
  t.Add(SideEffect(Inplace(Op("sync_comm_stream", "waits for the communication stream", {Vec("x")},
                              {VecOut("out")}, {I32("ring_id", 0)}))));
  t.Add(SideEffect(Op("send_v2", "sends x to peer", {In("x")}, {},
                      {I32("ring_id", 0), I32("peer", 0), Bool("use_calc_stream", false),
                       Bool("dynamic_shape", false)})));
  t.Add(SideEffect(
      Op("recv_v2", "receives a tensor from peer", {}, {Out("out")},
         {Ints("out_shape", {}), Dtype("dtype", DataType::kFloat32), I32("peer", 0),
          I32("ring_id", 0), Bool("use_calc_stream", false), Bool("dynamic_shape", false)})));
}

Table HandRows() {
  Table t;
  AddMath(t);
  AddShapeAndCreation(t);
  AddFeedFetchAndOptimizers(t);
  AddControlFlow(t);
  AddCommunication(t);
  AddConvolution(t);
  return t;
}

}  // namespace

const std::vector<std::string>& PdOpHandRowNames() {
  static const auto* const kNames = new std::vector<std::string>(HandRows().Names());
  return *kNames;
}

Status RegisterPdOpDialect(OpRegistry& registry) {
  IRM_RETURN_IF_ERROR(HandRows().RegisterInto(registry));
  // Then the rest of Paddle's op set, verified by signature: the catalog leaves out every op the
  // rows above registered, whichever section added it.
  return RegisterPdOpCatalog(registry);
}

}  // namespace irm::newir
