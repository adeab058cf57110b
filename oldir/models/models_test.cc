// Tests of the model-zoo builders: the MLP and GPT programs validate, their forward op sequences,
// parameter names, initialisers and seeds are the ones the Python scripts in mlp.h and gpt.h
// produce (written out by hand here), and bad configs are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "oldir/dump.h"
#include "oldir/models/gpt.h"
#include "oldir/models/mlp.h"
#include "oldir/validator.h"

namespace irm::oldir::models {
namespace {

using Strings = std::vector<std::string>;

Strings OpTypes(const Program& program) {
  Strings types;
  const Block root = program.root();
  for (int i = 0; i < root.num_ops(); ++i) types.push_back(root.op(i).type());
  return types;
}

Strings ParamNames(const Program& program) {
  Strings names;
  const Block root = program.root();
  for (int i = 0; i < root.num_vars(); ++i) {
    if (root.var(i).is_parameter()) names.push_back(root.var(i).name());
  }
  return names;
}

void ExpectValid(const ModelPrograms& programs) {
  const Diagnostics main = ValidateProgram(programs.main.Build());
  EXPECT_TRUE(main.empty()) << main.Render();
  const Diagnostics startup = ValidateProgram(programs.startup.Build());
  EXPECT_TRUE(startup.empty()) << startup.Render();
}

// The startup op writing `name`, as "type" plus " seed=N" for the random ones.
std::string Initialiser(const Program& startup, const std::string& name) {
  const Block root = startup.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (op.SingleOutput("Out") != name) continue;
    std::string text = op.type();
    if (op.HasAttr("seed")) text += " seed=" + std::to_string(op.AttrOr<int32_t>("seed", -1));
    return text;
  }
  return "<none>";
}

float XavierLimit(const Program& startup, const std::string& name) {
  const Block root = startup.root();
  for (int i = 0; i < root.num_ops(); ++i) {
    const Op op = root.op(i);
    if (op.SingleOutput("Out") != name) continue;
    const float max = op.AttrOr<float>("max", -1.0f);
    EXPECT_EQ(op.AttrOr<float>("min", 0.0f), -max) << name;
    return max;
  }
  return -1.0f;
}

GptConfig SmallGpt(int layers) {
  GptConfig config;
  config.layers = layers;
  config.hidden = 64;
  config.heads = 4;
  config.vocab = 128;
  config.seq = 16;
  config.dropout = 0.1f;
  config.seed = 5;
  return config;
}

TEST(GptTest, OneLayerForward) {
  ModelPrograms programs;
  ASSERT_TRUE(BuildGpt(SmallGpt(1), &programs).ok());
  ExpectValid(programs);
  const Program main = programs.main.Build();
  const Strings expected = {"feed",
                            "feed",  // labels (col 1), tokens (col 0)
                            "lookup_table_v2",
                            "assign_value",
                            "lookup_table_v2",
                            "elementwise_add",  // embeddings
                            "fill_constant",
                            "scale",
                            "tril_triu",   // causal mask
                            "layer_norm",  // ln1
                            "matmul_v2",
                            "elementwise_add",
                            "matmul_v2",
                            "elementwise_add",
                            "matmul_v2",
                            "elementwise_add",  // q, k, v
                            "reshape2",
                            "transpose2",
                            "reshape2",
                            "transpose2",
                            "reshape2",
                            "transpose2",
                            "matmul_v2",
                            "scale",
                            "elementwise_add",
                            "softmax",
                            "dropout",
                            "matmul_v2",  // attention
                            "transpose2",
                            "reshape2",  // merge heads
                            "matmul_v2",
                            "elementwise_add",
                            "elementwise_add",  // projection, residual
                            "layer_norm",
                            "matmul_v2",
                            "elementwise_add",
                            "gelu",
                            "matmul_v2",
                            "elementwise_add",
                            "elementwise_add",  // ln2, MLP, residual
                            "layer_norm",
                            "matmul_v2",
                            "softmax_with_cross_entropy",
                            "mean"};  // head, loss
  EXPECT_EQ(OpTypes(main), expected);

  EXPECT_EQ(programs.loss, "mean_0.tmp_0");
  EXPECT_EQ(main.root().FindVar("mean_0.tmp_0")->dims(), std::vector<int64_t>{});
  ASSERT_EQ(programs.feeds.size(), 2u);
  EXPECT_EQ(programs.feeds[0].name, "tokens");
  EXPECT_EQ(programs.feeds[0].dtype, proto::VarType::INT64);
  EXPECT_EQ(programs.feeds[0].shape, (std::vector<int64_t>{-1, 16}));
  EXPECT_EQ(programs.feeds[1].name, "labels");
  EXPECT_EQ(programs.feeds[1].shape, (std::vector<int64_t>{-1, 16, 1}));
  EXPECT_TRUE(programs.fetches.empty());
  EXPECT_EQ(programs.seed, 5);

  // The feed ops, the position ids and the dropout as the script writes them.
  EXPECT_EQ(DumpOp(main.root().op(0)),
            "{Out=['labels']} = feed(inputs={X=['feed']}, col=1, op_device='', "
            "op_namescope='/', op_role=0, op_role_var=[], with_quant_attr=False)");
  EXPECT_EQ(main.root().op(3).AttrOr<std::vector<int64_t>>("int64_values", {}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const Op scores_scale = main.root().op(23);
  EXPECT_EQ(scores_scale.AttrOr<float>("scale", 0.0f), 0.25f);  // 16 ** -0.5
  const Op dropout = main.root().op(26);
  EXPECT_EQ(dropout.AttrOr<float>("dropout_prob", 0.0f), 0.1f);
  EXPECT_EQ(dropout.AttrOr<bool>("fix_seed", false), true);
  EXPECT_EQ(dropout.AttrOr<int32_t>("seed", 0), 5);
  EXPECT_EQ(dropout.AttrOr<std::string>("dropout_implementation", ""), "upscale_in_train");
  // Logits and per-token loss.
  EXPECT_EQ(DumpVar(*main.root().FindVar("linear_13.tmp_0")),
            "var linear_13.tmp_0 : DENSE_TENSOR.shape(-1, 16, 128).dtype(float32)"
            ".stop_gradient(False)");
  EXPECT_EQ(DumpVar(*main.root().FindVar("softmax_with_cross_entropy_0.tmp_1")),
            "var softmax_with_cross_entropy_0.tmp_1 : DENSE_TENSOR.shape(-1, 16, 1)"
            ".dtype(float32).stop_gradient(False)");
}

TEST(GptTest, OneLayerParametersAndInitialisers) {
  ModelPrograms programs;
  ASSERT_TRUE(BuildGpt(SmallGpt(1), &programs).ok());
  const Program main = programs.main.Build();
  const Program startup = programs.startup.Build();
  const Strings params = {"embedding_0.w_0",  "embedding_1.w_0",  "layer_norm_0.w_0",
                          "layer_norm_0.b_0", "linear_0.w_0",     "linear_0.b_0",
                          "linear_1.w_0",     "linear_1.b_0",     "linear_2.w_0",
                          "linear_2.b_0",     "linear_3.w_0",     "linear_3.b_0",
                          "layer_norm_1.w_0", "layer_norm_1.b_0", "linear_4.w_0",
                          "linear_4.b_0",     "linear_5.w_0",     "linear_5.b_0",
                          "layer_norm_2.w_0", "layer_norm_2.b_0", "linear_6.w_0"};
  EXPECT_EQ(ParamNames(main), params);
  EXPECT_EQ(ParamNames(startup), params);
  ASSERT_EQ(startup.root().num_ops(), 21);
  for (int i = 0; i < 21; ++i) {
    EXPECT_EQ(startup.root().op(i).SingleOutput("Out"), params[static_cast<size_t>(i)]);
  }
  EXPECT_EQ(Initialiser(startup, "embedding_0.w_0"), "uniform_random seed=5");
  EXPECT_EQ(Initialiser(startup, "embedding_1.w_0"), "uniform_random seed=5");
  EXPECT_EQ(Initialiser(startup, "layer_norm_0.w_0"), "fill_constant");
  EXPECT_EQ(Initialiser(startup, "layer_norm_0.b_0"), "fill_constant");
  EXPECT_EQ(Initialiser(startup, "linear_0.w_0"), "uniform_random seed=5");
  EXPECT_EQ(Initialiser(startup, "linear_0.b_0"), "fill_constant");
  EXPECT_EQ(Initialiser(startup, "linear_5.w_0"), "uniform_random seed=5");
  EXPECT_EQ(Initialiser(startup, "linear_6.w_0"), "uniform_random seed=5");
  EXPECT_EQ(startup.root().op(2).AttrOr<float>("value", -1.0f), 1.0f);  // LayerNorm scale
  EXPECT_EQ(startup.root().op(3).AttrOr<float>("value", -1.0f), 0.0f);  // LayerNorm bias
  // XavierUniform limits sqrt(6 / (fan_in + fan_out)).
  EXPECT_FLOAT_EQ(XavierLimit(startup, "embedding_0.w_0"), std::sqrt(6.0f / 192.0f));
  EXPECT_FLOAT_EQ(XavierLimit(startup, "embedding_1.w_0"), std::sqrt(6.0f / 80.0f));
  EXPECT_FLOAT_EQ(XavierLimit(startup, "linear_0.w_0"), std::sqrt(6.0f / 128.0f));
  EXPECT_FLOAT_EQ(XavierLimit(startup, "linear_4.w_0"), std::sqrt(6.0f / 320.0f));
  EXPECT_FLOAT_EQ(XavierLimit(startup, "linear_6.w_0"), std::sqrt(6.0f / 192.0f));
  EXPECT_EQ(DumpVar(*main.root().FindVar("linear_4.w_0")),
            "persist trainable param linear_4.w_0 : DENSE_TENSOR.shape(64, 256).dtype(float32)"
            ".stop_gradient(False)");
}

TEST(GptTest, TwoLayers) {
  ModelPrograms programs;
  ASSERT_TRUE(BuildGpt(SmallGpt(2), &programs).ok());
  ExpectValid(programs);
  const Program main = programs.main.Build();
  const Strings params = ParamNames(main);
  ASSERT_EQ(params.size(), 37u);  // 2 embeddings, 2 x 16 per block, final LayerNorm 2, head 1
  EXPECT_EQ(params[20], "linear_6.w_0");  // block 1's q
  EXPECT_EQ(params[18], "layer_norm_2.w_0");
  EXPECT_EQ(params[34], "layer_norm_4.w_0");  // final
  EXPECT_EQ(params[36], "linear_12.w_0");     // head
  EXPECT_EQ(main.root().num_ops(), 44 + 31);
  int dropouts = 0;
  for (const std::string& type : OpTypes(main)) dropouts += type == "dropout";
  EXPECT_EQ(dropouts, 2);
  EXPECT_EQ(programs.loss, "mean_0.tmp_0");
  // Block 1 reads the mask built once before the blocks.
  EXPECT_EQ(main.root().op(24).SingleInput("Y"), "triu_0.tmp_0");
  EXPECT_EQ(main.root().op(55).SingleInput("Y"), "triu_0.tmp_0");
}

TEST(GptTest, NoDropoutOpWithoutDropout) {
  GptConfig config = SmallGpt(1);
  config.dropout = 0.0f;
  config.seed = 0;
  ModelPrograms programs;
  ASSERT_TRUE(BuildGpt(config, &programs).ok());
  ExpectValid(programs);
  const Program main = programs.main.Build();
  EXPECT_EQ(main.root().num_ops(), 43);
  EXPECT_EQ(main.root().op(26).type(), "matmul_v2");
  EXPECT_EQ(main.root().op(26).SingleInput("X"), "softmax_0.tmp_0");
  EXPECT_EQ(Initialiser(programs.startup.Build(), "linear_0.w_0"), "uniform_random seed=0");
}

TEST(GptTest, RefusesBadConfigs) {
  auto error = [](GptConfig config) {
    ModelPrograms programs;
    return BuildGpt(config, &programs).ToString();
  };
  GptConfig config = SmallGpt(1);
  config.heads = 5;
  EXPECT_EQ(error(config), "error: GptConfig: heads 5 do not divide hidden 64");
  config = SmallGpt(1);
  config.dropout = 1.0f;
  EXPECT_EQ(error(config), "error: GptConfig: dropout 1 is not in [0, 1)");
  config = SmallGpt(0);
  EXPECT_EQ(
      error(config),
      "error: GptConfig: layers 0, hidden 64, heads 4, vocab 128 and seq 16 must be positive");
}

TEST(MlpTest, ReluSoftmaxCrossEntropy) {
  MlpConfig config;  // depth 2, 4 -> 8 -> 3, relu, softmax cross entropy
  config.seed = 3;
  ModelPrograms programs;
  ASSERT_TRUE(BuildMlp(config, &programs).ok());
  ExpectValid(programs);
  const Program main = programs.main.Build();
  const Program startup = programs.startup.Build();
  EXPECT_EQ(OpTypes(main),
            (Strings{"feed", "feed", "matmul_v2", "elementwise_add", "relu", "matmul_v2",
                     "elementwise_add", "softmax_with_cross_entropy", "mean"}));
  const Strings params = {"linear_0.w_0", "linear_0.b_0", "linear_1.w_0", "linear_1.b_0"};
  EXPECT_EQ(ParamNames(main), params);
  EXPECT_EQ(ParamNames(startup), params);
  EXPECT_EQ(OpTypes(startup),
            (Strings{"uniform_random", "fill_constant", "uniform_random", "fill_constant"}));
  EXPECT_EQ(Initialiser(startup, "linear_1.w_0"), "uniform_random seed=3");
  EXPECT_FLOAT_EQ(XavierLimit(startup, "linear_0.w_0"), std::sqrt(6.0f / 12.0f));
  EXPECT_FLOAT_EQ(XavierLimit(startup, "linear_1.w_0"), std::sqrt(6.0f / 11.0f));
  // The calls take linear_2 and linear_3; relu sits between them.
  EXPECT_EQ(main.root().op(2).SingleOutput("Out"), "linear_2.tmp_0");
  EXPECT_EQ(main.root().op(4).SingleInput("X"), "linear_2.tmp_1");
  EXPECT_EQ(main.root().op(5).SingleOutput("Out"), "linear_3.tmp_0");
  EXPECT_EQ(programs.loss, "mean_0.tmp_0");
  ASSERT_EQ(programs.feeds.size(), 2u);
  EXPECT_EQ(programs.feeds[0].name, "x");
  EXPECT_EQ(programs.feeds[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(programs.feeds[1].name, "label");
  EXPECT_EQ(programs.feeds[1].dtype, proto::VarType::INT64);
  EXPECT_EQ(programs.feeds[1].shape, (std::vector<int64_t>{-1, 1}));
}

TEST(MlpTest, TanhMse) {
  MlpConfig config;
  config.depth = 3;
  config.in_features = 5;
  config.width = 6;
  config.classes = 2;
  config.activation = MlpActivation::kTanh;
  config.loss = MlpLoss::kMse;
  ModelPrograms programs;
  ASSERT_TRUE(BuildMlp(config, &programs).ok());
  ExpectValid(programs);
  const Program main = programs.main.Build();
  EXPECT_EQ(OpTypes(main),
            (Strings{"feed", "feed", "matmul_v2", "elementwise_add", "tanh", "matmul_v2",
                     "elementwise_add", "tanh", "matmul_v2", "elementwise_add", "elementwise_sub",
                     "elementwise_mul", "mean"}));
  EXPECT_EQ(programs.feeds[1].dtype, proto::VarType::FP32);
  EXPECT_EQ(programs.feeds[1].shape, (std::vector<int64_t>{-1, 2}));
  // (out - label) * (out - label), both operator temporaries.
  EXPECT_EQ(main.root().op(10).SingleOutput("Out"), "tmp_0");
  EXPECT_EQ(main.root().op(11).SingleInput("X"), "tmp_0");
  EXPECT_EQ(main.root().op(11).SingleInput("Y"), "tmp_0");
  EXPECT_EQ(programs.loss, "mean_0.tmp_0");
  EXPECT_EQ(ParamNames(main).back(), "linear_2.b_0");
}

TEST(MlpTest, OneLayerHasNoActivation) {
  MlpConfig config;
  config.depth = 1;
  config.activation = MlpActivation::kSigmoid;
  ModelPrograms programs;
  ASSERT_TRUE(BuildMlp(config, &programs).ok());
  ExpectValid(programs);
  EXPECT_EQ(OpTypes(programs.main.Build()), (Strings{"feed", "feed", "matmul_v2", "elementwise_add",
                                                     "softmax_with_cross_entropy", "mean"}));
}

TEST(MlpTest, GeluAndBadConfigs) {
  MlpConfig config;
  config.activation = MlpActivation::kGelu;
  ModelPrograms programs;
  ASSERT_TRUE(BuildMlp(config, &programs).ok());
  EXPECT_EQ(programs.main.Build().root().op(4).type(), "gelu");

  auto error = [](MlpConfig c) {
    ModelPrograms p;
    return BuildMlp(c, &p).ToString();
  };
  config = MlpConfig{};
  config.depth = 0;
  EXPECT_EQ(error(config), "error: MlpConfig: depth 0 must be at least 1");
  config = MlpConfig{};
  config.width = -2;
  EXPECT_EQ(error(config),
            "error: MlpConfig: in_features 4, width -2 and classes 3 must be positive");
  config = MlpConfig{};
  config.classes = 1;
  EXPECT_EQ(error(config), "error: MlpConfig: softmax_cross_entropy needs at least 2 classes");
}

TEST(MlpTest, NamesOfActivationsAndLosses) {
  EXPECT_EQ(MlpActivationFromName("relu"), MlpActivation::kRelu);
  EXPECT_EQ(MlpActivationFromName("gelu"), MlpActivation::kGelu);
  EXPECT_EQ(MlpActivationFromName("tanh"), MlpActivation::kTanh);
  EXPECT_EQ(MlpActivationFromName("sigmoid"), MlpActivation::kSigmoid);
  EXPECT_EQ(MlpActivationFromName("swish"), std::nullopt);
  EXPECT_EQ(MlpLossFromName("mse"), MlpLoss::kMse);
  EXPECT_EQ(MlpLossFromName("softmax_cross_entropy"), MlpLoss::kSoftmaxCrossEntropy);
  EXPECT_EQ(MlpLossFromName("MSE"), std::nullopt);
  EXPECT_STREQ(MlpActivationName(MlpActivation::kSigmoid), "sigmoid");
  EXPECT_STREQ(MlpLossName(MlpLoss::kMse), "mse");
}

}  // namespace
}  // namespace irm::oldir::models
