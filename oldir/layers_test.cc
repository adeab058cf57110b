// Tests of the forward layers: for each helper the op it appends (its dump line, written by hand
// from Paddle's op makers and op_compat.yaml), the vars it declares (dims, dtype, stop_gradient),
// the names it takes, the parameters and initialisers of the nn layers, the feed ops, and the
// errors for inputs an op would reject.
#include "oldir/layers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "oldir/dump.h"
#include "oldir/validator.h"

namespace irm::oldir::layers {
namespace {

using Dims = std::vector<int64_t>;

// The common attributes every op ends with in a dump (op_callstack hidden).
const std::string kCommon =
    ", op_device='', op_namescope='/', op_role=0, op_role_var=[], with_quant_attr=False)";

class LayersTest : public ::testing::Test {
 protected:
  // A fed input var (need_check_feed), so that the validator sees it defined.
  void Input(const std::string& name, Dims dims, bool stop_gradient = false,
             proto::VarType::Type dtype = proto::VarType::FP32) {
    b_.CreateVar(name, dtype, dims, {.stop_gradient = stop_gradient, .need_check_feed = true});
  }
  std::string OpLine(int i) { return DumpOp(Op(&b_.desc()->ops(i))); }
  std::string LastOp() { return OpLine(b_.num_ops() - 1); }
  std::string VarLine(const std::string& name) {
    const proto::VarDesc* var = b_.FindVar(name);
    return var == nullptr ? "<undeclared " + name + ">" : DumpVar(Var(var));
  }
  void ExpectValid() {
    const Diagnostics main = ValidateProgram(p_.main.Build());
    EXPECT_TRUE(main.empty()) << main.Render();
    const Diagnostics startup = ValidateProgram(p_.startup.Build());
    EXPECT_TRUE(startup.empty()) << startup.Render();
  }

  models::ModelPrograms p_;
  BlockBuilder& b_ = p_.main.root();
};

TEST(BroadcastDimsTest, FollowsPaddlesRule) {
  EXPECT_EQ(*BroadcastDims({-1, 16, 64}, {1, 16, 64}), (Dims{-1, 16, 64}));
  EXPECT_EQ(*BroadcastDims({-1, 4, 16, 16}, {16, 16}), (Dims{-1, 4, 16, 16}));
  EXPECT_EQ(*BroadcastDims({16}, {-1, 4, 16}), (Dims{-1, 4, 16}));
  EXPECT_EQ(*BroadcastDims({1, 1}, {1}), (Dims{1, 1}));
  EXPECT_EQ(*BroadcastDims({-1, 1}, {1, -1}), (Dims{-1, -1}));
  EXPECT_EQ(*BroadcastDims({4, 1}, {1, 5}), (Dims{4, 5}));
  EXPECT_EQ(*BroadcastDims({-1, 3}, {7, 3}), (Dims{7, 3}));
  StatusOr<Dims> bad = BroadcastDims({2, 3}, {4, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "dims [2, 3] and [4, 3] do not broadcast");
}

TEST_F(LayersTest, LinearLayerParametersInitialisersAndCall) {
  p_.seed = 11;
  Input("x", {-1, 8}, /*stop_gradient=*/true);
  StatusOr<LinearLayer> layer = CreateLinear(&p_, 8, 16);
  ASSERT_TRUE(layer.ok()) << layer.status().ToString();
  EXPECT_EQ(layer->name, "linear_0");
  EXPECT_EQ(layer->weight, "linear_0.w_0");
  EXPECT_EQ(layer->bias, "linear_0.b_0");
  EXPECT_EQ(VarLine("linear_0.w_0"),
            "persist trainable param linear_0.w_0 : "
            "DENSE_TENSOR.shape(8, 16).dtype(float32).stop_gradient(False)");
  EXPECT_EQ(VarLine("linear_0.b_0"),
            "persist trainable param linear_0.b_0 : "
            "DENSE_TENSOR.shape(16,).dtype(float32).stop_gradient(False)");

  // Startup: the same parameters, XavierUniform(8, 16) = U(-0.5, 0.5) with the program seed, and
  // a zero bias.
  BlockBuilder& startup = p_.startup.root();
  EXPECT_EQ(DumpVar(Var(startup.FindVar("linear_0.w_0"))),
            "persist trainable param linear_0.w_0 : "
            "DENSE_TENSOR.shape(8, 16).dtype(float32).stop_gradient(False)");
  ASSERT_EQ(startup.num_ops(), 2);
  EXPECT_EQ(DumpOp(Op(&startup.desc()->ops(0))),
            "{Out=['linear_0.w_0']} = uniform_random(inputs={}, diag_num=0, diag_step=0, "
            "diag_val=1.0, dtype=5, max=0.5, min=-0.5, seed=11, shape=[8, 16]" +
                kCommon);
  EXPECT_EQ(DumpOp(Op(&startup.desc()->ops(1))),
            "{Out=['linear_0.b_0']} = fill_constant(inputs={}, dtype=5, force_cpu=False, "
            "place_type=-1, shape=[16], str_value='0.0', value=0.0" +
                kCommon);

  // The call takes the next "linear" name; the bias is added at axis rank(x) - 1.
  StatusOr<std::string> out = Linear(b_, *layer, "x");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "linear_1.tmp_1");
  ASSERT_EQ(b_.num_ops(), 2);
  EXPECT_EQ(OpLine(0),
            "{Out=['linear_1.tmp_0']} = matmul_v2(inputs={X=['x'], Y=['linear_0.w_0']}, "
            "mkldnn_data_type='float32', trans_x=False, trans_y=False, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(OpLine(1),
            "{Out=['linear_1.tmp_1']} = elementwise_add(inputs={X=['linear_1.tmp_0'], "
            "Y=['linear_0.b_0']}, Scale_out=1.0, Scale_x=1.0, Scale_y=1.0, axis=1, "
            "mkldnn_data_type='float32', use_mkldnn=False, use_quantizer=False" +
                kCommon);
  EXPECT_EQ(VarLine("linear_1.tmp_0"),
            "var linear_1.tmp_0 : DENSE_TENSOR.shape(-1, 16).dtype(float32).stop_gradient(False)");
  EXPECT_EQ(VarLine("linear_1.tmp_1"),
            "var linear_1.tmp_1 : DENSE_TENSOR.shape(-1, 16).dtype(float32).stop_gradient(False)");
  ExpectValid();
}

TEST_F(LayersTest, LinearWithoutBiasOnRank3AndErrors) {
  Input("h", {-1, 5, 8});
  StatusOr<LinearLayer> layer = CreateLinear(&p_, 8, 3, /*with_bias=*/false);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(layer->bias, "");
  EXPECT_EQ(p_.startup.root().num_ops(), 1);
  EXPECT_EQ(*Linear(b_, *layer, "h"), "linear_1.tmp_0");
  EXPECT_EQ(b_.num_ops(), 1);
  EXPECT_EQ(
      VarLine("linear_1.tmp_0"),
      "var linear_1.tmp_0 : DENSE_TENSOR.shape(-1, 5, 3).dtype(float32).stop_gradient(False)");

  Input("wrong", {-1, 7});
  StatusOr<std::string> bad = Linear(b_, *layer, "wrong");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().ToString(),
            "block 0, op 1 (matmul_v2), var 'wrong': error: 'wrong' [-1, 7] does not multiply "
            "'linear_0.w_0' [8, 3]");
  EXPECT_EQ(b_.num_ops(), 1);

  StatusOr<LinearLayer> empty = CreateLinear(&p_, 0, 3);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().ToString(), "error: nn.Linear: sizes must be positive, got 0");
  ExpectValid();
}

TEST_F(LayersTest, LayerNorm) {
  Input("h", {-1, 5, 8});
  StatusOr<LayerNormLayer> layer = CreateLayerNorm(&p_, 8);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(layer->scale, "layer_norm_0.w_0");
  EXPECT_EQ(layer->bias, "layer_norm_0.b_0");
  BlockBuilder& startup = p_.startup.root();
  ASSERT_EQ(startup.num_ops(), 2);
  EXPECT_EQ(DumpOp(Op(&startup.desc()->ops(0))),
            "{Out=['layer_norm_0.w_0']} = fill_constant(inputs={}, dtype=5, force_cpu=False, "
            "place_type=-1, shape=[8], str_value='1.0', value=1.0" +
                kCommon);

  StatusOr<LayerNormOutputs> out = LayerNorm(b_, *layer, "h");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->mean, "layer_norm_1.tmp_0");
  EXPECT_EQ(out->variance, "layer_norm_1.tmp_1");
  EXPECT_EQ(out->y, "layer_norm_1.tmp_2");
  EXPECT_EQ(LastOp(),
            "{Mean=['layer_norm_1.tmp_0'], Variance=['layer_norm_1.tmp_1'], "
            "Y=['layer_norm_1.tmp_2']} = layer_norm(inputs={Bias=['layer_norm_0.b_0'], "
            "Scale=['layer_norm_0.w_0'], X=['h']}, begin_norm_axis=2, epsilon=1e-05, "
            "is_test=False, mkldnn_data_type='float32', use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(VarLine("layer_norm_1.tmp_0"),
            "var layer_norm_1.tmp_0 : DENSE_TENSOR.shape(-1,).dtype(float32).stop_gradient(True)");
  EXPECT_EQ(VarLine("layer_norm_1.tmp_1"),
            "var layer_norm_1.tmp_1 : DENSE_TENSOR.shape(-1,).dtype(float32).stop_gradient(True)");
  EXPECT_EQ(VarLine("layer_norm_1.tmp_2"),
            "var layer_norm_1.tmp_2 : "
            "DENSE_TENSOR.shape(-1, 5, 8).dtype(float32).stop_gradient(False)");

  // Known leading dims: one row per (2 x 5).
  Input("k", {2, 5, 8});
  StatusOr<LayerNormOutputs> known = LayerNorm(b_, *layer, "k");
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(VarLine(known->mean),
            "var layer_norm_2.tmp_0 : DENSE_TENSOR.shape(10,).dtype(float32).stop_gradient(True)");

  // float16 input: float32 statistics.
  Input("half", {-1, 8}, false, proto::VarType::FP16);
  StatusOr<LayerNormOutputs> half = LayerNorm(b_, *layer, "half");
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(VarLine(half->variance),
            "var layer_norm_3.tmp_1 : DENSE_TENSOR.shape(-1,).dtype(float32).stop_gradient(True)");
  EXPECT_EQ(
      VarLine(half->y),
      "var layer_norm_3.tmp_2 : DENSE_TENSOR.shape(-1, 8).dtype(float16).stop_gradient(False)");

  Input("wide", {-1, 9});
  EXPECT_EQ(LayerNorm(b_, *layer, "wide").status().message(),
            "'wide' [-1, 9] does not end in the normalised size 8");
  ExpectValid();
}

TEST_F(LayersTest, Embedding) {
  Input("ids", {-1, 5}, /*stop_gradient=*/true, proto::VarType::INT64);
  StatusOr<EmbeddingLayer> layer = CreateEmbedding(&p_, 20, 4);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(layer->weight, "embedding_0.w_0");
  // XavierUniform(20, 4): limit sqrt(6 / 24) = 0.5.
  EXPECT_EQ(DumpOp(Op(&p_.startup.root().desc()->ops(0))),
            "{Out=['embedding_0.w_0']} = uniform_random(inputs={}, diag_num=0, diag_step=0, "
            "diag_val=1.0, dtype=5, max=0.5, min=-0.5, seed=0, shape=[20, 4]" +
                kCommon);
  EXPECT_EQ(*Embedding(b_, *layer, "ids"), "embedding_1.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['embedding_1.tmp_0']} = lookup_table_v2(inputs={Ids=['ids'], "
            "W=['embedding_0.w_0']}, epmap=[], height_sections=[], is_distributed=False, "
            "is_sparse=False, padding_idx=-1, remote_prefetch=False, slot=0, table_names=[], "
            "trainer_id=0" +
                kCommon);
  EXPECT_EQ(
      VarLine("embedding_1.tmp_0"),
      "var embedding_1.tmp_0 : DENSE_TENSOR.shape(-1, 5, 4).dtype(float32).stop_gradient(False)");
  // padding_idx is LONG, as the maker's int64_t.
  const proto::OpDesc::Attr* padding_idx = Op(&b_.desc()->ops(0)).FindAttr("padding_idx");
  ASSERT_NE(padding_idx, nullptr);
  EXPECT_EQ(padding_idx->type(), proto::LONG);

  Input("floats", {-1, 5});
  EXPECT_EQ(Embedding(b_, *layer, "floats").status().message(),
            "ids 'floats' must be int64 or int32");
  ExpectValid();
}

TEST_F(LayersTest, MatMulShapes) {
  Input("q", {-1, 4, 16, 8});
  Input("k", {-1, 4, 16, 8});
  EXPECT_EQ(*MatMul(b_, "q", "k", false, true), "matmul_v2_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['matmul_v2_0.tmp_0']} = matmul_v2(inputs={X=['q'], Y=['k']}, "
            "mkldnn_data_type='float32', trans_x=False, trans_y=True, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(VarLine("matmul_v2_0.tmp_0"),
            "var matmul_v2_0.tmp_0 : "
            "DENSE_TENSOR.shape(-1, 4, 16, 16).dtype(float32).stop_gradient(False)");

  auto dims_of = [&](const std::string& x, const std::string& y, bool tx, bool ty) {
    StatusOr<std::string> out = MatMul(b_, x, y, tx, ty);
    return out.ok() ? Var(b_.FindVar(*out)).dims() : Dims{-99};
  };
  Input("a", {2, 3, 4});
  Input("w", {4, 5});
  Input("v3", {3});
  Input("m35", {3, 5});
  Input("m23", {2, 3});
  Input("b1", {1, 3, 4});
  Input("b6", {6, 4, 2});
  EXPECT_EQ(dims_of("a", "w", false, false), (Dims{2, 3, 5}));
  EXPECT_EQ(dims_of("v3", "m35", false, false), (Dims{5}));
  EXPECT_EQ(dims_of("m23", "v3", false, false), (Dims{2}));
  EXPECT_EQ(dims_of("b1", "b6", false, false), (Dims{6, 3, 2}));
  EXPECT_EQ(dims_of("m23", "m23", true, false), (Dims{3, 3}));

  StatusOr<std::string> bad = MatMul(b_, "m23", "w");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "block 0, op 6 (matmul_v2), var 'w': error: 'm23' [2, 3] and 'w' [4, 5] do not "
            "multiply");
  ExpectValid();
}

TEST_F(LayersTest, ElementwiseOperatorsTakeTempNames) {
  Input("a", {-1, 4, 16, 16});
  Input("m", {16, 16}, /*stop_gradient=*/true);
  EXPECT_EQ(*Add(b_, "a", "m"), "tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['tmp_0']} = elementwise_add(inputs={X=['a'], Y=['m']}, Scale_out=1.0, "
            "Scale_x=1.0, Scale_y=1.0, axis=-1, mkldnn_data_type='float32', use_mkldnn=False, "
            "use_quantizer=False" +
                kCommon);
  EXPECT_EQ(VarLine("tmp_0"),
            "var tmp_0 : DENSE_TENSOR.shape(-1, 4, 16, 16).dtype(float32).stop_gradient(False)");
  EXPECT_EQ(*Subtract(b_, "a", "m"), "tmp_1");
  EXPECT_EQ(*Multiply(b_, "a", "a"), "tmp_2");
  EXPECT_EQ(*Divide(b_, "m", "m"), "tmp_3");
  EXPECT_EQ(b_.desc()->ops(1).type(), "elementwise_sub");
  EXPECT_EQ(b_.desc()->ops(2).type(), "elementwise_mul");
  EXPECT_EQ(b_.desc()->ops(3).type(), "elementwise_div");
  // Every input stop_gradient: so is the output (Block.append_op's pass_stop_gradient).
  EXPECT_EQ(VarLine("tmp_3"),
            "var tmp_3 : DENSE_TENSOR.shape(16, 16).dtype(float32).stop_gradient(True)");

  Input("c", {-1, 3});
  EXPECT_EQ(Add(b_, "a", "c").status().ToString(),
            "block 0, op 4 (elementwise_add), var 'c': error: dims [-1, 4, 16, 16] and [-1, 3] "
            "do not broadcast");
  ExpectValid();
}

TEST_F(LayersTest, Activations) {
  Input("x", {-1, 8});
  Input("s", {-1, 8}, /*stop_gradient=*/true);
  EXPECT_EQ(*Relu(b_, "x"), "relu_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['relu_0.tmp_0']} = relu(inputs={X=['x']}, use_cudnn=False, "
            "use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(*Tanh(b_, "x"), "tanh_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['tanh_0.tmp_0']} = tanh(inputs={X=['x']}, use_cudnn=False, "
            "use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(*Sigmoid(b_, "s"), "sigmoid_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['sigmoid_0.tmp_0']} = sigmoid(inputs={X=['s']}, use_cudnn=False, "
            "use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(VarLine("sigmoid_0.tmp_0"),
            "var sigmoid_0.tmp_0 : DENSE_TENSOR.shape(-1, 8).dtype(float32).stop_gradient(True)");
  EXPECT_EQ(*Gelu(b_, "x", /*approximate=*/true), "gelu_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['gelu_0.tmp_0']} = gelu(inputs={X=['x']}, approximate=True, "
            "mkldnn_data_type='float32', use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(*Softmax(b_, "x"), "softmax_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['softmax_0.tmp_0']} = softmax(inputs={X=['x']}, axis=-1, "
            "data_format='AnyLayout', is_test=False, mkldnn_data_type='float32', use_cudnn=True, "
            "use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Softmax(b_, "x", 2).status().ToString(),
            "block 0, op 5 (softmax), var 'x': error: axis 2 is out of range for 'x' of rank 2");
  ExpectValid();
}

TEST_F(LayersTest, Dropout) {
  Input("x", {-1, 8});
  StatusOr<DropoutOutputs> plain = Dropout(b_, "x", 0.5f);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->out, "dropout_0.tmp_0");
  EXPECT_EQ(plain->mask, "dropout_0.tmp_1");
  EXPECT_EQ(LastOp(),
            "{Mask=['dropout_0.tmp_1'], Out=['dropout_0.tmp_0']} = dropout(inputs={Seed=[], "
            "X=['x']}, dropout_implementation='upscale_in_train', dropout_prob=0.5, "
            "fix_seed=False, is_test=False, seed=0" +
                kCommon);
  EXPECT_EQ(VarLine("dropout_0.tmp_1"),
            "var dropout_0.tmp_1 : DENSE_TENSOR.shape(-1, 8).dtype(uint8).stop_gradient(True)");
  // A program seed fixes the op's seed, as F.dropout does.
  ASSERT_TRUE(Dropout(b_, "x", 0.25f, /*is_test=*/true, 7, "downgrade_in_infer").ok());
  EXPECT_EQ(LastOp(),
            "{Mask=['dropout_1.tmp_1'], Out=['dropout_1.tmp_0']} = dropout(inputs={Seed=[], "
            "X=['x']}, dropout_implementation='downgrade_in_infer', dropout_prob=0.25, "
            "fix_seed=True, is_test=True, seed=7" +
                kCommon);
  // p == 0: F.dropout returns x and appends nothing.
  StatusOr<DropoutOutputs> none = Dropout(b_, "x", 0.0f);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->out, "x");
  EXPECT_EQ(none->mask, "");
  EXPECT_EQ(b_.num_ops(), 2);
  EXPECT_EQ(Dropout(b_, "x", 1.5f).status().message(), "dropout probability 1.5 is not in [0, 1]");
  EXPECT_EQ(Dropout(b_, "x", 0.5f, false, 0, "scale").status().message(),
            "unknown dropout mode 'scale'");
  ExpectValid();
}

TEST_F(LayersTest, ReshapeAndTranspose) {
  Input("x", {-1, 6, 8});
  StatusOr<ShapeOpOutputs> r = Reshape(b_, "x", {0, 0, 2, 4});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(LastOp(),
            "{Out=['reshape2_0.tmp_0'], XShape=['reshape2_0.tmp_1']} = reshape2(inputs={Shape=[], "
            "ShapeTensor=[], X=['x']}, mkldnn_data_type='float32', shape=[0, 0, 2, 4], "
            "use_mkldnn=False, use_quantizer=False" +
                kCommon);
  EXPECT_EQ(VarLine(r->out),
            "var reshape2_0.tmp_0 : "
            "DENSE_TENSOR.shape(-1, 6, 2, 4).dtype(float32).stop_gradient(False)");
  EXPECT_EQ(VarLine(r->xshape),
            "var reshape2_0.tmp_1 : "
            "DENSE_TENSOR.shape(0, -1, 6, 8).dtype(float32).stop_gradient(False)");

  StatusOr<ShapeOpOutputs> t = Transpose(b_, r->out, {0, 2, 1, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(LastOp(),
            "{Out=['transpose_0.tmp_0'], XShape=['transpose_0.tmp_1']} = "
            "transpose2(inputs={X=['reshape2_0.tmp_0']}, axis=[0, 2, 1, 3], "
            "data_format='AnyLayout', mkldnn_data_type='float32', use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar(t->out)).dims(), (Dims{-1, 2, 6, 4}));
  EXPECT_EQ(Var(b_.FindVar(t->xshape)).dims(), (Dims{0, -1, 6, 2, 4}));

  Input("k", {2, 3, 4});
  auto reshaped = [&](const std::string& x, std::vector<int32_t> shape) {
    StatusOr<ShapeOpOutputs> out = Reshape(b_, x, shape);
    return out.ok() ? Var(b_.FindVar(out->out)).dims() : Dims{-99};
  };
  EXPECT_EQ(reshaped("k", {-1, 6}), (Dims{4, 6}));
  EXPECT_EQ(reshaped("k", {0, -1}), (Dims{2, 12}));
  EXPECT_EQ(reshaped("x", {-1, 8}), (Dims{-1, 8}));
  EXPECT_EQ(reshaped("x", {0, 48}), (Dims{-1, 48}));
  EXPECT_EQ(Reshape(b_, "k", {-1, -1}).status().message(),
            "reshape2 takes at most one -1 in shape");
  EXPECT_EQ(Reshape(b_, "k", {5, -1}).status().message(),
            "'k' [2, 3, 4] cannot take shape [5, -1]");
  EXPECT_EQ(Reshape(b_, "k", {7, 2}).status().message(), "'k' [2, 3, 4] cannot take shape [7, 2]");
  EXPECT_EQ(Transpose(b_, "k", {0, 0, 1}).status().ToString(),
            "block 0, op 6 (transpose2), var 'k': error: [0, 0, 1] is not a permutation of the 3 "
            "axes of 'k'");
  ExpectValid();
}

TEST_F(LayersTest, ScaleCastAndReductions) {
  Input("x", {-1, 4, 8});
  Input("ids", {-1, 3}, /*stop_gradient=*/true, proto::VarType::INT64);
  EXPECT_EQ(*Scale(b_, "x", 0.125f, 1.0f, /*bias_after_scale=*/false), "scale_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['scale_0.tmp_0']} = scale(inputs={ScaleTensor=[], X=['x']}, bias=1.0, "
            "bias_after_scale=False, scale=0.125, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(*Cast(b_, "ids", proto::VarType::FP32), "cast_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['cast_0.tmp_0']} = cast(inputs={X=['ids']}, in_dtype=3, "
            "out_dtype=5, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(VarLine("cast_0.tmp_0"),
            "var cast_0.tmp_0 : DENSE_TENSOR.shape(-1, 3).dtype(float32).stop_gradient(True)");

  EXPECT_EQ(*ReduceMean(b_, "x"), "mean_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['mean_0.tmp_0']} = reduce_mean(inputs={X=['x']}, dim=[], in_dtype=-1, "
            "keep_dim=False, out_dtype=-1, reduce_all=True, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(VarLine("mean_0.tmp_0"),
            "var mean_0.tmp_0 : DENSE_TENSOR.shape().dtype(float32).stop_gradient(False)");
  EXPECT_EQ(*ReduceSum(b_, "x", {-1}, /*keep_dim=*/true), "sum_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['sum_0.tmp_0']} = reduce_sum(inputs={X=['x']}, dim=[-1], in_dtype=-1, "
            "keep_dim=True, out_dtype=-1, reduce_all=False, use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar("sum_0.tmp_0")).dims(), (Dims{-1, 4, 1}));
  EXPECT_EQ(Var(b_.FindVar(*ReduceSum(b_, "x", {1}))).dims(), (Dims{-1, 8}));
  EXPECT_EQ(Var(b_.FindVar(*ReduceMean(b_, "x", {}, true))).dims(), (Dims{1, 1, 1}));
  EXPECT_EQ(ReduceSum(b_, "x", {3}).status().message(), "axis 3 is out of range for 'x' of rank 3");

  EXPECT_EQ(*Mean(b_, "x"), "mean_2.tmp_0");
  EXPECT_EQ(LastOp(), "{Out=['mean_2.tmp_0']} = mean(inputs={X=['x']}" + kCommon);
  EXPECT_EQ(Var(b_.FindVar("mean_2.tmp_0")).dims(), Dims{});
  ExpectValid();
}

TEST_F(LayersTest, SoftmaxWithCrossEntropy) {
  Input("logits", {-1, 5, 10});
  Input("label", {-1, 5, 1}, true, proto::VarType::INT64);
  StatusOr<SoftmaxWithCrossEntropyOutputs> out = SoftmaxWithCrossEntropy(b_, "logits", "label");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->softmax, "softmax_with_cross_entropy_0.tmp_0");
  EXPECT_EQ(out->loss, "softmax_with_cross_entropy_0.tmp_1");
  EXPECT_EQ(LastOp(),
            "{Loss=['softmax_with_cross_entropy_0.tmp_1'], "
            "Softmax=['softmax_with_cross_entropy_0.tmp_0']} = "
            "softmax_with_cross_entropy(inputs={Label=['label'], Logits=['logits']}, axis=-1, "
            "ignore_index=-100, numeric_stable_mode=True, soft_label=False, use_softmax=True" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar(out->softmax)).dims(), (Dims{-1, 5, 10}));
  EXPECT_EQ(Var(b_.FindVar(out->loss)).dims(), (Dims{-1, 5, 1}));

  Input("float_label", {-1, 5, 1});
  EXPECT_EQ(SoftmaxWithCrossEntropy(b_, "logits", "float_label").status().ToString(),
            "block 0, op 1 (softmax_with_cross_entropy), var 'float_label': error: label "
            "'float_label' must be int64 of dims [-1, 5, 1]");
  ExpectValid();
}

TEST_F(LayersTest, ConcatSplitSlice) {
  Input("a", {-1, 2});
  Input("c", {-1, 3});
  EXPECT_EQ(*Concat(b_, {"a", "c"}, 1), "concat_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['concat_0.tmp_0']} = concat(inputs={AxisTensor=[], X=['a', 'c']}, axis=1, "
            "mkldnn_data_type='float32', use_mkldnn=False, use_quantizer=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar("concat_0.tmp_0")).dims(), (Dims{-1, 5}));
  Input("k22", {2, 2});
  Input("k33", {3, 3});
  EXPECT_EQ(Concat(b_, {"k22", "k33"}, 1).status().message(),
            "'k33' [3, 3] does not concatenate with 'k22' [2, 2] on axis 1");

  Input("x", {-1, 6});
  StatusOr<std::vector<std::string>> thirds = Split(b_, "x", 3, -1);
  ASSERT_TRUE(thirds.ok());
  EXPECT_EQ(*thirds, (std::vector<std::string>{"split_0.tmp_0", "split_0.tmp_1", "split_0.tmp_2"}));
  EXPECT_EQ(LastOp(),
            "{Out=['split_0.tmp_0', 'split_0.tmp_1', 'split_0.tmp_2']} = "
            "split(inputs={AxisTensor=[], SectionsTensorList=[], X=['x']}, axis=1, "
            "mkldnn_data_type='float32', num=3, sections=[], use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar("split_0.tmp_2")).dims(), (Dims{-1, 2}));
  StatusOr<std::vector<std::string>> parts = SplitSections(b_, "x", {1, -1, 2}, 1);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(LastOp(),
            "{Out=['split_1.tmp_0', 'split_1.tmp_1', 'split_1.tmp_2']} = "
            "split(inputs={AxisTensor=[], SectionsTensorList=[], X=['x']}, axis=1, "
            "mkldnn_data_type='float32', num=0, sections=[1, -1, 2], use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar((*parts)[1])).dims(), (Dims{-1, 3}));
  EXPECT_EQ(Split(b_, "x", 4, 1).status().message(), "dim 1 of size 6 does not split into 4");
  EXPECT_EQ(SplitSections(b_, "x", {2, 2}, 1).status().message(),
            "sections [2, 2] do not fit dim 1 of size 6");

  Input("t", {-1, 6, 8});
  EXPECT_EQ(*Slice(b_, "t", {1, 2}, {1, -3}, {4, 100}), "slice_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['slice_0.tmp_0']} = slice(inputs={EndsTensor=[], EndsTensorList=[], "
            "Input=['t'], StartsTensor=[], StartsTensorList=[]}, axes=[1, 2], decrease_axis=[], "
            "ends=[4, 100], infer_flags=[1, 1], mkldnn_data_type='float32', starts=[1, -3], "
            "use_mkldnn=False" +
                kCommon);
  EXPECT_EQ(Var(b_.FindVar("slice_0.tmp_0")).dims(), (Dims{-1, 3, 3}));
  EXPECT_EQ(Var(b_.FindVar(*Slice(b_, "t", {1}, {2}, {3}, {1}))).dims(), (Dims{-1, 8}));
  EXPECT_EQ(Slice(b_, "t", {1}, {2}, {4}, {1}).status().message(),
            "decrease_axis 1 has size 2, not 1");
  ExpectValid();
}

TEST_F(LayersTest, ConstantsAssignAddNAndTriangles) {
  EXPECT_EQ(*FillConstant(b_, proto::VarType::FP32, {2, 3}, 0.5), "fill_constant_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['fill_constant_0.tmp_0']} = fill_constant(inputs={ShapeTensor=[], "
            "ShapeTensorList=[], ValueTensor=[]}, dtype=5, force_cpu=False, place_type=-1, "
            "shape=[2, 3], str_value='0.5', use_mkldnn=False, value=0.5" +
                kCommon);
  EXPECT_EQ(
      VarLine("fill_constant_0.tmp_0"),
      "var fill_constant_0.tmp_0 : DENSE_TENSOR.shape(2, 3).dtype(float32).stop_gradient(True)");
  // str_value as Python prints the value: str(int(v)) for integer dtypes, str(float(v)) else.
  ASSERT_TRUE(FillConstant(b_, proto::VarType::INT64, {1}, 7).ok());
  EXPECT_NE(LastOp().find("dtype=3, force_cpu=False, place_type=-1, shape=[1], str_value='7', "
                          "use_mkldnn=False, value=7.0"),
            std::string::npos);
  ASSERT_TRUE(FillConstant(b_, proto::VarType::FP32, {1}, 1e-5).ok());
  EXPECT_NE(LastOp().find("str_value='1e-05'"), std::string::npos);
  ASSERT_TRUE(FillConstant(b_, proto::VarType::FP32, {1}, -3).ok());
  EXPECT_NE(LastOp().find("str_value='-3.0'"), std::string::npos);

  Input("x", {-1, 2});
  EXPECT_EQ(*Assign(b_, "x"), "assign_0.tmp_0");
  EXPECT_EQ(LastOp(), "{Out=['assign_0.tmp_0']} = assign(inputs={X=['x']}" + kCommon);
  EXPECT_EQ(*AssignValue(b_, {2}, std::vector<float>{0.5f, -1.0f}), "assign_1.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['assign_1.tmp_0']} = assign_value(inputs={}, bool_values=[], dtype=5, "
            "fp32_values=[0.5, -1.0], int32_values=[], int64_values=[], shape=[2]" +
                kCommon);
  EXPECT_EQ(VarLine("assign_1.tmp_0"),
            "var assign_1.tmp_0 : DENSE_TENSOR.shape(2,).dtype(float32).stop_gradient(True)");
  ASSERT_TRUE(AssignValue(b_, {1, 3}, std::vector<int64_t>{0, 1, 2}).ok());
  EXPECT_NE(LastOp().find("bool_values=[], dtype=3, fp32_values=[], int32_values=[], "
                          "int64_values=[0, 1, 2], shape=[1, 3]"),
            std::string::npos);
  ASSERT_TRUE(AssignValue(b_, {2}, std::vector<bool>{true, false}).ok());
  EXPECT_NE(LastOp().find("bool_values=[1, 0], dtype=0, "), std::string::npos);
  EXPECT_EQ(AssignValue(b_, {2, 2}, std::vector<int32_t>{1, 2, 3}).status().message(),
            "shape [2, 2] does not hold 3 values");

  Input("y", {-1, 2});
  EXPECT_EQ(*AddN(b_, {"x", "y"}), "add_n_0.tmp_0");
  EXPECT_EQ(LastOp(),
            "{Out=['add_n_0.tmp_0']} = sum(inputs={X=['x', 'y']}, "
            "mkldnn_data_type='float32', use_mkldnn=False" +
                kCommon);

  Input("m", {4, 4});
  EXPECT_EQ(*Triu(b_, "m", 1), "triu_0.tmp_0");
  EXPECT_EQ(
      LastOp(),
      "{Out=['triu_0.tmp_0']} = tril_triu(inputs={X=['m']}, diagonal=1, lower=False" + kCommon);
  EXPECT_EQ(*Tril(b_, "m"), "tril_0.tmp_0");
  EXPECT_EQ(
      LastOp(),
      "{Out=['tril_0.tmp_0']} = tril_triu(inputs={X=['m']}, diagonal=0, lower=True" + kCommon);
  Input("v", {4});
  EXPECT_EQ(Tril(b_, "v").status().message(), "'v' has rank 1 (< 2)");
  ExpectValid();
}

TEST_F(LayersTest, DataAndFeedOps) {
  ASSERT_TRUE(Data(&p_, {"a", proto::VarType::FP32, {-1, 3}}).ok());
  ASSERT_TRUE(Data(&p_, {"b", proto::VarType::INT64, {-1, 1}}).ok());
  EXPECT_EQ(VarLine("a"), "var a : DENSE_TENSOR.shape(-1, 3).dtype(float32).stop_gradient(True)");
  EXPECT_TRUE(b_.FindVar("a")->need_check_feed());
  EXPECT_FALSE(b_.FindVar("a")->persistable());
  ASSERT_EQ(p_.feeds.size(), 2u);
  EXPECT_EQ(p_.feeds[1].name, "b");
  EXPECT_EQ(Data(&p_, {"a", proto::VarType::FP32, {3}}).status().ToString(),
            "block 0, var 'a': error: data var 'a' is already declared");

  ASSERT_TRUE(Relu(b_, "a").ok());
  ASSERT_TRUE(PrependFeedOps(&p_).ok());
  // Each feed op is prepended in feed order, so the last feed comes first.
  ASSERT_EQ(b_.num_ops(), 3);
  EXPECT_EQ(OpLine(0), "{Out=['b']} = feed(inputs={X=['feed']}, col=1" + kCommon);
  EXPECT_EQ(OpLine(1), "{Out=['a']} = feed(inputs={X=['feed']}, col=0" + kCommon);
  EXPECT_EQ(b_.desc()->ops(2).type(), "relu");
  EXPECT_EQ(VarLine("feed"), "persist var feed : FEED_MINIBATCH");
  EXPECT_EQ(PrependFeedOps(&p_).ToString(),
            "block 0: error: the main program already has feed ops");
  ExpectValid();
}

TEST_F(LayersTest, InputsMustBeDeclaredDenseTensors) {
  StatusOr<std::string> missing = Relu(b_, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().ToString(),
            "block 0, op 0 (relu), var 'nope': error: input 'nope' is not declared");
  b_.CreateTypedVar("feed", proto::VarType::FEED_MINIBATCH, true);
  EXPECT_EQ(MatMul(b_, "feed", "feed").status().ToString(),
            "block 0, op 0 (matmul_v2), var 'feed': error: input 'feed' is not a dense tensor");
  EXPECT_EQ(AddN(b_, {}).status().ToString(),
            "block 0, op 0 (sum): error: the op needs at least one input");
  // Nothing was appended or declared.
  EXPECT_EQ(b_.num_ops(), 0);
  EXPECT_EQ(b_.desc()->vars_size(), 1);

  // Vars of an ancestor block are visible from a sub-block.
  Input("outer", {2, 2});
  BlockBuilder& sub = p_.main.CreateBlock(0);
  ASSERT_TRUE(Relu(sub, "outer").ok());
  EXPECT_NE(sub.FindLocalVar("relu_0.tmp_0"), nullptr);
}

}  // namespace
}  // namespace irm::oldir::layers
